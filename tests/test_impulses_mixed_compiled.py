"""Impulses of sets mixing loops, coordinate rows and contacts take the compiled one-call path
(forward_dynamics.mixed_impulses) and agree with the general path to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest

import sinews.constraints.forward_dynamics as FD
from sinews.constraints import compute_constraint_impulses
from sinews.loops import examples

from test_loops_compiled import _gear_and_fourbar


def _general(*args, **kw):
    FD._use_compiled = False
    try:
        return compute_constraint_impulses(*args, **kw)
    finally:
        FD._use_compiled = True


@pytest.mark.parametrize("method", ["direct", "range_space_sparse"])
def test_mixed_set_impulses_compiled_equal_general(method, monkeypatch):
    m, cs = _gear_and_fourbar()
    q = np.array([1.3, -1.0, 1.9, 0.2, 0.05])
    rng = np.random.default_rng(3)
    calls = []
    real = FD.mixed_impulses
    monkeypatch.setattr(FD, "mixed_impulses", lambda *a: calls.append(1) or real(*a))
    for target in (None, rng.standard_normal(cs.size)):
        qd = rng.standard_normal(m.nv)
        ref = _general(m, q, qd, cs, method=method, target_velocity=target)
        r = compute_constraint_impulses(m, q, qd, cs, method=method, target_velocity=target)
        scale = 1 + np.abs(ref.impulses).max()
        assert np.abs(r.qd_plus - ref.qd_plus).max() <= 1e-9 * (1 + np.abs(ref.qd_plus).max())
        assert np.abs(r.impulses - ref.impulses).max() <= 1e-9 * scale
        assert r.converged
    assert calls, "the compiled mixed path was not taken"


def test_four_bar_loop_joint_impulse_stops_the_constrained_velocity():
    mech = examples.four_bar()
    m, cs, q = mech.model, mech.cs, mech.q0
    qd = np.array([1.0, 0.5, -0.3])
    r = compute_constraint_impulses(m, q, qd, cs)
    ref = _general(m, q, qd, cs)
    assert np.allclose(r.qd_plus, ref.qd_plus, atol=1e-10)
    from sinews.constraints import constraint_jacobian
    G = constraint_jacobian(m, q, cs)
    assert np.abs(G @ r.qd_plus).max() < 1e-10
