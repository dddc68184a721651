"""The small dense Cholesky solve of the compiled range-space kernels.

Both range-space kernels (:func:`sinews.constraints._fast.range_space` and
:func:`sinews.constraints._fast_range_space.contact_range_space`) end with the constraint-space
system ``K mult = rhs``, ``K = Y Y^T = G H^-1 G^T`` (``c x c``, ``c`` the number of rows, small).
:func:`small_cholesky_solve` factors ``K = C C^T`` in place (lower triangle) and solves
``C y = rhs``, ``C^T mult = y`` (Golub & Van Loan, *Matrix Computations*, 4th ed., alg. 4.2.1).
A pivot ``s`` with ``not s > CHOL_RTOL max_a K_aa`` marks ``K`` singular (redundant rows): the
same test as the general path's (``sinews.constraints._linalg``), so both decide alike.
"""

from __future__ import annotations

import math

from .._jit import njit

from ._linalg import CHOL_RTOL as _CHOL_RTOL  # the singularity tests of the general path


@njit(inline="always", cache=True)
def small_cholesky_solve(Km, rhs, mult, dmax):
    """``K mult = rhs`` for the lower triangle of ``Km`` (overwritten by ``C``, ``K = C C^T``);
    ``dmax`` is the largest diagonal entry of ``K``.  Returns False (``mult`` undefined) when a
    pivot fails the singularity test, True otherwise.  Inlined: no call, no array allocation."""
    c = Km.shape[0]
    for j in range(c):
        s = Km[j, j]
        for k in range(j):
            s -= Km[j, k] * Km[j, k]
        if not s > _CHOL_RTOL * dmax:
            return False
        d = math.sqrt(s)
        Km[j, j] = d
        for i in range(j + 1, c):
            s = Km[i, j]
            for k in range(j):
                s -= Km[i, k] * Km[j, k]
            Km[i, j] = s / d
    for i in range(c):  # C y = rhs
        s = rhs[i]
        for k in range(i):
            s -= Km[i, k] * mult[k]
        mult[i] = s / Km[i, i]
    for i in range(c - 1, -1, -1):  # C^T mult = y
        s = mult[i]
        for k in range(i + 1, c):
            s -= Km[k, i] * mult[k]
        mult[i] = s / Km[i, i]
    return True
