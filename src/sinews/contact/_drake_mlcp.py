"""From Drake's mixed problem to a pure LCP (:mod:`sinews.contact.constraint_solver`).

:class:`MlcpToLcpData` removes the bilateral constraints G (the block inverse of the saddle-point
matrix, through the projected inverse inertia C); the helpers below assemble the LCP rows
J X J~^T and J v + k of the unilateral constraints, and unpack an LCP solution
z = [fN, fD+, fD-, lam, fL] into (fN, fF, fL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._drake_operators import (InertiaSolve, Layout, Operator, Overflow, finite, overflow_error,
                               pinv_symmetric, real_ndarray)
from ._drake_problem import AccelProblemData, VelProblemData, _ops, _Ops


# --------------------------------------------------------------------------------------------
# Bilateral constraints: MLCP -> LCP
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MlcpToLcpData:
    """Block inverse of the saddle-point matrix A = [[M, -G^T], [G, 0]] (Drake's
    ``MlcpToLcpData``), built from the Delassus matrix Del = G M^-1 G^T and its pseudo-inverse.

    ``saddle_point_solve`` is Drake's ``A_solve``; ``projected_inertia_solve`` (C X, with
    C = M^-1 - M^-1 G^T Del^+ G M^-1) is Drake's ``fast_A_solve``.
    """

    num_velocities: int
    num_bilateral: int
    delassus: np.ndarray
    delassus_pinv: np.ndarray
    inverse_inertia_G_T: np.ndarray
    _inertia: InertiaSolve = field(repr=False)
    _G: Operator = field(repr=False)

    @classmethod
    def from_problem_data(cls, problem_data: Any) -> "MlcpToLcpData":
        """Build the bilateral-constraint solvers of ``problem_data`` (Drake's
        ``ConstructLinearEquationSolversForMlcp``)."""
        ops = _ops(problem_data)
        nv, nb = ops.nv, ops.nb
        if nb == 0:
            empty = np.zeros((0, 0))
            return cls(nv, 0, empty, empty, np.zeros((nv, 0)), ops.inertia, ops.G)
        MiGT = ops.inertia(ops.GT.matrix())
        delassus = finite(ops.G(MiGT))
        delassus = 0.5 * (delassus + delassus.T)
        delassus_pinv = finite(pinv_symmetric(delassus))
        for a in (delassus, delassus_pinv, MiGT):
            a.setflags(write=False)
        return cls(nv, nb, delassus, delassus_pinv, MiGT, ops.inertia, ops.G)

    def projected_inertia_solve(self, X: Any) -> np.ndarray:
        """C X with C = M^-1 - M^-1 G^T Del^+ G M^-1 (equals M^-1 X when nb = 0)."""
        X = self._checked(X, "X", self.num_velocities)
        try:
            return self._projected(X)
        except Overflow:
            raise overflow_error(None, self._inertia, (self._G,), X=X) from None

    def _projected(self, X: np.ndarray) -> np.ndarray:
        Y = self._inertia(X)
        if self.num_bilateral == 0:
            return Y
        return finite(Y - self.inverse_inertia_G_T @ (self.delassus_pinv @ self._G(Y)))

    def saddle_point_solve(self, B: Any) -> np.ndarray:
        """A^-1 [Y; Z] for A = [[M, -G^T], [G, 0]]: the solution (x, lam) of
        M x - G^T lam = Y, G x = Z (least squares in lam for redundant G)."""
        B = self._checked(B, "B", self.num_velocities + self.num_bilateral)
        try:
            return self._saddle(B)
        except Overflow:
            raise overflow_error(None, self._inertia, (self._G,), B=B) from None

    def _saddle(self, B: np.ndarray) -> np.ndarray:
        nv = self.num_velocities
        Y, Z = B[:nv], B[nv:]
        MiY = self._inertia(Y)
        if self.num_bilateral == 0:
            return MiY
        lam = self.delassus_pinv @ (Z - self._G(MiY))
        x = MiY + self.inverse_inertia_G_T @ lam
        return finite(np.concatenate([x, lam], axis=0))

    @staticmethod
    def _checked(X: Any, name: str, rows: int) -> np.ndarray:
        X = real_ndarray(X, name)
        if X.ndim not in (1, 2) or X.shape[0] != rows:
            raise ValueError(f"{name} must have shape ({rows},) or ({rows}, k), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name} contains NaN or infinite entries")
        return X


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# LCP assembly
# --------------------------------------------------------------------------------------------

def _delassus_blocks(ops: _Ops, inverse: Any) -> np.ndarray:
    """W = J X J~^T with J = [N; F; L], J~^T = [NT, F^T, L^T] and X = C (or M^-1)."""
    JT = np.hstack([ops.NT.matrix(), ops.FT.matrix(), ops.LT.matrix()])
    XJT = inverse(JT)
    return np.vstack([ops.N(XJT), ops.F(XJT), ops.L(XJT)])


def _rows(ops: _Ops, v: np.ndarray, data: Any) -> np.ndarray:
    """J v + k for J = [N; F; L] and k = [kN; kF; kL]."""
    return np.concatenate([ops.N(v) + data.kN, ops.F(v) + data.kF, ops.L(v) + data.kL])


def _accel_layout(data: AccelProblemData) -> Layout:
    o = data._ops
    return Layout(o.nc, o.nr, data.num_non_sliding, o.nl)


def _vel_layout(data: VelProblemData) -> Layout:
    o = data._ops
    return Layout(o.nc, o.nr, o.nc, o.nl)


def _unpack(layout: Layout, z: np.ndarray) -> np.ndarray:
    """(fN, fF, fL) from z."""
    return np.concatenate([z[layout.fN], z[layout.fDp] - z[layout.fDm], z[layout.fL]])
