"""Coordinate constraints: linear couplings between joint coordinates (gears, belts, couplers,
URDF mimic joints).

One :class:`CoordinateConstraint` is one row of a :class:`~sinews.constraints.ConstraintSet`:

    q[joint][index] = ratio * q[mimicked][mimicked_index] + offset

(Karana's ``CoordinateConstraint``; URDF ``<mimic joint=mimicked multiplier=ratio
offset=offset/>`` read on the mimicking ``joint``).  Joints are named by their child body (id or
name) and must have as many configuration as velocity coordinates (revolute, prismatic,
helical, multi-axis joints); the coordinate ``index`` of a joint is then the same in ``q`` and
``v``, with ``i = idx_v(joint) + index`` and ``k = idx_v(mimicked) + mimicked_index``:

* Jacobian: ``G = e_i^T - ratio e_k^T`` (constant), velocity constraint ``v_i = ratio v_k``;
* ``gamma = -dG/dt v = 0``;
* position error ``phi = q_i - ratio q_k - offset``, velocity error ``G v``;
* wrenches: the multiplier ``lambda`` is a generalised force ``+lambda`` on coordinate i and
  ``-ratio lambda`` on coordinate k.  A generalised force ``f`` on a joint coordinate is the
  pair of wrenches ``+W`` on the joint's child body and ``-W`` on its parent body with
  ``W = S (S^T S)^-1 e f`` (``S`` = the joint's world-axes motion subspace, 6 x nv_joint):
  ``J6_child^T W - J6_parent^T W = S^T W = e f`` touches that joint only.  These are the
  forces the gear teeth (or the belt) transmit, reported by ``calc_forces`` and used by the
  Kokkevis method.

Source: Karana kdFlex ``CoordinateConstraint`` (``shared/reference/simbody_karana.md`` B1, B8);
URDF ``<mimic>`` (ROS URDF XML specification, joint element).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .constraint import Constraint, WrenchEntry, _check_body, _real_scalar

if TYPE_CHECKING:
    from ..model import Model
    from ._kinematics import ConstraintKinematics

__all__ = ["CoordinateConstraint"]


def _check_index(index, name):
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) or int(index) < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {index!r}")
    return int(index)


def _check_finite_scalar(x, name):
    x = _real_scalar(x, name)
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


class CoordinateConstraint(Constraint):
    """``q[joint][index] = ratio * q[mimicked][mimicked_index] + offset`` (one row).

    ``joint``, ``mimicked``: the joints' child bodies (id or name), resolved at bind time
    (``KeyError`` naming the argument); ``ratio``, ``offset``: finite real numbers.  Add it with
    :meth:`ConstraintSet.add_coordinate_constraint` or ``cs.add_custom_constraint(c)``.
    """

    type = "coordinate"
    size = 1

    def __init__(self, joint: int | str, mimicked: int | str, ratio: float = 1.0, offset: float = 0.0,
                 index: int = 0, mimicked_index: int = 0, name: str | None = None, id: int | None = None,
                 baumgarte: bool = False, time_constant: float = 0.1) -> None:
        super().__init__(name, id, baumgarte, time_constant)
        self.joint = _check_body(joint, "joint")
        self.mimicked = _check_body(mimicked, "mimicked")
        self.ratio = _check_finite_scalar(ratio, "ratio")
        self.offset = _check_finite_scalar(offset, "offset")
        self.index = -1  # group index, set by the ConstraintSet
        self.coordinate = _check_index(index, "index")
        self.mimicked_coordinate = _check_index(mimicked_index, "mimicked_index")
        self._iv = self._kv = None

    def __repr__(self) -> str:
        return (f"<CoordinateConstraint q[{self.joint!r}][{self.coordinate}] = {self.ratio:g} * "
                f"q[{self.mimicked!r}][{self.mimicked_coordinate}] + {self.offset:g} index={self.index} "
                f"name={self.name!r} row={self.row_start}>")

    # ------------------------------------------------------------------ binding
    def bind(self, model: Model) -> None:
        ids = []
        for arg, body, idx, idxname in (("joint", self.joint, self.coordinate, "index"),
                                        ("mimicked", self.mimicked, self.mimicked_coordinate, "mimicked_index")):
            b = model.body(model._resolve_body(body, arg))
            if b.id == 0 or b.joint is None or b.joint.nv == 0:
                raise ValueError(f"{arg}: body {b.name!r} is not moved by a joint with coordinates "
                                 "(the world or a fixed joint)")
            if b.joint.nq != b.joint.nv:
                raise ValueError(f"{arg}: the joint of {b.name!r} ({b.joint.kind}) has nq != nv: a coordinate "
                                 "constraint couples scalar coordinates (revolute, prismatic, helical, multi-axis)")
            if idx >= b.joint.nv:
                raise ValueError(f"{idxname}={idx} is out of range for the joint of {b.name!r} "
                                 f"({b.joint.kind}, {b.joint.nv} coordinates)")
            ids.append(b)
        jb, mb = ids
        self._joint_body, self._mimicked_body = jb.id, mb.id
        self._iv = jb.idx_v + self.coordinate
        self._kv = mb.idx_v + self.mimicked_coordinate
        self._iq = jb.idx_q + self.coordinate
        self._kq = mb.idx_q + self.mimicked_coordinate
        if self._iv == self._kv:
            raise ValueError(f"joint and mimicked designate the same coordinate ({jb.name!r}, index "
                             f"{self.coordinate}): a coordinate cannot be coupled to itself")

    def compiled_coordinate_rows(self) -> dict[str, np.ndarray] | None:
        """The rows as arrays for compiled kernels (after bind): ``iv``, ``iv_mimicked``,
        ``ratio``, ``iq``, ``iq_mimicked``, ``offset`` (one entry per row): ``G = e_iv - ratio
        e_iv_mimicked``, ``gamma = 0``, ``phi = q[iq] - ratio q[iq_mimicked] - offset``."""
        if self._iv is None:
            return None
        i = lambda x: np.array([x], dtype=np.int64)  # noqa: E731
        f = lambda x: np.array([x], dtype=np.float64)  # noqa: E731
        return {"iv": i(self._iv), "iv_mimicked": i(self._kv), "ratio": f(self.ratio), "iq": i(self._iq),
                "iq_mimicked": i(self._kq), "offset": f(self.offset)}

    def _row(self, nv):
        g = np.zeros(nv)
        g[self._iv] += 1.0
        g[self._kv] -= self.ratio
        return g

    # ------------------------------------------------------------------ rows
    def jacobian(self, kin: ConstraintKinematics) -> np.ndarray:
        return self._row(kin.nv).reshape(1, -1)

    def gamma(self, kin: ConstraintKinematics) -> np.ndarray:
        return np.zeros(1)

    def position_error(self, kin: ConstraintKinematics) -> np.ndarray:
        q = kin.q
        return np.array([q[self._iq] - self.ratio * q[self._kq] - self.offset])

    def velocity_error(self, kin: ConstraintKinematics) -> np.ndarray:
        v = kin.v
        return np.array([v[self._iv] - self.ratio * v[self._kv]])

    def wrench_entries(self, kin: ConstraintKinematics, multipliers: ArrayLike) -> list[WrenchEntry]:
        lam = float(np.asarray(multipliers, float).reshape(-1)[0])
        out = []
        for body, iv_col, f in ((self._joint_body, self._iv, lam), (self._mimicked_body, self._kv, -self.ratio * lam)):
            b = kin.model.bodies[body]
            iv0, nvj = b.idx_v, b.joint.nv
            S = np.vstack([kin.Sw[:, iv0:iv0 + nvj], kin.SvO[:, iv0:iv0 + nvj]])  # world axes, world origin
            e = np.zeros(nvj)
            e[iv_col - iv0] = f
            W_O = S @ np.linalg.solve(S.T @ S, e)  # [moment about the world origin; force]
            R, o = kin.body_pose(body)
            W = np.concatenate([W_O[:3] - np.cross(o, W_O[3:]), W_O[3:]])  # about the child origin
            out.append(WrenchEntry(body, R, o, W))
            out.append(WrenchEntry(b.parent, R, o.copy(), -W))
        return out
