"""Rotations (SO(3)) of :mod:`sinews.spatial`: axis rotations, Rodrigues' formula and its
inverse, roll-pitch-yaw angles and quaternions.

* ``skew(w)``: the matrix ``[w]x`` with ``[w]x u = w x u``;
* ``rot_x``, ``rot_y``, ``rot_z``, ``rot_axis``: the rotation ``R_a_b`` of frame b turned by an
  angle about an axis of frame a (it maps coordinates of b to coordinates of a);
* ``exp_so3(w) = I + sin(t)/t [w]x + (1 - cos t)/t^2 [w]x^2`` (Rodrigues, ``t = |w|``) and its
  inverse ``log_so3`` (the angle from ``atan2``, accurate near 0 and near pi);
* ``rpy_to_matrix``/``matrix_to_rpy`` (URDF: ``R = Rz(yaw) Ry(pitch) Rx(roll)``) and
  ``quat_to_matrix``/``matrix_to_quat`` (scalar last, ``(x, y, z, w)``).

References: R. Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, ch. 2;
K. M. Lynch and F. C. Park, *Modern Robotics*, 2017, sec. 3.2.3.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._checks import real_scalar
from ._spatial_checks import READ_TOL, _frozen, _rotation, _vec


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
