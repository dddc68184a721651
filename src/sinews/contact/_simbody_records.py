"""Simbody's impulse-solver data (:mod:`sinews.contact.impulse_solver`): enums, records, results.

The enums (:class:`ContactType`, :class:`UniCond`, :class:`FricCond`, :class:`BndCond`) keep
Simbody's values.  The run-time records (Simbody's ``*RT`` structs) carry a solve's inputs and,
after it, the conditions and impulses the solver writes back; :class:`ImpulseResult` and
:class:`BilateralResult` are what the solves return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np


#: Number of statistics buckets ("phases"); the phase changes nothing in the math (Simbody A1.4).
MAX_NUM_PHASES = 3


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
