"""The native entry points of the tree algorithms' fast paths (``rnea``, ``aba``, ``crba``,
``minverse``): fastcall C function bodies for :mod:`sinews._native`, and their dispatcher-path
fallbacks with the same calling convention.

Each is called as ``f(cx, in_1, ..., out)`` with ``cx`` the thread's context block
(:func:`sinews._native.context`; the fallback uses its ``arrays``, ``(mi, mf, ws, buf)``) and returns
``out`` when the kernel succeeded, anything else otherwise (the wrapper then takes the checked
path).  Each calls the kernel its dispatcher-path entry kernel (``rnea_x``, ...) calls, with the
same arguments (``crba_n`` does what ``crba_x`` does), so both paths give the same bits.

``rnea_n``, ``aba_n`` and ``minverse_n`` call their kernels through the address of the kernels'
compiled code (:func:`sinews._native.call_kernel`; declared with :func:`~sinews._native.calls`),
so that none of that code is linked into the C function and optimised and compiled again: the C
function compiles in about 0.1 s instead of 1.5 s (``aba``, cold cache), and a call costs the
same.  ``crba_n`` links its kernels, which is faster per call on a small robot.
"""

from threading import get_ident

from numba import carray, types

from . import _minv_kernels as MK
from ._aba_kernels import aba
from ._crba_kernels import crba_core, not_finite_bits
from ._entry import typed
from ._jit import njit
from ._joint_pass import check_q
from ._kinematics_pass import chain_poses
from ._minv_kernels import minverse_core
from ._pools import pool_last, pool_pop
from ._native import (
    CX_BUF,
    CX_F64,
    CX_IDENT_AT,
    CX_LINKS,
    CX_NBUF,
    CX_NDARRAY,
    CX_NL,
    CX_NQ,
    CX_NV,
    CX_OWNER,
    CX_POOL,
    I0,
    I1,
    IN,
    OUT,
    block,
    call_kernel,
    called_with,
    calls,
    f64_ptr,
    i64_ptr,
    is_matrix,
    is_vector,
    kernel_slot,
    matrix,
    model_arrays,
    new_ref,
    owned,
    refuse,
    vector,
)
from ._rnea_kernels import rnea


@njit(cache=True, forceinline=True)
def _mine(cx):
    """Whether the calling thread may use the context block ``cx`` (the thread that owns it, or
    any for a block bound to none)."""
    return owned(cx[CX_OWNER], cx[CX_IDENT_AT])


@njit(cache=True, forceinline=True)
def _state_ok(args, cx):
    """Whether ``args[1:5]`` are ``(q, v, x, out)``: float64 vectors of lengths nq, nv, nv, nv
    (``out`` writeable)."""
    t = cx[CX_NDARRAY]
    f = cx[CX_F64]
    nv = cx[CX_NV]
    return (is_vector(args[1], t, f, cx[CX_NQ], IN) and is_vector(args[2], t, f, nv, IN)
            and is_vector(args[3], t, f, nv, IN) and is_vector(args[4], t, f, nv, OUT))


@njit(cache=True, forceinline=True)
def _state_views(args, cx):
    """``(q, v, x, no forces, out, mi, mf, ws)``: the arguments of the ``rnea`` and ``aba``
    kernels (without ``flags``) for checked ``args``, as their entry kernels pass them."""
    nv = cx[CX_NV]
    mi, mf, ws = model_arrays(cx)
    return (vector(args[1], cx[CX_NQ]), vector(args[2], nv), vector(args[3], nv), ws[:6].reshape((1, 6)),
            vector(args[4], nv), mi, mf, ws)


@njit(cache=True, forceinline=True)
def _q_pool_ok(args, cx):
    """The address of the (nv, nv) result ``crba`` and ``minverse`` fill, or 0: ``args[1:3]``
    must be ``(q, results)``, a float64 vector of length nq and the thread's pool of results (a
    :class:`~sinews._entry.MatrixPool`) whose last item is a writeable float64 (nv, nv) matrix."""
    t = cx[CX_NDARRAY]
    f = cx[CX_F64]
    nv = cx[CX_NV]
    if not _mine(cx) or not is_vector(args[1], t, f, cx[CX_NQ], IN):
        return 0
    M = pool_last(args[2], cx[CX_POOL])
    if M == 0 or not is_matrix(M, t, f, nv, nv, OUT):
        return 0
    return M


#: the argument types of the kernels called by address (sinews._native.call_kernel): for rnea,
#: aba and minverse_core those the checked paths compile too, so that both share one compiled
#: kernel
_F1 = types.Array(types.float64, 1, "C")
_F2 = types.Array(types.float64, 2, "C")
_I1 = types.Array(types.int64, 1, "C")
_I2 = types.Array(types.int64, 2, "C")
STATE_ARGS = (_F1, _F1, _F1, _F2, _F1, _I2, _F1, _F1, types.int64)  #: rnea, aba
POSES_ARGS = (_F1, _I2, _F1, _F1, _I1, types.int64)  #: chain_poses over every link
MINVERSE_ARGS = (_F2, _I2, _F1, _F1, _F1)  #: minverse_core
CRBA_CORE_ARGS = (_F2, _I2, _F1, _F1)  #: crba_core, as crba_n and crba_x call it (linked; the warm-up compiles it)


@njit(cache=True, forceinline=True)
def _world_poses(q, mi, mf, ws, cx):
    """The world poses (``oR``, ``op``) and motion subspaces of ``q`` in ``ws``, as the joint pass
    with ``mode = 2`` leaves them for ``crba_core`` and ``minverse_core``: the kinematics pass over
    every link, which composes axis-aligned revolute and prismatic joints cheaply (their constant
    motion subspaces are in ``ws`` from the start)."""
    nl = cx[CX_NL]
    chain_poses(q, mi, mf, ws, carray(i64_ptr(cx[CX_LINKS]), (nl,)), nl)


@calls((rnea, STATE_ARGS))
def rnea_n(self, args, nargs):
    """``rnea(cx, q, v, a, tau)``."""
    if nargs == 5 and called_with(self, args, nargs):
        cx = block(args[0])
        if _mine(cx) and _state_ok(args, cx):
            ok, code = call_kernel(rnea, kernel_slot(self, I0), _state_views(args, cx) + (I0,))
            if ok and code == 0:
                return new_ref(args[4])
    return refuse(self, args, nargs)


@calls((aba, STATE_ARGS))
def aba_n(self, args, nargs):
    """``aba(cx, q, v, tau, qdd)``."""
    if nargs == 5 and called_with(self, args, nargs):
        cx = block(args[0])
        if _mine(cx) and _state_ok(args, cx):
            ok, code = call_kernel(aba, kernel_slot(self, I0), _state_views(args, cx) + (I0,))
            if ok and code == 0:
                return new_ref(args[4])
    return refuse(self, args, nargs)


def crba_n(self, args, nargs):
    """``crba(cx, q, results)``: what ``crba_x`` does (``M`` zeroed, the passes, ``M``'s exponent
    bits) into the last matrix ``M`` of the pool ``results`` (:func:`_q_pool_ok`), the world poses
    by :func:`_world_poses`; ``M`` taken from the pool and returned.  It calls its kernels
    directly (their code linked in): on a small robot the CRBA costs little more than a call by
    address with its arguments, and the linked code runs about 8 % faster (UR5)."""
    if nargs == 3 and called_with(self, args, nargs):
        cx = block(args[0])
        obj = _q_pool_ok(args, cx)
        if obj != 0:
            nv = cx[CX_NV]
            mi, mf, ws = model_arrays(cx)
            q = vector(args[1], cx[CX_NQ])
            M = matrix(obj, nv, nv)
            if check_q(q, mi) == 0:
                M[:, :] = 0.0
                _world_poses(q, mi, mf, ws, cx)
                crba_core(M, mi, mf, ws)
                if not not_finite_bits(M.reshape(nv * nv)):
                    return pool_pop(args[2])
    return refuse(self, args, nargs)


@calls((chain_poses, POSES_ARGS), (minverse_core, MINVERSE_ARGS))
def minverse_n(self, args, nargs):
    """``minverse(cx, q, results)``: as ``minverse``, into the last matrix of the pool ``results``
    (taken from it and returned, as in :func:`crba_n`), the world poses by the kinematics pass
    as in :func:`_world_poses`; both kernels called by address."""
    if nargs == 3 and called_with(self, args, nargs):
        cx = block(args[0])
        obj = _q_pool_ok(args, cx)
        if obj != 0:
            nv = cx[CX_NV]
            mi, mf, ws = model_arrays(cx)
            buf = carray(f64_ptr(cx[CX_BUF]), (cx[CX_NBUF],))
            q = vector(args[1], cx[CX_NQ])
            links = carray(i64_ptr(cx[CX_LINKS]), (cx[CX_NL],))
            if check_q(q, mi) == 0 and call_kernel(chain_poses, kernel_slot(self, I0),
                                                   (q, mi, mf, ws, links, cx[CX_NL]))[0]:
                ok, code = call_kernel(minverse_core, kernel_slot(self, I1), (matrix(obj, nv, nv), mi, mf, ws, buf))
                if ok and code == 0:
                    return pool_pop(args[2])
    return refuse(self, args, nargs)


# The dispatcher path (sinews._entry.typed: one signature, compilation disabled), for
# interpreters the native layer does not support: factories of functions with the same
# calling convention.


def _fallback(name: str, module=None, narrays: int = 3):
    """A factory of ``f(cx, *inputs, out)``: the entry kernel ``name`` dispatched on the inputs,
    the output and the first ``narrays`` of ``cx.arrays``; ``out`` when it returned 0, else
    ``cx``."""

    def make():
        kernel = typed(name, module)

        def call(cx, *args):
            if cx.owner and cx.owner != get_ident():
                return cx
            return args[-1] if kernel(*args, *cx.arrays[:narrays]) == 0 else cx

        return call

    return make


def _pool_fallback(name: str, module=None, narrays: int = 3):
    """A factory of ``f(cx, q, results)``: the entry kernel ``name`` dispatched on ``q``, the last
    matrix of the pool ``results`` and the first ``narrays`` of ``cx.arrays``; that matrix, taken
    from the pool, when it returned 0, else ``cx``."""

    def make():
        kernel = typed(name, module)

        def call(cx, q, results):
            if cx.owner and cx.owner != get_ident():
                return cx
            if results and kernel(q, results[-1], *cx.arrays[:narrays]) == 0:
                return results.pop()
            return cx

        return call

    return make


rnea_f = _fallback("rnea_x")
aba_f = _fallback("aba_x")
crba_f = _pool_fallback("crba_x")
minverse_f = _pool_fallback("minverse_x", MK, 4)
