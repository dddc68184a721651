r"""Constraint kinematics: configurations, velocities and accelerations that satisfy the
constraints, with chosen coordinates frozen (Karana's ``ConstraintKinematicsSolver``).

A driver coordinate (a crank angle, a leg length) is frozen with
:meth:`ConstraintKinematicsSolver.freeze` and the dependent coordinates are solved:

* :meth:`~ConstraintKinematicsSolver.solve_q`: Gauss-Newton on the position errors
  :math:`\phi(q)` with the minimum-norm least-squares step on the free velocity directions,
  :math:`d_f = -G_f^+ \phi`, applied with :func:`sinews.integrate` (manifold-safe for
  quaternion joints) and a step-halving line search on :math:`\|\phi\|`;
* :meth:`~ConstraintKinematicsSolver.solve_u`: the free velocities closest to the given ones
  with :math:`G v = 0` (:math:`v_f \mathrel{+}= -G_f^+ G v`);
* :meth:`~ConstraintKinematicsSolver.solve_udot`: the free accelerations with
  :math:`G \ddot q = \gamma` (no Baumgarte terms: the exact kinematic acceleration level).

Every solve returns a :class:`KinematicsSolution` (value, residual ``max |error|``,
iterations, ``converged``, a message).  A loop that cannot close (links too short, a driver
beyond the mechanism's range) ends with ``converged=False`` and a message naming the group with
the largest error; :meth:`KinematicsSolution.check` turns that into an exception.  Frozen
coordinates are indices of the *velocity* vector (for one-dof and other Euclidean joints the
same as in ``q``); freezing ``"q"`` holds the coordinate in :meth:`solve_q`, ``"u"`` in
:meth:`solve_u` and :meth:`solve_udot` (a prescribed driver speed has a prescribed
acceleration; Karana's ``solveUdot`` also changes frozen accelerations, sinews keeps them).

Sources: Karana kdFlex ``ConstraintKinematicsSolver`` (``freezeCoord``, ``CKFrozenCoordType``;
``shared/reference/simbody_karana.md`` B5); Nocedal & Wright, *Numerical Optimization* (2006)
section 10.3 (Gauss-Newton, minimum-norm steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import finite_vector, integer
from ..configuration import _check_unit_quaternions, integrate
from ..constraints.constraint import _real_scalar
from ..constraints.constraint_set import ConstraintSet
from ..constraints.system import (constraint_gamma, constraint_jacobian, constraint_position_error,
                                  constraint_velocity_error)

if TYPE_CHECKING:
    from ..model import Data, Model

__all__ = ["ConstraintKinematicsSolver", "KinematicsSolution"]

_WHICH = ("q", "u", "both")


@dataclass
class KinematicsSolution:
    """Result of a constraint-kinematics solve: ``value`` (q, v or qdd per ``level``: ``"q"``,
    ``"u"``, ``"udot"``), ``residual`` (``max |phi|``, ``max |G v|`` or ``max |G qdd - gamma|``),
    ``iterations``, ``converged``, ``message`` (why it stopped), ``rank`` (of the free
    columns of G at the end)."""

    value: np.ndarray
    level: str
    residual: float
    iterations: int
    converged: bool
    message: str
    rank: int

    @property
    def q(self) -> np.ndarray:
        return self.value

    def check(self) -> "KinematicsSolution":
        """``self`` if converged, else ``RuntimeError`` with the message."""
        if not self.converged:
            raise RuntimeError(self.message)
        return self


class ConstraintKinematicsSolver:
    """Solve the constraints of ``cs`` (bound to ``model`` on creation) for the coordinates not
    frozen; see the module docstring."""

    def __init__(self, model: Model, cs: ConstraintSet, data: Data | None = None) -> None:
        if not isinstance(cs, ConstraintSet):
            raise ValueError(f"cs must be a sinews.constraints.ConstraintSet, got {type(cs).__name__}")
        cs._ensure_bound(model)
        self.model, self.cs, self.data = model, cs, data
        self._frozen = {"q": set(), "u": set()}

    # ------------------------------------------------------------------ frozen coordinates
    def _index(self, joint, index):
        b = self.model.body(self.model._resolve_body(joint, "joint"))
        if b.id == 0 or b.joint is None or b.joint.nv == 0:
            raise ValueError(f"joint: body {b.name!r} has no joint coordinates to freeze")
        index = integer(index, "index", minimum=0)
        if index >= b.joint.nv:
            raise ValueError(f"index={index} is out of range for the joint of {b.name!r} ({b.joint.nv} velocity coordinates)")
        return b.idx_v + index

    @staticmethod
    def _which(which):
        if which not in _WHICH:
            raise ValueError(f"which must be one of {_WHICH}, got {which!r}")
        return ("q", "u") if which == "both" else (which,)

    def freeze(self, joint: int | str, index: int = 0, which: str = "both") -> "ConstraintKinematicsSolver":
        """Hold coordinate ``index`` of ``joint`` (child body id or name) at ``which`` level
        (``"q"``, ``"u"`` or ``"both"``); returns ``self``."""
        i = self._index(joint, index)
        for w in self._which(which):
            self._frozen[w].add(i)
        return self

    def unfreeze(self, joint: int | str | None = None, index: int = 0,
                 which: str = "both") -> "ConstraintKinematicsSolver":
        """Release one coordinate, or every coordinate when ``joint`` is None."""
        if joint is None:
            for w in self._which(which):
                self._frozen[w].clear()
            return self
        i = self._index(joint, index)
        for w in self._which(which):
            self._frozen[w].discard(i)
        return self

    def frozen(self, which: str = "q") -> np.ndarray:
        """Velocity indices frozen at level ``"q"`` or ``"u"``."""
        if which not in ("q", "u"):
            raise ValueError(f"which must be 'q' or 'u', got {which!r}")
        return np.array(sorted(self._frozen[which]), dtype=np.int64)

    def _free(self, which):
        mask = np.ones(self.model.nv, dtype=bool)
        mask[list(self._frozen[which])] = False
        return mask

    # ------------------------------------------------------------------ solves
    def _report(self, phi):
        """The group with the largest error, for messages."""
        if not phi.size:
            return ""
        r = int(np.argmax(np.abs(phi)))
        g = self.cs.group_by_assigned_id(r)
        return f"; largest error {abs(phi[r]):.3g} in group {g.label!r} (row {r - g.row_start} of {g.size})"

    def solve_q(self, q: ArrayLike, tol: float = 1e-10, max_iter: int = 50) -> KinematicsSolution:
        """Configuration near ``q`` with ``max |phi| <= tol`` moving only the coordinates not
        frozen at ``"q"`` level."""
        model = self.model
        q = finite_vector(q, model.nq, "q").copy()
        if model.compiled.has_quaternion:
            _check_unit_quaternions(model.compiled, q, "q")
        tol = _tol(tol)
        max_iter = integer(max_iter, "max_iter", minimum=0)
        free = self._free("q")
        phi = constraint_position_error(model, q, self.cs, data=self.data)
        res = float(np.abs(phi).max()) if phi.size else 0.0
        rank = 0
        for it in range(max_iter + 1):
            G = constraint_jacobian(model, q, self.cs, data=self.data)[:, free]
            rank = int(np.linalg.matrix_rank(G)) if G.size else 0
            if res <= tol:
                return KinematicsSolution(q, "q", res, it, True, f"converged in {it} iterations", rank)
            if it == max_iter:
                break
            df = np.linalg.lstsq(G, -phi, rcond=None)[0] if G.size else np.zeros(0)
            d = np.zeros(model.nv)
            d[free] = df
            step, improved = 1.0, False
            for _ in range(30):  # step halving on ||phi||
                q_new = integrate(model, q, d, step)
                phi_new = constraint_position_error(model, q_new, self.cs, data=self.data)
                if np.linalg.norm(phi_new) < np.linalg.norm(phi):
                    improved = True
                    break
                step *= 0.5
            if not improved:
                return KinematicsSolution(
                    q, "q", res, it, False,
                    f"the constraints cannot be closed from here (no step reduces the error; a loop that "
                    f"cannot close, a driver beyond the mechanism's range or too many frozen coordinates): "
                    f"max |phi| = {res:.3g} > tol = {tol:g} after {it} iterations{self._report(phi)}", rank)
            q, phi = q_new, phi_new
            res = float(np.abs(phi).max())
        return KinematicsSolution(q, "q", res, max_iter, False,
                                  f"not converged after {max_iter} iterations: max |phi| = {res:.3g} > tol = {tol:g}"
                                  f"{self._report(phi)}", rank)

    def _linear(self, level, x0, G, rhs, tol, which):
        free = self._free(which)
        Gf = G[:, free]
        x = x0.copy()
        if Gf.size:
            x[free] += np.linalg.lstsq(Gf, rhs - G @ x0, rcond=None)[0]
        r = G @ x - rhs
        res = float(np.abs(r).max()) if r.size else 0.0
        scale = 1.0 + (float(np.abs(G @ x).max()) if r.size else 0.0) + (float(np.abs(rhs).max()) if r.size else 0.0)
        ok = res <= tol * scale
        rank = int(np.linalg.matrix_rank(Gf)) if Gf.size else 0
        msg = "solved" if ok else (f"the {level} constraints cannot be met with the coordinates left free: "
                                   f"residual {res:.3g}{self._report(r)}")
        return KinematicsSolution(x, level, res, 1, ok, msg, rank)

    def solve_u(self, q: ArrayLike, v: ArrayLike, tol: float = 1e-10) -> KinematicsSolution:
        """Velocities closest to ``v`` (free ones changed, frozen ``"u"`` ones held) with
        ``G(q) v = 0``."""
        q = finite_vector(q, self.model.nq, "q")
        v = finite_vector(v, self.model.nv, "v").copy()
        G = constraint_jacobian(self.model, q, self.cs, data=self.data)
        return self._linear("u", v, G, np.zeros(G.shape[0]), _tol(tol), "u")

    def solve_udot(self, q: ArrayLike, v: ArrayLike, qdd: ArrayLike, tol: float = 1e-10) -> KinematicsSolution:
        """Accelerations closest to ``qdd`` (frozen ``"u"`` ones held) with
        ``G(q) qdd = gamma(q, v)`` (no Baumgarte terms)."""
        q = finite_vector(q, self.model.nq, "q")
        v = finite_vector(v, self.model.nv, "v")
        qdd = finite_vector(qdd, self.model.nv, "qdd").copy()
        G = constraint_jacobian(self.model, q, self.cs, data=self.data)
        gam = constraint_gamma(self.model, q, v, self.cs, baumgarte=False, data=self.data)
        return self._linear("udot", qdd, G, gam, _tol(tol), "u")

    def errors(self, q: ArrayLike, v: ArrayLike | None = None) -> tuple[float, float | None]:
        """``(max |phi|, max |G v|)`` at a state (the second is None without ``v``)."""
        phi = constraint_position_error(self.model, q, self.cs, data=self.data)
        e = float(np.abs(phi).max()) if phi.size else 0.0
        if v is None:
            return e, None
        ve = constraint_velocity_error(self.model, q, v, self.cs, data=self.data)
        return e, float(np.abs(ve).max()) if ve.size else 0.0


def _tol(tol) -> float:
    tol = _real_scalar(tol, "tol")
    if not (math.isfinite(tol) and tol > 0.0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    return tol
