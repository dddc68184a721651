"""sinews.load_urdf against Pinocchio's own URDF parser (``pin.buildModelFromXML``).

For every test URDF and several random states we compare the world placement of every link
and joint frame, the joint-space inertia matrix (CRBA) and inverse dynamics (RNEA).

Pinocchio uses other coordinates for some joints, so the comparison maps sinews' ``(q, v, a)``
to Pinocchio's: a continuous joint is ``(cos, sin)`` there, a planar joint ``(x, y, cos, sin)``
with a child-frame velocity ``(R^T [xd, yd], thd)``, a free-flyer velocity ``[v; omega]``.
With ``v_pin = T(q) v`` and ``a_pin = T a + Tdot v``: ``M = T^T M_pin T`` and
``tau = T^T tau_pin`` (the generalized forces are dual to the velocities).
"""

from pathlib import Path

import numpy as np
import pytest

import sinews

pin = pytest.importorskip("pinocchio")

DATA = Path(__file__).parent / "data"
CASES = [
    ("urdf_arm3.urdf", False),
    ("urdf_tree.urdf", False),
    ("urdf_floating.urdf", True),
    ("urdf_arm3.urdf", True),
    ("urdf_tree.urdf", True),
]


def _load_pair(fname, floating):
    xml = (DATA / fname).read_text()
    model = sinews.load_urdf(xml, floating_base=floating)
    if floating:
        pm = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    else:
        pm = pin.buildModelFromXML(xml)
    return model, pm


def _sinews_body_of_pin_joint(model, pm, i):
    name = pm.names[i]
    if name == "root_joint":
        return model.body(1)
    return model.body(model.frame(name).body)


def _to_pin(model, pm, q, v, a):
    """Pinocchio's (q, v, a) for sinews' state, and the velocity map T (v_pin = T v)."""
    qp = np.zeros(pm.nq)
    T = np.zeros((pm.nv, model.nv))
    Tdot = np.zeros((pm.nv, model.nv))
    for i in range(1, pm.njoints):
        jm = pm.joints[i]
        b = _sinews_body_of_pin_joint(model, pm, i)
        iq, iv = b.idx_q, b.idx_v
        pq, pv = jm.idx_q, jm.idx_v
        kind = jm.shortname()
        if kind.startswith("JointModelRUB") or kind == "JointModelRevoluteUnboundedUnaligned":
            qp[pq : pq + 2] = np.cos(q[iq]), np.sin(q[iq])
            T[pv, iv] = 1.0
        elif kind == "JointModelPlanar":
            x, y, th = q[iq : iq + 3]
            c, s = np.cos(th), np.sin(th)
            qp[pq : pq + 4] = x, y, c, s
            T[pv : pv + 2, iv : iv + 2] = [[c, s], [-s, c]]  # R(th)^T
            T[pv + 2, iv + 2] = 1.0
            thd = v[iv + 2]
            Tdot[pv : pv + 2, iv : iv + 2] = thd * np.array([[-s, c], [-c, -s]])
        elif kind == "JointModelFreeFlyer":
            qp[pq : pq + 7] = q[iq : iq + 7]
            T[pv : pv + 3, iv + 3 : iv + 6] = np.eye(3)  # linear
            T[pv + 3 : pv + 6, iv : iv + 3] = np.eye(3)  # angular
        else:
            assert jm.nq == 1 and jm.nv == 1, kind
            qp[pq] = q[iq]
            T[pv, iv] = 1.0
    return qp, T @ v, T @ a + Tdot @ v, T


def _close(x, ref, rtol=1e-10):
    ref = np.asarray(ref)
    np.testing.assert_allclose(x, ref, rtol=rtol, atol=rtol * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("fname,floating", CASES)
def test_urdf_structure_matches_pinocchio(fname, floating):
    model, pm = _load_pair(fname, floating)
    pin_dofs = sum(pm.joints[i].nv for i in range(1, pm.njoints))
    assert model.nv == pm.nv == pin_dofs
    links = [f.name for f in pm.frames if f.type == pin.FrameType.BODY]
    assert sorted(model.body_names[1:]) == sorted(links)
    assert model.body(1).name == links[0]  # the root link is body 1
    joint_frames = [f.name for f in pm.frames if f.type in (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT)]
    joint_frames = [n for n in joint_frames if n not in ("universe", "root_joint")]
    assert sorted(f.name for f in model.frames) == sorted(joint_frames)
    # total mass of the moving bodies (bodies welded to the world keep their inertia but do not
    # count, as in Pinocchio's computeTotalMass)
    moving = sum(pm.inertias[i].mass for i in range(1, pm.njoints))
    assert model.total_mass() == pytest.approx(moving, rel=1e-12)
    assert model.total_mass() == pytest.approx(pin.computeTotalMass(pm), rel=1e-12)
    assert model.total_mass(include_ground=True) == pytest.approx(sum(b.inertia.mass for b in model.bodies), rel=1e-12)


def _welded_to_world(model, body):
    return model.compiled.link_of_body[model.body_id(body)] < 0


def _compare_placements(model, pm, welded):
    """Compare the links and joint frames that are (``welded=True``) or are not welded to
    the world; returns how many were compared."""
    pd = pm.createData()
    rng = np.random.default_rng(7)
    count = 0
    for _ in range(5):
        q = sinews.random_configuration(model, rng)
        zero = np.zeros(model.nv)
        qp, _, _, _ = _to_pin(model, pm, q, zero, zero)
        pin.framesForwardKinematics(pm, pd, qp)
        fk = sinews.forward_kinematics(model, q)
        for b in model.bodies[1:]:
            if _welded_to_world(model, b.id) != welded:
                continue
            ref = pd.oMf[pm.getFrameId(b.name, pin.FrameType.BODY)]
            X = fk.body(b.name)
            _close(X.R, ref.rotation)
            _close(X.p, ref.translation)
            count += 1
        for f in model.frames:
            if _welded_to_world(model, f.body) != welded:
                continue
            ref = pd.oMf[pm.getFrameId(f.name)]
            X = fk.frame(f.name)
            _close(X.R, ref.rotation)
            _close(X.p, ref.translation)
            count += 1
    return count


@pytest.mark.parametrize("fname,floating", CASES)
def test_urdf_placements_match_pinocchio(fname, floating):
    model, pm = _load_pair(fname, floating)
    assert _compare_placements(model, pm, welded=False) > 0


@pytest.mark.parametrize("fname", ["urdf_arm3.urdf", "urdf_tree.urdf"])
def test_urdf_placements_of_links_welded_to_the_world(fname):
    model, pm = _load_pair(fname, False)
    assert _compare_placements(model, pm, welded=True) > 0


@pytest.mark.parametrize("fname,floating", CASES)
def test_urdf_crba_and_rnea_match_pinocchio(fname, floating):
    model, pm = _load_pair(fname, floating)
    pd = pm.createData()
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = sinews.random_configuration(model, rng)
        v = rng.normal(size=model.nv)
        a = rng.normal(size=model.nv)
        qp, vp, ap, T = _to_pin(model, pm, q, v, a)
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        _close(sinews.crba(model, q), T.T @ Mp @ T)
        tau_p = pin.rnea(pm, pd, qp, vp, ap)
        _close(sinews.rnea(model, q, v, a), T.T @ tau_p)


def test_urdf_tree_planar_and_floating_joint_kinds():
    model = sinews.load_urdf(DATA / "urdf_tree.urdf")
    assert model.body("right_sled").joint.kind == "Planar"
    assert model.body("drone").joint.kind == "FreeFlyer"
    assert model.body("left_knee_bracket").joint.kind == "Fixed"
    assert model.nq == 1 + 1 + 3 + 7 and model.nv == 1 + 1 + 3 + 6
