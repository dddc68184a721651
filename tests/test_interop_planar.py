"""``from_pinocchio`` with Pinocchio's planar joint (issue 10 item 2).

Pinocchio's ``JointModelPlanar`` has ``q = (x, y, cos t, sin t)`` and ``v = (vx, vy, w)``, the
child twist in child axes; sinews' ``Planar`` has ``q = (x, y, t)`` and ``v = dq/dt``, with the
same placement ``T(x, y) Rz(t)``.  ``PinocchioCoordinates`` maps q, v, a, tau, M and Jacobian
columns.  Oracle: Pinocchio's own RNEA, CRBA, ABA, joint Jacobians and forward kinematics on the
source model at random states (a planar joint alone, as the root of a tree and in the middle of
one, several planar joints in one tree), to 1e-9; and a finite-difference check of the velocity
map against Pinocchio's ``integrate`` (independent of our derivation of ``T``)."""

import numpy as np
import pytest

import sinews
from sinews import joints as J

pin = pytest.importorskip("pinocchio")
from sinews.interop import PinocchioCoordinates, from_pinocchio, to_pinocchio  # noqa: E402


def _inertia(rng):
    R = pin.exp3(rng.normal(size=3))
    d = rng.uniform(0.05, 0.2, 3)
    d[2] = rng.uniform(abs(d[0] - d[1]) + 0.01, d[0] + d[1])
    return pin.Inertia(rng.uniform(0.5, 3.0), rng.uniform(-0.2, 0.2, 3), R @ np.diag(d) @ R.T)


def _se3(rng):
    return pin.SE3(pin.exp3(rng.normal(size=3)), rng.uniform(-0.4, 0.4, 3))


def _model(rng, kinds):
    """A Pinocchio chain/tree: each joint attached to a random earlier joint (depth-first)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array([0.3, -0.2, -9.81]), np.zeros(3))
    makers = {"Planar": pin.JointModelPlanar, "RX": pin.JointModelRX, "PY": pin.JointModelPY,
              "Spherical": pin.JointModelSpherical, "FreeFlyer": pin.JointModelFreeFlyer,
              "RUBZ": pin.JointModelRUBZ}
    path = [0]
    for i, kind in enumerate(kinds):
        del path[int(rng.integers(max(0, len(path) - 2), len(path))) + 1 :]
        jid = pm.addJoint(path[-1], makers[kind](), _se3(rng), f"j{i}_{kind}")
        path.append(jid)
        pm.appendBodyToJoint(jid, _inertia(rng), pin.SE3.Identity())
    # armature: none along a planar joint's child x, y axes (see from_pinocchio's docstring)
    arm = rng.uniform(0.0, 0.5, pm.nv)
    for i in range(1, pm.njoints):
        if pm.joints[i].shortname() == "JointModelPlanar":
            arm[pm.idx_vs[i] : pm.idx_vs[i] + 2] = 0.0
    pm.armature = arm
    return pm


def _sym(A):
    return np.triu(A) + np.triu(A, 1).T


def _close(ours, theirs, what):
    scale = max(1.0, float(np.max(np.abs(theirs))))
    np.testing.assert_allclose(ours, theirs, atol=1e-9 * scale, rtol=0, err_msg=what)


def _check(pm, m, rng, states=3):
    cv = PinocchioCoordinates(m, pm)
    pd = pm.createData()
    assert m.nv == pm.nv and m.nq == pm.nq - sum(
        pm.joints[i].shortname() in ("JointModelPlanar", "JointModelRUBZ") for i in range(1, pm.njoints))
    for _ in range(states):
        qp = pin.randomConfiguration(pm, -2.0 * np.ones(pm.nq), 2.0 * np.ones(pm.nq))
        q = cv.q_from_pin(qp)
        _close(cv.q_to_pin(q), qp, "q round trip")
        v, a, tau = rng.standard_normal((3, m.nv))
        vp, ap, taup = cv.v_to_pin(v, q), cv.a_to_pin(a, q, v), cv.v_to_pin(tau, q)
        _close(cv.v_from_pin(vp, q), v, "v round trip")
        _close(cv.a_from_pin(ap, q, v), a, "a round trip")
        _close(sinews.rnea(m, q, v, a), cv.v_from_pin(pin.rnea(pm, pd, qp, vp, ap), q), "rnea")
        _close(sinews.crba(m, q), cv.matrix_from_pin(_sym(pin.crba(pm, pd, qp)), q), "crba")
        _close(sinews.aba(m, q, v, tau), cv.a_from_pin(pin.aba(pm, pd, qp, vp, taup), q, v), "aba")
        # the same numbers the other way round: Pinocchio's answer from ours
        _close(cv.a_to_pin(sinews.aba(m, q, v, tau), q, v), pin.aba(pm, pd, qp, vp, taup), "aba -> pin")
        _close(cv.v_to_pin(sinews.rnea(m, q, v, a), q), pin.rnea(pm, pd, qp, vp, ap), "rnea -> pin")
        # kinematics: placements and body Jacobians (local frame, rows [lin; ang] there)
        pin.computeJointJacobians(pm, pd, qp)
        pin.framesForwardKinematics(pm, pd, qp)
        for i in range(1, pm.njoints):
            name = str(pm.names[i])
            X = sinews.body_placement(m, q, name)
            _close(X.R, pd.oMi[i].rotation, f"rotation of {name}")
            _close(X.p, pd.oMi[i].translation, f"position of {name}")
            Jp = pin.getJointJacobian(pm, pd, i, pin.ReferenceFrame.LOCAL)
            V_pin = Jp @ vp  # [lin; ang] body twist from Pinocchio's velocity
            Js = PinocchioCoordinates.rows6_from_pin(cv.columns_from_pin(Jp, q))
            _close(Js @ v, np.r_[V_pin[3:], V_pin[:3]], f"Jacobian of {name}")


@pytest.mark.parametrize("kinds", [
    ["Planar"],
    ["Planar", "RX", "PY", "RX"],
    ["RX", "Planar", "Spherical", "Planar", "RUBZ"],
    ["FreeFlyer", "RX", "Planar", "PY", "Planar"],
], ids=["alone", "root-of-tree", "inside-tree", "under-free-flyer"])
def test_from_pinocchio_planar_matches_pinocchio(kinds):
    rng = np.random.default_rng(len(kinds) * 7 + kinds.index("Planar"))
    pm = _model(rng, kinds)
    m = from_pinocchio(pm)
    for i in range(1, pm.njoints):
        if pm.joints[i].shortname() == "JointModelPlanar":
            assert m.body(str(pm.names[i])).joint.kind == "Planar"
    _check(pm, m, rng)


def test_planar_velocity_map_matches_pinocchio_integrate():
    """``v_pin = T(q) v`` checked independently: moving the sinews coordinates by ``v dt`` must
    agree with Pinocchio's ``integrate(q, v_pin dt)`` to second order in dt."""
    rng = np.random.default_rng(5)
    pm = _model(rng, ["Planar"])
    m = from_pinocchio(pm)
    cv = PinocchioCoordinates(m, pm)
    q = np.array([0.3, -0.7, 2.1])
    v = np.array([0.4, -1.3, 0.8])
    for dt in (1e-4, 1e-5):
        ahead = cv.q_from_pin(pin.integrate(pm, cv.q_to_pin(q), cv.v_to_pin(v, q + 0.5 * dt * v) * dt))
        np.testing.assert_allclose(ahead, q + dt * v, atol=10 * dt**3 + 1e-15, rtol=0)
    # a pure spin leaves (x, y) in place in both; a pure child-axis push moves along R(t) e_x
    t = 0.9
    vp = cv.v_to_pin(np.array([np.cos(t), np.sin(t), 0.0]), np.array([0.0, 0.0, t]))
    np.testing.assert_allclose(vp, [1.0, 0.0, 0.0], atol=1e-15)


def test_planar_round_trip_through_to_pinocchio():
    """sinews' Planar goes to Pinocchio as a composite (PX, PY, RZ), whose v is dq/dt: the model
    converted back matches the first one's dynamics with no coordinate change."""
    rng = np.random.default_rng(11)
    pm = _model(rng, ["RX", "Planar", "PY"])
    pm.lowerPositionLimit = np.r_[-1.0, -2.0, -3.0, -1.01, -1.01, -0.5]
    pm.upperPositionLimit = np.r_[1.0, 2.0, 3.0, 1.01, 1.01, 0.5]
    m = from_pinocchio(pm)
    np.testing.assert_array_equal(m.lower_position_limit, [-1.0, -2.0, -3.0, -np.inf, -0.5])
    np.testing.assert_array_equal(m.upper_position_limit, [1.0, 2.0, 3.0, np.inf, 0.5])
    back = to_pinocchio(m)
    assert back.joints[2].shortname() == "JointModelComposite"
    cb = PinocchioCoordinates(m)  # identical coordinates: no pin model needed
    bd = back.createData()
    for _ in range(3):
        q = rng.uniform(-2, 2, m.nq)
        v, a, tau = rng.standard_normal((3, m.nv))
        _close(sinews.rnea(m, q, v, a), pin.rnea(back, bd, q, v, a), "rnea")
        _close(sinews.crba(m, q), _sym(pin.crba(back, bd, q)), "crba")
        _close(sinews.aba(m, q, v, tau), pin.aba(back, bd, q, v, tau), "aba")
        assert np.array_equal(cb.v_to_pin(v), v)
    m2 = from_pinocchio(back)
    assert m2.nq == m.nq
    np.testing.assert_allclose(sinews.crba(m2, q), sinews.crba(m, q), atol=1e-12)
    np.testing.assert_array_equal(m2.armature, m.armature)


def test_planar_conversions_need_q_and_v():
    rng = np.random.default_rng(2)
    pm = _model(rng, ["Planar"])
    cv = PinocchioCoordinates(from_pinocchio(pm), pm)
    with pytest.raises(ValueError, match="q is required"):
        cv.v_to_pin(np.zeros(3))
    with pytest.raises(ValueError, match="q is required"):
        cv.matrix_from_pin(np.eye(3))
    with pytest.raises(ValueError, match="v is required"):
        cv.a_to_pin(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="'q'|q "):
        cv.v_to_pin(np.zeros(3), np.zeros(4))


@pytest.mark.parametrize("prop, vals, ok", [
    ("armature", [0.0, 0.0, 0.7], True),
    ("armature", [0.2, 0.2, 0.7], False),
    ("damping", [0.3, 0.3, 0.1], True),
    ("damping", [0.1, 0.4, 0.0], False),
    ("friction", [0.0, 0.0, 0.5], True),
    ("friction", [0.5, 0.5, 0.5], False),
    ("velocityLimit", [np.finfo(float).max] * 2 + [3.0], True),
    ("effortLimit", [10.0, 10.0, 3.0], False),
])
def test_planar_child_axis_properties_convert_only_when_rotation_invariant(prop, vals, ok):
    pm = pin.Model()
    jid = pm.addJoint(0, pin.JointModelPlanar(), pin.SE3.Identity(), "base")
    pm.appendBodyToJoint(jid, _inertia(np.random.default_rng(0)), pin.SE3.Identity())
    setattr(pm, prop, np.array(vals))
    if not ok:
        with pytest.raises(ValueError, match=f"'base'.*{prop}"):
            from_pinocchio(pm)
        return
    m = from_pinocchio(pm)
    ours = {"armature": m.armature, "damping": m.damping, "friction": m.friction,
            "velocityLimit": m.velocity_limit}[prop]
    np.testing.assert_array_equal(ours, np.where(np.array(vals) >= np.finfo(float).max, np.inf, vals))


def test_sinews_planar_is_not_converted_without_a_pin_planar():
    """A sinews Planar built directly (or from a URDF) has dq/dt velocities, like the composite
    to_pinocchio makes: PinocchioCoordinates without a Pinocchio planar joint changes nothing."""
    m = sinews.Model()
    m.add_body("world", J.Planar(), inertia=sinews.SpatialInertia.from_rod(1.0, 0.5), name="b")
    cv = PinocchioCoordinates(m, to_pinocchio(m))
    v = np.array([0.1, 0.2, 0.3])
    assert np.array_equal(cv.v_to_pin(v), v) and np.array_equal(cv.a_to_pin(v), v)


def test_isotropic_planar_armature_differs_between_the_two_conventions():
    """Why x, y armature is refused: Pinocchio adds ``armature * d v_pin/dt`` (child axes),
    which is not ``T (armature * d2(x, y)/dt2)``; the gap is ``armature * w (u_y, -u_x)``."""
    rng = np.random.default_rng(9)
    pm = _model(rng, ["Planar"])
    m = from_pinocchio(pm)
    cv = PinocchioCoordinates(m, pm)
    pm.armature = np.array([0.4, 0.4, 0.0])
    q, v, a = np.array([0.1, 0.2, 0.8]), np.array([0.5, -0.3, 1.7]), np.array([0.2, 0.1, -0.4])
    pd = pm.createData()
    with_arm = pin.rnea(pm, pd, cv.q_to_pin(q), cv.v_to_pin(v, q), cv.a_to_pin(a, q, v)).copy()
    pm.armature = np.zeros(3)
    without = pin.rnea(pm, pd, cv.q_to_pin(q), cv.v_to_pin(v, q), cv.a_to_pin(a, q, v))
    a_pin = cv.a_to_pin(a, q, v)
    _close(with_arm - without, 0.4 * np.r_[a_pin[:2], 0.0], "Pinocchio's armature term")
    # sinews' armature term, 0.4 * a, in Pinocchio's coordinates: off by 0.4 * w (u_y, -u_x)
    ours = cv.v_to_pin(0.4 * np.r_[a[:2], 0.0], q)
    u = cv.v_to_pin(v, q)[:2]
    _close(with_arm - without - ours, 0.4 * v[2] * np.r_[u[1], -u[0], 0.0], "the gap")
    assert abs(v[2] * u[1]) > 0.1  # the velocity term is not negligible here


PLANAR_URDF = """<robot name="cart">
  <link name="ground"/>
  <link name="cart"><inertial><origin xyz="0.1 -0.05 0.2"/><mass value="4"/>
    <inertia ixx="0.2" iyy="0.3" izz="0.4" ixy="0.01" ixz="0" iyz="0.02"/></inertial></link>
  <link name="pole"><inertial><origin xyz="0 0 0.5"/><mass value="1"/>
    <inertia ixx="0.08" iyy="0.08" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="base" type="planar"><parent link="ground"/><child link="cart"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>
  <joint name="hinge" type="revolute"><parent link="cart"/><child link="pole"/><origin xyz="0.2 0 0.3"/>
    <axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
</robot>"""


def test_a_urdf_planar_robot_through_pinocchio_equals_load_urdf():
    """The same URDF read by Pinocchio and converted, and read by sinews' own loader: the two
    sinews models are the same (same q, v: no conversion between them), and both match
    Pinocchio after PinocchioCoordinates."""
    pm = pin.buildModelFromXML(PLANAR_URDF)
    assert pm.joints[1].shortname() == "JointModelPlanar"
    m1 = from_pinocchio(pm)
    m2 = sinews.load_urdf(PLANAR_URDF)
    assert m1.nq == m2.nq == 4 and m1.body("base").joint.kind == m2.body("cart").joint.kind == "Planar"
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = rng.uniform(-2, 2, 4)
        v, tau = rng.standard_normal((2, 4))
        _close(sinews.crba(m1, q), sinews.crba(m2, q), "crba")
        _close(sinews.aba(m1, q, v, tau), sinews.aba(m2, q, v, tau), "aba")
    np.testing.assert_array_equal(m1.lower_position_limit, m2.lower_position_limit)
    _check(pm, m1, rng)
