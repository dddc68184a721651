r"""The contact rows and the Delassus matrix of one ``"default"`` step, for
:func:`sinews.sim._step_kernels.coulomb_step`.

* :func:`contact_rows`: the tangent basis of each contact (``t1 = n x e_ax / |.|`` with
  ``e_ax`` the axis of ``n``'s smallest component, ``t2 = n x t1``: ``contact_problem.
  tangent_basis``), the rows ``J_i = F_i (J_B(p_i) - J_A(p_i))`` ([n, t1, t2], point Jacobian
  columns ``v_o + w x p`` of the world-axes motion subspaces ``S``), the joint-limit rows (the
  normal row three times) and, for each group of three rows, its columns: the dofs of the two
  links' paths to the root, in decreasing order.
* :func:`delassus`: with the branch-sparse factor ``M = L^T L`` (Featherstone, RBDA 6.5;
  :func:`sinews._ltl_kernels.ltl_factor`), ``Y = J L^-1`` row by row (stored transposed) (``y = L^-T j``: a row
  supported on a path to the root keeps that support, so each row costs O(path x depth)) and
  ``W = Y Y^T = J M^-1 J^T``, one 3x3 block per pair of row groups that share a tree (``M^-1``
  couples no two trees), symmetrised by construction, tiny diagonal entries lifted as in
  ``ContactProblem.fclib_problem``.
* :func:`solve_m`: ``x <- M^-1 x = L^-1 L^-T x``; :func:`finish`: ``v+ = v_free + M^-1 (J^T r)``
  and ``q+ = integrate(q, v+, h)``.
"""

from __future__ import annotations

import math

from .._configuration_kernels import integrate
from .._jit import njit
from .._layout import MI_IV, MI_NV, MI_PARENT


@njit(cache=True)
def contact_rows(k, nl, ci, cf, gi, mi, trees, S, lim_iv, lim_sgn, Jm, cols, ncol, mark):
    """Tangent bases (into ``cf[:, 7:13]``), rows ``Jm`` (3(k + nl), nv) and the columns of each
    row group: ``cols[g, :ncol[g, 0]]`` in one or two segments, ``[0, ncol[g, 1])`` and
    ``[ncol[g, 1], ncol[g, 0])``, each within one tree and decreasing (two segments when the two
    links are on different trees).  Only a group's columns of ``Jm`` are meaningful (the rest of
    its rows is not cleared: read them through ``cols``)."""
    for c in range(k):
        # zero the rows over the dofs of the (one or two) trees of the contact's links: the
        # only entries read (each group's columns lie in them)
        t0 = -1
        for side in range(2):
            l = gi[ci[c, side], 1]
            if l >= 0 and trees[0, l] != t0:
                tr = trees[0, l]
                t0 = tr
                for t in range(trees[4 + tr, 0]):
                    j = trees[4 + tr, 1 + t]
                    Jm[3 * c, j] = 0.0
                    Jm[3 * c + 1, j] = 0.0
                    Jm[3 * c + 2, j] = 0.0
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
        m = 0
        split = 0
        for side in range(2):
            if side == 1:
                split = m
            l = gi[ci[c, side], 1]
            sg = -1.0 if side == 0 else 1.0
            while l >= 0:
                iv = mi[l, MI_IV]
                nd = mi[l, MI_NV]
                for dd in range(nd):
                    col = iv + nd - 1 - dd  # decreasing along each path: little left to sort
                    if not mark[col]:
                        mark[col] = True
                        cols[c, m] = col
                        m += 1
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
        la = gi[ci[c, 0], 1]
        lb = gi[ci[c, 1], 1]
        if la < 0 or lb < 0 or trees[0, la] == trees[0, lb]:
            split = m  # one tree: one segment
        # decreasing order in each segment (insertion sort: a few dozen entries), marks cleared
        for seg in range(2):
            lo = 0 if seg == 0 else split
            hi = split if seg == 0 else m
            for i in range(lo + 1, hi):
                x = cols[c, i]
                j = i - 1
                while j >= lo and cols[c, j] < x:
                    cols[c, j + 1] = cols[c, j]
                    j -= 1
                cols[c, j + 1] = x
        for i in range(m):
            mark[cols[c, i]] = False
        ncol[c, 0] = m
        ncol[c, 1] = split
    for t in range(nl):
        for rr in range(3):
            Jm[3 * (k + t) + rr, lim_iv[t]] = lim_sgn[t]
        cols[k + t, 0] = lim_iv[t]
        ncol[k + t, 0] = 1
        ncol[k + t, 1] = 1


@njit(cache=True, fastmath={"contract"})
def delassus(ng, Jm, L, lnz, trees, cols, ncol, ctree, Yt, Wm, dinv, nb, nbr, zero):
    """``Y = J L^-1``, stored transposed (``Yt`` (nv, 3 ng): the three rows of a group adjacent
    for each column; zero outside each group's columns within its trees, not cleared outside
    them), and ``W = Y Y^T`` (lower and upper blocks) for ``ng`` row groups of three rows; tiny
    diagonal entries lifted.  ``dinv`` (nv,) is scratch (it gets ``1 / L_ii``).  Only the blocks
    of the groups that share a tree are written (``nbr[a, :nb[a]]``,
    :func:`sinews.sim._step_pgs.block_lists`); with ``zero`` the other entries of ``W`` are
    zeroed first (skip it when they are still zero: the same blocks as at the last call on this
    buffer).  Products may be fused (FMA)."""
    mrows = 3 * ng
    nv = Jm.shape[1]
    for i in range(nv):
        dinv[i] = 1.0 / L[i, i]
    for ga in range(ng):
        a = 3 * ga
        t0 = -1
        for side in range(2):  # zero the rows over the group's trees (the entries read below)
            tr = ctree[ga, side]
            if tr >= 0 and tr != t0:
                t0 = tr
                for t in range(trees[4 + tr, 0]):
                    j = trees[4 + tr, 1 + t]
                    Yt[j, a] = 0.0
                    Yt[j, a + 1] = 0.0
                    Yt[j, a + 2] = 0.0
        # y <- L^-T j over the group's columns (decreasing, closed under ancestors), the three
        # rows together: y_i = (j_i - sum_{descendants c} L_ci y_c) / L_ii, the sums gathered in Yt
        for t in range(ncol[ga, 0]):
            i = cols[ga, t]
            d = dinv[i]
            y0 = (Jm[a, i] + Yt[i, a]) * d
            y1 = (Jm[a + 1, i] + Yt[i, a + 1]) * d
            y2 = (Jm[a + 2, i] + Yt[i, a + 2]) * d
            Yt[i, a] = y0
            Yt[i, a + 1] = y1
            Yt[i, a + 2] = y2
            for s in range(lnz[i, 0]):
                j = lnz[i, 1 + s]
                lij = L[i, j]
                Yt[j, a] -= lij * y0
                Yt[j, a + 1] -= lij * y1
                Yt[j, a + 2] -= lij * y2
    if zero:
        for a in range(mrows):
            for b in range(mrows):
                Wm[a, b] = 0.0
    for ga in range(ng):
        for tb in range(nb[ga]):
            gb = nbr[ga, tb]
            if gb > ga:
                break
            a = 3 * ga
            b = 3 * gb
            w00 = w01 = w02 = w10 = w11 = w12 = w20 = w21 = w22 = 0.0
            for seg in range(2):  # the segments of b's columns on a tree of a's
                lo = 0 if seg == 0 else ncol[gb, 1]
                hi = ncol[gb, 1] if seg == 0 else ncol[gb, 0]
                if hi <= lo:
                    continue
                tr = trees[1, cols[gb, lo]]
                if tr != ctree[ga, 0] and tr != ctree[ga, 1]:
                    continue
                for t in range(lo, hi):
                    j = cols[gb, t]
                    y0 = Yt[j, a]
                    y1 = Yt[j, a + 1]
                    y2 = Yt[j, a + 2]
                    z0 = Yt[j, b]
                    z1 = Yt[j, b + 1]
                    z2 = Yt[j, b + 2]
                    w00 += y0 * z0
                    w01 += y0 * z1
                    w02 += y0 * z2
                    w10 += y1 * z0
                    w11 += y1 * z1
                    w12 += y1 * z2
                    w20 += y2 * z0
                    w21 += y2 * z1
                    w22 += y2 * z2
            if ga == gb:  # the diagonal block: exactly symmetric
                w10 = w01
                w20 = w02
                w21 = w12
            Wm[a, b] = w00
            Wm[a, b + 1] = w01
            Wm[a, b + 2] = w02
            Wm[a + 1, b] = w10
            Wm[a + 1, b + 1] = w11
            Wm[a + 1, b + 2] = w12
            Wm[a + 2, b] = w20
            Wm[a + 2, b + 1] = w21
            Wm[a + 2, b + 2] = w22
            Wm[b, a] = w00
            Wm[b + 1, a] = w01
            Wm[b + 2, a] = w02
            Wm[b, a + 1] = w10
            Wm[b + 1, a + 1] = w11
            Wm[b + 2, a + 1] = w12
            Wm[b, a + 2] = w20
            Wm[b + 1, a + 2] = w21
            Wm[b + 2, a + 2] = w22
    dmax = 0.0
    for a in range(mrows):
        dmax = max(dmax, Wm[a, a])
    thr = 1e-12 * max(1.0, dmax)
    for a in range(mrows):
        if Wm[a, a] <= thr:
            Wm[a, a] += 1e-9 * max(1.0, dmax)


@njit(cache=True)
def nonzero_ancestors(L, lam, lnz):
    """``lnz[i, 1 : 1 + lnz[i, 0]]``: the ancestors ``j`` of dof ``i`` (``lam`` chain, decreasing)
    with ``L[i, j] != 0``, the only entries of the branch-sparse factor the solves below use (a
    free body whose centre of mass is its frame's origin has a diagonal block; skipping exact
    zeros changes no value)."""
    for i in range(L.shape[0]):
        c = 0
        j = lam[i]
        while j >= 0:
            if L[i, j] != 0.0:
                lnz[i, 1 + c] = j
                c += 1
            j = lam[j]
        lnz[i, 0] = c


@njit(cache=True)
def solve_m(L, lnz, x):
    """In place ``x <- M^-1 x = L^-1 L^-T x`` (the branch-sparse factor, its nonzero entries
    listed in ``lnz`` (:func:`nonzero_ancestors`): O(n depth))."""
    n = x.shape[0]
    for i in range(n - 1, -1, -1):
        x[i] /= L[i, i]
        xi = x[i]
        for s in range(lnz[i, 0]):
            j = lnz[i, 1 + s]
            x[j] -= L[i, j] * xi
    for i in range(n):
        acc = x[i]
        for s in range(lnz[i, 0]):
            j = lnz[i, 1 + s]
            acc -= L[i, j] * x[j]
        x[i] = acc / L[i, i]


@njit(cache=True)
def finish(q, vf, L, lnz, Jm, cols, ncol, r, h, mi, tv, q_out, v_out):
    """``v+ = v_free + L^-1 L^-T (J^T r)`` and ``q+ = integrate(q, v+, h)``; returns the code
    of integrate."""
    nv = vf.shape[0]
    for j in range(nv):
        tv[j] = 0.0
    for a in range(Jm.shape[0]):
        x = r[a]
        if x != 0.0:
            g = a // 3
            for t in range(ncol[g, 0]):
                j = cols[g, t]
                tv[j] += Jm[a, j] * x
    solve_m(L, lnz, tv)
    for i in range(nv):
        v_out[i] = vf[i] + tv[i]
    return integrate(q, v_out, h, q_out, mi)
