"""Recursive Newton-Euler inverse dynamics (RNEA).

Solves ``tau = M(q) a + C(q, v) v + g(q) - J^T f_ext`` in O(n):

* forward pass, per link i with parent p:  ``v_i = X_i_p v_p + S_i v_i``,
  ``a_i = X_i_p a_p + S_i a_i + c_i`` with ``c_i = cJ_i + v_i x S_i v_i`` and ``a_0 = -g``
  (gravity as a fictitious base acceleration);
* ``f_i = I_i a_i + v_i x* I_i v_i - f_ext_i``;
* backward pass: ``tau_i = S_i^T f_i + armature_i a_i``, ``f_p += X_p_i^* f_i``.

``M(q)`` includes the joints' armature (``model.armature``, rotor inertia reflected through
the gearbox: ``diag(armature)`` added to ``M``, as Pinocchio's ``model.armature``).

Source: Featherstone, *Rigid Body Dynamics Algorithms*, section 5.3 (Table 5.1); RBDL
``InverseDynamics``; Pinocchio ``rnea``.  Link quantities are kept in link axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _rnea_kernels as K
from ._checks import output, raise_kernel_code, state3
from . import _native_entry as N
from ._entry import take_over
from ._native import Context, Entry
from .algorithms import NO_FORCES, get_data, link_forces

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["rnea", "nonlinear_effects", "gravity_torques"]


def rnea(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    a: ArrayLike,
    f_ext: ArrayLike | dict | None = None,
    data: Data | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Joint forces ``tau`` (nv,) that produce accelerations ``a`` (nv,) at the configuration
    ``q`` (nq,) and velocity ``v`` (nv,) (the joints' armature included).

    ``f_ext``: external wrenches per body (``(nbodies, 6)`` array or ``{body: wrench}``), each
    ``[torque; force]`` in the body's own frame about its origin.  ``data``: a workspace
    (``model.data()``; default the calling thread's own).  ``out``: optional preallocated result
    vector of length ``nv``.
    """
    if f_ext is None and data is None:  # the fast path (sinews._entry)
        try:
            cx, nv, _ = model._fast
            tau = _empty(nv) if out is None else out  # (an out the entry point refuses: the checked path)
            if _RNEA(cx, q, v, a, tau) is tau or ((f := take_over(model)) and _RNEA(f[0], q, v, a, tau) is tau):
                return tau
        except Exception:
            pass
    return _rnea(model, q, v, a, f_ext, data, out)


_empty = np.empty
_RNEA = Entry(N.rnea_n, N.rnea_f, globals(), "_RNEA", Context)


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


def nonlinear_effects(
    model: Model, q: ArrayLike, v: ArrayLike, f_ext: ArrayLike | dict | None = None, data: Data | None = None
) -> np.ndarray:
    """``C(q, v) v + g(q) - J^T f_ext`` (nv,) at ``q`` (nq,), ``v`` (nv,): RNEA with zero
    acceleration."""
    d = get_data(model, data)
    return rnea(model, q, v, np.zeros(d.c.nv), f_ext, d)


def gravity_torques(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """``g(q)`` (nv,) at ``q`` (nq,): RNEA with zero velocity and acceleration."""
    d = get_data(model, data)
    z = np.zeros(d.c.nv)
    return rnea(model, q, z, z, None, d)
