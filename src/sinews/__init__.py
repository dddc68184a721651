"""sinews: constrained rigid multibody dynamics at native speed from Python.

The core: a kinematic-tree :class:`Model`, spatial algebra (:mod:`sinews.spatial`), joints
(:mod:`sinews.joints`), and the rigid-body algorithms (RNEA, CRBA, ABA, kinematics, Jacobians,
energies, the branch-sparse ``L^T L`` factorisation).  Conventions: ``docs/conventions.md``.

Numba kernels compile lazily on first use (and are cached on disk); call :func:`warmup` to
compile them ahead of time.  ``import sinews`` itself is cheap: the submodules (and NumPy, Numba,
SciPy) are imported on first use of a name.  Cold start and the kernel cache:
``docs/cold-start.md``.
"""

import importlib as _importlib
import sys as _sys
import types as _types
from typing import TYPE_CHECKING

# The public names and the module that defines each.  ``import sinews`` imports none of them (nor
# NumPy, Numba or SciPy): the first access to a name imports its module (PEP 562 ``__getattr__``)
# and stores the name in this module, so later look-ups are plain attribute reads.
_LAZY = {
    "joints": None,  # submodules
    "spatial": None,
    "models": None,  # sinews.models.names() / load(name): samples and example-robot-data robots
    "aba": "aba",
    "crba": "crba",
    "rnea": "rnea",
    "nonlinear_effects": "rnea",
    "gravity_torques": "rnea",
    "difference": "configuration",
    "integrate": "configuration",
    "neutral": "configuration",
    "normalize": "configuration",
    "random_configuration": "configuration",
    "kinetic_energy": "energy",
    "mechanical_energy": "energy",
    "potential_energy": "energy",
    "Placements": "kinematics",
    "body_jacobian": "kinematics",
    "body_placement": "kinematics",
    "center_of_mass": "kinematics",
    "com_jacobian": "kinematics",
    "com_velocity": "kinematics",
    "forward_kinematics": "kinematics",
    "frame_jacobian": "kinematics",
    "frame_jacobian_time_variation": "kinematics",
    "point_jacobian_time_variation": "kinematics",
    "point_jacobian_time_variation_6d": "kinematics",
    "frame_placement": "kinematics",
    "point_acceleration": "kinematics",
    "point_acceleration_6d": "kinematics",
    "point_jacobian": "kinematics",
    "point_jacobian_6d": "kinematics",
    "point_position": "kinematics",
    "point_velocity": "kinematics",
    "point_velocity_6d": "kinematics",
    "forward_dynamics_lagrangian": "lagrangian",
    "LTLFactor": "ltl",
    "ltl_factor": "ltl",
    "minv_times": "minv",
    "minverse": "minv",
    "Body": "model",
    "Data": "model",
    "Frame": "model",
    "Model": "model",
    "Trajectory": "simulate",
    "simulate": "simulate",
    "SpatialInertia": "spatial",
    "Transform": "spatial",
}

# Submodules that ``import sinews`` used to import eagerly: ``sinews.kinematics`` and the like
# still resolve without an explicit ``import sinews.kinematics``.
_SUBMODULES = frozenset(
    {
        "algorithms", "configuration", "energy", "joints", "kinematics", "lagrangian", "ltl", "minv",
        "model", "spatial", "_checks", "_kernels", "_kinematics_kernels", "_layout", "_minv_kernels",
        "geometry", "sim", "data",
    }
)

# Submodules named like the function they define: ``sinews.aba`` is the function, even after
# ``import sinews.aba`` (which would otherwise bind the module to the package attribute).
_SHADOWED = frozenset({"aba", "crba", "rnea", "simulate"})


def __getattr__(name: str):
    if name == "__version__":  # one version source: the installed distribution's metadata
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version(__name__)
        except PackageNotFoundError:  # a source tree that was never installed
            value = "0+unknown"
        globals()[name] = value
        return value
    module = _LAZY.get(name, "")
    if module == "" and name not in _SUBMODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module is None or module == "":
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        value = getattr(_importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)


class _Package(_types.ModuleType):
    """The class of the ``sinews`` module object, and of subpackages with the same kind of names
    (``sinews.sim``): keeps the function names of the package's ``_SHADOWED`` bound to the
    functions when the import system binds their same-named submodules to the package."""

    def __setattr__(self, name, value):
        if (
            name in self.__dict__.get("_SHADOWED", ())
            and isinstance(value, _types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from . import joints, spatial
    from .aba import aba
    from .configuration import difference, integrate, neutral, normalize, random_configuration
    from .crba import crba
    from .energy import kinetic_energy, mechanical_energy, potential_energy
    from .kinematics import (
        Placements,
        body_jacobian,
        body_placement,
        center_of_mass,
        com_jacobian,
        com_velocity,
        forward_kinematics,
        frame_jacobian,
        frame_jacobian_time_variation,
        frame_placement,
        point_acceleration,
        point_acceleration_6d,
        point_jacobian,
        point_jacobian_6d,
        point_jacobian_time_variation,
        point_jacobian_time_variation_6d,
        point_position,
        point_velocity,
        point_velocity_6d,
    )
    from .lagrangian import forward_dynamics_lagrangian
    from .ltl import LTLFactor, ltl_factor
    from .minv import minv_times, minverse
    from .model import Body, Data, Frame, Model
    from .rnea import gravity_torques, nonlinear_effects, rnea
    from .simulate import Trajectory, simulate
    from .spatial import SpatialInertia, Transform

def load_urdf(source, floating_base: bool = False, **kwargs):
    """Load a URDF file or XML string (needs the ``urdf`` extra); see :mod:`sinews.urdf`."""
    from .urdf import load_urdf as _load

    return _load(source, floating_base=floating_base, **kwargs)


def warmup(processes: int | None = None, simulation: bool = False, constraints: bool = False,
           batch: bool = False) -> None:
    """Compile (or load from the on-disk cache) every core kernel now, on a tiny model.

    ``processes``: how many processes compile at once, this one included (``None``: one per
    CPU, at most four; ``1``: this process only); the others are child processes that compile
    into the on-disk cache, from which this process then loads their kernels.  ``simulation``:
    also the kernels of the simulation steppers (collision, contact rows, the default stepper's
    fused step, as the demos do before their first step; Lemke for ``"lcp"``; ``"impulse"``)
    and of the contact solvers (FCLib's sparse kernels, Simbody's PGS and PLUS).
    ``constraints``: also the kernels of the compiled constrained-dynamics paths
    (``forward_dynamics_constraints`` of contacts-only and mixed sets by every compiled method,
    ``compute_constraint_impulses``).  ``batch``: also the kernels of :mod:`sinews.batch`.  See
    ``docs/cold-start.md``."""
    from . import _warmup

    import numbers

    if processes is not None:
        if isinstance(processes, bool) or not isinstance(processes, numbers.Integral) or processes < 1:
            raise ValueError(f"processes: expected None or an integer >= 1, got {processes!r}")
        processes = int(processes)  # (a NumPy integer too)
    for name, flag in (("simulation", simulation), ("constraints", constraints), ("batch", batch)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name}: expected True or False, got {flag!r}")
    _warmup.warmup(processes)
    if simulation:
        _warmup.warmup_simulation(processes)
        _warmup.warmup_steppers(processes)
    if constraints:
        _warmup.warmup_constrained(processes)
    if batch:
        _warmup.warmup_batch()


__all__ = [
    "Model",
    "Data",
    "Body",
    "Frame",
    "Transform",
    "SpatialInertia",
    "Placements",
    "LTLFactor",
    "joints",
    "spatial",
    "rnea",
    "nonlinear_effects",
    "gravity_torques",
    "crba",
    "aba",
    "minv_times",
    "minverse",
    "forward_dynamics_lagrangian",
    "ltl_factor",
    "forward_kinematics",
    "body_placement",
    "point_position",
    "point_velocity",
    "point_acceleration",
    "point_velocity_6d",
    "point_acceleration_6d",
    "point_jacobian",
    "point_jacobian_6d",
    "body_jacobian",
    "frame_jacobian",
    "frame_jacobian_time_variation",
    "point_jacobian_time_variation",
    "point_jacobian_time_variation_6d",
    "frame_placement",
    "center_of_mass",
    "com_velocity",
    "com_jacobian",
    "kinetic_energy",
    "potential_energy",
    "mechanical_energy",
    "neutral",
    "integrate",
    "difference",
    "normalize",
    "random_configuration",
    "load_urdf",
    "simulate",
    "Trajectory",
    "warmup",
]
