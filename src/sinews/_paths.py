"""Location of the test problems used by benchmarks and tests (internal).

The Siconos problems are shipped as package data; the public way to reach them is
:mod:`sinews.data` (``sinews.data.siconos_dir()``, ``sinews.data.siconos_problems(kind)``).
This module keeps the internal name that older code imports.
"""

from .data import siconos_dir

__all__ = ["siconos_dir"]
