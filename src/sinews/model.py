"""The kinematic-tree model and its per-call workspace.

A :class:`Model` is built by adding bodies (each with its parent, joint, joint placement and
inertia) and named frames.  On first use by an algorithm it is *compiled* to flat arrays
(parents, joint types, index maps, placements, inertias; see :mod:`sinews._layout`) and frozen:
adding bodies afterwards raises.  Gravity stays settable.  Algorithms never mutate a model;
their scratch memory lives in a :class:`Data` (``model.data()`` or the model's default one).

Body 0 is the world (named ``"world"``).  Fixed joints do not create kernel links: a welded
body is merged into its movable ancestor (its inertia is added there) but keeps its own id,
name and frame.

Besides the tree, a model carries records (:mod:`sinews._model_records`): joint properties
with Pinocchio's names (``lower_position_limit``, ``upper_position_limit``, ``velocity_limit``,
``effort_limit``, ``damping``, ``friction``, ``armature``; set with
:meth:`Model.set_joint_properties`), mimic records (:attr:`Model.mimic_joints`) and visual and
collision shapes (:attr:`Model.visuals`, :attr:`Model.collisions`).  Armature enters the
dynamics (``M += diag(armature)``); the rest is data for simulators, viewers and people
(:meth:`Model.summary`, :meth:`Model.tree_text`, :meth:`Model.to_dot`; ``docs/models.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import threading

import os
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from . import _layout as L
from . import _model_records as _jp
from ._checks import real_array
from ._model_records import ConstraintGroups, JointProperties, MimicJoint, ShapeRecord
from ._compiled_model import CompiledModel
from .joints import JT_FIXED, Joint
from .spatial import SpatialInertia, Transform
from .spatial import as_transform as _as_transform

__all__ = ["Model", "Data", "Body", "Frame", "JointProperties", "MimicJoint", "ShapeRecord"]

#: A body given by id or name.
BodyRef = Union[int, str]
#: A pose: a :class:`Transform`, an ``(R, p)`` pair, a 4x4 matrix, a translation 3-vector or
#: ``None`` (identity).
TransformLike = Union[Transform, tuple, ArrayLike, None]

WORLD = 0


@dataclass(frozen=True)
class Body:
    """A body of the model (``id`` 0 is the world)."""

    id: int
    name: str
    parent: int
    joint: Joint | None
    X_parent_joint: Transform
    inertia: SpatialInertia
    idx_q: int = -1
    idx_v: int = -1


@dataclass(frozen=True)
class Frame:
    """A named frame fixed on a body: pose ``X_body_frame``."""

    id: int
    name: str
    body: int
    X_body_frame: Transform


class Model:
    """A kinematic tree of rigid bodies.

    >>> import sinews
    >>> m = sinews.Model()
    >>> b = m.add_body("world", sinews.joints.RevoluteY(), inertia=sinews.SpatialInertia.from_rod(1.0, 1.0), name="link1")
    >>> m.nq, m.nv
    (1, 1)
    """

    def __init__(self, gravity: ArrayLike = (0.0, 0.0, -9.81), name: str = "model") -> None:
        self.name = str(name)
        self._bodies: list[Body] = [
            Body(0, "world", -1, None, Transform.identity(), SpatialInertia.zero())
        ]
        self._frames: list[Frame] = []
        self._body_by_name = {"world": 0}
        self._frame_by_name: dict[str, int] = {}
        self._nq = 0
        self._nv = 0
        self._joint_props: dict[int, dict[str, np.ndarray]] = {}  # body id -> non-default values
        self._mimic: list[MimicJoint] = []
        self._shapes: dict[str, list[ShapeRecord]] = {"visual": [], "collision": []}
        self._compiled = None
        self._tls = threading.local()  # per-thread default workspace (see default_data)
        self._kin = None  # the kinematics fast path's state of the thread that called last (sinews._kinematics_fast)
        self._fast = None  # the tree algorithms' fast-path arguments of the thread that called last (sinews._entry)
        self._lock = threading.Lock()  # compiles the model once when threads race to use it
        self._gravity = np.zeros(3)
        self.gravity = gravity

    def __getstate__(self):
        # thread-local workspaces, the fast path's state and the lock are per process: not copied
        # or pickled
        state = self.__dict__.copy()
        del state["_tls"], state["_lock"]
        state.pop("_kin", None)
        state.pop("_fast", None)
        return state

    def __setstate__(self, state):
        state.setdefault("_joint_props", {})  # models pickled before joint properties existed
        state.setdefault("_mimic", [])
        state.setdefault("_shapes", {"visual": [], "collision": []})
        self.__dict__.update(state)
        self._tls = threading.local()
        self._kin = self._fast = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ building
    def add_body(
        self,
        parent: BodyRef,
        joint: Joint,
        X_parent_joint: TransformLike = None,
        inertia: SpatialInertia | None = None,
        name: str | None = None,
    ) -> int:
        """Add a body and return its id.

        ``parent``: body id or name (``0`` / ``"world"`` for the ground).  ``joint``: a joint from
        :mod:`sinews.joints`.  ``X_parent_joint``: placement of the joint frame in the parent
        body frame (a :class:`Transform`, ``(R, p)``, 4x4 matrix or translation).  ``inertia``:
        the body's :class:`SpatialInertia` in its own frame (default massless).
        """
        if self._compiled is not None:
            raise RuntimeError("the model is finalized (an algorithm has used it); build a new Model to add bodies")
        pid = self._resolve_body(parent, "parent")
        if name is not None and not isinstance(name, str):
            raise ValueError(f"name must be a string, got {type(name).__name__}")
        if not isinstance(joint, Joint):
            raise ValueError(f"joint must be a sinews.joints joint, got {type(joint).__name__}")
        X = _as_transform(X_parent_joint, "X_parent_joint")
        if inertia is None:
            inertia = SpatialInertia.zero()
        if not isinstance(inertia, SpatialInertia):
            raise ValueError("inertia must be a sinews.SpatialInertia")
        bid = len(self._bodies)
        if name is None:
            name = f"body{bid}"
        name = str(name)
        if name in self._body_by_name:
            raise ValueError(f"name {name!r} is already used by body {self._body_by_name[name]}")
        if joint.code == JT_FIXED:
            iq = iv = -1
        else:
            iq, iv = self._nq, self._nv
            self._nq += joint.nq
            self._nv += joint.nv
        self._bodies.append(Body(bid, name, pid, joint, X, inertia, iq, iv))
        self._body_by_name[name] = bid
        return bid

    def add_frame(self, name: str, body: BodyRef, X_body_frame: TransformLike = None) -> int:
        """Add a named frame fixed on ``body`` and return its frame id."""
        bid = self._resolve_body(body, "body")
        if not isinstance(name, str):
            raise ValueError(f"name must be a string, got {type(name).__name__}")
        if name in self._frame_by_name:
            raise ValueError(f"frame name {name!r} is already used")
        fid = len(self._frames)
        self._frames.append(Frame(fid, name, bid, _as_transform(X_body_frame, "X_body_frame")))
        self._frame_by_name[name] = fid
        with self._lock:
            if self._compiled is not None:  # frames may be added to a finalized model
                self._compiled.compile_frames(self)
        return fid

    # ------------------------------------------------------------------ joint properties
    def set_joint_properties(
        self,
        body: BodyRef,
        *,
        lower: ArrayLike | None = None,
        upper: ArrayLike | None = None,
        velocity_limit: ArrayLike | None = None,
        effort_limit: ArrayLike | None = None,
        damping: ArrayLike | None = None,
        friction: ArrayLike | None = None,
        armature: ArrayLike | None = None,
    ) -> None:
        """Set limits, damping, friction or armature of the joint that moves ``body``.

        ``body``: body id or name (its joint must have degrees of freedom).  ``lower``,
        ``upper``: position limits, scalar or ``(joint.nq,)``; ``velocity_limit``,
        ``effort_limit``, ``damping``, ``friction``, ``armature``: scalar or ``(joint.nv,)``.
        Arguments left at ``None`` keep their current value (defaults: limits -inf/+inf,
        velocity and effort limits +inf, the rest 0).  Refused (``RuntimeError``) once the
        model is compiled, like :meth:`add_body`; bad values raise ``ValueError``.
        """
        if self._compiled is not None:
            raise RuntimeError("the model is finalized (an algorithm has used it); set joint properties before using it")
        b = self.body(body)
        if b.id == 0 or b.joint.code == JT_FIXED:
            what = "the world" if b.id == 0 else "a fixed joint"
            raise ValueError(f"body: {b.name!r} has {what}, which has no degrees of freedom to set properties on")
        nq, nv = b.joint.nq, b.joint.nv
        current = self._joint_props.get(b.id) or _jp.defaults(nq, nv)
        values = dict(lower=lower, upper=upper, velocity_limit=velocity_limit, effort_limit=effort_limit,
                      damping=damping, friction=friction, armature=armature)
        self._joint_props[b.id] = _jp.validated(values, current, nq, nv, b.name)

    def joint_properties(self, body: BodyRef) -> JointProperties:
        """The :class:`JointProperties` (limits, damping, friction, armature) of the joint that
        moves ``body`` (body id or name); a fixed joint has empty arrays."""
        b = self.body(body)
        nq, nv = (0, 0) if b.joint is None else (b.joint.nq, b.joint.nv)
        if b.joint is not None and b.joint.code == JT_FIXED:
            nq = nv = 0
        vals = self._joint_props.get(b.id) or _jp.defaults(nq, nv)
        kind = "world" if b.joint is None else b.joint.kind
        return JointProperties(b.name, kind, b.idx_q, b.idx_v, *(_jp._readonly(vals[n]) for n in _jp.PROPERTY_NAMES))

    def _property_vector(self, name: str, per_q: bool) -> np.ndarray:
        out = np.full(self._nq if per_q else self._nv, {**_jp.Q_PROPERTIES, **_jp.V_PROPERTIES}[name])
        for bid, vals in self._joint_props.items():
            b = self._bodies[bid]
            i = b.idx_q if per_q else b.idx_v
            a = vals[name]
            out[i : i + a.size] = a
        return out

    @property
    def lower_position_limit(self) -> np.ndarray:
        """Lower position limits ``(nq,)`` (a copy; ``-inf`` where unlimited)."""
        return self._property_vector("lower", True)

    @property
    def upper_position_limit(self) -> np.ndarray:
        """Upper position limits ``(nq,)`` (a copy; ``+inf`` where unlimited)."""
        return self._property_vector("upper", True)

    @property
    def velocity_limit(self) -> np.ndarray:
        """Velocity limits ``(nv,)`` (a copy; ``+inf`` where unlimited)."""
        return self._property_vector("velocity_limit", False)

    @property
    def effort_limit(self) -> np.ndarray:
        """Effort (force/torque) limits ``(nv,)`` (a copy; ``+inf`` where unlimited)."""
        return self._property_vector("effort_limit", False)

    @property
    def damping(self) -> np.ndarray:
        """Viscous joint damping ``(nv,)`` (a copy; not applied by the tree algorithms)."""
        return self._property_vector("damping", False)

    @property
    def friction(self) -> np.ndarray:
        """Joint (Coulomb) friction ``(nv,)`` (a copy; not applied by the tree algorithms)."""
        return self._property_vector("friction", False)

    @property
    def armature(self) -> np.ndarray:
        """Rotor inertia added to the diagonal of the mass matrix ``(nv,)`` (a copy)."""
        return self._property_vector("armature", False)

    def add_mimic(self, joint: BodyRef, mimicked: BodyRef, multiplier: float = 1.0, offset: float = 0.0) -> MimicJoint:
        """Record that ``q[joint] = multiplier * q[mimicked] + offset`` (URDF ``<mimic>``).

        ``joint``, ``mimicked``: bodies (id or name) moved by two distinct one-dof joints.  The
        model keeps ``joint`` as a coordinate; the record (:attr:`mimic_joints`) is turned into a
        constraint by ``ConstraintSet.add_mimic_constraints(model)``.  A joint mimics at most one
        other.  Refused once the model is compiled.  Returns the :class:`MimicJoint` record.
        """
        if self._compiled is not None:
            raise RuntimeError("the model is finalized (an algorithm has used it); add mimic records before using it")
        rec = _jp.check_mimic(self, joint, mimicked, multiplier, offset)
        self._mimic.append(rec)
        return rec

    @property
    def mimic_joints(self) -> tuple[MimicJoint, ...]:
        """The mimic records (:class:`MimicJoint`), in the order they were added."""
        return tuple(self._mimic)

    def add_visual(self, body: BodyRef, kind: str, size: ArrayLike = (), X_body_geometry: TransformLike = None, *,
                   mesh: str | os.PathLike | None = None, mesh_uri: str | None = None,
                   scale: ArrayLike = (1.0, 1.0, 1.0), name: str | None = None,
                   rgba: ArrayLike | None = None) -> ShapeRecord:
        """Record a visual shape on ``body`` (see :class:`ShapeRecord` for the arguments); for
        viewers only, allowed at any time.  Returns the record."""
        rec = _jp.make_shape(self.body(body).name, kind, size, X_body_geometry, mesh, mesh_uri, scale, name, rgba)
        self._shapes["visual"].append(rec)
        return rec

    def add_collision(self, body: BodyRef, kind: str, size: ArrayLike = (), X_body_geometry: TransformLike = None, *,
                   mesh: str | os.PathLike | None = None, mesh_uri: str | None = None,
                   scale: ArrayLike = (1.0, 1.0, 1.0), name: str | None = None,
                   rgba: ArrayLike | None = None) -> ShapeRecord:
        """Record a collision shape on ``body`` (see :class:`ShapeRecord`); a record only (the
        dynamics does not read it).  Returns the record."""
        rec = _jp.make_shape(self.body(body).name, kind, size, X_body_geometry, mesh, mesh_uri, scale, name, rgba)
        self._shapes["collision"].append(rec)
        return rec

    @property
    def visuals(self) -> tuple[ShapeRecord, ...]:
        """The visual shapes (:class:`ShapeRecord`), e.g. URDF ``<visual>`` elements."""
        return tuple(self._shapes["visual"])

    @property
    def collisions(self) -> tuple[ShapeRecord, ...]:
        """The collision shapes (:class:`ShapeRecord`), e.g. URDF ``<collision>`` elements."""
        return tuple(self._shapes["collision"])

    def welded_to_world(self, body: BodyRef) -> bool:
        """Whether ``body`` is the world or attached to it by fixed joints only."""
        b = self.body(body)
        while b.id != 0:
            if b.joint.code != JT_FIXED:
                return False
            b = self._bodies[b.parent]
        return True

    def total_mass(self, include_ground: bool = False) -> float:
        """Sum of the body masses.

        By default only the bodies that move (not welded to the world) count, which is what the
        dynamics sees and what Pinocchio's ``computeTotalMass`` returns; ``include_ground=True``
        also counts bodies welded to the world (a fixed base, a table).
        """
        if not isinstance(include_ground, (bool, np.bool_)):
            raise ValueError(f"include_ground must be True or False, got {include_ground!r}")
        return float(sum(b.inertia.mass for b in self._bodies[1:]
                         if include_ground or not self.welded_to_world(b.id)))

    # ------------------------------------------------------------------ look-ups
    def _resolve_body(self, body, argname="body") -> int:
        if type(body) is int and 0 <= body < len(self._bodies):
            return body
        if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
            b = int(body)
            if not 0 <= b < len(self._bodies):
                raise KeyError(f"{argname}: no body with id {b} (the model has {len(self._bodies)} bodies)")
            return b
        if isinstance(body, str):
            try:
                return self._body_by_name[body]
            except KeyError:
                raise KeyError(f"{argname}: no body named {body!r}") from None
        raise KeyError(f"{argname} must be a body id or name, got {body!r}")

    def body_id(self, name: BodyRef) -> int:
        """Id of the body named ``name`` (``KeyError`` if unknown)."""
        return self._resolve_body(name, "name")

    def frame_id(self, name: int | str) -> int:
        """Id of the frame named ``name`` (or a valid id); ``KeyError`` if unknown."""
        if isinstance(name, (int, np.integer)) and not isinstance(name, (bool, np.bool_)):
            if not 0 <= int(name) < len(self._frames):
                raise KeyError(f"frame: no frame with id {name}")
            return int(name)
        if not isinstance(name, str):
            raise KeyError(f"frame must be a frame id or name, got {name!r}")
        try:
            return self._frame_by_name[name]
        except KeyError:
            raise KeyError(f"frame: no frame named {name!r}") from None

    def body(self, body: BodyRef) -> Body:
        """The :class:`Body` record of a body id or name."""
        return self._bodies[self._resolve_body(body)]

    def frame(self, frame: int | str) -> Frame:
        """The :class:`Frame` record of a frame id or name."""
        return self._frames[self.frame_id(frame)]

    @property
    def bodies(self) -> tuple[Body, ...]:
        """All bodies, the world first (index = body id)."""
        return tuple(self._bodies)

    @property
    def frames(self) -> tuple[Frame, ...]:
        """All named frames (index = frame id)."""
        return tuple(self._frames)

    @property
    def body_names(self) -> list[str]:
        """Body names in id order, ``"world"`` first."""
        return [b.name for b in self._bodies]

    @property
    def nq(self) -> int:
        """Length of the configuration vector ``q``."""
        return self._nq

    @property
    def nv(self) -> int:
        """Length of the velocity vector ``v`` (degrees of freedom)."""
        return self._nv

    @property
    def nbodies(self) -> int:
        """Number of bodies including the world."""
        return len(self._bodies)

    @property
    def gravity(self) -> np.ndarray:
        """Gravity in world axes (a copy); settable at any time."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g):
        try:
            g = real_array(g, "gravity", finite=False)
        except ValueError as exc:
            raise ValueError(f"gravity must be a finite 3-vector: {exc}") from None
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity must be a finite 3-vector, got {g}")
        self._gravity = g.copy()
        with self._lock:
            if self._compiled is not None:
                self._compiled.mf[L.MF_GRAVITY : L.MF_GRAVITY + 3] = g

    def idx_q(self, body: BodyRef) -> int:
        """First index of the body's joint in ``q`` (-1 for welded bodies)."""
        return self.body(body).idx_q

    def idx_v(self, body: BodyRef) -> int:
        """First index of the body's joint in ``v`` (-1 for welded bodies)."""
        return self.body(body).idx_v

    # ------------------------------------------------------------------ compile
    @property
    def compiled(self) -> "CompiledModel":
        """The flat arrays of the model, built on first use; the model is frozen from then on."""
        c = self._compiled
        if c is None:
            with self._lock:  # one CompiledModel even when several threads use a new model
                if self._compiled is None:
                    self._compiled = CompiledModel(self)
                c = self._compiled
        return c

    def data(self) -> "Data":
        """A new workspace for this model (use one per thread)."""
        return Data(self)

    @property
    def default_data(self) -> "Data":
        """The workspace used when an algorithm is called without ``data=``: one per thread,
        created on the thread's first call, so that calls without ``data=`` are safe from
        several threads."""
        d = getattr(self._tls, "data", None)
        if d is None:
            from ._entry import fast_args

            d = Data(self)
            # what the public fast path needs (sinews._entry), bound once per thread
            self._tls.fast = self._fast = fast_args(self, d)  # (model._fast: the thread that called last's)
            self._tls.data = d
        return d

    # ------------------------------------------------------------------ display
    def summary(self) -> str:
        """A readable table of bodies, joints, dof indices, masses and limits, then the total
        mass, frames and mimic records (:func:`sinews.model_summary.summary`)."""
        from .model_summary import summary

        return summary(self)

    def tree_text(self, constraints: ConstraintGroups | None = None) -> str:
        """The kinematic tree as indented text, with the mimic records and, given a
        ``ConstraintSet``, its loop/coordinate/contact constraints
        (:func:`sinews.model_summary.tree_text`)."""
        from .model_summary import tree_text

        return tree_text(self, constraints)

    def to_dot(self, constraints: ConstraintGroups | None = None) -> str:
        """The tree and its couplings as Graphviz DOT text (:func:`sinews.model_summary.to_dot`)."""
        from .model_summary import to_dot

        return to_dot(self, constraints)

    __str__ = summary

    def __repr__(self) -> str:
        return f"<sinews.Model {self.name!r} bodies={self.nbodies - 1} nq={self.nq} nv={self.nv}>"


class Data:
    """Per-model workspace: scratch arrays reused by every algorithm call.

    Not thread-safe: a ``Data`` passed as ``data=`` must not be used by two threads at once
    (create one per thread with ``model.data()``).  Calls without ``data=`` use the calling
    thread's own default workspace (:attr:`Model.default_data`).
    """

    def __init__(self, model: Model) -> None:
        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        c = model.compiled
        self.model = model
        self.c = c
        self.ws = np.zeros(L.ws_size(c.nlinks, c.nv))
        s_off, u6_off, _, _ = L.ws_offsets(c.nlinks, c.nv)
        self.ws[s_off:u6_off] = c.constant_motion_subspaces().reshape(-1)
        self._s_off = s_off
        self.fext_links = np.zeros((max(c.nlinks, 1), 6))

    def link_view(self, start: int, width: int) -> np.ndarray:
        """View of ``width`` workspace values per link starting at offset ``start``."""
        nl = self.model.compiled.nlinks
        return self.ws[: nl * L.WS_STRIDE].reshape(nl, L.WS_STRIDE)[:, start : start + width]

    @property
    def S(self) -> np.ndarray:
        """Motion subspaces of the last call, 6 x nv in child-link axes."""
        nv = self.model.nv
        return self.ws[self._s_off : self._s_off + 6 * nv].reshape(nv, 6).T
