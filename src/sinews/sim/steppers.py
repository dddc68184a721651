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
Numba kernel, tables and workspaces built once per scene) that computes the same step; any step
it cannot take (another pair, a stagnating PGS, a bad state) goes through the general path.

``"lcp"`` -- :class:`LcpStepper`.  Anitescu--Potra with Drake's discretised LCP
(:meth:`sinews.contact.ConstraintSolver.solve_discretized_time_lcp`): polygonal cones of
``2 directions`` edges (``directions`` spanning directions per contact), force unknowns, and
CFM/ERP from the scene's contact ``stiffness`` and ``damping`` (:func:`sinews.contact.
cfm_erp_from_stiffness_damping`), so every active contact is the implicit spring-damper
``f = -k (phi + h phi'+) - b phi'+``; bilateral rows as Drake's ``G`` (``kG = erp phi_G / h``),
limits as ``L``.  Inelastic.

``"impulse"`` -- :class:`ImpulseStepper`.  Simbody's ``SemiExplicitEulerTimeStepper``
(Sherman & Uchida; reference notes part A4): proximal contacts (gap within ``scene.margin``), an
impact phase (``restitution="poisson"`` or ``"newton"`` or ``"none"``; ``impacts=
"simultaneous"`` or ``"sequential"``; effective COR zero below ``capture_speed``, the pair's COR
above ``min_cor_speed``, linear in between), a contact phase with the impulse solver (``solver=
"plus"`` or ``"pgs"``), then position projection (``projection="bilateral"``: a minimum-norm
correction of the position update only, ``"none"``).  Unlike Simbody's stepper, the bilateral
rows of ``scene.constraints`` are enforced (as unconditional rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._checks import integer, real_scalar
from .contact_problem import build_contact_problem, passive_joint_forces

if TYPE_CHECKING:
    from .scene import Scene

__all__ = ["Stepper", "StepOutput", "CoulombStepper", "LcpStepper", "ImpulseStepper", "STEPPERS",
           "make_stepper"]


_FAST = "fast"  # CoulombStepper._previous: the warm-start state lives in the compiled path


@dataclass
class StepOutput:
    """One step's result: new state, contacts and their impulses, solver statistics."""

    q: np.ndarray
    v: np.ndarray
    contacts: object
    impulses: np.ndarray  #: (k, 3) contact impulses [n, t1, t2] (on geom_b, N s)
    frames: np.ndarray  #: (k, 3, 3) rows n, t1, t2 (world)
    stats: dict = field(default_factory=dict)


def _one_of(x, name, options):
    if x not in options:
        raise ValueError(f"{name} must be one of {options}, got {x!r}")
    return x


def _nonneg(x, name):
    x = real_scalar(x, name)
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {x}")
    return x


class Stepper:
    """Base class: ``step(scene, q, v, tau, h) -> StepOutput``."""

    name = "stepper"

    def step(self, scene: Scene, q: np.ndarray, v: np.ndarray, tau: np.ndarray, h: float) -> StepOutput:
        raise NotImplementedError

    @staticmethod
    def _finish(scene, q, v_plus, h, v_position=None):
        from ..configuration import integrate

        vp = v_plus if v_position is None else v_position
        return integrate(scene.model, q, vp, h)

    @staticmethod
    def _frames(prob):
        k = prob.num_contacts
        if not k:
            return np.zeros((0, 3, 3))
        return np.stack([prob.contacts.normals, prob.t1, prob.t2], axis=1)


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
        fast = self._fast_for(scene)
        if fast is not None and type(q) is np.ndarray and type(v) is np.ndarray and type(tau) is np.ndarray \
                and q.dtype == np.float64 and v.dtype == np.float64 and tau.dtype == np.float64 \
                and q.shape == (scene.model.nq,) and v.shape == tau.shape == (scene.model.nv,):
            code, out = fast.step(scene, self, np.ascontiguousarray(q), np.ascontiguousarray(v),
                                  np.ascontiguousarray(tau), float(h))
            if out is not None:
                self._previous = _FAST
                return StepOutput(*out)
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


# ------------------------------------------------------------------------------------- impulse
def effective_cor(min_cor, v_capture, v_min_cor, v_impact):
    """Simbody's ``calcEffectiveCOR``: 0 at or below ``v_capture``, ``min_cor`` at or above
    ``v_min_cor``, ``1 - (1 - min_cor) v / v_min_cor`` in between (vectorised)."""
    v = np.asarray(v_impact, dtype=float)
    lin = 1.0 - (1.0 - min_cor) * v / np.maximum(v_min_cor, 1e-300)
    e = np.where(v >= v_min_cor, min_cor, lin)
    return np.where(v <= v_capture, 0.0, e)


class ImpulseStepper(Stepper):
    """The ``"impulse"`` stepper: Simbody's semi-explicit Euler (see the module docstring).

    Args:
        restitution: ``"poisson"`` (default), ``"newton"`` or ``"none"``.
        impacts: ``"simultaneous"`` (default) or ``"sequential"``.
        solver: ``"plus"`` (default) or ``"pgs"``.
        projection: ``"bilateral"`` (default) or ``"none"``.
        capture_speed: default ``2 consTol`` (consTol = ``scene.margin``).
        min_cor_speed: default ``capture_speed`` (every faster impact gets the pair's COR).
        max_impact_rounds: rounds of sequential impacts per step (default 10).
        fallback: when PLUS does not converge, solve that round again with PGS (counted in
            the step's ``fallbacks`` statistic).
    """

    name = "impulse"

    def __init__(self, restitution: str = "poisson", impacts: str = "simultaneous", solver: str = "plus",
                 projection: str = "bilateral", capture_speed: float | None = None,
                 min_cor_speed: float | None = None, max_impact_rounds: int = 10, fallback: bool = True) -> None:
        from ..contact.impulse_solver import PGSImpulseSolver, PLUSImpulseSolver

        self.restitution = _one_of(restitution, "restitution", ("poisson", "newton", "none"))
        self.impacts = _one_of(impacts, "impacts", ("simultaneous", "sequential"))
        self.solver_name = _one_of(solver, "solver", ("plus", "pgs"))
        self.projection = _one_of(projection, "projection", ("bilateral", "none"))
        self.capture_speed = None if capture_speed is None else _nonneg(capture_speed, "capture_speed")
        self.min_cor_speed = None if min_cor_speed is None else _nonneg(min_cor_speed, "min_cor_speed")
        self.max_impact_rounds = integer(max_impact_rounds, "max_impact_rounds", 1)
        self.solver = PLUSImpulseSolver() if solver == "plus" else PGSImpulseSolver(max_iters=500)
        self.fallback = (PGSImpulseSolver(max_iters=500) if solver == "plus" and fallback
                         else None)

    # rows: per proximal contact [n, t1, t2]; limits (normal only); bilateral rows
    def _records(self, k, nl, nb, mu, types):
        from ..contact.impulse_solver import UncondRT, UniContactRT

        uni = []
        for i in range(k):
            uni.append(UniContactRT(normal=3 * i, friction=(3 * i + 1, 3 * i + 2), sign=1,
                                    contact_type=types[i], eff_mu=float(mu[i])))
        for i in range(nl):
            uni.append(UniContactRT(normal=3 * k + i, friction=(), sign=1, contact_type=types[k + i]))
        unc = [UncondRT(mults=list(range(3 * k + nl, 3 * k + nl + nb)))] if nb else []
        return uni, unc

    def step(self, scene: Scene, q: np.ndarray, v: np.ndarray, tau: np.ndarray, h: float) -> StepOutput:
        from ..aba import aba
        from ..contact.impulse_solver import ContactType as CT

        cons_tol = max(scene.margin, 1e-12)
        v_cap = 2 * cons_tol if self.capture_speed is None else self.capture_speed
        v_min = max(v_cap, 0.0) if self.min_cor_speed is None else max(self.min_cor_speed, v_cap)
        prob = build_contact_problem(scene, q, v, np.zeros_like(v) if tau is None else tau, h)
        k = prob.num_contacts
        nl = prob.L.shape[0]
        nb = prob.G.shape[0]
        model = scene.model
        stats = dict(iterations=0, converged=True, error=0.0, solver=self.solver_name, impact_rounds=0)
        if k + nl + nb == 0:
            v_plus = prob.v_free
            return StepOutput(self._finish(scene, q, v_plus, h), v_plus, prob.contacts,
                              np.zeros((0, 3)), np.zeros((0, 3, 3)), stats)
        Gs = np.vstack([prob.J, prob.L, prob.G])
        A = Gs @ prob.Minv @ Gs.T
        A = 0.5 * (A + A.T)
        m = Gs.shape[0]
        nrows = np.concatenate([3 * np.arange(k), 3 * k + np.arange(nl)]).astype(int)
        mu = prob.contacts.friction
        cor = np.concatenate([prob.contacts.restitution, np.zeros(nl)])
        b = np.zeros(m)  # bilateral velocity targets: G u = -0 (projection fixes positions)
        u = v.copy()
        pi_total = np.zeros(m)
        iters = 0
        fallbacks = 0
        ok = True

        def apply(u, pi):
            return u - prob.Minv @ (Gs.T @ pi)

        def solve(types, verr, pi_expand=None, expanding=(), verr_applied=None, phase=0):
            nonlocal iters, ok
            nonlocal fallbacks
            pe = np.zeros(m) if pi_expand is None else pi_expand
            uni, unc = self._records(k, nl, nb, mu, types)
            res = self.solver.solve(phase, None, A, None, list(expanding), pe, verr, verr_applied,
                                    unconditional=unc, uni_contact=uni)
            iters += res.iterations
            if not res.converged and self.fallback is not None:
                # PLUS stalls on some redundant sliding configurations: retry with PGS
                uni, unc = self._records(k, nl, nb, mu, types)
                res = self.fallback.solve(phase, None, A, None, list(expanding), pe, verr,
                                          verr_applied, unconditional=unc, uni_contact=uni)
                iters += res.iterations
                fallbacks += 1
            ok = ok and res.converged
            return res.pi

        # ---------------- impact phase (velocity jump at the start of the step)
        if True:  # with restitution "none" impacts are still resolved, inelastically
            rounds = 0
            while rounds < (1 if self.impacts == "simultaneous" else self.max_impact_rounds):
                verr = Gs @ u - b
                vn = verr[nrows]
                impacting = vn < -0.1 * cons_tol
                if not impacting.any():
                    break
                rounds += 1
                e = np.where(impacting, effective_cor(cor, v_cap, v_min, -vn), 0.0)
                if self.restitution == "none":
                    e[:] = 0.0
                if self.impacts == "simultaneous":
                    types = [CT.PARTICIPATING] * (k + nl)
                else:
                    types = [CT.PARTICIPATING if impacting[i] else CT.OBSERVING for i in range(k + nl)]
                rhs = verr.copy()
                if self.restitution == "newton":
                    rhs[nrows] += e * vn
                pi = solve(types, rhs, phase=0)
                u = apply(u, pi)
                pi_total += pi
                if self.restitution == "poisson" and np.any(e > 0):
                    piE = np.zeros(m)
                    piE[nrows] = e * pi[nrows]
                    expanding = [int(nrows[i]) for i in range(k + nl) if e[i] > 0 and piE[nrows[i]] != 0]
                    if expanding:
                        types2 = list(types)
                        for i in range(k + nl):
                            if e[i] > 0 and piE[nrows[i]] != 0:
                                types2[i] = CT.KNOWN
                        pi2 = solve(types2, Gs @ u - b, pi_expand=piE, expanding=expanding, phase=0)
                        u = apply(u, pi2 + piE)
                        pi_total += pi2 + piE
                if self.impacts == "simultaneous":
                    # correction round if something is still impacting
                    verr = Gs @ u - b
                    if np.any(verr[nrows] < -0.1 * cons_tol):
                        pi = solve([CT.PARTICIPATING] * (k + nl), verr, phase=0)
                        u = apply(u, pi)
                        pi_total += pi
                    break
            stats["impact_rounds"] = rounds
        # ---------------- contact phase (forces over the step)
        tau_p = passive_joint_forces(model, q, u, np.zeros_like(u) if tau is None else tau, h,
                                     np.diag(prob.M))
        udot = aba(model, q, u, tau_p)
        proximal = np.concatenate([prob.contacts.distances <= cons_tol, prob.phi_L <= cons_tol])
        types = [CT.PARTICIPATING if proximal[i] else CT.OBSERVING for i in range(k + nl)]
        pi = solve(types, Gs @ u - b, verr_applied=Gs @ (h * udot), phase=1)
        u_plus = apply(u + h * udot, pi)
        pi_total += pi
        # ---------------- position projection (changes the position update only)
        u_pos = None
        if self.projection == "bilateral":
            phi_all = np.zeros(m)
            part = []
            for i in range(k + nl):
                d = prob.contacts.distances[i] if i < k else prob.phi_L[i - k]
                if d < 0 or (proximal[i] and pi[nrows[i]] < 0):  # penetrating or active
                    phi_all[nrows[i]] = d
                    part.append(int(nrows[i]))
            for j in range(nb):
                phi_all[3 * k + nl + j] = prob.phi_G[j]
                part.append(3 * k + nl + j)
            if part:
                res = self.solver.solve_bilateral(part, A, None, phi_all / h)
                u_pos = u_plus - prob.Minv @ (Gs.T @ res.pi)
        stats.update(iterations=iters, converged=ok, fallbacks=fallbacks)
        imp = np.zeros((k, 3))
        if k:
            P = -pi_total[: 3 * k].reshape(k, 3)  # forces = -multipliers
            imp = P
        return StepOutput(self._finish(scene, q, u_plus, h, u_pos), u_plus, prob.contacts, imp,
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
