"""Numba kernels of the compiled path of *mixed* constraint sets: point contacts, loop closures
(6-D / 3-D / any constant axes in the predecessor frame) and coordinate constraints together.

Rows come in two kinds (packed by :class:`sinews.constraints._compiled_mixed.CompiledMixed`):

* **pair rows**: a frame P on link ``kP`` and a frame S on link ``kS`` (``-1``: the world) and a
  unit spatial axis ``t = [t_w; t_v]`` in P axes, exactly the rows of
  :class:`~sinews.constraints.LoopConstraint` (a point contact is the pair "world frame at the
  origin, point on the body" with ``t = [0; n]`` and no position error).  With the world axis
  ``d = R_P t``, both bodies taken at the world point ``s`` (the origin of S):

  - ``G v = d . [w_S - w_P; v_S(s) - v_P(s)]`` (= ``phidot``);
  - ``val = d . [al_S - al_P; a_S(s) - a_P(s)] + (w_P x d_w) . (w_S - w_P)
    + 2 (w_P x d_v) . (v_S(s) - v_P(s))`` with classical accelerations: at ``qdd = 0``
    ``val = -gamma``; with the accelerations of any ``qdd``, ``val = G qdd - gamma``;
  - ``phi = t . [e_r; e_t]`` (``e_r = vee(R_PS - R_PS^T) / 2``, ``e_t = R_P^T (s - p)``);
  - the row's wrench: ``+d`` (moment ``d_w`` about ``s``, force ``d_v``) on S, ``-d`` on P;
    its Plucker coordinates at the world origin ``f_O = [d_w + s x d_v; d_v]`` give the
    Jacobian row ``G_j = f_O . S_j`` (world-axes motion subspaces at the origin).

* **coordinate rows**: ``G = e_a - r e_b``, ``gamma = 0``,
  ``phi = q[ia] - r q[ib] - offset``.

Baumgarte, per row, in the (stiffness ``K``, damping ``D``) form:
``G qdd = gamma - D phidot - K phi`` (the time-constant form is ``K = 1/T^2``, ``D = 2/T``).

Sources: RBDL ``LoopConstraint`` (rbdl.md), Featherstone RBDA sections 2 and 8.
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

from .. import _kernels as K
from .._joint_pass import _cross
from .._layout import MI_IV, MI_NV, MI_PARENT, WS_A, WS_OP, WS_OR, WS_STRIDE, WS_V
from ._fast_cholesky import small_cholesky_solve
from ._linalg import ZERO_ROW_RTOL

# ---------------------------------------------------------------------------------------------
# packed layout (see CompiledMixed): pi = int64 header + regions; ps = float64 regions
Q_NQ, Q_NL, Q_NV, Q_NPAIR, Q_NPR, Q_NCR, Q_NACT = 0, 1, 2, 3, 4, 5, 6
Q_MI, Q_LAM, Q_KP, Q_KS, Q_PPTR, Q_SETROW, Q_CIDX, Q_ACT = 7, 8, 9, 10, 11, 12, 13, 14
Q_PF, Q_T, Q_POS, Q_KB, Q_DB, Q_CRAT, Q_WS, Q_NWS = 15, 16, 17, 18, 19, 20, 21, 22
Q_PE, Q_H, Q_C, Q_ZERO, Q_G, Q_BOT, Q_LAM_M, Q_RHS, Q_E, Q_PA, Q_AC, Q_UU, Q_QD, Q_ML, Q_W, Q_PAN, Q_EPS = (
    23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39)
Q_RC = 40  # (rows,): the right-hand side of the kept rows of TA's reduced system
Q_HEADER = 41

PF_STRIDE = 24  # per pair: R_link_P (9), p_link_P (3), R_link_S (9), p_link_S (3)
PE_STRIDE = 48  # per pair, evaluated: R_P, p, R_S, s, wP, wS, vP(s), vS(s), alP, alS, aP(s), aS(s)

F_FEXT, F_IMPULSE, F_ZERO_TARGET = 1, 2, 4  # (the flags of sinews.constraints._fast)


@njit(inline="always", cache=True)
def _frame(ws, k, pf, o):
    """World pose ``(R (9), p (3))`` of the frame stored at ``pf[o:o+12]`` (pose in link
    ``k``; the world pose itself when ``k < 0``)."""
    if k < 0:
        return (pf[o], pf[o + 1], pf[o + 2], pf[o + 3], pf[o + 4], pf[o + 5], pf[o + 6], pf[o + 7], pf[o + 8],
                pf[o + 9], pf[o + 10], pf[o + 11])
    w = k * WS_STRIDE
    a00 = ws[w + WS_OR]
    a01 = ws[w + WS_OR + 1]
    a02 = ws[w + WS_OR + 2]
    a10 = ws[w + WS_OR + 3]
    a11 = ws[w + WS_OR + 4]
    a12 = ws[w + WS_OR + 5]
    a20 = ws[w + WS_OR + 6]
    a21 = ws[w + WS_OR + 7]
    a22 = ws[w + WS_OR + 8]
    b00 = pf[o]
    b01 = pf[o + 1]
    b02 = pf[o + 2]
    b10 = pf[o + 3]
    b11 = pf[o + 4]
    b12 = pf[o + 5]
    b20 = pf[o + 6]
    b21 = pf[o + 7]
    b22 = pf[o + 8]
    x0 = pf[o + 9]
    x1 = pf[o + 10]
    x2 = pf[o + 11]
    return (a00 * b00 + a01 * b10 + a02 * b20, a00 * b01 + a01 * b11 + a02 * b21, a00 * b02 + a01 * b12 + a02 * b22,
            a10 * b00 + a11 * b10 + a12 * b20, a10 * b01 + a11 * b11 + a12 * b21, a10 * b02 + a11 * b12 + a12 * b22,
            a20 * b00 + a21 * b10 + a22 * b20, a20 * b01 + a21 * b11 + a22 * b21, a20 * b02 + a21 * b12 + a22 * b22,
            a00 * x0 + a01 * x1 + a02 * x2 + ws[w + WS_OP], a10 * x0 + a11 * x1 + a12 * x2 + ws[w + WS_OP + 1],
            a20 * x0 + a21 * x1 + a22 * x2 + ws[w + WS_OP + 2])


@njit(inline="always", cache=True)
def eval_pairs(ws, kP, kS, pf, pe, g0, g1, g2, frames):
    """Fill ``pe`` per pair: (with ``frames``) the world poses of P and S, then the angular
    velocity, the velocity at ``s``, the angular acceleration and the classical acceleration
    at ``s`` of both bodies, from the link velocities and accelerations in ``ws`` (whose
    accelerations carry the kernels' ``-g`` base offset: ``g`` is added back; the world is at
    rest)."""
    for p in range(kP.shape[0]):
        e = p * PE_STRIDE
        if frames:
            o = p * PF_STRIDE
            r = _frame(ws, kP[p], pf, o)
            for i in range(12):
                pe[e + i] = r[i]
            r = _frame(ws, kS[p], pf, o + 12)
            for i in range(12):
                pe[e + 12 + i] = r[i]
        s0 = pe[e + 21]
        s1 = pe[e + 22]
        s2 = pe[e + 23]
        for side in range(2):
            k = kP[p] if side == 0 else kS[p]
            b = e + 24 + 3 * side
            if k < 0:
                for t in range(4):
                    pe[b + 6 * t] = 0.0
                    pe[b + 6 * t + 1] = 0.0
                    pe[b + 6 * t + 2] = 0.0
                continue
            w = k * WS_STRIDE
            o00 = ws[w + WS_OR]
            o01 = ws[w + WS_OR + 1]
            o02 = ws[w + WS_OR + 2]
            o10 = ws[w + WS_OR + 3]
            o11 = ws[w + WS_OR + 4]
            o12 = ws[w + WS_OR + 5]
            o20 = ws[w + WS_OR + 6]
            o21 = ws[w + WS_OR + 7]
            o22 = ws[w + WS_OR + 8]
            d0 = s0 - ws[w + WS_OP]
            d1 = s1 - ws[w + WS_OP + 1]
            d2 = s2 - ws[w + WS_OP + 2]
            vl0 = ws[w + WS_V]
            vl1 = ws[w + WS_V + 1]
            vl2 = ws[w + WS_V + 2]
            vl3 = ws[w + WS_V + 3]
            vl4 = ws[w + WS_V + 4]
            vl5 = ws[w + WS_V + 5]
            al0 = ws[w + WS_A]
            al1 = ws[w + WS_A + 1]
            al2 = ws[w + WS_A + 2]
            al3 = ws[w + WS_A + 3]
            al4 = ws[w + WS_A + 4]
            al5 = ws[w + WS_A + 5]
            om0 = o00 * vl0 + o01 * vl1 + o02 * vl2
            om1 = o10 * vl0 + o11 * vl1 + o12 * vl2
            om2 = o20 * vl0 + o21 * vl1 + o22 * vl2
            vo0 = o00 * vl3 + o01 * vl4 + o02 * vl5
            vo1 = o10 * vl3 + o11 * vl4 + o12 * vl5
            vo2 = o20 * vl3 + o21 * vl4 + o22 * vl5
            aw0 = o00 * al0 + o01 * al1 + o02 * al2
            aw1 = o10 * al0 + o11 * al1 + o12 * al2
            aw2 = o20 * al0 + o21 * al1 + o22 * al2
            ao0 = o00 * al3 + o01 * al4 + o02 * al5 + g0
            ao1 = o10 * al3 + o11 * al4 + o12 * al5 + g1
            ao2 = o20 * al3 + o21 * al4 + o22 * al5 + g2
            c0, c1, c2 = _cross(om0, om1, om2, d0, d1, d2)
            u0 = vo0 + c0
            u1 = vo1 + c1
            u2 = vo2 + c2
            x0, x1, x2 = _cross(aw0, aw1, aw2, d0, d1, d2)
            y0, y1, y2 = _cross(om0, om1, om2, u0, u1, u2)
            pe[b] = om0
            pe[b + 1] = om1
            pe[b + 2] = om2
            pe[b + 6] = u0
            pe[b + 7] = u1
            pe[b + 8] = u2
            pe[b + 12] = aw0
            pe[b + 13] = aw1
            pe[b + 14] = aw2
            pe[b + 18] = ao0 + x0 + y0
            pe[b + 19] = ao1 + x1 + y1
            pe[b + 20] = ao2 + x2 + y2


@njit(inline="always", cache=True)
def pair_row(pe, p, T, r, kind):
    """Row ``r`` of pair ``p``: ``(val, phidot, phi, n (3), d (3))`` with the row's world
    spatial direction ``[n; d]`` at ``s`` (see the module docstring).  ``kind``: 0 an axis
    ``T[r]`` of P without position error (contacts), 1 an axis of P with LoopConstraint's
    ``phi``, 3 a screw row (axis ``[0, 0, -pitch, 0, 0, 1]``, ``phi = z_P.(s - p) - pitch *
    angle`` on the nearest branch), 2 a rotation row of a cut joint
    (:class:`sinews.loops.LoopJoint`): ``phi = sum_k c_k a_k.b_k`` over at most two terms
    ``T[r] = (c_1, i_1, j_1, c_2, i_2, j_2)`` with ``a = R_P e_i``, ``b = R_S e_j``, direction
    ``n = sum c b x a`` moving with both frames (``val = n.Dalpha + ndot.Dw``)."""
    e = p * PE_STRIDE
    R00 = pe[e]
    R01 = pe[e + 1]
    R02 = pe[e + 2]
    R10 = pe[e + 3]
    R11 = pe[e + 4]
    R12 = pe[e + 5]
    R20 = pe[e + 6]
    R21 = pe[e + 7]
    R22 = pe[e + 8]
    wp0 = pe[e + 24]
    wp1 = pe[e + 25]
    wp2 = pe[e + 26]
    dom0 = pe[e + 27] - wp0
    dom1 = pe[e + 28] - wp1
    dom2 = pe[e + 29] - wp2
    dal0 = pe[e + 39] - pe[e + 36]
    dal1 = pe[e + 40] - pe[e + 37]
    dal2 = pe[e + 41] - pe[e + 38]
    if kind == 2.0:
        n0 = 0.0
        n1 = 0.0
        n2 = 0.0
        m0 = 0.0
        m1 = 0.0
        m2 = 0.0
        phi = 0.0
        for term in range(2):
            c = T[r, 3 * term]
            if c == 0.0:
                continue
            i = int(T[r, 3 * term + 1])
            j = int(T[r, 3 * term + 2])
            a0 = pe[e + i]
            a1 = pe[e + 3 + i]
            a2 = pe[e + 6 + i]
            b0 = pe[e + 12 + j]
            b1 = pe[e + 15 + j]
            b2 = pe[e + 18 + j]
            x0, x1, x2 = _cross(b0, b1, b2, a0, a1, a2)
            n0 += c * x0
            n1 += c * x1
            n2 += c * x2
            # d/dt (b x a) = (w_S x b) x a + b x (w_P x a)
            u0, u1, u2 = _cross(pe[e + 27], pe[e + 28], pe[e + 29], b0, b1, b2)
            y0, y1, y2 = _cross(u0, u1, u2, a0, a1, a2)
            u0, u1, u2 = _cross(wp0, wp1, wp2, a0, a1, a2)
            z0, z1, z2 = _cross(b0, b1, b2, u0, u1, u2)
            m0 += c * (y0 + z0)
            m1 += c * (y1 + z1)
            m2 += c * (y2 + z2)
            phi += c * (a0 * b0 + a1 * b1 + a2 * b2)
        val = n0 * dal0 + n1 * dal1 + n2 * dal2 + m0 * dom0 + m1 * dom1 + m2 * dom2
        phidot = n0 * dom0 + n1 * dom1 + n2 * dom2
        return val, phidot, phi, n0, n1, n2, 0.0, 0.0, 0.0
    t0 = T[r, 0]
    t1 = T[r, 1]
    t2 = T[r, 2]
    t3 = T[r, 3]
    t4 = T[r, 4]
    t5 = T[r, 5]
    dw0 = R00 * t0 + R01 * t1 + R02 * t2
    dw1 = R10 * t0 + R11 * t1 + R12 * t2
    dw2 = R20 * t0 + R21 * t1 + R22 * t2
    dv0 = R00 * t3 + R01 * t4 + R02 * t5
    dv1 = R10 * t3 + R11 * t4 + R12 * t5
    dv2 = R20 * t3 + R21 * t4 + R22 * t5
    du0 = pe[e + 33] - pe[e + 30]
    du1 = pe[e + 34] - pe[e + 31]
    du2 = pe[e + 35] - pe[e + 32]
    da0 = pe[e + 45] - pe[e + 42]
    da1 = pe[e + 46] - pe[e + 43]
    da2 = pe[e + 47] - pe[e + 44]
    x0, x1, x2 = _cross(wp0, wp1, wp2, dw0, dw1, dw2)
    y0, y1, y2 = _cross(wp0, wp1, wp2, dv0, dv1, dv2)
    val = (dw0 * dal0 + dw1 * dal1 + dw2 * dal2 + dv0 * da0 + dv1 * da1 + dv2 * da2
           + x0 * dom0 + x1 * dom1 + x2 * dom2 + 2.0 * (y0 * du0 + y1 * du1 + y2 * du2))
    phidot = dw0 * dom0 + dw1 * dom1 + dw2 * dom2 + dv0 * du0 + dv1 * du1 + dv2 * du2
    phi = 0.0
    if kind != 0.0:
        S00 = pe[e + 12]
        S01 = pe[e + 13]
        S02 = pe[e + 14]
        S10 = pe[e + 15]
        S11 = pe[e + 16]
        S12 = pe[e + 17]
        S20 = pe[e + 18]
        S21 = pe[e + 19]
        S22 = pe[e + 20]
        # R_PS = R_P^T R_S: the entries used
        m21 = R02 * S01 + R12 * S11 + R22 * S21
        m12 = R01 * S02 + R11 * S12 + R21 * S22
        m02 = R00 * S02 + R10 * S12 + R20 * S22
        m20 = R02 * S00 + R12 * S10 + R22 * S20
        m10 = R01 * S00 + R11 * S10 + R21 * S20
        m01 = R00 * S01 + R10 * S11 + R20 * S21
        ds0 = pe[e + 21] - pe[e + 9]
        ds1 = pe[e + 22] - pe[e + 10]
        ds2 = pe[e + 23] - pe[e + 11]
        et0 = R00 * ds0 + R10 * ds1 + R20 * ds2
        et1 = R01 * ds0 + R11 * ds1 + R21 * ds2
        et2 = R02 * ds0 + R12 * ds1 + R22 * ds2
        if kind == 3.0:
            pitch = -t2
            m00 = R00 * S00 + R10 * S10 + R20 * S20
            phi = et2 - pitch * math.atan2(m10, m00)
            period = 2.0 * math.pi * abs(pitch)
            if period > 0.0:
                phi -= period * math.floor(phi / period + 0.5)
        else:
            phi = (0.5 * (t0 * (m21 - m12) + t1 * (m02 - m20) + t2 * (m10 - m01))
                   + t3 * et0 + t4 * et1 + t5 * et2)
    return val, phidot, phi, dw0, dw1, dw2, dv0, dv1, dv2


@njit(inline="always", cache=True)
def coord_row(q, v, x, cidx, crat, c, with_x):
    """Coordinate row ``c``: ``(G x, phidot, phi)`` (``G x = 0`` unless ``with_x``);
    ``cidx[c] = (a, b, ia, ib)``, ``crat[c] = (ratio, offset)``."""
    a = cidx[c, 0]
    b = cidx[c, 1]
    r = crat[c, 0]
    gx = x[a] - r * x[b] if with_x else 0.0
    return gx, v[a] - r * v[b], q[cidx[c, 2]] - r * q[cidx[c, 3]] - crat[c, 1]


@njit(inline="always", cache=True)
def chol_solve(Km, rhs, mult, n):
    """``Km mult = rhs`` by Cholesky, in place in the lower triangle of ``Km`` (the strict
    upper triangle is not touched).  Returns False when a pivot is below ``CHOL_RTOL``
    relative to the largest diagonal entry (singular or redundant rows)."""
    dmax = 0.0
    for a in range(n):
        if Km[a, a] > dmax:
            dmax = Km[a, a]
    if not dmax > 0.0:
        return n == 0
    return small_cholesky_solve(Km[:n, :n], rhs, mult, dmax)


@njit(inline="always", cache=True)
def zero_rows(G, dead):
    """Rows of ``G`` that are zero up to rounding (``max |G_r| <= ZERO_ROW_RTOL max(1, max |G|)``,
    the test of :func:`sinews.constraints._linalg.zero_tiny_rows`) are set to exactly zero and
    flagged ``dead[r] = 1.0`` (``0.0`` for the others).  Returns their number."""
    gmax = 0.0
    for r in range(G.shape[0]):
        for j in range(G.shape[1]):
            if abs(G[r, j]) > gmax:
                gmax = abs(G[r, j])
    tiny = ZERO_ROW_RTOL * max(1.0, gmax)
    nz = 0
    for r in range(G.shape[0]):
        rmax = 0.0
        for j in range(G.shape[1]):
            if abs(G[r, j]) > rmax:
                rmax = abs(G[r, j])
        if rmax > tiny:
            dead[r] = 0.0
        else:
            dead[r] = 1.0
            nz += 1
            for j in range(G.shape[1]):
                G[r, j] = 0.0
    return nz


@njit(inline="always", cache=True)
def spread(ml, dead, n, nk):
    """Expand the ``nk`` multipliers of the kept rows (``ml[:nk]``, in row order) to all ``n``
    rows in place, ``0`` for the rows flagged in ``dead``: the minimum-norm multipliers of a
    system whose dead rows are zero rows of ``G`` (their ``Lambda`` rows and columns vanish,
    their multipliers do not enter ``G^T lambda``; the least-squares solution of the remaining
    full-rank system plus zeros is the minimum-norm one)."""
    k = nk - 1
    for r in range(n - 1, -1, -1):
        if dead[r] != 0.0:
            ml[r] = 0.0
        else:
            ml[r] = ml[k]
            k -= 1


@njit(inline="always", cache=True)
def views(pi, ps):
    """The regions of the packed arrays (views, no copies)."""
    nl = pi[Q_NL]
    nv = pi[Q_NV]
    npair = pi[Q_NPAIR]
    npr = pi[Q_NPR]
    ncr = pi[Q_NCR]
    n = npr + ncr
    mi = pi[pi[Q_MI] : pi[Q_MI] + nl * 8].reshape((nl, 8))
    lam = pi[pi[Q_LAM] : pi[Q_LAM] + nv]
    kP = pi[pi[Q_KP] : pi[Q_KP] + npair]
    kS = pi[pi[Q_KS] : pi[Q_KS] + npair]
    pptr = pi[pi[Q_PPTR] : pi[Q_PPTR] + npair + 1]
    setrow = pi[pi[Q_SETROW] : pi[Q_SETROW] + n]
    cidx = pi[pi[Q_CIDX] : pi[Q_CIDX] + 4 * ncr].reshape((ncr, 4))
    act = pi[pi[Q_ACT] : pi[Q_ACT] + pi[Q_NACT]]
    pf = ps[pi[Q_PF] : pi[Q_PF] + npair * PF_STRIDE]
    T = ps[pi[Q_T] : pi[Q_T] + 6 * npr].reshape((npr, 6))
    pos = ps[pi[Q_POS] : pi[Q_POS] + npr]
    KB = ps[pi[Q_KB] : pi[Q_KB] + n]
    DB = ps[pi[Q_DB] : pi[Q_DB] + n]
    crat = ps[pi[Q_CRAT] : pi[Q_CRAT] + 2 * ncr].reshape((ncr, 2))
    ws = ps[pi[Q_WS] : pi[Q_WS] + pi[Q_NWS]]
    pe = ps[pi[Q_PE] : pi[Q_PE] + npair * PE_STRIDE]
    return mi, lam, kP, kS, pptr, setrow, cidx, act, pf, T, pos, KB, DB, crat, ws, pe


@njit(inline="always", cache=True)
def scratch(pi, ps):
    """The solver scratch regions of ``ps``."""
    nl = pi[Q_NL]
    nv = pi[Q_NV]
    npr = pi[Q_NPR]
    n = npr + pi[Q_NCR]
    H = ps[pi[Q_H] : pi[Q_H] + nv * nv].reshape((nv, nv))
    C = ps[pi[Q_C] : pi[Q_C] + nv]
    zero = ps[pi[Q_ZERO] : pi[Q_ZERO] + nv]
    G = ps[pi[Q_G] : pi[Q_G] + n * nv].reshape((n, nv))
    bottom = ps[pi[Q_BOT] : pi[Q_BOT] + n]
    Lm = ps[pi[Q_LAM_M] : pi[Q_LAM_M] + n * n].reshape((n, n))
    rhs = ps[pi[Q_RHS] : pi[Q_RHS] + n]
    E = ps[pi[Q_E] : pi[Q_E] + 12 * npr].reshape((npr, 12))
    PA = ps[pi[Q_PA] : pi[Q_PA] + 6 * nl].reshape((nl, 6))
    AC = ps[pi[Q_AC] : pi[Q_AC] + 6 * nl].reshape((nl, 6))
    UU = ps[pi[Q_UU] : pi[Q_UU] + nv]
    QD = ps[pi[Q_QD] : pi[Q_QD] + nv]
    ml = ps[pi[Q_ML] : pi[Q_ML] + n]
    W = ps[pi[Q_W] : pi[Q_W] + n * nv].reshape((n, nv))
    PAN = ps[pi[Q_PAN] : pi[Q_PAN] + n * nl * 6].reshape((n, nl, 6))
    EPS = ps[pi[Q_EPS] : pi[Q_EPS] + n * nv].reshape((n, nv))
    return H, C, zero, G, bottom, Lm, rhs, E, PA, AC, UU, QD, ml, W, PAN, EPS


@njit(inline="always", cache=True)
def check_lengths(q, v, tau, pi):
    """0 or the standard negative code of a wrong length (-11..-13)."""
    if q.shape[0] != pi[Q_NQ]:
        return -11
    if v.shape[0] != pi[Q_NV]:
        return -12
    if tau.shape[0] != pi[Q_NV]:
        return -13
    return 0


@njit(inline="always", cache=True)
def check_state(q, v, tau, fext, flags, pi, mi):
    """0 or the standard negative input code (lengths -11..-13; -1..-4 not finite; quaternion)."""
    code = check_lengths(q, v, tau, pi)
    if code != 0:
        return code
    code = K.check_inputs(q, v, tau, fext, flags & F_FEXT)
    if code == 0:
        code = K.check_q(q, mi)
    return code


@njit(cache=True)
def mixed_range_space(q, v, tau, fext, pi, mf, ps, x, mult, flags):
    """Forward dynamics of a mixed set by the range-space method in one call: joint pass, CRBA
    ``H``, RNEA ``C`` (link accelerations at ``qdd = 0``), the pair and coordinate rows (dense
    ``G``, ``bottom = gamma - D phidot - K phi``), then
     the range-space solve of :func:`sinews.constraints._fast.range_space` (``H = L^T L``
    branch-sparse, ``K = Y^T Y``) on the scratch arrays.
    With ``F_IMPULSE`` (``v`` = ``qd_minus``, ``tau`` unused): the impulse problem
    ``H qd_plus = H qd_minus + G^T mult``, ``G qd_plus = target`` (``target`` in the bottom
    region, packed row order, or zero with ``F_ZERO_TARGET``).
    Rows of ``G`` that are zero up to rounding (:func:`zero_rows`: the out-of-plane rows of a
    planar loop closed by a pin, a point on the axis of the only joint between the bodies) are
    solved here: multiplier 0, the others from the reduced system (the minimum-norm answer);
    the caller flags it (``least_squares``, ``rank`` = the kept rows).
    Returns ``(code, residual, converged, rank)``; code 1 (``H`` singular), 2 (redundant
    non-zero rows), 3 (not finite) hand over to the
    general path."""
    mi, lam, kP, kS, pptr, setrow, cidx, act, pf, T, pos, KB, DB, crat, ws, pe = views(pi, ps)
    H, C, zero, G, bottom, Lm, rhs, E, PA, AC, UU, QD, ml, W, PAN, EPS = scratch(pi, ps)
    impulse = (flags & F_IMPULSE) != 0
    code = check_state(q, v, tau, fext, 0 if impulse else flags, pi, mi)
    if code != 0:
        return code, 0.0, False, 0
    nl = mi.shape[0]
    nv = pi[Q_NV]
    npr = pi[Q_NPR]
    n = npr + pi[Q_NCR]
    if impulse:  # poses only; the target G qd_plus is in bottom (packed order) or zero
        K.joint_pass(q, v, mi, mf, ws, np.int64(2))
        K.crba_core(H, mi, mf, ws)
        if flags & F_ZERO_TARGET:
            for r in range(n):
                bottom[r] = 0.0
    else:
        K.joint_pass(q, v, mi, mf, ws, np.int64(3))
        K.crba_core(H, mi, mf, ws)
        K.rnea_core(zero, fext, C, mi, mf, ws, flags & F_FEXT)
    eval_pairs(ws, kP, kS, pf, pe, mf[0], mf[1], mf[2], True)
    s0_off = nl * WS_STRIDE + 6 * nv  # world-axes S at the origin (left by crba_core)
    for r in range(n):
        for j in range(nv):
            G[r, j] = 0.0
    for p in range(kP.shape[0]):
        e = p * PE_STRIDE
        s0 = pe[e + 21]
        s1 = pe[e + 22]
        s2 = pe[e + 23]
        for r in range(pptr[p], pptr[p + 1]):
            val, phidot, phi, dw0, dw1, dw2, dv0, dv1, dv2 = pair_row(pe, p, T, r, pos[r])
            if not impulse:
                bottom[r] = -val - DB[r] * phidot - KB[r] * phi
            c0, c1, c2 = _cross(s0, s1, s2, dv0, dv1, dv2)
            f0 = dw0 + c0
            f1 = dw1 + c1
            f2 = dw2 + c2
            for side in range(2):
                l = kS[p] if side == 0 else kP[p]
                sg = 1.0 if side == 0 else -1.0
                while l >= 0:
                    iv = mi[l, MI_IV]
                    for i in range(mi[l, MI_NV]):
                        o = s0_off + 6 * (iv + i)
                        G[r, iv + i] += sg * (f0 * ws[o] + f1 * ws[o + 1] + f2 * ws[o + 2]
                                              + dv0 * ws[o + 3] + dv1 * ws[o + 4] + dv2 * ws[o + 5])
                    l = mi[l, MI_PARENT]
    for c in range(n - npr):
        r = npr + c
        gx, phidot, phi = coord_row(q, v, v, cidx, crat, c, False)
        G[r, cidx[c, 0]] += 1.0
        G[r, cidx[c, 1]] -= crat[c, 0]
        if not impulse:
            bottom[r] = -DB[r] * phidot - KB[r] * phi
    # rows of G that are zero up to rounding (a planar loop's out-of-plane rows, a point on the
    # axis of the only joint between the bodies) are exactly zero, as on the general path, and
    # flagged in mult (packed order, overwritten by the answer): the solve runs on the others
    # and gives the dead rows multiplier 0 -- the minimum-norm solution, as the general path's
    # least squares (the caller flags the answer with the returned rank)
    nz = zero_rows(G, mult)
    # range-space solve in the scratch (no allocation): H = L^T L in place, Y = L^-T G^T (rows
    # of W; L^-T only fills towards the root, zero entries are skipped), z = L^-T (tau - C),
    # K = Y^T Y over the kept rows (compacted to the first nk rows of W), K ml = bottom - Y^T z
    # by Cholesky, x = L^-1 (z + Y ml)
    if K.ltl_factor(H, lam) != 0:
        return 1, 0.0, False, n - nz
    for a in range(n):
        for i in range(nv):
            W[a, i] = G[a, i]
        for i in range(nv - 1, -1, -1):
            if W[a, i] == 0.0:
                continue
            W[a, i] /= H[i, i]
            yi = W[a, i]
            j = lam[i]
            while j >= 0:
                W[a, j] -= H[i, j] * yi
                j = lam[j]
    if impulse:  # z = L qd_minus (= L^-T H qd_minus)
        for i in range(nv - 1, -1, -1):
            s = H[i, i] * v[i]
            j = lam[i]
            while j >= 0:
                s += H[i, j] * v[j]
                j = lam[j]
            C[i] = s
    else:
        for i in range(nv):
            C[i] = tau[i] - C[i]
        K.ltl_solve_lt(H, lam, C)
    nk = 0
    for a in range(n):
        if nz and mult[a] != 0.0:
            continue
        if nk != a:
            for i in range(nv):
                W[nk, i] = W[a, i]
        s = 0.0
        for i in range(nv):
            s += W[nk, i] * C[i]
        rhs[nk] = bottom[a] - s
        for b in range(nk + 1):
            s = 0.0
            for i in range(nv):
                s += W[nk, i] * W[b, i]
            Lm[nk, b] = s
        nk += 1
    if not chol_solve(Lm, rhs, ml, nk):
        return 2, 0.0, False, nk
    for i in range(nv):
        x[i] = C[i]
    for a in range(nk):
        ma = ml[a]
        for i in range(nv):
            x[i] += W[a, i] * ma
    K.ltl_solve_l(H, lam, x)
    if nz:
        spread(ml, mult, n, nk)
    res = 0.0
    scale = 0.0
    for r in range(n):
        s = 0.0
        for j in range(nv):
            s += G[r, j] * x[j]
        e = abs(s - bottom[r])
        if e > res:
            res = e
        scale = max(scale, abs(s), abs(bottom[r]))
        mult[setrow[r]] = ml[r]
    for i in range(nv):
        if not math.isfinite(x[i]):
            return 3, res, False, nk
    for r in range(n):
        if not math.isfinite(ml[r]):
            return 3, res, False, nk
    return 0, res, res <= 1e-9 * (1.0 + scale), nk
