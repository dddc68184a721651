"""The one-call compiled null-space method of contacts-only sets (forward dynamics and impulses).

Same packed data and calling convention as :func:`sinews.constraints._fast.contact_range_space`
(``pi``, ``ps`` of :class:`sinews.constraints._compiled_contacts.CompiledContacts`; the kernel's
own scratch is the ``P_NS`` region of ``ps``).  The maths is that of
:func:`sinews.constraints.null_space.solve_null_space`: a column-pivoted Householder QR
``G^T P = Q [R; 0]``, ``Q = [Y Z]``, then

    R^T x_y = P^T bottom,    (Z^T H Z) x_z = Z^T top - (Z^T H Y) x_y,    x = Q [x_y; x_z]
    R P^T lambda = Y^T (H x - top) = (Y^T H Y) x_y + (Y^T H Z) x_z - Y^T top

with ``Q^T H Q`` formed by applying the reflectors to ``H`` from both sides (no explicit ``Q``).
Impulses are solved for the jump ``d = qd_plus - qd_minus`` (``top = 0``, ``bottom = target -
G qd_minus``), which needs no ``H qd_minus`` product.
Only the regular case is solved here: full row rank (every ``|R_kk|`` clearly above the general
path's rank tolerance) and ``Z^T H Z`` clearly positive definite; anything else (and a row that
is zero up to rounding, or a non-finite answer) returns a positive code and the caller takes
the general path, which gives its flagged least-squares answer or its error.  Margins
(``_MARGIN``) keep the borderline cases on the general path so that both paths never disagree
on a rank decision.
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

from .._layout import MI_STRIDE
from ._fast import (
    _result,
    _tree_and_rows,
    _zero_row_tol,
    F_IMPULSE,
    P_ALPHA2,
    P_BOTTOM,
    P_C,
    P_CHAIN,
    P_CPTR,
    P_G,
    P_GAMMA,
    P_H,
    P_LINKS,
    P_MAXM,
    P_MI,
    P_N,
    P_NL,
    P_NPTS,
    P_NQ,
    P_NROWS,
    P_NS,
    P_NV,
    P_NWS,
    P_PPTR,
    P_RLINK,
    P_WS,
    P_Y,
    P_ZERO,
)
from ._linalg import CHOL_RTOL as _CHOL_RTOL
from ._linalg import RANK_RTOL as _RANK_RTOL

# borderline rank / definiteness decisions are left to the general path
_MARGIN = 1e3
_U0, _U1, _U2, _U3, _U4 = np.uint64(0), np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)


def ns_scratch_size(nv, n):
    """Size of the ``P_NS`` region: ``Q^T H Q`` (nv x nv), the QR rows (n x nv), the reflector
    factors, pivots and ``diag(R)`` (3 n), three nv-vectors and one n-vector."""
    return nv * nv + n * nv + 4 * n + 3 * nv


@njit(cache=True)
def contact_null_space(q, v, tau, fext, pi, mf, ps, x, mult, flags):
    """Forward dynamics or impulses (``flags`` as in
    :func:`sinews.constraints._fast.contact_range_space`) by the null-space method in one call.
    Returns ``(code, residual, converged)``; code 0, a negative input code, 2 (rank deficient,
    a zero row, or ``Z^T H Z`` not clearly positive definite) or 3 (not finite)."""
    nl = pi[P_NL]
    nv = pi[P_NV]
    npts = pi[P_NPTS]
    n = pi[P_NROWS]
    mi = pi[pi[P_MI] : pi[P_MI] + nl * MI_STRIDE].reshape((nl, MI_STRIDE))
    links = pi[pi[P_LINKS] : pi[P_LINKS] + npts]
    pptr = pi[pi[P_PPTR] : pi[P_PPTR] + npts + 1]
    cptr = pi[pi[P_CPTR] : pi[P_CPTR] + npts + 1]
    chain = pi[pi[P_CHAIN] : pi[P_CHAIN] + cptr[npts]]
    r_link = ps[pi[P_RLINK] : pi[P_RLINK] + 3 * npts].reshape((npts, 3))
    N = ps[pi[P_N] : pi[P_N] + 3 * n].reshape((n, 3))
    ws = ps[pi[P_WS] : pi[P_WS] + pi[P_NWS]]
    alpha2 = ps[pi[P_ALPHA2] : pi[P_ALPHA2] + n]
    bottom = ps[pi[P_BOTTOM] : pi[P_BOTTOM] + n]
    mm = pi[P_MAXM]
    G = ps[pi[P_G] : pi[P_G] + n * mm].reshape((n, mm))
    Yc = ps[pi[P_Y] : pi[P_Y] + n * mm].reshape((n, mm))
    gamma = ps[pi[P_GAMMA] : pi[P_GAMMA] + n]
    H = ps[pi[P_H] : pi[P_H] + nv * nv].reshape((nv, nv))
    zero = ps[pi[P_ZERO] : pi[P_ZERO] + nv]
    C = ps[pi[P_C] : pi[P_C] + nv]
    o = pi[P_NS]
    A = ps[o : o + nv * nv].reshape((nv, nv))
    o += nv * nv
    V = ps[o : o + n * nv].reshape((n, nv))
    o += n * nv
    th = ps[o : o + n]
    o += n
    piv = ps[o : o + n]
    o += n
    p = ps[o : o + nv]
    o += nv
    b = ps[o : o + nv]
    o += nv
    xq = ps[o : o + nv]
    o += nv
    rhs = ps[o : o + n]
    o += n
    rd = ps[o : o + n]

    if q.shape[0] != pi[P_NQ]:
        return -11, 0.0, False
    if v.shape[0] != nv:
        return -12, 0.0, False
    if tau.shape[0] != nv:
        return -13, 0.0, False
    impulse = (flags & F_IMPULSE) != 0
    code = _tree_and_rows(q, v, tau, fext, flags, mi, mf, ws, H, C, zero, links, r_link, pptr, N,
                          cptr, chain, G, Yc, gamma, alpha2, bottom)
    if code != 0:
        return code, 0.0, False
    # dense rows of G (row r of V = column r of G^T) and the zero-row test of the general path
    tiny = _zero_row_tol(G, pptr, cptr)
    for pt in range(npts):
        c0 = cptr[pt]
        for r in range(pptr[pt], pptr[pt + 1]):
            rmax = 0.0
            for i in range(nv):
                V[r, i] = 0.0
            for t in range(cptr[pt + 1] - c0):
                V[r, chain[c0 + t]] = G[r, t]
                if abs(G[r, t]) > rmax:
                    rmax = abs(G[r, t])
            if not rmax > tiny:
                return 2, 0.0, False
    # top (dynamics: tau - C; impulses: H qd_minus; crba_core fills both triangles of H)
    if impulse:
        # solved for the jump d = qd_plus - qd_minus: H d = G^T lambda, G d = target - G qd_minus
        # (top = 0: no H qd_minus product); the shifted target goes to gamma (unused here)
        for i in range(nv):
            b[i] = 0.0
        for pt in range(npts):
            c0 = cptr[pt]
            for r in range(pptr[pt], pptr[pt + 1]):
                s = 0.0
                for t in range(cptr[pt + 1] - c0):
                    s += G[r, t] * v[chain[c0 + t]]
                gamma[r] = bottom[r] - s
    else:
        for i in range(nv):
            b[i] = tau[i] - C[i]
    if n > nv:
        return 2, 0.0, False
    # column-pivoted Householder QR of G^T, on the rows of V (the columns of G^T): after step
    # k, rd[k] = R[k, k], V[k, k:] = the reflector's vector u_k (V[k, k] = 1) and V[j, k] =
    # R[k, j] for j > k.  Column norms are downdated (LAPACK's dgeqp3 rule: recomputed when
    # the downdate cancels); dot products use two accumulators (shorter dependency chains).
    for j in range(n):
        piv[j] = j
        s0 = 0.0
        s1 = 0.0
        i = 0
        while i + 1 < nv:
            s0 += V[j, i] * V[j, i]
            s1 += V[j, i + 1] * V[j, i + 1]
            i += 2
        if i < nv:
            s0 += V[j, i] * V[j, i]
        p[j] = s0 + s1  # squared norm of the trailing part of column j
        x[j] = s0 + s1  # its value when last computed exactly
    r00 = 0.0
    nvu = np.uint64(nv)
    for k in range(n):
        best = -1.0
        jb = k
        for j in range(k, n):
            if p[j] > best:
                best = p[j]
                jb = j
        if jb != k:
            for i in range(nv):
                t = V[k, i]
                V[k, i] = V[jb, i]
                V[jb, i] = t
            t = piv[k]
            piv[k] = piv[jb]
            piv[jb] = t
            t = p[k]
            p[k] = p[jb]
            p[jb] = t
            t = x[k]
            x[k] = x[jb]
            x[jb] = t
        alpha = V[k, k]
        s0 = 0.0
        s1 = 0.0
        i = k + 1
        while i + 1 < nv:
            s0 += V[k, i] * V[k, i]
            s1 += V[k, i + 1] * V[k, i + 1]
            i += 2
        if i < nv:
            s0 += V[k, i] * V[k, i]
        nrm = math.sqrt(alpha * alpha + (s0 + s1))
        if k == 0:
            r00 = nrm
        if not nrm > _MARGIN * _RANK_RTOL * r00:
            return 2, 0.0, False
        beta = -nrm if alpha >= 0.0 else nrm
        tk = (beta - alpha) / beta
        th[k] = tk
        rd[k] = beta
        sc = 1.0 / (alpha - beta)
        for i in range(k + 1, nv):
            V[k, i] *= sc
        V[k, k] = 1.0
        ku = np.uint64(k)
        for j in range(k + 1, n):  # apply to the remaining columns of G^T
            s0 = 0.0
            s1 = 0.0
            i = k
            while i + 1 < nv:
                s0 += V[k, i] * V[j, i]
                s1 += V[k, i + 1] * V[j, i + 1]
                i += 2
            if i < nv:
                s0 += V[k, i] * V[j, i]
            sj = tk * (s0 + s1)
            for i in range(ku, nvu):
                V[j, i] -= sj * V[k, i]
            rkj = V[j, k]
            t = p[j] - rkj * rkj
            if t > 1e-3 * x[j]:
                p[j] = t
            else:  # cancellation: recompute
                t = 0.0
                for i in range(k + 1, nv):
                    t += V[j, i] * V[j, i]
                p[j] = t
                x[j] = t
    # lower triangle of A <- Q^T H Q and b <- Q^T top, reflector by reflector: with u = u_k
    # (zero before k), p = tk A u, w = p - (tk / 2)(p . u) u, A <- A - u w^T - w u^T; rows
    # before k do not change; in the lower triangle, A[i, j] (i > j) adds A[i, j] u_i to p_j
    # and A[i, j] u_j to p_i
    for i in range(nv):
        for j in range(i + 1):
            A[i, j] = H[i, j]
    for k in range(n):
        tk = th[k]
        for j in range(nv):
            p[j] = 0.0
        ku = np.uint64(k)
        for i in range(k, nv):
            ui = V[k, i]
            iu = np.uint64(i)
            # (unsigned inner indices: no negative-index wraparound code in the hot loops)
            for j in range(_U0, iu):
                p[j] += A[i, j] * ui
            # the dot of the trailing part of the row with u, four accumulators
            s0 = A[i, i] * ui
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            cnt = (iu - ku) // _U4
            for t in range(_U0, cnt):
                j = ku + _U4 * t
                s0 += A[i, j] * V[k, j]
                s1 += A[i, j + _U1] * V[k, j + _U1]
                s2 += A[i, j + _U2] * V[k, j + _U2]
                s3 += A[i, j + _U3] * V[k, j + _U3]
            for j in range(ku + _U4 * cnt, iu):
                s0 += A[i, j] * V[k, j]
            p[i] += (s0 + s1) + (s2 + s3)
        s0 = 0.0
        for j in range(nv):
            p[j] *= tk
        for j in range(k, nv):
            s0 += p[j] * V[k, j]
        h = 0.5 * tk * s0
        for j in range(k, nv):
            p[j] -= h * V[k, j]
        for i in range(k, nv):
            ui = V[k, i]
            wi = p[i]
            for j in range(_U0, ku):
                A[i, j] -= ui * p[j]
            for j in range(ku, np.uint64(i + 1)):
                A[i, j] -= ui * p[j] + wi * V[k, j]
        if not impulse:
            s0 = 0.0
            for j in range(k, nv):
                s0 += V[k, j] * b[j]
            s0 *= tk
            for j in range(k, nv):
                b[j] -= s0 * V[k, j]
    # R^T x_y = P^T bottom (R^T[j, i] = R[i, j] = V[j, i], i < j)
    bot = gamma if impulse else bottom
    for j in range(n):
        s = bot[int(piv[j])]
        for i in range(j):
            s -= V[j, i] * xq[i]
        xq[j] = s / rd[j]
    # (Z^T H Z) x_z = Z^T top - (Z^T H Y) x_y: Cholesky of the lower-right block in place
    m = nv - n
    if m > 0:
        dmax = 0.0
        for i in range(n, nv):
            if abs(A[i, i]) > dmax:
                dmax = abs(A[i, i])
        for jj in range(n, nv):  # right-looking: the trailing updates are independent
            s = A[jj, jj]
            if not s > _MARGIN * _CHOL_RTOL * dmax:
                return 2, 0.0, False
            d = math.sqrt(s)
            A[jj, jj] = d
            dinv = 1.0 / d
            for ii in range(jj + 1, nv):  # the column, also kept contiguous in p
                A[ii, jj] *= dinv
                p[ii] = A[ii, jj]
            for ii in range(jj + 1, nv):
                lij = p[ii]
                for kk in range(np.uint64(jj + 1), np.uint64(ii + 1)):
                    A[ii, kk] -= lij * p[kk]
        for i in range(n, nv):
            s = b[i]
            for j in range(n):
                s -= A[i, j] * xq[j]
            for kk in range(n, i):
                s -= A[i, kk] * xq[kk]
            xq[i] = s / A[i, i]
        for i in range(nv - 1, n - 1, -1):
            s = xq[i]
            for kk in range(i + 1, nv):
                s -= A[kk, i] * xq[kk]
            xq[i] = s / A[i, i]
    # multipliers: R mu = (Y^T H Y) x_y + (Y^T H Z) x_z - Y^T top (from the lower triangle;
    # rows below n and columns before n are untouched by the Cholesky), lambda[piv] = mu
    for i in range(n):
        s = -b[i]
        for j in range(i + 1):
            s += A[i, j] * xq[j]
        for j in range(i + 1, nv):
            s += A[j, i] * xq[j]
        rhs[i] = s
    for i in range(n - 1, -1, -1):
        s = rhs[i]
        for j in range(i + 1, n):
            s -= V[j, i] * rhs[j]
        rhs[i] = s / rd[i]
    for i in range(n):
        mult[int(piv[i])] = rhs[i]
    # x = Q xq: the reflectors in reverse order
    for i in range(nv):
        x[i] = xq[i]
    for k in range(n - 1, -1, -1):
        s = 0.0
        for j in range(k, nv):
            s += V[k, j] * x[j]
        s *= th[k]
        for j in range(k, nv):
            x[j] -= s * V[k, j]
    if impulse:
        for i in range(nv):
            x[i] += v[i]
    return _result(G, x, mult, bottom, pptr, cptr, chain, nv, n)
