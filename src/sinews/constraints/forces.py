"""Constraint wrenches per body: what a group's multipliers (or impulses) apply to each body.

For a group g with per-row multipliers ``lambda_g`` (from
:func:`~sinews.constraints.forward_dynamics_constraints`) or impulses ``Lambda_g`` (from
:func:`~sinews.constraints.compute_constraint_impulses`), every body involved receives a
spatial wrench ``[moment; force]`` acting at a frame:

* contact: the body, at the contact point (body axes in ``"local"``), receives
  ``f = sum_i n_i lambda_i``; the ground (body 0), at the same point (world axes), ``-f``;
* loop: the successor, at frame S (S axes in ``"local"``), receives ``+w``; the predecessor
  receives ``-w`` at the same point ``s`` (P axes in ``"local"``; ``s = p`` when the loop is
  closed); ``w = sum_i d_i lambda_i`` with ``d_i`` the world spatial axes;
* custom: whatever its ``wrench_entries`` reports.

``frame="local"``: ``frames[k]`` is ``X_body_frame`` (pose of the application frame in body
``bodies[k]``), the wrench is in that frame's axes about its origin.  ``frame="world"``:
``frames[k]`` is ``X_world_frame`` with identity rotation at the world application point, the
wrench in world axes about that point (RBDL's ``resolveAllInRootFrame``, but the body ids are
kept).  The wrenches reproduce the generalised constraint force:
``sum_k J6(bodies[k], point_k)^T wrench_world_k = G_g^T lambda_g``.

Source: RBDL ``ConstraintSet::calcForces`` / ``calcImpulses`` (rbdl.md section 1.5), with one
sign convention: the wrench the constraint applies *to* the body (for impulses too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from ._callbacks import check_frame, group_wrenches
from .constraint import ConstraintWrenches
from .system import _groups

if TYPE_CHECKING:
    from ..model import Data, Model
    from .constraint import Constraint
    from .constraint_set import ConstraintSet

__all__ = ["ConstraintWrenches", "calc_forces", "calc_impulses"]


def calc_forces(model: Model, q: ArrayLike, cs: ConstraintSet, group: int | str | Constraint,
                multipliers: object, frame: str = "local", data: Data | None = None) -> ConstraintWrenches:
    """Wrenches of ``group`` (group, index or name) at ``q (nq,)`` for the multipliers of a
    forward-dynamics result (the result itself, a per-row vector ``(cs.size,)`` of the set, or
    the group's own rows ``(group.size,)``)."""
    check_frame(frame)
    (g,), _ = _groups(model, cs, group)
    return group_wrenches(model, q, cs, g, multipliers, frame, "force", data)


def calc_impulses(model: Model, q: ArrayLike, cs: ConstraintSet, group: int | str | Constraint,
                  impulses: object, frame: str = "local", data: Data | None = None) -> ConstraintWrenches:
    """Impulsive wrenches of ``group`` at ``q (nq,)`` for the impulses of :func:`compute_constraint_impulses`
    (same sign convention as :func:`calc_forces`: what the constraint applies to the body)."""
    check_frame(frame)
    (g,), _ = _groups(model, cs, group)
    return group_wrenches(model, q, cs, g, impulses, frame, "impulse", data)
