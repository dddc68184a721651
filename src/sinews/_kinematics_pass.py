"""The world poses of a chain of links: the kinematics kernels' joint pass (Numba).

:func:`chain_poses` is :func:`sinews._joint_pass.joint_pass_links` with ``mode = 2`` (world poses
``oR``, ``op`` into the workspace), with the common joints done in fewer operations:
- a revolute joint about a coordinate axis and a prismatic joint: it writes only the world pose
  (not the pose in the parent link), and multiplies the joint placement by the joint rotation
  exploiting its zeros, in the same order as the general pass (so the results are the same to
  the last bit, up to the sign of zeros);
- a free-flyer (the base of every legged robot and humanoid): the general pass's operations, in
  its order, without its call and dispatch; it writes the pose in the parent link too, as that
  pass does.
Every other joint goes through the general pass.

:func:`chain_poses` is compiled once and inlined by LLVM (``forceinline``) into the four
kinematics kernels that call it, instead of being copied into each and typed again by Numba
(``inline="always"``): about 1.5 s less to compile in ``sinews.warmup()``, the same machine code.
"""

import math

import numpy as np

from ._jit import njit
from ._joint_pass import _placed, _quat_matrix, joint_pass_links
from ._layout import MF_AXIS, MF_HEADER, MF_JP, MF_JR, MF_STRIDE, MI_AXIS, MI_IQ, MI_PARENT, MI_TYPE, WS_OP, WS_OR, WS_STRIDE
from .joints import JT_FREEFLYER, JT_PRISMATIC, JT_REVOLUTE


@njit(cache=True, forceinline=True)
def chain_poses(q, mi, mf, ws, chain, n):
    """World pose (``ws[WS_OR]``, ``ws[WS_OP]``) of the links ``chain[:n]`` (each after its
    parent: a support chain root first, or every link in order)."""
    for kk in range(n):
        k = chain[kk]
        jt = mi[k, MI_TYPE]
        ac = mi[k, MI_AXIS]
        if not ((jt == JT_REVOLUTE and 1 <= ac <= 3) or jt == JT_PRISMATIC or jt == JT_FREEFLYER):
            joint_pass_links(q, q, mi, mf, ws, np.int64(2), chain[kk:], np.int64(1))
            continue
        b = MF_HEADER + k * MF_STRIDE
        j = b + MF_JR
        q00 = mf[j]
        q01 = mf[j + 1]
        q02 = mf[j + 2]
        q10 = mf[j + 3]
        q11 = mf[j + 4]
        q12 = mf[j + 5]
        q20 = mf[j + 6]
        q21 = mf[j + 7]
        q22 = mf[j + 8]
        P0 = mf[b + MF_JP]
        P1 = mf[b + MF_JP + 1]
        P2 = mf[b + MF_JP + 2]
        x = q[mi[k, MI_IQ]]
        if jt == JT_PRISMATIC:
            # X_parent_link = (J, Jp + J a x)
            a0 = mf[b + MF_AXIS] * x
            a1 = mf[b + MF_AXIS + 1] * x
            a2 = mf[b + MF_AXIS + 2] * x
            P0 = P0 + q00 * a0 + q01 * a1 + q02 * a2
            P1 = P1 + q10 * a0 + q11 * a1 + q12 * a2
            P2 = P2 + q20 * a0 + q21 * a1 + q22 * a2
            R00, R01, R02, R10, R11, R12, R20, R21, R22 = q00, q01, q02, q10, q11, q12, q20, q21, q22
        elif jt == JT_FREEFLYER:
            # X_parent_link = (J R(quat), Jp + J p), by the general pass's own composition, which
            # also writes the pose in the parent (ws[WS_R], ws[WS_P]) as that pass leaves it
            iq = mi[k, MI_IQ]
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = _quat_matrix(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6])
            R00, R01, R02, R10, R11, R12, R20, R21, R22, P0, P1, P2 = _placed(
                mf, ws, b, k * WS_STRIDE, r00, r01, r02, r10, r11, r12, r20, r21, r22, q[iq], q[iq + 1], q[iq + 2]
            )
        else:
            c = math.cos(x)
            s = math.sin(x)
            if ac == 1:  # J Rx: columns 1, 2 turn
                R00 = q00
                R01 = q01 * c + q02 * s
                R02 = q01 * -s + q02 * c
                R10 = q10
                R11 = q11 * c + q12 * s
                R12 = q11 * -s + q12 * c
                R20 = q20
                R21 = q21 * c + q22 * s
                R22 = q21 * -s + q22 * c
            elif ac == 2:  # J Ry: columns 0, 2
                R00 = q00 * c + q02 * -s
                R01 = q01
                R02 = q00 * s + q02 * c
                R10 = q10 * c + q12 * -s
                R11 = q11
                R12 = q10 * s + q12 * c
                R20 = q20 * c + q22 * -s
                R21 = q21
                R22 = q20 * s + q22 * c
            else:  # J Rz: columns 0, 1
                R00 = q00 * c + q01 * s
                R01 = q00 * -s + q01 * c
                R02 = q02
                R10 = q10 * c + q11 * s
                R11 = q10 * -s + q11 * c
                R12 = q12
                R20 = q20 * c + q21 * s
                R21 = q20 * -s + q21 * c
                R22 = q22
        w = k * WS_STRIDE
        par = mi[k, MI_PARENT]
        if par < 0:
            ws[w + WS_OR] = R00
            ws[w + WS_OR + 1] = R01
            ws[w + WS_OR + 2] = R02
            ws[w + WS_OR + 3] = R10
            ws[w + WS_OR + 4] = R11
            ws[w + WS_OR + 5] = R12
            ws[w + WS_OR + 6] = R20
            ws[w + WS_OR + 7] = R21
            ws[w + WS_OR + 8] = R22
            ws[w + WS_OP] = P0
            ws[w + WS_OP + 1] = P1
            ws[w + WS_OP + 2] = P2
            continue
        wp = par * WS_STRIDE
        o00 = ws[wp + WS_OR]
        o01 = ws[wp + WS_OR + 1]
        o02 = ws[wp + WS_OR + 2]
        o10 = ws[wp + WS_OR + 3]
        o11 = ws[wp + WS_OR + 4]
        o12 = ws[wp + WS_OR + 5]
        o20 = ws[wp + WS_OR + 6]
        o21 = ws[wp + WS_OR + 7]
        o22 = ws[wp + WS_OR + 8]
        ws[w + WS_OR] = o00 * R00 + o01 * R10 + o02 * R20
        ws[w + WS_OR + 1] = o00 * R01 + o01 * R11 + o02 * R21
        ws[w + WS_OR + 2] = o00 * R02 + o01 * R12 + o02 * R22
        ws[w + WS_OR + 3] = o10 * R00 + o11 * R10 + o12 * R20
        ws[w + WS_OR + 4] = o10 * R01 + o11 * R11 + o12 * R21
        ws[w + WS_OR + 5] = o10 * R02 + o11 * R12 + o12 * R22
        ws[w + WS_OR + 6] = o20 * R00 + o21 * R10 + o22 * R20
        ws[w + WS_OR + 7] = o20 * R01 + o21 * R11 + o22 * R21
        ws[w + WS_OR + 8] = o20 * R02 + o21 * R12 + o22 * R22
        ws[w + WS_OP] = ws[wp + WS_OP] + o00 * P0 + o01 * P1 + o02 * P2
        ws[w + WS_OP + 1] = ws[wp + WS_OP + 1] + o10 * P0 + o11 * P1 + o12 * P2
        ws[w + WS_OP + 2] = ws[wp + WS_OP + 2] + o20 * P0 + o21 * P1 + o22 * P2
