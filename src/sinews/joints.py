"""Joint models.

Every joint connects a parent body to a child body through the *joint frame* (fixed on the
parent, placed by ``X_parent_joint``) and the joint motion ``X_joint_child(q)``.  Joint
velocities ``v`` give the child's velocity relative to the parent as ``S(q) v``, with the
motion subspace ``S`` expressed in child coordinates, angular part first.

==================  ====  ====  ===============================================================
joint               nq    nv    configuration and velocity
==================  ====  ====  ===============================================================
``Revolute(a)``     1     1     angle about unit axis ``a``; fast paths for x, y, z
``Prismatic(a)``    1     1     displacement along ``a``
``Helical(a, h)``   1     1     angle ``t`` about ``a`` with translation ``h * t`` along ``a``
``Spherical()``     4     3     unit quaternion ``(x, y, z, w)``; ``v`` = child angular velocity
                                in child axes
``FreeFlyer()``     7     6     ``q = [p; quat(x, y, z, w)]`` child pose in the joint frame;
                                ``v = [omega; v]`` child twist in child axes (angular first)
``Planar()``        3     3     ``(x, y, theta)``: translation in the joint x-y plane, then
                                rotation about z; ``v = dq/dt``
``TranslationXYZ``  3     3     ``(x, y, z)`` translation; ``v = dq/dt``
``EulerZYX()``      3     3     ``R = Rz(q0) Ry(q1) Rx(q2)``; ``v = dq/dt``
``EulerXYZ()``      3     3     ``R = Rx(q0) Ry(q1) Rz(q2)``; ``v = dq/dt``
``MultiAxis(axes)`` k     k     RBDL's multi-axis joint: ``X = exp(s_1 q_1) ... exp(s_k q_k)``
                                for 1 to 6 spatial axes ``s_i = [omega; v]`` (``|omega| = 1`` or
                                ``omega = 0, |v| = 1``), computed natively (no virtual bodies)
``Fixed()``         0     0     welded; merged into the movable parent, still addressable
==================  ====  ====  ===============================================================

Planar, TranslationXYZ and the Euler joints are multi-axis joints with fixed axes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ._checks import real_array, real_scalar
from .spatial import unit_axis

__all__ = [
    "Joint",
    "Revolute",
    "RevoluteX",
    "RevoluteY",
    "RevoluteZ",
    "Prismatic",
    "PrismaticX",
    "PrismaticY",
    "PrismaticZ",
    "Helical",
    "Spherical",
    "FreeFlyer",
    "Planar",
    "TranslationXYZ",
    "EulerZYX",
    "EulerXYZ",
    "MultiAxis",
    "Fixed",
]

# Kernel type codes.
JT_REVOLUTE = 0
JT_PRISMATIC = 1
JT_HELICAL = 2
JT_SPHERICAL = 3
JT_FREEFLYER = 4
JT_MULTIAXIS = 5
JT_FIXED = -1

_EX = np.array([1.0, 0.0, 0.0])
_EY = np.array([0.0, 1.0, 0.0])
_EZ = np.array([0.0, 0.0, 1.0])
for _e in (_EX, _EY, _EZ):
    _e.setflags(write=False)


@dataclass(frozen=True)
class Joint:
    """A joint model.  Build joints with the factory functions of this module.

    ``nq`` and ``nv`` are the joint's numbers of configuration and velocity coordinates; ``axis``
    (3,) is the unit axis of a revolute, prismatic or helical joint, ``pitch`` the helical
    pitch [m/rad] and ``axes`` (k, 6) the spatial axes of a multi-axis joint.
    """

    kind: str
    code: int
    nq: int
    nv: int
    axis: np.ndarray = field(default_factory=lambda: np.zeros(3))
    pitch: float = 0.0
    axes: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))

    def __post_init__(self):
        # joints come from the factories below; this guards direct construction
        if not isinstance(self.kind, str):
            raise ValueError(f"kind must be a string, got {type(self.kind).__name__}")
        shapes = {JT_REVOLUTE: (1, 1), JT_PRISMATIC: (1, 1), JT_HELICAL: (1, 1), JT_SPHERICAL: (4, 3),
                  JT_FREEFLYER: (7, 6), JT_FIXED: (0, 0)}
        if self.code == JT_MULTIAXIS:
            a = real_array(self.axes, "axes")
            want = (a.shape[0], a.shape[0]) if a.ndim == 2 and a.shape[1] == 6 and 1 <= a.shape[0] <= 6 else None
        else:
            want = shapes.get(self.code) if type(self.code) is int else None
        if want is None or (self.nq, self.nv) != want:
            raise ValueError("code, nq, nv and axes do not describe a joint: build joints with the "
                             "factories of sinews.joints (Revolute, Spherical, MultiAxis, ...)")
        axis = real_array(self.axis, "axis")
        if axis.shape != (3,):
            raise ValueError(f"axis must have shape (3,), got {axis.shape}")
        if self.code in (JT_REVOLUTE, JT_PRISMATIC, JT_HELICAL) and abs(np.linalg.norm(axis) - 1.0) > 1e-9:
            raise ValueError(f"axis must be a unit vector, got {axis.tolist()}")
        object.__setattr__(self, "pitch", real_scalar(self.pitch, "pitch"))
        for name, value in (("axis", axis), ("axes", a if self.code == JT_MULTIAXIS else None)):
            if value is not None and not isinstance(getattr(self, name), np.ndarray):
                value.setflags(write=False)
                object.__setattr__(self, name, value)

    @property
    def axis_code(self) -> int:
        """0 for a general axis, 1/2/3 when the axis is exactly +x/+y/+z (fast path)."""
        for k, e in enumerate((_EX, _EY, _EZ)):
            if np.array_equal(self.axis, e):
                return k + 1
        return 0

    def __repr__(self) -> str:
        if self.code in (JT_REVOLUTE, JT_PRISMATIC):
            return f"{self.kind}(axis={self.axis.tolist()})"
        if self.code == JT_HELICAL:
            return f"Helical(axis={self.axis.tolist()}, pitch={self.pitch})"
        return f"{self.kind}()"


def Revolute(axis: ArrayLike = (0.0, 0.0, 1.0)) -> Joint:
    """Revolute joint about the unit ``axis`` (3,) of the joint frame."""
    return Joint("Revolute", JT_REVOLUTE, 1, 1, axis=unit_axis(axis, "axis"))


def RevoluteX() -> Joint:
    """Revolute joint about the joint frame's x axis (fast path)."""
    return Revolute(_EX)


def RevoluteY() -> Joint:
    """Revolute joint about the joint frame's y axis (fast path)."""
    return Revolute(_EY)


def RevoluteZ() -> Joint:
    """Revolute joint about the joint frame's z axis (fast path)."""
    return Revolute(_EZ)


def Prismatic(axis: ArrayLike = (0.0, 0.0, 1.0)) -> Joint:
    """Prismatic joint along the unit ``axis`` (3,) of the joint frame."""
    return Joint("Prismatic", JT_PRISMATIC, 1, 1, axis=unit_axis(axis, "axis"))


def PrismaticX() -> Joint:
    """Prismatic joint along the joint frame's x axis."""
    return Prismatic(_EX)


def PrismaticY() -> Joint:
    """Prismatic joint along the joint frame's y axis."""
    return Prismatic(_EY)


def PrismaticZ() -> Joint:
    """Prismatic joint along the joint frame's z axis."""
    return Prismatic(_EZ)


def Helical(axis: ArrayLike = (0.0, 0.0, 1.0), pitch: float = 0.0) -> Joint:
    """Screw joint: rotation ``q`` about the unit ``axis`` (3,) with translation ``pitch * q``
    along it."""
    pitch = real_scalar(pitch, "pitch")
    return Joint("Helical", JT_HELICAL, 1, 1, axis=unit_axis(axis, "axis"), pitch=pitch)


def Spherical() -> Joint:
    """Ball joint parametrised by a unit quaternion ``(x, y, z, w)``."""
    return Joint("Spherical", JT_SPHERICAL, 4, 3)


def FreeFlyer() -> Joint:
    """Six-DoF joint: ``q = [p; quat(x, y, z, w)]``, ``v = [omega; v]`` in child axes."""
    return Joint("FreeFlyer", JT_FREEFLYER, 7, 6)


def MultiAxis(axes: ArrayLike, kind: str = "MultiAxis") -> Joint:
    """Multi-axis joint (RBDL's joint from 1 to 6 spatial axes), natively computed.

    ``axes`` (k, 6), 1 <= k <= 6 (or one axis (6,)), is a sequence of spatial axes
    ``[omega; v]`` in the joint frame, applied in order:
    ``X_joint_child = exp(s_1 q_1) @ ... @ exp(s_k q_k)``.  Each axis is a unit screw: either
    ``|omega| = 1`` (a rotation, a screw if ``omega . v != 0``) or ``omega = 0`` and ``|v| = 1``
    (a translation).
    """
    if not isinstance(kind, str):
        raise ValueError(f"kind must be a string, got {type(kind).__name__}")
    a = real_array(axes, "axes", finite=False)
    if a.ndim == 1 and a.shape == (6,):
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 6 or not 1 <= a.shape[0] <= 6:
        raise ValueError(f"axes must be 1 to 6 spatial axes of length 6, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("axes must be finite")
    for i, s in enumerate(a):
        nw, nv = np.linalg.norm(s[:3]), np.linalg.norm(s[3:])
        if not (abs(nw - 1.0) < 1e-9 or (nw == 0.0 and abs(nv - 1.0) < 1e-9)):
            raise ValueError(
                f"axes[{i}] = {s.tolist()} must be a unit screw: |omega| = 1, or omega = 0 and |v| = 1"
            )
    if a.shape[0] > 1 and np.linalg.matrix_rank(a, tol=1e-9) < a.shape[0]:
        raise ValueError("axes must be linearly independent")
    k = a.shape[0]
    a = a.copy()
    a.setflags(write=False)
    return Joint(kind, JT_MULTIAXIS, k, k, axes=a)


def Planar() -> Joint:
    """Planar joint ``(x, y, theta)``: translation in the joint x-y plane, then rotation about z."""
    z = np.zeros(3)
    return MultiAxis([np.r_[z, _EX], np.r_[z, _EY], np.r_[_EZ, z]], kind="Planar")


def TranslationXYZ() -> Joint:
    """Three orthogonal prismatic axes x, y, z."""
    z = np.zeros(3)
    return MultiAxis([np.r_[z, _EX], np.r_[z, _EY], np.r_[z, _EZ]], kind="TranslationXYZ")


def EulerZYX() -> Joint:
    """Three revolute axes: ``R = Rz(q0) @ Ry(q1) @ Rx(q2)``."""
    z = np.zeros(3)
    return MultiAxis([np.r_[_EZ, z], np.r_[_EY, z], np.r_[_EX, z]], kind="EulerZYX")


def EulerXYZ() -> Joint:
    """Three revolute axes: ``R = Rx(q0) @ Ry(q1) @ Rz(q2)``."""
    z = np.zeros(3)
    return MultiAxis([np.r_[_EX, z], np.r_[_EY, z], np.r_[_EZ, z]], kind="EulerXYZ")


def Fixed() -> Joint:
    """A weld.  The child is merged into its movable ancestor but keeps its name and id."""
    return Joint("Fixed", JT_FIXED, 0, 0)
