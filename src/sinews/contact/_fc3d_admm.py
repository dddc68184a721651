"""ADMM on the Delassus operator for the 3-D frictional contact problem (De Saxcé fixed point).

For a fixed De Saxcé term s (s_a = [mu_a ||u_t,a||, 0, 0]) the frictional contact problem is the
optimality system of the convex cone-constrained QP

    min_r  1/2 r^T W r + (q + s)^T r    s.t.  r ∈ K_mu,

and s is then updated from u = W r + q; at a fixed point u + s ∈ K* ⊥ r ∈ K is exactly the
Coulomb problem (Acary, Brémond, Huber 2018, §4; Carpentier, Le Lidec, Montaut, "From Compliant
to Rigid Contact Simulation: a Unified and Efficient Approach", RSS 2024).  Splitting r = z with
z ∈ K (Boyd et al. 2011, "Distributed optimization ... ADMM", §3; OSQP, Stellato et al. 2020)
and adding a proximal term eta/2 ||r - r^k||^2 (so W + (rho + eta) I is positive definite even
for the rank-deficient Delassus matrices of hyperstatic stacks) gives the iteration

    (W + (rho + eta) I) r^{k+1} = eta r^k + rho z^k - y^k - q - s^k
    r~        = alpha r^{k+1} + (1 - alpha) z^k                      (over-relaxation)
    z^{k+1}   = P_K(r~ + y^k / rho)
    y^{k+1}   = y^k + rho (r~ - z^{k+1})
    s^{k+1}   = De Saxcé term of u^{k+1} = W r^{k+1} + q.

W r^{k+1} comes for free from the linear system, (W + (rho+eta) I) r = b  =>  W r = b - (rho+eta) r,
so one iteration costs one product with the explicit inverse of W + (rho+eta) I plus O(m) work
(a dense mat-vec vectorises far better than two triangular solves).  The inverse is computed
outside the kernel with LAPACK through SciPy: ``potrf``/``potri`` of the symmetric part when W
is symmetric to 1e-12 relative, a general inverse (``getrf``/``getri``) otherwise -- some FCLib
Delassus matrices are slightly non-symmetric (relative asymmetry up to 2e-3), and the iteration
is then Douglas-Rachford splitting for the monotone inclusion 0 ∈ W r + q + s + N_K(r) rather
than a QP, with the same fixed points.

Per-contact scaling: r_a = c_a r~_a with c_a = (trace(W_aa) / 3)^(-1/2) leaves the cones
unchanged (W~ = C W C, q~ = C q), evens out contacts of very different masses, and is undone
before the error is measured.  Warm start: the multiplier starts at y = -(u + s) of r^0, its
value at a solution.

Penalty adaptation (residual balancing, Boyd et al. §3.4.1 in the OSQP form):
with the relative primal residual p = ||r - z|| / max(||r||, ||z||) and dual residual
d = ||rho (z^{k+1} - z^k)|| / ||y||, the kernel asks for rho <- rho sqrt(p / d) when that changes
rho by more than a factor ``rho_ratio`` (at most every ``rho_every`` iterations); the caller then
refactorises and re-enters the kernel with the state kept.

Stopping: the natural-map error ||F_nat(r)|| / (1 + ||q||) is evaluated every iteration with
the cheap W r above and, when it passes, confirmed with an explicit product W r + q.  The
verdict is then taken on the unscaled reactions by the careful checker of the user's problem
(:mod:`sinews.contact._fc3d_exact`, the function behind ``natural_map_error``); if it fails, the
kernel goes on with a lower internal target until the iteration cap.

Large sparse W: :mod:`sinews.contact._fc3d_admm_sparse` runs the same iteration with Krylov
solves on the CSR matrix (no densification, no factorisation).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg import lapack
from .._jit import njit

from ._fc3d_admm_sparse import admm_sparse_kernel, admm_zy_step
from ._fc3d_cone import natural_map_sq_sum_scaled


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def admm_kernel(W, Ainv, q, mu, c, st, params, info):
    """ADMM iterations with a fixed explicit inverse Ainv = (W + (rho+eta) I)^-1.

    st: (6, m) state rows [r, z, y, s, u, work], updated in place.
    params = [tol, max_iter, rho, eta, alpha, scale, rho_ratio, rho_every, it0, adapt]
    info (out) = [iterations_total, error, status, rho_new]
        status 0: converged, 1: iteration cap reached, 2: new rho requested.
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
    adapt = params[9] > 0.0
    m = q.shape[0]
    r = st[0]
    z = st[1]
    y = st[2]
    s = st[3]
    u = st[4]
    b = st[5]
    status = 1
    err = np.inf
    rho_new = rho
    since = 0
    exact_every = 1
    while it < max_iter:
        it += 1
        since += 1
        # right-hand side b = eta r + rho z - y - q - s
        for i in range(m):
            b[i] = eta * r[i] + rho * z[i] - y[i] - q[i] - s[i]
        # r <- (W + (rho+eta) I)^{-1} b, four rows of the explicit inverse at a time
        i = 0
        while i + 4 <= m:
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(m):
                bj = b[j]
                a0 += Ainv[i, j] * bj
                a1 += Ainv[i + 1, j] * bj
                a2 += Ainv[i + 2, j] * bj
                a3 += Ainv[i + 3, j] * bj
            r[i] = a0
            r[i + 1] = a1
            r[i + 2] = a2
            r[i + 3] = a3
            i += 4
        while i < m:
            a0 = 0.0
            for j in range(m):
                a0 += Ainv[i, j] * b[j]
            r[i] = a0
            i += 1
        # u = W r + q = b - (rho + eta) r + q ; De Saxcé term and the error at r
        sig = rho + eta
        for i in range(m):
            u[i] = b[i] - sig * r[i] + q[i]
        # z-update with over-relaxation, dual update, residuals
        pr, dr, nr, nz, ny = admm_zy_step(r, z, b, y, u, s, mu, alpha, rho)  # z^k kept in b
        err = np.sqrt(natural_map_sq_sum_scaled(r, u, c, mu)) / scale
        if not np.isfinite(err):  # overflow: no point in iterating on
            break
        if err <= tol and (it % exact_every == 0):
            # confirm with an explicit product (the cheap W r can lose digits when rho is large)
            for i in range(m):
                acc = q[i]
                for j in range(m):
                    acc += W[i, j] * r[j]
                u[i] = acc
            err = np.sqrt(natural_map_sq_sum_scaled(r, u, c, mu)) / scale
            if err <= tol:
                status = 0
                break
            exact_every = 10
        if adapt and since >= rho_every:
            p_rel = np.sqrt(pr) / max(np.sqrt(max(nr, nz)), 1e-300)
            d_rel = rho * np.sqrt(dr) / max(np.sqrt(ny), 1e-300)
            if p_rel > 0.0 and d_rel > 0.0:
                cand = rho * np.sqrt(p_rel / d_rel)
                if cand > rho * rho_ratio or cand < rho / rho_ratio:
                    rho_new = cand
                    status = 2
                    break
    info[0] = it
    info[1] = err
    info[2] = status
    info[3] = rho_new


def _lambda_max(W, iters=10):
    """Estimate of the largest eigenvalue of W (nearly symmetric PSD) by power iteration.

    Only the order of magnitude matters (it sets the initial penalty and the proximal weight).
    """
    m = W.shape[0]
    x = np.full(m, 1.0 / np.sqrt(m))
    lam = 0.0
    for _ in range(iters):
        y = np.asarray(W @ x).ravel()
        nrm = math.sqrt(float(y @ y))  # what np.linalg.norm computes, without its overhead
        if nrm == 0.0:
            return 0.0
        lam = nrm
        x = y / nrm
    return lam


def _shifted_inverse(W, sigma, symmetric):
    """(W + sigma I)^-1 as a C-contiguous array: LAPACK potrf/potri when ``symmetric`` (half
    the flops of getrf/getri; falls back if the Cholesky fails), a general inverse otherwise."""
    A = W + sigma * np.eye(W.shape[0])
    if symmetric:
        c, info = lapack.dpotrf(A, lower=1, clean=0, overwrite_a=1)
        if info == 0:
            inv, info = lapack.dpotri(c, lower=1, overwrite_c=1)
            if info == 0:
                low = np.tril(inv)
                return np.ascontiguousarray(low + np.tril(inv, -1).T)
        A = W + sigma * np.eye(W.shape[0])
    try:
        inv = sla.inv(A, overwrite_a=True, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        inv = None
    if inv is None or not np.all(np.isfinite(inv)):
        raise ValueError("problem: W + sigma I is singular for the ADMM penalty sigma; W must be "
                         "positive semi-definite")
    return np.ascontiguousarray(inv)


#: Smallest penalty of the sparse path, relative to lambda_max of the scaled W (it bounds the
#: condition number of W + rho I that the Krylov solves face).
RHO_MIN_SPARSE = 1e-4


def _scaled(W, cc):
    """C W C for dense or CSR W."""
    if sp.issparse(W):
        Wt = sp.csr_matrix(W, copy=True)
        Wt.data *= cc[np.repeat(np.arange(W.shape[0]), np.diff(Wt.indptr))] * cc[Wt.indices]
        return Wt
    return np.ascontiguousarray(W * cc[:, None] * cc[None, :])


def _csr_arrays(A):
    return (np.asarray(A.indptr, dtype=np.int64), np.asarray(A.indices, dtype=np.int64),
            np.asarray(A.data, dtype=np.float64))


def admm_solve(W, q, mu, r0, tol, max_iter, rho, check, scale, *, eta=None, alpha=1.6,
               rho_ratio=None, rho_every=20, max_factorizations=60, adapt=True,
               scale_contacts=True, dual_warm_start=True):
    """Drive the ADMM kernels; W is a dense C-contiguous array or a SciPy CSR matrix.

    ``scale`` is 1 + ||q||.  ``check(r) -> (error, u)`` is the careful checker of the user's
    problem: the kernels stop on their own (scaled) estimate, and the verdict is ``check``'s;
    when it fails, the kernels go on with a lower internal target until ``max_iter``.  Returns
    (r, u, error, iterations, converged, info).  The options are validated by the caller.
    """
    m = q.shape[0]
    sparse = sp.issparse(W)
    if rho_ratio is None:  # penalty updates are cheap without a factorisation: rebalance sooner
        rho_ratio = 5.0 if sparse else 10.0
    # per-contact scaling r = c_a r~ (cones are invariant): W~ = C W C, q~ = C q
    if scale_contacts:
        d = np.asarray(W.diagonal()).reshape(-1, 3).sum(axis=1) / 3.0
        c = 1.0 / np.sqrt(np.where(d > 0.0, d, 1.0))
    else:
        c = np.ones(m // 3)
    cc = np.repeat(c, 3)
    Wt = _scaled(W, cc)
    qt = q * cc
    lmax = _lambda_max(Wt)
    if not (lmax > 0.0 and np.isfinite(lmax)):
        lmax = 1.0
    if eta is None:
        eta = 1e-6 * lmax
    if rho is None:
        # geometric mean of the spectrum ends, with the proximal term as the floor; the sparse
        # path starts higher (its solves are cheaper and better conditioned there, and large
        # problems cannot afford many penalty updates)
        rho = np.sqrt(lmax * max(eta, (1e-3 if sparse else 1e-4) * lmax))
    st = np.zeros((13 if sparse else 6, m))
    st[0] = r0 / cc
    st[1] = st[0]
    # De Saxcé term of the warm start (scaled velocities u~ = C u)
    u0 = np.asarray(Wt @ st[0]).ravel() + qt
    st[3, 0::3] = mu * np.hypot(u0[1::3], u0[2::3])
    if dual_warm_start:
        # at a solution y = -(u + s): start the multiplier there
        st[2] = -(u0 + st[3])
    # symmetric up to rounding (many files store W with ~1e-16 asymmetry): solve with the
    # symmetric part; the cheap W r of the kernels is then off by ~1e-12 relative at most, and
    # convergence is always confirmed with the exact product
    if sparse:
        D = abs(Wt - Wt.T)
        asym = D.max() if D.nnz else 0.0
        wmax = abs(Wt).max() if Wt.nnz else 0.0
    else:
        asym = np.abs(Wt - Wt.T).max()
        wmax = np.abs(Wt).max()
    symmetric = bool(asym <= 1e-12 * max(wmax, 1e-300))
    Wf = 0.5 * (Wt + Wt.T) if symmetric and asym > 0.0 else Wt
    target = tol
    it = 0
    nfact = 0
    info = np.zeros(6)
    if sparse:
        Wk = _csr_arrays(Wt)
        A = Wk if Wf is Wt else _csr_arrays(sp.csr_matrix(Wf))
        del Wf
        krylov = 0
        updates = 0
        while True:
            params = np.array([target, max_iter, rho, eta, alpha, scale, rho_ratio, rho_every, it,
                               float(max(max_factorizations - 1 - updates, 0) if adapt else 0),
                               1.0 if symmetric else 0.0, float(min(max(50, m // 10), 500)),
                               RHO_MIN_SPARSE * lmax])
            admm_sparse_kernel(*A, *Wk, qt, mu, c, st, params, info)
            it = int(info[0])
            rho = float(info[3])
            updates += int(info[4])
            krylov += int(info[5])
            r = st[0] * cc
            err, u = check(r)
            if int(info[2]) != 0 or err <= tol or it >= max_iter:
                break
            target = 0.5 * min(target, tol * tol / err)
        extra = {"rho_updates": updates, "krylov_iterations": krylov,
                 "linear_solver": "pcg" if symmetric else "bicgstab"}
        nfact = updates + 1
    else:
        Ainv = None
        while True:
            if Ainv is None:
                Ainv = _shifted_inverse(Wf, rho + eta, symmetric)
                nfact += 1
            params = np.array([target, max_iter, rho, eta, alpha, scale, rho_ratio, rho_every, it,
                               1.0 if (adapt and nfact < max_factorizations) else 0.0])
            admm_kernel(Wt, Ainv, qt, mu, c, st, params, info)
            it = int(info[0])
            status = int(info[2])
            if status == 2:
                rho = float(info[3])
                Ainv = None
                continue
            r = st[0] * cc
            err, u = check(r)
            if status != 0 or err <= tol or it >= max_iter:
                break
            target = 0.5 * min(target, tol * tol / err)
        extra = {}
    converged = bool(err <= tol)
    out = {"rho": float(rho), "eta": float(eta), "factorizations": nfact}
    out.update(extra)
    return r, u, err, it, converged, out
