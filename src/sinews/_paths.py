"""Locations of the test problems used by benchmarks, examples and tests.

The Siconos problems (LCP, MLCP, FCLib and fc3d frictional contact; Apache-2.0, see
``data/siconos/LICENSE-Apache-2.0.txt``) are kept in the repository under ``data/siconos`` so
that a fresh clone is self-contained.  Resolution order for :func:`siconos_dir`:

1. ``$SINEWS_SICONOS_DIR``;
2. ``data/siconos`` in the source checkout this package was imported from;
3. ``$SINEWS_SHARED_DIR/data/siconos``, or ``../shared/data/siconos`` beside the checkout or
   the working directory (the project's shared reference folder).
"""

import os
from pathlib import Path


def _checkout_root():
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists():
            return parent
    return None


def shared_dir() -> Path:
    """The project's shared reference folder: ``$SINEWS_SHARED_DIR`` or ``../shared``."""
    env = os.environ.get("SINEWS_SHARED_DIR")
    if env:
        return Path(env)
    root = _checkout_root()
    if root is not None and (root.parent / "shared").is_dir():
        return root.parent / "shared"
    return Path.cwd().parent / "shared"


def siconos_dir() -> Path:
    """The folder holding the Siconos test problems (``lcp/``, ``mlcp/``, ``fc3d/``, ``fclib/``)."""
    env = os.environ.get("SINEWS_SICONOS_DIR")
    if env:
        return Path(env)
    root = _checkout_root()
    for base in ([root] if root is not None else []) + [Path.cwd()]:
        if (base / "data" / "siconos" / "lcp").is_dir():
            return base / "data" / "siconos"
    return shared_dir() / "data" / "siconos"
