"""Contact rows from a tree workspace: the compiled kernels that turn contact points into rows.

A contact point ``p`` on link ``k`` (link coordinates ``r``) with normals ``n_r`` gives one row
per normal, ``G_r = n_r^T J_p`` (``J_p`` the linear-velocity Jacobian of the point, non-zero
only on the support chain of ``k``) and ``gamma_r = -n_r . a_p`` with the point's
velocity-product acceleration ``a_p`` (Featherstone, RBDA ch. 8; RBDL's
``CalcConstrainedSystemVariables``).  All three read a workspace left by one joint pass, CRBA
and (for ``gamma``) RNEA at ``qdd = 0`` of ``sinews._kernels``:

* :func:`_point_bias` (inlined): the world position ``x`` and bias acceleration ``a`` of one point;
* :func:`_rows_from_ws`: dense rows ``G`` (``n x nv``) and ``gamma`` for the general path
  (:func:`sinews.constraints._fast.contact_system`);
* :func:`_chain_rows`: the rows stored along each point's support chain, for the one-call
  kernels (:mod:`sinews.constraints._fast_range_space`, :mod:`sinews.constraints._fast_null_space`).
"""

from __future__ import annotations

from .._jit import njit

from .._layout import MI_IV, MI_NV, MI_PARENT, WS_A, WS_OP, WS_OR, WS_STRIDE, WS_V


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

