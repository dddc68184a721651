"""Pinocchio as the independent oracle for the core algorithms.

Random depth-first trees with every joint type both libraries share (multi-axis joints become
Pinocchio composite joints) and the three benchmark models.  Everything must agree to 1e-10
relative to the size of the quantity.
"""

import numpy as np
import pinocchio as pin
import pytest

import sinews
from sinews.interop import PinocchioCoordinates, from_pinocchio, to_pinocchio
from sinews.sample_models import arm7, quadruped12, random_tree

RTOL = 1e-10


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(1.0, np.abs(b).max(initial=0.0))
    err = np.abs(a - b).max(initial=0.0)
    assert err <= rtol * scale, f"max error {err:.3e} (scale {scale:.3e})"


def humanoid():
    pm = pin.buildSampleModelHumanoid()
    return from_pinocchio(pm), pm


def _case(name, seed):
    if name == "humanoid":
        m, pm = humanoid()
    elif name == "arm7":
        m = arm7()
        pm = to_pinocchio(m)
    elif name == "quadruped12":
        m = quadruped12()
        pm = to_pinocchio(m)
    else:
        m = random_tree(12, seed)
        pm = to_pinocchio(m)
    return m, pm


CASES = [("humanoid", 0), ("arm7", 1), ("quadruped12", 2)] + [("random", s) for s in range(8)]


@pytest.fixture(params=CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def case(request):
    name, seed = request.param
    m, pm = _case(name, seed)
    rng = np.random.default_rng(100 + seed)
    q = sinews.random_configuration(m, rng, -1.5, 1.5)
    v = rng.normal(size=m.nv)
    a = rng.normal(size=m.nv)
    return m, pm, pm.createData(), PinocchioCoordinates(m), q, v, a


def test_placements(case):
    m, pm, pd, cv, q, v, a = case
    pl = sinews.forward_kinematics(m, q)
    pin.forwardKinematics(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    for f in m.frames:
        fid = pm.getFrameId(f.name)
        close(pl.frame(f.name).R, pd.oMf[fid].rotation)
        close(pl.frame(f.name).p, pd.oMf[fid].translation)
    for b in m.bodies[1:]:
        if pm.existFrame(b.name):
            oM = pd.oMf[pm.getFrameId(b.name)]
        else:
            oM = pd.oMi[pm.getJointId(b.name)]
        close(pl.R[b.id], oM.rotation)
        close(pl.p[b.id], oM.translation)


def test_rnea_with_external_forces(case):
    m, pm, pd, cv, q, v, a = case
    rng = np.random.default_rng(7)
    tau = sinews.rnea(m, q, v, a)
    close(tau, cv.v_from_pin(pin.rnea(pm, pd, q, cv.v_to_pin(v), cv.v_to_pin(a))))
    # external forces on movable bodies: same frame (the joint frame) in both libraries
    F = np.zeros((m.nbodies, 6))
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for b in m.bodies[1:]:
        if b.joint.code >= 0 and pm.existJointName(b.name):
            w = rng.normal(size=6)
            F[b.id] = w
            fext[pm.getJointId(b.name)] = pin.Force(w[3:], w[:3])
    tau_f = sinews.rnea(m, q, v, a, F)
    close(tau_f, cv.v_from_pin(pin.rnea(pm, pd, q, cv.v_to_pin(v), cv.v_to_pin(a), fext)))
    close(sinews.aba(m, q, v, tau_f, F), a)


def test_crba(case):
    m, pm, pd, cv, q, v, a = case
    Mp = pin.crba(pm, pd, q).copy()
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    close(sinews.crba(m, q), cv.matrix_from_pin(Mp))


def test_aba(case):
    m, pm, pd, cv, q, v, a = case
    tau = np.random.default_rng(3).normal(size=m.nv)
    close(sinews.aba(m, q, v, tau), cv.v_from_pin(pin.aba(pm, pd, q, cv.v_to_pin(v), cv.v_to_pin(tau))))


def test_minverse_and_minv_times(case):
    m, pm, pd, cv, q, v, a = case
    Mi = pin.computeMinverse(pm, pd, q).copy()
    Mi = np.triu(Mi) + np.triu(Mi, 1).T
    Mi = cv.matrix_from_pin(Mi)
    close(sinews.minverse(m, q), Mi)
    x = np.random.default_rng(5).normal(size=m.nv)
    close(sinews.minv_times(m, q, x), Mi @ x)


def test_jacobians(case):
    m, pm, pd, cv, q, v, a = case
    pin.computeJointJacobians(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    for f in m.frames[:4]:
        fid = pm.getFrameId(f.name)
        Jp = pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
        J6 = sinews.point_jacobian_6d(m, q, f.body, f.X_body_frame.p)
        close(J6, cv.rows6_from_pin(cv.columns_from_pin(Jp)))
        close(sinews.point_jacobian(m, q, f.body, f.X_body_frame.p), J6[3:])
    b = m.bodies[-1]
    if pm.existJointName(b.name):
        jid = pm.getJointId(b.name)
        for ours, ref in (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)):
            Jp = pin.getJointJacobian(pm, pd, jid, ref)
            close(sinews.body_jacobian(m, q, b.id, ours), cv.rows6_from_pin(cv.columns_from_pin(Jp)))


def test_point_velocity_and_classical_acceleration(case):
    m, pm, pd, cv, q, v, a = case
    pin.forwardKinematics(pm, pd, q, cv.v_to_pin(v), cv.v_to_pin(a))
    pin.updateFramePlacements(pm, pd)
    for f in m.frames[:4]:
        fid = pm.getFrameId(f.name)
        vel = pin.getFrameVelocity(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
        acc = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
        r = f.X_body_frame.p
        close(sinews.point_velocity_6d(m, q, v, f.body, r), np.r_[vel.angular, vel.linear])
        close(sinews.point_acceleration_6d(m, q, v, a, f.body, r), np.r_[acc.angular, acc.linear])
        close(sinews.point_position(m, q, f.body, r), pd.oMf[fid].translation)


def test_center_of_mass_and_energy(case):
    m, pm, pd, cv, q, v, a = case
    vp = cv.v_to_pin(v)
    pin.centerOfMass(pm, pd, q, vp)
    close(sinews.center_of_mass(m, q), pd.com[0])
    close(sinews.com_velocity(m, q, v), pd.vcom[0])
    close(sinews.com_jacobian(m, q), cv.columns_from_pin(pin.jacobianCenterOfMass(pm, pd, q)))
    close(sinews.kinetic_energy(m, q, v), pin.computeKineticEnergy(pm, pd, q, vp))
    close(sinews.potential_energy(m, q), pin.computePotentialEnergy(pm, pd, q))


def test_integrate_and_difference(case):
    m, pm, pd, cv, q, v, a = case
    q1 = sinews.integrate(m, q, v, 0.3)
    qp = pin.integrate(pm, q, cv.v_to_pin(v) * 0.3)
    # quaternions are defined up to sign
    close(sinews.difference(m, qp, q1), np.zeros(m.nv))
    close(sinews.difference(m, q, q1), v * 0.3)
    close(cv.v_to_pin(sinews.difference(m, q, q1)), pin.difference(pm, q, qp))
