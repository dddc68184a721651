"""Numba kernels of the articulated-body algorithm over the compiled model arrays (``mi``, ``mf``)
and a workspace (``ws``); see :mod:`sinews._joint_pass` for the design.  Equations and sources
are stated in the public module (``sinews.aba``), and ``aba_x`` is the entry kernel of its fast
path (``sinews._entry``)."""

import numpy as np
from ._jit import njit

from ._layout import (
    MF_ARM,
    MF_H,
    MF_HEADER,
    MF_IO,
    MF_MASS,
    MF_STRIDE,
    MI_IV,
    MI_NV,
    MI_PARENT,
    TMP_D,
    TMP_IA,
    TMP_UD,
    WS_A,
    WS_C,
    WS_DINV,
    WS_IA,
    WS_P,
    WS_PA,
    WS_R,
    WS_STRIDE,
    WS_V,
)
from ._checks import NOT_FINITE
from ._joint_pass import (
    BAD_SHAPE,
    _cross,
    _cross_force,
    _dims,
    _inertia_times,
    _parent_to_child,
    _rot_gen,
    _rot_sym,
    check_finite,
    check_inputs,
    check_q,
    joint_pass,
)

# ----------------------------------------------------------------------------------------------
# ABA
#
# Articulated inertias are symmetric 6x6 matrices [[A, B], [B^T, C]] stored as 21 values:
# A (xx, yy, zz, xy, xz, yz), B (row-major 3x3), C (xx, yy, zz, xy, xz, yz).


@njit(cache=True)
def aba(q, v, tau, fext, qdd, mi, mf, ws, flags):
    """qdd = FD(q, v, tau, fext) by the articulated-body algorithm.  flags & 1: use fext;
    flags & 2: no gravity; flags & 4: ignore velocities (then qdd = M^-1 (tau + J^T fext)).
    Returns 0, -1/-2/-3/-4 if q/v/tau/fext is not finite, a zero-quaternion code
    (:func:`check_q`), NOT_FINITE if qdd overflowed, or 1 + the index of a link whose
    D = S^T IA S is not positive definite (a massless subtree)."""
    nl = mi.shape[0]
    nv = mi[nl - 1, MI_IV] + mi[nl - 1, MI_NV]
    s_off = nl * WS_STRIDE
    u6_off = s_off + 6 * nv
    u_off = u6_off + 6 * nv
    tmp = u_off + nv
    tIa = tmp + TMP_IA
    tUD = tmp + TMP_UD
    tD = tmp + TMP_D
    novel = flags & 4
    code = check_inputs(q, v, tau, fext, flags & 1)
    if code == 0:
        code = check_q(q, mi)
    if code != 0:
        return code
    joint_pass(q, v, mi, mf, ws, 0 if novel else 1)
    if flags & 2:
        g0 = 0.0
        g1 = 0.0
        g2 = 0.0
    else:
        g0 = mf[0]
        g1 = mf[1]
        g2 = mf[2]
    for k in range(nl):
        b = MF_HEADER + k * MF_STRIDE
        w = k * WS_STRIDE
        m = mf[b + MF_MASS]
        h0 = mf[b + MF_H]
        h1 = mf[b + MF_H + 1]
        h2 = mf[b + MF_H + 2]
        ixx = mf[b + MF_IO]
        iyy = mf[b + MF_IO + 1]
        izz = mf[b + MF_IO + 2]
        ixy = mf[b + MF_IO + 3]
        ixz = mf[b + MF_IO + 4]
        iyz = mf[b + MF_IO + 5]
        ia = w + WS_IA
        # [[Io, [h]x], [[h]x^T, m 1]]
        ws[ia] = ixx
        ws[ia + 1] = iyy
        ws[ia + 2] = izz
        ws[ia + 3] = ixy
        ws[ia + 4] = ixz
        ws[ia + 5] = iyz
        ws[ia + 6] = 0.0
        ws[ia + 7] = -h2
        ws[ia + 8] = h1
        ws[ia + 9] = h2
        ws[ia + 10] = 0.0
        ws[ia + 11] = -h0
        ws[ia + 12] = -h1
        ws[ia + 13] = h0
        ws[ia + 14] = 0.0
        ws[ia + 15] = m
        ws[ia + 16] = m
        ws[ia + 17] = m
        ws[ia + 18] = 0.0
        ws[ia + 19] = 0.0
        ws[ia + 20] = 0.0
        if novel:
            pn0 = 0.0
            pn1 = 0.0
            pn2 = 0.0
            pf0 = 0.0
            pf1 = 0.0
            pf2 = 0.0
            for i in range(6):
                ws[w + WS_C + i] = 0.0
        else:
            vw0 = ws[w + WS_V]
            vw1 = ws[w + WS_V + 1]
            vw2 = ws[w + WS_V + 2]
            vv0 = ws[w + WS_V + 3]
            vv1 = ws[w + WS_V + 4]
            vv2 = ws[w + WS_V + 5]
            gn0, gn1, gn2, gf0, gf1, gf2 = _inertia_times(
                m, h0, h1, h2, ixx, iyy, izz, ixy, ixz, iyz, vw0, vw1, vw2, vv0, vv1, vv2
            )
            pn0, pn1, pn2, pf0, pf1, pf2 = _cross_force(
                vw0, vw1, vw2, vv0, vv1, vv2, gn0, gn1, gn2, gf0, gf1, gf2
            )
        if flags & 1:
            pn0 -= fext[k, 0]
            pn1 -= fext[k, 1]
            pn2 -= fext[k, 2]
            pf0 -= fext[k, 3]
            pf1 -= fext[k, 4]
            pf2 -= fext[k, 5]
        ws[w + WS_PA] = pn0
        ws[w + WS_PA + 1] = pn1
        ws[w + WS_PA + 2] = pn2
        ws[w + WS_PA + 3] = pf0
        ws[w + WS_PA + 4] = pf1
        ws[w + WS_PA + 5] = pf2
    # backward pass
    for k in range(nl - 1, -1, -1):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        ia = w + WS_IA
        dinv = w + WS_DINV
        axx = ws[ia]
        ayy = ws[ia + 1]
        azz = ws[ia + 2]
        axy = ws[ia + 3]
        axz = ws[ia + 4]
        ayz = ws[ia + 5]
        b00 = ws[ia + 6]
        b01 = ws[ia + 7]
        b02 = ws[ia + 8]
        b10 = ws[ia + 9]
        b11 = ws[ia + 10]
        b12 = ws[ia + 11]
        b20 = ws[ia + 12]
        b21 = ws[ia + 13]
        b22 = ws[ia + 14]
        cxx = ws[ia + 15]
        cyy = ws[ia + 16]
        czz = ws[ia + 17]
        cxy = ws[ia + 18]
        cxz = ws[ia + 19]
        cyz = ws[ia + 20]
        pn0 = ws[w + WS_PA]
        pn1 = ws[w + WS_PA + 1]
        pn2 = ws[w + WS_PA + 2]
        pf0 = ws[w + WS_PA + 3]
        pf1 = ws[w + WS_PA + 4]
        pf2 = ws[w + WS_PA + 5]
        if nvj == 1:
            so = s_off + 6 * iv
            sw0 = ws[so]
            sw1 = ws[so + 1]
            sw2 = ws[so + 2]
            sv0 = ws[so + 3]
            sv1 = ws[so + 4]
            sv2 = ws[so + 5]
            # U = IA S
            ut0 = axx * sw0 + axy * sw1 + axz * sw2 + b00 * sv0 + b01 * sv1 + b02 * sv2
            ut1 = axy * sw0 + ayy * sw1 + ayz * sw2 + b10 * sv0 + b11 * sv1 + b12 * sv2
            ut2 = axz * sw0 + ayz * sw1 + azz * sw2 + b20 * sv0 + b21 * sv1 + b22 * sv2
            ub0 = b00 * sw0 + b10 * sw1 + b20 * sw2 + cxx * sv0 + cxy * sv1 + cxz * sv2
            ub1 = b01 * sw0 + b11 * sw1 + b21 * sw2 + cxy * sv0 + cyy * sv1 + cyz * sv2
            ub2 = b02 * sw0 + b12 * sw1 + b22 * sw2 + cxz * sv0 + cyz * sv1 + czz * sv2
            uo = u6_off + 6 * iv
            ws[uo] = ut0
            ws[uo + 1] = ut1
            ws[uo + 2] = ut2
            ws[uo + 3] = ub0
            ws[uo + 4] = ub1
            ws[uo + 5] = ub2
            # D = S^T IA S + armature (C2)
            d = sw0 * ut0 + sw1 * ut1 + sw2 * ut2 + sv0 * ub0 + sv1 * ub1 + sv2 * ub2
            d += mf[MF_HEADER + k * MF_STRIDE + MF_ARM]
            if not d > 0.0:
                return k + 1
            uu = tau[iv] - (sw0 * pn0 + sw1 * pn1 + sw2 * pn2 + sv0 * pf0 + sv1 * pf1 + sv2 * pf2)
            ws[u_off + iv] = uu
            dinvv = 1.0 / d
            ws[dinv] = dinvv
            if par < 0:
                continue
            # Ia = IA - U U^T / D ; pa = pA + Ia c + U u / D
            e0 = ut0 * dinvv
            e1 = ut1 * dinvv
            e2 = ut2 * dinvv
            f0 = ub0 * dinvv
            f1 = ub1 * dinvv
            f2 = ub2 * dinvv
            axx -= e0 * ut0
            ayy -= e1 * ut1
            azz -= e2 * ut2
            axy -= e0 * ut1
            axz -= e0 * ut2
            ayz -= e1 * ut2
            b00 -= e0 * ub0
            b01 -= e0 * ub1
            b02 -= e0 * ub2
            b10 -= e1 * ub0
            b11 -= e1 * ub1
            b12 -= e1 * ub2
            b20 -= e2 * ub0
            b21 -= e2 * ub1
            b22 -= e2 * ub2
            cxx -= f0 * ub0
            cyy -= f1 * ub1
            czz -= f2 * ub2
            cxy -= f0 * ub1
            cxz -= f0 * ub2
            cyz -= f1 * ub2
            pn0 += e0 * uu
            pn1 += e1 * uu
            pn2 += e2 * uu
            pf0 += f0 * uu
            pf1 += f1 * uu
            pf2 += f2 * uu
        else:
            # generic multi-dof joint: expand IA to a full 6x6 in tmp
            for r in range(3):
                for c in range(3):
                    ws[tIa + 6 * r + 3 + c] = ws[ia + 6 + 3 * r + c]
                    ws[tIa + 6 * (3 + c) + r] = ws[ia + 6 + 3 * r + c]
            ws[tIa] = axx
            ws[tIa + 7] = ayy
            ws[tIa + 14] = azz
            ws[tIa + 1] = axy
            ws[tIa + 6] = axy
            ws[tIa + 2] = axz
            ws[tIa + 12] = axz
            ws[tIa + 8] = ayz
            ws[tIa + 13] = ayz
            ws[tIa + 21] = cxx
            ws[tIa + 28] = cyy
            ws[tIa + 35] = czz
            ws[tIa + 22] = cxy
            ws[tIa + 27] = cxy
            ws[tIa + 23] = cxz
            ws[tIa + 33] = cxz
            ws[tIa + 29] = cyz
            ws[tIa + 34] = cyz
            # U = IA S ; u = tau - S^T pA
            for i in range(nvj):
                so = s_off + 6 * (iv + i)
                uo = u6_off + 6 * (iv + i)
                for r in range(6):
                    acc = 0.0
                    for c in range(6):
                        acc += ws[tIa + 6 * r + c] * ws[so + c]
                    ws[uo + r] = acc
                ws[u_off + iv + i] = tau[iv + i] - (
                    ws[so] * pn0 + ws[so + 1] * pn1 + ws[so + 2] * pn2
                    + ws[so + 3] * pf0 + ws[so + 4] * pf1 + ws[so + 5] * pf2
                )
            for i in range(nvj):
                for j in range(nvj):
                    so = s_off + 6 * (iv + i)
                    uo = u6_off + 6 * (iv + j)
                    d = 0.0
                    for r in range(6):
                        d += ws[so + r] * ws[uo + r]
                    if i == j:  # D = S^T IA S + diag(armature) (C2)
                        d += mf[MF_HEADER + k * MF_STRIDE + MF_ARM + i]
                    ws[tD + nvj * i + j] = d
                    ws[dinv + nvj * i + j] = 1.0 if i == j else 0.0
            # Gauss-Jordan inverse (D is symmetric positive definite: no pivoting needed)
            for c in range(nvj):
                piv = ws[tD + nvj * c + c]
                if not piv > 0.0:
                    return k + 1
                inv = 1.0 / piv
                for j in range(nvj):
                    ws[tD + nvj * c + j] *= inv
                    ws[dinv + nvj * c + j] *= inv
                for r in range(nvj):
                    if r != c:
                        f = ws[tD + nvj * r + c]
                        if f != 0.0:
                            for j in range(nvj):
                                ws[tD + nvj * r + j] -= f * ws[tD + nvj * c + j]
                                ws[dinv + nvj * r + j] -= f * ws[dinv + nvj * c + j]
            if par < 0:
                continue
            # UD = U Dinv (6 x nvj)
            for r in range(6):
                for j in range(nvj):
                    acc = 0.0
                    for i in range(nvj):
                        acc += ws[u6_off + 6 * (iv + i) + r] * ws[dinv + nvj * i + j]
                    ws[tUD + nvj * r + j] = acc
            # Ia = IA - UD U^T (into tmp) ; pa = pA + UD u
            for r in range(6):
                for c in range(6):
                    acc = ws[tIa + 6 * r + c]
                    for i in range(nvj):
                        acc -= ws[tUD + nvj * r + i] * ws[u6_off + 6 * (iv + i) + c]
                    ws[tIa + 6 * r + c] = acc
            for i in range(nvj):
                ui = ws[u_off + iv + i]
                pn0 += ws[tUD + i] * ui
                pn1 += ws[tUD + nvj + i] * ui
                pn2 += ws[tUD + 2 * nvj + i] * ui
                pf0 += ws[tUD + 3 * nvj + i] * ui
                pf1 += ws[tUD + 4 * nvj + i] * ui
                pf2 += ws[tUD + 5 * nvj + i] * ui
            axx = ws[tIa]
            ayy = ws[tIa + 7]
            azz = ws[tIa + 14]
            axy = ws[tIa + 1]
            axz = ws[tIa + 2]
            ayz = ws[tIa + 8]
            b00 = ws[tIa + 3]
            b01 = ws[tIa + 4]
            b02 = ws[tIa + 5]
            b10 = ws[tIa + 9]
            b11 = ws[tIa + 10]
            b12 = ws[tIa + 11]
            b20 = ws[tIa + 15]
            b21 = ws[tIa + 16]
            b22 = ws[tIa + 17]
            cxx = ws[tIa + 21]
            cyy = ws[tIa + 28]
            czz = ws[tIa + 35]
            cxy = ws[tIa + 22]
            cxz = ws[tIa + 23]
            cyz = ws[tIa + 29]
        # pa += Ia c
        c0 = ws[w + WS_C]
        c1 = ws[w + WS_C + 1]
        c2 = ws[w + WS_C + 2]
        c3 = ws[w + WS_C + 3]
        c4 = ws[w + WS_C + 4]
        c5 = ws[w + WS_C + 5]
        pn0 += axx * c0 + axy * c1 + axz * c2 + b00 * c3 + b01 * c4 + b02 * c5
        pn1 += axy * c0 + ayy * c1 + ayz * c2 + b10 * c3 + b11 * c4 + b12 * c5
        pn2 += axz * c0 + ayz * c1 + azz * c2 + b20 * c3 + b21 * c4 + b22 * c5
        pf0 += b00 * c0 + b10 * c1 + b20 * c2 + cxx * c3 + cxy * c4 + cxz * c5
        pf1 += b01 * c0 + b11 * c1 + b21 * c2 + cxy * c3 + cyy * c4 + cyz * c5
        pf2 += b02 * c0 + b12 * c1 + b22 * c2 + cxz * c3 + cyz * c4 + czz * c5
        # to the parent: pA_p += X* pa ; IA_p += X* Ia X^-1
        wp = par * WS_STRIDE
        R00 = ws[w + WS_R]
        R01 = ws[w + WS_R + 1]
        R02 = ws[w + WS_R + 2]
        R10 = ws[w + WS_R + 3]
        R11 = ws[w + WS_R + 4]
        R12 = ws[w + WS_R + 5]
        R20 = ws[w + WS_R + 6]
        R21 = ws[w + WS_R + 7]
        R22 = ws[w + WS_R + 8]
        P0 = ws[w + WS_P]
        P1 = ws[w + WS_P + 1]
        P2 = ws[w + WS_P + 2]
        gf0 = R00 * pf0 + R01 * pf1 + R02 * pf2
        gf1 = R10 * pf0 + R11 * pf1 + R12 * pf2
        gf2 = R20 * pf0 + R21 * pf1 + R22 * pf2
        x0, x1, x2 = _cross(P0, P1, P2, gf0, gf1, gf2)
        ws[wp + WS_PA] += R00 * pn0 + R01 * pn1 + R02 * pn2 + x0
        ws[wp + WS_PA + 1] += R10 * pn0 + R11 * pn1 + R12 * pn2 + x1
        ws[wp + WS_PA + 2] += R20 * pn0 + R21 * pn1 + R22 * pn2 + x2
        ws[wp + WS_PA + 3] += gf0
        ws[wp + WS_PA + 4] += gf1
        ws[wp + WS_PA + 5] += gf2
        # rotate the blocks
        axx, ayy, azz, axy, axz, ayz = _rot_sym(R00, R01, R02, R10, R11, R12, R20, R21, R22, axx, ayy, azz, axy, axz, ayz)
        cxx, cyy, czz, cxy, cxz, cyz = _rot_sym(R00, R01, R02, R10, R11, R12, R20, R21, R22, cxx, cyy, czz, cxy, cxz, cyz)
        b00, b01, b02, b10, b11, b12, b20, b21, b22 = _rot_gen(
            R00, R01, R02, R10, R11, R12, R20, R21, R22, b00, b01, b02, b10, b11, b12, b20, b21, b22
        )
        # translate: C12 = B12 + P B22 ; C11 = B11 + P B12^T - C12 P ; C22 = B22
        x0, x1, x2 = _cross(P0, P1, P2, cxx, cxy, cxz)
        y0, y1, y2 = _cross(P0, P1, P2, cxy, cyy, cyz)
        z0, z1, z2 = _cross(P0, P1, P2, cxz, cyz, czz)
        e00 = b00 + x0
        e10 = b10 + x1
        e20 = b20 + x2
        e01 = b01 + y0
        e11 = b11 + y1
        e21 = b21 + y2
        e02 = b02 + z0
        e12 = b12 + z1
        e22 = b22 + z2
        # X = P B12^T: column j is p x (row j of B12)
        x0, x1, x2 = _cross(P0, P1, P2, b00, b01, b02)
        y0, y1, y2 = _cross(P0, P1, P2, b10, b11, b12)
        z0, z1, z2 = _cross(P0, P1, P2, b20, b21, b22)
        # Y = C12 P: row i is (row i of C12) x p
        k00, k01, k02 = _cross(e00, e01, e02, P0, P1, P2)
        k10, k11, k12 = _cross(e10, e11, e12, P0, P1, P2)
        k20, k21, k22 = _cross(e20, e21, e22, P0, P1, P2)
        ipa = wp + WS_IA
        ws[ipa] += axx + x0 - k00
        ws[ipa + 1] += ayy + y1 - k11
        ws[ipa + 2] += azz + z2 - k22
        ws[ipa + 3] += axy + y0 - k01
        ws[ipa + 4] += axz + z0 - k02
        ws[ipa + 5] += ayz + z1 - k12
        ws[ipa + 6] += e00
        ws[ipa + 7] += e01
        ws[ipa + 8] += e02
        ws[ipa + 9] += e10
        ws[ipa + 10] += e11
        ws[ipa + 11] += e12
        ws[ipa + 12] += e20
        ws[ipa + 13] += e21
        ws[ipa + 14] += e22
        ws[ipa + 15] += cxx
        ws[ipa + 16] += cyy
        ws[ipa + 17] += czz
        ws[ipa + 18] += cxy
        ws[ipa + 19] += cxz
        ws[ipa + 20] += cyz
    # forward pass
    for k in range(nl):
        par = mi[k, MI_PARENT]
        iv = mi[k, MI_IV]
        nvj = mi[k, MI_NV]
        w = k * WS_STRIDE
        R00 = ws[w + WS_R]
        R01 = ws[w + WS_R + 1]
        R02 = ws[w + WS_R + 2]
        R10 = ws[w + WS_R + 3]
        R11 = ws[w + WS_R + 4]
        R12 = ws[w + WS_R + 5]
        R20 = ws[w + WS_R + 6]
        R21 = ws[w + WS_R + 7]
        R22 = ws[w + WS_R + 8]
        # a = X_i_parent a_parent + c (+ S qdd below); the world's acceleration is [0; -g]
        if par >= 0:
            wp = par * WS_STRIDE
            pw0 = ws[wp + WS_A]
            pw1 = ws[wp + WS_A + 1]
            pw2 = ws[wp + WS_A + 2]
            pv0 = ws[wp + WS_A + 3]
            pv1 = ws[wp + WS_A + 4]
            pv2 = ws[wp + WS_A + 5]
        else:
            pw0 = 0.0
            pw1 = 0.0
            pw2 = 0.0
            pv0 = -g0
            pv1 = -g1
            pv2 = -g2
        aw0, aw1, aw2, av0, av1, av2 = _parent_to_child(
            R00, R01, R02, R10, R11, R12, R20, R21, R22,
            ws[w + WS_P], ws[w + WS_P + 1], ws[w + WS_P + 2], pw0, pw1, pw2, pv0, pv1, pv2,
        )
        aw0 += ws[w + WS_C]
        aw1 += ws[w + WS_C + 1]
        aw2 += ws[w + WS_C + 2]
        av0 += ws[w + WS_C + 3]
        av1 += ws[w + WS_C + 4]
        av2 += ws[w + WS_C + 5]
        dinv = w + WS_DINV
        if nvj == 1:
            uo = u6_off + 6 * iv
            acc = ws[dinv] * (
                ws[u_off + iv]
                - (
                    ws[uo] * aw0
                    + ws[uo + 1] * aw1
                    + ws[uo + 2] * aw2
                    + ws[uo + 3] * av0
                    + ws[uo + 4] * av1
                    + ws[uo + 5] * av2
                )
            )
            qdd[iv] = acc
            so = s_off + 6 * iv
            aw0 += ws[so] * acc
            aw1 += ws[so + 1] * acc
            aw2 += ws[so + 2] * acc
            av0 += ws[so + 3] * acc
            av1 += ws[so + 4] * acc
            av2 += ws[so + 5] * acc
        else:
            # rhs_i = u_i - U_i . a'
            for i in range(nvj):
                uo = u6_off + 6 * (iv + i)
                ws[tD + i] = ws[u_off + iv + i] - (
                    ws[uo] * aw0
                    + ws[uo + 1] * aw1
                    + ws[uo + 2] * aw2
                    + ws[uo + 3] * av0
                    + ws[uo + 4] * av1
                    + ws[uo + 5] * av2
                )
            for i in range(nvj):
                acc = 0.0
                for j in range(nvj):
                    acc += ws[dinv + nvj * i + j] * ws[tD + j]
                qdd[iv + i] = acc
                so = s_off + 6 * (iv + i)
                aw0 += ws[so] * acc
                aw1 += ws[so + 1] * acc
                aw2 += ws[so + 2] * acc
                av0 += ws[so + 3] * acc
                av1 += ws[so + 4] * acc
                av2 += ws[so + 5] * acc
        ws[w + WS_A] = aw0
        ws[w + WS_A + 1] = aw1
        ws[w + WS_A + 2] = aw2
        ws[w + WS_A + 3] = av0
        ws[w + WS_A + 4] = av1
        ws[w + WS_A + 5] = av2
    if check_finite(qdd) >= 0:
        return NOT_FINITE
    return 0


# ----------------------------------------------------------------------------------------------
# Entry kernels of the public fast path (see sinews._entry): the argument shapes are checked
# here, so that the Python wrapper only has to pick the workspace.  Each is compiled for one
# signature (contiguous, writeable, aligned float64 arrays) and dispatched by Numba's C
# dispatcher with compilation disabled; any other argument type raises there and the wrapper
# falls back to its checked path.


@njit(cache=True)
def aba_x(q, v, tau, qdd, mi, mf, ws):
    """:func:`aba` without external forces, after checking the lengths of q, v, tau and qdd."""
    nq, nv = _dims(mi)
    if q.shape[0] != nq or v.shape[0] != nv or tau.shape[0] != nv or qdd.shape[0] != nv:
        return BAD_SHAPE
    return aba(q, v, tau, ws[:6].reshape((1, 6)), qdd, mi, mf, ws, np.int64(0))  # int64, not Literal[int](0): the checked path's specialisation
