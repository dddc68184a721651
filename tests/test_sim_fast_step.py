"""The compiled path of the ``default`` stepper (sinews.sim._fast_step / _step_kernels) against
the general path (build_contact_problem + sinews.contact.fclib.solve), step by step and over runs,
and its hand-backs to the general path."""

from __future__ import annotations

import numpy as np
import pytest

import sinews
import sinews.sim._fast_step as F
from sinews.geometry import Box, Capsule, Point, Sphere
from sinews.sim import Scene, simulate
from sinews.sim import examples as ex
from sinews.sim.steppers import CoulombStepper
from sinews.spatial import SpatialInertia, Transform


def _general(monkeypatch):
    monkeypatch.setattr(F, "eligible", lambda scene: False)


def _mixed_scene():
    """Ground, a box stack of two, a ball resting on the top box (sphere-box), two touching balls
    (sphere-sphere), a point foot and a capsule on the ground, a pendulum with a limit, damping
    and dry friction (limit rows, passive forces)."""
    m = sinews.Model(name="mixed")
    I = SpatialInertia(1.0, np.zeros(3), np.eye(3) * 0.01)
    for name in ("box1", "box2", "ball", "b1", "b2", "foot", "cap"):
        m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name=name)
    m.add_body("world", sinews.joints.RevoluteY(), inertia=SpatialInertia.point_mass(1.0, [0, 0, -1.0]),
               X_parent_joint=Transform.translation([5.0, 0, 3.0]), name="pend")
    m.set_joint_properties("pend", lower=-0.2, upper=0.2, damping=0.5, friction=0.1)
    s = Scene(m)
    s.add_ground(friction=0.6)
    s.add_geometry("box1", Box([0.2, 0.2, 0.2]))
    s.add_geometry("box2", Box([0.2, 0.2, 0.2]))
    s.add_geometry("ball", Sphere(0.05), restitution=0.5)
    s.add_geometry("b1", Sphere(0.1))
    s.add_geometry("b2", Sphere(0.1))
    s.add_geometry("foot", Point())
    s.add_geometry("cap", Capsule(0.05, 0.3))
    rot = Transform.rot_axis(np.array([0.0, 0.0, 1.0]), 0.3).R
    q0 = np.concatenate([ex.free_q([0, 0, 0.0995]), ex.free_q([0.01, 0, 0.299], rot), ex.free_q([0.02, 0, 0.4498]),
                         ex.free_q([2, 0, 0.1]), ex.free_q([2.199, 0, 0.1]), ex.free_q([3, 0, 0.0005]),
                         ex.free_q([4, 0, 0.05], Transform.rot_axis(np.array([1.0, 0, 0]), np.pi / 2).R),
                         [0.19]])
    v0 = np.zeros(m.nv)
    v0[-1] = 0.5
    v0[15:18] = [0.1, 0.0, -0.5]  # the ball hits the top box: restitution
    return s, q0, v0


def test_mixed_scene_is_compiled_and_agrees_step_by_step(monkeypatch):
    scene, q0, v0 = _mixed_scene()
    assert F.eligible(scene)
    ref = simulate(scene, q0, v0, 0.05, 1e-3, progress=False)
    # every pair kind of the kernel occurs: half-space, box-box, sphere-box, sphere-sphere, limits
    kinds = {tuple(sorted(p)) for p in ref.contact_geoms.tolist()}
    assert {(1, 2), (2, 3), (4, 5), (0, 6), (0, 7)} <= kinds
    fast, general = CoulombStepper(), CoulombStepper()
    for i in range(0, ref.q.shape[0], 5):
        q, v = ref.q[i], ref.v[i]
        tau = np.zeros(scene.model.nv)
        fast.reset()
        general.reset()
        a = fast.step(scene, q, v, tau, 1e-3)
        assert fast._fast[3] is not None
        with monkeypatch.context() as mp:
            _general(mp)
            general._fast = None
            b = general.step(scene, q, v, tau, 1e-3)
            assert general._fast[3] is None
            general._fast = None
        assert np.array_equal(a.contacts.geom_a, b.contacts.geom_a)
        assert np.array_equal(a.contacts.geom_b, b.contacts.geom_b)
        np.testing.assert_allclose(a.contacts.points, b.contacts.points, atol=1e-12)
        np.testing.assert_allclose(a.contacts.normals, b.contacts.normals, atol=1e-12)
        np.testing.assert_allclose(a.contacts.distances, b.contacts.distances, atol=1e-12)
        np.testing.assert_allclose(a.frames, b.frames, atol=1e-12)
        assert a.stats["converged"] == b.stats["converged"]
        np.testing.assert_allclose(a.impulses, b.impulses, atol=1e-6 * (1 + np.abs(b.impulses).max(initial=0)))
        np.testing.assert_allclose(a.v, b.v, atol=1e-6)
        np.testing.assert_allclose(a.q, b.q, atol=1e-9)


@pytest.mark.parametrize("builder", ["box_stack", "mixed"])
def test_compiled_run_matches_general_run(monkeypatch, builder):
    scene, q0, v0 = ex.box_stack(n=3) if builder == "box_stack" else _mixed_scene()
    if builder == "box_stack":
        v0[3] = 0.3  # sliding: friction, changing contacts
    a = simulate(scene, q0, v0, 0.1, 1e-3, progress=False)
    _general(monkeypatch)
    scene2, q0, v0b = ex.box_stack(n=3) if builder == "box_stack" else _mixed_scene()
    if builder == "box_stack":
        v0b[3] = 0.3
    b = simulate(scene2, q0, v0b, 0.1, 1e-3, progress=False)
    np.testing.assert_allclose(a.q, b.q, atol=1e-6)
    np.testing.assert_allclose(a.energy, b.energy, atol=1e-5)
    assert np.array_equal(a.num_contacts, b.num_contacts)
    assert a.converged.all() == b.converged.all()


def test_unsupported_pair_hands_the_step_to_the_general_path(monkeypatch):
    # two capsules touching: no capsule-capsule routine in the kernel -> general path, same result
    m = sinews.Model()
    I = SpatialInertia(1.0, np.zeros(3), np.eye(3) * 0.01)
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="c1")
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="c2")
    s = Scene(m)
    s.add_ground()
    s.add_geometry("c1", Capsule(0.05, 0.3))
    s.add_geometry("c2", Capsule(0.05, 0.3))
    q0 = np.concatenate([ex.free_q([0, 0, 0.2]), ex.free_q([0.0, 0.09, 0.2])])
    st = CoulombStepper()
    calls = []
    orig = CoulombStepper._general_step

    def spy(self, *args):
        calls.append(1)
        return orig(self, *args)

    monkeypatch.setattr(CoulombStepper, "_general_step", spy)
    out = st.step(s, q0, np.zeros(12), np.zeros(12), 1e-3)
    assert st._fast[3] is not None and calls  # eligible scene, but this step went general
    assert np.any((out.contacts.geom_a == 1) & (out.contacts.geom_b == 2))  # the capsule pair


def test_constraints_take_the_general_path():
    from sinews.constraints import ConstraintSet

    scene, q0, v0 = ex.bouncing_ball()
    assert F.eligible(scene)
    cs = ConstraintSet()
    cs.add_loop_constraint("world", "ball", Transform.identity(), Transform.identity(), np.eye(6)[3],
                           name="x")
    scene.constraints = cs
    assert not F.eligible(scene)
    assert not F.eligible(Scene(sinews.Model()))


def test_bad_state_still_raises_the_named_error():
    scene, q0, v0 = ex.bouncing_ball()
    q = q0.copy()
    q[3:7] = [0.0, 0.0, 0.5, 0.5]  # not a unit quaternion: the kernel hands back, integrate names q
    with pytest.raises(ValueError, match="q"):
        CoulombStepper().step(scene, q, v0, np.zeros(6), 1e-3)
    with pytest.raises(ValueError):
        CoulombStepper().step(scene, q0, np.full(6, np.nan), np.zeros(6), 1e-3)


def test_warm_start_survives_switching_paths(monkeypatch):
    scene, q0, v0 = ex.box_stack(n=3)
    res = simulate(scene, q0, v0, 0.02, 1e-3, progress=False)
    q, v = res.q[-1], res.v[-1]
    st = CoulombStepper()
    st.step(scene, q, v, np.zeros(18), 1e-3)  # compiled: warm state in the kernel buffers
    with monkeypatch.context() as mp:
        _general(mp)
        st._fast = (st._fast[0], None, None, st._fast[3])  # force a rebuild -> general path
        b = st.step(scene, q, v, np.zeros(18), 1e-3)
    assert b.stats["iterations"] <= 10  # warm-started from the compiled step's reactions
    st2 = CoulombStepper(warm_start=False)
    c = st2.step(scene, q, v, np.zeros(18), 1e-3)
    assert c.stats["iterations"] > b.stats["iterations"]


def test_recorded_energy_kernel_matches_mechanical_energy():
    from sinews.sim.simulate import _energy_function

    scene, q0, v0 = _mixed_scene()
    m = scene.model
    rng = np.random.default_rng(1)
    for model in (m, ex.box_stack(n=3)[0].model):
        f = _energy_function(model)
        for _ in range(5):
            q = sinews.normalize(model, sinews.neutral(model) + 0.3 * rng.standard_normal(model.nq))
            v = rng.standard_normal(model.nv)
            assert f(q, v) == pytest.approx(sinews.mechanical_energy(model, q, v), rel=1e-13, abs=1e-12)
    # with armature (part of M) and a body welded to the world (not counted)
    a = sinews.Model()
    a.add_body("world", sinews.joints.RevoluteY(), inertia=SpatialInertia.point_mass(2.0, [0, 0, -1.0]), name="l")
    a.add_body("world", sinews.joints.Fixed(), inertia=SpatialInertia.point_mass(5.0, [0, 0, 3.0]), name="w")
    a.set_joint_properties("l", armature=0.7)
    f = _energy_function(a)
    assert f(np.array([0.4]), np.array([1.5])) == pytest.approx(
        sinews.mechanical_energy(a, [0.4], [1.5]), rel=1e-14)
    assert f(np.array([0.4]), np.array([1.5])) != pytest.approx(
        sinews.mechanical_energy(a, [0.4], [1.5]) - 0.5 * 0.7 * 1.5**2, rel=1e-6)  # armature counted
    # bad input: the checked function names it
    with pytest.raises(ValueError):
        f(np.array([np.nan]), np.array([0.0]))
