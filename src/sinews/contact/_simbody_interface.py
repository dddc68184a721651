"""The :class:`ImpulseSolver` interface of Simbody (:mod:`sinews.contact.impulse_solver`).

Argument checking, per-phase statistics, scaling of extreme data and the write-back into the
run-time records are shared here; :class:`~sinews.contact.impulse_solver.PGSImpulseSolver`
(:mod:`._simbody_pgs_solver`) and :class:`~sinews.contact.impulse_solver.PLUSImpulseSolver`
(:mod:`._simbody_plus`) implement ``_solve`` and ``_solve_bilateral``.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._checks import real_scalar
from ._simbody_problem import (_as_vector, _Limit, assemble, check_integer, check_matrix_and_d,
                               participating_mask)
from ._simbody_records import (MAX_NUM_PHASES, BilateralResult, BndCond, ContactType, FricCond,
                               ImpulseResult, UniCond)

if TYPE_CHECKING:
    from ._simbody_records import (BoundedRT, ConstraintLtdFrictionRT, StateLtdFrictionRT,
                                   UncondRT, UniContactRT, UniSpeedRT)


# --------------------------------------------------------------------------------------------------
# Abstract base
# --------------------------------------------------------------------------------------------------
class ImpulseSolver(abc.ABC):
    """Abstract impulse solver with Simbody's interface and per-phase statistics.

    Parameters
    ----------
    max_rolling_speed:
        Largest tangential slip speed still treated as rolling (Simbody's
        ``roll2slipTransitionSpeed``; only PLUS uses it).
    convergence_tol, max_iters:
        Solver-specific meaning (see the subclasses).
    """

    def __init__(self, max_rolling_speed: float, convergence_tol: float, max_iters: int) -> None:
        self.set_max_rolling_speed(max_rolling_speed)
        self.set_convergence_tol(convergence_tol)
        self.set_max_iters(max_iters)
        self.clear_stats()

    # -- settings -------------------------------------------------------------------------------
    def set_max_rolling_speed(self, speed: float) -> None:
        speed = real_scalar(speed, "max_rolling_speed")
        if speed < 0:
            raise ValueError(f"max_rolling_speed must be finite and >= 0, got {speed}")
        self.max_rolling_speed = speed

    def set_convergence_tol(self, tol: float) -> None:
        tol = real_scalar(tol, "convergence_tol")
        if tol <= 0:
            raise ValueError(f"convergence_tol must be finite and > 0, got {tol}")
        self.convergence_tol = tol

    def set_max_iters(self, max_iters: int) -> None:
        self.max_iters = check_integer(max_iters, "max_iters", 1)

    # -- statistics -----------------------------------------------------------------------------
    def clear_stats(self) -> None:
        """Reset the per-phase and bilateral counters."""
        self.n_solves = [0] * MAX_NUM_PHASES
        self.n_iterations = [0] * MAX_NUM_PHASES
        self.n_failures = [0] * MAX_NUM_PHASES
        self.n_bilateral_solves = 0
        self.n_bilateral_iterations = 0
        self.n_bilateral_failures = 0

    def _count(self, phase, iterations, converged):
        self.n_solves[phase] += 1
        self.n_iterations[phase] += iterations
        self.n_failures[phase] += 0 if converged else 1

    def _count_bilateral(self, iterations, converged):
        self.n_bilateral_solves += 1
        self.n_bilateral_iterations += iterations
        self.n_bilateral_failures += 0 if converged else 1

    # -- the two problems -----------------------------------------------------------------------
    def solve(self, phase: int, participating: Sequence[int] | None, A: ArrayLike, D: ArrayLike | None,
              expanding: Sequence[int], pi_expand: ArrayLike | None, verr_start: ArrayLike,
              verr_applied: ArrayLike | None = None, unconditional: Sequence[UncondRT] = (),
              uni_contact: Sequence[UniContactRT] = (), uni_speed: Sequence[UniSpeedRT] = (),
              bounded: Sequence[BoundedRT] = (), cons_ltd_friction: Sequence[ConstraintLtdFrictionRT] = (),
              state_ltd_friction: Sequence[StateLtdFrictionRT] = ()) -> ImpulseResult:
        """Solve ``[A+D](pi_expand + pi) = verr_start + verr_applied`` with the records' conditions.

        ``A`` (m, m) is the constraint-space compliance, ``pi_expand``, ``verr_start`` and
        ``verr_applied`` are (m,) vectors; the result's ``pi`` is (m,).

        ``participating`` lists the rows taking part (``None``: all); the others get ``pi = 0``.
        ``expanding`` lists the rows whose entry of the length-m ``pi_expand`` is a given impulse.
        ``D`` is the diagonal softness (length m, ``None``: zero).  The records are updated in place
        with their conditions and impulses; the inputs arrays are not modified.
        """
        phase = check_integer(phase, "phase", 0, MAX_NUM_PHASES - 1)
        prob = assemble(participating, A, D, expanding, pi_expand, verr_start, verr_applied,
                        unconditional, uni_contact, uni_speed, bounded, cons_ltd_friction,
                        state_ltd_friction, ContactType=ContactType, UniCond=UniCond,
                        FricCond=FricCond, BndCond=BndCond)
        if not np.all(np.isfinite(prob.rhs)):  # verr_start + verr_applied - (A + D) pi_expand
            raise _overflow(A=prob.A, verr_start=prob.verr_start, verr_applied=prob.verr_applied,
                            pi_expand=prob.pi_expand)
        # Solved in velocity units scaled by a power of two (exact) that brings the right-hand
        # side near 1, so that no sum of squares overflows or underflows on extreme data.
        c = _unit_scale(prob.rhs, prob.verr_start, prob.verr_applied)
        with np.errstate(all="ignore"):
            result = self._solve(_scaled_problem(prob, c) if c != 1.0 else prob)
        if c != 1.0:
            result.pi, result.verr = result.pi / c, result.verr / c
            result.residual = result.residual / c
        if not (np.all(np.isfinite(result.pi)) and np.all(np.isfinite(result.verr))
                and np.isfinite(result.residual)):
            raise _overflow(A=prob.A, verr_start=prob.verr_start, verr_applied=prob.verr_applied,
                            pi_expand=prob.pi_expand)
        result.phase = phase
        _write_records(prob, result.pi, result.verr)
        self._count(phase, result.iterations, result.converged)
        return result

    def solve_bilateral(self, participating: Sequence[int] | None, A: ArrayLike, D: ArrayLike | None,
                        rhs: ArrayLike) -> BilateralResult:
        """Solve ``P(A+D)P^T (P pi) = P rhs`` with ``pi = 0`` off the participating rows
        (``A`` (m, m), ``D`` (m,) or ``None``, ``rhs`` (m,); ``pi`` (m,)).

        All participating rows are equalities (used for position projection).
        """
        Aeff, _ = check_matrix_and_d(A, D)
        m = Aeff.shape[0]
        part = np.flatnonzero(participating_mask(participating, m))
        rhs = _as_vector("rhs", rhs, m, default_zero=False)
        pi = np.zeros(m)
        if part.size == 0:
            result = BilateralResult(pi=pi, converged=True, iterations=0, residual=0.0)
        else:
            c = _unit_scale(rhs[part])
            with np.errstate(all="ignore"):
                result = self._solve_bilateral(Aeff, part, rhs * c, c)
            result.pi, result.residual = result.pi / c, result.residual / c
            if not (np.all(np.isfinite(result.pi)) and np.isfinite(result.residual)):
                raise _overflow(A=Aeff, rhs=rhs)
        self._count_bilateral(result.iterations, result.converged)
        return result

    @abc.abstractmethod
    def _solve(self, prob) -> ImpulseResult:
        """Solve an assembled, validated problem."""

    @abc.abstractmethod
    def _solve_bilateral(self, Aeff, part, rhs, scale=1.0) -> BilateralResult:
        """Solve a validated bilateral problem with at least one participating row (``rhs`` in
        velocity units multiplied by ``scale``)."""


def _unit_scale(*vectors) -> float:
    """A power of two ``c`` with ``c max|v|`` near 1 (1.0 for zero or moderate data)."""
    big = max((float(np.max(np.abs(v))) for v in vectors if v.size), default=0.0)
    if big == 0.0 or 2.0**-64 <= big <= 2.0**64 or not np.isfinite(big):
        return 1.0
    return float(2.0 ** -np.round(np.log2(big)))


def _scaled_problem(prob, c):
    """``prob`` with every velocity and impulse multiplied by ``c`` (A, D, mu unchanged)."""
    from dataclasses import replace

    frictions = [replace(g, known_n=g.known_n * c) for g in prob.frictions]
    return replace(prob, scale=c, rhs=prob.rhs * c, verr_start=prob.verr_start * c,
                   verr_applied=prob.verr_applied * c, pi_expand=prob.pi_expand * c,
                   bounded=[(row, lb * c, ub * c, rec) for row, lb, ub, rec in prob.bounded],
                   frictions=frictions)


def _overflow(**inputs) -> ValueError:
    """The error for a solve whose result is not finite: names the inputs of extreme magnitude."""
    names = []
    for name, a in inputs.items():
        a = np.abs(np.asarray(a, dtype=float))
        a = a[a > 0]
        if a.size and (a.max() >= 1e100 or a.min() <= 1e-100):
            names.append(name)
    names = names or list(inputs)
    return ValueError(f"the impulses are not finite (floating-point overflow): {', '.join(names)} "
                      f"{'is' if len(names) == 1 else 'are'} too large (or too small) in magnitude")


def _write_records(prob, pi, verr):
    """Copy impulses and slip velocities into the records (conditions are set by the solvers)."""
    for rec, rows in prob.uncond_records:
        rec.impulse = pi[rows].copy()
    for c in prob.contacts:
        c.record.impulse[2] = pi[c.row]
    for g in prob.frictions:
        rec = g.record
        if g.limit == _Limit.CONTACT:
            rec.impulse[:2] = pi[g.rows]
            rec.slip_vel = verr[g.rows].copy()
            big = float(np.max(np.abs(rec.slip_vel)))  # scaled: the slip may be huge
            rec.slip_mag = big * float(np.linalg.norm(rec.slip_vel / big)) if big > 0 else 0.0
        else:
            rec.friction_impulse = pi[g.rows].copy()
    for row, _sign, rec in prob.speeds:
        rec.impulse = float(pi[row])
    for row, _lb, _ub, rec in prob.bounded:
        rec.impulse = float(pi[row])
