r"""The ``"impulse"`` stepper: Simbody's ``SemiExplicitEulerTimeStepper`` (Sherman & Uchida;
reference notes part A4, ``../shared/reference/simbody_karana.md``).

Per step: proximal contacts (gap within ``scene.margin``), an impact phase (``restitution=
"poisson"`` or ``"newton"`` or ``"none"``; ``impacts="simultaneous"`` or ``"sequential"``;
effective COR zero below ``capture_speed``, the pair's COR above ``min_cor_speed``, linear in
between), a contact phase with the impulse solver (``solver="plus"`` or ``"pgs"``), then position
projection (``projection="bilateral"``: a minimum-norm correction of the position update only,
``"none"``).  Unlike Simbody's stepper, the bilateral rows of ``scene.constraints`` are enforced
(as unconditional rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._checks import integer
from ._stepper_base import Stepper, StepOutput, _nonneg, _one_of
from .contact_problem import build_contact_problem, passive_joint_forces

if TYPE_CHECKING:
    from .scene import Scene

__all__ = ["ImpulseStepper", "effective_cor"]


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
