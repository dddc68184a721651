"""Constraint sets and constrained dynamics (RBDL's ``ConstraintSet`` family, done right).

* :class:`ConstraintSet`: rows (scalar equations) grouped into constraint groups (point
  contacts, loop closures, custom constraints); look-up by name, user id or row.
* System quantities: :func:`constraint_jacobian` (``G``), :func:`constraint_gamma`
  (``G qdd = gamma``, Baumgarte included), :func:`constraint_position_error`,
  :func:`constraint_velocity_error`, :func:`constrained_system` (``H, C, G, gamma``).
* :func:`forward_dynamics_constraints` (methods ``direct``, ``range_space_sparse``,
  ``null_space``, ``kokkevis``), :func:`compute_constraint_impulses`.
* :func:`calc_forces`, :func:`calc_impulses`: per-body constraint wrenches.
* :func:`assemble_q`, :func:`assemble_qdot`: assembly onto the constraint manifold.
* :func:`inverse_dynamics_constraints`, :func:`inverse_dynamics_constraints_relaxed`:
  constrained inverse dynamics.
* :class:`CoordinateConstraint`: ``q_a = r q_b + c`` couplings (gears, URDF mimic joints);
  loops closed by a cut joint (pin, ball, universal, ...) live in :mod:`sinews.loops`.
* :class:`CustomConstraint`: base class for user constraints
  (example: :class:`~sinews.constraints.custom.PinJointConstraint`).

Multipliers are physical: ``H qdd + C = tau + G^T lambda``.  Guide: ``docs/constraints.md``.
"""

from ._kinematics import ConstraintKinematics
from .assembly import AssemblyResult, VelocityAssemblyResult, assemble_q, assemble_qdot
from .constraint import Constraint, ContactConstraint, CustomConstraint, LoopConstraint, WrenchEntry
from .constraint_set import ConstraintSet
from .coordinate import CoordinateConstraint
from .custom import PinJointConstraint
from .forces import ConstraintWrenches, calc_forces, calc_impulses
from .forward_dynamics import METHODS, ConstrainedDynamicsResult, forward_dynamics_constraints
from .impulses import IMPULSE_METHODS, ConstraintImpulseResult, compute_constraint_impulses
from .inverse_dynamics import (
    ActuationMap,
    ConstrainedInverseDynamicsResult,
    actuation_map,
    inverse_dynamics_constraints,
    inverse_dynamics_constraints_relaxed,
    is_fully_actuated,
)
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
    "CoordinateConstraint",
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
    "AssemblyResult",
    "VelocityAssemblyResult",
    "assemble_q",
    "assemble_qdot",
    "ActuationMap",
    "ConstrainedInverseDynamicsResult",
    "actuation_map",
    "is_fully_actuated",
    "inverse_dynamics_constraints",
    "inverse_dynamics_constraints_relaxed",
]
