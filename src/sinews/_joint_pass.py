"""Shared Numba kernel pieces over the compiled model arrays (``mi``, ``mf``) and a workspace
(``ws``): the inlined scalar helpers and the joint pass (``joint_pass``, ``joint_pass_links``).
The input checks and the entry kernels' argument lengths are in :mod:`sinews._kernel_checks`
(re-exported here).

Design (see ``docs/performance.md``): one kernel per algorithm, few array arguments, flat 1-D
indexing with constant offsets from :mod:`sinews._layout`, transforms as (R, p) pairs, and no
helper that takes arrays inside a hot loop (the small helpers here take and return scalars and
are inlined; the one exception, ``_placed``, reads the joint placement from ``mf`` and writes the
pose to ``ws``, and is inlined by LLVM into both of its callers, at the same speed).  Kernels are compiled lazily on first call and cached on disk (``cache=True``).
The algorithm kernels live beside their public modules (``_rnea_kernels``, ``_crba_kernels``,
``_aba_kernels``, ...); :mod:`sinews._kernels` re-exports them all.
"""

import math

import numpy as np
from ._jit import njit

from ._layout import (
    MF_AXIS,
    MF_HEADER,
    MF_JP,
    MF_JR,
    MF_PITCH,
    MF_STRIDE,
    MI_AXES,
    MI_AXIS,
    MI_IQ,
    MI_IV,
    MI_NV,
    MI_PARENT,
    MI_TYPE,
    WS_C,
    WS_CJ,
    WS_OP,
    WS_OR,
    WS_P,
    WS_R,
    WS_STRIDE,
    WS_V,
)
from ._checks import QUAT_TINY
from ._kernel_checks import (  # noqa: F401 (re-exported: the kernels import them from here)
    BAD_SHAPE,
    _dims,
    check_finite,
    check_inputs,
    check_q,
    zero_quaternion,
)
from .joints import JT_FREEFLYER, JT_HELICAL, JT_MULTIAXIS, JT_PRISMATIC, JT_REVOLUTE, JT_SPHERICAL

# ----------------------------------------------------------------------------------------------
# scalar helpers: compiled once each and inlined by LLVM (``forceinline``) into the kernels that
# call them.  Numba's own ``inline="always"`` would copy their IR into every caller and type it
# again there, which made the joint pass alone take about 4 s to compile (1.8 s now).


@njit(cache=True, forceinline=True)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, forceinline=True)
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


@njit(cache=True, forceinline=True)
def _placed(mf, ws, b, w, r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2):
    """The pose of a link in its parent, ``X_parent_link = X_parent_joint X_joint_link``: the
    joint's motion ``(r, p)`` composed with its placement (``mf`` from ``b``), written to
    ``ws[w + WS_R]``, ``ws[w + WS_P]`` and returned as ``(R (row-major), P)``.  Shared by the
    joint pass and the pose pass's free-flyer (:mod:`sinews._kinematics_pass`), which must give
    the same bits."""
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
    return R00, R01, R02, R10, R11, R12, R20, R21, R22, P0, P1, P2


@njit(cache=True, forceinline=True)
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


@njit(cache=True, forceinline=True)
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


@njit(cache=True, forceinline=True)
def _cross_force(w0, w1, w2, v0, v1, v2, n0, n1, n2, f0, f1, f2):
    """Spatial force cross product [w; v] x* [n; f] = [w x n + v x f;  w x f]."""
    x0, x1, x2 = _cross(w0, w1, w2, n0, n1, n2)
    y0, y1, y2 = _cross(v0, v1, v2, f0, f1, f2)
    z0, z1, z2 = _cross(w0, w1, w2, f0, f1, f2)
    return x0 + y0, x1 + y1, x2 + y2, z0, z1, z2


@njit(cache=True, forceinline=True)
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


@njit(inline="always", cache=True)
def joint_pass(q, v, mi, mf, ws, mode):
    """Per link: pose (R, p) in the parent link; multi-axis S(q) into the S region;
    if ``mode & 1``: spatial velocity v_i and c_i = cJ + v_i x vJ;
    if ``mode & 2``: world pose (oR, op).  (Inlined into the kernels that call it, so that
    they call :func:`joint_pass_links` directly: one kernel less to compile and link.)"""
    joint_pass_links(q, v, mi, mf, ws, mode, mi[0], np.int64(-1))


# forceinline=False stated: a kernel compiled while typing a ``forceinline`` caller (such as
# sinews._kinematics_pass.chain_poses) would otherwise inherit the flag
@njit(cache=True, forceinline=False)
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
        R00, R01, R02, R10, R11, R12, R20, R21, R22, P0, P1, P2 = _placed(
            mf, ws, b, w, r00, r01, r02, r10, r11, r12, r20, r21, r22, p0, p1, p2
        )
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


# ----------------------------------------------------------------------------------------------
# Articulated-inertia rotations (inlined; used by the ABA and minv kernels)
#
# Articulated inertias are symmetric 6x6 matrices [[A, B], [B^T, C]] stored as 21 values:
# A (xx, yy, zz, xy, xz, yz), B (row-major 3x3), C (xx, yy, zz, xy, xz, yz).


@njit(cache=True, forceinline=True)
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


@njit(cache=True, forceinline=True)
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
