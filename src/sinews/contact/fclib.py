"""FCLib frictional-contact problems, their natural-map error, and 3-D friction solvers.

The local frictional contact problem (FCLib: Acary, Brémond, Koziara & Pérignon 2014; Acary,
Brémond & Huber 2018, §2) with n_c contacts in dimension d (components [n, t1, t2] per contact,
normal first) is: given W (m×m, m = d n_c, symmetric positive semi-definite), q (m) and
mu (n_c), find the reaction r and the relative velocity u with

    u = W r + q,
    K*_mu ∋ û ⊥ r ∈ K_mu,     û = [u_n + mu ||u_t||, u_t]     (De Saxcé's change of variable),

with K_mu = {r : ||r_t|| <= mu r_n} and its dual K*_mu = {u : mu ||u_t|| <= u_n}, contact by
contact.  This is exactly Signorini's condition plus Coulomb's law with maximal dissipation.

Error measure (the project's independent checker, :func:`natural_map_error`)::

    error(r) = ||F_nat(r)||_2 / (1 + ||q||_2),     F_nat(r)_a = r_a - P_{K_mu_a}(r_a - û_a),

the relative natural-map residual computed by Siconos' ``fc3d_compute_error`` and used in
Acary, Brémond & Huber (2018) to compare solvers on FCLib (normalisation ``1 + ||q||``, so it is
relative for ||q|| >> 1 and absolute for ||q|| << 1).  ``relative_to="q"`` gives the stricter
``||F_nat|| / ||q||`` variant quoted in the same paper.

Solvers (one shared :class:`FrictionContactResult`):

* :func:`solve_pgs` -- projected Gauss-Seidel on circular cones (Simbody style), a Numba kernel;
  see :mod:`sinews.contact._fc3d_pgs`.  Cheap per sweep, robust, slow to reach tight tolerances on
  ill-conditioned stacks.
* :func:`solve_admm` -- ADMM on the Delassus operator with a De Saxcé fixed point, proximal
  regularisation and adaptive (residual-balancing) penalty; see :mod:`sinews.contact._fc3d_admm`.
  Handles the rank-deficient, badly scaled Delassus matrices where PGS stalls.
* :func:`solve` -- PGS while its error keeps falling, then ADMM warm-started from PGS's reactions.

Readers: :func:`read_fclib` (HDF5; global problems condensed to W = H^T M^-1 H,
q = H^T M^-1 f + w), :func:`read_siconos_dat` (Siconos fc2d/fc3d ``.dat``), :func:`load_problem`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

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


@dataclass
class FrictionContactProblem:
    """A local frictional contact problem ``u = W r + q``, ``K* ∋ û ⊥ r ∈ K`` (FCLib order [n, t]).

    Attributes:
        W: (m, m) Delassus matrix, a dense ``ndarray`` or a SciPy sparse matrix.
        q: (m,) free relative velocity.
        mu: (contacts,) friction coefficients.
        dimension: 3 (or 2 for planar problems).
        name: a label (file stem).
        kind: ``"local"`` or ``"global"`` (condensed from the FCLib global form).

    The arrays are validated and converted once, at construction; treat the problem as
    immutable afterwards (a few derived quantities are cached).
    """

    W: object
    q: np.ndarray
    mu: np.ndarray
    dimension: int = 3
    name: str = ""
    kind: str = "local"

    def __post_init__(self):
        if self.dimension not in (2, 3):
            raise ValueError(f"dimension must be 2 or 3, got {self.dimension}")
        if sp.issparse(self.W):
            self.W = sp.csr_matrix(self.W, dtype=np.float64)
        else:
            self.W = np.array(self.W, dtype=np.float64, order="C")
            if self.W.ndim != 2:
                raise ValueError("W must be a 2-D matrix")
        self.q = np.array(self.q, dtype=np.float64).ravel()
        self.mu = np.array(self.mu, dtype=np.float64).ravel()
        m = self.q.shape[0]
        if m % self.dimension:
            raise ValueError(f"q: length {m} is not a multiple of dimension {self.dimension}")
        if self.W.shape != (m, m):
            raise ValueError(f"W: shape {self.W.shape} does not match q of length {m}")
        if self.mu.shape[0] != m // self.dimension:
            raise ValueError(f"mu: {self.mu.shape[0]} coefficients for {m // self.dimension} contacts")
        Wdata = self.W.data if sp.issparse(self.W) else self.W
        if not np.all(np.isfinite(Wdata)):
            raise ValueError("W: contains NaN or infinite entries")
        if not np.all(np.isfinite(self.q)):
            raise ValueError("q: contains NaN or infinite entries")
        if not np.all(np.isfinite(self.mu)) or np.any(self.mu < 0):
            raise ValueError("mu: friction coefficients must be finite and >= 0")
        self._norm_q = float(np.linalg.norm(self.q))
        self._diag_positive = bool(np.all(self.W.diagonal() > 0.0))
        self._dense = None

    @property
    def contacts(self) -> int:
        return self.q.shape[0] // self.dimension

    @property
    def size(self) -> int:
        return self.q.shape[0]

    def dense_W(self) -> np.ndarray:
        """W as a C-contiguous dense array (for sparse W, a copy made once and cached)."""
        if sp.issparse(self.W):
            if self._dense is None:
                self._dense = np.ascontiguousarray(self.W.toarray())
            return self._dense
        return self.W

    def velocity(self, r) -> np.ndarray:
        """u = W r + q."""
        return np.asarray(self.W @ r).ravel() + self.q


@dataclass
class FrictionContactResult:
    """Output of every frictional-contact solver.

    Attributes:
        r: (m,) reactions, [n, t1, t2] per contact.
        u: (m,) relative velocities W r + q.
        error: natural-map error ||F_nat(r)|| / (1 + ||q||) at exit (see :func:`natural_map_error`).
        iterations: sweeps (PGS) or ADMM iterations performed.
        converged: error <= tol.
        solver: name of the method.
        info: solver-specific diagnostics (e.g. final penalty, factorisations).
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


def read_fclib(path) -> FrictionContactProblem:
    """Read an FCLib HDF5 file (local, or global condensed to local form)."""
    from ._fc3d_io import read_fclib_arrays

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no such file {path}")
    a = read_fclib_arrays(path)
    return FrictionContactProblem(a["W"], a["q"], a["mu"], a["dimension"], path.stem, a["kind"])


def read_siconos_dat(path) -> FrictionContactProblem:
    """Read a Siconos fc2d/fc3d ``.dat`` problem (dense W)."""
    from ._fc3d_io import read_siconos_dat_arrays

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no such file {path}")
    a = read_siconos_dat_arrays(path)
    return FrictionContactProblem(a["W"], a["q"], a["mu"], a["dimension"], path.stem, "local")


def load_problem(path) -> FrictionContactProblem:
    """Dispatch on the suffix: ``.hdf5``/``.h5`` -> :func:`read_fclib`, otherwise ``.dat``."""
    path = Path(path)
    if path.suffix in (".hdf5", ".h5"):
        return read_fclib(path)
    return read_siconos_dat(path)


# --------------------------------------------------------------------------------------------
# Independent error checker (pure NumPy; deliberately shares no code with the solver kernels)
# --------------------------------------------------------------------------------------------


def project_on_cone(r, mu, dimension=3):
    """Euclidean projection of stacked reactions onto the Coulomb cones K_mu (vectorised)."""
    r = np.asarray(r, dtype=np.float64).reshape(-1, dimension)
    mu = np.asarray(mu, dtype=np.float64).ravel()
    rn = r[:, 0]
    rt = r[:, 1:]
    t = np.sqrt(np.sum(rt * rt, axis=1))
    out = r.copy()
    inside = t <= mu * rn
    polar = ~inside & (mu * t <= -rn)
    side = ~(inside | polar)
    out[polar] = 0.0
    a = (rn[side] + mu[side] * t[side]) / (1.0 + mu[side] ** 2)
    out[side, 0] = a
    out[side, 1:] = (mu[side] * a / t[side])[:, None] * rt[side]
    return out.ravel()


def natural_map_residual(problem: FrictionContactProblem, r) -> np.ndarray:
    """F_nat(r) = r - P_K(r - û(W r + q)), stacked per contact."""
    r = _check_r(problem, r)
    d = problem.dimension
    u = problem.velocity(r).reshape(-1, d)
    uhat = u.copy()
    uhat[:, 0] += problem.mu * np.sqrt(np.sum(u[:, 1:] ** 2, axis=1))
    return r - project_on_cone(r - uhat.ravel(), problem.mu, d)


def natural_map_error(problem: FrictionContactProblem, r, *, relative_to="1+q") -> float:
    """Relative natural-map error of the reactions r (0 exactly at a solution).

    ``relative_to="1+q"`` (default, Siconos/FCLib): ||F_nat(r)|| / (1 + ||q||);
    ``"q"``: ||F_nat(r)|| / ||q||; ``"none"``: ||F_nat(r)||.
    """
    res = np.linalg.norm(natural_map_residual(problem, r))
    nq = float(np.linalg.norm(problem.q))
    if relative_to == "1+q":
        return float(res / (1.0 + nq))
    if relative_to == "q":
        return float(res / nq) if nq > 0 else float(res)
    if relative_to == "none":
        return float(res)
    raise ValueError(f"relative_to: expected '1+q', 'q' or 'none', got {relative_to!r}")


def _check_r(problem, r):
    if not isinstance(problem, FrictionContactProblem):
        raise ValueError("problem: expected a FrictionContactProblem")
    r = np.asarray(r, dtype=np.float64).ravel()
    if r.shape[0] != problem.size:
        raise ValueError(f"r: length {r.shape[0]} does not match problem size {problem.size}")
    if not np.all(np.isfinite(r)):
        raise ValueError("r: contains NaN or infinite entries")
    return r


def _kernels():
    """The private solver modules, imported on first use (Numba compiles lazily)."""
    global _KERNELS
    if _KERNELS is None:
        from . import _fc3d_pgs

        _KERNELS = _fc3d_pgs
    return _KERNELS


_KERNELS = None


def _check_W(problem, W):
    if W is problem.W or W is problem._dense:
        return W
    if not (isinstance(W, np.ndarray) and W.shape == (problem.size, problem.size)
            and W.dtype == np.float64 and W.flags.c_contiguous):
        raise ValueError("W: expected the problem's W as a C-contiguous float64 (m, m) array")
    return W


def _check_solver_args(problem, tol, max_iter, r0):
    """Validate the common solver arguments; return a fresh (2m,) buffer [r0 | scratch]."""
    if type(problem) is not FrictionContactProblem and not isinstance(problem, FrictionContactProblem):
        raise ValueError("problem: expected a FrictionContactProblem")
    if problem.dimension != 3:
        raise ValueError("problem: the solvers handle 3-D contact only (dimension=3)")
    if not (type(tol) is float or isinstance(tol, (int, np.floating))) or not (0.0 < tol < math.inf):
        raise ValueError(f"tol: must be a positive number, got {tol}")
    if max_iter < 1:
        raise ValueError(f"max_iter: must be >= 1, got {max_iter}")
    m = problem.q.shape[0]
    buf = np.zeros(2 * m)
    if r0 is not None:
        buf[:m] = _check_r(problem, r0)
    return buf


# --------------------------------------------------------------------------------------------
# Solvers
# --------------------------------------------------------------------------------------------


def solve_pgs(problem, *, tol=1e-8, max_iter=5000, omega=1.0, r0=None, W=None, check_every=10):
    """Projected Gauss-Seidel on circular cones (see :mod:`sinews.contact._fc3d_pgs`).

    Args:
        problem: a 3-D :class:`FrictionContactProblem`.
        tol: target natural-map error ||F_nat|| / (1 + ||q||).
        max_iter: maximum number of sweeps.
        omega: over-relaxation factor in (0, 2).
        r0: warm start (m,), default zero.
        W: optional pre-densified C-contiguous W (to amortise a sparse -> dense copy).
        check_every: evaluate the true error at least every this many sweeps.
    """
    buf = _check_solver_args(problem, tol, max_iter, r0)
    if not (0.0 < omega < 2.0):
        raise ValueError(f"omega: must lie in (0, 2), got {omega}")
    if not problem._diag_positive:
        raise ValueError("problem: W has a non-positive diagonal entry; PGS needs W_ii > 0")
    Wd = problem.dense_W() if W is None else _check_W(problem, W)
    m = problem.q.shape[0]
    r = buf[:m]
    u = buf[m:]
    params = np.array([tol, max_iter, omega, max(1, int(check_every)), 1.0 + problem._norm_q,
                       0.0, 0.0, 0.0])
    _kernels().pgs_kernel(Wd, problem.q, problem.mu, r, u, params)
    return FrictionContactResult(r, u, float(params[6]), int(params[5]), bool(params[7]), "pgs")


def solve_admm(problem, *, tol=1e-8, max_iter=5000, r0=None, W=None, rho=None, **options):
    """ADMM on the Delassus operator (see :mod:`sinews.contact._fc3d_admm`).

    Args:
        problem: a 3-D :class:`FrictionContactProblem`.
        tol: target natural-map error ||F_nat|| / (1 + ||q||).
        max_iter: maximum number of ADMM iterations.
        r0: warm start (m,), default zero (the multiplier starts at -(u + s) of r0).
        W: optional pre-densified C-contiguous W.
        rho: initial penalty (default: sqrt(lambda_max * 1e-4 lambda_max) of the scaled W).
        **options: ``eta`` (proximal weight, default 1e-6 lambda_max), ``alpha`` (over-relaxation
            in (0, 2), default 1.6), ``rho_ratio`` (10), ``rho_every`` (20), ``max_factorizations``
            (60), ``adapt`` (True), ``scale_contacts`` (True), ``dual_warm_start`` (True).
    """
    from ._fc3d_admm import admm_solve

    r = _check_solver_args(problem, tol, max_iter, r0)[: problem.size].copy()
    Wd = problem.dense_W() if W is None else _check_W(problem, W)
    return admm_solve(Wd, problem.q, problem.mu, r, tol, int(max_iter), rho, FrictionContactResult, **options)


def solve(problem, *, tol=1e-8, max_iter=5000, r0=None, W=None, chunk=100, window=4):
    """PGS while it makes progress, then ADMM warm-started from PGS's reactions.

    PGS runs in chunks of ``chunk`` sweeps.  It is declared stagnant, and the solve switches to
    ADMM (:func:`solve_admm`) for the rest of the iteration budget, when the natural-map error
    has not halved over the last ``window`` chunks.  (PGS's error on rigid stacks often plateaus
    and then drops suddenly once the contact statuses settle, so a stagnation test is preferred
    to an extrapolated rate, which misleads on those plateaus.)  Both methods cost about one
    pass over the dense W per iteration, so the result's ``iterations`` -- the total over both
    phases -- is a fair work measure; ``info`` records the split.  If ADMM ends worse than PGS
    did, PGS's reactions are returned.
    """
    r = _check_solver_args(problem, tol, max_iter, r0)[: problem.size].copy()
    if int(chunk) < 1 or int(window) < 1:
        raise ValueError(f"chunk, window: must be >= 1, got {chunk}, {window}")
    Wd = problem.dense_W() if W is None else _check_W(problem, W)
    max_iter = int(max_iter)
    chunk = int(chunk)
    window = int(window)
    used = 0
    errors = []
    res = None
    while used < max_iter:
        res = solve_pgs(problem, tol=tol, max_iter=min(chunk, max_iter - used), r0=r, W=Wd)
        used += res.iterations
        r = res.r
        if res.converged:
            res.iterations = used
            res.solver = "auto(pgs)"
            return res
        errors.append(res.error)
        if len(errors) > window and errors[-1] > 0.5 * errors[-1 - window]:
            break
    if used >= max_iter:
        res.iterations = used
        res.solver = "auto(pgs)"
        return res
    res2 = solve_admm(problem, tol=tol, max_iter=max_iter - used, r0=r, W=Wd)
    res2.info["pgs_iterations"] = used
    res2.info["admm_iterations"] = res2.iterations
    if not res2.converged and res2.error > res.error:
        res.iterations = used + res2.iterations
        res.solver = "auto(pgs, admm rejected)"
        res.info.update(res2.info)
        return res
    res2.iterations += used
    res2.solver = "auto(pgs+admm)"
    return res2
