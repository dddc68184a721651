"""The fast call path of the public tree algorithms (``rnea``, ``crba``, ``aba``, ``minverse``).

A public call without ``f_ext``, ``data`` or ``out`` does, in Python, only this::

    cx, nv, _ = model._fast              # the last calling thread's context block (Model.default_data)
    tau = np.empty(nv)
    if RNEA(cx, q, v, a, tau) is tau:    # one native call (sinews._native_entry.rnea_n)
        return tau

``crba`` and ``minverse`` take their result from this thread's :class:`MatrixPool` instead of a
new array: the entry point is given the pool, fills its last matrix (a view of a block of
matrices prepared in advance) and takes it from the pool as ``list.pop()`` would, only when the
kernel succeeded (``M = CRBA(cx, q, results)``; a used-up pool gets a new block, then one more
call).  Everything else is checked without Python code: the native entry point
refuses any argument that is not a float64 ``numpy.ndarray`` of the right shape, C-contiguous
and aligned (see :mod:`sinews._native`), and the kernel checks finiteness and zero quaternions
and returns a code.  Anything refused, any non-zero code or exception sends the call to the checked path,
which converts what it may and raises the named ``ValueError`` otherwise: the fast path never
changes a result or an error, it only skips work for arguments that need none.

``model._fast`` is the context block, pool and size of the thread that called last (a plain
attribute: a thread-local look-up costs 0.03 us): the block holds its thread's identity, which
the entry points compare with the calling thread's (:func:`sinews._native.owned`), so another
thread's call is refused and made once more on that thread's own (:func:`take_over`), which
takes ``model._fast`` over: once per turn of the GIL (about 0.15 us).  A thread without a
workspace yet takes the checked path, which creates it (``Model.default_data``) and takes
``model._fast`` over too.  This module binds the thread's context block (:func:`fast_args`)
and keeps the dispatcher path: where the native layer is not available, each entry point
dispatches an entry kernel (``rnea_x``, ...) compiled for exactly one signature (:data:`SIGNATURES`, contiguous, writeable,
aligned float64 arrays) with compilation then disabled (:func:`typed`), so that Numba's C
dispatcher refuses other argument types with an exception.
"""

from __future__ import annotations

import threading

from numba import types

from . import _kernels as K
from ._pools import PoolPair, view_pool

_F1 = types.Array(types.float64, 1, "C")
_F2 = types.Array(types.float64, 2, "C")
_I2 = types.Array(types.int64, 2, "C")

#: The one signature each entry kernel is compiled for.
SIGNATURES = {
    "rnea_x": (_F1, _F1, _F1, _F1, _I2, _F1, _F1),
    "aba_x": (_F1, _F1, _F1, _F1, _I2, _F1, _F1),
    "crba_x": (_F1, _F2, _I2, _F1, _F1),
    "minverse_x": (_F1, _F2, _I2, _F1, _F1, _F1),
}

_lock = threading.Lock()


def typed(name: str, module=None, signatures: dict | None = None):
    """The dispatcher ``<module>.<name>`` (default module: ``_kernels``), compiled (or loaded
    from the cache) for its signature in ``signatures`` (default :data:`SIGNATURES`) only, with
    compilation of further signatures disabled."""
    disp = getattr(K if module is None else module, name)
    sig = (SIGNATURES if signatures is None else signatures)[name]
    with _lock:
        if sig not in disp.overloads:
            disp.compile(sig)
        disp.disable_compile()
    return disp


#: bytes of one block of prepared (nv, nv) results (:class:`MatrixPool`), at most (unless that is
#: fewer than 4 matrices)
MATRIX_POOL_BYTES = 1 << 17


class MatrixPool(list):
    """This thread's prepared ``(nv, nv)`` results of :func:`sinews.crba` and
    :func:`sinews.minverse`: views of one block of ``count`` matrices (as many as fit in
    :data:`MATRIX_POOL_BYTES`, between 4 and 64), each handed out once (the entry point takes
    the last one) and filled by the kernel; :meth:`refill` prepares the views of another block
    when they are used up: the block used up before, when the caller has dropped all its
    results (:mod:`sinews._pools`), else a new one.  A result keeps its block alive.  Handing
    out a view made in advance costs about 0.02 us less than a new array on UR5 and 0.13-0.2 us
    less from nv = 18 (the array's allocation and release); reusing a block saves making its
    views, about 0.07 us per result."""

    __slots__ = ("shape", "count", "pools")

    def __init__(self, nv: int):
        super().__init__()
        self.shape = (nv, nv)
        self.count = max(4, min(64, MATRIX_POOL_BYTES // (8 * max(nv, 1) ** 2)))
        self.pools = PoolPair()

    def refill(self) -> bool:
        """When the pool is used up, the views of another block in it: whether it was used up
        (an entry point that refused a call with results left refused it for another reason)."""
        if self:
            return False
        self.extend(self.pools.next(lambda: view_pool(self.count, self.shape)).results)
        return True


def take_over(model):
    """After a refused call on ``model._fast``: this thread's own ``(cx, nv, results)`` when
    ``model._fast`` was another thread's (it is this thread's from now on; the caller calls once
    more on it), else ``None``.  A pool is refilled only by its own thread: the caller refills
    ``results`` only from this thread's tuple (a refill is Python code, which another thread's
    refused call could otherwise interleave with, handing a matrix out twice).  (The kinematics'
    ``retry`` does the same with ``model._kin``, inline: a look-up by name costs 0.1-0.2 us more
    per take-over.)"""
    f = model._tls.fast
    if f is model._fast:
        return None
    model._fast = f
    return f


def pool_retry(model, entry, q):
    """After ``entry(cx, q, results)`` (``crba``, ``minverse``) on ``model._fast`` answered
    ``cx``: the call on this thread's own block when ``model._fast`` was another thread's
    (:func:`take_over`), then once more after refilling this thread's pool when it was used up;
    the matrix, or ``None`` (take the checked path)."""
    if (f := take_over(model)) is None:
        f = model._fast
    else:
        M = entry(f[0], q, f[2])
        if M is not f[0]:
            return M
    cx, _, results = f
    if results.refill() and (M := entry(cx, q, results)) is not cx:
        return M
    return None


def fast_args(model, data):
    """What the fast path needs from ``data`` (a workspace of ``model``): ``(cx, nv, results)``
    with ``cx`` the context block of the entry points (:func:`sinews._native.context`, which
    also holds the arrays for the dispatcher fallback) and ``results`` a :class:`MatrixPool`;
    ``None`` for a model without moving joints (which takes the checked path).  The scratch of
    ``minverse`` is the one kept on ``data`` (:func:`sinews._minv_kernels.data_buffer`)."""
    from . import _minv_kernels as MK
    from . import _native

    c = data.c
    if not c.nlinks:
        return None
    cx = _native.context(c.nq, c.nv, c.mi, c.mf, data.ws, MK.data_buffer(data))
    cx[_native.CX_POOL] = id(MatrixPool)
    cx[_native.CX_OWNER] = _native.thread_ident()  # (the calling thread's: Model.default_data)
    cx.owner = threading.get_ident()
    return cx, c.nv, MatrixPool(c.nv)
