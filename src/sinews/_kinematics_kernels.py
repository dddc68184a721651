"""Numba kernels of the kinematics (:mod:`sinews.kinematics`): placements of bodies and frames,
frame and point Jacobians in three reference frames, the centre of mass and its Jacobian (the
Jacobian time derivatives are in :mod:`sinews._jacobian_dt_kernels`).

Same design as :mod:`sinews._joint_pass`: flat arrays with constant offsets, (R, p) transforms,
argument checks inside the kernel (one dispatch per public call).  Bodies and frames are rows
of the placement table ``pl`` (:data:`sinews._layout.PL_STRIDE` values per row: the kernel link
that carries the row and the row's pose in that link's frame), built once by
:class:`sinews.model.CompiledModel`.  The kernels of the checked call path (``placements``,
``row_placement``, ``frame_jacobian``, ``center_of_mass``) check ``q`` and find the support
chain themselves; their ``*_chain`` / ``*_links`` / ``*_table`` cores take both from the caller,
as the fast path's entry kernels do (:mod:`sinews._kinematics_fast_kernels`).  World poses come
from :func:`sinews._kinematics_pass.chain_poses`.
"""

import math

import numpy as np
from ._jit import njit

from ._checks import NOT_FINITE
from ._joint_pass import _cross, check_finite, check_q, joint_pass
from ._kinematics_pass import chain_poses
from ._layout import (
    MF_H,
    MF_HEADER,
    MF_MASS,
    MF_STRIDE,
    MI_IV,
    MI_NV,
    MI_PARENT,
    PL_LINK,
    PL_P,
    PL_R,
    PL_STRIDE,
    REF_LOCAL,
    REF_WORLD,
    WS_F,
    WS_OP,
    WS_OR,
    WS_STRIDE,
    WS_V,
)


@njit(cache=True)
def placements(q, outR, outp, mi, mf, ws, pl):
    """World pose of every row of the placement table: rotation ``outR[r]`` (3 x 3), position
    ``outp[r]``.
    Returns 0, a :func:`check_q` code, or NOT_FINITE if a position overflowed."""
    nl = mi.shape[0]
    if nl:
        code = check_q(q, mi)
        if code != 0:
            return code
        joint_pass(q, q, mi, mf, ws, np.int64(2))
    nr = outp.shape[0]
    for r in range(nr):
        o = r * PL_STRIDE
        k = int(pl[o + PL_LINK])
        x00 = pl[o + PL_R]
        x01 = pl[o + PL_R + 1]
        x02 = pl[o + PL_R + 2]
        x10 = pl[o + PL_R + 3]
        x11 = pl[o + PL_R + 4]
        x12 = pl[o + PL_R + 5]
        x20 = pl[o + PL_R + 6]
        x21 = pl[o + PL_R + 7]
        x22 = pl[o + PL_R + 8]
        y0 = pl[o + PL_P]
        y1 = pl[o + PL_P + 1]
        y2 = pl[o + PL_P + 2]
        if k < 0:
            outR[r, 0, 0] = x00
            outR[r, 0, 1] = x01
            outR[r, 0, 2] = x02
            outR[r, 1, 0] = x10
            outR[r, 1, 1] = x11
            outR[r, 1, 2] = x12
            outR[r, 2, 0] = x20
            outR[r, 2, 1] = x21
            outR[r, 2, 2] = x22
            outp[r, 0] = y0
            outp[r, 1] = y1
            outp[r, 2] = y2
            continue
        w = k * WS_STRIDE
        o00 = ws[w + WS_OR]
        o01 = ws[w + WS_OR + 1]
        o02 = ws[w + WS_OR + 2]
        o10 = ws[w + WS_OR + 3]
        o11 = ws[w + WS_OR + 4]
        o12 = ws[w + WS_OR + 5]
        o20 = ws[w + WS_OR + 6]
        o21 = ws[w + WS_OR + 7]
        o22 = ws[w + WS_OR + 8]
        outR[r, 0, 0] = o00 * x00 + o01 * x10 + o02 * x20
        outR[r, 0, 1] = o00 * x01 + o01 * x11 + o02 * x21
        outR[r, 0, 2] = o00 * x02 + o01 * x12 + o02 * x22
        outR[r, 1, 0] = o10 * x00 + o11 * x10 + o12 * x20
        outR[r, 1, 1] = o10 * x01 + o11 * x11 + o12 * x21
        outR[r, 1, 2] = o10 * x02 + o11 * x12 + o12 * x22
        outR[r, 2, 0] = o20 * x00 + o21 * x10 + o22 * x20
        outR[r, 2, 1] = o20 * x01 + o21 * x11 + o22 * x21
        outR[r, 2, 2] = o20 * x02 + o21 * x12 + o22 * x22
        p0 = ws[w + WS_OP] + o00 * y0 + o01 * y1 + o02 * y2
        p1 = ws[w + WS_OP + 1] + o10 * y0 + o11 * y1 + o12 * y2
        p2 = ws[w + WS_OP + 2] + o20 * y0 + o21 * y1 + o22 * y2
        outp[r, 0] = p0
        outp[r, 1] = p1
        outp[r, 2] = p2
        if not (math.isfinite(p0) and math.isfinite(p1) and math.isfinite(p2)):
            return NOT_FINITE
    return 0


@njit(cache=True)
def placements_table(q, out, mi, mf, ws, pl, links):
    """:func:`placements` into one table ``out`` (nrows x 12: R row-major, then p); a row
    whose rotation in its link is the identity copies the link's world rotation.  ``links``:
    every link index in order (``0 .. nlinks - 1``).  ``q`` is checked by the caller."""
    chain_poses(q, mi, mf, ws, links, mi.shape[0])
    nr = out.shape[0]
    f = out.reshape(nr * 12)
    bad = 0.0
    for r in range(nr):
        o = r * PL_STRIDE
        d = 12 * r
        k = int(pl[o + PL_LINK])
        if k < 0:
            for i in range(12):
                f[d + i] = pl[o + PL_R + i]
            continue
        w = k * WS_STRIDE
        y0 = pl[o + PL_P]
        y1 = pl[o + PL_P + 1]
        y2 = pl[o + PL_P + 2]
        if (y0 == 0.0 and y1 == 0.0 and y2 == 0.0 and pl[o + PL_R] == 1.0 and pl[o + PL_R + 4] == 1.0
                and pl[o + PL_R + 8] == 1.0):
            # the link's own frame (a body, or a frame placed at its origin): its pose copied
            for i in range(12):
                f[d + i] = ws[w + WS_OR + i]
            bad += 0.0 * f[d + 9] + 0.0 * f[d + 10] + 0.0 * f[d + 11]
            continue
        o00 = ws[w + WS_OR]
        o01 = ws[w + WS_OR + 1]
        o02 = ws[w + WS_OR + 2]
        o10 = ws[w + WS_OR + 3]
        o11 = ws[w + WS_OR + 4]
        o12 = ws[w + WS_OR + 5]
        o20 = ws[w + WS_OR + 6]
        o21 = ws[w + WS_OR + 7]
        o22 = ws[w + WS_OR + 8]
        p0 = ws[w + WS_OP] + o00 * y0 + o01 * y1 + o02 * y2
        p1 = ws[w + WS_OP + 1] + o10 * y0 + o11 * y1 + o12 * y2
        p2 = ws[w + WS_OP + 2] + o20 * y0 + o21 * y1 + o22 * y2
        f[d + 9] = p0
        f[d + 10] = p1
        f[d + 11] = p2
        bad += 0.0 * p0 + 0.0 * p1 + 0.0 * p2
        if pl[o + PL_R] == 1.0 and pl[o + PL_R + 4] == 1.0 and pl[o + PL_R + 8] == 1.0:
            f[d] = o00
            f[d + 1] = o01
            f[d + 2] = o02
            f[d + 3] = o10
            f[d + 4] = o11
            f[d + 5] = o12
            f[d + 6] = o20
            f[d + 7] = o21
            f[d + 8] = o22
            continue
        a00 = pl[o + PL_R]
        a01 = pl[o + PL_R + 1]
        a02 = pl[o + PL_R + 2]
        a10 = pl[o + PL_R + 3]
        a11 = pl[o + PL_R + 4]
        a12 = pl[o + PL_R + 5]
        a20 = pl[o + PL_R + 6]
        a21 = pl[o + PL_R + 7]
        a22 = pl[o + PL_R + 8]
        f[d] = o00 * a00 + o01 * a10 + o02 * a20
        f[d + 1] = o00 * a01 + o01 * a11 + o02 * a21
        f[d + 2] = o00 * a02 + o01 * a12 + o02 * a22
        f[d + 3] = o10 * a00 + o11 * a10 + o12 * a20
        f[d + 4] = o10 * a01 + o11 * a11 + o12 * a21
        f[d + 5] = o10 * a02 + o11 * a12 + o12 * a22
        f[d + 6] = o20 * a00 + o21 * a10 + o22 * a20
        f[d + 7] = o20 * a01 + o21 * a11 + o22 * a21
        f[d + 8] = o20 * a02 + o21 * a12 + o22 * a22
    if bad != 0.0:  # NaN: a position written was not finite (0 * inf = NaN)
        return NOT_FINITE
    return 0


@njit(cache=True)
def placements_checked(q, table, mi, mf, ws, pl):
    """:func:`placements_table` of every link after :func:`check_q` (the checked call path of
    :func:`sinews.forward_kinematics`).  Returns 0, a :func:`check_q` code, or NOT_FINITE."""
    nl = mi.shape[0]
    if nl:
        code = check_q(q, mi)
        if code != 0:
            return code
    return placements_table(q, table, mi, mf, ws, pl, np.arange(nl))


@njit(cache=True)
def support_chain(link, mi):
    """The links from the root to ``link`` (root first) and their number."""
    chain = np.empty(mi.shape[0], np.int64)
    n = 0
    l = link
    while l >= 0:
        chain[n] = l
        n += 1
        l = mi[l, MI_PARENT]
    for i in range(n // 2):
        t = chain[i]
        chain[i] = chain[n - 1 - i]
        chain[n - 1 - i] = t
    return chain, n


@njit(cache=True)
def row_placement(q, row, out, mi, mf, ws, pl):
    """World pose ``[R (row-major), p]`` of one row of the placement table (kinematics along
    its support chain only).  Returns 0, a :func:`check_q` code or NOT_FINITE."""
    if mi.shape[0]:
        code = check_q(q, mi)
        if code != 0:
            return code
    k = int(pl[row * PL_STRIDE + PL_LINK])
    if k < 0:
        return row_placement_chain(q, row, out, mi, mf, ws, pl, mi[0], np.int64(0))
    chain, n = support_chain(k, mi)
    return row_placement_chain(q, row, out, mi, mf, ws, pl, chain, n)


@njit(cache=True)
def row_placement_chain(q, row, out, mi, mf, ws, pl, chain, n):
    """:func:`row_placement` given the support chain ``chain[:n]`` of the row's link (root
    first); ``q`` is checked by the caller."""
    o = row * PL_STRIDE
    k = int(pl[o + PL_LINK])
    if k < 0:
        for i in range(12):
            out[i] = pl[o + PL_R + i]
        return 0
    chain_poses(q, mi, mf, ws, chain, n)
    w = k * WS_STRIDE
    for i in range(3):
        oi0 = ws[w + WS_OR + 3 * i]
        oi1 = ws[w + WS_OR + 3 * i + 1]
        oi2 = ws[w + WS_OR + 3 * i + 2]
        for j in range(3):
            out[3 * i + j] = oi0 * pl[o + PL_R + j] + oi1 * pl[o + PL_R + 3 + j] + oi2 * pl[o + PL_R + 6 + j]
        out[9 + i] = ws[w + WS_OP + i] + oi0 * pl[o + PL_P] + oi1 * pl[o + PL_P + 1] + oi2 * pl[o + PL_P + 2]
    if check_finite(out) >= 0:
        return NOT_FINITE
    return 0


@njit(cache=True)
def frame_jacobian(q, row, x, ref, J, mi, mf, ws, pl):
    """:func:`frame_jacobian_chain` (the support chain found here, ``q`` checked)."""
    if mi.shape[0]:
        code = check_q(q, mi)
        if code != 0:
            return code
    k = int(pl[row * PL_STRIDE + PL_LINK])
    if k < 0:
        return frame_jacobian_chain(q, row, x, ref, J, mi, mf, ws, pl, mi[0], np.int64(0))
    chain, n = support_chain(k, mi)
    return frame_jacobian_chain(q, row, x, ref, J, mi, mf, ws, pl, chain, n)


@njit(cache=True)
def frame_jacobian_chain(q, row, x, ref, J, mi, mf, ws, pl, chain, n):
    """Jacobian of the frame at the point ``x`` (coordinates in the frame of row ``row`` of the
    placement table), axes of the frame rotated as that row.  ``ref``: REF_LOCAL (the frame's
    axes, at the point), REF_WORLD (world axes, at the world origin) or REF_LOCAL_WORLD_ALIGNED
    (world axes, at the point).  ``J``: 6 x nv (rows [angular; linear]) or 3 x nv (linear rows
    only); all of it is written.  Returns 0, -1 (q not finite), -2 (x not finite), a
    zero-quaternion code or NOT_FINITE (J overflowed).  ``chain[:n]``: the support chain of the
    row's link, root first.  ``q`` is checked by the caller (:func:`frame_jacobian`)."""
    nl = mi.shape[0]
    x0 = x[0]
    x1 = x[1]
    x2 = x[2]
    if not (math.isfinite(x0) and math.isfinite(x1) and math.isfinite(x2)):
        return -2
    nr = J.shape[0]
    nv = J.shape[1]
    lin = nr - 3  # first linear row
    for r in range(nr):
        for c in range(nv):
            J[r, c] = 0.0
    o = row * PL_STRIDE
    link = int(pl[o + PL_LINK])
    if link < 0:
        return 0
    chain_poses(q, mi, mf, ws, chain, n)
    s_off = nl * WS_STRIDE
    w = link * WS_STRIDE
    o00 = ws[w + WS_OR]
    o01 = ws[w + WS_OR + 1]
    o02 = ws[w + WS_OR + 2]
    o10 = ws[w + WS_OR + 3]
    o11 = ws[w + WS_OR + 4]
    o12 = ws[w + WS_OR + 5]
    o20 = ws[w + WS_OR + 6]
    o21 = ws[w + WS_OR + 7]
    o22 = ws[w + WS_OR + 8]
    # the point in link coordinates, then in world coordinates
    l0 = pl[o + PL_P] + pl[o + PL_R] * x0 + pl[o + PL_R + 1] * x1 + pl[o + PL_R + 2] * x2
    l1 = pl[o + PL_P + 1] + pl[o + PL_R + 3] * x0 + pl[o + PL_R + 4] * x1 + pl[o + PL_R + 5] * x2
    l2 = pl[o + PL_P + 2] + pl[o + PL_R + 6] * x0 + pl[o + PL_R + 7] * x1 + pl[o + PL_R + 8] * x2
    if ref == REF_WORLD:
        y0 = 0.0
        y1 = 0.0
        y2 = 0.0
    else:
        y0 = o00 * l0 + o01 * l1 + o02 * l2 + ws[w + WS_OP]
        y1 = o10 * l0 + o11 * l1 + o12 * l2 + ws[w + WS_OP + 1]
        y2 = o20 * l0 + o21 * l1 + o22 * l2 + ws[w + WS_OP + 2]
    # world rotation of the frame (used by REF_LOCAL)
    f00 = 1.0
    f01 = 0.0
    f02 = 0.0
    f10 = 0.0
    f11 = 1.0
    f12 = 0.0
    f20 = 0.0
    f21 = 0.0
    f22 = 1.0
    local = ref == REF_LOCAL
    if local:
        a00 = pl[o + PL_R]
        a01 = pl[o + PL_R + 1]
        a02 = pl[o + PL_R + 2]
        a10 = pl[o + PL_R + 3]
        a11 = pl[o + PL_R + 4]
        a12 = pl[o + PL_R + 5]
        a20 = pl[o + PL_R + 6]
        a21 = pl[o + PL_R + 7]
        a22 = pl[o + PL_R + 8]
        f00 = o00 * a00 + o01 * a10 + o02 * a20
        f01 = o00 * a01 + o01 * a11 + o02 * a21
        f02 = o00 * a02 + o01 * a12 + o02 * a22
        f10 = o10 * a00 + o11 * a10 + o12 * a20
        f11 = o10 * a01 + o11 * a11 + o12 * a21
        f12 = o10 * a02 + o11 * a12 + o12 * a22
        f20 = o20 * a00 + o21 * a10 + o22 * a20
        f21 = o20 * a01 + o21 * a11 + o22 * a21
        f22 = o20 * a02 + o21 * a12 + o22 * a22
    bad = 0.0
    l = link
    while l >= 0:
        wl = l * WS_STRIDE
        o00 = ws[wl + WS_OR]
        o01 = ws[wl + WS_OR + 1]
        o02 = ws[wl + WS_OR + 2]
        o10 = ws[wl + WS_OR + 3]
        o11 = ws[wl + WS_OR + 4]
        o12 = ws[wl + WS_OR + 5]
        o20 = ws[wl + WS_OR + 6]
        o21 = ws[wl + WS_OR + 7]
        o22 = ws[wl + WS_OR + 8]
        d0 = y0 - ws[wl + WS_OP]
        d1 = y1 - ws[wl + WS_OP + 1]
        d2 = y2 - ws[wl + WS_OP + 2]
        iv = mi[l, MI_IV]
        for i in range(mi[l, MI_NV]):
            so = s_off + 6 * (iv + i)
            col = iv + i
            sw0 = ws[so]
            sw1 = ws[so + 1]
            sw2 = ws[so + 2]
            sv0 = ws[so + 3]
            sv1 = ws[so + 4]
            sv2 = ws[so + 5]
            w0 = o00 * sw0 + o01 * sw1 + o02 * sw2
            w1 = o10 * sw0 + o11 * sw1 + o12 * sw2
            w2 = o20 * sw0 + o21 * sw1 + o22 * sw2
            c0, c1, c2 = _cross(w0, w1, w2, d0, d1, d2)
            v0 = o00 * sv0 + o01 * sv1 + o02 * sv2 + c0
            v1 = o10 * sv0 + o11 * sv1 + o12 * sv2 + c1
            v2 = o20 * sv0 + o21 * sv1 + o22 * sv2 + c2
            if local:
                t0 = f00 * w0 + f10 * w1 + f20 * w2
                t1 = f01 * w0 + f11 * w1 + f21 * w2
                t2 = f02 * w0 + f12 * w1 + f22 * w2
                w0 = t0
                w1 = t1
                w2 = t2
                t0 = f00 * v0 + f10 * v1 + f20 * v2
                t1 = f01 * v0 + f11 * v1 + f21 * v2
                t2 = f02 * v0 + f12 * v1 + f22 * v2
                v0 = t0
                v1 = t1
                v2 = t2
            if lin:
                J[0, col] = w0
                J[1, col] = w1
                J[2, col] = w2
                bad += 0.0 * w0 + 0.0 * w1 + 0.0 * w2
            J[lin, col] = v0
            J[lin + 1, col] = v1
            J[lin + 2, col] = v2
            bad += 0.0 * v0 + 0.0 * v1 + 0.0 * v2
        l = mi[l, MI_PARENT]
    if bad != 0.0:  # NaN: a value written was not finite (0 * inf = 0 * NaN = NaN)
        return NOT_FINITE
    return 0


@njit(cache=True)
def center_of_mass(q, v, flags, out, J, mi, mf, ws):
    """:func:`center_of_mass_links` (every link, ``q`` checked)."""
    code = check_q(q, mi)
    if code != 0:
        return code
    return center_of_mass_links(q, v, flags, out, J, mi, mf, ws, np.arange(mi.shape[0]))


@njit(cache=True)
def center_of_mass_links(q, v, flags, out, J, mi, mf, ws, links):
    """Centre of mass of the moving bodies (world): ``out[0:3]`` the position; if ``flags & 1``
    ``out[3:6]`` its velocity for joint velocities ``v``; if ``flags & 2`` the 3 x nv Jacobian
    into ``J``.  Returns 0, -1 (q not finite), -2 (v not finite), a zero-quaternion code,
    1 (no mass) or NOT_FINITE (a result overflowed).  ``links``: ``0 .. nlinks - 1``; ``q`` is
    checked by the caller (:func:`center_of_mass`)."""
    nl = mi.shape[0]
    usev = flags & 1
    if usev and check_finite(v) >= 0:
        return -2
    if nl == 0:
        return 1
    if usev:
        joint_pass(q, v, mi, mf, ws, np.int64(3))
    else:
        chain_poses(q, mi, mf, ws, links, nl)
    total = 0.0
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    g0 = 0.0
    g1 = 0.0
    g2 = 0.0
    for k in range(nl):
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
        m = mf[b + MF_MASS]
        h0 = mf[b + MF_H]
        h1 = mf[b + MF_H + 1]
        h2 = mf[b + MF_H + 2]
        r00 = ws[w + WS_OR]
        r01 = ws[w + WS_OR + 1]
        r02 = ws[w + WS_OR + 2]
        r10 = ws[w + WS_OR + 3]
        r11 = ws[w + WS_OR + 4]
        r12 = ws[w + WS_OR + 5]
        r20 = ws[w + WS_OR + 6]
        r21 = ws[w + WS_OR + 7]
        r22 = ws[w + WS_OR + 8]
        e0 = r00 * h0 + r01 * h1 + r02 * h2 + m * ws[w + WS_OP]
        e1 = r10 * h0 + r11 * h1 + r12 * h2 + m * ws[w + WS_OP + 1]
        e2 = r20 * h0 + r21 * h1 + r22 * h2 + m * ws[w + WS_OP + 2]
        total += m
        c0 += e0
        c1 += e1
        c2 += e2
        ws[w + WS_F] = m
        ws[w + WS_F + 1] = e0
        ws[w + WS_F + 2] = e1
        ws[w + WS_F + 3] = e2
        if usev:
            # m v_o + w x h (link axes), then to world
            x0, x1, x2 = _cross(ws[w + WS_V], ws[w + WS_V + 1], ws[w + WS_V + 2], h0, h1, h2)
            a0 = m * ws[w + WS_V + 3] + x0
            a1 = m * ws[w + WS_V + 4] + x1
            a2 = m * ws[w + WS_V + 5] + x2
            g0 += r00 * a0 + r01 * a1 + r02 * a2
            g1 += r10 * a0 + r11 * a1 + r12 * a2
            g2 += r20 * a0 + r21 * a1 + r22 * a2
    if not total > 0.0:
        return 1
    out[0] = c0 / total
    out[1] = c1 / total
    out[2] = c2 / total
    if not (math.isfinite(out[0]) and math.isfinite(out[1]) and math.isfinite(out[2])):
        return NOT_FINITE
    if usev:
        out[3] = g0 / total
        out[4] = g1 / total
        out[5] = g2 / total
        if not (math.isfinite(out[3]) and math.isfinite(out[4]) and math.isfinite(out[5])):
            return NOT_FINITE
    if flags & 2:
        s_off = nl * WS_STRIDE
        inv = 1.0 / total
        bad = 0.0
        for k in range(nl - 1, -1, -1):
            par = mi[k, MI_PARENT]
            if par >= 0:
                w = k * WS_STRIDE
                wp = par * WS_STRIDE
                for r in range(4):
                    ws[wp + WS_F + r] += ws[w + WS_F + r]
        for k in range(nl):
            w = k * WS_STRIDE
            ms = ws[w + WS_F]
            hs0 = ws[w + WS_F + 1]
            hs1 = ws[w + WS_F + 2]
            hs2 = ws[w + WS_F + 3]
            p0 = ws[w + WS_OP]
            p1 = ws[w + WS_OP + 1]
            p2 = ws[w + WS_OP + 2]
            iv = mi[k, MI_IV]
            for i in range(mi[k, MI_NV]):
                so = s_off + 6 * (iv + i)
                sw0 = ws[so]
                sw1 = ws[so + 1]
                sw2 = ws[so + 2]
                sv0 = ws[so + 3]
                sv1 = ws[so + 4]
                sv2 = ws[so + 5]
                w0 = ws[w + WS_OR] * sw0 + ws[w + WS_OR + 1] * sw1 + ws[w + WS_OR + 2] * sw2
                w1 = ws[w + WS_OR + 3] * sw0 + ws[w + WS_OR + 4] * sw1 + ws[w + WS_OR + 5] * sw2
                w2 = ws[w + WS_OR + 6] * sw0 + ws[w + WS_OR + 7] * sw1 + ws[w + WS_OR + 8] * sw2
                l0 = ws[w + WS_OR] * sv0 + ws[w + WS_OR + 1] * sv1 + ws[w + WS_OR + 2] * sv2
                l1 = ws[w + WS_OR + 3] * sv0 + ws[w + WS_OR + 4] * sv1 + ws[w + WS_OR + 5] * sv2
                l2 = ws[w + WS_OR + 6] * sv0 + ws[w + WS_OR + 7] * sv1 + ws[w + WS_OR + 8] * sv2
                # sum_i m_i v(c_i) = ms (l - w x op) + w x hs
                a0, a1, a2 = _cross(w0, w1, w2, p0, p1, p2)
                b0, b1, b2 = _cross(w0, w1, w2, hs0, hs1, hs2)
                j0 = (ms * (l0 - a0) + b0) * inv
                j1 = (ms * (l1 - a1) + b1) * inv
                j2 = (ms * (l2 - a2) + b2) * inv
                J[0, iv + i] = j0
                J[1, iv + i] = j1
                J[2, iv + i] = j2
                bad += 0.0 * j0 + 0.0 * j1 + 0.0 * j2
        if bad != 0.0:  # NaN: a value written was not finite
            return NOT_FINITE
    return 0
