"""Data files shipped with sinews: the Siconos test problems.

The wheel carries, under ``sinews/data/siconos/``, small real problems from the Siconos project
(``numerics/src/*/test/data/``, Apache-2.0: ``LICENSE-Apache-2.0.txt`` beside them; their file
layouts are described in ``README.md`` there):

=========  =================================================================================
``lcp``    20 LCP ``.dat`` files (Murty's exponential example, Cottle-Pang-Stone examples)
``mlcp``   12 MLCP ``.dat`` files
``fc2d``   3 two-dimensional friction-contact ``.dat`` files
``fc3d``   32 Siconos friction-contact ``.dat`` files (six of them 2-D)
``fclib``  5 FCLib HDF5 problems (2 local, 3 global); reading them needs the ``fclib`` extra
=========  =================================================================================

They are what the documentation's examples and ``python -m sinews.bench contact`` /
``python -m sinews.bench lcp`` solve, and they work the same from a checkout and from an
installed wheel.  Setting the environment variable ``SINEWS_SICONOS_DIR`` to a folder with the
same layout uses that folder instead (e.g. a larger local collection).

Example::

    from sinews.contact.fclib import load_problem
    from sinews.data import siconos_problems

    paths = siconos_problems("fclib")   # sorted list of pathlib.Path
    problem = load_problem(paths[0])
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SICONOS_KINDS", "path", "siconos_dir", "siconos_problems"]

#: The subfolders of the Siconos collection and the file suffix of their problems.
SICONOS_KINDS = {"lcp": ".dat", "mlcp": ".dat", "fc2d": ".dat", "fc3d": ".dat", "fclib": ".hdf5"}

_HERE = Path(__file__).resolve().parent


def path(*parts: str) -> Path:
    """The shipped data file or folder ``sinews/data/<parts...>``.

    ``path("siconos", "fc3d", "Rover4396.dat")``.  ``FileNotFoundError`` naming the path and
    what exists beside it when there is no such file.
    """
    for part in parts:
        if not isinstance(part, str) or not part or part in (".", "..") or "/" in part or "\\" in part:
            raise ValueError(f"parts: each part must be one file or folder name, got {part!r}")
    target = _HERE.joinpath(*parts)
    if not target.exists():
        parent = target.parent
        near = sorted(p.name for p in parent.iterdir()) if parent.is_dir() else []
        raise FileNotFoundError(
            f"sinews data file {'/'.join(parts)!r} does not exist"
            + (f"; {parent.relative_to(_HERE).as_posix() or '.'} holds: {', '.join(near[:20])}" if near else "")
        )
    return target


def siconos_dir() -> Path:
    """The folder of the Siconos problems: ``$SINEWS_SICONOS_DIR`` if set, else the shipped one.

    It holds the subfolders ``lcp``, ``mlcp``, ``fc2d``, ``fc3d`` and ``fclib``.
    """
    env = os.environ.get("SINEWS_SICONOS_DIR")
    if env:
        return Path(env)
    return _HERE / "siconos"


def siconos_problems(kind: str) -> list[Path]:
    """The problem files of one kind (``"lcp"``, ``"mlcp"``, ``"fc2d"``, ``"fc3d"``,
    ``"fclib"``), sorted by name.  ``ValueError`` naming ``kind`` for another name."""
    if kind not in SICONOS_KINDS:
        raise ValueError(f"kind must be one of {', '.join(SICONOS_KINDS)}; got {kind!r}")
    return sorted((siconos_dir() / kind).glob("*" + SICONOS_KINDS[kind]))
