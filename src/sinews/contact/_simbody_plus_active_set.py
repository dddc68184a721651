"""Active set and Newton residual of one PLUS sliding interval.

Part of :mod:`sinews.contact.impulse_solver`.  :class:`_IntervalState` holds the conditions of
one interval (contacts on or off, friction rolling, sliding or impending, bounded rows engaged
or clamped) and prunes or re-activates them; :func:`_plus_residual` is the residual ``err(pi)``
and its Jacobian over the active rows.
"""

from __future__ import annotations

import numpy as np

from ._simbody_problem import _Limit
from ._simbody_records import BndCond, FricCond, UniCond


def _softmin0_slope(z, eps_soft):
    """Derivative of ``softmin0(z) = (z - sqrt(z^2 + eps)) / 2``, a smooth ``min(z, 0)``."""
    return 0.5 * (1.0 - z / np.sqrt(z * z + eps_soft))


def _limit_and_gradient(g, pi, piE_left, pos, n_act, eps_soft, jac, rem=1.0):
    """Friction limit ``N`` (so the radius is ``mu N``) and its gradient over the active rows
    (a known normal impulse counts with the fraction ``rem`` of the impact left)."""
    grad = np.zeros(n_act) if jac else None
    if g.limit == _Limit.KNOWN:
        return _part(g.known_n, rem), grad
    if g.limit == _Limit.CONTACT:
        n = g.normal_row
        zE = g.sign * piE_left[n]
        z = g.sign * pi[n]
        N = -(zE + min(z, 0.0))
        if jac and pos[n] >= 0:
            grad[pos[n]] = -g.sign * _softmin0_slope(z, eps_soft)
        return N, grad
    v = pi[g.reaction_rows] + piE_left[g.reaction_rows]
    N = float(np.linalg.norm(v))
    if jac and N > 0:
        for r, vr in zip(g.reaction_rows, v):
            if pos[r] >= 0:
                grad[pos[r]] = vr / N
    return N, grad


def _impulses(prob, st, act, pos, impending, x, eps_soft, jac):
    """Impulses ``pi`` from the Newton unknowns ``x``, and ``P = d pi / d x`` if ``jac``.

    An impending group's entries of ``x`` are its unit direction ``d``: ``pi_F = mu N(pi) d``.
    """
    m, n_act, n = prob.A.shape[0], act.size, x.size
    pi = st.base.copy()
    pi[act] = x[:n_act]
    P = None
    if jac:
        P = np.zeros((m, n))
        P[act, np.arange(n_act)] = 1.0
    for gi in impending:
        g = prob.frictions[gi]
        fp = pos[g.rows]
        d = x[fp]
        N, dN = _limit_and_gradient(g, pi, st.piE_left, pos, n_act, eps_soft, jac, st.rem)
        pi[g.rows] = g.mu * N * d
        if jac:
            P[g.rows, :] = 0.0
            P[np.ix_(g.rows, fp)] = g.mu * N * np.eye(g.rows.size)
            P[np.ix_(g.rows, np.arange(n_act))] += g.mu * np.outer(d, dN)
    return pi, P


def _plus_residual(prob, st, rhs, act, pos, impending, x, eps_soft, pscale, jac):
    """PLUS residual vector (velocity units) and Jacobian.

    ``x`` holds the active unknowns (see :func:`_impulses`) and then one slip speed ``lambda``
    per impending group.  Rows:

    * linear rows: ``(A pi - rhs)_i``  (the velocity error still left, sign flipped);
    * sliding rows (frozen unit slip ``u``): ``a (pi_F - mu N(pi) u)``, ``a`` the mean of the
      group's diagonal of ``A`` (turns impulses into velocities);
    * impending rows: ``(A pi - rhs)_F + lambda d = 0``, i.e. the end slip is ``w_F = lambda d``
      with ``pi_F = mu N d`` on the disk boundary (the friction force opposes the slip), plus
      ``a p (d.d - 1) / 2 = 0`` (``p`` an impulse scale).  Smooth at zero slip and well scaled
      whether the slip is large or small (``lambda`` is the slip speed).
    """
    A = prob.A
    n_act = act.size
    n = x.size
    pi, P = _impulses(prob, st, act, pos, impending, x, eps_soft, jac)
    w = rhs - A @ pi
    err = np.empty(n)
    err[:n_act] = -w[act]
    J = np.zeros((n, n)) if jac else None
    if jac:
        J[:n_act, :] = A[act] @ P
    diagA = np.diag(A)
    for gi, g in enumerate(prob.frictions):
        if st.fric[gi] != FricCond.SLIDING:
            continue
        fp = pos[g.rows]
        a = float(np.mean(diagA[g.rows]))
        a = a if a > 0 else 1.0
        N, dN = _limit_and_gradient(g, pi, st.piE_left, pos, n_act, eps_soft, jac, st.rem)
        u = st.direction[gi]
        err[fp] = a * (pi[g.rows] - g.mu * N * u)
        if jac:
            J[fp, :] = 0.0
            J[np.ix_(fp, np.arange(n_act))] = -a * g.mu * np.outer(u, dN)
            J[fp, fp] += a
    for j, gi in enumerate(impending):
        g = prob.frictions[gi]
        fp = pos[g.rows]
        lam_ix = n_act + j
        d = x[fp]
        a = float(np.mean(diagA[g.rows]))
        scale = (a if a > 0 else 1.0) * pscale
        err[fp] += x[lam_ix] * d
        err[lam_ix] = 0.5 * scale * (float(d @ d) - 1.0)
        if jac:
            J[fp, fp] += x[lam_ix]
            J[fp, lam_ix] = d
            J[lam_ix, fp] = scale * d
    return err, J


def _part(x, rem):
    """``x`` for the fraction ``rem`` of the impact left (infinite bounds stay infinite)."""
    return x * rem if np.isfinite(x) else x


class _IntervalState:
    """Active-set bookkeeping for one PLUS sliding interval.

    The interval solves for the impulse of the *rest* of the impact (the fraction ``rem`` of
    it): like the expansion impulses, known normal impulses and the bounds of bounded rows are
    spread uniformly over the impact, so they count here with ``rem`` (the committed total then
    stays within them: it is a sum of ``s_k rem_k`` parts, and those fractions add up to 1).
    """

    def __init__(self, prob, verr_left, piE_left, roll_speed, rem=1.0):
        self.prob = prob
        self.piE_left = piE_left
        self.rem = rem
        m = prob.A.shape[0]
        self.base = np.zeros(m)  # fixed values of clamped bounded rows, zero elsewhere
        self.contact_on = [True] * len(prob.contacts)
        self.speed_on = [True] * len(prob.speeds)
        self.bnd = [BndCond.ENGAGED] * len(prob.bounded)
        self.fric, self.direction = [], []
        for g in prob.frictions:
            slip = verr_left[g.rows]
            ns = float(np.linalg.norm(slip))
            if ns > roll_speed:
                self.fric.append(FricCond.SLIDING)
                self.direction.append(slip / ns)
            else:
                self.fric.append(FricCond.ROLLING)
                self.direction.append(np.zeros(g.rows.size))
        self.fric_start = list(self.fric)
        self.lam = [np.nan] * len(prob.frictions)  # impending end slip speeds (w_F = lam d)
        self.flipped = set()

    def initial_guess(self, pscale):
        """Zero, with normals a hair on the pushing side so ``min(z, 0)`` is on its branch."""
        guess = np.zeros(self.prob.A.shape[0])
        for c in self.prob.contacts:
            guess[c.row] = -c.sign * 1e-8 * pscale
        return guess

    def restart_normals(self, guess, rhs, pscale):
        """Start active normals that were projected to zero from a pushing estimate instead of
        the kink of ``min(z, 0)``: the single-row value ``rhs_n / A_nn`` if that pushes."""
        A = self.prob.A
        for ci, c in enumerate(self.prob.contacts):
            if self.contact_on[ci] and c.sign * guess[c.row] >= 0:
                alone = rhs[c.row] / A[c.row, c.row] if A[c.row, c.row] > 0 else 0.0
                guess[c.row] = alone if c.sign * alone < 0 else -c.sign * 1e-8 * pscale

    def active_rows(self):
        prob = self.prob
        on = np.zeros(prob.A.shape[0], dtype=bool)
        on[prob.unknown] = True
        for ci, c in enumerate(prob.contacts):
            if not self.contact_on[ci]:
                on[c.row] = False
        for si, (row, _s, _r) in enumerate(prob.speeds):
            if not self.speed_on[si]:
                on[row] = False
        for bi, (row, _lb, _ub, _r) in enumerate(prob.bounded):
            if self.bnd[bi] != BndCond.ENGAGED:
                on[row] = False
        for gi, g in enumerate(prob.frictions):
            if self.fric[gi] == FricCond.FRIC_OFF:
                on[g.rows] = False
        return np.flatnonzero(on)

    def _limit(self, g, pi):
        """Friction limit ``N`` at the impulses projected onto their feasible sets."""
        if g.limit == _Limit.CONTACT:
            zE = g.sign * self.piE_left[g.normal_row]
            z = min(g.sign * pi[g.normal_row], 0.0)
            return max(0.0, -(zE + z))
        if g.limit == _Limit.KNOWN:
            return _part(g.known_n, self.rem)
        return float(np.linalg.norm(pi[g.reaction_rows] + self.piE_left[g.reaction_rows]))

    def bounds(self, bi):
        """(lb, ub) of bounded record ``bi`` for the rest of the impact."""
        _row, lb, ub, _r = self.prob.bounded[bi]
        return _part(lb, self.rem), _part(ub, self.rem)

    def worst_violation(self, pi, ptol):
        """The largest inequality violation (impulse units) as a change to apply, or None."""
        prob = self.prob
        best, change = ptol, None
        for ci, c in enumerate(prob.contacts):
            if self.contact_on[ci] and c.sign * pi[c.row] > best:
                best, change = c.sign * pi[c.row], ("normal", ci)
        for si, (row, sign, _r) in enumerate(prob.speeds):
            if self.speed_on[si] and sign * pi[row] > best:
                best, change = sign * pi[row], ("speed", si)
        for gi, g in enumerate(prob.frictions):
            if self.fric[gi] == FricCond.ROLLING:
                v = float(np.linalg.norm(pi[g.rows])) - g.mu * self._limit(g, pi)
                if v > best:
                    best, change = v, ("friction", gi)
        for bi, (row, _lb, _ub, _r) in enumerate(prob.bounded):
            lb, ub = self.bounds(bi)
            if self.bnd[bi] == BndCond.ENGAGED:
                if pi[row] - ub > best:
                    best, change = pi[row] - ub, ("bounded_high", bi)
                if lb - pi[row] > best:
                    best, change = lb - pi[row], ("bounded_low", bi)
        return change

    def worst_reactivation(self, pi, w, vtol):
        """The worst penetrating off contact / misplaced clamped row, as a change, or None."""
        prob = self.prob
        best, change = vtol, None
        for ci, c in enumerate(prob.contacts):
            if not self.contact_on[ci] and -c.sign * w[c.row] > best:
                best, change = -c.sign * w[c.row], ("normal_on", ci)
        for si, (row, sign, _r) in enumerate(prob.speeds):
            if not self.speed_on[si] and -sign * w[row] > best:
                best, change = -sign * w[row], ("speed_on", si)
        for bi, (row, _lb, _ub, _r) in enumerate(prob.bounded):
            cond = self.bnd[bi]
            v = w[row] if cond == BndCond.SLIP_LOW else (-w[row] if cond == BndCond.SLIP_HIGH
                                                          else 0.0)
            if v > best:
                best, change = v, ("bounded_on", bi)
        return change

    def project(self, pi):
        """Impulses moved into their feasible sets (the next Newton start)."""
        prob = self.prob
        out = pi.copy()
        for c in prob.contacts:
            if c.sign * out[c.row] > 0:
                out[c.row] = 0.0
        for row, sign, _r in prob.speeds:
            if sign * out[row] > 0:
                out[row] = 0.0
        for bi, (row, _lb, _ub, _r) in enumerate(prob.bounded):
            lb, ub = self.bounds(bi)
            out[row] = min(max(out[row], lb), ub)
        for g in prob.frictions:
            radius = g.mu * self._limit(g, out)
            nf = float(np.linalg.norm(out[g.rows]))
            if nf > radius:
                out[g.rows] *= radius / nf
        return out

    def backward_impending(self):
        """An impending group whose Newton root has ``lambda < 0`` (friction along the slip)."""
        for gi, f in enumerate(self.fric):
            if f == FricCond.IMPENDING:
                a = float(np.mean(np.diag(self.prob.A)[self.prob.frictions[gi].rows]))
                if self.lam[gi] < -1e-9 * max(a, 0.0):
                    return ("backward", gi) if gi in self.flipped else ("flip", gi)
        return None

    def signature(self):
        return (tuple(self.contact_on), tuple(self.speed_on), tuple(self.bnd), tuple(self.fric),
                tuple(sorted(self.flipped)))

    def has_frozen_sliding(self):
        return any(f == FricCond.SLIDING for f in self.fric)

    def apply(self, change):
        kind, i = change
        prob = self.prob
        if kind == "flip":
            self.lam[i] = -self.lam[i]
            self.flipped.add(i)
        elif kind == "backward":  # a mirrored start did not help: let it try to stick
            self.fric[i] = FricCond.ROLLING
            self.lam[i] = np.nan
        elif kind == "unfreeze":
            self.fric = [FricCond.ROLLING if f == FricCond.SLIDING else f for f in self.fric]
        elif kind == "normal":
            c = prob.contacts[i]
            gi = c.friction
            if gi >= 0 and self.fric[gi] == FricCond.ROLLING:
                self.fric[gi] = FricCond.IMPENDING
            else:
                self.contact_on[i] = False
                if gi >= 0:
                    self.fric[gi] = FricCond.FRIC_OFF
        elif kind == "normal_on":  # back on, with its friction as classified at interval start
            c = prob.contacts[i]
            self.contact_on[i] = True
            if c.friction >= 0:
                self.fric[c.friction] = self.fric_start[c.friction]
        elif kind == "speed":
            self.speed_on[i] = False
        elif kind == "speed_on":
            self.speed_on[i] = True
        elif kind == "friction":
            self.fric[i] = FricCond.IMPENDING
        elif kind in ("bounded_low", "bounded_high"):
            # Clamp at the bound that was crossed; the row leaves the active set.
            row = prob.bounded[i][0]
            lb, ub = self.bounds(i)
            low = kind == "bounded_low"
            self.bnd[i] = BndCond.SLIP_LOW if low else BndCond.SLIP_HIGH
            self.base[row] = lb if low else ub
        elif kind == "bounded_on":
            row = prob.bounded[i][0]
            self.bnd[i] = BndCond.ENGAGED
            self.base[row] = 0.0

    def write_conditions(self):
        prob = self.prob
        for ci, c in enumerate(prob.contacts):
            c.record.contact_cond = UniCond.UNI_ACTIVE if self.contact_on[ci] else UniCond.UNI_OFF
        for si, (_row, _sign, rec) in enumerate(prob.speeds):
            rec.speed_cond = UniCond.UNI_ACTIVE if self.speed_on[si] else UniCond.UNI_OFF
        for bi, (_row, _lb, _ub, rec) in enumerate(prob.bounded):
            rec.bounded_cond = self.bnd[bi]
        for gi, g in enumerate(prob.frictions):
            g.record.friction_cond = self.fric[gi]
