"""Small dense LU factorisation with partial pivoting, for use inside Numba pivoting kernels.

P B = L U (Golub & Van Loan, Algorithm 3.4.1). Like LAPACK's getrf it does not stop at a zero
pivot: that column is left unscaled and a later solve divides by zero, giving inf/NaN, which
the pivoting kernels detect. This mirrors Drake's use of an LU without a singularity check.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit


@njit(cache=True, error_model="numpy")
def lu_factor(A, perm):  # pragma: no cover - compiled
    """Factor A in place (unit lower L below the diagonal, U on and above); perm[k] = row swapped
    with row k at step k."""
    n = A.shape[0]
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            if abs(A[i, k]) > big:
                big = abs(A[i, k])
                p = i
        perm[k] = p
        if p != k:
            for j in range(n):
                tmp = A[k, j]
                A[k, j] = A[p, j]
                A[p, j] = tmp
        pivot = A[k, k]
        if pivot != 0.0:
            for i in range(k + 1, n):
                A[i, k] /= pivot
                lik = A[i, k]
                if lik != 0.0:
                    for j in range(k + 1, n):
                        A[i, j] -= lik * A[k, j]


@njit(cache=True, error_model="numpy")
def lu_solve(LU, perm, b, out):  # pragma: no cover - compiled
    """out = B^-1 b from the factors of :func:`lu_factor`."""
    n = LU.shape[0]
    for i in range(n):
        out[i] = b[i]
    for k in range(n):
        p = perm[k]
        if p != k:
            tmp = out[k]
            out[k] = out[p]
            out[p] = tmp
    for i in range(n):
        s = out[i]
        for j in range(i):
            s -= LU[i, j] * out[j]
        out[i] = s
    for i in range(n - 1, -1, -1):
        s = out[i]
        for j in range(i + 1, n):
            s -= LU[i, j] * out[j]
        out[i] = s / LU[i, i]


@njit(cache=True, error_model="numpy")
def lu_solve_transposed(LU, perm, b, out):  # pragma: no cover - compiled
    """out = B^-T b (B^T = U^T L^T P): solve U^T s = b, L^T t = s, then out = P^T t."""
    n = LU.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= LU[j, i] * out[j]
        out[i] = s / LU[i, i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for j in range(i + 1, n):
            s -= LU[j, i] * out[j]
        out[i] = s
    for k in range(n - 1, -1, -1):
        p = perm[k]
        if p != k:
            tmp = out[k]
            out[k] = out[p]
            out[p] = tmp


def _selftest():  # used by the tests
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 6))
    b = rng.standard_normal(6)
    LU = A.copy()
    perm = np.zeros(6, dtype=np.int64)
    lu_factor(LU, perm)
    x = np.empty(6)
    y = np.empty(6)
    lu_solve(LU, perm, b, x)
    lu_solve_transposed(LU, perm, b, y)
    return A, b, x, y
