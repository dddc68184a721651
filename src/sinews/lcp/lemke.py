"""Lemke's complementary pivoting method, after Drake's ``MobyLcpSolver::SolveLcpLemke``.

Problem (Cottle, Pang & Stone 1992, §4.4; Lemke 1965): find z with

    w = M z + q,   z >= 0,   w >= 0,   z^T w = 0.

Lemke's method adds an artificial variable z0 with a covering vector d >= 0,

    w - M z - d z0 = q,

and starts from the basis of all w (basis matrix B = I, basic values x = q). z0 enters and the
most negative w leaves, which makes x >= 0. From then on the *complement* of the variable that
just left enters (w_j left -> z_j enters, z_j left -> w_j enters), a minimum-ratio test picks the
leaving variable, and the method stops when z0 leaves the basis (a solution) or when the entering
column has no blocking row (ray termination: the method cannot find a solution; for copositive-plus
M this proves that none exists).

Implementation choices taken from Drake/Moby (drake.md §4.1-4.2), reproduced on purpose:

* revised style: an explicit n x n basis matrix B, each direction d = B^-1 a solved afresh by LU;
* covering vector d = indicator(q < 0), not the all-ones vector;
* tolerances: ``zero_tol = n * max|M_ij| * 10 eps`` and ``piv_tol = n * max(1, max|M_ij|) * eps``
  when the given value is <= 0;
* trivial exit: min q > -zero_tol gives z = 0 with 0 pivots;
* tolerant ratio test: theta = min_j (x_j + zero_tol)/d_j over d_j > piv_tol; every candidate
  with x_j/d_j <= theta is a tie; the artificial variable leaves if it is among the ties,
  otherwise the *first* tied row leaves;
* at most ``min(1000, 50 n)`` pivots; on failure z = 0 (Drake #6947).

Additions (deviations documented in docs/lcp.md):

* ``lexicographic=True`` breaks ratio-test ties with the lexicographic rule (CPS §4.9: compare the
  rows of [x, B^-1] divided by d_j), which guarantees termination on degenerate problems such as
  Kostreva's cycling example, where plain Moby Lemke hits its pivot limit;
* a working warm start (Drake's is dead code): the complementary basis read off z0 is tried first;
* a singular basis is reported as a failure instead of propagating NaN;
* ``converged`` is the solver's success confirmed by the independent :func:`check_lcp`.

``solve_lemke_regularized`` follows ``SolveLcpLemkeRegularized`` (drake.md §4.3): plain Lemke,
then Lemke on M + 10^k I for k = min_exp, min_exp + step_exp, ... while k < max_exp.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ._validation import as_vector, check_tolerance, lcp_data
from .result import EPS, LCPResult, check_lcp, make_result

__all__ = ["solve_lemke", "solve_lemke_regularized", "moby_zero_tolerance",
           "moby_pivot_tolerance"]


def moby_zero_tolerance(M: np.ndarray) -> float:
    """Drake's ``ComputeZeroTolerance``: n * max|M_ij| * 10 eps."""
    n = M.shape[0]
    if M.size == 0:
        return 0.0
    return float(n * np.max(np.abs(M)) * 10.0 * EPS)


def moby_pivot_tolerance(M: np.ndarray) -> float:
    """Drake's default pivot tolerance: n * max(1, max|M_ij|) * eps."""
    n = M.shape[0]
    big = float(np.max(np.abs(M))) if M.size else 0.0
    return float(n * max(1.0, big) * EPS)


def _factor(B: np.ndarray):
    """Partial-pivot LU of B; a singular B gives inf/NaN in later solves instead of raising."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return scipy.linalg.lu_factor(B, check_finite=False)


def _lu_solve(lu, rhs: np.ndarray, trans: int = 0) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return scipy.linalg.lu_solve(lu, rhs, trans=trans, check_finite=False)


def _solve(B: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """B^-1 rhs by partial-pivot LU (no singularity check, as in Drake)."""
    return _lu_solve(_factor(B), rhs)


def _inverse_rows(lu, rows: np.ndarray, n: int) -> np.ndarray:
    """Rows ``rows`` of B^-1, from B^T y = e_i."""
    E = np.zeros((n, rows.size))
    E[rows, np.arange(rows.size)] = 1.0
    return _lu_solve(lu, E, trans=1).T


def _lexicographic_min(rows: np.ndarray) -> int:
    """Index of the lexicographically smallest row (near-equal entries, 1e-11 relative, tie)."""
    alive = np.arange(rows.shape[0])
    for k in range(rows.shape[1]):
        col = rows[alive, k]
        best = col.min()
        alive = alive[col <= best + 1e-11 * max(1.0, abs(best))]
        if alive.size == 1:
            break
    return int(alive[0])


class _LemkeTableau:
    """Basis bookkeeping. Variables: w_j -> j, z_j -> n + j, artificial z0 -> 2n.

    Columns of the standard form  [I, -M, -d] [w; z; z0] = q.
    """

    def __init__(self, M: np.ndarray, q: np.ndarray):
        self.M = M
        self.q = q
        self.n = M.shape[0]
        self.artificial = 2 * self.n
        self.cover = None  # covering column, set at start

    def column(self, var: int) -> np.ndarray:
        n = self.n
        if var < n:
            col = np.zeros(n)
            col[var] = 1.0
            return col
        if var < 2 * n:
            return -self.M[:, var - n]
        return self.cover

    def complement(self, var: int) -> int:
        return var + self.n if var < self.n else var - self.n

    def name(self, var: int) -> str:
        if var == self.artificial:
            return "the artificial variable"
        return f"w[{var}]" if var < self.n else f"z[{var - self.n}]"


def solve_lemke(M, q, z0=None, *, zero_tol: float = -1.0, piv_tol: float = -1.0,
                lexicographic: bool = False, max_pivots: int | None = None) -> LCPResult:
    """Solve LCP(M, q) with Lemke's method (Moby/Drake tolerances and tie rules).

    Parameters
    ----------
    M : (n, n) array. q : (n,) array.
    z0 : optional warm start; the complementary basis {z_j : z0_j > 0} is tried first.
    zero_tol, piv_tol : values <= 0 select Drake's defaults (see module docstring).
    lexicographic : break ratio-test ties lexicographically (anti-cycling).
    max_pivots : pivot limit (counted like ``pivots``), default min(1000, 50 n).

    Returns an :class:`LCPResult`. ``pivots`` counts the pivots after the initial one that brings
    the artificial variable into the basis (Drake's count); ``iterations`` counts every basis
    change including that initial one (so iterations = pivots + 1 whenever pivoting started).
    """
    M, q = lcp_data(M, q)
    n = M.shape[0]
    zero_tol = check_tolerance(zero_tol, "zero_tol")
    piv_tol = check_tolerance(piv_tol, "piv_tol")
    if zero_tol <= 0:
        zero_tol = moby_zero_tolerance(M)
    if piv_tol <= 0:
        piv_tol = moby_pivot_tolerance(M)
    if max_pivots is None:
        max_pivots = min(1000, 50 * n)
    elif int(max_pivots) < 0:
        raise ValueError("max_pivots must be non-negative")
    max_pivots = int(max_pivots)
    if z0 is not None:
        z0 = as_vector(z0, "z0", n)

    if n == 0:
        return make_result(M, q, np.zeros(0), True, "solved (empty problem)", 0, 0)
    if q.min() > -zero_tol or q.min() >= 0.0:
        return make_result(M, q, np.zeros(n), True, "solved: trivial solution z = 0 (q >= 0)",
                           0, 0)

    tab = _LemkeTableau(M, q)
    basis = np.arange(n)          # basis[i] = variable basic in row i
    B = np.eye(n)
    x = q.copy()

    if z0 is not None and np.any(z0 > 0):
        # Warm start: the complementary basis suggested by the support of z0.
        guess = np.where(z0 > 0, np.arange(n) + n, np.arange(n))
        Bg = np.column_stack([tab.column(v) for v in guess])
        xg = _solve(Bg, q)
        if np.all(np.isfinite(xg)) and np.allclose(Bg @ xg, q, atol=1e3 * zero_tol + 1e-12):
            if xg.min() > -zero_tol:
                z = np.zeros(n)
                zmask = guess >= n
                z[guess[zmask] - n] = xg[zmask]
                return make_result(M, q, z, True, "solved from the warm-start basis", 0, 0)
            basis, B, x = guess, Bg, xg

    # Covering vector: indicator of the negative basic values (q < 0 at a cold start), taken in
    # basis coordinates so that B^-1 (-cover) = -indicator.
    indicator = (x < -zero_tol).astype(float) if np.any(x < -zero_tol) else (x < 0).astype(float)
    tab.cover = -(B @ indicator)
    pivots = -1  # the initial artificial pivot is not counted (Drake's convention)

    # First pivot: z0 enters; it must rise to -min x, and that row leaves.
    entering = tab.artificial
    direction = -indicator
    xmin = x.min()
    ties = np.flatnonzero((x <= xmin + zero_tol) & (indicator > 0))
    if lexicographic and ties.size > 1:
        # lexicographic min of [x_i, (B^-1)_i] / indicator_i (CPS §4.9); at a cold start B = I.
        rows = np.column_stack([x[ties], _inverse_rows(_factor(B), ties, n)])
        r = int(ties[_lexicographic_min(rows)])
    else:
        r = int(np.argmin(x))
    ratio = x[r] / direction[r]
    x = x - ratio * direction
    x[r] = ratio
    B[:, r] = tab.cover
    leaving = int(basis[r])
    basis = basis.copy()
    basis[r] = entering
    pivots += 1

    while True:
        if leaving == tab.artificial:
            z = np.zeros(n)
            zmask = (basis >= n) & (basis < 2 * n)
            z[basis[zmask] - n] = x[zmask]
            return make_result(M, q, z, True, "solved", pivots, pivots + 1)
        if pivots >= max_pivots:
            return make_result(M, q, np.zeros(n), False,
                               f"pivot limit reached ({max_pivots} pivots; cycling?)",
                               pivots, pivots + 1)
        entering = tab.complement(leaving)
        col = tab.column(entering)
        lu = _factor(B)
        direction = _lu_solve(lu, col)
        if not np.all(np.isfinite(direction)):
            return make_result(M, q, np.zeros(n), False,
                               "basis matrix became singular (degenerate basis)", pivots, pivots + 1)
        cand = np.flatnonzero(direction > piv_tol)
        if cand.size == 0:
            return make_result(M, q, np.zeros(n), False,
                               f"ray termination: no blocking variable when "
                               f"{tab.name(entering)} enters", pivots, pivots + 1)
        theta = np.min((x[cand] + zero_tol) / direction[cand])
        ties = cand[x[cand] / direction[cand] <= theta]
        if ties.size == 0:
            return make_result(M, q, np.zeros(n), False,
                               "ratio test found no candidate (zero tolerance too low?)",
                               pivots, pivots + 1)
        art = ties[basis[ties] == tab.artificial]
        if art.size:
            r = int(art[0])
        elif lexicographic and ties.size > 1:
            rows = _inverse_rows(lu, ties, n) / direction[ties, None]
            r = int(ties[_lexicographic_min(rows)])
        else:
            r = int(ties[0])
        ratio = x[r] / direction[r]
        x = x - ratio * direction
        x[r] = ratio
        B[:, r] = col
        leaving = int(basis[r])
        basis[r] = entering
        pivots += 1


def _moby_accepts(M: np.ndarray, q: np.ndarray, z: np.ndarray, tol: float) -> bool:
    """Drake's acceptance test of the regularised wrappers (absolute tolerances)."""
    w = M @ z + q
    zw = z * w
    return bool(z.min() >= -tol and w.min() >= -tol and np.all((zw >= -tol) & (zw < tol)))


def solve_lemke_regularized(M, q, *, min_exp: int = -20, step_exp: int = 4, max_exp: int = 20,
                            piv_tol: float = -1.0, zero_tol: float = -1.0) -> LCPResult:
    """Lemke's method, retried on M + 10^k I (k = min_exp, min_exp + step_exp, ..., < max_exp).

    As in Drake, each attempt is first judged by Moby's absolute test (against the matrix that
    was solved), with tol = zero_tol or ``moby_zero_tolerance(M)`` of the unregularised M.
    Unlike Drake, the answer is then judged against the problem that was *posed*:

    * the first attempt whose z also passes :func:`check_lcp` on the original (M, q) is returned
      with ``converged=True`` (status names the regularisation used);
    * if no attempt solves the original problem, the first attempt that only solved its
      regularised problem is returned (Drake's answer), with ``converged=False`` and a status
      saying so; if none succeeded at all, z = 0.

    ``pivots`` is the total over all attempts; ``iterations`` is the number of attempts.
    """
    M, q = lcp_data(M, q)
    n = M.shape[0]
    zero_tol = check_tolerance(zero_tol, "zero_tol")
    piv_tol = check_tolerance(piv_tol, "piv_tol")
    for name, val in (("min_exp", min_exp), ("step_exp", step_exp), ("max_exp", max_exp)):
        if not float(val) == int(val):
            raise ValueError(f"{name} must be an integer")
    if int(step_exp) <= 0:
        raise ValueError("step_exp must be positive")
    if n == 0:
        return make_result(M, q, np.zeros(0), True, "solved (empty problem)", 0, 0)
    tol = zero_tol if zero_tol > 0 else moby_zero_tolerance(M)

    total_pivots = 0
    attempts = 0
    fallback = None
    schedule = [None] + list(range(int(min_exp), int(max_exp), int(step_exp)))
    for k in schedule:
        MM = M if k is None else M + (10.0 ** k) * np.eye(n)
        res = solve_lemke(MM, q, piv_tol=piv_tol, zero_tol=zero_tol)
        attempts += 1
        total_pivots += res.pivots
        label = "no regularisation" if k is None else f"regularisation 1e{k} I"
        if res.status.startswith("solved") or _moby_accepts(MM, q, res.z, tol):
            if check_lcp(M, q, res.z).ok:
                return make_result(M, q, res.z, True, f"solved with {label}",
                                   total_pivots, attempts)
            if fallback is None and _moby_accepts(MM, q, res.z, tol):
                fallback = (res.z, label)
    if fallback is not None:
        z, label = fallback
        return make_result(M, q, z, False,
                           f"only the regularised problem was solved ({label}); z does not "
                           f"solve the original LCP", total_pivots, attempts)
    return make_result(M, q, np.zeros(n), False,
                       "Lemke failed for every regularisation in the schedule",
                       total_pivots, attempts)
