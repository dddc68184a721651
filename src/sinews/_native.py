"""The native call layer: the public fast paths called as C functions, without Numba's dispatcher.

A Numba dispatcher costs about 0.1 us per call plus 0.04 us per array argument before the
kernel runs: it types every argument, finds the overload, then unboxes each array (allocating a
reference-count record per array).  On a small robot that is more than the kernel itself (UR5:
``rnea``'s kernel 0.47 us, the dispatch of its seven arguments 0.42 us).  This module removes it
for the fast paths of the public algorithms:

* each entry point is a Numba ``cfunc`` with CPython's *fastcall* signature,
  ``PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs)``, made into a Python
  built-in function once (``PyCFunction_NewEx`` with ``METH_FASTCALL``, through ``ctypes``);
* it checks each user array in a few machine instructions: exactly ``numpy.ndarray`` (no
  subclass), the canonical float64 dtype object, the number of dimensions, the shape, and the
  C-contiguous and aligned flags (writeable too, for an output).  Anything else is *refused*,
  never converted;
* it views the arrays' memory (``numba.carray``) and calls the kernels the dispatcher path
  (``sinews._entry``) runs, so results are bit-identical.  It calls the big ones through the
  address of their compiled code (:func:`call_kernel`), so that it links none of their code and
  costs little to compile;
* it returns the output array (a new reference) when the kernel succeeded, and otherwise the
  context block it was given: the Python wrapper then takes the checked path, which converts
  what it may or raises the named error.  The native code never raises and never converts.

The model's arrays, the thread's workspace and the addresses the checks compare with (the
``ndarray`` type, the float64 dtype, the ``numpy.int64`` scalar type) are passed in one int64
*context block* per model and thread (:func:`context`).  Addresses change from process to
process, so none is compiled into the (cached) machine code.

The layer reads CPython and NumPy object layouts at fixed offsets (the 64-bit, non-free-threaded
CPython object header; NumPy's ``PyArrayObject_fields``; a NumPy scalar's value).  It is used only
after a self-test in the process (:func:`available`) has read known objects through the same
offsets and found what Python reports for them, including that a call leaves reference counts
balanced; otherwise, on other interpreters, or with ``SINEWS_NATIVE=0`` in the environment, every
entry point is the dispatcher path with the same calling convention (:class:`Entry`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import pickle
import sys
import sysconfig
import threading
import warnings

import numpy as np
from llvmlite import ir
from numba import carray, types
from numba.core import cgutils
from numba.core.extending import intrinsic

from ._jit import cfunc, njit

__all__ = ["available", "call_kernel", "calls", "context", "Context", "Entry", "SIGNATURE"]

#: every entry point's C signature: ``intptr_t f(intptr_t self, intptr_t *args, intptr_t nargs)``
#: (object pointers as integers: the same registers as CPython's fastcall functions)
SIGNATURE = types.intp(types.intp, types.CPointer(types.intp), types.intp)

# ----------------------------------------------------------------------------------------------
# Raw memory access


@intrinsic
def load_i64(typingctx, addr):
    """The int64 at address ``addr``."""

    def codegen(context, builder, signature, args):
        return builder.load(builder.inttoptr(args[0], ir.IntType(64).as_pointer()))

    return types.int64(types.intp), codegen


@intrinsic
def load_i32(typingctx, addr):
    """The int32 at address ``addr``, widened to int64."""

    def codegen(context, builder, signature, args):
        return builder.sext(builder.load(builder.inttoptr(args[0], ir.IntType(32).as_pointer())), ir.IntType(64))

    return types.int64(types.intp), codegen


@intrinsic
def load_u8(typingctx, addr):
    """The byte at address ``addr``, widened to int64."""

    def codegen(context, builder, signature, args):
        return builder.zext(builder.load(builder.inttoptr(args[0], ir.IntType(8).as_pointer())), ir.IntType(64))

    return types.int64(types.intp), codegen


@intrinsic
def store_i64(typingctx, addr, value):
    """Store the int64 ``value`` at address ``addr``."""

    def codegen(context, builder, signature, args):
        builder.store(args[1], builder.inttoptr(args[0], ir.IntType(64).as_pointer()))
        return context.get_dummy_value()

    return types.void(types.intp, types.int64), codegen


@intrinsic
def f64_ptr(typingctx, addr):
    """``addr`` as a ``double *``."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.DoubleType().as_pointer())

    return types.CPointer(types.float64)(types.intp), codegen


@intrinsic
def i64_ptr(typingctx, addr):
    """``addr`` as an ``int64_t *``."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.IntType(64).as_pointer())

    return types.CPointer(types.int64)(types.intp), codegen


@intrinsic
def call_c(typingctx, addr):
    """The result of the C function ``int64_t f(void)`` at address ``addr``."""

    def codegen(context, builder, signature, args):
        fn = builder.inttoptr(args[0], ir.FunctionType(ir.IntType(64), []).as_pointer())
        return builder.call(fn, [])

    return types.int64(types.intp), codegen


#: the address of ``PyThread_get_thread_ident`` (``unsigned long f(void)``, the value of
#: ``threading.get_ident()``), which native code calls with :func:`call_c`
THREAD_IDENT_AT = ctypes.cast(ctypes.pythonapi.PyThread_get_thread_ident, ctypes.c_void_p).value


@njit(cache=True, forceinline=True)
def owned(owner, ident_at):
    """Whether the calling thread may use a per-thread state whose owner (a thread identity, or
    0 for any thread) is ``owner``: what the function at ``ident_at`` (:data:`THREAD_IDENT_AT`)
    answers is that identity."""
    return owner == 0 or call_c(ident_at) == owner


def thread_ident() -> int:
    """``threading.get_ident()`` as the int64 that native code compares (:data:`THREAD_IDENT_AT`)."""
    return ctypes.c_int64(threading.get_ident()).value


# ----------------------------------------------------------------------------------------------
# Kernels called by address
#
# A C function that called a kernel directly would link the kernel's code into its own, and
# LLVM would optimise and compile all of it again (about 1.4 s for ``aba`` with the joint pass,
# on a cold cache).  The entry points call their kernels through the address of the kernel's compiled
# code instead, which the Python side puts in the entry point's ``self`` array when it builds
# the entry point (:class:`Entry`): addresses change from process to process, so none is
# compiled into the cached machine code.  Next to each address is the key of the kernel and
# signature it was taken for (:func:`kernel_key`); the C function compares it with the key of
# the call it was compiled with before it calls, so a slot filled for another signature (or not
# yet filled) is a refused call, never a call with the wrong arguments.


def kernel_key(dispatcher, argtypes) -> int:
    """The key of ``dispatcher`` compiled for the argument types ``argtypes``: a non-zero 62-bit
    digest of the kernel's qualified name and the types."""
    f = dispatcher.py_func
    text = f"{f.__module__}.{f.__qualname__}{tuple(argtypes)!r}"
    return (int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 2) | 1


def kernel_address(dispatcher, argtypes) -> int:
    """The address of ``dispatcher``'s machine code for ``argtypes`` (compiled, or loaded from
    the cache, if it is not yet).  The code lives as long as the dispatcher."""
    sig = tuple(argtypes)
    if sig not in dispatcher.overloads:
        dispatcher.compile(sig)
    cres = dispatcher.overloads[sig]
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


def calls(*kernels):
    """Declares the kernels a C function body calls by address (:func:`call_kernel`): pairs
    ``(dispatcher, argument types)``, in slot order."""

    def declare(body):
        body.kernels = kernels
        return body

    return declare


@intrinsic
def call_kernel(typingctx, kernel, slot, args):
    """``(ok, result)`` of the kernel ``kernel`` (a dispatcher) called with the tuple ``args``
    through the address in the kernel slot at address ``slot`` (``[address, key]``: see
    :func:`kernel_slot`).  ``ok`` is False, and nothing is called, when the slot's key is not
    ``kernel_key(kernel, types of args)``; it is False too when the kernel raised (the caller
    then refuses the call, and the checked path raises the error in Python).  Typing the call
    compiles the kernel for these types (as a direct call would) but links none of its code."""
    if not isinstance(kernel, types.Dispatcher) or not isinstance(args, types.BaseTuple):
        return None
    argtypes = tuple(args.types)
    sig = kernel.get_call_type(typingctx, argtypes, {})
    if sig is None:
        return None
    restype = sig.return_type
    key = kernel_key(kernel.dispatcher, argtypes)
    rettype = types.Tuple((types.boolean, restype))

    def codegen(context, builder, signature, llargs):
        i64 = ir.IntType(64)
        cc = context.call_conv
        p = builder.inttoptr(llargs[1], i64.as_pointer())
        ok = cgutils.alloca_once_value(builder, cgutils.false_bit)
        res = cgutils.alloca_once_value(builder, context.get_constant_null(restype))
        with builder.if_then(builder.icmp_unsigned("==", builder.load(builder.gep(p, [ir.Constant(i64, 1)])),
                                                   ir.Constant(i64, key))):
            fn = builder.inttoptr(builder.load(p), cc.get_function_type(restype, argtypes).as_pointer())
            status, value = cc.call_function(builder, fn, restype, argtypes, cgutils.unpack_tuple(builder, llargs[2]))
            builder.store(status.is_ok, ok)
            with builder.if_then(status.is_ok):
                builder.store(value, res)
        return context.make_tuple(builder, rettype, [builder.load(ok), builder.load(res)])

    return rettype(kernel, slot, args), codegen


# ----------------------------------------------------------------------------------------------
# Object layouts (64-bit CPython, non-free-threaded; NumPy's PyArrayObject_fields), checked by
# the self-test before any entry point is used

OB_REFCNT = 0  #: PyObject.ob_refcnt
OB_TYPE = 8  #: PyObject.ob_type
AR_DATA = 16  #: PyArrayObject.data
AR_ND = 24  #: PyArrayObject.nd (int)
AR_DIMS = 32  #: PyArrayObject.dimensions
AR_STRIDES = 40  #: PyArrayObject.strides
AR_DESCR = 56  #: PyArrayObject.descr
AR_FLAGS = 64  #: PyArrayObject.flags (int)
SC_VALUE = 16  #: the value of a NumPy int64 scalar (PyLongLongScalarObject.obval)
LIST_SIZE = 16  #: PyListObject.ob_size
LIST_ITEMS = 24  #: PyListObject.ob_item
TUPLE_SIZE = 16  #: PyTupleObject.ob_size
TUPLE_ITEMS = 24  #: PyTupleObject.ob_item (the items themselves)
DESCR_TYPEOBJ = 16  #: PyArray_Descr.typeobj (NumPy 1.x and 2.x)
DESCR_BYTEORDER = 26  #: PyArray_Descr.byteorder (a char; NumPy 1.x and 2.x)

C_CONTIGUOUS = 0x1  #: NPY_ARRAY_C_CONTIGUOUS
ALIGNED = 0x100  #: NPY_ARRAY_ALIGNED
WRITEABLE = 0x400  #: NPY_ARRAY_WRITEABLE
# (numpy.int64 values: a kernel given a Python int would be compiled again for Literal[int])
IN = np.int64(C_CONTIGUOUS | ALIGNED)  #: the flags an input array must have
OUT = np.int64(C_CONTIGUOUS | ALIGNED | WRITEABLE)  #: the flags an output array must have
I0, I1, I2, I3 = np.int64(0), np.int64(1), np.int64(2), np.int64(3)

# The context block (int64): addresses for the checks, sizes, and the model's and thread's arrays
CX_NDARRAY = 0  #: address of the numpy.ndarray type
CX_F64 = 1  #: address of the canonical float64 dtype object
CX_INT64 = 2  #: address of the numpy.int64 scalar type
CX_NQ = 3
CX_NV = 4
CX_NL = 5  #: moving links (rows of mi)
CX_MI = 6  #: address of mi (int64, nl x CX_MIC)
CX_MIC = 7
CX_MF = 8  #: address of mf (float64, CX_NMF)
CX_NMF = 9
CX_WS = 10  #: address of the workspace ws (float64, CX_NWS)
CX_NWS = 11
CX_BUF = 12  #: address of a scratch vector (float64, CX_NBUF): minverse's
CX_NBUF = 13
CX_LINKS = 14  #: address of the link indices 0 .. nl - 1 (int64, CX_NL): "every link" for chain_poses
CX_POOL = 15  #: address of the type of the thread's pools of (nv, nv) results (sinews._entry.MatrixPool)
CX_OWNER = 16  #: the identity of the thread the block serves (0: any), compared by :func:`owned`
CX_IDENT_AT = 17  #: with what the function at this address answers (:data:`THREAD_IDENT_AT`)
CX_SIZE = 18


@njit(cache=True, forceinline=True)
def block(obj):
    """The context block held by the int64 array at address ``obj``."""
    return carray(i64_ptr(load_i64(obj + AR_DATA)), (CX_SIZE,))


@njit(cache=True, forceinline=True)
def is_f64(descr, t_f64):
    """Whether the dtype object at address ``descr`` is float64 in native byte order: the
    canonical one (address ``t_f64``), or another object with its scalar type and byte order
    (an unpickled array's dtype, and every array NumPy derives from it, has its own)."""
    return descr == t_f64 or (
        load_i64(descr + DESCR_TYPEOBJ) == load_i64(t_f64 + DESCR_TYPEOBJ)
        and load_u8(descr + DESCR_BYTEORDER) == load_u8(t_f64 + DESCR_BYTEORDER)
    )


@njit(cache=True, forceinline=True)
def _is_f64_array(obj, t_ndarray, t_f64, nd, flags):
    """Whether the object at address ``obj`` is a ``numpy.ndarray`` (type address ``t_ndarray``)
    of dtype float64 (:func:`is_f64`, canonical dtype at ``t_f64``) with ``nd`` dimensions and
    the ``flags`` bits set."""
    return (
        load_i64(obj + OB_TYPE) == t_ndarray
        and is_f64(load_i64(obj + AR_DESCR), t_f64)
        and load_i32(obj + AR_ND) == nd
        and load_i32(obj + AR_FLAGS) & flags == flags
    )


@njit(cache=True, forceinline=True)
def is_vector(obj, t_ndarray, t_f64, n, flags):
    """:func:`_is_f64_array` of shape (n,)."""
    return _is_f64_array(obj, t_ndarray, t_f64, I1, flags) and load_i64(load_i64(obj + AR_DIMS)) == n


@njit(cache=True, forceinline=True)
def is_matrix(obj, t_ndarray, t_f64, n0, n1, flags):
    """:func:`_is_f64_array` of shape (n0, n1)."""
    if not _is_f64_array(obj, t_ndarray, t_f64, I2, flags):
        return False
    dims = load_i64(obj + AR_DIMS)
    return load_i64(dims) == n0 and load_i64(dims + 8) == n1


@njit(cache=True, forceinline=True)
def is_int64(obj, t_int64):
    """Whether the object at address ``obj`` is a ``numpy.int64`` scalar (type address
    ``t_int64``)."""
    return load_i64(obj + OB_TYPE) == t_int64


@njit(cache=True, forceinline=True)
def int64_value(obj):
    """The value of the (checked) ``numpy.int64`` scalar at address ``obj``."""
    return load_i64(obj + SC_VALUE)


@njit(cache=True, forceinline=True)
def dim(obj, k):
    """Dimension ``k`` of the array at address ``obj``."""
    return load_i64(load_i64(obj + AR_DIMS) + 8 * k)


@njit(cache=True, forceinline=True)
def vector(obj, n):
    """A view of the (checked) float64 array at address ``obj`` as a vector of length n."""
    return carray(f64_ptr(load_i64(obj + AR_DATA)), (n,))


@njit(cache=True, forceinline=True)
def matrix(obj, n0, n1):
    """A view of the (checked) float64 array at address ``obj`` as an (n0, n1) matrix."""
    return carray(f64_ptr(load_i64(obj + AR_DATA)), (n0, n1))


@njit(cache=True, forceinline=True)
def array3(obj):
    """A view of sinews' own C-contiguous float64 3-D array at address ``obj`` (a result pool)."""
    return carray(f64_ptr(load_i64(obj + AR_DATA)), (dim(obj, I0), dim(obj, I1), dim(obj, I2)))


@njit(cache=True, forceinline=True)
def list_size(obj):
    """The length of the Python list at address ``obj``."""
    return load_i64(obj + LIST_SIZE)


@njit(cache=True, forceinline=True)
def list_item(obj, i):
    """The address of item ``i`` of the Python list at address ``obj`` (``PyListObject.ob_item``)."""
    return load_i64(load_i64(obj + LIST_ITEMS) + 8 * i)


@njit(cache=True, forceinline=True)
def model_arrays(cx):
    """``(mi, mf, ws)``: views of the model's arrays and the workspace of context block ``cx``."""
    mi = carray(i64_ptr(cx[CX_MI]), (cx[CX_NL], cx[CX_MIC]))
    mf = carray(f64_ptr(cx[CX_MF]), (cx[CX_NMF],))
    ws = carray(f64_ptr(cx[CX_WS]), (cx[CX_NWS],))
    return mi, mf, ws


@njit(cache=True, forceinline=True)
def new_ref(obj):
    """``obj`` with its reference count raised by one (a fastcall function returns a new
    reference).  The objects returned are arrays and lists' items made by sinews, or, when a
    call is refused, its first argument or ``self``; on an immortal object (CPython 3.12+) the
    raw increment is undone by the caller's release or only moves a count nobody reads."""
    store_i64(obj + OB_REFCNT, load_i64(obj + OB_REFCNT) + 1)
    return obj


@njit(cache=True, forceinline=True)
def called_with(self, args, nargs):
    """Whether ``args[0]`` is of the type this entry point expects (its context block or its
    state's buffer): ``self`` is the entry point's int64 array ``[address of that type, op,
    kernel slots...]`` (:class:`Entry`).  Every entry point checks this first, before it reads
    ``args[0]``."""
    return nargs >= 1 and load_i64(args[0] + OB_TYPE) == load_i64(load_i64(self + AR_DATA))


@njit(cache=True, forceinline=True)
def op_of(self):
    """The op code of the entry point whose ``self`` is at address ``self``."""
    return load_i64(load_i64(self + AR_DATA) + 8)


@njit(cache=True, forceinline=True)
def kernel_slot(self, j):
    """The address of kernel slot ``j`` (``[address, key]``, :func:`call_kernel`) of the entry
    point whose ``self`` is at address ``self``."""
    return load_i64(self + AR_DATA) + 16 + 16 * j


@njit(cache=True, forceinline=True)
def refuse(self, args, nargs):
    """A refused call's answer: its first argument (the caller then takes the checked path), or
    ``self`` when there is none."""
    return new_ref(args[0] if nargs >= 1 else self)


# ----------------------------------------------------------------------------------------------
# Built-in functions from C function addresses


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


_METH_FASTCALL = 0x80
_DEFS: list = []  # the method records live as long as the process (their functions may too)


_NEW_FUNCTION = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)(
    ("PyCFunction_NewEx", ctypes.pythonapi)
)  # (a prototype of its own: ctypes.pythonapi's attributes are shared with other libraries)


def builtin(name: str, address: int, self_object):
    """A Python built-in function calling the fastcall C function at ``address``, which receives
    ``self_object`` as its ``self``."""
    md = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    _DEFS.append((md, self_object))
    return _NEW_FUNCTION(ctypes.addressof(md), self_object, None)


# ----------------------------------------------------------------------------------------------
# The self-test


def probe(self, args, nargs):
    """Fields of the objects ``args[1:]`` read at the layer's offsets, into the int64 array
    ``args[0]`` (8 per object); returns ``args[0]``."""
    out = carray(i64_ptr(load_i64(args[0] + AR_DATA)), (8 * (nargs - 1),))
    for i in range(1, nargs):
        o = args[i]
        r = 8 * (i - 1)
        out[r] = load_i64(o + OB_TYPE)
        out[r + 1] = load_i64(o + AR_DESCR)
        out[r + 2] = load_i32(o + AR_ND)
        out[r + 3] = load_i32(o + AR_FLAGS)
        out[r + 4] = load_i64(load_i64(o + AR_DIMS))
        out[r + 5] = load_i64(load_i64(o + AR_DIMS) + 8)
        out[r + 6] = load_i64(o + AR_DATA)
        out[r + 7] = load_i64(load_i64(o + AR_STRIDES))
    return new_ref(args[0])


def probe_scalar(self, args, nargs):
    """The type and value of the NumPy scalar ``args[1]``, the length and the address of item 2
    of the list ``args[2]``, and the scalar type and byte order of the dtypes ``args[3:]``, into
    the int64 array ``args[0]``."""
    out = carray(i64_ptr(load_i64(args[0] + AR_DATA)), (4 + 2 * (nargs - 3),))
    out[0] = load_i64(args[1] + OB_TYPE)
    out[1] = int64_value(args[1])
    out[2] = list_item(args[2], 2)
    out[3] = list_size(args[2])
    for i in range(3, nargs):
        out[4 + 2 * (i - 3)] = load_i64(args[i] + DESCR_TYPEOBJ)
        out[5 + 2 * (i - 3)] = load_u8(args[i] + DESCR_BYTEORDER)
    return new_ref(args[0])


def _interpreter_ok() -> bool:
    return (
        sys.implementation.name == "cpython"
        and sys.maxsize > 2**32
        and not sysconfig.get_config_var("Py_GIL_DISABLED")
        and not hasattr(sys, "getobjects")  # a Py_TRACE_REFS build: a larger object header
        and os.environ.get("SINEWS_NATIVE", "1") != "0"
        and os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0")
    )


def _fields_ok() -> bool:
    """The fields the probes read first, checked from Python without following any pointer:
    an array's type, data, number of dimensions and dtype at their offsets."""
    a = np.zeros((2, 3))
    word = lambda off: ctypes.c_void_p.from_address(id(a) + off).value  # noqa: E731
    return (
        word(OB_TYPE) == id(np.ndarray)
        and word(AR_DATA) == a.ctypes.data
        and ctypes.c_int.from_address(id(a) + AR_ND).value == 2
        and word(AR_DESCR) == id(a.dtype)
        and ctypes.c_void_p.from_address(id(a.dtype) + DESCR_TYPEOBJ).value == id(np.float64)
    )


def _self_test() -> bool:
    """Read known objects through the layer's offsets and compare with what Python reports
    (after :func:`_fields_ok`, so that the probes follow no pointer read at a wrong offset)."""
    if not _fields_ok():
        return False
    f = builtin("sinews_probe", cfunc(SIGNATURE, cache=True)(probe).address, None)
    g = builtin("sinews_probe_scalar", cfunc(SIGNATURE, cache=True)(probe_scalar).address, None)
    a = np.arange(12.0).reshape(3, 4)
    b = np.zeros(5)[::2]
    c = np.zeros(7)
    c.flags.writeable = False
    out = np.zeros(24, dtype=np.int64)
    refs = [sys.getrefcount(x) for x in (a, b, c, out)]
    if f(out, a, b, c) is not out:
        return False
    if [sys.getrefcount(x) for x in (a, b, c, out)] != refs:
        return False
    want = []
    for x in (a, b, c):
        flags = (C_CONTIGUOUS * x.flags.c_contiguous) | (ALIGNED * x.flags.aligned) | (WRITEABLE * x.flags.writeable)
        want.append((id(np.ndarray), id(np.dtype(np.float64)), x.ndim, flags, x.shape[0],
                     x.shape[1] if x.ndim > 1 else None, x.ctypes.data, x.strides[0]))
    for i, (t, d, nd, flags, n0, n1, data, s0) in enumerate(want):
        r = out[8 * i: 8 * i + 8]
        if (r[0], r[1], r[2], r[3] & OUT, r[4], r[6], r[7]) != (t, d, nd, flags, n0, data, s0):
            return False
        if n1 is not None and r[5] != n1:
            return False
    if a.dtype is not np.dtype(np.float64):
        return False
    s = np.int64(-123456789)
    items = [object(), object(), object(), object()]
    dtypes = (np.dtype(np.float64), pickle.loads(pickle.dumps(np.dtype(np.float64))), np.dtype(">f8"), np.dtype(np.int64))
    out2 = np.zeros(4 + 2 * len(dtypes), dtype=np.int64)
    if g(out2, s, items, *dtypes) is not out2:
        return False
    want = [id(np.int64), -123456789, id(items[2]), len(items)]
    for d in dtypes:
        want += [id(d.type), ord(d.byteorder)]
    return out2.tolist() == want


_lock = threading.Lock()
_state: list = []  # [bool] once the self-test has run


def available() -> bool:
    """Whether the native entry points are used in this process (the interpreter is supported,
    ``SINEWS_NATIVE`` is not ``0`` and the self-test passed); decided on first use."""
    if not _state:
        with _lock:
            if not _state:
                ok = False
                if _interpreter_ok():
                    try:
                        ok = _self_test()
                    except Exception:
                        ok = False
                _state.append(ok)
    return _state[0]


class Context(np.ndarray):
    """A context block: an int64 array of addresses and sizes for the native entry points, which
    also keeps the arrays it points into (``arrays``: ``(mi, mf, ws, buf)``, which the dispatcher
    fallback passes as they are; ``links``: the link indices in order)."""

    arrays: tuple
    links: np.ndarray
    owner: int


def context(nq: int, nv: int, mi, mf, ws, buf) -> Context:
    """The context block of one model and workspace (``mi``, ``mf``, ``ws``, the scratch vector
    ``buf``), holding them."""
    cx = np.zeros(CX_SIZE, dtype=np.int64).view(Context)
    cx[CX_IDENT_AT] = THREAD_IDENT_AT
    cx.owner = 0  # (any thread, until sinews._entry.fast_args binds it to one: the fallback's check)
    links = np.arange(mi.shape[0], dtype=np.int64)
    cx.arrays = (mi, mf, ws, buf)
    cx.links = links
    cx[CX_NDARRAY], cx[CX_F64], cx[CX_INT64] = id(np.ndarray), id(np.dtype(np.float64)), id(np.int64)
    cx[CX_NQ], cx[CX_NV] = nq, nv
    cx[CX_NL], cx[CX_MIC] = mi.shape
    cx[CX_MI] = mi.ctypes.data
    cx[CX_MF], cx[CX_NMF] = mf.ctypes.data, mf.size
    cx[CX_WS], cx[CX_NWS] = ws.ctypes.data, ws.size
    cx[CX_BUF], cx[CX_NBUF] = buf.ctypes.data, buf.size
    cx[CX_LINKS] = links.ctypes.data
    return cx


class Entry:
    """Stand-in for an entry point in a module's globals until its first call: the call makes
    the built-in function of ``native`` (a fastcall C function body, compiled with
    :data:`SIGNATURE` once per process, however many entry points share it) when
    :func:`available`, and otherwise ``fallback()`` (a Python function with the same calling
    convention over the dispatcher path); it rebinds the global ``binding`` of ``namespace`` to
    it and runs it.  The built-in function's ``self`` is the int64 array ``[id(expects), op,
    kernel slots...]``: the type its first argument must have (:func:`called_with`), an op code
    for C functions that serve several entry points (:func:`op_of`), then one kernel slot
    ``[address, key]`` per kernel that ``native`` calls by address (its ``kernels``, declared
    with :func:`calls`), filled when the built-in function is made."""

    def __init__(self, native, fallback, namespace: dict, binding: str, expects: type, op: int = 0):
        self.native, self.fallback, self.namespace, self.binding = native, fallback, namespace, binding
        self.kernels = getattr(native, "kernels", ())
        self.self_object = np.zeros(2 + 2 * len(self.kernels), dtype=np.int64)
        self.self_object[:2] = id(expects), op
        self.expects = expects  # (kept alive: its address is in self_object)

    def fill_slots(self) -> None:
        """Put the address and key of each kernel ``native`` calls by address in its slot
        (compiling the kernel, or loading it from the cache, if it is not yet)."""
        for j, (kernel, argtypes) in enumerate(self.kernels):
            self.self_object[2 + 2 * j] = kernel_address(kernel, argtypes)
            self.self_object[3 + 2 * j] = kernel_key(kernel, argtypes)

    def __call__(self, *args):
        with _lock_entries:
            f = self.namespace.get(self.binding)
            if f is self:
                f = None
                if available():
                    try:
                        c = _COMPILED.get(self.native)
                        if c is None:
                            c = _COMPILED[self.native] = cfunc(SIGNATURE, cache=True)(self.native)
                        self.fill_slots()
                        f = builtin("sinews_" + self.binding.strip("_").lower(), c.address, self.self_object)
                    except Exception as exc:  # never expected: the dispatcher path, said once
                        warnings.warn(f"sinews: native entry point {self.native.__name__} not built ({exc!r:.200}); "
                                      "using Numba's dispatcher", RuntimeWarning, stacklevel=2)
                if f is None:
                    f = self.fallback()
                self.namespace[self.binding] = f
        return f(*args)


def is_cached(native) -> bool:
    """Whether the on-disk cache holds the compiled C function of ``native`` for this CPU
    (Numba's cache index, internal API: on any surprise, answer True)."""
    try:
        from numba.core.registry import cpu_target

        from ._jit import _PackageFunctionCache

        magic = cpu_target.target_context.codegen().magic_tuple()
        return any(key[1] == magic for key in _PackageFunctionCache(native)._cache_file._load_index())
    except Exception:
        return True


_lock_entries = threading.RLock()
_COMPILED: dict = {}  # native function body -> its compiled C function (kept: the code lives in it)
