"""A public function named like its submodule stays the function after the submodule is imported.

``sinews.simulate`` (function in ``sinews/simulate.py``) and ``sinews.sim.simulate`` (function in
``sinews/sim/simulate.py``) share their names with modules.  The import system binds a submodule
to its package's attribute when the submodule is imported (``import sinews.sim.simulate``, or any
``from sinews.sim.simulate import ...``), so without care ``from sinews.sim import simulate``
returns the module afterwards, and the demos fail with "'module' object is not callable" in any
process that imported the submodule before (the docs tests do).  Each check runs in a fresh
interpreter that imports every submodule first.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import sinews


def _clashes() -> list[tuple[str, str]]:
    """``(package, name)`` for every public name of a package that is also one of its submodules
    defining that name."""
    out = []
    packages = ["sinews"] + [m.name for m in pkgutil.walk_packages(sinews.__path__, "sinews.") if m.ispkg
                             and not any(p.startswith("_") for p in m.name.split(".")[1:])]
    for pkg_name in packages:
        if pkg_name.startswith("sinews.bench"):
            continue
        pkg = importlib.import_module(pkg_name)
        subs = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
        for name in getattr(pkg, "__all__", ()):
            # a clash: the submodule defines a public name of its own name (sinews/aba.py: aba)
            # (read from the source: importing the submodule here would bind it in this process)
            source = Path(pkg.__path__[0]) / f"{name}.py"
            if name in subs and source.is_file() and re.search(rf"^(def|class) {name}\b", source.read_text(), re.M):
                out.append((pkg_name, name))
    return out


CLASHES = _clashes()

PROBE = """
import importlib, json, sys, types
pairs = json.loads(sys.argv[1])
for pkg, name in pairs:
    importlib.import_module(f"{pkg}.{name}")  # binds the submodule to the package attribute
bad = []
for pkg, name in pairs:
    value = getattr(importlib.import_module(pkg), name)
    ns = {}
    exec(f"from {pkg} import {name} as x", ns)
    if isinstance(value, types.ModuleType) or isinstance(ns["x"], types.ModuleType):
        bad.append(f"{pkg}.{name}")
print(json.dumps(bad))
"""


def test_the_clash_list_is_not_empty():
    assert ("sinews", "simulate") in CLASHES and ("sinews", "aba") in CLASHES
    assert ("sinews.sim", "simulate") in CLASHES


def _probe(pairs):
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(pairs)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_top_level_functions_survive_their_submodule_import():
    assert _probe([p for p in CLASHES if p[0] == "sinews"]) == []


def test_subpackage_functions_survive_their_submodule_import():
    assert _probe([p for p in CLASHES if p[0] != "sinews"]) == []


def test_the_probe_detects_a_clash():
    """Not vacuous: a package attribute replaced by its submodule is reported."""
    assert isinstance(importlib.import_module("sinews.sim"), types.ModuleType)
    bad = _probe([("sinews.sim", "scene")])  # "scene" is a submodule, not a function: reported
    assert bad == ["sinews.sim.scene"]
