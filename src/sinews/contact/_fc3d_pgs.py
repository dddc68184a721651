"""Projected block Gauss-Seidel (PGS) on circular Coulomb cones, Simbody style.

Problem (local FCLib form, [n, t1, t2] per contact): u = W r + q,
Signorini  0 <= u_n ⊥ r_n >= 0  and Coulomb's law with maximal dissipation
r_t = argmax_{||s|| <= mu r_n} (-u_t . s), i.e. the solutions of the De Saxcé NCP
K*_mu ∋ u + [mu ||u_t||, 0, 0] ⊥ r ∈ K_mu.

One sweep visits the contacts in order (Gauss-Seidel) and, for contact a with its 3x3 diagonal
block W_aa, does a projected normal row update followed by a projected friction update with a
radial projection onto the friction disc, as in Simbody's ``PGSImpulseSolver`` (Sherman, Seth &
Delp; see also Erleben 2007, "Velocity-based shock propagation", on projected Gauss-Seidel):

    u_a   = q_a + sum_b W_ab r_b                          (latest reactions)
    r_n  <- max(0, r_n - omega u_n / W_nn)                  (Signorini row)
    u_t  <- u_t + W_tn Δr_n                                (local velocity update)
    r_t  <- P_{disc(mu r_n)}(r_t - omega u_t / w_t),  w_t = (W_t1t1 + W_t2t2) / 2

where P_disc scales r_t back onto the disc ||r_t|| <= mu r_n (the circular cone's section).
Two deliberate differences from Simbody: contacts are swept one at a time (normal, then friction
of the same contact) rather than all normals then all frictions, and the two friction rows share
one scalar step w_t instead of their own diagonals.  The shared step keeps the disc projection
orthogonal, so a fixed point satisfies exactly Coulomb's law with maximal dissipation (hence
F_nat(r) = 0); different steps per tangent row would bias the sliding direction when W_t1t1 and
W_t2t2 differ (by a factor up to 36 in the Siconos Rover problems).  The relaxation omega is fixed
(Simbody lowers its SOR factor when the residual grows).

Stopping: after each sweep the cheap proxy ||r_{k+1} - r_k||_inf / max(||r_{k+1}||_inf, tiny)
(Acary et al. 2018 §6.1) is compared with an internal tolerance; when it passes, the
natural-map error ||F_nat(r)|| / (1 + ||q||) is evaluated in plain arithmetic, and if that fails
the proxy tolerance is divided by 10 (Siconos' self-adapting proxy).  The error is also evaluated
every ``check_every`` sweeps.  When the plain error passes, the verdict is taken by the careful
checker of :mod:`sinews.contact._fc3d_exact` (the function behind ``natural_map_error``) on the
returned reactions; if it fails (ill-conditioned W, where fl(W r + q) has lost digits), the
internal target is lowered and the sweeps go on until the iteration cap.  The error returned is
always the careful one.

Two kernels: W as a C-contiguous dense matrix (rows of a contact are contiguous), and W in CSR
form (int64 indptr/indices), for large sparse problems; the sweeps are the same.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

from ._fc3d_cone import natural_map_sq_sum
from ._fc3d_exact import careful_error_csr, careful_error_dense, verdict_floor

# Re-association lets LLVM vectorise the row dot products (sums in a different order, ~1 ulp
# per term); no-NaN/no-Inf assumptions are *not* enabled, so non-finite data still propagates.
_FASTMATH = {"reassoc", "contract"}


@njit(inline="always", cache=True)
def _contact_update(a, un, u1, u2, r, mu, omega, wnn, wtn1, wtn2, wt):
    """The projected normal and friction update of contact a; returns (max change, max |r_a|)."""
    k = 3 * a
    rn_old = r[k]
    r1_old = r[k + 1]
    r2_old = r[k + 2]
    rn = rn_old - omega * un / wnn
    if rn < 0.0:
        rn = 0.0
    drn = rn - rn_old
    u1 += wtn1 * drn
    u2 += wtn2 * drn
    r1 = r1_old - omega * u1 / wt
    r2 = r2_old - omega * u2 / wt
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


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _dense_u(W, q, r, u):
    m = q.shape[0]
    for i in range(m):
        s = q[i]
        for j in range(m):
            s += W[i, j] * r[j]
        u[i] = s


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def _csr_u(indptr, indices, data, q, r, u):
    for i in range(q.shape[0]):
        s = q[i]
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * r[indices[p]]
        u[i] = s


@njit(inline="always", cache=True)
def _stop(it, max_iter, proxy, proxy_tol, check_every):
    return proxy <= proxy_tol or it % check_every == 0 or it == max_iter


@njit(inline="always", cache=True)
def dense_check(W, q, mu, r, u, F, work, scale, tol, floor, target, proxy, proxy_tol):
    """The convergence test of the dense PGS kernels after a sweep that :func:`_stop` selected
    (here and in :func:`sinews.sim._step_pgs.pgs_blocks`): ``u = W r + q``, the natural-map
    error, and the careful verdict when that error passes the internal ``target`` (which is
    lowered when the verdict fails).  Returns ``(done, converged, err, target, proxy_tol)``:
    ``done`` on convergence or overflow (no point in sweeping on)."""
    _dense_u(W, q, r, u)
    err = np.sqrt(natural_map_sq_sum(r, u, mu, 3)) / scale
    if not np.isfinite(err):
        return True, False, err, target, proxy_tol
    if err <= target:
        err, tier = careful_error_dense(W, q, mu, r, np.int64(3), scale, tol, floor, u, F, work)
        if err <= tol:
            return True, True, err, target, proxy_tol
        target = 0.5 * min(target, tol * tol / err)
    if proxy <= proxy_tol:
        proxy_tol *= 0.1
    return False, False, err, target, proxy_tol


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def pgs_kernel(W, q, mu, r, buf, tol, max_iter, omega, check_every, scale, careful):
    """Run PGS sweeps in place on r (warm start); returns (iterations, error, converged).

    buf is (3m,) scratch whose first m entries hold u = W r + q at exit.  The relative error is
    ||F_nat|| / ``scale``; with ``careful`` False a run that does not converge reports its plain
    error (as ``solve`` does between chunks).  r and buf must not overlap W, q or mu.
    """
    floor = verdict_floor(tol, scale)
    m = q.shape[0]
    nc = m // 3
    u = buf[:m]
    F = buf[m : 2 * m]
    work = buf[2 * m :]
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
            # velocities of contact a with the latest reactions
            un = q[k]
            u1 = q[k + 1]
            u2 = q[k + 2]
            for j in range(m):
                rj = r[j]
                un += W[k, j] * rj
                u1 += W[k + 1, j] * rj
                u2 += W[k + 2, j] * rj
            d, v = _contact_update(a, un, u1, u2, r, mu, omega, W[k, k], W[k + 1, k],
                                   W[k + 2, k], 0.5 * (W[k + 1, k + 1] + W[k + 2, k + 2]))
            dmax = max(dmax, d)
            rmax = max(rmax, v)
        proxy = dmax / max(rmax, 1e-300)
        if _stop(it, max_iter, proxy, proxy_tol, check_every):
            done, converged, err, target, proxy_tol = dense_check(W, q, mu, r, u, F, work, scale, tol, floor,
                                                                  target, proxy, proxy_tol)
            if done:
                break
    if not converged and careful:
        err, tier = careful_error_dense(W, q, mu, r, np.int64(3), scale, tol, floor, u, F, work)
    return it, err, converged


@njit(cache=True, nogil=True)
def _csr_entry(indptr, indices, data, i, j):
    for p in range(indptr[i], indptr[i + 1]):
        if indices[p] == j:
            return data[p]
    return 0.0


@njit(cache=True, nogil=True, fastmath=_FASTMATH)
def pgs_kernel_csr(indptr, indices, data, q, mu, r, buf, tol, max_iter, omega, check_every,
                   scale, careful):
    """:func:`pgs_kernel` for W in CSR form."""
    floor = verdict_floor(tol, scale)
    m = q.shape[0]
    nc = m // 3
    u = buf[:m]
    F = buf[m : 2 * m]
    work = buf[2 * m :]
    # the entries of the diagonal blocks the updates need: W_nn, W_t1n, W_t2n, w_t
    diag = np.empty((nc, 4))
    for a in range(nc):
        k = 3 * a
        diag[a, 0] = _csr_entry(indptr, indices, data, k, k)
        diag[a, 1] = _csr_entry(indptr, indices, data, k + 1, k)
        diag[a, 2] = _csr_entry(indptr, indices, data, k + 2, k)
        diag[a, 3] = 0.5 * (_csr_entry(indptr, indices, data, k + 1, k + 1)
                            + _csr_entry(indptr, indices, data, k + 2, k + 2))
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
            for p in range(indptr[k], indptr[k + 1]):
                un += data[p] * r[indices[p]]
            u1 = q[k + 1]
            for p in range(indptr[k + 1], indptr[k + 2]):
                u1 += data[p] * r[indices[p]]
            u2 = q[k + 2]
            for p in range(indptr[k + 2], indptr[k + 3]):
                u2 += data[p] * r[indices[p]]
            d, v = _contact_update(a, un, u1, u2, r, mu, omega, diag[a, 0], diag[a, 1],
                                   diag[a, 2], diag[a, 3])
            dmax = max(dmax, d)
            rmax = max(rmax, v)
        proxy = dmax / max(rmax, 1e-300)
        if _stop(it, max_iter, proxy, proxy_tol, check_every):
            _csr_u(indptr, indices, data, q, r, u)
            err = np.sqrt(natural_map_sq_sum(r, u, mu, 3)) / scale
            if not np.isfinite(err):  # overflow: no point in sweeping on
                break
            if err <= target:
                err, tier = careful_error_csr(indptr, indices, data, q, mu, r, np.int64(3), scale, tol,
                                              floor, u, F, work)
                if err <= tol:
                    converged = True
                    break
                target = 0.5 * min(target, tol * tol / err)
            if proxy <= proxy_tol:
                proxy_tol *= 0.1
    if not converged and careful:
        err, tier = careful_error_csr(indptr, indices, data, q, mu, r, np.int64(3), scale, tol, floor, u,
                                     F, work)
    return it, err, converged
