"""The compiled contacts path caches its Baumgarte rows; changing the settings must show."""

import numpy as np

import sinews
from sinews.constraints import ConstraintSet, forward_dynamics_constraints
from sinews.sample_models import quadruped12


def test_baumgarte_changes_after_a_call_reach_the_compiled_path():
    m = quadruped12()
    cs = ConstraintSet()
    for leg in ("FL", "FR", "HL", "HR"):
        for k, n in enumerate(np.eye(3)):
            cs.add_contact_constraint(f"{leg}_shank", [0, 0, -0.25], n, name=leg if k == 0 else None)
    cs.bind(m)
    rng = np.random.default_rng(0)
    q = sinews.random_configuration(m, rng, -0.5, 0.5)
    v = rng.normal(size=m.nv)
    tau = rng.normal(size=m.nv)

    def both():
        fast = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse")
        ref = forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
        np.testing.assert_allclose(fast.qdd, ref.qdd, atol=1e-9)
        np.testing.assert_allclose(fast.multipliers, ref.multipliers, atol=1e-9)
        return fast.qdd

    plain = both()
    cs.enable_baumgarte("FL", time_constant=0.05)
    stabilised = both()
    assert np.abs(stabilised - plain).max() > 1e-6  # the stabilisation term reached the fast path
    cs.group("FL").time_constant = 0.2
    softer = both()
    assert np.abs(softer - stabilised).max() > 1e-6
    cs.disable_baumgarte("FL")
    np.testing.assert_allclose(both(), plain, atol=1e-12)
