"""Fast path for constraint sets made only of point contacts (see :mod:`._contact_kernel`).

:func:`contact_rows` flattens such a set once (link, point in link coordinates, world normal per
row) and caches it on the set; :func:`fast_forward_dynamics` and :func:`fast_impulses` then do
the whole solve in one kernel call.  They return ``None`` when the fast path does not apply (a
non-contact group, or redundant rows that need the generic least-squares treatment), so that
callers can fall back to the generic implementation.
"""

from __future__ import annotations

import numpy as np

from .._checks import raise_kernel_code, vector
from ..algorithms import get_data, link_forces
from ._contact_kernel import contact_forward_dynamics, contact_impulses


def contact_rows(model, cs):
    """``(rk, rf)`` for an all-contact set bound to ``model``, or ``None``."""
    cache = getattr(cs, "_sinews_fast_rows", None)
    if cache is not None and cache[0] is model:
        return cache[1]
    from .constraint import ContactConstraint

    c = model.compiled
    rows = None
    if cs.size and all(type(g) is ContactConstraint for g in cs.groups):
        rk, rf = [], []
        for g in cs.groups:
            b = g._body_id
            k = int(c.link_of_body[b])
            if k < 0:  # a contact on a body welded to the world: generic path
                rows = None
                break
            x = c.X_link_body_R[b] @ g.body_point + c.X_link_body_p[b]
            for n in g.normals:
                rk.append(k)
                rf.extend([*x, *n])
        else:
            rows = (np.array(rk, dtype=np.int64), np.array(rf, dtype=float))
    cs._sinews_fast_rows = (model, rows)
    return rows


def _scratch(d, m):
    key = ("contact_scratch", m)
    s = d.__dict__.get(key)
    if s is None:
        nv = d.c.nv
        s = (np.zeros((nv, nv)), np.zeros((m, nv)), np.zeros((m, m)))
        d.__dict__[key] = s
    return s


def fast_forward_dynamics(model, q, v, tau, cs, f_ext=None, data=None):
    """``(qdd, lam, G, gamma)`` or ``None`` when the fast path does not apply."""
    rows = contact_rows(model, cs)
    if rows is None:
        return None
    rk, rf = rows
    d = get_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    v = vector(v, c.nv, "v")
    tau = vector(tau, c.nv, "tau")
    F, flag = link_forces(model, d, f_ext)
    m = rk.shape[0]
    M, Y, Kmat = _scratch(d, m)
    G = np.empty((m, c.nv))
    gamma = np.empty(m)
    qdd = np.empty(c.nv)
    lam = np.empty(m)
    code = contact_forward_dynamics(q, v, tau, F, flag, rk, rf, M, G, gamma, Y, Kmat, qdd, lam, c.mi, c.mf, d.ws, c.lam)
    if code < 0:
        raise_kernel_code(code, ("q", "v", "tau", "f_ext"))
    if code:
        return None
    return qdd, lam, G, gamma


def fast_impulses(model, q, v_minus, cs, target=None, data=None):
    """``(v_plus, impulses, G)`` or ``None`` when the fast path does not apply."""
    rows = contact_rows(model, cs)
    if rows is None:
        return None
    rk, rf = rows
    d = get_data(model, data)
    c = d.c
    m = rk.shape[0]
    q = vector(q, c.nq, "q")
    v_minus = vector(v_minus, c.nv, "qd_minus")
    target = np.zeros(m) if target is None else vector(target, m, "target_velocity")
    M, Y, Kmat = _scratch(d, m)
    G = np.empty((m, c.nv))
    v_plus = np.empty(c.nv)
    lam = np.empty(m)
    code = contact_impulses(q, v_minus, target, rk, rf, M, G, Y, Kmat, v_plus, lam, c.mi, c.mf, d.ws, c.lam)
    if code < 0:
        raise_kernel_code(code, ("q", "qd_minus"))
    if code:
        return None
    return v_plus, lam, G
