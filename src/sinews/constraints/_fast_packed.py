"""The packed data of the one-call compiled contact kernels, and the steps they share.

The one-call kernels of contacts-only sets (forward dynamics and impulses; range space in
:mod:`sinews.constraints._fast_range_space`, null space in
:mod:`sinews.constraints._fast_null_space`) take their arrays packed by
:class:`sinews.constraints._compiled_contacts.CompiledContacts`: ``pi`` (int64, static: model
topology and the contact layout) and ``ps`` (float64, one per workspace: the contact points and
normals, a private tree workspace and the solver's scratch); the model's ``mf`` is passed as it
is (gravity can change after binding).  Numba's call dispatch costs about 0.1 us per array
argument, so the call takes 10.  This module names the header of ``pi`` (``P_*``: sizes, then
the offsets of the int regions in ``pi`` and of the float regions in ``ps``) and the flags
(``F_*``), and holds the steps both methods share:

* :func:`_tree_and_rows`: input checks, one joint pass, CRBA, RNEA and the contact rows;
* :func:`_zero_row_tol`: the magnitude below which a contact row counts as zero;
* :func:`_result`: the residual and finiteness verdict of a solve.
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit

from .. import _kernels as K
from ._fast_rows import _chain_rows
from ._linalg import ZERO_ROW_RTOL

# pi header: sizes, then offsets of the int regions in pi and of the float regions in ps
P_NQ, P_NL, P_NV, P_NPTS, P_NROWS = 0, 1, 2, 3, 4
P_MAXM = 5  # longest support chain: G and Y are stored per row along its point's chain
P_MI, P_LAM, P_LINKS, P_PPTR, P_CPTR, P_CHAIN, P_COMMON = 6, 7, 8, 9, 10, 11, 12
P_RLINK, P_N, P_WS, P_NWS = 13, 14, 15, 16
P_ALPHA2, P_BOTTOM, P_G, P_Y, P_GAMMA, P_H, P_Z, P_K, P_RHS, P_ZERO, P_C = 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27
P_NS = 28  # scratch of the null-space kernel (sinews.constraints._fast_null_space)
P_HEADER = 29

# flags
F_FEXT, F_IMPULSE, F_ZERO_TARGET = 1, 2, 4


@njit(inline="always", cache=True)
def _tree_and_rows(q, v, tau, fext, flags, mi, mf, ws, H, C, zero, links, r_link, pptr, N, cptr,
                   chain, G, Y, gamma, alpha2, bottom):
    """Steps 1-2 shared by the compiled methods (:func:`contact_range_space`,
    ``_fast_null_space.contact_null_space``): input checks, one joint pass, CRBA into ``H``,
    for dynamics RNEA into ``C`` and the Baumgarte terms (``bottom = gamma``), the contact rows
    ``G`` (and their copy ``Y``) on the support chains; for impulses the target is zeroed with
    ``F_ZERO_TARGET``.  Returns 0 or a negative input code (-1 to -4: q, v, tau, f_ext not
    finite, or a zero-quaternion code)."""
    nv = H.shape[0]
    npts = pptr.shape[0] - 1
    if (flags & F_IMPULSE) != 0:
        if K.check_finite(q) >= 0:
            return -1
        if K.check_finite(v) >= 0:
            return -2
        K.joint_pass(q, v, mi, mf, ws, np.int64(2))
        K.crba_core(H, mi, mf, ws)
        _chain_rows(mi, mf, ws, nv, links, r_link, pptr, N, cptr, chain, G, Y, gamma, False)
        if flags & F_ZERO_TARGET:
            for r in range(bottom.shape[0]):
                bottom[r] = 0.0
        return 0
    code = K.check_inputs(q, v, tau, fext, flags & F_FEXT)
    if code == 0:
        code = K.check_q(q, mi)
    if code != 0:
        return code
    K.joint_pass(q, v, mi, mf, ws, np.int64(3))
    K.crba_core(H, mi, mf, ws)
    K.rnea_core(zero, fext, C, mi, mf, ws, flags & F_FEXT)
    _chain_rows(mi, mf, ws, nv, links, r_link, pptr, N, cptr, chain, G, Y, gamma, True)
    for p in range(npts):
        for r in range(pptr[p], pptr[p + 1]):
            if alpha2[r] != 0.0:
                s = 0.0
                c0 = cptr[p]
                for t in range(cptr[p + 1] - c0):
                    s += G[r, t] * v[chain[c0 + t]]
                gamma[r] -= alpha2[r] * s
            bottom[r] = gamma[r]
    return 0


@njit(inline="always", cache=True)
def _zero_row_tol(G, pptr, cptr):
    """The magnitude below which a contact row counts as zero: ``ZERO_ROW_RTOL max(1, max|G|)``
    over the stored chain entries."""
    gmax = 0.0
    for p in range(pptr.shape[0] - 1):
        for r in range(pptr[p], pptr[p + 1]):
            for t in range(cptr[p + 1] - cptr[p]):
                if abs(G[r, t]) > gmax:
                    gmax = abs(G[r, t])
    return ZERO_ROW_RTOL * max(1.0, gmax)


@njit(inline="always", cache=True)
def _result(G, x, mult, bottom, pptr, cptr, chain, nv, n):
    """``(code, residual, converged)`` of a compiled solve: the residual ``max |G x - bottom|``
    over the chain rows, converged when it is at most ``1e-9 (1 + max(|G x|, |bottom|))``;
    code 3 (the general path takes over) when ``x`` or ``mult`` is not finite."""
    res = 0.0
    scale = 0.0
    for p in range(pptr.shape[0] - 1):
        c0 = cptr[p]
        for r in range(pptr[p], pptr[p + 1]):
            s = 0.0
            for t in range(cptr[p + 1] - c0):
                s += G[r, t] * x[chain[c0 + t]]
            e = abs(s - bottom[r])
            if e > res:
                res = e
            if abs(s) > scale:
                scale = abs(s)
            if abs(bottom[r]) > scale:
                scale = abs(bottom[r])
    for i in range(nv):
        if not math.isfinite(x[i]):
            return 3, res, False
    for r in range(n):
        if not math.isfinite(mult[r]):
            return 3, res, False
    return 0, res, res <= 1e-9 * (1.0 + scale)
