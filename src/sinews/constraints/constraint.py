"""The constraint *group* classes: the base class (also for custom constraints), point contacts
and loop closures.

A group is one :class:`Constraint` object of a :class:`~sinews.constraints.ConstraintSet`; it
owns ``size`` consecutive *rows* (scalar equations) of the system.  For a group with rows ``g``
at state ``(q, v)`` the set asks it for

* ``jacobian(kin)``: ``G_g`` (size x nv), the velocity-level constraint is ``G_g v = 0``;
* ``gamma(kin)``: ``gamma_g = -dG_g/dt v``, so that ``G_g qdd = gamma_g`` is the exact time
  derivative of ``G_g v = 0`` (Baumgarte terms are added by the set, not here);
* ``position_error(kin)`` (phi), ``velocity_error(kin)`` (default ``G_g v``);
* ``wrench_entries(kin, multipliers)``: the wrenches the group's multipliers apply to each body
  involved.  They must satisfy ``sum_e J6(body_e, x_e)^T w_e = G_g^T multipliers`` exactly
  (``J6`` = 6-D point Jacobian ``[omega; v_point]`` at the application point ``x_e``): this is
  what makes the wrenches the physical constraint forces, and it is what the Kokkevis method
  uses as test forces.

``kin`` is a :class:`~sinews.constraints._kinematics.ConstraintKinematics` (one tree pass per
state, shared by all groups).  Sources: RBDL ``Constraint``, ``ContactConstraint`` and
``LoopConstraint`` (rbdl/rbdl 3.3.1), Featherstone RBDA section 8.

Sign convention: multipliers ``lambda`` enter ``H qdd + C = tau + G^T lambda``: they *are* the
physical constraint forces.  A contact multiplier ``lambda_i > 0`` pushes the body along
``+n_i``; a loop multiplier applies ``+lambda_i d_i`` to the successor and ``-lambda_i d_i`` to
the predecessor, ``d_i`` being the world-axes spatial axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import real_array
from ..spatial import Transform
from ..spatial import as_transform as _as_transform
from ._linalg import skew3

if TYPE_CHECKING:
    from ..model import Model, TransformLike
    from ._kinematics import ConstraintKinematics

__all__ = [
    "Constraint", "CustomConstraint", "ContactConstraint", "LoopConstraint", "WrenchEntry", "ConstraintWrenches",
]

_UNIT_TOL = 1e-9
_SAME_TOL = 100 * np.finfo(float).eps


@dataclass
class WrenchEntry:
    """A wrench applied by a constraint to one body (world axes).

    ``body``: body id (0 = world/ground); ``R_world_frame``, ``p_world_frame``: the frame where it
    acts (its origin is the application point, its axes are the natural local axes for the
    report); ``wrench``: ``[moment about p_world_frame; force]`` in world axes.
    """

    body: int
    R_world_frame: np.ndarray
    p_world_frame: np.ndarray
    wrench: np.ndarray


@dataclass
class ConstraintWrenches:
    """Per-body wrenches of one group: ``bodies`` (ids), ``frames`` (Transforms, see ``frame``),
    ``wrenches`` (k x 6, ``[moment; force]``), ``frame`` (``"local"`` or ``"world"``),
    ``group`` (the group object), ``kind`` (``"force"`` or ``"impulse"``)."""

    bodies: list
    frames: list
    wrenches: np.ndarray
    frame: str
    group: object
    kind: str

    def __len__(self):
        return len(self.bodies)

    def __iter__(self):
        return iter(zip(self.bodies, self.frames, self.wrenches))


class Constraint:
    """Base class of a constraint group; subclass it for custom constraints.

    A subclass sets ``size`` (number of rows) and implements :meth:`jacobian`, :meth:`gamma`,
    :meth:`position_error`, :meth:`wrench_entries`; :meth:`velocity_error` defaults to
    ``G v``, and :meth:`bind` (called once by ``ConstraintSet.bind``) may resolve body names
    with ``model._resolve_body(body, argname)``.  All quantities are per *row* of this group,
    in the order of its rows.  See ``docs/constraints.md`` and
    :class:`sinews.constraints.custom.PinJointConstraint` for a worked example.

    Attributes managed by the set: ``index`` (group index), ``row_start``, ``set``.  Attributes
    of the group: ``name``, ``id`` (user id), ``type``, ``baumgarte_enabled``,
    ``time_constant``.
    """

    type = "custom"
    size = 0

    def __init__(self, name: str | None = None, id: int | None = None, baumgarte: bool = False,
                 time_constant: float = 0.1) -> None:
        self.name = _check_name(name)
        self.id = _check_user_id(id)
        self._baumgarte_enabled = _check_flag(baumgarte, "baumgarte")
        self._time_constant = _check_time_constant(time_constant)
        self._gains = None  # (stiffness, damping) when given directly
        self.index = -1
        self.row_start = -1
        self.set = None

    @property
    def baumgarte_enabled(self) -> bool:
        """Whether Baumgarte stabilisation is on for this group."""
        return self._baumgarte_enabled

    @baumgarte_enabled.setter
    def baumgarte_enabled(self, value) -> None:
        self._baumgarte_enabled = _check_flag(value, "baumgarte_enabled")
        if self.set is not None:
            self.set.stabilisation_version += 1  # lets the compiled path cache its rows

    @property
    def time_constant(self) -> float:
        """Baumgarte time constant T (alpha = beta = 1/T)."""
        return self._time_constant

    @time_constant.setter
    def time_constant(self, value) -> None:
        self._time_constant = _check_time_constant(value)
        self._gains = None  # the time-constant form replaces gains given directly
        if self.set is not None:
            self.set.stabilisation_version += 1  # lets the compiled path cache its rows

    @property
    def baumgarte_gains(self) -> tuple[float, float]:
        """``(K, D)``: the stabilised acceleration constraint is ``G qdd = gamma - D phidot -
        K phi``.  From the time constant T: ``(1/T^2, 2/T)`` (critical damping); or as given to
        :meth:`set_baumgarte_gains`."""
        if getattr(self, "_gains", None) is not None:
            return self._gains
        a = 1.0 / self.time_constant
        return a * a, 2.0 * a

    def set_baumgarte_gains(self, stiffness: float, damping: float) -> None:
        """Baumgarte stabilisation as ``(stiffness K [1/s^2], damping D [1/s])``: ``G qdd =
        gamma - D phidot - K phi`` (finite, >= 0).  Does not switch stabilisation on (see
        ``baumgarte_enabled``); setting ``time_constant`` afterwards returns to that form."""
        K = _real_scalar(stiffness, "stiffness")
        D = _real_scalar(damping, "damping")
        for name, x in (("stiffness", K), ("damping", D)):
            if not (np.isfinite(x) and x >= 0.0):
                raise ValueError(f"{name} must be finite and >= 0, got {x}")
        self._gains = (K, D)
        if self.set is not None:
            self.set.stabilisation_version += 1

    # ------------------------------------------------------------------ bookkeeping
    @property
    def rows(self) -> slice:
        """Rows of this group in the system vectors (``G[g.rows]``, ``multipliers[g.rows]``)."""
        return slice(self.row_start, self.row_start + self.size)

    @property
    def baumgarte_coefficients(self) -> tuple[float, float]:
        """``(alpha, beta) = (1/T, 1/T)``; the stabilised equation is
        ``G qdd = gamma - 2 alpha phidot - beta^2 phi`` (with gains given directly:
        ``(D/2, sqrt(K))``)."""
        K, D = self.baumgarte_gains
        return 0.5 * D, float(np.sqrt(K))

    @property
    def label(self) -> str:
        return self.name if self.name is not None else f"{self.type}[{self.index}]"

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} index={self.index} name={self.name!r} id={self.id} "
            f"rows={self.row_start}:{self.row_start + self.size} baumgarte={self.baumgarte_enabled}>"
        )

    # ------------------------------------------------------------------ interface
    def bind(self, model: Model) -> None:
        """Resolve body names against ``model`` (KeyError naming the argument)."""

    def jacobian(self, kin: ConstraintKinematics) -> np.ndarray:
        raise NotImplementedError

    def gamma(self, kin: ConstraintKinematics) -> np.ndarray:
        raise NotImplementedError

    def position_error(self, kin: ConstraintKinematics) -> np.ndarray:
        raise NotImplementedError

    def velocity_error(self, kin: ConstraintKinematics) -> np.ndarray:
        return self.jacobian(kin) @ kin.v

    def wrench_entries(self, kin: ConstraintKinematics, multipliers: ArrayLike) -> list[WrenchEntry]:
        raise NotImplementedError


CustomConstraint = Constraint
"""Alias: the documented base class for user-defined constraints."""


def _check_name(name, argname="name"):
    """A group name: a string or None (ValueError naming the argument otherwise)."""
    if name is None or isinstance(name, str):
        return None if name is None else str(name)
    raise ValueError(f"{argname} must be a string or None, got {name!r}")


def _check_user_id(id, argname="id"):
    if id is None:
        return None
    if isinstance(id, (bool, np.bool_, np.timedelta64)) or not isinstance(id, (int, np.integer)):
        raise ValueError(f"{argname} must be an integer or None, got {id!r}")
    return int(id)


def _check_flag(value, name):
    """A boolean switch: True/False (or 0/1, NumPy booleans); anything else is a ValueError."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def _real_scalar(x, name) -> float:
    """``x`` as a float: a real number (int, float, NumPy real scalar or 0-d real array);
    complex values, booleans, strings and other objects are a ValueError naming ``name``."""
    if isinstance(x, (bool, np.bool_, str, bytes, np.timedelta64, np.datetime64)):
        raise ValueError(f"{name} must be a real number, got {x!r}")
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        return float(x)
    raise ValueError(f"{name} must be a real number, got {x!r}")


def _check_time_constant(T):
    T = _real_scalar(T, "time_constant")
    if not np.isfinite(T) or T <= 0:
        raise ValueError(f"time_constant must be positive and finite, got {T}")
    return T


def _check_body(body, name="body"):
    """A body reference before binding: a non-negative integer id or a name (ValueError
    otherwise; an unknown id or name is a KeyError at bind time)."""
    if isinstance(body, str):
        return body
    if isinstance(body, (int, np.integer)) and not isinstance(body, (bool, np.bool_, np.timedelta64)):
        if int(body) < 0:
            raise ValueError(f"{name} must be a body id >= 0 or a body name, got {body!r}")
        return int(body)
    raise ValueError(f"{name} must be a body id (integer) or a body name (string), got {body!r}")


def _check_point(x, name):
    """A finite real 3-vector (a copy, float64)."""
    return real_array(x, name, shape=(3,)).copy()


def _check_unit(x, n, name):
    a = real_array(x, name, finite=True)
    if a.ndim > 1 and a.size == n:  # a row or column vector
        a = a.reshape(-1)
    if a.shape != (n,):
        raise ValueError(f"{name} must be a finite real {n}-vector, got shape {a.shape}")
    nrm = float(np.linalg.norm(a))
    if not abs(nrm - 1.0) <= _UNIT_TOL:
        raise ValueError(f"{name} must have unit length, got norm {nrm:.17g}")
    return a.copy()


def _check_orthogonal(a, existing, name, what):
    for j, b in enumerate(existing):
        if abs(float(a @ b)) > _UNIT_TOL:
            raise ValueError(
                f"{name} {a.tolist()} is not orthogonal to {what} {j} {b.tolist()} of the same group"
            )


def _same_transform(A: Transform, B: Transform) -> bool:
    return bool(np.all(np.abs(A.R - B.R) <= _SAME_TOL) and np.all(np.abs(A.p - B.p) <= _SAME_TOL))


def _cross_rows(w, M):
    """Rows ``w x M[i]`` for a 3-vector w and an (m, 3) array."""
    return M @ skew3(w).T


# ====================================================================================== contact
class ContactConstraint(Constraint):
    """Point ``body_point`` of ``body`` has zero velocity along fixed world unit normals.

    Up to three mutually orthogonal normals per group.  Row i: ``G_i = n_i^T J_p`` with
    ``J_p`` the 3 x nv point Jacobian (world axes); ``gamma_i = -n_i . a_p(qdd = 0)``
    (classical point acceleration, includes omega x v).  Position error: 0 (there is no
    reference point on the ground; the contact only constrains motion, as in RBDL);
    velocity error ``n_i . v_p``.  Wrenches: the body receives ``f = sum_i n_i lambda_i`` at
    the contact point, the ground (body 0) receives ``-f``.
    """

    type = "contact"

    def __init__(self, body: int | str, body_point: ArrayLike, name: str | None = None, id: int | None = None) -> None:
        super().__init__(name, id)
        self.body = _check_body(body)
        self.body_point = _check_point(body_point, "body_point")
        self.normals: list[np.ndarray] = []
        self._body_id = None

    @property
    def size(self) -> int:
        return len(self.normals)

    def same_geometry(self, body: int | str, body_point: ArrayLike) -> bool:
        """Same body and body point (``body_point``: a checked float64 3-vector)."""
        return body == self.body and bool(np.all(np.abs(body_point - self.body_point) <= _SAME_TOL))

    def add_normal(self, world_normal: ArrayLike) -> None:
        n = _check_unit(world_normal, 3, "world_normal")
        if len(self.normals) >= 3:
            raise ValueError(f"contact group {self.label!r} already has 3 normals")
        _check_orthogonal(n, self.normals, "world_normal", "normal")
        self.normals.append(n)

    @property
    def normal_matrix(self) -> np.ndarray:
        """(size, 3) array of the world normals, one per row."""
        return np.array(self.normals).reshape(-1, 3)

    def bind(self, model: Model) -> None:
        self._body_id = model._resolve_body(self.body, "body")

    def _point(self, kin):
        R, p = kin.body_pose(self._body_id)
        return R, R @ self.body_point + p

    def jacobian(self, kin: ConstraintKinematics) -> np.ndarray:
        _, x = self._point(kin)
        return self.normal_matrix @ kin.jacobian6(self._body_id, x)[3:]

    def gamma(self, kin: ConstraintKinematics) -> np.ndarray:
        _, x = self._point(kin)
        return -(self.normal_matrix @ kin.bias6(self._body_id, x)[3:])

    def position_error(self, kin: ConstraintKinematics) -> np.ndarray:
        return np.zeros(self.size)

    def velocity_error(self, kin: ConstraintKinematics) -> np.ndarray:
        _, x = self._point(kin)
        return self.normal_matrix @ kin.velocity6(self._body_id, x)[3:]

    def wrench_entries(self, kin: ConstraintKinematics, multipliers: ArrayLike) -> list[WrenchEntry]:
        R, x = self._point(kin)
        f = self.normal_matrix.T @ np.asarray(multipliers, float)
        z = np.zeros(3)
        return [
            WrenchEntry(self._body_id, R, x, np.concatenate([z, f])),
            WrenchEntry(0, np.eye(3), x.copy(), np.concatenate([z, -f])),
        ]


# ====================================================================================== loop
class LoopConstraint(Constraint):
    """Frames ``X_predecessor`` on ``predecessor`` and ``X_successor`` on ``successor`` may
    move relative to each other only orthogonally to the given spatial axes.

    Each axis ``t = [t_w; t_v]`` (unit, mutually orthogonal within the group) is expressed in
    the *predecessor frame* P.  With ``R_P`` the world rotation of P, ``p`` and ``s`` the world
    origins of P and S, the world axis is ``d = [R_P t_w; R_P t_v]`` and

    * ``G_i = d_i^T (J6_S(s) - J6_P(s))``: 6-D point Jacobians ``[omega; v_point]`` of the
      successor point ``s`` and of the *predecessor-fixed point coinciding with s*.  Then the
      translation rows of ``G v`` are exactly ``d/dt phi`` (``phi_t = t_v . R_P^T (s - p)``,
      whose rate is ``d_v . (v_S(s) - v_P(s))``), at any state, also for sliders whose
      frames separate along a free axis;
    * ``gamma = -dG/dt v``: with ``u = v_S(s) - v_P(s)``, ``Dnu = nu_S(s) - nu_P(s)``,
      ``Da = a_S(s) - a_P(s)`` (``a = [alpha; a_point]`` at ``qdd = 0``, classical) and
      ``w = omega_P``:
      ``gamma_i = -d_i . Da - (w x d_w,i) . (omega_S - omega_P) - 2 (w x d_v,i) . u``
      (the factor 2: the axis turns with P *and* the point s slides over P);
    * ``phi_i = t_i . [e_r; e_t]`` with ``R_PS = R_P^T R_S``,
      ``e_r = 1/2 vee(R_PS - R_PS^T)`` (axis * sin(angle) of the P-to-S rotation, in P axes)
      and ``e_t = R_P^T (s - p)``.  The rotation rows of ``G v`` equal ``d/dt phi`` where
      the frames are aligned (``R_PS = I``), as when a loop is assembled;
    * wrenches: ``w = sum_i d_i lambda_i`` acts on the successor at ``s`` and ``-w`` on the
      predecessor at the same point ``s`` (= ``p`` when the loop is closed).

    Unlike RBDL, the rotational part of ``d`` carries no ``-p x t_w`` linear term: RBDL maps
    the axis with a spatial transform to the world origin and then dots it with *point*
    velocities, which couples rotation rows to translations (wrong for orientation-only
    constraints away from the origin; rbdl.md section 0.5), and the predecessor is evaluated at
    ``s`` (RBDL uses ``p``, so its ``G v`` is not ``d phi/dt`` once ``s != p``).  ``X_predecessor`` is the pose of
    frame P in the predecessor body (sinews convention ``X_a_b``: ``x_a = R x_b + p``), not
    RBDL's transposed reading (rbdl.md section 0.6).
    """

    type = "loop"

    def __init__(self, predecessor: int | str, successor: int | str, X_predecessor: TransformLike,
                 X_successor: TransformLike, name: str | None = None, id: int | None = None,
                 baumgarte: bool = False, time_constant: float = 0.1) -> None:
        super().__init__(name, id, baumgarte, time_constant)
        self.predecessor = _check_body(predecessor, "predecessor")
        self.successor = _check_body(successor, "successor")
        self.X_predecessor = _as_transform(X_predecessor, "X_predecessor")
        self.X_successor = _as_transform(X_successor, "X_successor")
        self.axes: list[np.ndarray] = []
        self._pred = self._succ = None

    @property
    def size(self) -> int:
        return len(self.axes)

    def same_geometry(self, predecessor: int | str, successor: int | str, X_predecessor: TransformLike,
                      X_successor: TransformLike) -> bool:
        """Same bodies and frames (the frames: Transforms)."""
        return (
            predecessor == self.predecessor
            and successor == self.successor
            and _same_transform(X_predecessor, self.X_predecessor)
            and _same_transform(X_successor, self.X_successor)
        )

    def add_axis(self, axis: ArrayLike | None) -> None:
        t = _check_unit(axis, 6, "axis")
        if len(self.axes) >= 6:
            raise ValueError(f"loop group {self.label!r} already has 6 axes")
        _check_orthogonal(t, self.axes, "axis", "axis")
        self.axes.append(t)

    @property
    def axis_matrix(self) -> np.ndarray:
        """(size, 6) array of the axes in the predecessor frame, one per row."""
        return np.array(self.axes).reshape(-1, 6)

    def bind(self, model: Model) -> None:
        self._pred = model._resolve_body(self.predecessor, "predecessor")
        self._succ = model._resolve_body(self.successor, "successor")
        if self._pred == self._succ:
            raise ValueError(
                f"loop group {self.label!r}: predecessor and successor are the same body "
                f"({model.bodies[self._pred].name!r}); a loop must connect two bodies"
            )

    def frames(self, kin: ConstraintKinematics) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """World poses of P and S: ``(R_P, p, R_S, s)``."""
        R_P, p = kin.frame_pose(self._pred, self.X_predecessor.R, self.X_predecessor.p)
        R_S, s = kin.frame_pose(self._succ, self.X_successor.R, self.X_successor.p)
        return R_P, p, R_S, s

    def world_axes(self, R_P: np.ndarray) -> np.ndarray:
        """(size, 6) world axes ``d_i = [R_P t_w; R_P t_v]``."""
        T = self.axis_matrix
        return np.hstack([T[:, :3] @ R_P.T, T[:, 3:] @ R_P.T])

    def jacobian(self, kin: ConstraintKinematics) -> np.ndarray:
        R_P, _, _, s = self.frames(kin)
        D = self.world_axes(R_P)
        return D @ (kin.jacobian6(self._succ, s) - kin.jacobian6(self._pred, s))

    def gamma(self, kin: ConstraintKinematics) -> np.ndarray:
        R_P, _, _, s = self.frames(kin)
        return loop_gamma(kin, self._pred, self._succ, s, self.world_axes(R_P))

    def position_error(self, kin: ConstraintKinematics) -> np.ndarray:
        R_P, p, R_S, s = self.frames(kin)
        R = R_P.T @ R_S
        e_r = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
        e_t = R_P.T @ (s - p)
        return self.axis_matrix @ np.concatenate([e_r, e_t])

    def velocity_error(self, kin: ConstraintKinematics) -> np.ndarray:
        R_P, _, _, s = self.frames(kin)
        return self.world_axes(R_P) @ (kin.velocity6(self._succ, s) - kin.velocity6(self._pred, s))

    def wrench_entries(self, kin: ConstraintKinematics, multipliers: ArrayLike) -> list[WrenchEntry]:
        R_P, _, R_S, s = self.frames(kin)
        w = self.world_axes(R_P).T @ np.asarray(multipliers, float)
        return [WrenchEntry(self._pred, R_P, s.copy(), -w), WrenchEntry(self._succ, R_S, s, w)]


def loop_gamma(kin: ConstraintKinematics, pred, succ, s, D):
    """``gamma = -dG/dt v`` of loop rows with world axes ``D`` (rows ``[d_w; d_v]`` turning with
    the predecessor), both bodies evaluated at the world point ``s`` (see ``LoopConstraint``)."""
    nuP = kin.velocity6(pred, s)
    dnu = kin.velocity6(succ, s) - nuP
    da = kin.bias6(succ, s) - kin.bias6(pred, s)
    w = nuP[:3]
    return -(D @ da) - _cross_rows(w, D[:, :3]) @ dnu[:3] - 2.0 * (_cross_rows(w, D[:, 3:]) @ dnu[3:])
