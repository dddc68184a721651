"""Checked calls of a group's methods: what a custom constraint returns is validated.

The built-in groups (:class:`~sinews.constraints.ContactConstraint`,
:class:`~sinews.constraints.LoopConstraint`) are trusted and called directly.  For every other
group (custom constraints) each result is checked before it enters a linear system: a missing
method, a result of the wrong type, shape or dtype, or NaN/infinity is a ``ValueError`` that
names the constraint (label, group index, class) and the method, instead of a ``LinAlgError``,
a ``NotImplementedError`` or a silently wrong (or unconstrained) answer from deep inside.

:func:`group_wrenches` resolves a group's checked wrench entries in the frame asked for: the work
behind :func:`~sinews.constraints.calc_forces`, :func:`~sinews.constraints.calc_impulses` and the
``ConstraintSet`` methods of the same names.
"""

from __future__ import annotations

import numpy as np

from .._checks import finite_vector, real_array
from ..spatial import Transform
from ._kinematics import ConstraintKinematics
from .constraint import ConstraintWrenches, ContactConstraint, LoopConstraint, WrenchEntry

__all__ = ["rows_of", "jacobian_of", "wrench_entries_of", "group_wrenches", "check_frame", "who"]

_TRUSTED = (ContactConstraint, LoopConstraint)


def who(g) -> str:
    return f"custom constraint {g.label!r} (group {g.index}, {type(g).__name__})"


def _call(g, method, *args):
    fn = getattr(g, method, None)
    if not callable(fn):
        raise ValueError(f"{who(g)} has no method {method}(kin)")
    try:
        return fn(*args)
    except NotImplementedError:
        raise ValueError(f"{who(g)} does not implement {method}(kin{', multipliers' if args[1:] else ''})") from None


def _as_real(g, method, out):
    if out is None:
        raise ValueError(f"{who(g)}: {method}(kin) returned None (it must return a NumPy array)")
    try:
        a = np.asarray(out)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{who(g)}: {method}(kin) did not return an array: {exc}") from None
    if a.dtype.kind not in "iuf":
        raise ValueError(
            f"{who(g)}: {method}(kin) must return real numbers, got dtype {a.dtype} ({type(out).__name__})"
        )
    return a


def _finite(g, method, a):
    if not np.all(np.isfinite(a)):
        raise ValueError(
            f"{who(g)}: {method}(kin) returned NaN or infinity (a defect of the constraint, or the "
            "state q, v too large in magnitude)"
        )
    return a


def rows_of(g, method, kin) -> np.ndarray:
    """``g.<method>(kin)`` (gamma, position_error, velocity_error): a finite real vector of
    ``g.size`` entries (a scalar is accepted for a 1-row group)."""
    if type(g) in _TRUSTED:
        return getattr(g, method)(kin)
    a = _as_real(g, method, _call(g, method, kin))
    n = g.size
    if a.shape != (n,):
        if a.size == n and (a.ndim == 0 or max(a.shape) == n):  # scalar, row or column
            a = a.reshape(n)
        else:
            raise ValueError(f"{who(g)}: {method}(kin) must return {n} values (shape ({n},)), got shape {a.shape}")
    return _finite(g, method, np.asarray(a, dtype=np.float64))


def jacobian_of(g, kin) -> np.ndarray:
    """``g.jacobian(kin)``: a finite real ``(g.size, nv)`` array (``(nv,)`` for a 1-row group)."""
    if type(g) in _TRUSTED:
        return g.jacobian(kin)
    a = _as_real(g, "jacobian", _call(g, "jacobian", kin))
    n, nv = g.size, kin.nv
    if a.shape != (n, nv):
        if n == 1 and a.shape == (nv,):
            a = a.reshape(1, nv)
        else:
            raise ValueError(f"{who(g)}: jacobian(kin) must return shape ({n}, {nv}) (size x nv), got {a.shape}")
    return _finite(g, "jacobian", np.asarray(a, dtype=np.float64))


def wrench_entries_of(g, kin, multipliers, what) -> list:
    """``g.wrench_entries(kin, multipliers)`` checked: a list of :class:`WrenchEntry` (or objects
    with the same fields) with a body id of the model, a 3 x 3 rotation, a 3-vector point and a
    6-vector wrench, all finite.  ``what`` completes the error of a group without
    ``wrench_entries`` (what needs it)."""
    try:
        fn = getattr(g, "wrench_entries")
        out = fn(kin, multipliers)
    except NotImplementedError:
        raise ValueError(f"group {g.label!r} does not implement wrench_entries: {what}") from None
    if type(g) in _TRUSTED:
        return out
    if out is None or isinstance(out, (str, bytes, dict)) or not hasattr(out, "__iter__"):
        raise ValueError(f"{who(g)}: wrench_entries(kin, multipliers) must return a list of WrenchEntry, got {type(out).__name__}")
    nb = kin.model.nbodies
    checked = []
    for i, e in enumerate(out):
        where = f"{who(g)}: wrench_entries(kin, multipliers)[{i}]"
        try:
            body, R, p, w = e.body, e.R_world_frame, e.p_world_frame, e.wrench
        except AttributeError:
            raise ValueError(f"{where} must be a WrenchEntry (body, R_world_frame, p_world_frame, wrench), "
                             f"got {type(e).__name__}") from None
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)) or not 0 <= int(body) < nb:
            raise ValueError(f"{where}.body must be a body id in [0, {nb}), got {body!r}")
        arrays = []
        for name, x, shape in (("R_world_frame", R, (3, 3)), ("p_world_frame", p, (3,)), ("wrench", w, (6,))):
            try:
                a = np.asarray(x)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{where}.{name} is not an array: {exc}") from None
            if a.dtype.kind not in "iuf" or a.shape != shape:
                raise ValueError(f"{where}.{name} must be a real array of shape {shape}, got dtype {a.dtype} shape {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{where}.{name} contains NaN or infinity")
            arrays.append(np.asarray(a, dtype=np.float64))
        checked.append(WrenchEntry(int(body), *arrays))
    return checked


def _multipliers(values, cs, g, name):
    if hasattr(values, "multipliers"):
        values = values.multipliers
    x = real_array(values, name, finite=False)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (one entry per row), got shape {x.shape}")
    if x.shape[0] == cs.size:
        x = x[g.rows]
    elif x.shape[0] != g.size:
        raise ValueError(
            f"{name} must have one entry per row of the set ({cs.size}) or of the group ({g.size}), got {x.shape[0]}"
        )
    return finite_vector(x, g.size, name)


def check_frame(frame) -> str:
    """``frame`` of :func:`group_wrenches`: ``"local"`` or ``"world"`` (ValueError otherwise)."""
    if frame not in ("local", "world"):
        raise ValueError(f"frame must be 'local' or 'world', got {frame!r}")
    return frame


def group_wrenches(model, q, cs, g, values, frame, kind, data) -> ConstraintWrenches:
    """Per-body wrenches of group ``g`` of the bound set ``cs`` (the work of
    :func:`~sinews.constraints.calc_forces` and :func:`~sinews.constraints.calc_impulses`).

    ``values``: per-row multipliers (``kind="force"``) or impulses (``kind="impulse"``), of the
    set or of the group, or the result that holds them; ``frame``: already checked by
    :func:`check_frame`.
    """
    if kind == "impulse":
        name = "impulses"
        if hasattr(values, "impulses"):
            values = values.impulses
    else:
        name = "multipliers"
    lam = _multipliers(values, cs, g, name)
    kin = ConstraintKinematics(model, q, None, data)
    bodies, frames, W = [], [], []
    entries = wrench_entries_of(g, kin, lam, "no wrenches to report")
    for e in entries:
        m, f = e.wrench[:3], e.wrench[3:]
        bodies.append(e.body)
        if frame == "world":
            frames.append(Transform(np.eye(3), e.p_world_frame.copy()))
            W.append(e.wrench.copy())
        else:
            R_b, o_b = kin.body_pose(e.body)
            R_bf = R_b.T @ e.R_world_frame
            frames.append(Transform(R_bf, R_b.T @ (e.p_world_frame - o_b)))
            Rt = e.R_world_frame.T
            W.append(np.concatenate([Rt @ m, Rt @ f]))
    return ConstraintWrenches(bodies, frames, np.array(W).reshape(-1, 6), frame, g, kind)
