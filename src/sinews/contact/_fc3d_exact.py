"""The natural-map error evaluated carefully: the one checker behind ``natural_map_error`` and
every solver's final verdict.

For the reactions r of the problem (W, q, mu) the checker computes

    u = W r + q,   û_a = [u_n + mu_a ||u_t||, u_t],   F_a = r_a - P_{K_mu_a}(r_a - û_a),
    error = ||F||_2 / (1 + ||q||_2),

in two tiers:

1. **Plain double precision with a rounding-error bound.**  u is a plain dot product per row, and
   alongside it b_i = sum_j |W_ij r_j| + |q_i|, so |fl(u_i) - u_i| <= gamma_{m+1} b_i in any
   summation order (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1).  F is
   (1 + mu)-Lipschitz in u (û is, and the projection is non-expansive), and the rounding of the
   projection and the subtractions adds at most a few ulps of ||r_a|| + (1 + mu_a) ||u_a||.  The
   plain value is returned when this bound on ||F_computed - F|| is at most 2^-10 of ||F||
   (three correct digits) *and* cannot change the verdict ``error <= tol``.
2. **Double-double arithmetic** (about 106 bits: error-free TwoSum/TwoProduct transformations,
   Dekker 1971, Knuth; accurate double-word addition, Joldes, Muller & Popescu 2017) for u, û,
   the projection and the sum of squares, when tier 1 is not conclusive: ill-conditioned W
   (condition numbers 1e20 to 1e32) with large reactions, where fl(W r + q) has lost most of its
   digits to cancellation, or errors of exactly zero.  Its value agrees with an extended-precision
   evaluation to a few ulps of ``error`` (plus ~m 2^-104 sum_j |W_ij r_j| in u).

Overflow never produces a silent NaN: contacts are rescaled by powers of two before norms are
taken, and a W r + q that overflows the double range gives ``error = inf``.

Kernels: dense W (C-contiguous) and CSR W (int64 indptr/indices).  Dimension 2 or 3.
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

#: Numba flags of every function here.  Deliberately *not* empty: Numba compiles a function
#: without fast-math flags that is first called from a fast-math kernel (the PGS kernels) with
#: the caller's flags (``_make_subtarget`` only overrides truthy flags), which would let LLVM
#: re-associate the error-free transformations and the tier-1 sums -- and cache that variant.
#: "nsz" (the sign of a zero result may differ) changes no non-zero value.
_EXACT = {"nsz"}
_U = 2.0 ** -53  # unit round-off
_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)
_BIG = 2.0 ** 995
_TIER1_REL = 2.0 ** -10


# --------------------------------------------------------------------------------------------
# Error-free transformations and double-double (hi, lo) arithmetic
#
# Only the error-free leaves are inlined (inline="always").  The double-double operations are
# plain calls: inlining them copied the IR of every nested call into _residual_dd (each _dd_div
# holds five more operations), and Numba's front end took 10 s to compile that one function
# (13 s for the checker, 4 s now; tools/compile_profile.py).  Results are bitwise the same; tier
# 2 runs only when tier 1 is inconclusive.
# --------------------------------------------------------------------------------------------


@njit(inline="always", cache=True, fastmath=_EXACT)
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(inline="always", cache=True, fastmath=_EXACT)
def _fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


@njit(inline="always", cache=True, fastmath=_EXACT)
def _split(a):
    if abs(a) > _BIG:  # the Veltkamp constant would overflow: split a scaled copy (exact)
        a2 = a * 3.725290298461914e-09  # 2^-28
        c = _SPLIT * a2
        h = c - (c - a2)
        return h * 268435456.0, (a2 - h) * 268435456.0
    c = _SPLIT * a
    h = c - (c - a)
    return h, a - h


@njit(inline="always", cache=True, fastmath=_EXACT)
def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@njit(cache=True, fastmath=_EXACT)
def _dd_add(ah, al, bh, bl):
    """Accurate double-word addition (relative error <= 3u^2)."""
    s, e = _two_sum(ah, bh)
    t, f = _two_sum(al, bl)
    e += t
    s, e = _fast_two_sum(s, e)
    e += f
    return _fast_two_sum(s, e)


@njit(cache=True, fastmath=_EXACT)
def _dd_mul(ah, al, bh, bl):
    p, e = _two_prod(ah, bh)
    e += ah * bl + al * bh
    return _fast_two_sum(p, e)


@njit(cache=True, fastmath=_EXACT)
def _dd_mul_d(ah, al, b):
    p, e = _two_prod(ah, b)
    e += al * b
    return _fast_two_sum(p, e)


@njit(cache=True, fastmath=_EXACT)
def _dd_div(ah, al, bh, bl):
    q1 = ah / bh
    ph, pl = _dd_mul_d(bh, bl, q1)
    rh, rl = _dd_add(ah, al, -ph, -pl)
    q2 = rh / bh
    ph, pl = _dd_mul_d(bh, bl, q2)
    rh, rl = _dd_add(rh, rl, -ph, -pl)
    q3 = rh / bh
    s, e = _fast_two_sum(q1, q2)
    return _dd_add(s, e, q3, 0.0)


@njit(cache=True, fastmath=_EXACT)
def _dd_sqrt(ah, al):
    if ah <= 0.0:
        return 0.0, 0.0
    s = math.sqrt(ah)
    ph, pl = _two_prod(s, s)
    rh, rl = _dd_add(ah, al, -ph, -pl)
    return _fast_two_sum(s, rh / (2.0 * s))


@njit(inline="always", cache=True, fastmath=_EXACT)
def _pow2_scale(x):
    """A power of two close to 1/|x| (x finite, > 0), so x * scale lies in [0.5, 2)."""
    e = math.frexp(x)[1]
    return math.ldexp(1.0, -e)


@njit(cache=True, fastmath=_EXACT)
def _dd_hypot(xh, xl, yh, yl):
    """sqrt(x^2 + y^2) in double-double, rescaled by a power of two (no overflow)."""
    big = max(abs(xh), abs(yh))
    if big == 0.0:
        return 0.0, 0.0
    if 2.0 ** -450 < big < 2.0 ** 450:  # squares cannot overflow or underflow
        ah, al = _dd_mul(xh, xl, xh, xl)
        bh, bl = _dd_mul(yh, yl, yh, yl)
        ah, al = _dd_add(ah, al, bh, bl)
        return _dd_sqrt(ah, al)
    s = _pow2_scale(big)
    xh *= s
    xl *= s
    yh *= s
    yl *= s
    ah, al = _dd_mul(xh, xl, xh, xl)
    bh, bl = _dd_mul(yh, yl, yh, yl)
    ah, al = _dd_add(ah, al, bh, bl)
    rh, rl = _dd_sqrt(ah, al)
    return rh / s, rl / s


# --------------------------------------------------------------------------------------------
# Tier 1: plain evaluation with a bound
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _matvec_bound_dense(W, q, r, u, b):
    """u = W r + q and b = |W| |r| + |q|, summed strictly in column order (no fast-math): the
    dense and CSR forms give bitwise the same u, so every caller gets the same error."""
    m = q.shape[0]
    for i in range(m):
        s = q[i]
        t = abs(q[i])
        for j in range(m):
            p = W[i, j] * r[j]
            s += p
            t += abs(p)
        u[i] = s
        b[i] = t


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _matvec_bound_csr(indptr, indices, data, q, r, u, b):
    m = q.shape[0]
    for i in range(m):
        s = q[i]
        t = abs(q[i])
        for k in range(indptr[i], indptr[i + 1]):
            p = data[k] * r[indices[k]]
            s += p
            t += abs(p)
        u[i] = s
        b[i] = t


@njit(inline="always", cache=True, fastmath=_EXACT)
def _project_plain(zn, z1, z2, m):
    t = math.hypot(z1, z2)
    if t <= m * zn and zn >= 0.0:
        return zn, z1, z2
    if m * t <= -zn:
        return 0.0, 0.0, 0.0
    if m <= 1.0:
        a = (zn + m * t) / (1.0 + m * m)
    else:  # divided by m: no overflow of m^2
        a = (zn / m + t) / (1.0 / m + m)
    f = m * a / t
    return a, f * z1, f * z2


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _residual_plain(r, u, b, mu, dim, gamma, F):
    """F in plain arithmetic; returns (max |F|, bound on ||F_computed - F||_2), or (nan, nan)
    when something overflowed."""
    nc = mu.shape[0]
    fmax = 0.0
    bound_sq = 0.0
    for a in range(nc):
        k = dim * a
        m = mu[a]
        un = u[k]
        u1 = u[k + 1]
        u2 = u[k + 2] if dim == 3 else 0.0
        nut = math.hypot(u1, u2)
        rn = r[k]
        r1 = r[k + 1]
        r2 = r[k + 2] if dim == 3 else 0.0
        pn, p1, p2 = _project_plain(rn - (un + m * nut), r1 - u1, r2 - u2, m)
        f0 = rn - pn
        f1 = r1 - p1
        f2 = r2 - p2
        F[k] = f0
        F[k + 1] = f1
        if dim == 3:
            F[k + 2] = f2
        bu = b[k] * b[k] + b[k + 1] * b[k + 1]
        if dim == 3:
            bu += b[k + 2] * b[k + 2]
        ba = (1.0 + m) * gamma * math.sqrt(bu) + 32.0 * _U * (
            math.sqrt(rn * rn + r1 * r1 + r2 * r2) + (1.0 + m) * math.sqrt(un * un + nut * nut))
        bound_sq += ba * ba
        fmax = max(fmax, abs(f0), abs(f1), abs(f2))
    if not (math.isfinite(bound_sq) and math.isfinite(fmax)):
        return math.nan, math.nan
    return fmax, math.sqrt(bound_sq)


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _norm(F, fmax):
    if fmax == 0.0:
        return 0.0
    s = _pow2_scale(fmax)
    acc = 0.0
    for i in range(F.shape[0]):
        x = F[i] * s
        acc += x * x
    return math.sqrt(acc) / s


# --------------------------------------------------------------------------------------------
# Tier 2: double-double
# --------------------------------------------------------------------------------------------


@njit(cache=True, fastmath=_EXACT)
def _dot3_step(w, x, xh, xl, s, c, d):
    """One term w x of a compensated dot product (Ogita, Rump & Oishi's Dot3 pattern): the
    running sum s, the sum c of its rounding errors and of the product errors, and the plain sum
    d of c's own errors.  Each chain is one addition deep, so the loop pipelines well.  x was
    split by :func:`_split` into xh + xl; w is split here (|w| <= 2^995)."""
    cw = _SPLIT * w
    wh = cw - (cw - w)
    wl = w - wh
    p = w * x
    e = ((wh * xh - p) + wh * xl + wl * xh) + wl * xl
    s, e1 = _two_sum(s, p)
    c, x1 = _two_sum(c, e1)
    c, x2 = _two_sum(c, e)
    return s, c, d + (x1 + x2)


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _split_vector(x):
    """x split into high and low halves, and a scale 2^-k making every |x_j| <= 2^995."""
    big = 0.0
    for j in range(x.shape[0]):
        big = max(big, abs(x[j]))
    k = _pow2_below_big(big)
    xh = np.empty(x.shape[0])
    xl = np.empty(x.shape[0])
    for j in range(x.shape[0]):
        xh[j], xl[j] = _split(x[j] * k)
    return xh, xl, k


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _pow2_below_big(big):
    """1, or a power of two k with big * k <= 2^995 (so that Veltkamp splits cannot overflow)."""
    k = 1.0
    while big * k > _BIG:
        k *= 2.0 ** -64
    return k


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _matvec_dd_dense(W, q, r, uh, ul):
    """u = W r + q as uh + ul (compensated; exact to ~m 2^-104 sum_j |W_ij r_j|).

    Entries above 2^995 in magnitude (whose Veltkamp split would overflow) are handled by
    scaling the rows and r by powers of two, which is exact.
    """
    m = q.shape[0]
    big = 0.0
    for i in range(m):
        for j in range(m):
            big = max(big, abs(W[i, j]))
    kw = _pow2_below_big(big)
    rh, rl, k = _split_vector(r)
    rs = r * k
    for i in range(m):
        s = q[i] * k * kw
        c = 0.0
        d = 0.0
        for j in range(m):
            s, c, d = _dot3_step(W[i, j] * kw, rs[j], rh[j], rl[j], s, c, d)
        uh[i], ul[i] = _two_sum(s / k / kw, (c + d) / k / kw)


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _matvec_dd_csr(indptr, indices, data, q, r, uh, ul):
    """:func:`_matvec_dd_dense` for CSR W."""
    m = q.shape[0]
    big = 0.0
    for p in range(data.shape[0]):
        big = max(big, abs(data[p]))
    kw = _pow2_below_big(big)
    rh, rl, k = _split_vector(r)
    rs = r * k
    for i in range(m):
        s = q[i] * k * kw
        c = 0.0
        d = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            s, c, d = _dot3_step(data[p] * kw, rs[j], rh[j], rl[j], s, c, d)
        uh[i], ul[i] = _two_sum(s / k / kw, (c + d) / k / kw)


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _residual_dd(r, uh, ul, mu, dim, F, Fl):
    """F = r - P(r - û) in double-double; F (hi) and Fl (lo) written; returns max |F|."""
    nc = mu.shape[0]
    fmax = 0.0
    for a in range(nc):
        k = dim * a
        m = mu[a]
        unh, unl = uh[k], ul[k]
        u1h, u1l = uh[k + 1], ul[k + 1]
        if dim == 3:
            u2h, u2l = uh[k + 2], ul[k + 2]
        else:
            u2h, u2l = 0.0, 0.0
        th, tl = _dd_hypot(u1h, u1l, u2h, u2l)  # ||u_t||
        sh, sl = _dd_mul_d(th, tl, m)
        hh, hl = _dd_add(unh, unl, sh, sl)  # û_n
        rn = r[k]
        r1 = r[k + 1]
        r2 = r[k + 2] if dim == 3 else 0.0
        znh, znl = _dd_add(rn, 0.0, -hh, -hl)
        z1h, z1l = _dd_add(r1, 0.0, -u1h, -u1l)
        z2h, z2l = _dd_add(r2, 0.0, -u2h, -u2l)
        zth, ztl = _dd_hypot(z1h, z1l, z2h, z2l)  # ||z_t||
        # inside: ||z_t|| <= m z_n ; polar: m ||z_t|| <= -z_n
        mzh, mzl = _dd_mul_d(znh, znl, m)
        dh, dl = _dd_add(mzh, mzl, -zth, -ztl)
        mth, mtl = _dd_mul_d(zth, ztl, m)
        eh, el = _dd_add(mth, mtl, znh, znl)
        if dh >= 0.0:  # P(z) = z: F = r - z = û
            f0h, f0l = hh, hl
            f1h, f1l = u1h, u1l
            f2h, f2l = u2h, u2l
        elif eh <= 0.0:  # P(z) = 0: F = r
            f0h, f0l = rn, 0.0
            f1h, f1l = r1, 0.0
            f2h, f2l = r2, 0.0
        else:  # onto the boundary: a = (z_n + m ||z_t||) / (1 + m^2), P = [a, m a z_t/||z_t||]
            if m <= 1.0:
                nh, nl = _dd_add(znh, znl, mth, mtl)
                dh, dl = _two_prod(m, m)
                dh, dl = _dd_add(1.0, 0.0, dh, dl)
            else:  # divided by m: no overflow of m^2
                nh, nl = _dd_div(znh, znl, m, 0.0)
                nh, nl = _dd_add(nh, nl, zth, ztl)
                dh, dl = _dd_div(1.0, 0.0, m, 0.0)
                dh, dl = _dd_add(dh, dl, m, 0.0)
            ah, al = _dd_div(nh, nl, dh, dl)
            gh, gl = _dd_mul_d(ah, al, m)
            gh, gl = _dd_div(gh, gl, zth, ztl)
            p1h, p1l = _dd_mul(gh, gl, z1h, z1l)
            p2h, p2l = _dd_mul(gh, gl, z2h, z2l)
            f0h, f0l = _dd_add(rn, 0.0, -ah, -al)
            f1h, f1l = _dd_add(r1, 0.0, -p1h, -p1l)
            f2h, f2l = _dd_add(r2, 0.0, -p2h, -p2l)
        F[k] = f0h
        Fl[k] = f0l
        F[k + 1] = f1h
        Fl[k + 1] = f1l
        fmax = max(fmax, abs(f0h), abs(f1h))
        if dim == 3:
            F[k + 2] = f2h
            Fl[k + 2] = f2l
            fmax = max(fmax, abs(f2h))
    return fmax


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _norm_dd(F, Fl, fmax):
    if fmax == 0.0 or not math.isfinite(fmax):
        return fmax
    s = _pow2_scale(fmax)
    ah = 0.0
    al = 0.0
    for i in range(F.shape[0]):
        xh = F[i] * s
        xl = Fl[i] * s
        ph, pl = _dd_mul(xh, xl, xh, xl)
        ah, al = _dd_add(ah, al, ph, pl)
    rh, rl = _dd_sqrt(ah, al)
    return (rh + rl) / s


# --------------------------------------------------------------------------------------------
# Drivers (called from the solver kernels and from natural_map_error)
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, fastmath=_EXACT)
def _finish(r, u, mu, dim, scale, tol, floor, F, work, dense, W, indptr, indices, data, q):
    m = q.shape[0]
    gamma = 2.0 * (m + 4) * _U
    fmax, bound = _residual_plain(r, u, work, mu, dim, gamma, F)
    if math.isfinite(fmax):
        nrm = _norm(F, fmax)
        if bound <= max(_TIER1_REL * nrm, floor) and not (nrm <= tol * scale < nrm + bound):
            return nrm / scale, 1
    # tier 2: u in double-double (u <- its rounded value, work <- low parts)
    if dense:
        _matvec_dd_dense(W, q, r, u, work)
    else:
        _matvec_dd_csr(indptr, indices, data, q, r, u, work)
    for i in range(m):
        if not math.isfinite(u[i]):
            for k in range(m):
                F[k] = math.inf
            return math.inf, 2
    Fl = np.empty(m)
    fmax = _residual_dd(r, u, work, mu, dim, F, Fl)
    return _norm_dd(F, Fl, fmax) / scale, 2


# placeholders for the unused form's arguments (global constants: no allocation per call)
_NO_INDEX = np.zeros(1, dtype=np.int64)
_NO_DATA = np.zeros(1)
_NO_MATRIX = np.zeros((1, 1))


@njit(cache=True, nogil=True, fastmath=_EXACT)
def careful_error_dense(W, q, mu, r, dim, scale, tol, floor, u, F, work):
    """Natural-map error of r for dense W, written u = W r + q and F; returns (error, tier).

    Tier 1 (plain) stands when its bound on ||F_computed - F|| is at most
    max(2^-10 ||F||, ``floor``) and does not straddle ``tol`` (use tol = 0 outside a verdict);
    ``floor`` is an absolute accuracy in ||F|| units that the caller accepts (see
    :data:`FLOOR_REL`).  ``work`` is (m,) scratch.
    """
    _matvec_bound_dense(W, q, r, u, work)
    return _finish(r, u, mu, dim, scale, tol, floor, F, work, True, W, _NO_INDEX, _NO_INDEX,
                   _NO_DATA, q)


@njit(cache=True, nogil=True, fastmath=_EXACT)
def careful_error_csr(indptr, indices, data, q, mu, r, dim, scale, tol, floor, u, F, work):
    """:func:`careful_error_dense` for W in CSR form (int64 indptr/indices, float64 data); the
    two give bitwise the same results for the same W."""
    _matvec_bound_csr(indptr, indices, data, q, r, u, work)
    return _finish(r, u, mu, dim, scale, tol, floor, F, work, False, _NO_MATRIX, indptr, indices,
                   data, q)


#: Absolute accuracy accepted from tier 1 by ``natural_map_error`` under the default
#: normalisation: 2^-50 (1 + ||q||), i.e. errors are exact to 2^-10 relative or to 8.9e-16 in
#: ||F|| / (1 + ||q||), whichever is larger -- below the rounding level of the data.
FLOOR_REL = 2.0 ** -50


@njit(cache=True, nogil=True, fastmath=_EXACT)
def verdict_floor(tol, scale):
    """The absolute accuracy a solver's verdict accepts from tier 1: 2^-10 tol (1 + ||q||)
    (or :data:`FLOOR_REL`, if larger).  The reported error is then exact to 2^-10 of itself or
    of tol, whichever is larger, and the verdict ``error <= tol`` is exact (tier 1 never
    straddles tol)."""
    return max(FLOOR_REL, 2.0 ** -10 * tol) * scale


@njit(cache=True, nogil=True, fastmath=_EXACT)
def safe_norm(x):
    """||x||_2 without overflow or underflow (power-of-two rescaling)."""
    fmax = 0.0
    for i in range(x.shape[0]):
        fmax = max(fmax, abs(x[i]))
    return _norm(x, fmax)
