"""The fast call path of the public tree algorithms (``rnea``, ``crba``, ``aba``, ``minverse``).

A public call without ``f_ext``, ``data`` or ``out`` does, in Python, only this::

    mi, mf, ws, nv = model._tls.fast     # this thread's workspace, bound once (Model.default_data)
    tau = np.empty(nv)
    code = RNEA(q, v, a, tau, mi, mf, ws) # one dispatch of an entry kernel (_kernels.rnea_x)

and returns ``tau`` when ``code == 0``.  (``minverse`` also needs a scratch vector: it reads
``(mi, mf, ws, buf, (nv, nv))`` from ``model._tls.minv``, bound by its checked path on the thread's
first call, and dispatches ``_minv_kernels.minverse_x``.)  Everything else is checked without
Python code:

* argument *types*: each entry kernel is compiled for exactly one signature (contiguous,
  writeable, aligned float64 arrays; see :data:`SIGNATURES`) and then has compilation disabled,
  so Numba's C dispatcher, which types every argument anyway, refuses anything else (other
  dtypes, read-only or non-contiguous arrays, lists, scalars) with an exception;
* lengths, finiteness and zero quaternions: inside the kernel, which returns a code.

Any exception or non-zero code sends the call to the checked path (the previous wrapper), which
converts what it may and raises the named ``ValueError`` otherwise: the fast path never changes a
result or an error, it only skips work for arguments that need none.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import types

from . import _kernels as K

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


class Lazy:
    """Stand-in for an entry kernel in a module's globals until its first call: the call
    compiles it (:func:`typed`), rebinds the global to the dispatcher and runs it, so that later
    calls find the dispatcher with a plain global look-up and the kernel is compiled only when
    first used."""

    signatures: dict | None = None  #: the signature table (default :data:`SIGNATURES`)

    def __init__(self, name: str, namespace: dict, binding: str, module=None):
        self.name, self.namespace, self.binding, self.module = name, namespace, binding, module

    def __call__(self, *args):
        disp = typed(self.name, self.module, self.signatures)
        self.namespace[self.binding] = disp
        return disp(*args)


def fast_args(model, data):
    """What the fast path needs from ``data`` (a workspace of ``model``): ``(cx, nv, (nv, nv))``
    with ``cx`` the context block of the entry points (:func:`sinews._native.context`, which
    also holds the arrays for the dispatcher fallback); ``None`` for a model without moving
    joints (which takes the checked path).  ``buf``, the scratch of ``minverse``, is kept on
    ``data``."""
    from . import _minv_kernels as MK
    from . import _native

    c = data.c
    if not c.nlinks:
        return None
    buf = data.__dict__.get("_minv_buf")
    if buf is None:
        buf = data._minv_buf = np.empty(MK.buffer_size(c.nlinks, c.nv))
    return _native.context(c.nq, c.nv, c.mi, c.mf, data.ws, buf), c.nv, (c.nv, c.nv)
