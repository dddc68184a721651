"""Tree-augmented (TA) forward dynamics: the spanning tree's O(N) articulated-body algorithm
augmented with the loop-closure (and other bilateral) constraint forces.

At state ``(q, v)`` with joint forces ``tau`` and external wrenches ``f_ext``, solve

    M qdd + C = tau + G^T lambda,      G qdd = gamma - D phidot - K phi

without ever forming the mass matrix ``M``:

1. **tree step**: ``qdd_f = ABA(q, v, tau, f_ext)``, the free (unconstrained) accelerations;
   the ABA's articulated inertias ``IA_i``, ``U_i = IA_i S_i`` and ``D_i^-1`` are kept;
2. **constraint acceleration error**: ``eps = G qdd_f - gamma`` (computed from the free link
   accelerations of the constraint bodies: the relative acceleration across each loop cut,
   ``G qdd + dG/dt v``), plus Baumgarte: ``rhs = -eps - D phidot - K phi``;
3. **operational-space compliance**: ``Lambda = G M^-1 G^T``, one column per constraint row
   ``r`` from a *test-input sweep* through the stored articulated inertias (Featherstone RBDA
   section 7.3 / 8.2): apply the row's unit node wrenches (``+d_r`` at the successor node,
   ``-d_r`` at the predecessor node; a coordinate row applies generalized forces), propagate
   ``u = tau - S^T pA``, ``pA_parent += X^* (pA + U D^-1 u)`` from the constraint bodies to
   the root, then ``qdd = D^-1 (u - U^T X a_parent)`` back down, and read the nodes'
   accelerations: ``Lambda[:, r] = G M^-1 G_r^T``.  Only the *active* links (the constraint
   bodies and their ancestors) are visited, so a column costs O(depth) and ``Lambda`` costs
   O(rows * N) -- no O(N^2) mass matrix and no O(N^3) factorisation;
4. **multipliers**: ``Lambda lambda = rhs`` by Cholesky; redundant loops make ``Lambda``
   singular: then the minimum-norm least-squares ``lambda`` (symmetric eigendecomposition),
   flagged ``least_squares=True`` with ``rank < rows``.  Rows of ``G`` that are zero up to
   rounding (``max |G_r| <= ZERO_ROW_RTOL max(1, max |G|)``: the out-of-plane rows of a planar
   mechanism closed by a ``pin`` loop joint, a point on the axis of the only joint between the
   bodies) are exactly zero, as for every method
   (:func:`sinews.constraints._linalg.zero_tiny_rows`): their ``Lambda`` rows and columns
   vanish, their minimum-norm multipliers are 0 (the compiled kernel solves the reduced system
   of the other rows by Cholesky and sets them to 0, in the same call) and the rank deficiency
   is reported;
5. **correction sweep**: apply the node forces ``G^T lambda`` (wrenches ``+/- d lambda`` at the
   nodes, generalized forces of coordinate rows) once more through the articulated inertias:
   ``qdd = qdd_f + M^-1 G^T lambda`` (backward over the active links, forward over all links).

Cost: O(N) for the tree, O(rows * depth) for ``Lambda``, O(rows^3) for the small dense solve,
against O(N^2)-O(N^3) for the methods that form ``M`` (``direct``, ``range_space_sparse``,
``null_space``): choose TA for long chains and trees with few loops; for many rows on a short
tree the range-space method's sparse ``L^T L`` is cheaper.  Baumgarte: each group gives
``(K, D)`` = (stiffness, damping); the time-constant form ``T`` gives ``K = 1/T^2``,
``D = 2/T`` (:func:`sinews.constraints._compiled_mixed.baumgarte_gains`).

Paths: sets of point contacts, :class:`~sinews.constraints.LoopConstraint` rows, loops by
joint type (:class:`sinews.loops.LoopJoint`) and
:class:`~sinews.constraints.CoordinateConstraint` rows run the whole algorithm in one compiled
kernel call (:mod:`sinews.constraints._ta_kernels`), zero rows of ``G`` included; genuinely
dependent rows add a least-squares solve and a second kernel call for the correction sweep.  Any other group (custom constraints) takes
the general path here: ``G`` and ``gamma`` from the groups, the free accelerations and the
columns ``M^-1 G_r^T`` from ABA calls (zero velocity, no gravity, ``tau = G_r^T``), the same
steps 2-5 (sets with many more rows than coordinates on their compressed rows ``Q^T G``,
:mod:`sinews.constraints._thin`, as the other methods).  Needs every subtree to have mass (``D_i`` invertible): a massless subtree raises
``ValueError`` (use ``method="direct"``).

Sources: A. Jain, *Robot and Multibody Dynamics: Analysis and Algorithms* (Springer 2011),
ch. 9 "Closed-chain dynamics" (tree-augmented method) and Jain, "Multibody graph
transformations and analysis", Nonlinear Dyn. 67 (2012); Featherstone, *Rigid Body Dynamics
Algorithms* (2008), sections 7.3 and 8.2-8.3 (test forces through the articulated-body
inertias; the operational-space inverse inertia); Kokkevis & Metaxas, GDC 2004.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..aba import _run
from ..algorithms import NO_FORCES, get_data, link_forces
from ._linalg import solve_psd
from ._thin import compress_rows, is_thin

if TYPE_CHECKING:
    from ..model import Data, Model
    from ._kinematics import ConstraintKinematics

__all__ = ["solve_tree_augmented"]


def solve_tree_augmented(model: Model, kin: ConstraintKinematics, tau: np.ndarray, G: np.ndarray, gamma: np.ndarray,
                         f_ext: object = None, data: Data | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """General path of TA: ``(qdd (nv,), lambda (rows,), info)`` for ``tau (nv,)`` and a system with
    rows ``G`` (rows x nv) and right-hand side ``gamma`` (Baumgarte included) at the state of ``kin``."""
    d = get_data(model, data)
    c = model.compiled
    nv = c.nv
    q, v = kin.q, kin.v
    F, flag = link_forces(model, d, f_ext)
    F = F.copy() if flag else NO_FORCES
    # 1. free accelerations
    qdd_f = _run(model, d, q, v, tau, F, flag, np.empty(nv))
    n = G.shape[0]
    if n == 0:
        return qdd_f, np.zeros(0), {"rank": 0, "least_squares": False}
    # 2. constraint acceleration error
    rhs = gamma - G @ qdd_f
    thin = is_thin(n, nv)
    if thin:  # many more rows than coordinates: solve on the compressed rows R = Q^T G
        comp = compress_rows(G)
        G, rhs = comp.R, comp.qt(rhs)
        n = G.shape[0]
    # 3. M^-1 G^T column by column: ABA with tau = G_r, no velocity, no gravity
    zero = np.zeros(nv)
    Minv_GT = np.empty((nv, n))
    for r in range(n):
        Minv_GT[:, r] = _run(model, d, q, zero, np.ascontiguousarray(G[r]), NO_FORCES, 2 | 4, np.empty(nv))
    Lam = G @ Minv_GT
    # 4. multipliers (minimum-norm least squares when redundant)
    lam, full, rank = solve_psd(0.5 * (Lam + Lam.T), rhs)
    # 5. correction
    qdd = qdd_f + Minv_GT @ lam
    if thin:
        return qdd, comp.q(lam), {"rank": rank, "least_squares": True}
    return qdd, lam, {"rank": rank, "least_squares": not full}
