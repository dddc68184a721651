"""The centre of mass of the moving bodies, its velocity and its Jacobian (world axes), for
:mod:`sinews.kinematics` (which re-exports them).

``c = sum_i m_i c_i / M`` over the kernel links (bodies welded to the world are part of the
ground and not counted, as in Pinocchio); ``dc/dt = J_com v`` with ``J_com = sum_i m_i
J_{c_i} / M``, accumulated link by link from subtree masses and first moments (one kernel
call).  Arguments: ``model``, ``q`` (nq,), ``v`` (nv,), ``data`` an optional workspace.

Sources: Featherstone, RBDA section 2.12; Pinocchio ``centerOfMass``, ``jacobianCenterOfMass``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _kinematics_kernels as KK
from ._checks import raise_kernel_code, vector
from . import _native_kinematics as NK
from ._kinematics_fast import KinBuffer, checked_data, retry
from ._native import Entry

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["center_of_mass", "com_velocity", "com_jacobian"]

_COM = Entry(NK.center_of_mass_n, NK.center_of_mass_f, globals(), "_COM", KinBuffer, NK.COM)
_COMV = Entry(NK.center_of_mass_n, NK.com_velocity_f, globals(), "_COMV", KinBuffer, NK.COM_VELOCITY)
_COMJ = Entry(NK.center_of_mass_n, NK.com_jacobian_f, globals(), "_COMJ", KinBuffer, NK.COM_JACOBIAN)
_NO_J = np.zeros((3, 0))


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
            s = model._kin
            r = _COM(s.buf, q, s.V3p, s.V3)
            if r is not s.buf or (r := retry(model, "V3", _COM, q)) is not None:
                return r
        except Exception:
            pass
    d = checked_data(model, data)
    q = vector(q, d.c.nq, "q")
    return _com(model, d, q, q, 0, _NO_J)[:3]


def com_velocity(model: Model, q: ArrayLike, v: ArrayLike, data: Data | None = None) -> np.ndarray:
    """World velocity (3,) of the centre of mass at ``q`` (nq,), ``v`` (nv,)."""
    if data is None:
        try:
            s = model._kin
            r = _COMV(s.buf, q, v, s.V3p, s.V3)
            if r is not s.buf or (r := retry(model, "V3", _COMV, q, v)) is not None:
                return r
        except Exception:
            pass
    d = checked_data(model, data)
    c = d.c
    q, v = vector(q, c.nq, "q"), vector(v, c.nv, "v")
    return _com(model, d, q, v, 1, _NO_J)[3:]


def com_jacobian(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """(3, nv) Jacobian of the centre of mass (world axes) at ``q`` (nq,)."""
    if data is None:
        try:
            s = model._kin
            r = _COMJ(s.buf, q, s.J3p, s.J3)
            if r is not s.buf or (r := retry(model, "J3", _COMJ, q)) is not None:
                return r
        except Exception:
            pass
    d = checked_data(model, data)
    c = d.c
    q = vector(q, c.nq, "q")
    J = np.empty((3, c.nv))
    _com(model, d, q, q, 2, J)
    return J
