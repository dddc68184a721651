"""The kinematics kernels (placements, frame and point Jacobians in three reference frames,
centre of mass) against Pinocchio, on the humanoid and random trees with every joint type;
argument errors; property tests over the array arguments."""

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sinews
from sinews.joints import JT_FREEFLYER, JT_SPHERICAL
from sinews.interop import PinocchioCoordinates, from_pinocchio, to_pinocchio
from sinews.sample_models import JOINT_FACTORIES, random_tree

TOL = 1e-12
REFS = (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED))


def close(a, b, tol=TOL):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(1.0, np.abs(b).max(initial=0.0))
    err = np.abs(a - b).max(initial=0.0)
    assert err <= tol * scale, f"max error {err:.3e} (scale {scale:.3e})"


def _models():
    pm = pin.buildSampleModelHumanoid()
    yield "humanoid", from_pinocchio(pm), pm
    for seed in range(6):
        m = random_tree(14, seed, joint_types=list(JOINT_FACTORIES))
        for b in m.bodies[1::3]:  # frames on some bodies, off their origin
            m.add_frame(f"f{b.id}", b.id, sinews.Transform.from_rpy(0.3, -0.2, 0.5, [0.1, -0.2, 0.3]))
        yield f"random{seed}", m, to_pinocchio(m)


CASES = list(_models())


@pytest.fixture(params=range(len(CASES)), ids=[c[0] for c in CASES])
def case(request):
    name, m, pm = CASES[request.param]
    q = sinews.random_configuration(m, np.random.default_rng(request.param), -1.5, 1.5)
    return m, pm, pm.createData(), PinocchioCoordinates(m), q


def test_every_joint_type_is_covered():
    types = {type(b.joint).__name__ + repr(b.joint)[:12] for _, m, _ in CASES[1:] for b in m.bodies[1:]}
    assert len(types) >= 8


def test_placements_of_bodies_and_frames(case):
    m, pm, pd, cv, q = case
    pin.framesForwardKinematics(pm, pd, q)
    pl = sinews.forward_kinematics(m, q)
    assert pl.R.shape == (m.nbodies, 3, 3) and pl.frame_p.shape == (len(m.frames), 3)
    for f in m.frames:
        oM = pd.oMf[pm.getFrameId(f.name)]
        close(pl.frame(f.name).R, oM.rotation)
        close(pl.frame(f.name).p, oM.translation)
        X = sinews.frame_placement(m, q, f.name)
        close(X.R, oM.rotation)
        close(X.p, oM.translation)
    for b in m.bodies[1:]:
        oM = pd.oMf[pm.getFrameId(b.name)] if pm.existFrame(b.name) else pd.oMi[pm.getJointId(b.name)]
        close(pl.R[b.id], oM.rotation)
        close(pl.p[b.id], oM.translation)
        X = sinews.body_placement(m, q, b.name)
        close(X.R, oM.rotation)
        close(X.p, oM.translation)


def test_frame_jacobians_in_three_reference_frames(case):
    m, pm, pd, cv, q = case
    pin.computeJointJacobians(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    for f in m.frames:
        fid = pm.getFrameId(f.name)
        for ours, ref in REFS:
            want = cv.rows6_from_pin(cv.columns_from_pin(pin.getFrameJacobian(pm, pd, fid, ref)))
            close(sinews.frame_jacobian(m, q, f.name, ours), want)
            close(sinews.frame_jacobian(m, q, f.id, ours), want)
            one_shot = pin.computeFrameJacobian(pm, pm.createData(), q, fid, ref)
            close(sinews.frame_jacobian(m, q, f.name, ours), cv.rows6_from_pin(cv.columns_from_pin(one_shot)))
        # a point of the frame's body: the frame origin, LOCAL_WORLD_ALIGNED
        lwa = cv.rows6_from_pin(cv.columns_from_pin(pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)))
        close(sinews.point_jacobian_6d(m, q, f.body, f.X_body_frame.p), lwa)
        close(sinews.point_jacobian(m, q, f.body, f.X_body_frame.p), lwa[3:])


def test_body_jacobians(case):
    m, pm, pd, cv, q = case
    pin.computeJointJacobians(pm, pd, q)
    for b in m.bodies[1:]:
        if b.joint.code < 0 or not pm.existJointName(b.name):
            continue
        jid = pm.getJointId(b.name)
        for ours, ref in REFS:
            want = cv.rows6_from_pin(cv.columns_from_pin(pin.getJointJacobian(pm, pd, jid, ref)))
            close(sinews.body_jacobian(m, q, b.id, ours), want)


def test_center_of_mass(case):
    m, pm, pd, cv, q = case
    v = np.random.default_rng(1).normal(size=m.nv)
    pin.centerOfMass(pm, pd, q, cv.v_to_pin(v))
    close(sinews.center_of_mass(m, q), pd.com[0])
    close(sinews.com_velocity(m, q, v), pd.vcom[0])
    close(sinews.com_jacobian(m, q), cv.columns_from_pin(pin.jacobianCenterOfMass(pm, pd, q)))


def test_frames_added_after_compilation():
    m = random_tree(5, 3)
    q = sinews.neutral(m)
    sinews.forward_kinematics(m, q)  # compiles the model
    fid = m.add_frame("late", 2, sinews.Transform.translation([0.0, 0.1, 0.0]))
    pl = sinews.forward_kinematics(m, q)
    close(pl.frame("late").p, sinews.point_position(m, q, 2, [0.0, 0.1, 0.0]))
    assert sinews.frame_jacobian(m, q, fid).shape == (6, m.nv)


def test_frame_on_a_body_welded_to_the_world():
    m = sinews.Model()
    plate = m.add_body(0, sinews.joints.Fixed(), sinews.Transform.translation([1.0, 0.0, 0.0]), name="plate")
    m.add_body(0, sinews.joints.RevoluteZ(), inertia=sinews.SpatialInertia.from_rod(1.0, 1.0))
    m.add_frame("on_plate", plate, sinews.Transform.translation([0.0, 2.0, 0.0]))
    q = np.array([0.3])
    close(sinews.frame_placement(m, q, "on_plate").p, [1.0, 2.0, 0.0])
    for ref in ("local", "world", "local_world_aligned"):
        assert not np.any(sinews.frame_jacobian(m, q, "on_plate", ref))


# ------------------------------------------------------------------------------------------
# errors


@pytest.fixture(scope="module")
def zoo():
    m = random_tree(6, 0, joint_types=["RX", "Spherical", "FreeFlyer", "Prismatic", "Planar", "Helical"])
    m.add_frame("tool", m.nbodies - 1)
    return m


def _zero_quaternion(m):
    q = sinews.neutral(m)
    k = next(b for b in m.bodies[1:] if b.joint.code in (JT_SPHERICAL, JT_FREEFLYER))
    i = k.idx_q + (3 if k.joint.code == JT_FREEFLYER else 0)
    q[i : i + 4] = 0.0
    return q


@pytest.mark.parametrize(
    "call",
    [
        lambda m, q: sinews.forward_kinematics(m, q),
        lambda m, q: sinews.frame_placement(m, q, "tool"),
        lambda m, q: sinews.body_placement(m, q, m.nbodies - 1),
        lambda m, q: sinews.frame_jacobian(m, q, "tool", "world"),
        lambda m, q: sinews.point_jacobian(m, q, m.nbodies - 1, [0.0, 0.1, 0.0]),
        lambda m, q: sinews.body_jacobian(m, q, m.nbodies - 1, "local"),
        lambda m, q: sinews.center_of_mass(m, q),
        lambda m, q: sinews.com_jacobian(m, q),
    ],
)
def test_bad_q_names_q(zoo, call):
    q = sinews.neutral(zoo)
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="q contains NaN"):
        call(zoo, bad)
    with pytest.raises(ValueError, match=r"^q\["):
        call(zoo, _zero_quaternion(zoo))
    with pytest.raises(ValueError, match="q must have shape"):
        call(zoo, q[:-1])


def test_bad_arguments(zoo):
    q = sinews.neutral(zoo)
    with pytest.raises(ValueError, match="reference must be"):
        sinews.frame_jacobian(zoo, q, "tool", "body")
    with pytest.raises(ValueError, match="reference must be"):
        sinews.frame_jacobian(zoo, q, "tool", 1)
    with pytest.raises(KeyError, match="no frame named"):
        sinews.frame_jacobian(zoo, q, "nope")
    with pytest.raises(KeyError):
        sinews.frame_jacobian(zoo, q, True)
    with pytest.raises(KeyError):
        sinews.frame_placement(zoo, q, 99)
    with pytest.raises(KeyError):
        sinews.body_placement(zoo, q, "nope")
    with pytest.raises(ValueError, match="point contains NaN"):
        sinews.point_jacobian(zoo, q, 2, [np.inf, 0.0, 0.0])
    with pytest.raises(ValueError, match="point must have shape"):
        sinews.point_jacobian(zoo, q, 2, [0.0, 0.0])
    with pytest.raises(ValueError, match="v contains NaN"):
        sinews.com_velocity(zoo, q, np.full(zoo.nv, np.nan))


# ------------------------------------------------------------------------------------------
# properties


_ZOO = random_tree(7, 11, joint_types=list(JOINT_FACTORIES))
_ZOO.add_frame("tip", _ZOO.nbodies - 1, sinews.Transform.from_rpy(0.1, 0.2, 0.3, [0.2, 0.0, -0.1]))
_finite = st.floats(-3.0, 3.0, allow_nan=False)


@settings(max_examples=40)
@given(q=hnp.arrays(np.float64, _ZOO.nq, elements=_finite), v=hnp.arrays(np.float64, _ZOO.nv, elements=_finite))
def test_jacobians_map_velocities(q, v):
    m = _ZOO
    q = sinews.normalize(m, q + 1e-3) if m.nq else q
    f = m.frame("tip")
    Jw = sinews.frame_jacobian(m, q, "tip", "world")
    Jl = sinews.frame_jacobian(m, q, "tip", "local")
    Ja = sinews.frame_jacobian(m, q, "tip", "local_world_aligned")
    X = sinews.frame_placement(m, q, "tip")
    # the three references are the same velocity seen differently
    Vw, Vl, Va = Jw @ v, Jl @ v, Ja @ v
    np.testing.assert_allclose(X.R @ Vl[:3], Va[:3], atol=1e-9)
    np.testing.assert_allclose(X.R @ Vl[3:], Va[3:], atol=1e-9)
    np.testing.assert_allclose(Vw[:3], Va[:3], atol=1e-9)
    np.testing.assert_allclose(Vw[3:] + np.cross(Vw[:3], X.p), Va[3:], atol=1e-8)
    # the frame origin moves with the point velocity of the frame's body
    np.testing.assert_allclose(Va, sinews.point_velocity_6d(m, q, v, f.body, f.X_body_frame.p), atol=1e-8)
    np.testing.assert_allclose(sinews.com_jacobian(m, q) @ v, sinews.com_velocity(m, q, v), atol=1e-9)
    pl = sinews.forward_kinematics(m, q)
    np.testing.assert_allclose(pl.frame("tip").p, X.p, atol=1e-12)
    np.testing.assert_allclose(pl.frame("tip").R, X.R, atol=1e-12)
