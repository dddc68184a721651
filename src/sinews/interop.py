"""Conversion to and from Pinocchio models (``pip install pin``).

``from_pinocchio(pin_model)`` builds the equivalent :class:`sinews.Model`: one body per
Pinocchio joint (same names, same order), one sinews frame per Pinocchio frame of type BODY,
FIXED_JOINT or OP_FRAME, and the joint limits, damping, friction and armature (contract C1).
``to_pinocchio(model)`` goes the other way; multi-axis joints (planar, translation, Euler,
general) become Pinocchio composite joints.

Coordinates differ in two places:

* a free-flyer velocity is ``[omega; v]`` in sinews (angular first, like every spatial vector
  here) and ``[v; omega]`` in Pinocchio;
* a continuous (unbounded revolute) joint has ``q = t`` (the angle) in sinews and
  ``q = (cos t, sin t)`` in Pinocchio, so ``nq`` and ``idx_q`` differ when a Pinocchio model has
  continuous joints (``v`` is the same).

Use :class:`PinocchioCoordinates` (``PinocchioCoordinates(model, pin_model)``, then
``v_to_pin(v)``, ``q_to_pin(q)`` etc.) to convert q, v, tau and Jacobian columns.  6-D
Jacobian *rows* are ``[angular; linear]`` here and ``[linear; angular]`` in Pinocchio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from . import joints as J
from ._checks import finite_vector, real_array
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

#: Pinocchio joint types with no sinews equivalent, and why (from_pinocchio refuses them)
_REFUSED = {
    "JointModelPlanar": (
        "Pinocchio's planar joint has q = (x, y, cos, sin) and v = the child twist in child axes (an "
        "SE(2) velocity), while sinews' Planar has v = dq/dt; build the planar base from "
        "JointModelPX, JointModelPY and JointModelRZ (a JointModelComposite) instead"
    ),
    "JointModelMimic": (
        "a Pinocchio mimic joint has no degrees of freedom of its own; load the robot with "
        "independent mimic joints (e.g. pin.buildModelFromUrdf(..., mimic=False)) and couple them "
        "with sinews' Model.add_mimic / ConstraintSet.add_mimic_constraints"
    ),
    "JointModelEllipsoid": "sinews has no ellipsoid joint",
}

#: unbounded (continuous) revolute joints: q = (cos t, sin t) in Pinocchio, q = t in sinews
_UNBOUNDED = {"JointModelRUBX": 0, "JointModelRUBY": 1, "JointModelRUBZ": 2, "JointModelRevoluteUnboundedUnaligned": None}


def _screw_from_pin(jm, where: str) -> np.ndarray:
    """The unit screw axis ``[omega; v]`` of a one-dof Pinocchio joint (revolute, prismatic or
    helical, aligned or not), for a composite joint's parts."""
    name = jm.shortname()
    if hasattr(jm, "extract"):
        jm = jm.extract()
    axis = None
    if name[-2:-1] in ("R", "P", "H") and name[-1] in "XYZ" and name.startswith("JointModel") and len(name) == 12:
        axis = np.eye(3)["XYZ".index(name[-1])]
        kind = name[-2]
    elif name in ("JointModelRevoluteUnaligned", "JointModelPrismaticUnaligned", "JointModelHelicalUnaligned"):
        axis = np.asarray(jm.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        kind = name[10]
    if axis is None:
        raise ValueError(
            f"{where}: a Pinocchio composite joint converts to a sinews MultiAxis joint only when "
            f"all its parts are one-dof revolute, prismatic or helical joints; it holds a {name}"
        )
    if kind == "R":
        return np.r_[axis, 0.0, 0.0, 0.0]
    if kind == "P":
        return np.r_[0.0, 0.0, 0.0, axis]
    return np.r_[axis, float(jm.pitch) * axis]


def _composite_from_pin(jm, where: str):
    """A Pinocchio ``JointModelComposite`` ``X = P_1 J_1(q_1) P_2 J_2(q_2) ... P_k J_k(q_k)`` as
    ``(P_1 ... P_k, MultiAxis)``: ``X = (P_1 ... P_k) exp(s'_1 q_1) ... exp(s'_k q_k)`` with
    ``s'_i = Ad(Q_i^-1) s_i`` and ``Q_i = P_{i+1} ... P_k``.  Velocities are ``dq/dt`` in both."""
    parts = list(jm.joints)
    if not 1 <= len(parts) <= 6:
        raise ValueError(f"{where}: a composite joint of {len(parts)} parts (sinews' MultiAxis takes 1 to 6)")
    P = [Transform(np.asarray(X.rotation), np.asarray(X.translation)) for X in jm.jointPlacements]
    axes = []
    for i, part in enumerate(parts):
        Q = Transform.identity()
        for X in P[i + 1 :]:
            Q = Q @ X
        Qi = Q.inverse()
        s = _screw_from_pin(part, where)
        w = Qi.R @ s[:3]
        axes.append(np.r_[w, Qi.R @ s[3:] + np.cross(Qi.p, w)])
    total = Transform.identity()
    for X in P:
        total = total @ X
    return total, J.MultiAxis(np.array(axes))


def _unbounded_axis(jm) -> np.ndarray:
    """The axis of a ``JointModelRevoluteUnboundedUnaligned`` (Pinocchio's Python bindings do not
    expose it): the angular part of its motion subspace at ``q = (cos 0, sin 0)``."""
    jd = jm.createData()
    jm.calc(jd, np.array([1.0, 0.0]))
    return np.asarray(jd.S, dtype=float).reshape(6)[3:]


def _joint_from_pin(jm, where: str = "joint"):
    """``(X_extra, joint)``: the sinews joint equivalent to a Pinocchio joint model and the
    placement to append to the Pinocchio joint placement (identity except for composites)."""
    name = jm.shortname()
    if name == "JointModelRevoluteUnboundedUnaligned":
        return Transform.identity(), J.Revolute(_unbounded_axis(jm))
    if name in _REFUSED:
        raise ValueError(f"{where}: Pinocchio joint type {name} has no sinews equivalent: {_REFUSED[name]}")
    if name == "JointModelComposite":
        return _composite_from_pin(jm.extract() if hasattr(jm, "extract") else jm, where)
    if hasattr(jm, "extract"):  # the generic JointModel wrapper hides axis and pitch
        jm = jm.extract()
    I = Transform.identity()
    table = {
        "JointModelRX": J.RevoluteX,
        "JointModelRY": J.RevoluteY,
        "JointModelRZ": J.RevoluteZ,
        "JointModelPX": J.PrismaticX,
        "JointModelPY": J.PrismaticY,
        "JointModelPZ": J.PrismaticZ,
        "JointModelSpherical": J.Spherical,
        "JointModelFreeFlyer": J.FreeFlyer,
        "JointModelTranslation": J.TranslationXYZ,
        "JointModelSphericalZYX": J.EulerZYX,
    }
    if name in table:
        return I, table[name]()
    if name in _UNBOUNDED:
        return I, (J.RevoluteX, J.RevoluteY, J.RevoluteZ)[_UNBOUNDED[name]]()
    if name == "JointModelRevoluteUnaligned":
        return I, J.Revolute(np.asarray(jm.axis, dtype=float))
    if name == "JointModelPrismaticUnaligned":
        return I, J.Prismatic(np.asarray(jm.axis, dtype=float))
    if name in ("JointModelHX", "JointModelHY", "JointModelHZ"):
        axis = np.eye(3)["XYZ".index(name[-1])]
        return I, J.Helical(axis, float(jm.pitch))
    if name == "JointModelHelicalUnaligned":
        return I, J.Helical(np.asarray(jm.axis, dtype=float), float(jm.pitch))
    if name == "JointModelUniversal":
        # X = R(axis1, q1) R(axis2, q2), v = dq/dt
        a1 = np.asarray(jm.axis1, dtype=float)
        a2 = np.asarray(jm.axis2, dtype=float)
        return I, J.MultiAxis([np.r_[a1, 0.0, 0.0, 0.0], np.r_[a2, 0.0, 0.0, 0.0]], kind="Universal")
    raise ValueError(f"{where}: Pinocchio joint type {name} has no sinews equivalent")


def _limits(a: np.ndarray) -> np.ndarray:
    """Pinocchio's +-DBL_MAX ("unlimited") as +-inf."""
    a = np.array(a, dtype=float)
    a[a >= _PIN_UNLIMITED] = np.inf
    a[a <= -_PIN_UNLIMITED] = -np.inf
    return a


def _copy_properties(model: Model, bid: int, pin_model, i: int, unbounded: bool) -> None:
    """Limits, damping, friction and armature of Pinocchio joint ``i`` onto sinews body ``bid``
    (contract C1).  Continuous joints keep infinite position limits (Pinocchio's limits there
    bound cos and sin); free-flyer velocity-sized properties are reordered ``[v; w] -> [w; v]``."""
    b = model.body(bid)
    iq, nq = int(pin_model.idx_qs[i]), int(pin_model.nqs[i])
    iv, nv = int(pin_model.idx_vs[i]), int(pin_model.nvs[i])
    props = {}
    if not unbounded:
        props["lower"] = _limits(pin_model.lowerPositionLimit[iq : iq + nq])
        props["upper"] = _limits(pin_model.upperPositionLimit[iq : iq + nq])
    order = np.array([3, 4, 5, 0, 1, 2]) if b.joint.code == J.JT_FREEFLYER else np.arange(nv)
    for ours, theirs in (("velocity_limit", "velocityLimit"), ("effort_limit", "effortLimit"),
                         ("damping", "damping"), ("friction", "friction"), ("armature", "armature")):
        vals = _limits(np.asarray(getattr(pin_model, theirs))[iv : iv + nv])[order]
        props[ours] = vals
    model.set_joint_properties(bid, **props)


def from_pinocchio(pin_model: pinocchio.Model) -> Model:
    """A sinews model equivalent to a Pinocchio ``Model``.

    Every Pinocchio joint type with a sinews equivalent converts: revolute, prismatic and
    helical (aligned or not), continuous (``JointModelRUBX/Y/Z``,
    ``JointModelRevoluteUnboundedUnaligned``: a sinews revolute joint whose ``q`` is the angle,
    where Pinocchio stores ``(cos, sin)``: convert with ``PinocchioCoordinates(model,
    pin_model)``), spherical, free-flyer, translation, spherical ZYX (``EulerZYX``), universal
    and composites of one-dof joints (``MultiAxis``).  Planar, mimic and ellipsoid joints are
    refused with the reason.  Joint limits, velocity and effort limits, damping, friction and
    armature are copied (``Model.set_joint_properties``); Pinocchio's ``+-DBL_MAX`` ("no limit")
    becomes ``+-inf``.
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
        X_extra, joint = _joint_from_pin(jm, f"joint {name!r}")
        X = Transform(np.asarray(placement.rotation), np.asarray(placement.translation)) @ X_extra
        I = pin_model.inertias[i]
        inertia = SpatialInertia(float(I.mass), np.asarray(I.lever), np.asarray(I.inertia))
        bid = model.add_body(int(pin_model.parents[i]), joint, X, inertia, name=name)
        _copy_properties(model, bid, pin_model, i, jm.shortname() in _UNBOUNDED)
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


def _multiaxis_to_pin(pin, joint: J.Joint):
    """A multi-axis joint ``exp(s_1 q_1) ... exp(s_k q_k)`` as a Pinocchio composite: each unit
    screw ``s = [w; v]`` is ``P exp(s0 q) P^-1`` with ``P = T(w x v)`` (a point of its axis) and
    ``s0`` the revolute/helical joint about ``w`` through the origin (pitch ``w . v``), or a
    prismatic joint along ``v`` (``w = 0``).  Returns the composite (placements ``P_1``,
    ``P_1^-1 P_2``, ...) and the trailing ``P_k^-1``: the sinews child frame in the Pinocchio
    joint frame."""
    comp = pin.JointModelComposite()
    prev = Transform.identity()
    for s in joint.axes:
        w, v = np.asarray(s[:3], dtype=float), np.asarray(s[3:], dtype=float)
        if np.linalg.norm(w) > 0.5:
            pitch = float(w @ v)
            P = Transform(np.eye(3), np.cross(w, v))
            jm = pin.JointModelHelicalUnaligned(w, pitch) if pitch != 0.0 else pin.JointModelRevoluteUnaligned(*w)
        else:
            P = Transform.identity()
            jm = pin.JointModelPrismaticUnaligned(*v)
        X = prev.inverse() @ P
        comp.addJoint(jm, pin.SE3(X.R, X.p))
        prev = P
    return comp, prev.inverse()


def _joint_to_pin(pin, joint: J.Joint):
    """``(Pinocchio joint model, X_pinframe_child)``: the equivalent joint and the sinews child
    frame in the Pinocchio joint frame (the identity except for multi-axis joints with axes off
    the origin)."""
    I = Transform.identity()
    if joint.code == J.JT_REVOLUTE:
        code = joint.axis_code
        if code:
            return [pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ][code - 1](), I
        return pin.JointModelRevoluteUnaligned(*joint.axis), I
    if joint.code == J.JT_PRISMATIC:
        code = joint.axis_code
        if code:
            return [pin.JointModelPX, pin.JointModelPY, pin.JointModelPZ][code - 1](), I
        return pin.JointModelPrismaticUnaligned(*joint.axis), I
    if joint.code == J.JT_HELICAL:
        return pin.JointModelHelicalUnaligned(np.asarray(joint.axis), joint.pitch), I
    if joint.code == J.JT_SPHERICAL:
        return pin.JointModelSpherical(), I
    if joint.code == J.JT_FREEFLYER:
        return pin.JointModelFreeFlyer(), I
    if joint.code == J.JT_MULTIAXIS:
        return _multiaxis_to_pin(pin, joint)
    raise ValueError(f"joint {joint!r} cannot be converted to Pinocchio")


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
        jm, post[k] = _joint_to_pin(pin, b.joint)
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


class PinocchioCoordinates:
    """Converts q, v (and tau, a) and Jacobians between sinews and Pinocchio orderings.

    ``pin_model``: the Pinocchio model the sinews ``model`` was made from (or converted to),
    needed only when it has continuous joints (``JointModelRUBX/Y/Z``, ``RevoluteUnbounded``),
    whose configuration is ``(cos t, sin t)`` in Pinocchio and the angle ``t`` in sinews; then
    ``model.nq`` and ``pin_model.nq`` differ and :meth:`q_to_pin` / :meth:`q_from_pin` convert.
    Joints are matched by name (``from_pinocchio`` keeps Pinocchio's joint names).
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
        self._q_same = (np.arange(model.nq), np.arange(model.nq))
        if pin_model is not None:
            self._match(pin_model)

    def _match(self, pin_model) -> None:
        pin = _pin()
        if not isinstance(pin_model, pin.Model):
            raise ValueError(f"pin_model must be a pinocchio.Model, got {type(pin_model).__name__}")
        ours, theirs, angles = [], [], []
        for i in range(1, pin_model.njoints):
            name = str(pin_model.names[i])
            try:
                b = self.model.body(name)
            except KeyError:
                raise ValueError(f"pin_model: joint {name!r} is not a body of the sinews model") from None
            nq_pin, iq_pin = int(pin_model.nqs[i]), int(pin_model.idx_qs[i])
            if int(pin_model.nvs[i]) != b.joint.nv or b.idx_q < 0:
                raise ValueError(f"pin_model: joint {name!r} does not match the sinews joint {b.joint!r}")
            if pin_model.joints[i].shortname() in _UNBOUNDED and b.joint.nq == 1:
                angles.append((b.idx_q, iq_pin))
            elif nq_pin == b.joint.nq:
                ours.extend(range(b.idx_q, b.idx_q + nq_pin))
                theirs.extend(range(iq_pin, iq_pin + nq_pin))
            else:
                raise ValueError(f"pin_model: joint {name!r} has nq={nq_pin}, the sinews joint {b.joint!r} has {b.joint.nq}")
        if len(ours) + len(angles) != self.model.nq:
            raise ValueError("pin_model: its joints do not cover the sinews model's configuration")
        self.nq_pin = int(pin_model.nq)
        self._angles = np.array(angles, dtype=np.int64).reshape(-1, 2)
        self._q_same = (np.array(ours, dtype=np.int64), np.array(theirs, dtype=np.int64))

    def q_to_pin(self, q: ArrayLike) -> np.ndarray:
        """Configuration ``q`` (nq,) in Pinocchio's layout (a copy, (pin_model.nq,); continuous
        joints as ``(cos, sin)``)."""
        q = finite_vector(q, self.model.nq, "q")
        out = np.empty(self.nq_pin)
        out[self._q_same[1]] = q[self._q_same[0]]
        for i_s, i_p in self._angles:
            out[i_p], out[i_p + 1] = np.cos(q[i_s]), np.sin(q[i_s])
        return out

    def q_from_pin(self, q: ArrayLike) -> np.ndarray:
        """Configuration (nq,) from Pinocchio's ``q`` (pin_model.nq,) (a copy; continuous joints'
        angle from ``atan2(sin, cos)``)."""
        q = finite_vector(q, self.nq_pin, "q")
        out = np.empty(self.model.nq)
        out[self._q_same[0]] = q[self._q_same[1]]
        for i_s, i_p in self._angles:
            out[i_s] = np.arctan2(q[i_p + 1], q[i_p])
        return out

    def v_from_pin(self, v_pin: ArrayLike) -> np.ndarray:
        """Velocity (or acceleration, torque) (nv,) from Pinocchio's order."""
        return finite_vector(v_pin, self.model.nv, "v_pin")[self.perm]

    def v_to_pin(self, v: ArrayLike) -> np.ndarray:
        """Velocity (or acceleration, torque) (nv,) in Pinocchio's order."""
        out = np.empty(self.model.nv)
        out[self.perm] = finite_vector(v, self.model.nv, "v")
        return out

    def matrix_from_pin(self, M_pin: ArrayLike) -> np.ndarray:
        """An (nv, nv) matrix (mass matrix) in sinews ordering."""
        nv = self.model.nv
        M_pin = real_array(M_pin, "M_pin", shape=(nv, nv))
        return M_pin[np.ix_(self.perm, self.perm)]

    def columns_from_pin(self, J_pin: ArrayLike) -> np.ndarray:
        """Jacobian columns from Pinocchio's velocity order (rows unchanged)."""
        J_pin = real_array(J_pin, "J_pin")
        if J_pin.ndim == 1 and self.model.nv == 1:  # Pinocchio returns a vector for one dof
            J_pin = J_pin.reshape(-1, 1)
        if J_pin.ndim != 2 or J_pin.shape[1] != self.model.nv:
            raise ValueError(f"J_pin must have {self.model.nv} columns, got shape {J_pin.shape}")
        return J_pin[:, self.perm]

    @staticmethod
    def rows6_from_pin(J_pin: ArrayLike) -> np.ndarray:
        """Swap Pinocchio's [linear; angular] rows to sinews' [angular; linear]."""
        J_pin = real_array(J_pin, "J_pin")
        if J_pin.ndim not in (1, 2) or J_pin.shape[0] != 6:
            raise ValueError(f"J_pin must have 6 rows, got shape {J_pin.shape}")
        return np.concatenate([J_pin[3:], J_pin[:3]], axis=0)
