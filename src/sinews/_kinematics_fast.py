"""Per-thread state of the kinematics fast path (:mod:`sinews.kinematics`).

A kinematics call without ``data=`` does, in Python, about this (here :func:`sinews.frame_jacobian`)::

    s = model._kin                                          # the last calling thread's KinState
    J = FJK(s.buf, q, s.frame_keys[reference][frame], s.J6p, s.J6)   # one C call
    if J is not s.buf:
        return J                                            # a view made in advance

One call of a native entry point (:mod:`sinews._native_kinematics`, C code called without Numba's
dispatcher; where the native layer is not available, one dispatch of the same entry kernel of
:mod:`sinews._kinematics_fast_kernels`) with few arguments: the
model's arrays, the support chain of every link and a workspace are packed into one buffer, and
the result goes to the next slot of a *pool* of preallocated results whose views (or
:class:`~sinews.spatial.Transform` objects) are made in bulk when the pool is made;
``forward_kinematics`` takes ``(buf, q)`` and hands out a table of a *ring* whose lists the
buffer holds (:func:`retry_ring`; the tables are reused one at a time, see
:mod:`sinews._native_kinematics`).  Names are resolved by dict look-ups in tables made from the
compiled model's (``frame_keys``/``body_keys`` also fold the reference frame into the key: ``4 * row +
reference``; the tables' values are ``numpy.int64`` scalars, which the native entry points read).
The native entry point refuses any argument that is not a float64 ``numpy.ndarray`` of the right
length, C-contiguous and aligned, or a ``numpy.int64`` key (in the dispatcher fallback, as in
:mod:`sinews._entry`, each entry kernel is compiled for exactly one signature); lengths,
finiteness and zero quaternions are checked in the kernel.  Anything refused, any negative code
or exception sends the call to the checked path (after a new pool, when the pool was used up),
which converts what it may and raises the named error: the fast path never changes a result or
an error.

A result is one slot of a pool shared with up to ``K - 1`` other results (a returned Jacobian is
a view into a ``(K, 6, nv)`` array): a slot is handed out again only when its pool is reused
(:mod:`sinews._pools`), a used-up pool is otherwise replaced by a new one, and a pool lives as
long as any of its results.  A state is bound per thread (on ``model._tls``) by the first
checked call, and rebuilt when a frame added to the model changes the placement table; the
state of the thread that called last is also ``model._kin``, which the fast path reads (a plain
attribute, where the thread-local look-up costs 0.03 us): its buffer holds the identity of its
thread, the native entry points refuse any other, and :func:`retry` then calls on the thread's
own state, which takes ``model._kin`` over (once per turn of the GIL).

The buffer holds a copy of the model's float table ``mf``, made when the state is bound.  The
kinematics kernels read only what is fixed once a model is compiled (placements, axes, masses
and inertias); ``model.gravity``, which may still be set afterwards, is not read from the copy.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from itertools import repeat

import numpy as np
from numba import types as _nt

from . import _kinematics_fast_kernels as FK
from . import _layout as L
from ._kinematics_common import _REF as REF
from . import _native
from ._native import TUPLE_ITEMS, TUPLE_SIZE
from ._pools import ARRAYS, OBJECTS, Pool, PoolPair, view_pool, weaklist_ok
from .algorithms import get_data
from .spatial import Transform

#: results per pool (the placement tables of :func:`~sinews.forward_kinematics`: see
#: :func:`placement_pool_size`)
POOL = 64
#: bytes of one pool of placement tables, at most (unless that is fewer than 4 tables)
PLACEMENT_POOL_BYTES = 1 << 17


def placement_pool_size(rows: int) -> int:
    """Tables per ring of :func:`~sinews.forward_kinematics` results for ``rows`` placements: as
    many as fit in :data:`PLACEMENT_POOL_BYTES` (a new ring, its tables and its result
    objects, is paid for by the calls it serves while the caller keeps its results), an even
    number between 4 and :data:`POOL`."""
    return 2 * max(2, min(POOL // 2, PLACEMENT_POOL_BYTES // (192 * max(rows, 1))))


_F1 = _nt.Array(_nt.float64, 1, "C")
_F2 = _nt.Array(_nt.float64, 2, "C")
_F3 = _nt.Array(_nt.float64, 3, "C")
_INT = _nt.int64
#: The one signature each entry kernel is compiled for.
SIGNATURES = {
    "placements_into_f": (_F1, _F2, _F1),
    "row_placement_f": (_F1, _INT, _F3, _F1),
    "frame_jacobian_f": (_F1, _INT, _F1, _INT, _F3, _F1),
    "frame_jacobian_k": (_F1, _INT, _F3, _F1),
    "jacobian_time_variation_f": (_F1, _F1, _INT, _F1, _INT, _F3, _F1),
    "jacobian_time_variation_k": (_F1, _F1, _INT, _F3, _F1),
    "center_of_mass_f": (_F1, _F2, _F1),
    "com_velocity_f": (_F1, _F1, _F2, _F1),
    "com_jacobian_f": (_F1, _F3, _F1),
}


_new = object.__new__


_SET_R = Transform.R.__set__  # (the slots of the frozen dataclass, written without its checks)
_SET_P = Transform.p.__set__


def _transforms(R, p):
    """Transforms of the arrays ``R[i]``, ``p[i]``, made without checks."""
    T = list(map(_new, repeat(Transform, len(R))))
    list(map(_SET_R, T, R))
    list(map(_SET_P, T, p))
    return T


def _readonly(a):
    ro = a.view()
    ro.flags.writeable = False
    return ro


class KinBuffer(np.ndarray):
    """The type of a :class:`KinState`'s buffer: the native entry points check that their first
    argument has it before they read it (any other object is refused)."""


def kin_buffer(c, ws, out=None) -> KinBuffer:
    """The buffer of the compiled model ``c`` with a copy of the workspace ``ws``: header, the
    model's tables, the support chains and the workspace (see
    :mod:`sinews._kinematics_fast_kernels`); its pool slot counters at 0.  With ``out`` (a
    :class:`~sinews.kinematics.Placements` over a table): the buffer of ``out`` itself, with
    the addresses of ``out``, its model and its table in the header."""
    nl = c.nlinks
    mi, mf, pl = c.mi, c.mf, c.pl
    # support chain of every link, root first
    parent = mi[:, L.MI_PARENT].tolist()
    chains = []
    for k in range(nl):
        chain = []
        l = k
        while l >= 0:
            chain.append(l)
            l = parent[l]
        chains.append(chain[::-1])
    lengths = [len(ch) for ch in chains]
    o_mi = FK.H_SIZE
    o_cs = o_mi + mi.size
    o_cn = o_cs + nl
    o_ch = o_cn + nl
    o_all = o_ch + sum(lengths)
    quats = c.quat_slices[:, 0] if len(c.quat_slices) else np.zeros(0, dtype=np.int64)
    o_qs = o_all + nl
    o_mf = o_qs + len(quats)
    o_pl = o_mf + mf.size
    o_ws = o_pl + pl.size
    o_tmp = o_ws + ws.size
    ib = np.zeros(o_tmp + 9, dtype=np.int64)
    buf = ib.view(np.float64).view(KinBuffer)
    h = ib[: FK.H_SIZE]
    h[FK.H_NL], h[FK.H_NQ], h[FK.H_NV], h[FK.H_NROWS] = nl, c.nq, c.nv, pl.size // L.PL_STRIDE
    h[FK.H_MI], h[FK.H_MF], h[FK.H_NMF], h[FK.H_PL] = o_mi, o_mf, mf.size, o_pl
    h[FK.H_WS], h[FK.H_NWS], h[FK.H_CS], h[FK.H_CN], h[FK.H_TMP] = o_ws, ws.size, o_cs, o_cn, o_tmp
    ib[o_mi:o_cs] = mi.reshape(-1)
    ib[o_cn:o_ch] = lengths
    ib[o_cs:o_cn] = o_ch + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ib[o_ch:o_all] = [l for ch in chains for l in ch]
    ib[o_all:o_qs] = np.arange(nl)
    ib[o_qs:o_mf] = quats
    ib[FK.H_ALL], ib[FK.H_QS], ib[FK.H_NQS] = o_all, o_qs, len(quats)
    buf[o_mf:o_pl] = mf
    buf[o_pl:o_ws] = pl
    buf[o_ws:o_tmp] = ws
    ib[FK.H_NDARRAY], ib[FK.H_F64], ib[FK.H_INT64] = id(np.ndarray), id(np.dtype(np.float64)), id(np.int64)
    ib[FK.H_VERSION_AT], ib[FK.H_VERSION] = c.frames_version.ctypes.data, c.frames_version[0]
    ib[FK.H_IDENT_AT] = _native.THREAD_IDENT_AT
    buf.owner = 0  # (any thread: an out's buffer, until a KinState takes it)
    buf.frames_version = c.frames_version  # (the cell whose address the entry kernels read, kept alive)
    if out is not None:  # (out holds its model and its table, and the buffer only through out)
        ib[FK.H_OUT], ib[FK.H_OUT_MODEL], ib[FK.H_OUT_TABLE] = id(out), id(out.model), id(out._table)
    return buf


def out_buffer(out, c, ws) -> KinBuffer:
    """The buffer of ``out`` (a :class:`~sinews.kinematics.Placements` over a table of the
    compiled model ``c``): the one it has when that is its own and no frame was added since,
    else a new one (:func:`kin_buffer` with a copy of ``ws``)."""
    b = out._buf
    if isinstance(b, KinBuffer):
        h = b.view(np.ndarray).view(np.int64)
        if h[FK.H_OUT] == id(out) and h[FK.H_VERSION] == c.frames_version[0]:
            return b
    return kin_buffer(c, ws, out)


class KinState:
    """The fast path's buffer, name tables and result pools for one model and one thread."""

    __slots__ = ("buf", "ib", "pl", "body_rows", "frame_rows", "body_keys", "frame_keys", "model", "nbodies",
                 "T", "Tp", "J6", "J6p", "J3", "J3p", "V3", "V3p", "pools")

    def __init__(self, model, c, ws):
        buf = kin_buffer(c, ws)
        ib = buf.view(np.ndarray).view(np.int64)
        buf.owner = threading.get_ident()  # (the thread that may use it: the dispatcher path's check)
        ib[FK.H_OWNER] = _native.thread_ident()
        pl = c.pl
        self.buf, self.ib, self.pl = buf, ib, pl
        # the name tables' values are numpy.int64 scalars, which the native entry points read
        i64 = np.int64
        self.body_rows = {b: i64(row) for b, row in c.body_rows.items()}
        self.frame_rows = {f: i64(row) for f, row in c.frame_rows.items()}
        # reference name -> {body or frame name or id: 4 * row + reference code}
        self.body_keys = {name: {b: i64(4 * row + ref) for b, row in c.body_rows.items()} for name, ref in REF.items()}
        self.frame_keys = {name: {f: i64(4 * row + ref) for f, row in c.frame_rows.items()} for name, ref in REF.items()}
        self.model, self.nbodies = model, c.nbodies
        self.pools = {kind: PoolPair() for kind in _SLOT}
        for kind in _SLOT:
            self.refill(kind)
        self.ring([], [], None, (0, 0))  # (no placement tables until the first forward_kinematics)

    def refill(self, kind: str) -> None:
        """A pool of results of one kind (slot counter back to 0): the spare pool when it is free
        (:mod:`sinews._pools`), else a new one."""
        pool = self.pools[kind].next(lambda: self._new_pool(kind))
        setattr(self, kind + "p", pool.block)
        setattr(self, kind, pool.results)
        self.ib[_SLOT[kind]] = 0

    def ring(self, tables: list, results: list, like, offsets: tuple) -> None:
        """Hand out ``forward_kinematics`` results from a new ring: ``tables`` (each its own
        (rows, 12) array) and ``results`` (the Placements of each), ``like`` (a template
        Placements, its views made) and ``offsets`` (those of a Placements' cached views and
        of its table, :func:`slot_offsets`; 0: never reuse a table), which the native entry
        point reads by address (the buffer holds them).  The header names no list while it
        changes (a call in between, from a finalizer the change runs, is refused; one
        interrupted leaves a ring to make), and the old ring is freed only once it names the
        new one."""
        ib = self.ib
        old = getattr(self.buf, "ring", None)  # (freed at the end, not before)
        ib[FK.H_P_FULL] = 1
        ib[FK.H_P_RESULTS] = 0
        ib[FK.H_P_TABLES] = id(tables)
        ib[FK.H_P_TYPE] = id(type(like))
        ib[FK.H_P_VIEWS_AT], ib[FK.H_P_TABLE_AT] = offsets if like is not None else (0, 0)
        ib[FK.H_P_LIKE] = id(like._table) if like is not None else 0
        ib[FK.H_P_LIKE_VIEWS] = id(like._views) if like is not None else 0
        ib[FK.H_NONE] = id(None)
        self.buf.ring = (tables, results, like)
        ib[FK.H_SLOT_FK] = ib[FK.H_P_FULL] = 0
        ib[FK.H_P_RESULTS] = id(results)
        del old  # (now that the header names the new ring)

    def _new_pool(self, kind: str) -> Pool:
        """A new pool of ``kind``, with what :meth:`Pool.free` checks before it is reused: the
        results (objects of their class, held by the pool's list only) and their arrays (held by
        the result too), compared with templates made the same way."""
        nv = int(self.ib[FK.H_NV])
        if kind == "T":
            block = np.empty((POOL, 4, 3))
            ro = _readonly(block)
            R, p = list(ro[:, :3]), list(ro[:, 3])
            T = _transforms(R, p)
            like = _readonly(np.empty((1, 4, 3)))
            held = ((T, 1, OBJECTS, Transform), (R, 2, ARRAYS, like[0, :3]), (p, 2, ARRAYS, like[0, 3]))
            return Pool(block, T, held, 2 * POOL)
        return view_pool(POOL, (6, nv) if kind == "J6" else (3, nv) if kind == "J3" else (3,))


def bind(model) -> None:
    """Bind (or rebuild, after a frame was added) this thread's :class:`KinState` of ``model``:
    ``None`` for a model without moving joints (whose calls take the checked path)."""
    c = model.compiled
    s = getattr(model._tls, "kin", None)
    if s is None or s.pl is not c.pl:
        if c.nlinks == 0:
            model._tls.kin = None
            return
        from .model import Data

        s = model._tls.kin = KinState(model, c, Data(model).ws)
    model._kin = s  # (the fast path's, until another thread's call takes it over)


def checked_data(model, data):
    """The workspace of the checked path (:func:`sinews.algorithms.get_data`); without
    ``data``, also binds this thread's fast-path state (:func:`bind`)."""
    d = get_data(model, data)
    if data is None:
        bind(model)
    return d


#: the header's slot counter of each kind of pool
_SLOT = {"T": FK.H_SLOT_T, "J6": FK.H_SLOT_J6, "J3": FK.H_SLOT_J3, "V3": FK.H_SLOT_V3}


def retry(model, kind: str, entry, *inputs):
    """After ``entry(buf, *inputs, pool, results)`` on ``model._kin`` answered ``buf``: on
    another thread than its owner's, the call on this thread's state, which takes
    ``model._kin`` over (as :func:`~sinews._entry.take_over` does ``model._fast``); when the
    pool of ``kind`` is used up, a new one and the call once more; the result, or ``None`` (the
    call was refused for another reason: take the checked path)."""
    s = model._tls.kin
    if s is not model._kin:
        model._kin = s  # (this thread takes the fast path over)
        r = entry(s.buf, *inputs, getattr(s, kind + "p"), getattr(s, kind))
        if r is not s.buf:
            return r
    if s.ib[_SLOT[kind]] < len(getattr(s, kind)):
        return None
    s.refill(kind)
    r = entry(s.buf, *inputs, getattr(s, kind + "p"), getattr(s, kind))
    return None if r is s.buf else r


def retry_ring(model, entry, q, make):
    """After ``entry(buf, q)`` (``forward_kinematics``) answered ``buf``: when no table of the
    ring was free, a new ring (``make(tables, nbodies, model)``: the Placements of the tables)
    and the call once more (on this thread's state: see :func:`retry`); the result, or
    ``None`` (take the checked path)."""
    s = model._tls.kin
    if s is not model._kin:
        model._kin = s  # (this thread takes the fast path over)
        r = entry(s.buf, q)
        if r is not s.buf:
            return r
    if not s.ib[FK.H_P_FULL]:
        return None
    rows = int(s.ib[FK.H_NROWS])
    tables = [np.empty((rows, 12)) for _ in range(placement_pool_size(rows))]
    like = make([np.empty((rows, 12))], s.nbodies, s.model)[0]
    like.R  # (its views made: the template of a result whose views were made)
    s.ring(tables, make(tables, s.nbodies, s.model), like, slot_offsets(like))
    r = entry(s.buf, q)
    return None if r is s.buf else r


@functools.cache
def _slot_offsets(cls) -> tuple:
    """The offsets of the slots ``_views`` and ``_table`` in instances of ``cls`` (each found by
    its value in a probe's memory), when the native layer can read what the ring checks
    (``(0, 0)``: it cannot, and no table is reused)."""
    if not (_native.available() and weaklist_ok()):  # (not layout_ok: it compiles the pools' checks)
        return 0, 0
    probe = object.__new__(cls)
    values = {name: object() for name in cls.__slots__}
    for name, value in values.items():
        setattr(probe, name, value)
    words = (ctypes.c_ssize_t * (cls.__basicsize__ // 8)).from_address(id(probe))
    at = {name: [8 * i for i, w in enumerate(words) if w == id(value)] for name, value in values.items()}
    views = (np.empty(1), np.empty(1), np.empty(1), np.empty(1))
    item = ctypes.c_ssize_t.from_address(id(views) + TUPLE_ITEMS + 8).value
    size = ctypes.c_ssize_t.from_address(id(views) + TUPLE_SIZE).value
    if any(len(a) != 1 or a[0] < 16 for a in at.values()) or item != id(views[1]) or size != 4:
        return 0, 0
    return at["_views"][0], at["_table"][0]


def slot_offsets(P) -> tuple:
    """:func:`_slot_offsets` of the class of ``P``."""
    return _slot_offsets(type(P))
