"""Collision shapes and the :class:`Geometry` record that attaches a shape to a body.

Every shape is described in its own *geometry frame*; a :class:`Geometry` places that frame on a
body with ``X_body_geometry``.  Shapes (SI units, full lengths):

=========================  ====================================================================
shape                      definition in the geometry frame
=========================  ====================================================================
``Sphere(radius)``         the ball ``|x| <= radius``
``Box(size)``              ``|x_i| <= size_i / 2`` (``size`` = full edge lengths ``(3,)``)
``Capsule(radius, length)``  points within ``radius`` of the segment ``z in [-length/2, length/2]``
``Cylinder(radius, length)`` ``x^2 + y^2 <= radius^2``, ``|z| <= length / 2`` (axis z)
``HalfSpace()``            ``z <= 0``: the plane ``z = 0`` with outward normal ``+z``
``Point()``                the origin (a sphere of radius zero)
``Convex(vertices)``       the convex hull of points (n, 3) (collision meshes); needs ``coal``
                           against anything but a half-space
=========================  ====================================================================

Per-pair friction and restitution (:func:`combine_friction`, :func:`combine_restitution`): a
geometry's ``friction`` / ``restitution`` may be ``None`` ("use the other geometry's value"); two
given values combine as the **geometric mean** for friction (``sqrt(mu_a mu_b)``, as ODE and
Bullet) and the **maximum** for restitution (as Box2D: the bouncier surface wins); when neither
geometry gives a value the scene default is used.

Collision filtering (:func:`may_collide`): two geometries are tested only if they are on different
bodies, the bodies are not welded into the same moving link, neither body is the parent of the
other (unless the parent is the world: a robot still touches the ground), and their bit masks
accept each other: ``(a.group & b.mask) and (b.group & a.mask)`` (Bullet's and MuJoCo's rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._checks import real_array, real_scalar
from ..spatial import Transform
from ..spatial import as_transform as _as_transform

__all__ = [
    "Shape",
    "Sphere",
    "Box",
    "Capsule",
    "Cylinder",
    "HalfSpace",
    "Point",
    "Convex",
    "Geometry",
    "combine_friction",
    "combine_restitution",
    "ALL_GROUPS",
]

#: the default ``group`` and ``mask``: every bit set (collide with everything)
ALL_GROUPS = 0xFFFFFFFF

_CORNER_SIGNS = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)
_CORNER_SIGNS.flags.writeable = False


def _positive(x, name, allow_zero=False):
    v = real_scalar(x, name)
    if v < 0.0 or (v == 0.0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {v}")
    return v


class Shape:
    """Base class of the collision shapes (immutable)."""

    kind = "shape"

    def bounding_radius(self) -> float:
        """Radius of a ball about the geometry-frame origin that contains the shape (inf for a
        half-space)."""
        raise NotImplementedError

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        """Half extents (3,) in world axes of the shape rotated by ``R`` (3, 3) (world-from-geometry)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Sphere(Shape):
    """A ball of ``radius`` centred at the geometry-frame origin."""

    radius: float
    kind = "sphere"

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "radius"))

    def bounding_radius(self) -> float:
        return self.radius

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        return np.full(3, self.radius)


@dataclass(frozen=True)
class Point(Shape):
    """A point at the geometry-frame origin (collides like a sphere of radius zero)."""

    kind = "point"

    @property
    def radius(self) -> float:
        return 0.0

    def bounding_radius(self) -> float:
        return 0.0

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        return np.zeros(3)


@dataclass(frozen=True, eq=False)
class Box(Shape):
    """A box of full edge lengths ``size`` (3,) centred at the geometry-frame origin."""

    size: np.ndarray
    kind = "box"

    def __post_init__(self):
        s = real_array(self.size, "size", shape=(3,)).copy()
        if np.any(s <= 0):
            raise ValueError(f"size must be > 0 in every direction, got {s.tolist()}")
        s.flags.writeable = False
        object.__setattr__(self, "size", s)

    @property
    def half_extents(self) -> np.ndarray:
        return 0.5 * self.size

    def __eq__(self, other):
        return isinstance(other, Box) and bool(np.array_equal(self.size, other.size))

    def __hash__(self):
        return hash(("box", tuple(self.size.tolist())))

    def __repr__(self):
        return f"Box(size={self.size.tolist()})"

    def bounding_radius(self) -> float:
        return float(np.linalg.norm(self.half_extents))

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        return np.abs(np.asarray(R)) @ self.half_extents

    def vertices(self) -> np.ndarray:
        """The 8 corners (8, 3) in the geometry frame."""
        return _CORNER_SIGNS * (0.5 * self.size)


@dataclass(frozen=True)
class Capsule(Shape):
    """Points within ``radius`` of the segment from ``-length/2`` to ``length/2`` on z."""

    radius: float
    length: float
    kind = "capsule"

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "radius"))
        object.__setattr__(self, "length", _positive(self.length, "length", allow_zero=True))

    def bounding_radius(self) -> float:
        return self.radius + 0.5 * self.length

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        return np.abs(np.asarray(R)[:, 2]) * (0.5 * self.length) + self.radius


@dataclass(frozen=True)
class Cylinder(Shape):
    """A solid cylinder of ``radius`` and ``length`` along z, centred at the origin."""

    radius: float
    length: float
    kind = "cylinder"

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "radius"))
        object.__setattr__(self, "length", _positive(self.length, "length"))

    def bounding_radius(self) -> float:
        return math.hypot(self.radius, 0.5 * self.length)

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        a = np.asarray(R)[:, 2]
        radial = self.radius * np.sqrt(np.maximum(0.0, 1.0 - a * a))
        return np.abs(a) * (0.5 * self.length) + radial


@dataclass(frozen=True, eq=False)
class Convex(Shape):
    """The convex hull of ``vertices`` (n, 3) in the geometry frame (e.g. a collision mesh).

    Against a half-space its contacts are the hull's vertices within the margin (exact, no extra
    dependency); against the other shapes one contact point from coal's GJK/EPA signed distance
    (``pip install coal``, the ``coal`` extra).
    """

    vertices: np.ndarray
    kind = "convex"

    def __post_init__(self):
        from scipy.spatial import ConvexHull, QhullError

        v = real_array(self.vertices, "vertices", ndim=2)
        if v.shape[1:] != (3,) or v.shape[0] < 4:
            raise ValueError(f"vertices must have shape (n >= 4, 3), got {v.shape}")
        try:
            hull = ConvexHull(v)
        except (QhullError, ValueError) as exc:
            raise ValueError(f"vertices: no 3-D convex hull ({str(exc).splitlines()[0]})") from None
        hv = v[hull.vertices].copy()
        # triangles re-indexed into the hull's own vertices
        remap = -np.ones(len(v), dtype=np.int64)
        remap[hull.vertices] = np.arange(len(hull.vertices))
        tri = remap[hull.simplices]
        hv.flags.writeable = False
        tri.flags.writeable = False
        object.__setattr__(self, "vertices", hv)
        object.__setattr__(self, "triangles", tri)

    def __repr__(self):
        return f"Convex({len(self.vertices)} vertices)"

    def bounding_radius(self) -> float:
        return float(np.max(np.linalg.norm(self.vertices, axis=1)))

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        return np.max(np.abs(self.vertices @ np.asarray(R).T), axis=0)


@dataclass(frozen=True)
class HalfSpace(Shape):
    """The half-space ``z <= 0`` of the geometry frame (the plane z = 0, outward normal +z)."""

    kind = "halfspace"

    def bounding_radius(self) -> float:
        return math.inf

    def aabb_half_extents(self, R: np.ndarray) -> np.ndarray:
        return np.full(3, math.inf)


def _mask(x, name):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{name} must be an integer bit mask, got {type(x).__name__}")
    x = int(x)
    if x < 0 or x > ALL_GROUPS:
        raise ValueError(f"{name} must be a 32-bit unsigned bit mask, got {x}")
    return x


def _optional_coefficient(x, name, upper=None):
    if x is None:
        return None
    v = real_scalar(x, name)
    if v < 0.0 or (upper is not None and v > upper):
        raise ValueError(f"{name} must be in [0, {upper if upper is not None else 'inf'}), got {v}")
    return v


@dataclass(frozen=True, eq=False)
class Geometry:
    """A collision shape attached to a body.

    Args:
        body: the body id (``int``; :meth:`sinews.sim.Scene.add_geometry` also accepts a name).
        shape: a :class:`Shape`.
        X_body_geometry: pose of the geometry frame in the body frame (default identity).
        name: a label (the scene makes it unique).
        friction: Coulomb coefficient (``>= 0``) or ``None`` (use the other geometry's value).
        restitution: coefficient of restitution in ``[0, 1]`` or ``None``.
        group, mask: 32-bit collision bits; a pair is tested when
            ``(a.group & b.mask) and (b.group & a.mask)``.
        color: an optional RGBA tuple for viewers (values in [0, 1]).
    """

    body: int
    shape: Shape
    X_body_geometry: Transform | None = None
    name: str | None = None
    friction: float | None = None
    restitution: float | None = None
    group: int = ALL_GROUPS
    mask: int = ALL_GROUPS
    color: tuple | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        if isinstance(self.body, (bool, np.bool_)) or not isinstance(self.body, (int, np.integer)):
            raise ValueError(f"body must be a body id (int), got {type(self.body).__name__}")
        set_(self, "body", int(self.body))
        if self.body < 0:
            raise ValueError(f"body must be >= 0, got {self.body}")
        if not isinstance(self.shape, Shape):
            raise ValueError(f"shape must be a sinews.geometry shape, got {type(self.shape).__name__}")
        X = self.X_body_geometry
        set_(self, "X_body_geometry", Transform.identity() if X is None else _as_transform(X, "X_body_geometry"))
        if self.name is not None and not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {type(self.name).__name__}")
        set_(self, "friction", _optional_coefficient(self.friction, "friction"))
        set_(self, "restitution", _optional_coefficient(self.restitution, "restitution", 1.0))
        set_(self, "group", _mask(self.group, "group"))
        set_(self, "mask", _mask(self.mask, "mask"))
        if self.color is not None:
            c = real_array(self.color, "color", ndim=1)
            if c.shape[0] not in (3, 4) or np.any((c < 0) | (c > 1)):
                raise ValueError("color must be 3 or 4 values in [0, 1]")
            set_(self, "color", tuple(float(x) for x in c))

    def __repr__(self):
        return f"Geometry(name={self.name!r}, body={self.body}, shape={self.shape!r})"


def combine_friction(a: float | None, b: float | None, default: float) -> float:
    """Friction of a pair: geometric mean of the given values, the one given, or ``default``."""
    if a is None and b is None:
        return float(default)
    if a is None:
        return float(b)
    if b is None:
        return float(a)
    return math.sqrt(a * b)


def combine_restitution(a: float | None, b: float | None, default: float) -> float:
    """Restitution of a pair: the larger of the given values, the one given, or ``default``."""
    if a is None and b is None:
        return float(default)
    if a is None:
        return float(b)
    if b is None:
        return float(a)
    return max(a, b)
