"""Pools of prepared results, recycled once the caller has dropped every result of a pool.

The fast paths hand out results made in advance, in bulk (:mod:`sinews._kinematics_fast`,
:class:`sinews._entry.MatrixPool`): views of one block of memory, or objects over such views
(:class:`~sinews.spatial.Transform`).  (``forward_kinematics`` reuses its tables one at a time
instead: :mod:`sinews._native_kinematics`.)  Making a pool costs about 0.07 us per view and 0.3 us per
``Transform``, more than some kernels.  A caller that drops its results, as a loop does, leaves
whole pools that nothing but their state refers to: such a pool is used again instead of a new one.

Each kind of result keeps two pools: the one it hands out from, and the one used up before it
(the *spare*).  When the current pool is used up, the spare is reused if it is *free*:

* no one else holds the block: its reference count is that of the pool's own views (whose NumPy
  base it is, as the base of every view made from them) plus the spare's own reference;
* no one else holds a result: every view or object of the spare has the reference count of the
  references the pool itself keeps (:meth:`Pool.free`).

Otherwise a new pool is made, as before (the spare is then the pool just used up).  Checking
the spare, not the pool just used up, lets a loop that keeps only its latest result (``X =
f(...)``: the previous ``X`` still referenced during the call) recycle too.  A result reused is
never one the caller can still reach: any reference to it, to one of its arrays, or to a view of
them (even a view of a view: NumPy makes the block the base of all of them) counts.

The reference counts are read by a native function (:func:`held_n`, with the offsets of
:mod:`sinews._native`); where the native layer is not available no pool is ever reused.  The
native entry points of ``crba`` and ``minverse`` take their result from the pool's list with
:func:`pool_last` and :func:`pool_pop`.
"""

from __future__ import annotations

import functools
import sys
import weakref

import numpy as np

from ._jit import njit
from ._native import (ALIGNED, AR_DESCR, AR_DIMS, AR_FLAGS, AR_ND, AR_STRIDES, C_CONTIGUOUS, LIST_SIZE, OB_REFCNT,
                      OB_TYPE, WRITEABLE, Entry, called_with, list_item, list_size, load_i32, load_i64, new_ref, op_of,
                      store_i64)

__all__ = ["Pool", "PoolPair", "pool_last", "pool_pop", "view_pool"]


@njit(cache=True, forceinline=True)
def pool_last(obj, t_pool):
    """The address of the last item of the list at address ``obj`` when its type is at address
    ``t_pool`` and it has an item, else 0."""
    if load_i64(obj + OB_TYPE) != t_pool:
        return 0
    n = list_size(obj)
    if n <= 0:
        return 0
    return list_item(obj, n - 1)


@njit(cache=True, forceinline=True)
def pool_pop(obj):
    """The last item of the (non-empty) list at address ``obj``, removed from the list with its
    reference, which passes to the caller: what ``list.pop()`` does, the list's storage kept."""
    n = list_size(obj)
    item = list_item(obj, n - 1)
    store_i64(obj + LIST_SIZE, n - 1)
    return item


#: what :func:`held_n` checks of the items (the op code's second byte): arrays as the pool made
#: them (compared with a template), objects of a class
ARRAYS, OBJECTS = 1, 3
#: ``PyArrayObject.weakreflist`` (:func:`_layout_ok` checks it against the running NumPy)
AR_WEAKLIST = 72
#: the flags an array handed out again must still have, as when it was made
KEPT_FLAGS = C_CONTIGUOUS | ALIGNED | WRITEABLE


@njit(cache=True, forceinline=True)
def _as_made(x, like):
    """Whether the array at ``x`` has no weak reference and the dtype, flags, shape and strides
    of the template array at ``like``."""
    if load_i64(x + AR_WEAKLIST) != 0 or load_i64(x + AR_DESCR) != load_i64(like + AR_DESCR):
        return False
    if (load_i32(x + AR_FLAGS) & KEPT_FLAGS) != (load_i32(like + AR_FLAGS) & KEPT_FLAGS):
        return False
    nd = load_i32(x + AR_ND)
    if nd != load_i32(like + AR_ND):
        return False
    dx, dl = load_i64(x + AR_DIMS), load_i64(like + AR_DIMS)
    sx, sl = load_i64(x + AR_STRIDES), load_i64(like + AR_STRIDES)
    for k in range(nd):
        if load_i64(dx + 8 * k) != load_i64(dl + 8 * k) or load_i64(sx + 8 * k) != load_i64(sl + 8 * k):
            return False
    return True


def held_n(self, args, nargs):
    """``f(items, like)``: ``items`` (a list) when every item is as the pool left it, else the
    entry point's ``self`` (also for any other argument).  As the pool left it: the reference
    count in the op code's low byte (that many references, all of them the pool's) and, by the
    op code's second byte, :data:`ARRAYS`: the type of the template array ``like`` and
    :func:`_as_made`; :data:`OBJECTS`: the class ``like``."""
    if nargs == 2 and called_with(self, args, nargs):
        items = args[0]
        like = args[1]
        op = op_of(self)
        n = op & 255
        mode = op >> 8
        t = load_i64(like + OB_TYPE) if mode == ARRAYS else like
        for i in range(list_size(items)):
            x = list_item(items, i)
            if load_i64(x + OB_REFCNT) != n or load_i64(x + OB_TYPE) != t:
                return new_ref(self)
            if mode == ARRAYS and not _as_made(x, like):
                return new_ref(self)
        return new_ref(items)
    return new_ref(self)


def _never():
    """The dispatcher-path stand-in: no reference counts are read, no pool is reused."""
    return lambda items, like: None


# one entry point per (count, mode) used (each rebinds its global to the built-in function on
# its first call)
_HELD_NAMES = ("_HELD_1_1", "_HELD_2_1", "_HELD_1_3")
_HELD_1_1 = Entry(held_n, _never, globals(), "_HELD_1_1", list, 1 | ARRAYS << 8)
_HELD_2_1 = Entry(held_n, _never, globals(), "_HELD_2_1", list, 2 | ARRAYS << 8)
_HELD_1_3 = Entry(held_n, _never, globals(), "_HELD_1_3", list, 1 | OBJECTS << 8)


def _layout_ok() -> bool:
    """Whether :func:`held_n` sees, on known arrays, what Python reports: an array held only by
    the list passes; one more reference, a weak reference or a changed flag fails it (else, or
    without the native layer, no pool is reused)."""
    if not weaklist_ok():
        return False
    block = np.zeros((2, 3))
    items, like = list(block), block[0]
    if _HELD_1_1(items, like) is not items:
        return False
    held = items[1]
    if _HELD_1_1(items, like) is items:
        return False
    del held
    w = weakref.ref(items[0])
    if _HELD_1_1(items, like) is items:
        return False
    del w
    items[1].flags.writeable = False
    if _HELD_1_1(items, like) is items:
        return False
    items[1].flags.writeable = True
    return _HELD_1_1(items, like) is items


def weaklist_ok() -> bool:
    """Whether :data:`AR_WEAKLIST` is where the running NumPy keeps an array's weak references
    (the other fields :func:`_as_made` reads are checked by :func:`sinews._native.available`)."""
    return np.ndarray.__weakrefoffset__ == AR_WEAKLIST


@functools.cache
def layout_ok() -> bool:
    """:func:`_layout_ok`, run once (an error: False)."""
    try:
        return _layout_ok()
    except Exception:
        return False


def warm() -> None:
    """Build the native functions (or load them from the cache) and check the layout."""
    for name in _HELD_NAMES:
        globals()[name]([], np.ndarray)
    layout_ok()


class Pool:
    """One pool: ``block`` (the memory of its results), ``results`` (the list the fast path
    hands out by slot, or a copy of it), ``held``: ``(items, count, mode, like)`` for each list
    of the pool's views and objects, with the reference count each has when only the pool
    refers to it (1: only ``items``; 2: ``items`` and the result object that holds it) and what
    else :func:`held_n` checks (``mode``, ``like``); ``views``: the number of views whose base is
    ``block``."""

    __slots__ = ("block", "results", "held", "views")

    def __init__(self, block, results, held, views: int):
        self.block, self.results, self.held, self.views = block, results, held, views

    def free(self) -> bool:
        """Whether nothing but this pool refers to its block, its views and its objects, and
        each is as the pool made it (then the pool is ready to hand out again)."""
        if not layout_ok():
            return False
        # (getrefcount: the views' bases, self.block, and its own argument)
        if sys.getrefcount(self.block) != self.views + 2:
            return False
        g = globals()
        for items, count, mode, like in self.held:
            if g[f"_HELD_{count}_{mode}"](items, like) is not items:
                return False
        return True


def view_pool(count: int, shape: tuple) -> Pool:
    """A new pool of ``count`` arrays of ``shape``: the views of one block, each held only by the
    pool's list (checked against a template view of the same shape)."""
    shape = tuple(shape)
    block = np.empty((count,) + shape)
    views = list(block)
    return Pool(block, views, ((views, 1, ARRAYS, np.empty((1,) + shape)[0]),), count)


class PoolPair:
    """The pool one kind of result is handed out from (``current``) and the one used up before
    it (``spare``)."""

    __slots__ = ("current", "spare")

    def __init__(self):
        self.current = self.spare = None

    def next(self, make) -> Pool:
        """The pool to hand out from next: the spare when it is :meth:`~Pool.free`, else
        ``make()``; the current pool becomes the spare."""
        pool = self.spare
        if pool is None or not pool.free():
            pool = make()
        self.spare, self.current = self.current, pool
        return pool
