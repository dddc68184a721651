"""Armature (rotor inertia reflected through the gearbox) in the dynamics, contract C2.

``model.armature`` (``Model.set_joint_properties(body, armature=...)``) enters like Pinocchio's
``model.armature``: ``M += diag(armature)`` (CRBA), ``D = S^T IA S + diag(armature)`` (ABA and
the ``M^-1`` kernels), ``tau += armature * qdd`` (RNEA).  Oracle: Pinocchio with
``pin_model.armature`` set by hand (not through ``to_pinocchio``), closed form for a massless
rotor, and sinews' own unchanged results when the armature is zero.
"""

import numpy as np
import pytest

import sinews
from sinews import Model, SpatialInertia, batch, joints, sample_models

pin = pytest.importorskip("pinocchio")
from sinews.interop import PinocchioCoordinates, to_pinocchio  # noqa: E402


def _set_armature(m: Model, arm: np.ndarray) -> None:
    """Give every moving joint of ``m`` its slice of ``arm`` (nv,)."""
    for b in m.bodies[1:]:
        if b.idx_v >= 0:
            m.set_joint_properties(b.id, armature=arm[b.idx_v : b.idx_v + b.joint.nv])


def _models():
    """Fresh, uncompiled models: a floating quadruped and random trees with every joint type
    (revolute, prismatic, helical, spherical, free-flyer, multi-axis, fixed)."""
    return {
        "quadruped12": sample_models.quadruped12(),
        "random_a": sample_models.random_tree(10, np.random.default_rng(3)),
        "random_b": sample_models.random_tree(12, np.random.default_rng(7)),
    }


def _sym(A):
    """Pinocchio fills the upper triangle of M and M^-1 only."""
    return np.triu(A) + np.triu(A, 1).T


@pytest.mark.parametrize("name", list(_models()))
def test_armature_tree_algorithms_match_pinocchio(name):
    m = _models()[name]
    rng = np.random.default_rng(0)
    arm = rng.uniform(0.05, 2.0, m.nv)
    _set_armature(m, arm)
    pm = to_pinocchio(m)
    cv = PinocchioCoordinates(m)
    pm.armature[:] = cv.v_to_pin(arm)  # set by hand: the oracle does not depend on to_pinocchio
    pd = pm.createData()
    assert np.array_equal(m.armature, arm)
    for _ in range(3):
        q = sinews.random_configuration(m, rng)
        v, a, tau = rng.standard_normal((3, m.nv))
        vp, ap, taup = cv.v_to_pin(v), cv.v_to_pin(a), cv.v_to_pin(tau)
        tol = dict(atol=1e-9, rtol=0)
        np.testing.assert_allclose(sinews.rnea(m, q, v, a), cv.v_from_pin(pin.rnea(pm, pd, q, vp, ap)), **tol)
        M_pin = cv.matrix_from_pin(_sym(pin.crba(pm, pd, q)))
        np.testing.assert_allclose(sinews.crba(m, q), M_pin, **tol)
        np.testing.assert_allclose(sinews.aba(m, q, v, tau), cv.v_from_pin(pin.aba(pm, pd, q, vp, taup)), **tol)
        Minv_pin = cv.matrix_from_pin(_sym(pin.computeMinverse(pm, pd, q)))
        np.testing.assert_allclose(sinews.minverse(m, q), Minv_pin, **tol)
        np.testing.assert_allclose(sinews.minv_times(m, q, tau), Minv_pin @ tau, **tol)
        # armature is an inertia: the bias forces do not see it
        np.testing.assert_allclose(
            sinews.nonlinear_effects(m, q, v), cv.v_from_pin(pin.nonLinearEffects(pm, pd, q, vp)), **tol
        )
        # and M really carries it on its diagonal
        m0 = _models()[name]
        np.testing.assert_allclose(sinews.crba(m, q) - sinews.crba(m0, q), np.diag(arm), atol=1e-12, rtol=0)


def test_armature_batch_matches_single_calls_and_pinocchio():
    m = sample_models.random_tree(9, np.random.default_rng(11))
    rng = np.random.default_rng(1)
    arm = rng.uniform(0.1, 1.0, m.nv)
    _set_armature(m, arm)
    pm = to_pinocchio(m)
    cv = PinocchioCoordinates(m)
    pm.armature[:] = cv.v_to_pin(arm)
    pd = pm.createData()
    n = 24  # more than one parallel chunk
    Q = np.array([sinews.random_configuration(m, rng) for _ in range(n)])
    V, A = rng.standard_normal((2, n, m.nv))
    tau_b, qdd_b, M_b = batch.rnea(m, Q, V, A), batch.aba(m, Q, V, A), batch.crba(m, Q)
    for i in range(n):
        vp, ap = cv.v_to_pin(V[i]), cv.v_to_pin(A[i])
        np.testing.assert_allclose(tau_b[i], cv.v_from_pin(pin.rnea(pm, pd, Q[i], vp, ap)), atol=1e-9, rtol=0)
        np.testing.assert_allclose(qdd_b[i], cv.v_from_pin(pin.aba(pm, pd, Q[i], vp, ap)), atol=1e-9, rtol=0)
        np.testing.assert_allclose(M_b[i], cv.matrix_from_pin(_sym(pin.crba(pm, pd, Q[i]))), atol=1e-9, rtol=0)
        np.testing.assert_allclose(tau_b[i], sinews.rnea(m, Q[i], V[i], A[i]), atol=1e-12, rtol=0)
        np.testing.assert_allclose(qdd_b[i], sinews.aba(m, Q[i], V[i], A[i]), atol=1e-12, rtol=0)
        np.testing.assert_allclose(M_b[i], sinews.crba(m, Q[i]), atol=1e-12, rtol=0)
    # and the three agree with each other: M qdd + h = tau
    h = sinews.nonlinear_effects(m, Q[0], V[0])
    np.testing.assert_allclose(M_b[0] @ qdd_b[0] + h, A[0], atol=1e-9, rtol=0)


def test_armature_zero_is_bit_identical_to_none():
    """Setting a zero armature changes nothing, to the bit."""
    rng = np.random.default_rng(5)
    m0 = sample_models.random_tree(10, np.random.default_rng(2))
    m1 = sample_models.random_tree(10, np.random.default_rng(2))
    _set_armature(m1, np.zeros(m1.nv))
    for _ in range(3):
        q = sinews.random_configuration(m0, rng)
        v, a = rng.standard_normal((2, m0.nv))
        for f in (
            lambda m: sinews.rnea(m, q, v, a),
            lambda m: sinews.crba(m, q),
            lambda m: sinews.aba(m, q, v, a),
            lambda m: sinews.minverse(m, q),
            lambda m: sinews.minv_times(m, q, a),
        ):
            assert np.array_equal(f(m0), f(m1))


def test_armature_alone_makes_a_massless_rotor_dynamic():
    """A massless link on a revolute joint with armature J: ABA gives qdd = tau / J (closed
    form), where it would otherwise refuse a singular mass matrix; M = [[J]], RNEA = J qdd."""
    m = Model(gravity=(0.0, 0.0, -9.81))
    m.add_body(0, joints.RevoluteZ(), None, SpatialInertia.zero(), "rotor")
    m.set_joint_properties("rotor", armature=0.25)
    q, v = np.array([0.3]), np.array([2.0])
    np.testing.assert_allclose(sinews.aba(m, q, v, np.array([1.0])), [4.0], rtol=1e-15)
    np.testing.assert_allclose(sinews.crba(m, q), [[0.25]], rtol=1e-15)
    np.testing.assert_allclose(sinews.rnea(m, q, v, np.array([8.0])), [2.0], rtol=1e-15)
    np.testing.assert_allclose(sinews.minverse(m, q), [[4.0]], rtol=1e-15)


def test_armature_multi_dof_joints_closed_form():
    """A spherical joint with a point mass at its centre has S^T IA S = 0: the armature alone
    sets the 3x3 D block, so qdd = tau / armature per axis (the multi-dof D path)."""
    m = Model(gravity=(0.0, 0.0, 0.0))
    m.add_body(0, joints.Spherical(), None, SpatialInertia(1.0, np.zeros(3), np.zeros((3, 3))), "ball")
    m.set_joint_properties("ball", armature=[0.5, 2.0, 4.0])
    q = np.array([0.1, 0.2, 0.3, 0.9])
    q /= np.linalg.norm(q)
    tau = np.array([1.0, 1.0, 1.0])
    np.testing.assert_allclose(sinews.aba(m, q, np.zeros(3), tau), [2.0, 0.5, 0.25], rtol=1e-14)
    np.testing.assert_allclose(sinews.minverse(m, q), np.diag([2.0, 0.5, 0.25]), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("kind", ["contacts", "ball_loop"])
def test_armature_constrained_dynamics_match_pinocchio(kind):
    """Every constrained forward-dynamics method (and the impulse methods) sees the armature,
    checked against ``pin.constraintDynamics`` / ``pin.impulseDynamics`` with armature set: two
    point contacts (the contact fast paths), or a contact and a ball loop closure (the loop
    paths)."""
    from sinews.constraints import (
        IMPULSE_METHODS,
        METHODS,
        ConstraintSet,
        compute_constraint_impulses,
        constraint_jacobian,
        forward_dynamics_constraints,
    )

    rng = np.random.default_rng(4)
    m = Model(gravity=(0, 0, -9.81))  # a branched fixed-base tree: the two contacts have full rank
    inertia = sample_models.random_inertia
    b1 = m.add_body(0, joints.RevoluteZ(), None, inertia(rng), "b1")
    b2 = m.add_body(b1, joints.Spherical(), (0.5, 0, 0), inertia(rng), "b2")
    m.add_body(b2, joints.RevoluteY(), (0.5, 0.1, 0), inertia(rng), "b3")
    b4 = m.add_body(b1, joints.RevoluteX(), (0, 0.4, 0.1), inertia(rng), "b4")
    b5 = m.add_body(b4, joints.Spherical(), (0.3, 0.2, 0), inertia(rng), "b5")
    m.add_body(b5, joints.Revolute((0.6, 0.0, 0.8)), (0.2, 0, 0.1), inertia(rng), "b6")
    arm = rng.uniform(0.2, 1.5, m.nv)
    _set_armature(m, arm)
    pm = to_pinocchio(m)
    pm.armature[:] = arm  # no free-flyer: the same velocity order
    LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    cs = ConstraintSet()
    cms = pin.StdVec_RigidConstraintModel()
    q = sinews.random_configuration(m, rng)
    contacts = (("b3", np.array([0.1, 0.2, 0.0])), ("b6", np.array([0.0, -0.1, 0.3])))
    for body, p in contacts[: 2 if kind == "contacts" else 1]:
        for n in np.eye(3):
            cs.add_contact_constraint(body, p, n)
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, pm.getJointId(body), pin.SE3(np.eye(3), p), LWA))
    if kind == "ball_loop":  # b3's point pA and a point of b5 coincide at q
        X_S = sinews.Transform(np.eye(3), np.array([0.2, 0.1, 0.3]))
        X_P = sinews.body_placement(m, q, "b5").inverse() @ sinews.body_placement(m, q, "b3") @ X_S
        for k in range(3):
            cs.add_loop_constraint("b5", "b3", X_P, X_S, np.eye(6)[3 + k], name="loop")
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, pm.getJointId("b3"), pin.SE3(X_S.R, X_S.p),
                                            pm.getJointId("b5"), pin.SE3(X_P.R, X_P.p), LWA))
    prox = pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)
    G = constraint_jacobian(m, q, cs)
    assert np.linalg.matrix_rank(G) == len(cs) == 6
    v = np.linalg.svd(G)[2][6:].T @ rng.standard_normal(m.nv - 6)  # consistent velocities
    tau = rng.standard_normal(m.nv)

    def pin_solve(fn):
        cds = pin.StdVec_RigidConstraintData()
        for c in cms:
            cds.append(c.createData())
        pd = pm.createData()
        pin.initConstraintDynamics(pm, pd, cms, cds)
        return fn(pd, cds), pd

    a_pin, pd = pin_solve(lambda pd, cds: pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, prox))
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
        np.testing.assert_allclose(r.qdd, a_pin, atol=1e-9, rtol=0, err_msg=method)
        if kind == "contacts":  # (a loop's multipliers are in other axes than Pinocchio's)
            np.testing.assert_allclose(r.multipliers, pd.lambda_c, atol=1e-9, rtol=0, err_msg=method)
    if kind != "contacts":
        return  # Pinocchio's impulseDynamics does not enforce loop closures
    v_pin, pd = pin_solve(lambda pd, cds: pin.impulseDynamics(pm, pd, q, v, cms, cds, 0.0, prox))
    for method in IMPULSE_METHODS:
        r = compute_constraint_impulses(m, q, v, cs, method=method)
        np.testing.assert_allclose(r.qd_plus, v_pin, atol=1e-9, rtol=0, err_msg=method)


def test_armature_kinetic_energy_is_half_v_M_v():
    """``T = 1/2 v^T M v`` with the armature in M (Pinocchio's computeKineticEnergy adds
    ``1/2 armature v^2`` as well)."""
    m = sample_models.random_tree(8, np.random.default_rng(13))
    rng = np.random.default_rng(2)
    _set_armature(m, rng.uniform(0.1, 1.0, m.nv))
    q = sinews.random_configuration(m, rng)
    v = rng.standard_normal(m.nv)
    T = sinews.kinetic_energy(m, q, v)
    assert T == pytest.approx(0.5 * v @ sinews.crba(m, q) @ v, rel=1e-12)


def test_armature_power_balance():
    """d(T + V)/dt = v . tau along the motion that ABA gives (central differences on arm7 with
    armature): the energy, the mass matrix and ABA agree on the armature."""
    m = sample_models.arm7()
    rng = np.random.default_rng(8)
    _set_armature(m, rng.uniform(0.2, 1.0, m.nv))
    q = rng.uniform(-1.0, 1.0, m.nv)
    v = rng.standard_normal(m.nv)
    tau = rng.standard_normal(m.nv) * 5.0
    a = sinews.aba(m, q, v, tau)
    h = 1e-4
    e = [sinews.mechanical_energy(m, q + s * h * v + 0.5 * h * h * a, v + s * h * a) for s in (-1.0, 1.0)]
    dE = (e[1] - e[0]) / (2 * h)
    assert dE == pytest.approx(v @ tau, rel=1e-6)
    # the armature's share of the power is far above the tolerance: leaving it out would fail
    assert abs(m.armature @ (v * a)) > 1e-3 * abs(v @ tau)
