"""ADMM for large sparse Delassus matrices: the iteration of :mod:`sinews.contact._fc3d_admm`
with the linear solves done by a Krylov method on the CSR matrix instead of an explicit inverse.

Each ADMM iteration solves (W~ + sigma I) r = b, sigma = rho + eta > 0, with

* preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, *Iterative Methods for
  Sparse Linear Systems*, alg. 9.1) when W~ is symmetric to 1e-12 relative (its symmetric part is
  used, as the dense path does), or
* BiCGSTAB (van der Vorst 1992; Saad alg. 7.7 with right preconditioning) for the slightly
  non-symmetric W of some engines,

both preconditioned by the inverses of the 3x3 diagonal blocks W~_aa + sigma I (block Jacobi),
warm-started from the previous r and stopped at a relative residual that tightens with the
natural-map error (inexact ADMM: min(1e-3, 1e-2 error), at least 1e-14), and after at least a
tenfold reduction of the initial residual.  The matrix is never
densified; memory is O(nnz + m).  The penalty rho is rebalanced inside the kernel (only the 3x3
preconditioner blocks depend on it), at most ``adapt_left`` times, and never below ``rho_min``:
the dense path may drive rho to 1e-8 lambda_max on rank-deficient stacks (an exact inverse does
not mind), but W + rho I is then too ill-conditioned for an iterative solve, and the inexact
solves make ADMM diverge.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

from ._fc3d_cone import natural_map_sq_sum_scaled, project_cone

_FM = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=_FM)
def _matvec(indptr, indices, data, x, out):
    for i in range(out.shape[0]):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * x[indices[p]]
        out[i] = s


@njit(cache=True, nogil=True, fastmath=_FM)
def _dot(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    return s


@njit(cache=True, nogil=True)
def block_jacobi(indptr, indices, data, sig, blocks):
    """blocks[a] = (A_aa + sig I)^-1 (3x3; the diagonal inverse where the block is singular)."""
    nc = blocks.shape[0]
    B = np.zeros((3, 3))
    for a in range(nc):
        k = 3 * a
        for i in range(3):
            for j in range(3):
                B[i, j] = 0.0
            for p in range(indptr[k + i], indptr[k + i + 1]):
                j = indices[p] - k
                if 0 <= j < 3:
                    B[i, j] += data[p]
            B[i, i] += sig
        c00 = B[1, 1] * B[2, 2] - B[1, 2] * B[2, 1]
        c01 = B[1, 2] * B[2, 0] - B[1, 0] * B[2, 2]
        c02 = B[1, 0] * B[2, 1] - B[1, 1] * B[2, 0]
        det = B[0, 0] * c00 + B[0, 1] * c01 + B[0, 2] * c02
        scale = abs(B[0, 0]) + abs(B[1, 1]) + abs(B[2, 2])
        if abs(det) > 1e-12 * scale * scale * scale and det == det:
            inv = 1.0 / det
            blocks[a, 0, 0] = c00 * inv
            blocks[a, 1, 0] = c01 * inv
            blocks[a, 2, 0] = c02 * inv
            blocks[a, 0, 1] = (B[0, 2] * B[2, 1] - B[0, 1] * B[2, 2]) * inv
            blocks[a, 1, 1] = (B[0, 0] * B[2, 2] - B[0, 2] * B[2, 0]) * inv
            blocks[a, 2, 1] = (B[0, 1] * B[2, 0] - B[0, 0] * B[2, 1]) * inv
            blocks[a, 0, 2] = (B[0, 1] * B[1, 2] - B[0, 2] * B[1, 1]) * inv
            blocks[a, 1, 2] = (B[0, 2] * B[1, 0] - B[0, 0] * B[1, 2]) * inv
            blocks[a, 2, 2] = (B[0, 0] * B[1, 1] - B[0, 1] * B[1, 0]) * inv
        else:
            for i in range(3):
                for j in range(3):
                    blocks[a, i, j] = 0.0
                blocks[a, i, i] = 1.0 / max(B[i, i], sig)


@njit(cache=True, nogil=True)
def _precond(blocks, x, out):
    for a in range(blocks.shape[0]):
        k = 3 * a
        x0 = x[k]
        x1 = x[k + 1]
        x2 = x[k + 2]
        for i in range(3):
            out[k + i] = blocks[a, i, 0] * x0 + blocks[a, i, 1] * x1 + blocks[a, i, 2] * x2


@njit(cache=True, nogil=True, fastmath=_FM)
def _apply(indptr, indices, data, sig, x, out):
    _matvec(indptr, indices, data, x, out)
    for i in range(out.shape[0]):
        out[i] += sig * x[i]


@njit(cache=True, nogil=True)
def _threshold(b, res, rtol):
    """Stopping threshold of an inner solve: rtol ||b||, but always at least a tenfold reduction
    of the initial residual (so that every ADMM iteration refines its solve; with a purely
    relative test, badly scaled problems whose b is huge stall on a stale r), and never below
    1e-14 ||b||."""
    nb = np.sqrt(_dot(b, b))
    n0 = np.sqrt(_dot(res, res))
    return max(1e-14 * nb, min(0.1 * n0, rtol * nb), 1e-300)


@njit(cache=True, nogil=True, fastmath=_FM)
def pcg(indptr, indices, data, sig, blocks, b, x, res, p, Ap, z, rtol, maxit):
    """(A + sig I) x = b by block-Jacobi PCG from the given x; res = b - (A + sig I) x at exit.
    Returns the number of iterations."""
    m = b.shape[0]
    _apply(indptr, indices, data, sig, x, Ap)
    for i in range(m):
        res[i] = b[i] - Ap[i]
    thr = _threshold(b, res, rtol)
    if np.sqrt(_dot(res, res)) <= thr:
        return 0
    _precond(blocks, res, z)
    for i in range(m):
        p[i] = z[i]
    rz = _dot(res, z)
    k = 0
    while k < maxit:
        k += 1
        _apply(indptr, indices, data, sig, p, Ap)
        pap = _dot(p, Ap)
        if not (pap > 0.0):
            break
        alpha = rz / pap
        for i in range(m):
            x[i] += alpha * p[i]
            res[i] -= alpha * Ap[i]
        if np.sqrt(_dot(res, res)) <= thr:
            break
        _precond(blocks, res, z)
        rz_new = _dot(res, z)
        beta = rz_new / rz
        rz = rz_new
        for i in range(m):
            p[i] = z[i] + beta * p[i]
    return k


@njit(cache=True, nogil=True, fastmath=_FM)
def bicgstab(indptr, indices, data, sig, blocks, b, x, res, w, rtol, maxit):
    """(A + sig I) x = b by right-preconditioned BiCGSTAB from the given x; w is (6, m)
    scratch; res as in :func:`pcg`.  Returns the number of iterations (two products each)."""
    m = b.shape[0]
    r0 = w[0]
    p = w[1]
    v = w[2]
    ph = w[3]
    s = w[4]
    t = w[5]
    _apply(indptr, indices, data, sig, x, v)
    for i in range(m):
        res[i] = b[i] - v[i]
        r0[i] = res[i]
        p[i] = 0.0
        v[i] = 0.0
    thr = _threshold(b, res, rtol)
    if np.sqrt(_dot(res, res)) <= thr:
        return 0
    rho_old = 1.0
    alpha = 1.0
    omega = 1.0
    k = 0
    while k < maxit:
        k += 1
        rho_new = _dot(r0, res)
        if rho_new == 0.0 or omega == 0.0:
            break
        beta = (rho_new / rho_old) * (alpha / omega)
        rho_old = rho_new
        for i in range(m):
            p[i] = res[i] + beta * (p[i] - omega * v[i])
        _precond(blocks, p, ph)
        _apply(indptr, indices, data, sig, ph, v)
        den = _dot(r0, v)
        if den == 0.0:
            break
        alpha = rho_new / den
        for i in range(m):
            s[i] = res[i] - alpha * v[i]
            x[i] += alpha * ph[i]
        if np.sqrt(_dot(s, s)) <= thr:
            for i in range(m):
                res[i] = s[i]
            break
        _precond(blocks, s, ph)
        _apply(indptr, indices, data, sig, ph, t)
        tt = _dot(t, t)
        omega = _dot(t, s) / tt if tt > 0.0 else 0.0
        for i in range(m):
            x[i] += omega * ph[i]
            res[i] = s[i] - omega * t[i]
        if np.sqrt(_dot(res, res)) <= thr:
            break
    return k


@njit(inline="always", cache=True)
def admm_zy_step(r, z, zk, y, u, s, mu, alpha, rho):
    """The ADMM steps after the r-update, shared by the dense and the sparse kernels: the
    over-relaxed z-update projected on the friction cones (``zk`` keeps ``z^k``), the dual
    update of ``y``, and the De Saxce shift ``s_n = mu |u_t|`` for the next iteration.  Returns
    the squared primal and dual residuals and the squared norms of r, z and y."""
    m = r.shape[0]
    pr = 0.0
    dr = 0.0
    nr = 0.0
    nz = 0.0
    ny = 0.0
    for i in range(m):
        rt = alpha * r[i] + (1.0 - alpha) * z[i]
        zk[i] = z[i]
        z[i] = rt + y[i] / rho
    for a in range(m // 3):
        k = 3 * a
        z[k], z[k + 1], z[k + 2] = project_cone(z[k], z[k + 1], z[k + 2], mu[a])
    for i in range(m):
        rt = alpha * r[i] + (1.0 - alpha) * zk[i]
        y[i] += rho * (rt - z[i])
        pr += (r[i] - z[i]) ** 2
        dr += (z[i] - zk[i]) ** 2
        nr += r[i] * r[i]
        nz += z[i] * z[i]
        ny += y[i] * y[i]
    for a in range(m // 3):
        k = 3 * a
        s[k] = mu[a] * np.sqrt(u[k + 1] * u[k + 1] + u[k + 2] * u[k + 2])
    return pr, dr, nr, nz, ny


@njit(cache=True, nogil=True, fastmath=_FM)
def admm_sparse_kernel(ap, ai, ax, wp, wi, wx, q, mu, c, st, params, info):
    """ADMM iterations on CSR matrices: A = (ap, ai, ax) for the solves (W~ or its symmetric
    part), W~ = (wp, wi, wx) for the explicit products.

    st: (13, m) state rows [r, z, y, s, u, b, res, 6 x scratch], updated in place.
    params = [tol, max_iter, rho, eta, alpha, scale, rho_ratio, rho_every, it0, adapt_left,
              symmetric, cg_max, rho_min]
    info (out) = [iterations_total, error, status, rho, rho_updates, krylov_iterations]
        status 0: converged (by the scaled estimate, confirmed by an explicit product),
        1: iteration cap reached.
    """
    tol = params[0]
    max_iter = int(params[1])
    rho = params[2]
    eta = params[3]
    alpha = params[4]
    scale = params[5]
    rho_ratio = params[6]
    rho_every = int(params[7])
    it = int(params[8])
    adapt_left = int(params[9])
    symmetric = params[10] > 0.0
    cg_max = int(params[11])
    rho_min = params[12]
    m = q.shape[0]
    nc = m // 3
    r = st[0]
    z = st[1]
    y = st[2]
    s = st[3]
    u = st[4]
    b = st[5]
    res = st[6]
    work = st[7:13]
    zk = np.empty(m)
    sig = rho + eta
    blocks = np.empty((nc, 3, 3))
    block_jacobi(ap, ai, ax, sig, blocks)
    status = 1
    err = np.inf
    since = 0
    updates = 0
    krylov = 0
    exact_every = 1
    while it < max_iter:
        it += 1
        since += 1
        for i in range(m):
            b[i] = eta * r[i] + rho * z[i] - y[i] - q[i] - s[i]
        rtol = 1e-3
        if err < np.inf:
            rtol = min(1e-3, max(1e-14, 1e-2 * err))
        if symmetric:
            krylov += pcg(ap, ai, ax, sig, blocks, b, r, res, work[0], work[1], work[2], rtol,
                          cg_max)
        else:
            krylov += bicgstab(ap, ai, ax, sig, blocks, b, r, res, work, rtol, cg_max)
        # (A + sig I) r = b - res  =>  u = W r + q = b - res - sig r + q
        for i in range(m):
            u[i] = b[i] - res[i] - sig * r[i] + q[i]
        pr, dr, nr, nz, ny = admm_zy_step(r, z, zk, y, u, s, mu, alpha, rho)
        err = np.sqrt(natural_map_sq_sum_scaled(r, u, c, mu)) / scale
        if not np.isfinite(err):  # overflow: no point in iterating on
            break
        if err <= tol and (it % exact_every == 0):
            _matvec(wp, wi, wx, r, u)
            for i in range(m):
                u[i] += q[i]
            err = np.sqrt(natural_map_sq_sum_scaled(r, u, c, mu)) / scale
            if err <= tol:
                status = 0
                break
            exact_every = 10
        if adapt_left > 0 and since >= rho_every:
            p_rel = np.sqrt(pr) / max(np.sqrt(max(nr, nz)), 1e-300)
            d_rel = rho * np.sqrt(dr) / max(np.sqrt(ny), 1e-300)
            if p_rel > 0.0 and d_rel > 0.0:
                cand = max(rho * np.sqrt(p_rel / d_rel), rho_min)
                if cand > rho * rho_ratio or cand < rho / rho_ratio:
                    rho = cand
                    sig = rho + eta
                    block_jacobi(ap, ai, ax, sig, blocks)
                    adapt_left -= 1
                    updates += 1
                    since = 0
    info[0] = it
    info[1] = err
    info[2] = status
    info[3] = rho
    info[4] = updates
    info[5] = krylov
