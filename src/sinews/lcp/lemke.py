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

* revised style: an explicit n x n basis matrix B, each direction d = B^-1 a solved afresh by LU
  (the pivoting loop runs in a Numba kernel, compiled on first use and cached);
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

import numpy as np
from numpy.typing import ArrayLike
from .._jit import njit

from ._dense_lu import lu_factor, lu_solve, lu_solve_transposed
from ._validation import (as_matrix, as_vector, check_tolerance, count, flag, lcp_data,
                          regularisation_schedule, regularised)
from .result import EPS, LCPResult, _evaluate, make_result

__all__ = ["solve_lemke", "solve_lemke_regularized", "moby_zero_tolerance",
           "moby_pivot_tolerance"]


def moby_zero_tolerance(M: np.ndarray) -> float:
    """Drake's ``ComputeZeroTolerance``: n * max|M_ij| * 10 eps (M square and finite)."""
    return _zero_tolerance(as_matrix(M, "M", square=True))


def _zero_tolerance(M: np.ndarray) -> float:
    if M.size == 0:
        return 0.0
    return float(np.abs(M).max()) * (10.0 * EPS) * M.shape[0]


def moby_pivot_tolerance(M: np.ndarray) -> float:
    """Drake's default pivot tolerance: n * max(1, max|M_ij|) * eps (M square and finite)."""
    return _pivot_tolerance(as_matrix(M, "M", square=True))


def _pivot_tolerance(M: np.ndarray) -> float:
    big = float(np.abs(M).max()) if M.size else 0.0
    return max(1.0, big) * EPS * M.shape[0]


# Outcome codes of the pivoting kernel.
SOLVED = 0
SOLVED_AT_START = 1
PIVOT_LIMIT = 2
SINGULAR_BASIS = 3
RAY_TERMINATION = 4
NO_RATIO_CANDIDATE = 5


@njit(cache=True, error_model="numpy")
def _basis_column(M, var, out):  # pragma: no cover - compiled
    """Column of variable ``var`` in [I, -M, -d] (w_j -> e_j, z_j -> -M[:, j]); the artificial
    column is handled by the caller."""
    n = M.shape[0]
    if var < n:
        for i in range(n):
            out[i] = 0.0
        out[var] = 1.0
    else:
        for i in range(n):
            out[i] = -M[i, var - n]


#: the flag of _lexicographic_pick as typed values, not literals: a literal ``True``/``False`` or ``0``
#: argument makes Numba compile one specialisation per constant (four instead of one)
_TRUE = np.bool_(True)
_FALSE = np.bool_(False)


@njit(cache=True, error_model="numpy")
def _lexicographic_pick(LU, perm, ties, n_ties, direction, first_col, use_first_col):
    # pragma: no cover - compiled
    """Among rows ``ties[:n_ties]``, the lexicographic minimum of [first_col_i,] (B^-1)_i / d_i.

    Entries within 1e-11 (relative) of the running minimum count as equal."""
    n = LU.shape[0]
    rows = np.empty((n_ties, n + 1))
    e = np.zeros(n)
    y = np.empty(n)
    for t in range(n_ties):
        i = ties[t]
        e[i] = 1.0
        lu_solve_transposed(LU, perm, e, y)    # row i of B^-1
        e[i] = 0.0
        rows[t, 0] = first_col[i] if use_first_col else 0.0
        for j in range(n):
            rows[t, j + 1] = y[j] / direction[i]
    alive = np.ones(n_ties, dtype=np.bool_)
    n_alive = n_ties
    for k in range(n + 1):
        best = np.inf
        for t in range(n_ties):
            if alive[t] and rows[t, k] < best:
                best = rows[t, k]
        limit = best + 1e-11 * max(1.0, abs(best))
        n_alive = 0
        for t in range(n_ties):
            if alive[t]:
                if rows[t, k] <= limit:
                    n_alive += 1
                else:
                    alive[t] = False
        if n_alive == 1:
            break
    for t in range(n_ties):
        if alive[t]:
            return ties[t]
    return ties[0]


@njit(cache=True, error_model="numpy")
def _lemke_kernel(M, q, basis, x, zero_tol, piv_tol, lexicographic, max_pivots):
    # pragma: no cover - compiled
    """Lemke pivoting from the complementary basis ``basis`` (updated in place).

    On return x holds the basic values. Returns (code, pivots, entering variable at failure).
    """
    n = q.shape[0]
    art = 2 * n
    B = np.empty((n, n))
    col = np.empty(n)
    for r in range(n):
        _basis_column(M, basis[r], col)
        for i in range(n):
            B[i, r] = col[i]
    LU = B.copy()
    perm = np.empty(n, dtype=np.int64)
    lu_factor(LU, perm)
    lu_solve(LU, perm, q, x)
    xmin = np.inf
    for i in range(n):
        if not np.isfinite(x[i]):
            return SINGULAR_BASIS, 0, -1
        xmin = min(xmin, x[i])
    if xmin > -zero_tol or xmin >= 0.0:
        return SOLVED_AT_START, 0, -1

    # Covering vector: indicator of the negative basic values, in basis coordinates, so the
    # artificial column is cover = -B @ indicator and B^-1 cover = -indicator.
    indicator = np.zeros(n)
    strict = xmin < -zero_tol
    for i in range(n):
        if (strict and x[i] < -zero_tol) or ((not strict) and x[i] < 0.0):
            indicator[i] = 1.0
    cover = -(B @ indicator)

    # Initial pivot: the artificial variable enters and rises to -min x; that row leaves.
    ties = np.empty(n, dtype=np.int64)
    n_ties = 0
    r = 0
    for i in range(n):
        if x[i] < x[r]:
            r = i
    if lexicographic:
        for i in range(n):
            if indicator[i] > 0.0 and x[i] <= xmin + zero_tol:
                ties[n_ties] = i
                n_ties += 1
        if n_ties > 1:
            r = _lexicographic_pick(LU, perm, ties, np.int64(n_ties), indicator, x, _TRUE)
    ratio = -x[r]
    for i in range(n):
        x[i] += ratio * indicator[i]
    x[r] = ratio
    for i in range(n):
        B[i, r] = cover[i]
    leaving = basis[r]
    basis[r] = art
    pivots = 0
    direction = np.empty(n)

    while True:
        if leaving == art:
            return SOLVED, pivots, -1
        if pivots >= max_pivots:
            return PIVOT_LIMIT, pivots, -1
        entering = leaving + n if leaving < n else leaving - n
        _basis_column(M, entering, col)
        for i in range(n):
            for j in range(n):
                LU[i, j] = B[i, j]
        lu_factor(LU, perm)
        lu_solve(LU, perm, col, direction)
        for i in range(n):
            if not np.isfinite(direction[i]):
                return SINGULAR_BASIS, pivots, entering
        # Tolerant ratio test (Drake): theta = min (x_i + zero_tol) / d_i over d_i > piv_tol.
        theta = np.inf
        for i in range(n):
            if direction[i] > piv_tol:
                theta = min(theta, (x[i] + zero_tol) / direction[i])
        if theta == np.inf:
            return RAY_TERMINATION, pivots, entering
        n_ties = 0
        r = -1
        for i in range(n):
            if direction[i] > piv_tol and x[i] / direction[i] <= theta:
                ties[n_ties] = i
                n_ties += 1
                if basis[i] == art and r < 0:
                    r = i
        if n_ties == 0:
            return NO_RATIO_CANDIDATE, pivots, entering
        if r < 0:
            if lexicographic and n_ties > 1:
                r = _lexicographic_pick(LU, perm, ties, np.int64(n_ties), direction, x, _FALSE)
            else:
                r = ties[0]
        ratio = x[r] / direction[r]
        for i in range(n):
            x[i] -= ratio * direction[i]
        x[r] = ratio
        for i in range(n):
            B[i, r] = col[i]
        leaving = basis[r]
        basis[r] = entering
        pivots += 1


def _variable_name(var: int, n: int) -> str:
    if var == 2 * n:
        return "the artificial variable"
    return f"w[{var}]" if var < n else f"z[{var - n}]"


def _run_lemke(M: np.ndarray, q: np.ndarray, basis: np.ndarray, zero_tol: float,
               piv_tol: float, lexicographic: bool, max_pivots: int):
    """Run the kernel; return (solved, status, z, pivots, basis changes)."""
    n = q.shape[0]
    x = np.empty(n)
    code, pivots, var = _lemke_kernel(np.ascontiguousarray(M), q, basis, x, zero_tol, piv_tol,
                                      lexicographic, max_pivots)
    pivots = int(pivots)
    if code in (SOLVED, SOLVED_AT_START):
        z = np.zeros(n)
        zmask = (basis >= n) & (basis < 2 * n)
        z[basis[zmask] - n] = x[zmask]
        if not np.isfinite(z).all():
            return (False, "numerical overflow: the basic values are not finite", np.zeros(n),
                    pivots, pivots + 1)
        if code == SOLVED:
            return True, "solved", z, pivots, pivots + 1
        return True, "solved at the starting basis", z, 0, 0
    if code == PIVOT_LIMIT:
        status = f"pivot limit reached ({max_pivots} pivots; cycling?)"
    elif code == SINGULAR_BASIS:
        status = "basis matrix became singular (degenerate basis)"
    elif code == RAY_TERMINATION:
        status = f"ray termination: no blocking variable when {_variable_name(var, n)} enters"
    else:
        status = "ratio test found no candidate (zero tolerance too low?)"
    return False, status, np.zeros(n), pivots, pivots + 1


def solve_lemke(M: ArrayLike, q: ArrayLike, z0: ArrayLike | None = None, *, zero_tol: float = -1.0, piv_tol: float = -1.0,
                lexicographic: bool = False, max_pivots: int | None = None) -> LCPResult:
    """Solve LCP(M, q) with Lemke's method (Moby/Drake tolerances and tie rules).

    Parameters
    ----------
    M : (n, n) array
    q : (n,) array
    z0 : (n,) array, optional
        Warm start; the complementary basis {z_j : z0_j > 0} is tried first (if its
        basis matrix is singular the cold start is used).
    zero_tol, piv_tol : finite numbers; values <= 0 select Drake's defaults (module docstring).
    lexicographic : bool; break ratio-test ties lexicographically (anti-cycling). Termination
        is guaranteed from the cold start; a warm-start basis need not be lexicographically
        positive, so there the rule is a tie-breaker only (the pivot cap still applies).
    max_pivots : pivot limit (an integer >= 0, counted like ``pivots``), default
        min(1000, 50 n).

    Returns
    -------
    LCPResult
        ``pivots`` counts the pivots after the initial one that brings the artificial variable
        into the basis (Drake's count); ``iterations`` counts every basis change including that
        initial one (so iterations = pivots + 1 whenever pivoting started).
    """
    M, q = lcp_data(M, q)
    n = M.shape[0]
    zero_tol = check_tolerance(zero_tol, "zero_tol")
    piv_tol = check_tolerance(piv_tol, "piv_tol")
    lexicographic = flag(lexicographic, "lexicographic")
    max_pivots = min(1000, 50 * n) if max_pivots is None else count(max_pivots, "max_pivots")
    if z0 is not None:
        z0 = as_vector(z0, "z0", n)
    if zero_tol <= 0:
        zero_tol = _zero_tolerance(M)
    if piv_tol <= 0:
        piv_tol = _pivot_tolerance(M)
    if n == 0:
        return make_result(M, q, np.zeros(0), True, "solved (empty problem)", 0, 0)

    cold = np.arange(n, dtype=np.int64)
    basis = cold.copy()
    warm = False
    if z0 is not None and np.any(z0 > 0):
        guess = np.where(z0 > 0, np.arange(n) + n, np.arange(n)).astype(np.int64)
        Bg = np.zeros((n, n))
        for r, var in enumerate(guess):
            if var < n:
                Bg[var, r] = 1.0
            else:
                Bg[:, r] = -M[:, var - n]
        with np.errstate(all="ignore"):
            well_conditioned = np.linalg.cond(Bg) < 1.0 / EPS
        if well_conditioned:
            basis, warm = guess, True
    solved, status, z, pivots, changes = _run_lemke(M, q, basis, zero_tol, piv_tol,
                                                     lexicographic, max_pivots)
    if solved and changes == 0:
        status = ("solved from the warm-start basis" if warm
                  else "solved: trivial solution z = 0 (q >= 0)")
    return make_result(M, q, z, solved, status, pivots, changes)


def _moby_accepts(M: np.ndarray, q: np.ndarray, z: np.ndarray, tol: float) -> bool:
    """Drake's acceptance test of the regularised wrappers (absolute tolerances)."""
    with np.errstate(over="ignore", invalid="ignore"):
        w = M @ z + q
        zw = z * w
    return bool(z.min() >= -tol and w.min() >= -tol and np.all((zw >= -tol) & (zw < tol)))


def solve_lemke_regularized(M: ArrayLike, q: ArrayLike, *, min_exp: int = -20, step_exp: int = 4, max_exp: int = 20,
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
    The exponents are integers (``step_exp`` >= 1). Exponents whose 10^k underflows to 0 (k <
    -323) would repeat the unregularised attempt and are skipped; the schedule stops where 10^k
    or M + 10^k I overflows, and the status of a failure says so.
    """
    M, q = lcp_data(M, q)
    n = M.shape[0]
    zero_tol = check_tolerance(zero_tol, "zero_tol")
    piv_tol = check_tolerance(piv_tol, "piv_tol")
    exponents, note = regularisation_schedule(min_exp, step_exp, max_exp)
    if n == 0:
        return make_result(M, q, np.zeros(0), True, "solved (empty problem)", 0, 0)
    tol = zero_tol if zero_tol > 0 else _zero_tolerance(M)

    total_pivots = 0
    attempts = 0
    fallback = None
    for k in [None, *exponents]:
        MM = M if k is None else regularised(M, k)
        if MM is None:
            note = f"M + 1e{k} I overflows; the schedule stopped there"
            break
        solved, _, z, pivots, _ = _run_lemke(
            MM, q, np.arange(n, dtype=np.int64),
            zero_tol if zero_tol > 0 else _zero_tolerance(MM),
            piv_tol if piv_tol > 0 else _pivot_tolerance(MM),
            False, min(1000, 50 * n))
        attempts += 1
        total_pivots += pivots
        label = "no regularisation" if k is None else f"regularisation 1e{k} I"
        moby_ok = _moby_accepts(MM, q, z, tol)
        if solved or moby_ok:
            if _evaluate(M, q, z, None).ok:
                return make_result(M, q, z, True, f"solved with {label}",
                                   total_pivots, attempts)
            if fallback is None and moby_ok:
                fallback = (z, label)
    note = f" ({note})" if note else ""
    if fallback is not None:
        z, label = fallback
        return make_result(M, q, z, False,
                           f"only the regularised problem was solved ({label}); z does not "
                           f"solve the original LCP{note}", total_pivots, attempts)
    return make_result(M, q, np.zeros(n), False,
                       f"Lemke failed for every regularisation in the schedule{note}",
                       total_pivots, attempts)
