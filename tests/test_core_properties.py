"""Property tests of the core algorithms on random trees (Hypothesis)."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sinews
from sinews.sample_models import pendulum, random_tree

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**31 - 1)
sizes = st.integers(min_value=1, max_value=9)


def _state(seed, n, depth_first=True):
    m = random_tree(n, seed, depth_first=depth_first)
    rng = np.random.default_rng(seed)
    return m, sinews.random_configuration(m, rng, -2, 2), rng.normal(size=m.nv), rng.normal(size=m.nv), rng


@SETTINGS
@given(seeds, sizes, st.booleans())
def test_mass_matrix_is_symmetric_positive_definite(seed, n, depth_first):
    m, q, v, a, rng = _state(seed, n, depth_first)
    M = sinews.crba(m, q)
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0
    # M is also what RNEA produces column by column without gravity and velocity
    m.gravity = np.zeros(3)
    z = np.zeros(m.nv)
    M_rnea = np.array([sinews.rnea(m, q, z, e) for e in np.eye(m.nv)]).T
    np.testing.assert_allclose(M, M_rnea, atol=1e-10 * max(1.0, np.abs(M).max()))


@SETTINGS
@given(seeds, sizes, st.booleans())
def test_aba_inverts_rnea_and_matches_lagrangian(seed, n, depth_first):
    m, q, v, a, rng = _state(seed, n, depth_first)
    F = np.zeros((m.nbodies, 6))
    F[1:] = rng.normal(size=(m.nbodies - 1, 6))
    tau = sinews.rnea(m, q, v, a, F)
    scale = max(1.0, np.abs(a).max())
    np.testing.assert_allclose(sinews.aba(m, q, v, tau, F), a, atol=1e-9 * scale)
    np.testing.assert_allclose(sinews.forward_dynamics_lagrangian(m, q, v, tau, F), a, atol=1e-9 * scale)


@SETTINGS
@given(seeds, sizes)
def test_ltl_factor_respects_branch_sparsity(seed, n):
    m, q, v, a, rng = _state(seed, n)
    M = sinews.crba(m, q)
    f = sinews.ltl_factor(m, M)
    np.testing.assert_allclose(f.L.T @ f.L, M, atol=1e-12 * np.abs(M).max())
    # L[i, j] may be non-zero only when j is i or an ancestor of i
    lam = m.compiled.lam
    allowed = np.zeros_like(M, dtype=bool)
    for i in range(m.nv):
        j = i
        while j >= 0:
            allowed[i, j] = True
            j = lam[j]
    assert np.all(f.L[~allowed] == 0.0)
    b = rng.normal(size=m.nv)
    np.testing.assert_allclose(M @ f.solve(b), b, atol=1e-9 * max(1, np.abs(b).max()))
    np.testing.assert_allclose(f.L @ f.solve_L(b), b, atol=1e-9)
    np.testing.assert_allclose(f.L.T @ f.solve_LT(b), b, atol=1e-9)


@SETTINGS
@given(seeds, sizes)
def test_jacobian_times_v_is_point_velocity(seed, n):
    m, q, v, a, rng = _state(seed, n)
    body = int(rng.integers(1, m.nbodies))
    r = rng.normal(size=3)
    J6 = sinews.point_jacobian_6d(m, q, body, r)
    np.testing.assert_allclose(J6 @ v, sinews.point_velocity_6d(m, q, v, body, r), atol=1e-10)
    np.testing.assert_allclose(sinews.com_jacobian(m, q) @ v, sinews.com_velocity(m, q, v), atol=1e-10)
    Jb = sinews.body_jacobian(m, q, body, "local")
    Jw = sinews.body_jacobian(m, q, body, "world")
    X = sinews.forward_kinematics(m, q).body(body)
    np.testing.assert_allclose(X.motion_matrix() @ Jb, Jw, atol=1e-10)


@SETTINGS
@given(seeds, sizes)
def test_finite_differences_confirm_velocity_and_acceleration(seed, n):
    m, q, v, a, rng = _state(seed, n)
    body = int(rng.integers(1, m.nbodies))
    r = rng.normal(size=3)
    h = 1e-6
    # position derivative along v = point velocity
    p_plus = sinews.point_position(m, sinews.integrate(m, q, v, h), body, r)
    p_minus = sinews.point_position(m, sinews.integrate(m, q, v, -h), body, r)
    np.testing.assert_allclose((p_plus - p_minus) / (2 * h), sinews.point_velocity(m, q, v, body, r), atol=2e-6)
    # velocity derivative along (v, a) = classical acceleration;
    # integrate the state (q, v) along the curve q(t) = q (+) (v t + a t^2 / 2) on the manifold
    def state_velocity(t):
        qt = sinews.integrate(m, q, v * t + 0.5 * a * t * t, 1.0)
        # velocity of that curve: d/dt of integrate(q, w(t)); for small t use a central difference
        dq = sinews.difference(m, sinews.integrate(m, q, v * (t - h) + 0.5 * a * (t - h) ** 2, 1.0),
                               sinews.integrate(m, q, v * (t + h) + 0.5 * a * (t + h) ** 2, 1.0)) / (2 * h)
        return qt, dq
    hh = 1e-4
    q1, v1 = state_velocity(hh)
    q0, v0 = state_velocity(-hh)
    fd = (sinews.point_velocity(m, q1, v1, body, r) - sinews.point_velocity(m, q0, v0, body, r)) / (2 * hh)
    qc, vc = state_velocity(0.0)
    exact = sinews.point_acceleration(m, q, v, a, body, r)
    np.testing.assert_allclose(vc, v, atol=1e-6)
    np.testing.assert_allclose(fd, exact, atol=1e-4 * max(1.0, np.abs(exact).max()))


@SETTINGS
@given(seeds, sizes)
def test_integrate_and_difference_are_inverse(seed, n):
    m, q, v, a, rng = _state(seed, n)
    q1 = sinews.integrate(m, q, v, 0.7)
    np.testing.assert_allclose(sinews.difference(m, q, q1), 0.7 * v, atol=1e-9)
    np.testing.assert_allclose(sinews.normalize(m, q1), q1, atol=1e-12)
    # d/dt integrate(q, v t) at t = 0 is v
    h = 1e-6
    fd = sinews.difference(m, sinews.integrate(m, q, v, -h), sinews.integrate(m, q, v, h)) / (2 * h)
    np.testing.assert_allclose(fd, v, atol=1e-6)


def _rk4_energy_drift(m, q, v, t_end, dt):
    z = np.zeros(m.nv)
    e0 = sinews.mechanical_energy(m, q, v)

    def f(q, v):
        return sinews.aba(m, q, v, z)

    for _ in range(int(round(t_end / dt))):
        k1v, k1a = v, f(q, v)
        q2, v2 = sinews.integrate(m, q, k1v, dt / 2), v + dt / 2 * k1a
        k2v, k2a = v2, f(q2, v2)
        q3, v3 = sinews.integrate(m, q, k2v, dt / 2), v + dt / 2 * k2a
        k3v, k3a = v3, f(q3, v3)
        q4, v4 = sinews.integrate(m, q, k3v, dt), v + dt * k3a
        k4v, k4a = v4, f(q4, v4)
        q = sinews.integrate(m, q, (k1v + 2 * k2v + 2 * k3v + k4v) / 6, dt)
        v = v + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
    return abs(sinews.mechanical_energy(m, q, v) - e0) / max(abs(e0), 1.0)


def test_passive_pendulum_conserves_energy_rk4():
    m = pendulum(3)
    q = np.array([np.pi / 2, 0.0, 0.0])
    assert _rk4_energy_drift(m, q, np.zeros(3), 1.0, 1e-3) < 1e-6


@settings(max_examples=5, deadline=None)
@given(seeds)
def test_passive_random_tree_conserves_energy_rk4(seed):
    # Joints without parametrisation singularities: Euler joints near gimbal lock make the ODE
    # stiff (the drift then still converges as dt^4, see the Euler test below).
    m = random_tree(4, seed, joint_types=["RX", "RY", "Revolute", "Prismatic", "Helical", "Planar"])
    rng = np.random.default_rng(seed)
    q = sinews.random_configuration(m, rng, -1, 1)
    # random inertias can make the dynamics fast: RK4 at dt = 2.5e-4 (its error falls as dt^4;
    # at 1e-3 a drawn tree reached 1.3e-6)
    assert _rk4_energy_drift(m, q, 0.5 * rng.normal(size=m.nv), 1.0, 2.5e-4) < 1e-6


def test_euler_joints_conserve_energy_away_from_gimbal_lock():
    m = random_tree(3, 11, joint_types=["EulerZYX", "EulerXYZ"])
    q = np.full(m.nq, 0.2)
    v = np.full(m.nv, 0.3)
    assert _rk4_energy_drift(m, q, v, 0.5, 1e-3) < 1e-6


def test_fixed_joint_is_merged_but_addressable():
    from sinews import joints as J
    from sinews.spatial import SpatialInertia, Transform

    m = sinews.Model()
    a = m.add_body(0, J.RevoluteY(), None, SpatialInertia(1.0, [0, 0, -0.5], np.eye(3) * 0.01), "a")
    b = m.add_body(a, J.Fixed(), Transform.translation([0, 0, -1.0]), SpatialInertia.point_mass(2.0), "b")
    # same model with the point mass folded into a by hand
    m2 = sinews.Model()
    merged = SpatialInertia(1.0, [0, 0, -0.5], np.eye(3) * 0.01) + SpatialInertia.point_mass(2.0, [0, 0, -1.0])
    m2.add_body(0, J.RevoluteY(), None, merged, "a")
    q = np.array([0.3])
    assert m.nv == 1 and m.body_id("b") == b
    np.testing.assert_allclose(sinews.crba(m, q), sinews.crba(m2, q), atol=1e-14)
    np.testing.assert_allclose(sinews.point_position(m, q, "b"), sinews.point_position(m2, q, "a", [0, 0, -1.0]), atol=1e-14)
