"""The null-space method with a QR decomposition of ``G^T``.

Solves ``H x = top + G^T lambda``, ``G x = bottom``.  With a column-pivoted Householder QR

    G^T P = [Y Z] [R; 0],   Y: nv x r,  Z: nv x (nv - r),  r = rank(G)

``G = P R^T Y^T`` on the range, so with ``x = Y x_y + Z x_z``:

    R1^T x_y = P^T bottom                  (R1 = first r rows of R; triangular if r = rows)
    (Z^T H Z) x_z = Z^T (top - H Y x_y)    (dense Cholesky: the reduced inertia)
    R1 P^T lambda = Y^T (H x - top)        (the multipliers, from the range part)

The last line is where RBDL is wrong (rbdl.md section 0.3): it solves with ``(G Y)`` instead
of ``(G Y)^T = R``, which gives wrong multipliers whenever ``R`` is not diagonal.  Here the
multipliers equal the direct method's.  ``Z^T H Z`` only needs ``H`` to be positive definite on
the null space of ``G``, so massless bodies fixed by the constraints are fine.  Redundant
rows (``r < rows``) give the minimum-norm least-squares multipliers, flagged
(``least_squares=True``).

Source: RBDL ``ForwardDynamicsConstraintsNullSpace`` / ``ComputeConstraintImpulsesNullSpace``
(rbdl.md sections 2.3, 2.5, with the multiplier system corrected); Featherstone RBDA
section 8.3; Nocedal & Wright, *Numerical Optimization*, section 16.2.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg as sla

from ._linalg import RANK_RTOL, solve_psd

__all__ = ["solve_null_space"]


def solve_null_space(H: np.ndarray, G: np.ndarray, top: np.ndarray, bottom: np.ndarray,
                     ) -> tuple[np.ndarray, np.ndarray, dict]:
    """``H (n, n)``, ``G (c, n)``, ``top (n,)``, ``bottom (c,)`` -> ``(x (n,), lambda (c,), info)``."""
    n, c = H.shape[0], G.shape[0]
    if c == 0:
        x, full, _ = solve_psd(H, top)
        if not full:
            raise ValueError("H is singular and there are no constraints: the accelerations are not determined")
        return x, np.zeros(0), {"rank": 0, "least_squares": False}
    Q, R, piv = sla.qr(G.T, pivoting=True, mode="full", check_finite=False)
    d = np.abs(np.diag(R))
    r = int(np.sum(d > RANK_RTOL * max(d[0], np.finfo(float).tiny))) if d.size else 0
    Y, Z = Q[:, :r], Q[:, r:]
    R1 = R[:r, :]  # r x c
    b_p = bottom[piv]
    if r == c:
        x_y = sla.solve_triangular(R1, b_p, trans="T", check_finite=False)
    else:
        x_y = np.linalg.lstsq(R1.T, b_p, rcond=None)[0]
    x = Y @ x_y
    if n > r:
        Hz = Z.T @ H @ Z
        x_z, full, _ = solve_psd(Hz, Z.T @ (top - H @ x))
        if not full:
            raise ValueError(
                "the reduced inertia Z^T H Z is singular: the accelerations are not determined "
                "(a massless subtree is not fixed by the constraints, or q is too large in magnitude "
                "for double precision)"
            )
        x = x + Z @ x_z
    rhs = Y.T @ (H @ x - top)
    if r == c:
        mu = sla.solve_triangular(R1, rhs, check_finite=False)
    else:
        mu = np.linalg.lstsq(R1, rhs, rcond=None)[0]  # minimum norm
    lam = np.empty(c)
    lam[piv] = mu
    return x, lam, {"rank": r, "least_squares": r < c}
