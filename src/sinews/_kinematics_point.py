"""Point motion (:mod:`sinews.kinematics`): the position, velocity and acceleration of a point
fixed on a body, in world axes (``[omega; v_point]``, ``[alpha; a_point]`` with the classical
acceleration ``a_point = a_o + alpha x r + omega x (v_o + omega x r)``).

Arguments as in :mod:`sinews.kinematics`: ``model``, ``q`` (nq,), ``v`` (nv,), ``a`` (nv,),
``body`` an id or name, ``point`` (3,) in body coordinates, ``data`` an optional workspace.

Sources: Featherstone, RBDA chapter 2; RBDL ``CalcPointVelocity``, ``CalcPointAcceleration``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _layout as L
from . import _rnea_kernels as RK
from ._checks import raise_kernel_code, vector
from ._kinematics_common import _finite, _ground, _kin, _link_point, _link_world, _q
from .algorithms import get_data

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["point_position", "point_velocity", "point_acceleration", "point_velocity_6d", "point_acceleration_6d"]


def point_position(model: Model, q: ArrayLike, body: int | str, point: ArrayLike = (0.0, 0.0, 0.0),
                   data: Data | None = None) -> np.ndarray:
    """World coordinates (3,) of a point fixed on ``body`` (``point`` (3,) in body coordinates)
    at ``q`` (nq,)."""
    d = get_data(model, data)
    q = _q(model, q)
    k, r = _link_point(model, body, point)
    if k < 0:
        _ground(model, q)
        return r.copy()
    _kin(model, d, q)
    oR, op = _link_world(model, d)
    return _finite(oR[k] @ r + op[k], ("q", "point"))


def _link_motion(model, d, q, v, a, k):
    """Link velocity and (spatial, gravity-free) acceleration in link axes, and world pose."""
    c = model.compiled
    if a is None:
        _kin(model, d, q, v, 3)
        acc = None
    else:
        _kin(model, d, q, v, 2)  # world poses
        tau = np.empty(c.nv)
        raise_kernel_code(RK.rnea(q, v, a, d.fext_links, tau, c.mi, c.mf, d.ws, 2), ("q", "v", "a"), model)
        acc = d.link_view(L.WS_A, 6)[k].copy()
    vel = d.link_view(L.WS_V, 6)[k].copy()
    oR, op = _link_world(model, d)
    return vel, acc, oR[k].copy(), op[k].copy()


def point_velocity_6d(model: Model, q: ArrayLike, v: ArrayLike, body: int | str,
                      point: ArrayLike = (0.0, 0.0, 0.0), data: Data | None = None) -> np.ndarray:
    """``[omega; v_point]`` (6,) of a point fixed on ``body``, world axes, at ``q`` (nq,),
    ``v`` (nv,)."""
    d = get_data(model, data)
    q = _q(model, q)
    v = vector(v, model.nv, "v")
    k, r = _link_point(model, body, point)
    if k < 0:
        _ground(model, q, v=v)
        return np.zeros(6)
    vel, _, R, _ = _link_motion(model, d, q, v, None, k)
    w, vo = vel[:3], vel[3:]
    return _finite(np.concatenate([R @ w, R @ (vo + np.cross(w, r))]), ("q", "v", "point"))


def point_velocity(model: Model, q: ArrayLike, v: ArrayLike, body: int | str,
                   point: ArrayLike = (0.0, 0.0, 0.0), data: Data | None = None) -> np.ndarray:
    """Linear velocity (3,) (world axes) of a point fixed on ``body``, at ``q`` (nq,), ``v`` (nv,)."""
    return point_velocity_6d(model, q, v, body, point, data)[3:]


def point_acceleration_6d(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, body: int | str,
                          point: ArrayLike = (0.0, 0.0, 0.0), data: Data | None = None) -> np.ndarray:
    """``[alpha; a_point]`` (6,) (world axes): angular acceleration and the classical acceleration
    of a point fixed on ``body``, at ``q`` (nq,), ``v`` (nv,), for joint accelerations ``a``
    (nv,) (gravity not included)."""
    d = get_data(model, data)
    q = _q(model, q)
    v = vector(v, model.nv, "v")
    a = vector(a, model.nv, "a")
    k, r = _link_point(model, body, point)
    if k < 0:
        _ground(model, q, v=v, a=a)
        return np.zeros(6)
    vel, acc, R, _ = _link_motion(model, d, q, v, a, k)
    w, vo = vel[:3], vel[3:]
    al, ao = acc[:3], acc[3:]
    a_point = ao + np.cross(al, r) + np.cross(w, vo + np.cross(w, r))
    return _finite(np.concatenate([R @ al, R @ a_point]), ("q", "v", "a", "point"))


def point_acceleration(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, body: int | str,
                       point: ArrayLike = (0.0, 0.0, 0.0), data: Data | None = None) -> np.ndarray:
    """Classical linear acceleration (3,) (world axes) of a point fixed on ``body``, at ``q``
    (nq,), ``v`` (nv,), ``a`` (nv,)."""
    return point_acceleration_6d(model, q, v, a, body, point, data)[3:]
