"""Hardening of the core tree algorithms (issue 12): regressions, one per defect, and a
property-based sweep over the array arguments of the core public API.

The sweep's invariant: a call either returns finite values of the right shape (the same values
as the clean call for layout changes and for rescaled quaternions) or raises ``ValueError`` /
``KeyError`` whose message names the corrupted argument; never another exception type.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sinews
from sinews import SpatialInertia, Transform, spatial
from sinews import _kernels as K
from sinews import joints as J
from sinews.interop import PinocchioCoordinates
from sinews.sample_models import pendulum, random_tree
from sinews.simulate import rk4_step, simulate


def zoo():
    """Free-flyer base, spherical shoulder, revolute elbow, prismatic slider, a weld, a frame."""
    m = sinews.Model(name="zoo")
    base = m.add_body(0, J.FreeFlyer(), None, SpatialInertia.from_box(2.0, (0.4, 0.3, 0.2)), "base")
    ball = m.add_body(base, J.Spherical(), (0.2, 0.0, 0.0), SpatialInertia.from_box(1.0, (0.5, 0.1, 0.1), (0.25, 0, 0)), "ball")
    hinge = m.add_body(ball, J.RevoluteY(), (0.5, 0.0, 0.0), SpatialInertia.from_box(0.5, (0.4, 0.1, 0.1), (0.2, 0, 0)), "hinge")
    m.add_body(hinge, J.Fixed(), (0.4, 0.0, 0.0), SpatialInertia.point_mass(0.2), "tool")
    m.add_body(base, J.Prismatic((0.0, 0.6, 0.8)), (0.0, 0.1, 0.0), SpatialInertia.from_box(0.3, (0.1, 0.1, 0.1)), "slide")
    m.add_frame("tip", hinge, (0.4, 0.0, 0.0))
    return m


ZOO = zoo()
RNG = np.random.default_rng(3)
Q = sinews.random_configuration(ZOO, RNG, -1.0, 1.0)
Q1 = sinews.random_configuration(ZOO, RNG, -1.0, 1.0)
V, A = RNG.uniform(-1, 1, ZOO.nv), RNG.uniform(-1, 1, ZOO.nv)
F = RNG.uniform(-1, 1, (ZOO.nbodies, 6))
F[0] = 0.0
P = np.array([0.1, -0.2, 0.3])
M = sinews.crba(ZOO, Q)
QUATS = [int(s) for s in ZOO.compiled.quat_slices[:, 0]]  # 3 (free-flyer), 7 (spherical)


def names_arg(exc, name):
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", str(exc)) is not None


# Every public core function that takes a configuration, called on the zoo model: name -> call.
Q_FUNCTIONS = {
    "rnea": lambda q: sinews.rnea(ZOO, q, V, A, F),
    "nonlinear_effects": lambda q: sinews.nonlinear_effects(ZOO, q, V, {"hinge": F[3]}),
    "gravity_torques": lambda q: sinews.gravity_torques(ZOO, q),
    "crba": lambda q: sinews.crba(ZOO, q),
    "aba": lambda q: sinews.aba(ZOO, q, V, A, F),
    "minv_times": lambda q: sinews.minv_times(ZOO, q, A),
    "minverse": lambda q: sinews.minverse(ZOO, q),
    "forward_dynamics_lagrangian": lambda q: sinews.forward_dynamics_lagrangian(ZOO, q, V, A, F),
    "forward_kinematics": lambda q: sinews.forward_kinematics(ZOO, q).p,
    "body_placement": lambda q: sinews.body_placement(ZOO, q, "tool").homogeneous(),
    "point_position": lambda q: sinews.point_position(ZOO, q, "hinge", P),
    "point_velocity_6d": lambda q: sinews.point_velocity_6d(ZOO, q, V, "hinge", P),
    "point_acceleration_6d": lambda q: sinews.point_acceleration_6d(ZOO, q, V, A, "hinge", P),
    "point_jacobian_6d": lambda q: sinews.point_jacobian_6d(ZOO, q, "tool", P),
    "body_jacobian": lambda q: sinews.body_jacobian(ZOO, q, "hinge", "local"),
    "center_of_mass": lambda q: sinews.center_of_mass(ZOO, q),
    "com_velocity": lambda q: sinews.com_velocity(ZOO, q, V),
    "com_jacobian": lambda q: sinews.com_jacobian(ZOO, q),
    "kinetic_energy": lambda q: sinews.kinetic_energy(ZOO, q, V),
    "potential_energy": lambda q: sinews.potential_energy(ZOO, q),
    "mechanical_energy": lambda q: sinews.mechanical_energy(ZOO, q, V),
}
# Functions that require unit quaternions (they refuse other norms, naming the argument).
UNIT_Q_FUNCTIONS = {
    "integrate": (lambda q: sinews.integrate(ZOO, q, V, 0.1), "q"),
    "difference": (lambda q: sinews.difference(ZOO, Q, q), "q1"),
    "simulate": (lambda q: simulate(ZOO, q, V, 0.004, 0.002, progress=False).q, "q0"),
}


def _scaled(i, s):
    q = Q.copy()
    q[i : i + 4] *= s
    return q


# ------------------------------------------------------------------ 1. quaternions
@pytest.mark.parametrize("i", QUATS)
@pytest.mark.parametrize("name", sorted(Q_FUNCTIONS) + sorted(UNIT_Q_FUNCTIONS) + ["normalize"])
def test_zero_quaternion_is_refused_naming_q_and_the_body(name, i):
    """Was a bare ZeroDivisionError from the kernels (27 cases)."""
    fn, arg = UNIT_Q_FUNCTIONS.get(name, (Q_FUNCTIONS.get(name), "q"))
    if name == "normalize":
        fn = lambda q: sinews.normalize(ZOO, q)  # noqa: E731
    with pytest.raises(ValueError) as info:
        fn(_scaled(i, 0.0))
    assert names_arg(info.value, arg), info.value
    if name in Q_FUNCTIONS or name == "normalize":
        body = "base" if i == 3 else "ball"
        assert f"q[{i}:{i + 4}]" in str(info.value) and repr(body) in str(info.value)


@pytest.mark.parametrize("scale", [1e-307, 1e-300, 1e-160, 1e-154, 3.0, 1e154, 1e160, 1e300, 1e307])
def test_any_finite_normal_quaternion_norm_gives_the_unit_result(scale):
    """Norms >= 1e154 gave all-NaN output from 8 kernels, norms < 1e-154 ZeroDivisionError."""
    for i in QUATS:
        q = _scaled(i, scale)
        for name, fn in Q_FUNCTIONS.items():
            want, got = np.asarray(fn(Q)), np.asarray(fn(q))
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(sinews.normalize(ZOO, q), Q, rtol=1e-15, atol=1e-15)
        for name, (fn, arg) in UNIT_Q_FUNCTIONS.items():
            with pytest.raises(ValueError, match="unit quaternion") as info:
                fn(q)
            assert names_arg(info.value, arg), (name, info.value)


def test_subnormal_quaternion_is_refused():
    q = _scaled(7, 5e-324)  # subnormal components: too few bits to define the rotation
    with pytest.raises(ValueError, match=r"q\[7:11\] is a zero \(or subnormal\) quaternion"):
        sinews.crba(ZOO, q)


def test_kernels_refuse_a_zero_quaternion_even_unchecked():
    """Other modules call the joint pass directly: a ValueError, never ZeroDivisionError."""
    c, d = ZOO.compiled, ZOO.data()
    with pytest.raises(ValueError, match="zero"):
        K.joint_pass(_scaled(3, 0.0), V, c.mi, c.mf, d.ws, 3)
    assert K.check_q(_scaled(7, 0.0), c.mi) == sinews._checks.ZERO_QUATERNION - 1


# ------------------------------------------------------------------ 2. constructors
@pytest.mark.parametrize("call, arg", [
    (lambda: SpatialInertia.from_rod(1.0, 1.0, axis=5), "axis"),
    (lambda: SpatialInertia.from_rod(1.0, 1.0, axis=1.0), "axis"),
    (lambda: SpatialInertia.from_rod(1.0, 1e300), "length"),
    (lambda: SpatialInertia(mass="heavy", com=P, inertia_com=np.eye(3)), "mass"),
    (lambda: SpatialInertia(mass=1 + 2j, com=P, inertia_com=np.eye(3)), "mass"),
    (lambda: SpatialInertia(mass=np.timedelta64(1, "s"), com=P, inertia_com=np.eye(3)), "mass"),
    (lambda: SpatialInertia(1.0, P.astype(complex), np.eye(3)), "com"),
    (lambda: SpatialInertia(1.0, P, np.eye(3).astype(complex)), "inertia_com"),
    (lambda: SpatialInertia(1e300, [1e200, 0, 0], np.eye(3)), "com"),
    (lambda: SpatialInertia.from_box(True, (1, 1, 1)), "mass"),
    (lambda: SpatialInertia.from_box(1.0, (1, 1)), "size"),
    (lambda: SpatialInertia.from_box(1.0, (1, -1, 1)), "size"),
    (lambda: J.Revolute([0.0, 0.0, 2.0]), "axis"),
    (lambda: J.Revolute([0.0, 0.0, 0.0]), "axis"),
    (lambda: J.Prismatic([np.nan, 0.0, 1.0]), "axis"),
    (lambda: J.Prismatic(np.array([0.0, 0.0, 1.0 + 0j])), "axis"),
    (lambda: J.Helical([0, 0, 1], pitch="0.1"), "pitch"),
    (lambda: J.Helical([0, 0, 1], pitch=1j), "pitch"),
    (lambda: J.MultiAxis(np.array([[0, 0, 1, 0, 0, 0]], dtype=complex)), "axes"),
    (lambda: J.MultiAxis(np.zeros((1, 6), dtype="datetime64[s]")), "axes"),
    (lambda: J.MultiAxis([[0, 0, 0, 0, 0, 0]]), "axes"),
    (lambda: J.Joint("Revolute", 0, 1, 1, axis=np.array([0.0, 0.0, 3.0])), "axis"),
    (lambda: spatial.rot_axis([1.0, 0.0, 0.0], "0.3"), "angle"),
    (lambda: spatial.rot_x(np.datetime64(1, "s")), "angle"),
    (lambda: spatial.exp_so3([1.0, 2.0]), "w"),
    (lambda: spatial.skew([1.0, 2.0, 3.0, 4.0]), "w"),
    (lambda: spatial.log_so3(np.ones((3, 3))), "R"),
    (lambda: spatial.quat_to_matrix(np.array([0, 0, 0, 1 + 0j])), "quat"),
    (lambda: Transform(np.eye(3), P.astype(complex)), "p"),
    (lambda: Transform.from_matrix(np.ones((4, 4))), "T"),
    (lambda: Transform.rot_x(0.1, p=[1, 2]), "p"),
    (lambda: Transform.from_rpy(0.1, 0.2, 0.3, p=np.array(["1", "2", "3"])), "p"),
    (lambda: sinews.Model().add_body(0, J.RevoluteZ(), np.eye(4, dtype=complex)), "X_parent_joint"),
    (lambda: sinews.Model().add_body(0, J.RevoluteZ(), (np.eye(3), [0, 0])), "X_parent_joint"),
    (lambda: sinews.Model(gravity=np.array([0, 0, -9.81 + 1j])), "gravity"),
    (lambda: sinews.Model(gravity=np.zeros(3, dtype="timedelta64[s]")), "gravity"),
])
def test_constructors_refuse_bad_arguments_by_name(call, arg):
    """from_rod(axis=5) raised IndexError, SpatialInertia(mass='heavy') an unnamed error."""
    with pytest.raises(ValueError) as info:
        call()
    assert names_arg(info.value, arg), info.value


def test_huge_rotation_vectors_stay_rotations():
    for w in ([1e300, 0.0, 0.0], [1e200, -1e200, 3.0]):
        R = spatial.exp_so3(w)
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
        assert np.all(np.isfinite(spatial.exp_se3(np.r_[w, 1.0, 2.0, 3.0])[1]))


# ------------------------------------------------------------------ 3. step counts, random q
@pytest.mark.parametrize("duration, dt", [(1e300, 1e-300), (1.0, 1e-12), (1e5, 1e-5)])
def test_simulate_refuses_impossible_runs_up_front(duration, dt):
    """Was OverflowError (1e300/1e-300) or NumPy MemoryError "7.28 TiB" (1.0/1e-12)."""
    with pytest.raises(ValueError, match=r"duration=.*dt=.*steps.*GiB") as info:
        simulate(pendulum(2), [0.0, 0.0], [0.0, 0.0], duration, dt, progress=False)
    assert "MAX_STEPS" in str(info.value)


def test_simulate_memory_limit_is_about_the_recorded_samples():
    m = pendulum(1)
    with pytest.raises(ValueError, match="record_every"):
        simulate(m, [0.0], [0.0], 1e3, 1e-6, progress=False)  # 1e9 samples of 4 values
    with pytest.raises(ValueError, match="record_every"):
        simulate(m, [0.0], [0.0], 1.0, 0.1, progress=False, record_every="2")


@pytest.mark.parametrize("args, arg", [
    ((0, np.nan), "lower"), ((0, -1.0, np.inf), "upper"), ((0, 1.0, -1.0), "lower"),
    ((0, -1e308, 1e308), "upper"), (("seed",), "rng"), ((0, 1j), "lower"),
])
def test_random_configuration_checks_its_arguments(args, arg):
    """random_configuration(m, 0, nan) raised OverflowError."""
    with pytest.raises(ValueError) as info:
        sinews.random_configuration(ZOO, *args)
    assert names_arg(info.value, arg), info.value


# ------------------------------------------------------------------ 4. rpy
@pytest.mark.parametrize("k, name", [(0, "roll"), (1, "pitch"), (2, "yaw")])
def test_rpy_to_matrix_refuses_nan(k, name):
    rpy = [0.1, 0.2, 0.3]
    rpy[k] = math.nan
    with pytest.raises(ValueError, match=name):
        spatial.rpy_to_matrix(*rpy)
    with pytest.raises(ValueError, match=name):
        Transform.from_rpy(*rpy)


# ------------------------------------------------------------------ 5. ltl_factor structure
def _off_branch_pairs(model):
    lam, n = model.compiled.lam, model.nv
    allowed = np.eye(n, dtype=bool)
    for i in range(n):
        j = lam[i]
        while j >= 0:
            allowed[i, j] = allowed[j, i] = True
            j = lam[j]
    return np.argwhere(~allowed)


def test_ltl_factor_refuses_a_matrix_that_is_not_the_models_mass_matrix():
    """A dense SPD matrix or a non-symmetric one was factorised silently (wrong factor)."""
    n = ZOO.nv
    B = np.random.default_rng(0).normal(size=(n, n))
    with pytest.raises(ValueError, match="M is not a mass matrix of this model"):
        sinews.ltl_factor(ZOO, B @ B.T + n * np.eye(n))  # SPD, entries between branches
    Ms = M.copy()
    Ms[5, 1] += 1e-3
    with pytest.raises(ValueError, match="M must be symmetric"):
        sinews.ltl_factor(ZOO, Ms)
    f = sinews.ltl_factor(ZOO, M + 1e-3 * np.eye(n))  # regularised diagonals are fine
    np.testing.assert_allclose(f.L.T @ f.L, M + 1e-3 * np.eye(n), atol=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.integers(2, 8), st.floats(1e-6, 1e3))
def test_ltl_factor_structure_check_property(seed, n, size):
    m = random_tree(n, seed, depth_first=bool(seed % 2))
    rng = np.random.default_rng(seed)
    H = sinews.crba(m, sinews.random_configuration(m, rng))
    f = sinews.ltl_factor(m, H)  # every mass matrix of the model passes
    np.testing.assert_allclose(f.L.T @ f.L, H, atol=1e-12 * np.abs(H).max())
    pairs = _off_branch_pairs(m)
    if len(pairs):
        i, j = pairs[rng.integers(len(pairs))]
        G = H.copy()
        G[i, j] = G[j, i] = size * np.abs(H).max()
        with pytest.raises(ValueError, match="M is not a mass matrix"):
            sinews.ltl_factor(m, G)


# ------------------------------------------------------------------ 6. one dtype rule
@pytest.mark.parametrize("call, arg", [
    (lambda: sinews.rnea(ZOO, Q, V, A, F.astype(complex)), "f_ext"),
    (lambda: sinews.aba(ZOO, Q, V, A, np.zeros(F.shape, dtype="datetime64[s]")), "f_ext"),
    (lambda: sinews.aba(ZOO, Q, V, A, np.zeros(F.shape, dtype="timedelta64[s]")), "f_ext"),
    (lambda: sinews.rnea(ZOO, Q, V, A, {"hinge": F[3].astype(complex)}), "f_ext"),
    (lambda: sinews.rnea(ZOO, Q, V, A, F != 0), "f_ext"),
    (lambda: sinews.point_position(ZOO, Q, "hinge", P.astype(complex)), "point"),
    (lambda: sinews.point_jacobian(ZOO, Q, "hinge", np.zeros(3, dtype="datetime64[s]")), "point"),
    (lambda: sinews.integrate(ZOO, Q, V, np.complex128(0.1)), "dt"),
    (lambda: sinews.integrate(ZOO, Q, V, "0.1"), "dt"),
    (lambda: sinews.ltl_factor(ZOO, M.astype(complex)), "M"),
    (lambda: sinews.ltl_factor(ZOO, M).solve(A.astype(complex)), "b"),
    (lambda: Transform(R=np.eye(3).astype(object), p=P), "R"),
    (lambda: Transform(np.eye(3), P).act_point(P.astype(complex)), "x"),
    (lambda: spatial.cross_motion(np.ones(6, dtype=complex), np.ones(6)), "m"),
    (lambda: PinocchioCoordinates(ZOO).v_to_pin(V.astype(complex)), "v"),
])
def test_array_arguments_follow_the_one_dtype_rule(call, arg):
    """196 cases library-wide accepted complex/datetime values as numbers."""
    with pytest.raises(ValueError, match="real") as info:
        call()
    assert names_arg(info.value, arg), info.value


@pytest.mark.parametrize("call, arg", [
    (lambda: sinews.aba(ZOO, Q, V * 1e300, A), "v"),
    (lambda: sinews.crba(ZOO, np.r_[Q[:2], 1e300, Q[3:]]), "q"),
    (lambda: sinews.kinetic_energy(ZOO, Q, V * 1e200), "v"),
    (lambda: sinews.integrate(ZOO, Q, V * 1e300, 10.0), "v"),
    (lambda: simulate(ZOO, Q, V * 1e300, 0.01, 0.005, progress=False), "v0"),
])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_overflow_is_an_error_not_nan(call, arg):
    with pytest.raises(ValueError, match="not finite") as info:
        call()
    assert names_arg(info.value, arg), info.value


# ------------------------------------------------------------------ 8. property-based sweep
# (name, callable, valid keyword arguments, "arg:kind ..."): kinds are real (array), q
# (configuration: also the quaternion corruptions), unit (configuration whose quaternions
# must be unit) and scalar; a trailing "*" marks an argument the result's shape may follow.
R0, X4 = spatial.rpy_to_matrix(0.3, -0.2, 0.5), Transform(spatial.rpy_to_matrix(0.3, -0.2, 0.5), P).homogeneous()
LTL = sinews.ltl_factor(ZOO, M)
AX = np.array([0.0, 0.6, 0.8])
M6 = np.array([0.1, 0.2, -0.3, 0.4, -0.5, 0.6])


def _set_gravity(gravity):
    m = pendulum(1)
    m.gravity = gravity
    return m.gravity


SWEEP = [
    ("rnea", sinews.rnea, dict(q=Q, v=V, a=A, f_ext=F), "q:q v a f_ext"),
    ("gravity_torques", sinews.gravity_torques, dict(q=Q), "q:q"),
    ("crba", sinews.crba, dict(q=Q), "q:q"),
    ("aba", sinews.aba, dict(q=Q, v=V, tau=A, f_ext=F), "q:q v tau f_ext"),
    ("minv_times", sinews.minv_times, dict(q=Q, x=A), "q:q x"),
    ("minverse", sinews.minverse, dict(q=Q), "q:q"),
    ("lagrangian", sinews.forward_dynamics_lagrangian, dict(q=Q, v=V, tau=A, f_ext=F), "q:q v tau f_ext"),
    ("ltl_factor", sinews.ltl_factor, dict(M=M), "M"),
    ("ltl_solve", LTL.solve, dict(b=A), "b*"),
    ("ltl_solve_LT", LTL.solve_LT, dict(b=A), "b*"),
    ("forward_kinematics", sinews.forward_kinematics, dict(q=Q), "q:q"),
    ("point_position", sinews.point_position, dict(q=Q, body="tool", point=P), "q:q point"),
    ("point_velocity_6d", sinews.point_velocity_6d, dict(q=Q, v=V, body="hinge", point=P), "q:q v point"),
    ("point_acceleration_6d", sinews.point_acceleration_6d, dict(q=Q, v=V, a=A, body="hinge", point=P), "q:q v a point"),
    ("point_jacobian_6d", sinews.point_jacobian_6d, dict(q=Q, body="slide", point=P), "q:q point"),
    ("body_jacobian", sinews.body_jacobian, dict(q=Q, body="hinge", frame="world"), "q:q"),
    ("center_of_mass", sinews.center_of_mass, dict(q=Q), "q:q"),
    ("com_velocity", sinews.com_velocity, dict(q=Q, v=V), "q:q v"),
    ("com_jacobian", sinews.com_jacobian, dict(q=Q), "q:q"),
    ("mechanical_energy", sinews.mechanical_energy, dict(q=Q, v=V), "q:q v"),
    ("integrate", sinews.integrate, dict(q=Q, v=V, dt=0.1), "q:unit v dt:scalar"),
    ("difference", sinews.difference, dict(q0=Q, q1=Q1), "q0:unit q1:unit"),
    ("normalize", sinews.normalize, dict(q=Q), "q:q"),
    ("random_configuration", sinews.random_configuration, dict(rng=1, lower=-1.0, upper=2.0), "lower:scalar upper:scalar"),
    ("simulate", simulate, dict(q0=Q, v0=V, duration=0.004, dt=0.002, tau=A, progress=False),
     "q0:unit v0 tau duration:scalar* dt:scalar*"),
    ("gravity", _set_gravity, dict(gravity=np.array([0.0, 0.0, -9.81])), "gravity"),
    ("Revolute", J.Revolute, dict(axis=AX), "axis"),
    ("Helical", J.Helical, dict(axis=AX, pitch=0.1), "axis pitch:scalar"),
    ("MultiAxis", J.MultiAxis, dict(axes=np.array([[0.0, 0, 1, 0, 0, 0], [0, 0, 0, 1.0, 0, 0]])), "axes*"),
    ("SpatialInertia", SpatialInertia, dict(mass=2.0, com=P, inertia_com=np.diag([0.1, 0.2, 0.25])), "mass:scalar com inertia_com"),
    ("from_box", SpatialInertia.from_box, dict(mass=2.0, size=np.array([0.1, 0.2, 0.3]), com=P), "mass:scalar size com"),
    ("from_rod", SpatialInertia.from_rod, dict(mass=2.0, length=0.5), "mass:scalar length:scalar"),
    ("Transform", Transform, dict(R=R0, p=P), "R p"),
    ("from_matrix", Transform.from_matrix, dict(T=X4), "T"),
    ("from_quat", Transform.from_quat, dict(quat=spatial.matrix_to_quat(R0), p=P), "quat p"),
    ("act_motion", Transform(R0, P).act_motion, dict(m=M6), "m"),
    ("rpy_to_matrix", spatial.rpy_to_matrix, dict(roll=0.1, pitch=0.2, yaw=0.3), "roll:scalar pitch:scalar yaw:scalar"),
    ("log_so3", spatial.log_so3, dict(R=R0), "R"),
    ("exp_se3", spatial.exp_se3, dict(twist=M6), "twist"),
    ("log_se3", spatial.log_se3, dict(R=R0, p=P), "R p"),
    ("motion_matrix", spatial.motion_matrix, dict(R=R0, p=P), "R p"),
    ("cross_force", spatial.cross_force, dict(m=M6, f=M6[::-1]), "m f"),
    ("add_body", lambda X_parent_joint: pendulum(1).add_body(1, J.RevoluteX(), X_parent_joint),
     dict(X_parent_joint=X4), "X_parent_joint"),
    ("pin_matrix", PinocchioCoordinates(ZOO).matrix_from_pin, dict(M_pin=M), "M_pin"),
]


def _leaves(x):
    """The numbers of a result, as float arrays (records by their public array fields)."""
    if isinstance(x, (tuple, list)):
        return [a for y in x for a in _leaves(y)]
    if isinstance(x, sinews.Model):
        return []
    if isinstance(x, sinews.Placements):  # (read-only properties, not dataclass fields)
        return [np.asarray(a, dtype=float) for a in (x.R, x.p, x.frame_R, x.frame_p)]
    fields = ("R", "p", "frame_R", "frame_p", "mass", "com", "inertia_com", "axis", "axes", "pitch",
              "L", "t", "q", "v", "energy")
    if hasattr(x, "__dataclass_fields__"):
        return [a for f in fields if f in x.__dataclass_fields__ for a in _leaves(getattr(x, f))]
    return [np.asarray(x, dtype=float)]


DTYPE = {
    "complex": lambda a: a.astype(complex), "bool": lambda a: a != 0, "str": lambda a: a.astype(str),
    "object": lambda a: a.astype(object), "datetime64": lambda a: np.zeros(a.shape, "datetime64[s]"),
    "timedelta64": lambda a: np.zeros(a.shape, "timedelta64[s]"),
}
LAYOUT = {
    "readonly": lambda a: np.lib.stride_tricks.as_strided(a, writeable=False),
    "noncontiguous": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    "fortran": np.asfortranarray, "list": lambda a: a.tolist(), "bigendian": lambda a: a.astype(">f8"),
}


def _corrupt(data, value, kind):
    """(corrupted value, expectation, label): expectation is refuse, same or general."""
    a = np.array(value, dtype=float)
    family = data.draw(st.sampled_from(["shape", "dtype", "nonfinite", "extreme", "layout"]
                                       + (["quaternion"] * 2 if kind in ("q", "unit") else [])))
    if family == "quaternion":
        i = data.draw(st.sampled_from(QUATS))
        s = data.draw(st.sampled_from([0.0, 5e-324, 1e-300, 1e-160, 1e160, 1e300, 2.0]))
        a[i : i + 4] *= s
        return a, "refuse" if s < 1e-307 or kind == "unit" else "same", f"quat*{s}"
    if family == "dtype":
        name = data.draw(st.sampled_from(sorted(DTYPE)))
        out = DTYPE[name](a.reshape(-1)).reshape(a.shape)
        if kind == "scalar" and name != "object" and data.draw(st.booleans()):
            out = out[()]  # a NumPy scalar (np.complex128, np.bool_, np.datetime64, np.str_)
        return out, "refuse", name
    if family == "layout":
        if kind == "scalar":
            return data.draw(st.sampled_from([np.float64(a), np.array(a), int(a) if a == int(a) else float(a)])), "same", "scalar"
        name = data.draw(st.sampled_from(sorted(LAYOUT)))
        return LAYOUT[name](a.copy()), "same", name
    if family == "shape":
        options = [np.append(a, 1.0), a.reshape(-1)[:-1], np.stack([a, a], -1), np.zeros((0,) * max(a.ndim, 1))]
        if a.ndim == 2:
            options += [a.T.copy(), [a[0].tolist(), a[0, :-1].tolist()]]
        k = data.draw(st.integers(0, len(options) - 1))
        return options[k], "general", f"shape{k}"
    x = data.draw(st.sampled_from([math.nan, math.inf, -math.inf] if family == "nonfinite" else
                                  [1e300, -1e300, 1.7e308, 1e-300, 5e-324, "x1e300", "x1e150", "x1e-300"]))
    if isinstance(x, str):
        return (float(a) if kind == "scalar" else a) * float(x[1:]), "general", x
    if kind == "scalar":
        return x, "general", repr(x)
    if a.size:
        a.flat[data.draw(st.integers(0, a.size - 1))] = x
    return a, "general", repr(x)


def _run(fn, kwargs):
    with np.errstate(all="ignore"):
        try:
            return fn(**kwargs), None
        except Exception as exc:  # noqa: BLE001 - classified below
            return None, exc


CLEAN = {}


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_core_api_sweep(data):
    name, fn, valid, spec = data.draw(st.sampled_from(SWEEP))
    if "model" in inspect.signature(fn).parameters:
        valid = dict(valid, model=ZOO)
    if name not in CLEAN:
        CLEAN[name] = _leaves(fn(**valid))
    arg, _, kind = data.draw(st.sampled_from(spec.split())).partition(":")
    free = arg.endswith("*") or kind.endswith("*")
    arg, kind = arg.rstrip("*"), (kind or "real").rstrip("*")
    kwargs = dict(valid)
    kwargs[arg], expect, label = _corrupt(data, valid[arg], kind)
    result, exc = _run(fn, kwargs)
    where = f"{name}({arg} <- {label})"
    if exc is not None:
        assert expect != "same", f"{where}: valid input refused: {exc!r}"
        assert type(exc) in (ValueError, KeyError) or type(exc).__module__.startswith("sinews"), f"{where}: {exc!r}"
        assert isinstance(exc, (ValueError, KeyError)), f"{where}: {exc!r}"
        assert names_arg(exc, arg), f"{where}: the message does not name {arg!r}: {exc}"
        return
    assert expect != "refuse", f"{where}: accepted"
    got, want = _leaves(result), CLEAN[name]
    assert all(np.all(np.isfinite(g)) for g in got), f"{where}: non-finite output"
    if expect == "same":
        assert len(got) == len(want) and all(
            g.shape == w.shape and np.allclose(g, w, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(w).max(initial=0)))
            for g, w in zip(got, want)), f"{where}: differs from the clean call"
    elif not free:
        assert [g.shape for g in got] == [w.shape for w in want], f"{where}: wrong output shape"


# ------------------------------------------------------------------ 7. threads
def _core_calls(m, q, v, a, f, factor):
    """Every public core algorithm on one state, each as name -> result arrays."""
    body, q1 = m.nbodies - 1, sinews.integrate(m, q, v, 0.05)
    fk = sinews.forward_kinematics(m, q)
    return {
        "rnea": sinews.rnea(m, q, v, a, f), "rnea_dict": sinews.rnea(m, q, v, a, {body: f[body]}),
        "nle": sinews.nonlinear_effects(m, q, v, f), "g": sinews.gravity_torques(m, q),
        "crba": sinews.crba(m, q), "aba": sinews.aba(m, q, v, a, f), "minv": sinews.minv_times(m, q, a),
        "minverse": sinews.minverse(m, q), "lagrangian": sinews.forward_dynamics_lagrangian(m, q, v, a, f),
        "fk": (fk.R, fk.p, fk.frame_R, fk.frame_p), "placement": sinews.body_placement(m, q, body).homogeneous(),
        "pos": sinews.point_position(m, q, body, P), "vel": sinews.point_velocity_6d(m, q, v, body, P),
        "acc": sinews.point_acceleration_6d(m, q, v, a, body, P), "jac": sinews.point_jacobian_6d(m, q, body, P),
        "bjac": [sinews.body_jacobian(m, q, body, k) for k in ("local", "world", "local_world_aligned")],
        "com": sinews.center_of_mass(m, q), "comv": sinews.com_velocity(m, q, v), "comj": sinews.com_jacobian(m, q),
        "energy": (sinews.kinetic_energy(m, q, v), sinews.potential_energy(m, q), sinews.mechanical_energy(m, q, v)),
        "integrate": q1, "difference": sinews.difference(m, q, q1), "normalize": sinews.normalize(m, 3.0 * q),
        "ltl": sinews.ltl_factor(m, sinews.crba(m, q)).L,
        "solve": (factor.solve(a), factor.solve_L(a), factor.solve_LT(a)),
        "simulate": simulate(m, q, v, 0.004, 0.002, tau=a, progress=False).q,
        "rk4": rk4_step(m, lambda q, v: sinews.aba(m, q, v, a), q, v, 0.01),
    }


def _threaded_equals_serial(m, nthreads=8, nstates=6, rounds=2):
    import sys
    import threading

    rng = np.random.default_rng(5)
    states = []
    for _ in range(nstates):
        f = rng.normal(size=(m.nbodies, 6))
        f[0] = 0.0
        states.append((sinews.random_configuration(m, rng), rng.normal(size=m.nv), rng.normal(size=m.nv), f))
    factor = sinews.ltl_factor(m, sinews.crba(m, states[0][0]))  # one factor shared by the threads
    serial = [_core_calls(m, *s, factor) for s in states]
    bad, errors = [], []
    barrier = threading.Barrier(nthreads)

    def work(t):
        try:
            barrier.wait()
            for r in range(rounds):
                for k in np.random.default_rng(t + 100 * r).permutation(nstates):
                    got = _core_calls(m, *states[k], factor)
                    for name, want in serial[k].items():
                        if not all(np.array_equal(x, y) for x, y in zip(_leaves(got[name]), _leaves(want))):
                            bad.append((t, int(k), name))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        threads = [threading.Thread(target=work, args=(t,)) for t in range(nthreads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    return sorted(set(bad)), errors


def test_every_core_algorithm_is_bit_identical_from_8_threads():
    """Calls without data= from several threads (the default workspace) equal serial calls."""
    m = random_tree(7, 11, joint_types=["RX", "Revolute", "Prismatic", "Helical", "Spherical", "FreeFlyer",
                                        "Planar", "EulerZYX", "MultiAxis", "Fixed"])
    m.add_frame("f", m.nbodies - 1, (0.1, 0.2, 0.3))
    bad, errors = _threaded_equals_serial(m)
    assert not errors and not bad, (errors[:3], bad[:20])


def test_first_use_from_many_threads_compiles_the_model_once():
    """Threads racing to compile a new model got different CompiledModels, and a later gravity
    change reached only one of them (the others kept computing with the old gravity)."""
    import sys
    import threading

    for _ in range(3):
        m = random_tree(12, 2)  # not compiled yet: q comes from a twin
        q = sinews.random_configuration(random_tree(12, 2), 0)
        barrier, seen = threading.Barrier(8), []

        def work():
            barrier.wait()
            sinews.gravity_torques(m, q)
            seen.append(m.default_data.c)

        old = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            threads = [threading.Thread(target=work) for _ in range(8)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        finally:
            sys.setswitchinterval(old)
        assert len(seen) == 8 and all(c is m.compiled for c in seen)


def test_models_copy_and_pickle_without_their_thread_state():
    import copy
    import pickle

    for clone in (copy.deepcopy(ZOO), pickle.loads(pickle.dumps(ZOO))):
        np.testing.assert_array_equal(sinews.crba(clone, Q), M)
        assert clone.default_data is not ZOO.default_data
