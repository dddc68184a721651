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

from dataclasses import dataclass

import numpy as np

from .._checks import finite_vector, real_array
from ..spatial import Transform
from ._callbacks import wrench_entries_of
from ._kinematics import ConstraintKinematics
from .system import _groups

__all__ = ["ConstraintWrenches", "calc_forces", "calc_impulses"]


@dataclass
class ConstraintWrenches:
    """Per-body wrenches of one group: ``bodies`` (ids), ``frames`` (Transforms, see ``frame``),
    ``wrenches`` (k x 6, ``[moment; force]``), ``frame`` (``"local"`` or ``"world"``),
    ``group`` (the group object), ``kind`` (``"force"`` or ``"impulse"``)."""

    bodies: list
    frames: list
    wrenches: np.ndarray
    frame: str
    group: object
    kind: str

    def __len__(self):
        return len(self.bodies)

    def __iter__(self):
        return iter(zip(self.bodies, self.frames, self.wrenches))


def _multipliers(values, cs, g, name):
    if hasattr(values, "multipliers"):
        values = values.multipliers
    x = real_array(values, name, finite=False)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (one entry per row), got shape {x.shape}")
    if x.shape[0] == cs.size:
        x = x[g.rows]
    elif x.shape[0] != g.size:
        raise ValueError(
            f"{name} must have one entry per row of the set ({cs.size}) or of the group ({g.size}), got {x.shape[0]}"
        )
    return finite_vector(x, g.size, name)


def _wrenches(model, q, cs, group, values, frame, kind, name, data):
    if frame not in ("local", "world"):
        raise ValueError(f"frame must be 'local' or 'world', got {frame!r}")
    (g,), _ = _groups(model, cs, group)
    lam = _multipliers(values, cs, g, name)
    kin = ConstraintKinematics(model, q, None, data)
    bodies, frames, W = [], [], []
    entries = wrench_entries_of(g, kin, lam, "no wrenches to report")
    for e in entries:
        m, f = e.wrench[:3], e.wrench[3:]
        bodies.append(e.body)
        if frame == "world":
            frames.append(Transform(np.eye(3), e.p_world_frame.copy()))
            W.append(e.wrench.copy())
        else:
            R_b, o_b = kin.body_pose(e.body)
            R_bf = R_b.T @ e.R_world_frame
            frames.append(Transform(R_bf, R_b.T @ (e.p_world_frame - o_b)))
            Rt = e.R_world_frame.T
            W.append(np.concatenate([Rt @ m, Rt @ f]))
    return ConstraintWrenches(bodies, frames, np.array(W).reshape(-1, 6), frame, g, kind)


def calc_forces(model, q, cs, group, multipliers, frame="local", data=None) -> ConstraintWrenches:
    """Wrenches of ``group`` (group, index or name) for the multipliers of a forward-dynamics
    result (the result itself, a per-row vector of the set, or the group's own rows)."""
    return _wrenches(model, q, cs, group, multipliers, frame, "force", "multipliers", data)


def calc_impulses(model, q, cs, group, impulses, frame="local", data=None) -> ConstraintWrenches:
    """Impulsive wrenches of ``group`` for the impulses of :func:`compute_constraint_impulses`
    (same sign convention as :func:`calc_forces`: what the constraint applies to the body)."""
    if hasattr(impulses, "impulses"):
        impulses = impulses.impulses
    return _wrenches(model, q, cs, group, impulses, frame, "impulse", "impulses", data)
