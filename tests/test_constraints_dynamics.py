"""Closed-loop dynamics: slider-crank (scenario H), gamma against finite differences,
passive simulations conserve energy, Baumgarte keeps the loop closed."""

import numpy as np
import pytest

import sinews
from sinews import mechanical_energy, point_acceleration_6d, point_velocity_6d
from sinews.constraints import (
    METHODS,
    constraint_gamma,
    constraint_jacobian,
    constraint_position_error,
    constraint_velocity_error,
    forward_dynamics_constraints,
)
from sinews.constraints.examples import (
    double_pendulum_absolute,
    double_pendulum_state,
    four_bar,
    slider_crank_3d,
)

TAU_H = np.array([0.12, -0.3, 0.05, 0.7, -0.1])


def _frames_world(m, q, g):
    XP = sinews.body_placement(m, q, g.predecessor) @ g.X_predecessor
    XS = sinews.body_placement(m, q, g.successor) @ g.X_successor
    return XP, XS


def _assemble_slider_crank(m, cs, crank_angle):
    """Close the slider-crank with the crank angle fixed: Newton on phi over the other four
    coordinates (finite-difference Jacobian; a test helper, not sinews' assembly)."""
    q = np.array([0.5, crank_angle, 0.2, 0.1, 0.1])
    free = [0, 2, 3, 4]
    for _ in range(50):
        phi = constraint_position_error(m, q, cs)
        if np.abs(phi).max() < 1e-14:
            break
        J = np.empty((4, 4))
        for j, k in enumerate(free):
            dq = np.zeros(5)
            dq[k] = 1e-7
            J[:, j] = (constraint_position_error(m, q + dq, cs) - constraint_position_error(m, q - dq, cs)) / 2e-7
        q[free] -= np.linalg.solve(J, phi)
    assert np.abs(constraint_position_error(m, q, cs)).max() < 1e-13
    return q


def test_constraints_dynamics_slider_crank_H():
    """Scenario H.  At q = 0 the crank and the rod are collinear (dead centre): G has rank 3 of
    4 there (the Rz row is redundant), so every method flags a consistent least-squares answer;
    RBDL's ColPivQR copes silently.  Away from it the rows are independent."""
    m, cs = slider_crank_3d()
    q = qd = np.zeros(5)
    assert np.allclose(constraint_position_error(m, q, cs), 0, atol=1e-15)
    ref = forward_dynamics_constraints(m, q, qd, TAU_H, cs)
    assert ref.least_squares and ref.rank == 3 and ref.converged
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, qd, TAU_H, cs, method=method)
        assert r.least_squares and r.converged
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9, rtol=0) and np.allclose(r.multipliers, ref.multipliers, atol=1e-9, rtol=0)
    # zero constraint acceleration along the 4 loop axes, from the core point kinematics
    g = cs.group("loop")
    XP, XS = _frames_world(m, q, g)
    aP = point_acceleration_6d(m, q, qd, ref.qdd, g.predecessor, g.X_predecessor.p)
    aS = point_acceleration_6d(m, q, qd, ref.qdd, "rod", g.X_successor.p)
    axes = g.axis_matrix
    D = np.hstack([axes[:, :3] @ XP.R.T, axes[:, 3:] @ XP.R.T])
    assert np.allclose(D @ (aS - aP), 0, atol=1e-10)
    assert np.abs(ref.qdd).max() > 1e-2  # it does move
    # a regular configuration: full rank, all methods agree
    q = _assemble_slider_crank(m, cs, 0.6)
    G = constraint_jacobian(m, q, cs)
    qd = np.linalg.svd(G)[2][-1] * 1.5
    ref = forward_dynamics_constraints(m, q, qd, TAU_H, cs)
    assert not ref.least_squares and ref.rank == 4
    assert np.allclose(G @ ref.qdd, constraint_gamma(m, q, qd, cs), atol=1e-10)
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, qd, TAU_H, cs, method=method)
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9, rtol=0) and np.allclose(r.multipliers, ref.multipliers, atol=1e-9, rtol=0)


def _states(m, rng, n=3):
    out = []
    for _ in range(n):
        q = sinews.random_configuration(m, rng) if m.nq != m.nv else rng.normal(size=m.nq)
        out.append((q, rng.normal(size=m.nv)))
    return out


@pytest.mark.parametrize("builder", [four_bar, slider_crank_3d, double_pendulum_absolute])
def test_constraints_dynamics_gamma_is_minus_time_derivative_of_G_v(builder):
    """gamma = -d/dt (G(q) v) at qdd = 0, by central differences along q(t) = q (+) t v, and
    G v = relative frame velocities from the core's point_velocity_6d (any state, even off
    the constraint manifold)."""
    m, cs = builder()
    rng = np.random.default_rng(7)
    eps = 1e-6
    for q, v in _states(m, rng):
        Gp = constraint_jacobian(m, sinews.integrate(m, q, v, eps), cs)
        Gm = constraint_jacobian(m, sinews.integrate(m, q, v, -eps), cs)
        fd = -(Gp @ v - Gm @ v) / (2 * eps)
        assert np.allclose(constraint_gamma(m, q, v, cs), fd, atol=1e-6 * (1 + np.abs(fd).max()))
        G = constraint_jacobian(m, q, cs)
        for g in cs:
            XP, XS = _frames_world(m, q, g)
            # both bodies at the successor point s (the predecessor-fixed point coinciding with s)
            s_in_pred = sinews.body_placement(m, q, g.predecessor).inverse().act_point(XS.p)
            nuP = point_velocity_6d(m, q, v, g.predecessor, s_in_pred)
            nuS = point_velocity_6d(m, q, v, g.successor, g.X_successor.p)
            ax = g.axis_matrix
            D = np.hstack([ax[:, :3] @ XP.R.T, ax[:, 3:] @ XP.R.T])
            assert np.allclose(G[g.rows] @ v, D @ (nuS - nuP), atol=1e-12)
        assert np.allclose(constraint_velocity_error(m, q, v, cs), G @ v, atol=1e-12)


@pytest.mark.parametrize("builder", [four_bar, slider_crank_3d, double_pendulum_absolute])
def test_constraints_dynamics_translation_rows_are_dphi_dt(builder):
    """Translation rows: G v = d(phi)/dt exactly, at any state (finite differences)."""
    m, cs = builder()
    rng = np.random.default_rng(11)
    eps = 1e-6
    rows = np.array([g.axis_matrix[i, 3:].any() for g in cs for i in range(g.size)])
    for q, v in _states(m, rng):
        fd = (constraint_position_error(m, sinews.integrate(m, q, v, eps), cs)
              - constraint_position_error(m, sinews.integrate(m, q, v, -eps), cs)) / (2 * eps)
        Gv = constraint_jacobian(m, q, cs) @ v
        assert np.allclose(Gv[rows], fd[rows], atol=1e-7 * (1 + np.abs(fd).max()))


def _bead_models():
    """A bead (point mass 0.5) sliding on a rod that spins about z (the rod: 1 kg, length 2).

    Joint model: rod RevoluteZ, bead PrismaticX on the rod (2 dofs).  Constrained model: bead on
    a TranslationXYZ joint from the ground, loop rows Ty, Tz of the rod frame at the rod origin
    to the bead: the frames separate along the free x axis of a *rotating* predecessor."""
    from sinews import Model, SpatialInertia, Transform, joints
    from sinews.constraints import ConstraintSet

    rod = SpatialInertia(1.0, (1.0, 0, 0), np.diag([0.01, 1 / 3, 1 / 3]))
    bead = SpatialInertia.point_mass(0.5)
    mj = Model(gravity=(0, -9.81, 0))
    r = mj.add_body(0, joints.RevoluteZ(), None, rod, "rod")
    mj.add_body(r, joints.PrismaticX(), None, bead, "bead")
    ma = Model(gravity=(0, -9.81, 0))
    ma.add_body(0, joints.RevoluteZ(), None, rod, "rod")
    ma.add_body(0, joints.TranslationXYZ(), None, bead, "bead")
    cs = ConstraintSet()
    for ax in ((0, 0, 0, 0, 1, 0), (0, 0, 0, 0, 0, 1)):
        cs.add_loop_constraint("rod", "bead", Transform.identity(), Transform.identity(), ax, name="slot")
    return mj, ma, cs


def test_constraints_dynamics_bead_on_spinning_rod_cross_model():
    """A slider whose predecessor rotates: absolute coordinates agree with joint coordinates
    (all methods) and a passive run stays on the slot and conserves energy."""
    mj, ma, cs = _bead_models()
    th, x, thd, xd = 0.4, 0.7, 2.0, -0.5
    qa = np.array([th, x * np.cos(th), x * np.sin(th), 0.0])
    va = np.array([thd, xd * np.cos(th) - x * thd * np.sin(th), xd * np.sin(th) + x * thd * np.cos(th), 0.0])
    assert np.allclose(constraint_position_error(ma, qa, cs), 0, atol=1e-15)
    assert np.allclose(constraint_velocity_error(ma, qa, va, cs), 0, atol=1e-14)
    tau = np.array([0.3, 0.0, 0.0, 0.0])
    qdd_j = sinews.aba(mj, [th, x], [thd, xd], [0.3, 0.0])
    a_bead = sinews.point_acceleration(mj, [th, x], [thd, xd], qdd_j, "bead")
    for method in METHODS:
        r = forward_dynamics_constraints(ma, qa, va, tau, cs, method=method)
        assert np.allclose(r.qdd, [qdd_j[0], *a_bead], atol=1e-9, rtol=0), method
    E0 = mechanical_energy(ma, qa, va)
    q1, v1 = _rk4(ma, cs, qa, va, 2e-3, 150, "direct")
    assert abs(mechanical_energy(ma, q1, v1) - E0) < 1e-7 * (1 + abs(E0))
    assert np.abs(constraint_position_error(ma, q1, cs)).max() < 1e-8
    assert np.abs(constraint_velocity_error(ma, q1, v1, cs)).max() < 1e-8


def _rk4(m, cs, q, v, dt, steps, method):
    def f(q, v):
        return forward_dynamics_constraints(m, q, v, np.zeros(m.nv), cs, method=method).qdd

    for _ in range(steps):
        a1 = f(q, v)
        q2, v2 = q + 0.5 * dt * v, v + 0.5 * dt * a1
        a2 = f(q2, v2)
        q3, v3 = q + 0.5 * dt * v2, v + 0.5 * dt * a2
        a3 = f(q3, v3)
        q4, v4 = q + dt * v3, v + dt * a3
        a4 = f(q4, v4)
        q = q + dt / 6 * (v + 2 * v2 + 2 * v3 + v4)
        v = v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
    return q, v


@pytest.mark.parametrize(
    "case",
    ["four_bar", "slider_crank", "pendulum"],
)
def test_constraints_dynamics_passive_closed_loops_conserve_energy(case):
    if case == "four_bar":
        m, cs = four_bar()
        q = np.array([3 * np.pi / 4, -np.pi / 2, np.pi / 4, np.pi / 2, -np.pi / 2])
        v = np.array([-1.0, -1.0, -2.0, 1.0, -1.0])
        method = "null_space"  # B5 is massless
    elif case == "slider_crank":
        m, cs = slider_crank_3d()
        q = _assemble_slider_crank(m, cs, 0.6)
        G = constraint_jacobian(m, q, cs)
        v = np.linalg.svd(G)[2][-1] * 2.0  # the 1-dof motion of the mechanism
        method = "kokkevis"
    else:
        m, cs = double_pendulum_absolute()
        q, v = double_pendulum_state(np.array([np.pi / 3, np.pi / 6]), np.array([np.pi, np.pi / 2]))
        method = "range_space_sparse"
    E0 = mechanical_energy(m, q, v)
    q1, v1 = _rk4(m, cs, q, v, 2e-3, 100, method)
    E1 = mechanical_energy(m, q1, v1)
    assert abs(E1 - E0) < 1e-6 * (1 + abs(E0))
    assert np.abs(constraint_velocity_error(m, q1, v1, cs)).max() < 1e-7
    phi = constraint_position_error(m, q1, cs)
    if case == "slider_crank":
        # A single rotation row with two free relative rotations is not integrable: for
        # R_PS = Rx(a) Ry(b) the sin-based error is phi_z = sin(a) sin(b) / 2 although
        # omega_rel . z = 0 throughout.  Only the translation rows are holonomic here.
        phi = phi[:3]
    assert np.abs(phi).max() < 1e-7
    assert np.abs(q1 - q).max() > 0.05  # it did move


def test_constraints_dynamics_baumgarte_reduces_drift():
    """Explicit Euler drifts off the pendulum's loop manifold; Baumgarte (T = 0.02) pulls it
    back.  (The A four-bar is a poor example: both ground pivots coincide, so on its branch the
    closure is linear in q and Euler steps keep it closed exactly.)"""
    drift = {}
    for on in (False, True):
        m, cs = double_pendulum_absolute()
        if on:
            for g in cs:
                cs.enable_baumgarte(g, time_constant=0.02)
        q, v = double_pendulum_state(np.array([np.pi / 3, np.pi / 6]), np.array([np.pi, np.pi / 2]))
        dt = 2e-3
        for _ in range(400):
            a = forward_dynamics_constraints(m, q, v, np.zeros(12), cs).qdd
            q, v = q + dt * v, v + dt * a
        drift[on] = np.abs(constraint_position_error(m, q, cs)).max()
    assert drift[False] > 1e-4
    assert drift[True] < 0.1 * drift[False]


def test_constraints_dynamics_slider_crank_spherical_rod_cross_joint_type():
    """RBDL's SliderCrank3DSphericalJoint idea: the same mechanism with the rod on a
    quaternion (Spherical) joint instead of EulerZYX gives the same motion (slider and crank
    accelerations, 6-D acceleration of the rod's loop point), for every method."""
    from sinews import Model, SpatialInertia, Transform, joints
    from sinews.constraints import ConstraintSet
    from sinews.constraints.examples import rbdl_roty
    from sinews.spatial import matrix_to_quat, rot_x, rot_y, rot_z

    m_e, cs_e = slider_crank_3d()
    m_s = Model(gravity=(0, -9.81, 0))
    sl = m_s.add_body(0, joints.PrismaticX(), None, SpatialInertia(5.0, (0, 0, 0), np.eye(3)), "slider")
    cr = m_s.add_body(0, joints.RevoluteZ(), Transform(rbdl_roty(-np.pi / 2).T, (0, 0, 2.1)),
                      SpatialInertia(3.0, (0.5, 0, 0), np.diag([0.5, 0.5, 1.0])), "crank")
    m_s.add_body(cr, joints.Spherical(), Transform(rbdl_roty(np.pi).T, (1, 0, 0)),
                 SpatialInertia(1.0, (1.5, 0, 0), np.diag([0.02, 0.76, 0.76])), "rod")
    cs_s = ConstraintSet()
    g = cs_e.group("loop")
    for ax in g.axes:
        cs_s.add_loop_constraint(sl, "rod", g.X_predecessor, g.X_successor, ax, name="loop")
    q = _assemble_slider_crank(m_e, cs_e, 0.6)
    G = constraint_jacobian(m_e, q, cs_e)
    qd = np.linalg.svd(G)[2][-1] * 1.5
    a, b, c = q[2:]
    ad, bd, cd = qd[2:]
    R = rot_z(a) @ rot_y(b) @ rot_x(c)
    w_body = (rot_y(b) @ rot_x(c)).T @ [0, 0, ad] + rot_x(c).T @ [0, bd, 0] + np.array([cd, 0, 0])
    qs = np.r_[q[:2], matrix_to_quat(R)]
    vs = np.r_[qd[:2], w_body]
    assert np.allclose(constraint_position_error(m_s, qs, cs_s), 0, atol=1e-12)
    assert np.allclose(constraint_velocity_error(m_s, qs, vs, cs_s), 0, atol=1e-12)
    tau_e = np.r_[TAU_H[:2], 0, 0, 0]
    r_e = forward_dynamics_constraints(m_e, q, qd, tau_e, cs_e)
    a_e = point_acceleration_6d(m_e, q, qd, r_e.qdd, "rod", (3, 0, 0))
    for method in METHODS:
        r_s = forward_dynamics_constraints(m_s, qs, vs, np.r_[TAU_H[:2], 0, 0, 0], cs_s, method=method)
        assert np.allclose(r_s.qdd[:2], r_e.qdd[:2], atol=1e-9), method
        assert np.allclose(point_acceleration_6d(m_s, qs, vs, r_s.qdd, "rod", (3, 0, 0)), a_e, atol=1e-9), method
        assert np.allclose(r_s.multipliers, r_e.multipliers, atol=1e-9), method
