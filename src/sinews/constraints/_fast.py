"""Compiled fast paths (Numba, compiled lazily on first use and cached on disk).

* :func:`range_space` : the range-space solve of :mod:`sinews.constraints.range_space_sparse`
  (``H = L^T L`` with the core's branch-sparse kernels, ``K = Y^T Y``, a small Cholesky) in
  one call.  It returns a non-zero code instead of raising; the caller then takes the general
  Python path, which diagnoses singular and redundant systems.
* :func:`contact_system`: ``G``, ``gamma`` (Baumgarte included), ``H`` and ``tau - C`` of a
  contacts-only set (for the general path's solvers, when the one-call kernels hand over).
* :func:`contact_range_space`: the whole range-space (and, by block elimination, direct)
  forward dynamics or impulse solve of a bound contacts-only set in one call, on rows stored
  along each contact point's support chain (data packed by
  :class:`sinews.constraints._compiled_contacts.CompiledContacts`; the null-space kernel on the
  same data is :mod:`sinews.constraints._fast_null_space`).
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

from .. import _kernels as K
from .._layout import MI_IV, MI_NV, MI_PARENT, MI_STRIDE, WS_A, WS_OP, WS_OR, WS_STRIDE, WS_V
from ._linalg import CHOL_RTOL as _CHOL_RTOL  # the singularity tests of the general path
from ._linalg import ZERO_ROW_RTOL


@njit(inline="always", cache=True)
def _point_bias(ws, w, r0, r1, r2, g0, g1, g2, with_gamma):
    """World position ``x`` of the point at link coordinates ``r`` on the link whose workspace
    block starts at ``w``, and, with ``with_gamma``, its velocity-product acceleration
    ``a = a_o + alpha x d + omega x (v_o + omega x d)`` (``d = x - o``) from the link's RNEA
    velocity and acceleration at ``qdd = 0`` plus ``g`` (the RNEA base acceleration ``[0; -g]``
    reaches every link as a pure linear ``-g``); ``a = 0`` otherwise.  Inlined: the workspace
    is read in place."""
    o00 = ws[w + WS_OR + 0]
    o01 = ws[w + WS_OR + 1]
    o02 = ws[w + WS_OR + 2]
    o10 = ws[w + WS_OR + 3]
    o11 = ws[w + WS_OR + 4]
    o12 = ws[w + WS_OR + 5]
    o20 = ws[w + WS_OR + 6]
    o21 = ws[w + WS_OR + 7]
    o22 = ws[w + WS_OR + 8]
    d0 = o00 * r0 + o01 * r1 + o02 * r2
    d1 = o10 * r0 + o11 * r1 + o12 * r2
    d2 = o20 * r0 + o21 * r1 + o22 * r2
    x0 = d0 + ws[w + WS_OP]
    x1 = d1 + ws[w + WS_OP + 1]
    x2 = d2 + ws[w + WS_OP + 2]
    if not with_gamma:
        return x0, x1, x2, 0.0, 0.0, 0.0
    vl0 = ws[w + WS_V + 0]
    vl1 = ws[w + WS_V + 1]
    vl2 = ws[w + WS_V + 2]
    vl3 = ws[w + WS_V + 3]
    vl4 = ws[w + WS_V + 4]
    vl5 = ws[w + WS_V + 5]
    al0 = ws[w + WS_A + 0]
    al1 = ws[w + WS_A + 1]
    al2 = ws[w + WS_A + 2]
    al3 = ws[w + WS_A + 3]
    al4 = ws[w + WS_A + 4]
    al5 = ws[w + WS_A + 5]
    om0 = o00 * vl0 + o01 * vl1 + o02 * vl2
    om1 = o10 * vl0 + o11 * vl1 + o12 * vl2
    om2 = o20 * vl0 + o21 * vl1 + o22 * vl2
    vo0 = o00 * vl3 + o01 * vl4 + o02 * vl5
    vo1 = o10 * vl3 + o11 * vl4 + o12 * vl5
    vo2 = o20 * vl3 + o21 * vl4 + o22 * vl5
    aw0 = o00 * al0 + o01 * al1 + o02 * al2
    aw1 = o10 * al0 + o11 * al1 + o12 * al2
    aw2 = o20 * al0 + o21 * al1 + o22 * al2
    ao0 = o00 * al3 + o01 * al4 + o02 * al5
    ao1 = o10 * al3 + o11 * al4 + o12 * al5
    ao2 = o20 * al3 + o21 * al4 + o22 * al5
    c0 = om1 * d2 - om2 * d1
    c1 = om2 * d0 - om0 * d2
    c2 = om0 * d1 - om1 * d0
    u0 = vo0 + c0
    u1 = vo1 + c1
    u2 = vo2 + c2
    a0 = ao0 + g0 + (aw1 * d2 - aw2 * d1) + (om1 * u2 - om2 * u1)
    a1 = ao1 + g1 + (aw2 * d0 - aw0 * d2) + (om2 * u0 - om0 * u2)
    a2 = ao2 + g2 + (aw0 * d1 - aw1 * d0) + (om0 * u1 - om1 * u0)
    return x0, x1, x2, a0, a1, a2


@njit(cache=True)
def _rows_from_ws(mi, mf, ws, links, r_link, point_ptr, N, G, gamma):
    """Dense contact rows ``G`` (zeroed here) and ``gamma`` from a workspace holding world
    poses, S, and the link velocities and accelerations at ``qdd = 0`` of an RNEA run with the
    model's gravity (bias accelerations by :func:`_point_bias`).  The workspace is indexed
    directly (no array slices: they cost reference counting)."""
    G[:, :] = 0.0
    nl = mi.shape[0]
    s_off = nl * WS_STRIDE
    for p in range(links.shape[0]):
        k = links[p]
        r0 = point_ptr[p]
        r1 = point_ptr[p + 1]
        if k < 0:
            for r in range(r0, r1):
                gamma[r] = 0.0
            continue
        x0, x1, x2, a0, a1, a2 = _point_bias(ws, k * WS_STRIDE, r_link[p, 0], r_link[p, 1], r_link[p, 2],
                                             mf[0], mf[1], mf[2], True)
        for r in range(r0, r1):
            gamma[r] = -(N[r, 0] * a0 + N[r, 1] * a1 + N[r, 2] * a2)
        # support-chain Jacobian of the point's linear velocity
        l = k
        while l >= 0:
            wl = l * WS_STRIDE
            l00 = ws[wl + WS_OR + 0]
            l01 = ws[wl + WS_OR + 1]
            l02 = ws[wl + WS_OR + 2]
            l10 = ws[wl + WS_OR + 3]
            l11 = ws[wl + WS_OR + 4]
            l12 = ws[wl + WS_OR + 5]
            l20 = ws[wl + WS_OR + 6]
            l21 = ws[wl + WS_OR + 7]
            l22 = ws[wl + WS_OR + 8]
            e0 = x0 - ws[wl + WS_OP]
            e1 = x1 - ws[wl + WS_OP + 1]
            e2 = x2 - ws[wl + WS_OP + 2]
            iv = mi[l, MI_IV]
            for i in range(mi[l, MI_NV]):
                so = s_off + 6 * (iv + i)
                sw0 = l00 * ws[so] + l01 * ws[so + 1] + l02 * ws[so + 2]
                sw1 = l10 * ws[so] + l11 * ws[so + 1] + l12 * ws[so + 2]
                sw2 = l20 * ws[so] + l21 * ws[so + 1] + l22 * ws[so + 2]
                j0 = l00 * ws[so + 3] + l01 * ws[so + 4] + l02 * ws[so + 5] + sw1 * e2 - sw2 * e1
                j1 = l10 * ws[so + 3] + l11 * ws[so + 4] + l12 * ws[so + 5] + sw2 * e0 - sw0 * e2
                j2 = l20 * ws[so + 3] + l21 * ws[so + 4] + l22 * ws[so + 5] + sw0 * e1 - sw1 * e0
                for r in range(r0, r1):
                    G[r, iv + i] = N[r, 0] * j0 + N[r, 1] * j1 + N[r, 2] * j2
            l = mi[l, MI_PARENT]


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
    # Cholesky K = C C^T (lower, in place)
    for j in range(c):
        s = Km[j, j]
        for k in range(j):
            s -= Km[j, k] * Km[j, k]
        if not s > _CHOL_RTOL * dmax:
            return 2
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


# ----------------------------------------------------------------------------------------------
# The one-call compiled range-space path of contacts-only sets (forward dynamics and impulses).
# Its arrays are packed by sinews.constraints._compiled_contacts.CompiledContacts: ``pi`` (int64,
# static: model topology and the contact layout) and ``ps`` (float64, one per workspace: the
# contact points and normals, a private tree workspace and the solver's scratch); the model's
# mf is passed as it is (gravity can change after binding).  Numba's call dispatch costs about
# 0.1 us per array argument, so the call takes 10.

# pi header: sizes, then offsets of the int regions in pi and of the float regions in ps
P_NQ, P_NL, P_NV, P_NPTS, P_NROWS = 0, 1, 2, 3, 4
P_MAXM = 5  # longest support chain: G and Y are stored per row along its point's chain
P_MI, P_LAM, P_LINKS, P_PPTR, P_CPTR, P_CHAIN, P_COMMON = 6, 7, 8, 9, 10, 11, 12
P_RLINK, P_N, P_WS, P_NWS = 13, 14, 15, 16
P_ALPHA2, P_BOTTOM, P_G, P_Y, P_GAMMA, P_H, P_Z, P_K, P_RHS, P_ZERO, P_C = 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27
P_NS = 28  # scratch of the null-space kernel (sinews.constraints._fast_null_space)
P_HEADER = 29

# flags
F_FEXT, F_IMPULSE, F_ZERO_TARGET = 1, 2, 4


@njit(cache=True)
def _chain_rows(mi, mf, ws, nv, links, r_link, pptr, N, cptr, chain, G, Y, gamma, with_gamma):
    """Contact rows on the support chains, stored along the chain:
    ``G[r, t] = Y[r, t] = n_r . (v_O,i + w_i x x_p)`` for the dof ``i = chain[cptr[p] + t]`` of
    the chain of point ``p`` (world-axes motion subspaces ``[w; v_O]`` at the world origin, left
    in the U region by :func:`sinews._kernels.crba_core`); the other columns of ``G`` are zero.
    With ``with_gamma``: ``gamma_r = -n_r . a_p`` with the bias acceleration ``a_p`` of
    :func:`_point_bias`."""
    nl = mi.shape[0]
    s0 = nl * WS_STRIDE + 6 * nv
    g0 = mf[0]
    g1 = mf[1]
    g2 = mf[2]
    for p in range(links.shape[0]):
        k = links[p]
        r0 = pptr[p]
        r1 = pptr[p + 1]
        if k < 0:
            for r in range(r0, r1):
                gamma[r] = 0.0
            continue
        x0, x1, x2, a0, a1, a2 = _point_bias(ws, k * WS_STRIDE, r_link[p, 0], r_link[p, 1], r_link[p, 2],
                                             g0, g1, g2, with_gamma)
        if with_gamma:
            for r in range(r0, r1):
                gamma[r] = -(N[r, 0] * a0 + N[r, 1] * a1 + N[r, 2] * a2)
        for r in range(r0, r1):
            n0 = N[r, 0]
            n1 = N[r, 1]
            n2 = N[r, 2]
            # n . (v_O + w x x) = n . v_O + w . (x x n)
            m0 = x1 * n2 - x2 * n1
            m1 = x2 * n0 - x0 * n2
            m2 = x0 * n1 - x1 * n0
            c0 = cptr[p]
            for t in range(cptr[p + 1] - c0):
                o = s0 + 6 * chain[c0 + t]
                gv = n0 * ws[o + 3] + n1 * ws[o + 4] + n2 * ws[o + 5] + m0 * ws[o] + m1 * ws[o + 1] + m2 * ws[o + 2]
                G[r, t] = gv
                Y[r, t] = gv


@njit(inline="always", cache=True)
def _tree_and_rows(q, v, tau, fext, flags, mi, mf, ws, H, C, zero, links, r_link, pptr, N, cptr,
                   chain, G, Y, gamma, alpha2, bottom):
    """Steps 1-2 shared by the compiled methods (:func:`contact_range_space`,
    ``_fast_null_space.contact_null_space``): input checks, one joint pass, CRBA into ``H``,
    for dynamics RNEA into ``C`` and the Baumgarte terms (``bottom = gamma``), the contact rows
    ``G`` (and their copy ``Y``) on the support chains; for impulses the target is zeroed with
    ``F_ZERO_TARGET``.  Returns 0 or a negative input code (-1 to -4: q, v, tau, f_ext not
    finite, or a zero-quaternion code)."""
    nv = H.shape[0]
    npts = pptr.shape[0] - 1
    if (flags & F_IMPULSE) != 0:
        if K.check_finite(q) >= 0:
            return -1
        if K.check_finite(v) >= 0:
            return -2
        K.joint_pass(q, v, mi, mf, ws, np.int64(2))
        K.crba_core(H, mi, mf, ws)
        _chain_rows(mi, mf, ws, nv, links, r_link, pptr, N, cptr, chain, G, Y, gamma, False)
        if flags & F_ZERO_TARGET:
            for r in range(bottom.shape[0]):
                bottom[r] = 0.0
        return 0
    code = K.check_inputs(q, v, tau, fext, flags & F_FEXT)
    if code == 0:
        code = K.check_q(q, mi)
    if code != 0:
        return code
    K.joint_pass(q, v, mi, mf, ws, np.int64(3))
    K.crba_core(H, mi, mf, ws)
    K.rnea_core(zero, fext, C, mi, mf, ws, flags & F_FEXT)
    _chain_rows(mi, mf, ws, nv, links, r_link, pptr, N, cptr, chain, G, Y, gamma, True)
    for p in range(npts):
        for r in range(pptr[p], pptr[p + 1]):
            if alpha2[r] != 0.0:
                s = 0.0
                c0 = cptr[p]
                for t in range(cptr[p + 1] - c0):
                    s += G[r, t] * v[chain[c0 + t]]
                gamma[r] -= alpha2[r] * s
            bottom[r] = gamma[r]
    return 0


@njit(inline="always", cache=True)
def _zero_row_tol(G, pptr, cptr):
    """The magnitude below which a contact row counts as zero: ``ZERO_ROW_RTOL max(1, max|G|)``
    over the stored chain entries."""
    gmax = 0.0
    for p in range(pptr.shape[0] - 1):
        for r in range(pptr[p], pptr[p + 1]):
            for t in range(cptr[p + 1] - cptr[p]):
                if abs(G[r, t]) > gmax:
                    gmax = abs(G[r, t])
    return ZERO_ROW_RTOL * max(1.0, gmax)


@njit(inline="always", cache=True)
def _result(G, x, mult, bottom, pptr, cptr, chain, nv, n):
    """``(code, residual, converged)`` of a compiled solve: the residual ``max |G x - bottom|``
    over the chain rows, converged when it is at most ``1e-9 (1 + max(|G x|, |bottom|))``;
    code 3 (the general path takes over) when ``x`` or ``mult`` is not finite."""
    res = 0.0
    scale = 0.0
    for p in range(pptr.shape[0] - 1):
        c0 = cptr[p]
        for r in range(pptr[p], pptr[p + 1]):
            s = 0.0
            for t in range(cptr[p + 1] - c0):
                s += G[r, t] * x[chain[c0 + t]]
            e = abs(s - bottom[r])
            if e > res:
                res = e
            if abs(s) > scale:
                scale = abs(s)
            if abs(bottom[r]) > scale:
                scale = abs(bottom[r])
    for i in range(nv):
        if not math.isfinite(x[i]):
            return 3, res, False
    for r in range(n):
        if not math.isfinite(mult[r]):
            return 3, res, False
    return 0, res, res <= 1e-9 * (1.0 + scale)


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
    # Cholesky K = C C^T (lower, in place), then C C^T mult = rhs
    for j in range(n):
        s = Km[j, j]
        for k in range(j):
            s -= Km[j, k] * Km[j, k]
        if not s > _CHOL_RTOL * dmax:
            return 2, 0.0, False
        d = math.sqrt(s)
        Km[j, j] = d
        for i in range(j + 1, n):
            s = Km[i, j]
            for k in range(j):
                s -= Km[i, k] * Km[j, k]
            Km[i, j] = s / d
    for i in range(n):
        s = rhs[i]
        for k in range(i):
            s -= Km[i, k] * mult[k]
        mult[i] = s / Km[i, i]
    for i in range(n - 1, -1, -1):
        s = mult[i]
        for k in range(i + 1, n):
            s -= Km[k, i] * mult[k]
        mult[i] = s / Km[i, i]
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
