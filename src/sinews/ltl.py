"""Branch-sparse ``L^T L`` factorisation of the joint-space inertia matrix.

``M = L^T L`` with ``L`` lower triangular and ``L[i, j] != 0`` only where dof j is dof i or an
ancestor of it: the factorisation creates no fill-in beyond the tree's branch-induced sparsity.
Cost O(n d^2) for depth d; the solves are O(n d).

Source: Featherstone, *Rigid Body Dynamics Algorithms*, section 6.5 (Tables 6.3 and 6.4),
and "Efficient factorization of the joint-space inertia matrix for branched kinematic trees",
IJRR 24(6), 2005.  The constrained-dynamics range-space method builds on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernels as K
from ._checks import matrix
from .algorithms import check_model

__all__ = ["LTLFactor", "ltl_factor"]


@dataclass
class LTLFactor:
    """``M = L^T L``; ``L`` is stored dense (lower triangle), ``lam`` is the dof-parent array."""

    L: np.ndarray
    lam: np.ndarray

    def solve(self, b) -> np.ndarray:
        """``M^-1 b`` for a vector or a matrix (columns)."""
        return self.solve_L(self.solve_LT(b))

    def solve_LT(self, b) -> np.ndarray:
        """``L^-T b``."""
        return self._apply(K.ltl_solve_lt, b)

    def solve_L(self, b) -> np.ndarray:
        """``L^-1 b``."""
        return self._apply(K.ltl_solve_l, b)

    def _apply(self, kernel, b):
        n = self.L.shape[0]
        x = np.array(b, dtype=float, order="F", copy=True)
        if x.ndim not in (1, 2) or x.shape[0] != n:
            raise ValueError(f"b must have {n} rows (a vector or a matrix), got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("b contains NaN or infinity")
        if x.ndim == 1:
            kernel(self.L, self.lam, x)
        else:
            for j in range(x.shape[1]):
                col = np.ascontiguousarray(x[:, j])
                kernel(self.L, self.lam, col)
                x[:, j] = col
        return np.ascontiguousarray(x)


def ltl_factor(model, M) -> LTLFactor:
    """Factorise the mass matrix ``M`` (from :func:`sinews.crba`) of ``model`` as ``L^T L``.

    Raises ``ValueError`` if ``M`` is not positive definite.
    """
    nv = check_model(model).nv
    L = matrix(M, (nv, nv), "M").copy()
    lam = model.compiled.lam.copy()
    code = K.ltl_factor(L, lam)
    if code:
        raise ValueError(f"M is not positive definite (pivot at dof {code - 1})")
    # keep the lower triangle only: the upper part is the untouched input
    L = np.tril(L)
    return LTLFactor(L, lam)
