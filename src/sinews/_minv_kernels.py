"""Numba kernels of the dense inverse joint-space inertia ``M(q)^-1`` (:func:`sinews.minverse`).

Column ``j`` of ``M^-1`` is ``ABA(q, 0, e_j)`` without gravity: the articulated-body algorithm
run on all ``nv`` unit joint forces at once (Carpentier, "Analytical inverse of the joint space
inertia matrix", 2018; Pinocchio's ``computeMinverse``), written here in sinews' own layout.

:func:`minverse` works in world axes at the world origin, where a link and its parent need no
transform: the articulated inertias are summed as they are, and the bias forces and
accelerations of all columns reduce to row operations on ``M^-1`` itself.

* backward (leaves to root), per link ``i`` (motion subspace ``S_i``, ``U_i = IA_i S_i``,
  ``D_i = S_i^T U_i``): ``T_i = D_i^-1 (E_i - S_i^T F_i)`` on the columns of its subtree, where
  ``S_i^T F_i = sum over descendant dofs d of (S_i . U_d) T_d``: each finished row ``T_d`` is
  subtracted, scaled by ``S_a . U_d``, from the row of every ancestor dof ``a`` (the couplings
  are kept in the lower triangle);
* forward (root to leaves): ``M^-1[i, j] = T_i[j] - sum over ancestor dofs a of
  (D_i^-1 U_i^T S_a) M^-1[a, j]`` for the columns ``j >= iv_i`` (the upper triangle); then the
  lower triangle is copied from the upper one.

The row updates are contiguous axpy loops with unsigned indices, which LLVM vectorises; so is
``T_i = D_i^-1 (...)`` for a multi-dof joint (a free-flyer root: 6 rows of ``nv`` columns), done
as row operations on a copy of the joint's rows rather than column by column.  The public fast
path (``minverse_x``) passes a scratch of :func:`buffer_size` values, so nothing is allocated.
"""


import numpy as np
from ._jit import njit

from ._checks import NOT_FINITE
from ._crba_kernels import _in_link_axes, _world_S, _world_inertia, not_finite_bits
from ._joint_pass import BAD_SHAPE, _dims, check_q, joint_pass
from .joints import JT_FREEFLYER
from ._layout import (
    MF_ARM,
    MF_HEADER,
    MF_STRIDE,
    MI_IV,
    MI_NV,
    MI_PARENT,
    MI_TYPE,
    WS_DINV,
    WS_IA,
    WS_STRIDE,
)

# unsigned indices in the row updates: no negative-index wrap-around, so LLVM vectorises them
# (8x faster than int64 indices in these loops)
_U = np.uint64


@njit(cache=True)
def minverse(q, Minv, mi, mf, ws, buf):
    """Dense ``M(q)^-1`` (both triangles) into ``Minv`` (nv x nv), every quantity in world axes
    at the world origin (then no transform between a link and its parent: the articulated
    inertias, the bias forces and the accelerations are added as they are).  ``buf``: scratch of
    at least ``12 * nv`` values (world-axes S and U of every dof); with at least
    ``18 * nv + 96 + nlinks`` (:func:`buffer_size`) the kernel allocates nothing.  Returns 0, a
    :func:`check_q` code, NOT_FINITE if the result overflowed, or 1 + the index of a link whose
    ``D = S^T IA S`` is not positive definite (a massless subtree)."""
    code = check_q(q, mi)
    if code != 0:
        return code
    joint_pass(q, q, mi, mf, ws, np.int64(2))
    return minverse_core(Minv, mi, mf, ws, buf)


@njit(cache=True)
def minverse_core(Minv, mi, mf, ws, buf):
    """:func:`minverse` over a workspace already holding the world poses (``oR``, ``op``) and
    the motion subspaces of ``q`` (the joint pass with ``mode & 2``, or
    :func:`sinews._kinematics_pass.chain_poses` over every link)."""
    nl = mi.shape[0]
    nv = Minv.shape[0]
    s_off = nl * WS_STRIDE
    M = Minv.reshape(nv * nv)
    oS = 0
    oU = 6 * nv
    o = 12 * nv
    if buf.shape[0] >= o + 96 + nl + 6 * nv:  # the scratch below in buf too (buffer_size)
        tmp = buf[o:o + 96]
        end = buf[o + 96:o + 96 + nl].view(np.int64)
        rows = buf[o + 96 + nl:o + 96 + nl + 6 * nv]
    else:
        tmp = np.empty(96)
        end = np.empty(nl, np.int64)
        rows = np.empty(6 * nv)
    tD = 0
    tUD = 36
    tX = 72
    for k in range(nl):
        end[k] = mi[k, MI_IV] + mi[k, MI_NV]
    for k in range(nl - 1, -1, -1):
        par = mi[k, MI_PARENT]
        if par >= 0 and end[k] > end[par]:
            end[par] = end[k]
    # world inertias (at the world origin) and world motion subspaces; zero bias forces
    for k in range(nl):
        w = k * WS_STRIDE
        m, c0, c1, c2, x00, x11, x22, x01, x02, x12 = _world_inertia(mf, ws, k)
        ia = w + WS_IA
        ws[ia] = x00
        ws[ia + 7] = x11
        ws[ia + 14] = x22
        ws[ia + 1] = x01
        ws[ia + 6] = x01
        ws[ia + 2] = x02
        ws[ia + 12] = x02
        ws[ia + 8] = x12
        ws[ia + 13] = x12
        # [[I, [c]x], [[c]x^T, m 1]]
        ws[ia + 3] = 0.0
        ws[ia + 4] = -c2
        ws[ia + 5] = c1
        ws[ia + 9] = c2
        ws[ia + 10] = 0.0
        ws[ia + 11] = -c0
        ws[ia + 15] = -c1
        ws[ia + 16] = c0
        ws[ia + 17] = 0.0
        ws[ia + 18] = 0.0
        ws[ia + 19] = c2
        ws[ia + 20] = -c1
        ws[ia + 24] = -c2
        ws[ia + 25] = 0.0
        ws[ia + 26] = c0
        ws[ia + 30] = c1
        ws[ia + 31] = -c0
        ws[ia + 32] = 0.0
        ws[ia + 21] = m
        ws[ia + 22] = 0.0
        ws[ia + 23] = 0.0
        ws[ia + 27] = 0.0
        ws[ia + 28] = m
        ws[ia + 29] = 0.0
        ws[ia + 33] = 0.0
        ws[ia + 34] = 0.0
        ws[ia + 35] = m
        _world_S(mi, ws, k, s_off, buf, oS)
        iv = mi[k, MI_IV]
        # the rows of the joint, columns of the subtree: accumulate -S^T F (backward pass)
        for i in range(iv, iv + mi[k, MI_NV]):
            uri = _U(i * nv)
            for j in range(_U(iv), _U(end[k])):
                M[uri + j] = 0.0
    # backward pass: articulated inertias, then T_i and the bias forces of all columns.  When
    # link 0 is a free-flyer, the products of its six motion subspace columns with a
    # descendant's U_i are U_i in its own axes (_in_link_axes): the walk up stops before it
    stop = np.int64(0) if mi[0, MI_TYPE] == JT_FREEFLYER else np.int64(-1)
    for k in range(nl - 1, -1, -1):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        e = end[k]
        w = k * WS_STRIDE
        ia = w + WS_IA
        iap = par * WS_STRIDE + WS_IA
        dinv = w + WS_DINV
        if nvj == 1:
            # scalar code over the upper triangle of the articulated inertia (only the upper
            # triangle is kept up to date in the workspace)
            so = oS + 6 * iv
            uo = oU + 6 * iv
            a00 = ws[ia + 0]
            a01 = ws[ia + 1]
            a02 = ws[ia + 2]
            a03 = ws[ia + 3]
            a04 = ws[ia + 4]
            a05 = ws[ia + 5]
            a11 = ws[ia + 7]
            a12 = ws[ia + 8]
            a13 = ws[ia + 9]
            a14 = ws[ia + 10]
            a15 = ws[ia + 11]
            a22 = ws[ia + 14]
            a23 = ws[ia + 15]
            a24 = ws[ia + 16]
            a25 = ws[ia + 17]
            a33 = ws[ia + 21]
            a34 = ws[ia + 22]
            a35 = ws[ia + 23]
            a44 = ws[ia + 28]
            a45 = ws[ia + 29]
            a55 = ws[ia + 35]
            s0 = buf[so + 0]
            s1 = buf[so + 1]
            s2 = buf[so + 2]
            s3 = buf[so + 3]
            s4 = buf[so + 4]
            s5 = buf[so + 5]
            u0 = a00 * s0 + a01 * s1 + a02 * s2 + a03 * s3 + a04 * s4 + a05 * s5
            buf[uo + 0] = u0
            u1 = a01 * s0 + a11 * s1 + a12 * s2 + a13 * s3 + a14 * s4 + a15 * s5
            buf[uo + 1] = u1
            u2 = a02 * s0 + a12 * s1 + a22 * s2 + a23 * s3 + a24 * s4 + a25 * s5
            buf[uo + 2] = u2
            u3 = a03 * s0 + a13 * s1 + a23 * s2 + a33 * s3 + a34 * s4 + a35 * s5
            buf[uo + 3] = u3
            u4 = a04 * s0 + a14 * s1 + a24 * s2 + a34 * s3 + a44 * s4 + a45 * s5
            buf[uo + 4] = u4
            u5 = a05 * s0 + a15 * s1 + a25 * s2 + a35 * s3 + a45 * s4 + a55 * s5
            buf[uo + 5] = u5
            # D = S^T IA S + armature (C2)
            d = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5
            d += mf[MF_HEADER + k * MF_STRIDE + MF_ARM]
            if not d > 0.0:
                return k + 1
            di = 1.0 / d
            ws[dinv] = di
            if par >= 0:
                e0 = u0 * di
                e1 = u1 * di
                e2 = u2 * di
                e3 = u3 * di
                e4 = u4 * di
                e5 = u5 * di
                ws[iap + 0] += a00 - e0 * u0
                ws[iap + 1] += a01 - e0 * u1
                ws[iap + 2] += a02 - e0 * u2
                ws[iap + 3] += a03 - e0 * u3
                ws[iap + 4] += a04 - e0 * u4
                ws[iap + 5] += a05 - e0 * u5
                ws[iap + 7] += a11 - e1 * u1
                ws[iap + 8] += a12 - e1 * u2
                ws[iap + 9] += a13 - e1 * u3
                ws[iap + 10] += a14 - e1 * u4
                ws[iap + 11] += a15 - e1 * u5
                ws[iap + 14] += a22 - e2 * u2
                ws[iap + 15] += a23 - e2 * u3
                ws[iap + 16] += a24 - e2 * u4
                ws[iap + 17] += a25 - e2 * u5
                ws[iap + 21] += a33 - e3 * u3
                ws[iap + 22] += a34 - e3 * u4
                ws[iap + 23] += a35 - e3 * u5
                ws[iap + 28] += a44 - e4 * u4
                ws[iap + 29] += a45 - e4 * u5
                ws[iap + 35] += a55 - e5 * u5
            # T_i = D^-1 (e_i - S^T F) on the columns of the subtree
            ri = iv * nv
            uri = _U(ri)
            for j in range(_U(iv), _U(e)):
                M[uri + j] *= di
            M[ri + iv] += di
            # its share of the bias forces, seen by every ancestor dof a: row_a -= (S_a . U_i) T_i;
            # S_a . U_i is kept in the lower triangle, M[i, a], for the forward pass
            l = par
            while l > stop:
                ja = mi[l, MI_IV]
                for a in range(ja, ja + mi[l, MI_NV]):
                    sa = oS + 6 * a
                    g = buf[sa] * u0 + buf[sa + 1] * u1 + buf[sa + 2] * u2 + buf[sa + 3] * u3 + buf[sa + 4] * u4 + buf[sa + 5] * u5
                    M[ri + a] = g
                    ura = _U(a * nv)
                    for j in range(_U(iv), _U(e)):
                        M[ura + j] -= g * M[uri + j]
                l = mi[l, MI_PARENT]
            if l == 0:  # a free-flyer root (stop is 0): S_a . U_i for its six dofs at once
                _in_link_axes(ws, 0, u0, u1, u2, u3, u4, u5, M, ri)  # M[i, a], a = 0-5
                for a in range(6):
                    g = M[ri + a]
                    ura = _U(a * nv)
                    for j in range(_U(iv), _U(e)):
                        M[ura + j] -= g * M[uri + j]
            continue
        # multi-dof joint (generic loops over the upper triangle): U = IA S, D = S^T U, inverted
        # by Gauss-Jordan (symmetric positive definite)
        for i in range(nvj):
            so = oS + 6 * (iv + i)
            uo = oU + 6 * (iv + i)
            for r in range(6):
                acc = 0.0
                for c in range(6):
                    acc += ws[ia + (6 * r + c if r <= c else 6 * c + r)] * buf[so + c]
                buf[uo + r] = acc
        for i in range(nvj):
            for j in range(nvj):
                so = oS + 6 * (iv + i)
                uo = oU + 6 * (iv + j)
                d = 0.0
                for r in range(6):
                    d += buf[so + r] * buf[uo + r]
                if i == j:  # D = S^T IA S + diag(armature) (C2)
                    d += mf[MF_HEADER + k * MF_STRIDE + MF_ARM + i]
                tmp[tD + nvj * i + j] = d
                ws[dinv + nvj * i + j] = 1.0 if i == j else 0.0
        for c in range(nvj):
            piv = tmp[tD + nvj * c + c]
            if not piv > 0.0:
                return k + 1
            inv = 1.0 / piv
            for j in range(nvj):
                tmp[tD + nvj * c + j] *= inv
                ws[dinv + nvj * c + j] *= inv
            for r in range(nvj):
                if r != c:
                    f = tmp[tD + nvj * r + c]
                    if f != 0.0:
                        for j in range(nvj):
                            tmp[tD + nvj * r + j] -= f * tmp[tD + nvj * c + j]
                            ws[dinv + nvj * r + j] -= f * ws[dinv + nvj * c + j]
        if par >= 0:
            for r in range(6):
                for j in range(nvj):
                    acc = 0.0
                    for i in range(nvj):
                        acc += buf[oU + 6 * (iv + i) + r] * ws[dinv + nvj * i + j]
                    tmp[tUD + nvj * r + j] = acc
            for r in range(6):
                for c in range(r, 6):
                    acc = ws[ia + 6 * r + c]
                    for i in range(nvj):
                        acc -= tmp[tUD + nvj * r + i] * buf[oU + 6 * (iv + i) + c]
                    ws[iap + 6 * r + c] += acc
        # T = D^-1 (E - S^T F) on the columns of the subtree, as row operations (axpy loops that
        # LLVM vectorises) on a copy of the joint's rows, the unit entries E added
        for i in range(nvj):
            ri = _U((iv + i) * nv)
            si = _U(i * nv)
            for j in range(_U(iv), _U(e)):
                rows[si + j] = M[ri + j]
            rows[i * nv + iv + i] += 1.0
        for i in range(nvj):
            ri = _U((iv + i) * nv)
            dx = ws[dinv + nvj * i]
            for j in range(_U(iv), _U(e)):
                M[ri + j] = dx * rows[j]
            for x in range(1, nvj):
                dx = ws[dinv + nvj * i + x]
                sx = _U(x * nv)
                for j in range(_U(iv), _U(e)):
                    M[ri + j] += dx * rows[sx + j]
        l = par
        while l >= 0:
            ja = mi[l, MI_IV]
            for a in range(ja, ja + mi[l, MI_NV]):
                sa = oS + 6 * a
                ra = a * nv
                for i in range(nvj):
                    ux = oU + 6 * (iv + i)
                    g = (
                        buf[sa] * buf[ux] + buf[sa + 1] * buf[ux + 1] + buf[sa + 2] * buf[ux + 2]
                        + buf[sa + 3] * buf[ux + 3] + buf[sa + 4] * buf[ux + 4] + buf[sa + 5] * buf[ux + 5]
                    )
                    ri = (iv + i) * nv
                    M[ri + a] = g
                    ura = _U(ra)
                    uri = _U(ri)
                    for j in range(_U(iv), _U(e)):
                        M[ura + j] -= g * M[uri + j]
            l = mi[l, MI_PARENT]
    # forward pass: row_i -= sum over ancestor dofs a of (D^-1 U^T S_a)_i row_a, columns j >= iv
    for k in range(nl):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        dinv = k * WS_STRIDE + WS_DINV
        for i in range(iv, iv + nvj):
            uri = _U(i * nv)
            for j in range(_U(end[k]), _U(nv)):
                M[uri + j] = 0.0
        if nvj == 1:
            di = ws[dinv]
            ri = iv * nv
            l = par
            while l >= 0:
                ja = mi[l, MI_IV]
                for a in range(ja, ja + mi[l, MI_NV]):
                    c = di * M[ri + a]
                    ura = _U(a * nv)
                    uri = _U(ri)
                    for j in range(_U(iv), _U(nv)):
                        M[uri + j] -= c * M[ura + j]
                l = mi[l, MI_PARENT]
            continue
        l = par
        while l >= 0:
            ja = mi[l, MI_IV]
            for a in range(ja, ja + mi[l, MI_NV]):
                ra = a * nv
                for x in range(nvj):
                    tmp[tX + x] = M[(iv + x) * nv + a]
                for i in range(nvj):
                    c = 0.0
                    for x in range(nvj):
                        c += ws[dinv + nvj * i + x] * tmp[tX + x]
                    uri = _U((iv + i) * nv)
                    ura = _U(ra)
                    for j in range(_U(iv), _U(nv)):
                        M[uri + j] -= c * M[ura + j]
            l = mi[l, MI_PARENT]
    for r in range(nv):
        for c in range(r):
            M[r * nv + c] = M[c * nv + r]
    if not_finite_bits(M):
        return NOT_FINITE
    return 0


def buffer_size(nlinks: int, nv: int) -> int:
    """Length of a ``buf`` with which :func:`minverse` allocates nothing."""
    return 18 * nv + 96 + nlinks


def data_buffer(data) -> np.ndarray:
    """The ``buf`` of :func:`minverse` kept on the workspace ``data`` (made on first use)."""
    buf = data.__dict__.get("_minv_buf")
    if buf is None:
        c = data.c
        buf = data._minv_buf = np.empty(buffer_size(c.nlinks, c.nv))
    return buf


# ----------------------------------------------------------------------------------------------
# Entry kernel of the public fast path (see sinews._entry): compiled for one signature
# (contiguous, writeable, aligned float64 arrays); any other argument type raises in Numba's
# dispatcher and the wrapper falls back to its checked path.


@njit(cache=True)
def minverse_x(q, Minv, mi, mf, ws, buf):
    """:func:`minverse` after checking the length of q, the shape of Minv and the length of
    buf (at least :func:`buffer_size`)."""
    nq, nv = _dims(mi)
    if q.shape[0] != nq or Minv.shape[0] != nv or Minv.shape[1] != nv:
        return BAD_SHAPE
    if buf.shape[0] < 18 * nv + 96 + mi.shape[0]:
        return BAD_SHAPE
    return minverse(q, Minv, mi, mf, ws, buf)
