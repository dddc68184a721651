"""Per-pair contact rules of a Scene (issue 9): exclusions of bodies and geometries, per-pair
friction and restitution, forced pairs; MJCF's ``<contact>`` section through MuJoCo's parser.

Oracles: MuJoCo's own contact set (``mj_forward``: which geom pairs touch, with which friction)
on the same file; the closed-form sliding distance ``v0^2 / (2 mu g)`` of a box launched along
the ground with the pair's ``mu``, on every stepper (the default stepper's compiled path, its
general path, lcp, impulse); the free fall of a body whose contact is excluded.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews.geometry import Box, Sphere
from sinews.sim import Scene
from sinews.sim._fast_step import FastStepOutput
from sinews.sim.steppers import CoulombStepper, LcpStepper
from sinews.sim.impulse_stepper import ImpulseStepper

G = 9.81


def _box_scene(friction=1.0):
    """A 0.2 x 0.2 x 0.1 m box of 1 kg resting on the ground (geometry friction 1.0 both)."""
    m = sinews.Model()
    I = np.diag([1 / 12 * (0.04 + 0.01)] * 2 + [1 / 12 * 0.08])
    m.add_body("world", sinews.joints.FreeFlyer(), name="box",
               inertia=sinews.SpatialInertia(1.0, np.zeros(3), I))
    s = Scene(m)
    s.add_ground(friction=friction)
    s.add_geometry("box", Box((0.2, 0.2, 0.1)), friction=friction, name="box")
    return s


def _slide(scene, stepper, v0=1.0, h=2e-3, T=0.5):
    """Launch the box at ``v0`` along x; returns (distance slid, outputs)."""
    q = np.array([0, 0, 0.05, 0, 0, 0, 1.0])
    v = np.zeros(6)
    v[3] = v0  # body-frame linear velocity (identity orientation: world x)
    tau = np.zeros(6)
    outs = []
    for _ in range(int(round(T / h))):
        out = stepper.step(scene, q, v, tau, h)
        q, v = np.asarray(out.q, dtype=float).copy(), np.asarray(out.v, dtype=float).copy()
        outs.append(out)
    return q[0], outs


STEPPERS = {
    "default-compiled": lambda: CoulombStepper(),
    "default-general": lambda: CoulombStepper(solver="pgs"),
    "lcp": lambda: LcpStepper(),
    "impulse": lambda: ImpulseStepper(),
}


@pytest.mark.parametrize("name", list(STEPPERS))
def test_pair_friction_gives_the_closed_form_sliding_distance(name):
    mu, v0, h = 0.3, 1.0, 2e-3
    scene = _box_scene(friction=1.0)
    scene.set_pair("ground", "box", friction=mu)
    d, outs = _slide(scene, STEPPERS[name](), v0=v0, h=h)
    expected = v0 ** 2 / (2 * mu * G)  # 0.170 m (geometry friction 1.0 would give 0.051 m)
    assert abs(d - expected) < v0 * h, (name, d, expected)  # semi-implicit Euler: v0 h / 2 short
    fr = np.concatenate([o.contacts.friction for o in outs if len(o.contacts)])
    assert fr.size and np.all(fr == mu)
    if name == "default-compiled":
        assert all(isinstance(o, FastStepOutput) for o in outs)  # the compiled kernel took every step
    elif name == "default-general":
        assert not any(isinstance(o, FastStepOutput) for o in outs)


def test_compiled_and_general_default_paths_agree_with_a_pair_rule():
    scene = _box_scene(friction=1.0)
    scene.set_pair("ground", "box", friction=0.25)
    d1, o1 = _slide(scene, CoulombStepper(), T=0.2)
    d2, o2 = _slide(scene, CoulombStepper(solver="pgs"), T=0.2)
    assert isinstance(o1[-1], FastStepOutput)
    assert abs(d1 - d2) < 1e-9


def test_no_rule_leaves_the_tables_and_steps_bit_for_bit():
    a, b = _box_scene(), _box_scene()
    b.set_pair("ground", "box", friction=0.1, restitution=0.5)
    b.exclude_geometries("ground", "box")
    b.clear_pair_rules()
    ta, tb = a._tables(), b._tables()
    for x, y in zip(ta[4:7], tb[4:7]):
        assert np.array_equal(x, y)
    for make in (CoulombStepper, lambda: CoulombStepper(solver="pgs")):
        da, oa = _slide(a, make(), T=0.1)
        db, ob = _slide(b, make(), T=0.1)
        assert np.array_equal(oa[-1].q, ob[-1].q) and np.array_equal(oa[-1].v, ob[-1].v)


def _stack_scene():
    """A ball (r 0.05) resting on a box (0.2 x 0.2 x 0.1) resting on the ground."""
    m = sinews.Model()
    I = np.diag([1 / 12 * 0.05, 1 / 12 * 0.05, 1 / 12 * 0.08])
    m.add_body("world", sinews.joints.FreeFlyer(), name="box", inertia=sinews.SpatialInertia(1.0, np.zeros(3), I))
    m.add_body("world", sinews.joints.FreeFlyer(), name="ball",
               inertia=sinews.SpatialInertia(0.5, np.zeros(3), np.eye(3) * 5e-4))
    s = Scene(m)
    s.add_ground(friction=0.8)
    s.add_geometry("box", Box((0.2, 0.2, 0.1)), name="box")
    s.add_geometry("ball", Sphere(0.05), name="ball")
    q = np.array([0, 0, 0.05, 0, 0, 0, 1.0, 0, 0, 0.15, 0, 0, 0, 1.0])
    return s, q


@pytest.mark.parametrize("name", list(STEPPERS))
@pytest.mark.parametrize("how", ["bodies", "geometries"])
def test_exclusion_removes_the_contact_on_every_path(name, how):
    scene, q = _stack_scene()
    v, tau, h = np.zeros(12), np.zeros(12), 2e-3
    pair = {1, 2}  # the box and ball geometries
    c = scene.collide(q)
    assert any({int(i), int(j)} == pair for i, j in zip(c.geom_a, c.geom_b))  # in contact before
    if how == "bodies":
        scene.exclude_bodies("box", "ball")
    else:
        scene.exclude_geometries("box", "ball")
    stepper = STEPPERS[name]()
    for _ in range(100):
        out = stepper.step(scene, q, v, tau, h)
        c = out.contacts
        assert not any({int(i), int(j)} == pair for i, j in zip(c.geom_a, c.geom_b))
        q, v = np.asarray(out.q, dtype=float).copy(), np.asarray(out.v, dtype=float).copy()
        if name == "default-compiled":
            assert isinstance(out, FastStepOutput)
    # the ball fell into the box (free fall: 0.5 g t^2 = 0.196 m in 0.2 s; the box top is at 0.1)
    assert q[9] < 0.05 + 0.1 - 0.05
    assert abs(q[2] - 0.05) < 1e-3  # the box still rests on the ground


@pytest.mark.parametrize("name", list(STEPPERS))
def test_forced_pair_collides_past_the_collision_bits(name):
    scene, q = _stack_scene()
    m = scene.model
    s = Scene(m)
    s.add_ground(friction=0.8)
    s.add_geometry("box", Box((0.2, 0.2, 0.1)), name="box", group=1, mask=1)
    s.add_geometry("ball", Sphere(0.05), name="ball", group=2, mask=1)  # the box refuses the ball
    assert len(s.collide(q)) == 4  # the box's corners on the ground only
    s.set_pair("ball", "box", friction=0.2, force=True)
    c = s.collide(q)
    k = [n for n in range(len(c)) if {int(c.geom_a[n]), int(c.geom_b[n])} == {1, 2}]
    assert len(k) == 1 and c.friction[k[0]] == 0.2
    v, tau = np.zeros(12), np.zeros(12)
    stepper = STEPPERS[name]()
    for _ in range(50):
        out = stepper.step(s, q, v, tau, 2e-3)
        q, v = np.asarray(out.q, dtype=float).copy(), np.asarray(out.v, dtype=float).copy()
    assert abs(q[9] - 0.15) < 2e-3  # the ball rests on the box


def test_pair_restitution_overrides_the_combined_value():
    m = sinews.Model()
    m.add_body("world", sinews.joints.FreeFlyer(), name="ball",
               inertia=sinews.SpatialInertia(1.0, np.zeros(3), np.eye(3) * 4e-3))
    for stepper in (CoulombStepper(), CoulombStepper(solver="pgs"), ImpulseStepper(restitution="newton")):
        s = Scene(m)
        s.add_ground(restitution=0.0)
        s.add_geometry("ball", Sphere(0.1), restitution=0.0, name="ball")
        s.set_pair("ball", "ground", restitution=0.5)
        q = np.array([0, 0, 0.1005, 0, 0, 0, 1.0])
        v = np.array([0, 0, 0, 0, 0, -2.0])
        out = stepper.step(s, q, v, np.zeros(6), 1e-3)
        assert out.contacts.restitution.tolist() == [0.5]
        assert abs(out.v[5] - 1.0) < 0.05, (type(stepper).__name__, out.v[5])


def test_a_rule_set_during_a_run_is_taken_by_the_compiled_stepper():
    scene = _box_scene(friction=1.0)
    stepper = CoulombStepper()
    q, v, tau = np.array([0, 0, 0.05, 0, 0, 0, 1.0]), np.array([0, 0, 0, 2.0, 0, 0]), np.zeros(6)
    out = stepper.step(scene, q, v, tau, 1e-3)
    assert isinstance(out, FastStepOutput) and set(out.contacts.friction) == {1.0}
    scene.set_pair("box", "ground", friction=0.05)
    out = stepper.step(scene, np.array(out.q), np.array(out.v), tau, 1e-3)
    assert isinstance(out, FastStepOutput) and set(out.contacts.friction) == {0.05}
    dv = 2.0 - 1.0 * G * 1e-3 - out.v[3]  # sliding: mu g h per step (mu 1, then 0.05)
    assert abs(dv - 0.05 * G * 1e-3) < 1e-6
    scene.exclude_bodies("box", 0)
    out = stepper.step(scene, np.array(out.q), np.array(out.v), tau, 1e-3)
    assert isinstance(out, FastStepOutput) and len(out.contacts) == 0


def test_body_exclusion_covers_geometries_added_later():
    scene, q = _stack_scene()
    scene.exclude_bodies("ball", "box")
    scene.add_geometry("ball", Sphere(0.06), name="ball2")
    c = scene.collide(q)
    assert not ({1, 2} & set(c.geom_a.tolist()) & set(c.geom_b.tolist()))
    assert set(c.geom_b.tolist()) <= {1}  # only the box touches (the ground)
    assert scene.pair_rules["excluded_bodies"] == [("box", "ball")]


@given(mu=st.floats(allow_nan=True, allow_infinity=True, width=64),
       e=st.floats(allow_nan=True, allow_infinity=True, width=64))
@settings(max_examples=60, deadline=None)
def test_set_pair_accepts_exactly_the_valid_coefficients(mu, e):
    scene = _box_scene()
    ok_mu, ok_e = math.isfinite(mu) and mu >= 0, math.isfinite(e) and 0 <= e <= 1
    if ok_mu and ok_e:
        scene.set_pair(1, 0, friction=mu, restitution=e)
        t = scene._tables()
        assert t[5][0, 1] == t[5][1, 0] == mu and t[6][0, 1] == t[6][1, 0] == e
    else:
        with pytest.raises(ValueError, match="friction" if not ok_mu else "restitution"):
            scene.set_pair(1, 0, friction=mu, restitution=e)
        assert scene.pair_rules["pairs"] == {}


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, exc, word", [
    (lambda s: s.set_pair("ground", "nope", friction=0.1), KeyError, "geom_b"),
    (lambda s: s.set_pair("nope", "box"), KeyError, "geom_a"),
    (lambda s: s.set_pair(0, 7), KeyError, "geom_b"),
    (lambda s: s.set_pair(-1, 1), KeyError, "geom_a"),
    (lambda s: s.set_pair(0.5, 1), KeyError, "geom_a"),
    (lambda s: s.set_pair("box", "box"), ValueError, "geom_b"),
    (lambda s: s.set_pair("ground", "box", friction=-0.1), ValueError, "friction"),
    (lambda s: s.set_pair("ground", "box", friction=float("nan")), ValueError, "friction"),
    (lambda s: s.set_pair("ground", "box", friction=float("inf")), ValueError, "friction"),
    (lambda s: s.set_pair("ground", "box", friction="0.1"), ValueError, "friction"),
    (lambda s: s.set_pair("ground", "box", friction=True), ValueError, "friction"),
    (lambda s: s.set_pair("ground", "box", restitution=1.5), ValueError, "restitution"),
    (lambda s: s.set_pair("ground", "box", restitution=-0.1), ValueError, "restitution"),
    (lambda s: s.set_pair("ground", "box", restitution=float("nan")), ValueError, "restitution"),
    (lambda s: s.set_pair("ground", "box", force=1), ValueError, "force"),
    (lambda s: s.set_pair("ground", "wall", force=True), ValueError, "force"),
    (lambda s: s.exclude_bodies("box", "nope"), KeyError, "body_b"),
    (lambda s: s.exclude_bodies(99, "box"), KeyError, "body_a"),
    (lambda s: s.exclude_bodies("box", "box"), ValueError, "body_b"),
    (lambda s: s.exclude_geometries("box", None), KeyError, "geom_b"),
    (lambda s: s.exclude_geometries("box", 1), ValueError, "geom_b"),
])
def test_bad_input_names_the_argument(call, exc, word):
    s = _box_scene()
    s.add_geometry(0, Box((1, 1, 1)), (np.eye(3), [3, 0, 0.5]), name="wall")
    before = s.pair_rules
    with pytest.raises(exc, match=word):
        call(s)
    assert s.pair_rules == before


def test_force_on_one_link_is_refused():
    s = _box_scene()
    s.add_geometry("box", Sphere(0.05), name="knob")
    with pytest.raises(ValueError, match="force"):
        s.set_pair("box", "knob", force=True)
    s.set_pair("box", "knob", friction=0.2)  # a rule without force is accepted (never used)
    assert not s._tables()[4][1, 2]


def test_a_geometry_of_another_scene_is_refused():
    a, b = _box_scene(), _box_scene()
    with pytest.raises(KeyError, match="geom_a"):
        a.set_pair(b.geometry("box"), "ground", friction=0.2)
    a.set_pair(a.geometry("box"), "ground", friction=0.2)
    assert a.pair_rules["pairs"] == {("ground", "box"): dict(friction=0.2, restitution=None, force=False)}


# ------------------------------------------------------------------------------ MJCF
mujoco = pytest.importorskip("mujoco")

REVIEWER_XML = """<mujoco><worldbody><geom name="floor" type="plane" size="2 2 .1"/>
<body name="a" pos="0 0 0.1"><freejoint/><geom name="ga" type="sphere" size="0.1"/></body>
<body name="b" pos="0 0 0.25"><freejoint/><geom name="gb" type="sphere" size="0.1"/></body></worldbody>
<contact><exclude body1="a" body2="b"/><pair geom1="ga" geom2="floor" friction="0.1 0.1 0.005 0.0001 0.0001"/></contact></mujoco>"""

# exclusions and pairs together: a pair beats an exclusion, a pair makes a contype-0 geom and a
# parent/child pair collide, a pair's dynamic duplicate is replaced, condim 1 is frictionless
RICH_XML = """<mujoco><worldbody><geom name="floor" type="plane" size="2 2 .1"/>
<body name="a" pos="0 0 0.1"><freejoint/><geom name="ga" type="sphere" size="0.1"/>
<geom name="ga2" type="sphere" size="0.1" pos="0.3 0 0"/>
<body name="c" pos="0.45 0 0"><joint type="hinge" axis="0 1 0"/><geom name="gc" type="sphere" size="0.1" contype="0" conaffinity="0"/></body></body>
<body name="b" pos="0 0 0.25"><freejoint/><geom name="gb" type="sphere" size="0.1"/></body>
<body name="d" pos="1 0 0.1"><freejoint/><geom name="gd" type="box" size="0.1 0.1 0.1" friction="0.6"/></body></worldbody>
<contact><exclude body1="a" body2="b"/><pair geom1="ga" geom2="floor" friction="0.1 0.1 0.005 0.0001 0.0001"/>
<pair geom1="ga" geom2="gb" friction="0.3 0.3"/><pair geom1="gc" geom2="floor" condim="1"/>
<pair geom1="ga2" geom2="gc" friction="0.7 0.7"/><exclude body1="world" body2="d"/></contact></mujoco>"""


def _mujoco_contacts(mj):
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    out = {}
    for c in d.contact[: d.ncon]:
        key = frozenset(mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g) for g in (c.geom1, c.geom2))
        out[key] = 0.0 if c.dim == 1 else float(c.friction[0])
    return out


def _sinews_contacts(scene, q):
    c = scene.collide(q)
    names = [g.name for g in scene.geometries]
    out = {}
    for i, j, mu in zip(c.geom_a, c.geom_b, c.friction):
        out.setdefault(frozenset((names[i], names[j])), set()).add(float(mu))
    assert all(len(v) == 1 for v in out.values())
    return {k: v.pop() for k, v in out.items()}


@pytest.mark.parametrize("xml", [REVIEWER_XML, RICH_XML], ids=["reviewer", "rich"])
def test_mjcf_contact_section_gives_mujocos_contact_set_and_friction(tmp_path, xml):
    from sinews.mujoco_import import MujocoCoordinates
    from sinews.sim.scenes_io import scene_from_mjcf

    path = tmp_path / "scene.xml"
    path.write_text(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # everything here is supported: no warning
        scene = scene_from_mjcf(path)
    mj = scene.mj_model
    q = MujocoCoordinates(scene.model, mj).q_from_qpos(np.asarray(mj.qpos0, dtype=float))
    ours, theirs = _sinews_contacts(scene, q), _mujoco_contacts(mj)
    assert ours.keys() == theirs.keys()
    for k in theirs:
        assert ours[k] == pytest.approx(theirs[k], abs=1e-12), k
    assert ours[frozenset(("floor", "ga"))] == 0.1  # the pair's friction (the geoms': 1.0)
    if xml is REVIEWER_XML:  # a and b overlap but are excluded
        assert len(ours) == 1
    else:  # the pair beats the exclusion; a contype-0 geom touches the floor, frictionless;
        # ga2 keeps its dynamic contact (friction 1.0); d is excluded from the world's floor
        assert ours == {frozenset(("floor", "ga")): 0.1, frozenset(("ga", "gb")): 0.3,
                        frozenset(("floor", "gc")): 0.0, frozenset(("floor", "ga2")): 1.0,
                        frozenset(("ga2", "gc")): 0.7}


def test_mjcf_round_trip_keeps_the_pair_rules(tmp_path):
    from sinews.sim.scenes_io import scene_from_mjcf, scene_to_mjcf

    path = tmp_path / "scene.xml"
    path.write_text(REVIEWER_XML)
    scene = scene_from_mjcf(path)
    xml = scene_to_mjcf(scene)
    assert "<exclude" in xml and "<pair" in xml
    back = tmp_path / "back.xml"
    back.write_text(xml)
    again = scene_from_mjcf(back)
    assert again.pair_rules == scene.pair_rules
    mj = again.mj_model
    assert mj.nexclude == 1 and mj.npair == 1 and mj.pair_friction[0, 0] == 0.1
    scene.exclude_geometries("ga", "gb")  # covered by the body exclusion: still writable
    scene_to_mjcf(scene)
    s2, _ = _stack_scene()
    s2.exclude_geometries("box", "ball")
    with pytest.raises(ValueError, match="exclusion"):
        scene_to_mjcf(s2)


@pytest.mark.parametrize("attrs, word", [
    ('condim="6"', "condim 6"),
    ('friction="0.2 0.5"', "anisotropic"),
    ('margin="0.01"', "margin"),
    ('solref="0.05 1"', "solref"),
])
def test_mjcf_unsupported_pair_attributes_warn(tmp_path, attrs, word):
    from sinews.sim.scenes_io import scene_from_mjcf

    xml = REVIEWER_XML.replace('friction="0.1 0.1 0.005 0.0001 0.0001"', attrs)
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    with pytest.warns(RuntimeWarning, match=word):
        scene = scene_from_mjcf(path)
    assert ("floor", "ga") in scene.pair_rules["pairs"]


def test_mjcf_pair_on_one_link_warns(tmp_path):
    from sinews.sim.scenes_io import scene_from_mjcf

    xml = REVIEWER_XML.replace('<geom name="ga" type="sphere" size="0.1"/>',
                               '<geom name="ga" type="sphere" size="0.1"/><geom name="ga3" type="sphere" size="0.05"/>')
    xml = xml.replace("</contact>", '<pair geom1="ga" geom2="ga3"/></contact>')
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    with pytest.warns(RuntimeWarning, match="cannot collide"):
        scene = scene_from_mjcf(path)
    assert ("ga", "ga3") not in scene.pair_rules["pairs"]
    assert math.isfinite(scene.geometry("ga3").shape.radius)


def test_mjcf_pairs_on_the_compiled_path(tmp_path):
    """The rich scene (forced parent/child and contype-0 pairs, exclusions, pair friction) steps
    on the compiled kernel with the general path's contact pairs and motion."""
    from sinews.mujoco_import import MujocoCoordinates
    from sinews.sim.scenes_io import scene_from_mjcf

    path = tmp_path / "scene.xml"
    path.write_text(RICH_XML)
    finals = []
    for stepper in (CoulombStepper(), CoulombStepper(solver="pgs")):
        scene = scene_from_mjcf(path)
        mj = scene.mj_model
        q = MujocoCoordinates(scene.model, mj).q_from_qpos(np.asarray(mj.qpos0, dtype=float))
        v = np.zeros(scene.model.nv)
        pairs, kinds = set(), set()
        for _ in range(60):
            out = stepper.step(scene, q, v, np.zeros_like(v), 2e-3)
            q, v = np.asarray(out.q, dtype=float).copy(), np.asarray(out.v, dtype=float).copy()
            pairs |= {(int(a), int(b)) for a, b in zip(out.contacts.geom_a, out.contacts.geom_b)}
            kinds.add(isinstance(out, FastStepOutput))
        finals.append((q, pairs, kinds))
    (q1, p1, k1), (q2, p2, k2) = finals
    assert k1 == {True} and k2 == {False}
    names = [g.name for g in scene.geometries]
    assert {frozenset((names[a], names[b])) for a, b in p1} == {
        frozenset(x) for x in (("floor", "ga"), ("floor", "ga2"), ("floor", "gc"), ("ga", "gb"), ("ga2", "gc"))}
    assert p1 == p2
    assert np.max(np.abs(q1 - q2)) < 1e-4  # two PGS runs to tol 1e-6 per step


def test_mjcf_pair_on_a_skipped_geom_warns(tmp_path):
    from sinews.sim.scenes_io import scene_from_mjcf

    xml = REVIEWER_XML.replace("<worldbody>", '<asset><mesh name="tet" vertex="0 0 0 .1 0 0 0 .1 0 0 0 .1"/>'
                               "</asset><worldbody>")
    xml = xml.replace('<geom name="gb" type="sphere" size="0.1"/>',
                      '<geom name="gb" type="sphere" size="0.1"/><geom name="gm" type="mesh" mesh="tet"/>')
    xml = xml.replace("</contact>", '<pair geom1="gm" geom2="floor"/></contact>')
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    with pytest.warns(RuntimeWarning, match="without a sinews shape"):
        scene = scene_from_mjcf(path, mesh="skip")
    assert [g.name for g in scene.geometries] == ["floor", "ga", "gb"]
    assert list(scene.pair_rules["pairs"]) == [("floor", "ga")]
