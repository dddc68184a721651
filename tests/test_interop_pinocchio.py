"""``from_pinocchio`` for every Pinocchio joint type with a sinews equivalent (continuous
joints included), with joint limits, damping, friction and armature carried over (issue 10
item 2, contract C1/C2).  Oracle: Pinocchio's own RNEA, CRBA, ABA and forward kinematics on
the source model, at random states, to 1e-9 (relative to the size of the quantity)."""

import importlib.metadata
from pathlib import Path

import numpy as np
import pytest

import sinews

pin = pytest.importorskip("pinocchio")
from sinews.interop import PinocchioCoordinates, from_pinocchio, to_pinocchio  # noqa: E402

DBL_MAX = np.finfo(float).max


def _unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def _se3(rng):
    return pin.SE3(pin.exp3(rng.normal(size=3)), rng.uniform(-0.4, 0.4, 3))


def _composite(rng):
    c = pin.JointModelComposite()
    c.addJoint(pin.JointModelRX(), _se3(rng))
    c.addJoint(pin.JointModelPrismaticUnaligned(_unit(rng)), _se3(rng))
    c.addJoint(pin.JointModelHelicalUnaligned(_unit(rng), 0.3), _se3(rng))
    c.addJoint(pin.JointModelRZ(), _se3(rng))
    return c


def _unbounded_unaligned(axis):
    """A ``JointModelRevoluteUnboundedUnaligned`` about ``axis`` (its Python constructor takes
    no axis: made by Pinocchio's URDF parser from a continuous joint)."""
    xyz = " ".join(repr(float(x)) for x in axis)
    urdf = (
        '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
        f'<parent link="a"/><child link="b"/><axis xyz="{xyz}"/></joint></robot>'
    )
    jm = pin.buildModelFromXML(urdf).joints[1]
    assert jm.shortname() == "JointModelRevoluteUnboundedUnaligned"
    return jm


#: every Pinocchio joint type that has a sinews equivalent (JointModelPlanar, whose velocity
#: coordinates differ, and its property rules: tests/test_interop_planar.py)
JOINT_MAKERS = {
    "RX": lambda rng: pin.JointModelRX(),
    "RY": lambda rng: pin.JointModelRY(),
    "RZ": lambda rng: pin.JointModelRZ(),
    "RUBX": lambda rng: pin.JointModelRUBX(),
    "RUBY": lambda rng: pin.JointModelRUBY(),
    "RUBZ": lambda rng: pin.JointModelRUBZ(),
    "RevoluteUnaligned": lambda rng: pin.JointModelRevoluteUnaligned(_unit(rng)),
    "RevoluteUnboundedUnaligned": lambda rng: _unbounded_unaligned(_unit(rng)),
    "PX": lambda rng: pin.JointModelPX(),
    "PY": lambda rng: pin.JointModelPY(),
    "PZ": lambda rng: pin.JointModelPZ(),
    "PrismaticUnaligned": lambda rng: pin.JointModelPrismaticUnaligned(_unit(rng)),
    "HX": lambda rng: pin.JointModelHX(0.2),
    "HY": lambda rng: pin.JointModelHY(-0.4),
    "HZ": lambda rng: pin.JointModelHZ(0.1),
    "HelicalUnaligned": lambda rng: pin.JointModelHelicalUnaligned(_unit(rng), 0.25),
    "Spherical": lambda rng: pin.JointModelSpherical(),
    "SphericalZYX": lambda rng: pin.JointModelSphericalZYX(),
    "Translation": lambda rng: pin.JointModelTranslation(),
    "Universal": lambda rng: pin.JointModelUniversal(_unit(rng), _unit(rng)),
    "Composite": _composite,
    "FreeFlyer": lambda rng: pin.JointModelFreeFlyer(),
}


def _inertia(rng):
    R = pin.exp3(rng.normal(size=3))
    d = rng.uniform(0.05, 0.2, 3)
    d[2] = rng.uniform(abs(d[0] - d[1]) + 0.01, d[0] + d[1])  # a physical (triangle) inertia
    return pin.Inertia(rng.uniform(0.5, 3.0), rng.uniform(-0.2, 0.2, 3), R @ np.diag(d) @ R.T)


def _random_pin_model(rng, kinds, n=None):
    """A random Pinocchio tree (depth-first joint order, as Pinocchio builds them) with the given
    joint kinds, random limits, damping, friction and armature."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array([0.3, -0.2, -9.81]), np.zeros(3))
    kinds = list(kinds)
    if n is not None:
        kinds = [kinds[int(rng.integers(len(kinds)))] for _ in range(n)]
    path = [0]  # the last joint and its ancestors: attaching there keeps depth-first order
    for i, kind in enumerate(kinds):
        if kind == "FreeFlyer":
            del path[1:]
        else:
            del path[int(rng.integers(max(0, len(path) - 3), len(path))) + 1 :]
        jid = pm.addJoint(path[-1], JOINT_MAKERS[kind](rng), _se3(rng), f"j{i}_{kind}")
        path.append(jid)
        pm.appendBodyToJoint(jid, _inertia(rng), pin.SE3.Identity())
        pm.addFrame(pin.Frame(f"link{i}", jid, pin.SE3.Identity(), pin.FrameType.BODY))
    pm.armature = rng.uniform(0.0, 0.5, pm.nv)
    pm.damping = rng.uniform(0.0, 2.0, pm.nv)
    pm.friction = rng.uniform(0.0, 1.0, pm.nv)
    pm.effortLimit = rng.uniform(10.0, 100.0, pm.nv)
    pm.velocityLimit = rng.uniform(1.0, 10.0, pm.nv)
    return pm


def _sym(A):
    """Pinocchio fills the upper triangle of M only."""
    return np.triu(A) + np.triu(A, 1).T


def _check_dynamics(pm, m, rng, states=3):
    cv = PinocchioCoordinates(m, pm)
    pd = pm.createData()
    assert m.nv == pm.nv
    for _ in range(states):
        qp = pin.randomConfiguration(pm, -2.0 * np.ones(pm.nq), 2.0 * np.ones(pm.nq))
        q = cv.q_from_pin(qp)
        np.testing.assert_allclose(cv.q_to_pin(q), qp, atol=1e-15, rtol=0)
        v, a = rng.standard_normal((2, m.nv))
        vp, ap = cv.v_to_pin(v), cv.v_to_pin(a)

        def close(ours, theirs, what):
            scale = max(1.0, float(np.max(np.abs(theirs))))
            np.testing.assert_allclose(ours, theirs, atol=1e-9 * scale, rtol=0, err_msg=what)

        close(sinews.rnea(m, q, v, a), cv.v_from_pin(pin.rnea(pm, pd, qp, vp, ap)), "rnea")
        close(sinews.crba(m, q), cv.matrix_from_pin(_sym(pin.crba(pm, pd, qp))), "crba")
        close(sinews.aba(m, q, v, a), cv.v_from_pin(pin.aba(pm, pd, qp, vp, ap)), "aba")
        pin.framesForwardKinematics(pm, pd, qp)
        for i in range(1, pm.njoints):
            X = sinews.body_placement(m, q, str(pm.names[i]))
            close(X.R, pd.oMi[i].rotation, f"rotation of {pm.names[i]}")
            close(X.p, pd.oMi[i].translation, f"position of {pm.names[i]}")


@pytest.mark.parametrize("kind", sorted(JOINT_MAKERS))
def test_from_pinocchio_every_joint_type(kind):
    """Each joint type in a chain of three (so that it is a root, a middle and a leaf joint)."""
    rng = np.random.default_rng(sorted(JOINT_MAKERS).index(kind))
    kinds = [kind] * 3 if kind != "FreeFlyer" else ["FreeFlyer", "RX", "RZ"]
    pm = _random_pin_model(rng, kinds)
    m = from_pinocchio(pm)
    _check_dynamics(pm, m, rng)


@pytest.mark.parametrize("seed", range(4))
def test_from_pinocchio_random_trees_all_joint_types(seed):
    rng = np.random.default_rng(100 + seed)
    kinds = [k for k in JOINT_MAKERS if k != "FreeFlyer"]
    pm = _random_pin_model(rng, (["FreeFlyer"] if seed % 2 else []) + kinds, n=None)
    m = from_pinocchio(pm)
    _check_dynamics(pm, m, rng, states=2)


def test_from_pinocchio_carries_joint_properties():
    rng = np.random.default_rng(7)
    pm = _random_pin_model(rng, ["FreeFlyer", "RX", "RUBZ", "Spherical"])
    pm.lowerPositionLimit = np.r_[-np.ones(7), -1.5, -DBL_MAX, -DBL_MAX, -np.ones(4)]
    pm.upperPositionLimit = np.r_[np.ones(7), 1.5, DBL_MAX, DBL_MAX, np.ones(4)]
    m = from_pinocchio(pm)
    cv = PinocchioCoordinates(m, pm)
    assert m.nq == pm.nq - 1 and m.nv == pm.nv
    for name in ("armature", "damping", "friction"):
        np.testing.assert_array_equal(getattr(m, name), cv.v_from_pin(getattr(pm, name)))
    np.testing.assert_array_equal(m.effort_limit, cv.v_from_pin(pm.effortLimit))
    np.testing.assert_array_equal(m.velocity_limit, cv.v_from_pin(pm.velocityLimit))
    # free-flyer limits as they are, the revolute's, the continuous joint unlimited (one angle)
    np.testing.assert_array_equal(m.lower_position_limit, np.r_[-np.ones(7), -1.5, -np.inf, -np.ones(4)])
    np.testing.assert_array_equal(m.upper_position_limit, np.r_[np.ones(7), 1.5, np.inf, np.ones(4)])
    # a Pinocchio model without limits: +-DBL_MAX reads as +-inf
    pm2 = pin.Model()
    pm2.addJoint(0, pin.JointModelRY(), pin.SE3.Identity(), "a")
    m2 = from_pinocchio(pm2)
    assert m2.lower_position_limit[0] == -np.inf and m2.effort_limit[0] == np.inf


def test_to_pinocchio_round_trip_keeps_properties():
    rng = np.random.default_rng(3)
    pm = _random_pin_model(rng, ["FreeFlyer", "RX", "PY", "Spherical", "RZ"])
    pm.lowerPositionLimit = np.r_[-np.ones(7), -1.0, -0.2, -np.ones(4), -2.0]
    pm.upperPositionLimit = np.r_[np.ones(7), 1.0, 0.2, np.ones(4), 2.0]
    m = from_pinocchio(pm)
    back = to_pinocchio(m)
    for name in ("lowerPositionLimit", "upperPositionLimit", "velocityLimit", "effortLimit", "damping", "friction", "armature"):
        np.testing.assert_array_equal(getattr(back, name), getattr(pm, name), err_msg=name)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: pin.JointModelEllipsoid(0.1, 0.2, 0.3), "ellipsoid"),
    ],
)
def test_from_pinocchio_refuses_joints_without_equivalent(make, words):
    pm = pin.Model()
    pm.addJoint(0, make(), pin.SE3.Identity(), "odd")
    with pytest.raises(ValueError, match=words) as err:
        from_pinocchio(pm)
    assert "'odd'" in str(err.value)


MIMIC_URDF = """<robot name="r"><link name="a"/>
<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="c"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j1" multiplier="2" offset="0.1"/></joint>
</robot>"""


def test_from_pinocchio_refuses_mimic_and_composite_of_multi_dof_parts():
    pm = pin.buildModelFromXML(MIMIC_URDF, mimic=True)
    assert pm.joints[2].shortname() == "JointModelMimic"
    with pytest.raises(ValueError, match="mimic=False"):
        from_pinocchio(pm)
    # the same robot with independent joints converts
    assert from_pinocchio(pin.buildModelFromXML(MIMIC_URDF, mimic=False)).nv == 2
    c = pin.JointModelComposite()
    c.addJoint(pin.JointModelSpherical())
    pm = pin.Model()
    pm.addJoint(0, c, pin.SE3.Identity(), "c")
    with pytest.raises(ValueError, match="one-dof"):
        from_pinocchio(pm)


def test_pinocchio_coordinates_checks_its_pin_model():
    rng = np.random.default_rng(0)
    pm = _random_pin_model(rng, ["RUBZ", "RX"])
    m = from_pinocchio(pm)
    with pytest.raises(ValueError, match="pin_model"):
        PinocchioCoordinates(m, "not a model")
    other = _random_pin_model(rng, ["RX", "RX"])
    with pytest.raises(ValueError, match="pin_model"):
        PinocchioCoordinates(m, other)
    cv = PinocchioCoordinates(m, pm)
    with pytest.raises(ValueError, match="q"):
        cv.q_from_pin(np.zeros(m.nq))  # Pinocchio's q has one more entry


def _robots_dir():
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    return Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))


def test_from_pinocchio_tiago_continuous_joints():
    """Tiago: continuous wheel joints (JointModelRUBZ), prismatic torso, revolute arm; URDF
    limits, damping and friction come along."""
    urdf = _robots_dir() / "tiago_description" / "robots" / "tiago.urdf"
    pm = pin.buildModelFromUrdf(str(urdf))
    assert "JointModelRUBZ" in {j.shortname() for j in pm.joints}
    m = from_pinocchio(pm)
    assert m.nq == pm.nq - sum(j.shortname() == "JointModelRUBZ" for j in pm.joints)
    cv = PinocchioCoordinates(m, pm)
    np.testing.assert_array_equal(m.damping, pm.damping)
    np.testing.assert_array_equal(m.friction, pm.friction)
    np.testing.assert_array_equal(m.effort_limit, pm.effortLimit)
    i = pm.getJointId("torso_lift_joint")
    b = m.body("torso_lift_joint")
    assert m.upper_position_limit[b.idx_q] == pm.upperPositionLimit[pm.idx_qs[i]]
    _check_dynamics(pm, m, np.random.default_rng(1), states=2)
    assert cv.nq_pin == pm.nq


def test_to_pinocchio_multiaxis_with_offset_and_screw_axes():
    """A MultiAxis joint whose screws do not pass through the joint origin (from a Pinocchio
    composite with placements) goes back to Pinocchio as a composite plus a constant transform:
    the same dynamics and the same frame poses, both ways."""
    rng = np.random.default_rng(21)
    pm = _random_pin_model(rng, ["FreeFlyer", "Composite", "RX", "Composite", "Universal"])
    m = from_pinocchio(pm)
    assert any(b.joint is not None and b.joint.kind == "MultiAxis" for b in m.bodies)
    back = to_pinocchio(m)
    _check_dynamics(back, from_pinocchio(back), rng, states=2)  # Pinocchio -> sinews -> Pinocchio -> sinews
    # dynamics of the sinews model against its own conversion (no continuous joints: same q)
    cv = PinocchioCoordinates(m)
    bd = back.createData()
    for _ in range(3):
        q = sinews.random_configuration(m, rng)
        v, a = rng.standard_normal((2, m.nv))
        np.testing.assert_allclose(
            sinews.rnea(m, q, v, a), cv.v_from_pin(pin.rnea(back, bd, q, cv.v_to_pin(v), cv.v_to_pin(a))), atol=1e-9
        )
        np.testing.assert_allclose(sinews.crba(m, q), cv.matrix_from_pin(_sym(pin.crba(back, bd, q))), atol=1e-9)
        pin.framesForwardKinematics(back, bd, q)
        for b in m.bodies[1:]:
            X = sinews.body_placement(m, q, b.name)
            Xp = bd.oMf[back.getFrameId(b.name, pin.FrameType.BODY)]
            np.testing.assert_allclose(X.R, Xp.rotation, atol=1e-12)
            np.testing.assert_allclose(X.p, Xp.translation, atol=1e-12)
