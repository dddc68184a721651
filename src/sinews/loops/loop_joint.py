r"""Loop closures by joint type: a frame pair plus the joint allowed across the cut.

A :class:`LoopJoint` (Karana's ``LoopConstraintCutJoint``; ``LoopConstraintConVel`` for the
constant-velocity joint) joins a **source** frame ``X_source`` fixed on body ``source`` and a
**target** frame ``X_target`` fixed on body ``target`` (or the world).  The relative
configuration across the cut is ``R = R_s^T R_t``, ``p = R_s^T (o_t - o_s)`` (target in source
coordinates), the relative velocity ``V_rel = [R_s^T (w_t - w_s); R_s^T (v_t(o_t) - v_s(o_t))]``
(source-frame derivative, source axes, at the target origin; ``v_s(o_t)`` is the velocity of
the source-body point at ``o_t``).  The cut joint allows ``V_rel = H u`` (``H``: its motion map,
source axes, 6 x n_h) and removes the ``n_c = 6 - n_h`` other directions.

Joint types (axes of the **source frame**, the target frame coinciding with it at closure):

| type | n_c | allowed motion | rows (phi = 0) |
|---|---|---|---|
| pin | 5 | rotation about z | p_x, p_y, p_z, x_s.z_t, y_s.z_t |
| slider | 5 | translation along z | p_x, p_y, x_s.z_t, y_s.z_t, tw |
| cylindrical | 4 | rotation about and translation along z | p_x, p_y, x_s.z_t, y_s.z_t |
| universal | 4 | rotations about x_s and y_t (Hooke) | p_x, p_y, p_z, x_s.y_t |
| ball | 3 | any rotation | p_x, p_y, p_z |
| planar | 3 | rotation about z, translation in x, y | p_z, x_s.z_t, y_s.z_t |
| locked | 6 | none (weld) | p_x, p_y, p_z, x_s.z_t, y_s.z_t, tw |
| screw | 5 | rotation about z with p_z = pitch * angle | p_x, p_y, x_s.z_t, y_s.z_t, p_z - pitch * angle |
| constant_velocity | 4 | rotations without twist (bend only) | p_x, p_y, p_z, tw |

(``a_s.b_t`` = dot product of the source axis a and the target axis b, in world axes;
``tw = (y_s.x_t - x_s.y_t)/2``, the twist of R about z: zero for a rotation about an axis of the
xy-plane, which is what makes the constant-velocity joint transmit equal shaft speeds.)

Every row is one of three kinds, each with its world spatial direction ``D_i = [n_i; d_i]``
evaluated at the target origin, so that ``G_i = D_i (J6_t(o_t) - J6_s(o_t))``:

* translation ``phi = d.(o_t - o_s)`` with ``d = R_s e_k`` (turns with the source):
  ``G v = d phi/dt`` exactly; ``gamma = -d.Da - 2 (w_s x d).Dv``;
* rotation ``phi = sum_k c_k a_k.b_k`` (``a_k`` a source axis, ``b_k`` a target axis): with
  ``n = sum_k c_k b_k x a_k``, ``d phi/dt = n.(w_t - w_s)`` exactly, and
  ``gamma = -n.Dalpha - ndot.(w_t - w_s)``, ``ndot = sum_k c_k [(w_t x b_k) x a_k + b_k x (w_s x a_k)]``:
  the direction moves with *both* frames (universal and constant-velocity joints);
* screw ``phi = p_z - pitch * angle`` (nearest branch, angle of R about z): ``D = [-pitch z_s;
  z_s]``, gamma as for a direction turning with the source (``G v = d phi/dt`` on the manifold).

``Da = a_t(o_t) - a_s(o_t)``, ``Dalpha``: velocity-product accelerations (``qdd = 0``).  The
multipliers are the physical constraint forces: ``w = D^T lambda`` acts on the target at
``o_t``, ``-w`` on the source at the same point.

The constraint matrices (:meth:`LoopJoint.qmats`, Karana's ``QMats``): ``rel_Q V_rel = G v``
with ``rel_Q = [R_s^T n; R_s^T d]`` per row, and ``[source_Q, target_Q] [V_source; V_target] =
G v`` with ``V_x = [w_x; v_x(o_x)]`` in the axes of frame x:
``target_Q = [R_t^T n; R_t^T d]``, ``source_Q = -[R_s^T (n + r x d); R_s^T d]``,
``r = o_t - o_s``.

Cut-joint coordinates (:meth:`LoopJoint.cut_state`): pin/screw ``angle``; slider ``z``;
cylindrical ``(angle, z)``; universal ``(a1, a2)`` with ``R = Rx(a1) Ry(a2)``; ball the unit
quaternion ``(x, y, z, w)`` of R (velocity: the relative angular velocity in target axes, as a
spherical joint); planar ``(x, y, angle)``; constant velocity ``(phi_x, phi_y)`` of the rotation
vector ``log R``; locked none.  Velocities ``u = H^+ V_rel``.  Cut-joint forces ``tau_c``
(springs, dampers, motors on those coordinates, :meth:`LoopJoint.set_cut_force`) act as the
wrench ``F = H (H^T H)^-1 tau_c`` (source axes, at ``o_t``) on the target and ``-F`` on the
source (Karana's ``spExternalForceFromT``); ``H^T F = tau_c`` so their power is ``tau_c . u``.

Sources: Karana kdFlex ``LoopConstraintBase``/``LoopConstraintCutJoint``/``QMats``
(``shared/reference/simbody_karana.md`` B1-B2); Featherstone RBDA section 8.1 (loop constraint
rows ``T^T (v_s - v_p)``), Wittenburg, *Dynamics of Multibody Systems* (2008) section 5.2 (the
Hooke joint's single orthogonality condition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import finite_vector, real_scalar
from ..constraints._kinematics import ConstraintKinematics
from ..constraints.constraint import Constraint, WrenchEntry, _check_body, _real_scalar, loop_gamma
from ..spatial import Transform, _left_jacobian_so3, log_so3, matrix_to_quat
from ..spatial import as_transform as _as_transform

if TYPE_CHECKING:
    from ..model import Data, Model, TransformLike

__all__ = ["LoopJoint", "ConstraintNode", "QMats", "CutJointState", "JOINT_TYPES", "joint_type_name"]

JOINT_TYPES = ("pin", "slider", "cylindrical", "universal", "ball", "planar", "locked", "screw",
               "constant_velocity")
_ALIASES = {"revolute": "pin", "prismatic": "slider", "hooke": "universal", "spherical": "ball",
            "weld": "locked", "fixed": "locked", "helical": "screw", "cv": "constant_velocity",
            "convel": "constant_velocity"}
#: joint types whose joint axis is the z axis of the frames (``axis=`` re-orients it)
_AXIAL = ("pin", "slider", "cylindrical", "planar", "screw", "constant_velocity")

# rotation rows: terms (c, i, j) of phi = sum c (R_s e_i).(R_t e_j)
_XZ = ((1.0, 0, 2),)
_YZ = ((1.0, 1, 2),)
_XY = ((1.0, 0, 1),)
_TW = ((0.5, 1, 0), (-0.5, 0, 1))
_ROWS = {
    "pin": [("T", 0), ("T", 1), ("T", 2), ("R", _XZ), ("R", _YZ)],
    "slider": [("T", 0), ("T", 1), ("R", _XZ), ("R", _YZ), ("R", _TW)],
    "cylindrical": [("T", 0), ("T", 1), ("R", _XZ), ("R", _YZ)],
    "universal": [("T", 0), ("T", 1), ("T", 2), ("R", _XY)],
    "ball": [("T", 0), ("T", 1), ("T", 2)],
    "planar": [("T", 2), ("R", _XZ), ("R", _YZ)],
    "locked": [("T", 0), ("T", 1), ("T", 2), ("R", _XZ), ("R", _YZ), ("R", _TW)],
    "screw": [("T", 0), ("T", 1), ("R", _XZ), ("R", _YZ), ("S", None)],
    "constant_velocity": [("T", 0), ("T", 1), ("T", 2), ("R", _TW)],
}
_NH = {"pin": 1, "slider": 1, "cylindrical": 2, "universal": 2, "ball": 3, "planar": 3, "locked": 0,
       "screw": 1, "constant_velocity": 2}
_COORD_NAMES = {"pin": ("angle",), "slider": ("z",), "cylindrical": ("angle", "z"), "universal": ("a1", "a2"),
                "ball": ("qx", "qy", "qz", "qw"), "planar": ("x", "y", "angle"), "locked": (),
                "screw": ("angle",), "constant_velocity": ("phi_x", "phi_y")}


def joint_type_name(joint_type: int | str) -> str:
    """The canonical name of a cut-joint type (aliases: revolute, prismatic, hooke, spherical,
    weld/fixed, helical, cv/convel); ``ValueError`` naming ``joint_type`` otherwise."""
    if isinstance(joint_type, str):
        t = joint_type.strip().lower().replace("-", "_").replace(" ", "_")
        t = _ALIASES.get(t, t)
        if t in JOINT_TYPES:
            return t
    raise ValueError(f"joint_type must be one of {JOINT_TYPES} (or an alias: {sorted(_ALIASES)}), got {joint_type!r}")


def _z_to(axis) -> np.ndarray:
    """A rotation taking e_z onto the unit ``axis``."""
    a = finite_vector(axis, 3, "axis")
    big = float(np.abs(a).max())
    if not big > 0.0:
        raise ValueError("axis must be a non-zero 3-vector")
    a = a / big  # no overflow in the norm of huge entries
    a = a / float(np.linalg.norm(a))
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ a)
    if c > 1.0 - 1e-15:
        return np.eye(3)
    if c < -1.0 + 1e-15:
        return np.diag([1.0, -1.0, -1.0])
    k = np.cross(z, a)
    s = np.linalg.norm(k)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]]) / s
    return np.eye(3) + s * K + (1.0 - c) * K @ K


@dataclass(frozen=True)
class QMats:
    """Constraint matrices of a loop at one configuration (Karana's ``QMats``), ``n_c`` rows:
    ``[source_Q, target_Q] [V_source; V_target] = G v`` and ``rel_Q V_rel = G v`` (see
    :mod:`sinews.loops.loop_joint`)."""

    source_Q: np.ndarray
    target_Q: np.ndarray
    rel_Q: np.ndarray


@dataclass(frozen=True)
class CutJointState:
    """The cut joint's own coordinates at one state: ``q`` (named ``names``), ``u`` (``None``
    without velocities), the relative pose ``R``, ``p`` and velocity ``V_rel`` (source axes, at
    the target origin; ``None`` without velocities), and the motion map ``H`` (6 x n_h)."""

    joint_type: str
    names: tuple
    q: np.ndarray
    u: np.ndarray | None
    R: np.ndarray
    p: np.ndarray
    V_rel: np.ndarray | None
    H: np.ndarray


class ConstraintNode:
    """One end of a loop (Karana's ``ConstraintNode``): ``body`` (id once bound), the frame
    ``X_body_node`` on it, ``role`` (``"source"`` or ``"target"``), ``loop``, ``name``.  Its
    reaction wrench after a dynamics call: :func:`sinews.loops.node_wrenches`."""

    def __init__(self, loop: LoopJoint, role: str, body: int, X_body_node: Transform) -> None:
        self.loop = loop
        self.role = role
        self.body = body
        self.X_body_node = X_body_node

    @property
    def name(self) -> str:
        return f"{self.loop.label}/{self.role}"

    def __repr__(self) -> str:
        return f"<ConstraintNode {self.name!r} body={self.body!r}>"


class LoopJoint(Constraint):
    """A loop closed by a cut joint of type ``joint_type`` between frame ``X_source`` on
    ``source`` and frame ``X_target`` on ``target`` (body ids or names; the target may be the
    world, 0).

    ``axis``: for the axial types (pin, slider, cylindrical, planar normal, screw, constant
    velocity shaft) the joint axis in source-frame coordinates (default z); both frames are then
    turned so that their z axes lie along it (the frames coincide at closure).  ``pitch``: the
    screw's advance per radian (m/rad).  Baumgarte settings as for every group.  Add it with
    :meth:`ConstraintSet.add_loop_joint` or ``cs.add_custom_constraint(loop)``.
    """

    type = "loop_joint"

    def __init__(self, source: int | str, target: int | str | None, joint_type: str,
                 X_source: TransformLike | None = None, X_target: TransformLike | None = None, *,
                 axis: ArrayLike | None = None, pitch: float = 0.0, name: str | None = None,
                 id: int | None = None, baumgarte: bool = False, time_constant: float = 0.1) -> None:
        super().__init__(name, id, baumgarte, time_constant)
        self.joint_type = joint_type_name(joint_type)
        self.source = _check_body(source, "source")
        self.target = _check_body(target, "target")
        if self.source == self.target:
            raise ValueError(f"source and target are the same body ({source!r}): a loop joins two bodies")
        Xs = _as_transform(X_source, "X_source")
        Xt = _as_transform(X_target, "X_target")
        if axis is not None:
            if self.joint_type not in _AXIAL:
                raise ValueError(f"axis is not used by a {self.joint_type} loop (orient X_source and X_target "
                                 "instead)")
            Ra = Transform(_z_to(axis), np.zeros(3))
            Xs, Xt = Xs @ Ra, Xt @ Ra
        self.X_source, self.X_target = Xs, Xt
        pitch = _real_scalar(pitch, "pitch")
        if not math.isfinite(pitch):
            raise ValueError(f"pitch must be finite, got {pitch}")
        if pitch != 0.0 and self.joint_type != "screw":
            raise ValueError(f"pitch is only used by a screw loop, not {self.joint_type}")
        self.pitch = pitch
        self._rows = _ROWS[self.joint_type]
        self.source_node = ConstraintNode(self, "source", self.source, Xs)
        self._target_node = ConstraintNode(self, "target", self.target, Xt)
        self._src = self._tgt = None
        self._stiffness = self._damping = self._rest = self._motor = None

    @property
    def size(self) -> int:
        return len(self._rows)

    def _after_copy(self) -> None:
        """A copy (``ConstraintSet.copy``) gets its own nodes and is unbound."""
        self.source_node = ConstraintNode(self, "source", self.source, self.X_source)
        self._target_node = ConstraintNode(self, "target", self.target, self.X_target)
        self._src = self._tgt = None

    @property
    def target_node(self) -> ConstraintNode | None:
        """The target :class:`ConstraintNode`, ``None`` when the target is the world (as in
        Karana: the inertial frame is no body)."""
        return None if self._tgt == 0 or self.target in (0, "world") else self._target_node

    @property
    def nodes(self) -> tuple:
        """The nodes on bodies: ``(source_node, target_node)`` or ``(source_node,)``."""
        t = self.target_node
        return (self.source_node,) if t is None else (self.source_node, t)

    @property
    def dof(self) -> int:
        """Degrees of freedom of the cut joint (``6 - size``)."""
        return _NH[self.joint_type]

    def constrains_q(self) -> bool:
        """True: every cut-joint loop constrains the configuration (phi(q) = 0), not only the
        velocities."""
        return True

    def has_hinge(self) -> bool:
        """True for the cut-joint loops (a joint with its own coordinates across the cut);
        False for the constant-velocity joint (Karana's ``LoopConstraintConVel``), whose
        coordinates (the bend angles) are reported all the same."""
        return self.joint_type != "constant_velocity"

    def __repr__(self) -> str:
        return (f"<LoopJoint {self.joint_type} {self.source!r} -> {self.target!r} index={self.index} "
                f"name={self.name!r} rows={self.row_start}:{self.row_start + self.size}>")

    # ------------------------------------------------------------------ binding
    def bind(self, model: Model) -> None:
        self._src = model._resolve_body(self.source, "source")
        self._tgt = model._resolve_body(self.target, "target")
        if self._src == self._tgt:
            raise ValueError(f"loop {self.label!r}: source and target are the same body "
                             f"({model.bodies[self._src].name!r}); a loop joins two bodies")
        c = model.compiled
        if c.link_of_body[self._src] == c.link_of_body[self._tgt]:
            raise ValueError(f"loop {self.label!r}: source {model.bodies[self._src].name!r} and target "
                             f"{model.bodies[self._tgt].name!r} are welded together (fixed joints): the loop "
                             "constrains nothing")
        self.source_node.body = self._src
        self._target_node.body = self._tgt

    def _bound(self):
        if self._src is None:
            raise RuntimeError(f"loop {self.label!r} is not bound: add it to a ConstraintSet and bind it to a model")

    def row_spec(self) -> list:
        """The rows as data for compiled kernels: ``("T", k)`` (translation along source axis
        k), ``("R", ((c, i, j), ...))`` (``phi = sum c (R_s e_i).(R_t e_j)``), ``("S", pitch)``
        (screw row); see the module docstring for G, gamma and phi of each kind."""
        return [(kind, self.pitch if kind == "S" else spec) for kind, spec in self._rows]

    def compiled_loop_rows(self) -> dict | None:
        """``None``, or (after bind, for loops whose rows are all translations: the ball joint)
        the rows as an RBDL-style :class:`~sinews.constraints.LoopConstraint` with
        predecessor = source and successor = target (identical G, gamma and phi)."""
        if self._src is None or any(kind != "T" for kind, _ in self._rows):
            return None
        axes = np.zeros((self.size, 6))
        for r, (_, k) in enumerate(self._rows):
            axes[r, 3 + k] = 1.0
        return {"predecessor": self._src, "successor": self._tgt, "X_predecessor": self.X_source,
                "X_successor": self.X_target, "axes": axes, "positional": np.ones(self.size, dtype=bool)}

    # ------------------------------------------------------------------ geometry
    def frames(self, kin: ConstraintKinematics) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """World poses ``(R_s, o_s, R_t, o_t)`` of the source and target frames."""
        R_s, o_s = kin.frame_pose(self._src, self.X_source.R, self.X_source.p)
        R_t, o_t = kin.frame_pose(self._tgt, self.X_target.R, self.X_target.p)
        return R_s, o_s, R_t, o_t

    def world_directions(self, R_s: np.ndarray, R_t: np.ndarray) -> np.ndarray:
        """``(size, 6)`` world spatial directions ``D_i = [n_i; d_i]`` (at the target origin)."""
        D = np.zeros((self.size, 6))
        for r, (kind, spec) in enumerate(self._rows):
            if kind == "T":
                D[r, 3:] = R_s[:, spec]
            elif kind == "R":
                for c, i, j in spec:
                    D[r, :3] += c * np.cross(R_t[:, j], R_s[:, i])
            else:
                D[r, :3] = -self.pitch * R_s[:, 2]
                D[r, 3:] = R_s[:, 2]
        return D

    # ------------------------------------------------------------------ rows
    def jacobian(self, kin: ConstraintKinematics) -> np.ndarray:
        R_s, _, R_t, o_t = self.frames(kin)
        return self.world_directions(R_s, R_t) @ (kin.jacobian6(self._tgt, o_t) - kin.jacobian6(self._src, o_t))

    def velocity_error(self, kin: ConstraintKinematics) -> np.ndarray:
        R_s, _, R_t, o_t = self.frames(kin)
        return self.world_directions(R_s, R_t) @ (kin.velocity6(self._tgt, o_t) - kin.velocity6(self._src, o_t))

    def gamma(self, kin: ConstraintKinematics) -> np.ndarray:
        R_s, _, R_t, o_t = self.frames(kin)
        D = self.world_directions(R_s, R_t)
        out = loop_gamma(kin, self._src, self._tgt, o_t, D)  # right for directions turning with the source
        nuS, nuT = kin.velocity6(self._src, o_t), kin.velocity6(self._tgt, o_t)
        dw = nuT[:3] - nuS[:3]
        dal = kin.bias6(self._tgt, o_t)[:3] - kin.bias6(self._src, o_t)[:3]
        ws, wt = nuS[:3], nuT[:3]
        for r, (kind, spec) in enumerate(self._rows):
            if kind == "R":  # the direction moves with both frames
                ndot = np.zeros(3)
                for c, i, j in spec:
                    a, b = R_s[:, i], R_t[:, j]
                    ndot += c * (np.cross(np.cross(wt, b), a) + np.cross(b, np.cross(ws, a)))
                out[r] = -(D[r, :3] @ dal) - ndot @ dw
        return out

    def position_error(self, kin: ConstraintKinematics) -> np.ndarray:
        R_s, o_s, R_t, o_t = self.frames(kin)
        r = o_t - o_s
        phi = np.empty(self.size)
        for k, (kind, spec) in enumerate(self._rows):
            if kind == "T":
                phi[k] = R_s[:, spec] @ r
            elif kind == "R":
                phi[k] = sum(c * (R_s[:, i] @ R_t[:, j]) for c, i, j in spec)
            else:
                R = R_s.T @ R_t
                e = R_s[:, 2] @ r - self.pitch * math.atan2(R[1, 0], R[0, 0])
                period = 2.0 * math.pi * abs(self.pitch)
                phi[k] = e - period * round(e / period) if period > 0.0 else e
        return phi

    def wrench_entries(self, kin: ConstraintKinematics, multipliers: ArrayLike) -> list[WrenchEntry]:
        R_s, _, R_t, o_t = self.frames(kin)
        w = self.world_directions(R_s, R_t).T @ np.asarray(multipliers, float)
        return [WrenchEntry(self._src, R_s, o_t.copy(), -w), WrenchEntry(self._tgt, R_t, o_t, w)]

    # ------------------------------------------------------------------ Karana's view
    def _kin(self, model, q, v=None, data=None):
        self._bound()
        if self.set is not None and self.set.model is not model:
            raise ValueError("model is not the model this loop's ConstraintSet is bound to")
        return ConstraintKinematics(model, q, v, data)

    def qmats(self, model: Model, q: ArrayLike, data: Data | None = None) -> QMats:
        """``source_Q``, ``target_Q``, ``rel_Q`` at configuration ``q (nq,)`` (see the module
        docstring)."""
        kin = self._kin(model, q, None, data)
        R_s, o_s, R_t, o_t = self.frames(kin)
        D = self.world_directions(R_s, R_t)
        n, d = D[:, :3], D[:, 3:]
        r = o_t - o_s
        rel = np.hstack([n @ R_s, d @ R_s])
        tgt = np.hstack([n @ R_t, d @ R_t])
        src = -np.hstack([(n + np.cross(r, d)) @ R_s, d @ R_s])
        return QMats(src, tgt, rel)

    def motion_map(self, R: np.ndarray) -> np.ndarray:
        """The cut joint's motion map ``H`` (6 x n_h, source axes, at the target origin) at the
        relative rotation ``R``."""
        t = self.joint_type
        H = np.zeros((6, _NH[t]))
        ez = np.array([0.0, 0.0, 1.0])
        if t in ("pin", "screw"):
            H[:3, 0] = ez
            H[3:, 0] = self.pitch * ez
        elif t == "slider":
            H[5, 0] = 1.0
        elif t == "cylindrical":
            H[2, 0] = H[5, 1] = 1.0
        elif t == "universal":
            H[0, 0] = 1.0
            H[:3, 1] = R[:, 1]
        elif t == "ball":
            H[:3, :] = R
        elif t == "planar":
            H[3, 0] = H[4, 1] = H[2, 2] = 1.0
        elif t == "constant_velocity":
            H[:3, :] = _left_jacobian_so3(log_so3(R))[:, :2]
        return H

    def _coordinates(self, R, p):
        t = self.joint_type
        ang = math.atan2(R[1, 0], R[0, 0])
        if t in ("pin", "screw"):
            return np.array([ang])
        if t == "slider":
            return np.array([p[2]])
        if t == "cylindrical":
            return np.array([ang, p[2]])
        if t == "universal":
            return np.array([math.atan2(R[2, 1], R[1, 1]), math.atan2(R[0, 2], R[0, 0])])
        if t == "ball":
            return matrix_to_quat(R)
        if t == "planar":
            return np.array([p[0], p[1], ang])
        if t == "constant_velocity":
            return log_so3(R)[:2]
        return np.zeros(0)

    def _relative(self, kin, with_v):
        R_s, o_s, R_t, o_t = self.frames(kin)
        R, p = R_s.T @ R_t, R_s.T @ (o_t - o_s)
        V = None
        if with_v:
            dnu = kin.velocity6(self._tgt, o_t) - kin.velocity6(self._src, o_t)
            V = np.concatenate([R_s.T @ dnu[:3], R_s.T @ dnu[3:]])
        return R, p, V

    def cut_state(self, model: Model, q: ArrayLike, v: ArrayLike | None = None,
                  data: Data | None = None) -> CutJointState:
        """The cut joint's coordinates (and velocities when ``v`` is given) at ``q (nq,)``,
        ``v (nv,)``."""
        kin = self._kin(model, q, v, data)
        R, p, V = self._relative(kin, v is not None)
        H = self.motion_map(R)
        u = None if V is None else (np.linalg.pinv(H) @ V if H.shape[1] else np.zeros(0))
        return CutJointState(self.joint_type, _COORD_NAMES[self.joint_type], self._coordinates(R, p), u, R, p, V, H)

    # ------------------------------------------------------------------ cut-joint forces
    def set_cut_force(self, stiffness: float | ArrayLike | None = None,
                      damping: float | ArrayLike | None = None, rest: float | ArrayLike | None = None,
                      motor: float | ArrayLike | None = None) -> None:
        """Forces on the cut joint's own coordinates, ``tau_c = -K (q_c - rest) - C u_c + motor``:
        ``stiffness`` K, ``damping`` C (scalars or one per coordinate of ``u_c``), ``rest``
        (default 0; ball and constant-velocity joints: the spring acts on the rotation vector,
        rest is not accepted), ``motor``: a constant vector (one per coordinate) or a callable
        ``motor(state: CutJointState) -> array``.  ``None`` leaves a term off; all ``None``
        removes the forces.  They enter :func:`sinews.loops.cut_joint_forces` and
        :func:`sinews.simulate`."""
        nh = self.dof
        if nh == 0 and any(x is not None for x in (stiffness, damping, rest, motor)):
            raise ValueError("a locked loop has no coordinates to carry forces")

        def vec(x, name):
            if x is None:
                return None
            if np.ndim(x) == 0:
                a = real_scalar(x, name)
                if not math.isfinite(a):
                    raise ValueError(f"{name} must be finite, got {a}")
                return np.full(nh, a)
            return finite_vector(x, nh, name).copy()

        if rest is not None and self.joint_type in ("ball", "constant_velocity"):
            raise ValueError(f"rest is not accepted by a {self.joint_type} loop (its spring acts on the rotation vector)")
        self._stiffness, self._damping, self._rest = vec(stiffness, "stiffness"), vec(damping, "damping"), vec(rest, "rest")
        if motor is not None and not callable(motor):
            motor = vec(motor, "motor")
        self._motor = motor

    @property
    def has_cut_force(self) -> bool:
        return any(x is not None for x in (self._stiffness, self._damping, self._motor))

    def _deviation(self, state):
        if self.joint_type == "ball":
            return log_so3(state.R)  # = R^T log R: target axes as the velocity
        if self.joint_type == "constant_velocity":
            return state.q
        dq = state.q.copy()
        return dq if self._rest is None else dq - self._rest

    def cut_force(self, state: CutJointState) -> np.ndarray:
        """``tau_c`` (one per cut-joint velocity coordinate) at a :class:`CutJointState`."""
        tau = np.zeros(self.dof)
        if self._stiffness is not None:
            tau -= self._stiffness * self._deviation(state)
        if self._damping is not None:
            if state.u is None:
                raise ValueError("the damper needs velocities: give v")
            tau -= self._damping * state.u
        if self._motor is not None:
            tau += (finite_vector(self._motor(state), self.dof, "motor(state)") if callable(self._motor)
                    else self._motor)
        return tau

    def cut_spring_energy(self, model: Model, q: ArrayLike, data: Data | None = None) -> float:
        """Potential energy ``1/2 K (q_c - rest)^2`` stored in the cut-joint spring at ``q (nq,)``."""
        if self._stiffness is None:
            return 0.0
        dev = self._deviation(self.cut_state(model, q, None, data))
        return 0.5 * float(self._stiffness @ (dev * dev))

    def cut_force_wrenches(self, model: Model, q: ArrayLike, tau_cut: ArrayLike,
                           data: Data | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The wrenches ``(W_source, W_target)`` (world axes, ``[moment about o_t; force]``) that
        the cut-joint force ``tau_cut`` applies to the two bodies at ``q (nq,)`` (equal and
        opposite; Karana's ``spExternalForceFromT``)."""
        kin = self._kin(model, q, None, data)
        return self._cut_wrench(kin, tau_cut)[1:]

    def _cut_wrench(self, kin, tau_cut):
        R_s, _, R_t, o_t = self.frames(kin)
        H = self.motion_map(R_s.T @ R_t)
        tau = finite_vector(tau_cut, H.shape[1], "tau_cut")
        if H.shape[1] == 0:
            return o_t, np.zeros(6), np.zeros(6)
        F = H @ np.linalg.solve(H.T @ H, tau)
        Fw = np.concatenate([R_s @ F[:3], R_s @ F[3:]])
        return o_t, -Fw, Fw

    def cut_force_generalized(self, model: Model, q: ArrayLike, tau_cut: ArrayLike,
                              data: Data | None = None) -> np.ndarray:
        """The generalised force ``(nv,)`` of the cut-joint force ``tau_cut`` at ``q (nq,)``:
        ``(J6_t(o_t) - J6_s(o_t))^T F_world``."""
        kin = self._kin(model, q, None, data)
        return self._generalized(kin, tau_cut)

    def _generalized(self, kin, tau_cut):
        o_t, _, Fw = self._cut_wrench(kin, tau_cut)
        return (kin.jacobian6(self._tgt, o_t) - kin.jacobian6(self._src, o_t)).T @ Fw
