"""Every public module of the package is annotated and documents its state-array shapes.

``test_packaging_api.py`` holds the checks (every parameter and the return annotated; ``q``
``(nq,)``, ``v``/``tau``/``a``/``qdd`` ``(nv,)`` stated on the function, its class, its module or
the package); it applies them to a fixed list of core modules.  This file applies the same checks
to *every* public module, found by walking the package (a module is public when no part of its
dotted name starts with ``_``), so a new module is checked without being listed anywhere.

Left out, on purpose:

* ``sinews.bench.*``: the benchmark harness behind ``python -m sinews.bench``, a command-line
  tool whose functions are not a library API (documented in docs/performance.md, not on the site's
  API pages as callables to import).

Known gaps (``KNOWN_GAPS`` for annotations, ``KNOWN_SHAPE_GAPS`` for shapes) are marked ``xfail(strict=True)``: the check runs, must still find a
gap there, and fails as soon as the module is complete, so the list only shrinks.
"""

from __future__ import annotations

import os
import pkgutil
import sys

import pytest

import sinews

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_packaging_api as P  # noqa: E402

EXCLUDED_PREFIXES = ("sinews.bench",)

#: module -> why it is not complete yet (annotations, shapes or both); empty: every public module
#: is complete (the sim/, geometry/, quadruped and lcp.result gaps were filled after the review)
KNOWN_GAPS: dict[str, str] = {}

#: modules whose docstrings do not yet give every q (nq,) / v (nv,) / tau (nv,) shape
KNOWN_SHAPE_GAPS: dict[str, str] = {}


def _public_modules() -> list[str]:
    out = []
    for info in pkgutil.walk_packages(sinews.__path__, "sinews."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or info.name.startswith(EXCLUDED_PREFIXES):
            continue
        out.append(info.name)
    return sorted(out)


MODULES = _public_modules()


def _params(known):
    return [pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=known[m])) if m in known else m
            for m in MODULES]


def test_the_walk_finds_the_public_modules():
    """Not vacuous: the walk reaches subpackages and leaves private modules out."""
    for name in ("sinews.model", "sinews.urdf", "sinews.models", "sinews.mujoco_import",
                 "sinews.constraints.system", "sinews.loops.loop_joint", "sinews.demos.pendulum",
                 "sinews.cli", "sinews.sim.scene", "sinews.geometry.shapes", "sinews.viewer.html"):
        assert name in MODULES, name
    assert not [m for m in MODULES if "._" in m or m.startswith("sinews.bench")]
    assert len(MODULES) >= 60
    assert set(KNOWN_GAPS) <= set(MODULES) and set(KNOWN_SHAPE_GAPS) <= set(MODULES)


@pytest.mark.parametrize("module_name", _params(KNOWN_GAPS))
def test_every_public_module_is_fully_annotated(module_name):
    P.test_public_functions_are_fully_annotated(module_name)


@pytest.mark.parametrize("module_name", _params(KNOWN_SHAPE_GAPS))
def test_every_public_module_gives_the_state_array_shapes(module_name):
    P.test_docstrings_give_the_state_array_shapes(module_name)


def test_the_check_catches_a_missing_annotation(monkeypatch):
    """The harness fails on an unannotated public function (it can fail)."""
    import types

    mod = types.ModuleType("sinews._probe_module")
    exec("def f(model, q):\n    '''q (nq,)'''\n    return q\n", mod.__dict__)
    mod.f.__module__ = "sinews._probe_module"
    mod.__all__ = ["f"]
    monkeypatch.setitem(sys.modules, "sinews._probe_module", mod)
    with pytest.raises(AssertionError, match="f: \\['model', 'q', 'return'\\]"):
        P.test_public_functions_are_fully_annotated("sinews._probe_module")
    exec("def g(model: object, q: object, v: object) -> None:\n    '''q (nq,)'''\n", mod.__dict__)
    mod.g.__module__ = "sinews._probe_module"
    mod.__all__ = ["g"]
    with pytest.raises(AssertionError, match=r"g: v \(nv,\)"):
        P.test_docstrings_give_the_state_array_shapes("sinews._probe_module")
