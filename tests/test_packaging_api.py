"""Packaging metadata and the public API's annotations and documented array shapes.

* pyproject: an SPDX licence expression (no licence table, no licence classifier), one version
  source (the distribution metadata; ``sinews.__version__`` reads it), build backend recent
  enough for PEP 639.
* The public functions and methods of the core modules (those listed in ``CORE``) are fully
  annotated (every parameter and the return), and the docstrings give the shapes of the state
  arrays: ``q`` (nq,), ``v``/``tau``/``a``/``qdd`` (nv,), stated on the function or, once for
  all, in the module docstring.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

import sinews

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

CORE = [
    "sinews.spatial", "sinews.kinematics", "sinews.configuration", "sinews.energy",
    "sinews.lagrangian", "sinews.ltl", "sinews.joints", "sinews.sample_models", "sinews.lcp",
    "sinews.contact.fclib", "sinews.contact.constraint_solver", "sinews.contact.impulse_solver",
    "sinews.data",
]
DOCUMENTED_DUNDERS = ("__init__", "__call__", "__matmul__", "__mul__", "__add__")
#: Shapes of the arrays of a multibody state, for the functions that take a ``model``.
SHAPES = {"q": "(nq,)", "v": "(nv,)", "tau": "(nv,)", "a": "(nv,)", "qdd": "(nv,)"}
#: Modules whose functions take no model: the shapes their array arguments must state.
SHAPES_BY_MODULE = {
    "sinews.lcp": {"M": "(n, n)", "q": "(n,)", "z": "(n,)", "z0": "(n,)", "A": "(n, n)", "B": "(m, m)",
                   "C": "(n, m)", "D": "(m, n)", "a": "(n,)", "b": "(m,)", "u": "(n,)", "v": "(m,)"},
    "sinews.contact.fclib": {"W": "(m, m)", "q": "(m,)", "r": "(m,)", "r0": "(m,)", "mu": "(contacts,)"},
    "sinews.contact.constraint_solver": {"tau": "(nv,)", "v": "(nv,)"},
    "sinews.contact.impulse_solver": {"A": "(m, m)", "rhs": "(m,)"},
}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_spdx_licence_and_no_classifier():
    project = pyproject()["project"]
    assert isinstance(project["license"], str), "license must be an SPDX expression string (PEP 639)"
    assert re.fullmatch(r"[A-Za-z0-9.\-]+( (AND|OR) [A-Za-z0-9.\-]+)*", project["license"])
    assert project["license"].startswith("BSD-3-Clause")
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))
    for path in project["license-files"]:
        assert (ROOT / path).is_file(), path
    requires = pyproject()["build-system"]["requires"]
    setuptools = next(r for r in requires if r.startswith("setuptools"))
    assert int(re.search(r">=\s*(\d+)", setuptools).group(1)) >= 77  # PEP 639 licence fields


def test_one_version_source():
    project = pyproject()["project"]
    assert "version" in project and "version" not in project.get("dynamic", [])
    init = (ROOT / "src" / "sinews" / "__init__.py").read_text(encoding="utf-8")
    assert not re.search(r"^__version__\s*=", init, re.M), "__version__ must come from the metadata"
    assert sinews.__version__ == metadata.version("sinews")


def test_docs_and_test_extras():
    extras = pyproject()["project"]["optional-dependencies"]
    names = lambda reqs: {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in reqs}  # noqa: E731
    assert {"mkdocs", "mkdocstrings", "mkdocs-gen-files", "mkdocs-literate-nav", "mkdocs-material"} <= names(extras["docs"])
    assert names(extras["docs"]) <= names(extras["test"]), "the test extra must hold the docs extra"


def _checked_here(defined_in: str, module_name: str) -> bool:
    """Whether a callable defined in ``defined_in`` is checked as part of ``module_name``: when it
    is defined there or in a submodule (a package re-exporting its modules), or in a private module
    (public only through this one).  A name imported from another public module is checked there."""
    if defined_in == module_name or defined_in.startswith(module_name + "."):
        return True
    return defined_in.startswith("sinews") and any(p.startswith("_") for p in defined_in.split(".")[1:])


def _public_callables(module):
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    seen = set()
    for name in names:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if not _checked_here(getattr(obj, "__module__", "") or "", module.__name__):
                continue
        candidates = []
        if inspect.isfunction(obj):
            candidates.append((f"{module.__name__}.{name}", obj))
        elif inspect.isclass(obj) and obj.__module__.startswith("sinews"):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in DOCUMENTED_DUNDERS:
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                elif isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member):
                    candidates.append((f"{module.__name__}.{name}.{attr}", member))
        for qualname, fn in candidates:
            if fn.__module__.startswith("sinews") and fn not in seen:
                seen.add(fn)
                yield qualname, fn


@pytest.mark.parametrize("module_name", CORE)
def test_public_functions_are_fully_annotated(module_name):
    module = importlib.import_module(module_name)
    missing = []
    for qualname, fn in _public_callables(module):
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
        lacking = [p.name for p in params if p.name not in fn.__annotations__]
        if "return" not in fn.__annotations__:
            lacking.append("return")
        if lacking:
            missing.append(f"{qualname}: {lacking}")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("module_name", CORE)
def test_docstrings_give_the_state_array_shapes(module_name):
    module = importlib.import_module(module_name)
    missing = []
    for qualname, fn in _public_callables(module):
        params = inspect.signature(fn).parameters
        shapes = SHAPES if "model" in params else SHAPES_BY_MODULE.get(module_name, {})
        # the function's docstring, its class's (for methods), its module's and the package's
        owner = getattr(sys.modules[fn.__module__], fn.__qualname__.split(".")[0], None) if "." in fn.__qualname__ else None
        doc = "".join(x or "" for x in (fn.__doc__, getattr(owner, "__doc__", None),
                                       sys.modules[fn.__module__].__doc__, module.__doc__))
        for param in params:
            shape = shapes.get(param)
            if shape and shape not in doc:
                missing.append(f"{qualname}: {param} {shape}")
    assert not missing, "\n".join(missing)


def test_the_shape_check_sees_the_core_state_functions():
    """The parametrised checks above are not vacuous: they visit functions taking q and v."""
    module = importlib.import_module("sinews.kinematics")
    seen = {q for q, fn in _public_callables(module) if {"q", "v"} <= set(inspect.signature(fn).parameters)}
    assert "sinews.kinematics.point_velocity" in seen and len(seen) >= 4
