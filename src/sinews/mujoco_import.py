"""Import MuJoCo models as sinews models (``pip install "sinews[mujoco]"``).

MuJoCo's own parser reads the MJCF (``mujoco.MjModel.from_xml_path`` / ``from_xml_string``);
:func:`from_mujoco` converts the compiled ``mjModel``:

* **bodies**: each MuJoCo body becomes a sinews body of the same name (unnamed bodies:
  ``"body<id>"``) whose frame *is* MuJoCo's body frame (``xpos``/``xquat``), carrying the body's
  inertia (``body_mass``, inertial frame ``body_ipos``/``body_iquat``, principal moments
  ``body_inertia``).  It is welded (:func:`~sinews.joints.Fixed`) to the body of its last joint,
  or to its parent body when it has no joint (the weld costs nothing: welded bodies merge);
* **joints**: each MuJoCo joint becomes a massless sinews body named after the joint (or
  ``"<body>_joint<k>"`` when unnamed or when the name is also a body name) moved by the
  equivalent joint: ``hinge`` -> :func:`~sinews.joints.Revolute` about ``jnt_axis`` through the
  anchor ``jnt_pos``; ``slide`` -> :func:`~sinews.joints.Prismatic`; ``ball`` ->
  :func:`~sinews.joints.Spherical` about the anchor; ``free`` -> :func:`~sinews.joints.FreeFlyer`.
  MuJoCo's kinematics ``X_parent_body = B * prod_k T(c_k) J_k(q_k) T(-c_k)`` (body placement B,
  anchors c_k) is reproduced exactly, with the joints' reference positions (``qpos0``) folded
  into the placements, so that **sinews q equals MuJoCo's qpos** up to the quaternion order
  (``(w, x, y, z)`` in MuJoCo, ``(x, y, z, w)`` here);
* **joint properties** (contract C1): ``dof_armature`` -> armature (it enters the dynamics,
  contract C2), ``dof_damping`` -> damping, ``dof_frictionloss`` -> friction, ``jnt_range`` of
  limited hinge and slide joints -> position limits, ``jnt_actfrcrange`` of joints with
  ``actuatorfrclimited`` -> effort limit (``max(-lo, hi)``).  A ball joint's range is a cone
  (no per-coordinate limit): it is not kept;
* **gravity**: ``opt.gravity`` (zero when ``opt.disableflags`` has ``mjDSBL_GRAVITY``);
* **sites** become sinews frames (named sites only), on the body that holds them.

Not converted, and why: actuators (they map controls to joint forces: apply ``tau`` yourself),
contacts and geoms (:func:`mujoco_geoms` lists the geoms as :class:`MujocoGeom` records for a
simulator), and, refused by default (``unsupported="raise"``) or dropped with a warning
(``unsupported="warn"``): tendons, equality constraints (:func:`mujoco_constraints` converts
connect, weld and linear joint equalities into a ``ConstraintSet``), flexes, joint springs
(``stiffness``), polynomial damping, gravity compensation, fluid forces (``density``,
``viscosity``, ``wind``), plugins, and armature on a free joint's translation (MuJoCo applies it
in world axes; the rotation's armature converts).  A free joint below the top level and a ball
joint followed by a rotating joint in the same body are always refused (MuJoCo's velocity
conventions there have no sinews equivalent).

Velocities differ for free joints only: MuJoCo's ``qvel`` of a free joint is ``[v_world;
omega_body]`` (the linear velocity of the body origin in world axes, then the angular velocity
in body axes); sinews' is ``[omega_body; v_body]``.  :class:`MujocoCoordinates` converts q, v,
accelerations, forces and mass matrices.  MuJoCo's smooth dynamics ``M qacc + qfrc_bias =
qfrc_passive + qfrc_applied + ...`` matches sinews' ``crba``/``nonlinear_effects``/``aba`` with
the damping force ``-model.damping * v`` added to ``tau`` (tested to 1e-9 against
``mujoco.mj_forward`` with constraints disabled).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import joints as J
from ._checks import finite_vector, raise_overflow, real_array
from .model import Model
from .spatial import SpatialInertia, Transform

if TYPE_CHECKING:
    import mujoco

    from .constraints import ConstraintSet

__all__ = ["from_mujoco", "mujoco_constraints", "mujoco_geoms", "MujocoGeom", "MujocoCoordinates"]

_GEOM_TYPES = {0: "plane", 1: "hfield", 2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box", 7: "mesh", 8: "sdf"}
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3


def _mj():
    try:
        import mujoco
    except ImportError as exc:  # pragma: no cover - exercised only without mujoco
        raise ImportError('sinews.mujoco_import needs MuJoCo: pip install "sinews[mujoco]"') from exc
    return mujoco


def _check_model(mj_model):
    mujoco = _mj()
    if not isinstance(mj_model, mujoco.MjModel):
        raise ValueError(f"mj_model must be a mujoco.MjModel, got {type(mj_model).__name__}")
    return mujoco


def _R(quat_wxyz) -> np.ndarray:
    """Rotation matrix of MuJoCo's quaternion ``(w, x, y, z)`` (normalised)."""
    w, x, y, z = np.asarray(quat_wxyz, dtype=float) / np.linalg.norm(quat_wxyz)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _axis_rotation(axis, angle) -> np.ndarray:
    a = np.asarray(axis, dtype=float)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


# ----------------------------------------------------------------------------------------------
# naming (shared by from_mujoco, mujoco_geoms and MujocoCoordinates)


@dataclass(frozen=True)
class _Names:
    bodies: tuple[str, ...]  # sinews body name of each MuJoCo body (index = MuJoCo body id)
    joints: tuple[str, ...]  # sinews body name of each MuJoCo joint's moving body


def _names(mujoco, m) -> _Names:
    def name(obj, i):
        return mujoco.mj_id2name(m, obj, i) or ""

    bodies, used = [], set()
    for b in range(m.nbody):
        n = "world" if b == 0 else (name(mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}")
        while n in used:
            n += "_"
        used.add(n)
        bodies.append(n)
    joints = []
    for j in range(m.njnt):
        b = int(m.jnt_bodyid[j])
        n = name(mujoco.mjtObj.mjOBJ_JOINT, j)
        if not n or n in used:
            n = f"{bodies[b]}_joint{j - int(m.body_jntadr[b])}"
        while n in used:
            n += "_"
        used.add(n)
        joints.append(n)
    return _Names(tuple(bodies), tuple(joints))


# ----------------------------------------------------------------------------------------------
# what has no sinews equivalent


def _unsupported(mujoco, m) -> list[str]:
    """Features of ``m`` that the sinews model would silently lack."""
    out = []
    if m.ntendon:
        out.append(f"{m.ntendon} tendon(s): sinews has no tendons")
    if m.neq:
        out.append(
            f"{m.neq} equality constraint(s): not part of the tree; convert them with "
            "mujoco_constraints(mj_model, model)"
        )
    if m.nflex:
        out.append(f"{m.nflex} flex(es): sinews has rigid bodies only")
    if m.nplugin:
        out.append(f"{m.nplugin} plugin(s)")
    if np.any(m.jnt_stiffness != 0):
        bad = [j for j in range(m.njnt) if m.jnt_stiffness[j] != 0]
        out.append(f"joint springs (stiffness) on joint(s) {bad}: sinews has no joint springs (apply -k (q - q_spring) as a torque)")
    for attr in ("jnt_stiffnesspoly", "dof_dampingpoly"):
        if hasattr(m, attr) and np.any(getattr(m, attr) != 0):
            out.append(f"{attr}: nonlinear spring/damping polynomials")
    free_lin = [j for j in range(m.njnt) if m.jnt_type[j] == _FREE and np.any(m.dof_armature[m.jnt_dofadr[j] : m.jnt_dofadr[j] + 3] != 0)]
    if free_lin:
        out.append(
            f"armature on the translation of free joint(s) {free_lin}: MuJoCo adds it in world axes "
            "(an inertia that sees the body's Coriolis terms), sinews per body-axis coordinate as "
            "Pinocchio does (the rotation's armature converts)"
        )
    if np.any(m.body_gravcomp != 0):
        out.append("gravity compensation (gravcomp)")
    if m.opt.density != 0 or m.opt.viscosity != 0 or np.any(m.opt.wind != 0):
        out.append("fluid forces (opt.density, opt.viscosity, opt.wind)")
    return out


def _structural_errors(m) -> None:
    for b in range(1, m.nbody):
        j0, nj = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        types = [int(m.jnt_type[j]) for j in range(j0, j0 + nj)]
        if _FREE in types and (int(m.body_parentid[b]) != 0 or nj != 1):
            raise ValueError(f"mj_model: body {b} has a free joint below the top level or with other joints")
        for k, t in enumerate(types):
            if t == _BALL and any(u in (_BALL, _HINGE) for u in types[k + 1 :]):
                raise ValueError(
                    f"mj_model: body {b} has a ball joint followed by a rotating joint; MuJoCo's ball "
                    "velocity is then in the final body axes, which has no sinews equivalent"
                )


# ----------------------------------------------------------------------------------------------
# the conversion


def from_mujoco(mj_model: mujoco.MjModel, *, unsupported: str = "raise", name: str | None = None) -> Model:
    """The sinews :class:`~sinews.Model` equivalent to a compiled MuJoCo ``mjModel``.

    ``unsupported``: ``"raise"`` (default) refuses a model with tendons, equality constraints,
    flexes, joint springs, polynomial damping, gravity compensation, fluid forces, plugins or
    armature on a free joint's translation, naming them; ``"warn"`` drops them with a ``UserWarning``.  ``name``: the model name
    (default ``"mujoco"``).  See the module docstring for the mapping; ``q`` equals MuJoCo's
    ``qpos`` with quaternions as ``(x, y, z, w)`` (:class:`MujocoCoordinates`).
    """
    mujoco = _check_model(mj_model)
    m = mj_model
    if unsupported not in ("raise", "warn"):
        raise ValueError(f"unsupported must be 'raise' or 'warn', got {unsupported!r}")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__}")
    _structural_errors(m)
    missing = _unsupported(mujoco, m)
    if missing and unsupported == "raise":
        raise ValueError(
            "mj_model has features without a sinews equivalent (pass unsupported='warn' to drop "
            "them): " + "; ".join(missing)
        )
    if missing:
        warnings.warn("from_mujoco dropped: " + "; ".join(missing), UserWarning, stacklevel=2)
    gravity_off = int(m.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY)
    model = Model(gravity=np.zeros(3) if gravity_off else np.array(m.opt.gravity, dtype=float), name=name or "mujoco")
    names = _names(mujoco, m)
    for b in range(1, m.nbody):
        parent = names.bodies[int(m.body_parentid[b])]
        X = Transform(_R(m.body_quat[b]), np.array(m.body_pos[b], dtype=float))
        for j in range(int(m.body_jntadr[b]), int(m.body_jntadr[b] + m.body_jntnum[b])):
            X, parent = _add_joint(model, m, j, X, parent, names.joints[j])
        R_i = _R(m.body_iquat[b])
        inertia = SpatialInertia(float(m.body_mass[b]), np.array(m.body_ipos[b], dtype=float), R_i @ np.diag(m.body_inertia[b]) @ R_i.T)
        model.add_body(parent, J.Fixed(), X, inertia, name=names.bodies[b])
    for s in range(m.nsite):
        site = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, s)
        if site:
            X_site = Transform(_R(m.site_quat[s]), np.array(m.site_pos[s], dtype=float))
            model.add_frame(site, names.bodies[int(m.site_bodyid[s])], X_site)
    return model


def _add_joint(model: Model, m, j: int, X: Transform, parent: str, body_name: str):
    """Add the body moved by MuJoCo joint ``j``, placed at ``X`` (the frame reached so far) times
    the joint's anchor; return the placement left for the next joint (``T(-anchor)``) and the
    new body's name.  Hinge and slide reference positions (``qpos0``) go into the placement."""
    t = int(m.jnt_type[j])
    qa, da = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
    if t == _FREE:
        joint, X_pj, rest = J.FreeFlyer(), Transform.identity(), Transform.identity()
    else:
        c = np.array(m.jnt_pos[j], dtype=float)
        a = np.array(m.jnt_axis[j], dtype=float)
        a = a / np.linalg.norm(a)
        X_pj = X @ Transform(np.eye(3), c)
        rest = Transform(np.eye(3), -c)
        if t == _HINGE:
            joint = J.Revolute(a)
            X_pj = X_pj @ Transform(_axis_rotation(a, -float(m.qpos0[qa])), np.zeros(3))
        elif t == _SLIDE:
            joint = J.Prismatic(a)
            X_pj = X_pj @ Transform(np.eye(3), -float(m.qpos0[qa]) * a)
        else:
            joint = J.Spherical()
    bid = model.add_body(parent, joint, X_pj, None, name=body_name)
    nv = joint.nv
    order = np.array([3, 4, 5, 0, 1, 2]) if t == _FREE else np.arange(nv)
    armature = np.array(m.dof_armature[da : da + nv], dtype=float)
    if t == _FREE:
        armature[:3] = 0.0  # world-axes translation armature: dropped (see _unsupported)
    props = {
        "armature": armature[order],
        "damping": np.array(m.dof_damping[da : da + nv], dtype=float)[order],
        "friction": np.array(m.dof_frictionloss[da : da + nv], dtype=float)[order],
    }
    if t in (_HINGE, _SLIDE) and m.jnt_limited[j]:
        props["lower"], props["upper"] = float(m.jnt_range[j, 0]), float(m.jnt_range[j, 1])
    if getattr(m, "jnt_actfrclimited", None) is not None and m.jnt_actfrclimited[j]:  # MuJoCo >= 3.0
        lo, hi = (float(x) for x in m.jnt_actfrcrange[j])
        props["effort_limit"] = max(-lo, hi, 0.0)
    model.set_joint_properties(bid, **props)
    return rest, body_name


# ----------------------------------------------------------------------------------------------
# equality constraints


def mujoco_constraints(mj_model: mujoco.MjModel, model: Model) -> ConstraintSet:
    """MuJoCo's equality constraints as a :class:`~sinews.constraints.ConstraintSet` on
    ``model`` (made by :func:`from_mujoco`, with ``unsupported="warn"`` since the equalities
    are not part of the tree).

    * ``connect`` -> a ``"ball"`` loop joint (:meth:`ConstraintSet.add_loop_joint`): the point
      ``anchor`` of body 1 (``eq_data[0:3]``) and the point ``eq_data[3:6]`` of body 2 coincide;
    * ``weld`` -> a ``"locked"`` loop joint: body 2's frame at ``anchor`` (``eq_data[0:3]``)
      coincides with body 1's frame at ``relpose`` (``eq_data[3:10]``: position, quaternion);
      for both, site-based equalities use the two site frames;
    * ``joint`` with a linear polynomial (``y - y0 = a0 + a1 (x - x0)``) -> a coordinate
      constraint ``q[joint1] = a1 q[joint2] + (a0 + y0 - a1 x0)`` on two hinge or slide joints.

    Each is named after the MuJoCo equality (``"eq<i>"`` when unnamed).  Inactive equalities
    (``eq_active0 = 0``) are skipped.  Refused with the reason (``ValueError``): tendon and flex
    equalities, nonlinear joint polynomials and single-joint locks.  MuJoCo's equalities are
    soft (``solref``/``solimp``); these are exact, with the same zero set.
    """
    mujoco = _check_model(mj_model)
    if not isinstance(model, Model):
        raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
    from .constraints import ConstraintSet

    m = mj_model
    names = _names(mujoco, m)
    cs = ConstraintSet()
    obj = mujoco.mjtObj
    for i in range(m.neq):
        if not m.eq_active0[i]:
            continue
        label = mujoco.mj_id2name(m, obj.mjOBJ_EQUALITY, i) or f"eq{i}"
        t = int(m.eq_type[i])
        o1, o2 = int(m.eq_obj1id[i]), int(m.eq_obj2id[i])
        data = np.array(m.eq_data[i], dtype=float)
        if t in (int(mujoco.mjtEq.mjEQ_CONNECT), int(mujoco.mjtEq.mjEQ_WELD)):
            objtype = getattr(m, "eq_objtype", None)  # site-based equalities: MuJoCo >= 3.1
            if objtype is not None and int(objtype[i]) == int(obj.mjOBJ_SITE):
                b1, b2 = names.bodies[int(m.site_bodyid[o1])], names.bodies[int(m.site_bodyid[o2])]
                X1 = Transform(_R(m.site_quat[o1]), np.array(m.site_pos[o1], dtype=float))
                X2 = Transform(_R(m.site_quat[o2]), np.array(m.site_pos[o2], dtype=float))
                if t == int(mujoco.mjtEq.mjEQ_CONNECT):
                    X1, X2 = Transform(np.eye(3), X1.p), Transform(np.eye(3), X2.p)
            elif t == int(mujoco.mjtEq.mjEQ_CONNECT):
                b1, b2 = names.bodies[o1], names.bodies[o2]
                X1, X2 = Transform(np.eye(3), data[0:3]), Transform(np.eye(3), data[3:6])
            else:
                b1, b2 = names.bodies[o1], names.bodies[o2]
                X1, X2 = Transform(_R(data[6:10]), data[3:6]), Transform(np.eye(3), data[0:3])
            kind = "ball" if t == int(mujoco.mjtEq.mjEQ_CONNECT) else "locked"
            cs.add_loop_joint(b1, b2, kind, X1, X2, name=label)
        elif t == int(mujoco.mjtEq.mjEQ_JOINT):
            poly = data[:5]
            if o2 < 0 or np.any(poly[2:] != 0):
                raise ValueError(
                    f"mj_model: equality {label!r} is a single-joint lock or a nonlinear joint coupling "
                    "(sinews couples two joint coordinates linearly)"
                )
            for j in (o1, o2):
                if int(m.jnt_type[j]) not in (_HINGE, _SLIDE):
                    raise ValueError(f"mj_model: equality {label!r} couples a ball or free joint")
            y0, x0 = float(m.qpos0[m.jnt_qposadr[o1]]), float(m.qpos0[m.jnt_qposadr[o2]])
            cs.add_coordinate_constraint(
                names.joints[o1], names.joints[o2], ratio=float(poly[1]),
                offset=float(poly[0] + y0 - poly[1] * x0), name=label,
            )
        else:
            raise ValueError(f"mj_model: equality {label!r} (a tendon or flex equality) has no sinews equivalent")
    return cs


# ----------------------------------------------------------------------------------------------
# geoms


@dataclass(frozen=True)
class MujocoGeom:
    """A MuJoCo geom, for a simulator: ``body`` (the sinews body name, whose frame is MuJoCo's
    body frame; ``"world"`` for static geoms), ``type`` (``"plane"``, ``"sphere"``,
    ``"capsule"``, ``"ellipsoid"``, ``"cylinder"``, ``"box"``, ``"mesh"``, ``"hfield"``,
    ``"sdf"``), ``size`` (MuJoCo's ``geom_size``, (3,): radii and *half* lengths),
    ``X_body_geometry`` (pose in the body frame), ``friction`` (sliding, torsional, rolling),
    ``contype``/``conaffinity`` (collision bit masks), ``condim``, ``name`` (``""`` if unnamed)."""

    name: str
    body: str
    type: str
    size: np.ndarray
    X_body_geometry: Transform
    friction: np.ndarray
    contype: int
    conaffinity: int
    condim: int


def mujoco_geoms(mj_model: mujoco.MjModel) -> tuple[MujocoGeom, ...]:
    """The geoms of ``mj_model`` as :class:`MujocoGeom` records, with the body names that
    :func:`from_mujoco` gives."""
    mujoco = _check_model(mj_model)
    m = mj_model
    names = _names(mujoco, m)
    out = []
    for g in range(m.ngeom):
        size = np.array(m.geom_size[g], dtype=float)
        fr = np.array(m.geom_friction[g], dtype=float)
        size.setflags(write=False)
        fr.setflags(write=False)
        out.append(
            MujocoGeom(
                name=mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or "",
                body=names.bodies[int(m.geom_bodyid[g])],
                type=_GEOM_TYPES.get(int(m.geom_type[g]), f"type{int(m.geom_type[g])}"),
                size=size,
                X_body_geometry=Transform(_R(m.geom_quat[g]), np.array(m.geom_pos[g], dtype=float)),
                friction=fr,
                contype=int(m.geom_contype[g]),
                conaffinity=int(m.geom_conaffinity[g]),
                condim=int(m.geom_condim[g]),
            )
        )
    return tuple(out)


# ----------------------------------------------------------------------------------------------
# coordinates


class MujocoCoordinates:
    """Converts configurations, velocities, accelerations, forces and mass matrices between a
    model made by :func:`from_mujoco` and its ``mjModel``.

    ``q`` is ``qpos`` with the quaternions of ball and free joints as ``(x, y, z, w)``.  A free
    joint's ``qvel`` is ``[v_world; omega_body]`` and its sinews ``v`` is ``[omega_body;
    v_body]``: ``qvel = T(q) v`` with ``v_world = R v_body``; accelerations follow
    ``qacc = T a + dT/dt v`` (``a_world = R (a_body + omega x v_body)``), generalized forces
    ``f = T^T f_mj`` and the mass matrix ``M = T^T M_mj T``.  Every other joint has the same
    velocity in both.
    """

    def __init__(self, model: Model, mj_model: mujoco.MjModel) -> None:
        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        mujoco = _check_model(mj_model)
        m = mj_model
        if (model.nq, model.nv) != (m.nq, m.nv):
            raise ValueError(f"mj_model: nq, nv = {m.nq}, {m.nv} do not match the model's {model.nq}, {model.nv}")
        names = _names(mujoco, m)
        quats, free = [], []
        for j in range(m.njnt):
            t, qa, da = int(m.jnt_type[j]), int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
            try:
                b = model.body(names.joints[j])
            except KeyError:
                raise ValueError(f"mj_model: joint {j} ({names.joints[j]!r}) is not a body of the model") from None
            if b.idx_q != qa or b.idx_v != da:
                raise ValueError(f"mj_model: joint {names.joints[j]!r} is not at the same q/v index in the model")
            if t == _FREE:
                quats.append(qa + 3)
                free.append((qa, da))
            elif t == _BALL:
                quats.append(qa)
        self.model = model
        self._quats = np.array(quats, dtype=np.int64)
        self._free = tuple(free)  # (q index, v index) of each free joint

    def q_from_qpos(self, qpos: ArrayLike) -> np.ndarray:
        """sinews ``q`` (nq,) from MuJoCo's ``qpos`` (nq,) (quaternions reordered to
        ``(x, y, z, w)``)."""
        q = finite_vector(qpos, self.model.nq, "qpos").copy()
        for i in self._quats:
            q[i : i + 4] = np.roll(q[i : i + 4], -1)
        return q

    def qpos_from_q(self, q: ArrayLike) -> np.ndarray:
        """MuJoCo's ``qpos`` (nq,) from sinews ``q`` (nq,) (quaternions as ``(w, x, y, z)``)."""
        qpos = finite_vector(q, self.model.nq, "q").copy()
        for i in self._quats:
            qpos[i : i + 4] = np.roll(qpos[i : i + 4], 1)
        return qpos

    def _rotations(self, q):
        """``(v index, R)`` of each free joint at ``q`` (its quaternion normalised)."""
        q = finite_vector(q, self.model.nq, "q")
        out = []
        for iq, iv in self._free:
            quat = q[iq + 3 : iq + 7]
            s = float(np.abs(quat).max())
            if not s >= np.finfo(float).tiny:
                raise ValueError(f"q: the free joint's quaternion q[{iq + 3}:{iq + 7}] is zero")
            out.append((iv, _R(np.roll(quat / s, 1))))
        return out

    @staticmethod
    def _finite(out, names):
        if not np.all(np.isfinite(out)):
            raise_overflow(names)
        return out

    def v_from_qvel(self, q: ArrayLike, qvel: ArrayLike) -> np.ndarray:
        """sinews ``v`` (nv,) at configuration ``q`` (nq,) from MuJoCo's ``qvel`` (nv,)."""
        out = finite_vector(qvel, self.model.nv, "qvel").copy()
        for iv, R in self._rotations(q):
            lin, ang = out[iv : iv + 3].copy(), out[iv + 3 : iv + 6].copy()
            out[iv : iv + 3], out[iv + 3 : iv + 6] = ang, R.T @ lin
        return self._finite(out, ("q", "qvel"))

    def qvel_from_v(self, q: ArrayLike, v: ArrayLike) -> np.ndarray:
        """MuJoCo's ``qvel`` (nv,) from sinews ``v`` (nv,) at configuration ``q`` (nq,)."""
        out = finite_vector(v, self.model.nv, "v").copy()
        for iv, R in self._rotations(q):
            w, vb = out[iv : iv + 3].copy(), out[iv + 3 : iv + 6].copy()
            out[iv : iv + 3], out[iv + 3 : iv + 6] = R @ vb, w
        return self._finite(out, ("q", "v"))

    def qacc_from_a(self, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> np.ndarray:
        """MuJoCo's ``qacc`` (nv,) from sinews ``a`` (nv,) at ``q`` (nq,), ``v`` (nv,)
        (``qacc = T a + dT/dt v``)."""
        v = finite_vector(v, self.model.nv, "v")
        out = finite_vector(a, self.model.nv, "a").copy()
        for iv, R in self._rotations(q):
            aw, ab = out[iv : iv + 3].copy(), out[iv + 3 : iv + 6].copy()
            out[iv : iv + 3] = R @ (ab + np.cross(v[iv : iv + 3], v[iv + 3 : iv + 6]))
            out[iv + 3 : iv + 6] = aw
        return self._finite(out, ("q", "v", "a"))

    def a_from_qacc(self, q: ArrayLike, v: ArrayLike, qacc: ArrayLike) -> np.ndarray:
        """sinews ``a`` (nv,) from MuJoCo's ``qacc`` (nv,) at ``q`` (nq,) and the sinews
        velocity ``v`` (nv,)."""
        v = finite_vector(v, self.model.nv, "v")
        out = finite_vector(qacc, self.model.nv, "qacc").copy()
        for iv, R in self._rotations(q):
            lin, ang = out[iv : iv + 3].copy(), out[iv + 3 : iv + 6].copy()
            out[iv : iv + 3] = ang
            out[iv + 3 : iv + 6] = R.T @ lin - np.cross(v[iv : iv + 3], v[iv + 3 : iv + 6])
        return self._finite(out, ("q", "v", "qacc"))

    def force_from_qfrc(self, q: ArrayLike, qfrc: ArrayLike) -> np.ndarray:
        """A sinews generalized force ``tau`` (nv,) from a MuJoCo one (``qfrc_*``, (nv,)) at
        ``q`` (nq,): ``T^T f``."""
        out = finite_vector(qfrc, self.model.nv, "qfrc").copy()
        for iv, R in self._rotations(q):
            lin, ang = out[iv : iv + 3].copy(), out[iv + 3 : iv + 6].copy()
            out[iv : iv + 3], out[iv + 3 : iv + 6] = ang, R.T @ lin
        return self._finite(out, ("q", "qfrc"))

    def T(self, q: ArrayLike) -> np.ndarray:
        """The matrix ``T(q)`` (nv, nv) at ``q`` (nq,), with ``qvel = T v``."""
        nv = self.model.nv
        T = np.eye(nv)
        for iv, R in self._rotations(q):
            T[iv : iv + 6, iv : iv + 6] = 0.0
            T[iv : iv + 3, iv + 3 : iv + 6] = R
            T[iv + 3 : iv + 6, iv : iv + 3] = np.eye(3)
        return T

    def matrix_from_mj(self, q: ArrayLike, M_mj: ArrayLike) -> np.ndarray:
        """The sinews mass matrix (nv, nv) at ``q`` (nq,) from MuJoCo's (``mj_fullM``, (nv, nv)):
        ``T^T M_mj T``."""
        nv = self.model.nv
        M_mj = real_array(M_mj, "M_mj", shape=(nv, nv))
        T = self.T(q)
        with np.errstate(all="ignore"):
            return self._finite(T.T @ M_mj @ T, ("q", "M_mj"))
