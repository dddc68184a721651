"""Conversion to and from Pinocchio models (``pip install pin``).

``from_pinocchio(pin_model)`` builds the equivalent :class:`sinews.Model`: one body per
Pinocchio joint (same names, same order), one sinews frame per Pinocchio frame of type BODY,
FIXED_JOINT or OP_FRAME, and the joint limits, damping, friction and armature (contract C1).
``to_pinocchio(model)`` goes the other way; multi-axis joints (planar, translation, Euler,
general) become Pinocchio composite joints.

Coordinates differ in three places:

* a free-flyer velocity is ``[omega; v]`` in sinews (angular first, like every spatial vector
  here) and ``[v; omega]`` in Pinocchio;
* a continuous (unbounded revolute) joint has ``q = t`` (the angle) in sinews and
  ``q = (cos t, sin t)`` in Pinocchio, so ``nq`` and ``idx_q`` differ when a Pinocchio model has
  continuous joints (``v`` is the same);
* a Pinocchio planar joint (``JointModelPlanar``) becomes sinews' ``Planar``: ``q = (x, y, t)``
  here and ``(x, y, cos t, sin t)`` there, and ``v = dq/dt`` here while Pinocchio's ``v`` is the
  child twist in child axes, ``v_pin = diag(R(t)^T, 1) v``: a configuration-dependent rotation,
  so these conversions take ``q`` and accelerations take ``v`` too (``a_to_pin``).

Use :class:`PinocchioCoordinates` (``PinocchioCoordinates(model, pin_model)``, then
``v_to_pin(v)``, ``q_to_pin(q)``, ``a_to_pin(a)`` etc.) to convert q, v, a, tau, mass matrices
and Jacobian columns.  6-D Jacobian *rows* are ``[angular; linear]`` here and
``[linear; angular]`` in Pinocchio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import joints as J
from ._checks import finite_vector, real_array
from ._pin_joints import PLANAR, UNBOUNDED, joint_from_pin, joint_to_pin, planar_properties
from .model import Model
from .spatial import SpatialInertia, Transform

if TYPE_CHECKING:
    import pinocchio

__all__ = ["from_pinocchio", "to_pinocchio", "PinocchioCoordinates"]


def _pin():
    try:
        import pinocchio as pin
    except ImportError as exc:  # pragma: no cover - exercised only without pin
        raise ImportError("sinews.interop needs Pinocchio: pip install pin") from exc
    return pin


#: Pinocchio's "no limit" (``std::numeric_limits<double>::max()``): read as an infinite limit
_PIN_UNLIMITED = np.finfo(float).max

def _limits(a: np.ndarray) -> np.ndarray:
    """Pinocchio's +-DBL_MAX ("unlimited") as +-inf."""
    a = np.array(a, dtype=float)
    a[a >= _PIN_UNLIMITED] = np.inf
    a[a <= -_PIN_UNLIMITED] = -np.inf
    return a


def _copy_properties(model: Model, bid: int, pin_model, i: int, kind: str) -> None:
    """Limits, damping, friction and armature of Pinocchio joint ``i`` onto sinews body ``bid``
    (contract C1).  Continuous joints keep infinite position limits (Pinocchio's limits there
    bound cos and sin); free-flyer velocity-sized properties are reordered ``[v; w] -> [w; v]``.
    A planar joint keeps its x, y position limits (its angle is unlimited, as for continuous
    joints); its velocity-sized properties along x and y are in the child's axes in Pinocchio
    and in the joint frame here, so they are copied only where the rotation between the two
    leaves them unchanged (see :func:`_planar_properties`)."""
    b = model.body(bid)
    iq, nq = int(pin_model.idx_qs[i]), int(pin_model.nqs[i])
    iv, nv = int(pin_model.idx_vs[i]), int(pin_model.nvs[i])
    props = {}
    if kind == PLANAR:
        props["lower"] = np.r_[_limits(pin_model.lowerPositionLimit[iq : iq + 2]), -np.inf]
        props["upper"] = np.r_[_limits(pin_model.upperPositionLimit[iq : iq + 2]), np.inf]
    elif kind not in UNBOUNDED:
        props["lower"] = _limits(pin_model.lowerPositionLimit[iq : iq + nq])
        props["upper"] = _limits(pin_model.upperPositionLimit[iq : iq + nq])
    order = np.array([3, 4, 5, 0, 1, 2]) if b.joint.code == J.JT_FREEFLYER else np.arange(nv)
    for ours, theirs in (("velocity_limit", "velocityLimit"), ("effort_limit", "effortLimit"),
                         ("damping", "damping"), ("friction", "friction"), ("armature", "armature")):
        vals = _limits(np.asarray(getattr(pin_model, theirs))[iv : iv + nv])[order]
        if kind == PLANAR:
            planar_properties(ours, theirs, vals, b.name)
        props[ours] = vals
    model.set_joint_properties(bid, **props)


def from_pinocchio(pin_model: pinocchio.Model) -> Model:
    """A sinews model equivalent to a Pinocchio ``Model``.

    Every Pinocchio joint type with a sinews equivalent converts: revolute, prismatic and
    helical (aligned or not), continuous (``JointModelRUBX/Y/Z``,
    ``JointModelRevoluteUnboundedUnaligned``: a sinews revolute joint whose ``q`` is the angle,
    where Pinocchio stores ``(cos, sin)``: convert with ``PinocchioCoordinates(model,
    pin_model)``), spherical, free-flyer, translation, spherical ZYX (``EulerZYX``), universal,
    planar (``Planar``: ``q = (x, y, t)``, ``v = dq/dt`` where Pinocchio has ``(x, y, cos t,
    sin t)`` and the child twist in child axes; ``PinocchioCoordinates`` converts q, v, a, tau,
    M and Jacobians) and composites of one-dof joints (``MultiAxis``).  Mimic and ellipsoid
    joints are refused with the reason.  Joint limits, velocity and effort limits, damping,
    friction and armature are copied (``Model.set_joint_properties``); Pinocchio's ``+-DBL_MAX``
    ("no limit") becomes ``+-inf``.  A planar joint's x, y properties act on child-axis components in
    Pinocchio: its x, y damping must be equal, its x, y armature and friction zero and its x, y
    velocity and effort limits unlimited (``ValueError`` otherwise; the angle's are copied).
    """
    pin = _pin()
    if not isinstance(pin_model, pin.Model):
        raise ValueError(f"pin_model must be a pinocchio.Model, got {type(pin_model).__name__}")
    g = np.asarray(pin_model.gravity.linear, dtype=float)
    model = Model(gravity=g, name=str(pin_model.name) or "pinocchio")
    for i in range(1, pin_model.njoints):
        jm = pin_model.joints[i]
        name = str(pin_model.names[i])
        placement = pin_model.jointPlacements[i]
        X_extra, joint = joint_from_pin(jm, f"joint {name!r}")
        X = Transform(np.asarray(placement.rotation), np.asarray(placement.translation)) @ X_extra
        I = pin_model.inertias[i]
        inertia = SpatialInertia(float(I.mass), np.asarray(I.lever), np.asarray(I.inertia))
        bid = model.add_body(int(pin_model.parents[i]), joint, X, inertia, name=name)
        _copy_properties(model, bid, pin_model, i, jm.shortname())
    used = set()
    kinds = (pin.FrameType.BODY, pin.FrameType.FIXED_JOINT, pin.FrameType.OP_FRAME)
    for f in pin_model.frames:
        if f.type not in kinds:
            continue
        name = str(f.name)
        while name in used:
            name += "_"
        used.add(name)
        model.add_frame(name, int(f.parentJoint), Transform(np.asarray(f.placement.rotation), np.asarray(f.placement.translation)))
    return model


def to_pinocchio(model: Model) -> pinocchio.Model:
    """A Pinocchio ``Model`` equivalent to ``model`` (welded bodies become extra bodies
    appended to their movable ancestor, plus a frame of the same name), with the joint limits,
    velocity and effort limits, damping, friction and armature (``+-inf`` limits as Pinocchio's
    ``+-DBL_MAX``).  Multi-axis joints become composite joints; when their axes do not pass
    through the joint origin (screws, offsets), the Pinocchio joint frame differs from the
    sinews body frame by a constant transform, which the inertias, frames and child placements
    include (the ``BODY`` frame of the body's name is the sinews body frame)."""
    pin = _pin()
    if not isinstance(model, Model):
        raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
    c = model.compiled
    _require_depth_first(model)
    pm = pin.Model()
    pm.name = model.name
    pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
    joint_of_link = {}
    post = {}  # link -> the sinews link frame in its Pinocchio joint frame

    def in_joint(k, X):  # a pose in link k's frame -> in its Pinocchio joint's frame
        return post[k] @ X if k >= 0 else X

    for b in model.bodies[1:]:
        k = int(c.link_of_body[b.id])
        parent_link = int(c.link_of_body[b.parent])
        parent_joint = joint_of_link.get(parent_link, 0) if parent_link >= 0 else 0
        X_parent = in_joint(parent_link, Transform(c.X_link_body_R[b.parent], c.X_link_body_p[b.parent]) @ b.X_parent_joint)
        if b.joint.code == J.JT_FIXED:
            X = in_joint(k, Transform(c.X_link_body_R[b.id], c.X_link_body_p[b.id]))
            jid = joint_of_link.get(k, 0)
            se3 = pin.SE3(X.R, X.p)
            if b.inertia.mass > 0 or np.any(b.inertia.inertia_com):
                pm.appendBodyToJoint(jid, pin.Inertia(b.inertia.mass, b.inertia.com, b.inertia.inertia_com), se3)
            pm.addFrame(pin.Frame(b.name, jid, se3, pin.FrameType.BODY))
            continue
        jm, post[k] = joint_to_pin(pin, b.joint)
        jid = pm.addJoint(parent_joint, jm, pin.SE3(X_parent.R, X_parent.p), b.name)
        joint_of_link[k] = jid
        I = b.inertia
        se3 = pin.SE3(post[k].R, post[k].p)
        pm.appendBodyToJoint(jid, pin.Inertia(I.mass, I.com, I.inertia_com), se3)
        pm.addFrame(pin.Frame(b.name, jid, se3, pin.FrameType.BODY))
    names = {b.name for b in model.bodies}
    for f in model.frames:
        if f.name in names:
            raise ValueError(f"to_pinocchio: frame name {f.name!r} is also a body name (Pinocchio frame names must be unique)")
        b = f.body
        k = int(c.link_of_body[b])
        X = in_joint(k, Transform(c.X_link_body_R[b], c.X_link_body_p[b]) @ f.X_body_frame)
        pm.addFrame(pin.Frame(f.name, joint_of_link.get(k, 0) if k >= 0 else 0, pin.SE3(X.R, X.p), pin.FrameType.OP_FRAME))
    _properties_to_pin(model, pm)
    return pm


def _properties_to_pin(model: Model, pm) -> None:
    """Joint limits, damping, friction and armature (C1) into Pinocchio's model arrays (same q
    layout; velocity-sized arrays in Pinocchio's order; +-inf as Pinocchio's +-DBL_MAX)."""
    perm = PinocchioCoordinates(model).perm

    def lim(a):
        return np.clip(a, -_PIN_UNLIMITED, _PIN_UNLIMITED)

    def v_order(a):
        out = np.empty(model.nv)
        out[perm] = a
        return out

    pm.lowerPositionLimit = lim(model.lower_position_limit)
    pm.upperPositionLimit = lim(model.upper_position_limit)
    pm.velocityLimit = lim(v_order(model.velocity_limit))
    pm.effortLimit = lim(v_order(model.effort_limit))
    for name in ("damping", "friction", "armature"):
        setattr(pm, name, v_order(getattr(model, name)))


def _require_depth_first(model: Model) -> None:
    """Pinocchio's algorithms (CRBA among them) assume every subtree occupies a contiguous
    range of joint indices; reject other orders instead of producing a silently wrong model."""
    c = model.compiled
    par = c.mi[:, 0] if c.nlinks else np.zeros(0, dtype=np.int64)
    for k in range(1, c.nlinks):
        # in depth-first order the parent of link k is link k-1 or one of its ancestors
        a = k - 1
        while a >= 0 and a != par[k]:
            a = par[a]
        if a != par[k]:
            raise ValueError(
                "to_pinocchio: bodies are not in depth-first order (Pinocchio requires contiguous "
                f"subtrees); body {model.bodies[c.link_body[k]].name!r} breaks it"
            )


def _finite_or_raise(x: np.ndarray, name: str) -> None:
    """A conversion that overflowed (inputs near the float range) is refused, naming them."""
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: the planar joints' conversion overflows (values too large)")


class PinocchioCoordinates:
    """Converts q, v, a, tau, mass matrices and Jacobians between sinews and Pinocchio.

    ``pin_model``: the Pinocchio model the sinews ``model`` was made from (or converted to),
    needed when it has continuous joints (``JointModelRUBX/Y/Z``, ``RevoluteUnbounded``) or
    planar joints (``JointModelPlanar``).  Joints are matched by name (``from_pinocchio`` keeps
    Pinocchio's joint names).

    * continuous joint: ``q = t`` here, ``(cos t, sin t)`` in Pinocchio (``nq`` differs);
    * planar joint: ``q = (x, y, t)`` and ``v = dq/dt`` here; ``q = (x, y, cos t, sin t)`` and
      ``v = (vx, vy, w)``, the child twist in child axes, in Pinocchio.  So
      ``v_pin = T(t) v`` with ``T = diag(R(t)^T, 1)``, a rotation: torques map the same way
      (``tau_pin = T^-T tau = T tau``), ``M = T^T M_pin T``, Jacobian columns ``J = J_pin T``,
      and accelerations pick up the rotating frame's term,
      ``a_pin = T a + (w u_y, -w u_x, 0)`` with ``u = R^T (dx, dy)`` (:meth:`a_to_pin`).  These
      conversions need the configuration ``q`` (sinews', (nq,)); the others do not.
    """

    def __init__(self, model: Model, pin_model: pinocchio.Model | None = None) -> None:
        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        self.model = model
        perm = np.arange(model.nv)
        c = model.compiled
        for k in range(c.nlinks):
            if c.mi[k, 1] == J.JT_FREEFLYER:
                iv = int(c.mi[k, 3])
                perm[iv : iv + 6] = iv + np.array([3, 4, 5, 0, 1, 2])
        self.perm = perm  # sinews index i holds Pinocchio index perm[i]
        self.nq_pin = model.nq
        # continuous joints: (sinews q index, Pinocchio q index); other coordinates: index maps
        self._angles = np.zeros((0, 2), dtype=np.int64)
        # Pinocchio planar joints: (sinews q index of the angle, sinews v index of vx)
        self._planar = np.zeros((0, 2), dtype=np.int64)
        self._q_same = (np.arange(model.nq), np.arange(model.nq))
        if pin_model is not None:
            self._match(pin_model)

    def _match(self, pin_model) -> None:
        pin = _pin()
        if not isinstance(pin_model, pin.Model):
            raise ValueError(f"pin_model must be a pinocchio.Model, got {type(pin_model).__name__}")
        ours, theirs, angles, planar = [], [], [], []
        for i in range(1, pin_model.njoints):
            name = str(pin_model.names[i])
            try:
                b = self.model.body(name)
            except KeyError:
                raise ValueError(f"pin_model: joint {name!r} is not a body of the sinews model") from None
            nq_pin, iq_pin = int(pin_model.nqs[i]), int(pin_model.idx_qs[i])
            if int(pin_model.nvs[i]) != b.joint.nv or b.idx_q < 0:
                raise ValueError(f"pin_model: joint {name!r} does not match the sinews joint {b.joint!r}")
            kind = pin_model.joints[i].shortname()
            if kind in UNBOUNDED and b.joint.nq == 1:
                angles.append((b.idx_q, iq_pin))
            elif kind == PLANAR and b.joint.kind == "Planar":
                ours.extend((b.idx_q, b.idx_q + 1))
                theirs.extend((iq_pin, iq_pin + 1))
                angles.append((b.idx_q + 2, iq_pin + 2))
                planar.append((b.idx_q + 2, b.idx_v))
            elif nq_pin == b.joint.nq:
                ours.extend(range(b.idx_q, b.idx_q + nq_pin))
                theirs.extend(range(iq_pin, iq_pin + nq_pin))
            else:
                raise ValueError(f"pin_model: joint {name!r} has nq={nq_pin}, the sinews joint {b.joint!r} has {b.joint.nq}")
        if len(ours) + len(angles) != self.model.nq:
            raise ValueError("pin_model: its joints do not cover the sinews model's configuration")
        self.nq_pin = int(pin_model.nq)
        self._angles = np.array(angles, dtype=np.int64).reshape(-1, 2)
        self._planar = np.array(planar, dtype=np.int64).reshape(-1, 2)
        self._q_same = (np.array(ours, dtype=np.int64), np.array(theirs, dtype=np.int64))

    def q_to_pin(self, q: ArrayLike) -> np.ndarray:
        """Configuration ``q`` (nq,) in Pinocchio's layout (a copy, (pin_model.nq,); continuous
        joints and planar angles as ``(cos, sin)``)."""
        q = finite_vector(q, self.model.nq, "q")
        out = np.empty(self.nq_pin)
        out[self._q_same[1]] = q[self._q_same[0]]
        for i_s, i_p in self._angles:
            out[i_p], out[i_p + 1] = np.cos(q[i_s]), np.sin(q[i_s])
        return out

    def q_from_pin(self, q: ArrayLike) -> np.ndarray:
        """Configuration (nq,) from Pinocchio's ``q`` (pin_model.nq,) (a copy; continuous joints'
        and planar joints' angle from ``atan2(sin, cos)``)."""
        q = finite_vector(q, self.nq_pin, "q")
        out = np.empty(self.model.nq)
        out[self._q_same[0]] = q[self._q_same[1]]
        for i_s, i_p in self._angles:
            out[i_s] = np.arctan2(q[i_p + 1], q[i_p])
        return out

    def _planar_cs(self, q: ArrayLike | None) -> np.ndarray:
        """``(k, 2)`` cos and sin of the planar joints' angles in ``q`` (nq,) (sinews layout)."""
        if q is None:
            raise ValueError(
                "q is required: the model has Pinocchio planar joints, whose velocity (vx, vy, w) is "
                "in the child's axes, so the conversion depends on the angle"
            )
        t = finite_vector(q, self.model.nq, "q")[self._planar[:, 0]]
        return np.stack([np.cos(t), np.sin(t)], axis=1)

    def _rotate(self, x: np.ndarray, cs: np.ndarray, to_pin: bool) -> np.ndarray:
        """Rotate the (x, y) part of each planar block of ``x`` (nv,) in place: ``R^T`` (to
        Pinocchio's child axes) or ``R`` (back)."""
        sign = 1.0 if to_pin else -1.0
        for (_, iv), (c, s) in zip(self._planar, cs):
            a, b = x[iv], x[iv + 1]
            x[iv], x[iv + 1] = c * a + sign * s * b, -sign * s * a + c * b
        return x

    def _to_pin(self, x: ArrayLike, name: str, q: ArrayLike | None) -> np.ndarray:
        out = np.empty(self.model.nv)
        out[self.perm] = finite_vector(x, self.model.nv, name)
        if len(self._planar):
            self._rotate(out, self._planar_cs(q), True)
            _finite_or_raise(out, name)
        return out

    def _from_pin(self, x: ArrayLike, name: str, q: ArrayLike | None) -> np.ndarray:
        out = finite_vector(x, self.model.nv, name)[self.perm]
        if len(self._planar):
            self._rotate(out, self._planar_cs(q), False)
            _finite_or_raise(out, name)
        return out

    def v_to_pin(self, v: ArrayLike, q: ArrayLike | None = None) -> np.ndarray:
        """Velocity (or torque) (nv,) in Pinocchio's order; ``q`` (nq,), the sinews
        configuration, is needed only with Pinocchio planar joints (for accelerations use
        :meth:`a_to_pin`, which differs there)."""
        return self._to_pin(v, "v", q)

    def v_from_pin(self, v_pin: ArrayLike, q: ArrayLike | None = None) -> np.ndarray:
        """Velocity (or torque) (nv,) from Pinocchio's order; ``q`` (nq,), the sinews
        configuration, is needed only with Pinocchio planar joints (for accelerations use
        :meth:`a_from_pin`)."""
        return self._from_pin(v_pin, "v_pin", q)

    def _planar_term(self, v: ArrayLike, cs: np.ndarray) -> np.ndarray:
        """``a_pin - T a`` (nv,): ``(w u_y, -w u_x)`` per planar joint, ``u = R^T (dx, dy)``."""
        v = finite_vector(v, self.model.nv, "v")
        out = np.zeros(self.model.nv)
        for (_, iv), (c, s) in zip(self._planar, cs):
            ux, uy = c * v[iv] + s * v[iv + 1], -s * v[iv] + c * v[iv + 1]
            w = v[iv + 2]
            out[iv], out[iv + 1] = w * uy, -w * ux
        if not np.all(np.isfinite(out)):
            raise ValueError("v is too large: the planar joints' velocity term w * (u_y, -u_x) overflows")
        return out

    def a_to_pin(self, a: ArrayLike, q: ArrayLike | None = None, v: ArrayLike | None = None) -> np.ndarray:
        """Acceleration ``a`` (nv,) in Pinocchio's coordinates (``d v_pin / dt``).  Same as
        :meth:`v_to_pin` without planar joints; with them, ``q`` (nq,) and ``v`` (nv,) (sinews')
        are needed: ``a_pin = T a + (w u_y, -w u_x, 0)`` per planar joint."""
        out = self._to_pin(a, "a", q)
        if len(self._planar):
            if v is None:
                raise ValueError("v is required: with Pinocchio planar joints the acceleration has a velocity term")
            out += self._planar_term(v, self._planar_cs(q))
            _finite_or_raise(out, "a and v")
        return out

    def a_from_pin(self, a_pin: ArrayLike, q: ArrayLike | None = None, v: ArrayLike | None = None) -> np.ndarray:
        """Acceleration (nv,) (``dv/dt``, sinews) from Pinocchio's ``a_pin`` (nv,); ``q`` (nq,)
        and ``v`` (nv,) (sinews') are needed only with Pinocchio planar joints."""
        a_pin = finite_vector(a_pin, self.model.nv, "a_pin")
        if len(self._planar):
            if v is None:
                raise ValueError("v is required: with Pinocchio planar joints the acceleration has a velocity term")
            a_pin = a_pin - self._planar_term(v, self._planar_cs(q))[self.perm.argsort()]
            _finite_or_raise(a_pin, "a_pin and v")
        return self._from_pin(a_pin, "a_pin and v", q)

    def _velocity_map(self, q: ArrayLike | None) -> np.ndarray:
        """``T`` (nv, nv) with ``v_pin = T v``."""
        T = np.zeros((self.model.nv, self.model.nv))
        T[self.perm, np.arange(self.model.nv)] = 1.0
        if len(self._planar):
            cs = self._planar_cs(q)
            for j in range(self.model.nv):
                self._rotate(T[:, j], cs, True)
        return T

    def matrix_from_pin(self, M_pin: ArrayLike, q: ArrayLike | None = None) -> np.ndarray:
        """An (nv, nv) matrix (mass matrix) in sinews coordinates, ``T^T M_pin T``; ``q`` (nq,)
        is needed only with Pinocchio planar joints."""
        nv = self.model.nv
        M_pin = real_array(M_pin, "M_pin", shape=(nv, nv))
        if len(self._planar):
            T = self._velocity_map(q)
            return T.T @ M_pin @ T
        return M_pin[np.ix_(self.perm, self.perm)]

    def columns_from_pin(self, J_pin: ArrayLike, q: ArrayLike | None = None) -> np.ndarray:
        """Jacobian columns from Pinocchio's velocity coordinates (``J_pin T``; rows unchanged);
        ``q`` (nq,) is needed only with Pinocchio planar joints."""
        J_pin = real_array(J_pin, "J_pin")
        if J_pin.ndim == 1 and self.model.nv == 1:  # Pinocchio returns a vector for one dof
            J_pin = J_pin.reshape(-1, 1)
        if J_pin.ndim != 2 or J_pin.shape[1] != self.model.nv:
            raise ValueError(f"J_pin must have {self.model.nv} columns, got shape {J_pin.shape}")
        if len(self._planar):
            return J_pin @ self._velocity_map(q)
        return J_pin[:, self.perm]

    @staticmethod
    def rows6_from_pin(J_pin: ArrayLike) -> np.ndarray:
        """Swap Pinocchio's [linear; angular] rows to sinews' [angular; linear]."""
        J_pin = real_array(J_pin, "J_pin")
        if J_pin.ndim not in (1, 2) or J_pin.shape[0] != 6:
            raise ValueError(f"J_pin must have 6 rows, got shape {J_pin.shape}")
        return np.concatenate([J_pin[3:], J_pin[:3]], axis=0)
