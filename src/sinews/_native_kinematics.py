"""The native entry points of the kinematics fast paths (:mod:`sinews._kinematics_fast`): fastcall
C function bodies for :mod:`sinews._native`, and their dispatcher-path fallbacks with the same
calling convention.

Each is called as ``f(buf, inputs..., pool, results)``: ``buf`` the thread's :class:`KinState`
buffer (a :class:`~sinews._kinematics_fast.KinBuffer`, whose type the entry point checks first;
its header holds the addresses the argument checks compare with), the user's arrays
(checked: float64 ``numpy.ndarray``, C-contiguous, aligned, of the right length), integer keys
as ``numpy.int64`` scalars (from the state's name tables), then the result pool and the list of
its prepared results (``forward_kinematics``: ``f(buf, q)``, its ring of tables in the buffer's
header, :func:`placements_n`).  It returns the prepared result of the slot the kernel filled, or
``buf`` when the call was refused, the kernel failed or the pool is used up (the Python side
then makes a new pool or takes the checked path).  A thread's buffer serves only its thread
(:func:`_mine`).  The kernels are those of :mod:`sinews._kinematics_fast_kernels`, so both paths
give the same bits.
"""

from threading import get_ident

import numpy as np
from numba import carray

from . import _kinematics_fast_kernels as FK
from ._jit import njit
from ._kinematics_fast_kernels import (H_F64, H_IDENT_AT, H_INT64, H_NDARRAY, H_NONE, H_NQ, H_NROWS, H_NV, H_OUT,
                                       H_OUT_MODEL, H_OUT_TABLE, H_OWNER, H_P_FULL, H_P_LIKE, H_P_LIKE_VIEWS,
                                       H_P_RESULTS, H_P_TABLE_AT, H_P_TABLES, H_P_TYPE, H_P_VIEWS_AT, H_SLOT_FK)
from ._native import (
    AR_DATA,
    OB_REFCNT,
    OB_TYPE,
    TUPLE_ITEMS,
    TUPLE_SIZE,
    I0,
    I1,
    I3,
    IN,
    OUT,
    array3,
    called_with,
    dim,
    f64_ptr,
    int64_value,
    is_int64,
    is_matrix,
    is_vector,
    list_item,
    list_size,
    load_i64,
    matrix,
    new_ref,
    op_of,
    owned,
    refuse,
    vector,
)
from ._pools import _as_made


@njit(cache=True, forceinline=True)
def _done(self, args, nargs, slot, results):
    """The prepared result of ``slot`` in the list ``results`` (a new reference), or the call
    refused (:func:`refuse`) for a negative code or a slot beyond the list."""
    if 0 <= slot < list_size(results):
        return new_ref(list_item(results, slot))
    return refuse(self, args, nargs)


@njit(cache=True, forceinline=True)
def _buffer(obj):
    """The state's buffer (float64) at address ``obj`` and its int64 view (the header)."""
    buf = carray(f64_ptr(load_i64(obj + AR_DATA)), (dim(obj, I0),))
    return buf, buf.view(np.int64)


@njit(cache=True, forceinline=True)
def _mine(ib):
    """Whether the calling thread may use the buffer of header ``ib``: the thread that owns
    it (a thread's state), or any (an out's buffer)."""
    return owned(ib[H_OWNER], ib[H_IDENT_AT])


@njit(cache=True, forceinline=True)
def _is_q(obj, ib):
    return is_vector(obj, ib[H_NDARRAY], ib[H_F64], ib[H_NQ], IN)


@njit(cache=True, forceinline=True)
def _is_v(obj, ib):
    return is_vector(obj, ib[H_NDARRAY], ib[H_F64], ib[H_NV], IN)


@njit(cache=True, forceinline=True)
def _is_point(obj, ib):
    return is_vector(obj, ib[H_NDARRAY], ib[H_F64], I3, IN)


@njit(cache=True, forceinline=True)
def _is_key(obj, ib):
    return is_int64(obj, ib[H_INT64])


@njit(cache=True, forceinline=True)
def _pool2(obj):
    """A view of the state's own (K, 3) pool at address ``obj``."""
    return matrix(obj, dim(obj, I0), dim(obj, I1))


#: op code of :func:`placements_n` for ``forward_kinematics(..., out=)``
INTO = 1
I12 = np.int64(12)  # (a numpy.int64: a Python int would be typed as a literal)
#: tables of the ring tried per call before a new ring is made
PROBES = 3


@njit(cache=True, forceinline=True)
def _dropped(ib, P, T):
    """Whether the Placements at ``P`` and its table at ``T`` are held by the ring only and are
    as the ring made them (then the table may be written again and ``P`` handed out again): the
    reference counts (``P``: the ring's list; ``T``: that list, ``P`` and, when ``P`` has made
    its four views, those), the type of each, and the table and the views compared with the
    ring's templates (:func:`~sinews._pools._as_made`: no weak reference, the same dtype, flags,
    shape and strides), and ``P``'s table is ``T``.  Any view of the table (or of a view of it)
    has the table as its NumPy base, and so counts."""
    if load_i64(P + OB_REFCNT) != 1 or load_i64(P + OB_TYPE) != ib[H_P_TYPE] or load_i64(P + ib[H_P_TABLE_AT]) != T:
        return False
    V = load_i64(P + ib[H_P_VIEWS_AT])
    held = 2
    if V != ib[H_NONE]:
        like = ib[H_P_LIKE_VIEWS]
        if load_i64(V + OB_REFCNT) != 1 or load_i64(V + OB_TYPE) != load_i64(like + OB_TYPE):
            return False
        if load_i64(V + TUPLE_SIZE) != 4:
            return False
        for k in range(4):
            x = load_i64(V + TUPLE_ITEMS + 8 * k)
            if (load_i64(x + OB_REFCNT) != 1 or load_i64(x + OB_TYPE) != ib[H_NDARRAY]
                    or not _as_made(x, load_i64(like + TUPLE_ITEMS + 8 * k))):
                return False
        held = 6
    return load_i64(T + OB_REFCNT) == held and load_i64(T + OB_TYPE) == ib[H_NDARRAY] and _as_made(T, ib[H_P_LIKE])


@njit(cache=True, forceinline=True)
def _next_table(ib):
    """The ring's table to write next, or -1 (:data:`H_P_FULL` set: make a new ring; also when
    the header names no ring).  The ring (``K`` tables, ``K`` even) keeps a cursor: the table
    after the one handed out last, or the one before (``slot ^ 1``), so that a loop that drops
    its results alternates two tables; from the cursor on, :data:`PROBES` tables are tried
    (:func:`_dropped`).  Where no result is reused (``H_P_VIEWS_AT`` 0), each table is handed
    out once, in order."""
    results = ib[H_P_RESULTS]
    if results == 0:  # (no ring named: none yet, or one being replaced, or its replacement interrupted)
        ib[H_P_FULL] = 1
        return -1
    k = list_size(results)
    c = ib[H_SLOT_FK]
    if ib[H_P_VIEWS_AT] == 0:
        if c < k:
            return c
    elif k > 0:
        tables = ib[H_P_TABLES]
        for t in range(PROBES):
            i = (c + t) % k
            if _dropped(ib, list_item(results, i), list_item(tables, i)):
                return i
    ib[H_P_FULL] = 1
    return -1


def placements_n(self, args, nargs):
    """``forward_kinematics``: ``(buf, q)``, into a table of the ring of ``buf`` (a thread's
    buffer, :func:`_next_table`), whose Placements is returned; with ``out=`` (op
    :data:`INTO`), ``(buf, q, model, out)`` with ``buf`` the buffer of ``out`` itself, which
    holds the addresses of ``out``, its model and its table: ``out`` and ``model`` must be
    those; the placements are written into the table (rows x 12, checked as an output:
    writeable too) and ``out`` is returned."""
    if called_with(self, args, nargs):
        buf, ib = _buffer(args[0])
        if nargs >= 2 and _is_q(args[1], ib):
            q = vector(args[1], ib[H_NQ])
            nr = ib[H_NROWS]
            if op_of(self) != INTO:
                if nargs == 2 and _mine(ib):
                    i = _next_table(ib)
                    if i >= 0 and FK.placements_into_f(q, matrix(list_item(ib[H_P_TABLES], i), nr, I12), buf) == 0:
                        ib[H_SLOT_FK] = (i ^ 1) if ib[H_P_VIEWS_AT] != 0 else i + 1
                        return new_ref(list_item(ib[H_P_RESULTS], i))
                return refuse(self, args, nargs)
            table = ib[H_OUT_TABLE]
            # (out is the Placements that owns the buffer, so its table, which it holds and never
            # changes, is alive; its buffer serves any thread)
            if (nargs == 4 and args[3] == ib[H_OUT] and args[2] == ib[H_OUT_MODEL] and table != 0
                    and is_matrix(table, ib[H_NDARRAY], ib[H_F64], nr, I12, OUT)):
                if FK.placements_into_f(q, matrix(table, nr, I12), buf) == 0:
                    return new_ref(args[3])
    return refuse(self, args, nargs)


def row_placement_n(self, args, nargs):
    """``body_placement`` / ``frame_placement``: ``(buf, q, row, pool, results)``."""
    if nargs == 5 and called_with(self, args, nargs):
        buf, ib = _buffer(args[0])
        if _mine(ib) and _is_q(args[1], ib) and _is_key(args[2], ib):
            slot = FK.row_placement_f(vector(args[1], ib[H_NQ]), int64_value(args[2]), array3(args[3]), buf)
            return _done(self, args, nargs, slot, args[4])
    return refuse(self, args, nargs)


def frame_jacobian_n(self, args, nargs):
    """Point Jacobians, ``(buf, q, row, x, ref, pool, results)``, and body and frame Jacobians,
    ``(buf, q, key, pool, results)`` (one C function: told apart by ``nargs``)."""
    if called_with(self, args, nargs):
        buf, ib = _buffer(args[0])
        if not _mine(ib):
            return refuse(self, args, nargs)
        if (nargs == 7 and _is_q(args[1], ib) and _is_key(args[2], ib) and _is_point(args[3], ib)
                and _is_key(args[4], ib)):
            slot = FK.frame_jacobian_f(vector(args[1], ib[H_NQ]), int64_value(args[2]), vector(args[3], I3),
                                       int64_value(args[4]), array3(args[5]), buf)
            return _done(self, args, nargs, slot, args[6])
        if nargs == 5 and _is_q(args[1], ib) and _is_key(args[2], ib):
            slot = FK.frame_jacobian_k(vector(args[1], ib[H_NQ]), int64_value(args[2]), array3(args[3]), buf)
            return _done(self, args, nargs, slot, args[4])
    return refuse(self, args, nargs)


def time_variation_n(self, args, nargs):
    """Point Jacobians' time derivatives, ``(buf, q, v, row, x, ref, pool, results)``, and frame
    Jacobians' time derivatives, ``(buf, q, v, key, pool, results)`` (told apart by ``nargs``)."""
    if (nargs == 6 or nargs == 8) and called_with(self, args, nargs):
        buf, ib = _buffer(args[0])
        if _mine(ib) and _is_q(args[1], ib) and _is_v(args[2], ib) and _is_key(args[3], ib):
            q = vector(args[1], ib[H_NQ])
            v = vector(args[2], ib[H_NV])
            if nargs == 8 and _is_point(args[4], ib) and _is_key(args[5], ib):
                slot = FK.jacobian_time_variation_f(q, v, int64_value(args[3]), vector(args[4], I3),
                                                    int64_value(args[5]), array3(args[6]), buf)
                return _done(self, args, nargs, slot, args[7])
            if nargs == 6:
                slot = FK.jacobian_time_variation_k(q, v, int64_value(args[3]), array3(args[4]), buf)
                return _done(self, args, nargs, slot, args[5])
    return refuse(self, args, nargs)


#: op codes of the centre-of-mass entry points (:func:`center_of_mass_n`)
COM, COM_VELOCITY, COM_JACOBIAN = 0, 1, 2


def center_of_mass_n(self, args, nargs):
    """The centre of mass (op :data:`COM`), ``(buf, q, pool, results)``; its velocity
    (:data:`COM_VELOCITY`), ``(buf, q, v, pool, results)``; its Jacobian (:data:`COM_JACOBIAN`),
    ``(buf, q, pool, results)``: one C function, told apart by the op code in ``self``."""
    if (nargs == 4 or nargs == 5) and called_with(self, args, nargs):
        buf, ib = _buffer(args[0])
        op = op_of(self)
        if _mine(ib) and _is_q(args[1], ib):
            q = vector(args[1], ib[H_NQ])
            if op == COM and nargs == 4:
                return _done(self, args, nargs, FK.center_of_mass_f(q, _pool2(args[2]), buf), args[3])
            if op == COM_JACOBIAN and nargs == 4:
                return _done(self, args, nargs, FK.com_jacobian_f(q, array3(args[2]), buf), args[3])
            if op == COM_VELOCITY and nargs == 5 and _is_v(args[2], ib):
                slot = FK.com_velocity_f(q, vector(args[2], ib[H_NV]), _pool2(args[3]), buf)
                return _done(self, args, nargs, slot, args[4])
    return refuse(self, args, nargs)


# The dispatcher path, for interpreters the native layer does not support: factories of
# functions with the same calling convention.


def _fallback(name):
    def make():
        from ._entry import typed
        from ._kinematics_fast import SIGNATURES

        kernel = typed(name, FK, SIGNATURES)

        def call(buf, *rest):
            if buf.owner != get_ident():
                return buf
            i = kernel(*rest[:-1], buf)
            return rest[-1][i] if i >= 0 else buf

        return call

    return make


def placements_f():
    """The dispatcher path of :func:`placements_n`: each table of the ring once, in order (no
    result is reused without the native layer)."""
    from ._entry import typed
    from ._kinematics_fast import SIGNATURES

    kernel = typed("placements_into_f", FK, SIGNATURES)

    def call(buf, q):
        if buf.owner != get_ident():
            return buf
        ib = buf.view(np.ndarray).view(np.int64)
        tables, results = buf.ring[:2]
        i = int(ib[H_SLOT_FK])
        if i >= len(tables):
            ib[H_P_FULL] = 1
            return buf
        if kernel(q, tables[i], buf) != 0:
            return buf
        ib[H_SLOT_FK] = i + 1
        return results[i]

    return call


def placements_into_f():
    """The dispatcher path of :func:`placements_n`'s op :data:`INTO`."""
    from ._entry import typed
    from ._kinematics_fast import SIGNATURES

    kernel = typed("placements_into_f", FK, SIGNATURES)

    def call(buf, q, model, out):
        if out._buf is not buf or model is not out.model:
            return buf
        return out if kernel(q, out._table, buf) == 0 else buf

    return call


row_placement_f = _fallback("row_placement_f")
frame_jacobian_f = _fallback("frame_jacobian_f")
frame_jacobian_key_f = _fallback("frame_jacobian_k")  # (the native side: frame_jacobian_n)
time_variation_f = _fallback("jacobian_time_variation_f")
time_variation_key_f = _fallback("jacobian_time_variation_k")  # (the native side: time_variation_n)
center_of_mass_f = _fallback("center_of_mass_f")
com_velocity_f = _fallback("com_velocity_f")
com_jacobian_f = _fallback("com_jacobian_f")
