r"""Assembly: bring a configuration (and a velocity) onto the constraint manifold.

**Positions** (:func:`assemble_q`, RBDL ``CalcAssemblyQ``).  Given a start ``q0`` and weights
``w >= 0`` (one per velocity coordinate), find ``q`` with :math:`\phi(q) = 0` that moves the
heavily weighted coordinates as little as possible.  Each Gauss–Newton iteration linearises the
constraints, :math:`\phi(q \oplus d) \approx \phi(q) + G(q)\,d`, and takes the step of minimum
weighted norm that cancels the error:

.. math::

    \min_d \tfrac12 d^T W d \quad \text{s.t.} \quad G d = -\phi(q),
    \qquad
    \begin{bmatrix} W & G^T \\ G & 0 \end{bmatrix}
    \begin{bmatrix} d \\ \nu \end{bmatrix} =
    \begin{bmatrix} 0 \\ -\phi \end{bmatrix},

with :math:`W = \mathrm{diag}(w)`, then :math:`q \leftarrow q \oplus d` (``sinews.integrate``:
the exponential map for quaternion joints, so every iterate stays on the configuration
manifold, where RBDL adds ``½ Ω(Q) d_ω`` to the quaternion and renormalises).  Iterations stop
when :math:`\|\phi\| < \mathrm{tol}` and :math:`\|d\| < \mathrm{tol}` (RBDL's test), or after
``max_iter`` steps with ``converged=False``.  A weight of 0 marks a coordinate as free; when the
constraints do not fix the free coordinates the KKT matrix is singular, and the step is the
minimum-norm least-squares solution (RBDL relies on column-pivoting QR for the same purpose).
Contact rows have no position error (:math:`\phi = 0`), so contact points are held where they
are, to first order.  Like RBDL, the method may converge to a distant branch of a mechanism
whose start is far from the manifold: check :math:`\phi` and the weighted coordinates, not an
exact ``q``.

**Velocities** (:func:`assemble_qdot`, RBDL ``CalcAssemblyQDot``): one linear solve,

.. math::

    \min_{\dot q} \tfrac12 (\dot q - \dot q_0)^T W (\dot q - \dot q_0) \quad \text{s.t.} \quad
    G \dot q = b,
    \qquad
    \begin{bmatrix} W & G^T \\ G & 0 \end{bmatrix}
    \begin{bmatrix} \dot q \\ \nu \end{bmatrix} =
    \begin{bmatrix} W \dot q_0 \\ b \end{bmatrix},

with ``b = 0`` by default (RBDL supports only zero; a non-zero ``target`` is a sinews extension,
e.g. a desired post-impact constraint velocity).

Source: RBDL 3.3.1, ``src/Constraints.cc`` (``CalcAssemblyQ``, ``CalcAssemblyQDot``); see
``shared/reference/rbdl.md`` §2.6–2.7.  The constraint set's ``G`` and ``φ`` come from
:func:`sinews.constraints.constraint_jacobian` and
:func:`sinews.constraints.constraint_position_error`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..configuration import _check_unit_quaternions

from .._checks import finite_vector
from ..algorithms import check_model
from ..configuration import integrate
from ._kinematics import Overflow
from .constraint import _real_scalar

if TYPE_CHECKING:
    from ..model import Model
    from .constraint_set import ConstraintSet

__all__ = ["AssemblyResult", "VelocityAssemblyResult", "assemble_q", "assemble_qdot"]


@dataclass
class AssemblyResult:
    """Result of :func:`assemble_q`.

    ``q``: the last iterate (on the manifold when ``converged``); ``converged``: both stopping
    tests met; ``iterations``: Gauss–Newton steps taken (0 when ``q_init`` already satisfies the
    constraints); ``residual``: :math:`\\|\\phi(q)\\|_2` at ``q``; ``step_norm``: :math:`\\|d\\|_2`
    of the last step (0.0 when no step was taken).
    """

    q: np.ndarray
    converged: bool
    iterations: int
    residual: float
    step_norm: float


@dataclass
class VelocityAssemblyResult:
    """Result of :func:`assemble_qdot`.

    ``v``: the assembled velocity (alias ``qdot``); ``residual``:
    :math:`\\|G \\dot q - b\\|_2`; ``converged``: ``residual <= tol``; ``iterations``: always 1
    (a single linear solve).
    """

    v: np.ndarray
    converged: bool
    iterations: int
    residual: float

    @property
    def qdot(self) -> np.ndarray:
        return self.v


def _tol(tol) -> float:
    tol = _real_scalar(tol, "tol")
    if not (np.isfinite(tol) and tol > 0.0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    return tol


def _weights(model, weights) -> np.ndarray:
    w = finite_vector(weights, model.nv, "weights")
    if np.any(w < 0.0):
        raise ValueError("weights must be non-negative")
    return w


def _kkt_solve(w: np.ndarray, G: np.ndarray, top: np.ndarray, bottom: np.ndarray, names: str) -> np.ndarray:
    """Solve ``[[diag(w), G^T], [G, 0]] [x; nu] = [top; bottom]`` and return ``x``.

    A direct LU solve when the matrix is regular; otherwise (zero weights on coordinates the
    constraints leave free, or redundant rows) the minimum-norm least-squares solution.
    """
    n, c = w.shape[0], G.shape[0]
    A = np.zeros((n + c, n + c))
    A[np.arange(n), np.arange(n)] = w
    A[:n, n:] = G.T
    A[n:, :n] = G
    b = np.concatenate([top, bottom])
    if not math.isfinite(float(A.sum()) + float(b.sum())):
        raise Overflow(f"the assembly system is not finite (floating-point overflow): {names} too large in magnitude")
    scale = max(1.0, float(np.abs(A).max()))
    try:
        x = np.linalg.solve(A, b)
        # reject the LU answer of a numerically singular matrix
        if np.all(np.isfinite(x)) and np.linalg.norm(A @ x - b) <= 1e-9 * scale * max(1.0, np.linalg.norm(b)):
            return x[:n]
    except np.linalg.LinAlgError:
        pass
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    return x[:n]


def assemble_q(model: Model, q_init: ArrayLike, cs: ConstraintSet, weights: ArrayLike, tol: float = 1e-12,
               max_iter: int = 100) -> AssemblyResult:
    """Find ``q`` with ``constraint_position_error(model, q, cs) == 0`` near ``q_init``.

    ``q_init (nq,)``; ``weights (nv,)`` (non-negative): 1 keeps a coordinate near its start, 0
    leaves it free.  Returns an :class:`AssemblyResult`; non-convergence is reported there
    (``converged=False``), never raised.  See the module docstring for the equations.
    """
    from . import constraint_jacobian, constraint_position_error

    check_model(model)
    q = finite_vector(q_init, model.nq, "q_init").copy()
    if model.compiled.has_quaternion:
        _check_unit_quaternions(model.compiled, q, "q_init")  # bad input: raise now, not mid-way
    w = _weights(model, weights)
    tol = _tol(tol)
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, (int, np.integer)) or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    max_iter = int(max_iter)

    try:
        phi = np.asarray(constraint_position_error(model, q, cs), dtype=float)
    except Overflow as exc:
        raise ValueError(f"q_init: {exc}") from None
    res = float(np.linalg.norm(phi))
    if not math.isfinite(res):
        raise ValueError("q_init: the position error overflows (q_init too large in magnitude)")
    if res < tol:
        return AssemblyResult(q, True, 0, res, 0.0)
    step = np.inf
    zeros = np.zeros(model.nv)
    for it in range(1, max_iter + 1):
        try:  # an iterate whose kinematics overflow ends the iteration, not converged
            G = np.asarray(constraint_jacobian(model, q, cs), dtype=float)
            d = _kkt_solve(w, G, zeros, -phi, "q_init or weights")
            if not np.all(np.isfinite(d)):
                return AssemblyResult(q, False, it, res, float("inf"))
            q_new = integrate(model, q, d)
            phi_new = np.asarray(constraint_position_error(model, q_new, cs), dtype=float)
        except Overflow:
            return AssemblyResult(q, False, it, res, float("inf"))
        res_new = float(np.linalg.norm(phi_new))
        if not math.isfinite(res_new):
            return AssemblyResult(q, False, it, res, float("inf"))
        q, phi, res, step = q_new, phi_new, res_new, float(np.linalg.norm(d))
        if res < tol and step < tol:
            return AssemblyResult(q, True, it, res, step)
    return AssemblyResult(q, False, max_iter, res, float(step))


def assemble_qdot(model: Model, q: ArrayLike, qd_init: ArrayLike, cs: ConstraintSet, weights: ArrayLike,
                  target: ArrayLike | None = None, tol: float = 1e-10) -> VelocityAssemblyResult:
    """The velocity closest to ``qd_init`` (weighted by ``weights``) with ``G(q) qdot = target``.

    ``q (nq,)``, ``qd_init (nv,)``, ``weights (nv,)``; ``target (cs.size,)`` (default zeros: the
    constraint velocities vanish).
    ``converged`` is ``||G qdot - target|| <= tol * max(1, ||target||)`` (an absolute test on the
    constraint velocities: a huge ``qd_init`` whose rounding leaves them off is not converged).
    """
    from . import constraint_jacobian

    check_model(model)
    q = finite_vector(q, model.nq, "q")
    v0 = finite_vector(qd_init, model.nv, "qd_init")
    w = _weights(model, weights)
    tol = _tol(tol)
    G = np.asarray(constraint_jacobian(model, q, cs), dtype=float)
    c = G.shape[0]
    b = np.zeros(c) if target is None else finite_vector(target, c, "target")
    v = _kkt_solve(w, G, w * v0, b, "qd_init, weights or target")
    res = float(np.linalg.norm(G @ v - b)) if c else 0.0
    if not (math.isfinite(res) and math.isfinite(float(v.sum()))):
        raise ValueError("the assembled velocity is not finite (floating-point overflow): qd_init, weights "
                         "or target too large in magnitude")
    return VelocityAssemblyResult(v, bool(res <= tol * max(1.0, float(np.linalg.norm(b)))), 1, res)
