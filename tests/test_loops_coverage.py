"""Issue 8 review: loops in every impulse method and in the wrench functions, solve_q of loops on
a free-floating base (quaternions), frozen coordinates at one level only, adding loops to a set
in use, and simulate refusing a loop that cannot close."""

import numpy as np
import pytest
from test_loops_joint_types import closed_loop

import sinews
from sinews import SpatialInertia, Transform, joints
from sinews.constraints import (
    ConstraintSet,
    calc_forces,
    calc_impulses,
    compute_constraint_impulses,
    constraint_jacobian,
    constraint_position_error,
    forward_dynamics_constraints,
)
from sinews.constraints._kinematics import ConstraintKinematics
from sinews.constraints.impulses import IMPULSE_METHODS
from sinews.loops import JOINT_TYPES, ConstraintKinematicsSolver, node_wrenches
from sinews.loops import examples as E


@pytest.mark.parametrize("jt", JOINT_TYPES)
def test_impulses_every_method_and_wrench_functions(jt):
    """A loop from a branch to the free-floating body: every impulse method stops the
    constrained velocity (and they agree); calc_forces / calc_impulses in world axes reproduce
    G^T lambda; in local axes they are the same wrenches turned into the frames; the impulsive
    node wrenches balance."""
    m, cs, q, v, rng = closed_loop(jt, 5, target="float")
    G = constraint_jacobian(m, q, cs)
    res = [compute_constraint_impulses(m, q, v, cs, method=k) for k in IMPULSE_METHODS]
    assert np.abs(G @ v).max() > 1e-2  # the impact has something to do
    for r in res:
        assert r.converged
        assert np.abs(G @ r.qd_plus).max() < 1e-10, r.method
        np.testing.assert_allclose(r.qd_plus, res[0].qd_plus, atol=1e-9)
    fd = forward_dynamics_constraints(m, q, v, rng.normal(size=m.nv), cs)
    kin = ConstraintKinematics(m, q)
    for fn, result in ((calc_forces, fd), (calc_impulses, res[0])):
        lam = result.multipliers
        world = fn(m, q, cs, "L", result, frame="world")
        local = fn(m, q, cs, "L", result, frame="local")
        tot = sum(kin.jacobian6(b, X.p).T @ W for b, X, W in zip(world.bodies, world.frames, world.wrenches))
        np.testing.assert_allclose(tot, G.T @ lam, atol=1e-10 * (1 + np.abs(G.T @ lam).max()))
        assert np.abs(lam).max() > 1e-3
        for b, Xw, Ww, Xl, Wl in zip(world.bodies, world.frames, world.wrenches, local.frames, local.wrenches):
            Xb = sinews.body_placement(m, q, b) @ Xl  # the local frame in the world
            np.testing.assert_allclose(Xb.p, Xw.p, atol=1e-12)
            np.testing.assert_allclose(np.r_[Xb.R @ Wl[:3], Xb.R @ Wl[3:]], Ww, atol=1e-10 * (1 + np.abs(Ww).max()))
    nw = node_wrenches(m, q, cs, res[0])
    s, t = nw["L/source"], nw["L/target"]
    assert np.abs(s.wrench_world[3:] + t.wrench_world[3:]).max() < 1e-10
    np.testing.assert_allclose(t.R_world_node @ t.wrench_node[:3], t.wrench_world[:3], atol=1e-12)


@pytest.mark.parametrize("jt", JOINT_TYPES)
def test_solve_q_closes_a_loop_on_a_free_floating_base(jt):
    """From a perturbed configuration (free-flyer and spherical joints moved through their
    quaternions) solve_q closes the loop, keeps every quaternion unit and the frozen driver
    exactly where it was."""
    m, cs, q, _, rng = closed_loop(jt, 5, target="float")
    q1 = sinews.integrate(m, q, 0.05 * rng.normal(size=m.nv))
    assert np.abs(constraint_position_error(m, q1, cs)).max() > 1e-3
    sol = ConstraintKinematicsSolver(m, cs).freeze("b1").solve_q(q1).check()
    assert sol.residual <= 1e-10 and np.abs(constraint_position_error(m, sol.value, cs)).max() <= 1e-10
    assert sol.value[0] == q1[0]
    for sl in m.compiled.quat_slices:
        assert abs(np.linalg.norm(sol.value[sl]) - 1.0) < 1e-14
    assert np.abs(sol.value - q1).max() > 1e-3  # the free coordinates moved


def test_freeze_at_one_level_only():
    """which="u": solve_q may move the driver, solve_u/solve_udot hold its speed/acceleration;
    which="q": the reverse."""
    mech = E.slider_crank()
    m, cs = mech.model, mech.cs
    q = mech.q0.copy()
    q[0] += 0.3  # open the loop by turning the crank alone
    s = ConstraintKinematicsSolver(m, cs).freeze("crank", which="u")
    sol = s.solve_q(q).check()
    assert sol.value[0] != q[0]
    u = s.solve_u(sol.value, [1.0, 0.0, 0.0]).check().value
    assert u[0] == 1.0
    a = s.solve_udot(sol.value, u, [0.5, 0.0, 0.0]).check().value
    assert a[0] == 0.5
    s = ConstraintKinematicsSolver(m, cs).freeze("crank", which="q")
    sol = s.solve_q(q).check()
    assert sol.value[0] == q[0]
    u = s.solve_u(sol.value, [1.0, 0.0, 0.0]).check().value
    assert u[0] != 1.0 and np.abs(constraint_jacobian(m, sol.value, cs) @ u).max() < 1e-10
    assert list(s.frozen("q")) == [0] and list(s.frozen("u")) == []


def test_loops_added_and_removed_on_a_set_in_use():
    """A bound set refuses a new loop with a message that says how (unbind); after unbind the
    loop is added and the next call binds again; removing it gives the first answer back."""
    m, cs, q, v, rng = closed_loop("ball", 1)
    tau = rng.normal(size=m.nv)
    first = forward_dynamics_constraints(m, q, v, tau, cs, method="tree_augmented")
    Xw = sinews.body_placement(m, q, "b2")
    with pytest.raises(RuntimeError, match="unbind"):
        cs.add_loop_joint("b2", "world", "pin", None, Xw, name="second")
    cs.unbind().add_loop_joint("b2", "world", "pin", None, Xw, name="second")
    both = forward_dynamics_constraints(m, q, v, tau, cs, method="tree_augmented")
    assert both.rows == 3 + 5 and np.abs(both.qdd - first.qdd).max() > 1e-3
    ref = forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    np.testing.assert_allclose(both.qdd, ref.qdd, atol=1e-9 * (1 + np.abs(ref.qdd).max()))
    cs.remove("second")
    again = forward_dynamics_constraints(m, q, v, tau, cs, method="tree_augmented")
    np.testing.assert_allclose(again.qdd, first.qdd, atol=1e-12 * (1 + np.abs(first.qdd).max()))


def test_simulate_refuses_a_loop_that_cannot_close():
    m = sinews.Model(gravity=(0, 0, -9.81))
    m.add_body(0, joints.RevoluteY(), None, SpatialInertia.from_rod(1.0, 1.0, axis=0), "arm")
    cs = ConstraintSet()
    cs.add_loop_joint("arm", "world", "ball", Transform.translation((1.0, 0, 0)), Transform.translation((3.0, 0, 0)),
                      name="far")  # a 1 m arm cannot reach a point 3 m away
    with pytest.raises(ValueError, match="q0.*cannot be closed"):
        sinews.simulate(m, [0.0], [0.0], duration=0.1, dt=0.01, constraints=cs, progress=False)
    # reachable (at 1 m) but not closed at q0: projected first, then the drift is tiny
    cs = ConstraintSet()
    cs.add_loop_joint("arm", "world", "ball", Transform.translation((1.0, 0, 0)),
                      Transform.translation((np.cos(0.5), 0, -np.sin(0.5))), name="near")
    tr = sinews.simulate(m, [0.1], [0.0], duration=0.1, dt=0.01, constraints=cs, progress=False)
    assert abs(tr.q[0, 0] - 0.5) < 1e-9 and tr.constraint_error.max() < 1e-9
    # without projection nothing is corrected, and the trajectory says so
    tr = sinews.simulate(m, [0.1], [0.0], duration=0.02, dt=0.01, constraints=cs, projection=False, progress=False)
    assert tr.constraint_error[0] > 0.1


def test_redundant_loop_rows_flagged_by_every_method():
    """A planar four-bar closed by a 3-D pin loop: 5 rows of rank 2.  Every forward-dynamics
    and impulse method gives the same (unique) accelerations and velocities with the
    minimum-norm multipliers, flagged least_squares with rank 2."""
    from sinews.constraints import METHODS

    mech = E.four_bar()
    m, cs, q = mech.model, mech.cs, mech.q0
    v = ConstraintKinematicsSolver(m, cs).solve_u(q, [3.0, 0.0, 0.0]).check().value
    res = [forward_dynamics_constraints(m, q, v, np.zeros(3), cs, method=k) for k in METHODS]
    for r in res:
        assert r.least_squares and r.rank == 2 and r.rows == 5 and r.converged, r.method
        np.testing.assert_allclose(r.qdd, res[0].qdd, atol=1e-9 * (1 + np.abs(res[0].qdd).max()))
        np.testing.assert_allclose(r.multipliers, res[0].multipliers, atol=1e-8 * (1 + np.abs(res[0].multipliers).max()))
    # minimum norm: the void rows (z force, the two tilt moments) carry nothing
    assert np.abs(res[0].multipliers[[2, 3, 4]]).max() < 1e-9
    imp = [compute_constraint_impulses(m, q, [1.0, 0.0, 0.0], cs, method=k) for k in IMPULSE_METHODS]
    for r in imp:
        assert r.least_squares and r.rank == 2
        np.testing.assert_allclose(r.qd_plus, imp[0].qd_plus, atol=1e-10)
