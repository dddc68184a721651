"""Configuration-space helpers: ``neutral``, ``integrate``, ``difference``, ``normalize``,
``random_configuration``.

Quaternion joints (spherical, free-flyer) live on a manifold: ``integrate(q, v, dt)`` moves
along the body-fixed velocity held constant for ``dt`` (the exponential map: SO(3) for the
spherical joint, SE(3) for the free-flyer, as Pinocchio does), and ``difference(q0, q1)``
is its inverse (``integrate(q0, difference(q0, q1), 1) == q1``).  All other coordinates are
Euclidean: ``q + v dt`` and ``q1 - q0``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _configuration_kernels as CK
from ._joint_pass import check_finite, zero_quaternion
from . import _layout as L
from ._checks import NonFiniteResultError, finite_vector, raise_overflow, real_scalar, zero_quaternion_message
from .algorithms import check_model
from .joints import JT_FREEFLYER, JT_SPHERICAL
from .spatial import log_se3, log_so3, quat_to_matrix

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["neutral", "integrate", "difference", "normalize", "random_configuration"]


def _joints(model):
    c = check_model(model).compiled
    for k in range(c.nlinks):
        row = c.mi[k]
        yield int(row[L.MI_TYPE]), int(row[L.MI_IQ]), int(row[L.MI_IV]), int(row[L.MI_NV])


def _quat_norms(Q) -> np.ndarray:
    """Euclidean norms of the rows of ``Q`` (quaternions) without overflow or underflow: each
    row is scaled by its largest absolute component first."""
    Q = np.asarray(Q, dtype=float).reshape(-1, 4)
    m = np.abs(Q).max(axis=1)
    safe = np.where(m > 0.0, m, 1.0)
    return m * np.sqrt(np.sum((Q / safe[:, None]) ** 2, axis=1))


def _quat(q, i, name):
    quat = q[i : i + 4]
    n = _quat_norms(quat)[0]
    if abs(n - 1.0) > 1e-6:
        raise ValueError(f"{name}[{i}:{i + 4}] must be a unit quaternion (norm {n:.6g}); use sinews.normalize")
    return quat_to_matrix(quat / n)


def neutral(model: Model) -> np.ndarray:
    """The zero configuration ``q`` (nq,) (identity quaternions)."""
    q = np.zeros(check_model(model).nq)
    for jt, iq, _, _ in _joints(model):
        if jt == JT_SPHERICAL:
            q[iq + 3] = 1.0
        elif jt == JT_FREEFLYER:
            q[iq + 6] = 1.0
    return q


def integrate(model: Model, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> np.ndarray:
    """The configuration (nq,) reached from ``q`` (nq,) with constant velocity ``v`` (nv,) after
    ``dt``."""
    c = check_model(model).compiled
    q = finite_vector(q, model.nq, "q")
    v = finite_vector(v, model.nv, "v")
    dt = real_scalar(dt, "dt")
    if c.has_quaternion:
        _check_unit_quaternions(c, q, "q")
    out = np.empty(model.nq)
    if c.nlinks and CK.integrate(q, v, dt, out, c.mi):
        raise_overflow(("q", "v", "dt"))
    return out


def _check_unit_quaternions(c, q, name):
    Q = q[c.quat_slices]
    if np.all(np.abs(np.einsum("ij,ij->i", Q, Q) - 1.0) <= 1e-6):  # fast path: |n^2 - 1| < |n - 1|
        return
    norms = _quat_norms(Q)
    bad = np.flatnonzero(np.abs(norms - 1.0) > 1e-6)
    if bad.size:
        i = int(c.quat_slices[bad[0], 0])
        raise ValueError(f"{name}[{i}:{i + 4}] must be a unit quaternion (norm {norms[bad[0]]:.6g}); use sinews.normalize")


def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> np.ndarray:
    """The velocity ``v`` (nv,) with ``integrate(q0, v, 1) == q1`` for ``q0``, ``q1`` (nq,)."""
    q0 = finite_vector(q0, check_model(model).nq, "q0")
    q1 = finite_vector(q1, model.nq, "q1")
    v = np.zeros(model.nv)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
        d = q1 - q0
        for jt, iq, iv, nv in _joints(model):
            if jt == JT_SPHERICAL:
                v[iv : iv + 3] = log_so3(_quat(q0, iq, "q0").T @ _quat(q1, iq, "q1"))
            elif jt == JT_FREEFLYER:
                R0, R1 = _quat(q0, iq + 3, "q0"), _quat(q1, iq + 3, "q1")
                dp = R0.T @ d[iq : iq + 3]
                if not np.all(np.isfinite(dp)):
                    raise_overflow(("q0", "q1"))
                try:
                    v[iv : iv + 6] = log_se3(R0.T @ R1, dp)
                except NonFiniteResultError:
                    raise_overflow(("q0", "q1"))
            else:
                v[iv : iv + nv] = d[iq : iq + nv]
    if check_finite(v) >= 0:
        raise_overflow(("q0", "q1"))
    return v


def normalize(model: Model, q: ArrayLike) -> np.ndarray:
    """``q`` (nq,) with every quaternion scaled to unit length (any finite non-zero norm; a zero
    quaternion raises ``ValueError``)."""
    c = check_model(model).compiled
    q = finite_vector(q, model.nq, "q").copy()
    if not c.has_quaternion:
        return q
    k = zero_quaternion(q, c.mi)
    if k >= 0:
        raise ValueError(zero_quaternion_message(model, k))
    Q = q[c.quat_slices]
    Q /= np.abs(Q).max(axis=1)[:, None]  # no overflow or underflow in the norm below
    q[c.quat_slices] = Q / np.linalg.norm(Q, axis=1)[:, None]
    return q


def random_configuration(model: Model, rng: np.random.Generator | int | None = None,
                         lower: float = -np.pi, upper: float = np.pi) -> np.ndarray:
    """A random configuration (nq,): Euclidean coordinates uniform in ``[lower, upper]`` (free-flyer
    translations too), quaternions uniform on the unit sphere."""
    check_model(model)
    try:
        rng = np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rng must be None, a seed or a numpy Generator: {exc}") from None
    lower = real_scalar(lower, "lower")
    upper = real_scalar(upper, "upper")
    if not lower <= upper:
        raise ValueError(f"lower must not exceed upper, got lower={lower}, upper={upper}")
    if not np.isfinite(upper - lower):
        raise ValueError(f"upper - lower must be finite, got lower={lower}, upper={upper}")
    q = rng.uniform(lower, upper, model.nq)
    for jt, iq, _, _ in _joints(model):
        i = iq if jt == JT_SPHERICAL else iq + 3 if jt == JT_FREEFLYER else -1
        if i >= 0:
            quat = rng.normal(size=4)
            q[i : i + 4] = quat / np.linalg.norm(quat)
    return q
