r"""One Numba kernel for a whole step of the ``"default"`` stepper in the common case.

:func:`coulomb_step` does, in one call, what :class:`~sinews.sim.steppers.CoulombStepper` does
through :func:`~sinews.sim.contact_problem.build_contact_problem` and the FCLib driver:

1. ``M`` (CRBA; it leaves the links' world poses and world-axes motion subspaces ``S`` in the
   workspace, copied out), its branch-sparse factor ``M = L^T L`` (Featherstone, RBDA 6.5:
   :func:`sinews._ltl_kernels.ltl_factor`), the passive joint forces (damping, dry friction) and
   ``v_free = v + h M^-1 (tau - C(q, v))`` with the bias ``C`` by RNEA (the ABA's
   accelerations, to rounding);
2. collision (:func:`sinews.geometry._collide_kernels.collide`): the geometries' world poses
   from the link poses, every half-space against the support points of the other shapes, then
   sweep-and-prune and the box-box, sphere-sphere and sphere-box narrow phase, in the order of
   :func:`sinews.geometry.contacts.find_contacts`;
3. contact rows ``J`` ([n, t1, t2] per contact: ``J_i = F_i (J_B(p_i) - J_A(p_i))`` with the
   point Jacobian columns ``v_o + w x p`` of the world-axes ``S``), joint-limit rows, the
   Delassus matrix ``W = J M^-1 J^T`` through the branch-sparse factor ``M = L^T L``
   (:mod:`sinews.sim._step_rows`) and ``q = J v_free + offsets`` (gaps, ERP, Newton
   restitution), as :meth:`~sinews.sim.contact_problem.ContactProblem.fclib_problem`;
4. the PGS phase of :func:`sinews.contact.fclib.solve` (its kernel's sweeps restricted to the
   nonzero blocks of W, :func:`sinews.sim._step_pgs.pgs_blocks`, in the same chunks with the
   same stagnation test, warm-started from the previous step's reactions when the contact set
   is unchanged), with a direct step on the sticking contacts after each failed convergence
   test (:func:`sinews.sim._step_direct.polish`; ``FastCoulomb.direct``);
5. ``v+ = v_free + M^-1 J^T r`` and ``q+ = integrate(q, v+, h)``, and the step's record (``q+,
   v+``, the contacts, their frames and impulses, the solver's statistics) in one block of the
   float table, which the caller copies once.

Every table and workspace of a scene lives in two flat arrays built once per scene by
:mod:`sinews.sim._fast_step`: ``F`` (float64) and ``I`` (int64, starting with the header: for
each slot ``F_*``/``I_*`` its offset and up to three dimensions), so a step is one call with five
arguments ``(q, v, tau, F, I)`` (Numba's dispatcher types every argument on every call).
:func:`coulomb_advance` takes several steps with constant joint forces in one call.

It returns a code; anything it does not handle sends the step to the general path:
``OK`` (done), ``NEEDS_SOLVER`` (PGS did not converge before stagnating: the caller runs
:func:`sinews.contact.fclib.solve` on the assembled ``W, q, mu`` from the same start, so the
result is the general path's), ``GENERAL`` (a pair without a routine here, too many contacts, a
non-unit quaternion, a kernel error or a non-finite state: the caller takes the general path,
which raises the named error where there is one).
"""

from __future__ import annotations

import math

import numpy as np

from .._configuration_kernels import integrate
from .._crba_kernels import crba
from .._jit import njit
from .._layout import (MF_GRAVITY, MF_H, MF_HEADER, MF_MASS, MF_STRIDE, MI_IQ, MI_IV, MI_NV, MI_PARENT,
                       MI_TYPE, WS_OP, WS_OR, WS_STRIDE)
from .._ltl_kernels import ltl_factor
from .._rnea_kernels import rnea_x
from ..contact._fc3d_exact import safe_norm
from ..geometry._collide_kernels import collide
from ._step_pgs import block_lists, pgs_blocks
from ._step_rows import contact_rows, delassus, finish, nonzero_ancestors, solve_m

OK = 0
NEEDS_SOLVER = 1
GENERAL = 2

# float parameters (slot F_FP)
P_H, P_MARGIN, P_ERP, P_CAPTURE, P_TOL, P_RADIUS, P_WARM, P_CHUNK, P_MAXIT, P_DIRECT = range(10)
FP_SIZE = 10
# integer outputs (slot I_IO)
O_K, O_NL, O_ITER, O_CONV, O_WARM = range(5)
IO_SIZE = 5

# float slots: parameters, model (mf) and workspace (ws), M and its factor L, world S and link
# poses, geometry tables, contact buffers, rows J and Y = J L^-1, W, q, r (and its start r0),
# PGS buffer, vectors (qdd, v_free, tau_p, t: 4 nv), mu, limit gaps and signs (2, nlim), geometry
# poses and box-box buffers, the step's record
(F_FP, F_MF, F_WS, F_M, F_L, F_S, F_LP, F_GF, F_PAIR, F_SUP, F_LIM, F_PASSIVE, F_CF, F_J, F_Y, F_W,
 F_CQ, F_R, F_R0, F_PBUF, F_VEC, F_MU, F_LIMF, F_GEO, F_OUT) = range(25)
NF = 25
# int slots: outputs, model (mi), geometries, trees, contact pairs, the previous step's pairs,
# dof parents, columns of each row group and their counts, trees of each group, marks, limit dofs,
# the groups sharing a tree with each group (count, list), the PGS int scratch, the trees of the
# groups of the last step that built those lists (count, then one row per group), the nonzero
# entries of each row of the factor L (count, then their columns)
(I_IO, I_MI, I_GI, I_TREES, I_CI, I_PREV, I_LAM, I_COLS, I_NCOL, I_CTREE, I_MARK, I_LIMIV, I_NB,
 I_NBR, I_PGSI, I_BLK, I_LNZ) = range(NF, NF + 17)
NSLOTS = NF + 17
HEADER = 4 * NSLOTS  # offset, d0, d1, d2 per slot
# the record (slot F_OUT): q+ (nq) | v+ (nv) | k, nl, iterations, error | REC_W per contact:
# ga, gb, point (3), normal (3), distance, friction, restitution, t1 (3), t2 (3), impulse [n, t1, t2]
REC_HDR = 4
REC_W = 20

_JT_SPHERICAL = 3
_JT_FREEFLYER = 4


@njit(inline="always", cache=True)
def _v(A, I, s):
    o = I[4 * s]
    return A[o : o + I[4 * s + 1]]


@njit(inline="always", cache=True)
def _m(A, I, s):
    o = I[4 * s]
    a = I[4 * s + 1]
    b = I[4 * s + 2]
    return A[o : o + a * b].reshape((a, b))


@njit(cache=True)
def coulomb_step(q, v, tau, F, I):
    """One ``"default"`` step (see the module docstring); returns OK, NEEDS_SOLVER or GENERAL."""
    fp = _v(F, I, F_FP)
    io = _v(I, I, I_IO)
    mi = _m(I, I, I_MI)
    mf = _v(F, I, F_MF)
    ws = _v(F, I, F_WS)
    M = _m(F, I, F_M)
    L = _m(F, I, F_L)
    S = _v(F, I, F_S)
    lp = _m(F, I, F_LP)
    nl_links = mi.shape[0]
    nv = v.shape[0]
    h = fp[P_H]
    # unit quaternions (the general path refuses others, naming q)
    for l in range(nl_links):
        jt = mi[l, MI_TYPE]
        if jt == _JT_FREEFLYER or jt == _JT_SPHERICAL:
            o = mi[l, MI_IQ] + (3 if jt == _JT_FREEFLYER else 0)
            s = q[o] * q[o] + q[o + 1] * q[o + 1] + q[o + 2] * q[o + 2] + q[o + 3] * q[o + 3]
            if not abs(s - 1.0) <= 1e-6:
                return GENERAL
    for i in range(nv):
        if not (math.isfinite(v[i]) and math.isfinite(tau[i])):
            return GENERAL
    # ---- M, world poses and S
    if crba(q, M, mi, mf, ws) != 0:
        return GENERAL
    s0 = nl_links * WS_STRIDE + 6 * nv
    for i in range(6 * nv):
        S[i] = ws[s0 + i]
    for l in range(nl_links):
        w = l * WS_STRIDE
        for a in range(9):
            lp[l, a] = ws[w + WS_OR + a]
        for a in range(3):
            lp[l, 9 + a] = ws[w + WS_OP + a]
    vec = _v(F, I, F_VEC)
    qdd = vec[:nv]
    vf = vec[nv : 2 * nv]
    taup = vec[2 * nv : 3 * nv]
    tv = vec[3 * nv : 4 * nv]
    # ---- M = L^T L (the CRBA writes only the ancestor pattern, the rest stays zero)
    for i in range(nv):
        for j in range(nv):
            L[i, j] = M[i, j]
    lam = _v(I, I, I_LAM)
    if ltl_factor(L, lam) != 0:
        return GENERAL
    lnz = _m(I, I, I_LNZ)
    nonzero_ancestors(L, lam, lnz)
    # ---- passive joint forces (contact_problem.passive_joint_forces); qdd = M^-1 (tau_p - C)
    # with the bias C = RNEA(q, v, 0): the ABA's accelerations through the factor
    passive = _m(F, I, F_PASSIVE)
    for i in range(nv):
        taup[i] = tau[i]
        qdd[i] = 0.0
    if rnea_x(q, v, qdd, tv, mi, mf, ws) != 0:
        return GENERAL
    if passive[0, 0] != 0.0:  # damping present (row 1)
        for i in range(nv):
            d = passive[1, i]
            taup[i] -= d * v[i] / (1.0 + h * d / M[i, i])
    if passive[0, 1] != 0.0:  # dry friction present (row 2)
        for i in range(nv):
            qdd[i] = taup[i] - tv[i]
        solve_m(L, lnz, qdd)
        for i in range(nv):
            vp = v[i] + h * qdd[i]
            stop = M[i, i] * abs(vp) / h
            sg = 1.0 if vp > 0 else (-1.0 if vp < 0 else 0.0)
            taup[i] -= sg * min(passive[2, i], stop)
    for i in range(nv):
        qdd[i] = taup[i] - tv[i]
    solve_m(L, lnz, qdd)
    for i in range(nv):
        vf[i] = v[i] + h * qdd[i]
    # ---- collision (detection margin: speculative_margin)
    vmax = 0.0
    for i in range(nv):
        vmax = max(vmax, abs(v[i]))
    margin = fp[P_MARGIN] + 2.0 * h * vmax * max(1.0, 2.0 * fp[P_RADIUS])
    gi = _m(I, I, I_GI)
    ci = _m(I, I, I_CI)
    cf = _m(F, I, F_CF)
    pair = _v(F, I, F_PAIR)
    ng = gi.shape[0]
    pair3 = pair.reshape((ng, ng, 3))
    geo = _v(F, I, F_GEO)
    gR = geo[: 9 * ng].reshape((ng, 3, 3))
    gp = geo[9 * ng : 12 * ng].reshape((ng, 3))
    bb = 12 * ng
    pts = geo[bb : bb + 48].reshape((16, 3))
    nrm = geo[bb + 48 : bb + 96].reshape((16, 3))
    dst = geo[bb + 96 : bb + 112]
    k = collide(gi, _m(F, I, F_GF), pair3, _m(F, I, F_SUP), lp, margin, gR, gp, ci, cf, pts, nrm, dst)
    if k < 0:
        return GENERAL
    for c in range(k):
        cf[c, 13] = pair3[ci[c, 0], ci[c, 1], 1]
        cf[c, 14] = pair3[ci[c, 0], ci[c, 1], 2]
    # ---- joint limits within scene.margin (lower hits, then upper hits)
    lim = _m(F, I, F_LIM)
    limf = _m(F, I, F_LIMF)
    lim_iv = _v(I, I, I_LIMIV)
    nl = 0
    lm = fp[P_MARGIN]
    for side in range(2):
        for t in range(lim.shape[0]):
            iq = np.int64(lim[t, 0])
            gap = q[iq] - lim[t, 2] if side == 0 else lim[t, 3] - q[iq]
            if math.isfinite(gap) and gap <= lm:
                lim_iv[nl] = np.int64(lim[t, 1])
                limf[0, nl] = gap
                limf[1, nl] = 1.0 if side == 0 else -1.0
                nl += 1
    io[O_K] = k
    io[O_NL] = nl
    io[O_ITER] = 0
    io[O_CONV] = 1
    io[O_WARM] = 0
    out = _v(F, I, F_OUT)
    nq = q.shape[0]
    q_out = out[:nq]
    v_out = out[nq : nq + nv]
    hdr = nq + nv
    prev = _m(I, I, I_PREV)
    mrows = 3 * (k + nl)
    if mrows == 0:
        for i in range(nv):
            v_out[i] = vf[i]
        if integrate(q, v_out, h, q_out, mi) != 0:
            return GENERAL
        out[hdr] = 0.0
        out[hdr + 1] = 0.0
        out[hdr + 2] = 0.0
        out[hdr + 3] = 0.0
        return OK
    # ---- rows and W = J M^-1 J^T = Y Y^T
    Jm = _v(F, I, F_J)[: mrows * nv].reshape((mrows, nv))
    cols = _m(I, I, I_COLS)
    ncol = _m(I, I, I_NCOL)
    trees = _m(I, I, I_TREES)
    contact_rows(k, nl, ci, cf, gi, mi, trees, S, lim_iv, limf[1], Jm, cols, ncol, _v(I, I, I_MARK))
    # the trees (subtrees of the world) each row group touches: M^-1 couples no two trees
    ctree = _m(I, I, I_CTREE)
    for c in range(k + nl):
        ctree[c, 0] = -1
        ctree[c, 1] = -1
    for c in range(k):
        for side in range(2):
            l = gi[ci[c, side], 1]
            if l >= 0:
                ctree[c, side] = trees[0, l]
    for t in range(nl):
        ctree[k + t, 0] = trees[1, lim_iv[t]]
    Wm = _v(F, I, F_W)[: mrows * mrows].reshape((mrows, mrows))
    Ym = _v(F, I, F_Y)[: mrows * nv].reshape((nv, mrows))  # Y = J L^-1, transposed
    # the blocks of W that can be nonzero (groups sharing a tree), rebuilt when the groups'
    # trees change; W's other entries are zeroed then (they stay zero until the next change)
    nb = _v(I, I, I_NB)
    nbr = _m(I, I, I_NBR)
    blk = _m(I, I, I_BLK)
    fresh = blk[0, 0] == k + nl
    if fresh:
        for c in range(k + nl):
            if blk[1 + c, 0] != ctree[c, 0] or blk[1 + c, 1] != ctree[c, 1]:
                fresh = False
                break
    if not fresh:
        block_lists(k + nl, ctree, nb, nbr)
        blk[0, 0] = k + nl
        for c in range(k + nl):
            blk[1 + c, 0] = ctree[c, 0]
            blk[1 + c, 1] = ctree[c, 1]
    delassus(k + nl, Jm, L, lnz, trees, cols, ncol, ctree, Ym, Wm, qdd, nb, nbr,
             not fresh)  # qdd: free once v_free is known
    qv = _v(F, I, F_CQ)[:mrows]
    for a in range(mrows):
        s = 0.0
        g = a // 3
        for t in range(ncol[g, 0]):
            j = cols[g, t]
            s += Jm[a, j] * vf[j]
        qv[a] = s
    erp = fp[P_ERP]
    mu = _v(F, I, F_MU)[: k + nl]
    for c in range(k + nl):
        phi = cf[c, 6] if c < k else limf[0, c - k]
        off = phi / h if phi >= 0.0 else erp * phi / h
        if c < k:
            mu[c] = cf[c, 13]
            e = cf[c, 14]
            if e > 0:
                un = 0.0
                unf = 0.0
                for t in range(ncol[c, 0]):
                    j = cols[c, t]
                    un += Jm[3 * c, j] * v[j]
                    unf += Jm[3 * c, j] * vf[j]
                if un < -fp[P_CAPTURE] and phi + h * unf <= 0:
                    off = e * un + erp * min(phi, 0.0) / h
        else:
            mu[c] = 0.0
        qv[3 * c] += off
    # ---- FCLib PGS, warm-started when the contact set is unchanged
    rr_ = _v(F, I, F_R)[:mrows]
    same = fp[P_WARM] != 0.0 and prev[0, 0] == k and prev[0, 1] == nl
    if same:
        for c in range(k):
            if prev[1 + c, 0] != ci[c, 0] or prev[1 + c, 1] != ci[c, 1]:
                same = False
                break
    if not same:
        rr_[:] = 0.0
    io[O_WARM] = 1 if same else 0
    r0 = _v(F, I, F_R0)
    r0[:mrows] = rr_
    nq_ = safe_norm(qv)
    if not math.isfinite(nq_):
        return GENERAL
    # sinews.contact._fc3d_drive.solve_auto's PGS phase: chunks while the error halves over
    # ``window`` chunks; its careful verdict and ADMM phase are left to the caller
    chunk = np.int64(fp[P_CHUNK])
    max_iter = np.int64(fp[P_MAXIT])
    window = 4
    pbuf = _v(F, I, F_PBUF)
    errors = pbuf[pbuf.shape[0] - 8 :]  # the last window + 1 chunk errors, a ring
    ne = 0
    used = 0
    conv = False
    err = np.inf
    while used < max_iter:
        it, err, conv = pgs_blocks(Wm, qv, mu, rr_, pbuf[: 5 * mrows + nv * (nv + 1)], nb, nbr, fp[P_TOL],
                                   min(chunk, max_iter - used), 1.0, np.int64(10), 1.0 + nq_, np.bool_(False), Ym,
                                   cols, ncol, _v(I, I, I_PGSI), fp[P_DIRECT] != 0.0)
        used += it
        if conv:
            break
        errors[ne % 8] = err
        ne += 1
        if not math.isfinite(err):
            break
        if ne > window and errors[(ne - 1) % 8] > 0.5 * errors[(ne - 1 - window) % 8]:
            break
    io[O_ITER] = used
    io[O_CONV] = 1 if conv else 0
    out[hdr + 3] = err
    if not conv:
        return NEEDS_SOLVER
    if finish(q, vf, L, lnz, Jm, cols, ncol, rr_, h, mi, tv, q_out, v_out) != 0:
        return GENERAL
    for i in range(nv):
        if not math.isfinite(v_out[i]):
            return GENERAL
    # ---- the warm-start state and the record
    prev[0, 0] = k
    prev[0, 1] = nl
    for c in range(k):
        prev[1 + c, 0] = ci[c, 0]
        prev[1 + c, 1] = ci[c, 1]
    out[hdr] = k
    out[hdr + 1] = nl
    out[hdr + 2] = used
    for c in range(k):
        o = hdr + REC_HDR + REC_W * c
        out[o] = ci[c, 0]
        out[o + 1] = ci[c, 1]
        for a in range(7):
            out[o + 2 + a] = cf[c, a]
        out[o + 9] = cf[c, 13]
        out[o + 10] = cf[c, 14]
        for a in range(6):
            out[o + 11 + a] = cf[c, 7 + a]
        for a in range(3):
            out[o + 17 + a] = rr_[3 * c + a]
    return OK


@njit(cache=True)
def coulomb_advance(q, v, tau, F, I, keep, Qc, Vc, Ec, hdr, Cc, M2):
    """Up to ``n = keep.shape[0]`` steps of :func:`coulomb_step` from ``(q, v)`` (updated in
    place) with constant ``tau``, exactly as n calls would take them.  For each step ``i`` with
    ``keep[i]``: ``Qc[i], Vc[i]`` the state, ``Ec[i]`` its mechanical energy
    (:func:`mechanical_energy`; NaN where that kernel refuses), ``hdr[i]`` = (contacts,
    iterations, error) and the step's contact records appended to ``Cc`` (REC_W columns).  Returns
    ``4 i + code``: ``i`` steps taken, ``code`` OK (all n) or the code of step i, which the
    caller finishes on its own path from the kernel's state (as after :func:`coulomb_step`)."""
    n = keep.shape[0]
    nq = q.shape[0]
    nv = v.shape[0]
    out = _v(F, I, F_OUT)
    mi = _m(I, I, I_MI)
    mf = _v(F, I, F_MF)
    ws = _v(F, I, F_WS)
    e = np.zeros(1)
    h0 = nq + nv
    kc = 0
    for i in range(n):
        code = coulomb_step(q, v, tau, F, I)
        if code != OK:
            return 4 * i + code
        for a in range(nq):
            q[a] = out[a]
        for a in range(nv):
            v[a] = out[nq + a]
        if keep[i] != 0:
            for a in range(nq):
                Qc[i, a] = q[a]
            for a in range(nv):
                Vc[i, a] = v[a]
            Ec[i] = e[0] if mechanical_energy(q, v, M2, mi, mf, ws, e) == 0 else np.nan
            k = np.int64(out[h0])
            hdr[i, 0] = out[h0]
            hdr[i, 1] = out[h0 + 2]
            hdr[i, 2] = out[h0 + 3]
            for c in range(k):
                o = h0 + REC_HDR + REC_W * c
                for a in range(REC_W):
                    Cc[kc, a] = out[o + a]
                kc += 1
    return 4 * n


def tree_table(mi):
    """The trees of the model (links with the same root link), for :func:`coulomb_step`."""
    nl = mi.shape[0]
    nv = int(mi[nl - 1, MI_IV] + mi[nl - 1, MI_NV]) if nl else 0
    root = np.empty(nl, dtype=np.int64)
    roots = []
    for l in range(nl):
        p = int(mi[l, MI_PARENT])
        root[l] = l if p < 0 else root[p]
        if p < 0:
            roots.append(l)
    tid = {r: t for t, r in enumerate(roots)}
    out = np.zeros((4 + len(roots), max(nl, nv + 1, 1)), dtype=np.int64)
    out[2, 0] = len(roots)
    for l in range(nl):
        t = tid[int(root[l])]
        out[0, l] = t
        for d in range(int(mi[l, MI_NV])):
            i = int(mi[l, MI_IV]) + d
            out[1, i] = t
            out[4 + t, 1 + out[4 + t, 0]] = i
            out[4 + t, 0] += 1
    return out


@njit(cache=True)
def mechanical_energy(q, v, M, mi, mf, ws, out):
    """``out[0] = T + V`` with ``T = 1/2 v^T M(q) v`` (CRBA, armature included) and
    ``V = -g . sum_k (oR_k h_k + m_k op_k)`` over the links (the world poses the CRBA leaves in
    the workspace): :func:`sinews.mechanical_energy` in one kernel.  ``M`` must be zero outside
    the CRBA's ancestor pattern (allocate it with zeros).  Returns 0 or a kernel code."""
    code = crba(q, M, mi, mf, ws)
    if code != 0:
        return code
    nv = v.shape[0]
    T = 0.0
    for i in range(nv):
        s = 0.0
        for j in range(nv):
            s += M[i, j] * v[j]
        T += v[i] * s
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    for k in range(mi.shape[0]):
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
        m = mf[b + MF_MASS]
        h0 = mf[b + MF_H]
        h1 = mf[b + MF_H + 1]
        h2 = mf[b + MF_H + 2]
        f0 += ws[w + WS_OR] * h0 + ws[w + WS_OR + 1] * h1 + ws[w + WS_OR + 2] * h2 + m * ws[w + WS_OP]
        f1 += ws[w + WS_OR + 3] * h0 + ws[w + WS_OR + 4] * h1 + ws[w + WS_OR + 5] * h2 + m * ws[w + WS_OP + 1]
        f2 += ws[w + WS_OR + 6] * h0 + ws[w + WS_OR + 7] * h1 + ws[w + WS_OR + 8] * h2 + m * ws[w + WS_OP + 2]
    out[0] = 0.5 * T - (mf[MF_GRAVITY] * f0 + mf[MF_GRAVITY + 1] * f1 + mf[MF_GRAVITY + 2] * f2)
    return 0
