"""Models out of the box: the built-in samples and, when installed, the real robots of
``example-robot-data`` (``pip install "sinews[robots]"``).

>>> import sinews.models
>>> "arm7" in sinews.models.names()
True
>>> sinews.models.load("pendulum", n=2).nv
2

* :func:`names` -- the names :func:`load` accepts, sorted;
* :func:`list` -- the same as :class:`ModelInfo` records (source, description, URDF path,
  whether the robot gets a floating base by default);
* :func:`load` -- a :class:`~sinews.Model`: the samples of :mod:`sinews.sample_models`
  (keyword arguments go to the sample's function, e.g. ``load("pendulum", n=5)``), or a robot's
  URDF through :func:`sinews.load_urdf` (keyword arguments go to it, e.g.
  ``load("panda", floating_base=True)``).

Robots are named after their URDF file (``panda``, ``solo12``, ``talos_reduced``, ``ur5`` for
``ur5_robot.urdf``, ``ur5_limited`` for ``ur5_joint_limited_robot.urdf``, ``anymal_c`` for
ANYmal C, ...); legged robots, humanoids and flying robots get a free-flyer base by default
(:data:`FLOATING`), arms, hands and mobile manipulators a fixed one.  An unknown name raises a
``KeyError`` that lists the closest names; a robot name without ``example-robot-data`` raises
an ``ImportError`` naming the extra to install.
"""

from __future__ import annotations

import builtins
import difflib
import importlib.metadata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Model

__all__ = ["ModelInfo", "names", "list", "load", "robots_dir", "FLOATING", "INSTALL_HINT"]

INSTALL_HINT = 'pip install "sinews[robots]" (example-robot-data and the URDF parser)'

#: robot description folders of example-robot-data whose robots float (free-flyer base)
FLOATING = frozenset(
    {
        "a1_description", "alexander_description", "anymal_b_simple_description",
        "anymal_c_simple_description", "b1_description", "bolt_description", "borinot_description",
        "cassie_description", "centauro_description", "g1_description", "go1_description",
        "go2_description", "hector_description", "hextilt_description", "human_description",
        "hyq_description", "icub_description", "iris_description", "laikago_description",
        "quadruped_description", "romeo_description", "simple_humanoid_description",
        "solo_description", "talos_data",
    }
)

#: robots whose URDF file name is ambiguous or unhelpful: relative path -> name
_RENAMED = {
    "anymal_c_simple_description/urdf/anymal.urdf": "anymal_c",
    "anymal_b_simple_description/robots/anymal-kinova.urdf": "anymal_kinova",
    "solo_description/robots/solo.urdf": "solo8",
    "talos_data/robots/talos_left_arm.urdf": "talos_arm",
    "hyq_description/robots/hyq_no_sensors.urdf": "hyq",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf": "g1",
    "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf": "g1_with_hand",
    "asr_twodof_description/urdf/TwoDofs.urdf": "asr_twodof",
}
#: fixed-base robots inside floating folders
_FIXED = {"talos_arm"}

_SAMPLES = {
    "pendulum": "an n-link planar pendulum of uniform rods (pendulum(n=3, length=1.0, mass=1.0))",
    "arm7": "a 7-DoF serial arm (alternating z/y revolute axes)",
    "quadruped12": "a free-flyer trunk with four 3-DoF legs",
    "random_tree": "a random kinematic tree (random_tree(n_bodies, rng=None, joint_types=None))",
}


@dataclass(frozen=True)
class ModelInfo:
    """A loadable model: ``name``; ``source`` (``"sample"`` or ``"example-robot-data"``);
    ``description``; ``path`` (the URDF file, ``None`` for samples); ``floating_base`` (the
    default of :func:`load` for robots, ``None`` for samples)."""

    name: str
    source: str
    description: str
    path: Path | None = None
    floating_base: bool | None = None


def robots_dir() -> Path | None:
    """The ``robots`` folder of the installed example-robot-data, or ``None``."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    root = Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    if root.is_dir():
        return root
    try:  # older wheels: the example_robot_data Python package knows its folder
        from example_robot_data.path import EXAMPLE_ROBOT_DATA_MODEL_DIR  # type: ignore[import-not-found]
    except ImportError:
        return None
    root = Path(EXAMPLE_ROBOT_DATA_MODEL_DIR)
    return root if root.is_dir() else None


def _robot_name(rel: str) -> str:
    if rel in _RENAMED:
        return _RENAMED[rel]
    stem = Path(rel).stem.replace("-", "_").replace(".", "_").lower()
    stem = stem.replace("_joint_limited_robot", "_limited")
    if stem.endswith("_robot"):
        stem = stem[: -len("_robot")]
    return stem


@lru_cache(maxsize=4)
def _robots(root: Path | None) -> tuple[ModelInfo, ...]:
    if root is None:
        return ()
    found: dict[str, ModelInfo] = {}
    for path in sorted(root.glob("*/*/*.urdf")):
        rel = path.relative_to(root).as_posix()
        try:
            if b"<link" not in path.read_bytes():
                continue  # an empty robot (ur3.urdf holds only a comment): nothing to load
        except OSError:
            continue
        folder = rel.split("/")[0]
        name = _robot_name(rel)
        if name in found or name in _SAMPLES:
            name = f"{folder.replace('_description', '')}_{name}"
        floating = folder in FLOATING and name not in _FIXED
        found[name] = ModelInfo(name, "example-robot-data", f"URDF {rel}", path, floating)
    return tuple(found[n] for n in sorted(found))


def list() -> builtins.list[ModelInfo]:  # noqa: A001 - the module's API mirrors names()
    """Every loadable model, samples first, then the robots of example-robot-data (when it is
    installed), each sorted by name."""
    samples = [ModelInfo(n, "sample", d) for n, d in sorted(_SAMPLES.items())]
    return samples + builtins.list(_robots(robots_dir()))


def names() -> builtins.list[str]:
    """The names :func:`load` accepts, sorted."""
    return sorted(info.name for info in list())


def load(name: str, **kwargs: Any) -> Model:
    """The model called ``name`` (see :func:`names`) as a :class:`~sinews.Model`.

    Samples take their function's keyword arguments (``load("pendulum", n=4)``); robots are
    read by :func:`sinews.load_urdf` with ``floating_base`` defaulting to the robot's
    :attr:`ModelInfo.floating_base` and the other keyword arguments passed on.
    """
    if not isinstance(name, str):
        raise KeyError(f"name must be a model name (a string), got {name!r}")
    if name in _SAMPLES:
        from . import sample_models

        return getattr(sample_models, name)(**kwargs)
    root = robots_dir()
    robots = {info.name: info for info in _robots(root)}
    if name in robots:
        info = robots[name]
        from .urdf import load_urdf

        kwargs.setdefault("floating_base", info.floating_base)
        kwargs.setdefault("name", name)
        return load_urdf(info.path, **kwargs)
    known = sorted(_SAMPLES) + sorted(robots)
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    if root is None and not close:
        raise ImportError(
            f"no built-in model named {name!r}; real robots come from example-robot-data, which is "
            f"not installed: {INSTALL_HINT}"
        )
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    extra = "" if root is not None else f" (robots need example-robot-data: {INSTALL_HINT})"
    raise KeyError(f"no model named {name!r}{hint} (sinews.models.names() lists them){extra}")
