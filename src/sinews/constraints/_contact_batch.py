"""All point-contact rows of a set evaluated at once (vectorised over contact points).

Same formulas as :class:`~sinews.constraints.constraint.ContactConstraint` (``G = n^T J_p``,
``gamma = -n . a_p(qdd = 0)``), computed for every contact point of the set with a handful of
array operations instead of a Python loop over groups.
"""

from __future__ import annotations

import numpy as np


def _cross(a, b):
    """Row-wise cross products of (m, 3) arrays."""
    return np.stack(
        [a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2], a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]],
        axis=1,
    )


_BLOCK = 2048  # rows per block of jacobian_rows


class ContactBatch:
    """Static data of the contact groups of a bound set."""

    def __init__(self, model, groups):
        c = model.compiled
        bodies = np.array([g._body_id for g in groups], dtype=np.int64)
        self.link = c.link_of_body[bodies]
        self.moving = self.link >= 0
        R = c.X_link_body_R[bodies]
        pts = np.array([g.body_point for g in groups]).reshape(-1, 3)
        # contact points in their link frames (world frame for points on the world / welded to it)
        self.r_link = np.einsum("pij,pj->pi", R, pts) + c.X_link_body_p[bodies]
        self.rows = np.concatenate([np.arange(g.row_start, g.row_start + g.size) for g in groups])
        self.point_of_row = np.concatenate([np.full(g.size, j) for j, g in enumerate(groups)])
        self.N = np.concatenate([g.normal_matrix for g in groups])
        self.link_of_row = self.link[self.point_of_row]
        self.safe_link = np.where(self.moving, self.link, 0)
        # compiled path: rows grouped by point, in batch order
        self.point_ptr = np.concatenate([[0], np.cumsum([g.size for g in groups])]).astype(np.int64)
        self.r_link_c = np.ascontiguousarray(self.r_link)
        self.N_c = np.ascontiguousarray(self.N)

    def _points(self, kin):
        k = self.safe_link
        oR = kin.oR[k]
        op = kin.op[k]
        x = np.einsum("pij,pj->pi", oR, self.r_link) + op
        x[~self.moving] = self.r_link[~self.moving]
        return k, oR, op, x

    def jacobian_rows(self, kin):
        """(rows, nv): the contact rows of G (built in blocks of rows, so that the temporaries
        of large sets stay small)."""
        nv = kin.nv
        nr = len(self.rows)
        if kin._c.nlinks == 0:
            return np.zeros((nr, nv))
        _, _, _, x = self._points(kin)
        G = np.empty((nr, nv))
        for a in range(0, nr, _BLOCK):
            b = min(nr, a + _BLOCK)
            G[a:b] = self._jacobian_block(kin, x, a, b)
        return G

    def _jacobian_block(self, kin, x, a, b):
        xr = x[self.point_of_row[a:b]]  # (r, 3)
        Sw, SvO = kin.Sw, kin.SvO
        # linear velocity Jacobian of the world point: SvO + Sw x x  (per dof column)
        J0 = SvO[0][None, :] + Sw[1][None, :] * xr[:, 2:3] - Sw[2][None, :] * xr[:, 1:2]
        J1 = SvO[1][None, :] + Sw[2][None, :] * xr[:, 0:1] - Sw[0][None, :] * xr[:, 2:3]
        J2 = SvO[2][None, :] + Sw[0][None, :] * xr[:, 1:2] - Sw[1][None, :] * xr[:, 0:1]
        N = self.N[a:b]
        G = N[:, 0:1] * J0 + N[:, 1:2] * J1 + N[:, 2:3] * J2
        lr = self.link_of_row[a:b]
        mask = kin.mask[np.where(lr >= 0, lr, 0)]
        mask &= (lr >= 0)[:, None]
        return G * mask

    def gamma_rows(self, kin):
        """(rows,): the contact rows of gamma (no Baumgarte)."""
        if kin._c.nlinks == 0:
            return np.zeros(len(self.rows))
        k, oR, op, x = self._points(kin)
        w = np.einsum("pij,pj->pi", oR, kin.vel[k, :3])
        vo = np.einsum("pij,pj->pi", oR, kin.vel[k, 3:])
        al = np.einsum("pij,pj->pi", oR, kin.acc[k, :3])
        ao = np.einsum("pij,pj->pi", oR, kin.acc[k, 3:])
        r = x - op
        a = ao + _cross(al, r) + _cross(w, vo + _cross(w, r))
        a[~self.moving] = 0.0
        return -np.einsum("ri,ri->r", self.N, a[self.point_of_row])
