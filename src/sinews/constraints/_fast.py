"""Compiled kernels of the general constrained-dynamics path, and the façade of the compiled path.

Numba kernels, compiled lazily on first use and cached on disk.  Defined here:

* :func:`range_space` : the range-space solve of :mod:`sinews.constraints.range_space_sparse`
  (``H = L^T L`` with the core's branch-sparse kernels, ``K = Y^T Y``, a small Cholesky) in
  one call.  It returns a non-zero code instead of raising; the caller then takes the general
  Python path, which diagnoses singular and redundant systems.
* :func:`contact_system`: ``G``, ``gamma`` (Baumgarte included), ``H`` and ``tau - C`` of a
  contacts-only set (for the general path's solvers, when the one-call kernels hand over).

The rest of the compiled path lives in modules of its own and is re-exported here, so that
``from sinews.constraints import _fast as F; F.contact_range_space`` keeps working:

* :mod:`sinews.constraints._fast_rows`: contact rows ``G`` and ``gamma`` from a tree workspace;
* :mod:`sinews.constraints._fast_cholesky`: the small dense Cholesky solve of ``K mult = rhs``;
* :mod:`sinews.constraints._fast_packed`: the packed data layout (``P_*``), the flags
  (``F_*``) and the steps shared by the one-call kernels;
* :mod:`sinews.constraints._fast_range_space`: :func:`contact_range_space`, the whole
  range-space (and, by block elimination, direct) forward dynamics or impulse solve of a bound
  contacts-only set in one call (data packed by
  :class:`sinews.constraints._compiled_contacts.CompiledContacts`; the null-space kernel on the
  same data is :mod:`sinews.constraints._fast_null_space`).
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

from .. import _kernels as K
from ._fast_cholesky import small_cholesky_solve
from ._fast_rows import _rows_from_ws

# re-exported: the compiled path's other modules, under the names its importers use
from ._fast_packed import (
    F_FEXT,
    F_IMPULSE,
    F_ZERO_TARGET,
    P_ALPHA2,
    P_BOTTOM,
    P_C,
    P_CHAIN,
    P_COMMON,
    P_CPTR,
    P_G,
    P_GAMMA,
    P_H,
    P_HEADER,
    P_K,
    P_LAM,
    P_LINKS,
    P_MAXM,
    P_MI,
    P_N,
    P_NL,
    P_NPTS,
    P_NQ,
    P_NROWS,
    P_NS,
    P_NV,
    P_NWS,
    P_PPTR,
    P_RHS,
    P_RLINK,
    P_WS,
    P_Y,
    P_Z,
    P_ZERO,
    _result,
    _tree_and_rows,
    _zero_row_tol,
)
from ._fast_range_space import contact_range_space
from ._fast_rows import _chain_rows, _point_bias

__all__ = [  # what this module defines, then what it re-exports (the packed layout and flags
    # of _fast_packed, the one-call kernel and the steps the null-space kernel imports from here)
    "range_space", "contact_system", "contact_range_space",
    "F_FEXT", "F_IMPULSE", "F_ZERO_TARGET",
    "P_NQ", "P_NL", "P_NV", "P_NPTS", "P_NROWS", "P_MAXM",
    "P_MI", "P_LAM", "P_LINKS", "P_PPTR", "P_CPTR", "P_CHAIN", "P_COMMON",
    "P_RLINK", "P_N", "P_WS", "P_NWS",
    "P_ALPHA2", "P_BOTTOM", "P_G", "P_Y", "P_GAMMA", "P_H", "P_Z", "P_K", "P_RHS", "P_ZERO", "P_C",
    "P_NS", "P_HEADER",
    "_point_bias", "_chain_rows", "_tree_and_rows", "_zero_row_tol", "_result",
]


@njit(cache=True)
def range_space(H, lam, G, top, bottom, x, mult):
    """``H x = top + G^T mult``, ``G x = bottom`` by the range-space method.  Returns 0, 1 if
    ``H`` is not positive definite, 2 if ``G H^-1 G^T`` is (numerically) singular."""
    n = H.shape[0]
    c = G.shape[0]
    L = H.copy()
    if K.ltl_factor(L, lam) != 0:
        return 1
    # Y = (L^-T G^T)^T row by row.  A row of G is zero outside the supports of its bodies, and
    # L^-T only fills towards the root, so the solve skips zero entries and each row of Y keeps
    # the sparsity of the tree (nz lists its non-zero columns).
    Y = np.zeros((c, n))
    nz = np.empty((c, n), dtype=np.int64)
    nnz = np.zeros(c, dtype=np.int64)
    for a in range(c):
        y = Y[a]
        for i in range(n):
            y[i] = G[a, i]
        for i in range(n - 1, -1, -1):
            if y[i] == 0.0:
                continue
            y[i] /= L[i, i]
            yi = y[i]
            j = lam[i]
            while j >= 0:
                y[j] -= L[i, j] * yi
                j = lam[j]
        m = 0
        for i in range(n):
            if y[i] != 0.0:
                nz[a, m] = i
                m += 1
        nnz[a] = m
    z = top.copy()
    K.ltl_solve_lt(L, lam, z)
    Km = np.empty((c, c))
    rhs = np.empty(c)
    dmax = 0.0
    for a in range(c):
        s = 0.0
        for t in range(nnz[a]):
            i = nz[a, t]
            s += Y[a, i] * z[i]
        rhs[a] = bottom[a] - s
        for b in range(a + 1):
            s = 0.0
            for t in range(nnz[a]):
                i = nz[a, t]
                s += Y[a, i] * Y[b, i]
            Km[a, b] = s
        if Km[a, a] > dmax:
            dmax = Km[a, a]
    # K = C C^T (lower, in place), then C C^T mult = rhs
    if not small_cholesky_solve(Km, rhs, mult, dmax):
        return 2
    for i in range(n):
        x[i] = z[i]
    for a in range(c):
        ma = mult[a]
        for t in range(nnz[a]):
            i = nz[a, t]
            x[i] += Y[a, i] * ma
    K.ltl_solve_l(L, lam, x)
    return 0


@njit(cache=True)
def contact_system(q, v, tau, fext, fext_flag, mi, mf, ws, links, r_link, point_ptr, N, alpha2, G, gamma, H, rhs):
    """Contact rows (:func:`_rows_from_ws`) with the Baumgarte velocity terms
    ``gamma_r -= alpha2_r (G_r v)``, then ``H`` (CRBA) and ``rhs = tau - C(q, v, f_ext)``
    (RNEA with ``a = 0``).  Returns 0 or a negative input code (q, v, tau, f_ext)."""
    # CRBA first (it leaves world poses and S in ws), then one RNEA with gravity and f_ext for
    # C, whose link velocities and accelerations also give the contact bias accelerations
    nv = G.shape[1]
    zero = np.zeros(nv)
    code = K.check_inputs(q, v, zero, fext, fext_flag)
    if code == 0:
        code = K.check_q(q, mi)
    if code != 0:
        return code
    # one joint pass (world poses and velocities) serves both CRBA and RNEA
    K.joint_pass(q, v, mi, mf, ws, np.int64(3))
    K.crba_core(H, mi, mf, ws)
    C = np.empty(nv)
    K.rnea_core(zero, fext, C, mi, mf, ws, fext_flag)
    _rows_from_ws(mi, mf, ws, links, r_link, point_ptr, N, G, gamma)
    for r in range(G.shape[0]):
        if alpha2[r] != 0.0:
            s = 0.0
            for i in range(nv):
                s += G[r, i] * v[i]
            gamma[r] -= alpha2[r] * s
    for i in range(nv):
        rhs[i] = tau[i] - C[i]
    return 0
