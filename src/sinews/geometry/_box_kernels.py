"""Numba kernels of the box routines of :mod:`sinews.geometry.narrow_phase` (box-box by the
separating axis test and face clipping; box against a half-space), compiled on first use.

Same algorithm and conventions as the reference NumPy formulation documented there: normals
from box 1 to box 2, signed distances, points halfway between the surfaces.
"""

from __future__ import annotations

import numpy as np
from .._jit import njit


@njit(cache=True)
def _clip(poly, n, i1, i2, h1, h2, tmp):
    """Sutherland-Hodgman clip of poly[:n] (rows of 3) to |x[i1]| <= h1, |x[i2]| <= h2.
    Result in poly; returns the new count.  ``tmp`` is scratch of the same size."""
    for pass_ in range(4):
        axis = i1 if pass_ < 2 else i2
        lim = h1 if pass_ < 2 else h2
        sgn = 1.0 if pass_ % 2 == 0 else -1.0
        if n == 0:
            return 0
        m = 0
        for k in range(n):
            kn = (k + 1) % n
            dp = sgn * poly[k, axis] - lim
            dq = sgn * poly[kn, axis] - lim
            if dp <= 0.0:
                for c in range(3):
                    tmp[m, c] = poly[k, c]
                m += 1
            if (dp < 0.0 < dq) or (dq < 0.0 < dp):
                s = dp / (dp - dq)
                for c in range(3):
                    tmp[m, c] = poly[k, c] + (poly[kn, c] - poly[k, c]) * s
                m += 1
        for k in range(m):
            for c in range(3):
                poly[k, c] = tmp[k, c]
        n = m
    return n


@njit(cache=True)
def _reduce4(poly, n, axis, sgn, hr, tmp):
    """Keep 4 of the n > 4 clipped points (in poly, reference-frame coordinates): the deepest,
    the farthest from it, then the two farthest on either side of the line through those two
    (a manifold spanning the largest area, as ODE and Bullet reduce theirs)."""
    a = 0
    for m in range(1, n):
        if sgn * poly[m, axis] < sgn * poly[a, axis]:
            a = m
    b = a
    best = -1.0
    for m in range(n):
        d = 0.0
        for c in range(3):
            if c != axis:
                d += (poly[m, c] - poly[a, c]) ** 2
        if d > best:
            best = d
            b = m
    j = 1 if axis == 0 else 0
    k = 2 if axis != 2 else 1
    ux = poly[b, j] - poly[a, j]
    uy = poly[b, k] - poly[a, k]
    c1 = a
    c2 = a
    smax = 0.0
    smin = 0.0
    for m in range(n):
        cr = ux * (poly[m, k] - poly[a, k]) - uy * (poly[m, j] - poly[a, j])
        if cr > smax:
            smax = cr
            c1 = m
        if cr < smin:
            smin = cr
            c2 = m
    keep = (a, c1, b, c2)
    cnt = 0
    for idx in keep:
        dup = False
        for l in range(cnt):
            if (tmp[l, 0] == poly[idx, 0] and tmp[l, 1] == poly[idx, 1] and tmp[l, 2] == poly[idx, 2]):
                dup = True
        if not dup:
            for c in range(3):
                tmp[cnt, c] = poly[idx, c]
            cnt += 1
    for l in range(cnt):
        for c in range(3):
            poly[l, c] = tmp[l, c]
    return cnt


@njit(cache=True)
def _face(Rr, pr, hr, axis, Ri, pi, hi, nw, margin, flip, pts, nrm, dst):
    sgn = 1.0 if (Rr[0, axis] * nw[0] + Rr[1, axis] * nw[1] + Rr[2, axis] * nw[2]) > 0.0 else -1.0
    # incident face: most anti-parallel to n
    best = -1.0
    ia = 0
    dot_ia = 0.0
    for c in range(3):
        d = Ri[0, c] * nw[0] + Ri[1, c] * nw[1] + Ri[2, c] * nw[2]
        if abs(d) > best:
            best = abs(d)
            ia = c
            dot_ia = d
    isgn = -1.0 if dot_ia > 0.0 else 1.0
    j = 1 if ia == 0 else 0
    k = 2 if ia != 2 else 1
    poly = np.empty((16, 3))
    tmp = np.empty((16, 3))
    signs = ((-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0))
    for m in range(4):
        loc = np.empty(3)
        loc[ia] = isgn * hi[ia]
        loc[j] = signs[m][0] * hi[j]
        loc[k] = signs[m][1] * hi[k]
        # world, then reference frame
        for c in range(3):
            w = pi[c] + Ri[c, 0] * loc[0] + Ri[c, 1] * loc[1] + Ri[c, 2] * loc[2]
            tmp[0, c] = w - pr[c]
        for c in range(3):
            poly[m, c] = Rr[0, c] * tmp[0, 0] + Rr[1, c] * tmp[0, 1] + Rr[2, c] * tmp[0, 2]
    rj = 1 if axis == 0 else 0
    rk = 2 if axis != 2 else 1
    n = _clip(poly, 4, rj, rk, hr[rj] * (1 + 1e-9) + 1e-12, hr[rk] * (1 + 1e-9) + 1e-12, tmp)
    tol = 1e-9 * (1.0 + max(hr[0], max(hr[1], hr[2])))
    u = 0  # drop repeated points (clipping along coincident edges)
    for m in range(n):
        dup = False
        for l in range(u):
            if (abs(poly[l, 0] - poly[m, 0]) <= tol and abs(poly[l, 1] - poly[m, 1]) <= tol
                    and abs(poly[l, 2] - poly[m, 2]) <= tol):
                dup = True
                break
        if not dup:
            for c in range(3):
                poly[u, c] = poly[m, c]
            u += 1
    n = u
    if n > 4:
        n = _reduce4(poly, np.int64(n), np.int64(axis), sgn, hr, tmp)
    cnt = 0
    for m in range(n):
        d = sgn * poly[m, axis] - hr[axis]
        if d > margin:
            continue
        for c in range(3):
            w = pr[c] + Rr[c, 0] * poly[m, 0] + Rr[c, 1] * poly[m, 1] + Rr[c, 2] * poly[m, 2]
            pts[cnt, c] = w - nw[c] * 0.5 * d
            nrm[cnt, c] = flip * nw[c]
        dst[cnt] = d
        cnt += 1
    return cnt


@njit(cache=True)
def _segments(p1, d1, p2, d2):
    """Closest points of segments p1 + s d1, p2 + t d2 (s, t in [0, 1]); returns (s, t)."""
    r = p1 - p2
    a = d1 @ d1
    e = d2 @ d2
    f = d2 @ r
    c = d1 @ r
    b = d1 @ d2
    denom = a * e - b * b
    s = 0.0
    if denom > 1e-12 * a * e:
        s = min(max((b * f - c * e) / denom, 0.0), 1.0)
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(max(-c / a, 0.0), 1.0)
    elif t > 1.0:
        t = 1.0
        s = min(max((b - c) / a, 0.0), 1.0)
    return s, t


@njit(cache=True)
def box_box(R1, p1, h1, R2, p2, h2, margin, pts, nrm, dst):
    """Contacts of two boxes into pts (>= 8 rows), nrm, dst; returns the count."""
    d = p2 - p1
    C = R1.T @ R2
    absC = np.abs(C) + 1e-12
    dA = R1.T @ d
    dB = R2.T @ d
    best = 1e300
    kind = 0
    bi = 0
    nb = np.zeros(3)
    for i in range(3):
        ov = h1[i] + (absC[i, 0] * h2[0] + absC[i, 1] * h2[1] + absC[i, 2] * h2[2]) - abs(dA[i])
        if ov < -margin:
            return 0
        if ov < best:
            best = ov
            kind = 0
            bi = i
            s = 1.0 if dA[i] >= 0 else -1.0
            for c in range(3):
                nb[c] = R1[c, i] * s
    for j in range(3):
        ov = (absC[0, j] * h1[0] + absC[1, j] * h1[1] + absC[2, j] * h1[2]) + h2[j] - abs(dB[j])
        if ov < -margin:
            return 0
        if ov < best:
            best = ov
            kind = 1
            bi = j
            s = 1.0 if dB[j] >= 0 else -1.0
            for c in range(3):
                nb[c] = R2[c, j] * s
    face_best = best
    ebest = 1e300
    ei = -1
    ej = -1
    ne = np.zeros(3)
    for i in range(3):
        for j in range(3):
            ax = np.empty(3)
            ax[0] = R1[1, i] * R2[2, j] - R1[2, i] * R2[1, j]
            ax[1] = R1[2, i] * R2[0, j] - R1[0, i] * R2[2, j]
            ax[2] = R1[0, i] * R2[1, j] - R1[1, i] * R2[0, j]
            L = np.sqrt(ax @ ax)
            if L < 1e-6:
                continue
            ax = ax / L
            ra = 0.0
            rb = 0.0
            for c in range(3):
                ra += h1[c] * abs(R1[0, c] * ax[0] + R1[1, c] * ax[1] + R1[2, c] * ax[2])
                rb += h2[c] * abs(R2[0, c] * ax[0] + R2[1, c] * ax[1] + R2[2, c] * ax[2])
            sd = ax @ d
            ov = ra + rb - abs(sd)
            if ov < -margin:
                return 0
            if ov < face_best - 0.05 * abs(face_best) - 1e-9 and ov < ebest:  # faces preferred (also when separated)
                ebest = ov
                ei = i
                ej = j
                sg = 1.0 if sd >= 0 else -1.0
                for c in range(3):
                    ne[c] = ax[c] * sg
    if ei >= 0:
        ca = p1.copy()
        cb = p2.copy()
        for k in range(3):
            if k != ei:
                dk = R1[0, k] * ne[0] + R1[1, k] * ne[1] + R1[2, k] * ne[2]
                sk = 1.0 if dk > 0 else (-1.0 if dk < 0 else 0.0)
                for c in range(3):
                    ca[c] += h1[k] * sk * R1[c, k]
            if k != ej:
                dk = R2[0, k] * ne[0] + R2[1, k] * ne[1] + R2[2, k] * ne[2]
                sk = 1.0 if dk > 0 else (-1.0 if dk < 0 else 0.0)
                for c in range(3):
                    cb[c] -= h2[k] * sk * R2[c, k]
        e1 = np.ascontiguousarray(R1[:, ei])
        e2 = np.ascontiguousarray(R2[:, ej])
        a0 = ca - h1[ei] * e1
        b0 = cb - h2[ej] * e2
        s, t = _segments(a0, 2 * h1[ei] * e1, b0, 2 * h2[ej] * e2)
        x1 = a0 + 2 * h1[ei] * e1 * s
        x2 = b0 + 2 * h2[ej] * e2 * t
        if -ebest > margin:
            return 0
        for c in range(3):
            pts[0, c] = 0.5 * (x1[c] + x2[c])
            nrm[0, c] = ne[c]
        dst[0] = -ebest
        return 1
    if kind == 0:
        return _face(R1, p1, h1, np.int64(bi), R2, p2, h2, nb, margin, 1.0, pts, nrm, dst)
    return _face(R2, p2, h2, np.int64(bi), R1, p1, h1, -nb, margin, -1.0, pts, nrm, dst)
