"""Motion and force vectors of :mod:`sinews.spatial`: Pluecker transforms and spatial cross products.

* ``motion_matrix(R, p) = [[R, 0], [p x R, R]]`` carries motion vectors ``[omega; v]`` from
  frame b to frame a, ``force_matrix(R, p) = [[R, p x R], [0, R]]`` carries force vectors
  ``[n; f]`` (its dual), for the pose ``(R, p)`` of b in a;
* ``motion_cross_matrix(m) = [[w x, 0], [v x, w x]]`` (RBDA eq. 2.31), ``m x`` on motion vectors,
  and ``force_cross_matrix(m) = -(m x)^T``, ``m x*`` on force vectors;
  ``cross_motion`` and ``cross_force`` apply them without forming the matrices.

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, ch. 2.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._spatial_checks import READ_TOL, _finite_out, _rotation, _vec
from ._spatial_so3 import skew


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
