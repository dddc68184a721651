"""Forward dynamics with constraints: ``qdd`` and the constraint forces ``lambda``.

Solves, at state ``(q, v)`` with joint forces ``tau`` and external wrenches ``f_ext``,

    H(q) qdd + C(q, v, f_ext) = tau + G(q)^T lambda
    G(q) qdd = gamma(q, v)                   (Baumgarte terms included where enabled)

by one of four methods, which agree on ``qdd`` *and* ``lambda``:

* ``"direct"``: the KKT system (:mod:`sinews.constraints.kkt_direct`);
* ``"range_space_sparse"``: ``G H^-1 G^T`` from the branch-sparse ``L^T L``
  (:mod:`sinews.constraints.range_space_sparse`);
* ``"null_space"``: QR of ``G^T`` (:mod:`sinews.constraints.null_space`);
* ``"kokkevis"``: test forces through the ABA (:mod:`sinews.constraints.kokkevis`).

``lambda`` has one entry per row and is the physical constraint force (contact: ``> 0`` pushes
the body along the normal).  Redundant constraints give a flagged minimum-norm least-squares
answer (``least_squares=True``, ``rank < rows``); a system whose accelerations are not
determined raises ``ValueError``; NaN is never returned silently.

Source: RBDL ``ForwardDynamicsConstraints{Direct,RangeSpaceSparse,NullSpace}``,
``ForwardDynamicsContactsKokkevis`` (rbdl.md section 2); Featherstone RBDA chapter 8.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._checks import vector
from ..crba import crba
from ..rnea import nonlinear_effects
from ._kinematics import ConstraintKinematics
from .kkt_direct import solve_kkt
from .kokkevis import solve_kokkevis
from .null_space import solve_null_space
from .range_space_sparse import solve_range_space_sparse
from .system import _gamma, _groups, _jacobian

__all__ = ["ConstrainedDynamicsResult", "forward_dynamics_constraints", "METHODS"]

METHODS = ("direct", "range_space_sparse", "null_space", "kokkevis")


@dataclass
class ConstrainedDynamicsResult:
    """Result of :func:`forward_dynamics_constraints`.

    ``qdd``: joint accelerations; ``multipliers``: per-row constraint forces ``lambda``
    (``H qdd + C = tau + G^T lambda``); ``method``; ``rows``; ``rank``: numerical rank of ``G``
    (``rows`` on the fast path); ``least_squares``: True when redundant rows made a
    minimum-norm least-squares answer necessary; ``constraint_residual``:
    ``max |G qdd - gamma|``; ``converged``: the residual is at round-off level (False means the
    constraints are inconsistent and ``qdd`` is a least-squares compromise).
    """

    qdd: np.ndarray
    multipliers: np.ndarray
    method: str
    rows: int
    rank: int
    least_squares: bool
    constraint_residual: float
    converged: bool
    constraint_set: object = field(default=None, repr=False)

    def group_multipliers(self, group) -> np.ndarray:
        """The multipliers of one group (by group, index or name)."""
        return self.multipliers[self.constraint_set.group(group).rows]


def _check_method(method, allowed):
    if method not in allowed:
        raise ValueError(f"method must be one of {allowed}, got {method!r}")


def _residual(G, x, rhs):
    r = float(np.max(np.abs(G @ x - rhs))) if G.shape[0] else 0.0
    scale = 1.0 + (float(np.max(np.abs(rhs))) if rhs.size else 0.0)
    scale += float(np.max(np.abs(G))) * float(np.max(np.abs(x))) if G.size and x.size else 0.0
    return r, r <= 1e-9 * scale


def forward_dynamics_constraints(model, q, v, tau, cs, method="direct", f_ext=None, data=None) -> ConstrainedDynamicsResult:
    """Constrained forward dynamics; see the module docstring for the equations and methods.

    ``f_ext``: external wrenches as in :func:`sinews.rnea` (body frame, about the body origin).
    ``cs`` is bound to ``model`` on first use.
    """
    _check_method(method, METHODS)
    groups, n = _groups(model, cs, None)
    kin = ConstraintKinematics(model, q, v, data)
    tau = vector(tau, model.nv, "tau")
    if not np.all(np.isfinite(tau)):
        raise ValueError("tau contains NaN or infinity")
    G = _jacobian(kin, groups, n)
    gamma = _gamma(kin, groups, n)
    if method == "kokkevis":
        qdd, lam, info = solve_kokkevis(model, kin, tau, cs, G, gamma, f_ext, data)
    else:
        H = crba(model, kin.q, data)
        C = nonlinear_effects(model, kin.q, kin.v, f_ext, data)
        top = tau - C
        if method == "direct":
            qdd, lam, info = solve_kkt(H, G, top, gamma)
        elif method == "range_space_sparse":
            qdd, lam, info = solve_range_space_sparse(model, H, G, top, gamma)
        else:
            qdd, lam, info = solve_null_space(H, G, top, gamma)
    res, ok = _residual(G, qdd, gamma)
    if not (np.all(np.isfinite(qdd)) and np.all(np.isfinite(lam))):
        raise ValueError(f"{method}: the solution is not finite (singular system)")
    return ConstrainedDynamicsResult(qdd, lam, method, n, info["rank"], info["least_squares"], res, ok, cs)
