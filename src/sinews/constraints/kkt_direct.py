"""The direct (KKT) method: one solve of the full saddle-point system.

Solves

    [ H   G^T ] [  x      ]   [ top    ]
    [ G   0   ] [ -lambda ] = [ bottom ]

i.e. ``H x = top + G^T lambda``, ``G x = bottom``.  Forward dynamics: ``x = qdd``,
``top = tau - C``, ``bottom = gamma``; impulses: ``x = qd_plus``, ``top = H qd_minus``,
``bottom = v_plus`` (then ``lambda`` is the physical impulse).  The matrix is symmetric
indefinite; it is solved with LAPACK's symmetric solver (``?sysv``, Bunch-Kaufman LDL^T) and
its condition estimate.  ``H`` may be singular (a massless leaf body) as long as the KKT
matrix is not.

If the KKT matrix is numerically singular: when ``G`` is rank deficient (redundant
constraints) but ``x`` is still unique (``rank(KKT) = nv + rank(G)``), the minimum-norm
least-squares solution is returned and flagged (``least_squares=True``; ``lambda`` is then the
minimum-norm multiplier vector); otherwise (``x`` not determined) a ``ValueError`` is raised.

Source: RBDL ``ForwardDynamicsConstraintsDirect`` / ``ComputeConstraintImpulsesDirect``
(rbdl.md section 2.1 and 2.5); Featherstone, RBDA section 8.1 (eq. 8.6).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg as sla

from ._linalg import RANK_RTOL, numerical_rank, sym_solve

__all__ = ["solve_kkt"]


def kkt_matrix(H, G):
    n, c = H.shape[0], G.shape[0]
    A = np.zeros((n + c, n + c))
    A[:n, :n] = H
    A[:n, n:] = G.T
    A[n:, :n] = G
    return A


def solve_kkt(H: np.ndarray, G: np.ndarray, top: np.ndarray, bottom: np.ndarray,
              ) -> tuple[np.ndarray, np.ndarray, dict]:
    """``H (n, n)``, ``G (c, n)``, ``top (n,)``, ``bottom (c,)`` -> ``(x (n,), lambda (c,), info)`` with ``info = {"rank": rank(G), "least_squares": bool}``."""
    n, c = H.shape[0], G.shape[0]
    A = kkt_matrix(H, G)
    b = np.concatenate([top, bottom])
    y = sym_solve(A, b)
    if y is not None:
        return y[:n], -y[n:], {"rank": c, "least_squares": False}
    # singular KKT matrix: least squares, only if x is still unique
    y, _, rank_A, _ = sla.lstsq(A, b, cond=RANK_RTOL, check_finite=False)
    rank_G = numerical_rank(G)
    if rank_A < n + rank_G:
        raise ValueError(
            "the constrained system is singular: the accelerations are not determined "
            f"(rank of the KKT matrix {rank_A} < nv + rank(G) = {n + rank_G}); "
            "a massless subtree is not fixed by the constraints (or q is too large in magnitude for "
            "double precision)"
        )
    return y[:n], -y[n:], {"rank": rank_G, "least_squares": True}
