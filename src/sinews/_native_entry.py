"""The native entry points of the tree algorithms' fast paths (``rnea``, ``aba``, ``crba``,
``minverse``): fastcall C function bodies for :mod:`sinews._native`, and their dispatcher-path
fallbacks with the same calling convention.

Each is called as ``f(cx, in_1, ..., out)`` with ``cx`` the thread's context block
(:func:`sinews._native.context`; the fallback uses its ``arrays``, ``(mi, mf, ws, buf)``) and returns
``out`` when the kernel succeeded, anything else otherwise (the wrapper then takes the checked
path).  Each calls the kernel its dispatcher-path entry kernel (``rnea_x``, ...) calls, with the
same arguments (``crba_n`` does what ``crba_x`` does), so both paths give the same bits; calling
the kernel itself rather than the entry kernel saves a level of linking and optimisation on a
cold start.
"""

from numba import carray

from . import _minv_kernels as MK
from ._aba_kernels import aba
from ._crba_kernels import crba_core, not_finite_bits
from ._entry import typed
from ._joint_pass import check_q, joint_pass
from ._minv_kernels import minverse
from ._native import (
    CX_BUF,
    CX_F64,
    CX_NBUF,
    CX_NDARRAY,
    CX_NQ,
    CX_NV,
    I0,
    I2,
    IN,
    OUT,
    block,
    f64_ptr,
    is_matrix,
    is_vector,
    matrix,
    model_arrays,
    new_ref,
    vector,
)
from ._rnea_kernels import rnea


def rnea_n(self, args, nargs):
    """``rnea(cx, q, v, a, tau)``."""
    r = args[0]
    if nargs == 5:
        cx = block(r)
        nq = cx[CX_NQ]
        nv = cx[CX_NV]
        t = cx[CX_NDARRAY]
        f = cx[CX_F64]
        if (is_vector(args[1], t, f, nq, IN) and is_vector(args[2], t, f, nv, IN) and is_vector(args[3], t, f, nv, IN)
                and is_vector(args[4], t, f, nv, OUT)):
            mi, mf, ws = model_arrays(cx)
            if rnea(vector(args[1], nq), vector(args[2], nv), vector(args[3], nv), ws[:6].reshape((1, 6)),
                    vector(args[4], nv), mi, mf, ws, I0) == 0:
                r = args[4]
    return new_ref(r)


def aba_n(self, args, nargs):
    """``aba(cx, q, v, tau, qdd)``."""
    r = args[0]
    if nargs == 5:
        cx = block(r)
        nq = cx[CX_NQ]
        nv = cx[CX_NV]
        t = cx[CX_NDARRAY]
        f = cx[CX_F64]
        if (is_vector(args[1], t, f, nq, IN) and is_vector(args[2], t, f, nv, IN) and is_vector(args[3], t, f, nv, IN)
                and is_vector(args[4], t, f, nv, OUT)):
            mi, mf, ws = model_arrays(cx)
            if aba(vector(args[1], nq), vector(args[2], nv), vector(args[3], nv), ws[:6].reshape((1, 6)),
                   vector(args[4], nv), mi, mf, ws, I0) == 0:
                r = args[4]
    return new_ref(r)


def crba_n(self, args, nargs):
    """``crba(cx, q, M)``."""
    r = args[0]
    if nargs == 3:
        cx = block(r)
        nq = cx[CX_NQ]
        nv = cx[CX_NV]
        t = cx[CX_NDARRAY]
        f = cx[CX_F64]
        if is_vector(args[1], t, f, nq, IN) and is_matrix(args[2], t, f, nv, nv, OUT):
            mi, mf, ws = model_arrays(cx)
            q = vector(args[1], nq)
            M = matrix(args[2], nv, nv)
            if check_q(q, mi) == 0:  # then as crba_x: M zeroed, the passes, M's exponent bits
                M[:, :] = 0.0
                joint_pass(q, q, mi, mf, ws, I2)
                crba_core(M, mi, mf, ws)
                if not not_finite_bits(M.reshape(nv * nv)):
                    r = args[2]
    return new_ref(r)


def minverse_n(self, args, nargs):
    """``minverse(cx, q, Minv)``."""
    r = args[0]
    if nargs == 3:
        cx = block(r)
        nq = cx[CX_NQ]
        nv = cx[CX_NV]
        t = cx[CX_NDARRAY]
        f = cx[CX_F64]
        if is_vector(args[1], t, f, nq, IN) and is_matrix(args[2], t, f, nv, nv, OUT):
            mi, mf, ws = model_arrays(cx)
            buf = carray(f64_ptr(cx[CX_BUF]), (cx[CX_NBUF],))
            if minverse(vector(args[1], nq), matrix(args[2], nv, nv), mi, mf, ws, buf) == 0:
                r = args[2]
    return new_ref(r)


# The dispatcher path (sinews._entry.typed: one signature, compilation disabled), for
# interpreters the native layer does not support: factories of functions with the same
# calling convention.


def rnea_f():
    k = typed("rnea_x")
    return lambda cx, q, v, a, tau: tau if k(q, v, a, tau, *cx.arrays[:3]) == 0 else cx


def aba_f():
    k = typed("aba_x")
    return lambda cx, q, v, tau, qdd: qdd if k(q, v, tau, qdd, *cx.arrays[:3]) == 0 else cx


def crba_f():
    k = typed("crba_x")
    return lambda cx, q, M: M if k(q, M, *cx.arrays[:3]) == 0 else cx


def minverse_f():
    k = typed("minverse_x", MK)
    return lambda cx, q, Minv: Minv if k(q, Minv, *cx.arrays) == 0 else cx
