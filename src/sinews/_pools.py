"""Pools of prepared results, recycled once the caller has dropped every result of a pool.

The fast paths hand out results made in advance, in bulk (:mod:`sinews._kinematics_fast`,
:class:`sinews._entry.MatrixPool`): views of one block of memory, or objects over such views
(:class:`~sinews.spatial.Transform`).  Making a pool costs about 0.07 us per view and 0.3 us per
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

import sys

from ._jit import njit
from ._native import (LIST_SIZE, OB_REFCNT, OB_TYPE, Entry, called_with, list_item, list_size, load_i64, new_ref,
                      op_of, store_i64)

__all__ = ["Pool", "pool_last", "pool_pop"]


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


def held_n(self, args, nargs):
    """``f(items)``: ``items`` (a list) when each of its items has the reference count that is
    this entry point's op code (that many references, all of them known to the pool), else the
    entry point's ``self`` (also for any other argument)."""
    if nargs == 1 and called_with(self, args, nargs):
        items = args[0]
        n = op_of(self)
        for i in range(list_size(items)):
            if load_i64(list_item(items, i) + OB_REFCNT) != n:
                return new_ref(self)
        return new_ref(items)
    return new_ref(self)


def _never():
    """The dispatcher-path stand-in: no reference counts are read, no pool is reused."""
    return lambda items: None


# (each rebinds its global to the built-in function on its first call)
_HELD_1 = Entry(held_n, _never, globals(), "_HELD_1", list, 1)
_HELD_2 = Entry(held_n, _never, globals(), "_HELD_2", list, 2)


def warm() -> None:
    """Build the native functions (or load them from the cache)."""
    _HELD_1([])
    _HELD_2([])


class Pool:
    """One pool: ``block`` (the memory of its results), ``results`` (the list the fast path
    hands out by slot, or a copy of it), ``held``: pairs ``(items, count)``, the lists of the
    pool's views and objects with the reference count each has when only the pool refers to it
    (1: only ``items``; 2: ``items`` and the result object that holds it), and ``views``: the
    number of views whose base is ``block``."""

    __slots__ = ("block", "results", "held", "views", "made")

    def __init__(self, block, results, held, views: int, made: list | None = None):
        self.block, self.results, self.held, self.views = block, results, held, views
        #: views of the block the results make later (Placements: its four arrays, made on first
        #: access), listed as they are made; one of the lists of ``held``
        self.made = made

    def free(self) -> bool:
        """Whether nothing but this pool refers to its block, its views and its objects."""
        # (getrefcount: the views' bases, self.block, and its own argument)
        views = self.views if self.made is None else self.views + len(self.made)
        if sys.getrefcount(self.block) != views + 2:
            return False
        g = globals()
        for items, count in self.held:
            if g[f"_HELD_{count}"](items) is not items:
                return False
        return True
