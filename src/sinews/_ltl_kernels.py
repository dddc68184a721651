"""Numba kernels of the branch-sparse L^T L factorisation over the compiled model arrays (``mi``,
``mf``) and a workspace (``ws``); see :mod:`sinews._joint_pass` for the design.  Equations and
sources are stated in the public module (``sinews.ltl``)."""

import math

from ._jit import njit


# ----------------------------------------------------------------------------------------------
# Branch-sparse L^T L factorisation (Featherstone, RBDA section 6.5)


@njit(cache=True)
def ltl_factor(H, lam):
    """In place: H = L^T L with L lower triangular and the sparsity of the tree (``lam`` is the
    parent of each dof, -1 at a root).  Returns 0, or 1 + the dof whose pivot is not positive."""
    n = H.shape[0]
    for k in range(n - 1, -1, -1):
        d = H[k, k]
        if not d > 0.0:
            return k + 1
        d = math.sqrt(d)
        H[k, k] = d
        i = lam[k]
        while i >= 0:
            H[k, i] /= d
            i = lam[i]
        i = lam[k]
        while i >= 0:
            j = i
            hki = H[k, i]
            while j >= 0:
                H[i, j] -= hki * H[k, j]
                j = lam[j]
            i = lam[i]
    return 0


@njit(cache=True)
def ltl_solve_lt(L, lam, x):
    """In place x <- L^-T x."""
    n = L.shape[0]
    for i in range(n - 1, -1, -1):
        x[i] /= L[i, i]
        j = lam[i]
        xi = x[i]
        while j >= 0:
            x[j] -= L[i, j] * xi
            j = lam[j]


@njit(cache=True)
def ltl_solve_l(L, lam, x):
    """In place x <- L^-1 x."""
    n = L.shape[0]
    for i in range(n):
        j = lam[i]
        acc = x[i]
        while j >= 0:
            acc -= L[i, j] * x[j]
            j = lam[j]
        x[i] = acc / L[i, i]
