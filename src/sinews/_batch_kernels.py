"""Numba kernels of :mod:`sinews.batch`: the core kernels over arrays of states, in parallel.

Structure (chosen for compile time; see ``docs/batch.md``):

* one *worker* per algorithm, a serial ``@njit(cache=True, nogil=True)`` function that runs
  the single-state core kernel (:mod:`sinews._kernels`, :mod:`sinews._kinematics_kernels`,
  :func:`sinews.constraints._fast.contact_range_space`) on the states ``lo:hi`` of a batch
  with one workspace, and writes each state's return code into ``codes``.  Every worker has
  the same signature (:data:`WORKER_SIG`);
* one parallel *driver* (``parallel=True``, ``numba.prange`` over chunks of states, one private
  copy of the workspace per chunk) that receives the worker as a first-class function
  (:class:`numba.types.FunctionType`, the address of the worker's C wrapper, looked up once)
  and calls it through that address.  The driver therefore
  does not link the core kernels' code: a parallel function that calls a large kernel directly
  makes LLVM re-optimise that kernel four times (the parfor body, its gufunc wrapper, the
  parallel launcher and the caller), 10-15 s per algorithm on a cold cache instead of 2-4 s
  for a serial worker plus about 1 s, once, for the driver.

Determinism: a state's result depends only on that state's inputs (each kernel writes every
workspace entry it reads), the workers call the very kernels the single-state functions call,
and the compilation uses no fast-math flags, so the results are bit-identical to the
single-state functions and independent of the chunking, hence of the thread count.

Cache freshness: Numba's on-disk cache of a function is keyed on its own source file only, so
a cached worker would keep the code of an older ``_kernels.py`` linked into it.  The workers
are therefore closures over :func:`source_stamp` (a hash of the source files whose kernels
they call), which Numba includes in the cache key: editing those files recompiles them.

Everything here compiles lazily, on the first call of a batch function (never at import).
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np
from numba import prange

from ._jit import closure_digest, njit
from numba.core import types as nt
from numba.core.types.function_type import WrapperAddressProtocol

from . import _kernels as K
from . import _kinematics_kernels as KK
from .constraints import _fast as CF

__all__ = ["WORKER_SIG", "driver", "worker", "run"]

_A1 = nt.Array(nt.float64, 1, "C")
_A2 = nt.Array(nt.float64, 2, "C")
_A3 = nt.Array(nt.float64, 3, "C")
_I1 = nt.Array(nt.int64, 1, "C")
_I2 = nt.Array(nt.int64, 2, "C")
#: ``code = worker(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes)``: the states
#: ``lo:hi`` of the per-state inputs ``A``, ``B``, ``C`` (``(N, .)``) and ``FX`` (link forces,
#: ``(N or 1, nlinks, 6)``), results into the rows of ``OUT`` (``(N, width)``), with the model
#: arrays ``mi``, ``mf``, a private workspace ``ws``, integer and float parameters ``iargs``,
#: ``fargs``, and one return code per state in ``codes``.
WORKER_SIG = nt.int64(nt.int64, nt.int64, _A2, _A2, _A2, _A3, _A2, _I2, _A1, _A1, _I1, _A1, _I1)
_DRIVER_SIG = nt.void(nt.FunctionType(WORKER_SIG), _A2, _A2, _A2, _A3, _A2, _I2, _A1, _A1, _I1, _A1, _I1, nt.int64)

#: fewest states per parallel chunk: smaller batches use fewer threads (waking a thread costs
#: more than a handful of states), a batch of fewer than ``2 * MIN_CHUNK`` runs on the caller
MIN_CHUNK = 8

_LOCK = threading.Lock()  # one batch at a time (Numba's workqueue layer is not re-entrant)
_BUILD_LOCK = threading.Lock()
_workers = None
_driver = None
_compiled = {}


def source_stamp() -> int:
    """A non-negative 63-bit hash of this module's source and of every sinews module it imports,
    transitively (the kernels the workers call: :func:`sinews._jit.closure_digest`)."""
    try:
        return int(closure_digest(__file__)[:16], 16) >> 1
    except OSError:  # (a frozen installation: the package version stands in for the sources)
        from importlib.metadata import version

        return int(hashlib.sha256(version("sinews").encode()).hexdigest()[:16], 16) >> 1


def _drive(fn, A, B, C, FX, OUT, mi, mf, ws0, iargs, fargs, codes, nchunks):
    """States split into ``nchunks`` contiguous chunks, one per parallel iteration, each with
    its own copy of the workspace ``ws0``."""
    n = A.shape[0]
    for c in prange(nchunks):
        ws = ws0.copy()
        fn(c * n // nchunks, (c + 1) * n // nchunks, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes)


def driver():
    """The parallel driver (compiled, or loaded from the cache, on first use)."""
    global _driver
    if _driver is None:
        with _BUILD_LOCK:
            if _driver is None:
                _driver = njit(_DRIVER_SIG, parallel=True, cache=True, nogil=True)(_drive)
    return _driver


class _Worker(WrapperAddressProtocol):
    """A compiled worker as a first-class function for the driver, with the address of its
    C wrapper looked up once (a dispatcher passed as the argument is looked up again on every
    call, about 50 us)."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher  # keeps the compiled code alive
        cres = dispatcher.get_compile_result(WORKER_SIG)
        self._addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_cfunc_wrapper_name)

    def __wrapper_address__(self):
        return self._addr

    def signature(self):
        return WORKER_SIG


def worker(name: str):
    """``(dispatcher, first-class function)`` of the worker ``name`` (``"rnea"``, ``"aba"``,
    ``"crba"``, ``"placements"``, ``"frame_jacobian"``, ``"com"``, ``"contacts"``), compiled for
    :data:`WORKER_SIG`."""
    global _workers
    w = _compiled.get(name)
    if w is None:
        with _BUILD_LOCK:
            if _workers is None:
                _workers = _build(source_stamp())
            w = _compiled.get(name)
            if w is None:
                d = _workers[name]
                d.compile(WORKER_SIG)
                w = _compiled[name] = (d, _Worker(d))
    return w


def run(name, A, B, C, FX, OUT, mi, mf, ws0, iargs, fargs, nthreads):
    """Run worker ``name`` over all rows of ``A`` in ``min(nthreads, N // MIN_CHUNK)`` chunks
    (at least one); returns the per-state codes.  One chunk runs the worker directly on the
    calling thread (no parallel launch)."""
    n = A.shape[0]
    codes = np.zeros(n, dtype=np.int64)
    if n == 0:
        return codes
    disp, fn = worker(name)
    nchunks = max(1, min(nthreads, n // max(1, MIN_CHUNK)))
    with _LOCK:
        if nchunks == 1:
            disp(0, n, A, B, C, FX, OUT, mi, mf, ws0.copy(), iargs, fargs, codes)
        else:
            driver()(fn, A, B, C, FX, OUT, mi, mf, ws0, iargs, fargs, codes, nchunks)
    return codes


def _build(stamp):
    """The workers, as closures over ``stamp`` (see the module docstring).  ``stamp`` is
    non-negative: the test that mentions it never returns early."""

    @njit(cache=True, nogil=True)
    def rnea(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes):
        # iargs: [kernel flags, per-state link forces]
        if stamp < 0:
            return -1
        flags = iargs[0]
        per = iargs[1] != 0
        for i in range(lo, hi):
            codes[i] = K.rnea(A[i], B[i], C[i], FX[i if per else 0], OUT[i], mi, mf, ws, flags)
        return 0

    @njit(cache=True, nogil=True)
    def aba(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes):
        if stamp < 0:
            return -1
        flags = iargs[0]
        per = iargs[1] != 0
        for i in range(lo, hi):
            codes[i] = K.aba(A[i], B[i], C[i], FX[i if per else 0], OUT[i], mi, mf, ws, flags)
        return 0

    @njit(cache=True, nogil=True)
    def crba(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes):
        # OUT rows: M (nv x nv, zeroed by the caller: the kernel writes the ancestor entries)
        if stamp < 0:
            return -1
        nv = iargs[0]
        for i in range(lo, hi):
            codes[i] = K.crba(A[i], OUT[i].reshape((nv, nv)), mi, mf, ws)
        return 0

    @njit(cache=True, nogil=True)
    def placements(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes):
        # B[0]: the placement table pl; iargs: [rows]; OUT rows: R (rows x 3 x 3), C rows: p (rows x 3)
        if stamp < 0:
            return -1
        pl = B[0]
        nr = iargs[0]
        for i in range(lo, hi):
            codes[i] = KK.placements(A[i], OUT[i].reshape((nr, 3, 3)), C[i].reshape((nr, 3)), mi, mf, ws, pl)
        return 0

    @njit(cache=True, nogil=True)
    def frame_jacobian(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes):
        # B[0]: pl; iargs: [J rows (3 or 6), nv, placement row, reference]; fargs: the point.
        # OUT rows: J
        if stamp < 0:
            return -1
        pl = B[0]
        nr = iargs[0]
        nv = iargs[1]
        row = iargs[2]
        ref = iargs[3]
        for i in range(lo, hi):
            codes[i] = KK.frame_jacobian(A[i], row, fargs, ref, OUT[i].reshape((nr, nv)), mi, mf, ws, pl)
        return 0

    @njit(cache=True, nogil=True)
    def com(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes):
        # B: v; iargs: [flags, J columns (nv, or 0 without the Jacobian)]; OUT rows: position,
        # velocity (6); C rows: J (3 x columns)
        if stamp < 0:
            return -1
        flags = iargs[0]
        ncol = iargs[1]
        for i in range(lo, hi):
            codes[i] = KK.center_of_mass(A[i], B[i], flags, OUT[i], C[i].reshape((3, ncol)), mi, mf, ws)
        return 0

    @njit(cache=True, nogil=True)
    def contacts(lo, hi, A, B, C, FX, OUT, mi, mf, ws, iargs, fargs, codes):
        # mi: the packed contact layout ``pi`` as one row; ws: the packed scratch ``ps``;
        # iargs: [nv, rows, kernel flags, per-state link forces].
        # OUT rows: qdd (nv), multipliers (rows), residual, converged (1.0 / 0.0)
        if stamp < 0:
            return -1
        pi = mi[0]
        nv = iargs[0]
        n = iargs[1]
        flags = iargs[2]
        per = iargs[3] != 0
        x = np.empty(nv)
        mult = np.empty(n)
        for i in range(lo, hi):
            code, res, ok = CF.contact_range_space(A[i], B[i], C[i], FX[i if per else 0], pi, mf, ws, x, mult, flags)
            codes[i] = code
            out = OUT[i]
            for j in range(nv):
                out[j] = x[j]
            for j in range(n):
                out[nv + j] = mult[j]
            out[nv + n] = res
            out[nv + n + 1] = 1.0 if ok else 0.0
        return 0

    return {"rnea": rnea, "aba": aba, "crba": crba, "placements": placements,
            "frame_jacobian": frame_jacobian, "com": com, "contacts": contacts}
