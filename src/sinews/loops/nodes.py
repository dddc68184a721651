"""Constraint nodes: the reaction wrench at each end of every loop after a dynamics call, and
the generalised forces of the cut-joint springs, dampers and motors.

For a :class:`~sinews.loops.LoopJoint` with world directions ``D`` and multipliers ``lambda``
(physical: ``H qdd + C = tau + G^T lambda``), the constraint applies ``w = D^T lambda`` to the
target body at the target origin ``o_t`` and ``-w`` to the source body at the same point.
:func:`node_wrenches` reports each as the wrench on the node's body **about the node origin**:

* ``wrench_world``: world axes, ``[moment about the node origin; force]``;
* ``wrench_node``: the same wrench in the node frame's axes.

The two wrenches of a loop balance: shifted to a common point their sum is zero (Newton's third
law across the cut); ``sum_k J6(body_k, o_k)^T wrench_world_k = G_loop^T lambda_loop``.  Karana
computes the same node forces inside its dynamics algorithms (``ConstraintNode``); sinews returns
results instead of storing them on the model, so they are computed from the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..constraints._kinematics import ConstraintKinematics
from ..constraints.constraint_set import ConstraintSet
from .loop_joint import ConstraintNode, LoopJoint

if TYPE_CHECKING:
    from ..model import Data, Model

__all__ = ["NodeWrench", "node_wrenches", "cut_joint_forces"]


@dataclass(frozen=True)
class NodeWrench:
    """The reaction wrench on one :class:`ConstraintNode`'s body: ``node``, ``p_world_node``
    (node origin), ``R_world_node``, ``wrench_world`` and ``wrench_node`` (``[moment about the
    node origin; force]`` in world and node axes)."""

    node: ConstraintNode
    p_world_node: np.ndarray
    R_world_node: np.ndarray
    wrench_world: np.ndarray
    wrench_node: np.ndarray

    @property
    def name(self) -> str:
        return self.node.name


def _check_set(model, cs):
    if not isinstance(cs, ConstraintSet):
        raise ValueError(f"cs must be a sinews.constraints.ConstraintSet, got {type(cs).__name__}")
    return cs._ensure_bound(model)


def _per_row(cs, multipliers):
    if hasattr(multipliers, "multipliers"):
        multipliers = multipliers.multipliers
    from .._checks import finite_vector

    return finite_vector(multipliers, cs.size, "multipliers")


def node_wrenches(model: Model, q: ArrayLike, cs: ConstraintSet, multipliers: object, data: Data | None = None) -> dict:
    """``{node name: NodeWrench}`` at ``q (nq,)`` for every node of every loop of ``cs`` (``"<loop
    label>/source"``, ``"<loop label>/target"``; a target on the world has no node).

    ``multipliers``: a forward-dynamics (or impulse) result of ``cs`` or its per-row vector
    (impulses give impulsive wrenches)."""
    _check_set(model, cs)
    if hasattr(multipliers, "impulses") and not hasattr(multipliers, "qdd"):
        multipliers = multipliers.impulses
    lam = _per_row(cs, multipliers)
    kin = ConstraintKinematics(model, q, None, data)
    out = {}
    for g in cs.groups:
        if not isinstance(g, LoopJoint):
            continue
        R_s, o_s, R_t, o_t = g.frames(kin)
        w = g.world_directions(R_s, R_t).T @ lam[g.rows]
        for node, R, o, W in ((g.source_node, R_s, o_s, -w), (g.target_node, R_t, o_t, w)):
            if node is None:
                continue
            m = W[:3] + np.cross(o_t - o, W[3:])  # moment about the node origin
            ww = np.concatenate([m, W[3:]])
            out[node.name] = NodeWrench(node, o.copy(), R.copy(), ww, np.concatenate([R.T @ m, R.T @ W[3:]]))
    return out


def cut_joint_forces(model: Model, q: ArrayLike, v: ArrayLike, cs: ConstraintSet,
                     data: Data | None = None) -> np.ndarray:
    """The generalised force (length nv) of the cut-joint springs, dampers and motors of every
    :class:`LoopJoint` of ``cs`` (:meth:`LoopJoint.set_cut_force`) at ``q (nq,)``, ``v (nv,)``; add it to
    ``tau``.  Zero when no loop carries forces."""
    _check_set(model, cs)
    kin = ConstraintKinematics(model, q, v, data)
    total = np.zeros(model.nv)
    for g in cs.groups:
        if isinstance(g, LoopJoint) and g.has_cut_force:
            R, p, V = g._relative(kin, True)
            H = g.motion_map(R)
            from .loop_joint import _COORD_NAMES, CutJointState

            u = np.linalg.pinv(H) @ V if H.shape[1] else np.zeros(0)
            st = CutJointState(g.joint_type, _COORD_NAMES[g.joint_type], g._coordinates(R, p), u, R, p, V, H)
            total += g._generalized(kin, g.cut_force(st))
    return total
