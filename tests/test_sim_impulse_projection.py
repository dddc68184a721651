"""The "impulse" stepper's position projection: Simbody's Bilateral and Unilateral methods.

Both change the position update only (``q+ = integrate(q, u+ - M^-1 G^T pi_p, h)``); the
velocities of a step are those of ``projection="none"``, bit for bit.  The oracles are
geometric: after one step a penetration of depth d is gone (rigid translation: exactly, to
rounding), and a contact that the correction would push into penetration is not.
"""

import numpy as np
import pytest

import sinews
from sinews import Model
from sinews.constraints import ConstraintSet, constraint_position_error
from sinews.geometry import Sphere
from sinews.joints import FreeFlyer
from sinews.sim import Scene, simulate
from sinews.sim import examples as ex
from sinews.sim.impulse_stepper import ImpulseStepper
from sinews.spatial import SpatialInertia, Transform

H = 1e-3
R = 0.1


def two_ball_stack(gravity, depth):
    """Two balls stacked on the ground, touching each other, the pair sunk ``depth`` into it."""
    m = Model(gravity=(0.0, 0.0, -gravity), name="two_balls")
    scene = Scene(m)
    scene.add_ground(friction=0.5, restitution=0.0)
    for i in range(2):
        m.add_body("world", FreeFlyer(), inertia=SpatialInertia(1.0, np.zeros(3), np.eye(3) * 4e-3),
                   name=f"ball{i}")
        scene.add_geometry(f"ball{i}", Sphere(R), friction=0.5, restitution=0.0)
    q = np.concatenate([ex.free_q([0, 0, R - depth]), ex.free_q([0, 0, 3 * R - depth])])
    return scene, q, np.zeros(12)


def ball(gravity, height):
    """One ball, its lowest point ``height`` above the ground (negative: sunk)."""
    m = Model(gravity=(0.0, 0.0, -gravity), name="ball")
    scene = Scene(m)
    scene.add_ground(friction=0.5, restitution=0.0)
    m.add_body("world", FreeFlyer(), inertia=SpatialInertia(1.0, np.zeros(3), np.eye(3) * 4e-3), name="ball")
    scene.add_geometry("ball", Sphere(R), friction=0.5, restitution=0.0)
    return scene, ex.free_q([0, 0, R + height]), np.zeros(6)


def step(scene, q, v, projection, solver="plus"):
    return ImpulseStepper(projection=projection, solver=solver).step(scene, q, v, None, H)


@pytest.mark.parametrize("gravity", [0.0, 9.81])
def test_penetrating_ball_pushed_out_without_velocity(gravity):
    """A ball sunk 1 cm (ten times the margin) into the ground: both projections lift it out
    in one step, the velocity is that of no projection (zero: nothing moves it)."""
    scene, q0, v0 = ball(gravity, -0.01)
    none = step(scene, q0, v0, "none")
    assert none.q[2] - R == pytest.approx(-0.01, abs=1e-12)  # stays sunk without projection
    for proj in ("bilateral", "unilateral"):
        out = step(scene, q0, v0, proj)
        assert out.q[2] - R == pytest.approx(0.0, abs=1e-12), proj
        assert np.array_equal(out.v, none.v)  # projection never changes velocities
        assert np.abs(out.v).max() < 1e-12
        assert out.stats["converged"]


def test_box_sunk_into_ground_pushed_out():
    scene, q0, v0 = ex.box_stack(n=1)
    q0[2] -= 0.005
    for proj in ("bilateral", "unilateral"):
        out = step(scene, q0, v0, proj)
        gaps = scene.collide(out.q).distances
        assert len(gaps) == 4 and np.abs(gaps).max() < 1e-12, proj
        assert np.abs(out.v).max() < 1e-12


@pytest.mark.parametrize("solver", ["plus", "pgs"])
def test_unilateral_does_not_push_the_ball_above_into_penetration(solver):
    """No gravity: the lower ball is sunk 1 cm, the upper one rests on it (gap 0, no force).
    Bilateral projection corrects only the penetrating contact: the lower ball rises 1 cm into
    the upper one (now 1 cm deep).  Unilateral projection treats every proximal contact as an
    inequality: both balls rise 1 cm, no penetration anywhere."""
    depth = 0.01
    scene, q0, v0 = two_ball_stack(0.0, depth)
    tol = 1e-12 if solver == "plus" else 1e-9  # PGS: to its convergence tolerance
    bil = step(scene, q0, v0, "bilateral", solver)
    uni = step(scene, q0, v0, "unilateral", solver)
    gb = np.sort(scene.collide(bil.q).distances)
    gu = scene.collide(uni.q).distances
    assert gb == pytest.approx([-depth, 0.0], abs=tol)
    assert gu == pytest.approx([0.0, 0.0], abs=tol)
    assert uni.q[[2, 9]] == pytest.approx([R, 3 * R], abs=tol)
    assert uni.stats["converged"]
    assert np.array_equal(uni.v, bil.v) and np.abs(uni.v).max() < 1e-12
    # with gravity both contacts carry weight (active), so the bilateral rows hold both too
    scene, q0, v0 = two_ball_stack(9.81, depth)
    for proj in ("bilateral", "unilateral"):
        out = step(scene, q0, v0, proj, solver)
        assert scene.collide(out.q).distances == pytest.approx([0.0, 0.0], abs=tol), proj


def test_unilateral_leaves_separated_proximal_contacts_alone():
    """A ball 0.5 mm above the ground (proximal: margin 1 mm), moving up, no gravity: nothing
    to correct, so the step equals that of no projection."""
    scene, q0, v0 = ball(0.0, 5e-4)
    v0[5] = 0.1
    a = step(scene, q0, v0, "unilateral")
    b = step(scene, q0, v0, "none")
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)


def test_joint_limit_overshoot_pushed_back():
    """A pendulum 0.05 rad past its upper limit 0.3, at rest: the limit row is linear in q, so
    one projected step puts it exactly on the limit (no projection: it stays past it)."""
    m = sinews.Model(gravity=(0.0, 0.0, 0.0), name="pendulum")
    m.add_body("world", sinews.joints.RevoluteY(), inertia=SpatialInertia.point_mass(1.0, [0, 0, -1.0]),
               name="link")
    m.set_joint_properties("link", lower=-0.3, upper=0.3)
    scene = Scene(m)
    for proj, expect in (("none", 0.35), ("bilateral", 0.3), ("unilateral", 0.3)):
        out = step(scene, np.array([0.35]), np.zeros(1), proj)
        assert out.q[0] == pytest.approx(expect, abs=1e-12), proj
        assert out.v[0] == 0.0


def _pinned_bob():
    """A point mass on a free joint held 1 m below the world origin by three loop rows."""
    m = sinews.Model(name="pinned")
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=SpatialInertia(1.0, np.zeros(3), np.eye(3) * 1e-3),
               name="bob")
    cs = ConstraintSet()
    for ax in np.eye(6)[3:]:
        cs.add_loop_constraint("world", "bob", Transform.identity(), Transform.translation([0, 0, 1.0]), ax,
                               name="pin")
    return Scene(m, cs)


def test_loop_error_still_corrected():
    """The closed chain started 2 cm off its loop.  Each projection step is one Gauss-Newton
    step on the (nonlinear) loop error, so the error e goes to O(e^2) per step: below e0^2
    after one step, below 1e-12 after three.  Both projections solve the same equality rows
    (no contacts) and agree; no projection leaves the error."""
    scene = _pinned_bob()
    R0 = Transform.rot_y(0.5).R
    q0 = ex.free_q(-R0 @ [0, 0, 1.0] + [0.02, 0.0, -0.01], R0)
    v0 = np.zeros(6)
    err0 = np.abs(constraint_position_error(scene.model, q0, scene.constraints)).max()
    assert err0 == pytest.approx(0.02, rel=1e-9)
    errs = {}
    for proj in ("none", "bilateral", "unilateral"):
        q, v, errs[proj], outs = q0, v0, [], []
        for _ in range(3):
            out = step(scene, q, v, proj)
            q, v = out.q, out.v
            outs.append(out)
            errs[proj].append(np.abs(constraint_position_error(scene.model, q, scene.constraints)).max())
        if proj == "bilateral":
            first_bilateral = outs[0]
        if proj == "unilateral":
            assert outs[0].q == pytest.approx(first_bilateral.q, abs=1e-12)
        if proj == "none":
            first_none = outs[0]
        else:
            assert np.array_equal(outs[0].v, first_none.v)  # velocities untouched
    assert min(errs["none"]) > 0.019
    for proj in ("bilateral", "unilateral"):
        assert errs[proj][0] < err0**2 and errs[proj][2] < 1e-12, errs[proj]
    # and over a swing the drift stays small
    res = simulate(scene, q0, v0, 0.3, H, stepper="impulse", progress=False, record_every=30,
                   stepper_options=dict(projection="unilateral"))
    assert res.constraint_error[1:].max() < 1e-5
    assert res.converged.all()


def test_unilateral_through_simulate_keeps_examples_working():
    """The resting stack and the sliding brick behave as with the default projection."""
    scene, q0, v0 = ex.box_stack(n=3)
    res = simulate(scene, q0, v0, 0.5, 1e-2, stepper="impulse", progress=False, record_every=10,
                   stepper_options=dict(projection="unilateral"))
    pos = np.concatenate([res.q[:, 7 * i:7 * i + 3] - q0[7 * i:7 * i + 3] for i in range(3)], axis=1)
    assert np.abs(pos).max() < 1e-3
    scene, q0, v0 = ex.sliding_brick(speed=1.0, friction=0.5)
    res = simulate(scene, q0, v0, 0.3, 1e-3, stepper="impulse", progress=False, record_every=30,
                   stepper_options=dict(projection="unilateral"))
    assert res.q[-1, 0] == pytest.approx(1.0 / (2 * 0.5 * 9.81), rel=1e-2)
    assert res.penetration.max() < 1e-6
