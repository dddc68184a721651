"""Batches: the core algorithms over arrays of states, one compiled parallel call each.

Every function takes the states as 2-D arrays, one state per row (``q``: ``(N, nq)``, each
row a configuration (nq,); ``v``, ``a``, ``tau``: ``(N, nv)``, each row (nv,)), runs the single-state kernel of the matching public function on
every row inside one compiled call, spread over the machine's cores (``numba.prange``), and
returns arrays with a leading axis of length ``N``:

==============================  ==============================  =============================
function                        result                          single-state equivalent
==============================  ==============================  =============================
:func:`rnea`                    ``(N, nv)``                     :func:`sinews.rnea`
:func:`aba`                     ``(N, nv)``                     :func:`sinews.aba`
:func:`crba`                    ``(N, nv, nv)``                 :func:`sinews.crba`
:func:`forward_kinematics`      :class:`BatchPlacements`        :func:`sinews.forward_kinematics`
:func:`point_jacobian`          ``(N, 3, nv)``                  :func:`sinews.point_jacobian`
:func:`point_jacobian_6d`       ``(N, 6, nv)``                  :func:`sinews.point_jacobian_6d`
:func:`body_jacobian`           ``(N, 6, nv)``                  :func:`sinews.body_jacobian`
:func:`frame_jacobian`          ``(N, 6, nv)``                  :func:`sinews.frame_jacobian`
:func:`center_of_mass`          ``(N, 3)``                      :func:`sinews.center_of_mass`
:func:`com_velocity`            ``(N, 3)``                      :func:`sinews.com_velocity`
:func:`com_jacobian`            ``(N, 3, nv)``                  :func:`sinews.com_jacobian`
:func:`forward_dynamics_contacts` :class:`BatchContactDynamics` ``forward_dynamics_constraints(..., "range_space_sparse")``
==============================  ==============================  =============================

Determinism: each state is computed by the same kernel as the single-state function, with its
own workspace, so the results are bit-identical to a loop of single-state calls and do not
depend on the number of threads (``numba.set_num_threads``).

Arguments are checked once per call (real numbers only, shapes); a state the kernel refuses
(NaN or infinity, a zero quaternion, an overflow, a singular articulated inertia) raises a
``ValueError`` naming the argument and the state, e.g. ``q[17] contains NaN or infinity``
(the first such state in row order).  The kernels compile lazily on the first call of each
function and are cached on disk.  Guide: ``docs/batch.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numba
import numpy as np
from numpy.typing import ArrayLike

from . import _batch_kernels as BK
from ._checks import (
    NOT_FINITE,
    ZERO_QUATERNION,
    NonFiniteResultError,
    overflow_message,
    raise_kernel_code,
    real_array,
    zero_quaternion_message,
)
from ._layout import PL_STRIDE, REF_LOCAL, REF_LOCAL_WORLD_ALIGNED, REF_WORLD
from .algorithms import check_model, get_data, link_forces
from .kinematics import Placements

if TYPE_CHECKING:
    from .constraints import ConstraintSet
    from .model import Model

__all__ = [
    "rnea",
    "aba",
    "crba",
    "forward_kinematics",
    "BatchPlacements",
    "point_jacobian",
    "point_jacobian_6d",
    "body_jacobian",
    "frame_jacobian",
    "center_of_mass",
    "com_velocity",
    "com_jacobian",
    "forward_dynamics_contacts",
    "BatchContactDynamics",
]

_NO_FORCES = np.zeros((1, 1, 6))  # placeholder link forces
_NO_FLOATS = np.zeros(1)


# ----------------------------------------------------------------------------------------------
# argument checking (once per call)


def _model(model):
    model = check_model(model)
    return model, model.compiled


def _states(q, c):
    """``q`` as an ``(N, nq)`` float64 array (NaN and infinity are left to the kernels, which
    name the state)."""
    return real_array(q, "q", shape=(None, c.nq), finite=False)


def _rows(x, name, n, width):
    return real_array(x, name, shape=(n, width), finite=False)


def _out(out, shape):
    """A caller-provided output array (written in place: no conversion)."""
    if out is None:
        return np.empty(shape)
    if not (type(out) is np.ndarray and out.dtype == np.float64 and out.shape == shape
            and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {shape}")
    return out


def _forces(model, c, f_ext, n):
    """``(FX, kernel flag, per-state wrenches or None)``: the link forces of one shared ``f_ext`` (an
    ``(nbodies, 6)`` array or a dict, as in :func:`sinews.rnea`) or of one ``f_ext[i]`` per
    state (an ``(N, nbodies, 6)`` array), converted exactly as the single-state functions do."""
    if f_ext is None:
        return _NO_FORCES, 0, None
    if not isinstance(f_ext, dict):
        a = real_array(f_ext, "f_ext", finite=False)
        if a.ndim == 3:
            return _state_forces(model, c, a, n), 1, a
        if a.ndim != 2:
            raise ValueError(
                f"f_ext must be an ({model.nbodies}, 6) array (the same wrenches for every state), "
                f"an (N, {model.nbodies}, 6) array (one set per state) or a dict {{body: wrench}}, "
                f"got shape {a.shape}"
            )
        f_ext = a
    F, flag = link_forces(model, get_data(model, None), f_ext)
    return F[None].copy(), flag, None


def _state_forces(model, c, F, n):
    """:func:`sinews.algorithms.link_forces` over ``(N, nbodies, 6)`` wrenches, vectorised
    over the states (the same operations per state: the same numbers)."""
    nb = model.nbodies
    if F.shape != (n, nb, 6):
        raise ValueError(f"f_ext must have shape ({n}, {nb}, 6) (one wrench per body and state, "
                         f"the world first), got {F.shape}")
    bad = ~np.isfinite(F).reshape(n, nb * 6).all(axis=1)
    if bad.any():
        raise ValueError(f"f_ext[{int(np.argmax(bad))}] contains NaN or infinity")
    world = (F[:, 0] != 0.0).any(axis=1)
    if world.any():
        raise ValueError(f"f_ext[{int(np.argmax(world))}][0] is the world and must be zero")
    R = c.X_link_body_R[1:]
    p = c.X_link_body_p[1:]
    f_lin = np.einsum("bij,nbj->nbi", R, F[:, 1:, 3:])
    n_ang = np.einsum("bij,nbj->nbi", R, F[:, 1:, :3]) + np.cross(p, f_lin)
    out = np.zeros((n, max(c.nlinks, 1), 6))
    links = c.link_of_body[1:]
    moving = links >= 0  # forces on bodies welded to the world act on the ground
    np.add.at(out, (slice(None), links[moving]), np.concatenate([n_ang, f_lin], axis=2)[:, moving])
    return out


def _threads() -> int:
    return numba.get_num_threads()


def _workspace(model):
    """The workspace copied into every chunk (the calling thread's default one: it holds the
    constant motion subspaces; everything else is written before it is read)."""
    return get_data(model, None).ws


def _raise_state(model, code, i, names):
    """The ``ValueError`` of a negative kernel code of state ``i``."""
    if code <= ZERO_QUATERNION:
        raise ValueError(zero_quaternion_message(model, ZERO_QUATERNION - code, f"{names[0]}[{i}]"))
    if code == NOT_FINITE:
        raise NonFiniteResultError(overflow_message([f"{n}[{i}]" for n in names]))
    if -len(names) <= code < 0:
        raise ValueError(f"{names[-code - 1]}[{i}] contains NaN or infinity")
    try:  # a code this module does not know (a newer kernel): the core's message, located
        raise_kernel_code(code, tuple(f"{n}[{i}]" for n in names), model)
    except (ValueError, IndexError) as exc:
        raise type(exc)(f"state {i}: {exc}") from None
    raise ValueError(f"state {i}: invalid input ({', '.join(names)}; kernel code {code})")


def _check_codes(model, codes, names, positive=None):
    """Raise for the first state (in row order) with a non-zero code; positive codes go to
    ``positive(i, code)``."""
    bad = np.flatnonzero(codes)
    if bad.size == 0:
        return
    i = int(bad[0])
    code = int(codes[i])
    if code > 0 and positive is not None:
        positive(i, code)
    _raise_state(model, code, i, names)


def _run(name, c, model, A, B, C, FX, OUT, iargs, fargs=_NO_FLOATS, ws=None, mi=None):
    return BK.run(name, A, B, C, FX, OUT, c.mi if mi is None else mi, c.mf,
                  _workspace(model) if ws is None else ws, np.asarray(iargs, dtype=np.int64), fargs,
                  _threads())


# ----------------------------------------------------------------------------------------------
# dynamics


def rnea(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, f_ext: ArrayLike | dict | None = None,
         out: np.ndarray | None = None) -> np.ndarray:
    """Inverse dynamics of every state: ``tau[i] = sinews.rnea(model, q[i], v[i], a[i], ...)``.

    ``q``: ``(N, nq)``; ``v``, ``a``: ``(N, nv)``.  ``f_ext``: ``None``; wrenches shared by all
    states (an ``(nbodies, 6)`` array or a dict ``{body: wrench}``, as in :func:`sinews.rnea`);
    or one set per state, an ``(N, nbodies, 6)`` array.  ``out``: optional preallocated
    ``(N, nv)`` result.  Returns ``(N, nv)``.
    """
    model, c = _model(model)
    Q = _states(q, c)
    n = Q.shape[0]
    V = _rows(v, "v", n, c.nv)
    A = _rows(a, "a", n, c.nv)
    FX, flag, per = _forces(model, c, f_ext, n)
    tau = _out(out, (n, c.nv))
    if c.nlinks and n:
        codes = _run("rnea", c, model, Q, V, A, FX, tau, (flag, per is not None))
        _check_codes(model, codes, ("q", "v", "a", "f_ext"))
    return tau


def aba(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | dict | None = None,
        out: np.ndarray | None = None) -> np.ndarray:
    """Forward dynamics of every state: ``qdd[i] = sinews.aba(model, q[i], v[i], tau[i], ...)``.

    Shapes and ``f_ext`` as in :func:`rnea`; ``out``: optional preallocated ``(N, nv)``
    result.  A state whose articulated inertia is singular (a massless subtree) raises
    ``ValueError`` naming the state and the body.
    """
    model, c = _model(model)
    Q = _states(q, c)
    n = Q.shape[0]
    V = _rows(v, "v", n, c.nv)
    T = _rows(tau, "tau", n, c.nv)
    FX, flag, per = _forces(model, c, f_ext, n)
    qdd = _out(out, (n, c.nv))
    if c.nlinks and n:
        codes = _run("aba", c, model, Q, V, T, FX, qdd, (flag, per is not None))

        def singular(i, code):
            body = model.bodies[int(c.link_body[code - 1])].name
            raise ValueError(
                f"state {i} (q[{i}], v[{i}], tau[{i}]): the articulated inertia at body {body!r} is "
                "singular (a massless subtree, a subtree its joint cannot accelerate, or q too large "
                "for double precision): forward dynamics is undefined"
            )

        _check_codes(model, codes, ("q", "v", "tau", "f_ext"), singular)
    return qdd


def crba(model: Model, q: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
    """Joint-space inertia matrices: ``M[i] = sinews.crba(model, q[i])``, ``(N, nv, nv)``.

    ``out``: optional preallocated ``(N, nv, nv)`` result (overwritten entirely).
    """
    model, c = _model(model)
    Q = _states(q, c)
    n = Q.shape[0]
    M = _out(out, (n, c.nv, c.nv))
    M[...] = 0.0  # the kernel writes the entries between a dof and its ancestors only
    if c.nlinks and n:
        codes = _run("crba", c, model, Q, Q, Q, _NO_FORCES, M.reshape(n, c.nv * c.nv), (c.nv,))
        _check_codes(model, codes, ("q",))
    return M


# ----------------------------------------------------------------------------------------------
# kinematics


@dataclass
class BatchPlacements:
    """World poses of every body and frame for each of ``N`` states.

    ``R``: ``(N, nbodies, 3, 3)``, ``p``: ``(N, nbodies, 3)`` (index = body id);
    ``frame_R``: ``(N, nframes, 3, 3)``, ``frame_p``: ``(N, nframes, 3)`` (index = frame id).
    """

    R: np.ndarray
    p: np.ndarray
    frame_R: np.ndarray
    frame_p: np.ndarray
    model: object = field(repr=False)

    def __len__(self) -> int:
        return self.R.shape[0]

    def state(self, i: int) -> Placements:
        """The :class:`sinews.Placements` of state ``i`` (views into these arrays)."""
        return Placements(self.R[i], self.p[i], self.frame_R[i], self.frame_p[i], self.model)

    def body(self, body: int | str) -> tuple[np.ndarray, np.ndarray]:
        """``(R, p)`` of one body (id or name) in every state: ``(N, 3, 3)``, ``(N, 3)``."""
        b = self.model._resolve_body(body)
        return self.R[:, b], self.p[:, b]

    def frame(self, frame: int | str) -> tuple[np.ndarray, np.ndarray]:
        """``(R, p)`` of one frame (id or name) in every state: ``(N, 3, 3)``, ``(N, 3)``."""
        f = self.model.frame_id(frame)
        return self.frame_R[:, f], self.frame_p[:, f]


def forward_kinematics(model: Model, q: ArrayLike) -> BatchPlacements:
    """World placement of every body and frame for every state ``q[i]`` (``(N, nq)``)."""
    model, c = _model(model)
    Q = _states(q, c)
    n = Q.shape[0]
    pl = c.pl  # (read once: adding a frame rebuilds the table)
    nb = c.nbodies
    nr = pl.size // PL_STRIDE
    R = np.empty((n, nr, 3, 3))
    p = np.empty((n, nr, 3))
    if n:
        codes = _run("placements", c, model, Q, pl.reshape(1, -1), p.reshape(n, 3 * nr), _NO_FORCES,
                     R.reshape(n, 9 * nr), (nr,))
        _check_codes(model, codes, ("q",))
    return BatchPlacements(R[:, :nb], p[:, :nb], R[:, nb:], p[:, nb:], model)


def _point(point) -> np.ndarray:
    x = real_array(point, "point", shape=(3,), finite=False)
    if not np.isfinite(x).all():
        raise ValueError("point contains NaN or infinity")
    return x


def _reference(reference, argname) -> int:
    refs = {"local": REF_LOCAL, "world": REF_WORLD, "local_world_aligned": REF_LOCAL_WORLD_ALIGNED}
    ref = refs.get(reference) if isinstance(reference, str) else None
    if ref is None:
        raise ValueError(f"{argname} must be 'local', 'world' or 'local_world_aligned', got {reference!r}")
    return ref


def _frame_jacobians(model, c, q, row, x, ref, nrows, names) -> np.ndarray:
    """``(N, nrows, nv)`` Jacobians of row ``row`` of the placement table at the point ``x``."""
    Q = _states(q, c)
    n, nv = Q.shape[0], c.nv
    J = np.empty((n, nrows, nv))
    if n:
        codes = _run("frame_jacobian", c, model, Q, c.pl.reshape(1, -1), Q, _NO_FORCES, J.reshape(n, nrows * nv),
                     (nrows, nv, row, ref), x)
        _check_codes(model, codes, names)
    return J


def point_jacobian_6d(model: Model, q: ArrayLike, body: int | str, point: ArrayLike = (0.0, 0.0, 0.0)) -> np.ndarray:
    """``(N, 6, nv)``: for every state, the Jacobian of ``[omega; v_point]`` (world axes) of
    the point ``point`` (body coordinates, the same for all states) fixed on ``body``."""
    model, c = _model(model)
    b = model._resolve_body(body, "body")
    return _frame_jacobians(model, c, q, b, _point(point), REF_LOCAL_WORLD_ALIGNED, 6, ("q", "point"))


def point_jacobian(model: Model, q: ArrayLike, body: int | str, point: ArrayLike = (0.0, 0.0, 0.0)) -> np.ndarray:
    """``(N, 3, nv)``: the Jacobian of the linear velocity (world axes) of the point ``point``
    (body coordinates) fixed on ``body``, for every state."""
    model, c = _model(model)
    b = model._resolve_body(body, "body")
    return _frame_jacobians(model, c, q, b, _point(point), REF_LOCAL_WORLD_ALIGNED, 3, ("q", "point"))


def body_jacobian(model: Model, q: ArrayLike, body: int | str, frame: str = "local") -> np.ndarray:
    """``(N, 6, nv)``: :func:`sinews.body_jacobian` of ``body`` for every state (``frame``:
    ``"local"``, ``"world"`` or ``"local_world_aligned"``)."""
    model, c = _model(model)
    b = model._resolve_body(body, "body")
    ref = _reference(frame, "frame")
    return _frame_jacobians(model, c, q, b, np.zeros(3), ref, 6, ("q",))


def frame_jacobian(model: Model, q: ArrayLike, frame: int | str, reference: str = "local") -> np.ndarray:
    """``(N, 6, nv)``: :func:`sinews.frame_jacobian` of a named frame (id or name) for every
    state (``reference``: ``"local"``, ``"world"`` or ``"local_world_aligned"``)."""
    model, c = _model(model)
    row = c.nbodies + model.frame_id(frame)
    ref = _reference(reference, "reference")
    return _frame_jacobians(model, c, q, row, np.zeros(3), ref, 6, ("q",))


def _com(model, q, v, flags):
    """``(N, 6)`` centre-of-mass position and velocity, and the ``(N, 3, nv)`` Jacobian (flags
    as the kernel: 1 velocity, 2 Jacobian)."""
    model, c = _model(model)
    Q = _states(q, c)
    n = Q.shape[0]
    V = _rows(v, "v", n, c.nv) if flags & 1 else Q
    ncol = c.nv if flags & 2 else 0
    out = np.empty((n, 6))
    J = np.empty((n, 3, ncol))
    if n:
        codes = _run("com", c, model, Q, V, J.reshape(n, 3 * ncol), _NO_FORCES, out, (flags, ncol))
        _check_codes(model, codes, ("q", "v") if flags & 1 else ("q",), _no_mass)
    return out, J


def _no_mass(i, code):
    raise ValueError("the model has no mass")


def center_of_mass(model: Model, q: ArrayLike) -> np.ndarray:
    """``(N, 3)``: the world position of the centre of mass of the moving bodies for every
    state (``ValueError`` if they have no mass)."""
    return _com(model, q, None, 0)[0][:, :3]


def com_velocity(model: Model, q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """``(N, 3)``: the world velocity of the centre of mass for every state."""
    return _com(model, q, v, 1)[0][:, 3:]


def com_jacobian(model: Model, q: ArrayLike) -> np.ndarray:
    """``(N, 3, nv)``: the Jacobian of the centre of mass (world axes) for every state."""
    return _com(model, q, None, 2)[1]


# ----------------------------------------------------------------------------------------------
# contacts


@dataclass
class BatchContactDynamics:
    """Result of :func:`forward_dynamics_contacts` (one row per state).

    ``qdd``: ``(N, nv)``; ``multipliers``: ``(N, rows)`` (``H qdd + C = tau + G^T lambda``);
    ``constraint_residual``: ``(N,)`` ``max |G qdd - gamma|``; ``converged``: ``(N,)`` the
    residual is at round-off level; ``least_squares``: ``(N,)`` states whose rows were
    redundant (solved by the general path as a minimum-norm least-squares problem).
    """

    qdd: np.ndarray
    multipliers: np.ndarray
    constraint_residual: np.ndarray
    converged: np.ndarray
    least_squares: np.ndarray
    constraint_set: object = field(default=None, repr=False)


def forward_dynamics_contacts(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, cs: ConstraintSet,
                              f_ext: ArrayLike | dict | None = None) -> BatchContactDynamics:
    """Constrained forward dynamics of a contacts-only set for every state.

    ``cs``: a :class:`sinews.constraints.ConstraintSet` made only of point contacts
    (``ContactConstraint``; bound to ``model`` here if it is not yet).  Each state gives what
    ``forward_dynamics_constraints(model, q[i], v[i], tau[i], cs, "range_space_sparse",
    f_ext)`` gives (its compiled range-space path, bit for bit); the rare state that path
    hands to the general solver (singular or redundant rows) is solved by that very call.
    Shapes and ``f_ext`` as in :func:`rnea`.
    """
    from .constraints import ConstraintSet
    from .constraints.forward_dynamics import forward_dynamics_constraints

    model, c = _model(model)
    if not isinstance(cs, ConstraintSet):
        raise ValueError(f"cs must be a sinews.constraints.ConstraintSet, got {type(cs).__name__}")
    cs._ensure_bound(model)
    fast = cs._compiled
    if fast is None or fast.model is not model:
        raise ValueError(
            "forward_dynamics_contacts needs a constraint set made only of point contacts "
            "(ContactConstraint) on a model with moving bodies, and not so many rows that it is "
            "solved by row compression (more rows than nv and at least 256): loop over "
            "sinews.constraints.forward_dynamics_constraints for other sets"
        )
    Q = _states(q, c)
    n = Q.shape[0]
    V = _rows(v, "v", n, c.nv)
    T = _rows(tau, "tau", n, c.nv)
    FX, flag, per = _forces(model, c, f_ext, n)
    nv, rows = c.nv, fast.rows
    OUT = np.empty((n, nv + rows + 2))
    codes = np.zeros(n, dtype=np.int64)
    if n:
        s = [fast._template.copy(), -1]
        fast._baumgarte(s)  # the Baumgarte coefficients of the set, as the single-state call
        codes = _run("contacts", c, model, Q, V, T, FX, OUT, (nv, rows, flag, per is not None), ws=s[0],
                     mi=fast.pi.reshape(1, -1))
        _check_codes(model, np.where(codes > 0, 0, codes), ("q", "v", "tau", "f_ext"))
    least = np.zeros(n, dtype=bool)
    for i in np.flatnonzero(codes).tolist():  # singular or redundant: the general path
        fi = f_ext if per is None else per[i]
        try:
            r = forward_dynamics_constraints(model, Q[i], V[i], T[i], cs, "range_space_sparse", fi)
        except ValueError as exc:
            raise type(exc)(f"state {i} (q[{i}], v[{i}], tau[{i}]): {exc}") from None
        OUT[i, :nv] = r.qdd
        OUT[i, nv : nv + rows] = r.multipliers
        OUT[i, nv + rows] = r.constraint_residual
        OUT[i, nv + rows + 1] = r.converged
        least[i] = r.least_squares
    return BatchContactDynamics(
        np.ascontiguousarray(OUT[:, :nv]), np.ascontiguousarray(OUT[:, nv : nv + rows]),
        OUT[:, nv + rows].copy(), OUT[:, nv + rows + 1] != 0.0, least, cs,
    )
