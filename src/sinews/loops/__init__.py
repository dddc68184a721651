"""Loop closures by joint type, constraint nodes and constraint kinematics (Karana's
``LoopConstraintBase`` family on top of :mod:`sinews.constraints`).

* :class:`LoopJoint`: a source frame, a target frame (on another body or the world) and the
  cut joint allowed between them (``"pin"``, ``"slider"``, ``"cylindrical"``,
  ``"universal"``, ``"ball"``, ``"planar"``, ``"locked"``, ``"screw"``,
  ``"constant_velocity"``).  It is an ordinary constraint group of a
  :class:`~sinews.constraints.ConstraintSet` (``cs.add_loop_joint(...)``): every constrained
  algorithm (forward dynamics by all methods, impulses, assembly, inverse dynamics, wrenches,
  :func:`sinews.simulate`) takes it, mixed with contacts, coordinate and custom constraints.
  :meth:`LoopJoint.qmats` (``source_Q``, ``target_Q``, ``rel_Q``), :meth:`LoopJoint.cut_state`
  (the cut joint's coordinates), :meth:`LoopJoint.set_cut_force` (springs, dampers, motors).
* :func:`node_wrenches`: each :class:`ConstraintNode`'s reaction wrench after a dynamics call;
  :func:`cut_joint_forces`: the generalised forces of the cut-joint forces.
* :class:`ConstraintKinematicsSolver`: ``solve_q``/``solve_u``/``solve_udot`` with frozen
  driver coordinates.
* Coordinate couplings (gears, mimic joints):
  :class:`sinews.constraints.CoordinateConstraint`.

Guide and the Karana name table: ``docs/loops.md``.
"""

from .kinematics_solver import ConstraintKinematicsSolver, KinematicsSolution
from .loop_joint import JOINT_TYPES, ConstraintNode, CutJointState, LoopJoint, QMats, joint_type_name
from .nodes import NodeWrench, cut_joint_forces, node_wrenches

__all__ = [
    "LoopJoint",
    "ConstraintNode",
    "QMats",
    "CutJointState",
    "JOINT_TYPES",
    "joint_type_name",
    "NodeWrench",
    "node_wrenches",
    "cut_joint_forces",
    "ConstraintKinematicsSolver",
    "KinematicsSolution",
]
