"""Rigid-body inertia of :mod:`sinews.spatial`: :class:`SpatialInertia`.

A body's inertia is its mass ``m``, centre of mass ``c`` and rotational inertia ``I_c`` about
the centre of mass; about the body origin ``I_o = I_c + m [c]x [c]x^T`` and the 6x6 spatial
inertia is ``[[I_o, m [c]x], [m [c]x^T, m 1]]`` (RBDA eq. 2.63).  Inputs are checked for
physical consistency (``I_c`` positive semi-definite, triangle inequalities on its principal
moments); the constructors give boxes, rods and point masses, ``+`` lumps two bodies (parallel
axis theorem) and :meth:`SpatialInertia.transformed` re-expresses one in another frame.

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, ch. 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._checks import real_array, real_scalar
from ._spatial_checks import _frozen, _vec
from ._spatial_so3 import skew
from ._spatial_transform import Transform


def _inertia_matrix(I, name):
    a = real_array(I, name, finite=False)
    if a.shape == (6,):  # (Ixx, Iyy, Izz, Ixy, Ixz, Iyz)
        xx, yy, zz, xy, xz, yz = a
        a = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif a.shape == (3,):
        a = np.diag(a)
    if a.shape != (3, 3):
        raise ValueError(f"{name} must be 3x3, a diagonal 3-vector or 6 values (xx, yy, zz, xy, xz, yz); got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    if np.abs(0.5 * a - 0.5 * a.T).max() > 0.5e-9 * max(1.0, np.abs(a).max()):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * a + 0.5 * a.T


@dataclass(frozen=True)
class SpatialInertia:
    """Rigid-body inertia: ``mass`` [kg], centre of mass ``com`` (3,) (body frame) and the
    rotational inertia ``inertia_com`` (3, 3) about the centre of mass, in body axes (a
    diagonal (3,) or the 6 values ``(xx, yy, zz, xy, xz, yz)`` are accepted too).

    A massless body (``mass == 0`` and zero inertia) is allowed: it is what a frame-only body
    or a virtual link needs.  A body with mass needs a positive-semidefinite ``inertia_com``
    that satisfies the triangle inequalities; a non-physical inertia raises ``ValueError``.
    """

    mass: float
    com: np.ndarray
    inertia_com: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "mass", _mass(self.mass))
        object.__setattr__(self, "com", _frozen(_vec(self.com, 3, "com")))
        Ic = _inertia_matrix(self.inertia_com, "inertia_com")
        s = float(np.abs(Ic).max())  # eigenvalues of the scaled matrix: no overflow in LAPACK
        ev = np.linalg.eigvalsh(Ic / s) * s if s > 0.0 else np.zeros(3)
        scale = max(1.0, abs(ev).max())
        if ev[0] < -1e-12 * scale:
            raise ValueError(f"inertia_com must be positive semi-definite, eigenvalues {ev}")
        e = np.sort(ev)
        if e[0] + e[1] < e[2] - 1e-9 * scale:
            raise ValueError(f"inertia_com violates the triangle inequality, principal moments {e}")
        object.__setattr__(self, "inertia_com", _frozen(Ic))
        with np.errstate(over="ignore", invalid="ignore"):
            finite = np.all(np.isfinite(self.inertia_origin))
        if not finite:
            raise ValueError("mass and com are too large: the inertia about the body origin overflows")

    @classmethod
    def zero(cls) -> "SpatialInertia":
        """A massless, inertia-free body (for frames and virtual links)."""
        return cls(0.0, np.zeros(3), np.zeros((3, 3)))

    @classmethod
    def point_mass(cls, mass: float, com: ArrayLike = (0.0, 0.0, 0.0)) -> "SpatialInertia":
        """A point mass ``mass`` [kg] at ``com`` (3,) [m]."""
        return cls(mass, com, np.zeros((3, 3)))

    @classmethod
    def from_box(cls, mass: float, size: ArrayLike, com: ArrayLike = (0.0, 0.0, 0.0)) -> "SpatialInertia":
        """A uniform box of mass ``mass`` [kg] and edge lengths ``size = (x, y, z)`` (3,)
        (non-negative) centred at ``com`` (3,)."""
        mass = _mass(mass)
        x, y, z = _vec(size, 3, "size")
        if min(x, y, z) < 0:
            raise ValueError(f"size must be non-negative edge lengths, got {[x, y, z]}")
        k = mass / 12.0
        d = np.array([k * (y * y + z * z), k * (x * x + z * z), k * (x * x + y * y)])
        if not np.all(np.isfinite(d)):
            raise ValueError("mass and size are too large: the box inertia overflows")
        return cls(mass, com, np.diag(d))

    @classmethod
    def from_rod(cls, mass: float, length: float, axis: int = 2) -> "SpatialInertia":
        """Thin uniform rod from the origin along +axis (``axis`` 0, 1, 2 = x, y, z; a negative
        ``length`` lays it along -axis)."""
        mass = _mass(mass)
        length = real_scalar(length, "length")
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)) or axis not in (0, 1, 2):
            raise ValueError(f"axis must be 0, 1 or 2 (x, y, z), got {axis!r}")
        com = np.zeros(3)
        com[axis] = 0.5 * length
        d = np.full(3, mass * (length * length) / 12.0)
        d[axis] = 0.0
        if not np.all(np.isfinite(d)):
            raise ValueError("mass and length are too large: the rod inertia overflows")
        return cls(mass, com, np.diag(d))

    @property
    def inertia_origin(self) -> np.ndarray:
        """Rotational inertia about the body origin: ``I_c + m [c]x [c]x^T``."""
        C = skew(self.com)
        return self.inertia_com + self.mass * C @ C.T

    def matrix(self) -> np.ndarray:
        """The 6x6 spatial inertia at the body origin (RBDA eq. 2.63), ``[angular; linear]``."""
        C = skew(self.com)
        out = np.zeros((6, 6))
        out[:3, :3] = self.inertia_origin
        out[:3, 3:] = self.mass * C
        out[3:, :3] = self.mass * C.T
        out[3:, 3:] = self.mass * np.eye(3)
        return out

    def transformed(self, X: Transform) -> "SpatialInertia":
        """This inertia, given in frame b, expressed in frame a where ``X = X_a_b``."""
        if not isinstance(X, Transform):
            raise ValueError(f"X must be a sinews.Transform, got {type(X).__name__}")
        return SpatialInertia(self.mass, X.act_point(self.com), X.R @ self.inertia_com @ X.R.T)

    def __add__(self, other: "SpatialInertia") -> "SpatialInertia":
        if not isinstance(other, SpatialInertia):
            return NotImplemented
        m = self.mass + other.mass
        if m == 0.0:
            return SpatialInertia(0.0, np.zeros(3), self.inertia_com + other.inertia_com)
        c = (self.mass * self.com + other.mass * other.com) / m
        I = np.zeros((3, 3))
        for part in (self, other):
            d = skew(part.com - c)
            I += part.inertia_com + part.mass * d @ d.T
        return SpatialInertia(m, c, I)


def _mass(mass) -> float:
    m = real_scalar(mass, "mass", finite=False)
    if not np.isfinite(m) or m < 0:
        raise ValueError(f"mass must be finite and non-negative, got {mass}")
    return m
