"""The build backend of sinews: setuptools', which asks for NumPy, SciPy and Numba only when they
are used, to build a wheel with its kernel cache (``setup.py``, ``docs/cold-start.md``).

An sdist or an editable install needs setuptools alone; a wheel built with
``SINEWS_KERNEL_CACHE=none`` too.  Otherwise the wheel's build environment gets the run-time
requirements of NumPy, SciPy and Numba, with the specifiers ``pyproject.toml`` declares for them
(so the cache is built by the versions the package accepts).
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # every hook but the one below, as setuptools has it
    build_editable,
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

__all__ = ["build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable",
           "get_requires_for_build_sdist", "get_requires_for_build_wheel", "prepare_metadata_for_build_editable",
           "prepare_metadata_for_build_wheel"]

#: what the kernel cache's build step imports, besides sinews
KERNEL_BUILD_NEEDS = ("numpy", "scipy", "numba")
#: values of SINEWS_KERNEL_CACHE that skip the step (as setup.py)
SKIP = {"0", "no", "none", "off", "false"}


def kernel_requirements(pyproject: Path = Path("pyproject.toml")) -> list[str]:
    """The run-time requirements of :data:`KERNEL_BUILD_NEEDS` as ``pyproject.toml`` declares
    them, or none when ``SINEWS_KERNEL_CACHE`` skips the step."""
    if os.environ.get("SINEWS_KERNEL_CACHE", "").strip().lower() in SKIP:
        return []
    dependencies = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    return [d for d in dependencies if re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0].lower() in KERNEL_BUILD_NEEDS]


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + kernel_requirements()
