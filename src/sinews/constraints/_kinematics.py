"""Kinematic quantities of constraint points, from one tree pass per state.

Every constraint of a :class:`~sinews.constraints.ConstraintSet` needs, at one state
``(q, v)``, the same few things: world poses of bodies, 6-D point Jacobians ``[omega; v_point]``
and the velocity-product ("bias") accelerations ``[alpha; a_point]`` at ``qdd = 0``.
:class:`ConstraintKinematics` computes them from a *single* recursive pass (the core RNEA kernel
with ``a = 0`` and no gravity) and then evaluates any number of points with a few vectorised
NumPy operations, instead of one tree pass per point.

Formulas (world axes; joint column j belongs to link l with world pose ``(R_l, o_l)`` and
motion subspace ``s_j = [s_w; s_v]`` in link axes):

* ``w_j = R_l s_w``, velocity of the world origin ``vO_j = R_l s_v + o_l x w_j``;
* Jacobian of a world point ``x`` on link k: columns of the ancestors of k (and k itself)
  ``[w_j; vO_j + w_j x x]``, zero elsewhere (Featherstone, RBDA section 4.2; RBDL
  ``CalcPointJacobian6D``);
* point velocity ``v_x = v_o + omega x (x - o)``, classical point acceleration at ``qdd = 0``:
  ``a_x = a_o + alpha x r + omega x (v_o + omega x r)``, ``r = x - o`` (RBDL
  ``CalcPointAcceleration6D`` with ``QDDot = 0``).
"""

from __future__ import annotations

import math
import weakref
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .. import _kernels as K
from .. import _layout as L
from .._checks import real_array, vector
from ..algorithms import get_data
from ._linalg import cross3, cross_columns, skew3

if TYPE_CHECKING:
    from ..model import Data, Model

__all__ = ["ConstraintKinematics"]

_ANCESTORS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_OVERFLOW = "the kinematics are not finite (floating-point overflow): {} too large in magnitude"


class Overflow(ValueError):
    """A finite input whose result overflowed (a ``ValueError`` naming the inputs)."""


def _finite_out(x, names):
    """``x`` if all finite, else an :class:`Overflow` naming the inputs."""
    if not math.isfinite(float(x.sum())):
        raise Overflow(_OVERFLOW.format(names))
    return x


def ancestor_mask(model: Model) -> np.ndarray:
    """``(nlinks, nv)`` booleans: dof j moves link k (its link is k or an ancestor of k).
    Computed once per compiled model (cached weakly)."""
    c = model.compiled
    m = _ANCESTORS.get(c)
    if m is not None:
        return m
    m = np.zeros((c.nlinks, c.nv), dtype=bool)
    for k in range(c.nlinks):  # once per model
        par = c.mi[k, L.MI_PARENT]
        if par >= 0:
            m[k] = m[par]
        iv, nvj = c.mi[k, L.MI_IV], c.mi[k, L.MI_NV]
        m[k, iv : iv + nvj] = True
    m.flags.writeable = False
    _ANCESTORS[c] = m
    return m


class ConstraintKinematics:
    """World kinematics of a model at ``q (nq,)``, ``v (nv,)`` for constraint evaluation.

    ``v=None`` computes positions and Jacobians only (velocities and bias accelerations are then
    unavailable).  Attributes: ``model``, ``q``, ``v``.  Methods take a body id (already
    resolved) and points in world coordinates unless stated otherwise.
    """

    def __init__(self, model: Model, q: ArrayLike, v: ArrayLike | None = None, data: Data | None = None) -> None:
        d = get_data(model, data)
        c = model.compiled
        self.model = model
        self.q = vector(q, c.nq, "q")
        self.v = None if v is None else vector(v, c.nv, "v")
        self.nv = c.nv
        nl = c.nlinks
        self._c = c
        self._nb = model.nbodies
        if nl == 0:
            self.oR = np.zeros((0, 3, 3))
            self.op = np.zeros((0, 3))
            self.Sw = np.zeros((3, 0))
            self.SvO = np.zeros((3, 0))
            return
        if K.check_finite(self.q) >= 0:
            raise ValueError("q contains NaN or infinity")
        if self.v is None:
            K.joint_pass(self.q, self.q, c.mi, c.mf, d.ws, 2)
        else:
            if K.check_finite(self.v) >= 0:
                raise ValueError("v contains NaN or infinity")
            K.joint_pass(self.q, self.v, c.mi, c.mf, d.ws, 2)  # world poses
            tau = np.empty(c.nv)
            # a = 0, no gravity: link velocities and velocity-product accelerations
            K.rnea(self.q, self.v, np.zeros(c.nv), d.fext_links, tau, c.mi, c.mf, d.ws, 2)
            self.vel = d.link_view(L.WS_V, 6).copy()
            self.acc = d.link_view(L.WS_A, 6).copy()
            if not math.isfinite(float(self.vel.sum()) + float(self.acc.sum())):
                raise Overflow(_OVERFLOW.format("q, v"))
        self.oR = d.link_view(L.WS_OR, 9).reshape(-1, 3, 3).copy()
        self.op = d.link_view(L.WS_OP, 3).copy()
        if not math.isfinite(float(self.op.sum())):
            raise Overflow(_OVERFLOW.format("q"))
        S = d.S  # 6 x nv, link axes
        lod = c.link_of_dof
        Rl = self.oR[lod]
        self.Sw = np.einsum("jab,bj->aj", Rl, S[:3])
        Sv = np.einsum("jab,bj->aj", Rl, S[3:])
        self.SvO = Sv + cross_columns(self.op[lod].T, self.Sw)
        self.mask = ancestor_mask(model)

    # ------------------------------------------------------------------ argument checks
    def _body(self, body) -> int:
        """A body id of the model (``ValueError`` naming ``body`` otherwise)."""
        if type(body) is int and 0 <= body < self._nb:
            return body
        if isinstance(body, (int, np.integer)) and not isinstance(body, (bool, np.bool_)) and 0 <= int(body) < self._nb:
            return int(body)
        raise ValueError(f"body must be a body id in [0, {self._nb}) (resolve names in bind()), got {body!r}")

    @staticmethod
    def _vec3(x, name):
        if type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (3,):
            a, b, c = x.tolist()
            if not math.isfinite(a + b + c):
                raise ValueError(f"{name} contains NaN or infinity (or is too large in magnitude)")
            return x
        return real_array(x, name, shape=(3,))

    # ------------------------------------------------------------------ poses
    def body_pose(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """World rotation and origin ``(R_world_body, p_world_body)`` of a body id."""
        c = self._c
        k = c.link_of_body[self._body(body)]
        if k < 0:
            return c.X_link_body_R[body].copy(), c.X_link_body_p[body].copy()
        R = self.oR[k] @ c.X_link_body_R[body]
        return R, self.oR[k] @ c.X_link_body_p[body] + self.op[k]

    def frame_pose(self, body: int, R_body_frame: np.ndarray,
                   p_body_frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World pose ``(R_world_frame, p_world_frame)`` of a frame fixed on a body."""
        R, p = self.body_pose(body)
        if not (type(R_body_frame) is np.ndarray and R_body_frame.shape == (3, 3) and R_body_frame.dtype == np.float64):
            R_body_frame = real_array(R_body_frame, "R_body_frame", shape=(3, 3))
        elif not math.isfinite(float(R_body_frame.sum())):
            raise ValueError("R_body_frame contains NaN or infinity")
        return R @ R_body_frame, _finite_out(R @ self._vec3(p_body_frame, "p_body_frame") + p, "p_body_frame")

    # ------------------------------------------------------------------ points
    def jacobian6(self, body: int, p_world_point: ArrayLike) -> np.ndarray:
        """6 x nv Jacobian of ``[omega; v_point]`` (world axes) of the world point on ``body``."""
        k = self._c.link_of_body[self._body(body)]
        p_world_point = self._vec3(p_world_point, "p_world_point")
        J = np.zeros((6, self.nv))
        if k < 0:
            return J
        m = self.mask[k]
        Sw = self.Sw[:, m]
        J[:3, m] = Sw
        J[3:, m] = self.SvO[:, m] - skew3(p_world_point) @ Sw
        return _finite_out(J, "p_world_point")

    def _need_v(self):
        if self.v is None:
            raise ValueError("this ConstraintKinematics was built without v: velocities are not available")

    def velocity6(self, body: int, p_world_point: ArrayLike) -> np.ndarray:
        """``[omega; v_point]`` (world axes) of the world point fixed on ``body``."""
        self._need_v()
        k = self._c.link_of_body[self._body(body)]
        p_world_point = self._vec3(p_world_point, "p_world_point")
        if k < 0:
            return np.zeros(6)
        R, o = self.oR[k], self.op[k]
        w = R @ self.vel[k, :3]
        return _finite_out(np.concatenate([w, R @ self.vel[k, 3:] + cross3(w, p_world_point - o)]), "v, p_world_point")

    def bias6(self, body: int, p_world_point: ArrayLike) -> np.ndarray:
        """``[alpha; a_point]`` (world axes) of the point at ``qdd = 0`` without gravity: the
        velocity-product part of the 6-D point acceleration (classical linear acceleration)."""
        self._need_v()
        k = self._c.link_of_body[self._body(body)]
        p_world_point = self._vec3(p_world_point, "p_world_point")
        if k < 0:
            return np.zeros(6)
        R, o = self.oR[k], self.op[k]
        w = R @ self.vel[k, :3]
        vo = R @ self.vel[k, 3:]
        al = R @ self.acc[k, :3]
        ao = R @ self.acc[k, 3:]
        r = p_world_point - o
        return _finite_out(np.concatenate([al, ao + cross3(al, r) + cross3(w, vo + cross3(w, r))]), "v, p_world_point")
