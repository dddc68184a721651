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
from ._jit import njit
from ._joint_pass import check_q
from ._kinematics_pass import chain_poses
from ._minv_kernels import minverse_core
from ._native import (
    CX_BUF,
    CX_F64,
    CX_LINKS,
    CX_NBUF,
    CX_NDARRAY,
    CX_NL,
    CX_NQ,
    CX_NV,
    I0,
    IN,
    OUT,
    block,
    called_with,
    f64_ptr,
    i64_ptr,
    is_matrix,
    is_vector,
    matrix,
    model_arrays,
    new_ref,
    refuse,
    vector,
)
from ._rnea_kernels import rnea


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
def _q_matrix_ok(args, cx):
    """Whether ``args[1:3]`` are ``(q, out)``: a float64 vector of length nq and a writeable
    float64 (nv, nv) matrix."""
    t = cx[CX_NDARRAY]
    f = cx[CX_F64]
    nv = cx[CX_NV]
    return is_vector(args[1], t, f, cx[CX_NQ], IN) and is_matrix(args[2], t, f, nv, nv, OUT)


@njit(cache=True, forceinline=True)
def _world_poses(q, mi, mf, ws, cx):
    """The world poses (``oR``, ``op``) and motion subspaces of ``q`` in ``ws``, as the joint pass
    with ``mode = 2`` leaves them for ``crba_core`` and ``minverse_core``: the kinematics pass over
    every link, which composes axis-aligned revolute and prismatic joints cheaply (their constant
    motion subspaces are in ``ws`` from the start)."""
    nl = cx[CX_NL]
    chain_poses(q, mi, mf, ws, carray(i64_ptr(cx[CX_LINKS]), (nl,)), nl)


def rnea_n(self, args, nargs):
    """``rnea(cx, q, v, a, tau)``."""
    if nargs == 5 and called_with(self, args, nargs):
        cx = block(args[0])
        if _state_ok(args, cx) and rnea(*_state_views(args, cx), I0) == 0:
            return new_ref(args[4])
    return refuse(self, args, nargs)


def aba_n(self, args, nargs):
    """``aba(cx, q, v, tau, qdd)``."""
    if nargs == 5 and called_with(self, args, nargs):
        cx = block(args[0])
        if _state_ok(args, cx) and aba(*_state_views(args, cx), I0) == 0:
            return new_ref(args[4])
    return refuse(self, args, nargs)


def crba_n(self, args, nargs):
    """``crba(cx, q, M)``: what ``crba_x`` does (``M`` zeroed, the passes, ``M``'s exponent bits),
    the world poses by :func:`_world_poses`."""
    if nargs == 3 and called_with(self, args, nargs):
        cx = block(args[0])
        if _q_matrix_ok(args, cx):
            nv = cx[CX_NV]
            mi, mf, ws = model_arrays(cx)
            q = vector(args[1], cx[CX_NQ])
            M = matrix(args[2], nv, nv)
            if check_q(q, mi) == 0:
                M[:, :] = 0.0
                _world_poses(q, mi, mf, ws, cx)
                crba_core(M, mi, mf, ws)
                if not not_finite_bits(M.reshape(nv * nv)):
                    return new_ref(args[2])
    return refuse(self, args, nargs)


def minverse_n(self, args, nargs):
    """``minverse(cx, q, Minv)``: as ``minverse``, the world poses by :func:`_world_poses`."""
    if nargs == 3 and called_with(self, args, nargs):
        cx = block(args[0])
        if _q_matrix_ok(args, cx):
            nv = cx[CX_NV]
            mi, mf, ws = model_arrays(cx)
            buf = carray(f64_ptr(cx[CX_BUF]), (cx[CX_NBUF],))
            q = vector(args[1], cx[CX_NQ])
            if check_q(q, mi) == 0:
                _world_poses(q, mi, mf, ws, cx)
                if minverse_core(matrix(args[2], nv, nv), mi, mf, ws, buf) == 0:
                    return new_ref(args[2])
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
            return args[-1] if kernel(*args, *cx.arrays[:narrays]) == 0 else cx

        return call

    return make


rnea_f = _fallback("rnea_x")
aba_f = _fallback("aba_x")
crba_f = _fallback("crba_x")
minverse_f = _fallback("minverse_x", MK, 4)
