"""Smoke tests of the constraint core API (fuller tests in the other test_constraints_* files)."""

import numpy as np
import pytest

from sinews import Model, SpatialInertia, Transform, joints
from sinews.constraints import (
    METHODS,
    ConstraintSet,
    constraint_gamma,
    constraint_jacobian,
    forward_dynamics_constraints,
)


def _free_body_contact():
    m = Model(gravity=(0, -9.81, 0))
    b = m.add_body(0, joints.FreeFlyer(), None, SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "body")
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint(b, (0, -1, 0), n, name="foot")
    return m, cs


def test_constraints_smoke_contact_methods_agree():
    m, cs = _free_body_contact()
    rng = np.random.default_rng(0)
    q = np.array([0.1, 0.2, 0.3, *(lambda x: x / np.linalg.norm(x))(rng.normal(size=4))])
    v = rng.normal(size=6)
    tau = rng.normal(size=6)
    ref = forward_dynamics_constraints(m, q, v, tau, cs)
    G = constraint_jacobian(m, q, cs)
    gamma = constraint_gamma(m, q, v, cs)
    assert np.allclose(G @ ref.qdd, gamma, atol=1e-10)
    assert cs.size == 3 and cs.ngroups == 1
    for meth in METHODS:
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=meth)
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9, rtol=0)
        assert np.allclose(r.multipliers, ref.multipliers, atol=1e-9, rtol=0)
