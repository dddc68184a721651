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
only decide whether to take it); and with ``direct`` (the stepper's default) the solver also takes
direct steps (:func:`sinews.sim._step_direct.polish`): the least-norm solution of the rows of the contacts PGS has
sticking, ``W_AA dr = -u_A``, kept when it lowers the natural-map error.  PGS converges at the
rate of ``W``'s smallest nonzero eigenvalue: on a stack of five boxes (20 contacts, W of rank 30
and condition ~3000 on its range) plain sweeps gain a few per cent per ten sweeps near the
solution (46 sweeps a step on average, and stagnation from a cold start); the direct step lands
on the solution of the sticking set, whose error is the inconsistency of the gap offsets, in one
go.  A warm start (the previous step's reactions) gets a direct step before any sweep, and a
test after sweep :data:`DIRECT_FIRST` and each failed test are followed by one.  The step goes
through the smaller of two factors: ``W_AA`` itself when the sticking set has fewer rows than
the columns they touch, else ``G = Y_A^T Y_A`` (``W = Y Y^T``, at most ``nv x nv``); the
factor is kept between steps while the sticking set stays the same (:func:`pgs_blocks`), so a
run at rest or in slow motion pays a factor now and then and a few products per step.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..contact._fc3d_cone import natural_map_sq_sum
from ..contact._fc3d_exact import _EXACT, _NO_DATA, _NO_INDEX, _finish, verdict_floor
from ..contact._fc3d_pgs import _stop
from ._step_direct import _direct


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


@njit(inline="always", cache=True)
def _row_terms(W, i, j, r0, r1, r2, s, t):
    """``s`` plus the products ``W[i, j + c] r_c`` (c = 0, 1, 2) and ``t`` plus their magnitudes,
    each added in column order."""
    p0 = W[i, j] * r0
    p1 = W[i, j + 1] * r1
    p2 = W[i, j + 2] * r2
    s += p0
    s += p1
    s += p2
    t += abs(p0)
    t += abs(p1)
    t += abs(p2)
    return s, t


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _block_u_bound(W, q, r, u, b, nb, nbr, bound):
    """``u = W r + q`` over the nonzero blocks (``nbr``, increasing: column order), and with
    ``bound`` also ``b = |W| |r| + |q|``: what :func:`sinews.contact._fc3d_exact.
    careful_error_dense` computes (the skipped products are exact zeros).  The three rows of a
    contact are summed side by side, each in column order (the same sums, bit for bit)."""
    for a in range(q.shape[0] // 3):
        i = 3 * a
        s0 = q[i]
        s1 = q[i + 1]
        s2 = q[i + 2]
        if bound:
            t0 = abs(s0)
            t1 = abs(s1)
            t2 = abs(s2)
            for tt in range(nb[a]):
                j = 3 * nbr[a, tt]
                r0 = r[j]
                r1 = r[j + 1]
                r2 = r[j + 2]
                s0, t0 = _row_terms(W, i, j, r0, r1, r2, s0, t0)
                s1, t1 = _row_terms(W, i + 1, j, r0, r1, r2, s1, t1)
                s2, t2 = _row_terms(W, i + 2, j, r0, r1, r2, s2, t2)
            b[i] = t0
            b[i + 1] = t1
            b[i + 2] = t2
        else:
            for tt in range(nb[a]):
                j = 3 * nbr[a, tt]
                r0 = r[j]
                r1 = r[j + 1]
                r2 = r[j + 2]
                s0 += W[i, j] * r0
                s0 += W[i, j + 1] * r1
                s0 += W[i, j + 2] * r2
                s1 += W[i + 1, j] * r0
                s1 += W[i + 1, j + 1] * r1
                s1 += W[i + 1, j + 2] * r2
                s2 += W[i + 2, j] * r0
                s2 += W[i + 2, j + 1] * r1
                s2 += W[i + 2, j + 2] * r2
        u[i] = s0
        u[i + 1] = s1
        u[i + 2] = s2


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


#: The sweep after which :func:`pgs_blocks` first tries the direct step (then after failed tests)
DIRECT_FIRST = 3
#: Direct steps at most on a kept factor before the first sweep (each from the last, while each
#: halves the error: iterative refinement with an earlier step's factor)
REFINE = 3
#: A kept factor is dropped after a step whose direct step needed refinement or converged only to
#: an error above ``REFRESH * tol`` (the next direct step factors afresh)
REFRESH = 0.1
#: A warm start whose plain error is at most ``WARM_ACCEPT * tol`` is taken as it is (after its
#: careful verdict); any other warm start gets a direct step first, so that a run's sticking
#: contacts do not creep at the tolerance's rate step after step
WARM_ACCEPT = 1e-3


@njit(cache=True, nogil=True)
def _try_direct(W, q, mu, r, u, F, work, rsave, scale, tol, floor, target, proxy_tol, err, nb, nbr, Yt, cols,
                ncol, G, x, ibuf):
    """The direct step (:func:`_direct`) from ``r`` with ``u = W r + q``, and its careful
    verdict (:func:`careful_blocks`; the internal target lowered as :func:`block_check` does when
    it fails at most at the target); the step is kept when it converged or lowered the error ``err`` of
    ``r``, else ``r`` is restored.  Returns ``(converged, err, target, kept, how)``, ``how`` as
    :func:`_direct` returns it."""
    m = q.shape[0]
    for i in range(m):
        rsave[i] = r[i]
    how = _direct(m, W, mu, r, u, Yt, cols, ncol, G, x, F, ibuf)
    if how != 0:
        # the careful error straight away (the step is expected to converge): block_check's
        # verdict and its target without its plain error
        _block_u_bound(W, q, r, u, work, nb, nbr, True)
        err2, tier = _finish(r, u, mu, 3, scale, tol, floor, F, work, True, W, _NO_INDEX, _NO_INDEX, _NO_DATA, q)
        if err2 <= tol:
            return True, err2, target, True, how
        if err2 < err:  # kept: PGS goes on from the better point
            if err2 <= target:
                target = 0.5 * min(target, tol * tol / err2)
            return False, err2, target, True, how
    for i in range(m):
        r[i] = rsave[i]
    return False, err, target, False, how


@njit(cache=True, nogil=True)
def pgs_blocks(W, q, mu, r, buf, nb, nbr, tol, max_iter, omega, check_every, scale, careful, Yt, cols, ncol,
               ibuf, direct):
    """PGS sweeps in place on r over the blocks listed in ``nb``/``nbr``; returns
    (iterations, error, converged) as :func:`sinews.contact._fc3d_pgs.pgs_kernel`.

    With ``direct``, a warm start (``r`` not all zero) gets the direct step (:func:`polish`)
    before any sweep: along a run the previous step's sticking set is usually this step's, and
    the step converges with no sweep (0 iterations); a warm start that already solves the problem
    (plain error <= :data:`WARM_ACCEPT` tol) only gets its careful verdict.  The factor of the
    direct step stays in ``buf`` (stamped ``m, n`` in ``ibuf``'s last two entries, where
    ``ibuf`` has room) and is reused while the sticking set (its rows and columns) and ``m``
    stay the same: it is then the factor of an earlier step's ``Y``, a preconditioner whose
    result the test still judges (up to :data:`REFINE` steps while each halves the error; a
    kept factor that needed more than one, or converged above :data:`REFRESH` tol, is
    dropped).  A cold start (``r = 0``) or another ``m`` drops it too, so that a run's bits do
    not depend on what came before a cold start.  Then a convergence test also runs after
    sweep :data:`DIRECT_FIRST`, and a test that fails from then on is followed by a direct step
    (kept when it lowers the natural-map error; its verdict is the same test's); each step not
    kept doubles the sweeps before the next try (after sweeps 3, 9, 21, 45, ...: few tries
    where the sticking set is wrong, e.g. contacts still starting to slide).  ``Yt``: ``Y = J
    L^-1`` transposed (nv, m); ``buf`` is (5 m + nv (nv + 1)) scratch, ``ibuf`` (2 nv + m / 3,
    + 2 for the stamp) int scratch."""
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
    proxy_tol = tol
    target = tol
    err = np.inf
    if direct:
        warm = False
        for i in range(m):
            if r[i] != 0.0:
                warm = True
                break
        ni = ibuf.shape[0]
        if ni >= 2 * nv + nc + 2 and (not warm or ibuf[ni - 2] != m):
            ibuf[ni - 2] = 0  # no factor from before a cold start, none of another size
        if warm:
            # the warm start's u and plain error; its verdict only where it solves the problem
            # already (WARM_ACCEPT): a warm start taken whenever it passes would leave sticking
            # contacts creeping at the tolerance's rate, step after step
            _block_u_bound(W, q, r, u, work, nb, nbr, False)
            err = np.sqrt(natural_map_sq_sum(r, u, mu, 3)) / scale
            done = not np.isfinite(err)
            if err <= WARM_ACCEPT * tol:  # solved already (a state at rest): the careful verdict
                _block_u_bound(W, q, r, u, work, nb, nbr, True)
                err, tier = _finish(r, u, mu, 3, scale, tol, floor, F, work, True, W, _NO_INDEX, _NO_INDEX,
                                    _NO_DATA, q)
                if err <= tol:
                    return 0, err, True
                _block_u_bound(W, q, r, u, work, nb, nbr, False)  # u again (_finish may round it)
                err = np.sqrt(natural_map_sq_sum(r, u, mu, 3)) / scale
            converged = False
            refresh = False
            for rep in range(REFINE):
                if done:
                    break
                err0 = err
                converged, err, target, kept, how = _try_direct(W, q, mu, r, u, F, work, rsave, scale, tol, floor,
                                                                target, proxy_tol, err, nb, nbr, Yt, cols, ncol,
                                                                G, x, ibuf)
                if how == 2 and (rep > 0 or not converged or err > REFRESH * tol):
                    refresh = True  # the kept factor is getting old: a fresh one next time
                if converged or how != 2 or not kept or not err < 0.5 * err0:
                    break
            if refresh and ni >= 2 * nv + nc + 2:
                ibuf[ni - 2] = 0
            if converged:
                return 0, err, True
    # the relaxed steps omega / W_nn and omega / w_t of each contact (w_t = (W_t1t1 + W_t2t2) / 2)
    for a in range(nc):
        k = 3 * a
        step[2 * a] = omega / W[k, k]
        step[2 * a + 1] = omega / (0.5 * (W[k + 1, k + 1] + W[k + 2, k + 2]))
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
                converged, err, target, kept, how = _try_direct(W, q, mu, r, u, F, work, rsave, scale, tol, floor,
                                                                target, proxy_tol, err, nb, nbr, Yt, cols, ncol,
                                                                G, x, ibuf)
                if converged:
                    break
                if how == 2 and ibuf.shape[0] >= 2 * nv + nc + 2:
                    ibuf[ibuf.shape[0] - 2] = 0
                if not kept:
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
