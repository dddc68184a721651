"""Seeing a run: an interactive 3-D animation in the browser.

* :func:`write_html` -- a self-contained HTML file (three.js inlined, works offline) that plays
  a simulation of a :class:`sinews.sim.Scene`: the scene's collision geometries posed by forward
  kinematics at each frame, with play/pause, a time slider and an orbit camera;
* :func:`to_html` -- the same page as a string; :func:`animation_data` -- the frame data.

Guide: docs/viewer.md.
"""

from .browser import find_browser, screenshot
from .html import THREE_VERSION, animation_data, to_html, write_html

__all__ = ["write_html", "to_html", "animation_data", "screenshot", "find_browser", "THREE_VERSION"]
