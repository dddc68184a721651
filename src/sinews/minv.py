"""The inverse joint-space inertia: ``M^-1 x`` in O(n), and ``M^-1`` as a matrix.

``minv_times`` runs the articulated-body algorithm with zero velocity and no gravity:
``ABA(q, 0, x)`` with ``g = 0`` returns exactly ``M(q)^-1 x`` without forming ``M``
(Featherstone, RBDA section 7.3).  ``minverse`` runs the same recursion on all ``nv`` unit
right-hand sides at once, in O(n^2) (Carpentier 2018; Pinocchio ``computeMinverse``).  Both
include the joints' armature (``model.armature``) in ``M``, through ``D = S^T IA S + armature``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _minv_kernels as MK
from ._checks import raise_kernel_code, vector
from . import _native_entry as N
from ._entry import pool_retry
from ._native import Context, Entry
from .aba import _run
from .algorithms import NO_FORCES
from .algorithms import get_data

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["minv_times", "minverse"]


def minv_times(model: Model, q: ArrayLike, x: ArrayLike, data: Data | None = None) -> np.ndarray:
    """``M(q)^-1 x`` (nv,) for ``q`` (nq,) and ``x`` (nv,), in O(n) (no matrix is formed)."""
    d = get_data(model, data)
    c = model.compiled
    q = vector(q, c.nq, "q")
    x = vector(x, c.nv, "x")
    return _run(model, d, q, np.zeros(c.nv), x, NO_FORCES, 2 | 4, np.empty(c.nv), ("q", "v", "x"))


def minverse(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """The dense symmetric matrix ``M(q)^-1`` (nv, nv) at ``q`` (nq,) (both triangles), by one kernel: the
    articulated-body recursion on all unit joint forces at once, O(n^2) (see
    :mod:`sinews._minv_kernels`)."""
    if data is None:  # the fast path (sinews._entry): this thread's workspace and scratch
        try:
            cx, _, results = model._fast
            Minv = _MINV(cx, q, results)  # (a matrix taken from the pool, or cx: refused)
            if Minv is not cx or (Minv := pool_retry(model, _MINV, q)) is not None:
                return Minv
        except Exception:
            pass
    return _minverse(model, q, data)


_MINV = Entry(N.minverse_n, N.minverse_f, globals(), "_MINV", Context)


def _minverse(model, q, data) -> np.ndarray:
    """The checked path of :func:`minverse`."""
    d = get_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    Minv = np.empty((c.nv, c.nv))
    if not c.nlinks:
        return Minv
    code = MK.minverse(q, Minv, c.mi, c.mf, d.ws, MK.data_buffer(d))
    if code:
        if code < 0:
            raise_kernel_code(code, ("q",), model)
        body = model.bodies[c.link_body[code - 1]].name
        raise ValueError(
            f"the mass matrix M(q) cannot be inverted (the articulated inertia at body {body!r} "
            "is singular): a massless subtree, or q too large for double precision"
        )
    return Minv
