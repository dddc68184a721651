"""Argument checks of the spatial algebra (:mod:`sinews.spatial`): vectors, rotations, results.

* ``_vec``: a finite real float vector of a given length (``ValueError`` naming the argument);
* ``_rotation``: a rotation matrix, orthonormal with determinant +1 to a tolerance (``1e-9`` for
  what a :class:`sinews.spatial.Transform` stores, :data:`READ_TOL` for the functions that only
  read a rotation);
* ``_finite_out``: a result that overflowed raises ``NonFiniteResultError`` naming the
  arguments that are too large;
* ``_frozen``: a private read-only copy (model data cannot change behind the model's back).
"""

from __future__ import annotations

import numpy as np

from ._checks import NonFiniteResultError, real_array


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
