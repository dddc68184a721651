"""Helpers shared by the kinematics modules (:mod:`sinews.kinematics`, its point-motion and
centre-of-mass parts): argument resolution and checks of the checked call path, the joint pass
into a workspace, and the world poses of the kernel links."""

from __future__ import annotations

import math

import numpy as np

from . import _joint_pass as JP
from . import _layout as L
from ._checks import raise_kernel_code, raise_overflow, vector

_ORIGIN = (0.0, 0.0, 0.0)  # the default point
_ZERO3 = np.zeros(3)  # never written (the kernels only read it)
_REF = {
    "local": L.REF_LOCAL,
    "world": L.REF_WORLD,
    "local_world_aligned": L.REF_LOCAL_WORLD_ALIGNED,
}


def _body_row(model, c, body, argname="body") -> int:
    """Row of a body (id or name) in the placement table (a dict look-up when cached)."""
    t = type(body)
    if t is str or t is int:
        row = c.body_rows.get(body)
        if row is not None:
            return row
    return model._resolve_body(body, argname)


def _frame_row(model, c, frame) -> int:
    t = type(frame)
    if t is str or t is int:
        row = c.frame_rows.get(frame)
        if row is not None:
            return row
    return c.nbodies + model.frame_id(frame)


def _point(point):
    if point is _ORIGIN:
        return _ZERO3
    return vector(point, 3, "point")


def _reference(reference, argname):
    ref = _REF.get(reference) if isinstance(reference, str) else None
    if ref is None:
        raise ValueError(f"{argname} must be 'local', 'world' or 'local_world_aligned', got {reference!r}")
    return ref


def _q(model, q):
    return vector(q, model.nq, "q")


def _kin(model, d, q, v=None, mode=2):
    c = model.compiled
    if c.nlinks == 0:
        return
    code = JP.check_q(q, c.mi)
    if code:
        raise_kernel_code(code, ("q",), model)
    if v is None:
        v = q
    elif JP.check_finite(v) >= 0:
        raise ValueError("v contains NaN or infinity")
    JP.joint_pass(q, v, c.mi, c.mf, d.ws, mode)


def _ground(model, q, **vectors):
    """Checks for a point on the ground (no kernel runs): ``q`` as the kernels check it and
    the other ``vectors`` (by name) finite."""
    c = model.compiled
    if c.nlinks:
        code = JP.check_q(q, c.mi)
        if code:
            raise_kernel_code(code, ("q",), model)
    for name, x in vectors.items():
        if JP.check_finite(x) >= 0:
            raise ValueError(f"{name} contains NaN or infinity")


def _finite(x, names):
    """``x`` if all its values are finite, else ValueError: the inputs ``names`` overflowed it."""
    if not np.isfinite(x).all():
        raise_overflow(names)
    return x


def _link_world(model, d):
    oR = d.link_view(L.WS_OR, 9).reshape(-1, 3, 3)
    op = d.link_view(L.WS_OP, 3)
    return oR, op


def _link_point(model, body, point, check_finite=True):
    """Link index and the point's coordinates in that link's frame (or -1 for the world).
    ``check_finite=False`` leaves the finiteness check of ``point`` to the kernel."""
    c = model.compiled
    b = model._resolve_body(body, "body")
    r = vector(point, 3, "point")
    if check_finite:
        x0, x1, x2 = r.tolist()
        if not (math.isfinite(x0) and math.isfinite(x1) and math.isfinite(x2)):
            raise ValueError("point contains NaN or infinity")
    if c.body_in_link_frame[b]:
        return c.link_of_body_list[b], r
    return c.link_of_body_list[b], c.X_link_body_R[b] @ r + c.X_link_body_p[b]


def _com_terms(model, d):
    c = model.compiled
    oR, op = _link_world(model, d)
    return c.link_mass, c.link_h, oR, op
