"""Collision geometry: shapes attached to bodies, broad and narrow phase contact detection.

* :mod:`sinews.geometry.shapes` -- :class:`Sphere`, :class:`Box`, :class:`Capsule`,
  :class:`Cylinder`, :class:`HalfSpace`, :class:`Point` and the :class:`Geometry` record (shape +
  body + pose + friction, restitution and collision bits);
* :mod:`sinews.geometry.narrow_phase` -- :func:`collide`: points, normals, signed distances;
* :mod:`sinews.geometry.broad_phase` -- :func:`sweep_and_prune` on bounding boxes;
* :mod:`sinews.geometry.contacts` -- :func:`find_contacts` over a whole set, :class:`Contacts`.

Scenes (:class:`sinews.sim.Scene`) use these to find the contacts of a model at a configuration.
"""

from .broad_phase import aabb_overlaps, sweep_and_prune
from .contacts import Contacts, find_contacts
from .narrow_phase import coal_available, collide, segment_closest_points, supported_pair
from .shapes import (ALL_GROUPS, Box, Capsule, Convex, Cylinder, Geometry, HalfSpace, Point, Shape, Sphere,
                     combine_friction, combine_restitution)

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
    "ALL_GROUPS",
    "combine_friction",
    "combine_restitution",
    "collide",
    "supported_pair",
    "coal_available",
    "segment_closest_points",
    "sweep_and_prune",
    "aabb_overlaps",
    "Contacts",
    "find_contacts",
]
