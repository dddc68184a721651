"""Model records (contract C1): joint properties, mimic records, shape records, total mass;
and the model facts for people: summary(), tree_text(), to_dot()."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews import SpatialInertia
from sinews import joints as J
from sinews.model import JointProperties, MimicJoint, ShapeRecord


def arm() -> sinews.Model:
    m = sinews.Model(name="arm")
    base = m.add_body(0, J.Fixed(), None, SpatialInertia.from_box(5.0, (0.3, 0.3, 0.1)), "base")
    a = m.add_body(base, J.RevoluteZ(), (0, 0, 0.1), SpatialInertia.from_rod(2.0, 0.5), "upper")
    b = m.add_body(a, J.Spherical(), (0, 0, 0.5), SpatialInertia.from_rod(1.0, 0.4), "wrist")
    m.add_body(b, J.Fixed(), (0, 0, 0.4), SpatialInertia.point_mass(0.25), "tool")
    m.add_body(b, J.PrismaticX(), None, SpatialInertia.point_mass(0.1), "finger_l")
    m.add_body(b, J.PrismaticX(), None, SpatialInertia.point_mass(0.1), "finger_r")
    return m


# ----------------------------------------------------------------------------- joint properties
def test_defaults_are_unbounded_and_zero():
    m = arm()
    assert m.lower_position_limit.shape == (m.nq,) and np.all(m.lower_position_limit == -np.inf)
    assert np.all(m.upper_position_limit == np.inf)
    for name in ("velocity_limit", "effort_limit"):
        assert getattr(m, name).shape == (m.nv,) and np.all(getattr(m, name) == np.inf)
    for name in ("damping", "friction", "armature"):
        assert getattr(m, name).shape == (m.nv,) and not getattr(m, name).any()
    assert m.mimic_joints == () and m.visuals == () and m.collisions == ()


def test_set_and_read_back_scalars_broadcast():
    m = arm()
    m.set_joint_properties("upper", lower=-1, upper=2.5, velocity_limit=3, effort_limit=40, damping=0.2,
                           friction=0.1, armature=0.05)
    m.set_joint_properties("wrist", armature=[0.01, 0.02, 0.03], lower=-1.01, upper=1.01)
    m.set_joint_properties(m.body_id("finger_l"), lower=0, upper=0.04)
    m.set_joint_properties("upper", damping=0.3)  # only damping changes
    np.testing.assert_array_equal(m.lower_position_limit, [-1, -1.01, -1.01, -1.01, -1.01, 0, -np.inf])
    np.testing.assert_array_equal(m.upper_position_limit, [2.5, 1.01, 1.01, 1.01, 1.01, 0.04, np.inf])
    np.testing.assert_array_equal(m.armature, [0.05, 0.01, 0.02, 0.03, 0, 0])
    np.testing.assert_array_equal(m.damping, [0.3, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(m.friction, [0.1, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(m.velocity_limit, [3, np.inf, np.inf, np.inf, np.inf, np.inf])
    p = m.joint_properties("wrist")
    assert isinstance(p, JointProperties) and (p.body, p.kind, p.idx_q, p.idx_v) == ("wrist", "Spherical", 1, 1)
    assert p.lower.shape == (4,) and p.armature.shape == (3,)
    with pytest.raises(ValueError):
        p.armature[0] = 1.0  # read-only
    # returned arrays are copies
    arr = m.armature
    arr[:] = 9
    assert m.armature[0] == 0.05
    # a fixed joint has empty properties
    assert m.joint_properties("tool").lower.shape == (0,)
    assert m.joint_properties("world").kind == "world"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(lower=[0, 1]), r"lower for body 'upper' must be a scalar or have shape \(1,\)"),
        (dict(damping=np.nan), "damping for body 'upper' contains NaN"),
        (dict(lower=np.nan), "lower for body 'upper' contains NaN"),
        (dict(lower=1, upper=0), "lower must be <= upper for body 'upper'"),
        (dict(damping=-0.1), "damping for body 'upper' must be non-negative"),
        (dict(friction=np.inf), "friction for body 'upper' must be finite"),
        (dict(armature=-1), "armature for body 'upper' must be non-negative"),
        (dict(velocity_limit=-1), "velocity_limit for body 'upper' must be non-negative"),
        (dict(effort_limit="x"), "effort_limit must contain real numbers"),
        (dict(armature=1 + 2j), "armature must contain real numbers"),
    ],
)
def test_bad_values_name_the_argument(kwargs, match):
    m = arm()
    with pytest.raises(ValueError, match=match):
        m.set_joint_properties("upper", **kwargs)
    assert np.all(m.lower_position_limit == -np.inf) and not m.damping.any()  # unchanged


def test_refusals():
    m = arm()
    with pytest.raises(ValueError, match="body: 'tool' has a fixed joint"):
        m.set_joint_properties("tool", damping=1)
    with pytest.raises(ValueError, match="'world' has the world"):
        m.set_joint_properties(0, damping=1)
    with pytest.raises(KeyError, match="no body named 'nope'"):
        m.set_joint_properties("nope", damping=1)
    with pytest.raises(TypeError):
        m.set_joint_properties("upper", 0.1)  # keyword-only
    sinews.crba(m, sinews.neutral(m))  # compiles the model
    with pytest.raises(RuntimeError, match="finalized"):
        m.set_joint_properties("upper", damping=1)
    with pytest.raises(RuntimeError, match="finalized"):
        m.add_mimic("finger_r", "finger_l")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["lower", "upper", "velocity_limit", "effort_limit", "damping", "friction", "armature"]),
       st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=5))
def test_property_arrays_accepted_exactly_or_refused_by_name(name, values):
    """Any array is either stored exactly (read back bit for bit) or refused with a ValueError
    naming the argument; the model is unchanged by a refusal."""
    m = arm()
    nq, nv = 4, 3  # the spherical wrist
    n = nq if name in ("lower", "upper") else nv
    before = {k: getattr(m, k) for k in ("lower_position_limit", "upper_position_limit", "damping", "armature")}
    try:
        m.set_joint_properties("wrist", **{name: values})
    except ValueError as exc:
        assert name in str(exc)
        for k, v in before.items():
            np.testing.assert_array_equal(getattr(m, k), v)
        return
    assert len(values) == n
    np.testing.assert_array_equal(getattr(m.joint_properties("wrist"), name), values)


def test_pickle_and_copy_keep_the_records():
    m = arm()
    m.set_joint_properties("upper", lower=-1, upper=1, damping=0.5, armature=0.2)
    m.add_mimic("finger_r", "finger_l", -1.0, 0.02)
    m.add_visual("upper", "cylinder", (0.02, 0.5), (0, 0, 0.25), rgba=(1, 0, 0, 1))
    m.add_collision("wrist", "mesh", mesh="/tmp/w.stl", scale=(0.001, 0.001, 0.001))
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert other.joint_properties("upper") == m.joint_properties("upper")
        np.testing.assert_array_equal(other.armature, m.armature)
        assert other.mimic_joints == m.mimic_joints
        assert [v.size for v in other.visuals] == [(0.02, 0.5)]
        assert other.collisions[0].mesh == "/tmp/w.stl"
    # a deep copy is independent
    c = copy.deepcopy(m)
    c.set_joint_properties("upper", damping=9)
    assert m.damping[0] == 0.5


def test_armature_enters_the_mass_matrix():
    m = arm()
    m.set_joint_properties("wrist", armature=[0.1, 0.2, 0.3])
    q = sinews.random_configuration(m, np.random.default_rng(0))
    M0 = sinews.crba(arm(), q)
    np.testing.assert_allclose(m.compiled.armature, [0, 0.1, 0.2, 0.3, 0, 0])
    np.testing.assert_allclose(sinews.crba(m, q) - M0, np.diag([0, 0.1, 0.2, 0.3, 0, 0]), atol=1e-12)


# ----------------------------------------------------------------------------- mimic / shapes / mass
def test_mimic_records():
    m = arm()
    rec = m.add_mimic("finger_r", "finger_l", multiplier=-1, offset=0.01)
    assert rec == MimicJoint("finger_r", "finger_l", -1.0, 0.01) and m.mimic_joints == (rec,)
    for args, match in [
        (("finger_r", "finger_l"), "already mimics"),
        (("finger_l", "finger_l"), "cannot mimic itself"),
        (("wrist", "upper"), "joint: body 'wrist' has a Spherical joint"),
        (("upper", "tool"), "mimicked: body 'tool' has a Fixed joint"),
        (("upper", 0), "mimicked: body 'world' has the world"),
    ]:
        with pytest.raises(ValueError, match=match):
            m.add_mimic(*args)
    with pytest.raises(ValueError, match="multiplier must be finite"):
        m.add_mimic("finger_l", "upper", np.inf)
    with pytest.raises(ValueError, match="offset must be a real number"):
        m.add_mimic("finger_l", "upper", 1.0, "0")
    with pytest.raises(KeyError, match="joint"):
        m.add_mimic("nope", "upper")


def test_shape_records_validate():
    m = arm()
    rec = m.add_visual("upper", "box", (0.1, 0.2, 0.3), (0.0, 0.0, 0.25), name="shell")
    assert isinstance(rec, ShapeRecord) and rec.body == "upper" and rec.X_body_geometry.p.tolist() == [0, 0, 0.25]
    m.compiled  # shapes may be added to a compiled model (records only)
    m.add_collision(0, "sphere", (0.1,))
    assert m.collisions[0].body == "world"
    for kwargs, match in [
        (dict(kind="cone", size=(1,)), "kind must be one of"),
        (dict(kind="box", size=(1, 2)), r"size of a box must have shape \(3,\)"),
        (dict(kind="sphere", size=(-1,)), "size must be non-negative"),
        (dict(kind="sphere", size=(np.nan,)), "size contains NaN"),
        (dict(kind="mesh"), "a mesh shape needs mesh"),
        (dict(kind="mesh", mesh="a.stl", scale=(1, 1)), r"scale must have shape \(3,\)"),
        (dict(kind="sphere", size=(1,), rgba=(1, 0, 0)), r"rgba must have shape \(4,\)"),
    ]:
        with pytest.raises(ValueError, match=match):
            m.add_visual("upper", **kwargs)


def test_total_mass():
    m = arm()
    assert m.total_mass() == pytest.approx(2.0 + 1.0 + 0.25 + 0.1 + 0.1)  # the base is welded
    assert m.total_mass(include_ground=True) == pytest.approx(8.45)
    assert sinews.Model().total_mass() == 0.0
    with pytest.raises(ValueError, match="include_ground"):
        m.total_mass(include_ground="yes")
    assert m.welded_to_world("base") and m.welded_to_world(0) and not m.welded_to_world("tool")


# ----------------------------------------------------------------------------- facts for people
def test_summary_table():
    m = arm()
    m.set_joint_properties("upper", lower=-1, upper=2, damping=0.5)
    m.add_mimic("finger_r", "finger_l", -1.0)
    s = m.summary()
    lines = s.splitlines()
    assert lines[0] == "Model 'arm': 6 bodies, nq=7, nv=6, gravity=[0.0, 0.0, -9.81]"
    header = lines[1].split()
    assert header == ["id", "name", "parent", "joint", "idx_q", "idx_v", "mass", "limits", "damping"]
    row = {ln.split()[1]: ln.split() for ln in lines[3:9]}
    assert row["upper"][2:] == ["base", "Revolute", "z", "0", "0", "2", "[-1,", "2]", "0.5"]
    assert row["wrist"][3:7] == ["Spherical", "1:5", "1:4", "1"]
    assert row["tool"][3:6] == ["Fixed", "-", "-"]
    assert "total mass 3.45 kg moving (8.45 kg with the bodies welded to the world)" in s
    assert "mimic: q[finger_r] = -1 * q[finger_l]" in s
    assert str(m) == s


def test_tree_text_and_dot_show_loops_and_couplings():
    from sinews.constraints import ConstraintSet

    m = arm()
    m.add_mimic("finger_r", "finger_l", -1.0, 0.01)
    cs = ConstraintSet()
    for axis in np.eye(6)[:3]:
        cs.add_loop_constraint("tool", "upper", sinews.Transform.identity(), sinews.Transform.identity(),
                               axis, name="closure")
    cs.add_contact_constraint("tool", (0, 0, 0), (0, 0, 1), name="foot")
    cs.add_mimic_constraints(m)
    t = m.tree_text(cs)
    assert t.splitlines()[:3] == ["arm (nq=7, nv=6)", "world", "`-- base [Fixed] 5 kg"]
    assert "    `-- upper [Revolute z q[0]] 2 kg" in t
    assert "`-- wrist [Spherical q[1:5]] 1 kg" in t
    assert "|-- tool [Fixed] 0.25 kg" in t
    assert "q[finger_r] = -1 * q[finger_l] + 0.01" in t
    assert "loop 'closure': tool <-> upper (3 rows)" in t
    assert "contact 'foot': tool on the world (1 row)" in t
    assert "coordinate 'mimic:finger_r': q[finger_r] = -1 * q[finger_l] + 0.01 (1 row)" in t
    assert m.tree_text() == t.split("\nconstraints")[0]
    d = m.to_dot(cs)
    assert d.startswith('digraph "arm" {') and d.rstrip().endswith("}")
    assert 'b2 -> b3 [label="Spherical"];' in d
    assert 'b2 [label="upper\\n2 kg"];' in d
    assert "style=dotted" in d and 'label="loop \'closure\'"' in d and 'label="contact \'foot\'"' in d
    with pytest.raises(ValueError, match="constraints must be"):
        m.tree_text(constraints=42)


def test_dot_escapes_names():
    m = sinews.Model(name='a "quoted" robot')
    m.add_body(0, J.RevoluteX(), None, SpatialInertia.point_mass(1.0, (0, 0, 1)), 'link "1"\\')
    d = m.to_dot()
    assert 'digraph "a \\"quoted\\" robot"' in d and 'link \\"1\\"\\\\' in d


def test_tree_text_lists_cut_joint_loops_and_indexed_couplings():
    """Groups are described by what they hold (source/target cut joints of sinews.loops,
    coordinate couplings of a multi-coordinate joint), not by a fixed list of types."""
    from sinews.constraints import ConstraintSet

    m = sinews.Model(name="m")
    a = m.add_body(0, J.Planar(), None, SpatialInertia.point_mass(1.0), "a")
    m.add_body(a, J.RevoluteZ(), (1, 0, 0), SpatialInertia.point_mass(1.0), "b")
    cs = ConstraintSet()
    cs.add_coordinate_constraint("b", "a", ratio=2.0, mimicked_index=2, name="gear")
    try:
        from sinews.loops.loop_joint import LoopJoint
    except ImportError:  # pragma: no cover - the loops package is optional here
        LoopJoint = None
    if LoopJoint is not None:
        cs.add_custom_constraint(LoopJoint("b", 0, "ball", name="pivot"))
    t = m.tree_text(cs)
    assert "coordinate 'gear': q[b] = 2 * q[a][2] (1 row)" in t
    if LoopJoint is not None:
        assert "loop_joint 'pivot': b <-> world (ball cut joint) (3 rows)" in t
        assert 'b2 -> b0 [style=dashed, dir=none, constraint=false, label="loop_joint \'pivot\'"];' in m.to_dot(cs)
