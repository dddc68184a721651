"""System-level constraint quantities: ``G``, ``gamma``, errors, and ``(H, C, G, gamma)``.

For a bound :class:`~sinews.constraints.ConstraintSet` with rows stacked group by group:

* ``G(q)`` (rows x nv): velocity-level constraints ``G v = 0``;
* ``gamma(q, v)``: acceleration right-hand side, ``G qdd = gamma``, with per group
  ``gamma_g = -dG_g/dt v`` plus, where Baumgarte stabilisation is enabled,
  ``-D phidot_g - K phi_g`` (``(K, D) = (1/T^2, 2/T)`` from the time constant, i.e.
  ``-2 alpha phidot - beta^2 phi`` with ``alpha = beta = 1/T``, or the gains of
  ``set_baumgarte_gains``);
* ``phi(q)`` position errors and ``phidot(q, v)`` velocity errors, per row;
* ``H(q)`` (CRBA) and ``C(q, v) = C v + g - J^T f_ext`` (RNEA with ``qdd = 0``), so that the
  constrained equations of motion read ``H qdd + C = tau + G^T lambda``, ``G qdd = gamma``.

Source: RBDL ``CalcConstraintsJacobian``, ``CalcConstraintsPositionError``,
``CalcConstraintsVelocityError``, ``CalcConstrainedSystemVariables``; Baumgarte, "Stabilization
of constraints and integrals of motion in dynamical systems", CMAME 1, 1972.  Each function
takes ``group=`` (group, index or name) to evaluate one group only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..crba import crba
from ..rnea import nonlinear_effects
from ._callbacks import jacobian_of, rows_of
from ._kinematics import ConstraintKinematics, _finite_out
from .constraint import _check_flag
from .constraint_set import ConstraintSet

if TYPE_CHECKING:
    from ..model import Data, Model
    from .constraint import Constraint

__all__ = [
    "ConstrainedSystem",
    "constraint_jacobian",
    "constraint_gamma",
    "constraint_position_error",
    "constraint_velocity_error",
    "baumgarte_terms",
    "constrained_system",
]


def _groups(model, cs, group):
    if not isinstance(cs, ConstraintSet):
        raise ValueError(f"cs must be a sinews.constraints.ConstraintSet, got {type(cs).__name__}")
    cs._ensure_bound(model)
    if group is None:
        return cs.groups, cs.size
    g = cs.group(group)
    return (g,), g.size


def _stack(groups, n, fn, width=None):
    out = np.zeros((n, width)) if width is not None else np.zeros(n)
    r = 0
    for g in groups:
        out[r : r + g.size] = fn(g)
        r += g.size
    return out


def _full(groups):
    """The set whose full group list ``groups`` is, if it has a contact batch."""
    if groups and groups[0].set is not None:
        cs = groups[0].set
        if cs._contact_batch is not None and len(groups) == cs.ngroups:
            return cs
    return None


def _jacobian(kin, groups, n):
    cs = _full(groups)
    if cs is None:
        return _stack(groups, n, lambda g: jacobian_of(g, kin), kin.nv)
    G = np.empty((n, kin.nv))
    b = cs._contact_batch
    G[b.rows] = b.jacobian_rows(kin)
    for g in cs._others:
        G[g.rows] = jacobian_of(g, kin)
    return G


def _gamma(kin, groups, n, baumgarte=True):
    cs = _full(groups)
    if cs is None:
        gam = _stack(groups, n, lambda g: rows_of(g, "gamma", kin))
    else:
        gam = np.empty(n)
        b = cs._contact_batch
        gam[b.rows] = b.gamma_rows(kin)
        for g in cs._others:
            gam[g.rows] = rows_of(g, "gamma", kin)
    if baumgarte:
        r = 0  # rows local to ``groups`` (the whole set or one group)
        for g in groups:
            if g.baumgarte_enabled:
                gam[r : r + g.size] += _baumgarte(g, kin)
            r += g.size
    return gam


def _baumgarte(g, kin):
    K, D = g.baumgarte_gains
    return -D * rows_of(g, "velocity_error", kin) - K * rows_of(g, "position_error", kin)


def constraint_jacobian(model: Model, q: ArrayLike, cs: ConstraintSet, group: int | str | Constraint | None = None,
                        data: Data | None = None) -> np.ndarray:
    """``G(q)`` at ``q (nq,)``: the ``(rows, nv)`` constraint Jacobian (or the rows of one group)."""
    groups, n = _groups(model, cs, group)
    return _finite_out(_jacobian(ConstraintKinematics(model, q, None, data), groups, n), "q")


def constraint_gamma(model: Model, q: ArrayLike, v: ArrayLike, cs: ConstraintSet,
                     group: int | str | Constraint | None = None, baumgarte: bool = True,
                     data: Data | None = None) -> np.ndarray:
    """``gamma(q, v)`` ``(rows,)`` at ``q (nq,)``, ``v (nv,)``:
    such that ``G qdd = gamma``; includes the Baumgarte terms of the groups
    where it is enabled unless ``baumgarte=False``."""
    baumgarte = _check_flag(baumgarte, "baumgarte")
    groups, n = _groups(model, cs, group)
    return _finite_out(_gamma(ConstraintKinematics(model, q, v, data), groups, n, baumgarte), "q, v")


def constraint_position_error(model: Model, q: ArrayLike, cs: ConstraintSet,
                              group: int | str | Constraint | None = None,
                              data: Data | None = None) -> np.ndarray:
    """``phi(q)`` ``(rows,)`` at ``q (nq,)``, per row (contacts: always 0)."""
    groups, n = _groups(model, cs, group)
    kin = ConstraintKinematics(model, q, None, data)
    return _finite_out(_stack(groups, n, lambda g: rows_of(g, "position_error", kin)), "q")


def constraint_velocity_error(model: Model, q: ArrayLike, v: ArrayLike, cs: ConstraintSet,
                              group: int | str | Constraint | None = None,
                              data: Data | None = None) -> np.ndarray:
    """``phidot(q, v)`` ``(rows,)`` at ``q (nq,)``, ``v (nv,)``,
    per row (``G v`` for the built-in constraints)."""
    groups, n = _groups(model, cs, group)
    kin = ConstraintKinematics(model, q, v, data)
    return _finite_out(_stack(groups, n, lambda g: rows_of(g, "velocity_error", kin)), "q, v")


def baumgarte_terms(model: Model, q: ArrayLike, v: ArrayLike, cs: ConstraintSet,
                    group: int | str | Constraint | None = None, data: Data | None = None) -> np.ndarray:
    """``-D phidot - K phi`` ``(rows,)`` at ``q (nq,)``, ``v (nv,)``,
    per row for groups with Baumgarte enabled, 0 elsewhere."""
    groups, n = _groups(model, cs, group)
    kin = ConstraintKinematics(model, q, v, data)
    return _finite_out(_stack(groups, n, lambda g: _baumgarte(g, kin) if g.baumgarte_enabled else np.zeros(g.size)), "q, v")


@dataclass
class ConstrainedSystem:
    """The quantities of ``H qdd + C = tau + G^T lambda``, ``G qdd = gamma`` at one state."""

    H: np.ndarray
    C: np.ndarray
    G: np.ndarray
    gamma: np.ndarray
    position_error: np.ndarray
    velocity_error: np.ndarray


def constrained_system(model: Model, q: ArrayLike, v: ArrayLike, cs: ConstraintSet, f_ext: object = None,
                       data: Data | None = None) -> ConstrainedSystem:
    """At ``q (nq,)``, ``v (nv,)``: ``H (nv, nv)``,
    ``C (nv,)`` (with gravity and ``f_ext``), ``G``, ``gamma`` (with Baumgarte terms where
    enabled) and the position and velocity errors, together (RBDL
    ``CalcConstrainedSystemVariables``)."""
    groups, n = _groups(model, cs, None)
    kin = ConstraintKinematics(model, q, v, data)
    H = crba(model, kin.q, data)
    C = nonlinear_effects(model, kin.q, kin.v, f_ext, data)
    G = _jacobian(kin, groups, n)
    out = ConstrainedSystem(
        H, C, G, _gamma(kin, groups, n),
        _stack(groups, n, lambda g: rows_of(g, "position_error", kin)),
        _stack(groups, n, lambda g: rows_of(g, "velocity_error", kin)),
    )
    for x in vars(out).values():
        _finite_out(x, "q, v, f_ext")
    return out
