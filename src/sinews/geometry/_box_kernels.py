"""Numba kernels of the box routines of :mod:`sinews.geometry.narrow_phase` (box-box by the
separating axis test and face clipping), compiled on first use.

Same algorithm and conventions as the reference NumPy formulation documented there: normals
from box 1 to box 2, signed distances, points halfway between the surfaces.

The kernels are allocation-free and scalarised (performance notes, item 1): a pair is given as
two rows ``i, j`` of the posed-geometry tables of :func:`sinews.geometry._collide_kernels.collide`
(``gR`` (n, 3, 3) world rotations, ``gp`` (n, 3) positions, ``gf[:, 12:15]`` half extents), the
contacts are appended to that kernel's ``ci`` (geometry pair) / ``cf`` (point, normal, distance)
rows, and the clipped polygon lives in two caller-provided (>= 8, 3) scratch arrays.  Dot
products of 3-vectors that used to go through BLAS (``R1.T @ R2``, ``u @ v``) use
:func:`sinews.geometry._fma.dot3`, which rounds as those BLAS kernels do on CPUs with FMA
(x86-64 since Haswell), so the results are the bits of the earlier array formulation
(tests/test_geometry_kernels_collide.py compares them with a frozen copy of it).
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

from ._fma import dot3

# the corners of a face, in order: signs along its two in-plane axes
_SJ = (-1.0, 1.0, 1.0, -1.0)
_SK = (-1.0, -1.0, 1.0, 1.0)


@njit(inline="always", cache=True)
def _clip_pass(src, dst, n, axis, lim, sgn):
    """One Sutherland-Hodgman pass: src[:n] clipped to ``sgn * x[axis] <= lim`` into dst."""
    m = 0
    for k in range(n):
        kn = k + 1 if k + 1 < n else 0
        dp = sgn * src[k, axis] - lim
        dq = sgn * src[kn, axis] - lim
        if dp <= 0.0:
            dst[m, 0] = src[k, 0]
            dst[m, 1] = src[k, 1]
            dst[m, 2] = src[k, 2]
            m += 1
        if (dp < 0.0 < dq) or (dq < 0.0 < dp):
            s = dp / (dp - dq)
            dst[m, 0] = src[k, 0] + (src[kn, 0] - src[k, 0]) * s
            dst[m, 1] = src[k, 1] + (src[kn, 1] - src[k, 1]) * s
            dst[m, 2] = src[k, 2] + (src[kn, 2] - src[k, 2]) * s
            m += 1
    return m


@njit(cache=True)
def _clip(poly, n, i1, i2, h1, h2, tmp):
    """Sutherland-Hodgman clip of poly[:n] (rows of 3) to |x[i1]| <= h1, |x[i2]| <= h2.
    Result in poly; returns the new count.  ``tmp`` is scratch of the same size."""
    n = _clip_pass(poly, tmp, n, i1, h1, 1.0)
    if n == 0:
        return 0
    n = _clip_pass(tmp, poly, n, i1, h1, -1.0)
    if n == 0:
        return 0
    n = _clip_pass(poly, tmp, n, i2, h2, 1.0)
    if n == 0:
        return 0
    return _clip_pass(tmp, poly, n, i2, h2, -1.0)


@njit(cache=True)
def _reduce4(poly, n, axis, sgn, tmp):
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
    cnt = 0
    for t in range(4):
        idx = a if t == 0 else (c1 if t == 1 else (b if t == 2 else c2))
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
def _face(gR, gp, gf, r, s, axis, nw0, nw1, nw2, margin, flip, poly, tmp, ga, gb, k, ci, cf):
    """Face contacts: reference box ``r`` (its face ``axis`` facing the world normal ``nw``),
    incident box ``s``; appends rows ``k..`` of ci/cf with normals ``flip * nw``; returns the
    new count, or -2 when ci is full."""
    pr0, pr1, pr2 = gp[r, 0], gp[r, 1], gp[r, 2]
    r00, r01, r02 = gR[r, 0, 0], gR[r, 0, 1], gR[r, 0, 2]
    r10, r11, r12 = gR[r, 1, 0], gR[r, 1, 1], gR[r, 1, 2]
    r20, r21, r22 = gR[r, 2, 0], gR[r, 2, 1], gR[r, 2, 2]
    ps0, ps1, ps2 = gp[s, 0], gp[s, 1], gp[s, 2]
    s00, s01, s02 = gR[s, 0, 0], gR[s, 0, 1], gR[s, 0, 2]
    s10, s11, s12 = gR[s, 1, 0], gR[s, 1, 1], gR[s, 1, 2]
    s20, s21, s22 = gR[s, 2, 0], gR[s, 2, 1], gR[s, 2, 2]
    sgn = 1.0 if (gR[r, 0, axis] * nw0 + gR[r, 1, axis] * nw1 + gR[r, 2, axis] * nw2) > 0.0 else -1.0
    # incident face: the face of box s most anti-parallel to n
    best = -1.0
    ia = 0
    dot_ia = 0.0
    d = s00 * nw0 + s10 * nw1 + s20 * nw2
    if abs(d) > best:
        best = abs(d)
        dot_ia = d
    d = s01 * nw0 + s11 * nw1 + s21 * nw2
    if abs(d) > best:
        best = abs(d)
        ia = 1
        dot_ia = d
    d = s02 * nw0 + s12 * nw1 + s22 * nw2
    if abs(d) > best:
        ia = 2
        dot_ia = d
    isgn = -1.0 if dot_ia > 0.0 else 1.0
    hs0, hs1, hs2 = gf[s, 12], gf[s, 13], gf[s, 14]
    for m in range(4):
        # corner m of the incident face (in-plane axes j < k: the other two, in order)
        sj = _SJ[m]
        sk = _SK[m]
        l0 = (isgn if ia == 0 else sj) * hs0
        l1 = (isgn if ia == 1 else (sj if ia == 0 else sk)) * hs1
        l2 = (isgn if ia == 2 else sk) * hs2
        # world, then reference frame
        t0 = ps0 + s00 * l0 + s01 * l1 + s02 * l2 - pr0
        t1 = ps1 + s10 * l0 + s11 * l1 + s12 * l2 - pr1
        t2 = ps2 + s20 * l0 + s21 * l1 + s22 * l2 - pr2
        poly[m, 0] = r00 * t0 + r10 * t1 + r20 * t2
        poly[m, 1] = r01 * t0 + r11 * t1 + r21 * t2
        poly[m, 2] = r02 * t0 + r12 * t1 + r22 * t2
    rj = np.int64(1 if axis == 0 else 0)
    rk = np.int64(2 if axis != 2 else 1)
    hr0, hr1, hr2 = gf[r, 12], gf[r, 13], gf[r, 14]
    n = _clip(poly, np.int64(4), rj, rk, gf[r, 12 + rj] * (1 + 1e-9) + 1e-12, gf[r, 12 + rk] * (1 + 1e-9) + 1e-12, tmp)
    tol = 1e-9 * (1.0 + max(hr0, max(hr1, hr2)))
    u = np.int64(0)  # drop repeated points (clipping along coincident edges)
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
        n = _reduce4(poly, n, axis, sgn, tmp)
    ha = gf[r, 12 + axis]
    cap = ci.shape[0]
    for m in range(n):
        d = sgn * poly[m, axis] - ha
        if not d <= margin:
            continue
        if k >= cap:
            return -2
        q0, q1, q2 = poly[m, 0], poly[m, 1], poly[m, 2]
        ci[k, 0] = ga
        ci[k, 1] = gb
        cf[k, 0] = pr0 + r00 * q0 + r01 * q1 + r02 * q2 - nw0 * 0.5 * d
        cf[k, 1] = pr1 + r10 * q0 + r11 * q1 + r12 * q2 - nw1 * 0.5 * d
        cf[k, 2] = pr2 + r20 * q0 + r21 * q1 + r22 * q2 - nw2 * 0.5 * d
        cf[k, 3] = flip * nw0
        cf[k, 4] = flip * nw1
        cf[k, 5] = flip * nw2
        cf[k, 6] = d
        k += 1
    return k


@njit(cache=True)
def box_pair(gR, gp, gf, i, j, margin, poly, tmp, k, ci, cf):
    """Contacts of boxes ``i`` and ``j`` (rows of the posed tables, normals from i to j) with a
    distance <= margin, appended to ci (i, j) / cf from row ``k``; returns the new count, or -2
    when ci is full.  ``poly``, ``tmp``: (>= 8, 3) scratch."""
    a00, a01, a02 = gR[i, 0, 0], gR[i, 0, 1], gR[i, 0, 2]
    a10, a11, a12 = gR[i, 1, 0], gR[i, 1, 1], gR[i, 1, 2]
    a20, a21, a22 = gR[i, 2, 0], gR[i, 2, 1], gR[i, 2, 2]
    b00, b01, b02 = gR[j, 0, 0], gR[j, 0, 1], gR[j, 0, 2]
    b10, b11, b12 = gR[j, 1, 0], gR[j, 1, 1], gR[j, 1, 2]
    b20, b21, b22 = gR[j, 2, 0], gR[j, 2, 1], gR[j, 2, 2]
    h10, h11, h12 = gf[i, 12], gf[i, 13], gf[i, 14]
    h20, h21, h22 = gf[j, 12], gf[j, 13], gf[j, 14]
    d0 = gp[j, 0] - gp[i, 0]
    d1 = gp[j, 1] - gp[i, 1]
    d2 = gp[j, 2] - gp[i, 2]
    # |C| + eps with C = R1^T R2 (B's axes in A's frame)
    c00 = abs(dot3(a00, a10, a20, b00, b10, b20)) + 1e-12
    c01 = abs(dot3(a00, a10, a20, b01, b11, b21)) + 1e-12
    c02 = abs(dot3(a00, a10, a20, b02, b12, b22)) + 1e-12
    c10 = abs(dot3(a01, a11, a21, b00, b10, b20)) + 1e-12
    c11 = abs(dot3(a01, a11, a21, b01, b11, b21)) + 1e-12
    c12 = abs(dot3(a01, a11, a21, b02, b12, b22)) + 1e-12
    c20 = abs(dot3(a02, a12, a22, b00, b10, b20)) + 1e-12
    c21 = abs(dot3(a02, a12, a22, b01, b11, b21)) + 1e-12
    c22 = abs(dot3(a02, a12, a22, b02, b12, b22)) + 1e-12
    best = 1e300
    kind = 0
    bi = np.int64(0)  # int64, not a literal: one compiled _face (and no literal specialisations)
    sb = 1.0
    for t in range(6):  # faces of A (t < 3), then of B
        if t == 0:
            dd = dot3(a00, a10, a20, d0, d1, d2)
            ov = h10 + (c00 * h20 + c01 * h21 + c02 * h22) - abs(dd)
        elif t == 1:
            dd = dot3(a01, a11, a21, d0, d1, d2)
            ov = h11 + (c10 * h20 + c11 * h21 + c12 * h22) - abs(dd)
        elif t == 2:
            dd = dot3(a02, a12, a22, d0, d1, d2)
            ov = h12 + (c20 * h20 + c21 * h21 + c22 * h22) - abs(dd)
        elif t == 3:
            dd = dot3(b00, b10, b20, d0, d1, d2)
            ov = (c00 * h10 + c10 * h11 + c20 * h12) + h20 - abs(dd)
        elif t == 4:
            dd = dot3(b01, b11, b21, d0, d1, d2)
            ov = (c01 * h10 + c11 * h11 + c21 * h12) + h21 - abs(dd)
        else:
            dd = dot3(b02, b12, b22, d0, d1, d2)
            ov = (c02 * h10 + c12 * h11 + c22 * h12) + h22 - abs(dd)
        if ov < -margin:
            return k
        if ov < best:
            best = ov
            kind = 0 if t < 3 else 1
            bi = t if t < 3 else t - 3
            sb = 1.0 if dd >= 0 else -1.0
    face_best = best
    ebest = 1e300
    ei = -1
    ej = -1
    ne0 = 0.0
    ne1 = 0.0
    ne2 = 0.0
    for ii in range(3):
        u0, u1, u2 = gR[i, 0, ii], gR[i, 1, ii], gR[i, 2, ii]
        for jj in range(3):
            w0, w1, w2 = gR[j, 0, jj], gR[j, 1, jj], gR[j, 2, jj]
            x0 = u1 * w2 - u2 * w1
            x1 = u2 * w0 - u0 * w2
            x2 = u0 * w1 - u1 * w0
            L = np.sqrt(dot3(x0, x1, x2, x0, x1, x2))
            if L < 1e-6:
                continue
            x0 = x0 / L
            x1 = x1 / L
            x2 = x2 / L
            ra = (h10 * abs(a00 * x0 + a10 * x1 + a20 * x2) + h11 * abs(a01 * x0 + a11 * x1 + a21 * x2)
                  + h12 * abs(a02 * x0 + a12 * x1 + a22 * x2))
            rb = (h20 * abs(b00 * x0 + b10 * x1 + b20 * x2) + h21 * abs(b01 * x0 + b11 * x1 + b21 * x2)
                  + h22 * abs(b02 * x0 + b12 * x1 + b22 * x2))
            sd = dot3(x0, x1, x2, d0, d1, d2)
            ov = ra + rb - abs(sd)
            if ov < -margin:
                return k
            if ov < face_best - 0.05 * abs(face_best) - 1e-9 and ov < ebest:  # faces preferred (also when separated)
                ebest = ov
                ei = ii
                ej = jj
                sg = 1.0 if sd >= 0 else -1.0
                ne0 = x0 * sg
                ne1 = x1 * sg
                ne2 = x2 * sg
    if ei < 0:
        if kind == 0:
            return _face(gR, gp, gf, i, j, bi, gR[i, 0, bi] * sb, gR[i, 1, bi] * sb, gR[i, 2, bi] * sb, margin,
                         1.0, poly, tmp, i, j, k, ci, cf)
        return _face(gR, gp, gf, j, i, bi, -(gR[j, 0, bi] * sb), -(gR[j, 1, bi] * sb), -(gR[j, 2, bi] * sb),
                     margin, -1.0, poly, tmp, i, j, k, ci, cf)
    if not -ebest <= margin:
        return k
    # edge-edge: the closest points of the two edges that support the axis
    ca0, ca1, ca2 = gp[i, 0], gp[i, 1], gp[i, 2]
    cb0, cb1, cb2 = gp[j, 0], gp[j, 1], gp[j, 2]
    for m in range(3):
        if m != ei:
            dk = gR[i, 0, m] * ne0 + gR[i, 1, m] * ne1 + gR[i, 2, m] * ne2
            sk = 1.0 if dk > 0 else (-1.0 if dk < 0 else 0.0)
            f = gf[i, 12 + m] * sk
            ca0 += f * gR[i, 0, m]
            ca1 += f * gR[i, 1, m]
            ca2 += f * gR[i, 2, m]
        if m != ej:
            dk = gR[j, 0, m] * ne0 + gR[j, 1, m] * ne1 + gR[j, 2, m] * ne2
            sk = 1.0 if dk > 0 else (-1.0 if dk < 0 else 0.0)
            f = gf[j, 12 + m] * sk
            cb0 -= f * gR[j, 0, m]
            cb1 -= f * gR[j, 1, m]
            cb2 -= f * gR[j, 2, m]
    ha = gf[i, 12 + ei]
    hb = gf[j, 12 + ej]
    e10, e11, e12 = gR[i, 0, ei], gR[i, 1, ei], gR[i, 2, ei]
    e20, e21, e22 = gR[j, 0, ej], gR[j, 1, ej], gR[j, 2, ej]
    # segments a0 + s D1, b0 + t D2 (s, t in [0, 1]): Ericson 5.1.9
    p10, p11, p12 = ca0 - ha * e10, ca1 - ha * e11, ca2 - ha * e12
    p20, p21, p22 = cb0 - hb * e20, cb1 - hb * e21, cb2 - hb * e22
    D10, D11, D12 = 2 * ha * e10, 2 * ha * e11, 2 * ha * e12
    D20, D21, D22 = 2 * hb * e20, 2 * hb * e21, 2 * hb * e22
    r0, r1, r2 = p10 - p20, p11 - p21, p12 - p22
    a = dot3(D10, D11, D12, D10, D11, D12)
    e = dot3(D20, D21, D22, D20, D21, D22)
    f = dot3(D20, D21, D22, r0, r1, r2)
    c = dot3(D10, D11, D12, r0, r1, r2)
    b = dot3(D10, D11, D12, D20, D21, D22)
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
    if k >= ci.shape[0]:
        return -2
    ci[k, 0] = i
    ci[k, 1] = j
    cf[k, 0] = 0.5 * ((p10 + D10 * s) + (p20 + D20 * t))
    cf[k, 1] = 0.5 * ((p11 + D11 * s) + (p21 + D21 * t))
    cf[k, 2] = 0.5 * ((p12 + D12 * s) + (p22 + D22 * t))
    cf[k, 3] = ne0
    cf[k, 4] = ne1
    cf[k, 5] = ne2
    cf[k, 6] = -ebest
    return k + 1


@njit(cache=True)
def box_box(R1, p1, h1, R2, p2, h2, margin, pts, nrm, dst):
    """Contacts of two boxes into pts (>= 8 rows), nrm, dst; returns the count (at most 4)."""
    gR = np.empty((2, 3, 3))
    gp = np.empty((2, 3))
    gf = np.zeros((2, 16))
    for a in range(3):
        for b in range(3):
            gR[0, a, b] = R1[a, b]
            gR[1, a, b] = R2[a, b]
        gp[0, a] = p1[a]
        gp[1, a] = p2[a]
        gf[0, 12 + a] = h1[a]
        gf[1, 12 + a] = h2[a]
    ci = np.empty((4, 2), dtype=np.int64)
    cf = np.empty((4, 7))
    n = box_pair(gR, gp, gf, np.int64(0), np.int64(1), margin, pts, nrm, np.int64(0), ci, cf)
    for t in range(n):
        for c in range(3):
            pts[t, c] = cf[t, c]
            nrm[t, c] = cf[t, 3 + c]
        dst[t] = cf[t, 6]
    return n
