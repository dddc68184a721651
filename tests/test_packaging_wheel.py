"""The wheel holds every file sinews needs: built from a copy of the sources, installed in a
fresh virtual environment, it runs ``sinews demo pendulum --quick`` and ``python -m sinews.bench contact
--quick`` away from the checkout.

The venv reuses the machine's NumPy, Numba, SciPy, h5py, Pinocchio (``--system-site-packages``);
sinews itself must come from the wheel (checked: ``sinews.__file__`` lies in the venv).  The
wheel is built with ``pip wheel --no-build-isolation`` (setuptools >= 77 from the ``test``
extra), so no network is needed.

The build compiles the kernel cache that the wheel ships (``setup.py``): a fresh process of the
installed wheel loads every kernel of ``sinews.warmup(simulation=True, constraints=True,
batch=True)`` and compiles none
(Numba's own cache log, ``NUMBA_DEBUG_CACHE``, says so), also when the install's ``__pycache__`` is
read-only and Numba falls back to the per-user cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "tools/build_backend.py", "README.md", "LICENSE", "src")
NOT_SHIPPED = ("__pycache__", "*.pyc", "*.nbi", "*.nbc", "*.egg-info")

pytestmark = pytest.mark.slow


def _run(cmd, **kw):
    env = dict(os.environ, MPLBACKEND="Agg", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1")
    for name in ("PYTHONPATH", "SINEWS_SICONOS_DIR", "NUMBA_CACHE_DIR", "SINEWS_KERNEL_CACHE"):
        env.pop(name, None)
    env.update(kw.pop("env", {}))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kw)
    assert proc.returncode == 0, f"{cmd}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("setuptools", minversion="77")
    work = tmp_path_factory.mktemp("wheel")
    src = work / "sinews-src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns(*NOT_SHIPPED))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name)
    out = work / "dist"
    _run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
          "--wheel-dir", str(out), "-q"], cwd=work)
    (whl,) = out.glob("sinews-*.whl")
    return whl


def test_wheel_ships_the_kernel_cache(wheel):
    """The build step of setup.py compiled the core, simulation and constrained-dynamics kernels
    into the wheel, for
    this Numba and Python, and recorded what it built them for."""
    import numba

    z = zipfile.ZipFile(wheel)
    record = json.loads(z.read("sinews/_kernel_cache.json"))
    assert record["kernels"] == "all" and record["numba"] == numba.__version__
    import numpy
    import platform

    assert record["python"] == platform.python_version() and record["numpy"] == numpy.__version__
    names = z.namelist()
    tag = f".py{sys.version_info[0]}{sys.version_info[1]}"
    for stem in ("sinews/__pycache__/_aba_kernels.aba-", "sinews/__pycache__/_joint_pass.joint_pass-",
                 "sinews/__pycache__/_native_entry.aba_n-", "sinews/__pycache__/_minv_kernels.minverse_core-",
                 "sinews/sim/__pycache__/_step_kernels.coulomb_step-", "sinews/contact/__pycache__/_fc3d_pgs.pgs_kernel-",
                 "sinews/constraints/__pycache__/_fast_range_space.contact_range_space-",
                 "sinews/constraints/__pycache__/_mixed_kernels.mixed_range_space-"):
        assert any(n.startswith(stem) and n.endswith(tag + ".nbi") for n in names), stem
        assert any(n.startswith(stem) and n.endswith(".nbc") for n in names), stem
    assert not any(n.endswith(".pyc") for n in names)


def _shipped_sources() -> set[str]:
    """Every file under src/sinews that an installed sinews may open (code and data)."""
    files = set()
    for path in (ROOT / "src" / "sinews").rglob("*"):
        rel = path.relative_to(ROOT / "src")
        if path.is_dir() or any(part in ("__pycache__",) or part.endswith(".egg-info") for part in rel.parts):
            continue
        if path.suffix in (".pyc", ".nbi", ".nbc"):
            continue
        files.add(rel.as_posix())
    return files


def test_wheel_holds_every_source_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_shipped_sources() - names)
    assert not missing, f"files under src/sinews missing from the wheel (declare them as package data): {missing}"
    assert "sinews/py.typed" in names
    assert any(n.startswith("sinews/data/siconos/fclib/") for n in names)


def test_wheel_metadata(wheel):
    z = zipfile.ZipFile(wheel)
    meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: BSD-3-Clause AND Apache-2.0 AND MIT" in meta
    assert "Classifier: License ::" not in meta
    licences = [n for n in z.namelist() if "/licenses/" in n]
    assert any(n.endswith("/LICENSE") for n in licences)
    assert any(n.endswith("LICENSE-Apache-2.0.txt") for n in licences)
    assert any(n.endswith("LICENSE-three.txt") for n in licences)  # the vendored three.js (MIT)


def _install(wheel, tmp_path_factory) -> Path:
    env_dir = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)])
    py = env_dir / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q", str(wheel)])
    return env_dir


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    return _install(wheel, tmp_path_factory)


@pytest.fixture
def fresh_venv(wheel, tmp_path_factory) -> Path:
    """A new install of the wheel for each test: nothing has compiled into its cache yet (the
    demo test compiles kernels outside the pre-built set into ``venv``)."""
    return _install(wheel, tmp_path_factory)


def test_wheel_runs_the_demo_and_the_contact_bench_away_from_the_checkout(venv, tmp_path):
    py, script = venv / "bin" / "python", venv / "bin" / "sinews"
    where = _run([str(py), "-c", "import sinews, sinews.data, json; print(json.dumps("
                  "[sinews.__file__, sinews.__version__, str(sinews.data.siconos_dir())]))"], cwd=tmp_path)
    file, version, siconos = json.loads(where.stdout)
    assert Path(file).is_relative_to(venv), f"sinews imported from {file}, not from the wheel"
    assert Path(siconos).is_relative_to(venv)
    from importlib.metadata import version as installed_version

    assert version == installed_version("sinews")

    out = tmp_path / "demo"
    demo = _run([str(script), "demo", "pendulum", "--quick", "--out", str(out)], cwd=tmp_path)
    assert "energy_drift_rel" in demo.stdout
    summary = json.loads((out / "pendulum_summary.json").read_text())
    assert summary["steps"] == 1000 and summary["units"]["energy_drift_abs_J"] == "J"
    assert (out / "pendulum_trajectory.npz").stat().st_size > 0

    # PGS only: the venv compiles its kernels from scratch (the other solvers are the same data path)
    bench = _run([str(py), "-m", "sinews.bench", "contact", "--quick", "--solvers", "pgs", "--no-plot",
                  "--json", str(tmp_path / "contact.json")], cwd=tmp_path)
    assert "no problems matched" not in bench.stdout + bench.stderr
    rows = json.loads((tmp_path / "contact.json").read_text())["rows"]
    assert rows and all(r["problem"] == "Rover4396" and r["contacts"] == 2 for r in rows)
    pgs = [r for r in rows if r["solver"] == "pgs"]
    assert pgs and all(r["sinews_error"] is not None and r["sinews_error"] <= 1e-6 for r in pgs)
    assert all(r["sinews_iterations"] > 0 and r["sinews_us"] > 0 for r in pgs)


_FIRST_CALLS = """
import numpy as np, sinews
from sinews.sample_models import arm7
m = arm7(); q = np.zeros(m.nq)
from sinews.constraints import ConstraintSet, forward_dynamics_constraints
cs = ConstraintSet()
cs.add_contact_constraint(m.nbodies - 1, [0.0, 0.0, 0.1], [0.0, 0.0, 1.0])
for _ in range(2):  # the checked path, then the native fast path
    sinews.aba(m, q, q, q); sinews.rnea(m, q, q, q); sinews.crba(m, q); sinews.minverse(m, q)
    sinews.forward_kinematics(m, q)
    for method in ("direct", "range_space_sparse", "null_space"):
        forward_dynamics_constraints(m, q, q, q, cs, method=method)
"""


def _cache_log(proc) -> tuple[list[str], list[str]]:
    """Numba's ``NUMBA_DEBUG_CACHE`` lines: (what was loaded, what was compiled and saved)."""
    lines = (proc.stdout + proc.stderr).splitlines()
    return ([l for l in lines if re.match(r"\[cache\] data loaded", l)],
            [l for l in lines if re.match(r"\[cache\] (data|index) saved", l)])


def test_installed_wheel_loads_its_kernels_and_compiles_none(fresh_venv, tmp_path):
    py = fresh_venv / "bin" / "python"
    proc = _run([str(py), "-c", "import sinews; sinews.warmup(simulation=True, constraints=True, batch=True)\n" + _FIRST_CALLS],
                cwd=tmp_path, env={"NUMBA_DEBUG_CACHE": "1"})
    loaded, saved = _cache_log(proc)
    assert not saved, f"the installed wheel compiled kernels its cache should hold: {saved[:5]}"
    assert any("_aba_kernels.aba-" in l for l in loaded) and any("_step_kernels.coulomb_step-" in l for l in loaded)


def test_read_only_install_seeds_the_user_cache_from_the_shipped_one(fresh_venv, tmp_path):
    """Numba writes to a per-user cache when the install's ``__pycache__`` is not writable; the
    shipped entries are copied there (``sinews._jit._seed_from_shipped``) and loaded, not
    compiled again.  (Tests run as root, which may write anywhere: the read-only directory is
    simulated by making Numba's writability probe of ``__pycache__`` fail.)"""
    py = fresh_venv / "bin" / "python"
    refuse = (
        "import numba.core.caching as c\n"
        "cls = getattr(c, 'InTreeCacheLocator', None) or c._InTreeCacheLocator\n"
        "def refuse(self): raise OSError('read-only __pycache__ (test)')\n"
        "cls.ensure_cache_path = refuse\n"
    )
    # Numba's per-user cache directory (appdirs: $XDG_CACHE_HOME/numba on Linux,
    # ~/Library/Caches/numba on macOS), moved under tmp_path on either and asked of Numba itself
    env = {"NUMBA_DEBUG_CACHE": "1", "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    ask = "from numba.misc.appdirs import AppDirs; print(AppDirs(appname='numba', appauthor=False).user_cache_dir)"
    user_cache = Path(_run([str(py), "-c", ask], cwd=tmp_path, env=env).stdout.strip())
    assert tmp_path in user_cache.parents
    proc = _run([str(py), "-c", refuse + _FIRST_CALLS], cwd=tmp_path, env=env)
    loaded, saved = _cache_log(proc)
    assert not saved, f"compiled instead of loading the shipped entries: {saved[:5]}"
    assert loaded and all(str(user_cache) in l for l in loaded)
    indexes = sorted(user_cache.rglob("*.nbi"))
    assert any(p.name.startswith("_aba_kernels.aba-") for p in indexes)
    # an upgrade in place: the per-user entries are now another version's (a stale stamp); the
    # shipped ones replace them instead of being compiled again
    _run([str(py), "-c", "import pickle, sys\n"
          "for path in sys.argv[1:]:\n"
          "    with open(path, 'rb') as f:\n"
          "        version = pickle.load(f); stamp, overloads = pickle.loads(f.read())\n"
          "    with open(path, 'wb') as f:\n"
          "        pickle.dump(version, f, protocol=-1); f.write(pickle.dumps(('older sources', overloads), -1))\n",
          *map(str, indexes)])
    proc = _run([str(py), "-c", refuse + _FIRST_CALLS], cwd=tmp_path, env=env)
    loaded, saved = _cache_log(proc)
    assert not saved, f"compiled instead of replacing stale entries by the shipped ones: {saved[:5]}"
    assert any("_aba_kernels.aba-" in l for l in loaded)
