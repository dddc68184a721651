"""Broad phase: sweep and prune on axis-aligned bounding boxes.

Boxes are sorted by their lower bound along the axis of largest spread of the centres; a sweep
then pairs each box only with the boxes whose interval along that axis starts before its own ends,
and keeps a pair when the boxes overlap on the two other axes too.  Cost O(n log n + k) for k
overlapping pairs instead of the n^2 of testing every pair (Baraff 1992; Cohen et al., I-COLLIDE,
1995).  The sweep is a Numba kernel compiled on first use.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit
from numpy.typing import ArrayLike

from .._checks import real_array

__all__ = ["sweep_and_prune", "aabb_overlaps"]


@njit(cache=True)
def _sweep(lo, hi, order, axis, out):
    n = order.shape[0]
    k = 0
    a1 = (axis + 1) % 3
    a2 = (axis + 2) % 3
    for ii in range(n):
        i = order[ii]
        end = hi[i, axis]
        for jj in range(ii + 1, n):
            j = order[jj]
            if lo[j, axis] > end:
                break
            if lo[j, a1] <= hi[i, a1] and lo[i, a1] <= hi[j, a1] and lo[j, a2] <= hi[i, a2] and lo[i, a2] <= hi[j, a2]:
                if k == out.shape[0]:
                    return -1
                if i < j:
                    out[k, 0] = i
                    out[k, 1] = j
                else:
                    out[k, 0] = j
                    out[k, 1] = i
                k += 1
    return k


def sweep_and_prune(lower: ArrayLike, upper: ArrayLike) -> np.ndarray:
    """Index pairs ``(i, j)``, ``i < j``, of the boxes ``[lower_i, upper_i]`` that overlap.

    ``lower``, ``upper``: (n, 3) finite corners.  Returns an (k, 2) int64 array sorted
    lexicographically (so the result does not depend on the sort's tie-breaking).
    """
    lo = real_array(lower, "lower", ndim=2)
    hi = real_array(upper, "upper", ndim=2)
    if lo.shape != hi.shape or lo.shape[1:] != (3,):
        raise ValueError(f"lower and upper must both have shape (n, 3), got {lo.shape} and {hi.shape}")
    return sweep_unchecked(lo, hi)


def sweep_unchecked(lo, hi) -> np.ndarray:
    """:func:`sweep_and_prune` on C-contiguous float64 (n, 3) arrays, without argument checks."""
    n = lo.shape[0]
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    centres = 0.5 * (lo + hi)
    axis = int(np.argmax(centres.var(axis=0)))
    order = np.argsort(lo[:, axis], kind="stable").astype(np.int64)
    cap = 4 * n
    while True:
        out = np.empty((cap, 2), dtype=np.int64)
        k = _sweep(lo, hi, order, axis, out)
        if k >= 0:
            break
        cap *= 4
    out = out[:k]
    if k:
        out = out[np.lexsort((out[:, 1], out[:, 0]))]
    return out


def aabb_overlaps(lower: ArrayLike, upper: ArrayLike) -> np.ndarray:
    """The same pairs as :func:`sweep_and_prune` by testing all n^2 pairs (a reference)."""
    lo = real_array(lower, "lower", ndim=2)
    hi = real_array(upper, "upper", ndim=2)
    ov = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(ov, 1))
    return np.stack([i, j], axis=1).astype(np.int64)
