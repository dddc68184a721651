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

import numpy as np

from ..aba import _run
from ..algorithms import get_data, link_forces
from ._linalg import cross3, solve_psd

__all__ = ["solve_kokkevis", "entries_to_body_forces"]


def entries_to_body_forces(model, kin, entries, out=None, scale=1.0):
    """Add wrench entries (world axes, about their points) to ``out[body]`` as body-frame wrenches
    about the body origins (the ``f_ext`` convention); the world's entries are dropped."""
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


def _user_forces(model, f_ext):
    if f_ext is None:
        return np.zeros((model.nbodies, 6))
    if isinstance(f_ext, dict):
        F = np.zeros((model.nbodies, 6))
        for key, w in f_ext.items():
            F[model._resolve_body(key, "f_ext key")] += np.asarray(w, dtype=float)
        return F
    return np.array(f_ext, dtype=float)


def solve_kokkevis(model, kin, tau, cs, G, gamma, f_ext=None, data=None):
    """``(qdd, lambda, info)``; ``kin`` holds ``(q, v)``, ``G`` and ``gamma`` are the system's."""
    d = get_data(model, data)
    c = model.compiled
    q, v = kin.q, kin.v
    F_user = _user_forces(model, f_ext)
    Fl, flag = link_forces(model, d, F_user)
    qdd0 = _run(model, d, q, v, tau, Fl.copy(), flag, np.empty(c.nv))
    rows = G.shape[0]
    D = np.empty((c.nv, rows))
    tests = []
    zero_v = np.zeros(c.nv)
    for g in cs.groups:
        for i in range(g.size):
            e = np.zeros(g.size)
            e[i] = 1.0
            Fi = entries_to_body_forces(model, kin, g.wrench_entries(kin, e))
            tests.append(Fi)
            Fli, _ = link_forces(model, d, Fi)
            # zero velocity, no gravity, zero tau: dqdd = H^-1 J^T f_test = H^-1 G_i^T
            D[:, len(tests) - 1] = _run(model, d, q, zero_v, zero_v, Fli.copy(), 1 | 2 | 4, np.empty(c.nv))
    K = G @ D
    lam, full, rank = solve_psd(0.5 * (K + K.T), gamma - G @ qdd0)
    F_total = F_user + np.tensordot(lam, np.array(tests), axes=1) if rows else F_user
    Fl, _ = link_forces(model, d, F_total)
    qdd = _run(model, d, q, v, tau, Fl.copy(), 1, np.empty(c.nv))
    return qdd, lam, {"rank": rank, "least_squares": not full}
