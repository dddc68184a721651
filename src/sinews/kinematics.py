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

Without ``data``, a call takes a fast path (:mod:`sinews._kinematics_fast`): one dispatch of a
kernel on a per-thread buffer, names resolved by one dict look-up, the result taken from a pool
of preallocated results (a returned array is then a view into a larger array shared, without
overlap, with other results); anything that path cannot take goes through the checked path,
with the same results and errors.

Sources: Featherstone, RBDA chapters 2 and 4; RBDL ``CalcPointVelocity``,
``CalcPointAcceleration``, ``CalcPointJacobian``; Pinocchio ``forwardKinematics``,
``computeFrameJacobian``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _jacobian_dt_kernels as DK
from . import _kinematics_kernels as KK
from . import _layout as L
from ._checks import raise_kernel_code, vector
from ._kinematics_com import center_of_mass, com_jacobian, com_velocity
from ._kinematics_common import (
    _ORIGIN,
    _ZERO3,
    _body_row,
    _frame_row,
    _point,
    _reference,
)
from . import _native_kinematics as NK
from ._kinematics_fast import KinBuffer, checked_data, out_buffer, retry, retry_ring
from ._native import Entry
from ._kinematics_point import (
    point_acceleration,
    point_acceleration_6d,
    point_position,
    point_velocity,
    point_velocity_6d,
)
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


class Placements:
    """World poses of every body (index = body id) and every frame (index = frame id).

    ``R`` (nbodies, 3, 3) and ``p`` (nbodies, 3): rotation and origin of each body in world
    coordinates; ``frame_R`` (nframes, 3, 3) and ``frame_p`` (nframes, 3): the same for the
    model's frames; ``model``.  (:func:`forward_kinematics` fills one ``(nbodies + nframes,
    12)`` table; these four arrays are views into it, made on first access.)  The attributes are
    read-only: ``forward_kinematics(..., out=)`` writes into the arrays.
    """

    __slots__ = ("_views", "_model", "_table", "_nbodies", "_buf")

    def __init__(self, R: np.ndarray, p: np.ndarray, frame_R: np.ndarray, frame_p: np.ndarray, model: Model) -> None:
        self._views = (R, p, frame_R, frame_p)
        self._model = model
        self._nbodies = len(R)
        #: the table the four arrays view (forward_kinematics' results), or None
        self._table = None
        #: its own fast-path buffer (sinews._kinematics_fast.kin_buffer), made when it is first
        #: passed as ``out``
        self._buf = None

    def _arrays(self) -> tuple:
        """``(R, p, frame_R, frame_p)``, made of the table on first access."""
        v = self._views
        if v is None:
            t, nb = self._table, self._nbodies
            R = t[:, :9].reshape(-1, 3, 3)
            p = t[:, 9:]
            v = self._views = (R[:nb], p[:nb], R[nb:], p[nb:])
        return v

    @property
    def R(self) -> np.ndarray:
        """(nbodies, 3, 3) world rotation of each body."""
        v = self._views
        return (v if v is not None else self._arrays())[0]

    @property
    def p(self) -> np.ndarray:
        """(nbodies, 3) world position of each body's origin."""
        v = self._views
        return (v if v is not None else self._arrays())[1]

    @property
    def frame_R(self) -> np.ndarray:
        """(nframes, 3, 3) world rotation of each frame."""
        v = self._views
        return (v if v is not None else self._arrays())[2]

    @property
    def frame_p(self) -> np.ndarray:
        """(nframes, 3) world position of each frame's origin."""
        v = self._views
        return (v if v is not None else self._arrays())[3]

    @property
    def model(self) -> Model:
        """The model the poses are of."""
        return self._model

    def __repr__(self) -> str:
        return f"Placements(model={self._model!r}, bodies={len(self.R)}, frames={len(self.frame_R)})"

    def __getstate__(self):
        # (copy, deepcopy, pickle) the table (the four arrays are views of it, made again on
        # first access) or the four arrays, and the model; not the fast path's buffer, which
        # holds addresses
        if self._table is not None:
            return {"_table": self._table, "_nbodies": self._nbodies, "_model": self._model}
        return {"_views": self._views, "_nbodies": self._nbodies, "_model": self._model}

    def __setstate__(self, state):
        # (only on a new object, as copy and pickle make it: a result's table and views are
        # what the ring of forward_kinematics checks before it writes the table again)
        if any(getattr(self, name, None) is not None for name in ("_table", "_views", "_model")):
            raise TypeError("Placements.__setstate__: only a new Placements (copy, pickle) takes a state")
        if isinstance(state, tuple):  # (pickled before Placements had read-only attributes)
            old = state[1] or {}
            if old.get("_table") is not None:
                state = {"_table": old["_table"], "_nbodies": old["_nbodies"], "_model": old["model"]}
            else:
                views = tuple(old[k] for k in ("R", "p", "frame_R", "frame_p"))
                state = {"_views": views, "_nbodies": len(views[0]), "_model": old["model"]}
        self._views = self._table = self._buf = None
        for name, value in state.items():
            setattr(self, name, value)

    def body(self, body: int | str) -> Transform:
        """World pose of a body (id or name)."""
        b = self._model._resolve_body(body)
        return Transform(self.R[b], self.p[b])

    def frame(self, frame: int | str) -> Transform:
        """World pose of a named frame (id or name)."""
        f = self._model.frame_id(frame)
        return Transform(self.frame_R[f], self.frame_p[f])


def _placements(table, nbodies, model):
    """A :class:`Placements` over ``table`` (its views made on first access)."""
    P = _new(Placements)
    P._table = table
    P._nbodies = nbodies
    P._model = model
    P._views = P._buf = None
    return P


def _placements_ring(tables, nbodies, model):
    """The :class:`Placements` of each table of a ring (:func:`retry_ring`)."""
    return [_placements(t, nbodies, model) for t in tables]


def _transform(out):
    """A :class:`Transform` from the kernel's ``[R; p]`` (4, 3) (the rows of R, then p), without
    re-checking the rotation (the kernel made it); read-only views, as Transform's arrays."""
    out.setflags(write=False)
    X = _new(Transform)
    _set(X, "R", out[:3])
    _set(X, "p", out[3])
    return X


# ------------------------------------------------------------------------------------------
# The fast call path (sinews._kinematics_fast): one call of a native entry point
# (sinews._native_kinematics) on this thread's state, which returns a result prepared in a pool;
# when it answers the state's buffer instead, a new pool (retry) or the checked path, which
# converts the arguments or raises the named error (and binds the state on a thread's first call).

_FK = Entry(NK.placements_n, NK.placements_f, globals(), "_FK", KinBuffer)
_FKO = Entry(NK.placements_n, NK.placements_into_f, globals(), "_FKO", KinBuffer, NK.INTO)
_ROW = Entry(NK.row_placement_n, NK.row_placement_f, globals(), "_ROW", KinBuffer)
_FJ = Entry(NK.frame_jacobian_n, NK.frame_jacobian_f, globals(), "_FJ", KinBuffer)
_FJK = Entry(NK.frame_jacobian_n, NK.frame_jacobian_key_f, globals(), "_FJK", KinBuffer)
_DJ = Entry(NK.time_variation_n, NK.time_variation_f, globals(), "_DJ", KinBuffer)
_DJK = Entry(NK.time_variation_n, NK.time_variation_key_f, globals(), "_DJK", KinBuffer)
_LWA = np.int64(L.REF_LOCAL_WORLD_ALIGNED)  # (a numpy.int64: the native entry points read it)
_new = object.__new__
_set = object.__setattr__
#: the types of body and frame references the fast path looks up (a bool, a float or a NumPy
#: integer, equal to an int key of the tables, goes to the checked path, which decides)
_KEYS = frozenset((str, int))


def forward_kinematics(model: Model, q: ArrayLike, data: Data | None = None,
                       out: Placements | None = None) -> Placements:
    """World placement of every body and frame at configuration ``q`` (nq,) (one kernel call; the
    frames are compiled into the model's arrays once).

    ``out``: the :class:`Placements` of an earlier call on this model, overwritten and returned
    (its arrays keep their identity): the form for a loop, which allocates nothing, as
    Pinocchio's ``framesForwardKinematics`` writes into its ``Data``."""
    if data is None:
        try:
            if out is None:
                b = model._kin.buf
                r = _FK(b, q)
                if r is not b or (r := retry_ring(model, _FK, q, _placements_ring)) is not None:
                    return r
            elif _FKO(out._buf, q, model, out) is out:  # (out's own buffer: its model, its table)
                return out
        except Exception:
            pass
    d = checked_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    nb = c.nbodies
    rows = nb + c.nframes
    table = np.empty((rows, 12)) if out is None else _out_table(out, model, rows)
    code = KK.placements_checked(q, table, c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, ("q",), model)
    if out is None:
        return _placements(table, nb, model)
    if c.nlinks:
        out._buf = out_buffer(out, c, d.ws)  # (the next call with this out takes the fast path)
    return out


def _out_table(out, model, rows: int) -> np.ndarray:
    """The table of ``out`` (``forward_kinematics(..., out=)``), checked."""
    t = out._table if isinstance(out, Placements) else None
    if (t is None or out.model is not model or type(t) is not np.ndarray or t.dtype != np.float64
            or t.shape != (rows, 12) or not t.flags.c_contiguous or not t.flags.writeable):
        raise ValueError("out must be the Placements of an earlier forward_kinematics call on this model "
                         f"(with its {rows - model.compiled.nbodies} frames), got {type(out).__name__}")
    return t


def _row_placement(model, d, q, row) -> Transform:
    c = d.c
    q = vector(q, c.nq, "q")
    out = np.empty((4, 3))
    code = KK.row_placement(q, row, out.reshape(12), c.mi, c.mf, d.ws, c.pl)
    if code:
        raise_kernel_code(code, ("q",), model)
    return _transform(out)


def body_placement(model: Model, q: ArrayLike, body: int | str, data: Data | None = None) -> Transform:
    """World pose of one body at ``q`` (nq,) (kinematics along its support chain only)."""
    if data is None and type(body) in _KEYS:
        try:
            s = model._kin
            X = _ROW(s.buf, q, s.body_rows[body], s.Tp, s.T)
            if X is not s.buf or (X := retry(model, "T", _ROW, q, s.body_rows[body])) is not None:
                return X
        except Exception:
            pass
    d = checked_data(model, data)
    return _row_placement(model, d, q, _body_row(model, d.c, body))


def frame_placement(model: Model, q: ArrayLike, frame: int | str, data: Data | None = None) -> Transform:
    """World pose of one frame (id or name) at ``q`` (nq,), kinematics along its support chain
    only."""
    if data is None and type(frame) in _KEYS:
        try:
            s = model._kin
            X = _ROW(s.buf, q, s.frame_rows[frame], s.Tp, s.T)
            if X is not s.buf or (X := retry(model, "T", _ROW, q, s.frame_rows[frame])) is not None:
                return X
        except Exception:
            pass
    d = checked_data(model, data)
    return _row_placement(model, d, q, _frame_row(model, d.c, frame))


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
    if data is None and type(body) in _KEYS:
        try:
            s = model._kin
            J = _FJ(s.buf, q, s.body_rows[body], _ZERO3 if point is _ORIGIN else point, _LWA, s.J6p, s.J6)
            if J is not s.buf or (J := retry(model, "J6", _FJ, q, s.body_rows[body], _point(point), _LWA)) is not None:
                return J
        except Exception:
            pass
    return _point_jacobian(model, q, body, point, data, 6)


def point_jacobian(model: Model, q: ArrayLike, body: int | str, point: ArrayLike = _ORIGIN,
                   data: Data | None = None) -> np.ndarray:
    """(3, nv) Jacobian of the linear velocity (world axes) of a point fixed on ``body``, at
    ``q`` (nq,)."""
    if data is None and type(body) in _KEYS:
        try:
            s = model._kin
            J = _FJ(s.buf, q, s.body_rows[body], _ZERO3 if point is _ORIGIN else point, _LWA, s.J3p, s.J3)
            if J is not s.buf or (J := retry(model, "J3", _FJ, q, s.body_rows[body], _point(point), _LWA)) is not None:
                return J
        except Exception:
            pass
    return _point_jacobian(model, q, body, point, data, 3)


def _point_jacobian(model, q, body, point, data, nrows):
    """The checked path of :func:`point_jacobian` and :func:`point_jacobian_6d`."""
    d = checked_data(model, data)
    row = _body_row(model, d.c, body)
    return _jacobian(model, d, q, row, _point(point), L.REF_LOCAL_WORLD_ALIGNED, nrows)


def body_jacobian(model: Model, q: ArrayLike, body: int | str, frame: str = "local",
                  data: Data | None = None) -> np.ndarray:
    """(6, nv) spatial Jacobian of ``body`` at ``q`` (nq,) (``v_body = J v``, angular rows first).

    ``frame="local"``: body velocity in body axes at the body origin (Pinocchio ``LOCAL``);
    ``"world"``: spatial velocity in world axes at the world origin (``WORLD``);
    ``"local_world_aligned"``: world axes at the body origin (``LOCAL_WORLD_ALIGNED``).
    """
    if data is None and type(body) in _KEYS:
        try:
            s = model._kin
            J = _FJK(s.buf, q, s.body_keys[frame][body], s.J6p, s.J6)
            if J is not s.buf or (J := retry(model, "J6", _FJK, q, s.body_keys[frame][body])) is not None:
                return J
        except Exception:
            pass
    d = checked_data(model, data)
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
    if data is None and type(frame) in _KEYS:
        try:
            s = model._kin
            J = _FJK(s.buf, q, s.frame_keys[reference][frame], s.J6p, s.J6)
            if J is not s.buf or (J := retry(model, "J6", _FJK, q, s.frame_keys[reference][frame])) is not None:
                return J
        except Exception:
            pass
    d = checked_data(model, data)
    row = _frame_row(model, d.c, frame)
    return _jacobian(model, d, q, row, _ZERO3, _reference(reference, "reference"), 6, ("q",))


def _time_variation(model, q, v, row, x, ref, nrows, d, names):
    """The checked path: dJ/dt (nrows, nv) of placement-table row ``row`` at the point ``x``
    (frame coordinates)."""
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
    if data is None and type(frame) in _KEYS:
        try:
            s = model._kin
            J = _DJK(s.buf, q, v, s.frame_keys[reference][frame], s.J6p, s.J6)
            if J is not s.buf or (J := retry(model, "J6", _DJK, q, v, s.frame_keys[reference][frame])) is not None:
                return J
        except Exception:
            pass
    d = checked_data(model, data)
    return _time_variation(model, q, v, _frame_row(model, d.c, frame), _ZERO3,
                           _reference(reference, "reference"), 6, d, ("q", "v"))


def point_jacobian_time_variation_6d(model: Model, q: ArrayLike, v: ArrayLike, body: int | str,
                                     point: ArrayLike = _ORIGIN, data: Data | None = None) -> np.ndarray:
    """(6, nv) time derivative of :func:`point_jacobian_6d` (world axes, at a point fixed on
    ``body``, ``point`` (3,) in body coordinates) at ``q`` (nq,), ``v`` (nv,):
    ``J a + dJ/dt v = [alpha; classical acceleration of the point]``
    (:func:`point_acceleration_6d`)."""
    if data is None and type(body) in _KEYS:
        try:
            s = model._kin
            J = _DJ(s.buf, q, v, s.body_rows[body], _ZERO3 if point is _ORIGIN else point, _LWA, s.J6p, s.J6)
            if J is not s.buf or (J := retry(model, "J6", _DJ, q, v, s.body_rows[body], _point(point), _LWA)) is not None:
                return J
        except Exception:
            pass
    return _point_time_variation(model, q, v, body, point, data, 6)


def point_jacobian_time_variation(model: Model, q: ArrayLike, v: ArrayLike, body: int | str,
                                  point: ArrayLike = _ORIGIN, data: Data | None = None) -> np.ndarray:
    """(3, nv) time derivative of :func:`point_jacobian` at ``q`` (nq,), ``v`` (nv,): the
    classical acceleration of the point is ``J a + dJ/dt v``."""
    if data is None and type(body) in _KEYS:
        try:
            s = model._kin
            J = _DJ(s.buf, q, v, s.body_rows[body], _ZERO3 if point is _ORIGIN else point, _LWA, s.J3p, s.J3)
            if J is not s.buf or (J := retry(model, "J3", _DJ, q, v, s.body_rows[body], _point(point), _LWA)) is not None:
                return J
        except Exception:
            pass
    return _point_time_variation(model, q, v, body, point, data, 3)


def _point_time_variation(model, q, v, body, point, data, nrows):
    """The checked path of the point Jacobians' time derivatives."""
    d = checked_data(model, data)
    return _time_variation(model, q, v, _body_row(model, d.c, body), point,
                           L.REF_LOCAL_WORLD_ALIGNED, nrows, d, ("q", "v", "point"))
