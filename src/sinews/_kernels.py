"""Numba kernels over the compiled model arrays (``mi``, ``mf``) and a workspace (``ws``).

Design (see ``docs/performance.md``): one kernel per algorithm, few array arguments, flat 1-D
indexing with constant offsets from :mod:`sinews._layout`, transforms as (R, p) pairs, and no
helper that takes arrays inside a hot loop (the small helpers here take and return scalars and
are inlined).  Kernels are compiled lazily on first call and cached on disk (``cache=True``).

Equations and sources are stated in the public modules (``sinews.rnea``, ``sinews.aba``, ...).
"""

import math

import numpy as np
from numba import njit

from ._layout import (
    MF_AXIS,
    MF_H,
    MF_HEADER,
    MF_IO,
    MF_JP,
    MF_JR,
    MF_MASS,
    MF_PITCH,
    MF_STRIDE,
    MI_AXES,
    MI_AXIS,
    MI_IQ,
    MI_IV,
    MI_NV,
    MI_PARENT,
    MI_TYPE,
    WS_A,
    WS_C,
    WS_CJ,
    WS_DINV,
    WS_F,
    WS_IA,
    WS_OP,
    WS_OR,
    WS_P,
    WS_PA,
    WS_R,
    WS_STRIDE,
    WS_V,
    TMP_D,
    TMP_IA,
    TMP_UD,
)
from ._checks import NOT_FINITE, QUAT_TINY, ZERO_QUATERNION
from .joints import JT_FREEFLYER, JT_HELICAL, JT_MULTIAXIS, JT_PRISMATIC, JT_REVOLUTE, JT_SPHERICAL

# ----------------------------------------------------------------------------------------------
# scalar helpers (inlined)


@njit(inline="always", cache=True)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(inline="always", cache=True)
def _rodrigues(a0, a1, a2, c, s):
    t = 1.0 - c
    return (
        c + t * a0 * a0,
        t * a0 * a1 - s * a2,
        t * a0 * a2 + s * a1,
        t * a0 * a1 + s * a2,
        c + t * a1 * a1,
        t * a1 * a2 - s * a0,
        t * a0 * a2 - s * a1,
        t * a1 * a2 + s * a0,
        c + t * a2 * a2,
    )


@njit(inline="always", cache=True)
def _quat_matrix(x, y, z, w):
    """Rotation matrix of the quaternion (x, y, z, w) of any finite norm whose largest
    |component| is at least QUAT_TINY.  A squared norm outside [1e-290, 1e290] (it would lose
    precision or overflow) is first rescaled exactly, by a power of two that brings the largest
    |component| into [0.5, 1); a zero or subnormal quaternion has no well-defined rotation:
    ValueError (the public functions refuse it before, naming the joint)."""
    n2 = x * x + y * y + z * z + w * w
    if not (1e-290 < n2 < 1e290):
        m = max(max(abs(x), abs(y)), max(abs(z), abs(w)))
        if m < QUAT_TINY:
            raise ValueError("q contains a zero (or subnormal) quaternion: a rotation needs a non-zero (x, y, z, w)")
        e = -math.frexp(m)[1]
        x = math.ldexp(x, e)
        y = math.ldexp(y, e)
        z = math.ldexp(z, e)
        w = math.ldexp(w, e)
        n2 = x * x + y * y + z * z + w * w
    s = 2.0 / n2
    return (
        1.0 - s * (y * y + z * z),
        s * (x * y - z * w),
        s * (x * z + y * w),
        s * (x * y + z * w),
        1.0 - s * (x * x + z * z),
        s * (y * z - x * w),
        s * (x * z - y * w),
        s * (y * z + x * w),
        1.0 - s * (x * x + y * y),
    )


@njit(inline="always", cache=True)
def _inertia_times(m, h0, h1, h2, ixx, iyy, izz, ixy, ixz, iyz, w0, w1, w2, v0, v1, v2):
    """Rigid-body inertia (mass m, first moment h, rotational inertia about the origin) times
    the motion [w; v]:  [Io w + h x v;  m v - h x w]  (RBDA eq. 2.63)."""
    c0, c1, c2 = _cross(h0, h1, h2, v0, v1, v2)
    d0, d1, d2 = _cross(h0, h1, h2, w0, w1, w2)
    return (
        ixx * w0 + ixy * w1 + ixz * w2 + c0,
        ixy * w0 + iyy * w1 + iyz * w2 + c1,
        ixz * w0 + iyz * w1 + izz * w2 + c2,
        m * v0 - d0,
        m * v1 - d1,
        m * v2 - d2,
    )


@njit(inline="always", cache=True)
def _cross_force(w0, w1, w2, v0, v1, v2, n0, n1, n2, f0, f1, f2):
    """Spatial force cross product [w; v] x* [n; f] = [w x n + v x f;  w x f]."""
    x0, x1, x2 = _cross(w0, w1, w2, n0, n1, n2)
    y0, y1, y2 = _cross(v0, v1, v2, f0, f1, f2)
    z0, z1, z2 = _cross(w0, w1, w2, f0, f1, f2)
    return x0 + y0, x1 + y1, x2 + y2, z0, z1, z2


@njit(inline="always", cache=True)
def _parent_to_child(r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2, w0, w1, w2, v0, v1, v2):
    """Motion vector [w; v] of the parent frame expressed in the child frame whose pose in the
    parent is (R, p):  [R^T w;  R^T (v + w x p)]."""
    c0, c1, c2 = _cross(w0, w1, w2, p0, p1, p2)
    u0 = v0 + c0
    u1 = v1 + c1
    u2 = v2 + c2
    return (
        r00 * w0 + r10 * w1 + r20 * w2,
        r01 * w0 + r11 * w1 + r21 * w2,
        r02 * w0 + r12 * w1 + r22 * w2,
        r00 * u0 + r10 * u1 + r20 * u2,
        r01 * u0 + r11 * u1 + r21 * u2,
        r02 * u0 + r12 * u1 + r22 * u2,
    )


# ----------------------------------------------------------------------------------------------
# joint pass: link poses, motion subspaces, velocities, velocity-product accelerations


@njit(cache=True)
def joint_pass(q, v, mi, mf, ws, mode):
    """Per link: pose (R, p) in the parent link; multi-axis S(q) into the S region;
    if ``mode & 1``: spatial velocity v_i and c_i = cJ + v_i x vJ;
    if ``mode & 2``: world pose (oR, op)."""
    joint_pass_links(q, v, mi, mf, ws, mode, mi[0], np.int64(-1))


@njit(cache=True)
def joint_pass_links(q, v, mi, mf, ws, mode, links, n):
    """:func:`joint_pass` over ``links[:n]`` only (a root-to-tip ordered subset such as the
    support chain of one link), or over every link when ``n < 0``."""
    nl = mi.shape[0]
    nv = mi[nl - 1, MI_IV] + mi[nl - 1, MI_NV]
    s_off = nl * WS_STRIDE
    tmp = s_off + 13 * nv
    count = nl if n < 0 else n
    for kk in range(count):
        k = kk if n < 0 else links[kk]
        par = mi[k, MI_PARENT]
        jt = mi[k, MI_TYPE]
        iq = mi[k, MI_IQ]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
        a0 = mf[b + MF_AXIS]
        a1 = mf[b + MF_AXIS + 1]
        a2 = mf[b + MF_AXIS + 2]
        p0 = 0.0
        p1 = 0.0
        p2 = 0.0
        r00 = 1.0
        r01 = 0.0
        r02 = 0.0
        r10 = 0.0
        r11 = 1.0
        r12 = 0.0
        r20 = 0.0
        r21 = 0.0
        r22 = 1.0
        if jt == JT_REVOLUTE:
            ac = mi[k, MI_AXIS]
            c = math.cos(q[iq])
            s = math.sin(q[iq])
            if ac == 1:
                r11 = c
                r12 = -s
                r21 = s
                r22 = c
            elif ac == 2:
                r00 = c
                r02 = s
                r20 = -s
                r22 = c
            elif ac == 3:
                r00 = c
                r01 = -s
                r10 = s
                r11 = c
            else:
                r00, r01, r02, r10, r11, r12, r20, r21, r22 = _rodrigues(a0, a1, a2, c, s)
        elif jt == JT_PRISMATIC:
            p0 = a0 * q[iq]
            p1 = a1 * q[iq]
            p2 = a2 * q[iq]
        elif jt == JT_HELICAL:
            c = math.cos(q[iq])
            s = math.sin(q[iq])
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = _rodrigues(a0, a1, a2, c, s)
            d = mf[b + MF_PITCH] * q[iq]
            p0 = a0 * d
            p1 = a1 * d
            p2 = a2 * d
        elif jt == JT_SPHERICAL:
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = _quat_matrix(
                q[iq], q[iq + 1], q[iq + 2], q[iq + 3]
            )
        elif jt == JT_FREEFLYER:
            p0 = q[iq]
            p1 = q[iq + 1]
            p2 = q[iq + 2]
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = _quat_matrix(
                q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
            )
        else:  # JT_MULTIAXIS: X = exp(s_1 q_1) ... exp(s_k q_k), axes mapped to the joint frame F0
            ao = mi[k, MI_AXES]
            Vw0 = 0.0
            Vw1 = 0.0
            Vw2 = 0.0
            Vv0 = 0.0
            Vv1 = 0.0
            Vv2 = 0.0
            Aw0 = 0.0
            Aw1 = 0.0
            Aw2 = 0.0
            Av0 = 0.0
            Av1 = 0.0
            Av2 = 0.0
            for i in range(nvj):
                o = ao + 6 * i
                w0 = mf[o]
                w1 = mf[o + 1]
                w2 = mf[o + 2]
                u0 = mf[o + 3]
                u1 = mf[o + 4]
                u2 = mf[o + 5]
                # the axis in F0 coordinates: X_0_(i-1) s_i
                sw0 = r00 * w0 + r01 * w1 + r02 * w2
                sw1 = r10 * w0 + r11 * w1 + r12 * w2
                sw2 = r20 * w0 + r21 * w1 + r22 * w2
                c0, c1, c2 = _cross(p0, p1, p2, sw0, sw1, sw2)
                sv0 = r00 * u0 + r01 * u1 + r02 * u2 + c0
                sv1 = r10 * u0 + r11 * u1 + r12 * u2 + c1
                sv2 = r20 * u0 + r21 * u1 + r22 * u2 + c2
                t = tmp + 6 * i
                ws[t] = sw0
                ws[t + 1] = sw1
                ws[t + 2] = sw2
                ws[t + 3] = sv0
                ws[t + 4] = sv1
                ws[t + 5] = sv2
                if mode & 1:
                    qd = v[iv + i]
                    # A += (V x s0) qd ;  V += s0 qd
                    x0, x1, x2 = _cross(Vw0, Vw1, Vw2, sw0, sw1, sw2)
                    y0, y1, y2 = _cross(Vw0, Vw1, Vw2, sv0, sv1, sv2)
                    z0, z1, z2 = _cross(Vv0, Vv1, Vv2, sw0, sw1, sw2)
                    Aw0 += x0 * qd
                    Aw1 += x1 * qd
                    Aw2 += x2 * qd
                    Av0 += (y0 + z0) * qd
                    Av1 += (y1 + z1) * qd
                    Av2 += (y2 + z2) * qd
                    Vw0 += sw0 * qd
                    Vw1 += sw1 * qd
                    Vw2 += sw2 * qd
                    Vv0 += sv0 * qd
                    Vv1 += sv1 * qd
                    Vv2 += sv2 * qd
                th = q[iq + i]
                if w0 * w0 + w1 * w1 + w2 * w2 > 0.5:
                    c = math.cos(th)
                    s = math.sin(th)
                    e00, e01, e02, e10, e11, e12, e20, e21, e22 = _rodrigues(w0, w1, w2, c, s)
                    x0, x1, x2 = _cross(w0, w1, w2, u0, u1, u2)
                    wu = (w0 * u0 + w1 * u1 + w2 * u2) * th
                    f0 = x0 - (e00 * x0 + e01 * x1 + e02 * x2) + w0 * wu
                    f1 = x1 - (e10 * x0 + e11 * x1 + e12 * x2) + w1 * wu
                    f2 = x2 - (e20 * x0 + e21 * x1 + e22 * x2) + w2 * wu
                else:
                    e00 = 1.0
                    e01 = 0.0
                    e02 = 0.0
                    e10 = 0.0
                    e11 = 1.0
                    e12 = 0.0
                    e20 = 0.0
                    e21 = 0.0
                    e22 = 1.0
                    f0 = u0 * th
                    f1 = u1 * th
                    f2 = u2 * th
                p0 += r00 * f0 + r01 * f1 + r02 * f2
                p1 += r10 * f0 + r11 * f1 + r12 * f2
                p2 += r20 * f0 + r21 * f1 + r22 * f2
                n00 = r00 * e00 + r01 * e10 + r02 * e20
                n01 = r00 * e01 + r01 * e11 + r02 * e21
                n02 = r00 * e02 + r01 * e12 + r02 * e22
                n10 = r10 * e00 + r11 * e10 + r12 * e20
                n11 = r10 * e01 + r11 * e11 + r12 * e21
                n12 = r10 * e02 + r11 * e12 + r12 * e22
                n20 = r20 * e00 + r21 * e10 + r22 * e20
                n21 = r20 * e01 + r21 * e11 + r22 * e21
                n22 = r20 * e02 + r21 * e12 + r22 * e22
                r00 = n00
                r01 = n01
                r02 = n02
                r10 = n10
                r11 = n11
                r12 = n12
                r20 = n20
                r21 = n21
                r22 = n22
            # S columns in child axes: X_child_0 s0
            for i in range(nvj):
                t = tmp + 6 * i
                sw0 = ws[t]
                sw1 = ws[t + 1]
                sw2 = ws[t + 2]
                c0, c1, c2 = _cross(p0, p1, p2, sw0, sw1, sw2)
                d0 = ws[t + 3] - c0
                d1 = ws[t + 4] - c1
                d2 = ws[t + 5] - c2
                so = s_off + 6 * (iv + i)
                ws[so] = r00 * sw0 + r10 * sw1 + r20 * sw2
                ws[so + 1] = r01 * sw0 + r11 * sw1 + r21 * sw2
                ws[so + 2] = r02 * sw0 + r12 * sw1 + r22 * sw2
                ws[so + 3] = r00 * d0 + r10 * d1 + r20 * d2
                ws[so + 4] = r01 * d0 + r11 * d1 + r21 * d2
                ws[so + 5] = r02 * d0 + r12 * d1 + r22 * d2
            if mode & 1:
                c0, c1, c2 = _cross(p0, p1, p2, Aw0, Aw1, Aw2)
                d0 = Av0 - c0
                d1 = Av1 - c1
                d2 = Av2 - c2
                ws[w + WS_CJ] = r00 * Aw0 + r10 * Aw1 + r20 * Aw2
                ws[w + WS_CJ + 1] = r01 * Aw0 + r11 * Aw1 + r21 * Aw2
                ws[w + WS_CJ + 2] = r02 * Aw0 + r12 * Aw1 + r22 * Aw2
                ws[w + WS_CJ + 3] = r00 * d0 + r10 * d1 + r20 * d2
                ws[w + WS_CJ + 4] = r01 * d0 + r11 * d1 + r21 * d2
                ws[w + WS_CJ + 5] = r02 * d0 + r12 * d1 + r22 * d2
        # compose with the joint placement: X_parent_link = X_parent_joint X_joint_link
        j0 = b + MF_JR
        q00 = mf[j0]
        q01 = mf[j0 + 1]
        q02 = mf[j0 + 2]
        q10 = mf[j0 + 3]
        q11 = mf[j0 + 4]
        q12 = mf[j0 + 5]
        q20 = mf[j0 + 6]
        q21 = mf[j0 + 7]
        q22 = mf[j0 + 8]
        R00 = q00 * r00 + q01 * r10 + q02 * r20
        R01 = q00 * r01 + q01 * r11 + q02 * r21
        R02 = q00 * r02 + q01 * r12 + q02 * r22
        R10 = q10 * r00 + q11 * r10 + q12 * r20
        R11 = q10 * r01 + q11 * r11 + q12 * r21
        R12 = q10 * r02 + q11 * r12 + q12 * r22
        R20 = q20 * r00 + q21 * r10 + q22 * r20
        R21 = q20 * r01 + q21 * r11 + q22 * r21
        R22 = q20 * r02 + q21 * r12 + q22 * r22
        P0 = mf[b + MF_JP] + q00 * p0 + q01 * p1 + q02 * p2
        P1 = mf[b + MF_JP + 1] + q10 * p0 + q11 * p1 + q12 * p2
        P2 = mf[b + MF_JP + 2] + q20 * p0 + q21 * p1 + q22 * p2
        ws[w + WS_R] = R00
        ws[w + WS_R + 1] = R01
        ws[w + WS_R + 2] = R02
        ws[w + WS_R + 3] = R10
        ws[w + WS_R + 4] = R11
        ws[w + WS_R + 5] = R12
        ws[w + WS_R + 6] = R20
        ws[w + WS_R + 7] = R21
        ws[w + WS_R + 8] = R22
        ws[w + WS_P] = P0
        ws[w + WS_P + 1] = P1
        ws[w + WS_P + 2] = P2
        if mode & 2:
            if par >= 0:
                wp = par * WS_STRIDE
                o00 = ws[wp + WS_OR]
                o01 = ws[wp + WS_OR + 1]
                o02 = ws[wp + WS_OR + 2]
                o10 = ws[wp + WS_OR + 3]
                o11 = ws[wp + WS_OR + 4]
                o12 = ws[wp + WS_OR + 5]
                o20 = ws[wp + WS_OR + 6]
                o21 = ws[wp + WS_OR + 7]
                o22 = ws[wp + WS_OR + 8]
                ws[w + WS_OR] = o00 * R00 + o01 * R10 + o02 * R20
                ws[w + WS_OR + 1] = o00 * R01 + o01 * R11 + o02 * R21
                ws[w + WS_OR + 2] = o00 * R02 + o01 * R12 + o02 * R22
                ws[w + WS_OR + 3] = o10 * R00 + o11 * R10 + o12 * R20
                ws[w + WS_OR + 4] = o10 * R01 + o11 * R11 + o12 * R21
                ws[w + WS_OR + 5] = o10 * R02 + o11 * R12 + o12 * R22
                ws[w + WS_OR + 6] = o20 * R00 + o21 * R10 + o22 * R20
                ws[w + WS_OR + 7] = o20 * R01 + o21 * R11 + o22 * R21
                ws[w + WS_OR + 8] = o20 * R02 + o21 * R12 + o22 * R22
                ws[w + WS_OP] = ws[wp + WS_OP] + o00 * P0 + o01 * P1 + o02 * P2
                ws[w + WS_OP + 1] = ws[wp + WS_OP + 1] + o10 * P0 + o11 * P1 + o12 * P2
                ws[w + WS_OP + 2] = ws[wp + WS_OP + 2] + o20 * P0 + o21 * P1 + o22 * P2
            else:
                for i in range(9):
                    ws[w + WS_OR + i] = ws[w + WS_R + i]
                for i in range(3):
                    ws[w + WS_OP + i] = ws[w + WS_P + i]
        if mode & 1:
            # v_i = X_i_parent v_parent + S qd
            if par >= 0:
                wp = par * WS_STRIDE
                vw0, vw1, vw2, vv0, vv1, vv2 = _parent_to_child(
                    R00, R01, R02, R10, R11, R12, R20, R21, R22, P0, P1, P2,
                    ws[wp + WS_V], ws[wp + WS_V + 1], ws[wp + WS_V + 2],
                    ws[wp + WS_V + 3], ws[wp + WS_V + 4], ws[wp + WS_V + 5],
                )
            else:
                vw0 = 0.0
                vw1 = 0.0
                vw2 = 0.0
                vv0 = 0.0
                vv1 = 0.0
                vv2 = 0.0
            jw0 = 0.0
            jw1 = 0.0
            jw2 = 0.0
            jv0 = 0.0
            jv1 = 0.0
            jv2 = 0.0
            for i in range(nvj):
                so = s_off + 6 * (iv + i)
                qd = v[iv + i]
                jw0 += ws[so] * qd
                jw1 += ws[so + 1] * qd
                jw2 += ws[so + 2] * qd
                jv0 += ws[so + 3] * qd
                jv1 += ws[so + 4] * qd
                jv2 += ws[so + 5] * qd
            vw0 += jw0
            vw1 += jw1
            vw2 += jw2
            vv0 += jv0
            vv1 += jv1
            vv2 += jv2
            ws[w + WS_V] = vw0
            ws[w + WS_V + 1] = vw1
            ws[w + WS_V + 2] = vw2
            ws[w + WS_V + 3] = vv0
            ws[w + WS_V + 4] = vv1
            ws[w + WS_V + 5] = vv2
            # c = cJ + v x vJ
            x0, x1, x2 = _cross(vw0, vw1, vw2, jw0, jw1, jw2)
            y0, y1, y2 = _cross(vw0, vw1, vw2, jv0, jv1, jv2)
            z0, z1, z2 = _cross(vv0, vv1, vv2, jw0, jw1, jw2)
            if jt == JT_MULTIAXIS:
                x0 += ws[w + WS_CJ]
                x1 += ws[w + WS_CJ + 1]
                x2 += ws[w + WS_CJ + 2]
                y0 += ws[w + WS_CJ + 3]
                y1 += ws[w + WS_CJ + 4]
                y2 += ws[w + WS_CJ + 5]
            ws[w + WS_C] = x0
            ws[w + WS_C + 1] = x1
            ws[w + WS_C + 2] = x2
            ws[w + WS_C + 3] = y0 + z0
            ws[w + WS_C + 4] = y1 + z1
            ws[w + WS_C + 5] = y2 + z2


@njit(cache=True)
def check_finite(x):
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return i
    return -1


@njit(cache=True)
def zero_quaternion(q, mi):
    """Index of the first link whose joint quaternion (spherical, free-flyer) is zero or
    subnormal (largest |component| < QUAT_TINY), or -1."""
    for k in range(mi.shape[0]):
        jt = mi[k, MI_TYPE]
        if jt == JT_SPHERICAL or jt == JT_FREEFLYER:
            i = mi[k, MI_IQ] + (3 if jt == JT_FREEFLYER else 0)
            if max(max(abs(q[i]), abs(q[i + 1])), max(abs(q[i + 2]), abs(q[i + 3]))) < QUAT_TINY:
                return k
    return -1


@njit(cache=True)
def check_q(q, mi):
    """0, -1 if q is not finite, or ``ZERO_QUATERNION - k`` if the quaternion of link k is zero
    (see :func:`sinews._checks.raise_kernel_code`)."""
    if check_finite(q) >= 0:
        return -1
    k = zero_quaternion(q, mi)
    if k >= 0:
        return ZERO_QUATERNION - k
    return 0


@njit(cache=True)
def check_inputs(q, v, a, fext, use_fext):
    if check_finite(q) >= 0:
        return -1
    if check_finite(v) >= 0:
        return -2
    if check_finite(a) >= 0:
        return -3
    if use_fext:
        for k in range(fext.shape[0]):
            for i in range(6):
                if not math.isfinite(fext[k, i]):
                    return -4
    return 0


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
    (``joint_pass(..., mode & 1)``); see :func:`rnea`."""
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
# CRBA


@njit(cache=True)
def crba(q, M, mi, mf, ws):
    """Joint-space inertia M(q) by the composite-rigid-body algorithm, in world axes:
    composite inertias Ic_k (world) are plain sums over subtrees, motion subspaces S_k are
    mapped to world axes once, and M[j, i] = S_j . (Ic_k S_i) for every dof j on the path from
    link k (the link of dof i) to the root.  Writes the ancestor entries of M (both triangles);
    other entries are left untouched (zero them once).  Returns 0, a :func:`check_q` code, or
    NOT_FINITE if M overflowed."""
    code = check_q(q, mi)
    if code != 0:
        return code
    joint_pass(q, q, mi, mf, ws, np.int64(2))
    crba_core(M, mi, mf, ws)
    # the written entries: M[i, j] for dof j of the link of dof i or of one of its ancestors
    # (the symmetric copies are equal)
    for k in range(mi.shape[0]):
        for i in range(mi[k, MI_IV], mi[k, MI_IV] + mi[k, MI_NV]):
            l = k
            while l >= 0:
                for j in range(mi[l, MI_IV], mi[l, MI_IV] + mi[l, MI_NV]):
                    if not math.isfinite(M[i, j]):
                        return NOT_FINITE
                l = mi[l, MI_PARENT]
    return 0


@njit(cache=True)
def crba_core(M, mi, mf, ws):
    """The CRBA over a workspace already holding the joint pass with world poses
    (``joint_pass(..., mode & 2)``); see :func:`crba`.  Leaves the world-axes motion subspaces
    in the U region of the workspace."""
    nl = mi.shape[0]
    nv = mi[nl - 1, MI_IV] + mi[nl - 1, MI_NV]
    s_off = nl * WS_STRIDE
    s0_off = s_off + 6 * nv  # world-axes S, in the U region
    for k in range(nl):
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
        R00 = ws[w + WS_OR]
        R01 = ws[w + WS_OR + 1]
        R02 = ws[w + WS_OR + 2]
        R10 = ws[w + WS_OR + 3]
        R11 = ws[w + WS_OR + 4]
        R12 = ws[w + WS_OR + 5]
        R20 = ws[w + WS_OR + 6]
        R21 = ws[w + WS_OR + 7]
        R22 = ws[w + WS_OR + 8]
        P0 = ws[w + WS_OP]
        P1 = ws[w + WS_OP + 1]
        P2 = ws[w + WS_OP + 2]
        m = mf[b + MF_MASS]
        h0 = mf[b + MF_H]
        h1 = mf[b + MF_H + 1]
        h2 = mf[b + MF_H + 2]
        hr0 = R00 * h0 + R01 * h1 + R02 * h2
        hr1 = R10 * h0 + R11 * h1 + R12 * h2
        hr2 = R20 * h0 + R21 * h1 + R22 * h2
        n00, n11, n22, n01, n02, n12 = _rot_sym(
            R00, R01, R02, R10, R11, R12, R20, R21, R22,
            mf[b + MF_IO], mf[b + MF_IO + 1], mf[b + MF_IO + 2],
            mf[b + MF_IO + 3], mf[b + MF_IO + 4], mf[b + MF_IO + 5],
        )
        # parallel-axis shift to the world origin:
        # + (2 hr.p + m|p|^2) 1 - (hr p^T + p hr^T + m p p^T)
        d = 2.0 * (hr0 * P0 + hr1 * P1 + hr2 * P2) + m * (P0 * P0 + P1 * P1 + P2 * P2)
        ws[w + WS_F] = m
        ws[w + WS_F + 1] = hr0 + m * P0
        ws[w + WS_F + 2] = hr1 + m * P1
        ws[w + WS_F + 3] = hr2 + m * P2
        ws[w + WS_F + 4] = n00 + d - 2.0 * hr0 * P0 - m * P0 * P0
        ws[w + WS_F + 5] = n11 + d - 2.0 * hr1 * P1 - m * P1 * P1
        ws[w + WS_F + 6] = n22 + d - 2.0 * hr2 * P2 - m * P2 * P2
        ws[w + WS_F + 7] = n01 - hr0 * P1 - P0 * hr1 - m * P0 * P1
        ws[w + WS_F + 8] = n02 - hr0 * P2 - P0 * hr2 - m * P0 * P2
        ws[w + WS_F + 9] = n12 - hr1 * P2 - P1 * hr2 - m * P1 * P2
        # S in world axes (at the world origin)
        iv = mi[k, MI_IV]
        for i in range(mi[k, MI_NV]):
            so = s_off + 6 * (iv + i)
            sw0 = ws[so]
            sw1 = ws[so + 1]
            sw2 = ws[so + 2]
            sv0 = ws[so + 3]
            sv1 = ws[so + 4]
            sv2 = ws[so + 5]
            w0 = R00 * sw0 + R01 * sw1 + R02 * sw2
            w1 = R10 * sw0 + R11 * sw1 + R12 * sw2
            w2 = R20 * sw0 + R21 * sw1 + R22 * sw2
            c0, c1, c2 = _cross(P0, P1, P2, w0, w1, w2)
            o = s0_off + 6 * (iv + i)
            ws[o] = w0
            ws[o + 1] = w1
            ws[o + 2] = w2
            ws[o + 3] = R00 * sv0 + R01 * sv1 + R02 * sv2 + c0
            ws[o + 4] = R10 * sv0 + R11 * sv1 + R12 * sv2 + c1
            ws[o + 5] = R20 * sv0 + R21 * sv1 + R22 * sv2 + c2
    for k in range(nl - 1, -1, -1):
        par = mi[k, MI_PARENT]
        if par >= 0:
            w = k * WS_STRIDE
            wp = par * WS_STRIDE
            for i in range(10):
                ws[wp + WS_F + i] += ws[w + WS_F + i]
    for k in range(nl):
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        m = ws[w + WS_F]
        h0 = ws[w + WS_F + 1]
        h1 = ws[w + WS_F + 2]
        h2 = ws[w + WS_F + 3]
        ixx = ws[w + WS_F + 4]
        iyy = ws[w + WS_F + 5]
        izz = ws[w + WS_F + 6]
        ixy = ws[w + WS_F + 7]
        ixz = ws[w + WS_F + 8]
        iyz = ws[w + WS_F + 9]
        for i in range(nvj):
            col = iv + i
            so = s0_off + 6 * col
            sw0 = ws[so]
            sw1 = ws[so + 1]
            sw2 = ws[so + 2]
            sv0 = ws[so + 3]
            sv1 = ws[so + 4]
            sv2 = ws[so + 5]
            c0, c1, c2 = _cross(h0, h1, h2, sv0, sv1, sv2)
            fn0 = ixx * sw0 + ixy * sw1 + ixz * sw2 + c0
            fn1 = ixy * sw0 + iyy * sw1 + iyz * sw2 + c1
            fn2 = ixz * sw0 + iyz * sw1 + izz * sw2 + c2
            c0, c1, c2 = _cross(h0, h1, h2, sw0, sw1, sw2)
            ff0 = m * sv0 - c0
            ff1 = m * sv1 - c1
            ff2 = m * sv2 - c2
            # dofs of the same joint (j >= i), then the ancestors
            for jj in range(i, nvj):
                sj = s0_off + 6 * (iv + jj)
                val = (
                    ws[sj] * fn0 + ws[sj + 1] * fn1 + ws[sj + 2] * fn2
                    + ws[sj + 3] * ff0 + ws[sj + 4] * ff1 + ws[sj + 5] * ff2
                )
                M[iv + jj, col] = val
                M[col, iv + jj] = val
            l = mi[k, MI_PARENT]
            while l >= 0:
                ivp = mi[l, MI_IV]
                for jj in range(mi[l, MI_NV]):
                    sj = s0_off + 6 * (ivp + jj)
                    val = (
                        ws[sj] * fn0 + ws[sj + 1] * fn1 + ws[sj + 2] * fn2
                        + ws[sj + 3] * ff0 + ws[sj + 4] * ff1 + ws[sj + 5] * ff2
                    )
                    M[ivp + jj, col] = val
                    M[col, ivp + jj] = val
                l = mi[l, MI_PARENT]
    return 0


# ----------------------------------------------------------------------------------------------
# ABA
#
# Articulated inertias are symmetric 6x6 matrices [[A, B], [B^T, C]] stored as 21 values:
# A (xx, yy, zz, xy, xz, yz), B (row-major 3x3), C (xx, yy, zz, xy, xz, yz).


@njit(inline="always", cache=True)
def _rot_sym(r00, r01, r02, r10, r11, r12, r20, r21, r22, xx, yy, zz, xy, xz, yz):
    """R S R^T for symmetric S, returned as (xx, yy, zz, xy, xz, yz)."""
    # T = S R^T
    t00 = xx * r00 + xy * r01 + xz * r02
    t01 = xx * r10 + xy * r11 + xz * r12
    t02 = xx * r20 + xy * r21 + xz * r22
    t10 = xy * r00 + yy * r01 + yz * r02
    t11 = xy * r10 + yy * r11 + yz * r12
    t12 = xy * r20 + yy * r21 + yz * r22
    t20 = xz * r00 + yz * r01 + zz * r02
    t21 = xz * r10 + yz * r11 + zz * r12
    t22 = xz * r20 + yz * r21 + zz * r22
    return (
        r00 * t00 + r01 * t10 + r02 * t20,
        r10 * t01 + r11 * t11 + r12 * t21,
        r20 * t02 + r21 * t12 + r22 * t22,
        r00 * t01 + r01 * t11 + r02 * t21,
        r00 * t02 + r01 * t12 + r02 * t22,
        r10 * t02 + r11 * t12 + r12 * t22,
    )


@njit(inline="always", cache=True)
def _rot_gen(r00, r01, r02, r10, r11, r12, r20, r21, r22, g00, g01, g02, g10, g11, g12, g20, g21, g22):
    """R G R^T for a general 3x3 G (row-major result)."""
    t00 = g00 * r00 + g01 * r01 + g02 * r02
    t01 = g00 * r10 + g01 * r11 + g02 * r12
    t02 = g00 * r20 + g01 * r21 + g02 * r22
    t10 = g10 * r00 + g11 * r01 + g12 * r02
    t11 = g10 * r10 + g11 * r11 + g12 * r12
    t12 = g10 * r20 + g11 * r21 + g12 * r22
    t20 = g20 * r00 + g21 * r01 + g22 * r02
    t21 = g20 * r10 + g21 * r11 + g22 * r12
    t22 = g20 * r20 + g21 * r21 + g22 * r22
    return (
        r00 * t00 + r01 * t10 + r02 * t20,
        r00 * t01 + r01 * t11 + r02 * t21,
        r00 * t02 + r01 * t12 + r02 * t22,
        r10 * t00 + r11 * t10 + r12 * t20,
        r10 * t01 + r11 * t11 + r12 * t21,
        r10 * t02 + r11 * t12 + r12 * t22,
        r20 * t00 + r21 * t10 + r22 * t20,
        r20 * t01 + r21 * t11 + r22 * t21,
        r20 * t02 + r21 * t12 + r22 * t22,
    )


@njit(cache=True)
def aba(q, v, tau, fext, qdd, mi, mf, ws, flags):
    """qdd = FD(q, v, tau, fext) by the articulated-body algorithm.  flags & 1: use fext;
    flags & 2: no gravity; flags & 4: ignore velocities (then qdd = M^-1 (tau + J^T fext)).
    Returns 0, -1/-2/-3/-4 if q/v/tau/fext is not finite, a zero-quaternion code
    (:func:`check_q`), NOT_FINITE if qdd overflowed, or 1 + the index of a link whose
    D = S^T IA S is not positive definite (a massless subtree)."""
    nl = mi.shape[0]
    nv = mi[nl - 1, MI_IV] + mi[nl - 1, MI_NV]
    s_off = nl * WS_STRIDE
    u6_off = s_off + 6 * nv
    u_off = u6_off + 6 * nv
    tmp = u_off + nv
    tIa = tmp + TMP_IA
    tUD = tmp + TMP_UD
    tD = tmp + TMP_D
    novel = flags & 4
    code = check_inputs(q, v, tau, fext, flags & 1)
    if code == 0:
        code = check_q(q, mi)
    if code != 0:
        return code
    joint_pass(q, v, mi, mf, ws, 0 if novel else 1)
    if flags & 2:
        g0 = 0.0
        g1 = 0.0
        g2 = 0.0
    else:
        g0 = mf[0]
        g1 = mf[1]
        g2 = mf[2]
    for k in range(nl):
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
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
        ia = w + WS_IA
        # [[Io, [h]x], [[h]x^T, m 1]]
        ws[ia] = ixx
        ws[ia + 1] = iyy
        ws[ia + 2] = izz
        ws[ia + 3] = ixy
        ws[ia + 4] = ixz
        ws[ia + 5] = iyz
        ws[ia + 6] = 0.0
        ws[ia + 7] = -h2
        ws[ia + 8] = h1
        ws[ia + 9] = h2
        ws[ia + 10] = 0.0
        ws[ia + 11] = -h0
        ws[ia + 12] = -h1
        ws[ia + 13] = h0
        ws[ia + 14] = 0.0
        ws[ia + 15] = m
        ws[ia + 16] = m
        ws[ia + 17] = m
        ws[ia + 18] = 0.0
        ws[ia + 19] = 0.0
        ws[ia + 20] = 0.0
        if novel:
            pn0 = 0.0
            pn1 = 0.0
            pn2 = 0.0
            pf0 = 0.0
            pf1 = 0.0
            pf2 = 0.0
            for i in range(6):
                ws[w + WS_C + i] = 0.0
        else:
            vw0 = ws[w + WS_V]
            vw1 = ws[w + WS_V + 1]
            vw2 = ws[w + WS_V + 2]
            vv0 = ws[w + WS_V + 3]
            vv1 = ws[w + WS_V + 4]
            vv2 = ws[w + WS_V + 5]
            gn0, gn1, gn2, gf0, gf1, gf2 = _inertia_times(
                m, h0, h1, h2, ixx, iyy, izz, ixy, ixz, iyz, vw0, vw1, vw2, vv0, vv1, vv2
            )
            pn0, pn1, pn2, pf0, pf1, pf2 = _cross_force(
                vw0, vw1, vw2, vv0, vv1, vv2, gn0, gn1, gn2, gf0, gf1, gf2
            )
        if flags & 1:
            pn0 -= fext[k, 0]
            pn1 -= fext[k, 1]
            pn2 -= fext[k, 2]
            pf0 -= fext[k, 3]
            pf1 -= fext[k, 4]
            pf2 -= fext[k, 5]
        ws[w + WS_PA] = pn0
        ws[w + WS_PA + 1] = pn1
        ws[w + WS_PA + 2] = pn2
        ws[w + WS_PA + 3] = pf0
        ws[w + WS_PA + 4] = pf1
        ws[w + WS_PA + 5] = pf2
    # backward pass
    for k in range(nl - 1, -1, -1):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        ia = w + WS_IA
        dinv = w + WS_DINV
        axx = ws[ia]
        ayy = ws[ia + 1]
        azz = ws[ia + 2]
        axy = ws[ia + 3]
        axz = ws[ia + 4]
        ayz = ws[ia + 5]
        b00 = ws[ia + 6]
        b01 = ws[ia + 7]
        b02 = ws[ia + 8]
        b10 = ws[ia + 9]
        b11 = ws[ia + 10]
        b12 = ws[ia + 11]
        b20 = ws[ia + 12]
        b21 = ws[ia + 13]
        b22 = ws[ia + 14]
        cxx = ws[ia + 15]
        cyy = ws[ia + 16]
        czz = ws[ia + 17]
        cxy = ws[ia + 18]
        cxz = ws[ia + 19]
        cyz = ws[ia + 20]
        pn0 = ws[w + WS_PA]
        pn1 = ws[w + WS_PA + 1]
        pn2 = ws[w + WS_PA + 2]
        pf0 = ws[w + WS_PA + 3]
        pf1 = ws[w + WS_PA + 4]
        pf2 = ws[w + WS_PA + 5]
        if nvj == 1:
            so = s_off + 6 * iv
            sw0 = ws[so]
            sw1 = ws[so + 1]
            sw2 = ws[so + 2]
            sv0 = ws[so + 3]
            sv1 = ws[so + 4]
            sv2 = ws[so + 5]
            # U = IA S
            ut0 = axx * sw0 + axy * sw1 + axz * sw2 + b00 * sv0 + b01 * sv1 + b02 * sv2
            ut1 = axy * sw0 + ayy * sw1 + ayz * sw2 + b10 * sv0 + b11 * sv1 + b12 * sv2
            ut2 = axz * sw0 + ayz * sw1 + azz * sw2 + b20 * sv0 + b21 * sv1 + b22 * sv2
            ub0 = b00 * sw0 + b10 * sw1 + b20 * sw2 + cxx * sv0 + cxy * sv1 + cxz * sv2
            ub1 = b01 * sw0 + b11 * sw1 + b21 * sw2 + cxy * sv0 + cyy * sv1 + cyz * sv2
            ub2 = b02 * sw0 + b12 * sw1 + b22 * sw2 + cxz * sv0 + cyz * sv1 + czz * sv2
            uo = u6_off + 6 * iv
            ws[uo] = ut0
            ws[uo + 1] = ut1
            ws[uo + 2] = ut2
            ws[uo + 3] = ub0
            ws[uo + 4] = ub1
            ws[uo + 5] = ub2
            d = sw0 * ut0 + sw1 * ut1 + sw2 * ut2 + sv0 * ub0 + sv1 * ub1 + sv2 * ub2
            if not d > 0.0:
                return k + 1
            uu = tau[iv] - (sw0 * pn0 + sw1 * pn1 + sw2 * pn2 + sv0 * pf0 + sv1 * pf1 + sv2 * pf2)
            ws[u_off + iv] = uu
            dinvv = 1.0 / d
            ws[dinv] = dinvv
            if par < 0:
                continue
            # Ia = IA - U U^T / D ; pa = pA + Ia c + U u / D
            e0 = ut0 * dinvv
            e1 = ut1 * dinvv
            e2 = ut2 * dinvv
            f0 = ub0 * dinvv
            f1 = ub1 * dinvv
            f2 = ub2 * dinvv
            axx -= e0 * ut0
            ayy -= e1 * ut1
            azz -= e2 * ut2
            axy -= e0 * ut1
            axz -= e0 * ut2
            ayz -= e1 * ut2
            b00 -= e0 * ub0
            b01 -= e0 * ub1
            b02 -= e0 * ub2
            b10 -= e1 * ub0
            b11 -= e1 * ub1
            b12 -= e1 * ub2
            b20 -= e2 * ub0
            b21 -= e2 * ub1
            b22 -= e2 * ub2
            cxx -= f0 * ub0
            cyy -= f1 * ub1
            czz -= f2 * ub2
            cxy -= f0 * ub1
            cxz -= f0 * ub2
            cyz -= f1 * ub2
            pn0 += e0 * uu
            pn1 += e1 * uu
            pn2 += e2 * uu
            pf0 += f0 * uu
            pf1 += f1 * uu
            pf2 += f2 * uu
        else:
            # generic multi-dof joint: expand IA to a full 6x6 in tmp
            for r in range(3):
                for c in range(3):
                    ws[tIa + 6 * r + 3 + c] = ws[ia + 6 + 3 * r + c]
                    ws[tIa + 6 * (3 + c) + r] = ws[ia + 6 + 3 * r + c]
            ws[tIa] = axx
            ws[tIa + 7] = ayy
            ws[tIa + 14] = azz
            ws[tIa + 1] = axy
            ws[tIa + 6] = axy
            ws[tIa + 2] = axz
            ws[tIa + 12] = axz
            ws[tIa + 8] = ayz
            ws[tIa + 13] = ayz
            ws[tIa + 21] = cxx
            ws[tIa + 28] = cyy
            ws[tIa + 35] = czz
            ws[tIa + 22] = cxy
            ws[tIa + 27] = cxy
            ws[tIa + 23] = cxz
            ws[tIa + 33] = cxz
            ws[tIa + 29] = cyz
            ws[tIa + 34] = cyz
            # U = IA S ; u = tau - S^T pA
            for i in range(nvj):
                so = s_off + 6 * (iv + i)
                uo = u6_off + 6 * (iv + i)
                for r in range(6):
                    acc = 0.0
                    for c in range(6):
                        acc += ws[tIa + 6 * r + c] * ws[so + c]
                    ws[uo + r] = acc
                ws[u_off + iv + i] = tau[iv + i] - (
                    ws[so] * pn0 + ws[so + 1] * pn1 + ws[so + 2] * pn2
                    + ws[so + 3] * pf0 + ws[so + 4] * pf1 + ws[so + 5] * pf2
                )
            for i in range(nvj):
                for j in range(nvj):
                    so = s_off + 6 * (iv + i)
                    uo = u6_off + 6 * (iv + j)
                    d = 0.0
                    for r in range(6):
                        d += ws[so + r] * ws[uo + r]
                    ws[tD + nvj * i + j] = d
                    ws[dinv + nvj * i + j] = 1.0 if i == j else 0.0
            # Gauss-Jordan inverse (D is symmetric positive definite: no pivoting needed)
            for c in range(nvj):
                piv = ws[tD + nvj * c + c]
                if not piv > 0.0:
                    return k + 1
                inv = 1.0 / piv
                for j in range(nvj):
                    ws[tD + nvj * c + j] *= inv
                    ws[dinv + nvj * c + j] *= inv
                for r in range(nvj):
                    if r != c:
                        f = ws[tD + nvj * r + c]
                        if f != 0.0:
                            for j in range(nvj):
                                ws[tD + nvj * r + j] -= f * ws[tD + nvj * c + j]
                                ws[dinv + nvj * r + j] -= f * ws[dinv + nvj * c + j]
            if par < 0:
                continue
            # UD = U Dinv (6 x nvj)
            for r in range(6):
                for j in range(nvj):
                    acc = 0.0
                    for i in range(nvj):
                        acc += ws[u6_off + 6 * (iv + i) + r] * ws[dinv + nvj * i + j]
                    ws[tUD + nvj * r + j] = acc
            # Ia = IA - UD U^T (into tmp) ; pa = pA + UD u
            for r in range(6):
                for c in range(6):
                    acc = ws[tIa + 6 * r + c]
                    for i in range(nvj):
                        acc -= ws[tUD + nvj * r + i] * ws[u6_off + 6 * (iv + i) + c]
                    ws[tIa + 6 * r + c] = acc
            for i in range(nvj):
                ui = ws[u_off + iv + i]
                pn0 += ws[tUD + i] * ui
                pn1 += ws[tUD + nvj + i] * ui
                pn2 += ws[tUD + 2 * nvj + i] * ui
                pf0 += ws[tUD + 3 * nvj + i] * ui
                pf1 += ws[tUD + 4 * nvj + i] * ui
                pf2 += ws[tUD + 5 * nvj + i] * ui
            axx = ws[tIa]
            ayy = ws[tIa + 7]
            azz = ws[tIa + 14]
            axy = ws[tIa + 1]
            axz = ws[tIa + 2]
            ayz = ws[tIa + 8]
            b00 = ws[tIa + 3]
            b01 = ws[tIa + 4]
            b02 = ws[tIa + 5]
            b10 = ws[tIa + 9]
            b11 = ws[tIa + 10]
            b12 = ws[tIa + 11]
            b20 = ws[tIa + 15]
            b21 = ws[tIa + 16]
            b22 = ws[tIa + 17]
            cxx = ws[tIa + 21]
            cyy = ws[tIa + 28]
            czz = ws[tIa + 35]
            cxy = ws[tIa + 22]
            cxz = ws[tIa + 23]
            cyz = ws[tIa + 29]
        # pa += Ia c
        c0 = ws[w + WS_C]
        c1 = ws[w + WS_C + 1]
        c2 = ws[w + WS_C + 2]
        c3 = ws[w + WS_C + 3]
        c4 = ws[w + WS_C + 4]
        c5 = ws[w + WS_C + 5]
        pn0 += axx * c0 + axy * c1 + axz * c2 + b00 * c3 + b01 * c4 + b02 * c5
        pn1 += axy * c0 + ayy * c1 + ayz * c2 + b10 * c3 + b11 * c4 + b12 * c5
        pn2 += axz * c0 + ayz * c1 + azz * c2 + b20 * c3 + b21 * c4 + b22 * c5
        pf0 += b00 * c0 + b10 * c1 + b20 * c2 + cxx * c3 + cxy * c4 + cxz * c5
        pf1 += b01 * c0 + b11 * c1 + b21 * c2 + cxy * c3 + cyy * c4 + cyz * c5
        pf2 += b02 * c0 + b12 * c1 + b22 * c2 + cxz * c3 + cyz * c4 + czz * c5
        # to the parent: pA_p += X* pa ; IA_p += X* Ia X^-1
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
        P0 = ws[w + WS_P]
        P1 = ws[w + WS_P + 1]
        P2 = ws[w + WS_P + 2]
        gf0 = R00 * pf0 + R01 * pf1 + R02 * pf2
        gf1 = R10 * pf0 + R11 * pf1 + R12 * pf2
        gf2 = R20 * pf0 + R21 * pf1 + R22 * pf2
        x0, x1, x2 = _cross(P0, P1, P2, gf0, gf1, gf2)
        ws[wp + WS_PA] += R00 * pn0 + R01 * pn1 + R02 * pn2 + x0
        ws[wp + WS_PA + 1] += R10 * pn0 + R11 * pn1 + R12 * pn2 + x1
        ws[wp + WS_PA + 2] += R20 * pn0 + R21 * pn1 + R22 * pn2 + x2
        ws[wp + WS_PA + 3] += gf0
        ws[wp + WS_PA + 4] += gf1
        ws[wp + WS_PA + 5] += gf2
        # rotate the blocks
        axx, ayy, azz, axy, axz, ayz = _rot_sym(R00, R01, R02, R10, R11, R12, R20, R21, R22, axx, ayy, azz, axy, axz, ayz)
        cxx, cyy, czz, cxy, cxz, cyz = _rot_sym(R00, R01, R02, R10, R11, R12, R20, R21, R22, cxx, cyy, czz, cxy, cxz, cyz)
        b00, b01, b02, b10, b11, b12, b20, b21, b22 = _rot_gen(
            R00, R01, R02, R10, R11, R12, R20, R21, R22, b00, b01, b02, b10, b11, b12, b20, b21, b22
        )
        # translate: C12 = B12 + P B22 ; C11 = B11 + P B12^T - C12 P ; C22 = B22
        x0, x1, x2 = _cross(P0, P1, P2, cxx, cxy, cxz)
        y0, y1, y2 = _cross(P0, P1, P2, cxy, cyy, cyz)
        z0, z1, z2 = _cross(P0, P1, P2, cxz, cyz, czz)
        e00 = b00 + x0
        e10 = b10 + x1
        e20 = b20 + x2
        e01 = b01 + y0
        e11 = b11 + y1
        e21 = b21 + y2
        e02 = b02 + z0
        e12 = b12 + z1
        e22 = b22 + z2
        # X = P B12^T: column j is p x (row j of B12)
        x0, x1, x2 = _cross(P0, P1, P2, b00, b01, b02)
        y0, y1, y2 = _cross(P0, P1, P2, b10, b11, b12)
        z0, z1, z2 = _cross(P0, P1, P2, b20, b21, b22)
        # Y = C12 P: row i is (row i of C12) x p
        k00, k01, k02 = _cross(e00, e01, e02, P0, P1, P2)
        k10, k11, k12 = _cross(e10, e11, e12, P0, P1, P2)
        k20, k21, k22 = _cross(e20, e21, e22, P0, P1, P2)
        ipa = wp + WS_IA
        ws[ipa] += axx + x0 - k00
        ws[ipa + 1] += ayy + y1 - k11
        ws[ipa + 2] += azz + z2 - k22
        ws[ipa + 3] += axy + y0 - k01
        ws[ipa + 4] += axz + z0 - k02
        ws[ipa + 5] += ayz + z1 - k12
        ws[ipa + 6] += e00
        ws[ipa + 7] += e01
        ws[ipa + 8] += e02
        ws[ipa + 9] += e10
        ws[ipa + 10] += e11
        ws[ipa + 11] += e12
        ws[ipa + 12] += e20
        ws[ipa + 13] += e21
        ws[ipa + 14] += e22
        ws[ipa + 15] += cxx
        ws[ipa + 16] += cyy
        ws[ipa + 17] += czz
        ws[ipa + 18] += cxy
        ws[ipa + 19] += cxz
        ws[ipa + 20] += cyz
    # forward pass
    for k in range(nl):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
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
        # a = X_i_parent a_parent + c (+ S qdd below); the world's acceleration is [0; -g]
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
        aw0 += ws[w + WS_C]
        aw1 += ws[w + WS_C + 1]
        aw2 += ws[w + WS_C + 2]
        av0 += ws[w + WS_C + 3]
        av1 += ws[w + WS_C + 4]
        av2 += ws[w + WS_C + 5]
        dinv = w + WS_DINV
        if nvj == 1:
            uo = u6_off + 6 * iv
            acc = ws[dinv] * (
                ws[u_off + iv]
                - (
                    ws[uo] * aw0
                    + ws[uo + 1] * aw1
                    + ws[uo + 2] * aw2
                    + ws[uo + 3] * av0
                    + ws[uo + 4] * av1
                    + ws[uo + 5] * av2
                )
            )
            qdd[iv] = acc
            so = s_off + 6 * iv
            aw0 += ws[so] * acc
            aw1 += ws[so + 1] * acc
            aw2 += ws[so + 2] * acc
            av0 += ws[so + 3] * acc
            av1 += ws[so + 4] * acc
            av2 += ws[so + 5] * acc
        else:
            # rhs_i = u_i - U_i . a'
            for i in range(nvj):
                uo = u6_off + 6 * (iv + i)
                ws[tD + i] = ws[u_off + iv + i] - (
                    ws[uo] * aw0
                    + ws[uo + 1] * aw1
                    + ws[uo + 2] * aw2
                    + ws[uo + 3] * av0
                    + ws[uo + 4] * av1
                    + ws[uo + 5] * av2
                )
            for i in range(nvj):
                acc = 0.0
                for j in range(nvj):
                    acc += ws[dinv + nvj * i + j] * ws[tD + j]
                qdd[iv + i] = acc
                so = s_off + 6 * (iv + i)
                aw0 += ws[so] * acc
                aw1 += ws[so + 1] * acc
                aw2 += ws[so + 2] * acc
                av0 += ws[so + 3] * acc
                av1 += ws[so + 4] * acc
                av2 += ws[so + 5] * acc
        ws[w + WS_A] = aw0
        ws[w + WS_A + 1] = aw1
        ws[w + WS_A + 2] = aw2
        ws[w + WS_A + 3] = av0
        ws[w + WS_A + 4] = av1
        ws[w + WS_A + 5] = av2
    if check_finite(qdd) >= 0:
        return NOT_FINITE
    return 0


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


# ----------------------------------------------------------------------------------------------
# Configuration integration on the manifold


@njit(inline="always", cache=True)
def _quat_exp_mul(x, y, z, w, p0, p1, p2):
    """(x, y, z, w) * exp(phi / 2) for a rotation vector phi: the quaternion of R exp([phi]x)."""
    th = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    if th < 1e-8:
        s = 0.5 - th * th / 48.0
        c = 1.0 - th * th / 8.0
    else:
        s = math.sin(0.5 * th) / th
        c = math.cos(0.5 * th)
    bx = s * p0
    by = s * p1
    bz = s * p2
    rx = w * bx + x * c + y * bz - z * by
    ry = w * by - x * bz + y * c + z * bx
    rz = w * bz + x * by - y * bx + z * c
    rw = w * c - x * bx - y * by - z * bz
    n = math.sqrt(rx * rx + ry * ry + rz * rz + rw * rw)  # ~1: the input is a unit quaternion
    return rx / n, ry / n, rz / n, rw / n


@njit(cache=True)
def integrate(q, v, dt, out, mi):
    """out = q (+) v dt: Euclidean coordinates move by v dt; quaternion joints follow the
    constant body velocity (SO(3) exponential; SE(3) exponential for the free-flyer).
    Returns 0, or NOT_FINITE if ``out`` overflowed (huge ``v dt``)."""
    nl = mi.shape[0]
    for k in range(nl):
        jt = mi[k, MI_TYPE]
        iq = mi[k, MI_IQ]
        iv = mi[k, MI_IV]
        if jt == JT_SPHERICAL:
            x, y, z, w = _quat_exp_mul(q[iq], q[iq + 1], q[iq + 2], q[iq + 3], v[iv] * dt, v[iv + 1] * dt, v[iv + 2] * dt)
            out[iq] = x
            out[iq + 1] = y
            out[iq + 2] = z
            out[iq + 3] = w
        elif jt == JT_FREEFLYER:
            x = q[iq + 3]
            y = q[iq + 4]
            z = q[iq + 5]
            w = q[iq + 6]
            p0 = v[iv] * dt
            p1 = v[iv + 1] * dt
            p2 = v[iv + 2] * dt
            u0 = v[iv + 3] * dt
            u1 = v[iv + 4] * dt
            u2 = v[iv + 5] * dt
            # dp = J_l(phi) u = u + a (phi x u) + b phi x (phi x u)
            th2 = p0 * p0 + p1 * p1 + p2 * p2
            if th2 < 1e-4:  # Taylor series: no cancellation for small rotations
                a = 0.5 - th2 / 24.0 + th2 * th2 / 720.0
                b = 1.0 / 6.0 - th2 / 120.0 + th2 * th2 / 5040.0
            else:
                th = math.sqrt(th2)
                hs = math.sin(0.5 * th) / th
                a = 2.0 * hs * hs
                b = (th - math.sin(th)) / (th2 * th)
            c0, c1, c2 = _cross(p0, p1, p2, u0, u1, u2)
            e0, e1, e2 = _cross(p0, p1, p2, c0, c1, c2)
            d0 = u0 + a * c0 + b * e0
            d1 = u1 + a * c1 + b * e1
            d2 = u2 + a * c2 + b * e2
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = _quat_matrix(x, y, z, w)
            out[iq] = q[iq] + r00 * d0 + r01 * d1 + r02 * d2
            out[iq + 1] = q[iq + 1] + r10 * d0 + r11 * d1 + r12 * d2
            out[iq + 2] = q[iq + 2] + r20 * d0 + r21 * d1 + r22 * d2
            x, y, z, w = _quat_exp_mul(x, y, z, w, p0, p1, p2)
            out[iq + 3] = x
            out[iq + 4] = y
            out[iq + 5] = z
            out[iq + 6] = w
        else:
            for i in range(mi[k, MI_NV]):
                out[iq + i] = q[iq + i] + v[iv + i] * dt
    if check_finite(out) >= 0:
        return NOT_FINITE
    return 0


# ----------------------------------------------------------------------------------------------
# Entry kernels of the public fast path (see sinews._entry): the argument shapes are checked
# here, so that the Python wrapper only has to pick the workspace.  Each is compiled for one
# signature (contiguous, writeable, aligned float64 arrays) and dispatched by Numba's C
# dispatcher with compilation disabled; any other argument type raises there and the wrapper
# falls back to its checked path.

from ._layout import MI_NQ as _MI_NQ  # noqa: E402

#: Returned by the entry kernels when an argument has the wrong length (the checked path then
#: reports it).
BAD_SHAPE = -30


@njit(cache=True)
def _dims(mi):
    nq = 0
    nv = 0
    for k in range(mi.shape[0]):
        e = mi[k, MI_IQ] + mi[k, _MI_NQ]
        if e > nq:
            nq = e
        e = mi[k, MI_IV] + mi[k, MI_NV]
        if e > nv:
            nv = e
    return nq, nv


@njit(cache=True)
def rnea_x(q, v, a, tau, mi, mf, ws):
    """:func:`rnea` without external forces, after checking the lengths of q, v, a and tau."""
    nq, nv = _dims(mi)
    if q.shape[0] != nq or v.shape[0] != nv or a.shape[0] != nv or tau.shape[0] != nv:
        return BAD_SHAPE
    return rnea(q, v, a, ws[:6].reshape((1, 6)), tau, mi, mf, ws, 0)


@njit(cache=True)
def aba_x(q, v, tau, qdd, mi, mf, ws):
    """:func:`aba` without external forces, after checking the lengths of q, v, tau and qdd."""
    nq, nv = _dims(mi)
    if q.shape[0] != nq or v.shape[0] != nv or tau.shape[0] != nv or qdd.shape[0] != nv:
        return BAD_SHAPE
    return aba(q, v, tau, ws[:6].reshape((1, 6)), qdd, mi, mf, ws, 0)


@njit(cache=True)
def crba_x(q, M, mi, mf, ws):
    """:func:`crba` after checking the length of q and the shape of M (which it zeroes)."""
    nq, nv = _dims(mi)
    if q.shape[0] != nq or M.shape[0] != nv or M.shape[1] != nv:
        return BAD_SHAPE
    M[:, :] = 0.0
    return crba(q, M, mi, mf, ws)
