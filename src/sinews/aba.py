"""Articulated-body algorithm (ABA): forward dynamics in O(n).

Solves ``M(q) qdd = tau - C(q, v) v - g(q) + J^T f_ext`` without forming ``M``:

* pass 1 (root to leaves): ``v_i``, ``c_i``, ``IA_i = I_i``, ``pA_i = v_i x* I_i v_i - f_ext_i``;
* pass 2 (leaves to root): ``U_i = IA_i S_i``, ``D_i = S_i^T U_i + diag(armature_i)`` (the
  joint's armature, ``model.armature``, as in Pinocchio), ``u_i = tau_i - S_i^T pA_i``,
  ``Ia = IA_i - U_i D_i^-1 U_i^T``, ``pa = pA_i + Ia c_i + U_i D_i^-1 u_i``, added to the parent
  through ``X_p_i^*``;
* pass 3 (root to leaves): ``a' = X_i_p a_p + c_i``, ``qdd_i = D_i^-1 (u_i - U_i^T a')``,
  ``a_i = a' + S_i qdd_i``, with ``a_0 = -g``.

Source: Featherstone, *Rigid Body Dynamics Algorithms*, section 7.3 (Table 7.1); RBDL
``ForwardDynamics``; Pinocchio ``aba``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _aba_kernels as K
from ._checks import output, raise_kernel_code, state3
from . import _native_entry as N
from ._entry import take_over
from ._native import Context, Entry
from .algorithms import NO_FORCES, get_data, link_forces

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["aba"]


def _run(model, d, q, v, tau, F, flags, out, names=("q", "v", "tau", "f_ext")):
    c = d.c
    if not c.nlinks:
        return out
    code = K.aba(q, v, tau, F, out, c.mi, c.mf, d.ws, flags)
    if code != 0:
        if code < 0:
            raise_kernel_code(code, names, model)
        body = model.bodies[c.link_body[code - 1]].name
        raise ValueError(
            f"the articulated inertia at body {body!r} is singular (a massless subtree, a "
            "subtree its joint cannot accelerate, or q too large for double precision): "
            "forward dynamics is undefined"
        )
    return out


def aba(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    tau: ArrayLike,
    f_ext: ArrayLike | dict | None = None,
    data: Data | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Joint accelerations ``qdd`` (nv,) produced by joint forces ``tau`` (nv,) at the
    configuration ``q`` (nq,) and velocity ``v`` (nv,) (the joints' armature included).

    ``f_ext`` as in :func:`sinews.rnea`.  ``data``: a workspace (``model.data()``; default the
    calling thread's own).  ``out``: optional preallocated result of length nv.  Raises
    ``ValueError`` if a subtree is massless (singular articulated inertia).
    """
    if f_ext is None and data is None:  # the fast path (sinews._entry)
        try:
            cx, nv, _ = model._fast
            qdd = _empty(nv) if out is None else out  # (an out the entry point refuses: the checked path)
            if _ABA(cx, q, v, tau, qdd) is qdd or ((f := take_over(model)) and _ABA(f[0], q, v, tau, qdd) is qdd):
                return qdd
        except Exception:
            pass
    return _aba(model, q, v, tau, f_ext, data, out)


_empty = np.empty
_ABA = Entry(N.aba_n, N.aba_f, globals(), "_ABA", Context)


def _aba(model, q, v, tau, f_ext, data, out) -> np.ndarray:
    """The checked path of :func:`aba`."""
    d = get_data(model, data)
    c = d.c
    q, v, tau = state3(q, v, tau, c.nq, c.nv, ("q", "v", "tau"))
    F, flag = link_forces(model, d, f_ext) if f_ext is not None else (NO_FORCES, 0)
    return _run(model, d, q, v, tau, F, flag, np.empty(c.nv) if out is None else output(out, c.nv))

