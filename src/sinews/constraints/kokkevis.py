"""Kokkevis' method: constrained forward dynamics from test forces through the ABA.

1. ``qdd0 = ABA(q, v, tau, f_ext)``, the unconstrained accelerations;
2. for every row i, apply the row's *unit test wrenches* (the wrenches a multiplier
   ``lambda_i = 1`` exerts on the bodies involved, see ``Constraint.wrench_entries``) as
   external forces and run the ABA with zero velocity and no gravity: this gives
   ``dqdd_i = H^-1 G_i^T`` (Featherstone's articulated inertias at work, O(n) per row);
3. ``K = G [dqdd_1 ... dqdd_c]`` (= ``G H^-1 G^T``), and ``K lambda = gamma - G qdd0``;
4. ``qdd = ABA(q, v, tau, f_ext + sum_i lambda_i * test wrenches_i)``: a final ABA pass with the
   constraint forces applied as external forces.

Works for every constraint type that reports its wrenches (contacts, loops and custom
constraints implementing ``wrench_entries``), not only contacts as in RBDL.  Needs every
subtree to have mass (the ABA's ``D = S^T IA S`` must be invertible): a massless leaf body
raises ``ValueError``.  Redundant rows make ``K`` singular: minimum-norm least-squares
``lambda``, flagged.

Source: Kokkevis & Metaxas, "Practical physics for articulated characters", GDC 2004; RBDL
``ForwardDynamicsContactsKokkevis`` (rbdl.md section 2.4); Featherstone RBDA section 7.3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..aba import _run
from ..algorithms import get_data, link_forces
from ._callbacks import wrench_entries_of
from .constraint import ContactConstraint
from ._linalg import cross3, solve_psd
from . import _thin
from ._thin import compress_rows, is_thin

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..model import Data, Model
    from ._kinematics import ConstraintKinematics
    from .constraint import WrenchEntry
    from .constraint_set import ConstraintSet

__all__ = ["solve_kokkevis", "entries_to_body_forces"]


def entries_to_body_forces(model: Model, kin: ConstraintKinematics, entries: Iterable[WrenchEntry],
                           out: np.ndarray | None = None, scale: float = 1.0) -> np.ndarray:
    """Add wrench entries (world axes, about their points) to ``out[body]`` as body-frame wrenches
    about the body origins (the ``f_ext`` convention); the world's entries are dropped.
    ``out``: ``(nbodies, 6)`` (returned; new when ``None``)."""
    if out is None:
        out = np.zeros((model.nbodies, 6))
    for e in entries:
        if e.body == 0:
            continue
        R, o = kin.body_pose(e.body)
        m, f = scale * e.wrench[:3], scale * e.wrench[3:]
        out[e.body, 3:] += R.T @ f
        out[e.body, :3] += R.T @ (m + cross3(e.p_world_frame - o, f))
    return out


def _entries_to_link_forces(kin, entries, out):
    """Add wrench entries to ``out`` (nlinks x 6): link axes, about the link origins (the
    kernels' external-force layout); entries on the world or on bodies welded to it drop out."""
    lob = kin.model.compiled.link_of_body
    for e in entries:
        k = lob[e.body]
        if k < 0:
            continue
        Rt = kin.oR[k].T
        f = e.wrench[3:]
        out[k, 3:] += Rt @ f
        out[k, :3] += Rt @ (e.wrench[:3] + cross3(e.p_world_frame - kin.op[k], f))
    return out


def _test_wrenches(model, kin, cs, rows):
    """(rows, nlinks, 6): the unit test wrenches of every row (kernel link layout).  In large
    sets (``rows >= THIN_MIN_ROWS``) the point-contact rows are done at once: a unit force
    ``n`` at the world point ``x`` of link k is ``[R_k^T ((x - o_k) x n); R_k^T n]`` on link k
    (the ground's ``-n`` drops out); the same numbers as the groups' ``wrench_entries`` up to
    rounding."""
    tests = np.zeros((rows, model.compiled.nlinks, 6))
    b = getattr(cs, "_contact_batch", None)
    if b is not None and len(b.rows) and model.compiled.nlinks and rows >= _thin.THIN_MIN_ROWS:
        k, oR, op, x = b._points(kin)
        pr = b.point_of_row
        moving = b.link_of_row >= 0
        r, kr, pr = b.rows[moving], b.link_of_row[moving], pr[moving]
        n = b.N[moving]
        Rt = np.transpose(oR[pr], (0, 2, 1))
        tests[r, kr, 3:] = np.einsum("rij,rj->ri", Rt, n)
        tests[r, kr, :3] = np.einsum("rij,rj->ri", Rt, np.cross(x[pr] - op[pr], n))
        others = [g for g in cs.groups if type(g) is not ContactConstraint]
    else:
        others = cs.groups
    what = "method='kokkevis' needs the wrenches of every group (use another method)"
    for g in others:
        for i in range(g.size):
            e = np.zeros(g.size)
            e[i] = 1.0
            _entries_to_link_forces(kin, wrench_entries_of(g, kin, e, what), tests[g.row_start + i])
    return tests


def _responses(model, d, q, tests):
    """``H^-1 J^T f`` for every test wrench ``f`` (columns): ABA with zero velocity, no
    gravity and zero tau."""
    c = model.compiled
    zero_v = np.zeros(c.nv)
    D = np.empty((c.nv, tests.shape[0]))
    for r in range(tests.shape[0]):
        D[:, r] = _run(model, d, q, zero_v, zero_v, tests[r].copy(), 1 | 2 | 4, np.empty(c.nv))
    return D


def solve_kokkevis(model: Model, kin: ConstraintKinematics, tau: np.ndarray, cs: ConstraintSet, G: np.ndarray,
                   gamma: np.ndarray, f_ext: object = None, data: Data | None = None,
                   ) -> tuple[np.ndarray, np.ndarray, dict]:
    """``(qdd (nv,), lambda (c,), info)``; ``kin`` holds ``(q (nq,), v (nv,))``, ``tau (nv,)``,
    ``G (c, nv)`` and ``gamma (c,)`` are the system's.

    Sets with many more rows than coordinates (:mod:`sinews.constraints._thin`) are solved on
    their compressed rows ``R = Q^T G``, whose test wrenches are the same combinations
    ``Q^T`` of the rows' test wrenches: nv test solves instead of one per row, and no
    rows x rows matrix."""
    d = get_data(model, data)
    c = model.compiled
    q, v = kin.q, kin.v
    F_user, flag = link_forces(model, d, f_ext)
    F_user = F_user.copy() if flag else np.zeros((c.nlinks, 6))
    qdd0 = _run(model, d, q, v, tau, F_user.copy(), 1, np.empty(c.nv))
    rows = G.shape[0]
    tests = _test_wrenches(model, kin, cs, rows)
    b = gamma - G @ qdd0
    thin = is_thin(rows, c.nv)
    if thin:
        comp = compress_rows(G)
        G, b = comp.R, comp.qt(b)
        tests = comp.qt(tests.reshape(rows, -1)).reshape(-1, c.nlinks, 6)
    D = _responses(model, d, q, tests)
    K = G @ D
    lam, full, rank = solve_psd(0.5 * (K + K.T), b)
    F_total = F_user + np.tensordot(lam, tests, axes=1) if G.shape[0] else F_user
    if np.isfinite(F_total).all():
        qdd = _run(model, d, q, v, tau, np.ascontiguousarray(F_total), 1, np.empty(c.nv))
    else:  # overflow (inputs of extreme magnitude): a non-finite answer the caller reports
        qdd = np.full(c.nv, np.nan)
    if thin:
        return qdd, comp.q(lam), {"rank": rank, "least_squares": True}
    return qdd, lam, {"rank": rank, "least_squares": not full}
