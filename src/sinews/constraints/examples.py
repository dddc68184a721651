"""Example constrained models: RBDL's constraint test fixtures rebuilt with sinews.

Each builder returns ``(model, cs)`` (an unbound :class:`ConstraintSet`) plus, where useful,
states.  RBDL conventions translated: gravity ``(0, -9.81, 0)``; RBDL's ``Body(m, c, d)`` is
``SpatialInertia(m, c, diag(d))``; an RBDL joint frame ``SpatialTransform(E, r)`` with a
coordinate-transform ``E`` is ``Transform(E^T, r)`` here.  Inertias that violate the
triangle inequality in RBDL's fixtures (planar links given as ``diag(0, 0, I)``) are completed
with moments that never act (rotation about those axes is impossible in the model).
Reference: rbdl.md section 5.2 (scenarios A, B, H).
"""

from __future__ import annotations

import numpy as np

from .. import joints
from ..model import Model
from ..spatial import SpatialInertia, Transform
from .constraint_set import ConstraintSet

__all__ = ["four_bar", "slider_crank_3d", "double_pendulum_joint", "double_pendulum_absolute", "rbdl_roty"]

GRAVITY_Y = (0.0, -9.81, 0.0)


def rbdl_roty(angle: float) -> np.ndarray:
    """RBDL's ``roty(angle)`` coordinate transform ``[[c,0,-s],[0,1,0],[s,0,c]]`` (= Ry(angle)^T)."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def four_bar(baumgarte: bool = False, time_constant: float = 0.1) -> tuple[Model, ConstraintSet]:
    """Scenario A: planar four-bar, links l = 2, m = 2, COM (1,0,0), Izz = 8/3; B5 massless.

    Loop between the tip of B2 (X_P = translation (2,0,0)) and B5 (identity), rows x, y, Rz
    in one group named ``"loop"``.  Returns ``(model, cs)``; ``q4 = q0 + q1 - q2 - q3`` closes it.
    """
    m = Model(gravity=GRAVITY_Y, name="four_bar")
    I = SpatialInertia(2.0, (1.0, 0.0, 0.0), np.diag([8 / 3, 8 / 3, 8 / 3]))
    b1 = m.add_body(0, joints.RevoluteZ(), None, I, "B1")
    m.add_body(b1, joints.RevoluteZ(), (2.0, 0.0, 0.0), I, "B2")
    b3 = m.add_body(0, joints.RevoluteZ(), None, I, "B3")
    b4 = m.add_body(b3, joints.RevoluteZ(), (2.0, 0.0, 0.0), I, "B4")
    m.add_body(b4, joints.RevoluteZ(), (2.0, 0.0, 0.0), None, "B5")
    cs = ConstraintSet()
    for ax in [(0, 0, 0, 1, 0, 0), (0, 0, 0, 0, 1, 0), (0, 0, 1, 0, 0, 0)]:
        cs.add_loop_constraint("B2", "B5", Transform.translation((2.0, 0.0, 0.0)), None, ax,
                               baumgarte=baumgarte, time_constant=time_constant, name="loop")
    return m, cs


def slider_crank_3d() -> tuple[Model, ConstraintSet]:
    """Scenario H: slider (prismatic x), crank (RevoluteZ at (0,0,2.1), frame roty(-pi/2)),
    rod (EulerZYX on the crank at (1,0,0), frame roty(pi)); loop Tx, Ty, Tz, Rz between the
    slider frame (0,0,0.1) and the rod frame (E = roty(-pi/2), r = (3,0,0)).

    The rod frame is converted like every RBDL transform, ``Transform(E^T, r)``, so that the
    two loop frames coincide at q = 0.  RBDL reads loop frames transposed (rbdl.md section
    0.6), which leaves them rotated by pi about y at q = 0: phi is still 0 there (sin(pi) = 0)
    but the sin-based rotation error is then blind to the Rz motion (d phi_z / dt = 0 while
    G_z v = omega_z), so Baumgarte terms and assembly would not act on that row.  The zero
    configuration is assembled, and is a dead centre (crank and rod collinear: rank G = 3)."""
    m = Model(gravity=GRAVITY_Y, name="slider_crank_3d")
    slider = m.add_body(0, joints.PrismaticX(), None, SpatialInertia(5.0, (0, 0, 0), np.eye(3)), "slider")
    crank = m.add_body(0, joints.RevoluteZ(), Transform(rbdl_roty(-np.pi / 2).T, (0, 0, 2.1)),
                       SpatialInertia(3.0, (0.5, 0, 0), np.diag([0.5, 0.5, 1.0])), "crank")
    m.add_body(crank, joints.EulerZYX(), Transform(rbdl_roty(np.pi).T, (1, 0, 0)),
               SpatialInertia(1.0, (1.5, 0, 0), np.diag([0.02, 0.76, 0.76])), "rod")
    cs = ConstraintSet()
    X_P = Transform(np.eye(3), (0, 0, 0.1))
    X_S = Transform(rbdl_roty(-np.pi / 2).T, (3.0, 0, 0))
    for ax in [(0, 0, 0, 1, 0, 0), (0, 0, 0, 0, 1, 0), (0, 0, 0, 0, 0, 1), (0, 0, 1, 0, 0, 0)]:
        cs.add_loop_constraint(slider, "rod", X_P, X_S, ax, name="loop")
    return m, cs


_L1 = SpatialInertia(1.0, (0.0, -0.5, 0.0), np.diag([1 / 3, 1 / 30, 1 / 3]))
_L2 = SpatialInertia(1.0, (0.5, 0.0, 0.0), np.diag([1 / 30, 1 / 3, 1 / 3]))


def double_pendulum_joint() -> Model:
    """Scenario B, joint coordinates: link1 revolute z at the origin, link2 revolute y at
    (0,-1,0) on link1."""
    m = Model(gravity=GRAVITY_Y, name="double_pendulum_joint")
    l1 = m.add_body(0, joints.RevoluteZ(), None, _L1, "link1")
    m.add_body(l1, joints.RevoluteY(), (0.0, -1.0, 0.0), _L2, "link2")
    return m


def double_pendulum_absolute(custom: bool = False) -> tuple[Model, ConstraintSet]:
    """Scenario B, absolute coordinates: each link on a massless TranslationXYZ body then an
    EulerZYX joint (12 dofs).  Groups ``"RzBase"`` (base-link1 at the origin: Tx,Ty,Tz,Rx,Ry)
    and ``"RyLink1"`` (link1 at (0,-1,0) to link2's origin: Tx,Ty,Tz,Rx,Rz).  ``custom=True``
    builds the same two groups as :class:`~sinews.constraints.custom.PinJointConstraint`."""
    from .custom import PinJointConstraint

    m = Model(gravity=GRAVITY_Y, name="double_pendulum_absolute")
    t1 = m.add_body(0, joints.TranslationXYZ(), None, None, "trans1")
    m.add_body(t1, joints.EulerZYX(), None, _L1, "link1")
    t2 = m.add_body(0, joints.TranslationXYZ(), None, None, "trans2")
    m.add_body(t2, joints.EulerZYX(), None, _L2, "link2")
    cs = ConstraintSet()
    X_tip = Transform.translation((0.0, -1.0, 0.0))
    if custom:
        cs.add_custom_constraint(PinJointConstraint(0, "link1", None, None, pin_axis=2, name="RzBase"))
        cs.add_custom_constraint(PinJointConstraint("link1", "link2", X_tip, None, pin_axis=1, name="RyLink1"))
        return m, cs
    E = np.eye(6)
    for k in (3, 4, 5, 0, 1):
        cs.add_loop_constraint(0, "link1", None, None, E[k], name="RzBase")
    for k in (3, 4, 5, 0, 2):
        cs.add_loop_constraint("link1", "link2", X_tip, None, E[k], name="RyLink1")
    return m, cs


def double_pendulum_state(q, qd):
    """Map a joint-model state ``(q, qd)`` (2 + 2) to the absolute model (12 + 12)."""
    mj = double_pendulum_joint()
    from ..kinematics import point_position, point_velocity

    r2 = point_position(mj, q, "link2")
    v2 = point_velocity(mj, q, qd, "link2")
    qa = np.array([0, 0, 0, q[0], 0, 0, *r2, q[0], q[1], 0.0])
    qda = np.array([0, 0, 0, qd[0], 0, 0, *v2, qd[0], qd[1], 0.0])
    return qa, qda
