r"""Time steppers: one step ``(q, v) -> (q+, v+)`` of a scene, behind one interface.

Every stepper is velocity-level (semi-implicit Euler: ``q+ = integrate(q, v+, h)``) and builds
its contact problem with :func:`~sinews.sim.contact_problem.build_contact_problem`; they differ in
the friction cone, the solver and how impacts are treated.

``"default"`` -- :class:`CoulombStepper`.  Moreau--Jean time stepping with the exact 3-D Coulomb
cone: per step one FCLib local problem ``u = W r + q``, ``K* ∋ û ⊥ r ∈ K`` solved by
:func:`sinews.contact.fclib.solve` (PGS then ADMM) or ``solver="pgs"``/``"admm"``.  The normal
entries of ``q`` carry: ``phi / h`` for a gap (speculative contact: the bodies may close the gap
within the step, no earlier), ``erp phi / h`` for a penetration, and Newton restitution
``e u_n^-`` for contacts approaching faster than ``capture_speed`` that would close their gap in
this step.  Bilateral rows are eliminated exactly (projected inverse inertia); joint limits are
frictionless contacts.  Scenes of half-spaces, spheres, boxes, points and capsules without
bilateral constraints take a compiled path (:mod:`sinews.sim._fast_step`: the whole step in one
Numba kernel, tables and workspaces built once per scene) that assembles the same problem and
solves it with PGS plus a direct step on the contacts PGS has sticking (the least-norm solution
of their rows, :func:`sinews.sim._step_direct.polish`: a resting stack converges in a few sweeps
instead of hundreds); its reactions meet the same tolerance, so they can differ from the general
path's within it, or where the contact forces are not unique (four corners of a box).  Any step
it cannot take (another pair, a stagnating PGS, a bad state) goes through the general path.

``"lcp"`` -- :class:`LcpStepper`.  Anitescu--Potra with Drake's discretised LCP
(:meth:`sinews.contact.ConstraintSolver.solve_discretized_time_lcp`): polygonal cones of
``2 directions`` edges (``directions`` spanning directions per contact), force unknowns, and
CFM/ERP from the scene's contact ``stiffness`` and ``damping`` (:func:`sinews.contact.
cfm_erp_from_stiffness_damping`), so every active contact is the implicit spring-damper
``f = -k (phi + h phi'+) - b phi'+``; bilateral rows as Drake's ``G`` (``kG = erp phi_G / h``),
limits as ``L``.  Inelastic.

``"impulse"`` -- :class:`~sinews.sim.impulse_stepper.ImpulseStepper` (in its own module).
Simbody's ``SemiExplicitEulerTimeStepper`` (Sherman & Uchida; reference notes part A4): proximal
contacts (gap within ``scene.margin``), an impact phase (``restitution="poisson"``, ``"newton"``
or ``"none"``; ``impacts="simultaneous"``, ``"sequential"`` or ``"mixed"``; effective COR zero
below the capture speed, the pair's COR above the min-COR speed, linear in between), a contact
phase with the impulse solver (``solver="plus"`` or ``"pgs"``), then position projection
(``projection="bilateral"``, ``"unilateral"`` (inequalities on every proximal contact) or
``"none"``; positions only).  Unlike Simbody's stepper, the bilateral rows of
``scene.constraints`` are enforced (as unconditional rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._checks import integer, real_scalar
from ._stepper_base import Stepper, StepOutput, _nonneg, _one_of
from .contact_problem import build_contact_problem
from .impulse_stepper import ImpulseStepper, effective_cor

if TYPE_CHECKING:
    from .scene import Scene

__all__ = ["Stepper", "StepOutput", "CoulombStepper", "LcpStepper", "ImpulseStepper", "STEPPERS",
           "make_stepper", "effective_cor"]


_F64 = np.dtype(np.float64)
_ND = np.ndarray
_FAST = "fast"  # CoulombStepper._previous: the warm-start state lives in the compiled path


# ------------------------------------------------------------------------------------- default
class CoulombStepper(Stepper):
    """The ``"default"`` stepper (see the module docstring).

    Args:
        solver: ``"auto"`` (:func:`sinews.contact.fclib.solve`), ``"pgs"`` or ``"admm"``.
        tol: natural-map error tolerance of each solve; max_iter: iteration budget.
        capture_speed: approach speed (m/s) below which restitution is not applied.
        warm_start: start each solve from the previous step's reactions when the contact set
            (geometry pairs and point count) is unchanged (deterministic).
    """

    name = "default"

    def __init__(self, solver: str = "auto", tol: float = 1e-6, max_iter: int = 1000, capture_speed: float = 1e-2,
                 warm_start: bool = True) -> None:
        self.solver = _one_of(solver, "solver", ("auto", "pgs", "admm"))
        self.tol = real_scalar(tol, "tol")
        if self.tol <= 0:
            raise ValueError("tol must be > 0")
        self.max_iter = integer(max_iter, "max_iter", 1)
        self.capture_speed = _nonneg(capture_speed, "capture_speed")
        self.warm_start = bool(warm_start)
        self._previous = None
        self._fast = None

    def _fast_for(self, scene):
        """The compiled path's tables for ``scene`` (None: general path), rebuilt when the
        scene's geometry tables change."""
        from ._fast_step import FastCoulomb, eligible

        f = self._fast
        if f is not None and f[0] is scene and f[1] is scene._cache and f[2] is scene.constraints:
            return f[3]
        if self._previous is _FAST:
            self._previous = f[3].warm_state()
        fast = None
        if self.solver == "auto" and eligible(scene):
            fast = FastCoulomb(scene)
            if self._previous is not None:
                ga, gb, nl, r = self._previous
                fast.remember(ga, gb, nl, r)
        self._fast = (scene, scene._cache, scene.constraints, fast)
        return fast

    def step(self, scene: Scene, q: np.ndarray, v: np.ndarray, tau: np.ndarray, h: float) -> StepOutput:
        f = self._fast
        if f is not None and f[0] is scene and f[1] is scene._cache and f[2] is scene.constraints:
            fast = f[3]
        else:
            fast = self._fast_for(scene)
        if (fast is not None and type(q) is _ND and type(v) is _ND and type(tau) is _ND and q.dtype is _F64
                and v.dtype is _F64 and tau.dtype is _F64 and q.shape == fast.q_shape
                and v.shape == tau.shape == fast.v_shape):
            if not (q.flags.c_contiguous and v.flags.c_contiguous and tau.flags.c_contiguous):
                q, v, tau = np.ascontiguousarray(q), np.ascontiguousarray(v), np.ascontiguousarray(tau)
            out = fast.step(scene, self, q, v, tau, float(h))
            if out is not None:
                self._previous = _FAST
                return out
        return self._general_step(scene, q, v, tau, h, fast)

    def _advance(self, scene, q, v, h, keep):
        """Up to ``len(keep)`` steps with zero joint forces in one kernel call on the compiled
        path (:meth:`sinews.sim._fast_step.FastCoulomb.advance`), or None where the scene or
        the state does not take it; the steps are those :meth:`step` takes."""
        f = self._fast
        if f is not None and f[0] is scene and f[1] is scene._cache and f[2] is scene.constraints:
            fast = f[3]
        else:
            fast = self._fast_for(scene)
        if fast is None or not (type(q) is _ND and type(v) is _ND and q.dtype is _F64 and v.dtype is _F64
                                and q.shape == fast.q_shape and v.shape == fast.v_shape):
            return None
        res = fast.advance(scene, self, q, v, float(h), keep)
        if res[0]:
            self._previous = _FAST
        return res

    def _finish_step(self, scene, q, v, h, code):
        """The step from ``(q, v)`` (zero joint forces) whose kernel returned ``code`` in
        :meth:`_advance`: the rest of what :meth:`step` does after the kernel."""
        fast = self._fast[3]
        tau = np.zeros(v.shape[0])
        out = fast.after(code, self, q, float(h))
        if out is not None:
            self._previous = _FAST
            return out
        return self._general_step(scene, q, v, tau, h, fast)

    def _general_step(self, scene, q, v, tau, h, fast) -> StepOutput:
        from ..contact import fclib

        if self._previous is _FAST:
            self._previous = fast.warm_state() if fast is not None else None
        prob = build_contact_problem(scene, q, v, tau, h)
        k = prob.num_contacts
        nl = prob.L.shape[0]
        rhs_G = -scene.erp * prob.phi_G / h
        if k + nl == 0:
            C, v_b = prob.projected(rhs_G)
            v_plus = v_b
            stats = dict(iterations=0, converged=True, error=0.0, solver="none")
            return StepOutput(self._finish(scene, q, v_plus, h), v_plus, prob.contacts,
                              np.zeros((0, 3)), np.zeros((0, 3, 3)), stats)
        phi = np.concatenate([prob.contacts.distances, prob.phi_L])
        offset = np.where(phi >= 0.0, phi / h, scene.erp * phi / h)
        if k:
            un = prob.normal_rows @ v  # approach speed before the step
            un_free = prob.normal_rows @ prob.v_free
            e = prob.contacts.restitution
            # an impact: approaching faster than the capture speed and closing the gap this step
            bounce = (e > 0) & (un < -self.capture_speed) & (prob.contacts.distances + h * un_free <= 0)
            offset[:k] = np.where(bounce, e * un + scene.erp * np.minimum(prob.contacts.distances, 0) / h,
                                  offset[:k])
        problem, Jall, C, v_b = prob.fclib_problem(offset, rhs_G)
        r0 = None
        ga, gb = prob.contacts.geom_a, prob.contacts.geom_b
        pv = self._previous
        if (self.warm_start and pv is not None and pv[2] == nl and np.array_equal(pv[0], ga)
                and np.array_equal(pv[1], gb)):
            r0 = pv[3]
        solve = {"auto": fclib.solve, "pgs": fclib.solve_pgs, "admm": fclib.solve_admm}[self.solver]
        res = solve(problem, tol=self.tol, max_iter=self.max_iter, r0=r0)
        self._previous = (ga.copy(), gb.copy(), nl, res.r.copy())
        if fast is not None:
            fast.remember(ga, gb, nl, res.r)
        v_plus = v_b + C @ (Jall.T @ res.r)
        stats = dict(iterations=int(res.iterations), converged=bool(res.converged),
                     error=float(res.error), solver=res.solver)
        imp = res.r[: 3 * k].reshape(k, 3)
        return StepOutput(self._finish(scene, q, v_plus, h), v_plus, prob.contacts, imp,
                          self._frames(prob), stats)

    def reset(self) -> None:
        self._previous = None
        if self._fast is not None and self._fast[3] is not None:
            self._fast[3].forget()


# ------------------------------------------------------------------------------------- lcp
class LcpStepper(Stepper):
    """The ``"lcp"`` stepper (see the module docstring).

    Args:
        directions: spanning directions per contact (the cone has ``2 directions`` edges;
            2 gives Drake's 4-edge pyramid).
        limit_erp: ERP of joint-limit and bilateral rows (default 0.5, as Drake's RigidBodyPlant).
        tol: largest complementarity / feasibility error of an accepted LCP solution (Drake's own
            acceptance test, of order n max|MM| eps, also rejects pure rounding).
    """

    name = "lcp"

    def __init__(self, directions: int = 2, limit_erp: float = 0.5, tol: float = 1e-10) -> None:
        self.directions = integer(directions, "directions", 1)
        self.tol = real_scalar(tol, "tol")
        if self.tol <= 0:
            raise ValueError("tol must be > 0")
        self.limit_erp = real_scalar(limit_erp, "limit_erp")
        if not 0 < self.limit_erp <= 1:
            raise ValueError("limit_erp must be in (0, 1]")
        from ..contact.constraint_solver import ConstraintSolver

        self._solver = ConstraintSolver()

    def step(self, scene: Scene, q: np.ndarray, v: np.ndarray, tau: np.ndarray, h: float) -> StepOutput:
        from ..contact.constraint_solver import ConstraintSolver, cfm_erp_from_stiffness_damping

        prob = build_contact_problem(scene, q, v, tau, h)
        k = prob.num_contacts
        nl = prob.L.shape[0]
        cfm, erp = cfm_erp_from_stiffness_damping(scene.stiffness, scene.damping, h)
        phi = prob.contacts.distances
        kN = erp * phi / h
        gammaN = np.full(k, cfm)
        kL = self.limit_erp * prob.phi_L / h
        kG = self.limit_erp * prob.phi_G / h
        if k + nl + prob.G.shape[0] == 0:
            v_plus = prob.v_free
            stats = dict(iterations=0, converged=True, error=0.0, solver="none")
            return StepOutput(self._finish(scene, q, v_plus, h), v_plus, prob.contacts,
                              np.zeros((0, 3)), np.zeros((0, 3, 3)), stats)
        data = prob.drake_problem(self.directions, kN, gammaN, kL, np.zeros(nl), kG)
        sol = self._solver.solve_discretized_time_lcp(data, h)
        gf = ConstraintSolver.compute_generalized_force_from_constraint_forces(data, sol.cf)
        v_plus = prob.v_free + h * (prob.Minv @ gf) if sol.cf.size else prob.v_free
        r = self.directions
        fN = sol.cf[:k] if sol.cf.size else np.zeros(k)
        fF = sol.cf[k:k + k * r].reshape(k, r) if sol.cf.size else np.zeros((k, r))
        from .contact_problem import polygonal_directions

        ft = fF @ polygonal_directions(r)  # (k, 2) in (t1, t2)
        imp = h * np.column_stack([fN, ft]) if k else np.zeros((0, 3))
        err = float(max(sol.complementarity, sol.feasibility))
        # Drake's acceptance test (tolerances of order n max|MM| eps) also rejects solutions
        # whose infeasibility is pure rounding; the stepper accepts an LCP solution whose
        # complementarity and feasibility errors are below ``tol`` (status kept in the stats)
        ok = bool(sol.converged) or (sol.lcp_z.size > 0 and np.all(np.isfinite(sol.cf)) and err <= self.tol)
        stats = dict(iterations=int(sol.pivots), converged=ok, error=err, solver="lemke",
                     status=sol.status)
        return StepOutput(self._finish(scene, q, v_plus, h), v_plus, prob.contacts, imp,
                          self._frames(prob), stats)


STEPPERS = {"default": CoulombStepper, "lcp": LcpStepper, "impulse": ImpulseStepper}


def make_stepper(stepper: str | Stepper, **options: Any) -> Stepper:
    """A stepper from a name in :data:`STEPPERS` (with ``options``) or a :class:`Stepper`."""
    if isinstance(stepper, Stepper):
        if options:
            raise ValueError("stepper options are given to the Stepper's constructor")
        return stepper
    if stepper not in STEPPERS:
        raise ValueError(f"stepper must be one of {sorted(STEPPERS)} or a Stepper, got {stepper!r}")
    return STEPPERS[stepper](**options)
