"""The kernels' on-disk cache is stale when any module a kernel depends on changes.

Numba keys a cached function on its own file only: a kernel that calls a kernel of another module
keeps the old callee's machine code after that module changes (an upgrade with ``pip install``
over an old install leaves ``__pycache__`` in place, and CI machines keep their site-packages).
``sinews._jit.njit`` stamps each cache entry with a digest of the module's import closure.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import sinews
from sinews import _jit

SRC = Path(sinews.__file__).resolve().parent


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def _package(tmp_path: Path, jit_import: str) -> Path:
    """A package ``tpkg``: ``a.f`` calls ``b.g`` (another module) and freezes ``c.K``."""
    pkg = tmp_path / "tpkg"
    (pkg / "_jit.py").parent.mkdir(parents=True)
    (pkg / "_jit.py").write_text((SRC / "_jit.py").read_text())
    _write(pkg / "__init__.py", "")
    _write(pkg / "a.py", f"""\
        {jit_import}
        from .b import g
        from .sub import c


        @njit(cache=True)
        def f(x):
            return g(x) + c.K
        """)
    _write(pkg / "b.py", """\
        from ._jit import njit


        @njit(cache=True)
        def g(x):
            return x + 1
        """)
    _write(pkg / "sub" / "__init__.py", "")
    _write(pkg / "sub" / "c.py", "K = 100\n")
    _write(pkg / "unrelated.py", "Z = 0\n")
    return pkg


def _f_of_1(tmp_path: Path) -> tuple[int, bool]:
    """``a.f(1)`` in a fresh process, and how many of its signatures came from the cache."""
    code = "import tpkg.a as a; r = a.f(1); print(r, sum(a.f.stats.cache_hits.values()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1]) > 0


def test_closure_follows_relative_imports_and_submodules_but_not_unrelated_files(tmp_path):
    pkg = _package(tmp_path, "from ._jit import njit")
    names = {p.relative_to(pkg).as_posix() for p in _jit.source_closure(pkg / "a.py", pkg)}
    assert names == {"a.py", "b.py", "_jit.py", "sub/c.py"}
    before = _jit.closure_digest(pkg / "a.py", pkg)
    (pkg / "unrelated.py").write_text("Z = 1\n")
    assert _jit.closure_digest(pkg / "a.py", pkg) == before
    (pkg / "sub" / "c.py").write_text("K = 200\n")
    assert _jit.closure_digest(pkg / "a.py", pkg) != before


def test_editing_a_callee_module_recompiles_the_caller(tmp_path):
    pkg = _package(tmp_path, "from ._jit import njit")
    assert _f_of_1(tmp_path) == (102, False)  # compiled and cached
    assert _f_of_1(tmp_path) == (102, True)  # loaded from the cache
    (pkg / "b.py").write_text((pkg / "b.py").read_text().replace("x + 1", "x + 5"))
    assert _f_of_1(tmp_path)[0] == 106  # b changed: a's entry is stale, a is recompiled
    (pkg / "sub" / "c.py").write_text("K = 300\n")
    assert _f_of_1(tmp_path)[0] == 306  # a frozen global constant of another module changed


def test_plain_numba_cache_would_serve_the_stale_callee(tmp_path):
    """The failure the stamp prevents, shown with Numba's own decorator on the caller."""
    pkg = _package(tmp_path, "from numba import njit")
    assert _f_of_1(tmp_path) == (102, False)
    (pkg / "b.py").write_text((pkg / "b.py").read_text().replace("x + 1", "x + 5"))
    assert _f_of_1(tmp_path) == (102, True)  # stale: still b's old code


def test_every_sinews_kernel_module_uses_the_package_decorator():
    offenders = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
                 if "cache=True" in p.read_text() and "from numba import njit" in p.read_text()]
    assert offenders == []


@pytest.mark.parametrize("module", ["sinews._aba_kernels", "sinews.constraints._fast", "sinews.sim._step_kernels"])
def test_cached_kernels_carry_the_closure_stamp(module):
    import importlib

    mod = importlib.import_module(module)
    kernels = [v for v in vars(mod).values() if isinstance(v, numba.core.registry.CPUDispatcher)
               and v.__module__ == module and v._cache.__class__.__name__ != "NullCache"]
    assert kernels
    for k in kernels:
        stamp = k._cache._impl.locator.get_source_stamp()
        assert stamp[0] == "sinews-closure-1", k
        assert stamp[1] == _jit.closure_digest(Path(mod.__file__))


def test_numba_disable_jit_still_runs_the_algorithms_in_python():
    """``NUMBA_DISABLE_JIT=1`` (Numba's debugging mode: kernels run as Python) imports the kernel
    modules and runs the algorithms (slowly) with the same results."""
    code = textwrap.dedent("""
        import json
        import numpy as np
        import sinews
        from sinews.sample_models import random_tree

        m = random_tree(4, 2, joint_types=["RX", "Spherical", "Prismatic"])
        rng = np.random.default_rng(0)
        q = sinews.random_configuration(m, rng)
        v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
        print(json.dumps([sinews.rnea(m, q, v, a).tolist(), sinews.aba(m, q, v, a).tolist()]))
    """)
    import json
    import os

    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    tau, qdd = (np.array(x) for x in json.loads(out.stdout.strip().splitlines()[-1]))
    from sinews.sample_models import random_tree

    m = random_tree(4, 2, joint_types=["RX", "Spherical", "Prismatic"])
    rng = np.random.default_rng(0)
    q = sinews.random_configuration(m, rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    np.testing.assert_allclose(tau, sinews.rnea(m, q, v, a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qdd, sinews.aba(m, q, v, a), rtol=1e-12, atol=1e-12)
