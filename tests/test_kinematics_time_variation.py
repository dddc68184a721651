"""Jacobian time derivatives (``frame_jacobian_time_variation``, ``point_jacobian_time_variation``)
against Pinocchio's ``getFrameJacobianTimeVariation`` (after ``computeJointJacobiansTimeVariation``)
on the humanoid and random trees with every joint type (free-flyer, spherical, helical, planar,
Euler and multi-axis composites); independently against central differences of our own Jacobian
along the motion; and ``J a + dJ/dt v`` against the frame's spatial and classical accelerations."""

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sinews
from sinews import joints as J
from sinews.interop import PinocchioCoordinates, from_pinocchio, to_pinocchio
from sinews.sample_models import JOINT_FACTORIES, random_tree

REFS = (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED))


def close(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(1.0, np.abs(b).max(initial=0.0))
    err = np.abs(a - b).max(initial=0.0)
    assert err <= tol * scale, f"max error {err:.3e} (scale {scale:.3e})"


def _models():
    pm = pin.buildSampleModelHumanoid()
    yield "humanoid", from_pinocchio(pm), pm
    rare = ["FreeFlyer", "Spherical", "Helical", "Prismatic", "Revolute"]
    for seed in range(5):
        m = random_tree(12, 20 + seed, joint_types=list(JOINT_FACTORIES) if seed < 4 else rare)
        for b in m.bodies[1::2]:  # frames off the body origins
            m.add_frame(f"f{b.id}", b.id, sinews.Transform.from_rpy(0.3, -0.2, 0.5, [0.1, -0.2, 0.3]))
        yield f"random{seed}", m, to_pinocchio(m)


CASES = list(_models())


@pytest.fixture(params=range(len(CASES)), ids=[c[0] for c in CASES])
def case(request):
    name, m, pm = CASES[request.param]
    rng = np.random.default_rng(request.param)
    q = sinews.random_configuration(m, rng, -1.5, 1.5)
    v = rng.normal(size=m.nv)
    a = rng.normal(size=m.nv)
    return m, pm, PinocchioCoordinates(m), q, v, a


def test_every_joint_type_is_covered():
    codes = {b.joint.code for _, m, _ in CASES[1:] for b in m.bodies[1:]}
    assert {J.JT_FREEFLYER, J.JT_SPHERICAL, J.JT_HELICAL, J.JT_MULTIAXIS, J.JT_PRISMATIC, J.JT_REVOLUTE} <= codes
    kinds = {b.joint.kind for _, m, _ in CASES[1:] for b in m.bodies[1:] if b.joint.code == J.JT_MULTIAXIS}
    assert len(kinds) >= 3, kinds  # planar, Euler angles, translations, general multi-axis


def _through_multi_axis(m, body):
    """Whether a multi-axis joint (a Pinocchio JointModelComposite) supports ``body``."""
    while body:
        b = m.bodies[body]
        if b.joint.code == J.JT_MULTIAXIS:
            return True
        body = b.parent
    return False


def test_matches_pinocchio_in_three_reference_frames(case):
    """Exactly Pinocchio's values for every joint type except the composites: for a column of a
    JointModelComposite, Pinocchio's dJ treats the axis as fixed in the joint's child frame
    (so that its ``dJ v + J a`` is not its own frame acceleration); ours is the derivative
    (checked by finite differences and against Pinocchio's accelerations below)."""
    m, pm, cv, q, v, a = case
    pd = pm.createData()
    pin.computeJointJacobiansTimeVariation(pm, pd, q, cv.v_to_pin(v))
    pin.updateFramePlacements(pm, pd)
    for f in m.frames:
        if _through_multi_axis(m, f.body):
            continue
        fid = pm.getFrameId(f.name)
        for ours, ref in REFS:
            want = cv.rows6_from_pin(cv.columns_from_pin(pin.getFrameJacobianTimeVariation(pm, pd, fid, ref)))
            close(sinews.frame_jacobian_time_variation(m, q, v, f.name, ours), want, 1e-10)
            close(sinews.frame_jacobian_time_variation(m, q, v, f.id, ours, data=m.data()), want, 1e-10)


def test_pinocchio_comparison_covers_every_other_joint_type():
    codes = set()
    for _, m, _ in CASES:
        for f in m.frames:
            body = f.body
            if _through_multi_axis(m, body):
                continue
            while body:
                codes.add(m.bodies[body].joint.code)
                body = m.bodies[body].parent
    assert {J.JT_FREEFLYER, J.JT_SPHERICAL, J.JT_HELICAL, J.JT_PRISMATIC, J.JT_REVOLUTE} <= codes, codes


def test_is_the_derivative_along_the_motion(case):
    """Central differences of our own frame_jacobian along q(t) = integrate(q, v t)."""
    m, pm, cv, q, v, a = case
    h = 1e-6
    qp, qm = sinews.integrate(m, q, v, h), sinews.integrate(m, q, v, -h)
    for f in m.frames[:: max(1, len(m.frames) // 6)]:
        for ours, _ in REFS:
            fd = (sinews.frame_jacobian(m, qp, f.name, ours) - sinews.frame_jacobian(m, qm, f.name, ours)) / (2 * h)
            close(sinews.frame_jacobian_time_variation(m, q, v, f.name, ours), fd, 1e-6)
        b = m.bodies[-1]
        r = np.array([0.05, -0.1, 0.2])
        fd = (sinews.point_jacobian_6d(m, qp, b.id, r) - sinews.point_jacobian_6d(m, qm, b.id, r)) / (2 * h)
        close(sinews.point_jacobian_time_variation_6d(m, q, v, b.id, r), fd, 1e-6)


def test_gives_the_spatial_and_classical_accelerations(case):
    m, pm, cv, q, v, a = case
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q, cv.v_to_pin(v), cv.v_to_pin(a))
    pin.updateFramePlacements(pm, pd)
    for f in m.frames:
        fid = pm.getFrameId(f.name)
        for ours, ref in REFS:
            acc = sinews.frame_jacobian(m, q, f.name, ours) @ a + sinews.frame_jacobian_time_variation(m, q, v, f.name, ours) @ v
            if ours == "local_world_aligned":
                want = pin.getFrameClassicalAcceleration(pm, pd, fid, ref).vector
            else:
                want = pin.getFrameAcceleration(pm, pd, fid, ref).vector
            close(acc, np.r_[want[3:], want[:3]], 1e-10)
        # a point of the frame's body: the classical acceleration of sinews' own RNEA-based path
        r = f.X_body_frame.p + np.array([0.1, 0.0, -0.05])
        acc6 = sinews.point_jacobian_6d(m, q, f.body, r) @ a + sinews.point_jacobian_time_variation_6d(m, q, v, f.body, r) @ v
        close(acc6, sinews.point_acceleration_6d(m, q, v, a, f.body, r), 1e-10)
        acc3 = sinews.point_jacobian(m, q, f.body, r) @ a + sinews.point_jacobian_time_variation(m, q, v, f.body, r) @ v
        close(acc3, sinews.point_acceleration(m, q, v, a, f.body, r), 1e-10)


def test_point_version_is_the_aligned_frame_version():
    name, m, pm = CASES[1]
    rng = np.random.default_rng(5)
    q = sinews.random_configuration(m, rng)
    v = rng.normal(size=m.nv)
    f = m.frames[-1]
    lwa = sinews.frame_jacobian_time_variation(m, q, v, f.name, "local_world_aligned")
    pt = sinews.point_jacobian_time_variation_6d(m, q, v, f.body, f.X_body_frame.p)
    close(pt, lwa, 1e-13)
    close(sinews.point_jacobian_time_variation(m, q, v, f.body, list(f.X_body_frame.p)), lwa[3:], 1e-13)
    # zero velocity: no variation; a body welded to the world: none either
    assert not np.any(sinews.frame_jacobian_time_variation(m, q, np.zeros(m.nv), f.name))


def test_frame_on_a_body_welded_to_the_world():
    m = sinews.Model()
    plate = m.add_body(0, sinews.joints.Fixed(), sinews.Transform.translation([1.0, 0.0, 0.0]), name="plate")
    m.add_body(0, sinews.joints.RevoluteZ(), inertia=sinews.SpatialInertia.from_rod(1.0, 1.0))
    m.add_frame("on_plate", plate, sinews.Transform.translation([0.0, 2.0, 0.0]))
    for ref in ("local", "world", "local_world_aligned"):
        dJ = sinews.frame_jacobian_time_variation(m, [0.3], [2.0], "on_plate", ref)
        assert dJ.shape == (6, 1) and not np.any(dJ)


# ------------------------------------------------------------------------------------------
# errors


@pytest.fixture(scope="module")
def zoo():
    m = random_tree(6, 0, joint_types=["RX", "Spherical", "FreeFlyer", "Prismatic", "Planar", "Helical"])
    m.add_frame("tool", m.nbodies - 1)
    return m


def test_bad_arguments(zoo):
    q = sinews.neutral(zoo)
    v = np.zeros(zoo.nv)
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="q contains NaN"):
        sinews.frame_jacobian_time_variation(zoo, bad, v, "tool")
    with pytest.raises(ValueError, match="v contains NaN"):
        sinews.frame_jacobian_time_variation(zoo, q, np.full(zoo.nv, np.inf), "tool")
    with pytest.raises(ValueError, match="v must have shape"):
        sinews.frame_jacobian_time_variation(zoo, q, v[:-1], "tool")
    with pytest.raises(ValueError, match="q must have shape"):
        sinews.frame_jacobian_time_variation(zoo, q[:-1], v, "tool")
    with pytest.raises(ValueError, match="reference must be"):
        sinews.frame_jacobian_time_variation(zoo, q, v, "tool", "body")
    with pytest.raises(KeyError):
        sinews.frame_jacobian_time_variation(zoo, q, v, "nope")
    with pytest.raises(KeyError):
        sinews.frame_jacobian_time_variation(zoo, q, v, True)
    with pytest.raises(ValueError, match="point contains NaN"):
        sinews.point_jacobian_time_variation(zoo, q, v, 2, [np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="v contains NaN"):
        sinews.point_jacobian_time_variation_6d(zoo, q, np.full(zoo.nv, np.nan), 2)
    with pytest.raises(KeyError):
        sinews.point_jacobian_time_variation(zoo, q, v, "nope")
    q32 = q.astype(np.float32)  # converted by the checked path, like every algorithm
    np.testing.assert_allclose(sinews.frame_jacobian_time_variation(zoo, q32, v, "tool"),
                               sinews.frame_jacobian_time_variation(zoo, q32.astype(float), v, "tool"))


# ------------------------------------------------------------------------------------------
# properties

_ZOO = random_tree(7, 11, joint_types=list(JOINT_FACTORIES))
_ZOO.add_frame("tip", _ZOO.nbodies - 1, sinews.Transform.from_rpy(0.1, 0.2, 0.3, [0.2, 0.0, -0.1]))
_finite = st.floats(-3.0, 3.0, allow_nan=False)


@settings(max_examples=30, deadline=None)
@given(q=hnp.arrays(np.float64, _ZOO.nq, elements=_finite), v=hnp.arrays(np.float64, _ZOO.nv, elements=_finite))
def test_three_references_are_one_derivative(q, v):
    m = _ZOO
    q = sinews.normalize(m, q + 1e-3)
    X = sinews.frame_placement(m, q, "tip")
    Jw, Ja = sinews.frame_jacobian(m, q, "tip", "world"), sinews.frame_jacobian(m, q, "tip", "local_world_aligned")
    dw = sinews.frame_jacobian_time_variation(m, q, v, "tip", "world")
    da = sinews.frame_jacobian_time_variation(m, q, v, "tip", "local_world_aligned")
    dl = sinews.frame_jacobian_time_variation(m, q, v, "tip", "local")
    omega = Ja[:3] @ v
    pdot = Ja[3:] @ v
    # aligned = world moved to the moving point p:  d/dt (v - p x w) = dv - p x dw - pdot x w
    np.testing.assert_allclose(da[:3], dw[:3], atol=1e-9)
    np.testing.assert_allclose(da[3:], dw[3:] - np.cross(X.p, dw[:3].T).T - np.cross(pdot, Jw[:3].T).T, atol=1e-8)
    # local = R^T (aligned - omega x aligned)
    np.testing.assert_allclose(dl[:3], X.R.T @ (da[:3] - np.cross(omega, Ja[:3].T).T), atol=1e-8)
    np.testing.assert_allclose(dl[3:], X.R.T @ (da[3:] - np.cross(omega, Ja[3:].T).T), atol=1e-8)


def test_threads_get_their_own_workspaces():
    """Calls without ``data=`` from several threads at once give the serial results."""
    from concurrent.futures import ThreadPoolExecutor

    name, m, pm = CASES[0]
    rng = np.random.default_rng(3)
    states = [(sinews.random_configuration(m, rng), rng.normal(size=m.nv)) for _ in range(16)]
    f = m.frames[-1].name

    def work(s):
        q, v = s
        return (sinews.frame_jacobian_time_variation(m, q, v, f, "world"), sinews.frame_jacobian(m, q, f),
                sinews.forward_kinematics(m, q).frame_p, sinews.com_jacobian(m, q))

    serial = [work(s) for s in states]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            for got, want in zip(pool.map(work, states), serial):
                for a, b in zip(got, want):
                    np.testing.assert_array_equal(a, b)
