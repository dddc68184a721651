"""The steppers behind sinews.sim.simulate: bilateral constraints, joint limits, damping, effort
limits, reproducibility, the result and its files, argument checks."""

import json
import math

import numpy as np
import pytest

import sinews
from sinews.constraints import ConstraintSet
from sinews.geometry import Box, Sphere
from sinews.sim import Scene, SimulationResult, simulate
from sinews.sim import examples as ex
from sinews.sim.contact_problem import build_contact_problem, tangent_basis
from sinews.spatial import Transform

STEPPERS = ["default", "lcp", "impulse"]


def _pendulum(limit=None, damping=None, friction=None, effort=None):
    m = sinews.Model(name="pendulum")
    m.add_body("world", sinews.joints.RevoluteY(), inertia=sinews.SpatialInertia.point_mass(1.0, [0, 0, -1.0]),
               name="link")
    kw = {}
    if limit is not None:
        kw.update(lower=limit[0], upper=limit[1])
    if damping is not None:
        kw["damping"] = damping
    if friction is not None:
        kw["friction"] = friction
    if effort is not None:
        kw["effort_limit"] = effort
    if kw:
        m.set_joint_properties("link", **kw)
    return Scene(m)


def _pinned_bob():
    """A point mass on a free joint held 1 m below the world origin by a loop constraint on
    the three translations: a spherical pendulum, here swinging in the x-z plane."""
    m = sinews.Model(name="pinned")
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=sinews.SpatialInertia(1.0, np.zeros(3), np.eye(3) * 1e-3),
               name="bob")
    cs = ConstraintSet()
    for ax in np.eye(6)[3:]:
        cs.add_loop_constraint("world", "bob", Transform.identity(), Transform.translation([0, 0, 1.0]), ax,
                               name="pin")
    return Scene(m, cs)


@pytest.mark.parametrize("stepper", STEPPERS)
def test_bilateral_loop_constraint_honoured(stepper):
    theta0 = 0.5
    scene = _pinned_bob()
    R = Transform.rot_y(theta0).R
    q0 = ex.free_q(-R @ [0, 0, 1.0], R)
    res = simulate(scene, q0, np.zeros(6), 0.5, 1e-3, stepper=stepper, progress=False, record_every=50)
    assert res.constraint_error.max() < 1e-3
    # the same pendulum as a revolute joint, with the same stepper
    ref = _pendulum()
    r2 = simulate(ref, [theta0], [0.0], 0.5, 1e-3, stepper=stepper, progress=False, record_every=50)
    # both bobs sit at (-sin theta, 0, -cos theta)
    ang = np.arctan2(-res.q[:, 0], -res.q[:, 2])
    assert np.ptp(r2.q[:, 0]) > 0.4  # it swings
    assert ang == pytest.approx(r2.q[:, 0], abs=5e-3)


@pytest.mark.parametrize("stepper", STEPPERS)
def test_joint_limit_stops_the_pendulum(stepper):
    scene = _pendulum(limit=(-0.3, 0.3))
    res = simulate(scene, [0.2], [0.0], 1.0, 1e-3, stepper=stepper, progress=False, record_every=20)
    # gravity swings it towards 0 and beyond to -0.2; with 2 rad/s it would hit -0.3
    res2 = simulate(scene, [0.0], [3.0], 1.0, 1e-3, stepper=stepper, progress=False, record_every=20)
    assert res2.q[:, 0].max() <= 0.3 + 2e-3
    assert res2.q[:, 0].min() >= -0.3 - 2e-3
    assert np.abs(res.q[:, 0]).max() <= 0.2 + 1e-6


def test_damping_friction_and_effort_limit():
    free = _pendulum()
    damped = _pendulum(damping=2.0)
    r0 = simulate(free, [1.0], [0.0], 1.0, 1e-3, progress=False)
    r1 = simulate(damped, [1.0], [0.0], 1.0, 1e-3, progress=False)
    assert r1.energy[-1] < r0.energy[-1] - 1.0
    assert np.all(np.diff(r1.energy) <= 1e-9)  # damping only removes energy
    # dry friction above the static load holds the pendulum where it is
    held = _pendulum(friction=10.0)
    r2 = simulate(held, [1.0], [0.0], 0.2, 1e-3, progress=False)
    assert r2.q[-1, 0] == pytest.approx(1.0, abs=1e-12)
    # the controller's torque is clipped to the effort limit: 5 N m cannot hold 9.81 sin(1) N m
    weak = _pendulum(effort=5.0)
    r3 = simulate(weak, [1.0], [0.0], 0.2, 1e-3, controller=lambda t, q, v: np.array([100.0]),
                  progress=False)
    r4 = simulate(free, [1.0], [0.0], 0.2, 1e-3, controller=lambda t, q, v: np.array([5.0]),
                  progress=False)
    assert np.array_equal(r3.q, r4.q)


@pytest.mark.parametrize("stepper", STEPPERS)
def test_reproducible_bit_for_bit(stepper):
    runs = []
    for _ in range(2):
        scene, q0, v0 = ex.box_stack(n=3)
        v0[3] = 0.3  # the bottom box slides: friction, changing contacts
        runs.append(simulate(scene, q0, v0, 0.1, 1e-2, stepper=stepper, progress=False))
    a, b = runs
    for name in ("q", "v", "energy", "contact_impulses", "contact_points", "iterations"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_contact_jacobian_matches_finite_differences():
    scene, q0, v0 = ex.box_stack(n=2)
    rng = np.random.default_rng(1)
    q = q0.copy()
    q[:3] += [0.01, -0.02, -0.001]
    v = rng.normal(size=12)
    prob = build_contact_problem(scene, q, v, np.zeros(12), 1e-3)
    c = prob.contacts
    assert len(c) >= 5 and set(c.geom_b.tolist()) == {1, 2}
    # relative velocity of the material points at each contact, by finite differences of the
    # points fixed on each body
    model = scene.model
    eps = 1e-7
    qp = sinews.integrate(model, q, v, eps)
    qm = sinews.integrate(model, q, v, -eps)
    pl, plp, plm = (sinews.forward_kinematics(model, x) for x in (q, qp, qm))
    body = scene._tables()[1]
    for i in range(len(c)):
        vel = []
        for g in (c.geom_a[i], c.geom_b[i]):
            b = body[g]
            local = pl.R[b].T @ (c.points[i] - pl.p[b])
            vel.append((plp.R[b] @ local + plp.p[b] - plm.R[b] @ local - plm.p[b]) / (2 * eps))
        rel = vel[1] - vel[0]
        frame = np.stack([c.normals[i], prob.t1[i], prob.t2[i]])
        assert prob.J[3 * i:3 * i + 3] @ v == pytest.approx(frame @ rel, abs=1e-6)
    t1, t2 = tangent_basis(c.normals)
    assert np.allclose(np.cross(c.normals, t1), t2)
    # the Delassus operator is J M^-1 J^T
    M = sinews.crba(model, q)
    assert prob.delassus() == pytest.approx(prob.J @ np.linalg.solve(M, prob.J.T), abs=1e-10)


def test_result_and_save(tmp_path):
    scene, q0, v0 = ex.bouncing_ball()
    res = simulate(scene, q0, v0, 0.6, 2e-3, progress=True, record_every=5)
    assert isinstance(res, SimulationResult)
    assert res.t[0] == 0 and res.t[-1] == pytest.approx(0.6)
    assert len(res.t) == res.q.shape[0] == res.energy.shape[0]
    s = res.summary()
    assert s["steps"] == 300 and s["stepper"] == "default"
    files = res.save(tmp_path, name="ball")
    names = sorted(p.name for p in files)
    assert "ball_trajectory.npz" in names and "ball_summary.json" in names
    data = np.load(tmp_path / "ball_trajectory.npz")
    assert np.array_equal(data["q"], res.q)
    units = json.loads(str(data["units"]))
    assert units["contact_forces"] == "N" and units["t"] == "s"
    summary = json.loads((tmp_path / "ball_summary.json").read_text())
    assert summary["units"]["dt_s"] == "s"
    pngs = [n for n in names if n.endswith(".png")]
    assert len(pngs) == 3
    for labels in summary["plots"].values():
        for ax in labels:
            assert ax["x"].endswith("]") and ax["y"].endswith("]")


def test_bad_arguments():
    scene, q0, v0 = ex.bouncing_ball()
    with pytest.raises(ValueError, match="stepper"):
        simulate(scene, q0, v0, 0.1, 1e-3, stepper="rk4", progress=False)
    with pytest.raises(ValueError, match="dt"):
        simulate(scene, q0, v0, 0.1, 0.0, progress=False)
    with pytest.raises(ValueError, match="duration"):
        simulate(scene, q0, v0, -1.0, 1e-3, progress=False)
    with pytest.raises(ValueError, match="q0"):
        simulate(scene, q0[:3], v0, 0.1, 1e-3, progress=False)
    with pytest.raises(ValueError, match="scene"):
        simulate(scene.model, q0, v0, 0.1, 1e-3, progress=False)
    with pytest.raises(ValueError, match="controller"):
        simulate(scene, q0, v0, 0.01, 1e-3, controller=lambda t, q, v: np.zeros(2), progress=False)
    with pytest.raises(ValueError, match="restitution"):
        simulate(scene, q0, v0, 0.01, 1e-3, stepper="impulse", stepper_options=dict(restitution="x"),
                 progress=False)
    with pytest.raises(ValueError, match="erp"):
        scene.erp = 0.0
    with pytest.raises(ValueError, match="constraints"):
        scene.constraints = "loops"


@pytest.mark.parametrize("stepper", STEPPERS)
def test_coordinate_constraint_honoured(stepper):
    """Two pendulums geared q1 = -q0 / 2 move as one system: their constraint holds."""
    m = sinews.Model(name="geared")
    for name in ("a", "b"):
        m.add_body("world", sinews.joints.RevoluteY(), inertia=sinews.SpatialInertia.point_mass(1.0, [0, 0, -1.0]),
                   name=name)
    cs = ConstraintSet()
    cs.add_coordinate_constraint("b", "a", ratio=-0.5)
    scene = Scene(m, cs)
    res = simulate(scene, [0.6, -0.3], [0.0, 0.0], 0.5, 1e-3, stepper=stepper, progress=False,
                   record_every=25)
    assert np.abs(res.q[:, 1] + 0.5 * res.q[:, 0]).max() < 1e-6
    assert np.ptp(res.q[:, 0]) > 0.3


@pytest.mark.parametrize("stepper", STEPPERS)
def test_armature_enters_the_step(stepper):
    m = sinews.Model(name="armature")
    m.add_body("world", sinews.joints.RevoluteY(), inertia=sinews.SpatialInertia.point_mass(1.0, [0, 0, -1.0]),
               name="link")
    m.set_joint_properties("link", armature=0.5)
    res = simulate(Scene(m), [0.3], [0.0], 1e-3, 1e-3, stepper=stepper, progress=False)
    # qdd = -m g l sin(q) / (m l^2 + armature)
    assert res.v[-1, 0] == pytest.approx(-1e-3 * 9.81 * math.sin(0.3) / 1.5, rel=1e-9)


@pytest.mark.parametrize("stepper, options", [
    ("default", dict(solver="pgs")),
    ("lcp", dict(directions=4)), ("impulse", dict(solver="pgs", restitution="newton")),
    ("impulse", dict(projection="none", impacts="sequential")),
])
def test_stepper_options_brick(stepper, options):
    scene, q0, v0 = ex.sliding_brick(speed=1.0, friction=0.5)
    res = simulate(scene, q0, v0, 0.3, 1e-3, stepper=stepper, progress=False, record_every=30,
                   stepper_options=options)
    assert res.q[-1, 0] == pytest.approx(1.0 / (2 * 0.5 * 9.81), rel=1e-2)
    assert res.converged.all()


def test_default_stepper_solvers_agree():
    """PGS and ADMM (the FCLib solvers behind "default") give the same steps."""
    out = []
    for solver in ("pgs", "admm"):
        scene, q0, v0 = ex.sliding_brick(speed=1.0, friction=0.5)
        out.append(simulate(scene, q0, v0, 0.01, 1e-3, progress=False,
                            stepper_options=dict(solver=solver, tol=1e-9)))
    assert out[0].v == pytest.approx(out[1].v, abs=1e-6)
    assert out[1].converged.all()
