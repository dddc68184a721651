"""Numba kernels of the recursive Newton-Euler algorithm over the compiled model arrays (``mi``,
``mf``) and a workspace (``ws``); see :mod:`sinews._joint_pass` for the design.  Equations and
sources are stated in the public module (``sinews.rnea``), and ``rnea_x`` is the entry kernel of
its fast path (``sinews._entry``)."""

import numpy as np
from ._jit import njit

from ._layout import (
    MF_ARM,
    MF_H,
    MF_HEADER,
    MF_IO,
    MF_MASS,
    MF_STRIDE,
    MI_IV,
    MI_NV,
    MI_PARENT,
    WS_A,
    WS_C,
    WS_F,
    WS_P,
    WS_R,
    WS_STRIDE,
    WS_V,
)
from ._checks import NOT_FINITE
from ._joint_pass import (
    BAD_SHAPE,
    _cross,
    _cross_force,
    _dims,
    _inertia_times,
    _parent_to_child,
    check_finite,
    check_inputs,
    check_q,
    joint_pass,
)

# ----------------------------------------------------------------------------------------------
# RNEA


@njit(cache=True)
def rnea(q, v, a, fext, tau, mi, mf, ws, flags):
    """tau = ID(q, v, a, fext).  flags & 1: use fext (nlinks x 6, link axes);
    flags & 2: no gravity.  Returns 0, -1/-2/-3/-4 if q/v/a/fext is not finite, a zero-quaternion
    code (:func:`check_q`) or NOT_FINITE if the result overflowed."""
    code = check_inputs(q, v, a, fext, flags & 1)
    if code == 0:
        code = check_q(q, mi)
    if code != 0:
        return code
    joint_pass(q, v, mi, mf, ws, np.int64(1))
    rnea_core(a, fext, tau, mi, mf, ws, flags)
    if check_finite(tau) >= 0:
        return NOT_FINITE
    return 0


@njit(cache=True)
def rnea_core(a, fext, tau, mi, mf, ws, flags):
    """The RNEA passes over a workspace already holding the joint pass with velocities
    (``joint_pass(..., mode & 1)``); see :func:`rnea`.  Adds ``armature * a`` for every dof
    with a non-zero armature (``mf`` at ``MF_ARM``)."""
    nl = mi.shape[0]
    s_off = nl * WS_STRIDE
    if flags & 2:
        g0 = 0.0
        g1 = 0.0
        g2 = 0.0
    else:
        g0 = mf[0]
        g1 = mf[1]
        g2 = mf[2]
    for k in range(nl):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
        R00 = ws[w + WS_R]
        R01 = ws[w + WS_R + 1]
        R02 = ws[w + WS_R + 2]
        R10 = ws[w + WS_R + 3]
        R11 = ws[w + WS_R + 4]
        R12 = ws[w + WS_R + 5]
        R20 = ws[w + WS_R + 6]
        R21 = ws[w + WS_R + 7]
        R22 = ws[w + WS_R + 8]
        # a = X_i_parent a_parent (+ S qdd + c below); the world's acceleration is [0; -g]
        if par >= 0:
            wp = par * WS_STRIDE
            pw0 = ws[wp + WS_A]
            pw1 = ws[wp + WS_A + 1]
            pw2 = ws[wp + WS_A + 2]
            pv0 = ws[wp + WS_A + 3]
            pv1 = ws[wp + WS_A + 4]
            pv2 = ws[wp + WS_A + 5]
        else:
            pw0 = 0.0
            pw1 = 0.0
            pw2 = 0.0
            pv0 = -g0
            pv1 = -g1
            pv2 = -g2
        aw0, aw1, aw2, av0, av1, av2 = _parent_to_child(
            R00, R01, R02, R10, R11, R12, R20, R21, R22,
            ws[w + WS_P], ws[w + WS_P + 1], ws[w + WS_P + 2], pw0, pw1, pw2, pv0, pv1, pv2,
        )
        for i in range(nvj):
            so = s_off + 6 * (iv + i)
            qdd = a[iv + i]
            aw0 += ws[so] * qdd
            aw1 += ws[so + 1] * qdd
            aw2 += ws[so + 2] * qdd
            av0 += ws[so + 3] * qdd
            av1 += ws[so + 4] * qdd
            av2 += ws[so + 5] * qdd
        aw0 += ws[w + WS_C]
        aw1 += ws[w + WS_C + 1]
        aw2 += ws[w + WS_C + 2]
        av0 += ws[w + WS_C + 3]
        av1 += ws[w + WS_C + 4]
        av2 += ws[w + WS_C + 5]
        ws[w + WS_A] = aw0
        ws[w + WS_A + 1] = aw1
        ws[w + WS_A + 2] = aw2
        ws[w + WS_A + 3] = av0
        ws[w + WS_A + 4] = av1
        ws[w + WS_A + 5] = av2
        # f = I a + v x* (I v) - fext
        m = mf[b + MF_MASS]
        h0 = mf[b + MF_H]
        h1 = mf[b + MF_H + 1]
        h2 = mf[b + MF_H + 2]
        ixx = mf[b + MF_IO]
        iyy = mf[b + MF_IO + 1]
        izz = mf[b + MF_IO + 2]
        ixy = mf[b + MF_IO + 3]
        ixz = mf[b + MF_IO + 4]
        iyz = mf[b + MF_IO + 5]
        vw0 = ws[w + WS_V]
        vw1 = ws[w + WS_V + 1]
        vw2 = ws[w + WS_V + 2]
        vv0 = ws[w + WS_V + 3]
        vv1 = ws[w + WS_V + 4]
        vv2 = ws[w + WS_V + 5]
        fn0, fn1, fn2, ff0, ff1, ff2 = _inertia_times(
            m, h0, h1, h2, ixx, iyy, izz, ixy, ixz, iyz, aw0, aw1, aw2, av0, av1, av2
        )
        gn0, gn1, gn2, gf0, gf1, gf2 = _inertia_times(
            m, h0, h1, h2, ixx, iyy, izz, ixy, ixz, iyz, vw0, vw1, vw2, vv0, vv1, vv2
        )
        x0, x1, x2, y0, y1, y2 = _cross_force(vw0, vw1, vw2, vv0, vv1, vv2, gn0, gn1, gn2, gf0, gf1, gf2)
        fn0 += x0
        fn1 += x1
        fn2 += x2
        ff0 += y0
        ff1 += y1
        ff2 += y2
        if flags & 1:
            fn0 -= fext[k, 0]
            fn1 -= fext[k, 1]
            fn2 -= fext[k, 2]
            ff0 -= fext[k, 3]
            ff1 -= fext[k, 4]
            ff2 -= fext[k, 5]
        ws[w + WS_F] = fn0
        ws[w + WS_F + 1] = fn1
        ws[w + WS_F + 2] = fn2
        ws[w + WS_F + 3] = ff0
        ws[w + WS_F + 4] = ff1
        ws[w + WS_F + 5] = ff2
    for k in range(nl - 1, -1, -1):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        fn0 = ws[w + WS_F]
        fn1 = ws[w + WS_F + 1]
        fn2 = ws[w + WS_F + 2]
        ff0 = ws[w + WS_F + 3]
        ff1 = ws[w + WS_F + 4]
        ff2 = ws[w + WS_F + 5]
        for i in range(nvj):
            so = s_off + 6 * (iv + i)
            tau[iv + i] = (
                ws[so] * fn0
                + ws[so + 1] * fn1
                + ws[so + 2] * fn2
                + ws[so + 3] * ff0
                + ws[so + 4] * ff1
                + ws[so + 5] * ff2
            )
            arm = mf[MF_HEADER + k * MF_STRIDE + MF_ARM + i]
            if arm != 0.0:  # the joint's armature (C2): tau += armature * qdd
                tau[iv + i] += arm * a[iv + i]
        if par >= 0:
            wp = par * WS_STRIDE
            R00 = ws[w + WS_R]
            R01 = ws[w + WS_R + 1]
            R02 = ws[w + WS_R + 2]
            R10 = ws[w + WS_R + 3]
            R11 = ws[w + WS_R + 4]
            R12 = ws[w + WS_R + 5]
            R20 = ws[w + WS_R + 6]
            R21 = ws[w + WS_R + 7]
            R22 = ws[w + WS_R + 8]
            gf0 = R00 * ff0 + R01 * ff1 + R02 * ff2
            gf1 = R10 * ff0 + R11 * ff1 + R12 * ff2
            gf2 = R20 * ff0 + R21 * ff1 + R22 * ff2
            c0, c1, c2 = _cross(ws[w + WS_P], ws[w + WS_P + 1], ws[w + WS_P + 2], gf0, gf1, gf2)
            ws[wp + WS_F] += R00 * fn0 + R01 * fn1 + R02 * fn2 + c0
            ws[wp + WS_F + 1] += R10 * fn0 + R11 * fn1 + R12 * fn2 + c1
            ws[wp + WS_F + 2] += R20 * fn0 + R21 * fn1 + R22 * fn2 + c2
            ws[wp + WS_F + 3] += gf0
            ws[wp + WS_F + 4] += gf1
            ws[wp + WS_F + 5] += gf2
    return 0


# ----------------------------------------------------------------------------------------------
# Entry kernels of the public fast path (see sinews._entry): the argument shapes are checked
# here, so that the Python wrapper only has to pick the workspace.  Each is compiled for one
# signature (contiguous, writeable, aligned float64 arrays) and dispatched by Numba's C
# dispatcher with compilation disabled; any other argument type raises there and the wrapper
# falls back to its checked path.


@njit(cache=True)
def rnea_x(q, v, a, tau, mi, mf, ws):
    """:func:`rnea` without external forces, after checking the lengths of q, v, a and tau."""
    nq, nv = _dims(mi)
    if q.shape[0] != nq or v.shape[0] != nv or a.shape[0] != nv or tau.shape[0] != nv:
        return BAD_SHAPE
    return rnea(q, v, a, ws[:6].reshape((1, 6)), tau, mi, mf, ws, np.int64(0))  # int64, not Literal[int](0): the checked path's specialisation
