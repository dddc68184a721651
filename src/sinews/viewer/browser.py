"""Screenshots of a viewer page with a headless Chromium (tests, docs pictures).

:func:`find_browser` looks for Chromium or Chrome (``$SINEWS_BROWSER`` first, then
``chromium``, ``chromium-browser``, ``google-chrome`` on the ``PATH``); :func:`screenshot`
opens a page written by :func:`sinews.viewer.write_html` at a given animation time (the
``#t=...&controls=0`` URL fragment: paused at that time, control bar hidden) and saves a PNG.

Chromium on Debian/Ubuntu: ``sudo apt-get install -y chromium``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .._checks import real_scalar

__all__ = ["find_browser", "screenshot", "INSTALL_HINT"]

INSTALL_HINT = ("no headless browser found: install Chromium (Debian/Ubuntu: "
                "'sudo apt-get install -y chromium') or set SINEWS_BROWSER to a Chromium/Chrome executable")

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

#: Flags for a quiet, offline, sandbox-free headless run (containers, CI).
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--mute-audio", "--enable-unsafe-swiftshader",
)


def find_browser() -> str | None:
    """Path of a Chromium/Chrome executable, or ``None``."""
    env = os.environ.get("SINEWS_BROWSER")
    if env:
        return shutil.which(env) or (env if os.path.isfile(env) and os.access(env, os.X_OK) else None)
    for name in _CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(html_path: str | os.PathLike, png_path: str | os.PathLike, t: float | None = None, *, width: int = 800, height: int = 600,
               browser: str | None = None, timeout: float = 120.0) -> Path:
    """Save a ``width`` x ``height`` PNG of the viewer page ``html_path`` at animation time ``t``
    (seconds; ``None``: the first frame) to ``png_path``; returns the PNG path.

    Raises ``RuntimeError`` (with how to install one) when no browser is found, or when the
    browser fails or writes no file.
    """
    exe = browser or find_browser()
    if exe is None:
        raise RuntimeError(INSTALL_HINT)
    html_path = Path(html_path).resolve()
    if not html_path.is_file():
        raise ValueError(f"html_path {str(html_path)!r} is not a file")
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, int) or not 16 <= v <= 8192:
            raise ValueError(f"{name} must be an integer in [16, 8192], got {v!r}")
    frag = f"t={-1e300 if t is None else real_scalar(t, 't')!r}&controls=0"  # clamped to the first frame
    png_path = Path(png_path).resolve()
    png_path.parent.mkdir(parents=True, exist_ok=True)
    if png_path.exists():
        png_path.unlink()
    with tempfile.TemporaryDirectory(prefix="sinews-browser-") as profile:
        cmd = [exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--screenshot={png_path}", f"{html_path.as_uri()}#{frag}"]
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{exe} did not finish within {timeout} s") from None
    if proc.returncode != 0 or not png_path.is_file():
        tail = proc.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{exe} failed (exit code {proc.returncode}) to write {png_path}:\n{tail}")
    return png_path
