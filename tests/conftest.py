"""Shared test configuration."""

from pathlib import Path

import pytest
from hypothesis import settings

# Reproducible property tests: the same examples on every run and in CI (a failure found once is
# found again); tests that set their own settings keep this default for what they do not set.
settings.register_profile("sinews", derandomize=True, deadline=None)
settings.load_profile("sinews")

from sinews._paths import siconos_dir as _siconos_dir

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def siconos_dir():
    """The Siconos test problems: ``data/siconos`` in this repository (or ``$SINEWS_SICONOS_DIR``)."""
    path = Path(_siconos_dir())
    if not (path / "lcp").is_dir():
        path = REPO_ROOT / "data" / "siconos"
    if not (path / "lcp").is_dir():
        raise RuntimeError(f"Siconos test problems not found at {path}; set SINEWS_SICONOS_DIR")
    return path
