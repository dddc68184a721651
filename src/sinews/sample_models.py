"""Sample models used by the demos, the benchmarks and the tests.

* :func:`pendulum` -- an n-link planar pendulum of uniform rods;
* :func:`arm7` -- a 7-DoF serial arm (alternating z/y revolute axes, like common cobots);
* :func:`quadruped12` -- a free-flyer trunk with four 3-DoF legs (12 actuated DoF);
* :func:`random_tree` -- a random kinematic tree with random joint types, placements and
  inertias (the property and oracle tests use it).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import joints as J
from ._checks import integer, real_scalar
from .model import Model
from .spatial import SpatialInertia, Transform, exp_so3

__all__ = ["pendulum", "arm7", "quadruped12", "random_tree", "JOINT_FACTORIES"]


def pendulum(n: int = 3, length: float = 1.0, mass: float = 1.0, axis: ArrayLike = (0.0, 1.0, 0.0)) -> Model:
    """``n`` uniform rods (``length`` [m], ``mass`` [kg] each) hanging along -z, revolute about
    the unit ``axis`` (3,) (default y); nq = nv = n."""
    n = integer(n, "n", minimum=0)
    length = real_scalar(length, "length")
    mass = real_scalar(mass, "mass")
    m = Model(name=f"pendulum{n}")
    parent = 0
    for i in range(n):
        X = Transform.translation([0.0, 0.0, -length if i else 0.0])
        inertia = SpatialInertia(
            mass, [0.0, 0.0, -0.5 * length], np.diag([mass * length**2 / 12.0] * 2 + [0.0])
        )
        parent = m.add_body(parent, J.Revolute(axis), X, inertia, name=f"link{i + 1}")
    m.add_frame("tip", parent, Transform.translation([0.0, 0.0, -length]))
    return m


def arm7() -> Model:
    """A 7-DoF arm: joint axes z, y, z, y, z, y, z; links of 0.3-0.4 m; end-effector frame."""
    m = Model(name="arm7")
    lengths = [0.33, 0.0, 0.32, 0.0, 0.38, 0.0, 0.1]
    masses = [4.0, 4.0, 3.0, 2.7, 1.7, 1.8, 0.6]
    axes = [J.RevoluteZ, J.RevoluteY, J.RevoluteZ, J.RevoluteY, J.RevoluteZ, J.RevoluteY, J.RevoluteZ]
    parent = 0
    offset = 0.0
    for i in range(7):
        X = Transform.translation([0.0, 0.0, offset])
        box = SpatialInertia.from_box(masses[i], (0.08, 0.08, max(lengths[i], 0.1)), com=(0.0, 0.0, 0.5 * lengths[i]))
        parent = m.add_body(parent, axes[i](), X, box, name=f"link{i + 1}")
        offset = lengths[i] if lengths[i] else 0.05
    m.add_frame("tool", parent, Transform.translation([0.0, 0.0, 0.1]))
    return m


def quadruped12() -> Model:
    """A free-flyer trunk (12 kg) with four legs: hip abduction (x), hip flexion (y), knee (y)."""
    m = Model(name="quadruped12")
    trunk = m.add_body(0, J.FreeFlyer(), None, SpatialInertia.from_box(12.0, (0.6, 0.3, 0.15)), name="trunk")
    for name, sx, sy in (("FL", 1, 1), ("FR", 1, -1), ("HL", -1, 1), ("HR", -1, -1)):
        hip = m.add_body(
            trunk, J.RevoluteX(), Transform.translation([0.25 * sx, 0.12 * sy, 0.0]),
            SpatialInertia.from_box(1.0, (0.08, 0.08, 0.08)), name=f"{name}_hip",
        )
        thigh = m.add_body(
            hip, J.RevoluteY(), Transform.translation([0.0, 0.08 * sy, 0.0]),
            SpatialInertia.from_box(1.2, (0.04, 0.04, 0.25), com=(0.0, 0.0, -0.125)), name=f"{name}_thigh",
        )
        shank = m.add_body(
            thigh, J.RevoluteY(), Transform.translation([0.0, 0.0, -0.25]),
            SpatialInertia.from_box(0.3, (0.03, 0.03, 0.25), com=(0.0, 0.0, -0.125)), name=f"{name}_shank",
        )
        m.add_frame(f"{name}_foot", shank, Transform.translation([0.0, 0.0, -0.25]))
    return m


def _unit(rng, n=3):
    x = rng.normal(size=n)
    return x / np.linalg.norm(x)


JOINT_FACTORIES = {
    "RX": lambda rng: J.RevoluteX(),
    "RY": lambda rng: J.RevoluteY(),
    "RZ": lambda rng: J.RevoluteZ(),
    "Revolute": lambda rng: J.Revolute(_unit(rng)),
    "PX": lambda rng: J.PrismaticX(),
    "PY": lambda rng: J.PrismaticY(),
    "PZ": lambda rng: J.PrismaticZ(),
    "Prismatic": lambda rng: J.Prismatic(_unit(rng)),
    "Helical": lambda rng: J.Helical(_unit(rng), rng.uniform(-0.5, 0.5)),
    "Spherical": lambda rng: J.Spherical(),
    "FreeFlyer": lambda rng: J.FreeFlyer(),
    "Planar": lambda rng: J.Planar(),
    "TranslationXYZ": lambda rng: J.TranslationXYZ(),
    "EulerZYX": lambda rng: J.EulerZYX(),
    "EulerXYZ": lambda rng: J.EulerXYZ(),
    "MultiAxis": lambda rng: J.MultiAxis(
        [np.r_[_unit(rng), 0.0, 0.0, 0.0], np.r_[0.0, 0.0, 0.0, _unit(rng)]]
    ),
    "Fixed": lambda rng: J.Fixed(),
}


def random_inertia(rng: np.random.Generator) -> SpatialInertia:
    """A random physical inertia (mass 0.5-3 kg, principal moments satisfying the triangle
    inequality, random orientation and centre of mass)."""
    mass = rng.uniform(0.5, 3.0)
    principal = rng.uniform(0.02, 0.2, 3)
    principal[2] = rng.uniform(abs(principal[0] - principal[1]) + 0.01, principal[0] + principal[1])
    R = exp_so3(rng.normal(size=3))
    return SpatialInertia(mass, rng.uniform(-0.2, 0.2, 3), R @ np.diag(principal) @ R.T)


def random_tree(n_bodies: int, rng: np.random.Generator | int | None = None,
                joint_types: Sequence[str] | None = None, gravity: ArrayLike = (0.0, 0.0, -9.81),
                depth_first: bool = True) -> Model:
    """A random tree of ``n_bodies`` bodies: each attached to a uniformly chosen earlier body,
    with a joint type drawn from ``joint_types`` (names of :data:`JOINT_FACTORIES`), a random
    joint placement and a random physical inertia (every body has mass).

    With ``depth_first=True`` (default) bodies are numbered in depth-first order, so that every
    subtree occupies a contiguous range of ``v`` (Pinocchio's algorithms require this ordering);
    ``depth_first=False`` keeps the order of creation, which sinews supports as well.
    """
    n_bodies = integer(n_bodies, "n_bodies", minimum=0)
    try:
        rng = np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rng must be None, a seed or a numpy Generator: {exc}") from None
    if isinstance(joint_types, str):
        raise ValueError("joint_types must be a list of joint type names, not a string")
    names = list(joint_types or JOINT_FACTORIES)
    for nm in names:
        if not isinstance(nm, str) or nm not in JOINT_FACTORIES:
            raise KeyError(f"joint_types: unknown joint type {nm!r}")
    parents = [int(rng.integers(0, i + 1)) for i in range(n_bodies)]  # parent of body i+1
    order = list(range(1, n_bodies + 1))
    if depth_first:
        children = {i: [] for i in range(n_bodies + 1)}
        for i, p in enumerate(parents, start=1):
            children[p].append(i)
        order, stack = [], list(reversed(children[0]))
        while stack:
            b = stack.pop()
            order.append(b)
            stack.extend(reversed(children[b]))
    m = Model(gravity=gravity, name=f"random{n_bodies}")
    new_id = {0: 0}
    for old in order:
        kind = names[int(rng.integers(len(names)))]
        if parents[old - 1] == 0 and kind == "Fixed":
            kind = "RZ"
        X = Transform(exp_so3(rng.normal(size=3)), rng.uniform(-0.5, 0.5, 3))
        new_id[old] = m.add_body(
            new_id[parents[old - 1]], JOINT_FACTORIES[kind](rng), X, random_inertia(rng), name=f"b{old}"
        )
    return m
