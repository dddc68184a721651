"""The largest entry of each constraint row of a pair, ``max_j |G_r[j]|``, for the zero-row
test of the tree-augmented kernel (:mod:`sinews.constraints._ta_kernels`): rows that are zero up
to rounding are treated as exactly zero, as ``_linalg.zero_tiny_rows`` does on the other
methods."""

from __future__ import annotations

from .._jit import njit

from .._joint_pass import _cross
from .._layout import MI_IV, MI_NV, MI_PARENT, WS_OP, WS_OR, WS_STRIDE


@njit(inline="always", cache=True)
def rows_max(mi, ws, kS, kP, E, r0, r1, gm):
    """``gm[r] = max_j |G_r[j]|`` for the rows ``r0 <= r < r1`` of one pair, from their node
    test wrenches ``E`` (link axes of ``kS`` / ``kP``, about their origins, the sign of the
    predecessor's included): ``G_r[j] = S_j . E_r`` with the motion axis ``S_j`` of a dof of a
    link ``k`` between the constraint bodies and their nearest common ancestor (the common
    ancestors' entries cancel) expressed in the axes of the constraint body on its side, about
    that body's origin (world poses from :func:`world_poses`).  The transformed axis is shared
    by the pair's rows.  Link indices are topological (parent < child)."""
    nl = mi.shape[0]
    s_off = nl * WS_STRIDE
    for r in range(r0, r1):
        gm[r] = 0.0
    a = kS
    b = kP
    while a != b:
        if a > b:
            k = a
            top = kS
            off = 0
            a = mi[a, MI_PARENT]
        else:
            k = b
            top = kP
            off = 6
            b = mi[b, MI_PARENT]
        w = k * WS_STRIDE
        o = w + WS_OR
        wt = top * WS_STRIDE
        ot = wt + WS_OR
        e0 = ws[wt + WS_OP] - ws[w + WS_OP]
        e1 = ws[wt + WS_OP + 1] - ws[w + WS_OP + 1]
        e2 = ws[wt + WS_OP + 2] - ws[w + WS_OP + 2]
        iv = mi[k, MI_IV]
        for i in range(mi[k, MI_NV]):
            so = s_off + 6 * (iv + i)
            if k == top:
                x0 = ws[so]
                x1 = ws[so + 1]
                x2 = ws[so + 2]
                y0 = ws[so + 3]
                y1 = ws[so + 4]
                y2 = ws[so + 5]
            else:  # world axes, linear part at the origin of top, then top's axes
                ww0 = ws[o] * ws[so] + ws[o + 1] * ws[so + 1] + ws[o + 2] * ws[so + 2]
                ww1 = ws[o + 3] * ws[so] + ws[o + 4] * ws[so + 1] + ws[o + 5] * ws[so + 2]
                ww2 = ws[o + 6] * ws[so] + ws[o + 7] * ws[so + 1] + ws[o + 8] * ws[so + 2]
                c0, c1, c2 = _cross(ww0, ww1, ww2, e0, e1, e2)
                vw0 = ws[o] * ws[so + 3] + ws[o + 1] * ws[so + 4] + ws[o + 2] * ws[so + 5] + c0
                vw1 = ws[o + 3] * ws[so + 3] + ws[o + 4] * ws[so + 4] + ws[o + 5] * ws[so + 5] + c1
                vw2 = ws[o + 6] * ws[so + 3] + ws[o + 7] * ws[so + 4] + ws[o + 8] * ws[so + 5] + c2
                x0 = ws[ot] * ww0 + ws[ot + 3] * ww1 + ws[ot + 6] * ww2
                x1 = ws[ot + 1] * ww0 + ws[ot + 4] * ww1 + ws[ot + 7] * ww2
                x2 = ws[ot + 2] * ww0 + ws[ot + 5] * ww1 + ws[ot + 8] * ww2
                y0 = ws[ot] * vw0 + ws[ot + 3] * vw1 + ws[ot + 6] * vw2
                y1 = ws[ot + 1] * vw0 + ws[ot + 4] * vw1 + ws[ot + 7] * vw2
                y2 = ws[ot + 2] * vw0 + ws[ot + 5] * vw1 + ws[ot + 8] * vw2
            for r in range(r0, r1):
                g = abs(E[r, off] * x0 + E[r, off + 1] * x1 + E[r, off + 2] * x2 + E[r, off + 3] * y0
                        + E[r, off + 4] * y1 + E[r, off + 5] * y2)
                if g > gm[r]:
                    gm[r] = g
