"""The native entry points of the kinematics fast paths (:mod:`sinews._kinematics_fast`): fastcall
C function bodies for :mod:`sinews._native`, and their dispatcher-path fallbacks with the same
calling convention.

Each is called as ``f(buf, inputs..., pool, results)``: ``buf`` the thread's :class:`KinState`
buffer (its header holds the addresses the argument checks compare with), the user's arrays
(checked: float64 ``numpy.ndarray``, C-contiguous, aligned, of the right length), integer keys
as ``numpy.int64`` scalars (from the state's name tables), then the result pool and the list of
its prepared results.  It returns the prepared result of the slot the kernel filled, or ``buf``
when the call was refused, the kernel failed or the pool is used up (the Python side then makes
a new pool or takes the checked path).  The kernels are those of
:mod:`sinews._kinematics_fast_kernels`, so both paths give the same bits.
"""

import numpy as np
from numba import carray

from . import _kinematics_fast_kernels as FK
from ._jit import njit
from ._kinematics_fast_kernels import H_F64, H_INT64, H_NDARRAY, H_NQ, H_NV
from ._native import (
    AR_DATA,
    I0,
    I1,
    I3,
    IN,
    array3,
    dim,
    f64_ptr,
    int64_value,
    is_int64,
    is_vector,
    list_item,
    load_i64,
    matrix,
    new_ref,
    vector,
)


@njit(cache=True, forceinline=True)
def _done(buf_obj, slot, results):
    """The prepared result of ``slot`` in the list ``results`` (a new reference), or the buffer
    ``buf_obj`` for a negative code."""
    return new_ref(list_item(results, slot) if slot >= 0 else buf_obj)


def placements_n(self, args, nargs):
    """``forward_kinematics``: ``(buf, q, pool, results)``."""
    r = args[0]
    if nargs == 4:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        if is_vector(args[1], ib[H_NDARRAY], ib[H_F64], nq, IN):
            return _done(r, FK.placements_f(vector(args[1], nq), array3(args[2]), buf), args[3])
    return new_ref(r)


def row_placement_n(self, args, nargs):
    """``body_placement`` / ``frame_placement``: ``(buf, q, row, pool, results)``."""
    r = args[0]
    if nargs == 5:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        if is_vector(args[1], ib[H_NDARRAY], ib[H_F64], nq, IN) and is_int64(args[2], ib[H_INT64]):
            slot = FK.row_placement_f(vector(args[1], nq), int64_value(args[2]), array3(args[3]), buf)
            return _done(r, slot, args[4])
    return new_ref(r)


def frame_jacobian_n(self, args, nargs):
    """Point Jacobians: ``(buf, q, row, x, ref, pool, results)``."""
    r = args[0]
    if nargs == 7:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        t = ib[H_NDARRAY]
        f = ib[H_F64]
        i = ib[H_INT64]
        if (is_vector(args[1], t, f, nq, IN) and is_int64(args[2], i) and is_vector(args[3], t, f, I3, IN)
                and is_int64(args[4], i)):
            slot = FK.frame_jacobian_f(vector(args[1], nq), int64_value(args[2]), vector(args[3], I3),
                                       int64_value(args[4]), array3(args[5]), buf)
            return _done(r, slot, args[6])
    return new_ref(r)


def frame_jacobian_key_n(self, args, nargs):
    """Body and frame Jacobians: ``(buf, q, key, pool, results)``."""
    r = args[0]
    if nargs == 5:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        if is_vector(args[1], ib[H_NDARRAY], ib[H_F64], nq, IN) and is_int64(args[2], ib[H_INT64]):
            slot = FK.frame_jacobian_k(vector(args[1], nq), int64_value(args[2]), array3(args[3]), buf)
            return _done(r, slot, args[4])
    return new_ref(r)


def time_variation_n(self, args, nargs):
    """Point Jacobians' time derivatives: ``(buf, q, v, row, x, ref, pool, results)``."""
    r = args[0]
    if nargs == 8:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        nv = ib[H_NV]
        t = ib[H_NDARRAY]
        f = ib[H_F64]
        i = ib[H_INT64]
        if (is_vector(args[1], t, f, nq, IN) and is_vector(args[2], t, f, nv, IN) and is_int64(args[3], i)
                and is_vector(args[4], t, f, I3, IN) and is_int64(args[5], i)):
            slot = FK.jacobian_time_variation_f(vector(args[1], nq), vector(args[2], nv), int64_value(args[3]),
                                                vector(args[4], I3), int64_value(args[5]), array3(args[6]), buf)
            return _done(r, slot, args[7])
    return new_ref(r)


def time_variation_key_n(self, args, nargs):
    """Frame Jacobians' time derivatives: ``(buf, q, v, key, pool, results)``."""
    r = args[0]
    if nargs == 6:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        nv = ib[H_NV]
        t = ib[H_NDARRAY]
        f = ib[H_F64]
        if is_vector(args[1], t, f, nq, IN) and is_vector(args[2], t, f, nv, IN) and is_int64(args[3], ib[H_INT64]):
            slot = FK.jacobian_time_variation_k(vector(args[1], nq), vector(args[2], nv), int64_value(args[3]),
                                                array3(args[4]), buf)
            return _done(r, slot, args[5])
    return new_ref(r)


def center_of_mass_n(self, args, nargs):
    """``center_of_mass``: ``(buf, q, pool, results)``."""
    r = args[0]
    if nargs == 4:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        if is_vector(args[1], ib[H_NDARRAY], ib[H_F64], nq, IN):
            pool = matrix(args[2], dim(args[2], I0), dim(args[2], I1))
            return _done(r, FK.center_of_mass_f(vector(args[1], nq), pool, buf), args[3])
    return new_ref(r)


def com_velocity_n(self, args, nargs):
    """``com_velocity``: ``(buf, q, v, pool, results)``."""
    r = args[0]
    if nargs == 5:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        nv = ib[H_NV]
        t = ib[H_NDARRAY]
        f = ib[H_F64]
        if is_vector(args[1], t, f, nq, IN) and is_vector(args[2], t, f, nv, IN):
            pool = matrix(args[3], dim(args[3], I0), dim(args[3], I1))
            return _done(r, FK.com_velocity_f(vector(args[1], nq), vector(args[2], nv), pool, buf), args[4])
    return new_ref(r)


def com_jacobian_n(self, args, nargs):
    """``com_jacobian``: ``(buf, q, pool, results)``."""
    r = args[0]
    if nargs == 4:
        buf = carray(f64_ptr(load_i64(r + AR_DATA)), (dim(r, I0),))
        ib = buf.view(np.int64)
        nq = ib[H_NQ]
        if is_vector(args[1], ib[H_NDARRAY], ib[H_F64], nq, IN):
            return _done(r, FK.com_jacobian_f(vector(args[1], nq), array3(args[2]), buf), args[3])
    return new_ref(r)


# The dispatcher path, for interpreters the native layer does not support: factories of
# functions with the same calling convention.


def _fallback(name):
    def make():
        from ._entry import typed
        from ._kinematics_fast import SIGNATURES

        kernel = typed(name, FK, SIGNATURES)

        def call(buf, *rest):
            i = kernel(*rest[:-1], buf)
            return rest[-1][i] if i >= 0 else buf

        return call

    return make


placements_f = _fallback("placements_f")
row_placement_f = _fallback("row_placement_f")
frame_jacobian_f = _fallback("frame_jacobian_f")
frame_jacobian_key_f = _fallback("frame_jacobian_k")
time_variation_f = _fallback("jacobian_time_variation_f")
time_variation_key_f = _fallback("jacobian_time_variation_k")
center_of_mass_f = _fallback("center_of_mass_f")
com_velocity_f = _fallback("com_velocity_f")
com_jacobian_f = _fallback("com_jacobian_f")
