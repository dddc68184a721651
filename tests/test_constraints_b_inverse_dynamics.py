"""Inverse dynamics with constraints (RBDL InverseDynamicsConstraints[Relaxed],
isConstrainedSystemFullyActuated).

Oracles: forward dynamics with constraints (round trip: FD(tau) must reproduce the returned
qdd and multipliers), an equivalent joint-coordinate model (cross-model gravity torques,
scenario C), hand statics (the biped's contact forces carry its weight, scenario I), and the
closed form of the relaxed operator on a decoupled actuated coordinate (scenario J).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_constraints_b_models import (
    FOURBAR_Q,
    FOURBAR_V,
    PI,
    cart_pendulum,
    fourbar,
    pendulum_absolute_model,
    pendulum_absolute_state,
    pendulum_joint_model,
    planar_biped,
)

import sinews
from sinews.constraints import (
    actuation_map,
    assemble_q,
    assemble_qdot,
    constraint_jacobian,
    forward_dynamics_constraints,
    inverse_dynamics_constraints,
    inverse_dynamics_constraints_relaxed,
    is_fully_actuated,
)


def _fd(model, q, v, tau, cs):
    return forward_dynamics_constraints(model, q, v, tau, cs, method="direct")


# ------------------------------------------------------------------ actuation map
def test_actuation_map_from_mask_and_indices():
    m, _ = fourbar()
    a = actuation_map(m, [0, 2])
    b = actuation_map(m, np.array([True, False, True, False, False]))
    np.testing.assert_array_equal(a.S, b.S)
    np.testing.assert_array_equal(a.S, np.eye(5)[[0, 2]])
    np.testing.assert_array_equal(a.P, np.eye(5)[[1, 3, 4]])
    np.testing.assert_array_equal(a.S.T @ a.S + a.P.T @ a.P, np.eye(5))
    assert (a.n_actuated, a.n_unactuated) == (2, 3)
    assert actuation_map(m, a) is a


def test_actuation_map_bad_input():
    m, _ = fourbar()
    with pytest.raises(ValueError, match="actuated"):
        actuation_map(m, [0, 5])
    with pytest.raises(ValueError, match="actuated"):
        actuation_map(m, [1, 1])
    with pytest.raises(ValueError, match="actuated"):
        actuation_map(m, np.array([True, False]))
    with pytest.raises(ValueError, match="actuated"):
        actuation_map(m, [0.5, 1.0])


# ------------------------------------------------------------------ exact operator: round trips
def test_fourbar_exact_idc_recovers_the_torque_that_produced_the_motion():
    # c = n_u = 3 and G P^T regular: tau is unique, so IDC(FD(tau_true)) must return tau_true
    m, cs = fourbar()
    act = [0, 2]
    assert is_fully_actuated(m, FOURBAR_Q, cs, act)
    tau_true = np.array([1.5, 0.0, -2.0, 0.0, 0.0])
    fd = _fd(m, FOURBAR_Q, FOURBAR_V, tau_true, cs)
    r = inverse_dynamics_constraints(m, FOURBAR_Q, FOURBAR_V, fd.qdd, cs, act)
    assert r.converged and r.fully_actuated and r.method == "exact"
    np.testing.assert_allclose(r.tau, tau_true, atol=1e-9)
    np.testing.assert_allclose(r.qdd, fd.qdd, atol=1e-10)
    np.testing.assert_allclose(r.multipliers, fd.multipliers, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_fourbar_exact_idc_round_trip_random_targets(seed):
    m, cs = fourbar()
    rng = np.random.default_rng(seed)
    target = rng.standard_normal(5)
    r = inverse_dynamics_constraints(m, FOURBAR_Q, FOURBAR_V, target, cs, [0, 2])
    assert r.converged
    # actuated accelerations reached exactly, unactuated ones follow from the constraints
    np.testing.assert_allclose(r.qdd[[0, 2]], target[[0, 2]], atol=1e-12)
    assert np.all(r.tau[[1, 3, 4]] == 0.0)
    fd = _fd(m, FOURBAR_Q, FOURBAR_V, r.tau, cs)
    np.testing.assert_allclose(fd.qdd, r.qdd, atol=1e-9)
    np.testing.assert_allclose(fd.multipliers, r.multipliers, atol=1e-8)


def test_pendulum_statics_cross_model_rbdl_c():
    # scenario C: absolute-coordinate pendulum held static; IDC (actuation {3, 10}) must give
    # the joint-coordinate model's gravity torques on the mapped coordinates
    mj = pendulum_joint_model()
    qj = np.array([PI / 3, PI / 6])
    tau_j = sinews.rnea(mj, qj, np.zeros(2), np.zeros(2))
    m, cs = pendulum_absolute_model()
    qa, _ = pendulum_absolute_state(qj, np.zeros(2))
    va = np.zeros(12)
    act = [3, 10]
    assert is_fully_actuated(m, qa, cs, act)
    r = inverse_dynamics_constraints(m, qa, va, np.zeros(12), cs, act)
    assert r.converged
    np.testing.assert_allclose(r.qdd, 0.0, atol=1e-12)
    tau_expected = np.zeros(12)
    tau_expected[3], tau_expected[10] = tau_j
    np.testing.assert_allclose(r.tau, tau_expected, atol=1e-10)
    # forward dynamics with those torques: static equilibrium with the same multipliers
    fd = _fd(m, qa, va, r.tau, cs)
    np.testing.assert_allclose(fd.qdd, 0.0, atol=1e-10)
    np.testing.assert_allclose(fd.multipliers, r.multipliers, atol=1e-9)


def test_pendulum_relaxed_idc_does_not_reach_a_feasible_target_rbdl_c():
    mj = pendulum_joint_model()
    qj = np.array([PI / 3, PI / 6])
    m, cs = pendulum_absolute_model()
    qa, _ = pendulum_absolute_state(qj, np.zeros(2))
    va = np.zeros(12)
    r = inverse_dynamics_constraints_relaxed(m, qa, va, np.zeros(12), cs, [3, 10])
    assert r.converged and r.method == "relaxed"
    assert np.all(r.tau[[i for i in range(12) if i not in (3, 10)]] == 0.0)
    assert np.abs(r.qdd).max() > 1e-3  # W = 100 S H S^T is finite: the zero target is missed
    fd = _fd(m, qa, va, r.tau, cs)
    np.testing.assert_allclose(fd.qdd, r.qdd, atol=1e-9)
    np.testing.assert_allclose(fd.multipliers, r.multipliers, atol=1e-8)
    # a much stiffer weight approaches the exact answer (the gravity torques)
    tau_j = sinews.rnea(mj, qj, np.zeros(2), np.zeros(2))
    W = 1e8 * np.eye(2)
    r2 = inverse_dynamics_constraints_relaxed(m, qa, va, np.zeros(12), cs, [3, 10], weight=W)
    np.testing.assert_allclose(r2.tau[[3, 10]], tau_j, rtol=1e-5)
    assert np.abs(r2.qdd).max() < 1e-5


# ------------------------------------------------------------------ planar biped (scenario I)
def test_planar_biped_double_stance_rbdl_i():
    m, cs = planar_biped("double")
    q = np.array([0.0, 1.0, 0.0, PI / 4, -PI / 4, -PI / 4, PI / 4])
    v = np.zeros(7)
    act = [3, 4, 5, 6]
    assert is_fully_actuated(m, q, cs, act)
    r = inverse_dynamics_constraints(m, q, v, np.zeros(7), cs, act)
    assert r.converged
    np.testing.assert_allclose(r.qdd, 0.0, atol=1e-12)
    assert np.all(r.tau[:3] == 0.0)
    # 4 rows (x, z per foot) > 3 unactuated dofs: (tau, lambda) not unique; check statics
    total_mass = 50.0 + 4.0
    np.testing.assert_allclose(r.multipliers[1] + r.multipliers[3], total_mass * 9.81, rtol=1e-12)
    fd = _fd(m, q, v, r.tau, cs)
    np.testing.assert_allclose(fd.qdd, r.qdd, atol=1e-10)
    np.testing.assert_allclose(fd.multipliers, r.multipliers, atol=1e-8)


def test_planar_biped_single_stance_relaxed_rbdl_i():
    m, cs = planar_biped("single")
    q = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    v = assemble_qdot(m, q, [0.0, 0.0, 0.001, 0.0, 0.0, 0.0, 0.0], cs, weights=np.ones(7)).v
    act = [3, 4, 5, 6]
    assert not is_fully_actuated(m, q, cs, act)
    target = np.array([0.0, 0.0, 0.0, 0.3, -0.2, 0.1, 0.4])
    r = inverse_dynamics_constraints_relaxed(m, q, v, target, cs, act)
    assert r.converged and not r.fully_actuated
    assert np.all(r.tau[:3] == 0.0)
    fd = _fd(m, q, v, r.tau, cs)
    np.testing.assert_allclose(fd.qdd, r.qdd, atol=1e-9)
    np.testing.assert_allclose(fd.multipliers, r.multipliers, atol=1e-8)
    # the exact operator cannot serve this system: it reports the failure
    rx = inverse_dynamics_constraints(m, q, v, target, cs, act)
    assert not rx.fully_actuated and not rx.converged and rx.residual > 1e-3


# ------------------------------------------------------------------ cart-pendulum (scenario J)
def test_cart_pendulum_relaxed_closed_form_rbdl_j():
    m, cs = cart_pendulum()
    q = np.array([0.0, 0.0, 0.0, PI / 2])
    v = assemble_qdot(m, q, [0.5, 0.125, 0.25, 1.1], cs, weights=np.ones(4)).v
    np.testing.assert_allclose(v, [0.5, 0.0, 0.0, 1.1], atol=1e-14)
    act = [3]
    assert not is_fully_actuated(m, q, cs, act)
    target = np.array([0.0, 0.0, 0.0, 2.2])
    r = inverse_dynamics_constraints_relaxed(m, q, v, target, cs, act)
    # the link's COM lies on its axis: dof 3 couples only to the cart's Ry (dof 2), which the
    # rail locks (qdd_2 = 0); so dof 3 is decoupled, h = H[3, 3] = 1/3 (about y), C[3] = 0
    H = sinews.crba(m, q)
    h = H[3, 3]
    assert h == pytest.approx(1.0 / 3.0, abs=1e-12)
    assert np.allclose(H[3, :2], 0.0) and sinews.nonlinear_effects(m, q, v)[3] == pytest.approx(0.0, abs=1e-12)
    assert abs(r.qdd[2]) < 1e-12
    W = 100.0 * h
    np.testing.assert_allclose(r.weight, [[W]], rtol=1e-14)
    assert r.qdd[3] == pytest.approx(W / (h + W) * 2.2, rel=1e-12)  # = 100/101 * 2.2
    assert r.tau[3] == pytest.approx(W * (2.2 - r.qdd[3]), rel=1e-12)
    assert np.all(r.tau[:3] == 0.0)
    fd = _fd(m, q, v, r.tau, cs)
    np.testing.assert_allclose(fd.qdd, r.qdd, atol=1e-10)
    # a user weight replaces RBDL's hard-coded one: qdd = W / (h + W) * target
    for w_user in (1.0, 1e6):
        ru = inverse_dynamics_constraints_relaxed(m, q, v, target, cs, act, weight=w_user)
        assert ru.qdd[3] == pytest.approx(w_user / (h + w_user) * 2.2, rel=1e-10)
    ru = inverse_dynamics_constraints_relaxed(m, q, v, target, cs, act, weight_scale=1.0)
    assert ru.qdd[3] == pytest.approx(0.5 * 2.2, rel=1e-12)


def test_relaxed_equals_exact_in_the_stiff_limit_for_fully_actuated_fourbar():
    m, cs = fourbar()
    target = np.array([0.4, 0.0, -0.3, 0.0, 0.0])
    rx = inverse_dynamics_constraints(m, FOURBAR_Q, FOURBAR_V, target, cs, [0, 2])
    rr = inverse_dynamics_constraints_relaxed(m, FOURBAR_Q, FOURBAR_V, target, cs, [0, 2], weight_scale=1e9)
    np.testing.assert_allclose(rr.qdd, rx.qdd, atol=1e-7)
    np.testing.assert_allclose(rr.tau, rx.tau, rtol=1e-6, atol=1e-6)


def test_is_fully_actuated_rank_test():
    m, cs = fourbar()
    G = constraint_jacobian(m, FOURBAR_Q, cs)
    assert is_fully_actuated(m, FOURBAR_Q, cs, [0, 2])
    # actuating only one ground joint leaves 4 unactuated dofs > 3 rows
    assert not is_fully_actuated(m, FOURBAR_Q, cs, [0])
    assert np.linalg.matrix_rank(G[:, [1, 2, 3, 4]]) == 3


def test_relaxed_bad_weight_names_the_argument():
    m, cs = cart_pendulum()
    q, v = np.array([0.0, 0.0, 0.0, PI / 2]), np.zeros(4)
    for bad in (np.eye(2), -1.0, [[np.nan]]):
        with pytest.raises(ValueError, match="weight"):
            inverse_dynamics_constraints_relaxed(m, q, v, np.zeros(4), cs, [3], weight=bad)
    with pytest.raises(ValueError, match="weight_scale"):
        inverse_dynamics_constraints_relaxed(m, q, v, np.zeros(4), cs, [3], weight_scale=0.0)
    with pytest.raises(ValueError, match="qdd_desired"):
        inverse_dynamics_constraints(m, q, v, np.zeros(3), cs, [3])


def test_idc_with_external_forces_round_trip():
    # f_ext enters C; both operators must stay consistent with forward dynamics under f_ext
    m, cs = fourbar()
    f_ext = {"b2": np.array([0.0, 0.0, 0.7, 1.5, -2.0, 0.0]), "b4": np.array([0.0, 0.0, -0.3, 0.0, 1.0, 0.0])}
    target = np.array([0.2, 0.0, -0.5, 0.0, 0.0])
    for op in (inverse_dynamics_constraints, inverse_dynamics_constraints_relaxed):
        r = op(m, FOURBAR_Q, FOURBAR_V, target, cs, [0, 2], f_ext=f_ext)
        assert r.converged
        fd = forward_dynamics_constraints(m, FOURBAR_Q, FOURBAR_V, r.tau, cs, f_ext=f_ext)
        np.testing.assert_allclose(fd.qdd, r.qdd, atol=1e-9)
        np.testing.assert_allclose(fd.multipliers, r.multipliers, atol=1e-8)
    # and the external forces matter: without them the torques differ
    r0 = inverse_dynamics_constraints(m, FOURBAR_Q, FOURBAR_V, target, cs, [0, 2])
    r1 = inverse_dynamics_constraints(m, FOURBAR_Q, FOURBAR_V, target, cs, [0, 2], f_ext=f_ext)
    assert np.abs(r1.tau - r0.tau).max() > 0.1


@settings(max_examples=25, deadline=None)
@given(
    q_off=st.lists(st.floats(-0.2, 0.2), min_size=2, max_size=2),
    v_scale=st.floats(-2.0, 2.0),
    tau=st.lists(st.floats(-5.0, 5.0), min_size=2, max_size=2),
)
def test_property_exact_idc_inverts_forward_dynamics(q_off, v_scale, tau):
    # any assembled state near the reference and any actuated torque: IDC(FD(tau)) == tau
    m, cs = fourbar()
    q_init = FOURBAR_Q.copy()
    q_init[[0, 2]] += q_off
    a = assemble_q(m, q_init, cs, weights=[1, 0, 1, 0, 0])
    assert a.converged
    v = assemble_qdot(m, a.q, v_scale * FOURBAR_V, cs, weights=np.ones(5)).v
    tau_true = np.zeros(5)
    tau_true[[0, 2]] = tau
    fd = _fd(m, a.q, v, tau_true, cs)
    r = inverse_dynamics_constraints(m, a.q, v, fd.qdd, cs, [0, 2])
    assert r.converged and r.fully_actuated
    np.testing.assert_allclose(r.tau, tau_true, atol=1e-8)
