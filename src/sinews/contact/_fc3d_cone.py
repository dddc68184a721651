"""Second-order (Coulomb) cone geometry and the natural-map residual, as Numba kernels.

Per contact the reaction is ordered r = [r_n, r_t1, r_t2] and the Coulomb cone is

    K_mu = { r : ||r_t|| <= mu r_n },        K*_mu = { u : mu ||u_t|| <= u_n }   (dual cone).

Euclidean projection onto K_mu (e.g. Acary, Brémond, Huber 2018, eq. 2.14), with t = ||r_t||:

* t <= mu r_n                (inside):          P(r) = r
* mu t <= -r_n               (in the polar):    P(r) = 0
* otherwise                  (onto the boundary):
      a = (r_n + mu t) / (1 + mu^2),   P(r) = [a, mu a r_t / t].

The natural-map residual of the frictional contact problem with the De Saxcé change of variable
(De Saxcé & Feng 1991; Acary, Brémond, Huber 2018, §3.1; Siconos ``fc3d_compute_error``) is,
contact by contact,

    u = W r + q,   û = [u_n + mu ||u_t||, u_t],   F_nat(r) = r - P_{K_mu}(r - û),

and it vanishes exactly at the solutions.  The kernels here are dimension-3 only; the 2-D form
(d = 2, a scalar tangent) is handled by the same formulas with ||u_t|| = |u_t|.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit


@njit(inline="always", cache=True)
def project_cone(zn, z1, z2, m):
    """Euclidean projection of [zn, z1, z2] onto the cone K_m (the three cases above)."""
    t = np.sqrt(z1 * z1 + z2 * z2)
    if t <= m * zn and zn >= 0.0:  # zn >= 0: a pulling r is outside K_0 (mu = 0)
        return zn, z1, z2
    if m * t <= -zn:
        return 0.0, 0.0, 0.0
    s = (zn + m * t) / (1.0 + m * m)
    return s, m * s * z1 / t, m * s * z2 / t


@njit(cache=True)
def natural_map_sq_sum(r, u, mu, dim):
    """Sum over contacts of ||r_a - P_K(r_a - û_a)||^2 (the squared natural-map norm)."""
    nc = mu.shape[0]
    total = 0.0
    for a in range(nc):
        k = dim * a
        m = mu[a]
        un = u[k]
        if dim == 3:
            ut1 = u[k + 1]
            ut2 = u[k + 2]
            nut = np.sqrt(ut1 * ut1 + ut2 * ut2)
        else:
            ut1 = u[k + 1]
            ut2 = 0.0
            nut = abs(ut1)
        # z = r - û
        zn = r[k] - (un + m * nut)
        z1 = r[k + 1] - ut1
        z2 = (r[k + 2] - ut2) if dim == 3 else 0.0
        pn, p1, p2 = project_cone(zn, z1, z2, m)
        d0 = r[k] - pn
        d1 = r[k + 1] - p1
        total += d0 * d0 + d1 * d1
        if dim == 3:
            d2 = r[k + 2] - p2
            total += d2 * d2
    return total


@njit(cache=True)
def natural_map_sq_sum_scaled(rs, us, c, mu):
    """natural_map_sq_sum for r = c_a rs_a, u = us_a / c_a (per-contact scaling c, dimension 3)."""
    nc = mu.shape[0]
    total = 0.0
    for a in range(nc):
        k = 3 * a
        ca = c[a]
        ic = 1.0 / ca
        m = mu[a]
        r0 = ca * rs[k]
        r1 = ca * rs[k + 1]
        r2 = ca * rs[k + 2]
        un = ic * us[k]
        ut1 = ic * us[k + 1]
        ut2 = ic * us[k + 2]
        nut = np.sqrt(ut1 * ut1 + ut2 * ut2)
        zn = r0 - (un + m * nut)
        z1 = r1 - ut1
        z2 = r2 - ut2
        pn, p1, p2 = project_cone(zn, z1, z2, m)
        d0 = r0 - pn
        d1 = r1 - p1
        d2 = r2 - p2
        total += d0 * d0 + d1 * d1 + d2 * d2
    return total
