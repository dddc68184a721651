"""Scenes of the simulation examples (docs/examples/), each with a closed-form expectation.

Every builder returns ``(scene, q0, v0)``; the tests in tests/test_sim_examples.py run them and
compare with the closed form quoted in each docstring.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..joints import FreeFlyer, Planar, PrismaticX
from ..model import Model
from ..spatial import SpatialInertia, Transform
from ..geometry import Box, Point, Sphere
from .scene import Scene

#: what every builder returns: ``(scene, q0 (nq,), v0 (nv,))``
_Example = tuple[Scene, np.ndarray, np.ndarray]

__all__ = ["bouncing_ball", "newtons_cradle", "sliding_brick", "block_on_incline", "rod2d",
           "box_stack", "free_q"]


def free_q(p: ArrayLike, R: np.ndarray | None = None) -> np.ndarray:
    """Free-flyer coordinates ``[p; quat(x, y, z, w)]`` of a pose."""
    from ..spatial import matrix_to_quat

    quat = np.array([0.0, 0.0, 0.0, 1.0]) if R is None else matrix_to_quat(R)
    return np.concatenate([np.asarray(p, dtype=float), quat])


def _ball_inertia(mass, radius):
    return SpatialInertia(mass, np.zeros(3), np.eye(3) * (0.4 * mass * radius**2))


def bouncing_ball(height: float = 1.0, radius: float = 0.1, restitution: float = 0.8, mass: float = 1.0) -> _Example:
    """A ball dropped from rest with its lowest point at ``height`` above the ground: each
    apex is ``e^2`` times the previous one (``h_k = e^(2k) height``)."""
    m = Model(name="bouncing_ball")
    m.add_body("world", FreeFlyer(), inertia=_ball_inertia(mass, radius), name="ball")
    scene = Scene(m)
    scene.add_ground(restitution=restitution, friction=0.0)
    scene.add_geometry("ball", Sphere(radius), restitution=restitution)
    return scene, free_q([0.0, 0.0, height + radius]), np.zeros(6)


def newtons_cradle(speed: float = 1.0, radius: float = 0.1, restitution: float = 1.0, mass: float = 1.0) -> _Example:
    """Three touching balls on a line (no gravity); the first moves at ``speed`` into the
    others.  Sequential impacts: ``(0, 0, speed)``; simultaneous: ``(-1/3, 2/3, 2/3) speed``
    (Newton or Poisson restitution with e = 1)."""
    m = Model(gravity=(0.0, 0.0, 0.0), name="newtons_cradle")
    scene = Scene(m, margin=1e-3)
    for i in range(3):
        m.add_body("world", PrismaticX(), inertia=_ball_inertia(mass, radius), name=f"ball{i}")
        scene.add_geometry(f"ball{i}", Sphere(radius), X_body_geometry=[2 * radius * i, 0.0, 0.0],
                           restitution=restitution, friction=0.0)
    return scene, np.zeros(3), np.array([speed, 0.0, 0.0])


def sliding_brick(speed: float = 2.0, friction: float = 0.5, size: ArrayLike = (0.2, 0.1, 0.05),
                  mass: float = 1.0) -> _Example:
    """A brick launched along x on the ground: it stops after ``v^2 / (2 mu g)`` and stays."""
    m = Model(name="sliding_brick")
    m.add_body("world", FreeFlyer(), inertia=SpatialInertia.from_box(mass, size), name="brick")
    scene = Scene(m)
    scene.add_ground(friction=friction)
    scene.add_geometry("brick", Box(size), friction=friction)
    v0 = np.zeros(6)
    v0[3] = speed
    return scene, free_q([0.0, 0.0, size[2] / 2]), v0


def block_on_incline(angle: float, friction: float, size: ArrayLike = (0.2, 0.2, 0.1), mass: float = 1.0) -> _Example:
    """A block at rest on a plane tilted by ``angle`` about y: it sticks iff
    ``tan(angle) <= mu``, otherwise it slides down with ``g (sin - mu cos)``."""
    m = Model(name="block_on_incline")
    m.add_body("world", FreeFlyer(), inertia=SpatialInertia.from_box(mass, size), name="block")
    scene = Scene(m)
    R = Transform.rot_y(angle).R
    n = R[:, 2]
    scene.add_ground(friction=friction, normal=n)
    scene.add_geometry("block", Box(size), friction=friction)
    return scene, free_q(n * size[2] / 2, R), np.zeros(6)


def rod2d(angle: float = 0.6, height: float = 1.0, half_length: float = 1.0, mass: float = 2.0,
          friction: float = 0.5) -> _Example:
    """Drake's Rod2D: a planar rod (both endpoints as contact points) released tilted above the
    ground; it falls and comes to rest lying on the ground (``y = 0``, ``theta = 0``)."""
    m = Model(name="rod2d")
    # planar joint in the world x-z plane: joint x = world x, joint y = world z
    X = Transform.rot_x(math.pi / 2)
    inertia = SpatialInertia(mass, np.zeros(3), np.diag([1.0, 1.0, 1.0]))
    m.add_body("world", Planar(), X, inertia=inertia, name="rod")
    scene = Scene(m)
    scene.add_ground(friction=friction)
    for s, name in ((-1.0, "left"), (1.0, "right")):
        scene.add_geometry("rod", Point(), X_body_geometry=[s * half_length, 0.0, 0.0], name=name)
    return scene, np.array([0.0, height, angle]), np.zeros(3)


def box_stack(n: int = 5, size: float = 0.1, mass: float = 1.0, friction: float = 0.8) -> _Example:
    """``n`` equal cubes stacked on the ground, at rest: they should stay put."""
    m = Model(name="box_stack")
    scene = Scene(m)
    scene.add_ground(friction=friction)
    q = []
    for i in range(n):
        m.add_body("world", FreeFlyer(), inertia=SpatialInertia.from_box(mass, [size] * 3), name=f"box{i}")
        scene.add_geometry(f"box{i}", Box([size] * 3), friction=friction)
        q.append(free_q([0.0, 0.0, size * (i + 0.5)]))
    return scene, np.concatenate(q), np.zeros(6 * n)
