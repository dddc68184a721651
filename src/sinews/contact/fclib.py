"""FCLib frictional-contact problems, their natural-map error, and 3-D friction solvers.

The local frictional contact problem (FCLib: Acary, Brémond, Koziara & Pérignon 2014; Acary,
Brémond & Huber 2018, §2) with n_c contacts in dimension d (components [n, t1, t2] per contact,
normal first) is: given W (m×m, m = d n_c, symmetric positive semi-definite), q (m) and
mu (n_c), find the reaction r and the relative velocity u with

    u = W r + q,
    K*_mu ∋ û ⊥ r ∈ K_mu,     û = [u_n + mu ||u_t||, u_t]     (De Saxcé's change of variable),

with K_mu = {r : ||r_t|| <= mu r_n} and its dual K*_mu = {u : mu ||u_t|| <= u_n}, contact by
contact.  This is exactly Signorini's condition plus Coulomb's law with maximal dissipation.

Error measure (the project's checker, :func:`natural_map_error`)::

    error(r) = ||F_nat(r)||_2 / (1 + ||q||_2),     F_nat(r)_a = r_a - P_{K_mu_a}(r_a - û_a),

the relative natural-map residual computed by Siconos' ``fc3d_compute_error`` and used in
Acary, Brémond & Huber (2018) to compare solvers on FCLib (normalisation ``1 + ||q||``, so it is
relative for ||q|| >> 1 and absolute for ||q|| << 1).  ``relative_to="q"`` gives the stricter
``||F_nat|| / ||q||`` variant quoted in the same paper.  It is evaluated carefully (a rounding
bound, and double-double arithmetic where the bound is not small; see
:mod:`sinews.contact._fc3d_exact`), and every solver's final ``error`` and ``converged`` come from
this same function applied to the returned reactions.

Solvers (one shared :class:`FrictionContactResult`):

* :func:`solve_pgs` -- projected Gauss-Seidel on circular cones (Simbody style), a Numba kernel;
  see :mod:`sinews.contact._fc3d_pgs`.  Cheap per sweep, robust, slow to reach tight tolerances on
  ill-conditioned stacks.
* :func:`solve_admm` -- ADMM on the Delassus operator with a De Saxcé fixed point, proximal
  regularisation and adaptive (residual-balancing) penalty; see :mod:`sinews.contact._fc3d_admm`.
  Handles the rank-deficient, badly scaled Delassus matrices where PGS stalls.
* :func:`solve` -- PGS while its error keeps falling, then ADMM warm-started from PGS's reactions.

Small problems are solved on a dense W, large sparse ones on the CSR matrix (PGS sweeps the
rows, ADMM solves its linear systems by preconditioned Krylov iterations), never densified.

Array shapes: ``W`` (m, m) (dense, or SciPy sparse), ``q`` (m,), ``mu`` (contacts,), reactions
``r`` and warm starts ``r0`` (m,), with m = dimension * contacts (``project_on_cone`` also takes
``r`` as (contacts, dimension)).  The shipped Siconos/FCLib problems: :mod:`sinews.data`.

Readers: :func:`read_fclib` (HDF5; global problems condensed to W = H^T M^-1 H,
q = H^T M^-1 f + w), :func:`read_siconos_dat` (Siconos fc2d/fc3d ``.dat``), :func:`load_problem`.

Thread safety: problems are immutable (frozen attributes, read-only arrays) and may be shared
between threads; every call allocates its own work arrays, and the kernels release the GIL.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._checks import real_array
from ._fc3d_checks import boolean, integer, one_of, positive_real, real_in, sparse_W as _sparse_W

__all__ = [
    "FrictionContactProblem",
    "FrictionContactResult",
    "read_fclib",
    "read_siconos_dat",
    "load_problem",
    "natural_map_error",
    "natural_map_residual",
    "project_on_cone",
    "solve_pgs",
    "solve_admm",
    "solve",
]

# --------------------------------------------------------------------------------------------
# Problem and result
# --------------------------------------------------------------------------------------------


def _readonly(a):
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class FrictionContactProblem:
    """A local frictional contact problem ``u = W r + q``, ``K* ∋ û ⊥ r ∈ K`` (FCLib order [n, t]).

    Attributes:
        W: (m, m) Delassus matrix, a dense ``ndarray`` or a SciPy CSR matrix.
        q: (m,) free relative velocity.
        mu: (contacts,) friction coefficients (finite, >= 0).
        dimension: 3 (or 2 for planar problems).
        name: a label (file stem).
        kind: ``"local"`` or ``"global"`` (condensed from the FCLib global form).

    The arrays are validated and copied at construction (real numbers only, finite, consistent
    sizes, at least one contact; every error a ``ValueError`` naming the argument), stored
    read-only, and the attributes cannot be reassigned: a problem is immutable, and safe to share
    between threads.  A few derived quantities are cached.
    """

    W: object
    q: np.ndarray
    mu: np.ndarray
    dimension: int = 3
    name: str = ""
    kind: str = "local"

    def __post_init__(self):
        set_ = object.__setattr__
        dim = integer(self.dimension, "dimension", 2, 3)
        set_(self, "dimension", dim)
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {type(self.name).__name__}")
        one_of(self.kind, "kind", ("local", "global"))
        q = real_array(self.q, "q", ndim=1)
        m = q.shape[0]
        if m == 0:
            raise ValueError("q: a problem needs at least one contact (q is empty)")
        if m % dim:
            raise ValueError(f"q: length {m} is not a multiple of dimension {dim}")
        mu = real_array(self.mu, "mu")
        if mu.ndim > 1:
            raise ValueError(f"mu must be a 1-D array, got shape {mu.shape}")
        mu = mu.ravel()
        if mu.shape[0] != m // dim:
            raise ValueError(f"mu: {mu.shape[0]} coefficients for {m // dim} contacts")
        if np.any(mu < 0):
            raise ValueError("mu: friction coefficients must be finite and >= 0")
        if sp.issparse(self.W):
            W = _sparse_W(self.W, m)
        else:
            W = real_array(self.W, "W", ndim=2)
            if W.shape != (m, m):
                raise ValueError(f"W: shape {W.shape} does not match q of length {m}")
        # own copies: later changes to the caller's arrays cannot reach the problem.  The
        # attributes are read-only views; the kernels get the private writeable arrays (Numba
        # dispatches read-only arrays more slowly), which nothing ever writes to.
        from ._fc3d_exact import safe_norm

        q = q.copy()
        mu = mu.copy()
        norm_q = float(safe_norm(q))
        if not math.isfinite(norm_q):
            raise ValueError("q: its norm overflows the double range")
        Wd = None
        if not sp.issparse(W):
            Wd = W.copy()
            W = _readonly(Wd.view())
        # lazily built caches are single attributes assigned once (atomic for other threads)
        for name, value in (("W", W), ("q", _readonly(q.view())), ("mu", _readonly(mu.view())),
                            ("_q", q), ("_mu", mu), ("_dense", None if Wd is None else (Wd, W)),
                            ("_norm_q", norm_q), ("_csr", None), ("_sparse", Wd is None),
                            ("_diag_positive", bool(np.all(W.diagonal() > 0.0)))):
            set_(self, name, value)

    @property
    def contacts(self) -> int:
        """Number of contacts, ``m // dimension``."""
        return self.q.shape[0] // self.dimension

    @property
    def size(self) -> int:
        """Number of rows m of W (``contacts * dimension``)."""
        return self.q.shape[0]

    def dense_W(self) -> np.ndarray:
        """W as a read-only C-contiguous dense array (for sparse W, a copy made once and cached:
        m^2 * 8 bytes; the solvers never need it for large sparse problems)."""
        return (self._dense or self._build_dense())[1]

    def _dense_arrays(self):
        """The private (writeable, never written) dense W that the kernels read."""
        return (self._dense or self._build_dense())[0]

    def _build_dense(self):
        Wd = np.ascontiguousarray(self.W.toarray(), dtype=np.float64)
        pair = (Wd, _readonly(Wd.view()))
        object.__setattr__(self, "_dense", pair)
        return pair

    def _csr_arrays(self):
        """(indptr, indices, data) of W in CSR form, int64 indices, cached (private)."""
        if self._csr is None:
            A = self.W if self._sparse else sp.csr_matrix(self._dense[0])
            arrays = tuple(np.array(x, dtype=t) for x, t in
                           ((A.indptr, np.int64), (A.indices, np.int64), (A.data, np.float64)))
            object.__setattr__(self, "_csr", arrays)
        return self._csr

    def velocity(self, r: ArrayLike) -> np.ndarray:
        """u = W r + q (m,) for reactions ``r`` (m,) (plain double precision)."""
        r = _check_r(self, r)
        return np.asarray(self.W @ r).ravel() + self.q


@dataclass
class FrictionContactResult:
    """Output of every frictional-contact solver.

    Attributes:
        r: (m,) reactions, [n, t1, t2] per contact.
        u: (m,) relative velocities W r + q (evaluated carefully, as the error).
        error: natural-map error ||F_nat(r)|| / (1 + ||q||) of ``r`` for the problem passed in,
            exactly what :func:`natural_map_error` returns for it.
        iterations: sweeps (PGS) or ADMM iterations performed.
        converged: ``error <= tol``.
        solver: name of the method.
        info: solver-specific diagnostics (e.g. final penalty, factorisations, ``"path"``:
            ``"dense"`` or ``"sparse"``).
    """

    r: np.ndarray
    u: np.ndarray
    error: float
    iterations: int
    converged: bool
    solver: str
    info: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------------------------


def _path(path):
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise ValueError("path must be a file path (str or os.PathLike), "
                         f"got {type(path).__name__}")
    try:
        p = Path(os.fsdecode(path))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"path: invalid file path ({exc})") from None
    if not p.is_file():
        raise ValueError(f"path: no such file {p}")
    return p


def _read(path, reader, kind):
    path = _path(path)
    try:
        a = reader(path)
        return FrictionContactProblem(a["W"], a["q"], a["mu"], a["dimension"], path.stem,
                                      a.get("kind", kind))
    except ValueError as exc:
        raise ValueError(f"path: {path}: {exc}") from None
    except OSError as exc:
        raise ValueError(f"path: {path}: cannot be read ({exc.strerror or exc})") from None
    except MemoryError:
        raise ValueError(f"path: {path}: the problem it describes does not fit in memory") from None


def read_fclib(path: str | os.PathLike) -> FrictionContactProblem:
    """Read an FCLib HDF5 file (local, or global condensed to local form; W stays sparse).

    Every size, index and value is validated before use; a malformed or unreadable file raises
    ``ValueError`` naming the path and what is wrong.
    """
    from ._fc3d_io import read_fclib_arrays

    return _read(path, read_fclib_arrays, "local")


def read_siconos_dat(path: str | os.PathLike) -> FrictionContactProblem:
    """Read a Siconos fc2d/fc3d ``.dat`` problem (dense W; sparse-block files above 2048 rows
    stay sparse).  Malformed files raise ``ValueError`` naming the path and what is wrong."""
    from ._fc3d_io import read_siconos_dat_arrays

    return _read(path, read_siconos_dat_arrays, "local")


def load_problem(path: str | os.PathLike) -> FrictionContactProblem:
    """Dispatch on the suffix: ``.hdf5``/``.h5`` -> :func:`read_fclib`, otherwise ``.dat``."""
    p = _path(path)
    if p.suffix.lower() in (".hdf5", ".h5"):
        return read_fclib(p)
    return read_siconos_dat(p)


# --------------------------------------------------------------------------------------------
# The error checker (shared by natural_map_error and the solvers' final verdicts)
# --------------------------------------------------------------------------------------------


def project_on_cone(r: ArrayLike, mu: ArrayLike | float, dimension: int = 3) -> np.ndarray:
    """Euclidean projection of stacked reactions onto the Coulomb cones K_mu (vectorised).

    Args:
        r: (contacts * dimension,) reactions, or a (contacts, dimension) array (same shape out).
        mu: (contacts,) friction coefficients >= 0, or one number for every contact.
        dimension: 2 or 3.

    Each contact is rescaled by a power of two before the projection (exact), so extreme
    magnitudes neither overflow nor lose accuracy.
    """
    d = integer(dimension, "dimension", 2, 3)
    x = real_array(r, "r")
    if x.ndim == 2:
        if x.shape[1] != d:
            raise ValueError(f"r must have shape (contacts, {d}), got {x.shape}")
    elif x.ndim != 1 or x.shape[0] % d:
        raise ValueError(f"r must be a 1-D array of length a multiple of {d}, got shape {x.shape}")
    R = x.reshape(-1, d)
    nc = R.shape[0]
    mu = real_array(mu, "mu")
    if mu.ndim == 0:
        mu = np.full(nc, float(mu))
    elif mu.shape != (nc,):
        raise ValueError(f"mu must be one number or have shape ({nc},) (one per contact of r, "
                         f"which has {nc}), got {mu.shape}: r and mu do not match")
    if np.any(mu < 0):
        raise ValueError("mu: friction coefficients must be >= 0")
    big = np.abs(R).max(axis=1) if nc else np.zeros(0)
    k = np.where(big > 0, np.frexp(np.where(big > 0, big, 1.0))[1], 0)
    Z = np.ldexp(R, -k[:, None])  # entries in [-1, 1]
    zn = Z[:, 0]
    t = np.hypot(Z[:, 1], Z[:, 2]) if d == 3 else np.abs(Z[:, 1])
    inside = (t <= mu * zn) & (zn >= 0)  # zn >= 0: mu = 0 and a pulling r
    polar = ~inside & (mu * t <= -zn)
    side = ~(inside | polar)
    out = Z.copy()
    out[polar] = 0.0
    ms = mu[side]
    zs = zn[side]
    ts = t[side]
    small = ms <= 1.0
    a = np.empty(ms.shape)  # (z_n + mu t) / (1 + mu^2), divided by mu above 1 (no overflow)
    a[small] = (zs[small] + ms[small] * ts[small]) / (1.0 + ms[small] ** 2)
    big = ~small
    a[big] = (zs[big] / ms[big] + ts[big]) / (1.0 / ms[big] + ms[big])
    out[side, 0] = a
    out[side, 1:] = (ms * a / ts)[:, None] * Z[side, 1:]
    out = np.ldexp(out, k[:, None])
    if not np.all(np.isfinite(out)):
        raise ValueError("r: its projection overflows the double range")
    return out.reshape(x.shape)


def natural_map_residual(problem: FrictionContactProblem, r: ArrayLike) -> np.ndarray:
    """F_nat(r) = r - P_K(r - û(W r + q)) (m,), stacked per contact, for reactions ``r`` (m,)
    (evaluated carefully)."""
    r = _check_r(problem, r)
    return _careful(problem, r, 1.0, floor=0.0)[2]


def natural_map_error(problem: FrictionContactProblem, r: ArrayLike, *, relative_to: str = "1+q") -> float:
    """Relative natural-map error of the reactions ``r`` (m,) (0 exactly at a solution).

    ``relative_to="1+q"`` (default, Siconos/FCLib): ||F_nat(r)|| / (1 + ||q||);
    ``"q"``: ||F_nat(r)|| / ||q||; ``"none"``: ||F_nat(r)||.

    The value is that of exact arithmetic on the given doubles to about three digits or better:
    W r + q and F_nat are evaluated in double precision with a rounding-error bound, and again in
    double-double arithmetic (about 106 bits) when the bound is not below 2^-10 of the result --
    ill-conditioned W with large reactions, where plain W r + q loses its digits to cancellation.
    (Under the default normalisation, errors below the rounding level of the data are exact to
    an absolute 2^-50 ~ 8.9e-16 instead.)  A W r + q that overflows the double range gives
    ``inf``.  The solvers' final ``error`` and ``converged`` come from this same evaluation.
    """
    one_of(relative_to, "relative_to", ("1+q", "q", "none"))
    r = _check_r(problem, r)
    nq = problem._norm_q
    scale = 1.0 + nq if relative_to == "1+q" else (nq if relative_to == "q" and nq > 0 else 1.0)
    return _careful(problem, r, scale, floor=None if relative_to == "1+q" else 0.0)[0]


def _check_problem(problem, solver=False):
    if not isinstance(problem, FrictionContactProblem):
        raise ValueError("problem: expected a FrictionContactProblem, "
                         f"got {type(problem).__name__}")
    if solver and problem.dimension != 3:
        raise ValueError("problem: the solvers handle 3-D contact only (dimension=3)")
    return problem


def _check_r(problem, r, name="r"):
    _check_problem(problem)
    x = real_array(r, name, finite=False)
    if x.ndim != 1 or x.shape[0] != problem.size:
        raise ValueError(f"{name}: shape {x.shape} does not match the problem size "
                         f"({problem.size},)")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinity")
    return x


# --------------------------------------------------------------------------------------------
# Solvers
# --------------------------------------------------------------------------------------------

from ._fc3d_drive import DENSE_MAX_SIZE, admm_on, careful as _careful, pgs_on, solve_auto, use_dense  # noqa: E402,F401


def solve_pgs(problem: FrictionContactProblem, *, tol: float = 1e-8, max_iter: int = 5000, omega: float = 1.0,
              r0: ArrayLike | None = None, W: ArrayLike | sp.spmatrix | sp.sparray | None = None, check_every: int = 10) -> FrictionContactResult:
    """Projected Gauss-Seidel on circular cones (see :mod:`sinews.contact._fc3d_pgs`).

    Args:
        problem: a 3-D :class:`FrictionContactProblem` (W_ii > 0 needed).
        tol: target natural-map error ||F_nat|| / (1 + ||q||), a finite number > 0.
        max_iter: maximum number of sweeps (an integer >= 1).
        omega: over-relaxation factor in (0, 2).
        r0: warm start (m,), default zero.
        W: optional: the problem's own W in another representation -- a dense array (e.g.
            ``problem.dense_W()``) forces the dense kernel, a SciPy sparse matrix the sparse one.
            It must equal ``problem.W`` entry for entry (``ValueError`` otherwise); the error is
            always that of ``problem``.  Default: chosen from W's form, size and density (see
            :mod:`sinews.contact._fc3d_drive`; large sparse W is never densified).
        check_every: evaluate the error at least every this many sweeps (integer >= 1).

    The returned ``error`` and ``converged`` are those of :func:`natural_map_error` on the
    returned reactions.
    """
    _check_problem(problem, True)
    tol = positive_real(tol, "tol")
    max_iter = integer(max_iter, "max_iter")
    omega = real_in(omega, "omega", 0.0, 2.0)
    check_every = integer(check_every, "check_every")
    r = _start(problem, r0)
    if not problem._diag_positive:
        raise ValueError("problem: W has a non-positive diagonal entry; PGS needs W_ii > 0")
    dense = use_dense(problem, W, True)
    return _finite(problem, pgs_on(problem, dense, r, tol, max_iter, omega, check_every, True,
                                   FrictionContactResult), tol)


_ADMM_OPTIONS = ("eta", "alpha", "rho_ratio", "rho_every", "max_factorizations", "adapt",
                 "scale_contacts", "dual_warm_start")


def solve_admm(problem: FrictionContactProblem, *, tol: float = 1e-8, max_iter: int = 5000,
               r0: ArrayLike | None = None, W: ArrayLike | sp.spmatrix | sp.sparray | None = None, rho: float | None = None,
               **options: float) -> FrictionContactResult:
    """ADMM on the Delassus operator (see :mod:`sinews.contact._fc3d_admm`).

    Args:
        problem: a 3-D :class:`FrictionContactProblem`.
        tol: target natural-map error ||F_nat|| / (1 + ||q||), a finite number > 0.
        max_iter: maximum number of ADMM iterations (an integer >= 1).
        r0: warm start (m,), default zero (the multiplier starts at -(u + s) of r0).
        W: optional: the problem's own W in another representation (see :func:`solve_pgs`).
        rho: initial penalty > 0 (default: sqrt(lambda_max * 1e-4 lambda_max) of the scaled W).
        **options: ``eta`` (proximal weight >= 0, default 1e-6 lambda_max), ``alpha``
            (over-relaxation in (0, 2), default 1.6), ``rho_ratio`` (> 1, default 10 dense,
            5 sparse),
            ``rho_every`` (integer >= 1, default 20), ``max_factorizations`` (integer >= 1,
            default 60; on the sparse path, the number of penalty updates + 1), ``adapt``,
            ``scale_contacts``, ``dual_warm_start`` (booleans, default True).  Any other name
            raises ``ValueError``.

    Dense W: an explicit inverse of W + (rho + eta) I per penalty; large sparse W: Krylov solves
    on the CSR matrix.  ``error`` and ``converged`` are those of :func:`natural_map_error` on the
    returned reactions.
    """
    _check_problem(problem, True)
    tol = positive_real(tol, "tol")
    max_iter = integer(max_iter, "max_iter")
    opts = _admm_options(rho, options)
    r = _start(problem, r0)
    dense = use_dense(problem, W, False)
    return _finite(problem, admm_on(problem, dense, r, tol, max_iter, opts, FrictionContactResult),
                   tol)


def _admm_options(rho, options):
    for name in options:
        if name not in _ADMM_OPTIONS:
            raise ValueError(f"{name}: unknown option of solve_admm (expected one of "
                             f"{', '.join(_ADMM_OPTIONS)})")
    out = {"rho": None if rho is None else positive_real(rho, "rho")}
    if options.get("eta") is not None:
        out["eta"] = real_in(options["eta"], "eta", 0.0, math.inf, lo_open=False)
    if "alpha" in options:
        out["alpha"] = real_in(options["alpha"], "alpha", 0.0, 2.0)
    if "rho_ratio" in options:
        out["rho_ratio"] = real_in(options["rho_ratio"], "rho_ratio", 1.0, math.inf)
    for name in ("rho_every", "max_factorizations"):
        if name in options:
            out[name] = integer(options[name], name)
    for name in ("adapt", "scale_contacts", "dual_warm_start"):
        if name in options:
            out[name] = boolean(options[name], name)
    return out


def _start(problem, r0):
    if r0 is None:
        return np.zeros(problem.size)
    x = _check_r(problem, r0, "r0")
    return x.copy() if x is r0 else x


def solve(problem: FrictionContactProblem, *, tol: float = 1e-8, max_iter: int = 5000, r0: ArrayLike | None = None,
          W: ArrayLike | sp.spmatrix | sp.sparray | None = None, chunk: int = 100, window: int = 4) -> FrictionContactResult:
    """PGS while it makes progress, then ADMM warm-started from PGS's reactions.

    PGS runs in chunks of ``chunk`` sweeps.  It is declared stagnant, and the solve switches to
    ADMM (:func:`solve_admm`) for the rest of the iteration budget, when the natural-map error
    has not halved over the last ``window`` chunks.  (PGS's error on rigid stacks often plateaus
    and then drops suddenly once the contact statuses settle, so a stagnation test is preferred
    to an extrapolated rate, which misleads on those plateaus.)  Both methods cost about one
    pass over W per iteration, so the result's ``iterations`` -- the total over both phases --
    is a fair work measure; ``info`` records the split.  If ADMM ends worse than PGS did, PGS's
    reactions are returned.  ``W``, ``tol``, ``max_iter`` and ``r0`` are as in
    :func:`solve_pgs`; ``chunk`` and ``window`` are integers >= 1.
    """
    _check_problem(problem, True)
    tol = positive_real(tol, "tol")
    max_iter = integer(max_iter, "max_iter")
    chunk = integer(chunk, "chunk")
    window = integer(window, "window")
    r = _start(problem, r0)
    if not problem._diag_positive:
        raise ValueError("problem: W has a non-positive diagonal entry; PGS needs W_ii > 0")
    return _finite(problem, solve_auto(problem, W, r, tol, max_iter, chunk, window,
                                       FrictionContactResult), tol)


def _finite(problem, res, tol):
    """A run whose iterate left the floating-point range (an extreme ``r0`` or ``rho``) returns
    zero reactions with their own (careful) error and ``info["diverged"]``, never NaN or inf.
    A non-finite ``r`` always makes the error non-finite, so one scalar test suffices."""
    if math.isfinite(res.error):
        return res
    r = np.zeros(problem.size)
    err, u, _ = _careful(problem, r, 1.0 + problem._norm_q)
    res.info["diverged"] = "the iterate overflowed (non-finite); zero reactions returned"
    res.r, res.u, res.error, res.converged = r, u, err, err <= tol
    return res
