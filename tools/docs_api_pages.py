"""Generate the API reference pages and the site navigation during ``mkdocs build``.

Run by the ``gen-files`` plugin (``mkdocs.yml``); nothing is written into ``docs/``.

API reference (``api/``)
    One page per public module, found by walking ``src/sinews`` (no import, so a module whose
    optional dependency is missing is still documented): a module is public when no component
    of its dotted name starts with ``_``.  A package that defines ``__all__`` documents its
    re-exported names on its own page and its submodules get no page of their own (e.g.
    ``sinews.constraints``, ``sinews.lcp``, ``sinews.demos``); a package without a literal
    ``__all__`` (none, or one computed at import time) gets pages for its public submodules
    too (e.g. ``sinews.contact.fclib``, ``sinews.sim.scene``).  ``EXCLUDED`` lists what is
    not library API (the benchmark scripts).  A new module written today appears without
    editing anything.  ``api/index.md`` lists the pages with the first line of each module's
    docstring.

Navigation (``SUMMARY.md``, read by the ``literate-nav`` plugin)
    Taken from ``docs/index.md``: each ``## Section`` heading becomes a section holding the
    pages linked under it, in order (links before the first heading are not used).  Pages of ``docs/`` that ``index.md`` does not link yet
    (new pages) are listed under "More pages" so that none is left out; the API reference comes
    last.  To place a new page, link it from ``docs/index.md`` under the right heading.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOCS = ROOT / "docs"
PACKAGE = "sinews"
#: Public-looking modules that are not library API: the benchmark scripts (docs/performance.md).
EXCLUDED = ("sinews.bench",)

_LINK = re.compile(r"\[([^\]]+)\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _module_info(path: Path) -> tuple[bool, str]:
    """(defines ``__all__``, first line of the module docstring) of a module file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return False, ""
    # a literal list or tuple: griffe (static analysis) sees the names; a computed __all__
    # (e.g. ``sorted(_LAZY)`` with PEP 562 lazy imports) does not count
    has_all = any(
        isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple))
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        for node in tree.body
    )
    doc = ast.get_docstring(tree) or ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ").strip()
    return has_all, first


def public_modules(src: Path = SRC, package: str = PACKAGE) -> list[tuple[str, str]]:
    """``[(dotted name, summary line)]`` of the documented modules, the package first, then
    sorted by name."""
    found: list[tuple[str, str]] = []

    def visit(folder: Path, dotted: str) -> None:
        init = folder / "__init__.py"
        has_all, doc = _module_info(init)
        found.append((dotted, doc))
        if has_all and dotted != package:
            return  # the package page documents its re-exported names
        for child in sorted(folder.iterdir()):
            name = child.stem if child.suffix == ".py" else child.name
            if name.startswith("_"):
                continue
            sub = f"{dotted}.{name}"
            if any(sub == ex or sub.startswith(ex + ".") for ex in EXCLUDED):
                continue
            if child.is_dir() and (child / "__init__.py").is_file():
                visit(child, sub)
            elif child.suffix == ".py":
                found.append((sub, _module_info(child)[1]))

    visit(src / package, package)
    head, rest = found[0], sorted(found[1:])
    return [head, *rest]


def _all_names(path: Path) -> list[str]:
    """The string entries of a module's ``__all__`` (static: the file is not imported)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _defines(path: Path, name: str) -> bool:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return False
    return any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name for n in tree.body)


def shadowed_names(module: str, src: Path = SRC) -> list[str]:
    """Names of a package's ``__all__`` that are also the names of its submodules defining them
    (``sinews.aba`` is the function ``sinews.aba.aba``): the static analysis sees the submodule,
    so their pages document the function explicitly."""
    folder = src.joinpath(*module.split("."))
    init = folder / "__init__.py"
    if not init.is_file():
        return []
    return [n for n in _all_names(init) if (folder / f"{n}.py").is_file() and _defines(folder / f"{n}.py", n)]


def api_page(module: str) -> str:
    """The Markdown of one module's page: the mkdocstrings directives."""
    text = f"# `{module}`\n\n::: {module}\n"
    for name in shadowed_names(module):
        text += (f"\n::: {module}.{name}.{name}\n"
                 "    options:\n      show_root_heading: true\n      show_root_full_path: false\n")
    return text


def api_index(modules: list[tuple[str, str]]) -> str:
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings of every public module at each build of the site "
        "(`mkdocs build`; the pages are not kept in the repository). Array arguments give their "
        "shapes (`q (nq,)`, `v (nv,)`); conventions (frames, spatial vectors `[angular; linear]`, "
        "quaternions) are in [Conventions](../conventions.md).",
        "",
        "| module | contents |",
        "| --- | --- |",
    ]
    for name, doc in modules:
        doc = doc.replace("|", "\\|")
        lines.append(f"| [`{name}`]({name}.md) | {doc} |")
    return "\n".join(lines) + "\n"


def index_sections(index: Path = DOCS / "index.md") -> list[tuple[str, list[tuple[str, str]]]]:
    """``[(section title, [(link title, page)])]`` from the ``##`` headings of docs/index.md."""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    current: list[tuple[str, str]] = []
    title = None
    for line in index.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            if title is not None and current:
                sections.append((title, current))
            title, current = line[3:].strip(), []
            continue
        if title is None:  # the introduction's links (e.g. "start with Getting started")
            continue
        for text, target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or not target.endswith(".md"):
                continue
            if target.startswith("../") or (text, target) in current:
                continue
            current.append((text.strip("`* "), target))
    if title is not None and current:
        sections.append((title, current))
    return sections


def summary(modules: list[tuple[str, str]], docs: Path = DOCS) -> str:
    """The literate-nav ``SUMMARY.md``: index sections, unlinked pages, then the API."""
    out = ["* [Home](index.md)", "* [README](readme.md)"]
    listed = {"index.md", "readme.md"}
    for title, links in index_sections(docs / "index.md"):
        entries = [(t, p) for t, p in links if not p.startswith("api/") and (docs / p).is_file()]
        entries = [(t, p) for t, p in entries if p not in listed]
        if not entries:
            continue
        out.append(f"* {title}")
        for text, page in entries:
            out.append(f"    * [{text}]({page})")
            listed.add(page)
    others = [p.relative_to(docs).as_posix() for p in sorted(docs.rglob("*.md"))]
    others = [p for p in others if p not in listed and not p.startswith("api/")]
    if others:
        out.append("* More pages")
        for page in others:
            out.append(f"    * [{_title(docs / page)}]({page})")
    out.append("* API reference")
    out.append("    * [Overview](api/index.md)")
    for name, _ in modules:
        out.append(f"    * [{name}](api/{name}.md)")
    return "\n".join(out) + "\n"


def _title(page: Path) -> str:
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip().strip("`")
    return page.stem


def main() -> None:
    import mkdocs_gen_files

    modules = public_modules()
    for name, _ in modules:
        path = f"api/{name}.md"
        with mkdocs_gen_files.open(path, "w") as f:
            f.write(api_page(name))
    with mkdocs_gen_files.open("api/index.md", "w") as f:
        f.write(api_index(modules))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    with mkdocs_gen_files.open("readme.md", "w") as f:
        f.write(readme.replace("](docs/", "]("))
    with mkdocs_gen_files.open("SUMMARY.md", "w") as f:
        f.write(summary(modules))


if __name__ in ("__main__", "<run_path>"):
    main()
