"""Coordinate constraints (contract C3): gears, couplers and URDF mimic joints."""

import numpy as np
import pytest

import sinews
from sinews import joints
from sinews.constraints import (
    METHODS,
    ConstraintSet,
    CoordinateConstraint,
    assemble_q,
    calc_forces,
    compute_constraint_impulses,
    constraint_jacobian,
    constraint_position_error,
    forward_dynamics_constraints,
)
from sinews.constraints._kinematics import ConstraintKinematics
from sinews.spatial import SpatialInertia

I1, I2 = 0.3, 0.05


def gear_model():
    """Two wheels on the ground (revolute z) plus a pendulum hanging from wheel 2."""
    m = sinews.Model(gravity=(0, -9.81, 0))
    m.add_body(0, joints.RevoluteZ(), (0, 0, 0), SpatialInertia(1.0, (0, 0, 0), np.diag([1, 1, I1])), "wheel1")
    w2 = m.add_body(0, joints.RevoluteZ(), (1, 0, 0), SpatialInertia(1.0, (0, 0, 0), np.diag([1, 1, I2])), "wheel2")
    m.add_body(w2, joints.RevoluteZ(), (0.2, 0, 0), SpatialInertia(0.5, (0, -0.3, 0), np.eye(3) * 0.01), "arm")
    return m


def test_gear_pair_closed_form_and_methods_agree():
    m = gear_model()
    m2 = sinews.Model(gravity=(0, 0, 0))  # the same pair without the arm
    m2.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (0, 0, 0), np.diag([1, 1, I1])), "wheel1")
    m2.add_body(0, joints.RevoluteZ(), (1, 0, 0), SpatialInertia(1.0, (0, 0, 0), np.diag([1, 1, I2])), "wheel2")
    r = -2.5  # q[wheel2] = r q[wheel1]
    cs2 = ConstraintSet()
    row = cs2.add_coordinate_constraint("wheel2", "wheel1", ratio=r, name="gear")
    assert row == 0 and cs2.group("gear").type == "coordinate"
    res = forward_dynamics_constraints(m2, [0.1, r * 0.1], [0.4, r * 0.4], [1.5, 0.0], cs2)
    qdd1 = 1.5 / (I1 + r * r * I2)
    np.testing.assert_allclose(res.qdd, [qdd1, r * qdd1], rtol=1e-12)
    # the gear tooth force: wheel 2 needs I2 * qdd2 = lambda (generalised force +lambda on it)
    np.testing.assert_allclose(res.multipliers, [I2 * r * qdd1], rtol=1e-12)

    cs = ConstraintSet()
    cs.add_coordinate_constraint("wheel2", "wheel1", ratio=r, offset=0.05, name="gear")
    rng = np.random.default_rng(1)
    q = np.array([0.3, r * 0.3 + 0.05, 0.7])
    v = rng.normal(size=3)
    v[1] = r * v[0]
    tau = rng.normal(size=3)
    out = [forward_dynamics_constraints(m, q, v, tau, cs, method=k) for k in METHODS]
    for o in out[1:]:
        np.testing.assert_allclose(o.qdd, out[0].qdd, atol=1e-9)
        np.testing.assert_allclose(o.multipliers, out[0].multipliers, atol=1e-9)
    assert abs(out[0].qdd[1] - r * out[0].qdd[0]) < 1e-10
    assert abs(constraint_position_error(m, q, cs)[0]) < 1e-15
    np.testing.assert_allclose(constraint_jacobian(m, q, cs), [[-r, 1.0, 0.0]])
    d = cs.group("gear").compiled_coordinate_rows()  # the description the compiled path reads
    assert (d["iv"][0], d["iv_mimicked"][0], d["ratio"][0], d["offset"][0]) == (1, 0, r, 0.05)
    assert CoordinateConstraint("wheel1", "wheel2").compiled_coordinate_rows() is None  # unbound


def test_wrenches_reproduce_generalised_force():
    m = gear_model()
    cs = ConstraintSet()
    cs.add_coordinate_constraint("arm", "wheel1", ratio=0.7)
    q = np.array([0.2, -0.4, 0.9])
    kin = ConstraintKinematics(m, q)
    cs.bind(m)
    g = cs.groups[0]
    lam = np.array([1.3])
    total = np.zeros(m.nv)
    for e in g.wrench_entries(kin, lam):
        total += kin.jacobian6(e.body, e.p_world_frame).T @ e.wrench
    np.testing.assert_allclose(total, g.jacobian(kin).T @ lam, atol=1e-12)
    w = calc_forces(m, q, cs, 0, lam, frame="world")
    assert len(w) == 4  # child and parent of both joints


def test_gear_ratio_kept_in_simulation():
    m = gear_model()
    r = -2.0
    cs = ConstraintSet()
    cs.add_coordinate_constraint("wheel2", "wheel1", ratio=r, name="gear")
    q0 = np.array([0.0, 0.0, 0.8])
    traj = sinews.simulate(m, q0, np.zeros(3), duration=2.0, dt=2e-3, constraints=cs, progress=False)
    np.testing.assert_allclose(traj.q[:, 1], r * traj.q[:, 0], atol=1e-9)
    assert np.ptp(traj.q[:, 0]) > 0.05  # it moved
    assert traj.constraint_error.max() < 1e-9
    assert traj.energy_drift < 1e-6


def test_mimic_constraints_from_model_and_impulses():
    m = gear_model()
    m.add_mimic("wheel2", "wheel1", multiplier=3.0, offset=0.1)
    cs = ConstraintSet()
    assert cs.add_mimic_constraints(m) == [0]
    g = cs.group("mimic:wheel2")
    assert isinstance(g, CoordinateConstraint) and g.ratio == 3.0 and g.offset == 0.1
    a = assemble_q(m, np.zeros(3), cs, np.ones(3))
    assert a.converged and abs(a.q[1] - 3.0 * a.q[0] - 0.1) < 1e-12
    imp = compute_constraint_impulses(m, a.q, [1.0, 0.0, 0.0], cs)
    assert abs(imp.qd_plus[1] - 3.0 * imp.qd_plus[0]) < 1e-12
    assert ConstraintSet().add_mimic_constraints(sinews.Model()) == []


def test_bad_input():
    m = gear_model()
    with pytest.raises(ValueError, match="ratio"):
        CoordinateConstraint("wheel1", "wheel2", ratio=np.nan)
    with pytest.raises(ValueError, match="index"):
        CoordinateConstraint("wheel1", "wheel2", index=-1)
    for kwargs, match in ((dict(joint="wheel1", mimicked="wheel1"), "itself"),
                          (dict(joint="wheel1", mimicked="world"), "mimicked"),
                          (dict(joint="wheel1", mimicked="wheel2", index=1), "index")):
        cs = ConstraintSet()
        cs.add_coordinate_constraint(**kwargs)
        with pytest.raises(ValueError, match=match):
            cs.bind(m)
    cs = ConstraintSet()
    cs.add_coordinate_constraint("nope", "wheel1")
    with pytest.raises(KeyError, match="joint"):
        cs.bind(m)
    mb = sinews.Model()
    mb.add_body(0, joints.Spherical(), None, SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "ball")
    mb.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "pin")
    cs = ConstraintSet()
    cs.add_coordinate_constraint("ball", "pin")
    with pytest.raises(ValueError, match="nq != nv"):
        cs.bind(mb)


def test_remove_and_unbind():
    m = gear_model()
    cs = ConstraintSet()
    cs.add_coordinate_constraint("wheel2", "wheel1", ratio=2.0, name="gear")
    cs.add_coordinate_constraint("arm", "wheel1", ratio=1.0, name="coupler")
    cs.bind(m)
    res = forward_dynamics_constraints(m, np.zeros(3), np.zeros(3), [1.0, 0, 0], cs)
    assert res.rows == 2
    cs.remove("gear")
    assert cs.bound and cs.size == 1 and cs.group("coupler").index == 0 and cs.group("coupler").rows == slice(0, 1)
    res = forward_dynamics_constraints(m, np.zeros(3), np.zeros(3), [1.0, 0, 0], cs)
    assert res.rows == 1 and abs(res.qdd[2] - res.qdd[0]) < 1e-12
    with pytest.raises(RuntimeError):
        cs.add_coordinate_constraint("wheel2", "wheel1")
    v0 = cs.structure_version
    cs.unbind()
    assert cs.structure_version == v0 + 1
    cs.add_coordinate_constraint("wheel2", "wheel1", ratio=2.0, name="gear")
    res = forward_dynamics_constraints(m, np.zeros(3), np.zeros(3), [1.0, 0, 0], cs)
    assert res.rows == 2 and abs(res.qdd[1] - 2 * res.qdd[0]) < 1e-12
