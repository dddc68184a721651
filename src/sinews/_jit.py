"""``njit`` for sinews' kernels: Numba's decorator with an on-disk cache that knows the package.

Numba's own cache (``cache=True``) keys each compiled function on the content of the file that
defines it.  A kernel that calls (or inlines) a kernel from another module, or freezes a constant
imported from another module (the layout constants of ``_layout.py``), is compiled with that
other module's code baked in, yet its cache entry stays "fresh" when only the other module
changes.  After an upgrade over an old install (``pip install`` leaves the ``.nbi``/``.nbc`` files
of ``__pycache__`` in place) such a kernel would load stale machine code and return wrong numbers
with no error.

This module's ``njit`` is ``numba.njit`` with one change when ``cache=True``: the freshness stamp
of a function's cache entry is a SHA-256 digest of its module's source *and of every sinews
module that module imports, transitively* (found by reading the ``import`` statements, relative
and absolute, at module level or inside functions).  Changing any file a kernel can depend on
makes its cache entry stale, and Numba recompiles it.  Where the cache lives is unchanged
(``__pycache__`` next to the source, or ``NUMBA_CACHE_DIR``); see docs/cold-start.md.  When
that ``__pycache__`` is read-only and Numba falls back to its per-user cache, the entries shipped
in it (the wheel's pre-built cache, ``setup.py``) are copied there first (also over stale ones).

The closure digests are computed once per process per file (a few milliseconds for the whole
package) when a kernel module is imported; compilation stays lazy.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import inspect
import os
import pickle
import re
import shutil
import uuid
from pathlib import Path

import numba
import numpy as np
from numba.core.caching import CompileResultCacheImpl, FunctionCache

__all__ = ["njit", "cfunc", "source_closure", "closure_digest"]

PACKAGE_ROOT = Path(__file__).resolve().parent
_NUMPY_VERSION = "numpy-" + ".".join(np.__version__.split(".")[:2])

# "from .a.b import x, y" / "from sinews.a import (x,\n y)" / "import sinews.a.b"
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.+|sinews\b\.?)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(sinews(?:\.[\w]+)*)", re.M)


def _module_file(directory: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` under ``directory`` (a package's ``__init__.py`` for a
    package), or None when it is not a sinews source file."""
    base = directory.joinpath(*dotted.split(".")) if dotted else directory
    for candidate in (base.with_suffix(".py") if dotted else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def _imports_of(path: Path, root: Path) -> tuple[Path, ...]:
    """The sinews source files that ``path`` imports (directly); read once per process and
    version of the file (closures of different modules share most of their files)."""
    st = path.stat()
    return _imports_cached(path, root, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=None)
def _imports_cached(path: Path, root: Path, mtime_ns: int, size: int) -> tuple[Path, ...]:
    text = path.read_text(encoding="utf-8")
    found: list[Path] = []
    for dots, module, names in _FROM.findall(text):
        if dots.startswith("sinews"):
            directory = root
        else:
            directory = path.parent
            for _ in range(len(dots) - 1):
                directory = directory.parent
        package = directory.joinpath(*module.split(".")) if module else directory
        submodules = []  # "from . import _fast, _ta_rows": names that are modules themselves
        for name in re.findall(r"\w+", names):  # aliases and other words match no file
            if (package / f"{name}.py").is_file():
                submodules.append(package / f"{name}.py")
            elif (package / name / "__init__.py").is_file():
                submodules.append(package / name / "__init__.py")
        found += submodules
        if not (submodules and (package / "__init__.py").is_file()):  # names defined in the module
            target = _module_file(directory, module)
            if target is not None:
                found.append(target)
    for dotted in _IMPORT.findall(text):
        target = _module_file(root, dotted.partition(".")[2])
        if target is not None:
            found.append(target)
    return tuple(r for r in (f.resolve() for f in found) if r.is_relative_to(root))


def source_closure(path: str | Path, root: str | Path = PACKAGE_ROOT) -> list[Path]:
    """``path`` and every source file under ``root`` it imports, transitively (sorted)."""
    root = Path(root).resolve()
    start = Path(path).resolve()
    seen = {start}
    todo = [start]
    while todo:
        for dep in _imports_of(todo.pop(), root):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted(seen)


@functools.lru_cache(maxsize=None)
def _file_digest(path: Path, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


def closure_digest(path: str | Path, root: str | Path = PACKAGE_ROOT) -> str:
    """SHA-256 over the contents (and package-relative names) of ``source_closure(path)``."""
    root = Path(root).resolve()
    h = hashlib.sha256()
    for f in source_closure(path, root):
        st = f.stat()
        h.update(f.relative_to(root).as_posix().encode())
        h.update(_file_digest(f, st.st_mtime_ns, st.st_size))
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _closure_digest_cached(path: str, stamp: tuple) -> str:
    return closure_digest(path)


class _ClosureStampLocator:
    """Numba's locator for the function, with the freshness stamp replaced by the closure digest."""

    def __init__(self, inner, py_file: str):
        self._inner = inner
        self._py_file = py_file

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def get_source_stamp(self):
        path = Path(self._py_file)
        if not path.is_file() or not path.resolve().is_relative_to(PACKAGE_ROOT):
            return self._inner.get_source_stamp()
        # keyed on the package's own mtimes of this file so an edit during a session is seen
        st = path.stat()
        # NumPy's version too: Numba's typing of array code depends on it, and its own key
        # holds only Numba's version (an upgrade of NumPy under an old cache compiles again)
        return ("sinews-closure-1", _closure_digest_cached(str(path.resolve()), (st.st_mtime_ns, st.st_size)),
                _NUMPY_VERSION)


def _index_header(path: Path):
    """``(Numba version, freshness stamp)`` of a cache index file, or None when unreadable (the
    format of Numba's ``IndexDataCacheFile``: the pickled version, then the pickled
    ``(stamp, overloads)``)."""
    try:
        with open(path, "rb") as f:
            version = pickle.load(f)
            stamp, _ = pickle.loads(f.read())
        return version, stamp
    except Exception:
        return None


def _seed_from_shipped(py_file: str, filename_base: str, locator) -> None:
    """Copy a function's cache entries shipped in the package's ``__pycache__`` (the wheel's
    pre-built cache, setup.py) to ``locator``'s directory, when Numba chose the per-user cache
    because that ``__pycache__`` is read-only (a system-wide install) and the per-user cache has
    no entry yet, or only a stale one (another version of the sources, after an upgrade in
    place).  The entries are checked as usual when loaded (closure digest, signature, CPU, Numba
    version); anything that does not match is compiled again."""
    if type(locator).__name__.lstrip("_") != "UserWideCacheLocator":
        return
    shipped = Path(py_file).parent / "__pycache__"
    index = shipped / f"{filename_base}.nbi"
    try:
        target = Path(locator.get_cache_path())
        if not index.is_file():
            return
        seeded = target / index.name
        if seeded.exists():
            # a copy of the shipped index (the usual case, a plain read) or an index of these
            # sources with more entries (its header, unpickled, has the shipped stamp) is kept
            if seeded.read_bytes() == index.read_bytes():
                return
            ours = _index_header(index)
            if ours is None or ours[0] != numba.__version__ or _index_header(seeded) == ours:
                return  # nothing better to offer, or the per-user entry is of these sources
        # the code files first, the index last, each written under a temporary name and renamed
        # into place (as Numba writes its own): a process that finds the index finds its code,
        # and no process reads a half-written file (several processes may start at once)
        for path in [*sorted(shipped.glob(glob.escape(filename_base) + ".*.nbc")), index]:
            tmp = target / f"{path.name}.tmp.{uuid.uuid4().hex[:16]}"
            try:
                shutil.copyfile(path, tmp)
                os.replace(tmp, target / path.name)
            finally:
                tmp.unlink(missing_ok=True)
    except OSError:
        pass  # the cache is an optimisation: compile instead


class _PackageCacheImpl(CompileResultCacheImpl):
    def __init__(self, py_func):
        super().__init__(py_func)
        py_file = inspect.getfile(py_func)
        _seed_from_shipped(py_file, self._filename_base, self._locator)
        self._locator = _ClosureStampLocator(self._locator, py_file)


class _PackageFunctionCache(FunctionCache):
    _impl_class = _PackageCacheImpl


def njit(*args, cache: bool = False, **options):
    """``numba.njit``; with ``cache=True`` the cache entry is stale when any sinews module the
    function's module imports (transitively) changes, not only its own file.  Used as
    ``@njit(...)`` or ``njit(signature, ...)(function)`` (eager compilation of ``signature``)."""
    if args and callable(args[0]) and not isinstance(args[0], (str, numba.core.typing.Signature)):
        return njit(cache=cache, **options)(args[0])
    sigs = args[0] if args else None
    if not cache:
        return numba.njit(*args, **options)

    def decorate(function):
        dispatcher = numba.njit(**options)(function)
        if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: the plain Python function
            return dispatcher
        dispatcher._cache = _PackageFunctionCache(dispatcher.py_func)
        if sigs is not None:
            for sig in sigs if isinstance(sigs, list) else [sigs]:
                dispatcher.compile(sig)
            dispatcher.disable_compile()
        return dispatcher

    return decorate


def cfunc(signature, cache: bool = False):
    """``numba.cfunc`` with :func:`njit`'s cache (stale when any sinews module the function's
    module imports changes).  Compiles (or loads from the cache) when applied: call it where
    the C function is first needed, never at import."""

    def decorate(function):
        from numba.core import sigutils
        from numba.core.ccallback import CFunc

        args, restype = sigutils.normalize_signature(signature)
        res = CFunc(function, (args, restype), locals={}, options={})
        if cache:
            res._cache = _PackageFunctionCache(function)
        res.compile()
        return res

    return decorate
