"""All contacts among a set of posed geometries: broad phase, filtering, narrow phase.

:func:`find_contacts` tests every half-space against every other geometry (a half-space has an
unbounded box), runs :func:`~sinews.geometry.broad_phase.sweep_and_prune` on the bounding boxes of
the others (inflated by ``margin``), drops the pairs the filter refuses, and calls
:func:`~sinews.geometry.narrow_phase.collide` (unchecked poses) on the rest.  The result is a :class:`Contacts`
record with one row per contact point, in a deterministic order (by pair, then by point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .broad_phase import sweep_unchecked
from .narrow_phase import collide_posed
from .shapes import HalfSpace

if TYPE_CHECKING:
    from .shapes import Shape

__all__ = ["Contacts", "find_contacts", "support_points"]


@dataclass
class Contacts:
    """Contact points between geometries (k rows).

    Attributes:
        geom_a, geom_b: (k,) geometry indices; the normal points from ``geom_a`` to ``geom_b``.
        points: (k, 3) world points halfway between the surfaces.
        normals: (k, 3) unit world normals.
        distances: (k,) signed distances (negative: penetration).
        friction, restitution: (k,) combined per-pair coefficients.
    """

    geom_a: np.ndarray
    geom_b: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    distances: np.ndarray
    friction: np.ndarray
    restitution: np.ndarray

    def __len__(self) -> int:
        return int(self.distances.shape[0])

    @classmethod
    def empty(cls) -> "Contacts":
        z = np.zeros(0)
        zi = np.zeros(0, dtype=np.int64)
        return cls(zi, zi.copy(), np.zeros((0, 3)), np.zeros((0, 3)), z, z.copy(), z.copy())


def find_contacts(shapes: Sequence[Shape], R: np.ndarray, p: np.ndarray, allowed: np.ndarray, friction: np.ndarray,
                  restitution: np.ndarray, margin: float = 0.0,
                  support: tuple[np.ndarray, np.ndarray, np.ndarray, set[int]] | None = None) -> Contacts:
    """Contacts among ``shapes`` posed at ``R`` (n, 3, 3), ``p`` (n, 3).

    ``allowed``: (n, n) boolean filter (symmetric); ``friction``/``restitution``: (n, n) combined
    pair coefficients; ``margin``: report contacts with a gap up to this distance; ``support``:
    the result of :func:`support_points` for these shapes (computed when not given).
    """
    n = len(shapes)
    planes = [i for i in range(n) if isinstance(shapes[i], HalfSpace)]
    others = [i for i in range(n) if not isinstance(shapes[i], HalfSpace)]
    pairs = []
    batched = []  # (plane, contacts) found in one vectorised pass per half-space
    if support is None:
        support = support_points(shapes)
    for i in planes:
        rest = [j for j in others if allowed[i, j] and j not in support[3]]
        pairs.extend((i, j) for j in rest)
        if support[0].shape[0]:
            batched.append(_halfspace_batch(i, R, p, allowed, support, margin))
    if len(others) > 1:
        idx = np.asarray(others)
        half = np.array([shapes[i].aabb_half_extents(R[i]) for i in others]) + margin
        centre = np.ascontiguousarray(p[idx])
        with np.errstate(over="ignore", invalid="ignore"):
            cand = sweep_unchecked(centre - half, centre + half)
        for a, b in cand:
            i, j = int(idx[a]), int(idx[b])
            if allowed[i, j]:
                pairs.append((i, j))
    pairs.sort()
    ga, gb, pts, nrm, dst = [], [], [], [], []
    for i, (owner, P, N, D) in zip(planes, batched):
        if len(D):
            ga.append(np.full(len(D), i))
            gb.append(owner)
            pts.append(P)
            nrm.append(N)
            dst.append(D)
    for i, j in pairs:
        P, N, D = collide_posed(shapes[i], R[i], p[i], shapes[j], R[j], p[j], margin)
        k = len(D)
        if k:
            ga.append(np.full(k, i))
            gb.append(np.full(k, j))
            pts.append(P)
            nrm.append(N)
            dst.append(D)
    if not ga:
        return Contacts.empty()
    ga = np.concatenate(ga).astype(np.int64)
    gb = np.concatenate(gb).astype(np.int64)
    return Contacts(ga, gb, np.concatenate(pts), np.concatenate(nrm), np.concatenate(dst),
                    friction[ga, gb].astype(float), restitution[ga, gb].astype(float))


def support_points(shapes: Sequence[Shape]) -> tuple[np.ndarray, np.ndarray, np.ndarray, set[int]]:
    """The points (in each geometry's frame) and radii whose signed distances to a half-space
    give the shape's contacts: box corners, sphere and point centres, capsule end centres,
    convex-hull vertices.  Returns ``(local (M, 3), owner (M,), radius (M,), owners set)``."""
    from .shapes import Box, Capsule, Convex, Point, Sphere

    local, owner, radius = [], [], []
    for j in range(len(shapes)):
        sh = shapes[j]
        if isinstance(sh, Box):
            pts, r = sh.vertices(), 0.0
        elif isinstance(sh, Sphere):
            pts, r = np.zeros((1, 3)), sh.radius
        elif isinstance(sh, Point):
            pts, r = np.zeros((1, 3)), 0.0
        elif isinstance(sh, Capsule):
            pts, r = np.array([[0.0, 0.0, -0.5 * sh.length], [0.0, 0.0, 0.5 * sh.length]]), sh.radius
        elif isinstance(sh, Convex):
            pts, r = np.asarray(sh.vertices), 0.0
        else:  # cylinders: their own routine
            continue
        local.append(pts)
        owner.append(np.full(len(pts), j, dtype=np.int64))
        radius.append(np.full(len(pts), r))
    if not local:
        return np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros(0), set()
    own = np.concatenate(owner)
    return np.concatenate(local), own, np.concatenate(radius), set(own.tolist())


def _halfspace_batch(i, R, p, allowed, support, margin):
    """Contacts of half-space ``i`` with every support point at once (same formulas as
    :func:`~sinews.geometry.narrow_phase.halfspace_sphere` and friends)."""
    local, owner, radius, _ = support
    n = R[i][:, 2]
    world = p[owner] + np.einsum("mij,mj->mi", R[owner], local)
    d = (world - p[i]) @ n - radius
    keep = (d <= margin) & allowed[i, owner]
    world, d, own, rad = world[keep], d[keep], owner[keep], radius[keep]
    points = world - np.outer(rad + 0.5 * d, n)
    return own, points, np.broadcast_to(n, points.shape).copy(), d
