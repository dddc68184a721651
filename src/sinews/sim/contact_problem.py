r"""From contacts to the solvers: contact Jacobians, Delassus operator and free velocity.

At a state ``(q, v)`` with generalized forces ``tau`` and a time step ``h``, the velocity-level
problem of one time step (Moreau; Anitescu & Potra 1997; Stewart & Trinkle 1996) is::

    M (v+ - v) = h (tau - C(q, v)) + J^T r + L^T r_L + G^T r_G            (impulses r)
    v_free     = v + h M^-1 (tau - C(q, v))                                  (ABA)
    u          = J v+ = W r + J v_free,      W = J M^-1 J^T                  (Delassus)

with, per contact point i between geometries A and B (normal n_i from A to B, tangents t1_i,
t2_i completing a right-handed frame), three rows of ``J`` in FCLib's order [n, t1, t2]: the
relative velocity of B's material point minus A's at the contact point,
``J_i = [n; t1; t2]^T (J_B(p_i) - J_A(p_i))``.  The point Jacobians come from the world-frame
body Jacobians (:func:`sinews.body_jacobian`, one kernel call per body in contact, not per
contact): ``J_B(p) = J_B^v - [p]_x J_B^w``, computed for all contacts at once.  ``M^-1`` is
:func:`sinews.minverse` (one O(n^2) kernel, no dense inversion).

Joint limits become unilateral rows ``L`` (``+e_k`` at a lower limit, ``-e_k`` at an upper one,
distance ``phi_L`` = the gap to the limit), for joints whose coordinates are their velocities
(revolute, prismatic, helical, planar, multi-axis).  Bilateral constraints of
``scene.constraints`` (a :class:`~sinews.constraints.ConstraintSet`: loops, point contacts,
custom, coordinate) become equality rows ``G`` with position errors ``phi_G``.

:class:`ContactProblem` holds these and builds each solver's input:

* :meth:`~ContactProblem.fclib_problem` -- the FCLib local problem ``u = W r + q`` with the
  bilateral rows eliminated through the projected inverse inertia
  ``C = M^-1 - M^-1 G^T (G M^-1 G^T)^+ G M^-1`` (the bilateral impulses follow from ``r``);
* :meth:`~ContactProblem.drake_problem` -- Drake's :class:`~sinews.contact.VelProblemData` with a
  polygonal cone of ``r`` spanning directions (``2 r`` edges) per contact, limits as ``L`` and
  the bilateral rows as ``G``;
* :meth:`~ContactProblem.simbody_rows` -- the stacked rows and ``A = G M^-1 G^T`` of Simbody's
  impulse solvers (multiplier sign convention: generalized impulse ``-G^T pi``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..geometry.contacts import Contacts

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..contact.constraint_solver import VelProblemData
    from ..contact.fclib import FrictionContactProblem
    from ..model import Model
    from .scene import Scene

__all__ = ["ContactProblem", "build_contact_problem", "tangent_basis", "polygonal_directions",
           "passive_joint_forces"]


def tangent_basis(normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit tangents ``(t1, t2)`` (k, 3) with ``(n, t1, t2)`` right-handed, chosen
    deterministically (t1 orthogonal to the world axis least aligned with n)."""
    n = np.asarray(normals, dtype=float).reshape(-1, 3)
    a = np.abs(n)
    ref = np.zeros_like(n)
    ref[np.arange(len(n)), np.argmin(a, axis=1)] = 1.0
    t1 = _cross(n, ref)
    t1 /= np.sqrt((t1 * t1).sum(axis=1))[:, None]
    return t1, _cross(n, t1)


def _cross(a, b):
    """Row-wise cross products of (k, 3) arrays (cheaper than np.cross on small arrays)."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def polygonal_directions(r: int) -> np.ndarray:
    """The ``r`` spanning directions (r, 2) in the (t1, t2) plane of a polygonal cone with 2 r
    edges (the negated directions are the other r edges): angles ``pi k / r``."""
    ang = np.pi * np.arange(r) / r
    return np.stack([np.cos(ang), np.sin(ang)], axis=1)


@dataclass
class ContactProblem:
    """The linearised contact problem of one time step (see the module docstring).

    Attributes:
        contacts: the :class:`~sinews.geometry.Contacts` (k points).
        h: time step.
        M, Minv: (nv, nv) inertia and its inverse at q.
        v, v_free: (nv,) velocity now and at the end of the step without constraint impulses.
        J: (3k, nv) contact rows [n, t1, t2] per contact.
        t1, t2: (k, 3) tangents.
        L: (nl, nv) joint-limit rows; phi_L (nl,) gaps; limit_index (nl,) velocity index.
        G: (nb, nv) bilateral rows; phi_G (nb,) position errors.
    """

    contacts: Contacts
    h: float
    M: np.ndarray
    Minv: np.ndarray
    v: np.ndarray
    v_free: np.ndarray
    J: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    L: np.ndarray
    phi_L: np.ndarray
    limit_index: np.ndarray
    G: np.ndarray
    phi_G: np.ndarray

    @property
    def num_contacts(self) -> int:
        return len(self.contacts)

    @property
    def normal_rows(self) -> np.ndarray:
        """(k, nv) normal rows of J."""
        return self.J[0::3]

    @property
    def tangent_rows(self) -> np.ndarray:
        """(2k, nv) tangent rows [t1, t2] per contact."""
        k = self.num_contacts
        nv = self.M.shape[0]
        return self.J.reshape(k, 3, nv)[:, 1:, :].reshape(2 * k, nv)

    def _apply_minv(self, B):
        return self.Minv @ np.asarray(B, dtype=float)

    def delassus(self, J: np.ndarray | None = None) -> np.ndarray:
        """``W = J M^-1 J^T`` (default J: the contact rows)."""
        J = self.J if J is None else J
        return J @ self.Minv @ J.T

    # ------------------------------------------------------------------ bilateral elimination
    def projected(self, rhs_G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(C, v_b)``: the projected inverse inertia and the free velocity that satisfies the
        bilateral rows ``G v = rhs_G`` (``C = M^-1`` and ``v_b = v_free`` without rows)."""
        if self.G.shape[0] == 0:
            return self.Minv, self.v_free
        MG = self.Minv @ self.G.T
        D = self.G @ MG
        Dp = np.linalg.pinv(D, rcond=1e-12, hermitian=True)
        C = self.Minv - MG @ Dp @ MG.T
        C = 0.5 * (C + C.T)
        v_b = self.v_free - MG @ (Dp @ (self.G @ self.v_free - rhs_G))
        return C, v_b

    def bilateral_impulse(self, v_plus: np.ndarray, v_unconstrained: np.ndarray) -> np.ndarray:
        """Bilateral impulses ``r_G`` from ``M (v+ - v_unc) = G^T r_G`` (least squares)."""
        if self.G.shape[0] == 0:
            return np.zeros(0)
        rhs = self.M @ (v_plus - v_unconstrained)
        return np.linalg.lstsq(self.G.T, rhs, rcond=None)[0]

    # ------------------------------------------------------------------ solver inputs
    def fclib_problem(self, q_offset: np.ndarray, rhs_G: np.ndarray, limit_rows: bool = True
                      ) -> tuple[FrictionContactProblem, np.ndarray, np.ndarray, np.ndarray]:
        """The FCLib problem ``u = W r + q`` over contacts and (as frictionless 3-row contacts)
        joint limits, after bilateral elimination.  ``q_offset``: (k + nl,) added to the normal
        entries of q (stabilisation, speculative gaps, restitution).  Returns
        ``(problem, Jall, C, v_b)`` where ``Jall`` are the 3 (k + nl) rows used."""
        from ..contact.fclib import FrictionContactProblem

        C, v_b = self.projected(rhs_G)
        J = self.J
        mu = self.contacts.friction
        if limit_rows and self.L.shape[0]:
            nl = self.L.shape[0]
            # a limit is a frictionless "contact" whose tangent rows repeat the normal row (mu = 0
            # forces their reactions to zero; repeating keeps W's diagonal positive)
            Lrows = np.repeat(self.L, 3, axis=0)
            J = np.vstack([J, Lrows])
            mu = np.concatenate([mu, np.zeros(nl)])
        W = J @ C @ J.T
        W = 0.5 * (W + W.T)
        # rows the system cannot move (a tangent of a body on a rail): their reaction has no
        # effect; a tiny diagonal keeps the solvers' W_ii > 0
        d = np.diag(W).copy()
        tiny = d <= 1e-12 * max(1.0, float(d.max(initial=0.0)))
        if tiny.any():
            W[tiny, tiny] += 1e-9 * max(1.0, float(d.max(initial=0.0)))
        q = J @ v_b
        q[0::3] += q_offset
        return FrictionContactProblem(W, q, mu), J, C, v_b

    def drake_problem(self, r: int, kN: np.ndarray, gammaN: np.ndarray, kL: np.ndarray, gammaL: np.ndarray,
                      kG: np.ndarray, gammaF: np.ndarray | None = None, gammaE: np.ndarray | None = None
                      ) -> VelProblemData:
        """Drake's :class:`~sinews.contact.VelProblemData` for the time-stepping LCP with ``r``
        spanning directions per contact (a polygonal cone of 2 r edges) and force unknowns:
        ``Mv = M v_free`` (= M v + h (tau - C))."""
        from ..contact.constraint_solver import VelProblemData

        k = self.num_contacts
        dirs = polygonal_directions(r)
        nv = self.M.shape[0]
        Jr = self.J.reshape(k, 3, nv)
        F = np.einsum("dj,kjn->kdn", dirs, Jr[:, 1:, :]).reshape(k * r, nv)
        nr = k * r
        return VelProblemData(
            # M^-1 is known (sinews.minverse): a product, not a Cholesky solve per column block
            Mv=self.M @ self.v_free, solve_inertia=self._apply_minv,
            N=self.normal_rows.copy(), kN=kN, gammaN=gammaN,
            F=F, kF=np.zeros(nr), gammaF=np.zeros(nr) if gammaF is None else gammaF,
            gammaE=np.zeros(k) if gammaE is None else gammaE,
            L=self.L, kL=kL, gammaL=gammaL,
            G=self.G, kG=kG,
            mu=self.contacts.friction, r=np.full(k, r, dtype=np.int64),
        )


def joint_tables(model):
    """Per-model constants read once (the model is immutable once compiled): the limited
    coordinates ``(iq, iv, lower, upper)`` of 1:1 q/v joints with a finite limit, and the
    damping and dry-friction vectors (``None`` when all zero).  Cached on the model's compiled
    data."""
    c = model.compiled
    cached = getattr(c, "_sinews_sim_joint_tables", None)
    if cached is not None:
        return cached
    lower = getattr(model, "lower_position_limit", None)
    upper = getattr(model, "upper_position_limit", None)
    lim = []
    if lower is not None:
        for body in model.bodies[1:]:
            j = body.joint
            if j is None or j.nv == 0 or j.nq != j.nv:
                continue
            for k in range(j.nq):
                iq, iv = body.idx_q + k, body.idx_v + k
                if np.isfinite(lower[iq]) or np.isfinite(upper[iq]):
                    lim.append((iq, iv, lower[iq], upper[iq]))
    lim = np.array(lim, dtype=float).reshape(-1, 4)
    d = getattr(model, "damping", None)
    f = getattr(model, "friction", None)
    out = (lim, d if d is not None and np.any(d) else None, f if f is not None and np.any(f) else None)
    c._sinews_sim_joint_tables = out
    return out


def _limit_rows(model, q, margin):
    """Rows for the joint coordinates within ``margin`` of a limit (1:1 q/v joints only)."""
    lim = joint_tables(model)[0]
    nv = model.nv
    if not len(lim):
        return np.zeros((0, nv)), np.zeros(0), np.zeros(0, dtype=np.int64)
    iq = lim[:, 0].astype(np.int64)
    iv = lim[:, 1].astype(np.int64)
    gap_lo = q[iq] - lim[:, 2]
    gap_hi = lim[:, 3] - q[iq]
    lo = np.isfinite(gap_lo) & (gap_lo <= margin)
    hi = np.isfinite(gap_hi) & (gap_hi <= margin)
    idx = np.concatenate([iv[lo], iv[hi]])
    gaps = np.concatenate([gap_lo[lo], gap_hi[hi]])
    sign = np.concatenate([np.ones(lo.sum()), -np.ones(hi.sum())])
    L = np.zeros((len(idx), nv))
    L[np.arange(len(idx)), idx] = sign
    return L, gaps, idx


def passive_joint_forces(model: Model, q: np.ndarray, v: np.ndarray, tau: np.ndarray, h: float,
                         M_diag: np.ndarray) -> np.ndarray:
    """``tau`` (nv,) plus joint damping and dry joint friction (C1 names ``damping``, ``friction``)
    at ``q`` (nq,), ``v`` (nv,) over a step ``h``; ``M_diag`` (nv,) is the mass matrix diagonal.

    Damping ``-d v`` is made stable for any step by the diagonal implicit factor
    ``1 / (1 + h d / M_kk)``.  Dry friction opposes the velocity predicted at the end of the step
    without it, ``v_pred = v + h M^-1 (tau - C)``, with at most ``friction`` and at most what stops
    the coordinate within the step (``M_kk |v_pred| / h``): a joint at rest under a load below
    its friction stays at rest (exact for one degree of freedom; a diagonal approximation of the
    coupled problem otherwise).
    """
    from ..aba import aba

    _, d, f = joint_tables(model)
    tau = np.array(tau, dtype=float)
    if d is not None:
        tau -= d * v / (1.0 + h * d / M_diag)
    if f is not None:
        v_pred = v + h * aba(model, q, v, tau)
        stop = M_diag * np.abs(v_pred) / h
        tau -= np.sign(v_pred) * np.minimum(f, stop)
    return tau


def speculative_margin(scene, v, h) -> float:
    """Detection margin of one step: ``scene.margin`` plus how far any geometry can move in the
    step, bounded by ``2 h max|v| max(1, 2 R)`` (``R`` the largest bounding radius of a finite
    geometry), so that a fast body cannot cross a contact between two detections."""
    R = scene._bounding_radius()
    return scene.margin + 2.0 * h * float(np.max(np.abs(v), initial=0.0)) * max(1.0, 2.0 * R)


def build_contact_problem(scene: Scene, q: ArrayLike, v: ArrayLike, tau: ArrayLike, h: float,
                          contacts: Contacts | None = None, limit_margin: float | None = None) -> ContactProblem:
    """Assemble the :class:`ContactProblem` of ``scene`` at ``(q, v)`` with joint forces ``tau``
    and time step ``h`` (contacts found with ``scene.collide(q)`` unless given)."""
    from ..aba import aba
    from ..crba import crba
    from ..kinematics import body_jacobian
    from ..minv import minverse

    model = scene.model
    nv = model.nv
    if contacts is None:
        contacts = scene.collide(q, speculative_margin(scene, v, h))
    M = crba(model, q)
    Minv = minverse(model, q)
    Minv = 0.5 * (Minv + Minv.T)
    tau = passive_joint_forces(model, q, v, tau, h, np.diag(M))
    v_free = v + h * aba(model, q, v, tau)
    k = len(contacts)
    if k:
        body_of_geom = scene._tables()[1]
        ba = body_of_geom[contacts.geom_a]
        bb = body_of_geom[contacts.geom_b]
        J6 = {}
        for b in sorted(set(ba.tolist()) | set(bb.tolist())):
            J6[b] = np.zeros((6, nv)) if b == 0 else body_jacobian(model, q, b, "world")
        p = contacts.points

        px, py, pz = p[:, 0, None], p[:, 1, None], p[:, 2, None]

        def point_jac(bodies):
            Jw = np.stack([J6[b] for b in bodies.tolist()])  # (k, 6, nv)
            # v_p = v_o + w x p  ->  columns: Jv + Jw x p
            wx, wy, wz = Jw[:, 0, :], Jw[:, 1, :], Jw[:, 2, :]
            out = Jw[:, 3:, :].copy()
            out[:, 0, :] += wy * pz - wz * py
            out[:, 1, :] += wz * px - wx * pz
            out[:, 2, :] += wx * py - wy * px
            return out

        Jrel = point_jac(bb) - point_jac(ba)  # (k, 3, nv)
        n = contacts.normals
        t1, t2 = tangent_basis(n)
        frame = np.stack([n, t1, t2], axis=1)  # (k, 3, 3) rows n, t1, t2
        J = np.einsum("kij,kjn->kin", frame, Jrel).reshape(3 * k, nv)
    else:
        J = np.zeros((0, nv))
        t1 = t2 = np.zeros((0, 3))
    margin = scene.margin if limit_margin is None else limit_margin
    L, phi_L, idx = _limit_rows(model, q, margin)
    cs = scene.constraints
    if cs is not None and cs.size:
        from ..constraints import constraint_jacobian, constraint_position_error

        G = constraint_jacobian(model, q, cs)
        phi_G = constraint_position_error(model, q, cs)
    else:
        G, phi_G = np.zeros((0, nv)), np.zeros(0)
    return ContactProblem(contacts, h, M, Minv, v, v_free, J, t1, t2, L, phi_L, idx, G, phi_G)
