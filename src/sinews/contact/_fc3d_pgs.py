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
(Acary et al. 2018 §6.1) is compared with an internal tolerance; when it passes, the true
natural-map error ||F_nat(r)|| / (1 + ||q||) is evaluated, and if that fails the proxy
tolerance is divided by 10 (Siconos' self-adapting proxy).  The true error is also evaluated
every ``check_every`` sweeps.

The kernel takes W as a C-contiguous dense matrix (rows of a contact are contiguous).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._fc3d_cone import natural_map_sq_sum

# Re-association lets LLVM vectorise the row dot products (sums in a different order, ~1 ulp
# per term); no-NaN/no-Inf assumptions are *not* enabled, so non-finite data still propagates.
_FASTMATH = {"reassoc", "contract"}


@njit(cache=True, fastmath=_FASTMATH)
def pgs_kernel(W, q, mu, r, u, params):
    """Run PGS sweeps in place on r (warm start) and write u = W r + q at exit.

    params = [tol, max_iter, omega, check_every, norm_scale, iterations, error, converged]:
    the first five are inputs (the relative error is sqrt(sum ||F_nat||^2) / norm_scale), the
    last three are written at exit.
    """
    tol = params[0]
    max_iter = int(params[1])
    omega = params[2]
    check_every = int(params[3])
    scale = params[4]
    m = q.shape[0]
    nc = m // 3
    proxy_tol = tol
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
            rn_old = r[k]
            r1_old = r[k + 1]
            r2_old = r[k + 2]
            # normal row
            wnn = W[k, k]
            rn = rn_old - omega * un / wnn
            if rn < 0.0:
                rn = 0.0
            drn = rn - rn_old
            u1 += W[k + 1, k] * drn
            u2 += W[k + 2, k] * drn
            # tangential rows, one common step, then the disc projection
            wt = 0.5 * (W[k + 1, k + 1] + W[k + 2, k + 2])
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
            d = max(abs(rn - rn_old), abs(r1 - r1_old), abs(r2 - r2_old))
            if d > dmax:
                dmax = d
            v = max(abs(rn), abs(r1), abs(r2))
            if v > rmax:
                rmax = v
        proxy = dmax / max(rmax, 1e-300)
        if proxy <= proxy_tol or it % check_every == 0 or it == max_iter:
            for i in range(m):
                s = q[i]
                for j in range(m):
                    s += W[i, j] * r[j]
                u[i] = s
            err = np.sqrt(natural_map_sq_sum(r, u, mu, 3)) / scale
            if err <= tol:
                converged = True
                break
            if proxy <= proxy_tol:
                proxy_tol *= 0.1
    if not converged:
        for i in range(m):
            s = q[i]
            for j in range(m):
                s += W[i, j] * r[j]
            u[i] = s
        err = np.sqrt(natural_map_sq_sum(r, u, mu, 3)) / scale
    params[5] = it
    params[6] = err
    params[7] = 1.0 if converged else 0.0
