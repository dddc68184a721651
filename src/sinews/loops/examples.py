"""Closed-chain mechanisms built with :class:`~sinews.loops.LoopJoint` (used by the tests, the
demos ``stewart`` and ``wishbone`` and ``docs/loops.md``).

Every builder returns a :class:`Mechanism`: the model, an unbound
:class:`~sinews.constraints.ConstraintSet`, a configuration ``q0`` on the constraint manifold
and a dictionary ``info`` of named quantities (dimensions, body names, indices).  Units: SI
(m, kg, s, rad).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import joints
from ..constraints.constraint_set import ConstraintSet
from ..model import Model
from ..spatial import SpatialInertia, Transform, matrix_to_quat

__all__ = ["Mechanism", "slider_crank", "four_bar", "shaft_pair", "double_wishbone", "stewart_platform",
           "stewart_configuration", "stewart_leg_lengths"]


@dataclass
class Mechanism:
    """A closed-chain example: ``model``, ``cs`` (unbound), ``q0`` (closed), ``info``."""

    model: Model
    cs: ConstraintSet
    q0: np.ndarray
    info: dict = field(default_factory=dict)


def _rod(mass, length, axis=0, radius=0.01):
    """A slender rod from its origin along +axis: COM at the middle."""
    c = np.zeros(3)
    c[axis] = 0.5 * length
    I = np.full(3, mass * (length**2 / 12.0 + radius**2 / 4.0))
    I[axis] = 0.5 * mass * radius**2
    return SpatialInertia(mass, c, np.diag(I))


def slider_crank(crank: float = 0.1, rod: float = 0.35,
                 masses: tuple[float, float, float] = (1.0, 0.8, 0.5)) -> Mechanism:
    """Crank (revolute z at the origin), connecting rod (revolute z at the crank pin), slider
    (prismatic x on the ground); a pin loop closes the rod tip on the slider.

    Closed form: slider position ``x = r cos(theta) + sqrt(l^2 - r^2 sin^2(theta))``."""
    m = Model(gravity=(0.0, -9.81, 0.0), name="slider_crank")
    c = m.add_body(0, joints.RevoluteZ(), None, _rod(masses[0], crank), "crank")
    m.add_body(c, joints.RevoluteZ(), (crank, 0, 0), _rod(masses[1], rod), "rod")
    m.add_body(0, joints.PrismaticX(), None, SpatialInertia(masses[2], (0, 0, 0), np.eye(3) * 1e-3), "slider")
    cs = ConstraintSet()
    cs.add_loop_joint("rod", "slider", "pin", Transform.translation((rod, 0, 0)), None, name="wrist_pin")
    q0 = np.array([0.0, 0.0, crank + rod])
    return Mechanism(m, cs, q0, {"crank": crank, "rod": rod})


def four_bar(ground: float = 0.4, crank: float = 0.1, coupler: float = 0.35, rocker: float = 0.3) -> Mechanism:
    """Planar four-bar: crank (revolute z at the origin), coupler (on the crank tip), rocker
    (revolute z at ``(ground, 0, 0)``); a pin loop joins the coupler tip to the rocker tip.
    The default lengths are a Grashof crank-rocker (s + l <= p + q, the crank is shortest); the
    crank carries a flywheel (2 kg, 0.02 kg m^2 about its axis).
    ``q0``: crank angle pi/2, assembled on the open branch."""
    m = Model(gravity=(0.0, -9.81, 0.0), name="four_bar")
    flywheel = SpatialInertia(2.0, (0, 0, 0), np.diag([0.01, 0.01, 0.02]))  # the crank carries a flywheel
    c = m.add_body(0, joints.RevoluteZ(), None, _rod(1.0, crank) + flywheel, "crank")
    m.add_body(c, joints.RevoluteZ(), (crank, 0, 0), _rod(1.0, coupler), "coupler")
    m.add_body(0, joints.RevoluteZ(), (ground, 0, 0), _rod(1.0, rocker), "rocker")
    cs = ConstraintSet()
    cs.add_loop_joint("coupler", "rocker", "pin", Transform.translation((coupler, 0, 0)),
                      Transform.translation((rocker, 0, 0)), name="pin")
    th = 0.5 * math.pi
    A = np.array([crank * math.cos(th), crank * math.sin(th)])
    B = _circles(A, coupler, np.array([ground, 0.0]), rocker, upper=True)
    q1 = math.atan2(B[1] - A[1], B[0] - A[0]) - th
    q2 = math.atan2(B[1], B[0] - ground)
    return Mechanism(m, cs, np.array([th, q1, q2]),
                     {"ground": ground, "crank": crank, "coupler": coupler, "rocker": rocker})


def _circles(c1, r1, c2, r2, upper=True):
    """The intersection of two circles (the one with the larger y when ``upper``)."""
    d = float(np.linalg.norm(c2 - c1))
    a = (r1 * r1 - r2 * r2 + d * d) / (2 * d)
    h2 = r1 * r1 - a * a
    if h2 < 0:
        raise ValueError("the circles do not intersect: the mechanism cannot close")
    h = math.sqrt(h2)
    e = (c2 - c1) / d
    n = np.array([-e[1], e[0]])
    p1, p2 = c1 + a * e + h * n, c1 + a * e - h * n
    return p1 if (p1[1] >= p2[1]) == upper else p2


def shaft_pair(angle: float = 0.5, joint_type: str = "constant_velocity",
               inertias: tuple[float, float] = (0.02, 0.05)) -> Mechanism:
    """Two shafts on revolute bearings whose axes meet at the point ``(0, 0, 0.5)`` with the
    bend ``angle`` between them, coupled by a ``"constant_velocity"`` or ``"universal"`` loop
    at that point.  Shaft 1 turns about z; shaft 2 about ``(sin a, 0, cos a)``.  The universal
    joint's yokes: x of shaft 1 and y of shaft 2 (``R = Rx(a1) Ry(a2)``)."""
    m = Model(gravity=(0.0, 0.0, 0.0), name=f"shafts_{joint_type}")
    c = np.array([0.0, 0.0, 0.5])
    I1 = SpatialInertia(1.0, (0, 0, 0), np.diag([0.03, 0.03, inertias[0]]))
    I2 = SpatialInertia(1.0, (0, 0, 0), np.diag([0.03, 0.03, inertias[1]]))
    m.add_body(0, joints.RevoluteZ(), None, I1, "shaft1")
    Ry = Transform.rot_y(angle, c - np.array([math.sin(angle), 0, math.cos(angle)]) * 0.5)
    m.add_body(0, joints.RevoluteZ(), Ry, I2, "shaft2")
    # frames at the joint centre, z along each shaft
    X1 = Transform.translation(c)
    X2 = Transform.translation((0, 0, 0.5))
    cs = ConstraintSet()
    cs.add_loop_joint("shaft1", "shaft2", joint_type, X1, X2, name="coupling")
    return Mechanism(m, cs, np.zeros(2), {"angle": angle})


# ---------------------------------------------------------------------------------- wishbone
_WB = {
    "lca_pivot": (0.0, 0.20, 0.00),   # lower control arm axis (along x) through this point
    "lca_arm": (0.0, 0.40, 0.00),     # lower ball joint in the LCA frame
    "ubj": (0.0, -0.03, 0.30),        # upper ball joint in the spindle frame (at the LBJ)
    "uca_pivot": (0.0, -0.30, 0.02),  # upper control arm axis point in the UCA frame (at the UBJ)
    "steer_arm": (-0.12, 0.0, 0.05),  # tie-rod outer ball joint in the spindle frame
    "tie_rod": (0.0, -0.35, 0.0),     # tie-rod inner end in the tie-rod frame
    "wheel_centre": (0.0, 0.10, 0.12),  # in the spindle frame
    "contact": (0.0, 0.10, -0.20),    # tyre contact patch in the spindle frame
}


def double_wishbone(spring: dict | None = None) -> Mechanism:
    """A double-wishbone suspension corner (chassis = world; x forward, y outward, z up).

    Tree: lower control arm (LCA, revolute about x) -> spindle (spherical joint: the lower ball
    joint) -> upper control arm (UCA, spherical: the upper ball joint) and -> tie rod
    (spherical: the outer tie-rod end).  Loops: a **pin** between the UCA's inner axis and the
    chassis (axis x) and a **ball** between the tie rod's inner end and the chassis (Karana's
    double-wishbone example has the same pair).  2 degrees of freedom: the wheel travel and the
    tie rod's spin about its own axis.  ``spring``: ``(stiffness N m/rad, damping N m s/rad)`` of
    a torsion bar on the upper-arm pivot, a cut-joint force of the pin loop (default none).
    ``q0``: everything at its reference (closed).
    ``info``: points and the q/v indices of the LCA angle."""
    m = Model(gravity=(0.0, 0.0, -9.81), name="double_wishbone")
    W = {k: np.array(v) for k, v in _WB.items()}
    lca = m.add_body(0, joints.RevoluteX(), W["lca_pivot"], _rod(3.0, 0.4, axis=1), "lower_arm")
    spindle = m.add_body(lca, joints.Spherical(), W["lca_arm"],
                         SpatialInertia(15.0, W["wheel_centre"], np.diag([0.6, 1.0, 0.6])), "spindle")
    m.add_body(spindle, joints.Spherical(), W["ubj"], SpatialInertia(1.5, (0, -0.15, 0.01), np.diag([0.02, 0.005, 0.02])),
               "upper_arm")
    m.add_body(spindle, joints.Spherical(), W["steer_arm"],
               SpatialInertia(0.5, (0, -0.175, 0), np.diag([0.005, 1e-3, 0.005])), "tie_rod")
    cs = ConstraintSet()
    p_uca_world = W["lca_pivot"] + W["lca_arm"] + W["ubj"] + W["uca_pivot"]
    cs.add_loop_joint("upper_arm", "world", "pin", Transform.translation(W["uca_pivot"]),
                      Transform.translation(p_uca_world), axis=(1.0, 0.0, 0.0), name="upper_arm_pivot")
    if spring is not None:
        cs.group("upper_arm_pivot").set_cut_force(stiffness=spring[0], damping=spring[1] or None)
    p_tie_world = W["lca_pivot"] + W["lca_arm"] + W["steer_arm"] + W["tie_rod"]
    cs.add_loop_joint("tie_rod", "world", "ball", Transform.translation(W["tie_rod"]),
                      Transform.translation(p_tie_world), name="tie_rod_inner")
    q0 = np.zeros(m.nq)
    for b in ("spindle", "upper_arm", "tie_rod"):
        q0[m.idx_q(b) + 3] = 1.0
    info = dict(W)
    info.update(uca_pivot_world=p_uca_world, tie_rod_world=p_tie_world, lca_q=m.idx_q("lower_arm"),
                lca_v=m.idx_v("lower_arm"))
    return Mechanism(m, cs, q0, info)


# ---------------------------------------------------------------------------------- Stewart
def _stewart_points(base_radius, platform_radius, half_angle):
    deg = math.radians
    b_ang = [deg(a) for a in (-half_angle, half_angle, 120 - half_angle, 120 + half_angle, 240 - half_angle,
                              240 + half_angle)]
    p_ang = [deg(a) for a in (-60 + half_angle, 60 - half_angle, 60 + half_angle, 180 - half_angle,
                              180 + half_angle, 300 - half_angle)]
    B = np.array([[base_radius * math.cos(a), base_radius * math.sin(a), 0.0] for a in b_ang])
    P = np.array([[platform_radius * math.cos(a), platform_radius * math.sin(a), 0.0] for a in p_ang])
    return B, P


def stewart_platform(base_radius: float = 1.0, platform_radius: float = 0.6, height: float = 1.0,
                     half_angle: float = 10.0, platform_mass: float = 20.0,
                     leg_masses: tuple[float, float] = (2.0, 1.0)) -> Mechanism:
    """A 6-6 Stewart-Gough platform: six universal-prismatic-ball (UPS) legs.

    Each leg: a lower tube on a universal joint at base point ``B_i`` (joint frame: z along the
    leg at the home pose; ``R = Rx(a1) Ry(a2)``), an upper rod on a prismatic joint along the
    tube whose coordinate **is the leg length** (the rod's origin is the leg tip), and a
    **ball** loop between the leg tip and platform point ``P_i`` (platform frame).  The
    platform is a free body.  ``leg_masses``: (lower, upper) leg masses, COMs 0.3 m from the
    ends.  ``q0``: the home pose (platform level at ``height``).  ``info``: ``B`` (6 x 3, world),
    ``P`` (6 x 3, platform frame), ``home`` (platform position), ``leg_q`` / ``leg_v``
    (indices of the six leg lengths), ``platform`` (its q index)."""
    B, P = _stewart_points(base_radius, platform_radius, half_angle)
    home = np.array([0.0, 0.0, height])
    m = Model(gravity=(0.0, 0.0, -9.81), name="stewart")
    uni = joints.MultiAxis([[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0]], kind="Universal")
    ml, mu = leg_masses
    frames = []
    for i in range(6):
        d = home + P[i] - B[i]
        R = _z_along(d / np.linalg.norm(d))
        frames.append(R)
        low = m.add_body(0, uni, Transform(R, B[i]), SpatialInertia(ml, (0, 0, 0.3), np.diag([0.02, 0.02, 1e-3]) * ml),
                         f"leg{i}_lower")
        m.add_body(low, joints.PrismaticZ(), None, SpatialInertia(mu, (0, 0, -0.3), np.diag([0.02, 0.02, 1e-3]) * mu),
                   f"leg{i}_upper")
    r = 0.5 * platform_radius
    m.add_body(0, joints.FreeFlyer(), None,
               SpatialInertia(platform_mass, (0, 0, 0), np.diag([r * r / 4, r * r / 4, r * r / 2]) * platform_mass),
               "platform")
    cs = ConstraintSet()
    for i in range(6):
        cs.add_loop_joint(f"leg{i}_upper", "platform", "ball", None, Transform.translation(P[i]), name=f"leg{i}")
    info = {"B": B, "P": P, "home": home, "joint_frames": np.array(frames),
            "leg_q": np.array([m.idx_q(f"leg{i}_upper") for i in range(6)]),
            "leg_v": np.array([m.idx_v(f"leg{i}_upper") for i in range(6)]),
            "platform": m.idx_q("platform"), "platform_v": m.idx_v("platform")}
    mech = Mechanism(m, cs, np.zeros(m.nq), info)
    mech.q0 = stewart_configuration(mech, np.eye(3), home)
    return mech


def _z_along(d):
    """A rotation whose z axis is the unit vector d (its x axis horizontal when possible)."""
    x = np.cross([0.0, 0.0, 1.0], d) if abs(d[2]) < 1 - 1e-12 else np.array([1.0, 0.0, 0.0])
    if np.linalg.norm(x) < 1e-12:
        x = np.array([1.0, 0.0, 0.0])
    x = x / np.linalg.norm(x)
    y = np.cross(d, x)
    return np.column_stack([x, y, d])


def stewart_leg_lengths(mech: Mechanism, R: ArrayLike, p: ArrayLike) -> np.ndarray:
    """Inverse kinematics in closed form: the six leg lengths ``|p + R P_i - B_i|``."""
    B, P = mech.info["B"], mech.info["P"]
    return np.linalg.norm(p + P @ np.asarray(R).T - B, axis=1)


def stewart_configuration(mech: Mechanism, R: ArrayLike, p: ArrayLike) -> np.ndarray:
    """The closed configuration with the platform at pose ``(R, p)`` (closed-form inverse
    kinematics of every leg: universal angles and length)."""
    m = mech.model
    B, P = mech.info["B"], mech.info["P"]
    q = np.zeros(m.nq)
    R = np.asarray(R, float)
    for i in range(6):
        d = p + R @ P[i] - B[i]
        L = float(np.linalg.norm(d))
        u = mech.info["joint_frames"][i].T @ (d / L)  # leg direction in the joint frame
        a2 = math.asin(max(-1.0, min(1.0, u[0])))
        a1 = math.atan2(-u[1], u[2])
        iq = m.idx_q(f"leg{i}_lower")
        q[iq], q[iq + 1] = a1, a2
        q[m.idx_q(f"leg{i}_upper")] = L
    ip = mech.info["platform"]
    q[ip:ip + 3] = p
    q[ip + 3:ip + 7] = matrix_to_quat(R)
    return q
