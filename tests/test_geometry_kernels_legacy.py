"""A frozen copy of the collision kernels as they were before they were made allocation-free
(``sinews.geometry._box_kernels`` and ``_collide_kernels`` at commit c24bd14), run here as plain
Python (the same NumPy calls: BLAS for ``@``).  No tests here: test_geometry_kernels_collide.py
checks that the rewritten kernels return these results bit for bit (same contacts, same order).
Do not edit the functions below; they are the reference."""

import math

import numpy as np

K_HALFSPACE = 0
K_SPHERE = 1
K_BOX = 2
K_POINT = 3
K_CAPSULE = 4


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
