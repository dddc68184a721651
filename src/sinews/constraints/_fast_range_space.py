"""The one-call compiled range-space method of contacts-only sets (forward dynamics and impulses).

:func:`contact_range_space` is the whole range-space (and, by block elimination, direct)
forward dynamics or impulse solve of a bound contacts-only set in one call, on rows stored along
each contact point's support chain.  Its maths is that of
:mod:`sinews.constraints.range_space_sparse` (Featherstone, *Rigid Body Dynamics Algorithms*,
sec. 8.5 and 6.5: ``H = L^T L`` with the branch-induced sparsity of the tree): with
``Y = L^-T G^T``, ``K = Y^T Y = G H^-1 G^T``, the multipliers solve ``K mult = bottom - Y^T z``
(``z = L^-T top``) and ``x = L^-1 (z + Y mult)``.  The data are packed by
:class:`sinews.constraints._compiled_contacts.CompiledContacts` (layout and shared steps:
:mod:`sinews.constraints._fast_packed`); the null-space kernel on the same data is
:mod:`sinews.constraints._fast_null_space`.
"""

from __future__ import annotations

from .._jit import njit

from .. import _kernels as K
from .._layout import MI_STRIDE
from ._fast_cholesky import small_cholesky_solve
from ._fast_packed import (
    F_IMPULSE,
    P_ALPHA2,
    P_BOTTOM,
    P_C,
    P_CHAIN,
    P_COMMON,
    P_CPTR,
    P_G,
    P_GAMMA,
    P_H,
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


@njit(cache=True)
def contact_range_space(q, v, tau, fext, pi, mf, ps, x, mult, flags):
    """Forward dynamics (``flags & F_IMPULSE == 0``: ``v`` is the velocity) or impulses
    (``v`` is ``qd_minus``; the target ``G qd_plus`` is the bottom region of ``ps``, zeroed
    here with ``F_ZERO_TARGET``) of a contacts-only set by the range-space method, in one call:

    1. one joint pass (world poses, velocities), CRBA ``H`` and, for dynamics, RNEA for
       ``tau - C`` (gravity, ``f_ext`` with ``F_FEXT``) whose link accelerations give ``gamma``;
    2. the contact rows ``G`` on the support chains, Baumgarte terms ``gamma_r -= alpha2_r G_r v``;
    3. ``H = L^T L`` in place (branch-sparse), ``Y = L^-T G^T`` on the support chains of the
       points (rows of one point share their chain), ``K = Y^T Y`` only over common ancestors;
    4. ``z = L^-T (tau - C)`` (impulses: ``z = L qd_minus = L^-T H qd_minus``, no ``H v``),
       ``K mult = bottom - Y^T z`` by a small Cholesky, ``x = L^-1 (z + Y mult)``.

    Returns ``(code, residual, converged)``: code 0, a negative input code (-1 to -4: q, v,
    tau, f_ext not finite; -11 to -13: q, v, tau of the wrong length), 1 (``H`` not positive
    definite), 2 (redundant rows) or 3 (not finite): then the caller
    takes the general path, which diagnoses the system; ``residual = max |G x - bottom|``."""
    nl = pi[P_NL]
    nv = pi[P_NV]
    npts = pi[P_NPTS]
    n = pi[P_NROWS]
    mi = pi[pi[P_MI] : pi[P_MI] + nl * MI_STRIDE].reshape((nl, MI_STRIDE))
    lam = pi[pi[P_LAM] : pi[P_LAM] + nv]
    links = pi[pi[P_LINKS] : pi[P_LINKS] + npts]
    pptr = pi[pi[P_PPTR] : pi[P_PPTR] + npts + 1]
    cptr = pi[pi[P_CPTR] : pi[P_CPTR] + npts + 1]
    chain = pi[pi[P_CHAIN] : pi[P_CHAIN] + cptr[npts]]
    common = pi[pi[P_COMMON] : pi[P_COMMON] + npts * npts]
    r_link = ps[pi[P_RLINK] : pi[P_RLINK] + 3 * npts].reshape((npts, 3))
    N = ps[pi[P_N] : pi[P_N] + 3 * n].reshape((n, 3))
    ws = ps[pi[P_WS] : pi[P_WS] + pi[P_NWS]]
    alpha2 = ps[pi[P_ALPHA2] : pi[P_ALPHA2] + n]
    bottom = ps[pi[P_BOTTOM] : pi[P_BOTTOM] + n]
    mm = pi[P_MAXM]
    G = ps[pi[P_G] : pi[P_G] + n * mm].reshape((n, mm))
    Y = ps[pi[P_Y] : pi[P_Y] + n * mm].reshape((n, mm))
    gamma = ps[pi[P_GAMMA] : pi[P_GAMMA] + n]
    L = ps[pi[P_H] : pi[P_H] + nv * nv].reshape((nv, nv))
    z = ps[pi[P_Z] : pi[P_Z] + nv]
    Km = ps[pi[P_K] : pi[P_K] + n * n].reshape((n, n))
    rhs = ps[pi[P_RHS] : pi[P_RHS] + n]
    zero = ps[pi[P_ZERO] : pi[P_ZERO] + nv]
    C = ps[pi[P_C] : pi[P_C] + nv]

    if q.shape[0] != pi[P_NQ]:
        return -11, 0.0, False
    if v.shape[0] != nv:
        return -12, 0.0, False
    if tau.shape[0] != nv:
        return -13, 0.0, False
    impulse = (flags & F_IMPULSE) != 0
    code = _tree_and_rows(q, v, tau, fext, flags, mi, mf, ws, L, C, zero, links, r_link, pptr, N,
                          cptr, chain, G, Y, gamma, alpha2, bottom)
    if code != 0:
        return code, 0.0, False
    # a row that is zero up to rounding (a point on the axis of its only joint) is singular:
    # the general path diagnoses it (same test as sinews.constraints._linalg.zero_tiny_rows)
    tiny = _zero_row_tol(G, pptr, cptr)
    for p in range(npts):
        for r in range(pptr[p], pptr[p + 1]):
            rmax = 0.0
            for t in range(cptr[p + 1] - cptr[p]):
                if abs(G[r, t]) > rmax:
                    rmax = abs(G[r, t])
            if not rmax > tiny:
                return 2, 0.0, False
    # H = L^T L in place
    if K.ltl_factor(L, lam) != 0:
        return 1, 0.0, False
    # Y <- L^-T G^T on each point's chain, deepest dof first: the descendants of chain[t] on
    # the chain are chain[:t] (L^-T only fills towards the root), so in dot-product form
    # Y[r, t] = (G[r, t] - sum_{u < t} L[chain[u], chain[t]] Y[r, u]) / L[chain[t], chain[t]]
    for p in range(npts):
        r0 = pptr[p]
        r1 = pptr[p + 1]
        c0 = cptr[p]
        m = cptr[p + 1] - c0
        if r1 - r0 == 3:  # three normals: three accumulators share each L entry
            for t in range(m):
                i = chain[c0 + t]
                s0 = Y[r0, t]
                s1 = Y[r0 + 1, t]
                s2 = Y[r0 + 2, t]
                for u in range(t):
                    l = L[chain[c0 + u], i]
                    s0 -= l * Y[r0, u]
                    s1 -= l * Y[r0 + 1, u]
                    s2 -= l * Y[r0 + 2, u]
                dinv = 1.0 / L[i, i]
                Y[r0, t] = s0 * dinv
                Y[r0 + 1, t] = s1 * dinv
                Y[r0 + 2, t] = s2 * dinv
        else:
            for r in range(r0, r1):
                for t in range(m):
                    i = chain[c0 + t]
                    s = Y[r, t]
                    for u in range(t):
                        s -= L[chain[c0 + u], i] * Y[r, u]
                    Y[r, t] = s / L[i, i]
    # z
    if impulse:
        for i in range(nv - 1, -1, -1):  # z = L v (row i of L: i and its ancestors)
            s = L[i, i] * v[i]
            j = lam[i]
            while j >= 0:
                s += L[i, j] * v[j]
                j = lam[j]
            z[i] = s
    else:
        for i in range(nv):
            z[i] = tau[i] - C[i]
        K.ltl_solve_lt(L, lam, z)
    # K = Y Y^T (lower triangle): the chains of points p and q share their last common[p, q]
    # dofs (the path from their deepest common ancestor dof to the root), in the same order.
    # Points with three rows (3-D contacts) take 3 x 3 blocks with one pass over the chains.
    dmax = 0.0
    for p in range(npts):
        c0 = cptr[p]
        m = cptr[p + 1] - c0
        a0 = pptr[p]
        a1 = pptr[p + 1]
        for a in range(a0, a1):
            s = 0.0
            for t in range(m):
                s += Y[a, t] * z[chain[c0 + t]]
            rhs[a] = bottom[a] - s
        for q2 in range(p + 1):
            cnt = common[p * npts + q2]
            ta = m - cnt
            tb = cptr[q2 + 1] - cptr[q2] - cnt
            b0 = pptr[q2]
            if a1 - a0 == 3 and pptr[q2 + 1] - b0 == 3:
                k00 = 0.0
                k01 = 0.0
                k02 = 0.0
                k10 = 0.0
                k11 = 0.0
                k12 = 0.0
                k20 = 0.0
                k21 = 0.0
                k22 = 0.0
                for u in range(cnt):
                    ya0 = Y[a0, ta + u]
                    ya1 = Y[a0 + 1, ta + u]
                    ya2 = Y[a0 + 2, ta + u]
                    yb0 = Y[b0, tb + u]
                    yb1 = Y[b0 + 1, tb + u]
                    yb2 = Y[b0 + 2, tb + u]
                    k00 += ya0 * yb0
                    k01 += ya0 * yb1
                    k02 += ya0 * yb2
                    k10 += ya1 * yb0
                    k11 += ya1 * yb1
                    k12 += ya1 * yb2
                    k20 += ya2 * yb0
                    k21 += ya2 * yb1
                    k22 += ya2 * yb2
                Km[a0, b0] = k00
                Km[a0 + 1, b0] = k10
                Km[a0 + 1, b0 + 1] = k11
                Km[a0 + 2, b0] = k20
                Km[a0 + 2, b0 + 1] = k21
                Km[a0 + 2, b0 + 2] = k22
                if q2 < p:
                    Km[a0, b0 + 1] = k01
                    Km[a0, b0 + 2] = k02
                    Km[a0 + 1, b0 + 2] = k12
                continue
            for a in range(a0, a1):
                bend = pptr[q2 + 1] if q2 < p else a + 1
                for b in range(b0, bend):
                    s = 0.0
                    for u in range(cnt):
                        s += Y[a, ta + u] * Y[b, tb + u]
                    Km[a, b] = s
        for a in range(a0, a1):
            if Km[a, a] > dmax:
                dmax = Km[a, a]
    # K = C C^T (lower, in place), then C C^T mult = rhs
    if not small_cholesky_solve(Km, rhs, mult, dmax):
        return 2, 0.0, False
    # x = L^-1 (z + Y mult)
    for i in range(nv):
        x[i] = z[i]
    for p in range(npts):
        c0 = cptr[p]
        for a in range(pptr[p], pptr[p + 1]):
            ma = mult[a]
            for t in range(cptr[p + 1] - c0):
                x[chain[c0 + t]] += Y[a, t] * ma
    K.ltl_solve_l(L, lam, x)
    return _result(G, x, mult, bottom, pptr, cptr, chain, nv, n)
