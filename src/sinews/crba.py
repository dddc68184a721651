"""Composite-rigid-body algorithm (CRBA): the joint-space inertia matrix ``M(q)``.

Backward pass: composite inertias ``Ic_p += X_p_i^* Ic_i X_i_p`` (rigid-body inertias, moved
with the parallel-axis theorem).  Columns: ``F = Ic_i S_i``, ``M_ii = S_i^T F``, then
``F = X_p_i^* F`` up the ancestors j: ``M_ji = M_ij^T = S_j^T F``.  Entries between dofs on
different branches are zero (branch-induced sparsity).

Source: Featherstone, *Rigid Body Dynamics Algorithms*, section 6.2 (Table 6.2); RBDL
``CompositeRigidBodyAlgorithm``; Pinocchio ``crba``.
"""

from __future__ import annotations

import numpy as np

from . import _crba_kernels as K
from ._checks import raise_kernel_code, vector
from ._entry import Lazy
from .algorithms import get_data

__all__ = ["crba"]


def crba(model, q, data=None) -> np.ndarray:
    """The symmetric positive-definite joint-space inertia matrix ``M(q)`` (nv x nv)."""
    if data is None:  # the fast path (sinews._entry)
        try:
            mi, mf, ws, nv = model._tls.fast
            M = _empty((nv, nv))
            if not _CRBA(q, M, mi, mf, ws):
                return M
        except Exception:
            pass
    return _crba(model, q, data)


_empty = np.empty
_CRBA = Lazy("crba_x", globals(), "_CRBA")


def _crba(model, q, data) -> np.ndarray:
    """The checked path of :func:`crba`."""
    d = get_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    M = np.zeros((c.nv, c.nv))
    if c.nlinks:
        code = K.crba(q, M, c.mi, c.mf, d.ws)
        if code:
            raise_kernel_code(code, ("q",), model)
    return M
