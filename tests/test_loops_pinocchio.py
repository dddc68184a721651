"""Pinocchio's ``constraintDynamics`` as the oracle for loop joints: a locked (weld) loop is
Pinocchio's 6-D loop closure and a ball loop its 3-D closure, with LOCAL frames.  The
accelerations agree, and Pinocchio's multipliers (the force ``[f; tau]`` on joint1's frame, in
that frame) are the reaction wrench of our target node in node axes."""

import numpy as np
import pytest

import sinews
from sinews import Transform
from sinews.constraints import METHODS, ConstraintSet, constraint_jacobian, forward_dynamics_constraints
from sinews.loops import node_wrenches
from sinews.spatial import exp_so3

pin = pytest.importorskip("pinocchio")
from sinews.interop import to_pinocchio  # noqa: E402
from test_constraints_pinocchio import _pin_solve, _tree  # noqa: E402


@pytest.mark.parametrize("kind", ["locked", "ball"])
@pytest.mark.parametrize("seed", [0, 1])
def test_loop_joint_vs_pinocchio_constraint_dynamics(kind, seed):
    rng = np.random.default_rng(seed)
    m = _tree(rng)
    pm = to_pinocchio(m)
    q = sinews.random_configuration(m, rng)
    X_t = Transform(exp_so3(rng.normal(size=3)), rng.uniform(-0.3, 0.3, 3))
    X_s = sinews.body_placement(m, q, "b6").inverse() @ sinews.body_placement(m, q, "b3") @ X_t
    cs = ConstraintSet()
    cs.add_loop_joint("b6", "b3", kind, X_s, X_t, name="L")
    ctype = pin.ContactType.CONTACT_6D if kind == "locked" else pin.ContactType.CONTACT_3D
    cm = pin.RigidConstraintModel(ctype, pm, pm.getJointId("b3"), pin.SE3(X_t.R, X_t.p), pm.getJointId("b6"),
                                  pin.SE3(X_s.R, X_s.p), pin.ReferenceFrame.LOCAL)
    G = constraint_jacobian(m, q, cs)
    N = np.linalg.svd(G)[2][G.shape[0]:].T
    v = N @ rng.normal(size=N.shape[1])
    tau = rng.normal(size=m.nv) * 3
    prox = pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)
    a_pin, pd = _pin_solve(pm, [cm], lambda pd, c, d: pin.constraintDynamics(pm, pd, q, v, tau, c, d, prox))
    lam_pin = np.array(pd.lambda_c)
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
        np.testing.assert_allclose(r.qdd, a_pin, atol=1e-9, rtol=0, err_msg=method)
        w = node_wrenches(m, q, cs, r)["L/target"].wrench_node  # [moment; force], node axes
        np.testing.assert_allclose(np.r_[w[3:], w[:3]][: lam_pin.size], lam_pin, atol=1e-9, rtol=0, err_msg=method)
