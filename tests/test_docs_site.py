"""The documentation site builds with warnings as errors: ``mkdocs build --strict``.

Needs the ``docs`` extra (in the ``test`` extra too).  The build runs once in a subprocess into
a temporary folder; then the pages are checked: every docs page and every public module has its
HTML page, every exported name of every documented module has its anchor, and the README is
part of the site.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

for _mod in ("mkdocs", "mkdocstrings", "mkdocs_gen_files", "mkdocs_literate_nav", "material", "griffe"):
    pytest.importorskip(_mod, reason="the docs extra is not installed (pip install -e '.[docs]')")

pytestmark = pytest.mark.slow


def _gen():
    spec = importlib.util.spec_from_file_location("_sinews_docs_api_pages_site", ROOT / "tools" / "docs_api_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{log[-6000:]}"
    warnings = [ln for ln in log.splitlines() if re.match(r"^(WARNING|ERROR)\b", ln)]
    assert not warnings, "\n".join(warnings)
    return out


def _html(site: Path, page: str) -> str:
    """The HTML of the page built from ``page`` (``getting-started.md`` -> ``getting-started/index.html``)."""
    stem = page[:-3]
    if stem == "index" or stem.endswith("/index"):
        path = site / stem[: -len("index")] / "index.html"
    else:
        path = site / stem / "index.html"
    assert path.is_file(), f"{page} was not built ({path})"
    return path.read_text(encoding="utf-8")


def test_every_docs_page_is_built(site):
    for page in DOCS.rglob("*.md"):
        _html(site, page.relative_to(DOCS).as_posix())
    assert "sinews" in _html(site, "readme.md")


def test_index_links_the_readme_page(site):
    assert 'href="readme/"' in _html(site, "index.md")


def test_every_exported_name_is_documented(site):
    gen = _gen()
    pages = {}
    for name, _ in gen.public_modules():
        pages[name] = set(re.findall(r'id="([^"]+)"', _html(site, f"api/{name}.md")))
    everywhere = set().union(*pages.values())
    missing = []
    for name in pages:
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional dependency is missing: documented statically anyway
            continue
        for public in getattr(module, "__all__", []):
            obj = getattr(module, public, None)
            if isinstance(obj, types.ModuleType):
                continue  # a submodule: its own page
            ids = {f"{name}.{public}", f"{name}.{public}.{public}"}
            canonical = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', public)}"
            # a constant re-exported from a submodule (a package with a computed __all__)
            in_submodule = any(i.startswith(name + ".") and i.endswith("." + public) for i in everywhere)
            if not (ids & pages[name]) and canonical not in everywhere and not in_submodule:
                missing.append(f"{name}.{public}")
    assert not missing, f"exported names with no entry in the API reference: {missing}"


def test_api_index_lists_every_module(site):
    html = _html(site, "api/index.md")
    for name, _ in _gen().public_modules():
        assert f"{name}/" in html, name
