"""Simbody's PLUS impulse solver (:mod:`sinews.contact.impulse_solver`): the sliding intervals.

:class:`PLUSImpulseSolver` runs the outer loop over sliding intervals, the active-set loop and
the Newton solves, and finds the accepted fraction of each interval; the active-set state and
the Newton residual of one interval are in :mod:`._simbody_plus_active_set`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.linalg

from ._simbody_interface import ImpulseSolver
from ._simbody_plus_active_set import _impulses, _IntervalState, _plus_residual
from ._simbody_problem import _Limit, check_integer
from ._simbody_records import BilateralResult, FricCond, ImpulseResult, UniCond

_EPS = np.finfo(float).eps
_STALL, _STALL_WINDOW = 0.95, 5  # stalled: this many iterations gained less than 5 %
_NULL_ROW_TOL = 1e-13  # a friction row this small (relative) is structurally null: pi = 0 on it


# --------------------------------------------------------------------------------------------------
# PLUS
# --------------------------------------------------------------------------------------------------
_COS_MAX_SLIDING_DIR_CHANGE = np.cos(np.deg2rad(30.0))


class PLUSImpulseSolver(ImpulseSolver):
    """PLUS sliding-interval, active-set impulse solver (Simbody's ``PLUSImpulseSolver``).

    Outer loop (sliding intervals), starting with everything left to do::

        while the last interval was cut short (s < 1):
            classify friction by the slip at interval start: sliding (direction frozen) if
            ||slip|| > max_rolling_speed, else rolling; every contact on, bounded rows engaged
            active-set loop -> impulses pi for the whole remaining impact
            s = largest fraction for which no sliding direction turns more than 30 degrees and no
                sliding contact passes its closest approach to rolling speed
            commit s*pi, s * (remaining expansion impulse), s * (remaining applied velocity)

    Active-set loop: Newton on ``err(pi) = 0`` over the active rows -- linear rows
    ``(A pi - rhs)_i``; sliding rows ``a_F (pi_F - mu N(pi) u)`` with frozen unit slip ``u``;
    impending rows ``pi_F = mu N d``, ``w_F = lambda d`` with ``||d|| = 1`` and ``lambda >= 0``
    (friction on the disk boundary, opposing the end slip ``w_F``) -- with minimum-norm steps
    (``gelsy``) and backtracking.  Then the worst violation is pruned: a pulling normal turns its
    contact off (or first makes its rolling friction impending), a friction outside its disk
    becomes impending, a bounded row outside its bounds is clamped.  When nothing is violated,
    contacts turned off that now penetrate and clamped rows that would move back inside are
    re-activated (an addition to Simbody).  An impending root with ``lambda < 0`` (friction along
    the slip) is retried once from its mirror image, then the group goes back to rolling.  When
    the frozen sliding directions admit no solution (Newton fails, or the pruning cycles), they
    are released to rolling; an active set met again is accepted if nothing in it is violated.

    Rows that are structurally null (a zero row of ``A``: a direction along which the bodies
    cannot move, e.g. the tangents of balls on prismatic joints) act on nothing: friction rows
    with zero slip and normals that do not approach are left out of the solve with a zero
    impulse (``_without_null_rows``); a friction group left with no row reports rolling
    (off with its contact), a normal left out is off.

    ``converged`` is true only if, in every interval, the last Newton solve reached
    ``convergence_tol * max|rhs|`` and the active set ended consistent (no violation, no impending
    root with ``lambda < 0``), within ``max_intervals`` intervals and ``max_active_set_changes``
    changes per interval (default ``4 (p + 1)``).  PLUS can report failure on strongly coupled,
    redundant frictional problems where no active set is consistent with the frozen directions
    (Painleve-like); use :class:`PGSImpulseSolver` there.
    """

    def __init__(self, max_rolling_speed: float = 1e-3, convergence_tol: float = 1e-10,
                 max_iters: int = 50, max_intervals: int = 1000, max_active_set_changes: int | None = None) -> None:
        super().__init__(max_rolling_speed, convergence_tol, max_iters)
        self.max_intervals = check_integer(max_intervals, "max_intervals", 1)
        if max_active_set_changes is not None:
            max_active_set_changes = check_integer(max_active_set_changes,
                                                   "max_active_set_changes", 0)
        self.max_active_set_changes = max_active_set_changes

    # -- outer loop ------------------------------------------------------------------------------
    def _solve(self, prob) -> ImpulseResult:
        reduced, off, rolling, fric_off = _without_null_rows(prob)
        result = self._solve_intervals(reduced)
        for c in off:  # null normals that do not approach: off
            c.record.contact_cond = UniCond.UNI_OFF
        for g in rolling:  # friction left with no row: no slip, nothing to resist
            off_contact = (g.limit == _Limit.CONTACT
                           and g.record.contact_cond == UniCond.UNI_OFF)
            g.record.friction_cond = FricCond.FRIC_OFF if off_contact else FricCond.ROLLING
        for g in fric_off:  # friction of an off null normal: zero radius
            g.record.friction_cond = FricCond.FRIC_OFF
        return result

    def _solve_intervals(self, prob) -> ImpulseResult:
        A = prob.A
        m = A.shape[0]
        pi_total = np.zeros(m)
        verr_left = prob.verr_start.copy()
        piE_left = prob.pi_expand.copy()
        app_left = prob.verr_applied.copy()
        fractions, iterations, changes, worst_res = [], 0, 0, 0.0
        converged = True
        s = 0.0
        rem = 1.0  # fraction of the impact left: it scales the known normals and the bounds
        if prob.unknown.size == 0:
            pi = np.zeros(m)
            return ImpulseResult(pi=pi, verr=prob.rhs.copy(), converged=True, iterations=0,
                                 residual=0.0, fractions=(), intervals=0)
        while s < 1.0:
            if len(fractions) == self.max_intervals:
                converged = False
                break
            verr_expand = -A @ piE_left
            rhs = verr_left + verr_expand + app_left
            st = _IntervalState(prob, verr_left, piE_left, self.max_rolling_speed, rem)
            ok, pi, n_it, n_ch, res = self._active_set_solve(prob, st, rhs)
            converged &= ok
            iterations += n_it
            changes += n_ch
            worst_res = max(worst_res, res)
            s = self._sliding_fraction(prob, st, verr_left, rhs - A @ pi)
            if s > 1.0 - np.sqrt(_EPS):
                s = 1.0
            fractions.append(s)
            pi_int = s * pi
            pi_total += pi_int
            verr_left = verr_left - A @ pi_int + s * verr_expand + s * app_left
            piE_left *= 1.0 - s
            app_left *= 1.0 - s
            rem *= 1.0 - s
            st.write_conditions()
        verr = prob.rhs - A @ pi_total
        return ImpulseResult(pi=pi_total, verr=verr, converged=bool(converged),
                             iterations=iterations, residual=worst_res, intervals=len(fractions),
                             fractions=tuple(fractions), active_set_changes=changes)

    # -- sliding fraction --------------------------------------------------------------------------
    def _sliding_fraction(self, prob, st, verr_left, w_end):
        s = 1.0
        for gi, g in enumerate(prob.frictions):
            if st.fric_start[gi] != FricCond.SLIDING or st.fric[gi] != FricCond.SLIDING:
                continue
            v0, v1 = verr_left[g.rows], w_end[g.rows]
            s = min(s, _fraction_for_one(v0, v1, self.max_rolling_speed))
        return s

    # -- active-set loop ---------------------------------------------------------------------------
    def _active_set_solve(self, prob, st, rhs):
        A = prob.A
        vscale = float(np.max(np.abs(rhs))) if rhs.size else 0.0
        dmax = float(np.max(np.diag(A))) if A.size else 1.0
        pscale = vscale / dmax if dmax > 0 else vscale
        tol_abs = self.convergence_tol * vscale
        max_changes = (self.max_active_set_changes if self.max_active_set_changes is not None
                       else 4 * (prob.unknown.size + 1))
        guess = st.initial_guess(pscale)
        total_it, changes = 0, 0
        seen = set()
        while True:
            cycling = st.signature() in seen
            seen.add(st.signature())
            act = st.active_rows()
            x0 = guess[act]
            newton_ok, x, n_it, res = self._newton(prob, st, rhs, act, x0, tol_abs, pscale)
            total_it += n_it
            pi = st.base.copy()
            pi[act] = x
            w = rhs - A @ pi
            ptol = 1e-9 * max(float(np.max(np.abs(pi))), pscale)
            vtol = 1e-8 * vscale
            change = st.backward_impending() or st.worst_violation(pi, ptol)
            if (change is None and not newton_ok or cycling) and st.has_frozen_sliding():
                # No impulses satisfy the frozen sliding directions, or pruning goes round in
                # circles (a Painleve-like inconsistency): release those directions (rolling,
                # from where the pruning may move them to impending).
                change = ("unfreeze", -1)
            if change is None:
                change = st.worst_reactivation(pi, w, vtol)
            if change is None:  # consistent (also when reached again after a cycle)
                return newton_ok, pi, total_it, changes, res
            if (cycling and change[0] != "unfreeze") or changes == max_changes:
                return False, pi, total_it, changes, res
            guess = st.project(pi)
            if change[0] == "flip":  # restart that group from its mirror image (other root)
                rows = prob.frictions[change[1]].rows
                guess[rows] = -guess[rows]
            st.apply(change)
            st.restart_normals(guess, rhs, pscale)
            changes += 1

    # -- Newton on the active set ---------------------------------------------------------------
    def _newton(self, prob, st, rhs, act, x, tol_abs, pscale):
        """Newton with min-norm least-squares steps.  Unknowns: the active impulses, except that
        an impending group's friction entries hold its unit direction ``d``; then one slip speed
        ``lambda`` per impending group.  Returns ``(ok, pi[act], iterations, residual)``."""
        if act.size == 0:
            return True, x, 0, 0.0
        pos = np.full(prob.A.shape[0], -1, dtype=np.int64)
        pos[act] = np.arange(act.size)
        impending = [gi for gi, f in enumerate(st.fric) if f == FricCond.IMPENDING]
        pi0 = st.base.copy()
        pi0[act] = x
        w0 = rhs - prob.A @ pi0
        x = x.copy()
        lam0 = []
        for gi in impending:  # direction from the guess's friction, else from its slip
            rows = prob.frictions[gi].rows
            d = pi0[rows] if np.any(pi0[rows]) else w0[rows]
            d = _unit(d) if np.any(d) else np.eye(rows.size)[0]
            x[pos[rows]] = d
            lam = st.lam[gi]
            lam0.append(max(0.0, float(w0[rows] @ d)) if np.isnan(lam) else lam)
        x = np.concatenate([x, lam0])
        eps_soft = (np.sqrt(_EPS) * pscale) ** 2 if pscale > 0 else 1e-300
        pscale = pscale if pscale > 0 else 1.0
        cond = x.size * _EPS ** 0.875

        def evaluate(xv, jac=True):
            return _plus_residual(prob, st, rhs, act, pos, impending, xv, eps_soft, pscale, jac)

        def done(ok):
            for j, gi in enumerate(impending):
                st.lam[gi] = x[act.size + j]
            pi, _ = _impulses(prob, st, act, pos, impending, x, eps_soft, False)
            return ok, pi[act], n_it, nrm

        n_it = 0
        err, J = evaluate(x)
        nrm = float(np.linalg.norm(err))
        history = [nrm]
        while True:
            if nrm <= tol_abs:
                return done(True)
            stalled = n_it >= _STALL_WINDOW and nrm > _STALL * history[-1 - _STALL_WINDOW]
            if n_it == self.max_iters or stalled:
                return done(False)
            dx = scipy.linalg.lstsq(J, -err, cond=cond, lapack_driver="gelsy",
                                    check_finite=False)[0]
            back = 1.0
            while True:
                x_try = x + back * dx
                err_try, _ = evaluate(x_try, jac=False)
                n_try = float(np.linalg.norm(err_try))
                if n_try < nrm:
                    break
                if back <= 0.01:  # accept a small increase (Simbody), never a non-finite point
                    if not np.isfinite(n_try):
                        x_try = x
                    break
                back *= 0.5
            x = x_try
            n_it += 1
            err, J = evaluate(x)
            nrm = float(np.linalg.norm(err))
            history.append(nrm)

    def _solve_bilateral(self, Aeff, part, rhs, scale=1.0) -> BilateralResult:
        sub = Aeff[np.ix_(part, part)]
        cond = part.size * _EPS ** 0.875
        x = scipy.linalg.lstsq(sub, rhs[part], cond=cond, lapack_driver="gelsy",
                               check_finite=False)[0]
        pi = np.zeros(Aeff.shape[0])
        pi[part] = x
        # The minimum-norm least-squares solution always exists, but it satisfies the equations
        # only if they are consistent: report an inconsistent system as not converged.
        residual = float(np.linalg.norm(sub @ x - rhs[part]))
        scale = 1.0 + float(np.linalg.norm(rhs[part]))
        return BilateralResult(pi=pi, converged=residual <= np.sqrt(_EPS) * scale, iterations=1,
                               residual=residual)


def _without_null_rows(prob):
    """``prob`` without its structurally null rows, and the run-time records to set afterwards.

    A row ``r`` is null when its row of ``A`` (hence, ``A`` being positive semi-definite, its
    column) vanishes to ``_NULL_ROW_TOL`` relative to the largest diagonal entry: its Jacobian row
    ``G_r`` is zero (a direction along which the bodies cannot move: the tangents of balls on
    prismatic joints, the out-of-plane tangent of a planar joint).  Its impulse acts on nothing
    and nothing changes its velocity error, so such rows are fixed at zero impulse (the
    minimum-norm choice) and left out of the unknowns:

    * a null friction row whose slip is zero too (its velocity errors vanish to the same relative
      tolerance): it also stays off its disk's budget;
    * a null unilateral normal that is not approaching (``sign * rhs_n >= 0``): the contact is
      off, and so is its friction unless an expansion impulse on the normal keeps a radius.
      (An approaching null normal has no solution: it stays, and the solve reports failure.)

    Without this the Newton solves see zero rows: an impending friction's slip speed ``lambda``
    on a null group is rounding noise whose sign decides the active set, and a null normal keeps
    its start value.  Returns ``(prob, off_contacts, rolling_groups, off_groups)``; a problem with
    no null row is returned unchanged (the same object).
    """
    A = prob.A
    a_scale = float(np.max(np.abs(np.diag(A)))) if A.size else 0.0
    v_scale = max(float(np.max(np.abs(prob.rhs))), float(np.max(np.abs(prob.verr_start))))
    v_tol = _NULL_ROW_TOL * v_scale

    def null_rows(rows):
        return np.max(np.abs(A[rows]), axis=1) <= _NULL_ROW_TOL * a_scale

    off = [c for c in prob.contacts
           if null_rows([c.row])[0] and c.sign * prob.rhs[c.row] >= -v_tol]
    off_rows = {c.row for c in off}
    null = np.zeros(A.shape[0], dtype=bool)
    null[list(off_rows)] = True
    if prob.frictions:
        rows = np.concatenate([g.rows for g in prob.frictions])
        null[rows] = (null_rows(rows) & (np.abs(prob.rhs[rows]) <= v_tol)
                      & (np.abs(prob.verr_start[rows]) <= v_tol))
    if not np.any(null):
        return prob, [], [], []
    frictions, rolling, fric_off, index = [], [], [], {}
    for gi, g in enumerate(prob.frictions):
        no_radius = (g.limit == _Limit.CONTACT and g.normal_row in off_rows
                     and prob.pi_expand[g.normal_row] == 0.0)
        kept = g.rows[~null[g.rows]]
        if no_radius:
            null[g.rows] = True
            fric_off.append(g)
        elif kept.size == 0:
            rolling.append(g)
        else:
            index[gi] = len(frictions)
            frictions.append(replace(g, rows=kept) if kept.size < g.rows.size else g)
    contacts = [c if c.friction < 0 else replace(c, friction=index.get(c.friction, -1))
                for c in prob.contacts if c.row not in off_rows]
    unknown = prob.unknown[~null[prob.unknown]]
    return (replace(prob, unknown=unknown, frictions=frictions, contacts=contacts), off, rolling,
            fric_off)


def _unit(v):
    """``v / ||v||`` for a nonzero ``v``, safe for tiny (subnormal) entries."""
    v = v / np.max(np.abs(v))
    return v / np.linalg.norm(v)


def _fraction_for_one(v0, v1, roll_speed):
    """Accepted fraction of an interval for one sliding contact (slip ``v0`` -> ``v1``)."""
    d = v1 - v0
    dd = float(d @ d)
    if dd == 0.0:
        return 1.0
    t_close = min(1.0, max(0.0, -float(v0 @ d) / dd))
    if np.linalg.norm(v1) <= roll_speed:
        return t_close
    n0, n1 = np.linalg.norm(v0), np.linalg.norm(v1)
    if float(v0 @ v1) >= _COS_MAX_SLIDING_DIR_CHANGE * n0 * n1:
        return 1.0
    if np.linalg.norm(v0 + t_close * d) <= roll_speed:
        return t_close
    # The angle between v0 and v0 + t d grows monotonically with t: bisect for 30 degrees.
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        v = v0 + mid * d
        if float(v0 @ v) >= _COS_MAX_SLIDING_DIR_CHANGE * n0 * np.linalg.norm(v):
            lo = mid
        else:
            hi = mid
    return lo
