"""MkDocs hook: links from docs pages to the repository's README.md point at the site's copy.

``docs/index.md`` links ``../README.md`` (right on GitHub and in an editor); on the site the
README is the generated page ``readme.md`` (tools/docs_api_pages.py).
"""

from __future__ import annotations

import posixpath
import re

_LINK = re.compile(r"\]\(((?:\.\./)+)README\.md(#[^)]*)?\)")


def on_page_markdown(markdown, page, config, files, **kwargs):
    depth = page.file.src_uri.count("/")

    def fix(m):
        ups = m.group(1).count("../")
        if ups != depth + 1:  # not the repository root's README
            return m.group(0)
        target = posixpath.relpath("readme.md", posixpath.dirname(page.file.src_uri) or ".")
        return f"]({target}{m.group(2) or ''})"

    return _LINK.sub(fix, markdown)
