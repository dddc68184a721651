"""Input checks and argument lengths of the tree kernels (Numba): finiteness of a vector, zero
quaternions in ``q``, the combined check of ``(q, v, a, f_ext)``, and ``(nq, nv)`` from the joint
table.  Each returns a code that :func:`sinews._checks.raise_kernel_code` turns into the named
``ValueError`` of the public function (``-1``..``-4``: which argument is not finite,
``ZERO_QUATERNION - k``: link k's quaternion is zero, :data:`BAD_SHAPE`: a wrong length on the
fast path)."""

import math

from ._checks import QUAT_TINY, ZERO_QUATERNION
from ._jit import njit
from ._layout import MI_IQ, MI_IV, MI_NQ, MI_NV, MI_TYPE
from .joints import JT_FREEFLYER, JT_SPHERICAL


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
# Argument lengths of the entry kernels of the public fast path (see sinews._entry)

#: Returned by the entry kernels when an argument has the wrong length (the checked path then
#: reports it).
BAD_SHAPE = -30


@njit(cache=True)
def _dims(mi):
    nq = 0
    nv = 0
    for k in range(mi.shape[0]):
        e = mi[k, MI_IQ] + mi[k, MI_NQ]
        if e > nq:
            nq = e
        e = mi[k, MI_IV] + mi[k, MI_NV]
        if e > nv:
            nv = e
    return nq, nv
