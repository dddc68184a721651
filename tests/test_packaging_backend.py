"""The build backend (tools/build_backend.py): setuptools', asking for NumPy, SciPy and Numba only
to build a wheel with its kernel cache, with the run-time specifiers of pyproject.toml; an sdist
or an editable install needs setuptools alone (no Numba installed for a build that compiles
nothing)."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("setuptools", minversion="77")


def _backend():
    spec = importlib.util.spec_from_file_location("sinews_build_backend", ROOT / "tools" / "build_backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pyproject_names_the_backend_and_the_sdist_ships_it():
    build = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    assert build["build-backend"] == "build_backend" and build["backend-path"] == ["tools"]
    assert not any(r.split(">")[0] in ("numpy", "scipy", "numba") for r in build["requires"])
    assert "include tools/build_backend.py" in (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("setting, wanted", [("", True), ("all", True), ("core", True), ("none", False), ("0", False)])
def test_only_a_wheel_with_a_kernel_cache_asks_for_the_kernels_build_needs(monkeypatch, setting, wanted):
    backend = _backend()
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SINEWS_KERNEL_CACHE", setting)
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    kernels = [d for d in dependencies if d.split(">")[0] in ("numpy", "scipy", "numba")]
    assert len(kernels) == 3
    wheel = backend.get_requires_for_build_wheel()
    assert all((k in wheel) == wanted for k in kernels)
    for hook in (backend.get_requires_for_build_sdist, backend.get_requires_for_build_editable):
        assert not set(hook()) & set(kernels)
    assert backend.build_wheel is not None and backend.build_editable is not None and backend.build_sdist is not None
