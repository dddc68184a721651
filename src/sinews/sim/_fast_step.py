"""The compiled path of the ``"default"`` stepper: per-scene tables and workspaces built once,
then one call of :func:`sinews.sim._step_kernels.coulomb_step` per step.

:class:`FastCoulomb` is made by :class:`~sinews.sim.steppers.CoulombStepper` for a scene whose
shapes are half-spaces, spheres, boxes, points and capsules and that has no bilateral
constraints; the stepper takes its general path for any other scene, and for any step the
kernel hands back (see the kernel module's codes).  The tables are rebuilt when the scene's
geometry tables change (``Scene._tables`` cache).
"""

from __future__ import annotations

import numpy as np

from ..geometry.contacts import Contacts
from ..geometry.shapes import Box, Capsule, HalfSpace, Point, Sphere
from .contact_problem import joint_tables

_KINDS = {HalfSpace: 0, Sphere: 1, Box: 2, Point: 3, Capsule: 4}
_FRAME_COLS = np.array([3, 4, 5, 7, 8, 9, 10, 11, 12])


def eligible(scene) -> bool:
    """Whether ``scene`` can take the compiled path."""
    cs = scene.constraints
    if cs is not None and cs.size:
        return False
    if not scene.model.compiled.nlinks:
        return False
    return all(type(g.shape) in _KINDS for g in scene.geometries)


class FastCoulomb:
    """Tables and workspaces of one scene for :func:`~sinews.sim._step_kernels.coulomb_step`."""

    def __init__(self, scene):
        from . import _step_kernels as SK

        self.SK = SK
        model = scene.model
        self.model = model
        tables = scene._tables()
        self.key = tables
        shapes, body, R_bg, p_bg, allowed, fric, rest, radius = tables
        c = model.compiled
        data = model.data()
        self.mi, self.mf, self.ws = c.mi, c.mf, data.ws
        nv, ng = model.nv, len(shapes)
        self.nv = nv
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
        self.gi, self.gf = gi, gf
        pair = np.zeros((ng, ng, 3))
        pair[:, :, 0] = allowed
        pair[:, :, 1] = fric
        pair[:, :, 2] = rest
        self.pair = pair
        local, owner, rad, _ = scene._support
        self.sup = np.ascontiguousarray(np.column_stack([local, rad, owner.astype(float)]).reshape(-1, 5))
        self.radius = float(radius)
        lim, damp, dfric = joint_tables(model)
        self.lim = np.ascontiguousarray(lim, dtype=float).reshape(-1, 4)
        passive = np.zeros((3, max(nv, 2)))  # row 0: flags (damping, friction)
        if damp is not None:
            passive[0, 0] = 1.0
            passive[1, :nv] = damp
        if dfric is not None:
            passive[0, 1] = 1.0
            passive[2, :nv] = dfric
        self.passive = passive
        self.trees = SK.tree_table(c.mi)
        nplanes = int(np.sum(gi[:, 0] == 0))
        cap = self.sup.shape[0] * max(nplanes, 1) + 64
        nlim = self.lim.shape[0]
        rows = 3 * (cap + nlim)
        self.cap = cap
        self.M = np.zeros((nv, nv))
        self.Minv = np.empty((nv, nv))
        self.mbuf = np.empty(12 * nv)
        self.S = np.empty(6 * nv)
        self.lp = np.empty((max(c.nlinks, 1), 12))
        self.ci = np.zeros((cap, 2), dtype=np.int64)
        self.cf = np.zeros((cap, 16))
        self.J = np.empty(rows * nv)
        self.W = np.empty(rows * rows)
        self.cq = np.empty(rows)
        self.r = np.zeros(rows)
        self.r0 = np.zeros(rows)
        self.pbuf = np.empty(3 * rows)
        self.prev = np.zeros((cap + 1, 2), dtype=np.int64)
        self.prev[0, 0] = -1
        self.q_out = np.empty(model.nq)
        self.v_out = np.empty(nv)
        self.scratch = np.empty(4 * nv + cap + nlim + 1 + 12 * ng + 112)
        self.fp = np.zeros(self.SK.FP_SIZE)
        self.io = np.zeros(self.SK.IO_SIZE, dtype=np.int64)
        self._params = None

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

    def step(self, scene, stepper, q, v, tau, h):
        """Run the kernel; returns ``(code, output-or-None)``."""
        SK = self.SK
        params = (h, scene.margin, scene.erp, stepper.capture_speed, stepper.tol, stepper.warm_start,
                  stepper.max_iter)
        if params != self._params:  # the parameters are read at every step, written when changed
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
            self._params = params
        code = SK.coulomb_step(q, v, tau, self.fp, self.io, self.mi, self.mf, self.ws, self.mbuf, self.M,
                               self.Minv, self.S, self.lp, self.gi, self.gf, self.pair, self.sup,
                               self.lim, self.passive, self.trees, self.ci, self.cf, self.J, self.W, self.cq,
                               self.r, self.r0, self.pbuf, self.prev, self.q_out, self.v_out,
                               self.scratch)
        if code == SK.GENERAL:
            return code, None
        io = self.io
        k, nl = int(io[SK.O_K]), int(io[SK.O_NL])
        ci, cf = self.ci, self.cf
        contacts = Contacts(ci[:k, 0].copy(), ci[:k, 1].copy(), cf[:k, 0:3].copy(), cf[:k, 3:6].copy(),
                            cf[:k, 6].copy(), cf[:k, 13].copy(), cf[:k, 14].copy())
        m = 3 * (k + nl)
        if code == SK.NEEDS_SOLVER:
            return code, self._general_solve(stepper, contacts, q, h, k, nl, m)
        if m == 0:
            stats = dict(iterations=0, converged=True, error=0.0, solver="none")
            return code, (self.q_out.copy(), self.v_out.copy(), contacts, np.zeros((0, 3)),
                          np.zeros((0, 3, 3)), stats)
        self.prev[0] = (k, nl)
        self.prev[1 : k + 1] = ci[:k]
        nv = self.nv
        err = float(self.scratch[4 * nv + self.cap + self.lim.shape[0]])
        stats = dict(iterations=int(io[SK.O_ITER]), converged=True, error=err, solver="auto(pgs)")
        imp = self.r[: 3 * k].reshape(k, 3).copy()
        frames = cf[:k][:, _FRAME_COLS].reshape(k, 3, 3)
        return code, (self.q_out.copy(), self.v_out.copy(), contacts, imp, frames, stats)

    def _general_solve(self, stepper, contacts, q, h, k, nl, m):
        """The FCLib driver on the assembled problem from the same start (PGS stagnated or ran
        out of sweeps: the careful verdict and ADMM are the driver's): the general path's
        result."""
        from ..configuration import integrate
        from ..contact import fclib

        nv = self.nv
        W = self.W[: m * m].reshape(m, m).copy()
        cq = self.cq[:m].copy()
        # the kernel added its offsets to cq; mu from the scratch
        mu = self.scratch[4 * nv : 4 * nv + k + nl].copy()
        r0 = self.r0[:m].copy() if self.io[self.SK.O_WARM] else None
        res = fclib.solve(fclib.FrictionContactProblem(W, cq, mu), tol=stepper.tol,
                          max_iter=stepper.max_iter, r0=r0)
        J = self.J[: m * nv].reshape(m, nv)
        v_free = self.scratch[nv : 2 * nv]
        v_plus = v_free + self.Minv @ (J.T @ res.r)
        self.remember(contacts.geom_a, contacts.geom_b, nl, res.r)
        stats = dict(iterations=int(res.iterations), converged=bool(res.converged),
                     error=float(res.error), solver=res.solver)
        imp = res.r[: 3 * k].reshape(k, 3).copy()
        frames = self.cf[:k][:, _FRAME_COLS].reshape(k, 3, 3)
        return (integrate(self.model, q, v_plus, h), v_plus, contacts, imp, frames, stats)

