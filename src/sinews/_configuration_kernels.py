"""Numba kernels of configuration integration over the compiled model arrays (``mi``, ``mf``) and a
workspace (``ws``); see :mod:`sinews._joint_pass` for the design.  Equations and sources are
stated in the public module (``sinews.configuration``)."""

import math

from ._jit import njit

from ._layout import MI_IQ, MI_IV, MI_NV, MI_TYPE
from ._checks import NOT_FINITE
from .joints import JT_FREEFLYER, JT_SPHERICAL
from ._joint_pass import _cross, _quat_matrix, check_finite

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
