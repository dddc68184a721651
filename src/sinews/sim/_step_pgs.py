r"""PGS sweeps over the nonzero 3x3 blocks of W, for :func:`sinews.sim._step_kernels.coulomb_step`.

:func:`pgs_blocks` is :func:`sinews.contact._fc3d_pgs.pgs_kernel` (projected block Gauss-Seidel
on the circular Coulomb cones, the same contact update, the same stopping rules: the proxy test, the
natural-map error every ``check_every`` sweeps, the careful verdict of
:func:`sinews.contact._fc3d_exact.careful_error_dense`, the lowered internal target) with two
changes: the velocities ``u_a = q_a + sum_b W_ab r_b`` of a contact are summed over the contacts
``b`` whose block ``W_ab`` can be nonzero (the row groups that share a tree with ``a``; ``nbr[a,
:nb[a]]``, increasing) instead of over every column, and the relaxed steps ``omega / W_nn`` and
``omega / w_t`` are computed once per call (products in the sweeps instead of divisions).  The
skipped terms are exact zeros, so the iterates differ from the dense kernel's only by rounding.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..contact._fc3d_exact import careful_error_dense, verdict_floor
from ..contact._fc3d_pgs import _stop, dense_check


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


@njit(cache=True, nogil=True)
def pgs_blocks(W, q, mu, r, buf, nb, nbr, tol, max_iter, omega, check_every, scale, careful):
    """PGS sweeps in place on r over the blocks listed in ``nb``/``nbr``; returns
    (iterations, error, converged) as :func:`sinews.contact._fc3d_pgs.pgs_kernel`."""
    floor = verdict_floor(tol, scale)
    m = q.shape[0]
    nc = m // 3
    u = buf[:m]
    F = buf[m : 2 * m]
    work = buf[2 * m :]
    # the relaxed steps omega / W_nn and omega / w_t of each contact (w_t = (W_t1t1 + W_t2t2) / 2)
    step = np.empty((nc, 2))
    for a in range(nc):
        k = 3 * a
        step[a, 0] = omega / W[k, k]
        step[a, 1] = omega / (0.5 * (W[k + 1, k + 1] + W[k + 2, k + 2]))
    proxy_tol = tol
    target = tol
    err = np.inf
    it = 0
    converged = False
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
            d, v = _update(a, un, u1, u2, r, mu, step[a, 0], W[k + 1, k], W[k + 2, k], step[a, 1])
            dmax = max(dmax, d)
            rmax = max(rmax, v)
        proxy = dmax / max(rmax, 1e-300)
        if _stop(it, max_iter, proxy, proxy_tol, check_every):
            done, converged, err, target, proxy_tol = dense_check(W, q, mu, r, u, F, work, scale, tol, floor,
                                                                  target, proxy, proxy_tol)
            if done:
                break
    if not converged and careful:
        err, tier = careful_error_dense(W, q, mu, r, 3, scale, tol, floor, u, F, work)
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
