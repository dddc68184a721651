"""Build step of sinews: the wheel ships the compiled kernels.

Everything about the package is declared in ``pyproject.toml``; this file only adds one step to
``build_py``.  After the sources are copied to the build directory, a child process imports sinews
from there and runs ``sinews.warmup(simulation=True, constraints=True, batch=True)``, which
compiles the core kernels, those of the simulation steppers and contact solvers, of the compiled
constrained dynamics and of the batch algorithms into ``sinews/**/__pycache__`` (Numba's cache next to each kernel
module).  Those ``.nbi``/``.nbc`` files go into the wheel, so the first call after ``pip install .``
loads machine code instead of compiling it.  See ``docs/cold-start.md``.

* ``SINEWS_KERNEL_CACHE=core`` at build time compiles the core kernels only, ``none`` (or ``0``,
  ``no``, ``off``, ``false``) skips the step; unset or empty means ``all``, and any other value
  stops the build with an error.  Editable
  installs (``pip install -e .``) skip it.
* A failure of the step never fails the build: the package works without a shipped cache and
  compiles on first use instead.
* The cache is valid only for the Numba version, Python version and CPU model that built it,
  which are those of the build environment (with pip's build isolation, the newest Numba and
  NumPy that pyproject.toml allows, on the machine that runs ``pip install .``); anywhere else
  Numba compiles as usual (``sinews/_kernel_cache.json`` records what it was built for).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

_SKIP = {"0", "no", "none", "off", "false"}

_CHILD = """
import json, sys, time
import sinews
from pathlib import Path
if Path(sinews.__file__).resolve().parent != Path(sys.argv[1]).resolve():
    raise SystemExit(f"imported sinews from {sinews.__file__}, not from the build directory")
t = time.perf_counter()
full = sys.argv[2] == "all"
sinews.warmup(simulation=full, constraints=full, batch=full)
import numba, numpy, platform
from llvmlite import binding
Path(sys.argv[3]).write_text(json.dumps({
    "kernels": sys.argv[2], "numba": numba.__version__, "numpy": numpy.__version__,
    "python": platform.python_version(), "machine": platform.machine(), "cpu": binding.get_host_cpu_name(),
    "seconds": round(time.perf_counter() - t, 1),
}, indent=1) + "\\n", encoding="utf-8")
"""


def _remove_cache(package: Path) -> None:
    """The cache files and record an earlier build left in the build directory."""
    for stale in [*package.rglob("*.nbi"), *package.rglob("*.nbc"), package / "_kernel_cache.json"]:
        stale.unlink(missing_ok=True)


def _prebuild_kernel_cache(build_lib: Path, which: str, log) -> None:
    package = build_lib / "sinews"
    record = package / "_kernel_cache.json"
    # no NUMBA_* setting of this shell reaches the kernels that every user will load (the cache
    # goes next to the kernel modules, not to NUMBA_CACHE_DIR; NUMBA_OPT, NUMBA_CPU_NAME,
    # NUMBA_DISABLE_JIT, ... would change or disable the code without being part of its key)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(build_lib), os.environ.get("PYTHONPATH")) if p)
    log(f"sinews: compiling the kernel cache ({which}) into {package}; about 1.5 minutes on 2 cores")
    t = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(package), which, str(record)],
            env=env, cwd=str(build_lib), capture_output=True, text=True, timeout=3600,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log(f"sinews: kernel cache not built ({exc}); the kernels compile on first use")
        return
    if proc.returncode != 0 or not record.is_file():
        record.unlink(missing_ok=True)
        log(f"sinews: kernel cache not built; the kernels compile on first use:\n{proc.stderr[-2000:]}")
        return
    log(f"sinews: kernel cache built in {time.perf_counter() - t:.0f} s: {record.read_text(encoding='utf-8')}")


class build_py_with_kernel_cache(build_py):
    """``build_py``, then the kernel cache compiled into the build directory."""

    def run(self):
        super().run()
        which = os.environ.get("SINEWS_KERNEL_CACHE", "").strip().lower() or "all"
        if getattr(self, "editable_mode", False) or getattr(self, "dry_run", False):
            return
        if which not in ("all", "core") and which not in _SKIP:
            raise ValueError(f"SINEWS_KERNEL_CACHE: expected all, core or none, got {which!r}")
        build_lib = Path(self.build_lib).resolve()
        _remove_cache(build_lib / "sinews")  # also when skipped: the wheel holds what was asked
        if which not in _SKIP:
            _prebuild_kernel_cache(build_lib, which, lambda msg: print(msg, file=sys.stderr))


setup(cmdclass={"build_py": build_py_with_kernel_cache})
