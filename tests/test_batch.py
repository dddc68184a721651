"""sinews.batch: bit-identical to the single-state functions, independent of the thread count and
of the chunking, close to Pinocchio, and errors that name the argument and the state."""

from __future__ import annotations

import subprocess
import sys

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sinews
import sinews._batch_kernels as BK
import sinews.batch as B
from sinews import joints
from sinews._checks import NonFiniteResultError
from sinews.constraints import ConstraintSet, forward_dynamics_constraints
from sinews.sample_models import quadruped12, random_tree
from sinews.spatial import SpatialInertia, Transform, exp_so3

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALL_JOINTS = ["RX", "Revolute", "Prismatic", "Helical", "Spherical", "FreeFlyer", "Planar", "EulerZYX",
              "MultiAxis", "Fixed"]


def same(a, b):
    """Bit for bit (the sign of zero included)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def _tree(seed, n=8):
    """A random tree of every joint type, with fixed joints (bodies offset from their link) and
    frames with and without a placement."""
    m = random_tree(n, seed, joint_types=ALL_JOINTS)
    rng = np.random.default_rng(seed)
    m.add_frame("tip", m.nbodies - 1, Transform(exp_so3(rng.normal(size=3)), rng.normal(size=3)))
    m.add_frame("plain", 1)
    return m


def _states(m, n, seed=0, spread=2.0):
    rng = np.random.default_rng(seed)
    Q = np.array([sinews.random_configuration(m, rng, -spread, spread) for _ in range(n)]).reshape(n, m.nq)
    V = rng.normal(size=(n, m.nv))
    A = rng.normal(size=(n, m.nv))
    F = rng.normal(size=(n, m.nbodies, 6))
    F[:, 0] = 0.0
    return Q, V, A, F


def _loop(f, n):
    return np.array([f(i) for i in range(n)])


def _check_all(m, Q, V, A, F):
    """Every batch function against a loop of its single-state function (bit for bit)."""
    n = Q.shape[0]
    body = m.nbodies - 1
    point = np.array([0.1, -0.2, 0.3])
    assert same(B.rnea(m, Q, V, A), _loop(lambda i: sinews.rnea(m, Q[i], V[i], A[i]), n).reshape(n, m.nv))
    assert same(B.rnea(m, Q, V, A, F), _loop(lambda i: sinews.rnea(m, Q[i], V[i], A[i], F[i]), n).reshape(n, m.nv))
    tau = B.rnea(m, Q, V, A, F[0] if n else None)
    assert same(tau, _loop(lambda i: sinews.rnea(m, Q[i], V[i], A[i], F[0]), n).reshape(n, m.nv))
    assert same(B.aba(m, Q, V, tau), _loop(lambda i: sinews.aba(m, Q[i], V[i], tau[i]), n).reshape(n, m.nv))
    assert same(B.aba(m, Q, V, tau, F), _loop(lambda i: sinews.aba(m, Q[i], V[i], tau[i], F[i]), n).reshape(n, m.nv))
    assert same(B.crba(m, Q), _loop(lambda i: sinews.crba(m, Q[i]), n).reshape(n, m.nv, m.nv))
    P = B.forward_kinematics(m, Q)
    single = [sinews.forward_kinematics(m, Q[i]) for i in range(n)]
    for attr in ("R", "p", "frame_R", "frame_p"):
        got = getattr(P, attr)
        assert same(got, np.array([getattr(s, attr) for s in single]).reshape(got.shape))
    for fn, args in ((B.point_jacobian, (body, point)), (B.point_jacobian_6d, (body, point)),
                     (B.point_jacobian, (0, point)), (B.point_jacobian, (1,))):
        got = fn(m, Q, *args)
        assert same(got, _loop(lambda i: getattr(sinews, fn.__name__)(m, Q[i], *args), n).reshape(got.shape))
    for frame in ("local", "world", "local_world_aligned"):
        got = B.body_jacobian(m, Q, body, frame)
        assert same(got, _loop(lambda i: sinews.body_jacobian(m, Q[i], body, frame), n).reshape(got.shape))
        for f in m.frames:
            got = B.frame_jacobian(m, Q, f.name, frame)
            assert same(got, _loop(lambda i: sinews.frame_jacobian(m, Q[i], f.name, frame), n).reshape(got.shape))
    assert same(B.com_jacobian(m, Q), _loop(lambda i: sinews.com_jacobian(m, Q[i]), n).reshape(n, 3, m.nv))
    assert same(B.center_of_mass(m, Q), _loop(lambda i: sinews.center_of_mass(m, Q[i]), n).reshape(n, 3))
    assert same(B.com_velocity(m, Q, V), _loop(lambda i: sinews.com_velocity(m, Q[i], V[i]), n).reshape(n, 3))


def test_batch_matches_single_state_calls_bit_for_bit():
    m = _tree(3, 10)
    _check_all(m, *_states(m, 9, seed=1))
    m = quadruped12()
    _check_all(m, *_states(m, 5, seed=2))


@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    size=st.integers(1, 7),
    n=st.integers(0, 6),
    data=st.data(),
)
def test_batch_property_random_trees_and_arrays(seed, size, n, data):
    m = _tree(seed, size)
    Q, _, _, F = _states(m, n, seed)
    real = st.floats(-50.0, 50.0, allow_nan=False, allow_infinity=False)
    V = data.draw(hnp.arrays(np.float64, (n, m.nv), elements=real), label="v")
    A = data.draw(hnp.arrays(np.float64, (n, m.nv), elements=real), label="a")
    _check_all(m, Q, V, A, F)


def test_results_do_not_depend_on_threads_or_chunks(monkeypatch):
    m = quadruped12()
    Q, V, A, F = _states(m, 23, seed=4)

    def everything():
        tau = B.rnea(m, Q, V, A, F)
        return [tau, B.aba(m, Q, V, tau, F), B.crba(m, Q), B.forward_kinematics(m, Q).p,
                B.point_jacobian(m, Q, "FL_shank", (0, 0, -0.25)), B.com_jacobian(m, Q), B.center_of_mass(m, Q)]

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = everything()
        if numba.config.NUMBA_NUM_THREADS >= 2:
            numba.set_num_threads(2)
            for a, b in zip(one, everything()):
                assert same(a, b)
    finally:
        numba.set_num_threads(before)
    monkeypatch.setattr(BK, "MIN_CHUNK", 1)
    for chunks in (3, 5, 23, 40):  # more chunks than cores: the split does not matter either
        monkeypatch.setattr(B, "_threads", lambda: chunks)
        for a, b in zip(one, everything()):
            assert same(a, b)


def _contact_set(m, redundant=False):
    cs = ConstraintSet()
    for leg in ("FL", "FR", "HL", "HR"):
        for k, n in enumerate(np.eye(3)):
            cs.add_contact_constraint(f"{leg}_shank", [0, 0, -0.25], n, name=leg if k == 0 else None)
    if redundant:
        cs.add_contact_constraint("FL_shank", [0, 0, -0.25], (0, 0, 1), name="again")
    return cs


@pytest.mark.parametrize("redundant", [False, True])
def test_contacts_match_the_single_state_compiled_path(redundant, monkeypatch):
    m = quadruped12()
    cs = _contact_set(m, redundant)
    cs.enable_baumgarte("FL", time_constant=0.05)
    Q, V, T, F = _states(m, 7, seed=5, spread=1.0)
    for f_ext, fi in ((None, lambda i: None), (F, lambda i: F[i]), ({"FR_shank": F[0, 1]}, lambda i: {"FR_shank": F[0, 1]})):
        r = B.forward_dynamics_contacts(m, Q, V, T, cs, f_ext=f_ext)
        ref = [forward_dynamics_constraints(m, Q[i], V[i], T[i], cs, "range_space_sparse", fi(i)) for i in range(7)]
        assert same(r.qdd, [x.qdd for x in ref]) and same(r.multipliers, [x.multipliers for x in ref])
        assert same(r.constraint_residual, [x.constraint_residual for x in ref])
        assert list(r.converged) == [x.converged for x in ref]
        assert list(r.least_squares) == [x.least_squares for x in ref] == [redundant] * 7
    monkeypatch.setattr(BK, "MIN_CHUNK", 1)
    monkeypatch.setattr(B, "_threads", lambda: 3)
    again = B.forward_dynamics_contacts(m, Q, V, T, cs, f_ext=F)
    assert same(again.qdd, [forward_dynamics_constraints(m, Q[i], V[i], T[i], cs, "range_space_sparse", F[i]).qdd
                            for i in range(7)])


def test_contacts_refuse_other_sets_and_bad_states():
    m = quadruped12()
    loop = ConstraintSet()
    loop.add_loop_constraint("FL_shank", "FR_shank", Transform.identity(), Transform.identity(), np.eye(6)[3])
    Q, V, T, _ = _states(m, 3, seed=6, spread=1.0)
    with pytest.raises(ValueError, match="only of point contacts"):
        B.forward_dynamics_contacts(m, Q, V, T, loop)
    with pytest.raises(ValueError, match="ConstraintSet"):
        B.forward_dynamics_contacts(m, Q, V, T, "cs")
    cs = _contact_set(m)
    T[2, 4] = np.nan
    with pytest.raises(ValueError, match=r"^tau\[2\] contains NaN"):
        B.forward_dynamics_contacts(m, Q, V, T, cs)


def test_errors_name_the_argument_and_the_state():
    m = quadruped12()
    Q, V, A, F = _states(m, 6, seed=7)
    bad = Q.copy()
    bad[3, 10] = np.nan
    for call in (lambda q: B.rnea(m, q, V, A), lambda q: B.aba(m, q, V, A), lambda q: B.crba(m, q),
                 lambda q: B.forward_kinematics(m, q), lambda q: B.point_jacobian(m, q, 2),
                 lambda q: B.com_jacobian(m, q), lambda q: B.center_of_mass(m, q), lambda q: B.point_jacobian(m, q, 0)):
        with pytest.raises(ValueError, match=r"^q\[3\] contains NaN or infinity"):
            call(bad)
    zero = Q.copy()
    zero[4, 3:7] = 0.0
    for call in (lambda q: B.aba(m, q, V, A), lambda q: B.forward_kinematics(m, q), lambda q: B.point_jacobian(m, q, 0)):
        with pytest.raises(ValueError, match=r"^q\[4\]\[3:7\] is a zero \(or subnormal\) quaternion"):
            call(zero)
    v = V.copy()
    v[5, 0] = np.inf
    with pytest.raises(ValueError, match=r"^v\[5\] contains NaN"):
        B.aba(m, Q, v, A)
    with pytest.raises(ValueError, match=r"^a\[1\] contains NaN"):
        B.rnea(m, Q, V, np.where(np.arange(6)[:, None] == 1, np.nan, A))
    f = F.copy()
    f[2, 3, 1] = np.nan
    with pytest.raises(ValueError, match=r"^f_ext\[2\] contains NaN"):
        B.rnea(m, Q, V, A, f)
    f = F.copy()
    f[1, 0, 0] = 1.0
    with pytest.raises(ValueError, match=r"^f_ext\[1\]\[0\] is the world"):
        B.aba(m, Q, V, A, f)
    with pytest.raises(ValueError, match=r"f_ext must have shape \(6, 14, 6\)"):
        B.aba(m, Q, V, A, F[:2])
    with pytest.raises(ValueError, match="f_ext"):
        B.aba(m, Q, V, A, F[0, 0])
    big = V.copy()
    big[2] *= 1e300
    with pytest.raises(NonFiniteResultError, match=r"q\[2\], v\[2\]"):
        B.rnea(m, Q, big, A)
    # shapes and dtypes, checked once per call
    with pytest.raises(ValueError, match=r"^q must have shape \(any, 19\)"):
        B.crba(m, Q[0])
    with pytest.raises(ValueError, match=r"^v must have shape \(6, 18\)"):
        B.rnea(m, Q, V[:5], A)
    with pytest.raises(ValueError, match=r"^tau must contain real numbers"):
        B.aba(m, Q, V, A.astype(complex))
    with pytest.raises(ValueError, match=r"^q must contain real numbers"):
        B.crba(m, Q > 0)
    with pytest.raises(ValueError, match="out must be"):
        B.aba(m, Q, V, A, out=np.empty((6, 17)))
    with pytest.raises(ValueError, match="model must be"):
        B.crba("model", Q)
    with pytest.raises(ValueError, match="frame must be"):
        B.body_jacobian(m, Q, 1, "body")
    with pytest.raises(ValueError, match="point contains NaN"):
        B.point_jacobian(m, Q, 1, (0, np.nan, 0))
    with pytest.raises(KeyError):
        B.point_jacobian(m, Q, "nope")
    # integers are real numbers; preallocated outputs are filled in place
    out = np.empty((6, m.nv))
    assert B.aba(m, Q, V.astype(np.int64), A, out=out) is out
    assert same(out, B.aba(m, Q, V.astype(np.int64).astype(float), A))


def test_singular_articulated_inertia_names_state_and_body():
    m = sinews.Model()
    m.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (0.5, 0, 0), np.eye(3)), "heavy")
    m.add_body(1, joints.RevoluteZ(), None, SpatialInertia.zero(), "massless")
    Q = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"^state 0 .*body 'massless'"):
        B.aba(m, Q, Q, Q)
    with pytest.raises(ValueError, match="no mass"):
        B.center_of_mass(sinews.Model(), np.zeros((2, 0)))


def test_edge_shapes():
    m = quadruped12()
    empty = np.zeros((0, m.nq))
    z = np.zeros((0, m.nv))
    assert B.rnea(m, empty, z, z).shape == (0, m.nv)
    assert B.crba(m, empty).shape == (0, m.nv, m.nv)
    assert B.forward_kinematics(m, empty).R.shape == (0, m.nbodies, 3, 3)
    assert B.point_jacobian(m, empty, 3).shape == (0, 3, m.nv)
    assert B.center_of_mass(m, empty).shape == (0, 3)
    # a model without moving bodies: nothing to compute, but the shapes hold
    w = sinews.Model()
    w.add_body(0, joints.Fixed(), Transform.rot_x(0.3, (1, 0, 0)), SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "w")
    Q = np.zeros((4, 0))
    assert B.aba(w, Q, Q, Q).shape == (4, 0)
    P = B.forward_kinematics(w, Q)
    single = sinews.forward_kinematics(w, np.zeros(0))
    assert np.array_equal(P.R[2], single.R) and np.array_equal(P.p[3], single.p)
    assert P.state(1).body("w").p.tolist() == single.body("w").p.tolist()
    assert B.point_jacobian(w, Q, "w").shape == (4, 3, 0)


def test_placements_accessors():
    m = _tree(5, 6)
    Q = _states(m, 4, seed=5)[0]
    P = B.forward_kinematics(m, Q)
    assert len(P) == 4
    R, p = P.body(m.nbodies - 1)
    assert R.shape == (4, 3, 3) and p.shape == (4, 3)
    s = sinews.forward_kinematics(m, Q[2])
    assert np.array_equal(P.frame("tip")[1][2], s.frame("tip").p)
    assert np.array_equal(P.state(2).frame("plain").R, s.frame("plain").R)


def test_agrees_with_pinocchio_on_the_humanoid():
    pin = pytest.importorskip("pinocchio")
    from sinews.interop import PinocchioCoordinates, from_pinocchio

    pm = pin.buildSampleModelHumanoid()
    pd = pm.createData()
    m = from_pinocchio(pm)
    cv = PinocchioCoordinates(m)
    Q, V, A, _ = _states(m, 8, seed=8, spread=1.0)
    tau = B.rnea(m, Q, V, A)
    qdd = B.aba(m, Q, V, tau)
    M = B.crba(m, Q)
    body = m.bodies[-1]
    point = np.array([0.0, 0.0, 0.1])
    Jp = B.point_jacobian(m, Q, body.id, point)
    com, Jc = B.center_of_mass(m, Q), B.com_jacobian(m, Q)
    P = B.forward_kinematics(m, Q)
    jid = pm.getJointId(body.name)
    fid = pm.addFrame(pin.Frame("batch_point", jid, pin.SE3(np.eye(3), point), pin.FrameType.OP_FRAME))
    pd = pm.createData()
    for i in range(8):
        q, vp, ap = Q[i], cv.v_to_pin(V[i]), cv.v_to_pin(A[i])
        np.testing.assert_allclose(tau[i], cv.v_from_pin(pin.rnea(pm, pd, q, vp, ap)), atol=1e-9)
        np.testing.assert_allclose(qdd[i], A[i], atol=1e-8)
        np.testing.assert_allclose(cv.v_to_pin(qdd[i]), pin.aba(pm, pd, q, vp, cv.v_to_pin(tau[i])), atol=1e-8)
        Mp = pin.crba(pm, pd, q)
        np.testing.assert_allclose(M[i], cv.matrix_from_pin(np.triu(Mp) + np.triu(Mp, 1).T), atol=1e-10)
        J = pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
        np.testing.assert_allclose(Jp[i], cv.columns_from_pin(J), atol=1e-10)
        np.testing.assert_allclose(com[i], pin.centerOfMass(pm, pd, q), atol=1e-12)
        np.testing.assert_allclose(Jc[i], cv.columns_from_pin(pin.jacobianCenterOfMass(pm, pd, q)), atol=1e-12)
        pin.forwardKinematics(pm, pd, q)
        oM = pd.oMi[jid]
        R, p = P.body(body.id)
        np.testing.assert_allclose(R[i], oM.rotation, atol=1e-12)
        np.testing.assert_allclose(p[i], oM.translation, atol=1e-12)


def test_import_compiles_nothing():
    code = ("import sinews.batch, sinews._batch_kernels as K; "
            "assert K._workers is None and K._driver is None, 'compiled at import'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_concurrent_calls_from_python_threads_match_serial():
    from concurrent.futures import ThreadPoolExecutor

    m = quadruped12()
    Q, V, A, F = _states(m, 30, seed=9)
    ref = B.aba(m, Q, V, A, F)
    ref_fk = B.forward_kinematics(m, Q).p
    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(lambda k: (B.aba(m, Q, V, A, F), B.forward_kinematics(m, Q).p), range(8)))
    assert all(same(a, ref) and same(p, ref_fk) for a, p in outs)


def test_bench_batch_runs_and_agrees():
    pytest.importorskip("pinocchio")
    from sinews.bench import batch as bench

    rows, problems = bench.run(n_states=12, runs=1, repeat=1, use_mujoco=False)
    assert not problems
    assert {r["algorithm"] for r in rows} == {"aba", "rnea", "crba"}
    assert all(r["ratio_median"] > 0 for r in rows)


def test_mjcf_export_reproduces_aba():
    mujoco = pytest.importorskip("mujoco")
    from sinews.bench.batch import MujocoMap, to_mjcf

    m = random_tree(6, 3, joint_types=["RX", "Revolute", "Prismatic", "Spherical", "Fixed"])
    mjm = mujoco.MjModel.from_xml_string(to_mjcf(m))
    mjd = mujoco.MjData(mjm)
    mp = MujocoMap(m, mjm)
    Q, V, T, _ = _states(m, 3, seed=10, spread=1.0)
    qdd = B.aba(m, Q, V, T)
    for i in range(3):
        mjd.qpos[:], mjd.qvel[:], mjd.qfrc_applied[:] = mp.state(Q[i], V[i], T[i])
        mujoco.mj_forward(mjm, mjd)
        np.testing.assert_allclose(mp.qdd(Q[i], V[i], mjd.qacc), qdd[i], atol=1e-8 * (1 + np.abs(qdd[i]).max()))
