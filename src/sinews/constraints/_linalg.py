"""Small dense linear-algebra helpers shared by the constrained-dynamics methods."""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack as _lapack

# relative tolerance of the numerical rank of G (on |R_ii| of a pivoted QR, or singular values)
RANK_RTOL = 1e-10
# a Cholesky pivot below this (squared, relative to max diag) means "treat as singular"
CHOL_RTOL = 1e-12


def numerical_rank(G) -> int:
    """Numerical rank of G (singular values above ``RANK_RTOL * s_max``)."""
    if G.size == 0:
        return 0
    s = np.linalg.svd(G, compute_uv=False)
    return int(np.sum(s > RANK_RTOL * max(s[0], np.finfo(float).tiny)))


def solve_psd(K, a):
    """Solve ``K x = a`` for a symmetric positive (semi)definite K.

    Cholesky when K is numerically positive definite, else the minimum-norm least-squares
    solution from a symmetric eigendecomposition.  Returns ``(x, full_rank, rank)``.
    """
    c = K.shape[0]
    if c == 0:
        return np.zeros(0), True, 0
    dmax = float(np.max(np.abs(np.diag(K))))
    Lc, info = _lapack.dpotrf(K, lower=1, clean=0)
    if info == 0 and dmax > 0:
        piv = np.diag(Lc)
        if np.min(piv) ** 2 > CHOL_RTOL * dmax:
            x, info = _lapack.dpotrs(Lc, a if a.ndim == 2 else a.reshape(c, 1), lower=1)
            if info == 0:
                return (x if a.ndim == 2 else x[:, 0]), True, c
    w, V = np.linalg.eigh(0.5 * (K + K.T))
    keep = w > CHOL_RTOL * max(w[-1], np.finfo(float).tiny)
    Vk = V[:, keep]
    x = Vk @ ((Vk.T @ a) / w[keep][:, None] if a.ndim == 2 else (Vk.T @ a) / w[keep])
    return x, False, int(keep.sum())


def cross3(a, b) -> np.ndarray:
    """Cross product of two 3-vectors (much cheaper than ``np.cross`` for one pair)."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def skew3(w) -> np.ndarray:
    """``[w]x`` with ``[w]x u = w x u``."""
    w0, w1, w2 = w.tolist()
    return np.array([[0.0, -w2, w1], [w2, 0.0, -w0], [-w1, w0, 0.0]])


def cross_columns(A, B) -> np.ndarray:
    """Column-wise cross products of two (3, n) arrays."""
    return np.array(
        [A[1] * B[2] - A[2] * B[1], A[2] * B[0] - A[0] * B[2], A[0] * B[1] - A[1] * B[0]]
    ).reshape(3, -1)


def sym_solve(A, b):
    """Solve ``A x = b`` for a symmetric (indefinite) A with LAPACK ``?sysv`` (Bunch-Kaufman)
    and its condition estimate ``?sycon``.  Returns ``x``, or ``None`` if A is singular or its
    reciprocal condition number is below machine epsilon."""
    n = A.shape[0]
    if n == 0:
        return np.zeros(0)
    ldu, ipiv, x, info = _lapack.dsysv(A, b.reshape(n, 1), lower=1)
    if info != 0:
        return None
    anorm = float(np.abs(A).sum(axis=0).max())
    rcond, info = _lapack.dsycon(ldu, ipiv, anorm, lower=1)
    if info != 0 or not rcond > np.finfo(float).eps:
        return None
    x = x[:, 0]
    return x if np.all(np.isfinite(x)) else None


# a row of G whose largest entry is below ZERO_ROW_RTOL * max(1, max |G|) is zero up to rounding
ZERO_ROW_RTOL = 1e-12


def dead_rows(G) -> np.ndarray:
    """The rows of ``G`` (at least one row) that are zero up to rounding: ``max |G_r| <=
    ZERO_ROW_RTOL max(1, max |G|)`` (the test of :func:`zero_tiny_rows`; boolean mask)."""
    a = np.abs(G)
    return a.max(axis=1) <= ZERO_ROW_RTOL * max(1.0, float(a.max()))


def zero_tiny_rows(G) -> np.ndarray:
    """``G`` with rows that are zero up to rounding set to exactly zero (a copy when any is).

    A contact point on the axis of the only joint that moves it gives a row of pure rounding
    noise (~1e-17): every rank test that is relative to ``G`` or to ``G H^-1 G^T`` would accept
    it as full rank when it is the largest row, and the solve would return multipliers of
    ~1e19 marked as converged.  Zeroing it makes every method see the rank deficiency (a
    flagged least-squares answer or a clear error).  The floor ``max(1, max |G|)`` is in the
    units of ``G`` (metres per radian for contacts on revolute joints)."""
    if not G.shape[0]:
        return G
    dead = dead_rows(G)
    if not dead.any():
        return G
    G = G.copy()
    G[dead] = 0.0
    return G
