"""Records a :class:`sinews.Model` keeps besides its tree: per-joint properties (limits,
damping, friction, armature), mimic records and visual/collision shapes.

The names follow Pinocchio's ``Model`` fields: ``lowerPositionLimit`` -> ``lower_position_limit``,
``upperPositionLimit`` -> ``upper_position_limit``, ``velocityLimit`` -> ``velocity_limit``,
``effortLimit`` -> ``effort_limit``, ``damping``, ``friction``, ``armature``.  Position limits
have one entry per configuration coordinate (``nq`` of the joint), the others one per degree of
freedom (``nv``).

Defaults: position limits ``-inf`` / ``+inf``, velocity and effort limits ``+inf``, damping,
friction and armature ``0``.  Armature enters the dynamics like Pinocchio's ``model.armature``
(``M += diag(armature)``); damping and friction are *not* applied by the tree algorithms (a
simulator applies them as passive forces); limits are data for the simulator and the user.

This module holds the records and the validation; :class:`sinews.Model` stores the values.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ._checks import real_array, real_scalar

__all__ = [
    "JointProperties", "MimicJoint", "ShapeRecord", "ConstraintGroups", "ModelFacts", "PROPERTY_NAMES", "SHAPE_KINDS",
]


class ConstraintGroups(Protocol):
    """What the model facts (``Model.tree_text``, ``Model.to_dot``) read of a
    :class:`sinews.constraints.ConstraintSet`: a structural type, so that ``sinews.model``
    does not import the constraints package (which imports ``sinews.model``)."""

    @property
    def groups(self) -> tuple: ...

    @property
    def ngroups(self) -> int: ...

    @property
    def size(self) -> int: ...


class ModelFacts(Protocol):
    """What the model facts (:mod:`sinews.model_summary`) read of a :class:`sinews.Model`: a
    structural type, so that ``sinews.model_summary`` does not import ``sinews.model`` (whose
    ``Model.summary``, ``tree_text`` and ``to_dot`` call it)."""

    name: str

    @property
    def bodies(self) -> tuple: ...

    @property
    def frames(self) -> tuple: ...

    @property
    def mimic_joints(self) -> tuple[MimicJoint, ...]: ...

    @property
    def body_names(self) -> list[str]: ...

    @property
    def nq(self) -> int: ...

    @property
    def nv(self) -> int: ...

    @property
    def nbodies(self) -> int: ...

    @property
    def gravity(self) -> np.ndarray: ...

    def joint_properties(self, body: int | str) -> JointProperties: ...

    def total_mass(self, include_ground: bool = False) -> float: ...

    def body_id(self, name: int | str) -> int: ...

    def _resolve_body(self, body, argname: str = "body") -> int: ...

#: per-configuration-coordinate properties (length joint.nq) and their defaults
Q_PROPERTIES = {"lower": -np.inf, "upper": np.inf}
#: per-degree-of-freedom properties (length joint.nv) and their defaults
V_PROPERTIES = {
    "velocity_limit": np.inf,
    "effort_limit": np.inf,
    "damping": 0.0,
    "friction": 0.0,
    "armature": 0.0,
}
PROPERTY_NAMES = tuple(Q_PROPERTIES) + tuple(V_PROPERTIES)


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class JointProperties:
    """The properties of one joint (read-only arrays; copies of what the model holds).

    ``body``: name of the body the joint moves; ``kind``: the joint kind; ``idx_q``/``idx_v``:
    first indices in ``q``/``v`` (-1 for a fixed joint); ``lower``/``upper`` ``(nq,)``
    position limits; ``velocity_limit``, ``effort_limit``, ``damping``, ``friction``,
    ``armature`` ``(nv,)``.
    """

    body: str
    kind: str
    idx_q: int
    idx_v: int
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    armature: np.ndarray

    def __eq__(self, other):
        if not isinstance(other, JointProperties):
            return NotImplemented
        return (self.body, self.kind, self.idx_q, self.idx_v) == (
            other.body, other.kind, other.idx_q, other.idx_v
        ) and all(np.array_equal(getattr(self, n), getattr(other, n)) for n in PROPERTY_NAMES)

    __hash__ = None  # mutable-looking arrays: not hashable


@dataclass(frozen=True)
class MimicJoint:
    """A mimic record (URDF ``<mimic>``): ``q[joint] = multiplier * q[mimicked] + offset``.

    ``joint`` and ``mimicked`` are the names of the bodies the two (one-degree-of-freedom)
    joints move.  The model keeps the mimicking joint as a coordinate of its own; a
    :class:`sinews.constraints.ConstraintSet` turns the record into a coordinate constraint
    (``ConstraintSet.add_mimic_constraints(model)``).
    """

    joint: str
    mimicked: str
    multiplier: float = 1.0
    offset: float = 0.0


def defaults(nq: int, nv: int) -> dict[str, np.ndarray]:
    """The default property arrays of a joint with ``nq`` coordinates and ``nv`` dofs."""
    out = {k: np.full(nq, v) for k, v in Q_PROPERTIES.items()}
    out.update({k: np.full(nv, v) for k, v in V_PROPERTIES.items()})
    return out


def validated(values: dict, current: dict[str, np.ndarray], nq: int, nv: int, body: str) -> dict:
    """``current`` updated with the non-``None`` entries of ``values``, checked.

    Scalars broadcast to the joint's length; arrays must have length ``nq`` (``lower``,
    ``upper``) or ``nv`` (the others).  NaN is refused everywhere; position limits may be
    infinite and need ``lower <= upper``; velocity and effort limits are ``>= 0`` (``inf``
    allowed); damping, friction and armature are finite and ``>= 0``.  Errors are
    ``ValueError`` naming the argument and the body.
    """
    new = {k: v.copy() for k, v in current.items()}
    for name, value in values.items():
        if value is None:
            continue
        n = nq if name in Q_PROPERTIES else nv
        a = real_array(value, name, finite=False)
        if a.ndim == 0:
            a = np.full(n, float(a))
        elif a.shape != (n,):
            raise ValueError(
                f"{name} for body {body!r} must be a scalar or have shape ({n},), got {a.shape}"
            )
        if np.any(np.isnan(a)):
            raise ValueError(f"{name} for body {body!r} contains NaN")
        if name in ("damping", "friction", "armature"):
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{name} for body {body!r} must be finite, got {a.tolist()}")
            if np.any(a < 0):
                raise ValueError(f"{name} for body {body!r} must be non-negative, got {a.tolist()}")
        elif name in ("velocity_limit", "effort_limit"):
            if np.any(a < 0):
                raise ValueError(f"{name} for body {body!r} must be non-negative, got {a.tolist()}")
        new[name] = a.copy()
    bad = np.nonzero(new["lower"] > new["upper"])[0]
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"lower must be <= upper for body {body!r}: coordinate {i} has lower "
            f"{new['lower'][i]} > upper {new['upper'][i]}"
        )
    return new


def check_mimic(model, joint, mimicked, multiplier, offset) -> MimicJoint:
    """A validated :class:`MimicJoint` for ``model`` (both joints one-dof, distinct)."""
    names = []
    for arg, b in (("joint", joint), ("mimicked", mimicked)):
        body = model.body(model._resolve_body(b, arg))
        if body.id == 0 or body.joint.nq != 1 or body.joint.nv != 1:
            kind = "the world" if body.id == 0 else f"a {body.joint.kind} joint"
            raise ValueError(
                f"{arg}: body {body.name!r} has {kind}; mimic joints need one-degree-of-freedom "
                "joints (revolute, prismatic, helical)"
            )
        names.append(body.name)
    if names[0] == names[1]:
        raise ValueError(f"mimicked: a joint cannot mimic itself ({names[0]!r})")
    vals = []
    for arg, x in (("multiplier", multiplier), ("offset", offset)):
        v = real_scalar(x, arg, finite=False)
        if not math.isfinite(v):
            raise ValueError(f"{arg} must be finite, got {x!r}")
        vals.append(v)
    multiplier, offset = vals
    for m in model._mimic:
        if m.joint == names[0]:
            raise ValueError(f"joint: {names[0]!r} already mimics {m.mimicked!r}")
    return MimicJoint(names[0], names[1], float(multiplier), float(offset))


#: shape kinds of a :class:`ShapeRecord` and the meaning of their ``size``
SHAPE_KINDS = {
    "box": 3,  # full edge lengths (x, y, z)
    "sphere": 1,  # (radius,)
    "cylinder": 2,  # (radius, length), axis z of the shape frame, centred
    "capsule": 2,  # (radius, length of the cylindrical part), axis z, centred
    "mesh": 0,  # (), the file is ``mesh`` (scaled by ``scale``)
}


@dataclass(frozen=True, eq=False)
class ShapeRecord:
    """A visual or collision shape fixed on a body (URDF ``<visual>`` / ``<collision>``), kept
    for viewers and collision set-up; the dynamics never reads it.

    ``body``: name of the body it is fixed on; ``kind``: ``"box"``, ``"sphere"``,
    ``"cylinder"``, ``"capsule"`` or ``"mesh"``; ``size``: box edge lengths ``(x, y, z)``,
    sphere ``(radius,)``, cylinder/capsule ``(radius, length)`` along the shape's z axis, mesh
    ``()``; ``X_body_geometry``: pose of the shape frame in the body frame; ``mesh``: absolute
    path of the mesh file when it was found, else ``None``; ``mesh_uri``: the file name as
    written (``package://...``, relative or absolute); ``scale``: ``(3,)`` mesh scale;
    ``name``: the element's name or ``None``; ``rgba``: ``(4,)`` colour or ``None``.
    """

    body: str
    kind: str
    X_body_geometry: object  # sinews.Transform
    size: tuple = ()
    mesh: str | None = None
    mesh_uri: str | None = None
    scale: tuple = (1.0, 1.0, 1.0)
    name: str | None = None
    rgba: tuple | None = None


def make_shape(body_name: str, kind, size=(), X_body_geometry=None, mesh=None, mesh_uri=None,
               scale=(1.0, 1.0, 1.0), name=None, rgba=None) -> ShapeRecord:
    """A validated :class:`ShapeRecord` (``ValueError`` naming the argument)."""
    from .spatial import as_transform

    if kind not in SHAPE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(SHAPE_KINDS)}, got {kind!r}")
    s = real_array(size, "size")
    if s.shape != (SHAPE_KINDS[kind],):
        raise ValueError(f"size of a {kind} must have shape ({SHAPE_KINDS[kind]},), got {s.shape}")
    if np.any(s < 0):
        raise ValueError(f"size must be non-negative, got {s.tolist()}")
    sc = real_array(scale, "scale")
    if sc.shape != (3,):
        raise ValueError(f"scale must have shape (3,), got {sc.shape}")
    if kind == "mesh" and mesh is None and mesh_uri is None:
        raise ValueError("a mesh shape needs mesh (a file path) or mesh_uri")
    for arg, v in (("mesh", mesh), ("mesh_uri", mesh_uri), ("name", name)):
        if v is not None and not isinstance(v, (str, os.PathLike)):
            raise ValueError(f"{arg} must be a string or None, got {type(v).__name__}")
    color = None
    if rgba is not None:
        c = real_array(rgba, "rgba")
        if c.shape != (4,):
            raise ValueError(f"rgba must have shape (4,), got {c.shape}")
        color = tuple(float(x) for x in c)
    return ShapeRecord(
        body_name, kind, as_transform(X_body_geometry, "X_body_geometry"),
        tuple(float(x) for x in s), None if mesh is None else os.fspath(mesh),
        None if mesh_uri is None else str(mesh_uri), tuple(float(x) for x in sc),
        None if name is None else str(name), color,
    )
