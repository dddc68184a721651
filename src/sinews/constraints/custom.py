"""Custom constraints: a worked example of the :class:`~sinews.constraints.CustomConstraint`
interface, a 5-row pin (revolute) joint between two bodies.

How to write a custom constraint (see also ``docs/constraints.md``):

1. subclass :class:`~sinews.constraints.CustomConstraint` and call ``super().__init__(name,
   id, baumgarte, time_constant)``; set ``size`` (rows, fixed before the set is bound);
2. ``bind(model)``: resolve body names to ids with ``model._resolve_body(body, argname)``;
3. implement, for a :class:`~sinews.constraints.ConstraintKinematics` ``kin`` (``kin.q``,
   ``kin.v``, ``kin.body_pose``, ``kin.frame_pose``, ``kin.jacobian6``, ``kin.velocity6``,
   ``kin.bias6``; all world axes):

   * ``jacobian(kin)``: ``G`` (size x nv), velocity constraint ``G v = 0``;
   * ``gamma(kin)``: ``-dG/dt v``, so that ``G qdd = gamma``;
   * ``position_error(kin)`` and (optionally) ``velocity_error(kin)`` (default ``G v``), used by
     Baumgarte stabilisation and assembly;
   * ``wrench_entries(kin, multipliers)``: list of :class:`~sinews.constraints.WrenchEntry`
     (body, application frame, world wrench) with ``sum J6^T wrench = G^T multipliers``
     (used by ``calc_forces`` and the Kokkevis method);

4. ``cs.add_custom_constraint(c)``.  Test it as RBDL's documentation advises: passive
   simulations conserve energy, compare with an equivalent joint-coordinate model, compare the
   wrenches with hand statics, and inject known errors.

``PinJointConstraint``: frames P on the predecessor and S on the successor keep a common
origin (3 translation rows, predecessor-frame axes x, y, z) and a common ``pin_axis`` (0, 1 or
2 for x, y, z of P): 2 rotation rows about the other two axes of P.  Rows: ``Tx, Ty, Tz`` then
the two rotations in increasing axis order: identical to
``add_loop_constraint(..., axis=e_k)`` for those 5 axes (same ``G``, ``gamma``, errors and
wrenches), which the tests check.  (RBDL's ``CustomConstraintsTests.cc`` has the same example.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..spatial import as_transform as _as_transform
from .constraint import CustomConstraint, WrenchEntry

if TYPE_CHECKING:
    from ..model import BodyRef, Model, TransformLike
    from ._kinematics import ConstraintKinematics

__all__ = ["PinJointConstraint"]


class PinJointConstraint(CustomConstraint):
    """Revolute joint about ``pin_axis`` of frame P between two bodies (5 rows)."""

    size = 5

    def __init__(self, predecessor: BodyRef, successor: BodyRef, X_predecessor: TransformLike = None,
                 X_successor: TransformLike = None, pin_axis: int = 2, name: str | None = None,
                 id: int | None = None, baumgarte: bool = False, time_constant: float = 0.1) -> None:
        super().__init__(name, id, baumgarte, time_constant)
        if pin_axis not in (0, 1, 2):
            raise ValueError(f"pin_axis must be 0, 1 or 2 (x, y, z), got {pin_axis!r}")
        self.predecessor, self.successor = predecessor, successor
        self.X_predecessor = _as_transform(X_predecessor, "X_predecessor")
        self.X_successor = _as_transform(X_successor, "X_successor")
        self.pin_axis = pin_axis
        self.rot_axes = [k for k in range(3) if k != pin_axis]

    def bind(self, model: Model) -> None:
        self._p = model._resolve_body(self.predecessor, "predecessor")
        self._s = model._resolve_body(self.successor, "successor")

    def _frames(self, kin):
        R_P, p = kin.frame_pose(self._p, self.X_predecessor.R, self.X_predecessor.p)
        R_S, s = kin.frame_pose(self._s, self.X_successor.R, self.X_successor.p)
        return R_P, p, R_S, s

    def _axes(self, R_P):
        """World axes of the rows: translations along the 3 columns of R_P, rotations along 2."""
        D = np.zeros((5, 6))
        D[:3, 3:] = R_P.T  # row i: world direction of P's axis i
        D[3:, :3] = R_P.T[self.rot_axes]
        return D

    def jacobian(self, kin: ConstraintKinematics) -> np.ndarray:
        """``G (5, nv)``."""
        R_P, _, _, s = self._frames(kin)
        # predecessor evaluated at the successor point s: G v = d(phi)/dt for the translations
        Jrel = kin.jacobian6(self._s, s) - kin.jacobian6(self._p, s)
        return self._axes(R_P) @ Jrel

    def gamma(self, kin: ConstraintKinematics) -> np.ndarray:
        """``gamma (5,)``: ``G qdd = gamma``."""
        R_P, _, _, s = self._frames(kin)
        D = self._axes(R_P)
        vP, vS = kin.velocity6(self._p, s), kin.velocity6(self._s, s)
        aP, aS = kin.bias6(self._p, s), kin.bias6(self._s, s)
        w = vP[:3]
        W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        # a world axis attached to P turns at w x axis; the translation rows also see the
        # point s sliding over P, hence twice the rotation term there
        rot = -(D[3:, :3] @ (aS[:3] - aP[:3])) - (D[3:, :3] @ W.T) @ (vS[:3] - vP[:3])
        lin = -(D[:3, 3:] @ (aS[3:] - aP[3:])) - 2.0 * (D[:3, 3:] @ W.T) @ (vS[3:] - vP[3:])
        return np.concatenate([lin, rot])

    def position_error(self, kin: ConstraintKinematics) -> np.ndarray:
        """``phi (5,)``: translation in P axes, then the two rotation errors."""
        R_P, p, R_S, s = self._frames(kin)
        R = R_P.T @ R_S
        e_rot = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
        return np.concatenate([R_P.T @ (s - p), e_rot[self.rot_axes]])

    def velocity_error(self, kin: ConstraintKinematics) -> np.ndarray:
        """``G v (5,)``."""
        R_P, _, _, s = self._frames(kin)
        return self._axes(R_P) @ (kin.velocity6(self._s, s) - kin.velocity6(self._p, s))

    def wrench_entries(self, kin: ConstraintKinematics, multipliers: ArrayLike) -> list[WrenchEntry]:
        """``multipliers (5,)`` -> the wrenches on the predecessor and the successor."""
        R_P, _, R_S, s = self._frames(kin)
        w = self._axes(R_P).T @ np.asarray(multipliers, dtype=float)
        return [WrenchEntry(self._p, R_P, s.copy(), -w), WrenchEntry(self._s, R_S, s, w)]
