"""Pinocchio as the oracle: ``pin.constraintDynamics`` (exact KKT, mu = 0) with 3-D point
contacts, ball (CONTACT_3D) and weld (CONTACT_6D) loop closures, and ``pin.impulseDynamics``
with point contacts.

Pinocchio's ``impulseDynamics`` does not enforce loop closures (its post-impact relative
velocity of a CONTACT_3D loop is not zero, checked with pin 4.1), so impulses on loops are
tested by their defining properties in the other files instead.
"""

import numpy as np
import pytest

import sinews
from sinews import Model, SpatialInertia, Transform, joints
from sinews.constraints import (
    IMPULSE_METHODS,
    METHODS,
    ConstraintSet,
    compute_constraint_impulses,
    constraint_jacobian,
    forward_dynamics_constraints,
)

pin = pytest.importorskip("pinocchio")
from sinews.interop import to_pinocchio  # noqa: E402

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
P_CONTACT_A = np.array([0.1, 0.2, 0.0])
P_CONTACT_B = np.array([0.0, -0.1, 0.3])


def _inertia(rng):
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    return SpatialInertia(rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2, R @ np.diag(rng.uniform(0.5, 1.0, 3)) @ R.T)


def _tree(rng):
    """A branched fixed-base tree with revolute and spherical joints (11 dofs)."""
    m = Model(gravity=(0, 0, -9.81))
    b1 = m.add_body(0, joints.RevoluteZ(), None, _inertia(rng), "b1")
    b2 = m.add_body(b1, joints.Spherical(), (0.5, 0, 0), _inertia(rng), "b2")
    m.add_body(b2, joints.RevoluteY(), (0.5, 0.1, 0), _inertia(rng), "b3")
    b4 = m.add_body(b1, joints.RevoluteX(), (0, 0.4, 0.1), _inertia(rng), "b4")
    b5 = m.add_body(b4, joints.Spherical(), (0.3, 0.2, 0), _inertia(rng), "b5")
    m.add_body(b5, joints.Revolute((0.6, 0.0, 0.8)), (0.2, 0, 0.1), _inertia(rng), "b6")
    return m


def _pin_solve(pm, cms_list, fn):
    cms = pin.StdVec_RigidConstraintModel()
    cds = pin.StdVec_RigidConstraintData()
    for c in cms_list:
        cms.append(c)
        cds.append(c.createData())
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    out = fn(pd, cms, cds)
    return out, pd


def _setup(seed, kind):
    """Model, pin model, q and a constraint set + the equivalent pin constraint models.

    kind: "contacts" (two 3-D point contacts), "ball" (a contact plus a ball loop closure
    b5-b3), "weld" (a 6-D loop closure b6-b3)."""
    rng = np.random.default_rng(seed)
    m = _tree(rng)
    pm = to_pinocchio(m)
    q = sinews.random_configuration(m, rng)
    cs = ConstraintSet()
    cms = []
    jid = pm.getJointId
    if kind in ("contacts", "ball"):
        for n in np.eye(3):
            cs.add_contact_constraint("b3", P_CONTACT_A, n, name="cA")
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, jid("b3"), pin.SE3(np.eye(3), P_CONTACT_A), LWA))
    if kind == "contacts":
        for n in np.eye(3):
            cs.add_contact_constraint("b6", P_CONTACT_B, n, name="cB")
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, jid("b6"), pin.SE3(np.eye(3), P_CONTACT_B), LWA))
    if kind in ("ball", "weld"):
        other = "b5" if kind == "ball" else "b6"
        pA = np.array([0.2, 0.1, 0.3])
        X3 = sinews.body_placement(m, q, "b3")
        Xo = sinews.body_placement(m, q, other)
        # successor frame S on b3 at pA (axes of b3); predecessor frame P on `other`, coinciding at q
        X_S = Transform(np.eye(3), pA)
        X_P = Xo.inverse() @ X3 @ X_S
        nax = 3 if kind == "ball" else 6
        for k in range(nax):
            ax = np.zeros(6)
            ax[(3 + k) % 6] = 1.0  # translations first, then rotations
            cs.add_loop_constraint(other, "b3", X_P, X_S, ax, name="loop")
        ctype = pin.ContactType.CONTACT_3D if kind == "ball" else pin.ContactType.CONTACT_6D
        cms.append(pin.RigidConstraintModel(ctype, pm, jid("b3"), pin.SE3(X_S.R, X_S.p), jid(other), pin.SE3(X_P.R, X_P.p), LWA))
    G = constraint_jacobian(m, q, cs)
    N = np.linalg.svd(G)[2][G.shape[0]:].T  # velocities that satisfy the constraints
    v = N @ rng.normal(size=N.shape[1])
    tau = rng.normal(size=m.nv) * 3
    return m, pm, q, v, tau, cs, cms


def _world_forces_from_pin(m, q, cs, lam_pin, kind):
    """Pinocchio's LOCAL_WORLD_ALIGNED multipliers in the row order and axes of ``cs``."""
    if kind != "weld":
        lam = np.array(lam_pin, dtype=float)
        if kind == "ball":
            # pin: force on joint1 (b3 = our successor) in world axes; ours: in P-frame axes
            R_P = sinews.body_placement(m, q, "b5").R @ cs.group("loop").X_predecessor.R
            lam[3:] = R_P.T @ lam[3:]
        return lam
    # weld: pin [force; moment] at the frame origin, world axes; ours [Tx Ty Tz Rx Ry Rz] in P axes
    R_P = sinews.body_placement(m, q, "b6").R @ cs.group("loop").X_predecessor.R
    return np.concatenate([R_P.T @ lam_pin[:3], R_P.T @ lam_pin[3:]])


@pytest.mark.parametrize("kind", ["contacts", "ball", "weld"])
@pytest.mark.parametrize("seed", [0, 1])
def test_constraints_pinocchio_constraint_dynamics(kind, seed):
    m, pm, q, v, tau, cs, cms = _setup(seed, kind)
    prox = pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)
    a_pin, pd = _pin_solve(pm, cms, lambda pd, c, d: pin.constraintDynamics(pm, pd, q, v, tau, c, d, prox))
    lam_pin = _world_forces_from_pin(m, q, cs, pd.lambda_c.copy(), kind)
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
        assert np.allclose(r.qdd, a_pin, atol=1e-9, rtol=0), method
        assert np.allclose(r.multipliers, lam_pin, atol=1e-9, rtol=0), method


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_constraints_pinocchio_impulse_dynamics(seed):
    m, pm, q, _, _, cs, cms = _setup(seed, "contacts")
    rng = np.random.default_rng(10 + seed)
    v_minus = rng.normal(size=m.nv)
    prox = pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)
    v_pin, pd = _pin_solve(pm, cms, lambda pd, c, d: pin.impulseDynamics(pm, pd, q, v_minus, c, d, 0.0, prox))
    for method in IMPULSE_METHODS:
        r = compute_constraint_impulses(m, q, v_minus, cs, method=method)
        assert np.allclose(r.qd_plus, v_pin, atol=1e-9, rtol=0), method
        assert np.allclose(r.impulses, pd.impulse_c, atol=1e-9, rtol=0), method
