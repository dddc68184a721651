"""Every ```python block of README.md and docs/**/*.md runs.

Blocks of one page run in order in one fresh namespace (a page is one test, with the page's
path as its id), with the working directory set to a temporary folder and the matplotlib Agg
backend.  Only blocks fenced as ``python`` (or ``py``/``python3``) run; ```text, ```console,
```pycon etc. do not.  The API reference (docs/api/, generated at site build) is excluded.  A failure names
the page, the block number and the block's first line in the Markdown file.
"""

from __future__ import annotations

import codeop
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
OPTIONAL_MODULES = {"pinocchio", "h5py", "urdf_parser_py", "mujoco"}

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


def all_pages() -> list[Path]:
    """README.md and every docs page outside the excluded folders."""
    pages = []
    readme = ROOT / "README.md"
    if readme.exists():
        pages.append(readme)
    if DOCS.is_dir():
        for path in sorted(DOCS.rglob("*.md")):
            if any(ex == path.parent or ex in path.parents for ex in EXCLUDED_DIRS):
                continue
            pages.append(path)
    return pages


def doc_pages() -> list[Path]:
    return [p for p in all_pages() if python_blocks(p)]


PAGES = doc_pages()
ALL_PAGES = all_pages()


@pytest.fixture
def page_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # the examples reach the Siconos problems through sinews.data (package data), as a user does
    monkeypatch.delenv("SINEWS_SICONOS_DIR", raising=False)
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


def _generated_api_pages() -> set[Path]:
    """The API reference pages the site build generates (tools/docs_api_pages.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_sinews_docs_api_pages", ROOT / "tools" / "docs_api_pages.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return {(DOCS / "api" / "index.md").resolve()} | {
        (DOCS / "api" / f"{name}.md").resolve() for name, _ in gen.public_modules()}


@pytest.mark.parametrize("name", ["index.md", "getting-started.md"])
def test_links_resolve(name):
    page = DOCS / name
    generated = _generated_api_pages()
    broken = [t for t in _relative_links(page)
              if not (page.parent / t).exists() and (page.parent / t).resolve() not in generated]
    assert not broken, f"docs/{name} links to missing files: {broken}"


# ------------------------------------------------------------------ pasted into a REPL
def repl_paste_errors(code: str) -> list[str]:
    """What goes wrong when ``code`` is pasted line by line into the interactive interpreter.

    Follows ``code.InteractiveConsole``: lines accumulate until ``codeop.compile_command`` (in
    "single" mode, as the console) says the statement is complete, which a blank line does for a
    compound statement.  So a blank line inside an indented block ends the block early (the next
    indented line is an IndentationError), and a top-level line straight after an indented
    block, with no blank line between, is a SyntaxError.  Returns one message per failure.
    """
    errors = []
    buffer: list[str] = []
    for number, line in enumerate(code.rstrip("\n").split("\n"), start=1):
        buffer.append(line)
        try:
            compiled = codeop.compile_command("\n".join(buffer), "<stdin>", "single")
        except (SyntaxError, ValueError, OverflowError) as exc:
            errors.append(f"line {number} of the block ({line.strip()!r}): {type(exc).__name__}: {exc.msg if isinstance(exc, SyntaxError) else exc}")
            buffer = []
            continue
        if compiled is not None:
            buffer = []
    if buffer and any(ln.strip() for ln in buffer):  # the last statement needs its closing blank line
        try:
            if codeop.compile_command("\n".join(buffer) + "\n", "<stdin>", "single") is None:
                codeop.compile_command("\n".join(buffer) + "\n\n", "<stdin>", "single")
        except SyntaxError as exc:
            errors.append(f"end of the block: SyntaxError: {exc.msg}")
    return errors


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_page_examples_paste_into_a_repl(page: Path):
    """Every ```python block works when pasted into ``python`` (no blank line inside an indented
    block, a blank line after each indented block before the next top-level line)."""
    rel = page.relative_to(ROOT).as_posix()
    problems = []
    for line, code in python_blocks(page):
        for err in repl_paste_errors(code):
            problems.append(f"{rel}: block at line {line}: {err}")
    assert not problems, "\n".join(problems)


def test_repl_paste_check_catches_both_mistakes():
    assert repl_paste_errors("x = 1\nfor i in range(2):\n    x += i\n\nprint(x)\n") == []
    assert repl_paste_errors("def f():\n    a = 1\n\n    return a\n")  # blank line inside
    assert repl_paste_errors("for i in range(2):\n    pass\nprint(i)\n")  # no blank line after
    assert repl_paste_errors("s = \"\"\"\n\ntext\"\"\"\n") == []  # a blank line in a string is fine
    assert repl_paste_errors("@staticmethod\ndef f():\n    return 1\n") == []


PRIVATE_IMPORT = re.compile(r"^\s*(?:from\s+sinews(?:\.\w+)*\.(_\w*)|from\s+sinews(?:\.\w+)*\s+import\s+[^#\n]*\b(_\w+)"
                            r"|import\s+sinews(?:\.\w+)*\.(_\w*))", re.M)


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_page_examples_use_only_the_public_api(page: Path):
    """No example imports a private module or name (``sinews._paths``, ``from sinews import _x``)."""
    rel = page.relative_to(ROOT).as_posix()
    bad = []
    for line, code in python_blocks(page):
        for m in PRIVATE_IMPORT.finditer(code):
            bad.append(f"{rel}: block at line {line}: {m.group(0).strip()!r}")
        bad += [f"{rel}: block at line {line}: uses {m.group(0)!r}"
                for m in re.finditer(r"\bsinews(?:\.[A-Za-z]\w*)*\._\w+", code)]
    assert not bad, "\n".join(bad)


SHELL_LANGS = {"console", "bash", "sh", "shell", "shell-session"}
#: a private module or name in a command: ``sinews._x``, ``sinews.sub._x``, ``from sinews import _x``
PRIVATE_COMMAND = re.compile(r"\bsinews(?:\.[A-Za-z]\w*)*\._\w+|from sinews(?:\.\w+)* import _\w+")


@pytest.mark.parametrize("page", ALL_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_commands_use_only_the_public_api(page: Path):
    """Commands a user copies (shell blocks, inline ``python -c "..."``) use no private module
    either (``python -c "from sinews._warmup import ..."`` once slipped through)."""
    rel = page.relative_to(ROOT).as_posix()
    text = page.read_text(encoding="utf-8")
    commands = [code for _, lang, code in extract_blocks(text) if lang in SHELL_LANGS]
    commands += re.findall(r"`(python3? -[cm] [^`]*)`", text)
    bad = [f"{rel}: {m.group(0)!r}" for code in commands for m in PRIVATE_COMMAND.finditer(code)]
    assert not bad, "\n".join(bad)


def test_command_check_catches_a_private_module():
    """The pattern of :func:`test_page_commands_use_only_the_public_api` can fail."""
    assert PRIVATE_COMMAND.search('python -c "from sinews._warmup import warmup_simulation"')
    assert PRIVATE_COMMAND.search("python -m sinews.bench._timing")
    assert not PRIVATE_COMMAND.search('python -c "import sinews; sinews.warmup(simulation=True)"')


def test_private_import_pattern():
    for code in ("from sinews._paths import siconos_dir", "import sinews._kernels as K",
                 "from sinews import _checks", "from sinews.contact import _fc3d_io",
                 "from sinews.contact._fc3d_io import x"):
        assert PRIVATE_IMPORT.search(code), code
    for code in ("from sinews.data import siconos_dir", "import sinews", "from sinews import aba, crba"):
        assert not PRIVATE_IMPORT.search(code), code
