"""Numba kernel of the Jacobian time derivatives (:func:`sinews.frame_jacobian_time_variation`,
:func:`sinews.point_jacobian_time_variation`): ``dJ/dt`` of a frame or of a point of a body in
the three reference frames, one kernel over the support chain (same design as
:mod:`sinews._kinematics_kernels`).

Source: Featherstone, RBDA sections 2.9 and 4.4 (a motion vector fixed in a moving body changes
as ``v x m``); Pinocchio ``computeJointJacobiansTimeVariation`` / ``getFrameJacobianTimeVariation``.
"""

import math

import numpy as np
from ._jit import njit

from ._checks import NOT_FINITE
from ._joint_pass import _cross, check_finite, check_q, joint_pass_links
from ._kinematics_kernels import support_chain
from ._layout import (
    MI_IV,
    MI_NV,
    MI_TYPE,
    PL_LINK,
    PL_P,
    PL_R,
    PL_STRIDE,
    REF_LOCAL,
    REF_WORLD,
    WS_OP,
    WS_OR,
    WS_STRIDE,
    WS_V,
)
from .joints import JT_MULTIAXIS


@njit(cache=True)
def jacobian_time_variation(q, v, row, x, ref, dJ, mi, mf, ws, pl):
    """:func:`jacobian_time_variation_chain` (the support chain found here, ``q`` checked)."""
    if mi.shape[0]:
        code = check_q(q, mi)
        if code != 0:
            return code
    k = int(pl[row * PL_STRIDE + PL_LINK])
    if k < 0:
        return jacobian_time_variation_chain(q, v, row, x, ref, dJ, mi, mf, ws, pl, mi[0], np.int64(0))
    chain, n = support_chain(k, mi)
    return jacobian_time_variation_chain(q, v, row, x, ref, dJ, mi, mf, ws, pl, chain, n)


@njit(cache=True)
def jacobian_time_variation_chain(q, v, row, x, ref, dJ, mi, mf, ws, pl, chain, n):
    """Time derivative ``dJ = d/dt J(q(t))`` (for ``dq/dt`` given by the joint velocities ``v``)
    of the Jacobian of the frame of row ``row`` of the placement table at the point ``x``
    (coordinates in that frame), in the reference ``ref`` (as :func:`frame_jacobian`).
    ``dJ``: 6 x nv (rows [angular; linear]) or 3 x nv (linear rows); all of it written.

    World columns first (Featherstone RBDA 2.9/4.4; Pinocchio ``computeJointJacobiansTimeVariation``):
    the column ``J_i = X_world_link S_i`` of a joint whose S is constant in its child frame moves
    with the link, ``dJ_i = v_link x J_i`` (spatial velocity in world coordinates, at the world
    origin); a multi-axis joint ``exp(s_1 q_1) ... exp(s_k q_k)`` has its axis ``i`` carried by the
    intermediate frame after the axes before it, ``dJ_i = (v_link - sum_{j>=i} J_j v_j) x J_i``.
    Then at the point p (world position, point velocity dp/dt):
    ``LOCAL_WORLD_ALIGNED``: ``[dw; dv - p x dw - dp/dt x w]``;  ``LOCAL``: ``R^T (dJ_lwa - omega x
    J_lwa)`` block-wise (``omega`` the frame's angular velocity, world axes).
    Returns 0, -1 (q not finite), -2 (v not finite), -3 (x not finite), a zero-quaternion code or
    NOT_FINITE (dJ overflowed).  ``q`` is checked by the caller (:func:`jacobian_time_variation`)."""
    nl = mi.shape[0]
    if check_finite(v) >= 0:
        return -2
    x0 = x[0]
    x1 = x[1]
    x2 = x[2]
    if not (math.isfinite(x0) and math.isfinite(x1) and math.isfinite(x2)):
        return -3
    nr = dJ.shape[0]
    nv = dJ.shape[1]
    lin = nr - 3  # first linear row
    for r in range(nr):
        for c in range(nv):
            dJ[r, c] = 0.0
    o = row * PL_STRIDE
    link = int(pl[o + PL_LINK])
    if link < 0:
        return 0
    # the support chain ``chain[:n]`` (root first): velocities (link axes) and world poses
    joint_pass_links(q, v, mi, mf, ws, np.int64(3), chain, n)
    s_off = nl * WS_STRIDE
    # the point: world position p, the tip link's world spatial velocity (ow, ov at the origin)
    w = link * WS_STRIDE
    t00 = ws[w + WS_OR]
    t01 = ws[w + WS_OR + 1]
    t02 = ws[w + WS_OR + 2]
    t10 = ws[w + WS_OR + 3]
    t11 = ws[w + WS_OR + 4]
    t12 = ws[w + WS_OR + 5]
    t20 = ws[w + WS_OR + 6]
    t21 = ws[w + WS_OR + 7]
    t22 = ws[w + WS_OR + 8]
    l0 = pl[o + PL_P] + pl[o + PL_R] * x0 + pl[o + PL_R + 1] * x1 + pl[o + PL_R + 2] * x2
    l1 = pl[o + PL_P + 1] + pl[o + PL_R + 3] * x0 + pl[o + PL_R + 4] * x1 + pl[o + PL_R + 5] * x2
    l2 = pl[o + PL_P + 2] + pl[o + PL_R + 6] * x0 + pl[o + PL_R + 7] * x1 + pl[o + PL_R + 8] * x2
    p0 = t00 * l0 + t01 * l1 + t02 * l2 + ws[w + WS_OP]
    p1 = t10 * l0 + t11 * l1 + t12 * l2 + ws[w + WS_OP + 1]
    p2 = t20 * l0 + t21 * l1 + t22 * l2 + ws[w + WS_OP + 2]
    lw0 = ws[w + WS_V]
    lw1 = ws[w + WS_V + 1]
    lw2 = ws[w + WS_V + 2]
    om0 = t00 * lw0 + t01 * lw1 + t02 * lw2  # angular velocity, world axes
    om1 = t10 * lw0 + t11 * lw1 + t12 * lw2
    om2 = t20 * lw0 + t21 * lw1 + t22 * lw2
    lv0 = ws[w + WS_V + 3]
    lv1 = ws[w + WS_V + 4]
    lv2 = ws[w + WS_V + 5]
    # velocity of the point: velocity of the link origin (world axes) + omega x (p - o_link)
    e0, e1, e2 = _cross(om0, om1, om2, p0 - ws[w + WS_OP], p1 - ws[w + WS_OP + 1], p2 - ws[w + WS_OP + 2])
    pd0 = t00 * lv0 + t01 * lv1 + t02 * lv2 + e0
    pd1 = t10 * lv0 + t11 * lv1 + t12 * lv2 + e1
    pd2 = t20 * lv0 + t21 * lv1 + t22 * lv2 + e2
    # rotation of the frame in the world (REF_LOCAL)
    local = ref == REF_LOCAL
    world = ref == REF_WORLD
    f00 = t00 * pl[o + PL_R] + t01 * pl[o + PL_R + 3] + t02 * pl[o + PL_R + 6]
    f01 = t00 * pl[o + PL_R + 1] + t01 * pl[o + PL_R + 4] + t02 * pl[o + PL_R + 7]
    f02 = t00 * pl[o + PL_R + 2] + t01 * pl[o + PL_R + 5] + t02 * pl[o + PL_R + 8]
    f10 = t10 * pl[o + PL_R] + t11 * pl[o + PL_R + 3] + t12 * pl[o + PL_R + 6]
    f11 = t10 * pl[o + PL_R + 1] + t11 * pl[o + PL_R + 4] + t12 * pl[o + PL_R + 7]
    f12 = t10 * pl[o + PL_R + 2] + t11 * pl[o + PL_R + 5] + t12 * pl[o + PL_R + 8]
    f20 = t20 * pl[o + PL_R] + t21 * pl[o + PL_R + 3] + t22 * pl[o + PL_R + 6]
    f21 = t20 * pl[o + PL_R + 1] + t21 * pl[o + PL_R + 4] + t22 * pl[o + PL_R + 7]
    f22 = t20 * pl[o + PL_R + 2] + t21 * pl[o + PL_R + 5] + t22 * pl[o + PL_R + 8]
    for kk in range(n):
        l = chain[kk]
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
        c0 = ws[wl + WS_OP]
        c1 = ws[wl + WS_OP + 1]
        c2 = ws[wl + WS_OP + 2]
        # world spatial velocity of the link (at the world origin)
        a0 = ws[wl + WS_V]
        a1 = ws[wl + WS_V + 1]
        a2 = ws[wl + WS_V + 2]
        b0 = ws[wl + WS_V + 3]
        b1 = ws[wl + WS_V + 4]
        b2 = ws[wl + WS_V + 5]
        uw0 = o00 * a0 + o01 * a1 + o02 * a2
        uw1 = o10 * a0 + o11 * a1 + o12 * a2
        uw2 = o20 * a0 + o21 * a1 + o22 * a2
        h0, h1, h2 = _cross(c0, c1, c2, uw0, uw1, uw2)
        uv0 = o00 * b0 + o01 * b1 + o02 * b2 + h0
        uv1 = o10 * b0 + o11 * b1 + o12 * b2 + h1
        uv2 = o20 * b0 + o21 * b1 + o22 * b2 + h2
        iv = mi[l, MI_IV]
        nvj = mi[l, MI_NV]
        multi = mi[l, MI_TYPE] == JT_MULTIAXIS
        for ii in range(nvj):
            i = nvj - 1 - ii  # last axis first (multi-axis: the velocity of the axes after i)
            col = iv + i
            so = s_off + 6 * col
            sw0 = ws[so]
            sw1 = ws[so + 1]
            sw2 = ws[so + 2]
            sv0 = ws[so + 3]
            sv1 = ws[so + 4]
            sv2 = ws[so + 5]
            # the world column (spatial, at the world origin)
            w0 = o00 * sw0 + o01 * sw1 + o02 * sw2
            w1 = o10 * sw0 + o11 * sw1 + o12 * sw2
            w2 = o20 * sw0 + o21 * sw1 + o22 * sw2
            h0, h1, h2 = _cross(c0, c1, c2, w0, w1, w2)
            v0 = o00 * sv0 + o01 * sv1 + o02 * sv2 + h0
            v1 = o10 * sv0 + o11 * sv1 + o12 * sv2 + h1
            v2 = o20 * sv0 + o21 * sv1 + o22 * sv2 + h2
            if multi:
                qd = v[col]
                uw0 -= w0 * qd
                uw1 -= w1 * qd
                uw2 -= w2 * qd
                uv0 -= v0 * qd
                uv1 -= v1 * qd
                uv2 -= v2 * qd
            # dJ = u x J (motion cross product)
            dw0, dw1, dw2 = _cross(uw0, uw1, uw2, w0, w1, w2)
            g0, g1, g2 = _cross(uw0, uw1, uw2, v0, v1, v2)
            h0, h1, h2 = _cross(uv0, uv1, uv2, w0, w1, w2)
            dv0 = g0 + h0
            dv1 = g1 + h1
            dv2 = g2 + h2
            if not world:
                # at the point p: v - p x w, dv - p x dw - dp/dt x w
                g0, g1, g2 = _cross(p0, p1, p2, w0, w1, w2)
                v0 -= g0
                v1 -= g1
                v2 -= g2
                g0, g1, g2 = _cross(p0, p1, p2, dw0, dw1, dw2)
                h0, h1, h2 = _cross(pd0, pd1, pd2, w0, w1, w2)
                dv0 -= g0 + h0
                dv1 -= g1 + h1
                dv2 -= g2 + h2
                if local:
                    # R^T (d - omega x j) block-wise, then R^T j
                    g0, g1, g2 = _cross(om0, om1, om2, w0, w1, w2)
                    dw0 -= g0
                    dw1 -= g1
                    dw2 -= g2
                    g0, g1, g2 = _cross(om0, om1, om2, v0, v1, v2)
                    dv0 -= g0
                    dv1 -= g1
                    dv2 -= g2
                    dw0, dw1, dw2 = (f00 * dw0 + f10 * dw1 + f20 * dw2, f01 * dw0 + f11 * dw1 + f21 * dw2,
                                     f02 * dw0 + f12 * dw1 + f22 * dw2)
                    dv0, dv1, dv2 = (f00 * dv0 + f10 * dv1 + f20 * dv2, f01 * dv0 + f11 * dv1 + f21 * dv2,
                                     f02 * dv0 + f12 * dv1 + f22 * dv2)
            if lin:
                dJ[0, col] = dw0
                dJ[1, col] = dw1
                dJ[2, col] = dw2
            dJ[lin, col] = dv0
            dJ[lin + 1, col] = dv1
            dJ[lin + 2, col] = dv2
    for r in range(nr):
        if check_finite(dJ[r]) >= 0:
            return NOT_FINITE
    return 0
