r"""One Numba kernel for a whole step of the ``"default"`` stepper in the common case.

:func:`coulomb_step` does, in one call, what :class:`~sinews.sim.steppers.CoulombStepper` does
through :func:`~sinews.sim.contact_problem.build_contact_problem` and the FCLib driver:

1. ``M`` (CRBA; it leaves the links' world poses and world-axes motion subspaces ``S`` in the
   workspace, copied out), the passive joint forces (damping, dry friction), ``v_free = v + h
   ABA(q, v, tau)`` and ``M^-1`` (:func:`sinews._minv_kernels.minverse`);
2. collision (:func:`sinews.geometry._collide_kernels.collide`): the geometries' world poses
   from the link poses, every half-space against the support points of the other shapes, then
   sweep-and-prune and the box-box, sphere-sphere and sphere-box narrow phase, in the order of
   :func:`sinews.geometry.contacts.find_contacts`;
3. contact rows ``J`` ([n, t1, t2] per contact: ``J_i = F_i (J_B(p_i) - J_A(p_i))`` with the
   point Jacobian columns ``v_o + w x p`` of the world-axes ``S``), joint-limit rows, the
   Delassus matrix ``W = J M^-1 J^T`` and ``q = J v_free + offsets`` (gaps, ERP, Newton
   restitution), as :meth:`~sinews.sim.contact_problem.ContactProblem.fclib_problem`;
4. the PGS phase of :func:`sinews.contact.fclib.solve` (the same kernel,
   :func:`sinews.contact._fc3d_pgs.pgs_kernel`, in the same chunks with the same stagnation
   test, warm-started from the previous step's reactions when the contact set is unchanged);
5. ``v+ = v_free + M^-1 J^T r`` and ``q+ = integrate(q, v+, h)``.

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
from .._jit import njit

from .._aba_kernels import aba_x
from .._configuration_kernels import integrate
from .._crba_kernels import crba
from .._layout import (MF_GRAVITY, MF_H, MF_HEADER, MF_MASS, MF_STRIDE, MI_IQ, MI_IV, MI_NV, MI_PARENT,
                       MI_TYPE, WS_OP, WS_OR, WS_STRIDE)
from .._minv_kernels import minverse
from ..contact._fc3d_exact import safe_norm
from ..contact._fc3d_pgs import pgs_kernel
from ..geometry._collide_kernels import collide

OK = 0
NEEDS_SOLVER = 1
GENERAL = 2

# float parameters (fp)
P_H, P_MARGIN, P_ERP, P_CAPTURE, P_TOL, P_RADIUS, P_WARM, P_CHUNK, P_MAXIT = range(9)
FP_SIZE = 9
# integer outputs (io)
O_K, O_NL, O_ITER, O_CONV, O_WARM = range(5)
IO_SIZE = 5

_JT_SPHERICAL = 3
_JT_FREEFLYER = 4


@njit(cache=True)
def coulomb_step(q, v, tau, fp, io, mi, mf, ws, mbuf, M, Minv, S, lp, gi, gf, pair, sup, lim,
                 passive, trees, ci, cf, J, W, cq, r, r0, pbuf, prev, q_out, v_out, scratch):
    """One ``"default"`` step (see the module docstring); returns OK, NEEDS_SOLVER or GENERAL.

    ``trees`` (int64, see :func:`tree_table`): row 0 the tree of each link, row 1 the tree of
    each dof, ``[2, 0]`` the number of trees, row ``4 + t``: the count then the dofs of tree t.

    ``scratch`` float64 holds ``qdd (nv) | v_free (nv) | tau_p (nv) | t (nv) | mu (cap + nl) |
    error (1)`` followed by the geometry poses and box-box buffers."""
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
    qdd = scratch[:nv]
    vf = scratch[nv : 2 * nv]
    taup = scratch[2 * nv : 3 * nv]
    tv = scratch[3 * nv : 4 * nv]
    # ---- passive joint forces (contact_problem.passive_joint_forces)
    for i in range(nv):
        taup[i] = tau[i]
    if passive[0, 0] != 0.0:  # damping present (row 1)
        for i in range(nv):
            d = passive[1, i]
            taup[i] -= d * v[i] / (1.0 + h * d / M[i, i])
    if passive[0, 1] != 0.0:  # dry friction present (row 2)
        if aba_x(q, v, taup, qdd, mi, mf, ws) != 0:
            return GENERAL
        for i in range(nv):
            vp = v[i] + h * qdd[i]
            stop = M[i, i] * abs(vp) / h
            sg = 1.0 if vp > 0 else (-1.0 if vp < 0 else 0.0)
            taup[i] -= sg * min(passive[2, i], stop)
    if aba_x(q, v, taup, qdd, mi, mf, ws) != 0:
        return GENERAL
    for i in range(nv):
        vf[i] = v[i] + h * qdd[i]
    if minverse(q, Minv, mi, mf, ws, mbuf) != 0:
        return GENERAL
    for i in range(nv):
        for j in range(i + 1, nv):
            x = 0.5 * (Minv[i, j] + Minv[j, i])
            Minv[i, j] = x
            Minv[j, i] = x
    # ---- collision (detection margin: speculative_margin)
    vmax = 0.0
    for i in range(nv):
        vmax = max(vmax, abs(v[i]))
    margin = fp[P_MARGIN] + 2.0 * h * vmax * max(1.0, 2.0 * fp[P_RADIUS])
    ng = gi.shape[0]
    cap = ci.shape[0]
    base = 4 * nv + cap + lim.shape[0] + 1
    gR = scratch[base : base + 9 * ng].reshape((ng, 3, 3))
    gp = scratch[base + 9 * ng : base + 12 * ng].reshape((ng, 3))
    bb = base + 12 * ng
    pts = scratch[bb : bb + 48].reshape((16, 3))
    nrm = scratch[bb + 48 : bb + 96].reshape((16, 3))
    dst = scratch[bb + 96 : bb + 112]
    k = collide(gi, gf, pair, sup, lp, margin, gR, gp, ci, cf, pts, nrm, dst)
    if k < 0:
        return GENERAL
    for c in range(k):
        cf[c, 13] = pair[ci[c, 0], ci[c, 1], 1]
        cf[c, 14] = pair[ci[c, 0], ci[c, 1], 2]
    # ---- joint limits within scene.margin (lower hits, then upper hits)
    nl = 0
    lm = fp[P_MARGIN]
    lim_iv = np.empty(lim.shape[0], dtype=np.int64)
    lim_gap = np.empty(lim.shape[0])
    lim_sgn = np.empty(lim.shape[0])
    for side in range(2):
        for t in range(lim.shape[0]):
            iq = np.int64(lim[t, 0])
            gap = q[iq] - lim[t, 2] if side == 0 else lim[t, 3] - q[iq]
            if math.isfinite(gap) and gap <= lm:
                lim_iv[nl] = np.int64(lim[t, 1])
                lim_gap[nl] = gap
                lim_sgn[nl] = 1.0 if side == 0 else -1.0
                nl += 1
    io[O_K] = k
    io[O_NL] = nl
    io[O_ITER] = 0
    io[O_CONV] = 1
    io[O_WARM] = 0
    mrows = 3 * (k + nl)
    if mrows == 0:
        for i in range(nv):
            v_out[i] = vf[i]
        if integrate(q, v_out, h, q_out, mi) != 0:
            return GENERAL
        return OK
    # ---- rows: contacts [n, t1, t2] (tangent_basis), limits (the normal row three times)
    Jm = J[: mrows * nv].reshape((mrows, nv))
    Jm[:, :] = 0.0
    for c in range(k):
        n0 = cf[c, 3]
        n1 = cf[c, 4]
        n2 = cf[c, 5]
        a0, a1, a2 = abs(n0), abs(n1), abs(n2)
        ax = 0
        if a1 < a0:
            ax = 1
            if a2 < a1:
                ax = 2
        elif a2 < a0:
            ax = 2
        # t1 = n x e_ax
        if ax == 0:
            t10, t11, t12 = 0.0, n2, -n1
        elif ax == 1:
            t10, t11, t12 = -n2, 0.0, n0
        else:
            t10, t11, t12 = n1, -n0, 0.0
        nt = math.sqrt(t10 * t10 + t11 * t11 + t12 * t12)
        t10 /= nt
        t11 /= nt
        t12 /= nt
        t20 = n1 * t12 - n2 * t11
        t21 = n2 * t10 - n0 * t12
        t22 = n0 * t11 - n1 * t10
        cf[c, 7] = t10
        cf[c, 8] = t11
        cf[c, 9] = t12
        cf[c, 10] = t20
        cf[c, 11] = t21
        cf[c, 12] = t22
        p0 = cf[c, 0]
        p1 = cf[c, 1]
        p2 = cf[c, 2]
        for side in range(2):
            l = gi[ci[c, side], 1]
            sg = -1.0 if side == 0 else 1.0
            while l >= 0:
                iv = mi[l, MI_IV]
                for d in range(mi[l, MI_NV]):
                    col = iv + d
                    o = 6 * col
                    w0 = S[o]
                    w1 = S[o + 1]
                    w2 = S[o + 2]
                    x0 = S[o + 3] + w1 * p2 - w2 * p1
                    x1 = S[o + 4] + w2 * p0 - w0 * p2
                    x2 = S[o + 5] + w0 * p1 - w1 * p0
                    Jm[3 * c, col] += sg * (n0 * x0 + n1 * x1 + n2 * x2)
                    Jm[3 * c + 1, col] += sg * (t10 * x0 + t11 * x1 + t12 * x2)
                    Jm[3 * c + 2, col] += sg * (t20 * x0 + t21 * x1 + t22 * x2)
                l = mi[l, MI_PARENT]
    for t in range(nl):
        for rr in range(3):
            Jm[3 * (k + t) + rr, lim_iv[t]] = lim_sgn[t]
    # the columns each contact's rows can touch: the dofs of the two links' paths to the root
    ncol = np.zeros(k + nl, dtype=np.int64)
    cols = np.empty((k + nl, nv), dtype=np.int64)
    mark = np.zeros(nv, dtype=np.bool_)
    for c in range(k):
        for side in range(2):
            l = gi[ci[c, side], 1]
            while l >= 0:
                for d in range(mi[l, MI_NV]):
                    col = mi[l, MI_IV] + d
                    if not mark[col]:
                        mark[col] = True
                        cols[c, ncol[c]] = col
                        ncol[c] += 1
                l = mi[l, MI_PARENT]
        for t in range(ncol[c]):
            mark[cols[c, t]] = False
    for t in range(nl):
        cols[k + t, 0] = lim_iv[t]
        ncol[k + t] = 1
    # the trees (subtrees of the world) each contact touches: M^-1 couples no two trees
    ctree = np.full((k + nl, 2), -1, dtype=np.int64)
    for c in range(k):
        for side in range(2):
            l = gi[ci[c, side], 1]
            if l >= 0:
                ctree[c, side] = trees[0, l]
    for t in range(nl):
        ctree[k + t, 0] = trees[1, lim_iv[t]]
    # ---- W = J M^-1 J^T (symmetrised, tiny diagonal lifted), q = J v_free + offsets
    T = np.empty((mrows, nv))
    for a in range(mrows):
        ca = a // 3
        for j in range(nv):
            T[a, j] = 0.0
        for t in range(ncol[ca]):
            i = cols[ca, t]
            x = Jm[a, i]
            if x != 0.0:
                tr = trees[1, i]
                for u in range(trees[4 + tr, 0]):
                    j = trees[4 + tr, 1 + u]
                    T[a, j] += x * Minv[i, j]
    Wm = W[: mrows * mrows].reshape((mrows, mrows))
    for a in range(mrows):
        ca = a // 3
        for b in range(a + 1):
            cb = b // 3
            s = 0.0
            if ((ctree[ca, 0] >= 0 and (ctree[ca, 0] == ctree[cb, 0] or ctree[ca, 0] == ctree[cb, 1]))
                    or (ctree[ca, 1] >= 0 and (ctree[ca, 1] == ctree[cb, 0] or ctree[ca, 1] == ctree[cb, 1]))):
                for t in range(ncol[cb]):
                    j = cols[cb, t]
                    s += T[a, j] * Jm[b, j]
            Wm[a, b] = s
            Wm[b, a] = s
    dmax = 0.0
    for a in range(mrows):
        dmax = max(dmax, Wm[a, a])
    thr = 1e-12 * max(1.0, dmax)
    for a in range(mrows):
        if Wm[a, a] <= thr:
            Wm[a, a] += 1e-9 * max(1.0, dmax)
    qv = cq[:mrows]
    for a in range(mrows):
        s = 0.0
        for j in range(nv):
            s += Jm[a, j] * vf[j]
        qv[a] = s
    erp = fp[P_ERP]
    mu = scratch[4 * nv : 4 * nv + k + nl]
    for c in range(k + nl):
        phi = cf[c, 6] if c < k else lim_gap[c - k]
        off = phi / h if phi >= 0.0 else erp * phi / h
        if c < k:
            mu[c] = cf[c, 13]
            e = cf[c, 14]
            if e > 0:
                un = 0.0
                unf = 0.0
                for j in range(nv):
                    un += Jm[3 * c, j] * v[j]
                    unf += Jm[3 * c, j] * vf[j]
                if un < -fp[P_CAPTURE] and phi + h * unf <= 0:
                    off = e * un + erp * min(phi, 0.0) / h
        else:
            mu[c] = 0.0
        qv[3 * c] += off
    # ---- FCLib PGS, warm-started when the contact set is unchanged
    rr_ = r[:mrows]
    same = fp[P_WARM] != 0.0 and prev[0, 0] == k and prev[0, 1] == nl
    if same:
        for c in range(k):
            if prev[1 + c, 0] != ci[c, 0] or prev[1 + c, 1] != ci[c, 1]:
                same = False
                break
    if not same:
        rr_[:] = 0.0
    io[O_WARM] = 1 if same else 0
    r0[:mrows] = rr_
    nq_ = safe_norm(qv)
    if not math.isfinite(nq_):
        return GENERAL
    # sinews.contact._fc3d_drive.solve_auto's PGS phase: chunks while the error halves over
    # ``window`` chunks; its careful verdict and ADMM phase are left to the caller
    chunk = np.int64(fp[P_CHUNK])
    max_iter = np.int64(fp[P_MAXIT])
    window = 4
    errors = np.empty(max_iter // max(chunk, 1) + 2)
    ne = 0
    used = 0
    conv = False
    err = np.inf
    while used < max_iter:
        it, err, conv = pgs_kernel(Wm, qv, mu, rr_, pbuf[: 3 * mrows], fp[P_TOL], min(chunk, max_iter - used),
                                   1.0, np.int64(10), 1.0 + nq_, np.bool_(False))
        used += it
        if conv:
            break
        errors[ne] = err
        ne += 1
        if not math.isfinite(err):
            break
        if ne > window and errors[ne - 1] > 0.5 * errors[ne - 1 - window]:
            break
    io[O_ITER] = used
    io[O_CONV] = 1 if conv else 0
    scratch[4 * nv + cap + lim.shape[0]] = err
    if not conv:
        return NEEDS_SOLVER
    finish(q, vf, Minv, Jm, rr_, h, mi, tv, q_out, v_out)
    for i in range(nv):
        if not math.isfinite(v_out[i]):
            return GENERAL
    return OK


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
def finish(q, vf, Minv, Jm, r, h, mi, tv, q_out, v_out):
    """``v+ = v_free + M^-1 (J^T r)`` and ``q+ = integrate(q, v+, h)``; returns the code of
    integrate."""
    nv = vf.shape[0]
    for j in range(nv):
        tv[j] = 0.0
    for a in range(Jm.shape[0]):
        x = r[a]
        if x != 0.0:
            for j in range(nv):
                tv[j] += Jm[a, j] * x
    for i in range(nv):
        s = 0.0
        for j in range(nv):
            s += Minv[i, j] * tv[j]
        v_out[i] = vf[i] + s
    return integrate(q, v_out, h, q_out, mi)


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
