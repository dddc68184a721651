"""The inverse joint-space inertia: ``M^-1 x`` in O(n), and ``M^-1`` as a matrix.

``minv_times`` runs the articulated-body algorithm with zero velocity and no gravity:
``ABA(q, 0, x)`` with ``g = 0`` returns exactly ``M(q)^-1 x`` without forming ``M``
(Featherstone, RBDA section 7.3).  ``minverse`` forms ``M^-1`` from the branch-sparse
``L^T L`` factor (RBDA section 6.5).
"""

from __future__ import annotations

import numpy as np

from ._checks import raise_overflow, vector
from .aba import _run
from .algorithms import NO_FORCES
from .algorithms import get_data
from .crba import crba
from .ltl import ltl_factor

__all__ = ["minv_times", "minverse"]


def minv_times(model, q, x, data=None) -> np.ndarray:
    """``M(q)^-1 x`` in O(n) (no matrix is formed)."""
    d = get_data(model, data)
    c = model.compiled
    q = vector(q, c.nq, "q")
    x = vector(x, c.nv, "x")
    return _run(model, d, q, np.zeros(c.nv), x, NO_FORCES, 2 | 4, np.empty(c.nv), ("q", "v", "x"))


def minverse(model, q, data=None) -> np.ndarray:
    """The dense symmetric matrix ``M(q)^-1``."""
    M = crba(model, q, data)
    try:
        factor = ltl_factor(model, M)
    except ValueError as exc:
        raise ValueError(
            f"the mass matrix M(q) cannot be inverted ({exc}): a massless subtree, or q too "
            "large for double precision"
        ) from None
    try:
        return factor.solve(np.eye(model.nv))
    except ValueError:
        raise_overflow(("q",))
