"""Locations of the shared reference data used by benchmarks and examples."""

import os
from pathlib import Path


def shared_dir() -> Path:
    """Return the shared data folder: ``$SINEWS_SHARED_DIR`` or ``../shared`` beside the checkout."""
    env = os.environ.get("SINEWS_SHARED_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent.parent / "shared"
        if (parent / "pyproject.toml").exists() and candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared"


def siconos_dir() -> Path:
    return shared_dir() / "data" / "siconos"
