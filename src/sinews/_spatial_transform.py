"""Rigid transforms of :mod:`sinews.spatial`: :class:`Transform` and :func:`as_transform`.

A ``Transform`` ``X_a_b`` is the pose of frame b in frame a, the pair ``(R_a_b, p_a_b)`` with
``x_a = R_a_b x_b + p_a_b``; it composes as ``X_a_c = X_a_b @ X_b_c``
(``R = R_a_b R_b_c``, ``p = p_a_b + R_a_b p_b_c``) and acts on points, motion vectors and force
vectors (RBDA ch. 2; the Pluecker forms are in ``sinews._spatial_vectors``).
``as_transform`` turns what users pass (``None``, an ``(R, p)`` pair, a 4x4 matrix, a
translation) into one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._checks import real_array
from ._spatial_checks import _finite_out, _frozen, _rotation, _vec
from ._spatial_so3 import quat_to_matrix, rot_axis, rot_x, rot_y, rot_z, rpy_to_matrix
from ._spatial_vectors import force_matrix, motion_matrix


@dataclass(frozen=True, slots=True)
class Transform:
    """A rigid transform ``X_a_b``: pose ``(R, p)`` of frame b in frame a, ``R`` (3, 3) a
    rotation matrix and ``p`` (3,) the origin of b in a (both read-only arrays; the object has
    no ``__dict__`` and takes no weak references, which lets the fast paths reuse a pool of
    transforms the caller has dropped).

    Build with the constructors (:meth:`identity`, :meth:`translation`, :meth:`rot_x`, ...,
    :meth:`from_rpy`, :meth:`from_quat`) and compose with ``@``: ``X_a_c = X_a_b @ X_b_c``.
    """

    R: np.ndarray
    p: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "R", _frozen(_rotation(self.R, "R")))
        object.__setattr__(self, "p", _frozen(_vec(self.p, 3, "p")))

    def __getstate__(self):
        return {"R": self.R, "p": self.p}

    def __setstate__(self, state):
        # (also the state of a Transform pickled before it had slots: its __dict__)
        object.__setattr__(self, "R", state["R"])
        object.__setattr__(self, "p", state["p"])
        self.__post_init__()  # (checked and read-only again)

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
