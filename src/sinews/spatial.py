"""Spatial (6-D) vector algebra, Featherstone style.

Conventions (see ``docs/conventions.md``):

* Motion vectors ``m = [omega; v]`` and force vectors ``f = [n; f]``: angular part first.
* A rigid transform ``X_a_b`` is the pose of frame *b* expressed in frame *a*: the pair
  ``(R_a_b, p_a_b)`` with ``x_a = R_a_b @ x_b + p_a_b``.  Hot code keeps the pair;
  :func:`motion_matrix` and :func:`force_matrix` give the 6x6 Pluecker forms that carry
  coordinates of *b* into coordinates of *a*.
* Quaternions are stored scalar-last ``(x, y, z, w)`` (as SciPy and Pinocchio do).

References: R. Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, ch. 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np
from numpy.typing import ArrayLike

from ._checks import NonFiniteResultError, real_array, real_scalar

__all__ = [
    "Transform",
    "SpatialInertia",
    "skew",
    "rot_x",
    "rot_y",
    "rot_z",
    "rot_axis",
    "rpy_to_matrix",
    "matrix_to_rpy",
    "quat_to_matrix",
    "matrix_to_quat",
    "motion_matrix",
    "force_matrix",
    "cross_motion",
    "cross_force",
    "motion_cross_matrix",
    "force_cross_matrix",
    "exp_so3",
    "log_so3",
    "exp_se3",
    "log_se3",
    "as_transform",
]


def _frozen(a):
    a = np.array(a, dtype=float)  # a private copy, read-only: model data cannot change behind our back
    a.setflags(write=False)
    return a


def _vec(x, n, name):
    """``x`` as a finite real float vector of length ``n`` (ValueError naming ``name``)."""
    a = real_array(x, name, finite=False)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a}")
    return a


#: Orthonormality tolerance of the functions that *read* a rotation matrix (``log_so3``,
#: ``matrix_to_rpy``, ...); a :class:`Transform` stores rotations checked to 1e-9.
READ_TOL = 1e-6


def _rotation(R, name, tol=1e-9):
    a = real_array(R, name, finite=False)
    if a.shape != (3, 3):
        raise ValueError(f"{name} must have shape (3, 3), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    if np.abs(a.T @ a - np.eye(3)).max() > tol or np.linalg.det(a) < 0:
        raise ValueError(f"{name} must be a rotation matrix (orthonormal, det +1)")
    return a


def _finite_out(x, names):
    """``x`` if finite, else ValueError: the arguments ``names`` are too large (overflow)."""
    if not np.all(np.isfinite(x)):
        raise NonFiniteResultError(f"the result is not finite (floating-point overflow): {names} too large")
    return x


def unit_axis(axis: ArrayLike, name: str = "axis", tol: float = 1e-9) -> np.ndarray:
    """Return ``axis`` (3,) as a float 3-vector after checking it has unit length."""
    a = _vec(axis, 3, name)
    n = np.linalg.norm(a)
    if abs(n - 1.0) > tol:
        raise ValueError(f"{name} must be a unit vector, got {a} with norm {n:.6g}")
    return _frozen(a)


def skew(w: ArrayLike) -> np.ndarray:
    """The (3, 3) matrix ``[w]x`` of ``w`` (3,), with ``[w]x @ u == cross(w, u)``."""
    x, y, z = _vec(w, 3, "w")
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rot_x(angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` radians about x (maps child to parent coordinates)."""
    angle = real_scalar(angle, "angle")
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` radians about y."""
    angle = real_scalar(angle, "angle")
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` radians about z."""
    angle = real_scalar(angle, "angle")
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def exp_so3(w: ArrayLike) -> np.ndarray:
    """Rodrigues' formula: the rotation ``exp([w]x)`` (3, 3) for a rotation vector ``w`` (3,)
    (any finite length)."""
    w = _vec(w, 3, "w")
    big = _big_rotation(w)
    if big is not None:
        theta, A = big
        return np.eye(3) + math.sin(theta) * A + (1.0 - math.cos(theta)) * A @ A
    theta = np.linalg.norm(w)
    K = skew(w)
    if theta < 1e-8:
        return np.eye(3) + K + 0.5 * K @ K
    return np.eye(3) + np.sin(theta) / theta * K + (1.0 - np.cos(theta)) / theta**2 * K @ K


def _big_rotation(w):
    """``(theta, [a]x)`` (angle and unit-axis skew matrix, computed without overflow) for a
    rotation vector so long that ``[w]x^2`` would overflow; ``None`` otherwise."""
    m = float(np.abs(w).max())
    if m <= 1e150:
        return None
    u = w / m
    n = float(np.linalg.norm(u))
    return m * n, skew(u / n)


def rot_axis(axis: ArrayLike, angle: float) -> np.ndarray:
    """Rotation matrix (3, 3) of ``angle`` radians about the unit vector ``axis`` (3,)."""
    return exp_so3(unit_axis(axis) * real_scalar(angle, "angle"))


def log_so3(R: ArrayLike) -> np.ndarray:
    """Rotation vector ``w`` (3,) with ``exp_so3(w) == R`` for a rotation ``R`` (3, 3) (angle in
    [0, pi]).

    The angle comes from ``atan2(|vee(R - R^T)| / 2, (tr R - 1) / 2)``, which stays accurate
    near 0 and near pi (``arccos`` does not); near pi the axis comes from the symmetric part.
    """
    R = _rotation(R, "R", READ_TOL)
    vee = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = 0.5 * np.linalg.norm(vee)
    c = 0.5 * (np.trace(R) - 1.0)
    theta = np.arctan2(s, c)
    if theta < 1e-6:
        return 0.5 * vee * (1.0 + theta**2 / 6.0)
    if c > -0.5:
        return theta / (2.0 * np.sin(theta)) * vee
    # near pi: (R + R^T)/2 = c I + (1 - c) a a^T
    B = (0.5 * (R + R.T) - c * np.eye(3)) / (1.0 - c)
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / np.sqrt(max(B[k, k], 1e-300))
    axis /= np.linalg.norm(axis)
    if axis @ vee < 0:
        axis = -axis
    return theta * axis


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF roll-pitch-yaw: ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (finite real angles)."""
    roll = real_scalar(roll, "roll")
    pitch = real_scalar(pitch, "pitch")
    yaw = real_scalar(yaw, "yaw")
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def matrix_to_rpy(R: ArrayLike) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix`: ``(roll, pitch, yaw)`` (3,) of a rotation ``R`` (3, 3)."""
    R = _rotation(R, "R", READ_TOL)
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    roll = np.arctan2(R[2, 1], R[2, 2])
    yaw = np.arctan2(R[1, 0], R[0, 0])
    return np.array([roll, pitch, yaw])


def quat_to_matrix(quat: ArrayLike) -> np.ndarray:
    """Rotation matrix (3, 3) of the unit quaternion ``quat = (x, y, z, w)`` (4,) (scalar last;
    norm within 1e-6 of 1)."""
    q = _vec(quat, 4, "quat")
    m = float(np.abs(q).max())
    n = m * float(np.linalg.norm(q / m)) if m > 0.0 else 0.0  # no overflow for huge input
    if abs(n - 1.0) > 1e-6:
        raise ValueError(f"quat must be a unit quaternion (x, y, z, w), got norm {n}")
    x, y, z, w = q / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(R: ArrayLike) -> np.ndarray:
    """Unit quaternion ``(x, y, z, w)`` (4,) with ``w >= 0`` of a rotation matrix ``R`` (3, 3)."""
    R = _rotation(R, "R", READ_TOL)
    tr = np.trace(R)
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = np.array([0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s])
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = np.array([(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s])
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = np.array([(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s])
    q /= np.linalg.norm(q)
    return q if q[3] >= 0 else -q


def _left_jacobian_so3(w) -> np.ndarray:
    """``J_l(w) = I + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2`` with cancellation-free
    coefficients: ``(1 - cos t)/t^2 = 2 sin^2(t/2)/t^2`` and a Taylor series for the second
    below ``t = 1e-2``."""
    big = _big_rotation(w)
    if big is not None:  # a K = (1 - cos t)/t [a]x and b K^2 = (t - sin t)/t [a]x^2
        theta, A = big
        return np.eye(3) + (1.0 - math.cos(theta)) / theta * A + (theta - math.sin(theta)) / theta * A @ A
    theta = np.linalg.norm(w)
    K = skew(w)
    a, b = _jl_coefficients(theta)
    return np.eye(3) + a * K + b * K @ K


def _jl_coefficients(theta):
    t2 = theta * theta
    if theta < 1e-2:
        a = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
        b = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    else:
        h = np.sin(0.5 * theta) / theta
        a = 2.0 * h * h
        b = (theta - np.sin(theta)) / (t2 * theta)
    return a, b


def exp_se3(twist: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Exponential of a twist ``[omega; v]`` (6,) (body velocity held for unit time).

    Returns ``(R (3, 3), p (3,))``: the pose reached from the identity, expressed in the starting frame.
    """
    t = _vec(twist, 6, "twist")
    w, v = t[:3], t[3:]
    return exp_so3(w), _finite_out(_left_jacobian_so3(w) @ v, "twist")


def log_se3(R: ArrayLike, p: ArrayLike) -> np.ndarray:
    """Inverse of :func:`exp_se3`: the twist ``[omega; v]`` (6,) with ``exp_se3(twist) == (R, p)``
    for ``R`` (3, 3), ``p`` (3,)."""
    w = log_so3(R)
    p = _vec(p, 3, "p")
    return _finite_out(np.concatenate([w, np.linalg.solve(_left_jacobian_so3(w), p)]), "p")


def motion_matrix(R: ArrayLike, p: ArrayLike) -> np.ndarray:
    """(6, 6) Pluecker matrix ``X_a_b`` mapping motion vectors from frame b to frame a.

    ``(R (3, 3), p (3,))`` is the pose of b in a.  ``[omega_a; v_a] = [[R, 0], [p x R, R]] [omega_b; v_b]``.
    """
    return _pluecker(R, p, motion=True)


def force_matrix(R: ArrayLike, p: ArrayLike) -> np.ndarray:
    """(6, 6) matrix mapping force vectors ``[n; f]`` from frame b to frame a, for the pose
    ``R`` (3, 3), ``p`` (3,) of b in a (the dual of
    :func:`motion_matrix`: ``[[R, p x R], [0, R]]``)."""
    return _pluecker(R, p, motion=False)


def _pluecker(R, p, motion):
    R = _rotation(R, "R", READ_TOL)
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R
    if motion:
        X[3:, :3] = skew(_vec(p, 3, "p")) @ R
    else:
        X[:3, 3:] = skew(_vec(p, 3, "p")) @ R
    return _finite_out(X, "p")


def motion_cross_matrix(m: ArrayLike) -> np.ndarray:
    """The (6, 6) matrix ``m x`` of a motion vector ``m`` (6,), acting on motion vectors (RBDA
    eq. 2.31)."""
    m = _vec(m, 6, "m")
    X = np.zeros((6, 6))
    W = skew(m[:3])
    X[:3, :3] = W
    X[3:, 3:] = W
    X[3:, :3] = skew(m[3:])
    return X


def force_cross_matrix(m: ArrayLike) -> np.ndarray:
    """The (6, 6) matrix ``m x*`` of a motion vector ``m`` (6,), acting on force vectors:
    ``-(m x)^T``."""
    return -motion_cross_matrix(m).T


def cross_motion(m: ArrayLike, u: ArrayLike) -> np.ndarray:
    """Spatial cross product ``m x u`` (6,) of motion vectors ``m`` (6,) and ``u`` (6,)."""
    m = _vec(m, 6, "m")
    u = _vec(u, 6, "u")
    return _finite_out(np.concatenate(
        [np.cross(m[:3], u[:3]), np.cross(m[:3], u[3:]) + np.cross(m[3:], u[:3])]
    ), "m, u")


def cross_force(m: ArrayLike, f: ArrayLike) -> np.ndarray:
    """Spatial cross product ``m x* f`` (6,) of a motion vector ``m`` (6,) with a force vector
    ``f`` (6,)."""
    m = _vec(m, 6, "m")
    f = _vec(f, 6, "f")
    return _finite_out(np.concatenate(
        [np.cross(m[:3], f[:3]) + np.cross(m[3:], f[3:]), np.cross(m[:3], f[3:])]
    ), "m, f")


@dataclass(frozen=True)
class Transform:
    """A rigid transform ``X_a_b``: pose ``(R, p)`` of frame b in frame a, ``R`` (3, 3) a
    rotation matrix and ``p`` (3,) the origin of b in a (both read-only arrays).

    Build with the constructors (:meth:`identity`, :meth:`translation`, :meth:`rot_x`, ...,
    :meth:`from_rpy`, :meth:`from_quat`) and compose with ``@``: ``X_a_c = X_a_b @ X_b_c``.
    """

    R: np.ndarray
    p: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "R", _frozen(_rotation(self.R, "R")))
        object.__setattr__(self, "p", _frozen(_vec(self.p, 3, "p")))

    @classmethod
    def identity(cls) -> "Transform":
        """The identity transform (frames coincide)."""
        return cls(np.eye(3), np.zeros(3))

    @classmethod
    def translation(cls, p: ArrayLike) -> "Transform":
        """Pure translation: frame b's origin at ``p`` (3,) in frame a, axes parallel."""
        return cls(np.eye(3), p)

    @classmethod
    def rot_x(cls, angle: float, p: ArrayLike = (0.0, 0.0, 0.0)) -> "Transform":
        """Frame b turned by ``angle`` [rad] about x, origin at ``p`` (3,)."""
        return cls(rot_x(angle), p)

    @classmethod
    def rot_y(cls, angle: float, p: ArrayLike = (0.0, 0.0, 0.0)) -> "Transform":
        """Frame b turned by ``angle`` [rad] about y, origin at ``p`` (3,)."""
        return cls(rot_y(angle), p)

    @classmethod
    def rot_z(cls, angle: float, p: ArrayLike = (0.0, 0.0, 0.0)) -> "Transform":
        """Frame b turned by ``angle`` [rad] about z, origin at ``p`` (3,)."""
        return cls(rot_z(angle), p)

    @classmethod
    def rot_axis(cls, axis: ArrayLike, angle: float, p: ArrayLike = (0.0, 0.0, 0.0)) -> "Transform":
        """Frame b turned by ``angle`` [rad] about the unit ``axis`` (3,), origin at ``p`` (3,)."""
        return cls(rot_axis(axis, angle), p)

    @classmethod
    def from_rpy(cls, roll: float, pitch: float, yaw: float, p: ArrayLike = (0.0, 0.0, 0.0)) -> "Transform":
        """From URDF roll-pitch-yaw angles [rad] (``Rz(yaw) Ry(pitch) Rx(roll)``) and a translation
        ``p`` (3,)."""
        return cls(rpy_to_matrix(roll, pitch, yaw), p)

    @classmethod
    def from_quat(cls, quat: ArrayLike, p: ArrayLike = (0.0, 0.0, 0.0)) -> "Transform":
        """From a unit quaternion ``(x, y, z, w)`` (4,) and a translation ``p`` (3,)."""
        return cls(quat_to_matrix(quat), p)

    @classmethod
    def from_matrix(cls, T: ArrayLike) -> "Transform":
        """From a (4, 4) homogeneous matrix (last row ``[0, 0, 0, 1]``)."""
        T = real_array(T, "T", finite=False)
        if T.shape != (4, 4):
            raise ValueError(f"T must have shape (4, 4), got {T.shape}")
        if not np.all(np.isfinite(T)):
            raise ValueError("T must be finite")
        if np.abs(T[3] - [0.0, 0.0, 0.0, 1.0]).max() > 1e-9:
            raise ValueError(f"T must be homogeneous: its last row must be [0, 0, 0, 1], got {T[3].tolist()}")
        try:
            return cls(T[:3, :3], T[:3, 3])
        except ValueError as exc:
            raise ValueError(f"T: {exc}") from None

    def __matmul__(self, other: "Transform") -> "Transform":
        if not isinstance(other, Transform):
            return NotImplemented
        return Transform(self.R @ other.R, _finite_out(self.p + self.R @ other.p, "the translations"))

    def inverse(self) -> "Transform":
        """``X_b_a`` from ``X_a_b``: ``(R^T, -R^T p)``."""
        return Transform(self.R.T, _finite_out(-self.R.T @ self.p, "p"))

    def act_point(self, x: ArrayLike) -> np.ndarray:
        """Coordinates (3,) in frame a of a point ``x`` (3,) given in frame b."""
        return _finite_out(self.R @ _vec(x, 3, "x") + self.p, "x")

    def act_motion(self, m: ArrayLike) -> np.ndarray:
        """A motion vector ``m = [omega; v]`` (6,) given in frame b, expressed in frame a (6,)."""
        m = _vec(m, 6, "m")
        w = self.R @ m[:3]
        return _finite_out(np.concatenate([w, self.R @ m[3:] + np.cross(self.p, w)]), "m")

    def act_force(self, f: ArrayLike) -> np.ndarray:
        """A force vector ``f = [n; f]`` (6,) given in frame b, expressed in frame a (6,)."""
        f = _vec(f, 6, "f")
        lin = self.R @ f[3:]
        return _finite_out(np.concatenate([self.R @ f[:3] + np.cross(self.p, lin), lin]), "f")

    def motion_matrix(self) -> np.ndarray:
        """The 6x6 Pluecker matrix of :meth:`act_motion`."""
        return motion_matrix(self.R, self.p)

    def force_matrix(self) -> np.ndarray:
        """The 6x6 matrix of :meth:`act_force`."""
        return force_matrix(self.R, self.p)

    def homogeneous(self) -> np.ndarray:
        """The 4x4 homogeneous matrix ``[[R, p], [0, 1]]``."""
        T = np.eye(4)
        T[:3, :3] = self.R
        T[:3, 3] = self.p
        return T

    def __repr__(self) -> str:
        return f"Transform(R={self.R.tolist()}, p={self.p.tolist()})"


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


def as_transform(X: "Transform | tuple | ArrayLike | None", name: str = "X") -> Transform:
    """Coerce ``X`` to a :class:`Transform`: ``None`` (identity), a ``Transform``, an ``(R, p)``
    pair, a 4x4 homogeneous matrix or a translation 3-vector; anything else raises ``ValueError``
    naming ``name``."""
    if X is None:
        return Transform.identity()
    if isinstance(X, Transform):
        return X
    what = f"{name} must be a Transform, an (R, p) pair, a 4x4 matrix or a translation 3-vector"
    try:
        if isinstance(X, (tuple, list)) and len(X) == 2:
            return Transform(X[0], X[1])
        a = real_array(X, name, finite=False)
        if a.shape in ((4, 4), (3,)):
            return Transform.from_matrix(a) if a.shape == (4, 4) else Transform.translation(a)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    raise ValueError(f"{what}, got shape {a.shape}")
