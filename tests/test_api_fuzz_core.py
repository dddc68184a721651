"""API fuzzing (see test_api_fuzz.py): the tree algorithms, spatial algebra, joints, model
building, configuration helpers, simulate, Pinocchio coordinates and the URDF gravity."""

from __future__ import annotations

import numpy as np
from test_api_fuzz import E, fuzz_tests

import sinews
from sinews import SpatialInertia, Transform, spatial
from sinews import joints as J
from sinews.interop import PinocchioCoordinates
from sinews.simulate import simulate


def zoo():
    """Free-flyer base, spherical shoulder, revolute elbow, prismatic slider and a frame."""
    m = sinews.Model(name="zoo")
    base = m.add_body(0, J.FreeFlyer(), None, SpatialInertia.from_box(2.0, (0.4, 0.3, 0.2)), "base")
    ball = m.add_body(base, J.Spherical(), (0.2, 0.0, 0.0), SpatialInertia.from_box(1.0, (0.5, 0.1, 0.1), (0.25, 0, 0)), "ball")
    hinge = m.add_body(ball, J.RevoluteY(), (0.5, 0.0, 0.0), SpatialInertia.from_box(0.5, (0.4, 0.1, 0.1), (0.2, 0, 0)), "hinge")
    m.add_body(base, J.Prismatic((0.0, 0.6, 0.8)), (0.0, 0.1, 0.0), SpatialInertia.from_box(0.3, (0.1, 0.1, 0.1)), "slide")
    m.add_frame("tip", hinge, (0.4, 0.0, 0.0))
    return m


ZOO = zoo()
RNG = np.random.default_rng(7)
Q = sinews.random_configuration(ZOO, RNG, -1.0, 1.0)
Q1 = sinews.random_configuration(ZOO, RNG, -1.0, 1.0)
V = RNG.uniform(-1, 1, ZOO.nv)
A = RNG.uniform(-1, 1, ZOO.nv)
FEXT = RNG.uniform(-1, 1, (ZOO.nbodies, 6))
FEXT[0] = 0.0
MASS = sinews.crba(ZOO, Q)
LTL = sinews.ltl_factor(ZOO, MASS)
R0 = spatial.rpy_to_matrix(0.3, -0.2, 0.5)
P0 = np.array([0.1, -0.2, 0.3])
X4 = Transform(R0, P0).homogeneous()
QUAT = spatial.matrix_to_quat(R0)
M6 = np.array([0.1, 0.2, -0.3, 0.4, -0.5, 0.6])
PIN = PinocchioCoordinates(ZOO)
URDF = """<robot name="r"><link name="base"/><link name="rod"><inertial><origin xyz="0 0 -0.5"/>
<mass value="1"/><inertia ixx="0.083" iyy="0.083" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/></joint></robot>"""


def st(**kw):
    """Valid state arguments on the zoo model (fresh copies)."""
    out = dict(model=ZOO)
    for k, v in kw.items():
        out[k] = v.copy() if isinstance(v, np.ndarray) else v
    return out


def fresh_model():
    m = sinews.Model(name="fresh")
    m.add_body(0, J.RevoluteZ(), None, SpatialInertia.from_box(1.0, (0.1, 0.2, 0.3)), "a")
    return m


def set_gravity(model, gravity):
    model.gravity = gravity
    return model.gravity


TABLE = [
    # -- dynamics
    E(sinews.rnea, lambda: st(q=Q, v=V, a=A, f_ext=FEXT), "q:q v a f_ext"),
    E(sinews.nonlinear_effects, lambda: st(q=Q, v=V, f_ext=FEXT), "q:q v f_ext"),
    E(sinews.gravity_torques, lambda: st(q=Q), "q:q"),
    E(sinews.crba, lambda: st(q=Q), "q:q"),
    E(sinews.aba, lambda: st(q=Q, v=V, tau=A, f_ext=FEXT), "q:q v tau f_ext"),
    E(sinews.minv_times, lambda: st(q=Q, x=A), "q:q x"),
    E(sinews.minverse, lambda: st(q=Q), "q:q"),
    E(sinews.forward_dynamics_lagrangian, lambda: st(q=Q, v=V, tau=A, f_ext=FEXT), "q:q v tau f_ext"),
    E(sinews.ltl_factor, lambda: st(M=MASS), "M"),
    E(sinews.LTLFactor.solve, lambda: dict(self=LTL, b=A.copy()), "b", free_shape=True),
    E(sinews.LTLFactor.solve_LT, lambda: dict(self=LTL, b=A.copy()), "b", free_shape=True),
    E(sinews.LTLFactor.solve_L, lambda: dict(self=LTL, b=A.copy()), "b", free_shape=True),
    # -- kinematics
    E(sinews.forward_kinematics, lambda: st(q=Q), "q:q"),
    E(sinews.body_placement, lambda: st(q=Q, body="hinge"), "q:q"),
    E(sinews.point_position, lambda: st(q=Q, body="hinge", point=P0), "q:q point"),
    E(sinews.point_velocity, lambda: st(q=Q, v=V, body="hinge", point=P0), "q:q v point"),
    E(sinews.point_acceleration, lambda: st(q=Q, v=V, a=A, body="hinge", point=P0), "q:q v a point"),
    E(sinews.point_velocity_6d, lambda: st(q=Q, v=V, body="hinge", point=P0), "q:q v point"),
    E(sinews.point_acceleration_6d, lambda: st(q=Q, v=V, a=A, body="hinge", point=P0), "q:q v a point"),
    E(sinews.point_jacobian, lambda: st(q=Q, body="hinge", point=P0), "q:q point"),
    E(sinews.point_jacobian_6d, lambda: st(q=Q, body="hinge", point=P0), "q:q point"),
    E(sinews.body_jacobian, lambda: st(q=Q, body="hinge", frame="world"), "q:q"),
    E(sinews.center_of_mass, lambda: st(q=Q), "q:q"),
    E(sinews.com_velocity, lambda: st(q=Q, v=V), "q:q v"),
    E(sinews.com_jacobian, lambda: st(q=Q), "q:q"),
    E(sinews.kinetic_energy, lambda: st(q=Q, v=V), "q:q v"),
    E(sinews.potential_energy, lambda: st(q=Q), "q:q"),
    E(sinews.mechanical_energy, lambda: st(q=Q, v=V), "q:q v"),
    # -- configuration, simulation
    E(sinews.integrate, lambda: st(q=Q, v=V, dt=0.1), "q:q v dt:scalar"),
    E(sinews.difference, lambda: st(q0=Q, q1=Q1), "q0:q q1:q"),
    E(sinews.normalize, lambda: st(q=Q), "q:q"),
    E(sinews.random_configuration, lambda: st(rng=np.random.default_rng(1), lower=-1.0, upper=2.0), "lower:scalar upper:scalar"),
    E(simulate, lambda: st(q0=Q, v0=V, tau=A, duration=0.01, dt=0.005, progress=False), "q0:q v0 tau duration:scalar dt:scalar", free_shape=True),
    # -- model building
    E(sinews.Model, lambda: dict(gravity=np.array([0.0, 0.0, -9.81])), "gravity"),
    E(sinews.Model.gravity.fset, lambda: dict(model=fresh_model(), gravity=np.array([0.0, -9.81, 0.0])), "gravity", call=set_gravity),
    E(sinews.Model.add_body, lambda: dict(self=fresh_model(), parent="a", joint=J.RevoluteX(), X_parent_joint=X4.copy(), inertia=SpatialInertia.from_box(1.0, (0.1, 0.2, 0.3))), "X_parent_joint"),
    E(sinews.Model.add_frame, lambda: dict(self=fresh_model(), name="f", body="a", X_body_frame=X4.copy()), "X_body_frame"),
    E(J.Revolute, lambda: dict(axis=np.array([0.0, 0.6, 0.8])), "axis"),
    E(J.Prismatic, lambda: dict(axis=np.array([0.0, 0.6, 0.8])), "axis"),
    E(J.Helical, lambda: dict(axis=np.array([0.0, 0.6, 0.8]), pitch=0.1), "axis pitch:scalar"),
    # free shapes: the number of axes / of Jacobian rows is the caller's choice
    E(J.MultiAxis, lambda: dict(axes=np.array([[0.0, 0, 1, 0, 0, 0], [0, 0, 0, 1.0, 0, 0]])), "axes", free_shape=True),
    E(sinews.load_urdf, lambda: dict(source=URDF, gravity=np.array([0.0, 0.0, -9.81])), "gravity"),
    E(SpatialInertia, lambda: dict(mass=2.0, com=P0.copy(), inertia_com=np.diag([0.1, 0.2, 0.25])), "mass:scalar com inertia_com"),
    E(SpatialInertia.point_mass, lambda: dict(mass=2.0, com=P0.copy()), "mass:scalar com"),
    E(SpatialInertia.from_box, lambda: dict(mass=2.0, size=np.array([0.1, 0.2, 0.3]), com=P0.copy()), "mass:scalar size com"),
    E(SpatialInertia.from_rod, lambda: dict(mass=2.0, length=0.5), "mass:scalar length:scalar"),
    # -- spatial algebra
    E(Transform, lambda: dict(R=R0.copy(), p=P0.copy()), "R p"),
    E(Transform.translation, lambda: dict(p=P0.copy()), "p"),
    E(Transform.rot_x, lambda: dict(angle=0.3, p=P0.copy()), "angle:scalar p"),
    E(Transform.rot_axis, lambda: dict(axis=np.array([0.0, 0.6, 0.8]), angle=0.3, p=P0.copy()), "axis angle:scalar p"),
    E(Transform.from_rpy, lambda: dict(roll=0.1, pitch=0.2, yaw=0.3, p=P0.copy()), "roll:scalar p"),
    E(Transform.from_quat, lambda: dict(quat=QUAT.copy(), p=P0.copy()), "quat p"),
    E(Transform.from_matrix, lambda: dict(T=X4.copy()), "T"),
    E(Transform.act_point, lambda: dict(self=Transform(R0, P0), x=P0.copy()), "x"),
    E(Transform.act_motion, lambda: dict(self=Transform(R0, P0), m=M6.copy()), "m"),
    E(Transform.act_force, lambda: dict(self=Transform(R0, P0), f=M6.copy()), "f"),
    E(spatial.skew, lambda: dict(w=P0.copy()), "w"),
    E(spatial.rot_x, lambda: dict(angle=0.3), "angle:scalar"),
    E(spatial.rot_axis, lambda: dict(axis=np.array([0.0, 0.6, 0.8]), angle=0.3), "axis angle:scalar"),
    E(spatial.rpy_to_matrix, lambda: dict(roll=0.1, pitch=0.2, yaw=0.3), "roll:scalar pitch:scalar yaw:scalar"),
    E(spatial.matrix_to_rpy, lambda: dict(R=R0.copy()), "R"),
    E(spatial.quat_to_matrix, lambda: dict(quat=QUAT.copy()), "quat"),
    E(spatial.matrix_to_quat, lambda: dict(R=R0.copy()), "R"),
    E(spatial.motion_matrix, lambda: dict(R=R0.copy(), p=P0.copy()), "R p"),
    E(spatial.force_matrix, lambda: dict(R=R0.copy(), p=P0.copy()), "R p"),
    E(spatial.cross_motion, lambda: dict(m=M6.copy(), u=M6[::-1].copy()), "m u"),
    E(spatial.cross_force, lambda: dict(m=M6.copy(), f=M6[::-1].copy()), "m f"),
    E(spatial.motion_cross_matrix, lambda: dict(m=M6.copy()), "m"),
    E(spatial.force_cross_matrix, lambda: dict(m=M6.copy()), "m"),
    E(spatial.exp_so3, lambda: dict(w=P0.copy()), "w"),
    E(spatial.log_so3, lambda: dict(R=R0.copy()), "R"),
    E(spatial.exp_se3, lambda: dict(twist=M6.copy()), "twist"),
    E(spatial.log_se3, lambda: dict(R=R0.copy(), p=P0.copy()), "R p"),
    E(spatial.as_transform, lambda: dict(X=X4.copy()), "X"),
    # -- Pinocchio coordinates
    E(PinocchioCoordinates.q_to_pin, lambda: dict(self=PIN, q=Q.copy()), "q"),
    E(PinocchioCoordinates.q_from_pin, lambda: dict(self=PIN, q=Q.copy()), "q"),
    E(PinocchioCoordinates.v_from_pin, lambda: dict(self=PIN, v_pin=V.copy()), "v_pin"),
    E(PinocchioCoordinates.v_to_pin, lambda: dict(self=PIN, v=V.copy()), "v"),
    E(PinocchioCoordinates.matrix_from_pin, lambda: dict(self=PIN, M_pin=MASS.copy()), "M_pin"),
    E(PinocchioCoordinates.columns_from_pin, lambda: dict(self=PIN, J_pin=MASS[:6].copy()), "J_pin", free_shape=True),
    E(PinocchioCoordinates.rows6_from_pin, lambda: dict(J_pin=MASS[:6].copy()), "J_pin", free_shape=True),
]

test_api_fuzz_core = fuzz_tests(TABLE)
