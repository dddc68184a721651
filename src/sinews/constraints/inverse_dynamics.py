r"""Inverse dynamics of constrained, possibly under-actuated systems.

Equations of motion with constraints (RBDL's convention, :math:`\lambda` = physical
multipliers):

.. math::

    H\ddot q + C = \tau + G^T\lambda, \qquad G\ddot q = \gamma .

Only some coordinates are actuated.  The **actuation map** splits :math:`\mathbb R^n` with two
selection matrices, :math:`S` (:math:`n_a \times n`, the actuated rows of the identity) and
:math:`P` (:math:`n_u \times n`, the unactuated rows), so :math:`\ddot q = S^T u + P^T v`,
:math:`S^TS + P^TP = I`, and admissible torques satisfy :math:`P\tau = 0`.

**Exact operator** (:func:`inverse_dynamics_constraints`, RBDL ``InverseDynamicsConstraints``;
Koch's thesis eq. 5.20).  The actuated accelerations are imposed, :math:`u = S\ddot q^*`; the
unactuated ones follow from the constraints and the unactuated rows of the dynamics:

.. math::

    (GP^T)\,v = \gamma - GS^Tu, \qquad
    (PG^T)\,\lambda = P(H\ddot q + C), \qquad
    \tau = S^TS\,(H\ddot q + C - G^T\lambda).

It reaches the target in the actuated coordinates exactly and needs the system to be **fully
actuated**, :math:`\mathrm{rank}(GP^T) = n_u` (:func:`is_fully_actuated`).  When
:math:`c > n_u` the multipliers (and so :math:`\tau`) are not unique; sinews returns the
minimum-norm :math:`\lambda` (RBDL returns column-pivoting QR's basic solution), so compare such
results through forward-dynamics consistency, not entry by entry.  Both systems are solved in
the least-squares sense and their residuals are reported; ``converged`` is false when they do
not vanish (an under-actuated system, or an infeasible target).

**Relaxed operator** (:func:`inverse_dynamics_constraints_relaxed`, RBDL
``InverseDynamicsConstraintsRelaxed``; Koch and Kudruss).  For under-actuated systems the
target cannot be met; choose the actuated torques whose forward dynamics comes closest, in the
weighted sense, by solving the equality-constrained QP

.. math::

    \min_{\ddot q}\ \tfrac12\ddot q^TH\ddot q + C^T\ddot q
       + \tfrac12 (Sx' - S\ddot q)^T W (Sx' - S\ddot q)
    \quad\text{s.t.}\quad G\ddot q = \gamma,
    \qquad x' = \ddot q^* + S^TW^{-1}SC,

whose KKT system is

.. math::

    \begin{bmatrix} H + S^TWS & G^T \\ G & 0 \end{bmatrix}
    \begin{bmatrix} \ddot q \\ -\lambda \end{bmatrix} =
    \begin{bmatrix} S^TWS\ddot q^* - P^TPC \\ \gamma \end{bmatrix},
    \qquad \tau = S^T\big(WS(\ddot q^* - \ddot q) + SC\big).

The stationarity condition is exactly :math:`H\ddot q + C = \tau + G^T\lambda` with
:math:`P\tau = 0`, so forward dynamics with :math:`\tau` reproduces :math:`\ddot q`.  RBDL
hard-codes :math:`W = 100\,SHS^T` (and overwrites any user value); sinews keeps that as the
default and takes ``weight`` as a parameter.  Because :math:`W` is finite the target is not met
even when it is feasible: an actuated coordinate decoupled from everything else gets
:math:`\ddot q = \tfrac{100}{101}\ddot q^*` with the default weight.  RBDL solves the QP by the
null-space method; sinews solves the same KKT system directly (the solution is unique when the
KKT matrix is regular; otherwise the minimum-norm least-squares solution is taken).

:math:`H` (CRBA), :math:`C` (with gravity and ``f_ext``), :math:`G` and :math:`\gamma` come from
:func:`sinews.constraints.constrained_system` (RBDL's ``CalcConstrainedSystemVariables``;
:math:`\gamma` includes the Baumgarte terms of the groups that enable them).

Source: RBDL 3.3.1, ``src/Constraints.cc`` (``SetActuationMap``, ``InverseDynamicsConstraints``,
``InverseDynamicsConstraintsRelaxed``, ``isConstrainedSystemFullyActuated``);
``shared/reference/rbdl.md`` §2.8.  M. L. Felis, "RBDL: an efficient rigid-body dynamics library
using recursive algorithms", Autonomous Robots 41(2), 2017; M. Millard et al., the ORB-HD
constraint overhaul.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import finite_vector, real_array
from ..algorithms import check_model
from .constraint import _real_scalar

if TYPE_CHECKING:
    from ..model import Model
    from .constraint_set import ConstraintSet

__all__ = [
    "ActuationMap",
    "ConstrainedInverseDynamicsResult",
    "actuation_map",
    "is_fully_actuated",
    "inverse_dynamics_constraints",
    "inverse_dynamics_constraints_relaxed",
]


@dataclass(frozen=True)
class ActuationMap:
    """Selection of the actuated velocity coordinates.

    ``actuated``: boolean mask (length ``nv``); ``S``: ``n_a x nv`` rows of the identity for the
    actuated coordinates; ``P``: ``n_u x nv`` rows for the unactuated ones.
    """

    actuated: np.ndarray
    S: np.ndarray
    P: np.ndarray

    @property
    def n_actuated(self) -> int:
        return int(self.S.shape[0])

    @property
    def n_unactuated(self) -> int:
        return int(self.P.shape[0])


@dataclass
class ConstrainedInverseDynamicsResult:
    """Result of the constrained inverse dynamics.

    ``tau``: generalized forces (zero on unactuated coordinates); ``qdd``: the accelerations
    that forward dynamics with ``tau`` produces; ``multipliers``: :math:`\\lambda` per constraint
    row (:math:`H\\ddot q + C = \\tau + G^T\\lambda`); ``residual``: the largest of the residuals
    of the linear systems solved (dynamics rows and :math:`G\\ddot q - \\gamma`); ``converged``:
    the residual is at round-off level; ``iterations``: 1 (direct solves); ``fully_actuated``:
    :math:`\\mathrm{rank}(GP^T) = n_u`; ``method``: ``"exact"`` or ``"relaxed"``; ``weight``: the
    :math:`W` used by the relaxed operator (``None`` for the exact one).
    """

    tau: np.ndarray
    qdd: np.ndarray
    multipliers: np.ndarray
    residual: float
    converged: bool
    iterations: int
    fully_actuated: bool
    method: str
    weight: np.ndarray | None = None


def actuation_map(model: Model, actuated: ArrayLike | ActuationMap) -> ActuationMap:
    """Build the selection matrices from ``actuated``.

    ``actuated``: a boolean mask of length ``nv`` (RBDL's ``std::vector<bool>``), or a sequence
    of actuated velocity indices (integers in ``[0, nv)``).  An :class:`ActuationMap` is
    returned unchanged (after checking its size).
    """
    nv = check_model(model).nv
    if isinstance(actuated, ActuationMap):
        if actuated.actuated.shape != (nv,):
            raise ValueError(f"actuated must describe {nv} velocity coordinates, got {actuated.actuated.shape[0]}")
        return actuated
    try:
        a = np.asarray(actuated)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"actuated must be a boolean mask of length nv or a sequence of integer dof indices: {exc}") from None
    if a.dtype == bool:
        if a.shape != (nv,):
            raise ValueError(f"actuated: a boolean mask must have shape ({nv},), got {a.shape}")
        mask = a.copy()
    else:
        if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
            raise ValueError("actuated must be a boolean mask of length nv or a sequence of integer dof indices")
        if a.size and (a.min() < 0 or a.max() >= nv):
            raise ValueError(f"actuated: dof indices must lie in [0, {nv})")
        if np.unique(a).size != a.size:
            raise ValueError("actuated: repeated dof index")
        mask = np.zeros(nv, dtype=bool)
        mask[a.astype(np.int64)] = True
    eye = np.eye(nv)
    return ActuationMap(mask, eye[mask], eye[~mask])


def _system(model, q, v, cs, f_ext):
    from . import constrained_system

    q = finite_vector(q, model.nq, "q")
    v = finite_vector(v, model.nv, "v")
    s = constrained_system(model, q, v, cs, f_ext=f_ext)
    return s.H, s.C, s.G, s.gamma


def _rank(A: np.ndarray) -> int:
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > max(A.shape) * np.finfo(float).eps * max(1.0, s[0])))


def _fully_actuated(G, amap: ActuationMap) -> bool:
    return _rank(G @ amap.P.T) == amap.n_unactuated


def is_fully_actuated(model: Model, q: ArrayLike, cs: ConstraintSet, actuated: ArrayLike | ActuationMap) -> bool:
    """``rank(G P^T) == n_u`` at ``q (nq,)``: every unactuated coordinate is controlled through the
    constraints.

    RBDL's ``isConstrainedSystemFullyActuated`` (which also takes ``qdot``, unused by the test).
    The rank uses the singular values with tolerance ``max(shape) * eps * sigma_max``.
    """
    from . import constraint_jacobian

    q = finite_vector(q, check_model(model).nq, "q")
    amap = actuation_map(model, actuated)
    G = np.asarray(constraint_jacobian(model, q, cs), dtype=float)
    return _fully_actuated(G, amap)


def _lstsq(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    if A.shape[1] == 0:
        return np.zeros(0)
    if A.shape[0] == 0:
        return np.zeros(A.shape[1])
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _finite(x: np.ndarray, names: str) -> np.ndarray:
    """``x`` if finite, else a ValueError naming the inputs (floating-point overflow)."""
    if not math.isfinite(float(np.sum(x))):
        raise ValueError(f"the inverse dynamics overflow (not finite): {names} too large in magnitude")
    return x


def _reproduced(H, C, G, gamma, tau, qdd) -> bool:
    """Whether forward dynamics with ``tau`` (the direct method's KKT solve) gives ``qdd``: the
    promise of both operators.  False at configurations where the accelerations are not
    determined, and where the inputs' magnitudes leave ``qdd`` to rounding."""
    from .kkt_direct import solve_kkt

    try:
        x = solve_kkt(H, G, tau - C, gamma)[0]
    except ValueError:
        return False
    scale = max(1.0, float(np.abs(qdd).max()) if qdd.size else 0.0)
    return bool(np.all(np.isfinite(x)) and np.abs(x - qdd).max(initial=0.0) <= 1e-8 * scale)


def _tolerance(*arrays) -> float:
    scale = max([1.0] + [float(np.abs(a).max()) for a in arrays if a.size])
    return 1e-9 * scale


def inverse_dynamics_constraints(model: Model, q: ArrayLike, v: ArrayLike, qdd_desired: ArrayLike, cs: ConstraintSet,
                                 actuated: ArrayLike | ActuationMap, f_ext: object = None,
                                 ) -> ConstrainedInverseDynamicsResult:
    """Exact constrained inverse dynamics (Koch eq. 5.20) for a fully actuated system.

    ``q (nq,)``, ``v (nv,)``, ``qdd_desired (nv,)``; ``f_ext`` as in :func:`sinews.rnea`.

    ``actuated``: see :func:`actuation_map`.  The actuated part of ``qdd_desired`` is imposed;
    the unactuated part is recomputed from the constraints.  See the module docstring.
    """
    amap = actuation_map(model, actuated)
    qdd_star = finite_vector(qdd_desired, model.nv, "qdd_desired")
    H, C, G, gamma = _system(model, q, v, cs, f_ext)
    S, P = amap.S, amap.P
    u = S @ qdd_star
    GPt = G @ P.T
    vu = _lstsq(GPt, _finite(gamma - G @ (S.T @ u), "qdd_desired"))
    qdd = S.T @ u + P.T @ vu
    rhs = _finite(H @ qdd + C, "qdd_desired")
    lam = _lstsq(P @ G.T, P @ rhs)
    tau = S.T @ (S @ (rhs - G.T @ lam))
    r_constraint = G @ qdd - gamma
    r_dynamics = P @ (rhs - G.T @ lam)
    residual = max(
        float(np.abs(r_constraint).max()) if r_constraint.size else 0.0,
        float(np.abs(r_dynamics).max()) if r_dynamics.size else 0.0,
    )
    tol = _tolerance(H, C, G, gamma, qdd)
    _finite(tau, "qdd_desired")
    return ConstrainedInverseDynamicsResult(
        tau=tau,
        qdd=qdd,
        multipliers=lam,
        residual=residual,
        converged=bool(residual <= tol) and _reproduced(H, C, G, gamma, tau, qdd),
        iterations=1,
        fully_actuated=_fully_actuated(G, amap),
        method="exact",
    )


def _weight_matrix(weight, H, amap: ActuationMap, weight_scale: float) -> np.ndarray:
    na = amap.n_actuated
    ws = _real_scalar(weight_scale, "weight_scale")
    if not (np.isfinite(ws) and ws > 0.0):
        raise ValueError(f"weight_scale must be a positive finite number, got {weight_scale!r}")
    if weight is None:
        return ws * (amap.S @ H @ amap.S.T)
    W = real_array(weight, "weight", finite=False)
    if W.ndim == 0:
        W = float(W) * np.eye(na)
    elif W.shape == (na,):
        W = np.diag(W)
    elif W.shape != (na, na):
        raise ValueError(
            f"weight must be a scalar, a length-{na} vector or a {na}x{na} matrix (n_a = {na} actuated "
            f"coordinates, from actuated), got shape {W.shape}"
        )
    if not np.all(np.isfinite(W)):
        raise ValueError("weight contains NaN or infinity")
    if not np.allclose(W, W.T, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(W).max()) if W.size else 1.0)):
        raise ValueError("weight must be symmetric")
    if na and np.linalg.eigvalsh(0.5 * (W + W.T)).min() <= 0.0:
        raise ValueError("weight must be positive definite")
    return W


def inverse_dynamics_constraints_relaxed(
    model: Model, q: ArrayLike, v: ArrayLike, qdd_desired: ArrayLike, cs: ConstraintSet,
    actuated: ArrayLike | ActuationMap, weight: ArrayLike | None = None, weight_scale: float = 100.0,
    f_ext: object = None,
) -> ConstrainedInverseDynamicsResult:
    """Relaxed constrained inverse dynamics (Koch/Kudruss) for under-actuated systems.

    ``q (nq,)``, ``v (nv,)``, ``qdd_desired (nv,)``; ``f_ext`` as in :func:`sinews.rnea`.

    ``weight``: :math:`W` (``n_a x n_a`` symmetric positive definite; a scalar or a vector means
    a multiple of the identity or a diagonal).  Default ``weight_scale * S H S^T`` with
    ``weight_scale = 100`` (RBDL's hard-coded value).  Forward dynamics with the returned
    ``tau`` reproduces ``qdd`` exactly; ``qdd`` only approaches ``qdd_desired`` as ``W`` grows.
    """
    amap = actuation_map(model, actuated)
    qdd_star = finite_vector(qdd_desired, model.nv, "qdd_desired")
    H, C, G, gamma = _system(model, q, v, cs, f_ext)
    S, P = amap.S, amap.P
    W = _weight_matrix(weight, H, amap, weight_scale)
    n, c = model.nv, G.shape[0]
    A = np.zeros((n + c, n + c))
    A[:n, :n] = H + S.T @ W @ S
    A[:n, n:] = G.T
    A[n:, :n] = G
    b = np.concatenate([S.T @ (W @ (S @ qdd_star)) - P.T @ (P @ C), gamma])
    _finite(A, "weight")
    _finite(b, "qdd_desired or weight")
    try:
        x = np.linalg.solve(A, b)
        if not np.all(np.isfinite(x)):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        x = np.linalg.lstsq(A, b, rcond=None)[0]
    qdd = x[:n]
    lam = -x[n:]
    tau = S.T @ (W @ (S @ (qdd_star - qdd)) + S @ C)
    r_dyn = H @ qdd + C - tau - G.T @ lam
    r_con = G @ qdd - gamma
    residual = max(float(np.abs(r_dyn).max()), float(np.abs(r_con).max()) if c else 0.0)
    tol = _tolerance(H, C, G, gamma, qdd, W)
    _finite(tau, "qdd_desired or weight")
    return ConstrainedInverseDynamicsResult(
        tau=tau,
        qdd=qdd,
        multipliers=lam,
        residual=residual,
        converged=bool(residual <= tol) and _reproduced(H, C, G, gamma, tau, qdd),
        iterations=1,
        fully_actuated=_fully_actuated(G, amap),
        method="relaxed",
        weight=W,
    )
