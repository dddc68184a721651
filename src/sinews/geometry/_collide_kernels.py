"""Contacts of posed primitive geometries in one Numba kernel (the compiled path of the
``default`` stepper, :mod:`sinews.sim._step_kernels`).

:func:`collide` computes the geometries' world poses from their links' world poses, tests every
half-space against the support points of the other shapes (the formulas of
:func:`sinews.geometry.contacts._halfspace_batch`), keeps the pairs of the others whose bounding
boxes (grown by the margin) overlap, and calls the narrow phase of box-box
(:func:`sinews.geometry._box_kernels.box_pair`), sphere-sphere, sphere-box, sphere-capsule and
capsule-capsule pairs (the formulas of :mod:`sinews.geometry.narrow_phase`: a point is a sphere
of radius 0, a capsule pair is the ball pair at the closest points of the segments, Ericson
5.1.9), in the order of :func:`sinews.geometry.contacts.find_contacts`.  It returns -1 for a
candidate pair without a routine here (capsule-box: the caller takes the general path) and -2
when the contact buffers are full.

The kernel allocates nothing (performance notes, item 1): the bounding boxes are tested pair by
pair in (i, j) order (the pairs a sweep and prune would return, in the order the general path
sorts them; no (n, n) candidate matrix: for the few geometries of a robot scene the all-pairs
test is cheaper than the sort), the narrow phases read the posed tables by row and write their
contacts straight into ``ci``/``cf``, and the box-box face clipping uses the caller's
``pts``/``nrm`` arrays as scratch.
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

from ._box_kernels import box_pair
from ._fma import dot3

_TINY = 1e-300  # a segment shorter than sqrt(_TINY) is a point (as in narrow_phase)

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
def _sphere_box(c0, c1, c2, r, b, gR, gp, gf, margin, sign, ga, gb, k, ci, cf):
    """Sphere centre ``c`` radius ``r`` against box ``b`` (a row of the posed tables):
    narrow_phase.sphere_box (normal from the sphere to the box), times ``sign``; appends at most
    one contact (ci/cf row ``k``); returns the new count."""
    h0, h1, h2 = gf[b, 12], gf[b, 13], gf[b, 14]
    pb0, pb1, pb2 = gp[b, 0], gp[b, 1], gp[b, 2]
    r00, r01, r02 = gR[b, 0, 0], gR[b, 0, 1], gR[b, 0, 2]
    r10, r11, r12 = gR[b, 1, 0], gR[b, 1, 1], gR[b, 1, 2]
    r20, r21, r22 = gR[b, 2, 0], gR[b, 2, 1], gR[b, 2, 2]
    l0 = r00 * (c0 - pb0) + r10 * (c1 - pb1) + r20 * (c2 - pb2)
    l1 = r01 * (c0 - pb0) + r11 * (c1 - pb1) + r21 * (c2 - pb2)
    l2 = r02 * (c0 - pb0) + r12 * (c1 - pb1) + r22 * (c2 - pb2)
    f0 = min(max(l0, -h0), h0)
    f1 = min(max(l1, -h1), h1)
    f2 = min(max(l2, -h2), h2)
    df0 = l0 - f0
    df1 = l1 - f1
    df2 = l2 - f2
    L = math.sqrt(df0 * df0 + df1 * df1 + df2 * df2)
    if L > 1e-12:
        e0 = df0 / L
        e1 = df1 / L
        e2 = df2 / L
        dist = L - r
    else:  # centre inside: leave through the nearest face
        e0 = 0.0
        e1 = 0.0
        e2 = 0.0
        f0, f1, f2 = l0, l1, l2
        g = h0 - abs(l0)
        i = 0
        g1 = h1 - abs(l1)
        if g1 < g:
            g = g1
            i = 1
        g2 = h2 - abs(l2)
        if g2 < g:
            g = g2
            i = 2
        if i == 0:
            e0 = 1.0 if l0 >= 0.0 else -1.0
            f0 = e0 * h0
        elif i == 1:
            e1 = 1.0 if l1 >= 0.0 else -1.0
            f1 = e1 * h1
        else:
            e2 = 1.0 if l2 >= 0.0 else -1.0
            f2 = e2 * h2
        dist = -g - r
    if dist > margin:
        return k
    n0 = -(r00 * e0 + r01 * e1 + r02 * e2)
    n1 = -(r10 * e0 + r11 * e1 + r12 * e2)
    n2 = -(r20 * e0 + r21 * e1 + r22 * e2)
    hd = 0.5 * dist
    p0 = pb0 + r00 * f0 + r01 * f1 + r02 * f2 - n0 * hd
    p1 = pb1 + r10 * f0 + r11 * f1 + r12 * f2 - n1 * hd
    p2 = pb2 + r20 * f0 + r21 * f1 + r22 * f2 - n2 * hd
    _add_contact(k, ga, gb, p0, p1, p2, sign * n0, sign * n1, sign * n2, dist, ci, cf)
    return k + 1


@njit(inline="always", cache=True)
def _segments_closest(p0, p1, p2, q0, q1, q2, s0, s1, s2, t0, t1, t2):
    """Closest points of the segments ``[p, q]`` and ``[s, t]`` (Ericson 5.1.9), as
    :func:`sinews.geometry.narrow_phase.segment_closest_points` computes them."""
    d10, d11, d12 = q0 - p0, q1 - p1, q2 - p2
    d20, d21, d22 = t0 - s0, t1 - s1, t2 - s2
    r0, r1, r2 = p0 - s0, p1 - s1, p2 - s2
    a = dot3(d10, d11, d12, d10, d11, d12)
    e = dot3(d20, d21, d22, d20, d21, d22)
    f = dot3(d20, d21, d22, r0, r1, r2)
    if a <= _TINY and e <= _TINY:
        return p0, p1, p2, s0, s1, s2
    if a <= _TINY:
        sp = 0.0
        tp = min(max(f / e, 0.0), 1.0)
    else:
        c = dot3(d10, d11, d12, r0, r1, r2)
        if e <= _TINY:
            tp = 0.0
            sp = min(max(-c / a, 0.0), 1.0)
        else:
            b = dot3(d10, d11, d12, d20, d21, d22)
            denom = a * e - b * b
            sp = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > 1e-12 * a * e else 0.0
            tp = (b * sp + f) / e
            if tp < 0.0:
                tp = 0.0
                sp = min(max(-c / a, 0.0), 1.0)
            elif tp > 1.0:
                tp = 1.0
                sp = min(max((b - c) / a, 0.0), 1.0)
    return (p0 + d10 * sp, p1 + d11 * sp, p2 + d12 * sp,
            s0 + d20 * tp, s1 + d21 * tp, s2 + d22 * tp)


@njit(inline="always", cache=True)
def _capsule_ends(gR, gp, gf, g):
    """The end points ``p -+ R[:, 2] length / 2`` of capsule ``g``'s segment."""
    h = gf[g, 13]
    a0 = gR[g, 0, 2] * h
    a1 = gR[g, 1, 2] * h
    a2 = gR[g, 2, 2] * h
    return gp[g, 0] - a0, gp[g, 1] - a1, gp[g, 2] - a2, gp[g, 0] + a0, gp[g, 1] + a1, gp[g, 2] + a2


@njit(inline="always", cache=True)
def _ball_pair(c0, c1, c2, r1, e0, e1, e2, r2, margin, sign, ga, gb, k, ci, cf):
    """The contact of the balls ``(c, r1)`` and ``(e, r2)`` as the general path's
    ``_sphere_sphere`` (normal from the first ball; ``sign = -1`` reverses it for a swapped
    pair); returns the new count."""
    d0 = e0 - c0
    d1 = e1 - c1
    d2 = e2 - c2
    L = math.sqrt(dot3(d0, d1, d2, d0, d1, d2))
    if L > 1e-12:
        n0, n1, n2 = d0 / L, d1 / L, d2 / L
    else:
        n0, n1, n2 = 0.0, 0.0, 1.0
    dist = L - r1 - r2
    if dist <= margin:
        f = r1 + 0.5 * dist
        _add_contact(k, ga, gb, c0 + n0 * f, c1 + n1 * f, c2 + n2 * f, sign * n0, sign * n1, sign * n2,
                     dist, ci, cf)
        return k + 1
    return k


@njit(inline="always", cache=True)
def _extent(gi, gR, gf, g, c):
    """Half width along world axis ``c`` of geometry ``g``'s bounding box."""
    kind = gi[g, 0]
    if kind == K_BOX:
        return abs(gR[g, c, 0]) * gf[g, 12] + abs(gR[g, c, 1]) * gf[g, 13] + abs(gR[g, c, 2]) * gf[g, 14]
    if kind == K_SPHERE:
        return gf[g, 12]
    if kind == K_CAPSULE:
        return abs(gR[g, c, 2]) * gf[g, 13] + gf[g, 12]
    return 0.0


@njit(cache=True)
def collide(gi, gf, pair, sup, lp, margin, gR, gp, ci, cf, pts, nrm, dst):
    """Contacts of the posed geometries into ci (ga, gb) and cf (point, normal, distance);
    returns the count, or -1 (a pair without a routine here: capsule-box) or -2 (capacity).

    ``gR`` (n, 3, 3), ``gp`` (n, 3): the world poses (written); ``pts``, ``nrm``: (>= 8, 3)
    scratch (box-box face clipping); ``dst`` is not used (kept for the callers)."""
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
    k = np.int64(0)  # not a literal: one compiled box_pair / _sphere_box
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
    # the others: the pairs whose bounding boxes (grown by the margin) overlap, in (i, j) order
    for i in range(n):
        ki = gi[i, 0]
        if ki == K_HALFSPACE:
            continue
        e = _extent(gi, gR, gf, i, 0)
        lo0 = gp[i, 0] - e - margin
        hi0 = gp[i, 0] + e + margin
        e = _extent(gi, gR, gf, i, 1)
        lo1 = gp[i, 1] - e - margin
        hi1 = gp[i, 1] + e + margin
        e = _extent(gi, gR, gf, i, 2)
        lo2 = gp[i, 2] - e - margin
        hi2 = gp[i, 2] + e + margin
        for j in range(i + 1, n):
            kj = gi[j, 0]
            if kj == K_HALFSPACE or pair[i, j, 0] == 0.0:
                continue
            e = _extent(gi, gR, gf, j, 0)
            if not (gp[j, 0] - e - margin <= hi0 and lo0 <= gp[j, 0] + e + margin):
                continue
            e = _extent(gi, gR, gf, j, 1)
            if not (gp[j, 1] - e - margin <= hi1 and lo1 <= gp[j, 1] + e + margin):
                continue
            e = _extent(gi, gR, gf, j, 2)
            if not (gp[j, 2] - e - margin <= hi2 and lo2 <= gp[j, 2] + e + margin):
                continue
            if ki == K_BOX and kj == K_BOX:
                k = box_pair(gR, gp, gf, i, j, margin, pts, nrm, k, ci, cf)
                if k < 0:
                    return k
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
                k = _sphere_box(gp[i, 0], gp[i, 1], gp[i, 2], r1, j, gR, gp, gf, margin, 1.0, i, j, k, ci, cf)
            elif ki == K_BOX and (kj == K_SPHERE or kj == K_POINT):
                if k >= cap:
                    return -2
                r2 = gf[j, 12] if kj == K_SPHERE else 0.0
                k = _sphere_box(gp[j, 0], gp[j, 1], gp[j, 2], r2, i, gR, gp, gf, margin, -1.0, i, j, k, ci, cf)
            elif ki == K_CAPSULE and kj == K_CAPSULE:
                if k >= cap:
                    return -2
                a0, a1, a2, b0, b1, b2 = _capsule_ends(gR, gp, gf, i)
                c0, c1, c2, e0, e1, e2 = _capsule_ends(gR, gp, gf, j)
                x0, x1, x2, y0, y1, y2 = _segments_closest(a0, a1, a2, b0, b1, b2, c0, c1, c2, e0, e1, e2)
                k = _ball_pair(x0, x1, x2, gf[i, 12], y0, y1, y2, gf[j, 12], margin, 1.0, i, j, k, ci, cf)
            elif (ki == K_SPHERE or ki == K_POINT) and kj == K_CAPSULE:
                if k >= cap:
                    return -2
                r1 = gf[i, 12] if ki == K_SPHERE else 0.0
                c0, c1, c2, e0, e1, e2 = _capsule_ends(gR, gp, gf, j)
                _, _, _, y0, y1, y2 = _segments_closest(gp[i, 0], gp[i, 1], gp[i, 2], gp[i, 0], gp[i, 1], gp[i, 2],
                                                        c0, c1, c2, e0, e1, e2)
                k = _ball_pair(gp[i, 0], gp[i, 1], gp[i, 2], r1, y0, y1, y2, gf[j, 12], margin, 1.0, i, j, k, ci, cf)
            elif ki == K_CAPSULE and (kj == K_SPHERE or kj == K_POINT):
                if k >= cap:
                    return -2
                r2 = gf[j, 12] if kj == K_SPHERE else 0.0
                c0, c1, c2, e0, e1, e2 = _capsule_ends(gR, gp, gf, i)
                _, _, _, y0, y1, y2 = _segments_closest(gp[j, 0], gp[j, 1], gp[j, 2], gp[j, 0], gp[j, 1], gp[j, 2],
                                                        c0, c1, c2, e0, e1, e2)
                k = _ball_pair(gp[j, 0], gp[j, 1], gp[j, 2], r2, y0, y1, y2, gf[i, 12], margin, -1.0, i, j, k, ci, cf)
            else:  # capsule-box: the general path
                return -1
    return k
