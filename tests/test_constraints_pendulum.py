"""Scenarios B, C and K of rbdl.md section 5.2: the double perpendicular pendulum in joint
coordinates (2 dofs) and in absolute coordinates (12 dofs, two 5-row loop groups), plus the
custom pin-joint constraint and external forces (RBDL ``ConstraintCorrectnessTest``,
``CustomConstraintsTests``, ``ForwardDynamicsConstraintsExternalForces``)."""

import numpy as np
import pytest

from sinews import aba, point_acceleration_6d, rnea
from sinews.constraints import (
    METHODS,
    calc_forces,
    constraint_gamma,
    constraint_jacobian,
    constraint_position_error,
    constraint_velocity_error,
    forward_dynamics_constraints,
)
from sinews.constraints.examples import double_pendulum_absolute, double_pendulum_joint, double_pendulum_state
from sinews.constraints.kokkevis import entries_to_body_forces  # noqa: F401  (public helper)
from sinews.spatial import rot_y, rot_z

Q = np.array([np.pi / 3, np.pi / 6])
QD = np.array([np.pi, np.pi / 2])


def _abs_qdd_from_joint(qdd, mj=None):
    """Absolute-model accelerations implied by the joint model: Euler rates, and the
    translation of link 2's origin (the classical acceleration of the link-1 tip)."""
    mj = double_pendulum_joint() if mj is None else mj
    a2 = point_acceleration_6d(mj, Q, QD, qdd, "link2")[3:]
    return np.array([0, 0, 0, qdd[0], 0, 0, *a2, qdd[0], qdd[1], 0])


@pytest.fixture(scope="module")
def models():
    mj = double_pendulum_joint()
    ma, cs = double_pendulum_absolute()
    qa, qda = double_pendulum_state(Q, QD)
    return mj, ma, cs, qa, qda


def test_constraints_pendulum_state_mapping(models):
    _, ma, cs, qa, qda = models
    assert np.allclose(qa, [0, 0, 0, np.pi / 3, 0, 0, 0.866025403784, -0.5, 0, np.pi / 3, np.pi / 6, 0], atol=1e-12)
    assert np.allclose(qda, [0, 0, 0, np.pi, 0, 0, 1.570796326795, 2.720699046351, 0, np.pi, np.pi / 2, 0], atol=1e-12)
    assert np.allclose(constraint_position_error(ma, qa, cs), 0, atol=1e-15)
    assert np.allclose(constraint_velocity_error(ma, qa, qda, cs), 0, atol=1e-14)
    assert [g.name for g in cs] == ["RzBase", "RyLink1"] and cs.size == 10


@pytest.mark.parametrize("method", METHODS)
def test_constraints_pendulum_cross_model_and_methods(models, method):
    mj, ma, cs, qa, qda = models
    qdd_j = aba(mj, Q, QD, np.zeros(2))
    ref = forward_dynamics_constraints(ma, qa, qda, np.zeros(12), cs, method="direct")
    r = forward_dynamics_constraints(ma, qa, qda, np.zeros(12), cs, method=method)
    assert np.allclose(r.qdd, _abs_qdd_from_joint(qdd_j), atol=1e-9, rtol=0)
    assert np.allclose(r.qdd, ref.qdd, atol=1e-9, rtol=0)
    assert np.allclose(r.multipliers, ref.multipliers, atol=1e-9, rtol=0)
    G = constraint_jacobian(ma, qa, cs)
    assert np.allclose(G @ r.qdd, constraint_gamma(ma, qa, qda, cs), atol=1e-10)
    a_j = point_acceleration_6d(mj, Q, QD, qdd_j, "link2", (1, 0, 0))
    a_a = point_acceleration_6d(ma, qa, qda, r.qdd, "link2", (1, 0, 0))
    assert np.allclose(a_j, a_a, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_constraints_pendulum_external_forces_cross_model(models, method):
    mj, ma, cs, qa, qda = models
    f_ext = {"link1": [0.3, -0.2, 0.5, 1.0, -2.0, 0.7], "link2": [-0.4, 0.1, 0.2, 0.5, 1.5, -1.0]}
    qdd_j = aba(mj, Q, QD, np.zeros(2), f_ext=f_ext)
    r = forward_dynamics_constraints(ma, qa, qda, np.zeros(12), cs, method=method, f_ext=f_ext)
    assert np.allclose(r.qdd, _abs_qdd_from_joint(qdd_j), atol=1e-9, rtol=0)
    assert not np.allclose(qdd_j, aba(mj, Q, QD, np.zeros(2)))  # the forces matter


def test_constraints_pendulum_error_injection(models):
    """A translational error shows only in translation rows; RBDL's Rz row of RyLink1 reports
    2 l1 cos(q0) for a pure translational velocity error (section 0.5); sinews reports 0."""
    _, ma, cs, qa, qda = models
    q = qa.copy()
    q[0] += 1.0
    phi = constraint_position_error(ma, q, cs)
    R_P = rot_z(Q[0])
    assert np.allclose(phi[:5], [1, 0, 0, 0, 0], atol=1e-14)
    assert np.allclose(phi[5:8], R_P.T @ [-1, 0, 0], atol=1e-14)
    assert np.allclose(phi[8:], 0, atol=1e-14)
    qd = qda.copy()
    qd[0] += 2.0
    phid = constraint_velocity_error(ma, qa, qd, cs)
    assert np.allclose(phid[:5], [2, 0, 0, 0, 0], atol=1e-14)
    assert np.allclose(phid[5:8], R_P.T @ [-2, 0, 0], atol=1e-14)
    assert np.allclose(phid[8:], 0, atol=1e-14)
    # an injected rotation shows in the rotation rows as sin(angle)
    q = qa.copy()
    q[3], q[5] = 0.0, 0.3  # link1 rotated by 0.3 about the world x axis only
    phi = constraint_position_error(ma, q, cs)
    assert np.allclose(phi[:5], [0, 0, 0, np.sin(0.3), 0], atol=1e-14)


def _statics(models):
    mj, ma, cs, qa, _ = models
    tau_j = rnea(mj, Q, np.zeros(2), np.zeros(2))
    tau_a = np.zeros(12)
    tau_a[3], tau_a[10] = tau_j
    return tau_j, tau_a


@pytest.mark.parametrize("method", METHODS)
def test_constraints_pendulum_statics_C(models, method):
    mj, ma, cs, qa, _ = models
    tau_j, tau_a = _statics(models)
    r = forward_dynamics_constraints(ma, qa, np.zeros(12), tau_a, cs, method=method)
    assert np.allclose(r.qdd, 0, atol=1e-10)


def test_constraints_pendulum_calc_forces_hand_statics(models):
    """calc_forces("RyLink1") at the gravity-compensated static state against hand statics.

    link2 is held by the loop wrench W (at the link-1 tip = link-2 origin), its weight, and the
    actuation of its EulerZYX joint.  That joint sits on a massless, unactuated translation
    body, so it transmits a pure moment M with S_k . M = tau_k for its three world rotation
    axes S = (z, Rz y, Rz Ry x).  Equilibrium: W = -[M + c x m g; m g]."""
    mj, ma, cs, qa, _ = models
    tau_j, tau_a = _statics(models)
    r = forward_dynamics_constraints(ma, qa, np.zeros(12), tau_a, cs)
    W = calc_forces(ma, qa, cs, "RyLink1", r, frame="world")
    tip = np.array([np.sin(Q[0]), -np.cos(Q[0]), 0.0])
    assert W.bodies == [ma.body_id("link1"), ma.body_id("link2")]
    for X in W.frames:
        assert np.allclose(X.p, tip, atol=1e-14) and np.allclose(X.R, np.eye(3))
    assert np.allclose(W.wrenches[1], -W.wrenches[0], atol=1e-12)
    g = np.array([0, -9.81, 0])
    R2 = rot_z(Q[0]) @ rot_y(Q[1])
    S = np.column_stack([[0, 0, 1], rot_z(Q[0]) @ [0, 1, 0], R2 @ [1, 0, 0]])
    M = np.linalg.solve(S.T, [0, tau_j[1], 0])
    c = R2 @ [0.5, 0, 0]
    expected = -np.concatenate([M + np.cross(c, 1.0 * g), 1.0 * g])
    assert np.allclose(W.wrenches[1], expected, atol=1e-10)
    assert np.allclose(W.wrenches[1][3:], [0, 9.81, 0], atol=1e-12)  # carries link 2's weight
    # local report: successor frame = link2 at its origin, wrench in link2 axes
    L = calc_forces(ma, qa, cs, "RyLink1", r.multipliers[5:], frame="local")
    assert np.allclose(L.frames[1].p, 0, atol=1e-14) and np.allclose(L.frames[1].R, np.eye(3), atol=1e-14)
    assert np.allclose(L.wrenches[1], np.concatenate([R2.T @ expected[:3], R2.T @ expected[3:]]), atol=1e-10)


# ------------------------------------------------------------------ scenario K: custom constraint
def _random_state(rng, n=12):
    return rng.normal(size=n), rng.normal(size=n)


def test_constraints_pendulum_custom_pin_joint_equals_loop(models):
    _, ma, cs, qa, qda = models
    mc, csc = double_pendulum_absolute(custom=True)
    assert [g.type for g in csc] == ["custom", "custom"] and csc.size == 10
    rng = np.random.default_rng(3)
    states = [(qa, qda)] + [_random_state(rng) for _ in range(3)]  # also off the manifold
    for q, v in states:
        assert np.allclose(constraint_jacobian(mc, q, csc), constraint_jacobian(ma, q, cs), atol=1e-13)
        assert np.allclose(constraint_gamma(mc, q, v, csc), constraint_gamma(ma, q, v, cs), atol=1e-12)
        assert np.allclose(constraint_position_error(mc, q, csc), constraint_position_error(ma, q, cs), atol=1e-14)
        assert np.allclose(constraint_velocity_error(mc, q, v, csc), constraint_velocity_error(ma, q, v, cs), atol=1e-13)
        tau = rng.normal(size=12)
        r = forward_dynamics_constraints(ma, q, v, tau, cs)
        rc = forward_dynamics_constraints(mc, q, v, tau, csc)
        assert np.allclose(rc.qdd, r.qdd, atol=1e-9) and np.allclose(rc.multipliers, r.multipliers, atol=1e-9)
        for name in ("RzBase", "RyLink1"):
            for frame in ("local", "world"):
                a = calc_forces(ma, q, cs, name, r, frame=frame)
                b = calc_forces(mc, q, csc, name, rc, frame=frame)
                assert a.bodies == b.bodies
                assert np.allclose(a.wrenches, b.wrenches, atol=1e-9)
                for Xa, Xb in zip(a.frames, b.frames):
                    assert np.allclose(Xa.R, Xb.R) and np.allclose(Xa.p, Xb.p)


def test_constraints_pendulum_custom_kokkevis_and_baumgarte():
    mc, csc = double_pendulum_absolute(custom=True)
    ma, cs = double_pendulum_absolute()
    rng = np.random.default_rng(5)
    q, v = _random_state(rng)
    tau = rng.normal(size=12)
    for c in (csc, cs):
        c.enable_baumgarte("RyLink1", time_constant=0.05)
    assert cs.baumgarte_coefficients("RyLink1") == (20.0, 20.0)
    assert np.allclose(constraint_gamma(mc, q, v, csc), constraint_gamma(ma, q, v, cs), atol=1e-10)
    ref = forward_dynamics_constraints(ma, q, v, tau, cs)
    for meth in METHODS:
        r = forward_dynamics_constraints(mc, q, v, tau, csc, method=meth)
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9) and np.allclose(r.multipliers, ref.multipliers, atol=1e-9)


def test_constraints_pendulum_set_methods_delegate(models):
    _, ma, cs, qa, qda = models
    r = forward_dynamics_constraints(ma, qa, qda, np.zeros(12), cs)
    a = cs.calc_forces("RyLink1", qa, r, frame="world")
    b = calc_forces(ma, qa, cs, "RyLink1", r, frame="world")
    assert np.allclose(a.wrenches, b.wrenches) and a.bodies == b.bodies


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=26, max_size=26))
def test_constraints_pendulum_methods_agree_on_random_states(xs):
    """Any state (on or off the loop manifold) and any tau: the four methods agree on qdd and
    lambda, and G qdd = gamma, with Baumgarte on one group.  The middle EulerZYX angles are kept
    away from +-pi/2 (gimbal lock: there H is singular and every method loses digits in
    proportion to the conditioning, e.g. qdd ~ 1e4 at 1.5703)."""
    ma, cs = double_pendulum_absolute()
    cs.enable_baumgarte("RzBase", time_constant=0.1)
    x = np.array(xs)
    q, v, tau = x[:12], x[12:24], np.r_[x[24:26], np.zeros(10)]
    q[[4, 10]] = np.clip(q[[4, 10]], -1.2, 1.2)
    ref = forward_dynamics_constraints(ma, q, v, tau, cs)
    G = constraint_jacobian(ma, q, cs)
    assert np.allclose(G @ ref.qdd, constraint_gamma(ma, q, v, cs), atol=1e-8 * (1 + np.abs(ref.qdd).max()))
    for method in METHODS[1:]:
        r = forward_dynamics_constraints(ma, q, v, tau, cs, method=method)
        scale = 1 + np.abs(ref.qdd).max() + np.abs(ref.multipliers).max()
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9 * scale, rtol=0)
        assert np.allclose(r.multipliers, ref.multipliers, atol=1e-9 * scale, rtol=0)
