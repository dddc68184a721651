r"""Narrow phase: contact points, normals and signed distances between two posed shapes.

Every routine takes two shapes with their world poses ``(R, p)`` (``R`` world-from-geometry) and
a ``margin`` and returns three arrays ``(points (k, 3), normals (k, 3), distances (k,))`` for the
``k`` contacts whose signed distance is ``<= margin``:

* ``normals`` are unit vectors in world axes pointing **from the first shape to the second**;
* ``distances`` are signed: the gap along the normal, negative when the shapes overlap;
* ``points`` lie halfway between the two surfaces (the witness points are
  ``point -+ distance/2 * normal``).

Pairs (the first shape is the one named first): sphere-sphere, sphere-box, sphere-capsule,
capsule-capsule, box-box (separating axis test over the 15 axes; face contacts by clipping the
incident face against the reference face (Sutherland-Hodgman), edge contacts by the closest points
of the two edges; Ericson, *Real-Time Collision Detection*, 2005, sections 4.4, 5.1.9, 5.2.1), and
every convex shape against a half-space (sphere, point, capsule: end spheres; box: corners;
cylinder: deepest rim points of each cap, four rim points of a cap lying flat; convex hull: its
vertices).  Points collide as spheres of radius zero.  Every other pair of convex shapes
(cylinder-box, convex-sphere, ...) gets one contact point from coal's signed distance (GJK/EPA;
``pip install coal``) when coal is installed.  :func:`collide` dispatches on the shape types in
either order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .shapes import Box, Capsule, Convex, Cylinder, HalfSpace, Point, Shape, Sphere

if TYPE_CHECKING:
    from ..spatial import Transform

__all__ = ["collide", "supported_pair", "segment_closest_points", "coal_available"]

_EMPTY = (np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
_EPS = 1e-12
_TINY = 1e-300  # a segment shorter than sqrt(_TINY) is a point


def _out(points, normals, distances, margin):
    points = np.atleast_2d(np.asarray(points, dtype=float))
    normals = np.atleast_2d(np.asarray(normals, dtype=float))
    distances = np.atleast_1d(np.asarray(distances, dtype=float))
    keep = distances <= margin
    if keep.all():
        return points, normals, distances
    return points[keep], normals[keep], distances[keep]


def _radius(shape):
    return 0.0 if isinstance(shape, Point) else shape.radius


# ----------------------------------------------------------------------------- half-space pairs
def _halfspace_points(R_h, p_h, centres, radii, margin):
    """Spheres (centres (k, 3), radii (k,)) against the half-space with frame ``(R_h, p_h)``."""
    n = R_h[:, 2]
    height = (centres - p_h) @ n
    d = height - radii
    points = centres - np.outer(radii + 0.5 * d, n)
    return _out(points, np.broadcast_to(n, points.shape).copy(), d, margin)


def halfspace_sphere(hs, R_h, p_h, s, R_s, p_s, margin=0.0):
    return _halfspace_points(R_h, p_h, p_s[None, :], np.array([_radius(s)]), margin)


def halfspace_capsule(hs, R_h, p_h, c, R_c, p_c, margin=0.0):
    a = R_c[:, 2] * (0.5 * c.length)
    centres = np.stack([p_c - a, p_c + a])
    return _halfspace_points(R_h, p_h, centres, np.full(2, c.radius), margin)


def halfspace_box(hs, R_h, p_h, b, R_b, p_b, margin=0.0):
    corners = p_b + b.vertices() @ R_b.T
    return _halfspace_points(R_h, p_h, corners, np.zeros(8), margin)


def halfspace_cylinder(hs, R_h, p_h, c, R_c, p_c, margin=0.0):
    n = R_h[:, 2]
    a = R_c[:, 2]
    radial = -(n - (n @ a) * a)  # direction, in the cap plane, towards the half-space
    rn = np.linalg.norm(radial)
    half = 0.5 * c.length
    if rn > 1e-9:
        u = radial / rn
        rim = np.stack([p_c + half * a + c.radius * u, p_c - half * a + c.radius * u])
    else:  # a cap lies flat: four points on the lower cap's rim
        cap = p_c - half * a * np.sign(n @ a)
        e1 = R_c[:, 0]
        e2 = R_c[:, 1]
        rim = np.stack([cap + c.radius * e1, cap - c.radius * e1, cap + c.radius * e2, cap - c.radius * e2])
    return _halfspace_points(R_h, p_h, rim, np.zeros(len(rim)), margin)


# ----------------------------------------------------------------------------- sphere pairs
def _sphere_sphere(c1, r1, c2, r2, margin):
    d = c2 - c1
    L = float(np.sqrt(d @ d))
    n = d / L if L > _EPS else np.array([0.0, 0.0, 1.0])
    dist = L - r1 - r2
    point = c1 + n * (r1 + 0.5 * dist)
    return _out(point, n, dist, margin)


def sphere_sphere(s1, R1, p1, s2, R2, p2, margin=0.0):
    return _sphere_sphere(p1, _radius(s1), p2, _radius(s2), margin)


def segment_closest_points(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Closest points ``(c1, c2)`` (3,) of the segments ``[p1, q1]`` and ``[p2, q2]`` (points (3,)) (Ericson 5.1.9)."""
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = d1 @ d1
    e = d2 @ d2
    f = d2 @ r
    if a <= _TINY and e <= _TINY:
        return p1.copy(), p2.copy()
    if a <= _TINY:
        s = 0.0
        t = min(max(f / e, 0.0), 1.0)
    else:
        c = d1 @ r
        if e <= _TINY:
            t = 0.0
            s = min(max(-c / a, 0.0), 1.0)
        else:
            b = d1 @ d2
            denom = a * e - b * b
            s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > _EPS * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = min(max(-c / a, 0.0), 1.0)
            elif t > 1.0:
                t = 1.0
                s = min(max((b - c) / a, 0.0), 1.0)
    return p1 + d1 * s, p2 + d2 * t


def _segment(c, R, p):
    a = R[:, 2] * (0.5 * c.length)
    return p - a, p + a


def sphere_capsule(s, R1, p1, c, R2, p2, margin=0.0):
    a, b = _segment(c, R2, p2)
    _, closest = segment_closest_points(p1, p1, a, b)
    return _sphere_sphere(p1, _radius(s), closest, c.radius, margin)


def capsule_capsule(c1, R1, p1, c2, R2, p2, margin=0.0):
    a1, b1 = _segment(c1, R1, p1)
    a2, b2 = _segment(c2, R2, p2)
    x1, x2 = segment_closest_points(a1, b1, a2, b2)
    return _sphere_sphere(x1, c1.radius, x2, c2.radius, margin)


def sphere_box(s, R1, p1, b, R2, p2, margin=0.0):
    """Sphere (first) against a box (second); the normal points from the sphere to the box."""
    r = _radius(s)
    h = b.half_extents
    local = R2.T @ (p1 - p2)
    clamped = np.clip(local, -h, h)
    diff = local - clamped
    L = float(np.sqrt(diff @ diff))
    if L > _EPS:  # centre outside the box
        n_box_to_sphere = R2 @ (diff / L)
        surface = p2 + R2 @ clamped
        dist = L - r
    else:  # centre inside: leave through the nearest face
        gaps = h - np.abs(local)
        i = int(np.argmin(gaps))
        e = np.zeros(3)
        sgn = 1.0 if local[i] >= 0.0 else -1.0
        e[i] = sgn
        n_box_to_sphere = R2 @ e
        face = local.copy()
        face[i] = sgn * h[i]
        surface = p2 + R2 @ face
        dist = -gaps[i] - r
    n = -n_box_to_sphere
    point = surface - n * (0.5 * dist)
    return _out(point, n, dist, margin)


# ----------------------------------------------------------------------------- box-box
def _clip_rectangle(poly, i1, i2, h1, h2):
    """Sutherland-Hodgman clip of a polygon (k, 3) to ``|x[i1]| <= h1``, ``|x[i2]| <= h2``."""
    for axis, lim in ((i1, h1), (i2, h2)):
        for sgn in (1.0, -1.0):
            if len(poly) == 0:
                return poly
            out = []
            n = len(poly)
            for k in range(n):
                P = poly[k]
                Q = poly[(k + 1) % n]
                dp = sgn * P[axis] - lim
                dq = sgn * Q[axis] - lim
                if dp <= 0.0:
                    out.append(P)
                if (dp < 0.0 < dq) or (dq < 0.0 < dp):
                    out.append(P + (Q - P) * (dp / (dp - dq)))
            poly = np.array(out) if out else np.zeros((0, 3))
    return poly


_FACE_QUADS = {}


def _face_polygon(h, axis, sgn):
    """The 4 corners (4, 3), in order, of the box face ``x[axis] = sgn * h[axis]``."""
    j, k = [m for m in range(3) if m != axis]
    quad = np.zeros((4, 3))
    for m, (sj, sk) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        quad[m, axis] = sgn * h[axis]
        quad[m, j] = sj * h[j]
        quad[m, k] = sk * h[k]
    return quad


def _face_contacts(Rr, pr, hr, axis, Ri, pi, hi, n_world, margin):
    """Reference box (Rr, pr, hr) with face ``axis`` facing ``n_world``; incident box (Ri, pi, hi)."""
    sgn = 1.0 if Rr[:, axis] @ n_world > 0.0 else -1.0
    # incident face: the face of the incident box most anti-parallel to n
    dots = Ri.T @ n_world
    ia = int(np.argmax(np.abs(dots)))
    isgn = -1.0 if dots[ia] > 0.0 else 1.0
    quad = _face_polygon(hi, ia, isgn)
    world = pi + quad @ Ri.T
    local = (world - pr) @ Rr  # in the reference box frame
    j, k = [m for m in range(3) if m != axis]
    clipped = _clip_rectangle(local, j, k, hr[j] * (1 + 1e-9) + 1e-12, hr[k] * (1 + 1e-9) + 1e-12)
    if len(clipped) == 0:
        return _EMPTY
    # clipping coincident edges repeats points: keep one of each
    keep = [0]
    for m in range(1, len(clipped)):
        if np.min(np.abs(clipped[keep] - clipped[m]).max(axis=1)) > 1e-9 * (1.0 + hr.max()):
            keep.append(m)
    clipped = clipped[keep]
    if len(clipped) > 4:  # the four spanning the largest area (as ODE, Bullet)
        depth = sgn * clipped[:, axis]
        a = int(np.argmin(depth))
        plane = [m for m in range(3) if m != axis]
        rel = clipped[:, plane] - clipped[a, plane]
        b = int(np.argmax((rel**2).sum(axis=1)))
        u = rel[b]
        cr = u[0] * rel[:, 1] - u[1] * rel[:, 0]
        c1 = int(np.argmax(cr)) if cr.max() > 0 else a
        c2 = int(np.argmin(cr)) if cr.min() < 0 else a
        sel = []
        for idx in (a, c1, b, c2):
            if idx not in sel:
                sel.append(idx)
        clipped = clipped[sel]
    dist = sgn * clipped[:, axis] - hr[axis]
    pts_world = pr + clipped @ Rr.T
    n = np.broadcast_to(n_world, pts_world.shape)
    points = pts_world - n * (0.5 * dist)[:, None]
    return _out(points, n.copy(), dist, margin)


def box_box(b1, R1, p1, b2, R2, p2, margin=0.0):
    """Separating-axis test; contacts on the axis of least overlap (faces preferred).
    Runs the Numba kernel of :mod:`sinews.geometry._box_kernels`; :func:`box_box_reference`
    is the same algorithm in NumPy (the tests compare them)."""
    from ._box_kernels import box_box as kernel

    pts = np.empty((16, 3))
    nrm = np.empty((16, 3))
    dst = np.empty(16)
    n = kernel(np.ascontiguousarray(R1), np.ascontiguousarray(p1), b1.half_extents.copy(),
               np.ascontiguousarray(R2), np.ascontiguousarray(p2), b2.half_extents.copy(),
               float(margin), pts, nrm, dst)
    return pts[:n].copy(), nrm[:n].copy(), dst[:n].copy()


def box_box_reference(b1, R1, p1, b2, R2, p2, margin=0.0):
    """NumPy formulation of :func:`box_box`."""
    h1 = b1.half_extents
    h2 = b2.half_extents
    d = p2 - p1
    C = R1.T @ R2  # B's axes in A's frame
    absC = np.abs(C) + 1e-12
    dA = R1.T @ d
    best = None  # (overlap, kind, i, j, n_world)
    # faces of A
    for i in range(3):
        ra = h1[i]
        rb = absC[i] @ h2
        ov = ra + rb - abs(dA[i])
        if ov < -margin:
            return _EMPTY
        if best is None or ov < best[0]:
            best = (ov, 0, i, -1, R1[:, i] * (1.0 if dA[i] >= 0 else -1.0))
    dB = R2.T @ d
    for j in range(3):
        ra = absC[:, j] @ h1
        rb = h2[j]
        ov = ra + rb - abs(dB[j])
        if ov < -margin:
            return _EMPTY
        if ov < best[0]:
            best = (ov, 1, j, -1, R2[:, j] * (1.0 if dB[j] >= 0 else -1.0))
    face_best = best[0]
    edge = None
    for i in range(3):
        for j in range(3):
            axis = np.cross(R1[:, i], R2[:, j])
            L = float(np.linalg.norm(axis))
            if L < 1e-6:
                continue
            axis = axis / L
            ra = np.abs(R1.T @ axis) @ h1
            rb = np.abs(R2.T @ axis) @ h2
            s = axis @ d
            ov = ra + rb - abs(s)
            if ov < -margin:
                return _EMPTY
            if ov < face_best - 0.05 * abs(face_best) - 1e-9 and (edge is None or ov < edge[0]):
                edge = (ov, i, j, axis * (1.0 if s >= 0 else -1.0))
    if edge is not None:
        ov, i, j, n = edge
        ca = p1 + sum(h1[k] * np.sign(R1[:, k] @ n) * R1[:, k] for k in range(3) if k != i)
        cb = p2 - sum(h2[k] * np.sign(R2[:, k] @ n) * R2[:, k] for k in range(3) if k != j)
        x1, x2 = segment_closest_points(ca - h1[i] * R1[:, i], ca + h1[i] * R1[:, i],
                                        cb - h2[j] * R2[:, j], cb + h2[j] * R2[:, j])
        return _out(0.5 * (x1 + x2), n, -ov, margin)
    ov, kind, i, _, n = best
    if kind == 0:
        return _face_contacts(R1, p1, h1, i, R2, p2, h2, n, margin)
    # reference face on B: its outward normal is -n (towards A); normals still point A -> B
    pts, nrm, dist = _face_contacts(R2, p2, h2, i, R1, p1, h1, -n, margin)
    return pts, -nrm if len(nrm) else nrm, dist


# ----------------------------------------------------------------------------- coal (convex)
def halfspace_convex(hs, R_h, p_h, c, R_c, p_c, margin=0.0):
    pts = p_c + c.vertices @ R_c.T
    return _halfspace_points(R_h, p_h, pts, np.zeros(len(pts)), margin)


def coal_available() -> bool:
    """Whether the ``coal`` package (formerly hpp-fcl) can be imported."""
    try:
        import coal  # noqa: F401
    except ImportError:
        return False
    return True


_COAL_CACHE = {}


def _coal_geometry(shape):
    import coal

    key = id(shape)
    hit = _COAL_CACHE.get(key)
    if hit is not None and hit[0] is shape:
        return hit[1]
    if isinstance(shape, Sphere):
        g = coal.Sphere(shape.radius)
    elif isinstance(shape, Point):
        g = coal.Sphere(0.0)
    elif isinstance(shape, Box):
        g = coal.Box(*shape.size.tolist())
    elif isinstance(shape, Capsule):
        g = coal.Capsule(shape.radius, shape.length)
    elif isinstance(shape, Cylinder):
        g = coal.Cylinder(shape.radius, shape.length)
    elif isinstance(shape, Convex):
        m = coal.BVHModelOBBRSS()
        m.beginModel(len(shape.triangles), len(shape.vertices))
        m.addVertices(np.asarray(shape.vertices, dtype=float))
        m.addTriangles(np.asarray(shape.triangles, dtype=np.int64))
        m.endModel()
        m.buildConvexRepresentation(False)
        g = m.convex
        g._sinews_model = m  # keep the mesh alive with its convex
    else:
        raise NotImplementedError(f"no coal geometry for {type(shape).__name__}")
    _COAL_CACHE[key] = (shape, g)
    return g


def coal_pair(a, Ra, pa, b, Rb, pb, margin=0.0):
    """One contact from coal's signed distance (GJK, EPA when overlapping)."""
    if not coal_available():
        raise NotImplementedError(
            f"contacts of ({type(a).__name__}, {type(b).__name__}) need the coal package: "
            "pip install coal (or sinews[coal])"
        )
    import coal

    req = coal.DistanceRequest()
    res = coal.DistanceResult()
    d = coal.distance(_coal_geometry(a), coal.Transform3s(Ra, pa), _coal_geometry(b),
                      coal.Transform3s(Rb, pb), req, res)
    if d > margin:
        return _EMPTY
    p1 = np.asarray(res.getNearestPoint1(), dtype=float)
    p2 = np.asarray(res.getNearestPoint2(), dtype=float)
    n = np.asarray(res.normal, dtype=float)
    L = float(np.linalg.norm(n))
    if not L > 0:
        n = p2 - p1
        L = float(np.linalg.norm(n))
        n = n / L if L > _EPS else np.array([0.0, 0.0, 1.0])
    else:
        n = n / L
    return _out(0.5 * (p1 + p2), n, float(d), margin)


# ----------------------------------------------------------------------------- dispatch
_PAIRS = {
    (HalfSpace, Sphere): halfspace_sphere,
    (HalfSpace, Point): halfspace_sphere,
    (HalfSpace, Capsule): halfspace_capsule,
    (HalfSpace, Box): halfspace_box,
    (HalfSpace, Cylinder): halfspace_cylinder,
    (Sphere, Sphere): sphere_sphere,
    (Sphere, Point): sphere_sphere,
    (Point, Point): sphere_sphere,
    (Sphere, Box): sphere_box,
    (Point, Box): sphere_box,
    (Sphere, Capsule): sphere_capsule,
    (Point, Capsule): sphere_capsule,
    (Capsule, Capsule): capsule_capsule,
    (Box, Box): box_box,
    (HalfSpace, Convex): halfspace_convex,
}
_COAL_SHAPES = (Sphere, Point, Box, Capsule, Cylinder, Convex)


def supported_pair(a: Shape, b: Shape) -> bool:
    """Whether :func:`collide` handles shapes of these types (in either order)."""
    if (type(a), type(b)) in _PAIRS or (type(b), type(a)) in _PAIRS:
        return True
    # the other pairs of convex shapes go through coal (when installed)
    return isinstance(a, _COAL_SHAPES) and isinstance(b, _COAL_SHAPES) and coal_available()


def collide(a: Shape, X_world_a: Transform | tuple | ArrayLike, b: Shape, X_world_b: Transform | tuple | ArrayLike,
            margin: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contacts between shape ``a`` posed at ``X_world_a`` and ``b`` at ``X_world_b``.

    Poses are :class:`~sinews.Transform` objects, ``(R, p)`` pairs or 4x4 homogeneous matrices;
    ``margin`` (>= 0): report contacts with a gap up to this distance.  Returns
    ``(points (k, 3), normals (k, 3), distances (k,))`` with normals from ``a`` to ``b``;
    ``NotImplementedError`` for an unsupported pair (see the module docstring).
    """
    from .._checks import real_scalar
    from ..spatial import as_transform

    if not isinstance(a, Shape) or not isinstance(b, Shape):
        raise ValueError("a and b must be sinews.geometry shapes")
    Xa = as_transform(X_world_a, "X_world_a")
    Xb = as_transform(X_world_b, "X_world_b")
    m = real_scalar(margin, "margin")
    if m < 0:
        raise ValueError(f"margin must be >= 0, got {m}")
    with np.errstate(all="ignore"):
        out = collide_posed(a, Xa.R, Xa.p, b, Xb.R, Xb.p, m)
    if not all(np.all(np.isfinite(x)) for x in out):
        raise ValueError("X_world_a, X_world_b: the poses are too large for double precision")
    return out


def collide_posed(a, Ra, pa, b, Rb, pb, margin):
    """:func:`collide` on unchecked rotation matrices and positions (arrays)."""
    f = _PAIRS.get((type(a), type(b)))
    if f is not None:
        return f(a, Ra, pa, b, Rb, pb, margin)
    f = _PAIRS.get((type(b), type(a)))
    if f is None:
        if isinstance(a, _COAL_SHAPES) and isinstance(b, _COAL_SHAPES):
            return coal_pair(a, Ra, pa, b, Rb, pb, margin)
        raise NotImplementedError(
            f"no contact routine for the pair ({type(a).__name__}, {type(b).__name__})"
        )
    pts, nrm, dist = f(b, Rb, pb, a, Ra, pa, margin)
    return pts, -nrm, dist
