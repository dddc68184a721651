"""Compiled fast paths (Numba, compiled lazily on first use and cached on disk).

* :func:`contact_rows`: ``G`` and ``gamma`` of every point-contact row of a set in one kernel
  call: one tree pass (the core ``joint_pass`` + ``rnea`` kernels with ``a = 0`` and no gravity)
  then, per contact point, the support-chain Jacobian and the classical bias acceleration.
  Same formulas as :class:`~sinews.constraints.constraint.ContactConstraint`.
* :func:`range_space` : the range-space solve of :mod:`sinews.constraints.range_space_sparse`
  (``H = L^T L`` with the core's branch-sparse kernels, ``K = Y^T Y``, a small Cholesky) in
  one call.  It returns a non-zero code instead of raising; the caller then takes the general
  Python path, which diagnoses singular and redundant systems.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import _kernels as K
from .._layout import MI_IV, MI_NV, MI_PARENT, WS_A, WS_OP, WS_OR, WS_STRIDE, WS_V

_CHOL_RTOL = 1e-12


@njit(cache=True)
def contact_rows(q, v, mi, mf, ws, fext, links, r_link, point_ptr, N, G, gamma):
    """Fill ``G`` (rows x nv, zeroed here) and ``gamma`` for contact points ``p`` on links
    ``links[p]`` (-1: fixed in the world) at link coordinates ``r_link[p]``, with rows
    ``point_ptr[p]:point_ptr[p+1]`` along the world normals ``N``.  Returns 0 or the core's
    negative input code."""
    nv = G.shape[1]
    tau = np.empty(nv)
    K.joint_pass(q, v, mi, mf, ws, 2)
    code = K.rnea(q, v, np.zeros(nv), fext, tau, mi, mf, ws, 2)
    if code != 0:
        return code
    _rows_from_ws(mi, ws, links, r_link, point_ptr, N, G, gamma, 0.0, 0.0, 0.0)
    return 0


@njit(cache=True)
def _rows_from_ws(mi, ws, links, r_link, point_ptr, N, G, gamma, g0, g1, g2, with_gamma=True):
    """Contact rows from a workspace holding world poses, S, link velocities and the link
    accelerations at ``qdd = 0`` of an RNEA run with gravity ``g`` (``g = 0``: without): the
    base acceleration ``[0; -g]`` reaches every link as the pure linear ``R^T (-g)``, so the
    velocity-product (bias) acceleration of a point is the RNEA one plus ``g``.
    ``with_gamma=False`` fills ``G`` only (no velocities or accelerations are needed).
    The workspace is indexed directly (no array slices: they cost reference counting)."""
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
        w = k * WS_STRIDE
        o00 = ws[w + WS_OR + 0]
        o01 = ws[w + WS_OR + 1]
        o02 = ws[w + WS_OR + 2]
        o10 = ws[w + WS_OR + 3]
        o11 = ws[w + WS_OR + 4]
        o12 = ws[w + WS_OR + 5]
        o20 = ws[w + WS_OR + 6]
        o21 = ws[w + WS_OR + 7]
        o22 = ws[w + WS_OR + 8]
        x0 = o00 * r_link[p, 0] + o01 * r_link[p, 1] + o02 * r_link[p, 2]
        x1 = o10 * r_link[p, 0] + o11 * r_link[p, 1] + o12 * r_link[p, 2]
        x2 = o20 * r_link[p, 0] + o21 * r_link[p, 1] + o22 * r_link[p, 2]
        d0 = x0
        d1 = x1
        d2 = x2
        x0 += ws[w + WS_OP]
        x1 += ws[w + WS_OP + 1]
        x2 += ws[w + WS_OP + 2]
        if with_gamma:
            # world velocity and bias acceleration of the link
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
            # a = ao + alpha x d + omega x (vo + omega x d), d = x - o
            c0 = om1 * d2 - om2 * d1
            c1 = om2 * d0 - om0 * d2
            c2 = om0 * d1 - om1 * d0
            u0 = vo0 + c0
            u1 = vo1 + c1
            u2 = vo2 + c2
            a0 = ao0 + g0 + (aw1 * d2 - aw2 * d1) + (om1 * u2 - om2 * u1)
            a1 = ao1 + g1 + (aw2 * d0 - aw0 * d2) + (om2 * u0 - om0 * u2)
            a2 = ao2 + g2 + (aw0 * d1 - aw1 * d0) + (om0 * u1 - om1 * u0)
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
    """Contact rows (:func:`contact_rows`) with the Baumgarte velocity terms
    ``gamma_r -= alpha2_r (G_r v)``, then ``H`` (CRBA) and ``rhs = tau - C(q, v, f_ext)``
    (RNEA with ``a = 0``).  Returns 0 or a negative input code (q, v, tau, f_ext)."""
    # CRBA first (it leaves world poses and S in ws), then one RNEA with gravity and f_ext for
    # C, whose link velocities and accelerations also give the contact bias accelerations
    nv = G.shape[1]
    zero = np.zeros(nv)
    code = K.check_inputs(q, v, zero, fext, fext_flag)
    if code != 0:
        return code
    # one joint pass (world poses and velocities) serves both CRBA and RNEA
    K.joint_pass(q, v, mi, mf, ws, 3)
    K.crba_core(H, mi, mf, ws)
    C = np.empty(nv)
    K.rnea_core(zero, fext, C, mi, mf, ws, fext_flag)
    _rows_from_ws(mi, ws, links, r_link, point_ptr, N, G, gamma, mf[0], mf[1], mf[2])
    for r in range(G.shape[0]):
        if alpha2[r] != 0.0:
            s = 0.0
            for i in range(nv):
                s += G[r, i] * v[i]
            gamma[r] -= alpha2[r] * s
    for i in range(nv):
        rhs[i] = tau[i] - C[i]
    return 0


@njit(cache=True)
def contacts_range_space(q, v, tau, fext, fext_flag, mi, mf, ws, lam, links, r_link, point_ptr, N,
                         alpha2, impulse, bottom_in, G, gamma, H, rhs, x, mult, info):
    """Whole constrained forward dynamics (``impulse = False``: ``v`` is the velocity) or
    impulse solve (``impulse = True``: ``v`` is ``qd_minus``, the bottom right-hand side is
    ``bottom_in``) of a contacts-only set by the range-space method, in one call.

    Writes ``G``, ``gamma`` (the right-hand side used), ``H``, ``rhs`` (top), ``x``, ``mult``
    and ``info = [max |G x - gamma|, 1 + max(|G x|, |gamma|)]``.  Returns 0, a negative input
    code, 1 (H not positive definite) or 2 (redundant rows): then the caller takes the general
    path, which diagnoses the system."""
    nv = G.shape[1]
    nr = G.shape[0]
    if impulse:
        # impulses need H and G only: no RNEA pass
        if K.crba(q, H, mi, mf, ws) != 0:
            return -1
        if K.check_finite(v) >= 0:
            return -2
        _rows_from_ws(mi, ws, links, r_link, point_ptr, N, G, gamma, 0.0, 0.0, 0.0, False)
        for i in range(nv):
            s = 0.0
            for j in range(nv):
                s += H[i, j] * v[j]
            rhs[i] = s
        for r in range(nr):
            gamma[r] = bottom_in[r]
    else:
        code = contact_system(q, v, tau, fext, fext_flag, mi, mf, ws, links, r_link, point_ptr, N,
                              alpha2, G, gamma, H, rhs)
        if code != 0:
            return code
    code = range_space(H, lam, G, rhs, gamma, x, mult)
    if code != 0:
        return code
    res = 0.0
    scale = 0.0
    for r in range(nr):
        s = 0.0
        for i in range(nv):
            s += G[r, i] * x[i]
        e = abs(s - gamma[r])
        if e > res:
            res = e
        if abs(s) > scale:
            scale = abs(s)
        if abs(gamma[r]) > scale:
            scale = abs(gamma[r])
    info[0] = res
    info[1] = 1.0 + scale
    for i in range(nv):
        if not math.isfinite(x[i]):
            return 3
    for r in range(nr):
        if not math.isfinite(mult[r]):
            return 3
    return 0


@njit(cache=True)
def contacts_range_space_packed(q, v, tau, fext, mi, mf, ws, bi, bf, scratch, x, mult, flags):
    """:func:`contacts_range_space` with its static data packed into few arrays (Numba's call
    dispatch costs about 0.1 us per argument; 13 here instead of 23):

    * ``bi`` (int64): ``[nv, points, rows, lam (nv), links (points), point_ptr (points + 1)]``;
    * ``bf`` (float64): ``[r_link (points x 3), N (rows x 3)]``;
    * ``scratch`` (float64): ``[alpha2 (rows), bottom (rows), G (rows x nv), gamma (rows),
      H (nv x nv), rhs (nv), info (2)]``; ``alpha2`` and ``bottom`` are inputs;
    * ``flags``: 1 use ``fext``, 2 impulse, 4 take the bottom right-hand side from ``bottom``,
      8 the bottom right-hand side is zero (written here).
    """
    nv = bi[0]
    npts = bi[1]
    n = bi[2]
    lam = bi[3 : 3 + nv]
    links = bi[3 + nv : 3 + nv + npts]
    point_ptr = bi[3 + nv + npts : 4 + nv + 2 * npts]
    r_link = bf[: 3 * npts].reshape((npts, 3))
    N = bf[3 * npts : 3 * npts + 3 * n].reshape((n, 3))
    o = 0
    alpha2 = scratch[o : o + n]
    o += n
    bottom = scratch[o : o + n]
    o += n
    G = scratch[o : o + n * nv].reshape((n, nv))
    o += n * nv
    gamma = scratch[o : o + n]
    o += n
    H = scratch[o : o + nv * nv].reshape((nv, nv))
    o += nv * nv
    rhs = scratch[o : o + nv]
    o += nv
    info = scratch[o : o + 2]
    if flags & 8:
        for r in range(n):
            bottom[r] = 0.0
    return contacts_range_space(
        q, v, tau, fext, flags & 1, mi, mf, ws, lam, links, r_link, point_ptr, N, alpha2,
        (flags & 2) != 0, bottom if flags & 12 else gamma, G, gamma, H, rhs, x, mult, info,
    )


def packed_sizes(nv: int, rows: int) -> int:
    """Length of the ``scratch`` array of :func:`contacts_range_space_packed`."""
    return 3 * rows + rows * nv + nv * nv + nv + 2
