"""Numba kernels of the composite-rigid-body algorithm over the compiled model arrays (``mi``,
``mf``) and a workspace (``ws``); see :mod:`sinews._joint_pass` for the design.  Equations and
sources are stated in the public module (``sinews.crba``), and ``crba_x`` is the entry kernel of
its fast path (``sinews._entry``)."""

import math

import numpy as np
from ._jit import njit

from ._layout import (
    MF_ARM,
    MF_H,
    MF_HEADER,
    MF_IO,
    MF_MASS,
    MF_STRIDE,
    MI_AXIS,
    MI_IV,
    MI_NV,
    MI_PARENT,
    MI_TYPE,
    WS_F,
    WS_OP,
    WS_OR,
    WS_STRIDE,
)
from ._checks import NOT_FINITE
from .joints import JT_FREEFLYER, JT_REVOLUTE
from ._joint_pass import BAD_SHAPE, _cross, _dims, _rot_sym, check_q, joint_pass

# ----------------------------------------------------------------------------------------------
# Per-link quantities in world axes at the world origin (shared with sinews._minv_kernels)


@njit(inline="always", cache=True)
def _world_inertia(mf, ws, k):
    """Link ``k``'s inertia in world axes about the world origin, from its world pose
    ``(oR, op)`` left in ``ws`` by the joint pass: ``(m, c, I)`` with the first moment
    ``c = oR h + m op`` and ``I = oR Io oR^T + (2 hr.p + m|p|^2) 1 - (hr p^T + p hr^T + m p p^T)``
    (``hr = oR h``, the parallel-axis shift), ``I`` as (xx, yy, zz, xy, xz, yz)."""
    b = MF_HEADER + k * MF_STRIDE
    w = k * WS_STRIDE
    R00 = ws[w + WS_OR]
    R01 = ws[w + WS_OR + 1]
    R02 = ws[w + WS_OR + 2]
    R10 = ws[w + WS_OR + 3]
    R11 = ws[w + WS_OR + 4]
    R12 = ws[w + WS_OR + 5]
    R20 = ws[w + WS_OR + 6]
    R21 = ws[w + WS_OR + 7]
    R22 = ws[w + WS_OR + 8]
    P0 = ws[w + WS_OP]
    P1 = ws[w + WS_OP + 1]
    P2 = ws[w + WS_OP + 2]
    m = mf[b + MF_MASS]
    h0 = mf[b + MF_H]
    h1 = mf[b + MF_H + 1]
    h2 = mf[b + MF_H + 2]
    hr0 = R00 * h0 + R01 * h1 + R02 * h2
    hr1 = R10 * h0 + R11 * h1 + R12 * h2
    hr2 = R20 * h0 + R21 * h1 + R22 * h2
    n00, n11, n22, n01, n02, n12 = _rot_sym(
        R00, R01, R02, R10, R11, R12, R20, R21, R22,
        mf[b + MF_IO], mf[b + MF_IO + 1], mf[b + MF_IO + 2],
        mf[b + MF_IO + 3], mf[b + MF_IO + 4], mf[b + MF_IO + 5],
    )
    d = 2.0 * (hr0 * P0 + hr1 * P1 + hr2 * P2) + m * (P0 * P0 + P1 * P1 + P2 * P2)
    return (
        m,
        hr0 + m * P0,
        hr1 + m * P1,
        hr2 + m * P2,
        n00 + d - 2.0 * hr0 * P0 - m * P0 * P0,
        n11 + d - 2.0 * hr1 * P1 - m * P1 * P1,
        n22 + d - 2.0 * hr2 * P2 - m * P2 * P2,
        n01 - hr0 * P1 - P0 * hr1 - m * P0 * P1,
        n02 - hr0 * P2 - P0 * hr2 - m * P0 * P2,
        n12 - hr1 * P2 - P1 * hr2 - m * P1 * P2,
    )


@njit(inline="always", cache=True)
def _world_S(mi, ws, k, s_off, out, o_off):
    """The motion subspace of link ``k``'s joint (in link axes at ``ws[s_off:]``, as the joint
    pass leaves it) in world axes at the world origin, ``[oR s_w; oR s_v + op x oR s_w]``,
    written to ``out[o_off + 6 * dof:]`` for each of its dofs."""
    w = k * WS_STRIDE
    R00 = ws[w + WS_OR]
    R01 = ws[w + WS_OR + 1]
    R02 = ws[w + WS_OR + 2]
    R10 = ws[w + WS_OR + 3]
    R11 = ws[w + WS_OR + 4]
    R12 = ws[w + WS_OR + 5]
    R20 = ws[w + WS_OR + 6]
    R21 = ws[w + WS_OR + 7]
    R22 = ws[w + WS_OR + 8]
    P0 = ws[w + WS_OP]
    P1 = ws[w + WS_OP + 1]
    P2 = ws[w + WS_OP + 2]
    iv = mi[k, MI_IV]
    ac = mi[k, MI_AXIS]
    if mi[k, MI_TYPE] == JT_REVOLUTE and 1 <= ac <= 3:
        # S = [e_axis; 0] in link axes: [column of oR; op x that column] (the general sums below
        # with the zero terms left out)
        c = w + WS_OR + ac - 1
        w0 = ws[c]
        w1 = ws[c + 3]
        w2 = ws[c + 6]
        c0, c1, c2 = _cross(P0, P1, P2, w0, w1, w2)
        o = o_off + 6 * iv
        out[o] = w0
        out[o + 1] = w1
        out[o + 2] = w2
        out[o + 3] = c0
        out[o + 4] = c1
        out[o + 5] = c2
        return
    for i in range(mi[k, MI_NV]):
        so = s_off + 6 * (iv + i)
        sw0 = ws[so]
        sw1 = ws[so + 1]
        sw2 = ws[so + 2]
        sv0 = ws[so + 3]
        sv1 = ws[so + 4]
        sv2 = ws[so + 5]
        w0 = R00 * sw0 + R01 * sw1 + R02 * sw2
        w1 = R10 * sw0 + R11 * sw1 + R12 * sw2
        w2 = R20 * sw0 + R21 * sw1 + R22 * sw2
        c0, c1, c2 = _cross(P0, P1, P2, w0, w1, w2)
        o = o_off + 6 * (iv + i)
        out[o] = w0
        out[o + 1] = w1
        out[o + 2] = w2
        out[o + 3] = R00 * sv0 + R01 * sv1 + R02 * sv2 + c0
        out[o + 4] = R10 * sv0 + R11 * sv1 + R12 * sv2 + c1
        out[o + 5] = R20 * sv0 + R21 * sv1 + R22 * sv2 + c2


@njit(cache=True, forceinline=True)
def _in_link_axes(ws, l, n0, n1, n2, f0, f1, f2, out, o):
    """The world force ``(n, f)`` (about the world origin) in link ``l``'s axes about its origin,
    ``(oR^T (n - op x f), oR^T f)``, into ``out[o:o + 6]``: its products with the six columns of
    a free-flyer's motion subspace (the identity in link axes), 30 flops instead of six
    6-vector products (the CRBA's and ``M^-1``'s free-flyer root)."""
    w = l * WS_STRIDE
    c0, c1, c2 = _cross(ws[w + WS_OP], ws[w + WS_OP + 1], ws[w + WS_OP + 2], f0, f1, f2)
    m0 = n0 - c0
    m1 = n1 - c1
    m2 = n2 - c2
    for a in range(3):
        r0 = ws[w + WS_OR + a]  # column a of oR
        r1 = ws[w + WS_OR + 3 + a]
        r2 = ws[w + WS_OR + 6 + a]
        out[o + a] = r0 * m0 + r1 * m1 + r2 * m2
        out[o + 3 + a] = r0 * f0 + r1 * f1 + r2 * f2


# ----------------------------------------------------------------------------------------------
# CRBA


@njit(cache=True)
def crba(q, M, mi, mf, ws):
    """Joint-space inertia M(q) by the composite-rigid-body algorithm, in world axes:
    composite inertias Ic_k (world) are plain sums over subtrees, motion subspaces S_k are
    mapped to world axes once, and M[j, i] = S_j . (Ic_k S_i) for every dof j on the path from
    link k (the link of dof i) to the root.  Writes the ancestor entries of M (both triangles);
    other entries are left untouched (zero them once).  Returns 0, a :func:`check_q` code, or
    NOT_FINITE if M overflowed."""
    code = check_q(q, mi)
    if code != 0:
        return code
    joint_pass(q, q, mi, mf, ws, np.int64(2))
    crba_core(M, mi, mf, ws)
    # the written entries: M[i, j] for dof j of the link of dof i or of one of its ancestors
    # (the symmetric copies are equal)
    for k in range(mi.shape[0]):
        for i in range(mi[k, MI_IV], mi[k, MI_IV] + mi[k, MI_NV]):
            l = k
            while l >= 0:
                for j in range(mi[l, MI_IV], mi[l, MI_IV] + mi[l, MI_NV]):
                    if not math.isfinite(M[i, j]):
                        return NOT_FINITE
                l = mi[l, MI_PARENT]
    return 0


@njit(cache=True)
def crba_core(M, mi, mf, ws):
    """The CRBA over a workspace already holding the joint pass with world poses
    (``joint_pass(..., mode & 2)``); see :func:`crba`.  The joints' armature (``mf`` at
    ``MF_ARM``) is added to the diagonal.  Leaves the world-axes motion subspaces
    in the U region of the workspace."""
    nl = mi.shape[0]
    nv = mi[nl - 1, MI_IV] + mi[nl - 1, MI_NV]
    s_off = nl * WS_STRIDE
    s0_off = s_off + 6 * nv  # world-axes S, in the U region
    for k in range(nl):
        w = k * WS_STRIDE
        m, c0, c1, c2, i00, i11, i22, i01, i02, i12 = _world_inertia(mf, ws, k)
        ws[w + WS_F] = m
        ws[w + WS_F + 1] = c0
        ws[w + WS_F + 2] = c1
        ws[w + WS_F + 3] = c2
        ws[w + WS_F + 4] = i00
        ws[w + WS_F + 5] = i11
        ws[w + WS_F + 6] = i22
        ws[w + WS_F + 7] = i01
        ws[w + WS_F + 8] = i02
        ws[w + WS_F + 9] = i12
        _world_S(mi, ws, k, s_off, ws, s0_off)
    # children before parents: Ic_k is complete when k is reached; its columns, then Ic_k into
    # the parent's.  When link 0 is a free-flyer, its entries in the columns of its descendants
    # are F in its own axes (_in_link_axes): their walk up the ancestors stops before it
    # (the walk of a link in another tree ends at its own root, parent -1, as without one)
    stop = np.int64(0) if mi[0, MI_TYPE] == JT_FREEFLYER else np.int64(-1)
    for k in range(nl - 1, -1, -1):
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        m = ws[w + WS_F]
        h0 = ws[w + WS_F + 1]
        h1 = ws[w + WS_F + 2]
        h2 = ws[w + WS_F + 3]
        ixx = ws[w + WS_F + 4]
        iyy = ws[w + WS_F + 5]
        izz = ws[w + WS_F + 6]
        ixy = ws[w + WS_F + 7]
        ixz = ws[w + WS_F + 8]
        iyz = ws[w + WS_F + 9]
        arm = MF_HEADER + k * MF_STRIDE + MF_ARM
        for i in range(nvj):
            col = iv + i
            so = s0_off + 6 * col
            sw0 = ws[so]
            sw1 = ws[so + 1]
            sw2 = ws[so + 2]
            sv0 = ws[so + 3]
            sv1 = ws[so + 4]
            sv2 = ws[so + 5]
            c0, c1, c2 = _cross(h0, h1, h2, sv0, sv1, sv2)
            fn0 = ixx * sw0 + ixy * sw1 + ixz * sw2 + c0
            fn1 = ixy * sw0 + iyy * sw1 + iyz * sw2 + c1
            fn2 = ixz * sw0 + iyz * sw1 + izz * sw2 + c2
            c0, c1, c2 = _cross(h0, h1, h2, sw0, sw1, sw2)
            ff0 = m * sv0 - c0
            ff1 = m * sv1 - c1
            ff2 = m * sv2 - c2
            # dofs of the same joint (j >= i), then the ancestors
            for jj in range(i, nvj):
                sj = s0_off + 6 * (iv + jj)
                val = (
                    ws[sj] * fn0 + ws[sj + 1] * fn1 + ws[sj + 2] * fn2
                    + ws[sj + 3] * ff0 + ws[sj + 4] * ff1 + ws[sj + 5] * ff2
                )
                M[iv + jj, col] = val
                M[col, iv + jj] = val
            M[col, col] += mf[arm + i]  # the joint's armature (C2; Pinocchio's model.armature)
            l = mi[k, MI_PARENT]
            while l > stop:
                ivp = mi[l, MI_IV]
                for jj in range(mi[l, MI_NV]):
                    sj = s0_off + 6 * (ivp + jj)
                    val = (
                        ws[sj] * fn0 + ws[sj + 1] * fn1 + ws[sj + 2] * fn2
                        + ws[sj + 3] * ff0 + ws[sj + 4] * ff1 + ws[sj + 5] * ff2
                    )
                    M[ivp + jj, col] = val
                    M[col, ivp + jj] = val
                l = mi[l, MI_PARENT]
            if l == 0:  # (a free-flyer root: stop is 0)
                _in_link_axes(ws, 0, fn0, fn1, fn2, ff0, ff1, ff2, M[col], 0)  # row col, dofs 0-5
                for a in range(6):
                    M[a, col] = M[col, a]
        par = mi[k, MI_PARENT]
        if par >= 0:
            wp = par * WS_STRIDE
            for i in range(10):
                ws[wp + WS_F + i] += ws[w + WS_F + i]
    return 0


# ----------------------------------------------------------------------------------------------
# Entry kernels of the public fast path (see sinews._entry): the argument shapes are checked
# here, so that the Python wrapper only has to pick the workspace.  Each is compiled for one
# signature (contiguous, writeable, aligned float64 arrays) and dispatched by Numba's C
# dispatcher with compilation disabled; any other argument type raises there and the wrapper
# falls back to its checked path.


@njit(cache=True)
def crba_x(q, M, mi, mf, ws):
    """:func:`crba` after checking the length of q and the shape of M (which it zeroes).  The
    finiteness of the result is checked on the whole of ``M`` (zero outside the written
    entries) with a vectorised test of the exponent bits instead of :func:`crba`'s walk over
    the ancestor entries."""
    nq, nv = _dims(mi)
    if q.shape[0] != nq or M.shape[0] != nv or M.shape[1] != nv:
        return BAD_SHAPE
    code = check_q(q, mi)
    if code != 0:
        return code
    M[:, :] = 0.0
    joint_pass(q, q, mi, mf, ws, np.int64(2))
    crba_core(M, mi, mf, ws)
    if not_finite_bits(M.reshape(nv * nv)):
        return NOT_FINITE
    return 0


_EXP = np.uint64(0x7FF0000000000000)  # the exponent bits of a float64: all set for inf and NaN


@njit(cache=True)
def not_finite_bits(x):
    """Whether the contiguous float64 vector ``x`` holds an inf or a NaN: the largest exponent
    field over ``x`` (an unsigned maximum, which LLVM vectorises) is all ones."""
    b = x.view(np.uint64)
    acc = np.uint64(0)
    for i in range(b.shape[0]):
        e = b[i] & _EXP
        if e > acc:
            acc = e
    return acc == _EXP
