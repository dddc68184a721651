"""sinews.simulate.simulate: closed-form physics and conservation laws.

(Named ``test_cli_*`` because the integrator was written for the command-line demos.)
"""

import numpy as np
import pytest

import sinews
from sinews import joints as J
from sinews.simulate import Trajectory, simulate
from sinews.spatial import quat_to_matrix, rot_z

G = 9.81


def chain(n=3, length=1.0, mass=1.0, gravity=(0.0, 0.0, -G)):
    """n uniform rods along their local x axes, hinged about y (horizontal) end to end."""
    m = sinews.Model(gravity=gravity)
    parent = 0
    for i in range(n):
        parent = m.add_body(
            parent, J.RevoluteY(), (length if i else 0.0, 0.0, 0.0),
            sinews.SpatialInertia.from_rod(mass, length, axis=0), name=f"link{i + 1}",
        )
    return m


def free_body(inertia_diag=(0.2, 0.3, 0.4), mass=2.0, gravity=(0.0, 0.0, -G)):
    m = sinews.Model(gravity=gravity)
    m.add_body(0, J.FreeFlyer(), None, sinews.SpatialInertia(mass, np.zeros(3), np.diag(inertia_diag)), name="body")
    return m


def period_from_crossings(t, x):
    """Mean period from the upward zero crossings of x(t) (linear interpolation)."""
    idx = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    tc = t[idx] - x[idx] * (t[idx + 1] - t[idx]) / (x[idx + 1] - x[idx])
    assert len(tc) >= 3
    return np.mean(np.diff(tc))


def test_cli_simulate_passive_triple_pendulum_conserves_energy():
    m = chain(3)
    traj = simulate(m, [1.0, 0.5, -0.5], [0.0, 1.0, -2.0], duration=1.0, dt=1e-3, progress=False)
    assert isinstance(traj, Trajectory)
    assert traj.q.shape == (1001, 3) and traj.v.shape == (1001, 3) and traj.t[-1] == pytest.approx(1.0)
    kinetic = [sinews.kinetic_energy(m, q, v) for q, v in zip(traj.q, traj.v)]
    scale = max(abs(traj.energy[0]), max(kinetic))
    assert max(kinetic) > 2.0  # it really moves
    assert traj.energy_drift / scale < 1e-6
    # the energy column is the mechanical energy of the stored states
    np.testing.assert_allclose(traj.energy[-1], sinews.mechanical_energy(m, traj.q[-1], traj.v[-1]))


def test_cli_simulate_semi_implicit_euler_energy_is_bounded_but_first_order():
    m = chain(1)
    e1 = simulate(m, [0.5], [0.0], 2.0, 2e-3, method="semi_implicit_euler", progress=False).energy_drift
    e2 = simulate(m, [0.5], [0.0], 2.0, 1e-3, method="semi_implicit_euler", progress=False).energy_drift
    assert e1 < 0.05 and 1.6 < e1 / e2 < 2.4


def test_cli_simulate_free_fall_matches_closed_form():
    """A body spinning about a principal axis and thrown: parabola and uniform rotation."""
    m = free_body()
    R0 = quat_to_matrix(np.array([0.1, -0.2, 0.3, 0.9]) / np.linalg.norm([0.1, -0.2, 0.3, 0.9]))
    p0 = np.array([0.5, -1.0, 2.0])
    vw = np.array([1.0, 2.0, 3.0])  # world velocity of the centre of mass (= origin)
    w = 3.0  # spin about the body z axis
    q0 = np.r_[p0, sinews.spatial.matrix_to_quat(R0)]
    v0 = np.r_[0.0, 0.0, w, R0.T @ vw]
    T = 1.0
    traj = simulate(m, q0, v0, T, 1e-2, progress=False)
    g = np.array([0.0, 0.0, -G])
    for t, q, v in zip(traj.t, traj.q, traj.v):
        R = R0 @ rot_z(w * t)
        np.testing.assert_allclose(quat_to_matrix(q[3:]), R, atol=1e-10)  # exact: constant spin
        # the body-axes linear velocity turns with the body, which RK4 follows to O(h^4)
        np.testing.assert_allclose(q[:3], p0 + vw * t + 0.5 * g * t * t, atol=1e-7)
        np.testing.assert_allclose(v, np.r_[0.0, 0.0, w, R.T @ (vw + g * t)], atol=1e-7)
        assert np.linalg.norm(q[3:]) == pytest.approx(1.0, abs=1e-12)


def test_cli_simulate_rk4_is_fourth_order_on_a_tumbling_body():
    """Torque-free asymmetric body (SE(3) free-flyer): rotation error ~ dt^4, and the
    world angular momentum and the energy are conserved."""
    m = free_body((0.2, 0.3, 0.4), gravity=(0.0, 0.0, 0.0))
    q0 = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    v0 = np.r_[2.0, 0.3, 1.5, 0.4, -0.2, 0.1]  # tumbling about the unstable middle axis
    ref = simulate(m, q0, v0, 1.0, 1 / 400, progress=False)

    def error(dt):
        q = simulate(m, q0, v0, 1.0, dt, progress=False).q[-1]
        dR = np.abs(quat_to_matrix(q[3:]) - quat_to_matrix(ref.q[-1, 3:])).max()
        return max(dR, np.abs(q[:3] - ref.q[-1, :3]).max())

    # 16 for a fourth-order method; without the dexp^-1 correction this ratio is 4
    assert error(1 / 25) / error(1 / 50) > 12.0
    I = np.diag([0.2, 0.3, 0.4])
    L = [quat_to_matrix(q[3:]) @ I @ v[:3] for q, v in zip(ref.q, ref.v)]
    np.testing.assert_allclose(L, np.broadcast_to(L[0], (len(L), 3)), atol=1e-9)
    assert ref.energy_drift < 1e-9


@pytest.mark.parametrize(
    "inertia,length_eq",
    [
        (sinews.SpatialInertia.point_mass(1.5, (0.8, 0.0, 0.0)), 0.8),  # simple pendulum
        (sinews.SpatialInertia.from_rod(1.5, 0.8, axis=0), 2 * 0.8 / 3),  # compound: I / (m d)
    ],
)
def test_cli_simulate_small_oscillation_period(inertia, length_eq):
    m = sinews.Model()
    m.add_body(0, J.RevoluteY(), None, inertia, name="bob")
    # hanging straight down is q = +pi/2 (the arm lies along x at q = 0, gravity along -z)
    theta0 = 1e-2
    traj = simulate(m, [np.pi / 2 + theta0], [0.0], 5.0, 2e-3, progress=False)
    period = period_from_crossings(traj.t, traj.q[:, 0] - np.pi / 2)
    expected = 2 * np.pi * np.sqrt(length_eq / G) * (1 + theta0**2 / 16)
    assert period == pytest.approx(expected, rel=1e-5)


def test_cli_simulate_constant_and_callable_torques():
    rotor = sinews.Model(gravity=(0.0, 0.0, 0.0))
    I = 0.5
    rotor.add_body(0, J.RevoluteZ(), None, sinews.SpatialInertia(1.0, np.zeros(3), np.diag([0.3, 0.3, I])))
    traj = simulate(rotor, [0.0], [1.0], 2.0, 0.01, tau=[0.2], progress=False)
    t = traj.t
    np.testing.assert_allclose(traj.q[:, 0], t + 0.5 * 0.2 / I * t * t, atol=1e-12)
    c = 0.7  # viscous damping: v(t) = v0 exp(-c t / I)
    traj = simulate(rotor, [0.0], [2.0], 2.0, 0.005, tau=lambda t, q, v: -c * v, progress=False)
    np.testing.assert_allclose(traj.v[:, 0], 2.0 * np.exp(-c * traj.t / I), rtol=1e-9)


def test_cli_simulate_step_count_and_recording():
    m = chain(1)
    traj = simulate(m, [0.0], [0.0], 0.25, 0.1, progress=False)  # 3 steps of 1/12 s
    assert traj.info["steps"] == 3 and traj.info["dt"] == pytest.approx(0.25 / 3)
    np.testing.assert_allclose(traj.t, [0, 0.25 / 3, 0.5 / 3, 0.25])
    traj = simulate(m, [0.0], [0.0], 1.0, 0.1, record_every=4, progress=False)
    np.testing.assert_allclose(traj.t, [0.0, 0.4, 0.8, 1.0])


def test_cli_simulate_progress_modes(capsys):
    m = chain(1)
    simulate(m, [0.0], [0.0], 0.05, 0.01, progress=True)
    assert "100.0% (5/5 steps" in capsys.readouterr().err
    simulate(m, [0.0], [0.0], 0.05, 0.01)  # short run, default: silent
    simulate(m, [0.0], [0.0], 0.05, 0.01, progress=False)
    assert capsys.readouterr().err == ""
    calls = []
    simulate(m, [0.0], [0.0], 0.05, 0.01, progress=lambda k, n: calls.append((k, n)))
    assert calls == [(k, 5) for k in range(1, 6)]


def test_cli_simulate_trajectory_files(tmp_path):
    traj = simulate(chain(2), [0.1, 0.2], [0.0, 0.0], 0.1, 0.01, progress=False)
    npz = np.load(traj.save_npz(tmp_path / "t.npz"))
    np.testing.assert_array_equal(npz["q"], traj.q)
    table = np.loadtxt(traj.save_csv(tmp_path / "t.csv", ["a", "b"], ["va", "vb"]), delimiter=",", skiprows=1)
    assert (tmp_path / "t.csv").read_text().splitlines()[0] == "t,a,b,va,vb,energy"
    np.testing.assert_allclose(table[:, 1:3], traj.q, rtol=1e-9)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"method": "euler"}, "method"),
        ({"dt": 0.0}, "dt"),
        ({"duration": -1.0}, "duration"),
        ({"q0": [0.0, 0.0]}, "q0"),
        ({"v0": [np.nan]}, "v0"),
        ({"tau": [1.0, 2.0]}, "tau"),
        ({"tau": lambda t, q, v: np.zeros(3)}, r"tau\(t, q, v\)"),
        ({"record_every": 0}, "record_every"),
        ({"progress": "loud"}, "progress"),
    ],
)
def test_cli_simulate_bad_input(kwargs, match):
    args = {"q0": [0.0], "v0": [0.0], "duration": 0.1, "dt": 0.01}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate(chain(1), **args)


def test_cli_simulate_rejects_non_unit_quaternion():
    with pytest.raises(ValueError, match="unit quaternion"):
        simulate(free_body(), np.r_[0, 0, 0, 0, 0, 0, 2.0], np.zeros(6), 0.1, 0.01)
