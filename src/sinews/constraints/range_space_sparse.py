"""The range-space method with the branch-sparse ``L^T L`` factorisation of ``H``.

Solves ``H x = top + G^T lambda``, ``G x = bottom`` by eliminating ``x``:

    H = L^T L          (sinews.ltl_factor, Featherstone RBDA section 6.5, no fill-in)
    Y = L^-T G^T,  z = L^-T top
    K = Y^T Y          (= G H^-1 G^T, the constraint-space inverse inertia)
    K lambda = bottom - Y^T z          (dense Cholesky)
    x = L^-1 (z + Y lambda)            (= H^-1 (top + G^T lambda))

Needs ``H`` positive definite: a massless leaf body raises ``ValueError`` (use ``direct`` or
``null_space``) instead of RBDL's NaN.  Redundant constraints make ``K`` singular: then the
minimum-norm least-squares ``lambda`` is returned and flagged (``least_squares=True``).

Source: RBDL ``ForwardDynamicsConstraintsRangeSpaceSparse`` and
``ComputeConstraintImpulsesRangeSpaceSparse`` (rbdl.md sections 2.2, 2.5); Featherstone,
RBDA section 8.5 and "Efficient factorization of the joint-space inertia matrix for branched
kinematic trees", IJRR 2005.
"""

from __future__ import annotations

import numpy as np

from typing import TYPE_CHECKING

from ..ltl import LTLFactor, ltl_factor
from ._linalg import solve_psd

if TYPE_CHECKING:
    from ..model import Model

__all__ = ["solve_range_space_sparse"]


def solve_range_space_sparse(model: Model, H: np.ndarray, G: np.ndarray, top: np.ndarray, bottom: np.ndarray,
                             factor: LTLFactor | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """``H (nv, nv)``, ``G (c, nv)``, ``top (nv,)``, ``bottom (c,)`` -> ``(x (nv,), lambda (c,), info)``; ``factor``: an existing ``LTLFactor`` of ``H`` to reuse."""
    if factor is None:
        try:
            factor = ltl_factor(model, H)
        except ValueError as exc:
            raise ValueError(
                f"range_space_sparse needs a positive definite mass matrix ({exc}); a massless "
                "body makes H singular: use method='direct' or 'null_space' (or q is too large in "
                "magnitude for double precision)"
            ) from None
    Y = factor.solve_LT(G.T) if G.shape[0] else np.zeros((H.shape[0], 0))
    z = factor.solve_LT(top)
    K = Y.T @ Y
    lam, full, rank = solve_psd(K, bottom - Y.T @ z)
    rhs = z + Y @ lam
    # overflow (inputs of extreme magnitude): a non-finite answer the caller reports
    x = factor.solve_L(rhs) if np.isfinite(rhs).all() else np.full(H.shape[0], np.nan)
    return x, lam, {"rank": rank, "least_squares": not full}
