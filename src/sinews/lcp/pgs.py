"""Projected Gauss-Seidel / successive over-relaxation (PGS/PSOR) for the LCP.

Problem: w = M z + q, z >= 0, w >= 0, z^T w = 0 (Cottle, Pang & Stone 1992, §5.2, the "projected
SOR" iteration of Cryer 1971; Siconos ``lcp_psor``; Erleben 2013 for its use in contact).

One sweep updates the unknowns in order i = 1..n, each with the latest values of the others:

    r_i  = (M z)_i + q_i                         (using the already updated z_1..z_{i-1})
    z_i <- max(0, z_i - omega * r_i / M_ii)

For symmetric positive definite M and 0 < omega < 2 the iterates converge to the unique solution
(CPS Theorem 5.2.11); for PSD M (and a solvable problem) the w-part converges. The stopping test is
the natural residual of the complementarity conditions,

    r(z) = max_i | min(z_i, w_i) |     (together with z >= 0, always true here),

checked after every sweep; it is zero exactly at a solution. The sweeps run in a Numba kernel
(compiled lazily on first use, cached on disk). An iterate that stops being finite (PGS diverges
on some non-PSD matrices) ends the sweeps; that is reported as a failure with z = 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from .._jit import njit

from ._validation import as_vector, count, lcp_data, nonnegative, real_number
from .result import LCPResult, make_result

__all__ = ["solve_pgs"]


@njit(cache=True)
def _pgs_sweeps(M, q, z, omega, tol, max_iter):  # pragma: no cover - compiled
    """Run PSOR sweeps on z in place; return (sweeps done, final natural residual).

    A non-finite iterate stops the sweeps with residual NaN."""
    n = q.shape[0]
    residual = np.inf
    for sweep in range(1, max_iter + 1):
        for i in range(n):
            r = q[i]
            for j in range(n):
                r += M[i, j] * z[j]
            zi = z[i] - omega * r / M[i, i]
            z[i] = zi if zi > 0.0 else 0.0
        residual = 0.0
        for i in range(n):
            w = q[i]
            for j in range(n):
                w += M[i, j] * z[j]
            if not (abs(z[i]) < np.inf and abs(w) < np.inf):   # inf or NaN: diverged
                return sweep, np.nan
            m = abs(min(z[i], w))
            if m > residual:
                residual = m
        if residual <= tol:
            return sweep, residual
    return max_iter, residual


def solve_pgs(M: ArrayLike, q: ArrayLike, z0: ArrayLike | None = None, *, omega: float = 1.0, tol: float = 1e-10,
              max_iter: int = 10_000) -> LCPResult:
    """Solve LCP(M, q) by projected Gauss-Seidel (omega = 1) or projected SOR.

    ``iterations`` is the number of sweeps; ``pivots`` is 0. A matrix with a non-positive diagonal
    entry cannot be swept, and an iterate can stop being finite (divergence); both are reported
    (converged=False, z = 0), not raised.

    Parameters
    ----------
    M : (n, n) array
        With a positive diagonal (symmetric positive (semi)definite for guaranteed convergence).
    q : (n,) array
    z0 : (n,) array, optional
        Starting point (projected onto z >= 0).
    omega : float
        Relaxation factor, 0 < omega < 2.
    tol : float
        Stop when max_i |min(z_i, w_i)| <= tol (a finite number >= 0). ``converged`` is
        judged, as for every solver, by :func:`check_lcp` with its default tolerance, so a
        ``tol`` looser than that stops early but is not reported as converged.
    max_iter : int
        Maximum number of sweeps (an integer >= 0).
    """
    M, q = lcp_data(M, q)
    n = M.shape[0]
    omega = real_number(omega, "omega")
    if not 0.0 < omega < 2.0:
        raise ValueError(f"omega must lie in (0, 2), got {omega}")
    tol = nonnegative(tol, "tol")
    max_iter = count(max_iter, "max_iter")
    z = np.zeros(n) if z0 is None else np.maximum(as_vector(z0, "z0", n), 0.0)
    if n == 0:
        return make_result(M, q, z, True, "solved (empty problem)", 0, 0)
    if np.any(np.diag(M) <= 0.0):
        return make_result(M, q, np.zeros(n), False,
                           "PGS needs a positive diagonal (M_ii <= 0 found)", 0, 0)
    M = np.ascontiguousarray(M)
    sweeps, residual = _pgs_sweeps(M, q, z, omega, tol, max_iter)
    if np.isnan(residual):
        return make_result(M, q, np.zeros(n), False,
                           f"PGS diverged: the iterate z or its w = M z + q stopped being "
                           f"finite after {sweeps} sweeps", 0, sweeps)
    if residual <= tol:
        return make_result(M, q, z, True,
                           f"solved (natural residual {residual:.3g} <= tol {tol:.3g})", 0,
                           sweeps)
    return make_result(M, q, z, False,
                       f"sweep limit reached ({sweeps} sweeps, natural residual {residual:.3g} "
                       f"> tol {tol:.3g})", 0, sweeps)

