"""Simulation with contact, impact and friction.

* :class:`Scene` -- a model with collision geometries (:mod:`sinews.geometry`) and optional
  bilateral constraints;
* :func:`simulate` -- run a scene with a time stepper chosen by name (``"default"``, ``"lcp"``,
  ``"impulse"``) and get a :class:`SimulationResult`;
* :func:`scene_from_urdf`, :func:`scene_from_mjcf`, :func:`scene_from_file` -- scenes from files
  (:mod:`sinews.sim.scenes_io`), :func:`place_on_ground`, :func:`lowest_point`.

Guide: docs/simulation.md.
"""

import importlib
import sys as _sys

from .. import _Package

_LAZY = {
    "Scene": "scene",
    "simulate": "simulate",
    "SimulationResult": "result",
    "STEPPERS": "simulate",
    "ContactProblem": "contact_problem",
    "build_contact_problem": "contact_problem",
    # scenes from files (src/sinews/sim/scenes_io.py, the VIEW engineer's)
    "scene_from_urdf": "scenes_io",
    "scene_from_mjcf": "scenes_io",
    "scene_from_file": "scenes_io",
    "place_on_ground": "scenes_io",
    "lowest_point": "scenes_io",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# ``sinews.sim.simulate`` stays the function after ``import sinews.sim.simulate`` (the
# package's own guard, sinews._Package)
_SHADOWED = frozenset({"simulate"})
_sys.modules[__name__].__class__ = _Package
