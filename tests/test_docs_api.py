"""The API reference is complete by construction, and the public API is documented.

The reference pages are generated at site-build time (``mkdocs build``) by
``tools/docs_api_pages.py`` from the docstrings (mkdocstrings); nothing is committed.  These
tests check, without building the site (``tests/test_docs_site.py`` builds it): which modules
get a page (every public one, found without a list, so a new module appears by itself), the
navigation (every docs page), the docstring conversion, and that the public names have
docstrings.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

import sinews

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _load(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


gen = _load("_sinews_docs_api_pages", ROOT / "tools" / "docs_api_pages.py")


def test_no_committed_api_pages_and_no_old_generator():
    assert not (DOCS / "api").exists(), "docs/api/ is generated at build time; do not commit it"
    assert not (ROOT / "tools" / "gen_api_docs.py").exists()


def test_public_modules_cover_the_library():
    names = [n for n, _ in gen.public_modules()]
    assert names[0] == "sinews" and len(names) == len(set(names))
    for must in ("sinews.aba", "sinews.rnea", "sinews.spatial", "sinews.joints", "sinews.model",
                 "sinews.kinematics", "sinews.constraints", "sinews.lcp", "sinews.contact.fclib",
                 "sinews.contact.constraint_solver", "sinews.contact.impulse_solver", "sinews.data",
                 "sinews.demos", "sinews.sample_models", "sinews.configuration"):
        assert must in names, must
    assert not any("._" in n for n in names), "private modules are not documented"
    assert not any(n == "sinews.bench" or n.startswith("sinews.bench.") for n in names)
    # a package with a literal __all__ documents its names on its own page
    assert "sinews.constraints.assembly" not in names and "sinews.demos.pendulum" not in names
    # every public module file is either documented or re-exported by a documented package
    documented = set(names)
    for path in (ROOT / "src" / "sinews").rglob("*.py"):
        rel = path.relative_to(ROOT / "src").with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        dotted = ".".join(parts)
        if any(p.startswith("_") for p in parts) or dotted.startswith("sinews.bench") or "__pycache__" in parts:
            continue
        parents = [".".join(parts[:k]) for k in range(1, len(parts))]
        assert dotted in documented or any(p in documented and gen._module_info(
            ROOT / "src" / Path(*p.split(".")) / "__init__.py")[0] for p in parents), dotted


def test_a_new_module_gets_a_page_without_edits(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "lazy").mkdir()
    (pkg / "__init__.py").write_text('"""Top."""\n__all__ = ["f"]\n')
    (pkg / "alpha.py").write_text('"""Alpha module.\n\nMore."""\n')
    (pkg / "_private.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text('"""Sub."""\n__all__ = ["g"]\n')
    (pkg / "sub" / "hidden.py").write_text('"""Re-exported by sub."""\n')
    (pkg / "lazy" / "__init__.py").write_text('"""Lazy."""\n_LAZY = {"h": "impl"}\n__all__ = sorted(_LAZY)\n')
    (pkg / "lazy" / "impl.py").write_text('"""Impl."""\n')
    mods = gen.public_modules(tmp_path, "pkg")
    assert mods == [("pkg", "Top."), ("pkg.alpha", "Alpha module."), ("pkg.lazy", "Lazy."),
                    ("pkg.lazy.impl", "Impl."), ("pkg.sub", "Sub.")]
    (pkg / "beta.py").write_text('"""Beta."""\n')
    assert ("pkg.beta", "Beta.") in gen.public_modules(tmp_path, "pkg")


def test_functions_named_like_their_module_are_documented_explicitly():
    """``sinews.aba`` is the function, but static analysis sees the submodule."""
    assert set(gen.shadowed_names("sinews")) >= {"aba", "crba", "rnea", "simulate"}
    page = gen.api_page("sinews")
    assert "::: sinews.aba.aba" in page and page.startswith("# `sinews`\n\n::: sinews\n")


def test_navigation_lists_every_page_once():
    modules = gen.public_modules()
    nav = gen.summary(modules)
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    for page in pages:
        assert nav.count(f"]({page})") == 1, page
    for name, _ in modules:
        assert f"](api/{name}.md)" in nav
    assert "](api/index.md)" in nav and "](readme.md)" in nav
    sections = [t for t, _ in gen.index_sections()]
    assert "Basics" in sections


def test_navigation_picks_up_a_page_not_yet_in_the_index(tmp_path):
    (tmp_path / "index.md").write_text("# Home\n\n## Basics\n\n| [One](one.md) | x |\n")
    (tmp_path / "one.md").write_text("# One\n")
    (tmp_path / "new-page.md").write_text("# A new page\n")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "ex.md").write_text("# Example\n")
    nav = gen.summary([("sinews", "")], docs=tmp_path)
    assert "* Basics\n    * [One](one.md)\n" in nav
    assert "* More pages\n    * [Example](examples/ex.md)\n    * [A new page](new-page.md)\n" in nav


def test_rst_bits_become_markdown():
    conv = _load("_sinews_docs_griffe_rst", ROOT / "tools" / "docs_griffe_rst.py") if importlib.util.find_spec(
        "griffe") else pytest.skip("griffe (docs extra) is not installed")
    doc = textwrap.dedent("""\
        Uses :func:`sinews.aba` and :class:`~sinews.Model`, :math:`x^2`, :func:`check_lcp`.

        Example::

            sinews.aba(model, q, v, tau)

        >>> [1, 2]
        [1, 2]

        ```python
        >>> kept
        ```
        """)
    md = conv.rst_to_markdown(doc)
    assert '<autoref optional identifier="sinews.aba"><code>sinews.aba</code></autoref>' in md
    assert '<autoref optional identifier="sinews.Model"><code>Model</code></autoref>' in md
    assert "`x^2`" in md and "`check_lcp`" in md and ":func:" not in md
    assert "Example:\n" in md and "Example::" not in md
    assert "```pycon\n>>> [1, 2]\n[1, 2]\n```" in md
    assert "```python\n>>> kept\n```" in md


def test_top_level_names_have_docstrings():
    missing = [n for n in sinews.__all__ if not (getattr(getattr(sinews, n), "__doc__", None) or "").strip()]
    assert not missing, f"public names of sinews.__all__ without a docstring: {missing}"


@pytest.mark.parametrize("module", ["sinews.lcp", "sinews.constraints", "sinews.contact.fclib", "sinews.data",
                                    "sinews.demos"])
def test_exported_names_have_docstrings(module):
    mod = importlib.import_module(module)
    missing = []
    for name in getattr(mod, "__all__", []):
        obj = getattr(mod, name)
        if callable(obj) and not (obj.__doc__ or "").strip():
            missing.append(name)
    assert not missing, f"{module}: {missing}"
