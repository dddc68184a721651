"""Closed-chain mechanisms with loop joints against closed forms, statics and Pinocchio:
slider-crank, Grashof four-bar, double wishbone, Stewart-Gough platform, CV and Hooke joints,
energy conservation, and the constraint kinematics solver's failure reports."""

import math

import numpy as np
import pytest

import sinews
from sinews.constraints import METHODS, forward_dynamics_constraints, inverse_dynamics_constraints
from sinews.loops import ConstraintKinematicsSolver, node_wrenches
from sinews.loops import examples as E
from sinews.spatial import exp_so3


def test_slider_crank_closed_form():
    mech = E.slider_crank()
    m, cs = mech.model, mech.cs
    r, l = mech.info["crank"], mech.info["rod"]
    s = ConstraintKinematicsSolver(m, cs).freeze("crank")
    q = mech.q0.copy()
    for th in np.linspace(0.1, 2 * np.pi, 25):
        q[0] = th
        sol = s.solve_q(q).check()
        q = sol.value
        assert q[0] == th  # the frozen driver is held exactly
        x = r * math.cos(th) + math.sqrt(l * l - (r * math.sin(th)) ** 2)
        assert abs(q[2] - x) < 1e-10
        # slider speed by the velocity solve vs the derivative of the closed form
        u = s.solve_u(q, [1.0, 0.0, 0.0]).check().value
        dx = -r * math.sin(th) - r * r * math.sin(th) * math.cos(th) / math.sqrt(l * l - (r * math.sin(th)) ** 2)
        assert abs(u[2] - dx) < 1e-9
        # slider acceleration at constant crank speed: x''(theta) by differences of the closed form
        a = s.solve_udot(q, u, np.zeros(3)).check().value
        X = lambda t: r * math.cos(t) + math.sqrt(l * l - (r * math.sin(t)) ** 2)  # noqa: E731
        h = 1e-4
        assert a[0] == 0.0 and abs(a[2] - (X(th + h) - 2 * X(th) + X(th - h)) / h**2) < 1e-6
    assert list(s.frozen("q")) == [0] and list(s.unfreeze().frozen("u")) == []
    with pytest.raises(ValueError, match="which"):
        s.freeze("crank", which="qu")


def test_grashof_four_bar_full_rotation_and_out_of_range_driver():
    mech = E.four_bar()
    m, cs, info = mech.model, mech.cs, mech.info
    s = ConstraintKinematicsSolver(m, cs).freeze("crank")
    q = mech.q0.copy()
    a, b, c, d = info["crank"], info["coupler"], info["rocker"], info["ground"]
    for th in np.linspace(np.pi / 2, np.pi / 2 + 2 * np.pi, 37)[1:]:  # the crank turns all the way round
        q[0] = th
        q = s.solve_q(q).check().value
        A = np.array([a * math.cos(th), a * math.sin(th)])
        B = E._circles(A, b, np.array([d, 0.0]), c, upper=True)  # open branch (closed form)
        assert abs(q[2] - math.atan2(B[1], B[0] - d)) < 1e-9
    # non-Grashof (crank longer than the others allow): the driver leaves the range, reported
    bad = E.four_bar(ground=0.4, crank=0.3, coupler=0.25, rocker=0.3)
    s = ConstraintKinematicsSolver(bad.model, bad.cs).freeze("crank")
    q = bad.q0.copy()
    q[0] = np.pi  # crank tip too far from the rocker pivot: |A - D| = 0.7 > b + c = 0.55
    sol = s.solve_q(q)
    assert not sol.converged and sol.residual > 1e-3 and "pin" in sol.message
    with pytest.raises(RuntimeError, match="cannot be closed"):
        sol.check()


def test_double_wishbone_kingpin_vs_planar_closed_form_and_node_balance():
    mech = E.double_wishbone()
    m, cs, info = mech.model, mech.cs, mech.info
    s = ConstraintKinematicsSolver(m, cs).freeze("lower_arm")
    q = mech.q0.copy()
    P1, P2 = np.array(info["lca_pivot"])[1:], np.array(info["uca_pivot_world"])[1:]
    L0 = np.array(info["lca_arm"])[1:]
    U0 = np.array(info["ubj"])
    k = np.linalg.norm(U0)
    r2 = np.linalg.norm(np.array(info["uca_pivot"]))
    for th in np.linspace(-0.25, 0.25, 11):
        q[info["lca_q"]] = th
        q = s.solve_q(q).check().value
        # the ball joints stay in the plane x = 0: a planar four-bar in (y, z)
        Lyz = P1 + np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]]) @ L0
        Uyz = E._circles(Lyz, k, P2, r2, upper=True)
        X = sinews.body_placement(m, q, "spindle")
        np.testing.assert_allclose(X.p[1:], Lyz, atol=1e-10)
        np.testing.assert_allclose((X.R @ U0 + X.p)[1:], Uyz, atol=1e-9)
    # dynamics: all methods agree, node wrenches of each loop balance
    v = s.solve_u(q, np.r_[1.0, np.zeros(m.nv - 1)]).check().value
    res = [forward_dynamics_constraints(m, q, v, np.zeros(m.nv), cs, method=k) for k in METHODS]
    for r in res[1:]:
        np.testing.assert_allclose(r.qdd, res[0].qdd, atol=1e-8)
    nw = node_wrenches(m, q, cs, res[0])
    assert set(nw) == {"upper_arm_pivot/source", "tie_rod_inner/source"}  # targets on the chassis
    assert cs.group("upper_arm_pivot").has_hinge() and cs.group("upper_arm_pivot").target_node is None


def _stewart_pose(rng):
    return exp_so3(rng.normal(size=3) * 0.1), np.array([0.0, 0.0, 1.0]) + rng.normal(size=3) * 0.05


def test_stewart_forward_kinematics_by_the_solver():
    mech = E.stewart_platform()
    m, cs, info = mech.model, mech.cs, mech.info
    rng = np.random.default_rng(0)
    R, p = _stewart_pose(rng)
    lengths = E.stewart_leg_lengths(mech, R, p)  # closed-form inverse kinematics
    q = mech.q0.copy()  # home pose, legs set to the target lengths: not closed
    q[info["leg_q"]] = lengths
    s = ConstraintKinematicsSolver(m, cs)
    for i in range(6):
        s.freeze(f"leg{i}_upper", which="q")
    sol = s.solve_q(q).check()
    X = sinews.body_placement(m, sol.value, "platform")
    np.testing.assert_allclose(X.p, p, atol=1e-9)
    np.testing.assert_allclose(X.R, R, atol=1e-9)
    np.testing.assert_allclose(sol.value[info["leg_q"]], lengths, rtol=0, atol=0)


def test_stewart_leg_forces_vs_statics():
    """Light legs, platform weight: the actuator forces and the ball-node wrenches equal the
    forces of the 6 x 6 statics of the platform (legs as two-force members)."""
    mech = E.stewart_platform(leg_masses=(1e-6, 1e-6), platform_mass=20.0)
    m, cs, info = mech.model, mech.cs, mech.info
    R, p = _stewart_pose(np.random.default_rng(1))
    q = E.stewart_configuration(mech, R, p)
    tips = p + info["P"] @ R.T
    u = tips - info["B"]
    u /= np.linalg.norm(u, axis=1)[:, None]
    A = np.vstack([u.T, np.cross(tips - p, u).T])  # [forces; moments about the COM] per unit leg force
    w = np.r_[0.0, 0.0, 20.0 * 9.81, 0.0, 0.0, 0.0]
    f = np.linalg.solve(A, w)
    actuated = np.zeros(m.nv, bool)
    actuated[info["leg_v"]] = True
    inv = inverse_dynamics_constraints(m, q, np.zeros(m.nv), np.zeros(m.nv), cs, actuated)
    assert inv.converged
    np.testing.assert_allclose(inv.tau[info["leg_v"]], f, rtol=1e-5)
    nw = node_wrenches(m, q, cs, inv.multipliers)
    for i in range(6):
        W = nw[f"leg{i}/target"].wrench_world  # on the platform, about the ball centre
        np.testing.assert_allclose(W[3:], f[i] * u[i], atol=1e-4 * abs(f[i]))
        np.testing.assert_allclose(W[:3], 0.0, atol=1e-12)
        Ws = nw[f"leg{i}/source"].wrench_world
        np.testing.assert_allclose(Ws, -W, atol=1e-12)  # same point: the two nodes balance


@pytest.mark.parametrize("jt", ["constant_velocity", "universal"])
def test_cv_joint_equal_speeds_and_hooke_joint_cardan_formula(jt):
    beta = 0.5
    mech = E.shaft_pair(beta, jt)
    m, cs = mech.model, mech.cs
    s = ConstraintKinematicsSolver(m, cs).freeze("shaft1")
    for th in np.linspace(0.0, 2 * np.pi, 9):
        q = s.solve_q(np.array([th, th])).check().value
        v = s.solve_u(q, [1.0, 0.0]).check().value
        if jt == "constant_velocity":
            assert abs(v[1] - 1.0) < 1e-10 and abs(q[1] - th) < 1e-9
        else:  # input yoke at angle th from the plane of the shafts
            assert abs(v[1] - math.cos(beta) / (1 - math.sin(beta) ** 2 * math.cos(th) ** 2)) < 1e-10
    # simulated: the CV coupling keeps the speeds equal, the Hooke joint makes them fluctuate
    tr = sinews.simulate(m, np.zeros(2), [2.0, 2.0 if jt == "constant_velocity" else 2.0 / math.cos(beta)],
                         duration=1.0, dt=5e-3, constraints=cs, progress=False)
    ratio = tr.v[:, 1] / tr.v[:, 0]
    if jt == "constant_velocity":
        np.testing.assert_allclose(ratio, 1.0, atol=1e-9)
    else:
        assert np.ptp(ratio) > 0.2
    assert tr.energy_drift < 1e-6 * tr.energy[0]


def test_energy_of_passive_closed_chains_over_10_s():
    """Gravity (and a cut-joint spring) only, no damping: the energy of a four-bar (pin loop,
    redundant rows) and of the double wishbone with a torsion bar on its upper-arm pin loop
    (pin + ball loops, quaternion joints; energy = mechanical + spring) stays put over 10 s.
    The drift is RK4's (it falls as dt^4); the projection removes only the constraint drift."""
    mech = E.four_bar()
    tr = sinews.simulate(mech.model, mech.q0, [3.0, 0.0, 0.0], duration=10.0, dt=2e-2, constraints=mech.cs,
                         progress=False)
    ke = max(sinews.kinetic_energy(mech.model, q, v) for q, v in zip(tr.q, tr.v))
    assert np.ptp(tr.q[:, 0]) > 20 and tr.energy_drift < 1e-3 * ke
    assert tr.constraint_error.max() < 1e-5 and tr.info["projection_failures"] == 0
    mech = E.double_wishbone(spring=(400.0, 0.0))
    m = mech.model
    v0 = ConstraintKinematicsSolver(m, mech.cs).solve_u(mech.q0, np.r_[0.5, np.zeros(m.nv - 1)]).value
    tr = sinews.simulate(m, mech.q0, v0, duration=10.0, dt=2e-2, constraints=mech.cs, progress=False)
    ke = max(sinews.kinetic_energy(m, q, v) for q, v in zip(tr.q, tr.v))
    spring = [mech.cs.group("upper_arm_pivot").cut_spring_energy(m, q) for q in tr.q]
    assert np.ptp(tr.q[:, 0]) > 0.1 and np.ptp(spring) > 0.5 * ke  # the spring works hard
    assert tr.energy_drift < 2e-2 * ke
    assert tr.constraint_error.max() < 1e-5


def test_drift_without_projection_is_reported():
    mech = E.four_bar()
    v0 = ConstraintKinematicsSolver(mech.model, mech.cs).solve_u(mech.q0, [3.0, 0.0, 0.0]).value
    kw = dict(duration=2.0, dt=2e-2, constraints=mech.cs, progress=False)
    free = sinews.simulate(mech.model, mech.q0, v0, projection=False, **kw)
    proj = sinews.simulate(mech.model, mech.q0, v0, **kw)
    assert free.constraint_error[-1] > 1e-7  # drift accumulates
    assert proj.constraint_error.max() < 1e-5 and free.constraint_error.max() > 10 * proj.constraint_error.max()
    mech.cs.enable_baumgarte("pin", time_constant=0.05)  # Baumgarte alone keeps it bounded
    baum = sinews.simulate(mech.model, mech.q0, v0, projection=False, **kw)
    assert baum.constraint_error.max() < 0.5 * free.constraint_error.max()


def test_node_wrenches_of_a_beam_on_two_supports_vs_hand_statics():
    """A uniform beam (mass M, length L) on a hinge at x = 0 and a ball loop to the ground at
    x = L: at rest each support carries M g / 2; the ball node's wrench on the beam is that
    force (about the ball centre: no moment), and the ground side balances it."""
    M, L = 3.0, 2.0
    m = sinews.Model(gravity=(0.0, 0.0, -9.81))
    m.add_body(0, sinews.joints.RevoluteY(), None, sinews.SpatialInertia.from_rod(M, L, axis=0), "beam")
    from sinews.constraints import ConstraintSet

    cs = ConstraintSet()
    cs.add_loop_joint("beam", "world", "ball", sinews.Transform.translation((L, 0, 0)),
                      sinews.Transform.translation((L, 0, 0)), name="support")
    r = forward_dynamics_constraints(m, [0.0], [0.0], [0.0], cs)
    assert abs(r.qdd[0]) < 1e-12 and r.least_squares  # x and y rows are void: min-norm multipliers
    nw = node_wrenches(m, [0.0], cs, r)
    assert list(nw) == ["support/source"]  # a target on the world has no node
    np.testing.assert_allclose(nw["support/source"].wrench_world, [0, 0, 0, 0, 0, M * 9.81 / 2], atol=1e-12)
    np.testing.assert_allclose(nw["support/source"].p_world_node, [L, 0, 0], atol=1e-15)
