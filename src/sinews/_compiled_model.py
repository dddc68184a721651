"""The flat arrays of a finalized :class:`sinews.Model` (:class:`CompiledModel`; layout:
:mod:`sinews._layout`).

Built once, on the model's first use by an algorithm: kernel links (bodies welded by fixed joints
are merged into their movable ancestor), joint placements and axes, merged link inertias, joint
armature, the dof parent array, and the placement table of every body and frame.
"""

from __future__ import annotations

import numpy as np

from . import _layout as L
from ._model_inertia import merge as _merge_inertia
from .joints import JT_FIXED, JT_FREEFLYER, JT_MULTIAXIS, JT_SPHERICAL
from .spatial import Transform

__all__ = ["CompiledModel"]


class CompiledModel:
    """Flat arrays of a finalized model (internal; see :mod:`sinews._layout`)."""

    def __init__(self, model):
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
        # plain sums (sinews._model_inertia.merge): a non-physical inertia kept on request
        # (load_urdf(inertia="warn")) is not re-validated here
        parts: list[list] = [[] for _ in range(nl)]
        for b in bodies[1:]:
            k = link_of_body[b.id]
            if k < 0:
                continue  # welded to the world: part of the ground, no dynamic effect
            parts[k].append((b.inertia, X_link_body[b.id]))
        inertia = [_merge_inertia(p) for p in parts]
        mi = np.zeros((max(nl, 1), L.MI_STRIDE), dtype=np.int64)
        extra = []
        extra_off = L.MF_HEADER + nl * L.MF_STRIDE
        mf_links = np.zeros((nl, L.MF_STRIDE))
        armature = model.armature
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
            row[L.MF_ARM : L.MF_ARM + j.nv] = armature[b.idx_v : b.idx_v + j.nv]  # C2
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
        self.armature = armature  # (nv,) added to the mass matrix diagonal (C2)
        self.has_quaternion = bool(np.any(np.isin(self.mi[:, L.MI_TYPE], [JT_SPHERICAL, JT_FREEFLYER])))
        starts = [
            int(self.mi[k, L.MI_IQ]) + (3 if self.mi[k, L.MI_TYPE] == JT_FREEFLYER else 0)
            for k in range(nl)
            if self.mi[k, L.MI_TYPE] in (JT_SPHERICAL, JT_FREEFLYER)
        ]
        self.quat_slices = np.array(starts, dtype=np.int64).reshape(-1, 1) + np.arange(4)
        self._X_link_body = X_link_body
        #: counts the placement tables built (one more each time a frame is added): the fast
        #: path's buffers hold its address and the count they were built at
        self.frames_version = np.zeros(1, dtype=np.int64)
        self.compile_frames(model)

    def compile_frames(self, model) -> None:
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
        self.frames_version[0] += 1

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
