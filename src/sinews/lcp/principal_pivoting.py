"""Principal pivoting for PSD LCPs, after Drake's ``MobyLcpSolver::SolveLcpFast``.

Problem: w = M z + q, z >= 0, w >= 0, z^T w = 0, intended for M = P A P^T with A positive
definite and q in the range of P (contact Delassus matrices are of this kind).

The method (Drumwright, arXiv 1504.00719; a descendant of Dantzig-Cottle principal pivoting,
Cottle, Pang & Stone 1992, §4.1) keeps an *active set* A of indices with z_A > 0 and w_A = 0 and
an inactive set I with z_I = 0. Each iteration solves the principal sub-system

    M_AA z_A = -q_A,      w_I = M_IA z_A + q_I,

and then

* if min w_I > -tol and min z_A >= -tol: (z, w) solves the LCP;
* if min w_I > -tol but some z_A < -tol: the most negative z leaves A;
* otherwise the most negative w_I joins A, and (in the same iteration) the most negative z_A,
  if below -tol, leaves A.

Cold start: z = 0 if min q > -tol, else A = {argmin q}. Warm start: A = {i : |z0_i| >= tol}.
At most ``max_iter`` (default 2n) iterations. Sub-systems are solved by partial-pivot LU without a
singularity check, as in Drake: a singular M_AA gives IEEE infinities and the iteration goes on
(Drake's test problem 3 is solved that way). On failure z = 0.

``tol`` = ``zero_tol`` when >= 0 (0 is honoured, as in Drake), else n * max|M_ij| * 10 eps.

``drake_compat=True`` reproduces Drake's outcomes when an index is added and another dropped in
the same iteration (see :func:`solve_principal_pivoting`); docs/lcp.md, deviation 8.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import lapack

from ._validation import (as_vector, check_tolerance, count, flag, lcp_data,
                          regularisation_schedule, regularised)
from .lemke import _zero_tolerance
from .result import LCPResult, _evaluate, make_result

__all__ = ["solve_principal_pivoting", "solve_principal_pivoting_regularized"]


def _solve_block(M_AA: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Partial-pivot LU solve without a singularity check (LAPACK getrf/getrs directly: a zero
    pivot gives inf/NaN, and no warning is issued, so no process-wide warning filter has to be
    changed, which would not be thread-safe)."""
    lu, piv, _ = lapack.dgetrf(M_AA)
    x, _ = lapack.dgetrs(lu, piv, rhs)
    return x


def solve_principal_pivoting(M: ArrayLike, q: ArrayLike, z0: ArrayLike | None = None, *, zero_tol: float = -1.0,
                             max_iter: int | None = None,
                             drake_compat: bool = False) -> LCPResult:
    """Solve LCP(M, q) by principal pivoting (Drake's "fast" solver); best for PSD M.

    ``M`` (n, n), ``q`` (n,), optional warm start ``z0`` (n,).

    ``drake_compat=True`` reproduces the way Drake's outcomes behave when an index is added and
    another dropped in the same iteration: the index dropped is the one found at the *position*
    the most negative z had before the new index was inserted into the sorted list. That
    position can point to another index, even to the one just added. With it, Drake's test
    problem 1 fails and the regularised variant returns 0.5 at alpha = 1, exactly as Drake's
    tests expect (drake.md §4.5). The rule was inferred from those outcomes, not read from
    Drake's source. The default drops the index of the most negative z, as the method intends.

    ``pivots`` counts active-set changes (additions and removals); ``iterations`` the sub-system
    solves. A non-convergent run (possible for non-PSD M) is reported with z = 0.
    ``zero_tol`` is a finite number (negative: the default), ``max_iter`` an integer >= 0
    (default 2n), ``drake_compat`` a bool.
    """
    M, q = lcp_data(M, q)
    n = M.shape[0]
    zero_tol = check_tolerance(zero_tol, "zero_tol")
    max_iter = 2 * n if max_iter is None else count(max_iter, "max_iter")
    drake_compat = flag(drake_compat, "drake_compat")
    if z0 is not None:
        z0 = as_vector(z0, "z0", n)
    tol = zero_tol if zero_tol >= 0 else _zero_tolerance(M)
    if n == 0:
        return make_result(M, q, np.zeros(0), True, "solved (empty problem)", 0, 0)

    pivots = 0
    if z0 is not None:
        active = sorted(np.flatnonzero(np.abs(z0) >= tol).tolist())
    else:
        active = []
    if not active:
        if q.min() > -tol or q.min() >= 0.0:
            return make_result(M, q, np.zeros(n), True, "solved: trivial solution z = 0 (q >= 0)",
                               0, 0)
        active = [int(np.argmin(q))]
        pivots = 1

    for it in range(1, max_iter + 1):
        A = np.array(active, dtype=int)
        inactive = np.setdiff1d(np.arange(n), A)
        z_A = _solve_block(M[np.ix_(A, A)], -q[A])
        with np.errstate(all="ignore"):
            w_I = M[np.ix_(inactive, A)] @ z_A + q[inactive] if inactive.size else np.zeros(0)
            w_ok = inactive.size == 0 or w_I.min() > -tol
            z_min_pos = int(np.argmin(z_A)) if z_A.size else -1
            z_ok = z_A.size == 0 or not (z_A[z_min_pos] < -tol)
        if w_ok:
            if z_ok:
                if not np.all(np.isfinite(z_A)):
                    return make_result(M, q, np.zeros(n), False,
                                       "singular principal sub-matrix gave a non-finite z",
                                       pivots, it)
                z = np.zeros(n)
                z[A] = z_A
                return make_result(M, q, z, True, "solved", pivots, it)
            active.remove(int(A[z_min_pos]))
            pivots += 1
        else:
            active.append(int(inactive[int(np.nanargmin(w_I)) if np.any(np.isfinite(w_I))
                                       else 0]))
            pivots += 1
            active.sort()
            if z_A.size and z_A[z_min_pos] < -tol:
                if drake_compat:
                    active.pop(z_min_pos)       # stale position (see the docstring)
                else:
                    active.remove(int(A[z_min_pos]))
                pivots += 1
        if not active:
            # Everything dropped: z = 0 is the candidate of the next iteration.
            if q.min() > -tol or q.min() >= 0.0:
                return make_result(M, q, np.zeros(n), True, "solved", pivots, it)
            active = [int(np.argmin(q))]
    return make_result(M, q, np.zeros(n), False,
                       f"iteration limit reached ({max_iter} principal pivoting iterations)",
                       pivots, max_iter)


def solve_principal_pivoting_regularized(M: ArrayLike, q: ArrayLike, *, min_exp: int = -20, step_exp: int = 4,
                                         max_exp: int = 20, zero_tol: float = -1.0,
                                         drake_compat: bool = False) -> LCPResult:
    """``SolveLcpFastRegularized``: principal pivoting on M, then on M + 10^k I.

    The schedule and the reporting follow :func:`sinews.lcp.solve_lemke_regularized`: the first
    attempt whose z solves the *original* problem is returned as converged; an answer that only
    solves a regularised problem is returned with ``converged=False``. The exponents are
    integers (``step_exp`` >= 1); underflowing and overflowing regularisations are handled as
    there.
    """
    M, q = lcp_data(M, q)
    n = M.shape[0]
    zero_tol = check_tolerance(zero_tol, "zero_tol")
    drake_compat = flag(drake_compat, "drake_compat")
    exponents, note = regularisation_schedule(min_exp, step_exp, max_exp)
    if n == 0:
        return make_result(M, q, np.zeros(0), True, "solved (empty problem)", 0, 0)
    total_pivots = 0
    attempts = 0
    fallback = None
    for k in [None, *exponents]:
        MM = M if k is None else regularised(M, k)
        if MM is None:
            note = f"M + 1e{k} I overflows; the schedule stopped there"
            break
        res = solve_principal_pivoting(MM, q, zero_tol=zero_tol, drake_compat=drake_compat)
        attempts += 1
        total_pivots += res.pivots
        label = "no regularisation" if k is None else f"regularisation 1e{k} I"
        if res.converged:
            if _evaluate(M, q, res.z, None).ok:
                return make_result(M, q, res.z, True, f"solved with {label}", total_pivots,
                                   attempts)
            if fallback is None:
                fallback = (res.z, label)
    note = f" ({note})" if note else ""
    if fallback is not None:
        z, label = fallback
        return make_result(M, q, z, False,
                           f"only the regularised problem was solved ({label}); z does not "
                           f"solve the original LCP{note}", total_pivots, attempts)
    return make_result(M, q, np.zeros(n), False,
                       f"principal pivoting failed for every regularisation in the schedule"
                       f"{note}", total_pivots, attempts)
