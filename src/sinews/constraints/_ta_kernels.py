"""Numba kernels of tree-augmented (TA) forward dynamics on the packed data of a compiled mixed
set (:mod:`sinews.constraints._mixed_kernels`); the algorithm is stated in
:mod:`sinews.constraints.tree_augmented`.

:func:`tree_augmented` does the whole evaluation in one call: ABA for the free accelerations
(its articulated inertias stay in the workspace), the constraint acceleration error, the
operational-space matrix ``Lambda = G M^-1 G^T`` column by column from one test-input sweep
per row over the *active* links only (the links on the paths from the constraint bodies to the
root; the sums of ``Lambda`` accumulated link by link during that sweep, over the active dofs
only), a Cholesky solve and the correction sweep.  Rows of ``G`` that are zero up to rounding
(``max |G_r|`` from :func:`rows_max`) lose their test inputs and are left out of the sweep and
of ``Lambda``: the Cholesky solve runs on the other rows and the zero rows get multiplier 0 (the
minimum-norm answer; the caller reports ``rank`` = the other rows).  When the reduced ``Lambda``
is singular (genuinely dependent rows) it returns code 2 with it and its right-hand side in the
scratch; the caller then solves the minimum-norm least-squares problem and finishes with
:func:`ta_correct`.
"""

from __future__ import annotations

import math

from .._jit import njit

from .. import _kernels as K
from .._checks import NOT_FINITE
from .._joint_pass import _cross, _parent_to_child
from .._layout import MI_IV, MI_NV, MI_PARENT, WS_A, WS_C, WS_DINV, WS_OP, WS_OR, WS_P, WS_R, WS_STRIDE
from ._linalg import ZERO_ROW_RTOL
from ._ta_rows import rows_max
from ._mixed_kernels import (
    PE_STRIDE,
    PF_STRIDE,
    Q_AC,
    Q_ACT,
    Q_BOT,
    Q_CIDX,
    Q_CRAT,
    Q_DB,
    Q_E,
    Q_EPS,
    Q_KB,
    Q_KP,
    Q_KS,
    Q_LAM_M,
    Q_MI,
    Q_ML,
    Q_NACT,
    Q_NCR,
    Q_NL,
    Q_NPAIR,
    Q_NPR,
    Q_NV,
    Q_NWS,
    Q_PAN,
    Q_PE,
    Q_PF,
    Q_POS,
    Q_PPTR,
    Q_QD,
    Q_RC,
    Q_RHS,
    Q_SETROW,
    Q_T,
    Q_UU,
    Q_W,
    Q_WS,
    check_lengths,
    chol_solve,
    coord_row,
    eval_pairs,
    pair_row,
    spread,
)

_FAR = 1e150  # (1e150)^2 * mass is still finite: the range of the world-axes methods


# ---------------------------------------------------------------------------------------------
# sweeps through the articulated inertias left by the ABA


@njit(inline="always", cache=True)
def world_poses(mi, ws, act):
    """World poses ``(oR, op)`` of the links in ``act`` (topological order, closed under
    parents) from their poses in their parents."""
    for t in range(act.shape[0]):
        k = act[t]
        w = k * WS_STRIDE
        par = mi[k, MI_PARENT]
        if par < 0:
            for i in range(9):
                ws[w + WS_OR + i] = ws[w + WS_R + i]
            for i in range(3):
                ws[w + WS_OP + i] = ws[w + WS_P + i]
            continue
        wp = par * WS_STRIDE
        for i in range(3):
            a0 = ws[wp + WS_OR + 3 * i]
            a1 = ws[wp + WS_OR + 3 * i + 1]
            a2 = ws[wp + WS_OR + 3 * i + 2]
            for j in range(3):
                ws[w + WS_OR + 3 * i + j] = a0 * ws[w + WS_R + j] + a1 * ws[w + WS_R + 3 + j] + a2 * ws[w + WS_R + 6 + j]
            ws[w + WS_OP + i] = ws[wp + WS_OP + i] + a0 * ws[w + WS_P] + a1 * ws[w + WS_P + 1] + a2 * ws[w + WS_P + 2]


@njit(inline="always", cache=True)
def link_wrench(ws, k, sign, s0, s1, s2, dw0, dw1, dw2, dv0, dv1, dv2):
    """The wrench ``sign * [d_w (about s); d_v]`` in link ``k``'s axes about its origin."""
    w = k * WS_STRIDE
    r0 = s0 - ws[w + WS_OP]
    r1 = s1 - ws[w + WS_OP + 1]
    r2 = s2 - ws[w + WS_OP + 2]
    c0, c1, c2 = _cross(r0, r1, r2, dv0, dv1, dv2)
    n0 = sign * (dw0 + c0)
    n1 = sign * (dw1 + c1)
    n2 = sign * (dw2 + c2)
    f0 = sign * dv0
    f1 = sign * dv1
    f2 = sign * dv2
    o = w + WS_OR
    return (ws[o] * n0 + ws[o + 3] * n1 + ws[o + 6] * n2, ws[o + 1] * n0 + ws[o + 4] * n1 + ws[o + 7] * n2,
            ws[o + 2] * n0 + ws[o + 5] * n1 + ws[o + 8] * n2, ws[o] * f0 + ws[o + 3] * f1 + ws[o + 6] * f2,
            ws[o + 1] * f0 + ws[o + 4] * f1 + ws[o + 7] * f2, ws[o + 2] * f0 + ws[o + 5] * f1 + ws[o + 8] * f2)


@njit(inline="always", cache=True)
def forward(mi, ws, nv, act, full, AC, UU, QD):
    """Forward sweep from innovations ``UU`` (zero outside the active links): over ``act`` (or
    every link with ``full``) ``a = X a_parent``, ``qdd = D^-1 (u - U^T a)``, ``a += S qdd``.
    Leaves the link accelerations in ``AC`` and the joint accelerations in ``QD``
    (``= M^-1 (tau + J^T f)`` of the inputs behind ``UU``).  ``UU`` is used as scratch."""
    nl = mi.shape[0]
    s_off = nl * WS_STRIDE
    u6_off = s_off + 6 * nv
    n = nl if full else act.shape[0]
    for t in range(n):
        k = t if full else act[t]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        par = mi[k, MI_PARENT]
        if par >= 0:
            aw0, aw1, aw2, av0, av1, av2 = _parent_to_child(
                ws[w + WS_R], ws[w + WS_R + 1], ws[w + WS_R + 2], ws[w + WS_R + 3], ws[w + WS_R + 4],
                ws[w + WS_R + 5], ws[w + WS_R + 6], ws[w + WS_R + 7], ws[w + WS_R + 8],
                ws[w + WS_P], ws[w + WS_P + 1], ws[w + WS_P + 2],
                AC[par, 0], AC[par, 1], AC[par, 2], AC[par, 3], AC[par, 4], AC[par, 5])
        else:
            aw0 = 0.0
            aw1 = 0.0
            aw2 = 0.0
            av0 = 0.0
            av1 = 0.0
            av2 = 0.0
        if nvj == 1:  # (the same operations as below, without the loops)
            uo = u6_off + 6 * iv
            so = s_off + 6 * iv
            s = ws[w + WS_DINV] * (UU[iv] - (ws[uo] * aw0 + ws[uo + 1] * aw1 + ws[uo + 2] * aw2
                                              + ws[uo + 3] * av0 + ws[uo + 4] * av1 + ws[uo + 5] * av2))
            QD[iv] = s
            aw0 += ws[so] * s
            aw1 += ws[so + 1] * s
            aw2 += ws[so + 2] * s
            av0 += ws[so + 3] * s
            av1 += ws[so + 4] * s
            av2 += ws[so + 5] * s
        else:
            for i in range(nvj):
                uo = u6_off + 6 * (iv + i)
                QD[iv + i] = UU[iv + i] - (ws[uo] * aw0 + ws[uo + 1] * aw1 + ws[uo + 2] * aw2
                                           + ws[uo + 3] * av0 + ws[uo + 4] * av1 + ws[uo + 5] * av2)
            for i in range(nvj):
                s = 0.0
                for j in range(nvj):
                    s += ws[w + WS_DINV + nvj * i + j] * QD[iv + j]
                UU[iv + i] = s  # (UU is scratch from here on: it holds qdd)
            for i in range(nvj):
                s = UU[iv + i]
                QD[iv + i] = s
                so = s_off + 6 * (iv + i)
                aw0 += ws[so] * s
                aw1 += ws[so + 1] * s
                aw2 += ws[so + 2] * s
                av0 += ws[so + 3] * s
                av1 += ws[so + 4] * s
                av2 += ws[so + 5] * s
        AC[k, 0] = aw0
        AC[k, 1] = aw1
        AC[k, 2] = aw2
        AC[k, 3] = av0
        AC[k, 4] = av1
        AC[k, 5] = av2


@njit(inline="always", cache=True)
def innovations_rows(mi, ws, nv, act, n, PAN, EPS, W, Lm, inputs):
    """:func:`innovations` for ``n`` test inputs at once (``PAN[r]``: minus the link wrenches
    of input ``r``, ``EPS[r]``: its generalized forces (read only with ``inputs``; zero
    otherwise), replaced by its innovations ``u_r``);
    also ``W_r = D^-1 u_r`` and the lower triangle of ``Lambda[a, c] = sum u_a^T W_c``
    (``Lm``, zeroed by the caller), accumulated link by link as soon as a link's innovations
    are final (its descendants come first), so the sums run over the active dofs only.  Each
    link's transform, ``S``, ``U`` and ``D^-1`` are read once for all inputs, and 1-dof joints
    take a scalar path.  ``PAN`` is cleared as it is read: it is zero at the active links
    again when the sweep ends (the invariant the caller relies on; the scratch starts zero)."""
    nl = mi.shape[0]
    s_off = nl * WS_STRIDE
    u6_off = s_off + 6 * nv
    for t in range(act.shape[0] - 1, -1, -1):
        k = act[t]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        par = mi[k, MI_PARENT]
        R00 = ws[w + WS_R]
        R01 = ws[w + WS_R + 1]
        R02 = ws[w + WS_R + 2]
        R10 = ws[w + WS_R + 3]
        R11 = ws[w + WS_R + 4]
        R12 = ws[w + WS_R + 5]
        R20 = ws[w + WS_R + 6]
        R21 = ws[w + WS_R + 7]
        R22 = ws[w + WS_R + 8]
        P0 = ws[w + WS_P]
        P1 = ws[w + WS_P + 1]
        P2 = ws[w + WS_P + 2]
        if nvj == 1:
            so = s_off + 6 * iv
            uo = u6_off + 6 * iv
            s0 = ws[so]
            s1 = ws[so + 1]
            s2 = ws[so + 2]
            s3 = ws[so + 3]
            s4 = ws[so + 4]
            s5 = ws[so + 5]
            U0 = ws[uo]
            U1 = ws[uo + 1]
            U2 = ws[uo + 2]
            U3 = ws[uo + 3]
            U4 = ws[uo + 4]
            U5 = ws[uo + 5]
            dinv = ws[w + WS_DINV]
        for r in range(n):
            pn0 = PAN[r, k, 0]
            pn1 = PAN[r, k, 1]
            pn2 = PAN[r, k, 2]
            pf0 = PAN[r, k, 3]
            pf1 = PAN[r, k, 4]
            pf2 = PAN[r, k, 5]
            for i in range(6):
                PAN[r, k, i] = 0.0
            if nvj == 1:
                u = (EPS[r, iv] if inputs else 0.0) - (s0 * pn0 + s1 * pn1 + s2 * pn2 + s3 * pf0 + s4 * pf1
                                                      + s5 * pf2)
                EPS[r, iv] = u
                sc = dinv * u
                W[r, iv] = sc
                if par < 0:
                    continue
                pn0 += U0 * sc
                pn1 += U1 * sc
                pn2 += U2 * sc
                pf0 += U3 * sc
                pf1 += U4 * sc
                pf2 += U5 * sc
            else:
                for i in range(nvj):
                    so = s_off + 6 * (iv + i)
                    EPS[r, iv + i] = (EPS[r, iv + i] if inputs else 0.0) - (
                        ws[so] * pn0 + ws[so + 1] * pn1 + ws[so + 2] * pn2
                        + ws[so + 3] * pf0 + ws[so + 4] * pf1 + ws[so + 5] * pf2)
                for i in range(nvj):
                    sc = 0.0
                    for j in range(nvj):
                        sc += ws[w + WS_DINV + nvj * i + j] * EPS[r, iv + j]
                    W[r, iv + i] = sc
                if par < 0:
                    continue
                for i in range(nvj):
                    sc = W[r, iv + i]
                    uo = u6_off + 6 * (iv + i)
                    pn0 += ws[uo] * sc
                    pn1 += ws[uo + 1] * sc
                    pn2 += ws[uo + 2] * sc
                    pf0 += ws[uo + 3] * sc
                    pf1 += ws[uo + 4] * sc
                    pf2 += ws[uo + 5] * sc
            gf0 = R00 * pf0 + R01 * pf1 + R02 * pf2
            gf1 = R10 * pf0 + R11 * pf1 + R12 * pf2
            gf2 = R20 * pf0 + R21 * pf1 + R22 * pf2
            x0, x1, x2 = _cross(P0, P1, P2, gf0, gf1, gf2)
            PAN[r, par, 0] += R00 * pn0 + R01 * pn1 + R02 * pn2 + x0
            PAN[r, par, 1] += R10 * pn0 + R11 * pn1 + R12 * pn2 + x1
            PAN[r, par, 2] += R20 * pn0 + R21 * pn1 + R22 * pn2 + x2
            PAN[r, par, 3] += gf0
            PAN[r, par, 4] += gf1
            PAN[r, par, 5] += gf2
        # this link's share of Lambda (its innovations are final)
        if nvj == 1:
            for c in range(n):
                wc = W[c, iv]
                for a in range(c, n):
                    Lm[a, c] += EPS[a, iv] * wc
        else:
            for c in range(n):
                for a in range(c, n):
                    s = 0.0
                    for i in range(iv, iv + nvj):
                        s += EPS[a, i] * W[c, i]
                    Lm[a, c] += s


@njit(inline="always", cache=True)
def regions(pi, ps):
    """The regions of the packed arrays that TA uses (views, no copies): those of
    :func:`~sinews.constraints._mixed_kernels.views` and
    :func:`~sinews.constraints._mixed_kernels.scratch` without the mass-matrix ones (each
    2-D view costs a reshape call, so only the needed ones are made, once per call)."""
    nl = pi[Q_NL]
    nv = pi[Q_NV]
    npair = pi[Q_NPAIR]
    npr = pi[Q_NPR]
    ncr = pi[Q_NCR]
    n = npr + ncr
    mi = pi[pi[Q_MI] : pi[Q_MI] + nl * 8].reshape((nl, 8))
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
    bottom = ps[pi[Q_BOT] : pi[Q_BOT] + n]
    Lm = ps[pi[Q_LAM_M] : pi[Q_LAM_M] + n * n].reshape((n, n))
    rhs = ps[pi[Q_RHS] : pi[Q_RHS] + n]
    E = ps[pi[Q_E] : pi[Q_E] + 12 * npr].reshape((npr, 12))
    AC = ps[pi[Q_AC] : pi[Q_AC] + 6 * nl].reshape((nl, 6))
    UU = ps[pi[Q_UU] : pi[Q_UU] + nv]
    QD = ps[pi[Q_QD] : pi[Q_QD] + nv]
    ml = ps[pi[Q_ML] : pi[Q_ML] + n]
    W = ps[pi[Q_W] : pi[Q_W] + n * nv].reshape((n, nv))
    PAN = ps[pi[Q_PAN] : pi[Q_PAN] + n * nl * 6].reshape((n, nl, 6))
    EPS = ps[pi[Q_EPS] : pi[Q_EPS] + n * nv].reshape((n, nv))
    rc = ps[pi[Q_RC] : pi[Q_RC] + n]
    return (mi, kP, kS, pptr, setrow, cidx, act, pf, T, pos, KB, DB, crat, ws, pe, bottom, Lm, rhs, E, AC, UU,
            QD, ml, W, PAN, EPS, rc)


@njit(cache=True)
def ta_correct(q, v, pi, mf, ps, x, mult, nk):
    """:func:`_correct` as a kernel of its own (after the caller's least-squares solve of the
    ``nk`` kept rows; ``mult`` still holds the dead-row flags of :func:`tree_augmented`)."""
    return _correct(q, v, pi, mf, x, mult, regions(pi, ps), nk)


@njit(inline="always", cache=True)
def _correct(q, v, pi, mf, x, mult, reg, nk):
    """Step 5 of TA: the innovations of the node forces ``G^T lambda`` are
    ``sum_r lambda_r u_r`` (the stored innovations of the kept rows' test inputs, summed over
    the active dofs; ``lambda`` = ``ml[:nk]`` in the scratch, kept rows in packed row order),
    then one forward sweep over all links gives ``M^-1 G^T lambda``, added to ``x``; the
    multipliers are then spread to all rows (``0`` on the dead rows flagged in ``mult``).  The residual
    ``max |G x - bottom|`` of a pair row is its free error plus the power of its node test
    wrenches ``E`` on the corrected link accelerations (``G_r M^-1 G^T lambda``, exact by
    construction of ``E``); above 1e-9 the pair rows are re-evaluated from the corrected
    accelerations of the constraint bodies for the relative test.  ``mult`` receives the
    multipliers in set order.  Returns ``(residual, converged)``."""
    (mi, kP, kS, pptr, setrow, cidx, act, pf, T, pos, KB, DB, crat, ws, pe, bottom, Lm, rhs, E, AC, UU, QD, ml, W,
     PAN, EPS, rc) = reg
    nv = pi[Q_NV]
    npr = pi[Q_NPR]
    n = npr + pi[Q_NCR]
    for i in range(nv):
        UU[i] = 0.0
    for t in range(act.shape[0]):  # (EPS is zero outside the active dofs)
        iv = mi[act[t], MI_IV]
        for i in range(iv, iv + mi[act[t], MI_NV]):
            s = 0.0
            for r in range(nk):
                s += ml[r] * EPS[r, i]
            UU[i] = s
    if nk < n:
        spread(ml, mult, n, nk)
    for r in range(n):
        mult[setrow[r]] = ml[r]
    forward(mi, ws, nv, act, True, AC, UU, QD)
    for i in range(nv):
        x[i] += QD[i]
    # residual from the corrected accelerations of the constraint bodies: a pair row's
    # G qdd - gamma is its free value (-rhs - D phidot - K phi) plus G M^-1 G^T lambda, read
    # as the power of its node test wrenches E (link axes) on the link accelerations AC
    res = 0.0
    scale = 0.0
    for c in range(n - npr):
        r = npr + c
        gx, phidot, phi = coord_row(q, v, x, cidx, crat, c, True)
        stab = DB[r] * phidot + KB[r] * phi
        res = max(res, abs(gx + stab))
        scale = max(scale, abs(gx), abs(stab))
    res_pair = 0.0
    for p in range(kP.shape[0]):
        kSp = kS[p]
        kPp = kP[p]
        for r in range(pptr[p], pptr[p + 1]):
            val = -rhs[r]  # (G qdd_free - gamma + D phidot + K phi)
            if kSp >= 0:
                for i in range(6):
                    val += E[r, i] * AC[kSp, i]
            if kPp >= 0:
                for i in range(6):
                    val += E[r, 6 + i] * AC[kPp, i]
            res_pair = max(res_pair, abs(val))
    if max(res, res_pair) <= 1e-9:
        return max(res, res_pair), True
    if kP.shape[0] == 0:
        return res, res <= 1e-9 * (1.0 + scale)
    # not converged in absolute terms: recompute the pair rows from the corrected link
    # accelerations of the constraint bodies, and the scale of the relative test
    for t in range(act.shape[0]):
        w = act[t] * WS_STRIDE
        for i in range(6):
            ws[w + WS_A + i] += AC[act[t], i]
    eval_pairs(ws, kP, kS, pf, pe, mf[0], mf[1], mf[2], False)
    for p in range(kP.shape[0]):
        for r in range(pptr[p], pptr[p + 1]):
            val, phidot, phi, dw0, dw1, dw2, dv0, dv1, dv2 = pair_row(pe, p, T, r, pos[r])
            stab = DB[r] * phidot + KB[r] * phi
            res = max(res, abs(val + stab))
            bottom[r] = val  # G qdd - gamma
            scale = max(scale, abs(stab))
    # the relative test needs |G qdd| and |gamma| of the pair rows: gamma from the link
    # accelerations at qdd = 0 (a = X a_parent + c, the world at [0; -g]) on the active links
    for t in range(act.shape[0]):
        k = act[t]
        w = k * WS_STRIDE
        par = mi[k, MI_PARENT]
        if par >= 0:
            wp = par * WS_STRIDE
            p0 = ws[wp + WS_A]
            p1 = ws[wp + WS_A + 1]
            p2 = ws[wp + WS_A + 2]
            p3 = ws[wp + WS_A + 3]
            p4 = ws[wp + WS_A + 4]
            p5 = ws[wp + WS_A + 5]
        else:
            p0 = 0.0
            p1 = 0.0
            p2 = 0.0
            p3 = -mf[0]
            p4 = -mf[1]
            p5 = -mf[2]
        a = _parent_to_child(ws[w + WS_R], ws[w + WS_R + 1], ws[w + WS_R + 2], ws[w + WS_R + 3], ws[w + WS_R + 4],
                             ws[w + WS_R + 5], ws[w + WS_R + 6], ws[w + WS_R + 7], ws[w + WS_R + 8],
                             ws[w + WS_P], ws[w + WS_P + 1], ws[w + WS_P + 2], p0, p1, p2, p3, p4, p5)
        for i in range(6):
            ws[w + WS_A + i] = a[i] + ws[w + WS_C + i]
    eval_pairs(ws, kP, kS, pf, pe, mf[0], mf[1], mf[2], False)
    for p in range(kP.shape[0]):
        for r in range(pptr[p], pptr[p + 1]):
            val0, phidot, phi, dw0, dw1, dw2, dv0, dv1, dv2 = pair_row(pe, p, T, r, pos[r])
            gamma = -val0 - DB[r] * phidot - KB[r] * phi
            scale = max(scale, abs(bottom[r] - val0), abs(gamma))  # |G qdd|, |gamma - D phidot - K phi|
    return res, res <= 1e-9 * (1.0 + scale)


@njit(cache=True)
def tree_augmented(q, v, tau, fext, pi, mf, ps, x, mult, flags):
    """TA forward dynamics of a compiled mixed set (steps in
    :mod:`sinews.constraints.tree_augmented`).  Returns ``(code, residual, converged, rank)``
    (``rank``: the rows that are not zero rows of ``G``; their multipliers are solved, the
    zero rows get 0): code 0; a negative input code; a positive ABA code (massless subtree:
    ``D`` singular) or 3 (not finite): the general path diagnoses it; 2: the reduced
    ``Lambda`` (``rank`` rows) singular, left for the caller's least-squares solve (strict
    upper triangle in the ``LAM_M`` region, diagonal in ``BOT``, right-hand side in ``RC``,
    the zero-row flags in ``mult``) and :func:`ta_correct`."""
    reg = regions(pi, ps)
    (mi, kP, kS, pptr, setrow, cidx, act, pf, T, pos, KB, DB, crat, ws, pe, bottom, Lm, rhs, E, AC, UU, QD, ml, W,
     PAN, EPS, rc) = reg
    code = check_lengths(q, v, tau, pi)
    if code != 0:
        return code, 0.0, False, 0
    nv = pi[Q_NV]
    npr = pi[Q_NPR]
    n = npr + pi[Q_NCR]
    # 1. free accelerations (ABA; its articulated inertias, U and D^-1 stay in ws); the ABA
    #    checks q, v, tau, f_ext (non-finite, zero quaternion: the caller raises)
    code = K.aba(q, v, tau, fext, x, mi, mf, ws, flags & 1)
    if code != 0:
        if code > 0 or code == NOT_FINITE:  # massless subtree, overflow: the general path
            return (code if code > 0 else 3), 0.0, False, 0
        return code, 0.0, False, 0
    # 2. constraint acceleration error eps = G qdd_free - gamma and the node test wrenches
    world_poses(mi, ws, act)
    # world positions whose squares overflow: report q as too large, as every method that works
    # in world axes (CRBA) does
    for t in range(act.shape[0]):
        w = act[t] * WS_STRIDE
        for i in range(3):
            if not abs(ws[w + WS_OP + i]) < _FAR:
                return NOT_FINITE, 0.0, False, 0
    eval_pairs(ws, kP, kS, pf, pe, mf[0], mf[1], mf[2], True)
    for p in range(kP.shape[0]):
        e = p * PE_STRIDE
        s0 = pe[e + 21]
        s1 = pe[e + 22]
        s2 = pe[e + 23]
        for r in range(pptr[p], pptr[p + 1]):
            val, phidot, phi, dw0, dw1, dw2, dv0, dv1, dv2 = pair_row(pe, p, T, r, pos[r])
            rhs[r] = -val - DB[r] * phidot - KB[r] * phi
            if kS[p] >= 0:
                w = link_wrench(ws, kS[p], 1.0, s0, s1, s2, dw0, dw1, dw2, dv0, dv1, dv2)
                for i in range(6):
                    E[r, i] = w[i]
            if kP[p] >= 0:
                w = link_wrench(ws, kP[p], -1.0, s0, s1, s2, dw0, dw1, dw2, dv0, dv1, dv2)
                for i in range(6):
                    E[r, 6 + i] = w[i]
        rows_max(mi, ws, kS[p], kP[p], E, pptr[p], pptr[p + 1], ml)  # max |G_r|
    for c in range(n - npr):
        r = npr + c
        gx, phidot, phi = coord_row(q, v, x, cidx, crat, c, True)
        rhs[r] = -gx - DB[r] * phidot - KB[r] * phi
        ml[r] = max(1.0, abs(crat[c, 0]))  # max |G_r| (two distinct coordinates)
    # rows of G that are zero up to rounding (the out-of-plane rows of a planar loop closed by a
    # pin, a point on the axis of the only joint between the bodies) are exactly zero, as on the
    # general path (sinews.constraints._linalg.zero_tiny_rows): their test wrenches are dropped,
    # so their Lambda rows and columns are zero; they are flagged in mult (packed order,
    # overwritten by the answer), left out of the Cholesky solve and get multiplier 0 (the
    # minimum-norm answer); their right-hand sides stay (the residual of an unsatisfiable zero
    # row is reported)
    gmax = 0.0
    for r in range(n):
        gmax = max(gmax, ml[r])
    tiny = ZERO_ROW_RTOL * max(1.0, gmax)
    nz = 0
    for r in range(n):  # (coordinate rows have an entry of magnitude >= 1: never zero)
        if r < npr and not ml[r] > tiny:
            mult[r] = 1.0
            nz += 1
            for i in range(12):
                E[r, i] = 0.0
        else:
            mult[r] = 0.0
    # 3. innovations u_r of every kept row's test input (one backward sweep over the active
    #    links for all of them; kept rows compacted to the first nk indices, right-hand sides
    #    to rc), W_r = D^-1 u_r, and Lambda = sum over the active joints of u_a^T D^-1 u_r
    #    (EPS and W are only ever written at the active dofs, and the sweep writes every
    #    active dof of the nk rows; EPS is read as an input only with coordinate rows, then
    #    zeroed first; PAN is zero at the active links here: the scratch starts zero and every
    #    sweep clears what it reads, and nothing between this set-up and the sweep can return
    #    early)
    nk = n - nz
    inputs = n > npr  # coordinate rows: generalized-force inputs in EPS (zero elsewhere)
    if inputs:
        for t in range(act.shape[0]):
            k = act[t]
            iv = mi[k, MI_IV]
            for c in range(nk):
                for i in range(iv, iv + mi[k, MI_NV]):
                    EPS[c, i] = 0.0
    for c in range(nk):
        for a in range(nk):
            Lm[a, c] = 0.0
    c = 0
    for p in range(kP.shape[0]):
        kSp = kS[p]
        kPp = kP[p]
        for r in range(pptr[p], pptr[p + 1]):
            if nz and mult[r] != 0.0:
                continue
            if kSp >= 0:
                for i in range(6):
                    PAN[c, kSp, i] -= E[r, i]
            if kPp >= 0:
                for i in range(6):
                    PAN[c, kPp, i] -= E[r, 6 + i]
            rc[c] = rhs[r]
            c += 1
    for cc in range(n - npr):
        EPS[c, cidx[cc, 0]] += 1.0
        EPS[c, cidx[cc, 1]] -= crat[cc, 0]
        rc[c] = rhs[npr + cc]
        c += 1
    innovations_rows(mi, ws, nv, act, nk, PAN, EPS, W, Lm, inputs)
    for c in range(nk):
        for a in range(c + 1, nk):
            Lm[c, a] = Lm[a, c]
        bottom[c] = Lm[c, c]
    # 4. Lambda lambda = rhs over the kept rows (Cholesky in the lower triangle; redundant
    #    non-zero rows: the caller's least squares on the strict upper triangle and the
    #    diagonal, in bottom); the dead rows get multiplier 0 in the correction step
    if not chol_solve(Lm, rc, ml, nk):
        return 2, 0.0, False, nk
    for r in range(nk):
        if not math.isfinite(ml[r]):
            return 3, 0.0, False, nk
    # 5. correction sweep with the node forces
    res, ok = _correct(q, v, pi, mf, x, mult, reg, nk)
    for i in range(nv):
        if not math.isfinite(x[i]):
            return 3, res, False, nk
    return 0, res, ok, nk
