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


def _plain_pgs(monkeypatch):
    """The compiled path without its direct step of the sticking set (plain PGS sweeps, as the
    general path's fclib.solve): the step-by-step comparisons below compare the same algorithm
    (a stack's impulses are not unique; the direct step is checked in tests/test_sim_stack.py)."""
    monkeypatch.setattr(F.FastCoulomb, "direct", False)


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
    _plain_pgs(monkeypatch)
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
    _plain_pgs(monkeypatch)
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
    # a capsule touching a box: no capsule-box routine in the kernel -> general path, same result
    m = sinews.Model()
    I = SpatialInertia(1.0, np.zeros(3), np.eye(3) * 0.01)
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="c1")
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="c2")
    s = Scene(m)
    s.add_ground()
    s.add_geometry("c1", Capsule(0.05, 0.3))
    s.add_geometry("c2", Box([0.1, 0.1, 0.1]))
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
    assert np.any((out.contacts.geom_a == 1) & (out.contacts.geom_b == 2))  # the capsule-box pair


def test_capsule_pairs_are_compiled_and_agree_with_the_general_path(monkeypatch):
    """Capsule-capsule and sphere-capsule (both orders) are kernel pairs: the step stays on the
    compiled path and agrees with the general path's (narrow_phase) contacts and step."""
    _plain_pgs(monkeypatch)
    m = sinews.Model()
    I = SpatialInertia(1.0, np.zeros(3), np.eye(3) * 0.01)
    for name in ("ball", "c1", "c2", "ball2"):
        m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name=name)
    s = Scene(m)
    s.add_ground()
    s.add_geometry("ball", Sphere(0.05))
    s.add_geometry("c1", Capsule(0.05, 0.3))
    s.add_geometry("c2", Capsule(0.05, 0.3))
    s.add_geometry("ball2", Sphere(0.04))
    tilt = Transform.rot_axis(np.array([0.0, 1.0, 0.0]), 0.1).R
    p2 = np.array([0.0, 0.098, 0.3])
    top = p2 + tilt[:, 2] * (0.15 + 0.05 + 0.04 - 0.001)  # ball2 resting on c2's upper end
    q0 = np.concatenate([ex.free_q([0.0, -0.099, 0.3]), ex.free_q([0, 0, 0.3]), ex.free_q(p2, tilt),
                         ex.free_q(top)])
    v0 = np.zeros(m.nv)
    v0[3:6] = [0.0, 0.3, -0.2]
    calls = []
    orig = CoulombStepper._general_step

    def spy(self, *args):
        calls.append(1)
        return orig(self, *args)

    fast, general = CoulombStepper(), CoulombStepper()
    with monkeypatch.context() as mp:
        mp.setattr(CoulombStepper, "_general_step", spy)
        a = fast.step(s, q0, v0, np.zeros(m.nv), 1e-3)
    assert fast._fast[3] is not None and not calls  # compiled
    pairs = {tuple(sorted(p)) for p in zip(a.contacts.geom_a.tolist(), a.contacts.geom_b.tolist())}
    assert {(1, 2), (2, 3), (3, 4)} <= pairs, pairs  # sphere-capsule, capsule-capsule, capsule-sphere
    with monkeypatch.context() as mp:
        _general(mp)
        b = general.step(s, q0, v0, np.zeros(m.nv), 1e-3)
        assert general._fast[3] is None
    assert np.array_equal(a.contacts.geom_a, b.contacts.geom_a)
    assert np.array_equal(a.contacts.geom_b, b.contacts.geom_b)
    np.testing.assert_allclose(a.contacts.points, b.contacts.points, atol=1e-12)
    np.testing.assert_allclose(a.contacts.normals, b.contacts.normals, atol=1e-12)
    np.testing.assert_allclose(a.contacts.distances, b.contacts.distances, atol=1e-12)
    np.testing.assert_allclose(a.impulses, b.impulses, atol=1e-6 * (1 + np.abs(b.impulses).max(initial=0)))
    np.testing.assert_allclose(a.v, b.v, atol=1e-6)
    np.testing.assert_allclose(a.q, b.q, atol=1e-9)


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


def _legged_scene():
    """A free box base with four two-link legs (hip and knee about y, a sphere foot each)
    standing on the ground, a pendulum with a limit beside it: branched trees, so the
    branch-sparse factor and W = Y Y^T see ancestors shared by some rows and not others."""
    from sinews.geometry import Box as B

    m = sinews.Model(name="legged")
    base_I = SpatialInertia(4.0, np.zeros(3), np.diag([0.02, 0.05, 0.06]))
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=base_I, name="base")
    link_I = SpatialInertia(0.3, np.array([0.0, 0.0, -0.1]), np.eye(3) * 1e-3)
    for i, (x, y) in enumerate([(0.2, 0.1), (0.2, -0.1), (-0.2, 0.1), (-0.2, -0.1)]):
        m.add_body("base", sinews.joints.RevoluteY(), inertia=link_I, X_parent_joint=Transform.translation([x, y, 0.0]),
                   name=f"thigh{i}")
        m.add_body(f"thigh{i}", sinews.joints.RevoluteY(), inertia=link_I,
                   X_parent_joint=Transform.translation([0.0, 0.0, -0.2]), name=f"shank{i}")
    m.add_body("world", sinews.joints.RevoluteX(), inertia=SpatialInertia.point_mass(1.0, [0, 0, -0.5]),
               X_parent_joint=Transform.translation([3.0, 0, 2.0]), name="pend")
    m.set_joint_properties("pend", lower=-0.1, upper=0.1)
    s = Scene(m)
    s.add_ground(friction=0.8)
    s.add_geometry("base", B([0.5, 0.3, 0.1]))
    for i in range(4):
        s.add_geometry(f"shank{i}", Sphere(0.02), Transform.translation([0.0, 0.0, -0.2]))
    q0 = np.zeros(m.nq)
    # thigh and shank 0.2 m each at -+0.3 rad from the vertical: feet 0.4 cos(0.3) below the hips,
    # 0.5 mm above the ground
    q0[:7] = ex.free_q([0.0, 0.0, 0.4 * np.cos(0.3) + 0.02 + 5e-4])
    q0[7:15] = [0.3, -0.6, -0.3, 0.6, 0.3, -0.6, -0.3, 0.6]
    v0 = np.zeros(m.nv)
    v0[-1] = 0.8  # the pendulum runs into its upper limit
    return s, q0, v0


def _problem(scene, q, v, tau, h):
    """The general path's FCLib problem (W, q, mu) for the state."""
    from sinews.sim.contact_problem import build_contact_problem

    prob = build_contact_problem(scene, q, v, tau, h)
    k, nl = prob.num_contacts, prob.L.shape[0]
    if not k + nl:
        return None, 0, 0
    return prob.fclib_problem(np.zeros(k + nl), -scene.erp * prob.phi_G / h)[0], k, nl


@pytest.mark.parametrize("builder", ["legged", "mixed", "box_stack"])
def test_delassus_of_the_compiled_path_is_the_general_one(builder):
    # W = Y Y^T through the branch-sparse factor against J C J^T of build_contact_problem
    scene, q0, v0 = {"legged": _legged_scene, "mixed": _mixed_scene, "box_stack": lambda: ex.box_stack(n=3)}[builder]()
    res = simulate(scene, q0, v0, 0.03, 1e-3, progress=False, record_every=10)
    st = CoulombStepper()
    checked = 0
    for i in range(res.q.shape[0]):
        q, v, tau = res.q[i], res.v[i], np.zeros(scene.model.nv)
        out = st.step(scene, q, v, tau, 1e-3)
        if not isinstance(out, F.FastStepOutput):
            continue
        problem, k, nl = _problem(scene, q, v, tau, 1e-3)
        m = 3 * (k + nl)
        if not m:
            continue
        fast = st._fast[3]
        W = fast.W[: m * m].reshape(m, m)
        assert np.array_equal(W, W.T)
        np.testing.assert_allclose(W, problem.W, rtol=1e-11, atol=1e-11 * np.abs(problem.W).max())
        checked += 1
    assert checked >= 2


def test_legged_scene_agrees_with_the_general_path(monkeypatch):
    _plain_pgs(monkeypatch)
    scene, q0, v0 = _legged_scene()
    a = simulate(scene, q0, v0, 0.05, 1e-3, progress=False)
    assert a.num_contacts.max() >= 4 and a.converged.all()
    _general(monkeypatch)
    scene2, q0, v0 = _legged_scene()
    b = simulate(scene2, q0, v0, 0.05, 1e-3, progress=False)
    np.testing.assert_allclose(a.q, b.q, atol=1e-6)
    assert np.array_equal(a.num_contacts, b.num_contacts)
    assert np.array_equal(a.contact_geoms, b.contact_geoms)
    np.testing.assert_allclose(a.contact_points, b.contact_points, atol=1e-6)
    scale = 1 + np.abs(b.contact_impulses).max()
    np.testing.assert_allclose(a.contact_impulses, b.contact_impulses, atol=1e-5 * scale)
    assert a.q[:, 2].min() > 0.2  # it stands


def test_step_output_is_decoded_lazily_and_runs_are_bit_reproducible():
    import sinews.sim._step_kernels as SK
    from sinews.sim.steppers import StepOutput

    assert (F._REC_HDR, F._REC_W, F._OK, F._GENERAL) == (SK.REC_HDR, SK.REC_W, SK.OK, SK.GENERAL)
    scene, q0, v0 = _mixed_scene()
    st = CoulombStepper()
    out = st.step(scene, q0, v0, np.zeros(scene.model.nv), 1e-3)
    assert isinstance(out, F.FastStepOutput) and isinstance(out, StepOutput)
    k, C, it, err = out.record()
    assert k == len(out.contacts) > 0 and C.shape == (k, SK.REC_W)
    assert out.stats["iterations"] == it and out.stats["converged"] and out.stats["error"] == err
    np.testing.assert_array_equal(out.frames[:, 0], out.contacts.normals)
    np.testing.assert_allclose(np.einsum("kij,klj->kil", out.frames, out.frames), np.broadcast_to(np.eye(3), (k, 3, 3)),
                               atol=1e-12)
    # the next step does not touch this step's result
    q1, imp1 = out.q.copy(), out.impulses.copy()
    st.step(scene, out.q, out.v, np.zeros(scene.model.nv), 1e-3)
    assert np.array_equal(out.q, q1) and np.array_equal(out.impulses, imp1)
    out.stats = {"x": 1}  # fields stay assignable
    assert out.stats == {"x": 1}
    a = simulate(scene, q0, v0, 0.05, 1e-3, progress=False)
    b = simulate(scene, q0, v0, 0.05, 1e-3, progress=False)
    for name in ("q", "v", "energy", "contact_points", "contact_impulses", "iterations", "solver_error"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_recorded_contacts_of_a_run_mixing_both_paths(monkeypatch):
    # every third step on the general path: the run's contact arrays (compiled records and
    # general outputs interleaved) are those of a run entirely on the general path
    _plain_pgs(monkeypatch)
    scene, q0, v0 = ex.box_stack(n=2)
    v0[3] = 0.2
    calls = {"n": 0}
    orig = F.FastCoulomb.step

    def some_general(self, *args):
        calls["n"] += 1
        return None if calls["n"] % 3 == 0 else orig(self, *args)

    with monkeypatch.context() as mp:
        mp.setattr(F.FastCoulomb, "step", some_general)
        zero = np.zeros(scene.model.nv)  # a controller: one step() per step
        a = simulate(scene, q0, v0, 0.03, 1e-3, progress=False, record_every=2, controller=lambda t, q, v: zero)
    _general(monkeypatch)
    scene2, q0, v0b = ex.box_stack(n=2)
    v0b[3] = 0.2
    b = simulate(scene2, q0, v0b, 0.03, 1e-3, progress=False, record_every=2)
    assert calls["n"] == 30 and a.num_contacts.sum() > 20
    assert np.array_equal(a.contact_sample, b.contact_sample)
    # the same contacts per sample, matched one to one by geometry pair and position: the two
    # runs differ by rounding (the stack's reactions are not unique, and the paths sum them in
    # different orders), and a box whose tilt crosses zero may list its four corners in another
    # order on the other run
    for i in range(len(a.t)):
        ia, ib = np.flatnonzero(a.contact_sample == i), np.flatnonzero(b.contact_sample == i)
        used = set()
        for k in ia:
            same = [j for j in ib if j not in used and np.array_equal(a.contact_geoms[k], b.contact_geoms[j])]
            dist = [np.abs(a.contact_points[k] - b.contact_points[j]).max() for j in same]
            assert dist and min(dist) <= 1e-6, (i, k)
            j = same[int(np.argmin(dist))]
            used.add(j)
            np.testing.assert_allclose(a.contact_normals[k], b.contact_normals[j], atol=1e-6)
    # (four coplanar contacts share their load in more than one way, and the friction between
    # the two boxes is not unique either: the ground's total force on the stack is, as it sets
    # the stack's momentum)
    ground = scene.geometries.index(next(g for g in scene.geometries if g.name == "ground"))

    def ground_force(r):
        out = np.zeros((len(r.t), 3))
        on = (r.contact_geoms == ground).any(axis=1)
        np.add.at(out, r.contact_sample[on], r.contact_forces[on])
        return out

    fa, fb = ground_force(a), ground_force(b)
    weight = 9.81 * scene.model.total_mass()  # the two boxes
    np.testing.assert_allclose(fa[:, 2], fb[:, 2], rtol=1e-4, atol=1e-3)
    # the tangential total is sensitive where the sliding box comes to a stop (t = 0.03 s: its
    # direction of friction follows a velocity of ~1e-9 m/s there): within 0.1 % of the weight
    np.testing.assert_allclose(fa[:, :2], fb[:, :2], atol=1e-3 * weight)
    for i in range(len(a.t)):  # the deepest penetration of each sample, from its contacts
        d = a.contact_distances[a.contact_sample == i]
        assert a.penetration[i] == (max(0.0, -float(d.min())) if d.size else 0.0)


def _capsules():
    """A capsule touching a box above the ground: a pair without a compiled routine (hand-backs)."""
    m = sinews.Model()
    I = SpatialInertia(1.0, np.zeros(3), np.eye(3) * 0.01)
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="c1")
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="c2")
    s = Scene(m)
    s.add_ground()
    s.add_geometry("c1", Capsule(0.05, 0.3))
    s.add_geometry("c2", Box([0.1, 0.1, 0.1]))
    return s, np.concatenate([ex.free_q([0, 0, 0.051]), ex.free_q([0.0, 0.099, 0.051])]), np.zeros(12)


@pytest.mark.parametrize("builder", ["mixed", "box_stack", "legged", "capsules"])
def test_runs_without_controller_take_chunks_bit_for_bit_like_single_steps(monkeypatch, builder):
    # simulate without a controller steps in kernel chunks (CoulombStepper._advance); with a
    # zero controller it calls step() each step: the same run to the last bit, hand-backs included
    import sys

    S = sys.modules["sinews.sim.simulate"]  # the module (the package's attribute is the function)
    make = {"legged": _legged_scene, "mixed": _mixed_scene, "box_stack": lambda: ex.box_stack(n=3),
            "capsules": _capsules}[builder]
    scene, q0, v0 = make()
    zero = np.zeros(scene.model.nv)
    monkeypatch.setattr(S, "_CHUNK", 7)  # several chunks, a hand-back inside some
    calls = {"advance": 0, "finish": 0}
    adv, fin = CoulombStepper._advance, CoulombStepper._finish_step

    def spy_adv(self, *a):
        calls["advance"] += 1
        return adv(self, *a)

    def spy_fin(self, *a):
        calls["finish"] += 1
        return fin(self, *a)

    monkeypatch.setattr(CoulombStepper, "_advance", spy_adv)
    monkeypatch.setattr(CoulombStepper, "_finish_step", spy_fin)
    runs = []
    for ctrl, every in ((None, 1), (lambda t, q, v: zero, 1), (None, 3), (lambda t, q, v: zero, 3)):
        s2, q, v = make()
        if builder == "box_stack":
            v[3] = 0.3
        opts = {"max_iter": 20} if builder == "box_stack" else None  # PGS short of sweeps: NEEDS_SOLVER
        runs.append(simulate(s2, q, v, 0.06, 1e-3, progress=False, controller=ctrl, record_every=every,
                             stepper_options=opts))
    assert calls["advance"] >= 2 * 60 // 7
    if builder in ("capsules", "box_stack"):
        assert calls["finish"] >= 1  # kernel hand-backs inside chunks (a capsule pair; PGS stagnating)
    for a, b in (runs[:2], runs[2:]):
        for name in ("t", "q", "v", "energy", "constraint_error", "penetration", "num_contacts", "iterations",
                     "converged", "solver_error", "contact_sample", "contact_geoms", "contact_points",
                     "contact_normals", "contact_distances", "contact_impulses", "contact_forces"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert a.steps == b.steps == 60 and a.num_contacts.max() > 0


def test_a_stepper_subclass_with_its_own_step_is_called_every_step():
    calls = []

    class Logged(CoulombStepper):
        def step(self, scene, q, v, tau, h):
            calls.append(1)
            return super().step(scene, q, v, tau, h)

    scene, q0, v0 = ex.bouncing_ball()
    simulate(scene, q0, v0, 0.02, 1e-3, stepper=Logged(), progress=False)
    assert len(calls) == 20
