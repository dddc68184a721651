"""The compiled path of the ``"default"`` stepper: per-scene tables and workspaces built once,
packed into two flat arrays, then one call of :func:`sinews.sim._step_kernels.coulomb_step`
(five arguments) per step.

:class:`FastCoulomb` is made by :class:`~sinews.sim.steppers.CoulombStepper` for a scene whose
shapes are half-spaces, spheres, boxes, points and capsules and that has no bilateral
constraints; the stepper takes its general path for any other scene, and for any step the
kernel hands back (see the kernel module's codes).  The tables are rebuilt when the scene's
geometry tables change (``Scene._tables`` cache).

A step's result is :class:`FastStepOutput`: ``q`` and ``v`` are views of one copy of the
kernel's record; the contacts, impulses, frames and statistics are decoded from that record
when first read.  :meth:`FastCoulomb.advance` takes runs of steps with zero joint forces in one
kernel call (:func:`sinews.sim._step_kernels.coulomb_advance`: what :func:`sinews.sim.simulate`
uses without a controller), the same steps bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..geometry.contacts import Contacts
from ..geometry.shapes import Box, Capsule, HalfSpace, Point, Sphere
from ._stepper_base import StepOutput
from .contact_problem import joint_tables

_KINDS = {HalfSpace: 0, Sphere: 1, Box: 2, Point: 3, Capsule: 4}
_FRAME_COLS = np.array([3, 4, 5, 7, 8, 9, 10, 11, 12])
# sinews.sim._step_kernels' REC_HDR, REC_W, OK and GENERAL (checked by the tests)
_REC_HDR, _REC_W, _OK, _GENERAL = 4, 20, 0, 2


def eligible(scene) -> bool:
    """Whether ``scene`` can take the compiled path."""
    cs = scene.constraints
    if cs is not None and cs.size:
        return False
    if not scene.model.compiled.nlinks:
        return False
    return all(type(g.shape) in _KINDS for g in scene.geometries)


def decode_contacts(C):
    """``(Contacts, impulses (k, 3), frames (k, 3, 3))`` from the record rows ``C`` (k, REC_W)
    (layout: :data:`sinews.sim._step_kernels.REC_W`)."""
    k = C.shape[0]
    contacts = Contacts(C[:, 0].astype(np.int64), C[:, 1].astype(np.int64), C[:, 2:5].copy(), C[:, 5:8].copy(),
                        C[:, 8].copy(), C[:, 9].copy(), C[:, 10].copy())
    frames = np.empty((k, 3, 3))
    frames[:, 0] = C[:, 5:8]
    frames[:, 1] = C[:, 11:14]
    frames[:, 2] = C[:, 14:17]
    return contacts, C[:, 17:20].copy(), frames


class FastStepOutput(StepOutput):
    """A :class:`~sinews.sim.steppers.StepOutput` of the compiled path: ``q``, ``v`` at once,
    the rest decoded from the step's record on first access (assignable, like any field)."""

    def __init__(self, rec, nq, nv):  # noqa: D107 - no dataclass __init__: fields are lazy
        self._rec = rec
        self._hdr = nq + nv
        self.q = rec[:nq]
        self.v = rec[nq : nq + nv]
        self._decoded = None

    def record(self):
        """(k, contact rows (k, REC_W), iterations, error) without decoding."""
        h = self._hdr
        rec = self._rec
        k = int(rec[h])
        return k, rec[h + _REC_HDR : h + _REC_HDR + _REC_W * k].reshape(k, _REC_W), int(rec[h + 2]), float(rec[h + 3])

    def _fields(self):
        d = self._decoded
        if d is None:
            k, C, it, err = self.record()
            contacts, imp, frames = decode_contacts(C)
            if k or it:
                stats = dict(iterations=it, converged=True, error=err, solver="auto(pgs)")
            else:
                stats = dict(iterations=0, converged=True, error=0.0, solver="none")
            d = self._decoded = {"contacts": contacts, "impulses": imp, "frames": frames, "stats": stats}
        return d


def _lazy(name):
    def get(self):
        return self._fields()[name]

    def put(self, value):
        self._fields()[name] = value

    return property(get, put)


for _name in ("contacts", "impulses", "frames", "stats"):
    setattr(FastStepOutput, _name, _lazy(_name))


class _Packer:
    """Lays arrays out in the flat tables ``F`` (float64) and ``I`` (int64, after the header)."""

    def __init__(self, SK):
        self.SK = SK
        self.f, self.i = [], []
        self.nf, self.ni = 0, SK.HEADER

    def add(self, slot, arr):
        arr = np.asarray(arr)
        dims = arr.shape if arr.ndim else (1,)
        if slot < self.SK.NF:
            self.f.append((slot, self.nf, dims, np.ascontiguousarray(arr, dtype=np.float64).reshape(-1)))
            self.nf += arr.size
        else:
            self.i.append((slot, self.ni, dims, np.ascontiguousarray(arr, dtype=np.int64).reshape(-1)))
            self.ni += arr.size

    def build(self):
        F = np.zeros(max(self.nf, 1))
        I = np.zeros(self.ni, dtype=np.int64)
        for table, entries in ((F, self.f), (I, self.i)):
            for slot, off, dims, flat in entries:
                I[4 * slot] = off
                for d, n in enumerate(dims):
                    I[4 * slot + 1 + d] = n
                if len(dims) == 1:
                    I[4 * slot + 2] = 1
                table[off : off + flat.size] = flat
        return F, I


class FastCoulomb:
    """Tables and workspaces of one scene for :func:`~sinews.sim._step_kernels.coulomb_step`.

    ``direct``: the PGS of the step takes the direct step of its sticking contacts
    (:func:`sinews.sim._step_direct.polish`) before the first sweep of a warm start and after each
    failed convergence test (True; False gives
    plain PGS sweeps, as :func:`sinews.contact.fclib.solve`'s PGS phase).
    """

    direct = True

    def __init__(self, scene):
        from . import _step_kernels as SK

        self.SK = SK
        model = scene.model
        self.model = model
        tables = scene._tables()
        self.key = tables
        shapes, body, R_bg, p_bg, allowed, fric, rest, radius = tables
        c = model.compiled
        nv, nq, ng = model.nv, model.nq, len(shapes)
        self.nv, self.nq = nv, nq
        self.q_shape, self.v_shape = (nq,), (nv,)
        gi = np.zeros((ng, 2), dtype=np.int64)
        gf = np.zeros((ng, 16))
        for g, sh in enumerate(shapes):
            b = int(body[g])
            gi[g, 0] = _KINDS[type(sh)]
            gi[g, 1] = c.link_of_body[b]
            R_lb, p_lb = c.X_link_body_R[b], c.X_link_body_p[b]
            gf[g, 0:9] = (R_lb @ R_bg[g]).reshape(-1)
            gf[g, 9:12] = p_lb + R_lb @ p_bg[g]
            if isinstance(sh, Box):
                gf[g, 12:15] = sh.half_extents
            elif isinstance(sh, Sphere):
                gf[g, 12] = sh.radius
            elif isinstance(sh, Capsule):
                gf[g, 12] = sh.radius
                gf[g, 13] = 0.5 * sh.length
        pair = np.zeros((ng, ng, 3))
        pair[:, :, 0] = allowed
        pair[:, :, 1] = fric
        pair[:, :, 2] = rest
        local, owner, rad, _ = scene._support
        sup = np.column_stack([local, rad, owner.astype(float)]).reshape(-1, 5)
        self.radius = float(radius)
        lim, damp, dfric = joint_tables(model)
        lim = np.asarray(lim, dtype=float).reshape(-1, 4)
        nlim = lim.shape[0]
        passive = np.zeros((3, max(nv, 2)))  # row 0: flags (damping, friction)
        if damp is not None:
            passive[0, 0] = 1.0
            passive[1, :nv] = damp
        if dfric is not None:
            passive[0, 1] = 1.0
            passive[2, :nv] = dfric
        trees = SK.tree_table(c.mi)
        nplanes = int(np.sum(gi[:, 0] == 0))
        cap = sup.shape[0] * max(nplanes, 1) + 64
        capg = cap + nlim
        rows = 3 * capg
        self.cap, self.nlim = cap, nlim
        P = _Packer(SK)
        P.add(SK.F_FP, np.zeros(SK.FP_SIZE))
        P.add(SK.F_MF, c.mf)
        P.add(SK.F_WS, model.data().ws)  # initialised entries (a fresh Data), then scratch
        P.add(SK.F_M, np.zeros((nv, nv)))
        P.add(SK.F_L, np.zeros((nv, nv)))
        P.add(SK.F_S, np.zeros(6 * nv))
        P.add(SK.F_LP, np.zeros((max(c.nlinks, 1), 12)))
        P.add(SK.F_GF, gf)
        P.add(SK.F_PAIR, pair.reshape(-1))
        P.add(SK.F_SUP, sup)
        P.add(SK.F_LIM, lim)
        P.add(SK.F_PASSIVE, passive)
        P.add(SK.F_CF, np.zeros((cap, 16)))
        P.add(SK.F_J, np.zeros(rows * nv))
        P.add(SK.F_Y, np.zeros(rows * nv))
        P.add(SK.F_W, np.zeros(rows * rows))
        P.add(SK.F_CQ, np.zeros(rows))
        P.add(SK.F_R, np.zeros(rows))
        P.add(SK.F_R0, np.zeros(rows))
        P.add(SK.F_PBUF, np.zeros(5 * rows + nv * (nv + 1) + 8))  # PGS scratch, then 8 chunk errors
        P.add(SK.F_VEC, np.zeros(4 * nv))
        P.add(SK.F_MU, np.zeros(capg))
        P.add(SK.F_LIMF, np.zeros((2, nlim)))
        P.add(SK.F_GEO, np.zeros(12 * ng + 112))
        P.add(SK.F_OUT, np.zeros(nq + nv + SK.REC_HDR + SK.REC_W * cap))
        P.add(SK.I_IO, np.zeros(SK.IO_SIZE, dtype=np.int64))
        P.add(SK.I_MI, c.mi)
        P.add(SK.I_GI, gi)
        P.add(SK.I_TREES, trees)
        P.add(SK.I_CI, np.zeros((cap, 2), dtype=np.int64))
        prev = np.zeros((cap + 1, 2), dtype=np.int64)
        prev[0, 0] = -1
        P.add(SK.I_PREV, prev)
        P.add(SK.I_LAM, c.lam)
        P.add(SK.I_COLS, np.zeros((capg, max(nv, 1)), dtype=np.int64))
        P.add(SK.I_NCOL, np.zeros((capg, 2), dtype=np.int64))
        P.add(SK.I_CTREE, np.zeros((capg, 2), dtype=np.int64))
        P.add(SK.I_MARK, np.zeros(max(nv, 1), dtype=np.int64))
        P.add(SK.I_LIMIV, np.zeros(nlim, dtype=np.int64))
        P.add(SK.I_NB, np.zeros(capg, dtype=np.int64))
        P.add(SK.I_NBR, np.zeros((capg, capg), dtype=np.int64))
        P.add(SK.I_PGSI, np.zeros(2 * nv + capg, dtype=np.int64))
        blk = np.zeros((capg + 1, 2), dtype=np.int64)
        blk[0, 0] = -1
        P.add(SK.I_BLK, blk)
        P.add(SK.I_LNZ, np.zeros((max(nv, 1), max(nv, 1) + 1), dtype=np.int64))
        self.F, self.I = P.build()
        F, I = self.F, self.I

        def view(slot, shape):
            o = int(I[4 * slot])
            A = F if slot < SK.NF else I
            return A[o : o + int(np.prod(shape))].reshape(shape)

        # numpy views of the slots the Python side reads or writes
        self.fp = view(SK.F_FP, (SK.FP_SIZE,))
        self.io = view(SK.I_IO, (SK.IO_SIZE,))
        self.M = view(SK.F_M, (nv, nv))
        self.ci = view(SK.I_CI, (cap, 2))
        self.cf = view(SK.F_CF, (cap, 16))
        self.J = view(SK.F_J, (rows * nv,))
        self.W = view(SK.F_W, (rows * rows,))
        self.cq = view(SK.F_CQ, (rows,))
        self.r = view(SK.F_R, (rows,))
        self.r0 = view(SK.F_R0, (rows,))
        self.vec = view(SK.F_VEC, (4 * nv,))
        self.mu = view(SK.F_MU, (capg,))
        self.prev = view(SK.I_PREV, (cap + 1, 2))
        self.cols = view(SK.I_COLS, (capg, max(nv, 1)))
        self.ncol = view(SK.I_NCOL, (capg, 2))
        nout = nq + nv + SK.REC_HDR + SK.REC_W * cap
        self.out = view(SK.F_OUT, (nout,))
        self._out_start = int(I[4 * SK.F_OUT])
        self._rec0 = nq + nv + SK.REC_HDR
        self._params = None
        self._kernel = SK.coulomb_step
        self._advance = SK.coulomb_advance

    def forget(self):
        """No warm start at the next step."""
        self.prev[0, 0] = -1

    def remember(self, ga, gb, nl, r):
        """Warm-start state from a step taken on the general path."""
        k = len(ga)
        if k > self.cap or r.shape[0] > self.r.shape[0]:
            self.prev[0, 0] = -1
            return
        self.prev[0] = (k, nl)
        self.prev[1 : k + 1, 0] = ga
        self.prev[1 : k + 1, 1] = gb
        self.r[: r.shape[0]] = r

    def warm_state(self):
        """(ga, gb, nl, r) of the last step taken here, or None."""
        k, nl = int(self.prev[0, 0]), int(self.prev[0, 1])
        if k < 0:
            return None
        return (self.prev[1 : k + 1, 0].copy(), self.prev[1 : k + 1, 1].copy(), nl,
                self.r[: 3 * (k + nl)].copy())

    def set_params(self, scene, stepper, h):
        """Write the step's parameters into the float table (when they changed)."""
        params = (h, scene.margin, scene.erp, stepper.capture_speed, stepper.tol, stepper.warm_start,
                  stepper.max_iter, self.direct)
        if params != self._params:  # the parameters are read at every step, written when changed
            SK = self.SK
            fp = self.fp
            fp[SK.P_H] = h
            fp[SK.P_MARGIN] = scene.margin
            fp[SK.P_ERP] = scene.erp
            fp[SK.P_CAPTURE] = stepper.capture_speed
            fp[SK.P_TOL] = stepper.tol
            fp[SK.P_RADIUS] = self.radius
            fp[SK.P_WARM] = 1.0 if stepper.warm_start else 0.0
            fp[SK.P_CHUNK] = 100  # fclib.solve's default chunk
            fp[SK.P_MAXIT] = stepper.max_iter
            fp[SK.P_DIRECT] = 1.0 if self.direct else 0.0
            self._params = params

    def step(self, scene, stepper, q, v, tau, h):
        """Run the kernel; returns a :class:`FastStepOutput`, the general path's output (PGS
        stagnated: the FCLib driver on the assembled problem) or None (the kernel handed the
        step back: take the general path)."""
        if (h, scene.margin, scene.erp, stepper.capture_speed, stepper.tol, stepper.warm_start,
                stepper.max_iter, self.direct) != self._params:
            self.set_params(scene, stepper, h)
        code = self._kernel(q, v, tau, self.F, self.I)
        if code == _OK:  # one copy of the record (q+, v+, contacts, impulses, statistics)
            a = self._out_start
            return FastStepOutput(self.F[a : a + self._rec0 + _REC_W * int(self.io[0])].copy(), self.nq, self.nv)
        return self.after(code, stepper, q, h)

    def after(self, code, stepper, q, h):
        """The step's output after the kernel returned ``code`` (not OK) for state ``q``: None
        (GENERAL) or the FCLib driver's solution (NEEDS_SOLVER)."""
        if code == _GENERAL:
            return None
        io = self.io
        k, nl = int(io[self.SK.O_K]), int(io[self.SK.O_NL])
        ci, cf = self.ci, self.cf
        contacts = Contacts(ci[:k, 0].copy(), ci[:k, 1].copy(), cf[:k, 0:3].copy(), cf[:k, 3:6].copy(),
                            cf[:k, 6].copy(), cf[:k, 13].copy(), cf[:k, 14].copy())
        return self._general_solve(stepper, contacts, q, h, k, nl, 3 * (k + nl))

    def advance(self, scene, stepper, q, v, h, keep):
        """Steps with zero joint forces from ``(q, v)`` while the kernel takes them
        (:func:`~sinews.sim._step_kernels.coulomb_advance`), at most ``len(keep)``; returns
        ``(taken, code, q, v, Q, V, E, hdr, C)``: the state after them, and for the steps with
        ``keep`` their states, energies, (contacts, iterations, error) and contact records
        (REC_W columns, in step order).  When ``taken < len(keep)`` the next step's kernel
        returned ``code``: finish it with :meth:`after`, then the stepper's general path."""
        if (h, scene.margin, scene.erp, stepper.capture_speed, stepper.tol, stepper.warm_start,
                stepper.max_iter, self.direct) != self._params:
            self.set_params(scene, stepper, h)
        n = len(keep)
        b = getattr(self, "_chunk", None)
        if b is None or b[0].shape[0] < n:
            nq, nv = self.nq, self.nv
            b = self._chunk = (np.empty((n, nq)), np.empty((n, nv)), np.empty(n), np.empty((n, 3)),
                               np.empty((n * self.cap, _REC_W)), np.zeros((nv, nv)), np.zeros(nv))
        Qc, Vc, Ec, hdr, Cc, M2, tau = b
        q, v = q.copy(), v.copy()
        ret = self._advance(q, v, tau, self.F, self.I, keep, Qc, Vc, Ec, hdr, Cc, M2)
        taken, code = divmod(int(ret), 4)
        sel = np.flatnonzero(keep[:taken])
        ks = hdr[sel, 0].astype(np.int64)
        return (taken, code, q, v, Qc[sel].copy(), Vc[sel].copy(), Ec[sel].copy(), hdr[sel].copy(),
                Cc[: int(ks.sum())].copy())

    def _general_solve(self, stepper, contacts, q, h, k, nl, m):
        """The FCLib driver on the assembled problem from the same start (PGS stagnated or ran
        out of sweeps: the careful verdict and ADMM are the driver's): the general path's
        result."""
        from ..configuration import integrate
        from ..contact import fclib

        nv = self.nv
        W = self.W[: m * m].reshape(m, m).copy()
        cq = self.cq[:m].copy()
        # the kernel added its offsets to cq
        mu = self.mu[: k + nl].copy()
        r0 = self.r0[:m].copy() if self.io[self.SK.O_WARM] else None
        res = fclib.solve(fclib.FrictionContactProblem(W, cq, mu), tol=stepper.tol,
                          max_iter=stepper.max_iter, r0=r0)
        Jk = self.J[: m * nv].reshape(m, nv)  # meaningful on each group's columns only
        J = np.zeros((m, nv))
        for g in range(k + nl):
            c = self.cols[g, : self.ncol[g, 0]]
            J[3 * g : 3 * g + 3, c] = Jk[3 * g : 3 * g + 3, c]
        v_free = self.vec[nv : 2 * nv]
        v_plus = v_free + np.linalg.solve(self.M, J.T @ res.r)
        self.remember(contacts.geom_a, contacts.geom_b, nl, res.r)
        stats = dict(iterations=int(res.iterations), converged=bool(res.converged),
                     error=float(res.error), solver=res.solver)
        imp = res.r[: 3 * k].reshape(k, 3).copy()
        frames = self.cf[:k][:, _FRAME_COLS].reshape(k, 3, 3)
        return StepOutput(integrate(self.model, q, v_plus, h), v_plus, contacts, imp, frames, stats)
