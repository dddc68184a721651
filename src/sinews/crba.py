"""Composite-rigid-body algorithm (CRBA): the joint-space inertia matrix ``M(q)``.

Backward pass: composite inertias ``Ic_p += X_p_i^* Ic_i X_i_p`` (rigid-body inertias, moved
with the parallel-axis theorem).  Columns: ``F = Ic_i S_i``, ``M_ii = S_i^T F``, then
``F = X_p_i^* F`` up the ancestors j: ``M_ji = M_ij^T = S_j^T F``.  Entries between dofs on
different branches are zero (branch-induced sparsity).  The joints' armature
(``model.armature``) is added to the diagonal: ``M_ii += armature_i`` (Pinocchio's
``model.armature``).

Source: Featherstone, *Rigid Body Dynamics Algorithms*, section 6.2 (Table 6.2); RBDL
``CompositeRigidBodyAlgorithm``; Pinocchio ``crba``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _crba_kernels as K
from ._checks import raise_kernel_code, vector
from . import _native_entry as N
from ._entry import pool_retry
from ._native import Context, Entry
from .algorithms import get_data

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["crba"]


def crba(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """The symmetric positive-definite joint-space inertia matrix ``M(q)`` (nv, nv) at the
    configuration ``q`` (nq,), the joints' armature on its diagonal.  ``data``: a workspace
    (``model.data()``; default the calling thread's own)."""
    if data is None:  # the fast path (sinews._entry)
        try:
            cx, _, results = model._fast
            M = _CRBA(cx, q, results)  # (a matrix taken from the pool, or cx: refused)
            if M is not cx or (M := pool_retry(model, _CRBA, q)) is not None:
                return M
        except Exception:
            pass
    return _crba(model, q, data)


_CRBA = Entry(N.crba_n, N.crba_f, globals(), "_CRBA", Context)


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
