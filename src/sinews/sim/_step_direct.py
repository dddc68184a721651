r"""The direct step of the default stepper's PGS (:mod:`sinews.sim._step_pgs`): the least-norm
solution of the rows of the contacts PGS has sticking, ``W_AA dr = -u_A``.

It goes through the smaller of two factors: ``W_AA`` itself when the sticking set has fewer rows
than the columns they touch (:func:`_factor_rows`, :func:`_apply_rows`), else
``G = Y_A^T Y_A`` with ``W = Y Y^T`` (at most ``nv x nv``; :func:`_factor`,
:func:`_direct_apply`).  Both keep the inverse of their Cholesky factor, so that applying them is
products.  :func:`polish` takes one step from scratch; :func:`_direct` reuses a factor kept
between steps while the sticking set stays the same (stamped in the PGS int buffer ``ibuf``).
The caller (:func:`sinews.sim._step_pgs.pgs_blocks`) judges every result by the same convergence
test, so a kept factor is only a preconditioner.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit


@njit(cache=True)
def _sticking_set(r, mu, cols, ncol, ibuf, nv, ng, n_old):
    """The rows of :func:`polish`'s direct step: ``act[a]`` (0, 1 or 3 rows of group ``a``),
    the ``n`` columns they touch (``cl[:n]``, in order of first touch; ``pos`` their inverse,
    -1 elsewhere), all in ``ibuf`` (``pos | cl | act``); returns ``(na, n, same)``: the number
    of active groups, ``n``, and whether ``act`` and ``cl[:n]`` are those already in ``ibuf``
    with ``n == n_old`` (the set of the factor kept there)."""
    pos = ibuf[:nv]
    cl = ibuf[nv : 2 * nv]
    act = ibuf[2 * nv : 2 * nv + ng]
    for j in range(nv):
        pos[j] = -1
    same = True
    n = 0
    na = 0
    for a in range(ng):
        k = 3 * a
        rn = r[k]
        t = 0
        if rn > 0.0:
            if mu[a] == 0.0:
                t = 1
            elif math.sqrt(r[k + 1] * r[k + 1] + r[k + 2] * r[k + 2]) < (1.0 - 1e-9) * mu[a] * rn:
                t = 3
        if act[a] != t:
            same = False
            act[a] = t
        if t != 0:
            na += 1
            for s in range(ncol[a, 0]):
                j = cols[a, s]
                if pos[j] < 0:
                    pos[j] = n
                    if n >= n_old or cl[n] != j:
                        same = False
                    cl[n] = j
                    n += 1
    if n != n_old:
        same = False
    return na, n, same


@njit(cache=True)
def _inverse_factor(G, n):
    """``G[:n, :n] + rho I = C C^T`` (Cholesky, ``rho = 1e-10 max diag G``), then ``K = C^-1``
    in place of ``C`` (lower triangle): ``(G + rho I)^-1 = K^T K``, applied by products whose
    rows do not wait on each other (:func:`_inverse_apply`); returns False where it fails."""
    dmax = 0.0
    for i in range(n):
        dmax = max(dmax, G[i, i])
    if not dmax > 0.0:
        return False
    rho = 1e-10 * dmax
    for j in range(n):
        d = G[j, j] + rho
        for t in range(j):
            d -= G[j, t] * G[j, t]
        if not d > 0.0:
            return False
        d = math.sqrt(d)
        G[j, j] = d
        for i in range(j + 1, n):
            s = G[i, j]
            for t in range(j):
                s -= G[i, t] * G[j, t]
            G[i, j] = s / d
    # K = C^-1 row by row: K_ij = -(sum_{j <= t < i} C_it K_tj) / C_ii (row i of C is read from
    # column j on, so K_ij may take C_ij's place)
    for i in range(n):
        for j in range(i):
            s = 0.0
            for t in range(j, i):
                s += G[i, t] * G[t, j]
            G[i, j] = -s / G[i, i]
        G[i, i] = 1.0 / G[i, i]
    return True


@njit(cache=True)
def _inverse_apply(G, n, x, tmp):
    """``x <- K^T K x = (G + rho I)^-1 x`` with ``K`` of :func:`_inverse_factor` in ``G``."""
    for i in range(n):
        s = 0.0
        for t in range(i + 1):
            s += G[i, t] * x[t]
        tmp[i] = s
    for j in range(n):
        x[j] = 0.0
    for i in range(n):
        y = tmp[i]
        for j in range(i + 1):
            x[j] += G[i, j] * y


@njit(cache=True)
def _factor(Yt, cols, ncol, G, ibuf, nv, ng, n):
    """:func:`_inverse_factor` of ``G = Y_A^T Y_A`` over the ``n`` columns of the sticking set
    in ``ibuf`` (:func:`_sticking_set`); returns False where it fails."""
    pos = ibuf[:nv]
    act = ibuf[2 * nv : 2 * nv + ng]
    for i in range(n):
        for j in range(i + 1):
            G[i, j] = 0.0
    for a in range(ng):
        for rr in range(act[a]):
            i = 3 * a + rr
            for t in range(ncol[a, 0]):
                cj = cols[a, t]
                pj = pos[cj]
                yj = Yt[cj, i]
                for s in range(ncol[a, 0]):
                    ck = cols[a, s]
                    pk = pos[ck]
                    if pk <= pj:
                        G[pj, pk] += yj * Yt[ck, i]
    return _inverse_factor(G, n)


@njit(cache=True)
def _direct_apply(mu, r, u, Yt, cols, ncol, G, x, tmp, ibuf, nv, ng, n):
    """``r_A <- r_A - Y_A (G + rho I)^-2 Y_A^T u_A`` with the factor of :func:`_factor` in
    ``G``, each changed contact projected onto its cone."""
    pos = ibuf[:nv]
    act = ibuf[2 * nv : 2 * nv + ng]
    for i in range(n):
        x[i] = 0.0
    for a in range(ng):
        k = 3 * a
        if act[a] == 3:
            u0 = u[k]
            u1 = u[k + 1]
            u2 = u[k + 2]
            for t in range(ncol[a, 0]):
                cj = cols[a, t]
                x[pos[cj]] += Yt[cj, k] * u0 + Yt[cj, k + 1] * u1 + Yt[cj, k + 2] * u2
        elif act[a] == 1:
            u0 = u[k]
            for t in range(ncol[a, 0]):
                cj = cols[a, t]
                x[pos[cj]] += Yt[cj, k] * u0
    _inverse_apply(G, n, x, tmp)
    _inverse_apply(G, n, x, tmp)
    for a in range(ng):
        if act[a] == 0:
            continue
        k = 3 * a
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for t in range(ncol[a, 0]):
            cj = cols[a, t]
            xj = x[pos[cj]]
            s0 += Yt[cj, k] * xj
            s1 += Yt[cj, k + 1] * xj
            s2 += Yt[cj, k + 2] * xj
        r[k] -= s0
        if act[a] == 3:
            r[k + 1] -= s1
            r[k + 2] -= s2
        _project(r, mu, a)


@njit(inline="always", cache=True)
def _project(r, mu, a):
    """Contact ``a``'s reaction onto its cone (``r_n >= 0``, ``||r_t|| <= mu r_n``)."""
    k = 3 * a
    rn = r[k]
    if rn < 0.0:
        rn = 0.0
    r[k] = rn
    lim = mu[a] * rn
    nt = math.sqrt(r[k + 1] * r[k + 1] + r[k + 2] * r[k + 2])
    if nt > lim and nt > 0.0:
        f = lim / nt
        r[k + 1] *= f
        r[k + 2] *= f


@njit(cache=True)
def _factor_rows(W, G, ibuf, nv, ng):
    """:func:`_inverse_factor` of ``W_AA`` over the active rows of ``ibuf``
    (:func:`_sticking_set`); returns False where it fails."""
    act = ibuf[2 * nv : 2 * nv + ng]
    i = 0
    for a in range(ng):
        for rr in range(act[a]):
            wi = 3 * a + rr
            j = 0
            for b in range(a + 1):
                for ss in range(act[b]):
                    if j <= i:
                        G[i, j] = W[wi, 3 * b + ss]
                    j += 1
            i += 1
    return _inverse_factor(G, i)


@njit(cache=True)
def _apply_rows(mu, r, u, G, x, tmp, ibuf, nv, ng, n):
    """``r_A <- r_A - (W_AA + rho I)^-1 u_A`` with the factor of :func:`_factor_rows` in ``G``,
    each changed contact projected onto its cone."""
    act = ibuf[2 * nv : 2 * nv + ng]
    i = 0
    for a in range(ng):
        for rr in range(act[a]):
            x[i] = u[3 * a + rr]
            i += 1
    _inverse_apply(G, n, x, tmp)
    i = 0
    for a in range(ng):
        if act[a] == 0:
            continue
        k = 3 * a
        for rr in range(act[a]):
            r[k + rr] -= x[i]
            i += 1
        _project(r, mu, a)


@njit(cache=True)
def _rows(ibuf, nv, ng):
    """The number of active rows of the sticking set in ``ibuf``."""
    n = 0
    for a in range(ng):
        n += ibuf[2 * nv + a]
    return n


@njit(cache=True)
def polish(W, q, mu, r, u, Yt, cols, ncol, G, x, ibuf):
    r"""One direct step on the contacts that PGS has sticking: ``r_A <- r_A + dr`` with
    ``dr = -W_AA^+ u_A`` (``u = W r + q`` at entry), then each changed contact projected onto its
    cone; returns whether a step was taken (no sticking contact, or a factor that fails: no).

    The active rows ``A`` are the three rows of each contact with ``r_n > 0`` strictly inside
    its friction cone (``||r_t|| < (1 - 1e-9) mu r_n``) and the normal row of each frictionless
    group with ``r_n > 0`` (joint limits); contacts at rest (``r = 0``) and sliding contacts
    keep their reactions.  With ``W = Y Y^T`` (``Y = J L^-1``, given transposed as ``Yt``,
    :func:`sinews.sim._step_rows.delassus`) and ``G = Y_A^T Y_A`` over the columns the active
    rows touch, the least-squares, least-norm solution of ``W_AA dr = -u_A`` is
    ``dr = -Y_A G^-2 Y_A^T u_A`` (``W_AA^+ = Y_A (Y_A^T Y_A)^-2 Y_A^T``); when the active
    rows are fewer than the columns they touch, ``dr = -W_AA^-1 u_A`` instead (the smaller
    factor; the same step where ``W_AA`` is invertible).  The factored matrix gets a relative
    ``1e-10`` of its largest diagonal entry (the directions ``Y_A`` does not see drop out),
    then Cholesky, then the factor's inverse (:func:`_inverse_factor`).  This is the Newton step of the
    sticking set (a stack at rest: every contact sticking), where PGS converges at the rate of
    ``W``'s smallest nonzero eigenvalue (hundreds of sweeps); the caller keeps the result only if
    its natural-map error is smaller.  ``G`` (nv, nv), ``x`` (nv,) and ``ibuf`` (2 nv + m / 3)
    are scratch."""
    m = q.shape[0]
    tmp = np.empty(max(m, Yt.shape[0]))
    return _direct(m, W, mu, r, u, Yt, cols, ncol, G, x, tmp, ibuf) != 0


@njit(cache=True)
def _direct(m, W, mu, r, u, Yt, cols, ncol, G, x, tmp, ibuf):
    """:func:`polish` for :func:`pgs_blocks`, reusing the factor of an earlier call while the
    sticking set (its rows and columns) is the same and the stamp at the end of ``ibuf`` says
    the factor in ``G`` was made for ``m`` rows (``ibuf[-2] = m``, ``ibuf[-1] = n``; ``ibuf[-2]
    = 0``: none).  Returns 0 (no step), 1 (a step on a fresh factor) or 2 (on a kept factor: the
    ``Y`` of the step that made it)."""
    ng = m // 3
    nv = Yt.shape[0]
    ni = ibuf.shape[0]
    stamp = ni >= 2 * nv + ng + 2
    n_old = -1
    if stamp and ibuf[ni - 2] == m:
        n_old = ibuf[ni - 1]
    na, n, same = _sticking_set(r, mu, cols, ncol, ibuf, nv, ng, n_old)
    if na == 0:
        if stamp:
            ibuf[ni - 2] = 0
        return 0
    nr = _rows(ibuf, nv, ng)
    how = 2
    if not same:
        how = 1
        if not (_factor_rows(W, G, ibuf, nv, ng) if nr < n else _factor(Yt, cols, ncol, G, ibuf, nv, ng, n)):
            if stamp:
                ibuf[ni - 2] = 0
            return 0
        if stamp:
            ibuf[ni - 2] = m
            ibuf[ni - 1] = n
    if nr < n:
        _apply_rows(mu, r, u, G, x, tmp, ibuf, nv, ng, nr)
    else:
        _direct_apply(mu, r, u, Yt, cols, ncol, G, x, tmp, ibuf, nv, ng, n)
    return how
