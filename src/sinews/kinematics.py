"""Forward kinematics, point kinematics, Jacobians and the centre of mass.

All world quantities are in world axes.  A *point* is given by a body (id or name) and its
coordinates in that body's frame.  The 6-D point quantities are ``[omega; v_point]`` and
``[alpha; a_point]``: angular part first, then the linear velocity or *classical*
acceleration of the point (``a_point = a_o + alpha x r + omega x (v_o + omega x r)``, which
includes the centripetal ``omega x v`` term, as opposed to the spatial acceleration).

Arguments, for every function: ``model`` a :class:`~sinews.Model`; ``q`` (nq,) the
configuration; ``v`` (nv,) the joint velocities; ``a`` (nv,) the joint accelerations; ``body``
a body id or name; ``point`` (3,) coordinates in the body's frame (default its origin);
``data`` an optional workspace (``model.data()``; default the calling thread's own).

Sources: Featherstone, RBDA chapters 2 and 4; RBDL ``CalcPointVelocity``,
``CalcPointAcceleration``, ``CalcPointJacobian``; Pinocchio ``forwardKinematics``,
``computeFrameJacobian``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numba import types as _nt
from numpy.typing import ArrayLike

from . import _joint_pass as JP
from . import _rnea_kernels as RK
from . import _jacobian_dt_kernels as DK
from . import _kinematics_kernels as KK
from . import _layout as L
from ._checks import raise_overflow, raise_kernel_code, vector
from .algorithms import get_data
from .spatial import Transform

if TYPE_CHECKING:
    from .model import Data, Model

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
    "frame_jacobian_time_variation",
    "point_jacobian_time_variation",
    "point_jacobian_time_variation_6d",
    "frame_placement",
    "center_of_mass",
    "com_velocity",
    "com_jacobian",
]


@dataclass(slots=True)
class Placements:
    """World poses of every body (index = body id) and every frame (index = frame id).

    ``R`` (nbodies, 3, 3) and ``p`` (nbodies, 3): rotation and origin of each body in world
    coordinates; ``frame_R`` (nframes, 3, 3) and ``frame_p`` (nframes, 3): the same for the
    model's frames.  (:func:`forward_kinematics` fills one ``(nbodies + nframes, 12)`` table;
    these four arrays are views into it, made on first access.)
    """

    R: np.ndarray  # (nbodies, 3, 3)
    p: np.ndarray  # (nbodies, 3)
    frame_R: np.ndarray  # (nframes, 3, 3)
    frame_p: np.ndarray  # (nframes, 3)
    model: object
    _table: np.ndarray | None = field(default=None, repr=False, compare=False)
    _nbodies: int = field(default=0, repr=False, compare=False)

    def __getattr__(self, name: str):
        # only reached for a field not yet set: the views of forward_kinematics' table
        if name in _VIEWS and self._table is not None:
            t, nb = self._table, self._nbodies
            R = t[:, :9].reshape(-1, 3, 3)
            p = t[:, 9:]
            self.R, self.p, self.frame_R, self.frame_p = R[:nb], p[:nb], R[nb:], p[nb:]
            return getattr(self, name)
        raise AttributeError(f"'Placements' object has no attribute {name!r}")

    def body(self, body: int | str) -> Transform:
        """World pose of a body (id or name)."""
        b = self.model._resolve_body(body)
        return Transform(self.R[b], self.p[b])

    def frame(self, frame: int | str) -> Transform:
        """World pose of a named frame (id or name)."""
        f = self.model.frame_id(frame)
        return Transform(self.frame_R[f], self.frame_p[f])


_VIEWS = frozenset(("R", "p", "frame_R", "frame_p"))


def _placements(table, nbodies, model):
    """A :class:`Placements` over ``table`` (its views made on first access)."""
    P = _new(Placements)
    P._table = table
    P._nbodies = nbodies
    P.model = model
    return P


def _transform(out):
    """A :class:`Transform` from the kernel's ``[R; p]`` (4, 3) (the rows of R, then p), without
    re-checking the rotation (the kernel made it); read-only views, as Transform's arrays."""
    out.setflags(write=False)
    X = _new(Transform)
    _set(X, "R", out[:3])
    _set(X, "p", out[3])
    return X


# ------------------------------------------------------------------------------------------
# the fast call path (as sinews._entry): entry kernels typed for one signature, compiled on
# first use, argument lengths checked in the kernel; any exception or non-zero code falls back
# to the checked path, which converts the arguments or raises the named error.

_F1 = _nt.Array(_nt.float64, 1, "C")
_F2 = _nt.Array(_nt.float64, 2, "C")
_I2 = _nt.Array(_nt.int64, 2, "C")
_INT = _nt.int64
#: The one signature each entry kernel (``*_x`` in sinews._kinematics_kernels and
#: sinews._jacobian_dt_kernels) is compiled for.
SIGNATURES = {
    "placements_x": (_F1, _F2, _I2, _F1, _F1, _F1),
    "row_placement_x": (_F1, _INT, _F2, _I2, _F1, _F1, _F1),
    "frame_jacobian_x": (_F1, _INT, _F1, _INT, _F2, _I2, _F1, _F1, _F1),
    "jacobian_time_variation_x": (_F1, _F1, _INT, _F1, _INT, _F2, _I2, _F1, _F1, _F1),
    "center_of_mass_x": (_F1, _F1, _INT, _F1, _F2, _I2, _F1, _F1),
    "com_jacobian_x": (_F1, _F2, _I2, _F1, _F1),
}
_lock = threading.Lock()


class _Lazy:
    """An entry kernel until its first call, which compiles it for its signature only (then
    compilation is disabled, so that other argument types raise) and rebinds the global."""

    def __init__(self, name: str, binding: str):
        self.name, self.binding = name, binding

    def __call__(self, *args):
        disp = getattr(DK if self.name == "jacobian_time_variation_x" else KK, self.name)
        sig = SIGNATURES[self.name]
        with _lock:
            if sig not in disp.overloads:
                disp.compile(sig)
            disp.disable_compile()
        globals()[self.binding] = disp
        return disp(*args)


_FK = _Lazy("placements_x", "_FK")
_ROW = _Lazy("row_placement_x", "_ROW")
_FJ = _Lazy("frame_jacobian_x", "_FJ")
_DJ = _Lazy("jacobian_time_variation_x", "_DJ")
_COM = _Lazy("center_of_mass_x", "_COM")
_COMJ = _Lazy("com_jacobian_x", "_COMJ")
_empty = np.empty
_new = object.__new__
_set = object.__setattr__


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


def forward_kinematics(model: Model, q: ArrayLike, data: Data | None = None) -> Placements:
    """World placement of every body and frame at configuration ``q`` (nq,) (one kernel call; the
    frames are compiled into the model's arrays once)."""
    if data is None:
        try:
            mi, mf, ws, nv = model._tls.fast
            c = model._compiled
            table = _empty((c.nbodies + c.nframes, 12))
            if not _FK(q, table, mi, mf, ws, c.pl):
                return _placements(table, c.nbodies, model)
        except Exception:
            pass
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
    out = np.empty((4, 3))
    code = KK.row_placement(q, row, out.reshape(12), c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, ("q",), model)
    return _transform(out)


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


def body_placement(model: Model, q: ArrayLike, body: int | str, data: Data | None = None) -> Transform:
    """World pose of one body at ``q`` (nq,) (kinematics along its support chain only)."""
    if data is None and type(body) is not bool:
        try:
            mi, mf, ws, nv = model._tls.fast
            c = model._compiled
            out = _empty((4, 3))
            if not _ROW(q, c.body_rows[body], out, mi, mf, ws, c.pl):
                return _transform(out)
        except Exception:
            pass
    d = get_data(model, data)
    return _row_placement(model, d, q, _body_row(model, d.c, body))


def frame_placement(model: Model, q: ArrayLike, frame: int | str, data: Data | None = None) -> Transform:
    """World pose of one frame (id or name) at ``q`` (nq,), kinematics along its support chain
    only."""
    if data is None and type(frame) is not bool:
        try:
            mi, mf, ws, nv = model._tls.fast
            c = model._compiled
            out = _empty((4, 3))
            if not _ROW(q, c.frame_rows[frame], out, mi, mf, ws, c.pl):
                return _transform(out)
        except Exception:
            pass
    d = get_data(model, data)
    return _row_placement(model, d, q, _frame_row(model, d.c, frame))


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


def _jacobian(model, d, q, row, x, ref, nrows, names=("q", "point")):
    c = d.c
    q = vector(q, c.nq, "q")
    J = np.empty((nrows, c.nv))
    code = KK.frame_jacobian(q, row, x, ref, J, c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, names, model)
    return J


def point_jacobian_6d(model: Model, q: ArrayLike, body: int | str, point: ArrayLike = _ORIGIN,
                      data: Data | None = None) -> np.ndarray:
    """(6, nv) Jacobian of ``[omega; v_point]`` (world axes) of a point fixed on ``body``, at
    ``q`` (nq,)."""
    return _point_jacobian(model, q, body, point, data, 6)


def point_jacobian(model: Model, q: ArrayLike, body: int | str, point: ArrayLike = _ORIGIN,
                   data: Data | None = None) -> np.ndarray:
    """(3, nv) Jacobian of the linear velocity (world axes) of a point fixed on ``body``, at
    ``q`` (nq,)."""
    return _point_jacobian(model, q, body, point, data, 3)


def _point_jacobian(model, q, body, point, data, nrows):
    if data is None and type(body) is not bool:
        try:
            mi, mf, ws, nv = model._tls.fast
            c = model._compiled
            J = _empty((nrows, nv))
            if not _FJ(q, c.body_rows[body], _ZERO3 if point is _ORIGIN else point, 2, J, mi, mf, ws, c.pl):
                return J
        except Exception:
            pass
    d = get_data(model, data)
    row = _body_row(model, d.c, body)
    return _jacobian(model, d, q, row, _point(point), L.REF_LOCAL_WORLD_ALIGNED, nrows)


def body_jacobian(model: Model, q: ArrayLike, body: int | str, frame: str = "local",
                  data: Data | None = None) -> np.ndarray:
    """(6, nv) spatial Jacobian of ``body`` at ``q`` (nq,) (``v_body = J v``, angular rows first).

    ``frame="local"``: body velocity in body axes at the body origin (Pinocchio ``LOCAL``);
    ``"world"``: spatial velocity in world axes at the world origin (``WORLD``);
    ``"local_world_aligned"``: world axes at the body origin (``LOCAL_WORLD_ALIGNED``).
    """
    if data is None and type(body) is not bool:
        try:
            mi, mf, ws, nv = model._tls.fast
            c = model._compiled
            J = _empty((6, nv))
            if not _FJ(q, c.body_rows[body], _ZERO3, _REF[frame], J, mi, mf, ws, c.pl):
                return J
        except Exception:
            pass
    d = get_data(model, data)
    row = _body_row(model, d.c, body)
    return _jacobian(model, d, q, row, _ZERO3, _reference(frame, "frame"), 6, ("q",))


def frame_jacobian(model: Model, q: ArrayLike, frame: int | str, reference: str = "local",
                   data: Data | None = None) -> np.ndarray:
    """(6, nv) Jacobian of a named frame (id or name) at ``q`` (nq,): ``[omega; v] = J v``,
    angular rows first.

    ``reference`` as Pinocchio's ``ReferenceFrame``: ``"local"`` (frame axes, at the frame
    origin; the default, as Pinocchio's ``getFrameJacobian``), ``"world"`` (world axes, at the
    world origin) or ``"local_world_aligned"`` (world axes, at the frame origin).  One kernel
    call: the kinematics of the frame's support chain, then the Jacobian columns.  (Pinocchio
    stores rows as ``[linear; angular]``.)
    """
    if data is None and type(frame) is not bool:
        try:
            mi, mf, ws, nv = model._tls.fast
            c = model._compiled
            J = _empty((6, nv))
            if not _FJ(q, c.frame_rows[frame], _ZERO3, _REF[reference], J, mi, mf, ws, c.pl):
                return J
        except Exception:
            pass
    d = get_data(model, data)
    row = _frame_row(model, d.c, frame)
    return _jacobian(model, d, q, row, _ZERO3, _reference(reference, "reference"), 6, ("q",))


def _time_variation(model, q, v, row, x, ref, nrows, data, names):
    """dJ/dt (nrows, nv) of placement-table row ``row`` at the point ``x`` (frame coordinates)."""
    if data is None:
        try:
            mi, mf, ws, nv = model._tls.fast
            dJ = _empty((nrows, nv))
            if not _DJ(q, v, row, x, ref, dJ, mi, mf, ws, model._compiled.pl):
                return dJ
        except Exception:
            pass
    d = get_data(model, data)
    c = d.c
    q, v = vector(q, c.nq, "q"), vector(v, c.nv, "v")
    x = _point(x)
    dJ = np.empty((nrows, c.nv))
    code = DK.jacobian_time_variation(q, v, row, x, ref, dJ, c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, names, model)
    return dJ


def frame_jacobian_time_variation(model: Model, q: ArrayLike, v: ArrayLike, frame: int | str,
                                  reference: str = "local", data: Data | None = None) -> np.ndarray:
    """(6, nv) time derivative ``dJ/dt`` of the Jacobian of a frame (id or name) at ``q`` (nq,)
    moving with joint velocities ``v`` (nv,); angular rows first.

    ``reference`` as in :func:`frame_jacobian`.  Pinocchio's ``getFrameJacobianTimeVariation``
    after ``computeJointJacobiansTimeVariation`` (rows ``[linear; angular]`` there): the exact
    derivative ``d/dt J(q(t))``, so that for joint accelerations ``a``, ``J a + dJ/dt v`` is the
    frame's spatial acceleration (``"local"``: frame axes; ``"world"``: world axes at the world
    origin) or, with ``"local_world_aligned"``, ``[alpha; classical acceleration of the frame
    origin]`` in world axes (:func:`point_acceleration_6d`).  One kernel call over the frame's
    support chain (columns ``dJ_i = v_link x J_i`` in world coordinates, then moved to the
    frame; Featherstone RBDA section 4.4).  Equal to Pinocchio's for every joint type but its
    ``JointModelComposite`` (sinews' multi-axis joints), whose axes Pinocchio's ``dJ`` treats as
    fixed in the child frame (its ``dJ v + J a`` then differs from its frame acceleration):
    sinews gives the exact derivative there too."""
    if data is None and type(frame) is not bool:
        try:
            mi, mf, ws, nv = model._tls.fast
            c = model._compiled
            dJ = _empty((6, nv))
            if not _DJ(q, v, c.frame_rows[frame], _ZERO3, _REF[reference], dJ, mi, mf, ws, c.pl):
                return dJ
        except Exception:
            pass
    d = get_data(model, data)
    return _time_variation(model, q, v, _frame_row(model, d.c, frame), _ZERO3,
                           _reference(reference, "reference"), 6, d, ("q", "v"))


def point_jacobian_time_variation_6d(model: Model, q: ArrayLike, v: ArrayLike, body: int | str,
                                     point: ArrayLike = _ORIGIN, data: Data | None = None) -> np.ndarray:
    """(6, nv) time derivative of :func:`point_jacobian_6d` (world axes, at a point fixed on
    ``body``, ``point`` (3,) in body coordinates) at ``q`` (nq,), ``v`` (nv,):
    ``J a + dJ/dt v = [alpha; classical acceleration of the point]``
    (:func:`point_acceleration_6d`)."""
    return _point_time_variation(model, q, v, body, point, data, 6)


def point_jacobian_time_variation(model: Model, q: ArrayLike, v: ArrayLike, body: int | str,
                                  point: ArrayLike = _ORIGIN, data: Data | None = None) -> np.ndarray:
    """(3, nv) time derivative of :func:`point_jacobian` at ``q`` (nq,), ``v`` (nv,): the
    classical acceleration of the point is ``J a + dJ/dt v``."""
    return _point_time_variation(model, q, v, body, point, data, 3)


def _point_time_variation(model, q, v, body, point, data, nrows):
    if data is None and type(body) is not bool:
        try:
            row = model._compiled.body_rows[body]
            return _time_variation(model, q, v, row, _ZERO3 if point is _ORIGIN else point,
                                   L.REF_LOCAL_WORLD_ALIGNED, nrows, None, ("q", "v", "point"))
        except Exception:
            pass
    d = get_data(model, data)
    return _time_variation(model, q, v, _body_row(model, d.c, body), point,
                           L.REF_LOCAL_WORLD_ALIGNED, nrows, d, ("q", "v", "point"))


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


def center_of_mass(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """World position (3,) at ``q`` (nq,) of the centre of mass of the moving bodies (bodies welded to the world
    are part of the ground and not counted, as in Pinocchio); ``ValueError`` if they have no
    mass."""
    if data is None:
        try:
            mi, mf, ws, nv = model._tls.fast
            out = _empty(6)
            if not _COM(q, q, 0, out, _NO_J, mi, mf, ws):
                return out[:3]
        except Exception:
            pass
    d = get_data(model, data)
    q = vector(q, d.c.nq, "q")
    return _com(model, d, q, q, 0, _NO_J)[:3]


def com_velocity(model: Model, q: ArrayLike, v: ArrayLike, data: Data | None = None) -> np.ndarray:
    """World velocity (3,) of the centre of mass at ``q`` (nq,), ``v`` (nv,)."""
    if data is None:
        try:
            mi, mf, ws, nv = model._tls.fast
            out = _empty(6)
            if not _COM(q, v, 1, out, _NO_J, mi, mf, ws):
                return out[3:]
        except Exception:
            pass
    d = get_data(model, data)
    c = d.c
    q, v = vector(q, c.nq, "q"), vector(v, c.nv, "v")
    return _com(model, d, q, v, 1, _NO_J)[3:]


def com_jacobian(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """(3, nv) Jacobian of the centre of mass (world axes) at ``q`` (nq,)."""
    if data is None:
        try:
            mi, mf, ws, nv = model._tls.fast
            J = _empty((3, nv))
            if not _COMJ(q, J, mi, mf, ws):
                return J
        except Exception:
            pass
    d = get_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    J = np.empty((3, c.nv))
    _com(model, d, q, q, 2, J)
    return J


_NO_J = np.zeros((3, 0))
