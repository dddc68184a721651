"""Kinetic and potential energy.

``T = 1/2 sum_i v_i^T I_i v_i + 1/2 sum_j armature_j v_j^2 = 1/2 v^T M(q) v`` and ``V = -sum_i m_i g . c_i`` (zero at the
world origin height).  Source: Featherstone, RBDA section 6.1; RBDL ``CalcKineticEnergy``,
``CalcPotentialEnergy``.
"""

from __future__ import annotations

import math

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _layout as L
from ._checks import raise_overflow, vector
from .algorithms import get_data
from ._kinematics_common import _com_terms, _kin

if TYPE_CHECKING:
    from .model import Data, Model

__all__ = ["kinetic_energy", "potential_energy", "mechanical_energy"]


def kinetic_energy(model: Model, q: ArrayLike, v: ArrayLike, data: Data | None = None) -> float:
    """``T = 1/2 v^T M(q) v`` [J] at ``q`` (nq,), ``v`` (nv,), summed over the links' spatial inertias (bodies welded to the
    world do not move and contribute nothing), plus the joints' rotor inertia
    ``1/2 sum armature_i v_i^2`` (``model.armature`` is part of ``M``; as Pinocchio's
    ``computeKineticEnergy``)."""
    d = get_data(model, data)
    q = vector(q, model.nq, "q")
    v = vector(v, model.nv, "v")
    if model.compiled.nlinks == 0:
        return 0.0
    _kin(model, d, q, v, 1)
    m, h, _, _ = _com_terms(model, d)
    vel = d.link_view(L.WS_V, 6)
    w, vo = vel[:, :3], vel[:, 3:]
    Io = model.compiled.link_Io
    # v^T I v = w.Io w + 2 vo.(w x h)... with I v = [Io w + h x vo; m vo - h x w]
    n = np.einsum("kij,kj->ki", Io, w) + np.cross(h, vo)
    f = m[:, None] * vo - np.cross(h, w)
    T = 0.5 * float(np.sum(w * n) + np.sum(vo * f))
    arm = model.compiled.armature
    if arm.any():  # rotor inertia (contract C2)
        with np.errstate(over="ignore", invalid="ignore"):
            T += 0.5 * float(arm @ (v * v))
    return _finite(T, ("q", "v"))


def _finite(x: float, names) -> float:
    if not math.isfinite(x):
        raise_overflow(names)
    return x


def potential_energy(model: Model, q: ArrayLike, data: Data | None = None) -> float:
    """Gravitational potential ``V = -sum_i m_i g . c_i`` [J] at ``q`` (nq,) (zero at the world origin; bodies
    welded to the world are part of the ground and not counted)."""
    d = get_data(model, data)
    q = vector(q, model.nq, "q")
    if model.compiled.nlinks == 0:
        return 0.0
    _kin(model, d, q)
    m, h, oR, op = _com_terms(model, d)
    first_moment = np.einsum("kij,kj->i", oR, h) + m @ op
    return _finite(-float(model.gravity @ first_moment), ("q",))


def mechanical_energy(model: Model, q: ArrayLike, v: ArrayLike, data: Data | None = None) -> float:
    """``T + V`` [J] at ``q`` (nq,), ``v`` (nv,): conserved by passive motion without friction or impacts."""
    return _finite(kinetic_energy(model, q, v, data) + potential_energy(model, q, data), ("q", "v"))
