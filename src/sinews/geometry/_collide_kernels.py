"""Contacts of posed primitive geometries in one Numba kernel (the compiled path of the
``default`` stepper, :mod:`sinews.sim._step_kernels`).

:func:`collide` computes the geometries' world poses from their links' world poses, tests every
half-space against the support points of the other shapes (the formulas of
:func:`sinews.geometry.contacts._halfspace_batch`), runs a sweep and prune along x on the
bounding boxes of the others, and calls the narrow phase of box-box
(:func:`sinews.geometry._box_kernels.box_box`), sphere-sphere and sphere-box pairs (the formulas
of :mod:`sinews.geometry.narrow_phase`; a point is a sphere of radius 0), in the order of
:func:`sinews.geometry.contacts.find_contacts`.  It returns -1 for a candidate pair without a
routine here (the caller takes the general path) and -2 when the contact buffers are full.
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

from ._box_kernels import box_box

# geometry kinds (column 0 of gi)
K_HALFSPACE = 0
K_SPHERE = 1
K_BOX = 2
K_POINT = 3
K_CAPSULE = 4


@njit(inline="always", cache=True)
def _add_contact(k, ga, gb, p0, p1, p2, n0, n1, n2, d, ci, cf):
    ci[k, 0] = ga
    ci[k, 1] = gb
    cf[k, 0] = p0
    cf[k, 1] = p1
    cf[k, 2] = p2
    cf[k, 3] = n0
    cf[k, 4] = n1
    cf[k, 5] = n2
    cf[k, 6] = d


@njit(cache=True)
def _sphere_box(c, r, Rb, pb, hb, margin, sign, gi_a, gi_b, k, ci, cf):
    """Sphere centre ``c`` radius ``r`` against a box: narrow_phase.sphere_box (normal from the
    sphere to the box), times ``sign``; appends at most one contact; returns the new count."""
    l0 = Rb[0, 0] * (c[0] - pb[0]) + Rb[1, 0] * (c[1] - pb[1]) + Rb[2, 0] * (c[2] - pb[2])
    l1 = Rb[0, 1] * (c[0] - pb[0]) + Rb[1, 1] * (c[1] - pb[1]) + Rb[2, 1] * (c[2] - pb[2])
    l2 = Rb[0, 2] * (c[0] - pb[0]) + Rb[1, 2] * (c[1] - pb[1]) + Rb[2, 2] * (c[2] - pb[2])
    loc = np.array([l0, l1, l2])
    cl = np.empty(3)
    for i in range(3):
        cl[i] = min(max(loc[i], -hb[i]), hb[i])
    df = loc - cl
    L = math.sqrt(df[0] * df[0] + df[1] * df[1] + df[2] * df[2])
    e = np.zeros(3)
    face = cl.copy()
    if L > 1e-12:
        e[:] = df / L
        dist = L - r
    else:
        i = 0
        g = hb[0] - abs(loc[0])
        for j in range(1, 3):
            gj = hb[j] - abs(loc[j])
            if gj < g:
                g = gj
                i = j
        s = 1.0 if loc[i] >= 0.0 else -1.0
        e[i] = s
        face[:] = loc
        face[i] = s * hb[i]
        dist = -g - r
    if dist > margin:
        return k
    n = np.empty(3)
    pt = np.empty(3)
    for a in range(3):
        n[a] = -(Rb[a, 0] * e[0] + Rb[a, 1] * e[1] + Rb[a, 2] * e[2])
        surf = pb[a] + Rb[a, 0] * face[0] + Rb[a, 1] * face[1] + Rb[a, 2] * face[2]
        pt[a] = surf - n[a] * (0.5 * dist)
    _add_contact(k, gi_a, gi_b, pt[0], pt[1], pt[2], sign * n[0], sign * n[1], sign * n[2], dist, ci, cf)
    return k + 1


@njit(cache=True)
def collide(gi, gf, pair, sup, lp, margin, gR, gp, ci, cf, pts, nrm, dst):
    """Contacts of the posed geometries into ci (ga, gb) and cf (point, normal, distance);
    returns the count, or -1 (a pair without a routine here) or -2 (capacity)."""
    n = gi.shape[0]
    cap = ci.shape[0]
    # world poses
    for g in range(n):
        l = gi[g, 1]
        if l < 0:
            for a in range(3):
                for b in range(3):
                    gR[g, a, b] = gf[g, 3 * a + b]
                gp[g, a] = gf[g, 9 + a]
        else:
            for a in range(3):
                s = lp[l, 9 + a]
                for b in range(3):
                    s += lp[l, 3 * a + b] * gf[g, 9 + b]
                    acc = 0.0
                    for c in range(3):
                        acc += lp[l, 3 * a + c] * gf[g, 3 * c + b]
                    gR[g, a, b] = acc
                gp[g, a] = s
    k = 0
    # half-spaces against the support points
    for i in range(n):
        if gi[i, 0] != K_HALFSPACE:
            continue
        n0 = gR[i, 0, 2]
        n1 = gR[i, 1, 2]
        n2 = gR[i, 2, 2]
        for s in range(sup.shape[0]):
            o = np.int64(sup[s, 4])
            if pair[i, o, 0] == 0.0:
                continue
            w0 = gp[o, 0] + gR[o, 0, 0] * sup[s, 0] + gR[o, 0, 1] * sup[s, 1] + gR[o, 0, 2] * sup[s, 2]
            w1 = gp[o, 1] + gR[o, 1, 0] * sup[s, 0] + gR[o, 1, 1] * sup[s, 1] + gR[o, 1, 2] * sup[s, 2]
            w2 = gp[o, 2] + gR[o, 2, 0] * sup[s, 0] + gR[o, 2, 1] * sup[s, 1] + gR[o, 2, 2] * sup[s, 2]
            rad = sup[s, 3]
            d = (w0 - gp[i, 0]) * n0 + (w1 - gp[i, 1]) * n1 + (w2 - gp[i, 2]) * n2 - rad
            if d <= margin:
                if k >= cap:
                    return -2
                f = rad + 0.5 * d
                _add_contact(k, i, o, w0 - f * n0, w1 - f * n1, w2 - f * n2, n0, n1, n2, d, ci, cf)
                k += 1
    # broad phase on the others: sweep and prune along x, then the pairs in (i, j) order
    idx = np.empty(n, dtype=np.int64)
    m = 0
    for g in range(n):
        if gi[g, 0] != K_HALFSPACE:
            idx[m] = g
            m += 1
    if m < 2:
        return k
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    for a in range(m):
        g = idx[a]
        kind = gi[g, 0]
        for c in range(3):
            if kind == K_BOX:
                e = (abs(gR[g, c, 0]) * gf[g, 12] + abs(gR[g, c, 1]) * gf[g, 13]
                     + abs(gR[g, c, 2]) * gf[g, 14])
            elif kind == K_SPHERE:
                e = gf[g, 12]
            elif kind == K_CAPSULE:
                e = abs(gR[g, c, 2]) * gf[g, 13] + gf[g, 12]
            else:
                e = 0.0
            lo[a, c] = gp[g, c] - e - margin
            hi[a, c] = gp[g, c] + e + margin
    # insertion sort of the lower x bounds (few geometries, nearly sorted from step to step;
    # stable like the general path's argsort(kind="stable"))
    order = np.empty(m, dtype=np.int64)
    for a in range(m):
        x = a
        while x > 0 and lo[order[x - 1], 0] > lo[a, 0]:
            order[x] = order[x - 1]
            x -= 1
        order[x] = a
    cand = np.zeros((n, n), dtype=np.bool_)
    for x in range(m):
        a = order[x]
        for y in range(x + 1, m):
            b = order[y]
            if lo[b, 0] > hi[a, 0]:
                break
            if lo[b, 1] <= hi[a, 1] and lo[a, 1] <= hi[b, 1] and lo[b, 2] <= hi[a, 2] and lo[a, 2] <= hi[b, 2]:
                i = min(idx[a], idx[b])
                j = max(idx[a], idx[b])
                if pair[i, j, 0] != 0.0:
                    cand[i, j] = True
    for i in range(n):
        for j in range(i + 1, n):
            if not cand[i, j]:
                continue
            ki = gi[i, 0]
            kj = gi[j, 0]
            if ki == K_BOX and kj == K_BOX:
                c = box_box(gR[i], gp[i], gf[i, 12:15].copy(), gR[j], gp[j], gf[j, 12:15].copy(), margin,
                            pts, nrm, dst)
                for t in range(c):
                    if dst[t] <= margin:
                        if k >= cap:
                            return -2
                        _add_contact(k, i, j, pts[t, 0], pts[t, 1], pts[t, 2], nrm[t, 0], nrm[t, 1],
                                     nrm[t, 2], dst[t], ci, cf)
                        k += 1
            elif (ki == K_SPHERE or ki == K_POINT) and (kj == K_SPHERE or kj == K_POINT):
                if k >= cap:
                    return -2
                r1 = gf[i, 12] if ki == K_SPHERE else 0.0
                r2 = gf[j, 12] if kj == K_SPHERE else 0.0
                d0 = gp[j, 0] - gp[i, 0]
                d1 = gp[j, 1] - gp[i, 1]
                d2 = gp[j, 2] - gp[i, 2]
                L = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
                if L > 1e-12:
                    u0, u1, u2 = d0 / L, d1 / L, d2 / L
                else:
                    u0, u1, u2 = 0.0, 0.0, 1.0
                dist = L - r1 - r2
                if dist <= margin:
                    f = r1 + 0.5 * dist
                    _add_contact(k, i, j, gp[i, 0] + u0 * f, gp[i, 1] + u1 * f, gp[i, 2] + u2 * f,
                                 u0, u1, u2, dist, ci, cf)
                    k += 1
            elif (ki == K_SPHERE or ki == K_POINT) and kj == K_BOX:
                if k >= cap:
                    return -2
                r1 = gf[i, 12] if ki == K_SPHERE else 0.0
                k = _sphere_box(gp[i], r1, gR[j], gp[j], gf[j, 12:15], margin, np.float64(1.0), np.int64(i),
                                np.int64(j), np.int64(k), ci, cf)
            elif ki == K_BOX and (kj == K_SPHERE or kj == K_POINT):
                if k >= cap:
                    return -2
                r2 = gf[j, 12] if kj == K_SPHERE else 0.0
                k = _sphere_box(gp[j], r2, gR[i], gp[i], gf[i, 12:15], margin, np.float64(-1.0), np.int64(i),
                                np.int64(j), np.int64(k), ci, cf)
            else:
                return -1
    return k
