"""Inertia helpers for model building: checks, the nearest physical inertia, unchecked records
and merging of welded bodies without re-validation.

A rigid body's inertia is *physical* when ``mass >= 0`` and the rotational inertia about the
centre of mass ``I_c`` is positive semi-definite with principal moments that satisfy the triangle
inequalities ``J_i + J_j >= J_k`` (a mass distribution exists that has them).
:class:`sinews.SpatialInertia` enforces this; URDF files in the wild do not always satisfy it,
so the loader may keep a non-physical inertia on request (``inertia="warn"``, like Pinocchio)
through :func:`unchecked`, and :class:`sinews.model.CompiledModel` merges welded bodies with
plain arithmetic (:func:`merge`) that does not re-validate.
"""

from __future__ import annotations

import numpy as np

from .spatial import SpatialInertia, Transform, skew

__all__ = ["problem", "nearest_physical", "unchecked", "merge", "is_physical"]


def problem(mass: float, inertia_com: np.ndarray) -> str | None:
    """Why ``(mass, inertia_com)`` is not a physical inertia (``None`` when it is), judged with
    the tolerances of :class:`sinews.SpatialInertia`."""
    try:
        SpatialInertia(mass, np.zeros(3), inertia_com)
    except ValueError as exc:
        return str(exc)
    return None


def is_physical(inertia: SpatialInertia) -> bool:
    """Whether a (possibly :func:`unchecked`) inertia would pass :class:`SpatialInertia`."""
    return problem(inertia.mass, inertia.inertia_com) is None


def _project_moments(ev: np.ndarray) -> np.ndarray:
    """The principal moments nearest to ``ev`` (Euclidean) that are non-negative and satisfy the
    triangle inequalities: alternating projections onto the half-spaces (Dykstra), which
    converge to the nearest point of their intersection (a convex cone)."""
    x = np.array(ev, dtype=float)
    normals = [np.eye(3)[i] for i in range(3)]  # x_i >= 0
    for k in range(3):  # x_i + x_j - x_k >= 0
        n = np.ones(3)
        n[k] = -1.0
        normals.append(n)
    corr = [np.zeros(3) for _ in normals]
    for _ in range(200):
        prev = x.copy()
        for i, n in enumerate(normals):
            y = x + corr[i]
            viol = n @ y
            p = y - (min(viol, 0.0) / (n @ n)) * n
            corr[i] = y - p
            x = p
        if np.abs(x - prev).max() <= 1e-15 * max(1.0, np.abs(x).max()):
            break
    # exact feasibility (the iteration ends within rounding of the cone)
    x = np.maximum(x, 0.0)
    for k in range(3):
        others = x.sum() - x[k]
        if x[k] > others:
            x[k] = others
    return x


def nearest_physical(mass: float, inertia_com: np.ndarray) -> tuple[float, np.ndarray]:
    """The physical inertia nearest to ``(mass, inertia_com)``: a negative mass becomes 0, the
    principal moments are projected onto the triangle-inequality cone (same principal axes)."""
    m = max(float(mass), 0.0)
    Ic = 0.5 * (np.asarray(inertia_com, dtype=float) + np.asarray(inertia_com, dtype=float).T)
    ev, V = np.linalg.eigh(Ic)
    x = _project_moments(ev)
    return m, (V * x) @ V.T


def unchecked(mass: float, com, inertia_com) -> SpatialInertia:
    """A :class:`SpatialInertia` holding the given values *without* the physical checks (the
    values must be finite; used for ``inertia="warn"``)."""
    I = object.__new__(SpatialInertia)
    com = np.array(com, dtype=float).reshape(3)
    Ic = np.array(inertia_com, dtype=float).reshape(3, 3)
    Ic = 0.5 * (Ic + Ic.T)
    if not (np.isfinite(mass) and np.all(np.isfinite(com)) and np.all(np.isfinite(Ic))):
        raise ValueError("inertia values must be finite")
    com.setflags(write=False)
    Ic.setflags(write=False)
    object.__setattr__(I, "mass", float(mass))
    object.__setattr__(I, "com", com)
    object.__setattr__(I, "inertia_com", Ic)
    return I


def merge(parts: list[tuple[SpatialInertia, Transform]]) -> SpatialInertia:
    """The inertia of rigidly joined parts ``(I_b, X_a_b)``, expressed in frame ``a``, computed
    with plain arithmetic (no validation: merging physical inertias gives a physical one, and a
    non-physical part kept on request stays as it is)."""
    m = 0.0
    h = np.zeros(3)
    Io = np.zeros((3, 3))
    for I, X in parts:
        c = X.R @ I.com + X.p
        Ic = X.R @ I.inertia_com @ X.R.T
        C = skew(c)
        m += I.mass
        h += I.mass * c
        Io += Ic + I.mass * C @ C.T
    c = h / m if m > 0.0 else np.zeros(3)
    C = skew(c)
    return unchecked(m, c, Io - m * C @ C.T)
