"""Mixed LCPs: eliminate the free variables with a complete orthogonal decomposition.

Block convention (Siconos ``MixedLinearComplementarityProblem``, "ABCD" form): find u (n,)
(free) and v (m,) with, for A (n, n), C (n, m), D (m, n), B (m, m), a (n,) and b (m,),

    A u + C v + a = 0,
    w = D u + B v + b,     0 <= v  perp  w >= 0,

equivalently z = [u; v], M = [[A, C], [D, B]], q = [a; b] in the Siconos (M, q) form.

Reduction to an LCP (Cottle, Pang & Stone 1992, §1.5; Drake ``MlcpToLcpData``, drake.md §2.2).
Let A+ be the minimum-norm least-squares inverse (Moore-Penrose pseudo-inverse) of A, applied
through a complete orthogonal decomposition

    A P = Q R  (QR with column pivoting),   R[:r, :]^T = Z T  (QR of the top rows),
    so A = Q_r T^T (P Z)^T   and   A+ = (P Z) T^-T Q_r^T,

with numerical rank r = #{ |R_ii| > rank_tol |R_00| } (default rank_tol = max(n_rows, n_cols) eps,
Eigen's threshold). Then u = -A+ (a + C v) and

    w = (B - D A+ C) v + (b - D A+ a)     -- an LCP in v.

For non-singular A this is exact (and equals Drake's elimination).

Rank-deficient A (redundant equality rows, e.g. the diode-bridge circuits): the minimum-norm
choice above is Drake's "singularity-robust" one, but it is exact only when a + C v happens to
lie in range(A). sinews instead makes the elimination exact with a *block principal pivot*
(CPS §2.3): with r = rank A and U the n - r left null vectors of A (from the same QR), pick
k = n - r complementarity indices S (column-pivoted QR of U^T C) so that

    K = [[A, C_S], [D_S, B_SS]]

is non-singular, and exchange (u, v_S) with (0, w_S). The LCP unknown becomes
zeta = [w_S; v_{R}] (R = the other indices) and its partner omega = [v_S; w_R]:

    [u; v_S] = K^-1 ([0; w_S] - H v_R - p),     H = [C_R; B_SR],  p = [a; b_S],
    w_R      = [D_R, B_RS] [u; v_S] + B_RR v_R + b_R.

Complementarity v_i w_i = 0 is unchanged by the exchange, so this LCP is equivalent to the MLCP
(and P-matrix structure is preserved by principal pivoting). K^-1 is applied through a complete
orthogonal decomposition as well; if K is singular too, its pseudo-inverse is used, which is
exact when the missing directions are free variables that nothing sees (e.g. a column of zeros).
Otherwise :func:`solve_mlcp` falls back to the minimum-norm elimination and then to the *split*
LCP of size 2n + m, exact for any A: u = u+ - u-, with

    [[ A, -A,  C],   [u+]   [ a]
     [-A,  A, -C],   [u-] + [-a]   >= 0  perp  [u+; u-; v] >= 0,
     [ D, -D,  B]]   [v ]   [ b]

where the first two block rows force A u + C v + a = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg

from sinews._checks import real_array

from ._validation import as_matrix, as_vector, flag, integer, nonnegative, optional_tolerance
from .lemke import solve_lemke
from .pgs import solve_pgs
from .principal_pivoting import solve_principal_pivoting
from .result import EPS, FLOAT_MAX, LCPResult, MLCPResult

__all__ = ["CompleteOrthogonalDecomposition", "ReducedLCP", "mlcp_to_lcp", "solve_mlcp",
           "check_mlcp", "MLCPCheck"]


def _rank_tol(value) -> float | None:
    """None (the default threshold) or a relative rank threshold in [0, 1)."""
    if value is None:
        return None
    value = nonnegative(value, "rank_tol")
    if value >= 1.0:
        raise ValueError(f"rank_tol must lie in [0, 1), got {value}")
    return value


class CompleteOrthogonalDecomposition:
    """A = Q_r T^T W^T with orthonormal Q_r (rows x r), W (cols x r) and triangular T (r x r).

    ``A`` is any finite real 2-D array; ``rank_tol`` (None or in [0, 1)) is the relative rank
    threshold, default max(rows, cols) eps. The factorisation is computed for A scaled by a
    power of two (exact) to max|A_ij| ~ 1, so data near the ends of the float range neither
    overflows nor loses its rank; ``T`` is reported for A itself.
    """

    def __init__(self, A: ArrayLike, rank_tol: float | None = None) -> None:
        A = as_matrix(A, "A")
        rank_tol = _rank_tol(rank_tol)
        rows, cols = A.shape
        self.shape = A.shape
        if A.size == 0:
            self.rank = 0
            self.Q = np.zeros((rows, 0))
            self.T = np.zeros((0, 0))
            self.W = np.zeros((cols, 0))
            return
        if rank_tol is None:
            rank_tol = max(rows, cols) * EPS
        big = float(np.abs(A).max())
        self._exp = math.frexp(big)[1] if big > 0 else 0      # A = 2^_exp * As
        Q, R, perm = scipy.linalg.qr(np.ldexp(A, -self._exp), mode="economic", pivoting=True)
        diag = np.abs(np.diag(R))
        r = int(np.sum(diag > rank_tol * diag[0])) if diag[0] > 0 else 0
        self.rank = r
        self.Q = Q[:, :r]
        if r == 0:
            self.T = np.zeros((0, 0))
            self.W = np.zeros((cols, 0))
            return
        Z, T = scipy.linalg.qr(R[:r, :].T, mode="economic")   # R_top^T = Z T
        W = np.empty_like(Z)
        W[perm] = Z                                           # undo the column permutation
        self._T = T                                           # of the scaled matrix
        with np.errstate(over="ignore"):
            self.T = np.ldexp(T, self._exp)
        self.W = W

    def pinv_solve(self, rhs: ArrayLike) -> np.ndarray:
        """Minimum-norm least-squares solution A+ rhs (rhs may be 1-D or 2-D, finite, with as
        many rows as A). A solution beyond the float range is refused (ValueError)."""
        rhs = real_array(rhs, "rhs")
        if rhs.ndim not in (1, 2) or rhs.shape[0] != self.shape[0]:
            raise ValueError(f"rhs must have shape ({self.shape[0]},) or ({self.shape[0]}, k) "
                             f"to match A, got {rhs.shape}")
        x = self._pinv_solve(rhs)
        if not np.isfinite(x).all():
            raise ValueError("rhs: the solution A+ rhs overflows the float range")
        return x

    def _pinv_solve(self, rhs: np.ndarray) -> np.ndarray:
        """pinv_solve without validation; may return inf/NaN on overflow."""
        if self.rank == 0:
            return np.zeros((self.shape[1],) + rhs.shape[1:])
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            y = self.Q.T @ rhs
            y = scipy.linalg.solve_triangular(self._T, y, trans="T", lower=False,
                                              check_finite=False)
            return np.ldexp(self.W @ y, -self._exp)


@dataclass
class ReducedLCP:
    """The LCP in zeta left after eliminating u, and the affine map back to (u, v).

    M, q         the reduced LCP: omega = M zeta + q, 0 <= zeta perp omega >= 0
    rank         numerical rank of A
    swapped      the complementarity indices S exchanged by the block pivot (empty when A has
                 full rank): zeta = [w_S; v_R], omega = [v_S; w_R] in index order S then R
    exact        False only for the minimum-norm fallback (rank-deficient A, no pivot found)
    u_map, u_offset, v_map, v_offset   u = u_map zeta + u_offset, v = v_map zeta + v_offset

    The fields are validated on construction (finite real arrays of consistent shapes).
    """

    M: np.ndarray
    q: np.ndarray
    rank: int
    swapped: np.ndarray
    exact: bool
    u_map: np.ndarray
    u_offset: np.ndarray
    v_map: np.ndarray
    v_offset: np.ndarray

    def __post_init__(self):
        self.M = as_matrix(self.M, "M", square=True)
        k = self.M.shape[0]
        self.q = as_vector(self.q, "q", k)
        self.rank = integer(self.rank, "rank", minimum=0)
        swapped = real_array(self.swapped, "swapped", ndim=1, finite=False)
        if swapped.size and (np.asarray(self.swapped).dtype.kind not in "iu"
                             or swapped.min() < 0):
            raise ValueError("swapped must hold non-negative integer indices")
        self.swapped = swapped.astype(np.int64)
        self.exact = flag(self.exact, "exact")
        self.u_map = as_matrix(self.u_map, "u_map", cols=k)
        self.u_offset = as_vector(self.u_offset, "u_offset", self.u_map.shape[0], what="u_map")
        self.v_map = as_matrix(self.v_map, "v_map", cols=k)
        self.v_offset = as_vector(self.v_offset, "v_offset", self.v_map.shape[0], what="v_map")

    def recover(self, zeta: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(u (n,), v (m,)) from a solution zeta of the reduced LCP (finite, of the reduced size
        ``M.shape[0]``)."""
        zeta = as_vector(zeta, "zeta", self.M.shape[0], what="the reduced M")
        u, v = self._recover(zeta)
        if not (np.isfinite(u).all() and np.isfinite(v).all()):
            raise ValueError("zeta is too large: the recovered (u, v) overflow")
        return u, v

    def _recover(self, zeta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """recover without validation; may return inf/NaN (solve_mlcp checks the result)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self.u_map @ zeta + self.u_offset, self.v_map @ zeta + self.v_offset

    def recover_u(self, zeta: ArrayLike) -> np.ndarray:
        """The free variables u (n,) from a solution zeta of the reduced LCP."""
        return self.recover(zeta)[0]


@dataclass(frozen=True)
class MLCPCheck:
    """What :func:`check_mlcp` measured."""

    w: np.ndarray
    equality_residual: float   # max |A u + C v + a|
    complementarity: float     # max |v_i w_i|
    natural_residual: float    # max min(|v_i|, |w_i|)
    feasibility: float         # max(0, -min v, -min w)
    tol: float
    ok: bool


def _block(value, name: str, n: int, m: int) -> np.ndarray:
    """C (n x m) or D (m x n); an empty one may be given in any empty shape."""
    rows, cols = (n, m) if name == "C" else (m, n)
    arr = real_array(value, name, finite=False)
    if arr.size == 0 and rows * cols == 0:
        arr = arr.reshape(rows, cols)
    if arr.shape != (rows, cols):
        raise ValueError(f"{name} must have shape ({rows}, {cols}) to match A ({n} x {n}) and "
                         f"B ({m} x {m}), got {arr.shape}")
    return as_matrix(arr, name)


def _validate_mlcp(A, C, D, B, a, b):
    A = as_matrix(A, "A", square=True)
    n = A.shape[0]
    B = as_matrix(B, "B", square=True)
    m = B.shape[0]
    C = _block(C, "C", n, m)
    D = _block(D, "D", n, m)
    a = as_vector(a, "a", n, what="A")
    b = as_vector(b, "b", m, what="B")
    return A, C, D, B, a, b


def _scale(*arrays) -> float:
    s = 1.0
    for x in arrays:
        if x.size:
            s = max(s, float(np.max(np.abs(x))))
    return s


def check_mlcp(A: ArrayLike, C: ArrayLike, D: ArrayLike, B: ArrayLike, a: ArrayLike, b: ArrayLike,
               u: ArrayLike, v: ArrayLike, tol: float | None = None) -> MLCPCheck:
    """Independent check of (u (n,), v (m,)) for the MLCP (A (n, n), C (n, m), D (m, n),
    B (m, m), a (n,), b (m,)); see the module docstring.

    ``ok`` requires equality residual, feasibility and max min(|v_i|, |w_i|) all <= tol; the
    default tol is sqrt(eps) * max(1, max|A|, |B|, |C|, |D|, |a|, |b|).
    """
    A, C, D, B, a, b = _validate_mlcp(A, C, D, B, a, b)
    u = as_vector(u, "u", A.shape[0], what="A")
    v = as_vector(v, "v", B.shape[0], what="B")
    tol = optional_tolerance(tol, "tol")
    chk = _measure(A, C, D, B, a, b, u, v, tol)
    if not _finite(chk):
        raise ValueError("u, v: A u + C v + a or D u + B v + b overflows the float range (u, v "
                         "too large for this MLCP); the candidate cannot be checked")
    return chk


def _finite(chk: MLCPCheck) -> bool:
    """w and the equality residual (and with them every measure, for finite u, v) are finite."""
    return bool(np.isfinite(chk.w).all() and np.isfinite(chk.equality_residual))


def _measure(A, C, D, B, a, b, u, v, tol) -> MLCPCheck:
    """check_mlcp without validation; non-finite (u, v) or overflow give ok = False."""
    if tol is None:
        tol = float(np.sqrt(EPS)) * _scale(A, B, C, D, a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        eq = A @ u + C @ v + a
        w = D @ u + B @ v + b
        eq_res = float(np.max(np.abs(eq))) if eq.size else 0.0
        if v.size:
            feas = float(np.max([0.0, -v.min(), -w.min()]))   # np.max keeps NaN
            comp = min(float(np.max(np.abs(v * w))), FLOAT_MAX)   # saturates, as check_lcp
            nat = float(np.max(np.minimum(np.abs(v), np.abs(w))))
        else:
            feas = comp = nat = 0.0
    finite = bool(np.isfinite(u).all() and np.isfinite(w).all() and np.isfinite(eq).all())
    ok = eq_res <= tol and feas <= tol and nat <= tol and finite
    return MLCPCheck(w, eq_res, comp, nat, feas, float(tol), bool(ok))


def _choose_swap(A: np.ndarray, C: np.ndarray, rank: int) -> np.ndarray | None:
    """n - rank complementarity indices S whose columns of C best span the left null space
    of A (column-pivoted QR of U^T C), so that K = [[A, C_S], [D_S, B_SS]] can be non-singular.
    None if U^T C overflows.
    """
    n = A.shape[0]
    k = min(n - rank, C.shape[1])
    if k == 0:
        return np.zeros(0, dtype=int)
    Q, _, _ = scipy.linalg.qr(A / np.abs(A).max() if A.any() else A, pivoting=True)
    U = Q[:, rank:]                                     # left null space of A
    UC = U.T @ (C / np.abs(C).max() if C.any() else C)  # (scaling changes neither)
    if not np.isfinite(UC).all():
        return None
    _, _, piv = scipy.linalg.qr(UC, pivoting=True)
    return np.sort(piv[:k])


def _block_pivot_reduction(A, C, D, B, a, b, S: np.ndarray, rank: int,
                           rank_tol: float | None) -> ReducedLCP | None:
    """Exchange (u, v_S) with (0, w_S) through K = [[A, C_S], [D_S, B_SS]] (module docstring).

    K^-1 is applied as the pseudo-inverse of a complete orthogonal decomposition, so S = {}
    gives the plain elimination u = -A+ (a + C v). The reduction is exact when K has full rank.
    None when the reduction is not finite (data so large in magnitude that it overflows).
    """
    n, m = A.shape[0], B.shape[0]
    R = np.setdiff1d(np.arange(m), S)
    k = S.size
    K = np.block([[A, C[:, S]], [D[S, :], B[np.ix_(S, S)]]])
    H = np.vstack([C[:, R], B[np.ix_(S, R)]])
    p = np.concatenate([a, b[S]])
    E = np.vstack([np.zeros((n, k)), np.eye(k)])      # places w_S in the rows of S
    with np.errstate(all="ignore"):
        cod = CompleteOrthogonalDecomposition(K, rank_tol)
        # [u; v_S] = X zeta + x0 with zeta = [w_S; v_R]
        X = np.hstack([cod._pinv_solve(E), -cod._pinv_solve(H)])
        x0 = -cod._pinv_solve(p)
        Rm = np.hstack([D[R, :], B[np.ix_(R, S)]])
        M_red = np.vstack([X[n:],
                           Rm @ X + np.hstack([np.zeros((R.size, k)), B[np.ix_(R, R)]])])
        q_red = np.concatenate([x0[n:], Rm @ x0 + b[R]])
    v_map = np.zeros((m, k + R.size))
    v_offset = np.zeros(m)
    v_map[S] = X[n:]
    v_offset[S] = x0[n:]
    v_map[R, k:] = np.eye(R.size)
    if not all(np.isfinite(x).all() for x in (M_red, q_red, X, x0)):
        return None
    return ReducedLCP(M=M_red, q=q_red, rank=rank, swapped=S, exact=cod.rank == n + k,
                      u_map=X[:n], u_offset=x0[:n], v_map=v_map, v_offset=v_offset)


def mlcp_to_lcp(A: ArrayLike, C: ArrayLike, D: ArrayLike, B: ArrayLike, a: ArrayLike, b: ArrayLike, *,
                rank_tol: float | None = None) -> ReducedLCP:
    """Eliminate the free variables u; return the reduced LCP and the map back to (u, v).

    Shapes as in the module docstring: A (n, n), C (n, m), D (m, n), B (m, m), a (n,), b (m,).

    Full-rank A: u = -A+ (a + C v) and the LCP is (B - D A+ C, b - D A+ a) in v. Rank-deficient
    A: the block pivot of the module docstring (``exact`` is False when K is singular too, and
    the pseudo-inverse of K was used). ``rank_tol``: None or a relative threshold in [0, 1).
    Data so large in magnitude that the reduction overflows is refused (ValueError).
    """
    A, C, D, B, a, b = _validate_mlcp(A, C, D, B, a, b)
    rank_tol = _rank_tol(rank_tol)
    red = _reduce(A, C, D, B, a, b, rank_tol)
    if red is None:
        raise ValueError(f"A, C, D, B, a, b: the reduction to an LCP overflowed (data of "
                         f"magnitude up to {_scale(A, B, C, D, a, b):.3g}); rescale the problem")
    return red


def _reduce(A, C, D, B, a, b, rank_tol) -> ReducedLCP | None:
    with np.errstate(all="ignore"):
        rank = CompleteOrthogonalDecomposition(A, rank_tol).rank
        S = _choose_swap(A, C, rank) if rank < A.shape[0] else np.zeros(0, dtype=int)
    if S is None:
        return None
    return _block_pivot_reduction(A, C, D, B, a, b, S, rank, rank_tol)


_SOLVERS = {"lemke": solve_lemke, "principal_pivoting": solve_principal_pivoting,
            "pgs": solve_pgs}
# The options each solver takes through solve_mlcp (z0 has no meaning for the reduced LCP, and
# PGS's tol would clash with solve_mlcp's own).
_OPTIONS = {"lemke": ("zero_tol", "piv_tol", "lexicographic", "max_pivots"),
            "principal_pivoting": ("zero_tol", "max_iter", "drake_compat"),
            "pgs": ("omega", "max_iter")}


def _solve_lcp(method: str, M, q, options: dict) -> LCPResult:
    opts = dict(options)
    if method == "lemke":
        opts.setdefault("lexicographic", True)
    return _SOLVERS[method](M, q, **opts)


def solve_mlcp(A: ArrayLike, C: ArrayLike, D: ArrayLike, B: ArrayLike, a: ArrayLike, b: ArrayLike, *,
               method: str = "lemke", rank_tol: float | None = None, tol: float | None = None,
               **options: object) -> MLCPResult:
    """Solve the MLCP  A u + C v + a = 0,  0 <= v perp D u + B v + b >= 0.

    A (n, n), C (n, m), D (m, n), B (m, m), a (n,), b (m,); the result holds u (n,), v (m,).

    method : LCP solver for the reduced problem: "lemke" (default, lexicographic unless
             ``lexicographic=False`` is passed), "principal_pivoting" or "pgs"; ``options`` go to
             that solver (lemke: zero_tol, piv_tol, lexicographic, max_pivots; principal_pivoting:
             zero_tol, max_iter, drake_compat; pgs: omega, max_iter).
    rank_tol : None or the relative rank threshold in [0, 1) of the complete orthogonal
             decomposition of A.
    tol : None or the acceptance tolerance (>= 0) of :func:`check_mlcp` (default sqrt(eps) *
          data scale).

    The reduction of :func:`mlcp_to_lcp` is tried first. Only when it is not exact (A and the
    pivot block K both singular) and its answer fails :func:`check_mlcp` are the minimum-norm
    elimination and then the split LCP of size 2n + m (module docstring) tried, in that order.
    (If the reduction overflows, data of extreme magnitude, the split LCP is tried directly.)
    The first answer that passes the check is returned; if none does, the first attempt's.
    ``converged`` is True only when :func:`check_mlcp` accepts the returned (u, v); a solver
    that fails or diverges is reported in ``status``, never raised. A candidate whose residuals
    overflow the float range is replaced by u = 0, v = 0 (reported), so every number in the
    result is finite.
    """
    A, C, D, B, a, b = _validate_mlcp(A, C, D, B, a, b)
    if not isinstance(method, str) or method not in _SOLVERS:
        raise ValueError(f"method must be one of {sorted(_SOLVERS)}, got {method!r}")
    rank_tol = _rank_tol(rank_tol)
    tol = optional_tolerance(tol, "tol")
    for name in options:
        if name not in _OPTIONS[method]:
            raise ValueError(f"{name} is not an option of solve_mlcp with method={method!r} "
                             f"(accepted: {', '.join(_OPTIONS[method])})")
    _solve_lcp(method, np.zeros((0, 0)), np.zeros(0), options)   # checks the option values
    n, m = A.shape[0], B.shape[0]

    def attempt_reduced(red: ReducedLCP, path: str):
        lcp = _solve_lcp(method, red.M, red.q, options)
        u, v = red._recover(lcp.z)
        return lcp, u, v, _measure(A, C, D, B, a, b, u, v, tol), path

    def attempt_split(why: str = ""):
        M_split = np.block([[A, -A, C], [-A, A, -C], [D, -D, B]])
        q_split = np.concatenate([a, -a, b])
        lcp = _solve_lcp(method, M_split, q_split, options)
        with np.errstate(over="ignore", invalid="ignore"):
            u = lcp.z[:n] - lcp.z[n:2 * n]
        v = lcp.z[2 * n:]
        return (lcp, u, v, _measure(A, C, D, B, a, b, u, v, tol),
                f"split LCP of size {2 * n + m}{why}")

    def passes(t) -> bool:
        return bool(t[0].converged and t[3].ok)

    red = _reduce(A, C, D, B, a, b, rank_tol)
    attempts = []
    if red is None:
        attempts.append(attempt_split(" (the reduction to an LCP overflowed)"))
    else:
        path = f"reduced LCP (rank A = {red.rank} of {n}"
        path += f", block pivot on v{list(map(int, red.swapped))})" if red.swapped.size else ")"
        attempts.append(attempt_reduced(red, path))
        if not red.exact and not passes(attempts[0]):
            plain = None
            if red.swapped.size:
                plain = _block_pivot_reduction(A, C, D, B, a, b, np.zeros(0, dtype=int),
                                               red.rank, rank_tol)
            if plain is not None:
                attempts.append(attempt_reduced(
                    plain, f"minimum-norm reduced LCP (rank A = {red.rank} of {n})"))
            if not passes(attempts[-1]):
                attempts.append(attempt_split())
    passing = [t for t in attempts if passes(t)]
    lcp, u, v, chk, path = passing[0] if passing else attempts[0]
    converged = bool(passing)
    overflow = ""
    if not (converged or (_finite(chk) and np.isfinite(u).all() and np.isfinite(v).all())):
        u, v = np.zeros(n), np.zeros(m)          # keep every number of the result finite
        chk = _measure(A, C, D, B, a, b, u, v, tol)
        overflow = "; the candidate (u, v) overflowed, u = 0 and v = 0 returned"
    if converged:
        status = f"solved via {path}"
    elif not lcp.converged:
        status = f"{path}: LCP solver failed: {lcp.status}"
    else:
        status = (f"{path}: MLCP check failed (equality residual {chk.equality_residual:.3g}, "
                  f"feasibility {chk.feasibility:.3g}, natural residual "
                  f"{chk.natural_residual:.3g}, tol {chk.tol:.3g})")
    if not converged and len(attempts) > 1:
        status += f"; also tried: {', '.join(t[4] for t in attempts[1:])}"
    status += overflow
    return MLCPResult(u=u, v=v, w=chk.w, converged=converged, status=status,
                      equality_residual=chk.equality_residual,
                      complementarity=chk.complementarity, feasibility=chk.feasibility, lcp=lcp)
