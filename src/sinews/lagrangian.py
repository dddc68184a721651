"""Dense Lagrangian forward dynamics: ``qdd = M(q)^-1 (tau - C(q, v) v - g(q) + J^T f_ext)``.

``M`` from CRBA, the bias from RNEA with zero acceleration, and a Cholesky solve (LAPACK via
SciPy).  O(n^3) but simple; :func:`sinews.aba` is the O(n) alternative and both agree to
round-off.  Source: Featherstone, RBDA section 6.1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np
from numpy.typing import ArrayLike

from ._checks import finite_vector, raise_overflow
from .algorithms import get_data
from .crba import crba
from .rnea import nonlinear_effects

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["forward_dynamics_lagrangian"]


def forward_dynamics_lagrangian(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike,
                                f_ext: ArrayLike | Mapping[int | str, ArrayLike] | None = None,
                                data: Data | None = None) -> np.ndarray:
    """Joint accelerations ``qdd`` (nv,) by forming ``M`` (CRBA) and the bias (RNEA) and solving
    with a Cholesky factorisation.  Same arguments and result as :func:`sinews.aba`: ``q``
    (nq,), ``v`` (nv,), ``tau`` (nv,), ``f_ext`` external forces (as :func:`sinews.rnea`)."""
    from scipy.linalg import cho_factor, cho_solve  # imported on first use: SciPy is slow to import

    get_data(model, data)  # checks model and data
    tau = finite_vector(tau, model.nv, "tau")
    M = crba(model, q, data)
    h = nonlinear_effects(model, q, v, f_ext, data)
    try:
        factor = cho_factor(M, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        raise ValueError(
            "the mass matrix M(q) is not positive definite (a massless subtree, or q too large "
            "for double precision)"
        ) from None
    qdd = cho_solve(factor, tau - h, check_finite=False)
    if not np.all(np.isfinite(qdd)):
        raise_overflow(("q", "v", "tau", "f_ext"))
    return qdd
