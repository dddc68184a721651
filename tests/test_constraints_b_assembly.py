"""Assembly of positions and velocities (RBDL CalcAssemblyQ / CalcAssemblyQDot).

Oracles: RBDL 3.3.1 reference numbers (rbdl.md §5.2 A1), closed-form poses (a welded free
body), and the properties the method promises (phi = 0, weighted coordinates kept, unit
quaternions, G qdot = 0, the weighted least-distance optimality condition).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_constraints_b_models import (
    FOURBAR_Q,
    PI,
    RX,
    RY,
    RZ,
    TX,
    TY,
    TZ,
    fourbar,
    pendulum_absolute_model,
    pendulum_absolute_model_custom,
    pendulum_absolute_state,
    slider_crank_3d,
)

import sinews
from sinews import SpatialInertia, Transform
from sinews import joints as J
from sinews.constraints import (
    ConstraintSet,
    assemble_q,
    assemble_qdot,
    constraint_jacobian,
    constraint_position_error,
    constraint_velocity_error,
)


def _quat_norms(model, q):
    c = model.compiled
    out = []
    for k in range(c.nlinks):
        jt, iq = int(c.mi[k, 1]), int(c.mi[k, 2])
        if jt == J.JT_SPHERICAL:
            out.append(np.linalg.norm(q[iq : iq + 4]))
        elif jt == J.JT_FREEFLYER:
            out.append(np.linalg.norm(q[iq + 3 : iq + 7]))
    return np.array(out)


# ------------------------------------------------------------------ RBDL reference (A1)
def test_fourbar_assembly_q_matches_rbdl_a1():
    m, cs = fourbar()
    q_init = FOURBAR_Q + np.array([-0.2, 0.0, 0.1, -0.03, 0.05])
    r = assemble_q(m, q_init, cs, weights=[1, 0, 1, 0, 0])
    assert r.converged and r.iterations >= 1
    np.testing.assert_allclose(
        r.q, [2.15619449019, -1.27079632679, 0.885398163397, 1.27079632679, -1.27079632679], atol=1e-10
    )
    # weight-1 coordinates are kept exactly (each step has d_i = 0 there)
    assert r.q[0] == pytest.approx(q_init[0], abs=1e-14) and r.q[2] == pytest.approx(q_init[2], abs=1e-14)
    assert r.residual < 1e-14
    assert np.linalg.norm(constraint_position_error(m, r.q, cs)) == pytest.approx(r.residual, abs=1e-16)


def test_fourbar_assembly_qdot_matches_rbdl_a1():
    m, cs = fourbar()
    r = assemble_qdot(m, FOURBAR_Q, [0.01, 0.5, -0.7, -0.5, 0.3], cs, weights=[1, 0, 1, 0, 0])
    assert r.converged and r.iterations == 1
    np.testing.assert_allclose(r.v, [0.01, -0.71, -0.70, 0.71, -0.71], atol=1e-12)
    assert np.abs(constraint_velocity_error(m, FOURBAR_Q, r.qdot, cs)).max() < 1e-13


def test_already_assembled_start_is_returned_unchanged():
    m, cs = fourbar()
    r = assemble_q(m, FOURBAR_Q, cs, weights=np.ones(5))
    assert r.converged and r.iterations == 0 and r.step_norm == 0.0
    np.testing.assert_array_equal(r.q, FOURBAR_Q)


# ------------------------------------------------------------------ properties
@pytest.mark.parametrize("seed", range(4))
def test_fourbar_assembly_from_perturbed_states(seed):
    m, cs = fourbar()
    rng = np.random.default_rng(seed)
    q_init = FOURBAR_Q + rng.uniform(-0.3, 0.3, 5)
    r = assemble_q(m, q_init, cs, weights=[1, 0, 1, 0, 0])
    assert r.converged
    assert np.abs(constraint_position_error(m, r.q, cs)).max() < 1e-12
    np.testing.assert_allclose(r.q[[0, 2]], q_init[[0, 2]], atol=1e-13)


def test_assembly_step_is_the_weighted_least_distance_solution():
    # unit weights: at convergence from a nearby start, (q - q_init) is (to first order) the
    # minimum-norm correction, i.e. orthogonal to the constraint manifold's tangent space
    m, cs = fourbar()
    rng = np.random.default_rng(7)
    for eps in (1e-3, 1e-5):
        q_init = FOURBAR_Q + eps * rng.standard_normal(5)
        r = assemble_q(m, q_init, cs, weights=np.ones(5))
        assert r.converged
        G = constraint_jacobian(m, r.q, cs)
        d = r.q - q_init
        # the component of d along the manifold is second order in the perturbation
        N = np.linalg.svd(G)[2][G.shape[0] :]
        assert np.linalg.norm(N @ d) < 10 * eps * np.linalg.norm(d)


def test_slider_crank_3d_assembly_converges_rbdl_h():
    m, cs = slider_crank_3d()
    r = assemble_q(m, [0.4, PI / 4, -PI / 4, 0.1, 0.1], cs, weights=np.ones(5))
    assert r.converged
    assert np.abs(constraint_position_error(m, r.q, cs)).max() < 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_spherical_slider_crank_assembly_stays_on_quaternion_manifold(seed):
    m, cs = slider_crank_3d(spherical=True)
    rng = np.random.default_rng(seed)
    q0 = sinews.neutral(m)
    q_init = sinews.integrate(m, q0, 0.2 * rng.standard_normal(m.nv))
    r = assemble_q(m, q_init, cs, weights=[0, 1, 0, 0, 0])
    assert r.converged
    assert np.abs(constraint_position_error(m, r.q, cs)).max() < 1e-12
    np.testing.assert_allclose(_quat_norms(m, r.q), 1.0, atol=1e-14)
    assert r.q[1] == pytest.approx(q_init[1], abs=1e-13)  # the weighted crank angle is kept
    # velocities: spherical joint velocity is in body axes
    rv = assemble_qdot(m, r.q, rng.standard_normal(m.nv), cs, weights=np.ones(m.nv))
    assert rv.converged
    assert np.abs(constraint_velocity_error(m, r.q, rv.v, cs)).max() < 1e-12


def test_welded_free_body_assembles_to_the_weld_pose():
    # closed form: a free body welded (6 loop rows) to a world frame must end at that pose
    m = sinews.Model()
    b = m.add_body(0, J.FreeFlyer(), None, SpatialInertia.from_box(1.0, (0.2, 0.3, 0.4)), "box")
    target = Transform(sinews.spatial.rpy_to_matrix(0.3, -0.5, 1.2), (0.4, -0.2, 1.1))
    X_body = Transform(sinews.spatial.rpy_to_matrix(0.1, 0.2, -0.3), (0.05, 0.0, -0.1))
    cs = ConstraintSet()
    for axis in (RX, RY, RZ, TX, TY, TZ):
        cs.add_loop_constraint(0, b, target, X_body, axis, name="weld")
    cs.bind(m)
    rng = np.random.default_rng(3)
    q_init = sinews.integrate(m, sinews.neutral(m), 0.4 * rng.standard_normal(6))
    r = assemble_q(m, q_init, cs, weights=np.ones(6))
    assert r.converged
    np.testing.assert_allclose(_quat_norms(m, r.q), 1.0, atol=1e-14)
    pose = sinews.body_placement(m, r.q, b) @ X_body
    np.testing.assert_allclose(pose.R, target.R, atol=1e-12)
    np.testing.assert_allclose(pose.p, target.p, atol=1e-12)


def test_pendulum_absolute_assembly_from_one_metre_perturbation():
    # the setting of RBDL's CustomConstraintsTests (scenario K, with the built-in loop rows)
    m, cs = pendulum_absolute_model()
    qa, qda = pendulum_absolute_state(np.array([PI / 3, PI / 6]), np.array([PI, PI / 2]))
    q_init, qd_init = qa.copy(), qda.copy()
    q_init[0] += 1.0
    qd_init[0] += 1.0
    assert np.linalg.norm(constraint_position_error(m, q_init, cs)) >= 1.0
    w = np.zeros(12)
    w[[3, 10]] = 1.0  # keep link1's and link2's independent angles
    r = assemble_q(m, q_init, cs, weights=w)
    assert r.converged
    assert np.abs(constraint_position_error(m, r.q, cs)).max() < 1e-12
    np.testing.assert_allclose(r.q, qa, atol=1e-10)  # the kept angles fix the pose: back to qa
    rv = assemble_qdot(m, r.q, qd_init, cs, weights=w)
    assert np.abs(constraint_velocity_error(m, r.q, rv.v, cs)).max() < 1e-12
    np.testing.assert_allclose(rv.v, qda, atol=1e-10)


def test_custom_pin_joint_constraint_assembly_rbdl_k():
    # scenario K: RBDL's 5-row PinJointCustomConstraint (part A's example) closing pendulum B;
    # assembly from a +1 m / +1 m/s perturbation drives phi and phidot to zero, to the same
    # state as with the built-in loop rows
    m, cs_loop = pendulum_absolute_model()
    _, cs = pendulum_absolute_model_custom(m)
    qa, qda = pendulum_absolute_state(np.array([PI / 3, PI / 6]), np.array([PI, PI / 2]))
    q_init, qd_init = qa.copy(), qda.copy()
    q_init[0] += 1.0
    qd_init[0] += 1.0
    assert np.linalg.norm(constraint_position_error(m, q_init, cs)) >= 1.0
    assert np.linalg.norm(constraint_velocity_error(m, q_init, qd_init, cs)) >= 1.0
    w = np.zeros(12)
    w[[3, 10]] = 1.0
    r = assemble_q(m, q_init, cs, weights=w)
    r_loop = assemble_q(m, q_init, cs_loop, weights=w)
    assert r.converged and r_loop.converged
    assert np.abs(constraint_position_error(m, r.q, cs)).max() < 1e-12
    np.testing.assert_allclose(r.q, r_loop.q, atol=1e-12)
    rv = assemble_qdot(m, r.q, qd_init, cs, weights=w)
    assert rv.converged
    assert np.abs(constraint_velocity_error(m, r.q, rv.v, cs)).max() < 1e-12
    np.testing.assert_allclose(rv.v, assemble_qdot(m, r.q, qd_init, cs_loop, weights=w).v, atol=1e-12)


# ------------------------------------------------------------------ non-convergence and bad input
def test_unreachable_closure_reports_non_convergence():
    # link2 tip (reach <= 4 m) pinned to a world point 10 m away: no solution
    m, _ = fourbar()
    cs = ConstraintSet()
    for axis in (TX, TY):
        cs.add_loop_constraint(0, "b2", Transform.translation((10.0, 0.0, 0.0)), Transform.translation((2.0, 0, 0)), axis)
    cs.bind(m)
    r = assemble_q(m, FOURBAR_Q, cs, weights=np.zeros(5), max_iter=30)
    assert not r.converged
    assert r.iterations == 30
    assert r.residual > 5.0


def test_max_iter_zero_reports_not_converged():
    m, cs = fourbar()
    r = assemble_q(m, FOURBAR_Q + 0.1, cs, weights=np.ones(5), max_iter=0)
    assert not r.converged and r.iterations == 0 and r.residual > 0


def test_bad_input_names_the_argument():
    m, cs = fourbar()
    with pytest.raises(ValueError, match="weights"):
        assemble_q(m, FOURBAR_Q, cs, weights=np.ones(4))
    with pytest.raises(ValueError, match="weights"):
        assemble_q(m, FOURBAR_Q, cs, weights=[1, -1, 1, 1, 1])
    with pytest.raises(ValueError, match="q_init"):
        assemble_q(m, FOURBAR_Q[:3], cs, weights=np.ones(5))
    with pytest.raises(ValueError, match="q_init"):
        assemble_q(m, np.full(5, np.nan), cs, weights=np.ones(5))
    with pytest.raises(ValueError, match="tol"):
        assemble_q(m, FOURBAR_Q, cs, weights=np.ones(5), tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        assemble_q(m, FOURBAR_Q, cs, weights=np.ones(5), max_iter=-1)
    with pytest.raises(ValueError, match="qd_init"):
        assemble_qdot(m, FOURBAR_Q, np.ones(3), cs, weights=np.ones(5))
    with pytest.raises(ValueError, match="target"):
        assemble_qdot(m, FOURBAR_Q, np.ones(5), cs, weights=np.ones(5), target=np.ones(2))


def test_assemble_qdot_with_target_velocity():
    m, cs = fourbar()
    target = np.array([0.3, -0.2, 0.1])
    r = assemble_qdot(m, FOURBAR_Q, np.zeros(5), cs, weights=np.ones(5), target=target)
    assert r.converged
    np.testing.assert_allclose(constraint_jacobian(m, FOURBAR_Q, cs) @ r.v, target, atol=1e-13)
    # zero start, unit weights: the minimum-norm solution lies in the row space of G
    G = constraint_jacobian(m, FOURBAR_Q, cs)
    np.testing.assert_allclose(r.v, np.linalg.pinv(G) @ target, atol=1e-12)
