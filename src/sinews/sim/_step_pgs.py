r"""PGS sweeps over the nonzero 3x3 blocks of W, for :func:`sinews.sim._step_kernels.coulomb_step`.

:func:`pgs_blocks` is :func:`sinews.contact._fc3d_pgs.pgs_kernel` (projected block Gauss-Seidel
on the circular Coulomb cones, the same contact update, the same stopping rules: the proxy test, the
natural-map error every ``check_every`` sweeps, the careful verdict of
:func:`sinews.contact._fc3d_exact.careful_error_dense`, the lowered internal target) with two
changes: the velocities ``u_a = q_a + sum_b W_ab r_b`` of a contact are summed over the contacts
``b`` whose block ``W_ab`` can be nonzero (the row groups that share a tree with ``a``; ``nbr[a,
:nb[a]]``, increasing) instead of over every column, and the relaxed steps ``omega / W_nn`` and
``omega / w_t`` are computed once per call (products in the sweeps instead of divisions).  The
skipped terms are exact zeros, so the iterates differ from the dense kernel's only by rounding;
the convergence tests (:func:`block_check`, :func:`careful_blocks`) skip the same zeros.

Two more changes: when the proxy test passes (the reactions stopped changing) and the internal
target was never lowered, the test goes straight to the careful verdict (the plain error would
only decide whether to take it); and with ``direct`` (the stepper's default) a convergence test
also runs after sweep :data:`DIRECT_FIRST`, and a test that fails is followed by
:func:`polish`: the least-norm solution of the rows of the contacts PGS has sticking,
``W_AA dr = -u_A``, through ``W = Y Y^T`` (an ``nv x nv`` Cholesky factor), kept when it
lowers the natural-map error.  PGS converges at the rate of ``W``'s smallest nonzero eigenvalue:
on a stack of five boxes (20 contacts, W of rank 30 and condition ~3000 on its range) plain
sweeps gain a few per cent per ten sweeps near the solution (46 sweeps a step on average, and
stagnation from a cold start); the direct step lands on the solution of the sticking set, whose
error is the inconsistency of the gap offsets (~1e-7), in one go.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit
from ..contact._fc3d_cone import natural_map_sq_sum
from ..contact._fc3d_exact import _EXACT, _NO_DATA, _NO_INDEX, _finish, verdict_floor
from ..contact._fc3d_pgs import _stop


@njit(inline="always", cache=True)
def _update(a, un, u1, u2, r, mu, sn, wtn1, wtn2, st):
    """:func:`sinews.contact._fc3d_pgs._contact_update` with the steps ``sn = omega / W_nn`` and
    ``st = omega / w_t`` precomputed (a product where it divides); returns (max change, max |r_a|)."""
    k = 3 * a
    rn_old = r[k]
    r1_old = r[k + 1]
    r2_old = r[k + 2]
    rn = rn_old - sn * un
    if rn < 0.0:
        rn = 0.0
    drn = rn - rn_old
    u1 += wtn1 * drn
    u2 += wtn2 * drn
    r1 = r1_old - st * u1
    r2 = r2_old - st * u2
    lim = mu[a] * rn
    nt = np.sqrt(r1 * r1 + r2 * r2)
    if nt > lim:
        if nt > 0.0:
            s = lim / nt
            r1 *= s
            r2 *= s
    r[k] = rn
    r[k + 1] = r1
    r[k + 2] = r2
    return (max(abs(rn - rn_old), abs(r1 - r1_old), abs(r2 - r2_old)),
            max(abs(rn), abs(r1), abs(r2)))


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _block_u_bound(W, q, r, u, b, nb, nbr, bound):
    """``u = W r + q`` over the nonzero blocks (``nbr``, increasing: column order), and with
    ``bound`` also ``b = |W| |r| + |q|``: what :func:`sinews.contact._fc3d_exact.
    careful_error_dense` computes (the skipped products are exact zeros)."""
    for a in range(q.shape[0] // 3):
        for rr in range(3):
            i = 3 * a + rr
            s = q[i]
            t = abs(q[i])
            for tt in range(nb[a]):
                j = 3 * nbr[a, tt]
                p0 = W[i, j] * r[j]
                p1 = W[i, j + 1] * r[j + 1]
                p2 = W[i, j + 2] * r[j + 2]
                s += p0
                s += p1
                s += p2
                if bound:
                    t += abs(p0)
                    t += abs(p1)
                    t += abs(p2)
            u[i] = s
            if bound:
                b[i] = t


@njit(cache=True, nogil=True, fastmath=_EXACT)
def careful_blocks(W, q, mu, r, scale, tol, floor, u, F, work, nb, nbr):
    """:func:`sinews.contact._fc3d_exact.careful_error_dense` with ``u = W r + q`` summed over
    the nonzero blocks only (the same value); returns (error, tier)."""
    _block_u_bound(W, q, r, u, work, nb, nbr, True)
    return _finish(r, u, mu, 3, scale, tol, floor, F, work, True, W, _NO_INDEX, _NO_INDEX, _NO_DATA, q)


@njit(cache=True, nogil=True)
def block_check(W, q, mu, r, u, F, work, scale, tol, floor, target, proxy, proxy_tol, nb, nbr):
    """:func:`sinews.contact._fc3d_pgs.dense_check` with the products over the nonzero blocks:
    ``u = W r + q`` (and its rounding bound, in ``work``), the natural-map error, and the careful
    verdict (:func:`careful_blocks` on the same ``u``) when that error passes the internal
    ``target`` (lowered when the verdict fails); returns ``(done, converged, err, target,
    proxy_tol)``."""
    _block_u_bound(W, q, r, u, work, nb, nbr, True)  # u and its bound, as careful_blocks has them
    err = np.sqrt(natural_map_sq_sum(r, u, mu, 3)) / scale
    if not np.isfinite(err):
        return True, False, err, target, proxy_tol
    if err <= target:
        err, tier = _finish(r, u, mu, 3, scale, tol, floor, F, work, True, W, _NO_INDEX, _NO_INDEX, _NO_DATA, q)
        if err <= tol:
            return True, True, err, target, proxy_tol
        target = 0.5 * min(target, tol * tol / err)
    if proxy <= proxy_tol:
        proxy_tol *= 0.1
    return False, False, err, target, proxy_tol


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
    ``dr = -Y_A G^-2 Y_A^T u_A`` (``W_AA^+ = Y_A (Y_A^T Y_A)^-2 Y_A^T``); ``G`` gets a relative
    ``1e-10`` of its largest diagonal entry (the directions ``Y_A`` does not see drop out),
    Cholesky-factored.  This is the Newton step of the
    sticking set (a stack at rest: every contact sticking), where PGS converges at the rate of
    ``W``'s smallest nonzero eigenvalue (hundreds of sweeps); the caller keeps the result only if
    its natural-map error is smaller.  ``G`` (nv, nv), ``x`` (nv,) and ``ibuf`` (2 nv + m / 3)
    are scratch."""
    m = q.shape[0]
    ng = m // 3
    nv = Yt.shape[0]
    pos = ibuf[:nv]
    cl = ibuf[nv : 2 * nv]
    act = ibuf[2 * nv : 2 * nv + ng]
    for j in range(nv):
        pos[j] = -1
    n = 0
    na = 0
    for a in range(ng):
        k = 3 * a
        rn = r[k]
        act[a] = 0
        if rn > 0.0:
            if mu[a] == 0.0:
                act[a] = 1
            elif math.sqrt(r[k + 1] * r[k + 1] + r[k + 2] * r[k + 2]) < (1.0 - 1e-9) * mu[a] * rn:
                act[a] = 3
        if act[a] != 0:
            na += 1
            for t in range(ncol[a, 0]):
                j = cols[a, t]
                if pos[j] < 0:
                    pos[j] = n
                    cl[n] = j
                    n += 1
    if na == 0:
        return False
    # G = Y_A^T Y_A (lower triangle) over the n touched columns, s = Y_A^T u_A in x
    for i in range(n):
        x[i] = 0.0
        for j in range(i + 1):
            G[i, j] = 0.0
    for a in range(ng):
        for rr in range(act[a]):
            i = 3 * a + rr
            ui = u[i]
            for t in range(ncol[a, 0]):
                cj = cols[a, t]
                pj = pos[cj]
                yj = Yt[cj, i]
                x[pj] += yj * ui
                for s in range(ncol[a, 0]):
                    ck = cols[a, s]
                    pk = pos[ck]
                    if pk <= pj:
                        G[pj, pk] += yj * Yt[ck, i]
    dmax = 0.0
    for i in range(n):
        dmax = max(dmax, G[i, i])
    if not dmax > 0.0:
        return False
    rho = 1e-10 * dmax
    # Cholesky G + rho I = C C^T (C in the lower triangle)
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
    for rep in range(2):  # x <- G^-1 x, twice
        for i in range(n):
            s = x[i]
            for t in range(i):
                s -= G[i, t] * x[t]
            x[i] = s / G[i, i]
        for i in range(n - 1, -1, -1):
            s = x[i]
            for t in range(i + 1, n):
                s -= G[t, i] * x[t]
            x[i] = s / G[i, i]
    # r_A -= Y_A x, each changed contact projected onto its cone
    for a in range(ng):
        if act[a] == 0:
            continue
        k = 3 * a
        for rr in range(act[a]):
            s = 0.0
            for t in range(ncol[a, 0]):
                cj = cols[a, t]
                s += Yt[cj, k + rr] * x[pos[cj]]
            r[k + rr] -= s
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
    return True


#: The sweep after which :func:`pgs_blocks` first tries the direct step (then after failed tests)
DIRECT_FIRST = 3


@njit(cache=True, nogil=True)
def pgs_blocks(W, q, mu, r, buf, nb, nbr, tol, max_iter, omega, check_every, scale, careful, Yt, cols, ncol,
               ibuf, direct):
    """PGS sweeps in place on r over the blocks listed in ``nb``/``nbr``; returns
    (iterations, error, converged) as :func:`sinews.contact._fc3d_pgs.pgs_kernel`.

    With ``direct``, a convergence test also runs after sweep :data:`DIRECT_FIRST`, and a test
    that fails from then on is followed by a :func:`polish` step (kept when it lowers the
    natural-map error; its verdict is the same test's); each step not kept doubles the sweeps
    before the next try (after sweeps 3, 9, 21, 45, ...: few tries where the sticking set is
    wrong, e.g. contacts still starting to slide).  ``Yt``: ``Y = J L^-1`` transposed (nv, m);
    ``buf`` is (5 m + nv (nv + 1)) scratch, ``ibuf`` (2 nv + m / 3) int scratch."""
    floor = verdict_floor(tol, scale)
    m = q.shape[0]
    nc = m // 3
    nv = Yt.shape[0]
    u = buf[:m]
    F = buf[m : 2 * m]
    work = buf[2 * m : 3 * m]
    step = buf[3 * m : 3 * m + 2 * nc]
    rsave = buf[4 * m : 5 * m]
    G = buf[5 * m : 5 * m + nv * nv].reshape((nv, nv))
    x = buf[5 * m + nv * nv : 5 * m + nv * nv + nv]
    # the relaxed steps omega / W_nn and omega / w_t of each contact (w_t = (W_t1t1 + W_t2t2) / 2)
    for a in range(nc):
        k = 3 * a
        step[2 * a] = omega / W[k, k]
        step[2 * a + 1] = omega / (0.5 * (W[k + 1, k + 1] + W[k + 2, k + 2]))
    proxy_tol = tol
    target = tol
    err = np.inf
    it = 0
    converged = False
    gap = DIRECT_FIRST
    next_direct = DIRECT_FIRST if direct else -1
    while it < max_iter:
        it += 1
        dmax = 0.0
        rmax = 0.0
        for a in range(nc):
            k = 3 * a
            un = q[k]
            u1 = q[k + 1]
            u2 = q[k + 2]
            for t in range(nb[a]):
                j = 3 * nbr[a, t]
                r0 = r[j]
                r1 = r[j + 1]
                r2 = r[j + 2]
                un += W[k, j] * r0 + W[k, j + 1] * r1 + W[k, j + 2] * r2
                u1 += W[k + 1, j] * r0 + W[k + 1, j + 1] * r1 + W[k + 1, j + 2] * r2
                u2 += W[k + 2, j] * r0 + W[k + 2, j + 1] * r1 + W[k + 2, j + 2] * r2
            d, v = _update(a, un, u1, u2, r, mu, step[2 * a], W[k + 1, k], W[k + 2, k], step[2 * a + 1])
            dmax = max(dmax, d)
            rmax = max(rmax, v)
        proxy = dmax / max(rmax, 1e-300)
        if _stop(it, max_iter, proxy, proxy_tol, check_every) or it == next_direct:
            if proxy <= proxy_tol and target == tol:
                # the reactions stopped changing: straight to the careful verdict (what the plain
                # error would lead to when it passes; the same u)
                _block_u_bound(W, q, r, u, work, nb, nbr, True)
                err, tier = _finish(r, u, mu, 3, scale, tol, floor, F, work, True, W, _NO_INDEX, _NO_INDEX,
                                    _NO_DATA, q)
                if err <= tol:
                    converged = True
                    break
                if not np.isfinite(err):
                    break
                proxy_tol *= 0.1
            else:
                done, converged, err, target, proxy_tol = block_check(W, q, mu, r, u, F, work, scale, tol, floor,
                                                                      target, proxy, proxy_tol, nb, nbr)
                if done:
                    break
            if direct and it >= next_direct:
                for i in range(m):
                    rsave[i] = r[i]
                kept = False
                if polish(W, q, mu, r, u, Yt, cols, ncol, G, x, ibuf):
                    done, conv2, err2, target2, ptol = block_check(W, q, mu, r, u, F, work, scale, tol, floor,
                                                                   target, np.inf, proxy_tol, nb, nbr)
                    if conv2:
                        converged = True
                        err = err2
                        break
                    if err2 < err:  # kept: PGS goes on from the better point
                        err = err2
                        target = target2
                        kept = True
                if not kept:
                    for i in range(m):
                        r[i] = rsave[i]
                    gap *= 2
                next_direct = it + gap
    if not converged and careful:
        err, tier = careful_blocks(W, q, mu, r, scale, tol, floor, u, F, work, nb, nbr)
    return it, err, converged


@njit(cache=True)
def block_lists(ng, ctree, nb, nbr):
    """``nbr[a, :nb[a]]``: the row groups (increasing) that share a tree with group ``a``."""
    for a in range(ng):
        nb[a] = 0
    for a in range(ng):
        for b in range(ng):
            if ((ctree[a, 0] >= 0 and (ctree[a, 0] == ctree[b, 0] or ctree[a, 0] == ctree[b, 1]))
                    or (ctree[a, 1] >= 0 and (ctree[a, 1] == ctree[b, 0] or ctree[a, 1] == ctree[b, 1]))):
                nbr[a, nb[a]] = b
                nb[a] += 1
