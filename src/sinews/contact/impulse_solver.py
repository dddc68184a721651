r"""Simbody's impulse solvers: the :class:`ImpulseSolver` interface, PGS and PLUS.

This is a from-scratch Python port of the design of Simbody's ``ImpulseSolver``,
``PGSImpulseSolver`` and ``PLUSImpulseSolver`` (M. Sherman, T. Uchida; Simbody 3.5+,
``Simbody/include/simbody/internal/ImpulseSolver.h``), described in
``docs/simbody-impulse-solver.md``.  The PLUS method is the one of T. K. Uchida, M. A. Sherman and
S. L. Delp, "Making a meaningful impact: modelling simultaneous frictional collisions in spatial
multibody systems", Proc. R. Soc. A 471:20140859 (2015).

The problem
-----------
With ``M`` the mass matrix, ``G`` the constraint Jacobian (one row per constraint equation, a
"multiplier"), ``A = G M^-1 G^T`` and ``D >= 0`` a diagonal softness, both an impact (time frozen)
and a contact step of size ``h`` reduce to one problem in the constraint-space impulses ``pi``::

    [A + D] (pi_expand + pi) = verr_start + verr_applied          (on the enforced rows)

subject to inequalities.  ``verr_start = G u - b`` (plus a Newton restitution term) is the current
velocity error, ``verr_applied = h G M^-1 f`` is what the applied forces would do in one step, and
``pi_expand`` is a *given* Poisson expansion impulse.  The generalized impulse applied to the
system is ``-G^T pi`` (Simbody's multiplier sign convention), so the velocity error left after the
solve is::

    verr = verr_start + verr_applied - [A + D] (pi_expand + pi).

Inequalities, per constraint kind (``sign = +-1``)::

    unilateral normal        sign * pi_n <= 0,  sign * verr_n >= 0,  pi_n * verr_n = 0
    unilateral friction      ||pi_F|| <= mu |pi_n + pi_expand_n|   (circular cone)
                             verr_F = 0 (rolling)  or  pi_F = mu N verr_F / ||verr_F|| (sliding)
    ratchet (uni speed)      like a frictionless normal on its one row
    bounded                  lb <= pi <= ub, verr = 0 when strictly inside
    state-limited friction   ||pi_F|| <= mu N_known
    constraint-limited fric. ||pi_F|| <= mu ||pi_N||   (pi_N: reaction rows of a bilateral)

Friction impulses point *along* the slip velocity error because the force applied to the system is
``-G^T pi``: the friction force opposes slip.

Solvers
-------
* :class:`PGSImpulseSolver` -- projected Gauss--Seidel with successive over-relaxation (SOR factor
  1.2, reduced by 0.8 whenever the error grows), groups swept in Simbody's order, radial projection
  onto the friction disk, RMS convergence test.  The sweeps run in a Numba kernel
  (:mod:`sinews.contact._simbody_pgs`) compiled on the first PGS solve, not at import.
* :class:`PLUSImpulseSolver` -- sliding *intervals*: friction that slides at the start of an
  interval keeps its direction; a Newton solve on the current active set (minimum-norm
  least-squares steps from a complete orthogonal factorization, LAPACK ``gelsy``, with a
  backtracking line search) finds the impulses; pruning moves contacts to off, rolling friction to
  impending; then only the fraction ``s`` of the interval for which no sliding direction turns by
  more than 30 degrees (or passes through rolling speed) is accepted, and a new interval starts.

Both return an :class:`ImpulseResult`; conditions (rolling, sliding, off, ...) are written back into
the run-time records, as Simbody does.  Bad input raises :class:`ValueError`; a solve that does not
converge is reported with ``converged=False``.

Reference: Simbody, https://github.com/simbody/simbody (``ImpulseSolver.h``,
``PGSImpulseSolver.cpp``, ``PLUSImpulseSolver.cpp``).
"""

from __future__ import annotations

import abc
import importlib
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import scipy.linalg

# Submodules are imported by name, not with ``from . import x``: the latter asks the package for
# the attribute first, which makes its lazy ``__getattr__`` import every sibling module.
from .._checks import real_scalar
from ._simbody_problem import (_as_vector, _Limit, assemble, check_integer, check_matrix_and_d,
                               participating_mask)

__all__ = [
    "MAX_NUM_PHASES",
    "ContactType",
    "UniCond",
    "FricCond",
    "BndCond",
    "UncondRT",
    "UniContactRT",
    "UniSpeedRT",
    "BoundedRT",
    "ConstraintLtdFrictionRT",
    "StateLtdFrictionRT",
    "ImpulseResult",
    "BilateralResult",
    "ImpulseSolver",
    "PGSImpulseSolver",
    "PLUSImpulseSolver",
]

#: Number of statistics buckets ("phases"); the phase changes nothing in the math (Simbody A1.4).
MAX_NUM_PHASES = 3

_EPS = np.finfo(float).eps
_STALL, _STALL_WINDOW = 0.95, 5  # stalled: this many iterations gained less than 5 %


# --------------------------------------------------------------------------------------------------
# Enums (values are Simbody's; they are relied upon)
# --------------------------------------------------------------------------------------------------
class ContactType(IntEnum):
    """How a unilateral contact takes part in a solve (input)."""

    TYPE_NA = -1
    OBSERVING = 0  #: neither normal nor friction rows take part
    KNOWN = 1  #: normal impulse given (expansion); friction rows take part
    PARTICIPATING = 2  #: normal and friction unknown


class UniCond(IntEnum):
    """Result condition of a unilateral normal (or ratchet)."""

    UNI_NA = -1
    UNI_OFF = 0  #: inactive, zero impulse
    UNI_ACTIVE = 1  #: pushing, velocity equation enforced
    UNI_KNOWN = 2  #: normal impulse was given, not solved


class FricCond(IntEnum):
    """Result condition of a friction group."""

    FRIC_NA = -1
    FRIC_OFF = 0  #: normal inactive, no friction
    SLIDING = 1  #: on the cone boundary, opposing slip
    IMPENDING = 2  #: was rolling but cannot stick (PLUS only)
    ROLLING = 3  #: sticking, tangential velocity equation enforced


class BndCond(IntEnum):
    """Result condition of a bounded row."""

    BND_NA = -1
    SLIP_LOW = 0
    IMPEND_LOW = 1
    ENGAGED = 2
    IMPEND_HIGH = 3
    SLIP_HIGH = 4


# --------------------------------------------------------------------------------------------------
# Run-time records (Simbody's *RT structs).  Inputs first, outputs (written by solve) after.
# --------------------------------------------------------------------------------------------------
@dataclass
class UncondRT:
    """An always-on (bilateral) constraint: its multiplier rows (``m_mults``)."""

    mults: list
    constraint: object = None  #: back-pointer to the owning constraint (not used by the solvers)
    impulse: np.ndarray = field(default_factory=lambda: np.zeros(0))  #: output, one per row


@dataclass
class UniContactRT:
    """A unilateral contact (or joint stop, rope): the only constraint that can impact."""

    normal: int  #: normal row (``m_Nk``)
    friction: tuple = ()  #: 0 or 2 friction rows (``m_Fk``)
    sign: int = 1  #: +1: multiplier must be <= 0 (``m_sign``)
    contact_type: ContactType = ContactType.PARTICIPATING  #: ``m_type``
    eff_cor: float = 0.0  #: effective restitution, for the stepper; solvers ignore it
    eff_mu: float = 0.0  #: effective friction coefficient
    contact: object = None  #: back-pointer (``m_ucx``)
    contact_cond: UniCond = UniCond.UNI_NA  #: output
    friction_cond: FricCond = FricCond.FRIC_NA  #: output
    slip_vel: np.ndarray = field(default_factory=lambda: np.zeros(2))  #: output, final slip
    slip_mag: float = 0.0  #: output, ``||slip_vel||``
    impulse: np.ndarray = field(default_factory=lambda: np.zeros(3))  #: output (fx, fy, normal)

    def has_friction(self) -> bool:
        return len(self.friction) > 0


@dataclass
class UniSpeedRT:
    """A ratchet (one-way speed constraint): ``sign * pi <= 0`` on row ``row``."""

    row: int
    sign: int = 1
    constraint: object = None
    speed_cond: UniCond = UniCond.UNI_NA  #: output
    impulse: float = 0.0  #: output


@dataclass
class BoundedRT:
    """A force-limited speed constraint: ``lb <= pi <= ub`` on row ``row``."""

    row: int
    lb: float
    ub: float
    constraint: object = None
    bounded_cond: BndCond = BndCond.BND_NA  #: output
    impulse: float = 0.0  #: output


@dataclass
class ConstraintLtdFrictionRT:
    """Friction in a joint: ``||pi_F|| <= mu ||pi_N||`` with ``pi_N`` reaction rows."""

    friction: tuple  #: 1 to 3 friction rows (``m_Fk``)
    normal: tuple  #: 1 to 3 reaction rows of a bilateral constraint (``m_Nk``)
    eff_mu: float = 0.0
    constraint: object = None  #: ``m_clfx``
    friction_cond: FricCond = FricCond.FRIC_NA  #: output
    friction_impulse: np.ndarray = field(default_factory=lambda: np.zeros(0))  #: output


@dataclass
class StateLtdFrictionRT:
    """Friction at a compliant contact whose normal force is known: ``||pi_F|| <= mu N``."""

    friction: tuple  #: 1 to 3 friction rows (``m_Fk``)
    known_n: float  #: known normal impulse magnitude (``m_knownN``), >= 0
    eff_mu: float = 0.0
    constraint: object = None  #: ``m_slfx``
    friction_cond: FricCond = FricCond.FRIC_NA  #: output
    friction_impulse: np.ndarray = field(default_factory=lambda: np.zeros(0))  #: output


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------
@dataclass
class ImpulseResult:
    """Result of :meth:`ImpulseSolver.solve`.

    ``pi`` is the unknown impulse only (zero outside the participating rows, *not* including
    ``pi_expand``); ``verr = verr_start + verr_applied - (A + D)(pi_expand + pi)`` is the velocity
    error left (Simbody's updated ``verrStart``).
    """

    pi: np.ndarray
    verr: np.ndarray
    converged: bool
    iterations: int  #: PGS sweeps, or PLUS Newton iterations summed over all solves
    residual: float  #: PGS: final RMS error; PLUS: largest final Newton residual norm
    phase: int = 0
    intervals: int = 1  #: PLUS sliding intervals (1 for PGS)
    fractions: tuple = (1.0,)  #: PLUS accepted fraction ``s`` of each interval
    active_set_changes: int = 0  #: PLUS pruning / re-activation steps


@dataclass
class BilateralResult:
    """Result of :meth:`ImpulseSolver.solve_bilateral`."""

    pi: np.ndarray
    converged: bool
    iterations: int
    residual: float  #: ``||P((A + D) pi - rhs)||``


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

    def __init__(self, max_rolling_speed: float, convergence_tol: float, max_iters: int):
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
    def solve(self, phase, participating, A, D, expanding, pi_expand, verr_start, verr_applied=None,
              unconditional=(), uni_contact=(), uni_speed=(), bounded=(), cons_ltd_friction=(),
              state_ltd_friction=()) -> ImpulseResult:
        """Solve ``[A+D](pi_expand + pi) = verr_start + verr_applied`` with the records' conditions.

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

    def solve_bilateral(self, participating, A, D, rhs) -> BilateralResult:
        """Solve ``P(A+D)P^T (P pi) = P rhs`` with ``pi = 0`` off the participating rows.

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
                 max_iters: int = 100, sor: float = 1.2):
        super().__init__(max_rolling_speed, convergence_tol, max_iters)
        sor = real_scalar(sor, "sor")
        if not 0 < sor < 2:
            raise ValueError(f"sor must lie in (0, 2), got {sor}")
        self.sor = sor

    def _solve(self, prob) -> ImpulseResult:
        kernel = importlib.import_module(f"{__package__}._simbody_pgs")  # compiled on first use

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
    re-activated (an addition to Simbody).  When the frozen sliding directions admit no solution
    (Newton fails, or the pruning cycles), they are released to rolling.

    ``converged`` is true only if, in every interval, the last Newton solve reached
    ``convergence_tol * max|rhs|`` and the active set ended consistent (no violation, no impending
    root with ``lambda < 0``), within ``max_intervals`` intervals and ``max_active_set_changes``
    changes per interval (default ``4 (p + 1)``).  PLUS can report failure on strongly coupled,
    redundant frictional problems where no active set is consistent with the frozen directions
    (Painleve-like); use :class:`PGSImpulseSolver` there.
    """

    def __init__(self, max_rolling_speed: float = 1e-3, convergence_tol: float = 1e-10,
                 max_iters: int = 50, max_intervals: int = 1000, max_active_set_changes=None):
        super().__init__(max_rolling_speed, convergence_tol, max_iters)
        self.max_intervals = check_integer(max_intervals, "max_intervals", 1)
        if max_active_set_changes is not None:
            max_active_set_changes = check_integer(max_active_set_changes,
                                                   "max_active_set_changes", 0)
        self.max_active_set_changes = max_active_set_changes

    # -- outer loop ------------------------------------------------------------------------------
    def _solve(self, prob) -> ImpulseResult:
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
            if cycling and not st.has_frozen_sliding():
                return False, pi, total_it, changes, res
            change = st.backward_impending() or st.worst_violation(pi, ptol)
            if (change is None and not newton_ok or cycling) and st.has_frozen_sliding():
                # No impulses satisfy the frozen sliding directions, or pruning goes round in
                # circles (a Painleve-like inconsistency): release those directions (rolling,
                # from where the pruning may move them to impending).
                change = ("unfreeze", -1)
            if change is None:
                change = st.worst_reactivation(pi, w, vtol)
            if change is None:
                return newton_ok, pi, total_it, changes, res
            if changes == max_changes:
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
        return (tuple(self.contact_on), tuple(self.speed_on), tuple(self.bnd), tuple(self.fric))

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
