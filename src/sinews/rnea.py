"""Recursive Newton-Euler inverse dynamics (RNEA).

Solves ``tau = M(q) a + C(q, v) v + g(q) - J^T f_ext`` in O(n):

* forward pass, per link i with parent p:  ``v_i = X_i_p v_p + S_i v_i``,
  ``a_i = X_i_p a_p + S_i a_i + c_i`` with ``c_i = cJ_i + v_i x S_i v_i`` and ``a_0 = -g``
  (gravity as a fictitious base acceleration);
* ``f_i = I_i a_i + v_i x* I_i v_i - f_ext_i``;
* backward pass: ``tau_i = S_i^T f_i``, ``f_p += X_p_i^* f_i``.

Source: Featherstone, *Rigid Body Dynamics Algorithms*, section 5.3 (Table 5.1); RBDL
``InverseDynamics``; Pinocchio ``rnea``.  Link quantities are kept in link axes.
"""

from __future__ import annotations

import numpy as np

from . import _rnea_kernels as K
from ._checks import output, raise_kernel_code, state3
from ._entry import Lazy
from .algorithms import NO_FORCES, get_data, link_forces

__all__ = ["rnea", "nonlinear_effects", "gravity_torques"]


def rnea(model, q, v, a, f_ext=None, data=None, out=None) -> np.ndarray:
    """Joint forces ``tau`` that produce accelerations ``a`` at state ``(q, v)``.

    ``f_ext``: external wrenches per body (``(nbodies, 6)`` array or ``{body: wrench}``), each
    ``[torque; force]`` in the body's own frame about its origin.  ``out``: optional
    preallocated result vector of length ``nv``.
    """
    if f_ext is None and data is None and out is None:  # the fast path (sinews._entry)
        try:
            mi, mf, ws, nv = model._tls.fast
            tau = _empty(nv)
            if not _RNEA(q, v, a, tau, mi, mf, ws):
                return tau
        except Exception:
            pass
    return _rnea(model, q, v, a, f_ext, data, out)


_empty = np.empty
_RNEA = Lazy("rnea_x", globals(), "_RNEA")


def _rnea(model, q, v, a, f_ext, data, out) -> np.ndarray:
    """The checked path of :func:`rnea`."""
    d = get_data(model, data)
    c = d.c
    q, v, a = state3(q, v, a, c.nq, c.nv, ("q", "v", "a"))
    F, flag = link_forces(model, d, f_ext) if f_ext is not None else (NO_FORCES, 0)
    tau = np.empty(c.nv) if out is None else output(out, c.nv)
    if c.nlinks:
        code = K.rnea(q, v, a, F, tau, c.mi, c.mf, d.ws, flag)
        if code:
            raise_kernel_code(code, ("q", "v", "a", "f_ext"), model)
    return tau


def nonlinear_effects(model, q, v, f_ext=None, data=None) -> np.ndarray:
    """``C(q, v) v + g(q) - J^T f_ext``: RNEA with zero acceleration."""
    d = get_data(model, data)
    return rnea(model, q, v, np.zeros(d.c.nv), f_ext, d)


def gravity_torques(model, q, data=None) -> np.ndarray:
    """``g(q)``: RNEA with zero velocity and acceleration."""
    d = get_data(model, data)
    z = np.zeros(d.c.nv)
    return rnea(model, q, z, z, None, d)
