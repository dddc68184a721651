"""Closed-chain support of :func:`sinews.simulate`: constrained accelerations and the projection
of the state onto the constraint manifold after each step (Karana's ``ProjectConstraintError``).

Projection (mass-weighted, so that it is a plastic constraint impulse at the velocity level and
the smallest kinetic-metric correction at the position level):

* positions: Gauss-Newton steps ``[M G^T; G 0] [d; y] = [0; -phi]``, ``q <- integrate(q, d)``,
  until ``max |phi| <= tol``;
* velocities: ``[M G^T; G 0] [v+; y] = [M v; 0]``.

Rows of ``G`` that are zero up to rounding (the out-of-plane rows of a planar mechanism closed
by a ``pin`` loop joint, for instance) are left out of the KKT system: they constrain nothing, and
without them the system is regular and solved directly.  Other redundant constraints
(rank-deficient ``G``) get the minimum-norm least-squares answer.
"""

from __future__ import annotations

import numpy as np

from .._checks import NonFiniteResultError, integer, real_scalar
from ..configuration import integrate
from ..constraints._kinematics import Overflow
from ..constraints._linalg import dead_rows
from ..constraints.constraint_set import ConstraintSet
from ..constraints.forward_dynamics import forward_dynamics_constraints
from ..constraints.system import constraint_jacobian, constraint_position_error
from ..crba import crba
from .loop_joint import LoopJoint
from .nodes import cut_joint_forces

__all__ = ["ClosedChain"]


def _kkt(M, G, top, bottom):
    dead = dead_rows(G)
    if dead.any():
        G, bottom = G[~dead], bottom[~dead]
    n, c = M.shape[0], G.shape[0]
    A = np.zeros((n + c, n + c))
    A[:n, :n] = M
    A[:n, n:] = G.T
    A[n:, :n] = G
    b = np.concatenate([top, bottom])
    try:
        x = np.linalg.solve(A, b)
        if np.all(np.isfinite(x)) and np.linalg.norm(A @ x - b) <= 1e-9 * (1.0 + np.linalg.norm(b)):
            return x[:n]
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(A, b, rcond=None)[0][:n]


class ClosedChain:
    """Accelerations and projections of one constrained simulation."""

    def __init__(self, model, cs, method, projection, tol, iterations, data):
        if not isinstance(cs, ConstraintSet):
            raise ValueError(f"constraints must be a sinews.constraints.ConstraintSet, got {type(cs).__name__}")
        cs._ensure_bound(model)
        from ..constraints.forward_dynamics import METHODS

        if not (isinstance(method, str) and method in METHODS):
            raise ValueError(f"constraint_method must be one of {METHODS}, got {method!r}")
        if not isinstance(projection, (bool, np.bool_)):
            raise ValueError(f"projection must be True or False, got {projection!r}")
        tol = real_scalar(tol, "projection_tol")
        if not tol > 0:
            raise ValueError(f"projection_tol must be positive, got {tol}")
        self.model, self.cs, self.method, self.data = model, cs, method, data
        self.projection, self.tol = bool(projection), tol
        self.iterations = integer(iterations, "projection_iterations", minimum=1)
        self.forces = any(isinstance(g, LoopJoint) and g.has_cut_force for g in cs.groups)
        self.last_drift = (0.0, 0.0)
        self.failures = 0
        self.max_drift = 0.0

    def accel(self, q, v, tau):
        try:
            if self.forces:
                tau = tau + cut_joint_forces(self.model, q, v, self.cs, self.data)
            return forward_dynamics_constraints(self.model, q, v, tau, self.cs, self.method, data=self.data).qdd
        except Overflow as exc:
            raise NonFiniteResultError(str(exc)) from None

    def project(self, q, v, count=True, iterations=None):
        model, cs, data = self.model, self.cs, self.data
        iterations = self.iterations if iterations is None else iterations
        phi = constraint_position_error(model, q, cs, data=data)
        G = constraint_jacobian(model, q, cs, data=data)
        e = float(np.abs(phi).max()) if phi.size else 0.0
        ev = float(np.abs(G @ v).max()) if phi.size else 0.0
        self.last_drift = (e, ev)
        if count:
            self.max_drift = max(self.max_drift, e)
        if not self.projection or not phi.size:
            return q, v
        M = crba(model, q, data)
        zero = np.zeros(model.nv)
        for _ in range(iterations):
            if e <= self.tol:
                break
            q = integrate(model, q, _kkt(M, G, zero, -phi))
            phi = constraint_position_error(model, q, cs, data=data)
            G = constraint_jacobian(model, q, cs, data=data)
            e = float(np.abs(phi).max())
        if e > self.tol and count:
            self.failures += 1
        M = crba(model, q, data)
        v = _kkt(M, G, M @ v, np.zeros(G.shape[0]))
        if not count:
            self.last_drift = (e, float(np.abs(G @ v).max()))
        return q, v

    def check_initial(self) -> None:
        """After the projection of ``q0``: ``ValueError`` naming ``q0`` when the constraints are
        still open by more than ``max(tol, 1e-8)`` (a loop that cannot close from there: too
        short links, a configuration beyond the mechanism's range, or too far from closure
        for the projection's full Gauss-Newton steps)."""
        e = self.last_drift[0]
        if e > max(self.tol, 1e-8):
            raise ValueError(
                f"q0: the constraints cannot be closed from q0 (max |phi| = {e:.3g} after the initial "
                "projection): a loop that cannot close, or q0 too far from closure; solve q0 with "
                "sinews.loops.ConstraintKinematicsSolver(model, cs).solve_q first")

    def spring_energy(self, q) -> float:
        """Energy stored in the cut-joint springs."""
        if not self.forces:
            return 0.0
        return sum(g.cut_spring_energy(self.model, q, self.data) for g in self.cs.groups
                   if isinstance(g, LoopJoint) and g.has_cut_force)

    def stats(self) -> dict:
        return {"constraints": self.cs.size, "constraint_method": self.method, "projection": self.projection,
                "projection_failures": self.failures, "max_drift": self.max_drift}
