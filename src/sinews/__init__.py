"""sinews: constrained rigid multibody dynamics at native speed from Python.

The core: a kinematic-tree :class:`Model`, spatial algebra (:mod:`sinews.spatial`), joints
(:mod:`sinews.joints`), and the rigid-body algorithms (RNEA, CRBA, ABA, kinematics, Jacobians,
energies, the branch-sparse ``L^T L`` factorisation).  Conventions: ``docs/conventions.md``.

Numba kernels compile lazily on first use (and are cached on disk); call :func:`warmup` to
compile them ahead of time.
"""

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
    frame_placement,
    point_acceleration,
    point_acceleration_6d,
    point_jacobian,
    point_jacobian_6d,
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

__version__ = "0.1.0.dev0"


def load_urdf(source, floating_base: bool = False, **kwargs):
    """Load a URDF file or XML string (needs the ``urdf`` extra); see :mod:`sinews.urdf`."""
    from .urdf import load_urdf as _load

    return _load(source, floating_base=floating_base, **kwargs)


def warmup() -> None:
    """Compile (or load from the on-disk cache) every core kernel now, on a tiny model."""
    from ._warmup import warmup as _warmup

    _warmup()


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
