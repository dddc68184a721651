"""Griffe extension: the reStructuredText bits of sinews' docstrings, as Markdown.

The docstrings are Markdown with a few Sphinx habits (they also read well in ``help()``):
roles such as ``:func:`sinews.aba``` / ``:class:`~sinews.Model``` become code spans (the
``~`` form keeps the last name), linked to the API reference when the target is a full
``sinews.`` path that the reference documents, ``Example::`` paragraphs end with one colon (the indented block
after them is already a Markdown code block), ``.. math::`` directives become code blocks and
doctest lines (``>>>``) are fenced as ``pycon`` code.
Loaded by mkdocstrings (``mkdocs.yml``: ``extensions: [tools/docs_griffe_rst.py:RstToMarkdown]``).
"""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc|const|math|ref|term):`(~?)([^`]+)`")
_LITERAL = re.compile(r"(?m)^(\s*)(.*\S)::\s*$")
_MATH = re.compile(r"(?m)^(\s*)\.\. math::\s*$")


def _role(m: re.Match) -> str:
    tilde, target = m.group(1), m.group(2).strip()
    shown = target.split(".")[-1] if tilde else target
    if target.startswith("sinews.") and re.fullmatch(r"[\w.]+", target):
        # a link to the target's entry in the API reference when there is one (``optional``:
        # no warning, plain code, when there is not)
        return f'<autoref optional identifier="{target}"><code>{shown}</code></autoref>'
    return f"`{shown}`"


def _fence_doctests(text: str) -> str:
    """Wrap each run of doctest lines (``>>>`` up to the next blank line) in a ```pycon fence,
    so that their output (``['a', 'b']``) is not read as Markdown links; fenced or indented
    code is left alone."""
    out: list[str] = []
    lines = text.split("\n")
    i, in_fence = 0, False
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        if not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def rst_to_markdown(text: str) -> str:
    """The conversion (pure function, tested in tests/test_docs_api.py)."""
    text = _ROLE.sub(_role, text)
    text = _MATH.sub(lambda m: f"{m.group(1)}Equation:", text)
    text = _LITERAL.sub(lambda m: f"{m.group(1)}{m.group(2)}:", text)
    return _fence_doctests(text)


class RstToMarkdown(griffe.Extension):
    """Rewrites every docstring griffe loads (modules, classes, functions, attributes)."""

    def on_instance(self, *, obj, **kwargs) -> None:  # each object as griffe creates it
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
