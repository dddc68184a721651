"""Constraint impulses: the velocity jump that enforces the constraints at an impact.

Solves, at configuration ``q`` with pre-impact velocity ``qd_minus``,

    H(q) (qd_plus - qd_minus) = G(q)^T Lambda
    G(q) qd_plus = v_target                  (default 0: perfectly plastic impact)

``Lambda`` (one entry per row) is the *physical* impulse for every method: a contact impulse
``> 0`` pushes the body along its normal.  (RBDL stores the negative for ``Direct`` and garbage
for ``NullSpace``, rbdl.md section 0.4; sinews has one convention.)  Methods: ``"direct"``
(KKT with top ``H qd_minus``), ``"range_space_sparse"`` and ``"null_space"``, the same solvers
as :mod:`sinews.constraints.forward_dynamics` (one compiled call each for contacts-only sets).

Source: RBDL ``ComputeConstraintImpulses{Direct,RangeSpaceSparse,NullSpace}`` (rbdl.md
section 2.5); Featherstone RBDA section 11.6 (impulsive dynamics).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import finite_vector, vector
from ..crba import crba
from ._kinematics import ConstraintKinematics
from ._linalg import zero_tiny_rows
from ..algorithms import get_data
from . import forward_dynamics as _fd
from .forward_dynamics import (
    COMPILED_METHODS,
    _bind_compiled,
    _check_method,
    _contact_system,
    _contacts_only,
    _finite_system,
    _residual,
    _solve,
)
from .system import _groups, _jacobian

if TYPE_CHECKING:
    from ..model import Data, Model
    from .constraint import Constraint
    from .constraint_set import ConstraintSet

__all__ = ["ConstraintImpulseResult", "compute_constraint_impulses", "IMPULSE_METHODS"]

IMPULSE_METHODS = ("direct", "range_space_sparse", "null_space")


@dataclass
class ConstraintImpulseResult:
    """Result of :func:`compute_constraint_impulses`.

    ``qd_plus``: post-impact velocity; ``impulses``: per-row physical impulses ``Lambda``;
    ``method``; ``rows``; ``rank``; ``least_squares``; ``velocity_residual``:
    ``max |G qd_plus - v_target|``; ``converged``.
    """

    qd_plus: np.ndarray
    impulses: np.ndarray
    method: str
    rows: int
    rank: int
    least_squares: bool
    velocity_residual: float
    converged: bool
    constraint_set: object = field(default=None, repr=False)

    @property
    def multipliers(self) -> np.ndarray:
        """Alias of ``impulses`` (so results can be passed to ``calc_impulses``)."""
        return self.impulses

    def group_impulses(self, group: int | str | Constraint) -> np.ndarray:
        """The impulses of one group (by group, index or name)."""
        return self.impulses[self.constraint_set.group(group).rows]


def compute_constraint_impulses(model: Model, q: ArrayLike, qd_minus: ArrayLike, cs: ConstraintSet,
                                method: str = "direct", target_velocity: ArrayLike | None = None,
                                data: Data | None = None) -> ConstraintImpulseResult:
    """Impulses and post-impact velocity; see the module docstring.

    ``q (nq,)``, ``qd_minus (nv,)``; the result holds ``qd_plus (nv,)`` and the impulses ``(cs.size,)``.

    ``target_velocity``: desired ``G qd_plus`` per row (RBDL's ``v_plus``), default zeros.
    """
    if type(method) is str and method in COMPILED_METHODS and _fd._use_compiled:
        fast = getattr(cs, "_compiled", None) or _bind_compiled(model, cs)
        if fast is not None and fast.model is model:
            # bound contacts-only set: one compiled call (sinews.constraints._compiled_contacts)
            out = fast.impulses(q, qd_minus, target_velocity, data, method)
            if out is not None:
                n = fast.rows
                return ConstraintImpulseResult(out[0], out[1], method, n, n, False, out[2], out[3], cs)
        if fast is None:
            # a bound set mixing loops, contacts and coordinate rows: one compiled call too
            # (None for null_space, custom groups, singular systems or dependent non-zero rows)
            out = _fd.mixed_impulses(model, cs, q, qd_minus, target_velocity, data, method)
            if out is not None:
                n, rank = cs.size, out[4]
                return ConstraintImpulseResult(out[0], out[1], method, n, rank, rank < n, out[2], out[3], cs)
    _check_method(method, IMPULSE_METHODS)
    groups, n = _groups(model, cs, None)
    qd_minus = finite_vector(qd_minus, model.nv, "qd_minus")
    vt = np.zeros(n) if target_velocity is None else finite_vector(target_velocity, n, "target_velocity")
    if _contacts_only(model, cs):
        q = vector(q, model.nq, "q")
        z = np.zeros(model.nv)
        G, _, H, _ = _contact_system(model, cs, q, z, z, None, get_data(model, data))
    else:
        kin = ConstraintKinematics(model, q, None, data)
        G = _jacobian(kin, groups, n)
        H = crba(model, kin.q, data)
    top = H @ qd_minus
    _finite_system(("q", "qd_minus"), G, H, top)
    G = zero_tiny_rows(G)
    x, lam, info = _solve(model, method, H, G, top, vt)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(lam))):
        raise ValueError(
            f"{method}: the solution is not finite: a singular system, or q, qd_minus or "
            "target_velocity too large in magnitude (floating-point overflow)"
        )
    res, ok = _residual(G, x, vt)
    return ConstraintImpulseResult(x, lam, method, n, info["rank"], info["least_squares"], res, ok, cs)
