"""Fused Numba kernels for point-contact constraint sets (the common case, made fast).

For a set whose rows are all point contacts ``n_r . v_point(body_r, x_r) = 0`` (world normals
``n_r``, points ``x_r`` fixed on bodies), one kernel call does everything that the generic
Python path assembles piece by piece:

1. ``M`` by the world-frame CRBA (which also leaves world poses and world-axes motion subspaces
   ``S0_j = [w_j; vO_j]`` in the workspace);
2. the bias ``C = C(q, v) v + g`` by RNEA with ``qdd = 0`` (which leaves link velocities and
   velocity-product accelerations, gravity included through the base-acceleration trick);
3. ``G[r, j] = n_r . (vO_j + w_j x p_r) = n_r . vO_j + (p_r x n_r) . w_j`` over the ancestors of
   the contact body, and ``gamma_r = -n_r . a_bias(p_r)`` (classical point acceleration at
   ``qdd = 0`` without gravity: the gravity trick's uniform ``-g`` is added back);
4. the range-space solve with the branch-sparse factor ``M = L^T L`` (Featherstone, RBDA 6.5;
   RBDL ``ForwardDynamicsConstraintsRangeSpaceSparse``):
   ``Y = G L^-1`` (rows ``L^-T g_r``), ``z = L^-T (tau - C)``, ``K = Y Y^T``,
   ``K lambda = gamma - Y z``, ``qdd = L^-1 (z + Y^T lambda)``.

Impulses use the same factor: ``K Lambda = target - G v_minus``,
``v_plus = v_minus + L^-1 Y^T Lambda``.

The result satisfies ``M qdd + C = tau + G^T lambda`` and ``G qdd = gamma`` exactly as the generic
methods do; the tests check agreement with them to 1e-9.  A singular ``K`` (redundant rows) is
reported by a return code so that the caller can fall back to the generic least-squares path.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import _kernels as K
from .._layout import MI_IV, MI_NV, MI_PARENT, WS_A, WS_OP, WS_OR, WS_STRIDE, WS_V


@njit(cache=True)
def _contact_rows(G, gamma, rk, rf, mi, mf, ws, with_gamma):
    """Fill G (m x nv, zeroed here) and, if ``with_gamma``, gamma from the workspace left by
    CRBA (world poses, world S in the U region) and RNEA (velocities, accelerations)."""
    nl = mi.shape[0]
    nv = mi[nl - 1, MI_IV] + mi[nl - 1, MI_NV]
    s0_off = nl * WS_STRIDE + 6 * nv
    g0 = mf[0]
    g1 = mf[1]
    g2 = mf[2]
    m = rk.shape[0]
    for r in range(m):
        for j in range(nv):
            G[r, j] = 0.0
        k = rk[r]
        o = 6 * r
        x0 = rf[o]
        x1 = rf[o + 1]
        x2 = rf[o + 2]
        n0 = rf[o + 3]
        n1 = rf[o + 4]
        n2 = rf[o + 5]
        w = k * WS_STRIDE
        R00 = ws[w + WS_OR]
        R01 = ws[w + WS_OR + 1]
        R02 = ws[w + WS_OR + 2]
        R10 = ws[w + WS_OR + 3]
        R11 = ws[w + WS_OR + 4]
        R12 = ws[w + WS_OR + 5]
        R20 = ws[w + WS_OR + 6]
        R21 = ws[w + WS_OR + 7]
        R22 = ws[w + WS_OR + 8]
        p0 = R00 * x0 + R01 * x1 + R02 * x2 + ws[w + WS_OP]
        p1 = R10 * x0 + R11 * x1 + R12 * x2 + ws[w + WS_OP + 1]
        p2 = R20 * x0 + R21 * x1 + R22 * x2 + ws[w + WS_OP + 2]
        # p x n
        c0 = p1 * n2 - p2 * n1
        c1 = p2 * n0 - p0 * n2
        c2 = p0 * n1 - p1 * n0
        l = k
        while l >= 0:
            iv = mi[l, MI_IV]
            for i in range(mi[l, MI_NV]):
                so = s0_off + 6 * (iv + i)
                G[r, iv + i] = (
                    n0 * ws[so + 3] + n1 * ws[so + 4] + n2 * ws[so + 5]
                    + c0 * ws[so] + c1 * ws[so + 1] + c2 * ws[so + 2]
                )
            l = mi[l, MI_PARENT]
        if with_gamma:
            # classical acceleration of the point (link axes) at qdd = 0
            vw0 = ws[w + WS_V]
            vw1 = ws[w + WS_V + 1]
            vw2 = ws[w + WS_V + 2]
            vv0 = ws[w + WS_V + 3]
            vv1 = ws[w + WS_V + 4]
            vv2 = ws[w + WS_V + 5]
            al0 = ws[w + WS_A]
            al1 = ws[w + WS_A + 1]
            al2 = ws[w + WS_A + 2]
            ao0 = ws[w + WS_A + 3]
            ao1 = ws[w + WS_A + 4]
            ao2 = ws[w + WS_A + 5]
            # u = vo + w x x
            u0 = vv0 + vw1 * x2 - vw2 * x1
            u1 = vv1 + vw2 * x0 - vw0 * x2
            u2 = vv2 + vw0 * x1 - vw1 * x0
            b0 = ao0 + al1 * x2 - al2 * x1 + vw1 * u2 - vw2 * u1
            b1 = ao1 + al2 * x0 - al0 * x2 + vw2 * u0 - vw0 * u2
            b2 = ao2 + al0 * x1 - al1 * x0 + vw0 * u1 - vw1 * u0
            a0 = R00 * b0 + R01 * b1 + R02 * b2 + g0
            a1 = R10 * b0 + R11 * b1 + R12 * b2 + g1
            a2 = R20 * b0 + R21 * b1 + R22 * b2 + g2
            gamma[r] = -(n0 * a0 + n1 * a1 + n2 * a2)


@njit(cache=True)
def _range_space(M, lamdof, G, Y, Kmat, rhs_z, rhs_k, lam, out):
    """Factor M = L^T L in place, then solve the range-space system.  On entry ``rhs_z`` holds
    the dof-space right-hand side and ``rhs_k`` the row-space one; on exit ``lam`` holds the
    multipliers and ``out = L^-1 (L^-T rhs_z + Y^T lam)``.  Returns 0, 1 (M not positive
    definite) or 2 (K singular: redundant rows)."""
    if K.ltl_factor(M, lamdof) != 0:
        return 1
    nv = M.shape[0]
    m = G.shape[0]
    K.ltl_solve_lt(M, lamdof, rhs_z)
    for r in range(m):
        for j in range(nv):
            Y[r, j] = G[r, j]
        K.ltl_solve_lt(M, lamdof, Y[r])
    # K = Y Y^T, rhs = rhs_k - Y z
    scale = 0.0
    for r in range(m):
        acc = rhs_k[r]
        for j in range(nv):
            acc -= Y[r, j] * rhs_z[j]
        lam[r] = acc
        for s in range(r + 1):
            d = 0.0
            for j in range(nv):
                d += Y[r, j] * Y[s, j]
            Kmat[r, s] = d
            Kmat[s, r] = d
        if Kmat[r, r] > scale:
            scale = Kmat[r, r]
    # Cholesky K = C C^T (lower), then solve
    tol = 1e-12 * max(scale, 1e-300)
    for j in range(m):
        d = Kmat[j, j]
        for p in range(j):
            d -= Kmat[j, p] * Kmat[j, p]
        if not d > tol:
            return 2
        d = math.sqrt(d)
        Kmat[j, j] = d
        for i in range(j + 1, m):
            acc = Kmat[i, j]
            for p in range(j):
                acc -= Kmat[i, p] * Kmat[j, p]
            Kmat[i, j] = acc / d
    for i in range(m):
        acc = lam[i]
        for p in range(i):
            acc -= Kmat[i, p] * lam[p]
        lam[i] = acc / Kmat[i, i]
    for i in range(m - 1, -1, -1):
        acc = lam[i]
        for p in range(i + 1, m):
            acc -= Kmat[p, i] * lam[p]
        lam[i] = acc / Kmat[i, i]
    for j in range(nv):
        acc = rhs_z[j]
        for r in range(m):
            acc += Y[r, j] * lam[r]
        out[j] = acc
    K.ltl_solve_l(M, lamdof, out)
    return 0


@njit(cache=True)
def contact_forward_dynamics(q, v, tau, fext, use_fext, rk, rf, M, G, gamma, Y, Kmat, qdd, lam, mi, mf, ws, lamdof):
    """qdd and lam for point contacts; G and gamma are returned too.  ``fext`` (links x 6, link
    axes) is used when ``use_fext``.  Returns 0, -1/-2/-3/-4 for non-finite q/v/tau/f_ext,
    1 (M not positive definite) or 2 (redundant rows)."""
    nv = M.shape[0]
    for i in range(nv):
        for j in range(nv):
            M[i, j] = 0.0
    code = K.crba(q, M, mi, mf, ws)
    if code != 0:
        return -1
    h = np.zeros(nv)
    code = K.rnea(q, v, h, fext, qdd, mi, mf, ws, 1 if use_fext else 0)
    if code != 0:
        return code
    if K.check_finite(tau) >= 0:
        return -3
    _contact_rows(G, gamma, rk, rf, mi, mf, ws, True)
    for j in range(nv):
        h[j] = tau[j] - qdd[j]
    return _range_space(M, lamdof, G, Y, Kmat, h, gamma, lam, qdd)


@njit(cache=True)
def contact_impulses(q, v_minus, target, rk, rf, M, G, Y, Kmat, v_plus, lam, mi, mf, ws, lamdof):
    """Impulses ``lam`` and ``v_plus`` with ``G v_plus = target``.  Returns as above."""
    nv = M.shape[0]
    for i in range(nv):
        for j in range(nv):
            M[i, j] = 0.0
    code = K.crba(q, M, mi, mf, ws)
    if code != 0:
        return -1
    if K.check_finite(v_minus) >= 0:
        return -2
    _contact_rows(G, target, rk, rf, mi, mf, ws, False)
    m = rk.shape[0]
    rhs = np.empty(m)
    for r in range(m):
        acc = target[r]
        for j in range(nv):
            acc -= G[r, j] * v_minus[j]
        rhs[r] = acc
    z = np.zeros(nv)
    code = _range_space(M, lamdof, G, Y, Kmat, z, rhs, lam, v_plus)
    if code != 0:
        return code
    for j in range(nv):
        v_plus[j] += v_minus[j]
    return 0
