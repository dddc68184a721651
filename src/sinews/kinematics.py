"""Forward kinematics, point kinematics, Jacobians and the centre of mass.

All world quantities are in world axes.  A *point* is given by a body (id or name) and its
coordinates in that body's frame.  The 6-D point quantities are ``[omega; v_point]`` and
``[alpha; a_point]``: angular part first, then the linear velocity or *classical*
acceleration of the point (``a_point = a_o + alpha x r + omega x (v_o + omega x r)``, which
includes the centripetal ``omega x v`` term, as opposed to the spatial acceleration).

Sources: Featherstone, RBDA chapters 2 and 4; RBDL ``CalcPointVelocity``,
``CalcPointAcceleration``, ``CalcPointJacobian``; Pinocchio ``forwardKinematics``,
``computeFrameJacobian``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _joint_pass as JP
from . import _rnea_kernels as RK
from . import _kinematics_kernels as KK
from . import _layout as L
from ._checks import raise_overflow, raise_kernel_code, vector
from .algorithms import get_data
from .spatial import Transform

__all__ = [
    "Placements",
    "forward_kinematics",
    "body_placement",
    "point_position",
    "point_velocity",
    "point_acceleration",
    "point_velocity_6d",
    "point_acceleration_6d",
    "point_jacobian",
    "point_jacobian_6d",
    "body_jacobian",
    "frame_jacobian",
    "frame_placement",
    "center_of_mass",
    "com_velocity",
    "com_jacobian",
]


@dataclass
class Placements:
    """World poses of every body (index = body id) and every frame (index = frame id)."""

    R: np.ndarray  # (nbodies, 3, 3)
    p: np.ndarray  # (nbodies, 3)
    frame_R: np.ndarray  # (nframes, 3, 3)
    frame_p: np.ndarray  # (nframes, 3)
    model: object

    def body(self, body) -> Transform:
        """World pose of a body (id or name)."""
        b = self.model._resolve_body(body)
        return Transform(self.R[b], self.p[b])

    def frame(self, frame) -> Transform:
        """World pose of a named frame (id or name)."""
        f = self.model.frame_id(frame)
        return Transform(self.frame_R[f], self.frame_p[f])


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


def forward_kinematics(model, q, data=None) -> Placements:
    """World placement of every body and frame at configuration ``q`` (one kernel call; the
    frames are compiled into the model's arrays once)."""
    d = get_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    nb = c.nbodies
    n = nb + c.nframes
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    code = KK.placements(q, R, p, c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, ("q",), model)
    return Placements(R[:nb], p[:nb], R[nb:], p[nb:], model)


def _row_placement(model, d, q, row) -> Transform:
    c = d.c
    q = vector(q, c.nq, "q")
    out = np.empty(12)
    code = KK.row_placement(q, row, out, c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, ("q",), model)
    return Transform(out[:9].reshape(3, 3), out[9:])


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


def body_placement(model, q, body, data=None) -> Transform:
    """World pose of one body (kinematics along its support chain only)."""
    d = get_data(model, data)
    return _row_placement(model, d, q, _body_row(model, d.c, body))


def frame_placement(model, q, frame, data=None) -> Transform:
    """World pose of one frame (id or name), kinematics along its support chain only."""
    d = get_data(model, data)
    return _row_placement(model, d, q, _frame_row(model, d.c, frame))


def point_position(model, q, body, point=(0.0, 0.0, 0.0), data=None) -> np.ndarray:
    """World coordinates of a point fixed on ``body``."""
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


def point_velocity_6d(model, q, v, body, point=(0.0, 0.0, 0.0), data=None) -> np.ndarray:
    """``[omega; v_point]`` of a point fixed on ``body``, world axes."""
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


def point_velocity(model, q, v, body, point=(0.0, 0.0, 0.0), data=None) -> np.ndarray:
    """Linear velocity (world axes) of a point fixed on ``body``."""
    return point_velocity_6d(model, q, v, body, point, data)[3:]


def point_acceleration_6d(model, q, v, a, body, point=(0.0, 0.0, 0.0), data=None) -> np.ndarray:
    """``[alpha; a_point]`` (world axes): angular acceleration and the classical acceleration of
    a point fixed on ``body``, for joint accelerations ``a`` (gravity not included)."""
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


def point_acceleration(model, q, v, a, body, point=(0.0, 0.0, 0.0), data=None) -> np.ndarray:
    """Classical linear acceleration (world axes) of a point fixed on ``body``."""
    return point_acceleration_6d(model, q, v, a, body, point, data)[3:]


def _jacobian(model, d, q, row, x, ref, nrows, names=("q", "point")):
    c = d.c
    q = vector(q, c.nq, "q")
    J = np.empty((nrows, c.nv))
    code = KK.frame_jacobian(q, row, x, ref, J, c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, names, model)
    return J


def point_jacobian_6d(model, q, body, point=_ORIGIN, data=None) -> np.ndarray:
    """6 x nv Jacobian of ``[omega; v_point]`` (world axes) of a point fixed on ``body``."""
    d = get_data(model, data)
    row = _body_row(model, d.c, body)
    return _jacobian(model, d, q, row, _point(point), L.REF_LOCAL_WORLD_ALIGNED, 6)


def point_jacobian(model, q, body, point=_ORIGIN, data=None) -> np.ndarray:
    """3 x nv Jacobian of the linear velocity (world axes) of a point fixed on ``body``."""
    d = get_data(model, data)
    row = _body_row(model, d.c, body)
    return _jacobian(model, d, q, row, _point(point), L.REF_LOCAL_WORLD_ALIGNED, 3)


def body_jacobian(model, q, body, frame: str = "local", data=None) -> np.ndarray:
    """6 x nv spatial Jacobian of ``body`` (``v_body = J v``, angular rows first).

    ``frame="local"``: body velocity in body axes at the body origin (Pinocchio ``LOCAL``);
    ``"world"``: spatial velocity in world axes at the world origin (``WORLD``);
    ``"local_world_aligned"``: world axes at the body origin (``LOCAL_WORLD_ALIGNED``).
    """
    d = get_data(model, data)
    row = _body_row(model, d.c, body)
    return _jacobian(model, d, q, row, _ZERO3, _reference(frame, "frame"), 6, ("q",))


def frame_jacobian(model, q, frame, reference: str = "local", data=None) -> np.ndarray:
    """6 x nv Jacobian of a named frame (id or name): ``[omega; v] = J v``, angular rows first.

    ``reference`` as Pinocchio's ``ReferenceFrame``: ``"local"`` (frame axes, at the frame
    origin; the default, as Pinocchio's ``getFrameJacobian``), ``"world"`` (world axes, at the
    world origin) or ``"local_world_aligned"`` (world axes, at the frame origin).  One kernel
    call: the kinematics of the frame's support chain, then the Jacobian columns.  (Pinocchio
    stores rows as ``[linear; angular]``.)
    """
    d = get_data(model, data)
    row = _frame_row(model, d.c, frame)
    return _jacobian(model, d, q, row, _ZERO3, _reference(reference, "reference"), 6, ("q",))


def _com_terms(model, d):
    c = model.compiled
    oR, op = _link_world(model, d)
    return c.link_mass, c.link_h, oR, op


def _com(model, d, q, v, flags, J):
    c = d.c
    out = np.empty(6)
    code = KK.center_of_mass(q, v, flags, out, J, c.mi, c.mf, d.ws)
    if code:
        if code == 1:
            raise ValueError("the model has no mass")
        raise_kernel_code(code, ("q", "v") if flags & 1 else ("q",), model)
    return out


def center_of_mass(model, q, data=None) -> np.ndarray:
    """World position of the centre of mass of the moving bodies (bodies welded to the world
    are part of the ground and not counted, as in Pinocchio); ``ValueError`` if they have no
    mass."""
    d = get_data(model, data)
    q = vector(q, d.c.nq, "q")
    return _com(model, d, q, q, 0, _NO_J)[:3]


def com_velocity(model, q, v, data=None) -> np.ndarray:
    """World velocity of the centre of mass."""
    d = get_data(model, data)
    c = d.c
    q, v = vector(q, c.nq, "q"), vector(v, c.nv, "v")
    return _com(model, d, q, v, 1, _NO_J)[3:]


def com_jacobian(model, q, data=None) -> np.ndarray:
    """3 x nv Jacobian of the centre of mass (world axes)."""
    d = get_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    J = np.empty((3, c.nv))
    _com(model, d, q, q, 2, J)
    return J


_NO_J = np.zeros((3, 0))
