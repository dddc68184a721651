"""Every ```python block of README.md and docs/**/*.md runs.

Blocks of one page run in order in one fresh namespace (a page is one test, with the page's
path as its id), with the working directory set to a temporary folder and the matplotlib Agg
backend.  Only blocks fenced as ``python`` (or ``py``/``python3``) run; ```text, ```console,
```pycon etc. do not.  The generated API reference (docs/api/) is excluded.  A failure names
the page, the block number and the block's first line in the Markdown file.
"""

from __future__ import annotations

import os
import re
import traceback
from pathlib import Path

import pytest

os.environ["MPLBACKEND"] = "Agg"

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXCLUDED_DIRS = (DOCS / "api",)
PYTHON_LANGS = {"python", "py", "python3"}
#: optional dependencies: a page that needs a missing one is skipped, not failed
OPTIONAL_MODULES = {"pinocchio", "h5py", "yourdfpy"}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def extract_blocks(text: str) -> list[tuple[int, str, str]]:
    """``(line, language, code)`` of every fenced block (line: 1-based, of the opening fence).

    Follows CommonMark: a block closes at a fence of the same character at least as long as
    the opening one; the opening fence's indentation is removed from the code lines.
    """
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None or ("`" in m["info"] and m["fence"][0] == "`"):
            i += 1
            continue
        indent, fence = len(m["indent"].expandtabs()), m["fence"]
        info = m["info"].strip()
        lang = info.split()[0].strip("{}.").lower() if info else ""
        start = i + 1
        body = []
        i += 1
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if (close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence)
                    and not close["info"].strip()):
                break
            line = lines[i]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            i += 1
        blocks.append((start, lang, "\n".join(body) + "\n"))
        i += 1
    return blocks


def python_blocks(path: Path) -> list[tuple[int, str]]:
    return [(line, code) for line, lang, code in extract_blocks(path.read_text(encoding="utf-8"))
            if lang in PYTHON_LANGS]


def doc_pages() -> list[Path]:
    pages = []
    readme = ROOT / "README.md"
    if readme.exists():
        pages.append(readme)
    if DOCS.is_dir():
        for path in sorted(DOCS.rglob("*.md")):
            if any(ex == path.parent or ex in path.parents for ex in EXCLUDED_DIRS):
                continue
            pages.append(path)
    return [p for p in pages if python_blocks(p)]


PAGES = doc_pages()


@pytest.fixture
def page_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # examples run in a temporary folder: point them at the repository's Siconos problems
    monkeypatch.setenv("SINEWS_SICONOS_DIR", str(Path(__file__).resolve().parents[1] / "data" / "siconos"))
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
    except ImportError:  # pragma: no cover
        pass
    import sinews

    # Keep the examples from leaking into later tests through the package namespace (e.g.
    # the first call of sinews.warmup() imports the submodule sinews.warmup, which rebinds
    # the attribute sinews.warmup from the function to the module).
    public = {name: getattr(sinews, name) for name in sinews.__all__ if hasattr(sinews, name)}
    yield tmp_path
    for name, obj in public.items():
        if getattr(sinews, name, None) is not obj:
            setattr(sinews, name, obj)
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_page_examples_run(page: Path, page_env):
    rel = page.relative_to(ROOT).as_posix()
    namespace = {"__name__": "__docs_example__", "__file__": str(page_env / "example.py")}
    blocks = python_blocks(page)
    for k, (line, code) in enumerate(blocks, start=1):
        where = f"{rel}, python block {k}/{len(blocks)} (line {line})"
        failure = skip = None
        try:
            # pad so that traceback line numbers are the Markdown file's own line numbers
            exec(compile("\n" * line + code, str(page), "exec"), namespace)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.split(".")[0] in OPTIONAL_MODULES:
                skip = f"{where}: optional dependency {exc.name!r} is not installed"
            else:
                failure = traceback.format_exc()
        except Exception:
            failure = traceback.format_exc()
        if skip:
            pytest.skip(skip)
        if failure:
            pytest.fail(f"{where} failed:\n{failure}", pytrace=False)


def test_fence_extraction():
    text = "\n".join([
        "intro",
        "```python",
        "x = 1",
        "```",
        "```text",
        "not code",
        "```",
        "- item",
        "  ```python",
        "  y = x + 1",
        "  ```",
        "````python",
        "s = '''",
        "```",
        "'''",
        "````",
        "```console",
        "$ ls",
        "```",
    ])
    blocks = extract_blocks(text)
    assert [(line, lang) for line, lang, _ in blocks] == [(2, "python"), (5, "text"), (9, "python"),
                                                          (12, "python"), (17, "console")]
    assert blocks[2][2] == "y = x + 1\n"
    assert blocks[3][2] == "s = '''\n```\n'''\n"
    ns = {}
    for _, lang, code in blocks:
        if lang in PYTHON_LANGS:
            exec(code, ns)
    assert ns["y"] == 2 and ns["s"] == "\n```\n"


def test_pages_found():
    """The parametrisation is not silently empty, and the API pages are excluded."""
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert not any(n.startswith("docs/api/") for n in names)
    if (DOCS / "getting-started.md").exists():
        assert "docs/getting-started.md" in names


def _relative_links(path: Path) -> list[str]:
    """Relative link targets (no URL, no pure anchor) of a Markdown page, outside code blocks."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    for line, _, code in extract_blocks(text):  # blank out fenced code
        n = code.count("\n")
        for k in range(line - 1, min(line + n + 1, len(lines))):
            lines[k] = ""
    text = re.sub(r"`[^`\n]*`", "", "\n".join(lines))  # and inline code
    targets = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        target = target.split("#")[0]
        if target and not re.match(r"^[a-z][a-z0-9+.-]*:", target):
            targets.append(target)
    return targets


def test_index_links_every_page():
    """docs/index.md links every docs page (the API reference through api/index.md)."""
    index = DOCS / "index.md"
    linked = {(DOCS / t).resolve() for t in _relative_links(index)}
    pages = [p for p in sorted(DOCS.rglob("*.md"))
             if p != index and not any(ex == p.parent or ex in p.parents for ex in EXCLUDED_DIRS)]
    pages.append(DOCS / "api" / "index.md")
    missing = [p.relative_to(DOCS).as_posix() for p in pages if p.resolve() not in linked]
    assert not missing, f"docs/index.md does not link: {missing}"


@pytest.mark.parametrize("name", ["index.md", "getting-started.md"])
def test_links_resolve(name):
    page = DOCS / name
    broken = [t for t in _relative_links(page) if not (page.parent / t).exists()]
    assert not broken, f"docs/{name} links to missing files: {broken}"
