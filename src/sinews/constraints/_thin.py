"""Large redundant constraint sets: row compression through a thin QR of ``G``.

A set with many more rows than the model has velocity coordinates (thousands of point
contacts on a tree with nv ~ 100) is massively redundant: ``rank(G) <= nv``, and the
constraint-space matrix ``K = G H^-1 G^T`` (``rows x rows``) that the range-space and Kokkevis
methods factorise, or the ``(nv + rows)``-square KKT matrix of the direct method, is both huge
(30,000 rows: 7.2 GB) and singular.  Every method only ever needs the *range* of ``G``:

    G = Q R               (thin QR truncated at the numerical rank r of G: Q rows x r with
                           orthonormal columns, R r x nv of full row rank, r <= nv; see
                           RowCompression for how the sparsity of G is used)

* ``G x = b`` in the least-squares sense is ``R x = Q^T b`` (the part of ``b`` outside the
  range of ``Q`` is the inconsistency no ``x`` removes);
* ``G^T lambda = R^T Q^T lambda`` only sees ``mu = Q^T lambda``, and the minimum-norm
  multipliers lie in ``range(G) = range(Q)``: ``lambda = Q mu``;
* ``K = Q (R H^-1 R^T) Q^T``, so ``pinv(K) = Q pinv(R H^-1 R^T) Q^T``: the nonzero
  eigenvalues of the r x r matrix are those of ``K``, and the minimum-norm solution is the
  same.

So the set is solved as the r-row system ``(H, R, top, Q^T bottom)`` (regular: ``R`` has full
row rank) by the requested method and ``lambda = Q mu``: the same ``qdd``, the same constraint
forces ``G^T lambda`` and the same minimum-norm ``lambda`` as the method gives on the full
system (directions of ``G`` below ``RANK_RTOL`` relative, the null-space method's rank rule,
count as redundant), in ``O(rows nv^2)`` time and ``O(rows nv)`` memory instead of
``O(rows^3)`` and ``O(rows^2)``; the result is flagged ``least_squares=True`` with
``rank = r``.

Threshold (:data:`THIN_MIN_ROWS`): the compression is used when ``rows > nv`` (then the set is
necessarily redundant) and ``rows >= THIN_MIN_ROWS``; smaller sets keep the dense path (and
contacts-only sets their compiled kernel), whose answers are unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg as sla

from ._linalg import RANK_RTOL

__all__ = ["THIN_MIN_ROWS", "RowCompression", "is_thin", "uses_thin_path", "compress_rows", "solve_compressed"]

#: Row count from which a set with more rows than velocity coordinates is solved by row
#: compression (``rows > nv and rows >= THIN_MIN_ROWS``).
THIN_MIN_ROWS = 256


def is_thin(rows: int, nv: int) -> bool:
    """Whether a system of ``rows`` constraint rows on ``nv`` coordinates takes the thin path."""
    return rows > nv and rows >= THIN_MIN_ROWS


def uses_thin_path(cs) -> bool:
    """Whether a bound set is solved by row compression (False for an unbound set)."""
    return cs.model is not None and is_thin(cs.size, cs.model.nv)


class RowCompression:
    """``G = Q R`` with ``Q`` (rows x r, orthonormal columns; r = rank(G) <= nv) kept in
    factored form.

    The sparsity of ``G`` is used first: rows with the same non-zero columns (the contact rows
    of one link: its support chain) form a block ``G_b`` that only has ``c_b`` non-zero
    columns, and a block with more rows than that is replaced by the ``c_b`` rows of its own
    thin QR, ``G_b = Q_b R_b`` (contacts on different branches never share a block, and a
    block of 300 rows on a 20-dof chain shrinks to 20 rows).  All-zero rows drop out.  The
    stacked blocks ``S`` (at most ``sum_b min(rows_b, c_b)`` rows) then get one dense,
    column-pivoted thin QR ``S = Q2 R`` truncated at the numerical rank of ``G`` (``R``:
    ``rank(G) x nv``, full row rank, so every method solves a regular system);
    ``Q = diag(Q_b) Q2`` is never formed: :meth:`qt` and :meth:`q` apply it.
    """

    def __init__(self, G):
        m, n = G.shape
        self.m = m
        self.blocks = []  # (rows, Q_b or None (rows kept), first stacked row, stacked count)
        if m == 0:
            self.Q2, self.R = np.zeros((0, 0)), np.zeros((0, n))
            return
        mask = G != 0.0
        keys = np.packbits(mask, axis=1)
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        order = np.argsort(inverse, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(inverse, minlength=len(first)))])
        parts, start = [], 0
        for b in range(len(first)):
            rows = order[bounds[b] : bounds[b + 1]]
            cols = np.flatnonzero(mask[first[b]])
            if cols.size == 0:  # zero rows: no force, no equation
                continue
            if rows.size > cols.size:
                Qb, Rb = sla.qr(G[np.ix_(rows, cols)], mode="economic", check_finite=False)
                part = np.zeros((cols.size, n))
                part[:, cols] = Rb
            else:
                Qb, part = None, G[rows]
            self.blocks.append((rows, Qb, start, part.shape[0]))
            parts.append(part)
            start += part.shape[0]
        S = np.concatenate(parts) if parts else np.zeros((0, n))
        if not S.shape[0]:
            self.Q2, self.R = np.zeros((0, 0)), S
            return
        # rank-revealing: S P = Q2 R2; the rows of R2 below the numerical rank (|R2_ii| below
        # RANK_RTOL |R2_00|, the rule of the null-space method) are rounding noise and dropped,
        # so the compressed system has full row rank
        Q2, R2, piv = sla.qr(S, mode="economic", pivoting=True, check_finite=False)
        d = np.abs(np.diag(R2))
        r = int(np.sum(d > RANK_RTOL * d[0])) if d.size and d[0] > 0 else 0
        self.Q2 = Q2[:, :r]
        self.R = np.empty((r, n))
        self.R[:, piv] = R2[:r]

    def qt(self, b):
        """``Q^T b`` for ``b`` with ``rows`` leading entries (a vector or a 2-D array)."""
        b = np.asarray(b)
        y = np.empty((sum(k for *_, k in self.blocks),) + b.shape[1:])
        for rows, Qb, s, k in self.blocks:
            y[s : s + k] = b[rows] if Qb is None else Qb.T @ b[rows]
        return self.Q2.T @ y

    def q(self, mu):
        """``Q mu`` (rows entries; the multipliers of the dropped zero rows are 0)."""
        y = self.Q2 @ mu
        lam = np.zeros(self.m)
        for rows, Qb, s, k in self.blocks:
            lam[rows] = y[s : s + k] if Qb is None else Qb @ y[s : s + k]
        return lam


def compress_rows(G) -> RowCompression:
    """The factored thin QR ``G = Q R`` of :class:`RowCompression`."""
    return RowCompression(G)


def solve_compressed(solve, H, G, top, bottom):
    """``solve(H, R, top, Q^T bottom)`` on the compressed system, multipliers mapped back.

    ``solve`` returns ``(x, mu, info)``; the result is ``(x, Q mu, info)`` with
    ``info["least_squares"] = True`` (more rows than coordinates: always redundant) and
    ``info["rank"]`` the rank the solver found for ``R`` (= ``rank(G)``)."""
    c = compress_rows(G)
    x, mu, info = solve(H, c.R, top, c.qt(bottom))
    info = dict(info)
    info["least_squares"] = True
    return x, c.q(mu), info
