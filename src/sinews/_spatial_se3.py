"""Rigid motions (SE(3)) of :mod:`sinews.spatial`: the exponential and logarithm of a twist.

A twist ``[omega; v]`` held for unit time moves a frame to ``(R, p)`` with ``R = exp_so3(omega)``
and ``p = J_l(omega) v``, ``J_l`` the left Jacobian of SO(3)
``J_l(w) = I + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2`` (``t = |w|``); ``log_se3``
inverts it with ``v = J_l(omega)^-1 p``.  The coefficients are evaluated without cancellation
(a Taylor series for small ``t``) and without overflow for huge rotation vectors.

Reference: K. M. Lynch and F. C. Park, *Modern Robotics*, 2017, sec. 3.3.3.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._spatial_checks import _finite_out, _vec
from ._spatial_so3 import _big_rotation, exp_so3, log_so3, skew


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
