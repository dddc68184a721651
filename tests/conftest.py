"""Shared test configuration."""

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("SINEWS_SHARED_DIR", REPO_ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir():
    """The project's shared reference folder (``../shared`` beside the clone)."""
    if not SHARED_DIR.is_dir():
        raise RuntimeError(
            f"shared data folder not found at {SHARED_DIR}; set SINEWS_SHARED_DIR to its location"
        )
    return SHARED_DIR


@pytest.fixture(scope="session")
def siconos_dir(shared_dir):
    return shared_dir / "data" / "siconos"
