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
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ._jit import njit

from . import _ltl_kernels as K
from ._checks import matrix, real_array, real_dtype
from .algorithms import check_model

if TYPE_CHECKING:
    from .model import Model

__all__ = ["LTLFactor", "ltl_factor"]


@dataclass
class LTLFactor:
    """``M = L^T L``; ``L`` (nv, nv) is stored dense (lower triangle), ``lam`` (nv,) is the
    dof-parent array (``lam[i] < i``, -1 at a root).  Built by :func:`ltl_factor`."""

    L: np.ndarray
    lam: np.ndarray

    def __post_init__(self):
        L = real_array(self.L, "L", ndim=2)
        n = L.shape[0]
        if L.shape != (n, n):
            raise ValueError(f"L must be a square matrix, got shape {L.shape}")
        if not np.all(np.diag(L) > 0.0):
            raise ValueError("L must have a positive diagonal")
        lam = np.asarray(self.lam)
        if lam.dtype.kind not in "iu" or lam.shape != (n,):
            raise ValueError(f"lam must be an integer array of shape ({n},), got {lam.dtype} {lam.shape}")
        lam = np.ascontiguousarray(lam, dtype=np.int64)
        if n and not np.all((lam >= -1) & (lam < np.arange(n))):
            raise ValueError("lam must hold the parent of each dof: -1 <= lam[i] < i")
        self.L = L
        self.lam = lam

    def solve(self, b: ArrayLike) -> np.ndarray:
        """``M^-1 b`` for a vector ``b`` (nv,) or a matrix (nv, k) (columns); same shape out."""
        return self.solve_L(self.solve_LT(b))

    def solve_LT(self, b: ArrayLike) -> np.ndarray:
        """``L^-T b`` for ``b`` (nv,) or (nv, k)."""
        return self._apply(K.ltl_solve_lt, b)

    def solve_L(self, b: ArrayLike) -> np.ndarray:
        """``L^-1 b`` for ``b`` (nv,) or (nv, k)."""
        return self._apply(K.ltl_solve_l, b)

    def _apply(self, kernel, b):
        n = self.L.shape[0]
        try:
            a = np.asarray(b)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"b must be a real vector or matrix: {exc}") from None
        real_dtype(a, "b")
        x = np.array(a, dtype=np.float64, order="F", copy=True)
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
        if not np.all(np.isfinite(x)):
            raise ValueError(
                "the solution is not finite (overflow): b is too large for this factor, or M is "
                "singular to working precision"
            )
        return np.ascontiguousarray(x)


@njit(cache=True)
def _structure(H, lam, rtol):
    """Check that H is symmetric and zero between dofs on different branches (``lam``: parent
    of each dof, ``lam[i] < i``), both to ``rtol`` times max |H|.  Returns ``(0, 0, 0)``, or
    ``(1, i, j)`` for an asymmetric pair, ``(2, i, j)`` for an entry outside the pattern."""
    n = H.shape[0]
    scale = 0.0
    for i in range(n):
        for j in range(n):
            a = abs(H[i, j])
            if a > scale:
                scale = a
    tol = rtol * scale
    mark = np.zeros(n, np.bool_)
    for i in range(n):
        j = lam[i]
        while j >= 0:  # the ancestors of dof i: the only j < i with H[i, j] != 0
            mark[j] = True
            j = lam[j]
        for j in range(i):
            if abs(H[i, j] - H[j, i]) > tol:
                return 1, i, j
            if not mark[j] and abs(H[i, j]) > tol:
                return 2, i, j
        j = lam[i]
        while j >= 0:
            mark[j] = False
            j = lam[j]
    return 0, 0, 0


#: Relative tolerance (to the largest |M_ij|) of the symmetry and branch-sparsity checks.
STRUCTURE_RTOL = 1e-9


def ltl_factor(model: Model, M: ArrayLike) -> LTLFactor:
    """Factorise the mass matrix ``M`` (nv, nv) (from :func:`sinews.crba`) of ``model`` as
    ``L^T L``.

    ``M`` must be symmetric and zero between dofs on different branches of the tree (the
    sparsity of every mass matrix of ``model``), both up to a relative tolerance
    :data:`STRUCTURE_RTOL`; the factorisation relies on it.  Raises ``ValueError`` naming
    ``M`` otherwise, and if ``M`` is not positive definite.
    """
    c = check_model(model).compiled
    nv = c.nv
    L = matrix(M, (nv, nv), "M").copy()
    lam = c.lam.copy()
    kind, i, j = _structure(L, lam, STRUCTURE_RTOL) if nv else (0, 0, 0)
    if kind == 1:
        raise ValueError(
            f"M must be symmetric: M[{i}, {j}] = {L[i, j]:.6g} but M[{j}, {i}] = {L[j, i]:.6g}"
        )
    if kind == 2:
        raise ValueError(
            f"M is not a mass matrix of this model: M[{i}, {j}] = {L[i, j]:.6g} couples dofs on "
            "different branches of the tree (it must be zero there; use sinews.crba(model, q))"
        )
    code = K.ltl_factor(L, lam)
    if code:
        raise ValueError(f"M is not positive definite (pivot at dof {code - 1})")
    # keep the lower triangle only: the upper part is the untouched input
    factor = LTLFactor.__new__(LTLFactor)  # valid by construction: skip __post_init__'s checks
    factor.L = np.tril(L)
    factor.lam = lam
    return factor
