r"""The ``"impulse"`` stepper: Simbody's ``SemiExplicitEulerTimeStepper`` (Sherman & Uchida;
reference notes part A4, ``../shared/reference/simbody_karana.md``; Simbody's
``Simbody/src/SemiExplicitEulerTimeStepper.cpp``).

One step of size ``h`` from ``(q, u)``, with ``G`` the stacked rows of the proximal contacts
(gap within ``consTol = scene.margin``; normal and two friction rows each), the joint limits and
the bilateral constraints, ``A = G M^-1 G^T``, and the multiplier convention of Simbody's impulse
solvers (generalized impulse ``-G^T pi``):

1. **Impact phase** (time frozen).  A contact whose normal velocity error is below
   ``-0.1 consTol`` is an *impacter*; the others are *observers*.  Its effective coefficient of
   restitution is :func:`effective_cor` of its approach speed, with the capture speed in use
   ``max(capture_speed, 2 consTol)`` and the min-COR speed in use
   ``max(min_cor_speed, capture speed in use)`` (Simbody's ``...InUse`` rules).

   * ``restitution="poisson"``: a compression solve ``A pi = verr`` (complementarity on the
     normals, Coulomb disks on the friction rows), then an expansion in which each impacter's
     normal carries the *given* impulse ``e pi_n`` (Simbody's ``Known`` contact: its friction
     still reacts) while the other contacts taking part react; ``"newton"``: the right-hand
     side gets ``+ e verr_n`` on the impacters, so that their normal velocity becomes
     ``-e verr_n`` (no expansion); ``"none"``: every ``e = 0``.
   * ``impacts="simultaneous"`` (Simbody's ``performSimultaneousImpact``): every proximal
     contact takes part (observers cannot be pushed into penetration): a compression round, an
     expansion round, and a plastic correction round if a contact still approaches.
   * ``impacts="sequential"``: rounds (at most ``max_impact_rounds``), each classifying the
     contacts from the current velocities into *expanders* (an expansion impulse is pending from
     the previous round), impacters and observers; only impacters (and the expanders' friction)
     take part, and a round solves its compression together with the pending expansion; the
     CORs are recomputed every round.  After the last round a pending expansion is applied on
     its own (penetration allowed); what still approaches is resolved plastically by the
     contact phase.
   * ``impacts="mixed"``: the sequential rounds, except that in the last allowed round the
     observers take part too, and a pending expansion is then applied in a final round with
     every proximal contact taking part: the remaining induced impacts are treated as
     simultaneous and plastic, with nothing left approaching (Simbody's ``Mixed`` model).

   The rounds follow Simbody's control flow (``stepTo``, ``performSimultaneousImpact``); they
   are checked against an independent replica of it in tests/test_sim_impulse_rounds.py.

2. **Contact phase**: the unconstrained acceleration ``udot`` (ABA), ``verr_applied = G h udot``,
   every proximal contact participating: ``u+ = u + h udot - M^-1 G^T pi``.

3. **Position projection** (the velocities are never changed, only the position update
   ``q+ = integrate(q, u+ - M^-1 G^T pi_p, h)``): ``projection="bilateral"`` solves
   ``A pi_p = phi / h`` as equalities (minimum norm) on the bilateral rows and on the normals of
   the contacts that are penetrating or were active in the contact phase; ``"unilateral"``
   (Simbody's ``Unilateral`` method) solves it as a complementarity problem on the normals of
   every proximal contact and limit (``pi_p <= 0``, ``phi / h - A pi_p >= 0``, no friction) with
   the bilateral rows as equalities, so penetrating contacts are pushed out and no proximal
   contact is pulled in or pushed into penetration; ``"none"``: ``q+ = integrate(q, u+, h)``.

Unlike Simbody's stepper, the bilateral rows of ``scene.constraints`` are enforced in every
phase (as unconditional rows).  As in Simbody, frictionless contacts have no friction rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import integer
from ._stepper_base import Stepper, StepOutput, _nonneg, _one_of
from .contact_problem import build_contact_problem, passive_joint_forces

if TYPE_CHECKING:
    from .scene import Scene

__all__ = ["ImpulseStepper", "effective_cor"]

_SIGNIFICANT = float(np.finfo(float).eps) ** 0.875  # Simbody's SignificantReal


def effective_cor(min_cor: ArrayLike, v_capture: float, v_min_cor: float, v_impact: ArrayLike) -> np.ndarray:
    """Simbody's ``ConditionalConstraint::calcEffectiveCOR``: 0 at or below ``v_capture``,
    ``min_cor`` at or above ``v_min_cor``, ``1 - (1 - min_cor) v / v_min_cor`` in between
    (vectorised over ``min_cor`` and ``v_impact``)."""
    v = np.asarray(v_impact, dtype=float)
    lin = 1.0 - (1.0 - min_cor) * v / np.maximum(v_min_cor, 1e-300)
    e = np.where(v >= v_min_cor, min_cor, lin)
    return np.where(v <= v_capture, 0.0, e)


class _Rounds:
    """The solver calls of one step: the rows, ``A``, the records, statistics."""

    def __init__(self, stepper, prob, Gs, A, k, nl, nb):
        self.stepper, self.prob, self.Gs, self.A = stepper, prob, Gs, A
        self.k, self.nl, self.nb = k, nl, nb
        self.m = Gs.shape[0]
        self.mu = prob.contacts.friction
        self.iters = 0
        self.fallbacks = 0
        self.ok = True

    def records(self, types, friction=True):
        """Run-time records: per proximal contact [n, t1, t2]; limits (normal only); bilateral."""
        from ..contact.impulse_solver import UncondRT, UniContactRT

        k, nl, nb = self.k, self.nl, self.nb
        uni = []
        for i in range(k + nl):
            if types[i] is None:
                continue  # not a record at all (its rows take no part)
            # a frictionless contact has no friction rows (Simbody's hasFriction())
            fr = (3 * i + 1, 3 * i + 2) if (friction and i < k and self.mu[i] > 0) else ()
            row = 3 * i if i < k else 3 * k + (i - k)
            uni.append(UniContactRT(normal=row, friction=fr, sign=1, contact_type=types[i],
                                    eff_mu=float(self.mu[i]) if i < k else 0.0))
        unc = [UncondRT(mults=list(range(3 * k + nl, 3 * k + nl + nb)))] if nb else []
        return uni, unc

    def solve(self, types, verr, pi_expand=None, expanding=(), verr_applied=None, phase=0,
              friction=True, participating=None):
        s = self.stepper
        pe = np.zeros(self.m) if pi_expand is None else pi_expand
        res = None
        for solver in (s.solver, s.fallback):
            if solver is None:
                break
            uni, unc = self.records(types, friction)
            if participating is None:  # every row with a record (the types say who takes part)
                participating = sorted([c.normal for c in uni] + [f for c in uni for f in c.friction]
                                       + [j for c in unc for j in c.mults])
            res = solver.solve(phase, participating, self.A, None, list(expanding), pe, verr, verr_applied,
                               unconditional=unc, uni_contact=uni)
            self.iters += res.iterations
            if res.converged:
                break
            if s.fallback is not None and solver is s.solver:
                self.fallbacks += 1  # PLUS stalls on some redundant sliding configurations
        self.ok = self.ok and res.converged
        return res.pi

    def apply(self, u, pi):
        return u - self.prob.Minv @ (self.Gs.T @ pi)


class ImpulseStepper(Stepper):
    """The ``"impulse"`` stepper: Simbody's semi-explicit Euler (see the module docstring for
    the phases and the exact semantics of every option).

    Args:
        restitution: ``"poisson"`` (default, expansion impulse ``e`` times the compression
            impulse), ``"newton"`` (rebound velocity ``-e`` times the approach velocity) or
            ``"none"`` (every impact plastic).
        impacts: ``"simultaneous"`` (default: one coupled impact of all proximal contacts),
            ``"sequential"`` (rounds of the impacting contacts only; what is left after
            ``max_impact_rounds`` is resolved plastically by the contact phase) or ``"mixed"``
            (sequential rounds, the last one with every proximal contact and plastic).
        solver: ``"plus"`` (default) or ``"pgs"``.
        projection: ``"bilateral"`` (default: equalities on the bilateral rows and on the
            penetrating or active contacts), ``"unilateral"`` (inequalities on every proximal
            contact, equalities on the bilateral rows) or ``"none"``.
        capture_speed: impacts at or below it are plastic; the value in use is
            ``max(capture_speed, 2 consTol)`` (consTol = ``scene.margin``; default ``2 consTol``).
        min_cor_speed: impacts at or above it get the pair's COR, slower ones more (linear up to
            1 at zero speed); in use ``max(min_cor_speed, capture speed in use)`` (default: the
            capture speed, so every impact faster than capture gets exactly the pair's COR).
        max_impact_rounds: rounds of sequential or mixed impacts per step (default 10, >= 1).
        fallback: when PLUS does not converge, solve that round again with PGS (up to 5000
            sweeps; counted in the step's ``fallbacks`` statistic).
    """

    name = "impulse"

    def __init__(self, restitution: str = "poisson", impacts: str = "simultaneous", solver: str = "plus",
                 projection: str = "bilateral", capture_speed: float | None = None,
                 min_cor_speed: float | None = None, max_impact_rounds: int = 10, fallback: bool = True) -> None:
        from ..contact.impulse_solver import PGSImpulseSolver, PLUSImpulseSolver

        self.restitution = _one_of(restitution, "restitution", ("poisson", "newton", "none"))
        self.impacts = _one_of(impacts, "impacts", ("simultaneous", "sequential", "mixed"))
        self.solver_name = _one_of(solver, "solver", ("plus", "pgs"))
        self.projection = _one_of(projection, "projection", ("bilateral", "unilateral", "none"))
        self.capture_speed = None if capture_speed is None else _nonneg(capture_speed, "capture_speed")
        self.min_cor_speed = None if min_cor_speed is None else _nonneg(min_cor_speed, "min_cor_speed")
        self.max_impact_rounds = integer(max_impact_rounds, "max_impact_rounds", 1)
        self.solver = PLUSImpulseSolver() if solver == "plus" else PGSImpulseSolver(max_iters=500)
        # the fallback runs only where PLUS failed (redundant stacks): up to 5000 sweeps, which
        # the three-box drop needs on its hardest steps (500 left 3% of them unconverged)
        self.fallback = (PGSImpulseSolver(max_iters=5000) if solver == "plus" and fallback
                         else None)

    def cor_speeds(self, cons_tol: float) -> tuple[float, float]:
        """The capture and min-COR speeds in use for a constraint tolerance ``cons_tol``
        (Simbody's ``getDefaultImpact...VelocityInUse``)."""
        cons_tol = _nonneg(cons_tol, "cons_tol")
        v_cap = max(0.0 if self.capture_speed is None else self.capture_speed, 2.0 * cons_tol)
        v_min = max(0.0 if self.min_cor_speed is None else self.min_cor_speed, v_cap)
        return v_cap, v_min

    def step(self, scene: Scene, q: np.ndarray, v: np.ndarray, tau: np.ndarray, h: float) -> StepOutput:
        from ..aba import aba
        from ..contact.impulse_solver import ContactType as CT

        cons_tol = max(scene.margin, 1e-12)
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
        r = _Rounds(self, prob, Gs, A, k, nl, nb)
        nrows = np.concatenate([3 * np.arange(k), 3 * k + np.arange(nl)]).astype(int)
        # ---------------- impact phase (velocity jump at the start of the step)
        u, pi_total, rounds = self._impact_phase(r, v, nrows, cons_tol)
        stats["impact_rounds"] = rounds
        # ---------------- contact phase (forces over the step)
        tau_p = passive_joint_forces(model, q, u, np.zeros_like(u) if tau is None else tau, h,
                                     np.diag(prob.M))
        udot = aba(model, q, u, tau_p)
        dist = np.concatenate([prob.contacts.distances, prob.phi_L])
        proximal = dist <= cons_tol
        types = [CT.PARTICIPATING if proximal[i] else CT.OBSERVING for i in range(k + nl)]
        pi = r.solve(types, Gs @ u, verr_applied=Gs @ (h * udot), phase=1)
        u_plus = r.apply(u + h * udot, pi)
        pi_total += pi
        # ---------------- position projection (changes the position update only)
        u_pos = self._project(r, u_plus, dist, proximal, pi, nrows, h)
        stats.update(iterations=r.iters, converged=r.ok, fallbacks=r.fallbacks)
        imp = np.zeros((k, 3))
        if k:
            imp = -pi_total[: 3 * k].reshape(k, 3)  # forces = -multipliers
        return StepOutput(self._finish(scene, q, u_plus, h, u_pos), u_plus, prob.contacts, imp,
                          self._frames(prob), stats)

    # ------------------------------------------------------------------------ impact phase
    def _impact_phase(self, r, v, nrows, cons_tol):
        """Rounds of impacts (module docstring, step 1): ``(u, pi_total, rounds)``."""
        v_cap, v_min = self.cor_speeds(cons_tol)
        cor = np.concatenate([r.prob.contacts.restitution, np.zeros(r.nl)])

        def cors(vn, impacting):  # Simbody's calcCoefficientsOfRestitution
            if self.restitution == "none":
                return np.zeros(len(vn))
            return np.where(impacting, effective_cor(cor, v_cap, v_min, -vn), 0.0)

        if self.impacts == "simultaneous":
            return self._simultaneous(r, v.copy(), nrows, cons_tol, cors)
        return self._induced_rounds(r, v.copy(), nrows, cons_tol, cors)

    def _simultaneous(self, r, u, nrows, cons_tol, cors):
        """Simbody's ``performSimultaneousImpact``: compression, expansion, correction."""
        from ..contact.impulse_solver import ContactType as CT

        n_uni = len(nrows)
        everyone = [CT.PARTICIPATING] * n_uni
        pi_total = np.zeros(r.m)
        verr = r.Gs @ u
        vn = verr[nrows]
        impacting = vn < -0.1 * cons_tol
        if not impacting.any():
            return u, pi_total, 0
        rounds = 1
        e = cors(vn, impacting)
        rhs = verr.copy()
        if self.restitution == "newton":
            rhs[nrows] += e * vn
        pi = r.solve(everyone, rhs, phase=0)  # compression (Newton: the whole impact)
        u = r.apply(u, pi)
        pi_total += pi
        if self.restitution == "poisson" and np.any(e > 0):
            piE = np.zeros(r.m)
            piE[nrows] = e * pi[nrows]
            known = (e > 0) & (piE[nrows] != 0)
            if known.any():  # expansion: the impacters' normals given, the rest reacts
                rounds += 1
                types = [CT.KNOWN if known[i] else CT.PARTICIPATING for i in range(n_uni)]
                pi2 = r.solve(types, r.Gs @ u, pi_expand=piE,
                              expanding=[int(j) for j in nrows[known]], phase=0)
                u = r.apply(u, pi2 + piE)
                pi_total += pi2 + piE
        verr = r.Gs @ u
        if np.any(verr[nrows] < -0.1 * cons_tol):  # correction round, plastic
            rounds += 1
            pi = r.solve(everyone, verr, phase=0)
            u = r.apply(u, pi)
            pi_total += pi
        return u, pi_total, rounds

    def _induced_rounds(self, r, u, nrows, cons_tol, cors):
        """Simbody's sequential and mixed rounds (the loop of ``SemiExplicitEulerTimeStepper::
        stepTo``): each round classifies from the current velocities -- *expanders* (a Poisson
        expansion impulse from the previous round is pending: normal given, friction reacts),
        *impacters* (approaching faster than ``0.1 consTol``: take part) and *observers*
        (watched only, except in the last mixed round where they take part too) -- and solves
        the impacters' compression together with the pending expansion.  The CORs come from
        each round's velocities.  After the last allowed round a pending expansion is applied in
        a final round: alone (sequential: penetration allowed; the contact phase then resolves it
        plastically) or with every proximal contact taking part (mixed)."""
        from ..contact.impulse_solver import ContactType as CT

        mixed = self.impacts == "mixed"
        n_uni = len(nrows)
        pi_total = np.zeros(r.m)
        piE = np.zeros(r.m)  # the expansion impulse still to apply
        rounds = 0

        def classify(vn, include_all, expansion_only=False):
            expander = piE[nrows] != 0
            impacter = ~expander & (vn < -0.1 * cons_tol) & (not expansion_only)
            observer_type = CT.PARTICIPATING if include_all else CT.OBSERVING
            types = [CT.KNOWN if expander[i] else CT.PARTICIPATING if impacter[i] else observer_type
                     for i in range(n_uni)]
            return types, impacter, [int(j) for j in nrows[expander]]

        def one_round(u, types, rhs, expanding):  # unknown impulses plus the pending expansion
            pi = r.solve(types, rhs, pi_expand=piE, expanding=expanding, phase=0)
            return r.apply(u, pi + piE), pi

        while True:
            verr = r.Gs @ u
            vn = verr[nrows]
            last = rounds >= self.max_impact_rounds - 1
            types, impacter, expanding = classify(vn, mixed and last)
            if not (impacter.any() or expanding):
                break
            rounds += 1
            e = cors(vn, impacter)
            rhs = verr.copy()
            if self.restitution == "newton":
                rhs[nrows] += e * vn
            u, pi = one_round(u, types, rhs, expanding)
            pi_total += pi + piE
            # the next expansion: e times this round's compression impulse on each impacter
            piE = np.zeros(r.m)
            if self.restitution == "poisson":
                grow = impacter & (e > 0) & (np.abs(pi[nrows]) >= _SIGNIFICANT)
                piE[nrows[grow]] = e[grow] * pi[nrows[grow]]
            if last:
                if piE.any():
                    rounds += 1
                    types, _, expanding = classify(r.Gs[nrows] @ u, mixed, expansion_only=not mixed)
                    u, pi = one_round(u, types, r.Gs @ u, expanding)
                    pi_total += pi + piE
                break
        return u, pi_total, rounds

    # ------------------------------------------------------------------- position projection
    def _project(self, r, u_plus, dist, proximal, pi, nrows, h):
        """The velocity used for the position update (module docstring, step 3), or ``None``."""
        from ..contact.impulse_solver import ContactType as CT

        if self.projection == "none":
            return None
        n_uni = len(nrows)
        bil = np.arange(3 * r.k + r.nl, r.m)
        phi = np.zeros(r.m)
        phi[nrows] = dist
        phi[bil] = r.prob.phi_G
        if self.projection == "bilateral":
            part = [int(nrows[i]) for i in range(n_uni)
                    if dist[i] < 0 or (proximal[i] and pi[nrows[i]] < 0)]  # penetrating or active
            part += [int(j) for j in bil]
            if not part:
                return None
            res = self.solver.solve_bilateral(part, r.A, None, phi / h)
            r.iters += res.iterations
            r.ok = r.ok and res.converged
            return u_plus - r.prob.Minv @ (r.Gs.T @ res.pi)
        # unilateral: every proximal normal as an inequality (no friction), bilateral equalities
        types = [CT.PARTICIPATING if proximal[i] else None for i in range(n_uni)]
        if not (proximal.any() or r.nb):
            return None
        part = [int(nrows[i]) for i in range(n_uni) if proximal[i]] + [int(j) for j in bil]
        pi_p = r.solve(types, phi / h, phase=2, friction=False, participating=part)
        return u_plus - r.prob.Minv @ (r.Gs.T @ pi_p)
