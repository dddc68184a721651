"""Simbody's projected Gauss--Seidel impulse solver (:mod:`sinews.contact.impulse_solver`).

:class:`PGSImpulseSolver` flattens the problem and runs the compiled sweeps of
:mod:`._simbody_pgs` (imported, and compiled, on the first PGS solve).
"""

from __future__ import annotations

import numpy as np

from .._checks import real_scalar
from ._simbody_interface import ImpulseSolver
from ._simbody_problem import _Limit
from ._simbody_records import BilateralResult, BndCond, FricCond, ImpulseResult, UniCond


# --------------------------------------------------------------------------------------------------
# Projected Gauss-Seidel
# --------------------------------------------------------------------------------------------------
class PGSImpulseSolver(ImpulseSolver):
    """Projected Gauss--Seidel with SOR and back-off (Simbody's ``PGSImpulseSolver``).

    One iteration sweeps the groups in this order: unconditional rows, unilateral normals,
    ratchets, unilateral friction, bounded rows, state-limited and constraint-limited friction.
    Inside a group the residuals are computed first for all its rows (Jacobi), then the rows are
    updated ``pi_r += sor (rhs_r - (A pi)_r) / A_rr`` and projected: normals onto
    ``sign pi <= 0``, friction radially onto its disk, bounded rows onto ``[lb, ub]``.

    Convergence: the RMS over all ``p`` participating rows of (a) the residuals of the enforced rows
    (Simbody's test) and (b) the velocity-scaled change ``A_rr * delta pi_r`` of every row (added
    here so that a sliding direction that is still moving is not reported converged) must both
    be below ``convergence_tol`` (absolute, velocity units).  The SOR factor is multiplied by 0.8
    (not below 0.1) whenever this error grows.
    """

    def __init__(self, max_rolling_speed: float = 1e-3, convergence_tol: float = 1e-6,
                 max_iters: int = 100, sor: float = 1.2) -> None:
        super().__init__(max_rolling_speed, convergence_tol, max_iters)
        sor = real_scalar(sor, "sor")
        if not 0 < sor < 2:
            raise ValueError(f"sor must lie in (0, 2), got {sor}")
        self.sor = sor

    def _solve(self, prob) -> ImpulseResult:
        from . import _simbody_pgs as kernel  # compiled on first use

        groups = []  # (kind, rows, limit rows, (float, float), callback writing the condition)

        def set_uni(rec, attr):
            conds = (UniCond.UNI_ACTIVE, UniCond.UNI_OFF)
            return lambda state: setattr(rec, attr, conds[state])

        def set_fric(rec):
            conds = (FricCond.ROLLING, FricCond.SLIDING, FricCond.FRIC_OFF)
            return lambda state: setattr(rec, "friction_cond", conds[state])

        def set_bnd(rec):
            conds = (BndCond.ENGAGED, BndCond.SLIP_LOW, BndCond.SLIP_HIGH)
            return lambda state: setattr(rec, "bounded_cond", conds[state])

        none = np.zeros(0, dtype=np.int64)
        for rows in prob.uncond_groups:
            groups.append((kernel.UNCOND, rows, none, (0.0, 0.0), None))
        for c in prob.contacts:
            groups.append((kernel.NORMAL, [c.row], none, (c.sign, 0.0),
                           set_uni(c.record, "contact_cond")))
        for row, sign, rec in prob.speeds:
            groups.append((kernel.SPEED, [row], none, (sign, 0.0), set_uni(rec, "speed_cond")))
        kinds = {_Limit.CONTACT: kernel.FRICTION_CONTACT, _Limit.KNOWN: kernel.FRICTION_KNOWN,
                 _Limit.REACTION: kernel.FRICTION_REACTION}
        fric = [(kinds[g.limit], g.rows,
                 [g.normal_row] if g.limit == _Limit.CONTACT else g.reaction_rows,
                 (g.mu, g.known_n), set_fric(g.record)) for g in prob.frictions]
        groups += [f for f in fric if f[0] == kernel.FRICTION_CONTACT]
        for row, lb, ub, rec in prob.bounded:
            groups.append((kernel.BOUNDED, [row], none, (lb, ub), set_bnd(rec)))
        groups += [f for f in fric if f[0] != kernel.FRICTION_CONTACT]

        itab = np.zeros((len(groups), 5), dtype=np.int64)
        ftab = np.zeros((len(groups), 2))
        flat = []
        for gi, (kind, rows, lim, params, _cb) in enumerate(groups):
            itab[gi, :3] = kind, len(flat), len(flat) + len(rows)
            flat.extend(int(r) for r in rows)
            itab[gi, 3:] = len(flat), len(flat) + len(lim)
            flat.extend(int(r) for r in lim)
            ftab[gi] = params
        pi, state, iterations, err, converged = kernel.pgs_sweeps(
            np.ascontiguousarray(prob.A), prob.rhs, prob.pi_expand, itab,
            np.array(flat, dtype=np.int64), ftab, self.convergence_tol * prob.scale, self.max_iters,
            self.sor)
        for gi, group in enumerate(groups):
            if group[4] is not None:
                group[4](int(state[gi]))
        return ImpulseResult(pi=pi, verr=prob.rhs - prob.A @ pi, converged=bool(converged),
                             iterations=int(iterations), residual=float(err))

    def _solve_bilateral(self, Aeff, part, rhs, scale=1.0) -> BilateralResult:
        pi = np.zeros(Aeff.shape[0])
        p = part.size
        tol = self.convergence_tol * scale  # an absolute tolerance, in the scaled units
        sor, prev, err, it, converged = self.sor, np.inf, np.inf, 0, False
        for it in range(1, self.max_iters + 1):
            s2 = 0.0
            for r in part:
                res = rhs[r] - Aeff[r] @ pi
                s2 += res * res
                if Aeff[r, r] > 0:
                    pi[r] += sor * res / Aeff[r, r]
            err = np.sqrt(s2 / p)
            if err < tol:
                converged = True
                break
            if err > prev:
                sor = max(0.8 * sor, 0.1)
            prev = err
        residual = float(np.linalg.norm(Aeff[part] @ pi - rhs[part]))
        return BilateralResult(pi=pi, converged=converged, iterations=it, residual=residual)
