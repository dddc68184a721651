"""The ``urdf`` extra stays light (issue 10 item 1): a URDF parser without the mesh stack.

The issue: the former ``urdf`` extra pulled about 31 packages (trimesh, httpx, ...) only to read
XML with meshes switched off.  The installed dependency closure of the ``urdf`` extra is computed
from the distributions' metadata (unconditional requirements, recursively) and must stay small and
free of mesh, scene and network libraries.
"""

from __future__ import annotations

import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

HEAVY = {"trimesh", "httpx", "yourdfpy", "pycollada", "networkx", "scipy-stubs", "rtree", "shapely",
         "open3d", "pyglet", "requests", "urllib3"}


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;(]", req, maxsplit=1)[0].strip().lower().replace("_", "-")


def _closure(names: set[str]) -> set[str]:
    """The installed distributions ``names`` need, recursively (requirements with an ``extra``
    marker left out; environment markers otherwise ignored: an upper bound)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        todo.extend(_name(r) for r in reqs if "extra ==" not in r.replace("extra==", "extra =="))
    return seen


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]


def test_the_urdf_extra_is_the_xml_parser_only():
    urdf = {_name(r) for r in _extras()["urdf"]}
    assert urdf == {"urdfdom-py"}
    for extra in ("robots", "demo", "test"):  # every extra that loads URDFs uses the same parser
        assert "urdfdom-py" in {_name(r) for r in _extras()[extra]}, extra


def test_the_urdf_extra_pulls_no_mesh_or_network_stack():
    pytest.importorskip("urdf_parser_py")
    closure = _closure({"urdfdom-py"})
    assert not closure & HEAVY, sorted(closure & HEAVY)
    assert len(closure) <= 6, sorted(closure)  # urdfdom-py, lxml, pyyaml, setuptools today


def test_the_closure_walk_sees_dependencies():
    """Not vacuous: the walk follows requirements (pytest needs pluggy and iniconfig)."""
    assert {"pytest", "pluggy", "iniconfig"} <= _closure({"pytest"})
