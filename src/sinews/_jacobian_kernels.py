"""Numba kernels of the point and centre-of-mass Jacobians over the compiled model arrays (``mi``,
``mf``) and a workspace (``ws``); see :mod:`sinews._joint_pass` for the design.  Equations and
sources are stated in the public module (``sinews.kinematics``)."""

import math

import numpy as np
from numba import njit

from ._layout import (
    MF_H,
    MF_HEADER,
    MF_MASS,
    MF_STRIDE,
    MI_IV,
    MI_NV,
    MI_PARENT,
    WS_F,
    WS_OP,
    WS_OR,
    WS_STRIDE,
)
from ._checks import NOT_FINITE
from ._joint_pass import _cross, check_finite, check_q, joint_pass, joint_pass_links

# ----------------------------------------------------------------------------------------------
# Jacobians


@njit(cache=True)
def point_jacobian(q, link, x, world_point, J, mi, mf, ws):
    """6 x nv Jacobian in world axes of the point x (link coordinates, or world coordinates if
    ``world_point``) fixed on ``link``: rows 0-2 angular velocity, rows 3-5 the point's linear
    velocity.  Only the ancestor columns are written.  Returns 0, -1 (q not finite), -2
    (x not finite), a zero-quaternion code (:func:`check_q`) or NOT_FINITE (J overflowed)."""
    code = check_q(q, mi)
    if code != 0:
        return code
    if check_finite(x) >= 0:
        return -2
    x0 = x[0]
    x1 = x[1]
    x2 = x[2]
    # forward kinematics along the support chain only (root to tip)
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
    joint_pass_links(q, q, mi, mf, ws, np.int64(2), chain, n)
    nl = mi.shape[0]
    s_off = nl * WS_STRIDE
    w = link * WS_STRIDE
    if world_point:
        y0 = x0
        y1 = x1
        y2 = x2
    else:
        y0 = ws[w + WS_OR] * x0 + ws[w + WS_OR + 1] * x1 + ws[w + WS_OR + 2] * x2 + ws[w + WS_OP]
        y1 = ws[w + WS_OR + 3] * x0 + ws[w + WS_OR + 4] * x1 + ws[w + WS_OR + 5] * x2 + ws[w + WS_OP + 1]
        y2 = ws[w + WS_OR + 6] * x0 + ws[w + WS_OR + 7] * x1 + ws[w + WS_OR + 8] * x2 + ws[w + WS_OP + 2]
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
            J[0, col] = w0
            J[1, col] = w1
            J[2, col] = w2
            J[3, col] = o00 * sv0 + o01 * sv1 + o02 * sv2 + c0
            J[4, col] = o10 * sv0 + o11 * sv1 + o12 * sv2 + c1
            J[5, col] = o20 * sv0 + o21 * sv1 + o22 * sv2 + c2
        l = mi[l, MI_PARENT]
    for r in range(6):
        if check_finite(J[r]) >= 0:
            return NOT_FINITE
    return 0


@njit(cache=True)
def com_jacobian(q, J, mi, mf, ws):
    """3 x nv Jacobian of the centre of mass (world axes).  Returns the total mass (<= 0: no
    mass), or NaN if J overflowed."""
    joint_pass(q, q, mi, mf, ws, np.int64(2))
    nl = mi.shape[0]
    s_off = nl * WS_STRIDE
    for k in range(nl):
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
        m = mf[b + MF_MASS]
        h0 = mf[b + MF_H]
        h1 = mf[b + MF_H + 1]
        h2 = mf[b + MF_H + 2]
        ws[w + WS_F] = m
        for r in range(3):
            ws[w + WS_F + 1 + r] = (
                ws[w + WS_OR + 3 * r] * h0
                + ws[w + WS_OR + 3 * r + 1] * h1
                + ws[w + WS_OR + 3 * r + 2] * h2
                + m * ws[w + WS_OP + r]
            )
    for k in range(nl - 1, -1, -1):
        par = mi[k, MI_PARENT]
        if par >= 0:
            w = k * WS_STRIDE
            wp = par * WS_STRIDE
            for r in range(4):
                ws[wp + WS_F + r] += ws[w + WS_F + r]
    total = 0.0
    for k in range(nl):
        if mi[k, MI_PARENT] < 0:
            total += ws[k * WS_STRIDE + WS_F]
    if total <= 0.0:
        return total
    for k in range(nl):
        w = k * WS_STRIDE
        ms = ws[w + WS_F]
        hs0 = ws[w + WS_F + 1]
        hs1 = ws[w + WS_F + 2]
        hs2 = ws[w + WS_F + 3]
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
            a0, a1, a2 = _cross(w0, w1, w2, ws[w + WS_OP], ws[w + WS_OP + 1], ws[w + WS_OP + 2])
            b0, b1, b2 = _cross(w0, w1, w2, hs0, hs1, hs2)
            J[0, iv + i] = (ms * (l0 - a0) + b0) / total
            J[1, iv + i] = (ms * (l1 - a1) + b1) / total
            J[2, iv + i] = (ms * (l2 - a2) + b2) / total
    for r in range(3):
        if check_finite(J[r]) >= 0:
            return math.nan
    return total
