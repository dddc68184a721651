"""Constraint sets and constrained dynamics (RBDL's ``ConstraintSet`` family, done right).

* :class:`ConstraintSet`: rows (scalar equations) grouped into constraint groups (point
  contacts, loop closures, custom constraints); look-up by name, user id or row.
* System quantities: :func:`constraint_jacobian` (``G``), :func:`constraint_gamma`
  (``G qdd = gamma``, Baumgarte included), :func:`constraint_position_error`,
  :func:`constraint_velocity_error`, :func:`constrained_system` (``H, C, G, gamma``).
* :func:`forward_dynamics_constraints` (methods ``direct``, ``range_space_sparse``,
  ``null_space``, ``kokkevis``), :func:`compute_constraint_impulses`.
* :func:`calc_forces`, :func:`calc_impulses`: per-body constraint wrenches.
* :class:`CustomConstraint`: base class for user constraints
  (example: :class:`~sinews.constraints.custom.PinJointConstraint`).

Multipliers are physical: ``H qdd + C = tau + G^T lambda``.  Guide: ``docs/constraints.md``.
"""

from .constraint import Constraint, ContactConstraint, CustomConstraint, LoopConstraint, WrenchEntry
from .constraint_set import ConstraintSet
from .custom import PinJointConstraint
from .forces import ConstraintWrenches, calc_forces, calc_impulses
from .forward_dynamics import METHODS, ConstrainedDynamicsResult, forward_dynamics_constraints
from .impulses import IMPULSE_METHODS, ConstraintImpulseResult, compute_constraint_impulses
from ._kinematics import ConstraintKinematics
from .system import (
    ConstrainedSystem,
    baumgarte_terms,
    constrained_system,
    constraint_gamma,
    constraint_jacobian,
    constraint_position_error,
    constraint_velocity_error,
)

__all__ = [
    "ConstraintSet",
    "Constraint",
    "CustomConstraint",
    "ContactConstraint",
    "LoopConstraint",
    "WrenchEntry",
    "PinJointConstraint",
    "ConstraintKinematics",
    "constraint_jacobian",
    "constraint_gamma",
    "constraint_position_error",
    "constraint_velocity_error",
    "baumgarte_terms",
    "constrained_system",
    "ConstrainedSystem",
    "forward_dynamics_constraints",
    "ConstrainedDynamicsResult",
    "METHODS",
    "compute_constraint_impulses",
    "ConstraintImpulseResult",
    "IMPULSE_METHODS",
    "calc_forces",
    "calc_impulses",
    "ConstraintWrenches",
]


def _warn(modname, exc):
    import warnings

    warnings.warn(f"sinews.constraints.{modname} could not be imported: {exc!r}", ImportWarning, stacklevel=3)


def _reexport(modname):
    """Re-export the public names of part B's modules (assembly, inverse dynamics) if present."""
    import importlib

    try:
        mod = importlib.import_module(f"{__name__}.{modname}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{modname}":
            return
        _warn(modname, exc)
        return
    except Exception as exc:  # a broken optional module must not break the core API
        _warn(modname, exc)
        return
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in vars(mod) if not n.startswith("_")]
    for n in names:
        globals()[n] = getattr(mod, n)
        if n not in __all__:
            __all__.append(n)


for _m in ("assembly", "inverse_dynamics"):
    _reexport(_m)
del _m
