"""Private helpers for :mod:`sinews.contact.impulse_solver`: input checking and problem assembly.

The public solvers accept Simbody-style arguments (a participating set, ``A``, ``D``, expansion
impulses, two velocity errors and six lists of run-time records).  This module checks them once and
turns them into a :class:`_Problem` that both solvers read: the softened matrix ``A + diag(D)``, the
right-hand side ``verr_start + verr_applied - (A + D) pi_expand`` and flat descriptions of the
constraint groups whose rows take part in the solve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from .._checks import integer, real_dtype, real_scalar


class _Limit(IntEnum):
    """How the radius of a friction disk is computed (private)."""

    CONTACT = 0  # mu * |normal impulse + expansion|, normal of a unilateral contact
    KNOWN = 1  # mu * N_known, state-limited friction
    REACTION = 2  # mu * ||reaction impulses||, constraint-limited friction


@dataclass
class _FrictionGroup:
    """One friction disk: its rows, coefficient and how its radius is found."""

    rows: np.ndarray  # friction rows that are unknowns
    mu: float
    limit: _Limit
    record: object
    normal_row: int = -1  # CONTACT: the normal row (may be a non-unknown Known row)
    normal_unknown: bool = False  # CONTACT: is the normal row an unknown of this solve?
    sign: int = 1  # CONTACT: unilateral sign
    known_n: float = 0.0  # KNOWN
    # REACTION: the reaction rows whose impulse norm sets the limit
    reaction_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass
class _Contact:
    """A unilateral contact whose normal row is an unknown of this solve."""

    row: int
    sign: int
    record: object
    friction: int = -1  # index into _Problem.frictions, or -1


@dataclass
class _Problem:
    A: np.ndarray  # A + diag(D), m x m
    rhs: np.ndarray  # verr_start + verr_applied - (A + D) pi_expand
    verr_start: np.ndarray
    verr_applied: np.ndarray
    pi_expand: np.ndarray  # zero outside the expanding rows
    unknown: np.ndarray  # sorted rows that are unknowns
    uncond_groups: list  # list of int arrays (unknown rows only)
    uncond_records: list  # list of (record, all its rows)
    contacts: list  # list of _Contact
    speeds: list  # list of (row, sign, record)
    bounded: list  # list of (row, lb, ub, record)
    frictions: list  # list of _FrictionGroup
    scale: float = 1.0  # velocities and impulses are in units multiplied by this (a power of 2)


def _real(name, x):
    """``x`` as a float array; ValueError naming ``name`` for non-real or ragged input."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    return real_dtype(a, name).astype(float)


def _as_square(name, A):
    arr = _real(name, A)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    scale = max(1.0, float(np.max(np.abs(arr)))) if arr.size else 1.0
    if arr.size and np.max(np.abs(arr - arr.T)) > 1e-8 * scale:
        raise ValueError(f"{name} must be symmetric")
    return arr


def _as_vector(name, v, m, *, default_zero=True):
    if v is None:
        if default_zero:
            return np.zeros(m)
        raise ValueError(f"{name} is required")
    arr = _real(name, v)
    if arr.ndim != 1 or arr.shape[0] != m:
        raise ValueError(f"{name} must be a vector of length m = {m} (the size of A), got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr.copy()


def _as_rows(name, rows, m):
    try:
        arr = np.asarray(rows if rows is not None else [])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a sequence of row indices: {exc}") from None
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    real_dtype(arr, name)
    arr = arr.ravel()
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))):
        raise ValueError(f"{name} must contain integer row indices")
    if arr.min() < 0 or arr.max() >= m:
        raise ValueError(f"{name} has a row index outside [0, {m}) (m = the size of A)")
    arr = arr.astype(np.int64)
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} repeats a row index")
    return arr


def _as_row(name, row, m):
    """A single row index (an integer)."""
    if np.ndim(row) != 0:
        raise ValueError(f"{name} must be a single row index, got {row!r}")
    return int(_as_rows(name, [row], m)[0])


def _check_mu(name, mu):
    mu = real_scalar(mu, name)
    if mu < 0:
        raise ValueError(f"{name} (friction coefficient) must be finite and >= 0, got {mu}")
    return mu


def _check_sign(name, sign):
    if np.ndim(sign) != 0 or real_scalar(sign, name, finite=False) not in (1.0, -1.0):
        raise ValueError(f"{name} must be +1 or -1, got {sign!r}")
    return int(sign)


def check_integer(x, name, minimum, maximum=2**62):
    """An integer setting (int, NumPy integer, integral float or a 0-d array of those)."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    n = integer(x, name, minimum=minimum)
    if n > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {n}")
    return n


def check_matrix_and_d(A, D):
    """Validate ``A`` and ``D`` and return ``(A + diag(D), D)``."""
    A = _as_square("A", A)
    m = A.shape[0]
    D = _as_vector("D", D, m)
    if np.any(D < 0):
        raise ValueError("D must be nonnegative (it is a diagonal softness)")
    return A + np.diag(D), D


def participating_mask(participating, m):
    """Boolean mask of the participating rows (``None`` means all rows)."""
    mask = np.zeros(m, dtype=bool)
    if participating is None:
        mask[:] = True
    else:
        mask[_as_rows("participating", participating, m)] = True
    return mask


def assemble(participating, A, D, expanding, pi_expand, verr_start, verr_applied,
             unconditional, uni_contact, uni_speed, bounded, cons_ltd_friction, state_ltd_friction,
             *, ContactType, UniCond, FricCond, BndCond):
    """Validate all ``solve`` arguments, reset the records' outputs and build a :class:`_Problem`.

    The enum classes are passed in to avoid a circular import with the public module.
    """
    Aeff, D = check_matrix_and_d(A, D)
    m = Aeff.shape[0]
    part = participating_mask(participating, m)
    verr_start = _as_vector("verr_start", verr_start, m, default_zero=False)
    verr_applied = _as_vector("verr_applied", verr_applied, m)
    piE = np.zeros(m)
    exp_rows = _as_rows("expanding", expanding, m)
    if exp_rows.size:
        full = _as_vector("pi_expand", pi_expand, m, default_zero=False)
        piE[exp_rows] = full[exp_rows]
    elif pi_expand is not None:
        _as_vector("pi_expand", pi_expand, m)  # still validated

    owner = np.full(m, -1, dtype=np.int64)
    owners = []

    def claim(name, rows):
        for r in rows:
            if owner[r] >= 0:
                raise ValueError(f"{name}: row {r} belongs to more than one record (also to "
                                 f"{owners[owner[r]]})")
            owner[r] = len(owners)
        owners.append(name)

    unknown = np.zeros(m, dtype=bool)
    uncond_groups, uncond_records = [], []
    for k, rec in enumerate(unconditional or ()):
        rows = _as_rows(f"unconditional[{k}].mults", rec.mults, m)
        if rows.size == 0:
            raise ValueError(f"unconditional[{k}].mults must list at least one row")
        claim(f"unconditional[{k}].mults", rows)
        rec.impulse = np.zeros(rows.size)
        uncond_records.append((rec, rows))
        take = rows[part[rows]]
        unknown[take] = True
        if take.size:
            uncond_groups.append(take)

    contacts, frictions = [], []
    for k, rec in enumerate(uni_contact or ()):
        name = f"uni_contact[{k}]"
        n = _as_row(f"{name}.normal", rec.normal, m)
        F = _as_rows(f"{name}.friction", rec.friction, m)
        if F.size not in (0, 2):
            raise ValueError(f"{name}.friction must list 0 or 2 rows, got {F.size}")
        claim(f"{name}.normal", [n])
        claim(f"{name}.friction", F)
        sign = _check_sign(f"{name}.sign", rec.sign)
        mu = _check_mu(f"{name}.eff_mu", rec.eff_mu)
        try:
            ctype = ContactType(check_integer(rec.contact_type, f"{name}.contact_type", -1))
        except ValueError:
            raise ValueError(f"{name}.contact_type must be a ContactType, got "
                             f"{rec.contact_type!r}") from None
        if ctype == ContactType.TYPE_NA:
            raise ValueError(f"{name}.contact_type must be OBSERVING, KNOWN or PARTICIPATING")
        rec.impulse = np.zeros(3)
        rec.slip_vel = np.zeros(2)
        rec.slip_mag = 0.0
        rec.friction_cond = FricCond.FRIC_NA if F.size == 0 else FricCond.FRIC_OFF
        if ctype == ContactType.OBSERVING:
            rec.contact_cond = UniCond.UNI_OFF
            continue
        normal_unknown = ctype == ContactType.PARTICIPATING and bool(part[n])
        if ctype == ContactType.KNOWN:
            rec.contact_cond = UniCond.UNI_KNOWN
        else:
            rec.contact_cond = UniCond.UNI_ACTIVE if normal_unknown else UniCond.UNI_OFF
        ci = -1
        if normal_unknown:
            unknown[n] = True
            ci = len(contacts)
            contacts.append(_Contact(row=int(n), sign=sign, record=rec))
        if F.size and np.all(part[F]) and (normal_unknown or ctype == ContactType.KNOWN):
            unknown[F] = True
            rec.friction_cond = FricCond.ROLLING
            g = _FrictionGroup(rows=F, mu=mu, limit=_Limit.CONTACT, record=rec, normal_row=int(n),
                               normal_unknown=normal_unknown, sign=sign)
            if ci >= 0:
                contacts[ci].friction = len(frictions)
            frictions.append(g)

    speeds = []
    for k, rec in enumerate(uni_speed or ()):
        name = f"uni_speed[{k}]"
        r = _as_row(f"{name}.row", rec.row, m)
        claim(f"{name}.row", [r])
        sign = _check_sign(f"{name}.sign", rec.sign)
        rec.impulse = 0.0
        rec.speed_cond = UniCond.UNI_OFF
        if part[r]:
            unknown[r] = True
            rec.speed_cond = UniCond.UNI_ACTIVE
            speeds.append((int(r), sign, rec))

    bnd = []
    for k, rec in enumerate(bounded or ()):
        name = f"bounded[{k}]"
        r = _as_row(f"{name}.row", rec.row, m)
        claim(f"{name}.row", [r])
        lb = real_scalar(rec.lb, f"{name}.lb", finite=False)
        ub = real_scalar(rec.ub, f"{name}.ub", finite=False)
        if np.isnan(lb) or np.isnan(ub) or lb > ub or lb == np.inf or ub == -np.inf:
            raise ValueError(f"{name}: bounds must satisfy lb <= ub (lb < inf, ub > -inf), got "
                             f"[{lb}, {ub}]")
        rec.impulse = 0.0
        rec.bounded_cond = BndCond.BND_NA
        if part[r]:
            unknown[r] = True
            rec.bounded_cond = BndCond.ENGAGED
            bnd.append((int(r), lb, ub, rec))

    for k, rec in enumerate(state_ltd_friction or ()):
        name = f"state_ltd_friction[{k}]"
        F = _as_rows(f"{name}.friction", rec.friction, m)
        if not 1 <= F.size <= 3:
            raise ValueError(f"{name}.friction must list 1 to 3 rows, got {F.size}")
        claim(f"{name}.friction", F)
        mu = _check_mu(f"{name}.eff_mu", rec.eff_mu)
        kn = real_scalar(rec.known_n, f"{name}.known_n")
        if kn < 0:
            raise ValueError(f"{name}.known_n must be finite and >= 0, got {kn}")
        rec.friction_impulse = np.zeros(F.size)
        rec.friction_cond = FricCond.FRIC_OFF
        if np.all(part[F]):
            unknown[F] = True
            rec.friction_cond = FricCond.ROLLING
            frictions.append(_FrictionGroup(rows=F, mu=mu, limit=_Limit.KNOWN, record=rec,
                                            known_n=kn))

    for k, rec in enumerate(cons_ltd_friction or ()):
        name = f"cons_ltd_friction[{k}]"
        F = _as_rows(f"{name}.friction", rec.friction, m)
        N = _as_rows(f"{name}.normal", rec.normal, m)
        if not 1 <= F.size <= 3 or not 1 <= N.size <= 3:
            raise ValueError(f"{name}: friction and normal must each list 1 to 3 rows")
        claim(f"{name}.friction", F)
        if np.intersect1d(F, N).size:
            raise ValueError(f"{name}: a row cannot be both friction and normal")
        mu = _check_mu(f"{name}.eff_mu", rec.eff_mu)
        rec.friction_impulse = np.zeros(F.size)
        rec.friction_cond = FricCond.FRIC_OFF
        if np.all(part[F]):
            unknown[F] = True
            rec.friction_cond = FricCond.ROLLING
            frictions.append(_FrictionGroup(rows=F, mu=mu, limit=_Limit.REACTION, record=rec,
                                            reaction_rows=N))

    stray = np.flatnonzero(part & (owner < 0))
    if stray.size:
        raise ValueError(f"participating row {int(stray[0])} is not described by any record (the "
                         "rows of unconditional mults, uni_contact normal and friction, uni_speed "
                         "and bounded row, cons_ltd_friction and state_ltd_friction friction)")

    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by the solver
        rhs = verr_start + verr_applied - Aeff @ piE
    return _Problem(A=Aeff, rhs=rhs, verr_start=verr_start, verr_applied=verr_applied,
                    pi_expand=piE, unknown=np.flatnonzero(unknown), uncond_groups=uncond_groups,
                    uncond_records=uncond_records,
                    contacts=contacts, speeds=speeds, bounded=bnd, frictions=frictions)
