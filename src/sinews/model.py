"""The kinematic-tree model and its per-call workspace.

A :class:`Model` is built by adding bodies (each with its parent, joint, joint placement and
inertia) and named frames.  On first use by an algorithm it is *compiled* to flat arrays
(parents, joint types, index maps, placements, inertias; see :mod:`sinews._layout`) and frozen:
adding bodies afterwards raises.  Gravity stays settable.  Algorithms never mutate a model;
their scratch memory lives in a :class:`Data` (``model.data()`` or the model's default one).

Body 0 is the world (named ``"world"``).  Fixed joints do not create kernel links: a welded
body is merged into its movable ancestor (its inertia is added there) but keeps its own id,
name and frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import threading

import numpy as np

from . import _layout as L
from ._checks import real_array
from .joints import JT_FIXED, JT_FREEFLYER, JT_MULTIAXIS, JT_SPHERICAL, Joint
from .spatial import SpatialInertia, Transform
from .spatial import as_transform as _as_transform

__all__ = ["Model", "Data", "Body", "Frame"]

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

    def __init__(self, gravity=(0.0, 0.0, -9.81), name: str = "model"):
        self.name = str(name)
        self._bodies: list[Body] = [
            Body(0, "world", -1, None, Transform.identity(), SpatialInertia.zero())
        ]
        self._frames: list[Frame] = []
        self._body_by_name = {"world": 0}
        self._frame_by_name: dict[str, int] = {}
        self._nq = 0
        self._nv = 0
        self._compiled = None
        self._tls = threading.local()  # per-thread default workspace (see default_data)
        self._lock = threading.Lock()  # compiles the model once when threads race to use it
        self._gravity = np.zeros(3)
        self.gravity = gravity

    def __getstate__(self):
        # thread-local workspaces and the lock are per process: not copied or pickled
        state = self.__dict__.copy()
        del state["_tls"], state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._tls = threading.local()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ building
    def add_body(
        self,
        parent,
        joint: Joint,
        X_parent_joint=None,
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

    def add_frame(self, name: str, body, X_body_frame=None) -> int:
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

    def body_id(self, name) -> int:
        """Id of the body named ``name`` (``KeyError`` if unknown)."""
        return self._resolve_body(name, "name")

    def frame_id(self, name) -> int:
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

    def body(self, body) -> Body:
        """The :class:`Body` record of a body id or name."""
        return self._bodies[self._resolve_body(body)]

    def frame(self, frame) -> Frame:
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

    def idx_q(self, body) -> int:
        """First index of the body's joint in ``q`` (-1 for welded bodies)."""
        return self.body(body).idx_q

    def idx_v(self, body) -> int:
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
            self._tls.fast = fast_args(self, d)
            self._tls.data = d
        return d

    # ------------------------------------------------------------------ display
    def summary(self) -> str:
        """A readable table of bodies, joints, indices, masses and frames."""
        rows = [("id", "name", "parent", "joint", "idx_q", "idx_v", "mass")]
        for b in self._bodies[1:]:
            rows.append(
                (
                    str(b.id),
                    b.name,
                    self._bodies[b.parent].name,
                    repr(b.joint),
                    str(b.idx_q) if b.idx_q >= 0 else "-",
                    str(b.idx_v) if b.idx_v >= 0 else "-",
                    f"{b.inertia.mass:.4g}",
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [f"Model {self.name!r}: {self.nbodies - 1} bodies, nq={self.nq}, nv={self.nv}, gravity={self._gravity.tolist()}"]
        for j, r in enumerate(rows):
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)))
            if j == 0:
                lines.append("  ".join("-" * w for w in widths))
        if self._frames:
            lines.append("frames: " + ", ".join(f"{f.name} (on {self._bodies[f.body].name})" for f in self._frames))
        return "\n".join(lines)

    __str__ = summary

    def __repr__(self) -> str:
        return f"<sinews.Model {self.name!r} bodies={self.nbodies - 1} nq={self.nq} nv={self.nv}>"


class CompiledModel:
    """Flat arrays of a finalized model (internal; see :mod:`sinews._layout`)."""

    def __init__(self, model: Model):
        bodies = model._bodies
        nb = len(bodies)
        # link of every body and the pose of the body in that link's frame
        link_of_body = np.full(nb, -1, dtype=np.int64)
        X_link_body: list[Transform] = [Transform.identity()] * nb
        links: list[int] = []  # body id of each link
        for b in bodies[1:]:
            if b.joint.code == JT_FIXED:
                link_of_body[b.id] = link_of_body[b.parent]
                X_link_body[b.id] = X_link_body[b.parent] @ b.X_parent_joint
            else:
                link_of_body[b.id] = len(links)
                links.append(b.id)
        nl = len(links)
        self.nlinks = nl
        self.nq = model.nq
        self.nv = model.nv
        self.link_of_body = link_of_body
        self.link_of_body_list = [int(k) for k in link_of_body]
        self.body_in_link_frame = [X.R is not None and np.array_equal(X.R, np.eye(3)) and not np.any(X.p) for X in X_link_body]
        self.link_body = np.array(links, dtype=np.int64)
        self.X_link_body_R = np.array([X.R for X in X_link_body])
        self.X_link_body_p = np.array([X.p for X in X_link_body])
        # link inertias (with welded bodies merged)
        inertia = [SpatialInertia.zero() for _ in range(nl)]
        for b in bodies[1:]:
            k = link_of_body[b.id]
            if k < 0:
                continue  # welded to the world: part of the ground, no dynamic effect
            inertia[k] = inertia[k] + b.inertia.transformed(X_link_body[b.id])
        mi = np.zeros((max(nl, 1), L.MI_STRIDE), dtype=np.int64)
        extra = []
        extra_off = L.MF_HEADER + nl * L.MF_STRIDE
        mf_links = np.zeros((nl, L.MF_STRIDE))
        for k, bid in enumerate(links):
            b = bodies[bid]
            j = b.joint
            X = X_link_body[b.parent] @ b.X_parent_joint  # joint frame in the parent link
            mi[k, L.MI_PARENT] = link_of_body[b.parent]
            mi[k, L.MI_TYPE] = j.code
            mi[k, L.MI_IQ] = b.idx_q
            mi[k, L.MI_IV] = b.idx_v
            mi[k, L.MI_NQ] = j.nq
            mi[k, L.MI_NV] = j.nv
            mi[k, L.MI_AXIS] = j.axis_code
            if j.code == JT_MULTIAXIS:
                extra.append(j.axes.reshape(-1))
            row = mf_links[k]
            row[L.MF_JR : L.MF_JR + 9] = X.R.reshape(-1)
            row[L.MF_JP : L.MF_JP + 3] = X.p
            row[L.MF_AXIS : L.MF_AXIS + 3] = j.axis
            row[L.MF_PITCH] = j.pitch
            I = inertia[k]
            Io = I.inertia_origin
            row[L.MF_MASS] = I.mass
            row[L.MF_H : L.MF_H + 3] = I.mass * I.com
            row[L.MF_IO : L.MF_IO + 6] = [Io[0, 0], Io[1, 1], Io[2, 2], Io[0, 1], Io[0, 2], Io[1, 2]]
        # offsets of the multi-axis joints' axes, stored after the per-link blocks
        off = extra_off
        for k, bid in enumerate(links):
            if mi[k, L.MI_TYPE] == JT_MULTIAXIS:
                mi[k, L.MI_AXES] = off
                off += 6 * bodies[bid].joint.nv
        header = np.zeros(L.MF_HEADER)
        header[:3] = model.gravity
        self.mi = mi[:nl] if nl else mi[:0]
        self.mf = np.concatenate([header, mf_links.reshape(-1)] + extra)
        self.link_inertia = inertia
        # the same, as arrays (read by the energies and the centre of mass on every call)
        self.link_mass = np.array([I.mass for I in inertia], dtype=float)
        self.link_h = np.array([I.mass * I.com for I in inertia], dtype=float).reshape(-1, 3)
        self.link_Io = np.array([I.inertia_origin for I in inertia], dtype=float).reshape(-1, 3, 3)
        # dof parent array (lambda) for the branch-sparse factorisation
        lam = np.full(model.nv, -1, dtype=np.int64)
        for k in range(nl):
            iv, nvj, par = mi[k, L.MI_IV], mi[k, L.MI_NV], mi[k, L.MI_PARENT]
            lam[iv] = mi[par, L.MI_IV] + mi[par, L.MI_NV] - 1 if par >= 0 else -1
            for i in range(1, nvj):
                lam[iv + i] = iv + i - 1
        self.lam = lam
        # dof -> link
        self.link_of_dof = np.zeros(model.nv, dtype=np.int64)
        for k in range(nl):
            self.link_of_dof[mi[k, L.MI_IV] : mi[k, L.MI_IV] + mi[k, L.MI_NV]] = k
        self.has_quaternion = bool(np.any(np.isin(self.mi[:, L.MI_TYPE], [JT_SPHERICAL, JT_FREEFLYER])))
        starts = [
            int(self.mi[k, L.MI_IQ]) + (3 if self.mi[k, L.MI_TYPE] == JT_FREEFLYER else 0)
            for k in range(nl)
            if self.mi[k, L.MI_TYPE] in (JT_SPHERICAL, JT_FREEFLYER)
        ]
        self.quat_slices = np.array(starts, dtype=np.int64).reshape(-1, 1) + np.arange(4)
        self._X_link_body = X_link_body
        self.compile_frames(model)

    def compile_frames(self, model: Model) -> None:
        """The placement table ``pl`` (see :mod:`sinews._layout`): one row per body (index = body
        id), then one per frame (index = nbodies + frame id): the kernel link that carries it and
        its pose in that link's frame.  Also the look-up tables ``body_rows`` and ``frame_rows``
        (name or id -> row).  Rebuilt when a frame is added to a compiled model."""
        nb = len(model._bodies)
        frames = model._frames
        rows = []
        links = []
        for b in range(nb):
            rows.append(self._X_link_body[b])
            links.append(int(self.link_of_body[b]))
        for f in frames:
            rows.append(self._X_link_body[f.body] @ f.X_body_frame)
            links.append(int(self.link_of_body[f.body]))
        pl = np.zeros((len(rows), L.PL_STRIDE))
        for r, (X, k) in enumerate(zip(rows, links)):
            pl[r, L.PL_LINK] = k
            pl[r, L.PL_R : L.PL_R + 9] = X.R.reshape(-1)
            pl[r, L.PL_P : L.PL_P + 3] = X.p
        body_rows = {b.name: b.id for b in model._bodies}
        body_rows.update({b: b for b in range(nb)})
        frame_rows = {f.name: nb + f.id for f in frames}
        frame_rows.update({f.id: nb + f.id for f in frames})
        self.nbodies = nb
        self.nframes = len(frames)
        self.pl = pl.reshape(-1)
        self.body_rows = body_rows
        self.frame_rows = frame_rows

    def constant_motion_subspaces(self) -> np.ndarray:
        """S (6 x nv, child axes) for every joint whose S does not depend on q (zeros elsewhere)."""
        from .joints import JT_HELICAL, JT_PRISMATIC, JT_REVOLUTE

        S = np.zeros((self.nv, 6))
        for k in range(self.nlinks):
            jt, iv = self.mi[k, L.MI_TYPE], self.mi[k, L.MI_IV]
            base = L.MF_HEADER + k * L.MF_STRIDE
            axis = self.mf[base + L.MF_AXIS : base + L.MF_AXIS + 3]
            if jt == JT_REVOLUTE:
                S[iv, :3] = axis
            elif jt == JT_PRISMATIC:
                S[iv, 3:] = axis
            elif jt == JT_HELICAL:
                S[iv, :3] = axis
                S[iv, 3:] = self.mf[base + L.MF_PITCH] * axis
            elif jt == JT_SPHERICAL:
                S[iv : iv + 3, :3] = np.eye(3)
            elif jt == JT_FREEFLYER:
                S[iv : iv + 6, :] = np.eye(6)
        return S


class Data:
    """Per-model workspace: scratch arrays reused by every algorithm call.

    Not thread-safe: a ``Data`` passed as ``data=`` must not be used by two threads at once
    (create one per thread with ``model.data()``).  Calls without ``data=`` use the calling
    thread's own default workspace (:attr:`Model.default_data`).
    """

    def __init__(self, model: Model):
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
