"""Spatial (6-D) vector algebra, Featherstone style.

Conventions (see ``docs/conventions.md``):

* Motion vectors ``m = [omega; v]`` and force vectors ``f = [n; f]``: angular part first.
* A rigid transform ``X_a_b`` is the pose of frame *b* expressed in frame *a*: the pair
  ``(R_a_b, p_a_b)`` with ``x_a = R_a_b @ x_b + p_a_b``.  Hot code keeps the pair;
  :func:`motion_matrix` and :func:`force_matrix` give the 6x6 Pluecker forms that carry
  coordinates of *b* into coordinates of *a*.
* Quaternions are stored scalar-last ``(x, y, z, w)`` (as SciPy and Pinocchio do).

References: R. Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, ch. 2.

The algebra is implemented by topic in private modules and every name is imported from here:
rotations in ``_spatial_so3``, twists in ``_spatial_se3``, Pluecker transforms and cross
products in ``_spatial_vectors``, :class:`Transform` in ``_spatial_transform``,
:class:`SpatialInertia` in ``_spatial_inertia`` (argument checks: ``_spatial_checks``).
"""

from __future__ import annotations

from ._spatial_checks import READ_TOL
from ._spatial_inertia import SpatialInertia
from ._spatial_se3 import _left_jacobian_so3, exp_se3, log_se3
from ._spatial_so3 import (
    exp_so3,
    log_so3,
    matrix_to_quat,
    matrix_to_rpy,
    quat_to_matrix,
    rot_axis,
    rot_x,
    rot_y,
    rot_z,
    rpy_to_matrix,
    skew,
    unit_axis,
)
from ._spatial_transform import Transform, as_transform
from ._spatial_vectors import cross_force, cross_motion, force_cross_matrix, force_matrix, motion_cross_matrix, motion_matrix

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

# also importable from here: unit_axis (used by sinews.joints), READ_TOL and _left_jacobian_so3
# (used by sinews.loops)
_ALSO = (unit_axis, READ_TOL, _left_jacobian_so3)

# the classes keep their public home in reprs and pickles
Transform.__module__ = SpatialInertia.__module__ = __name__
