"""Pinocchio's constraintDynamics as the oracle of loop closures (issue 8): the humanoid with a
hand-to-hand 6-D (weld) and 3-D (ball) loop, every method (the compiled mixed path for direct,
range-space and tree-augmented), same accelerations and multipliers.

Conventions reconciled: Pinocchio's ``CONTACT_6D``/``CONTACT_3D`` between joint 1 (frame c1) and
joint 2 (frame c2), ``LOCAL``, reports ``lambda_c = [force; moment]`` in c1 axes acting on
joint 1; sinews' loop rows are ``[angular; linear]`` axes of the predecessor frame P (= c1 here)
and a multiplier is the force on the *successor*: ``lambda_sinews = -[lambda_pin[3:];
lambda_pin[:3]]``.  The state keeps the loop closed (frames coincide, ``G v = 0``), where the two
libraries' acceleration-level constraints coincide."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from sinews.bench.loops import HumanoidLoop  # noqa: E402
from sinews.constraints import METHODS  # noqa: E402


@pytest.mark.parametrize("kind", ["6d", "3d"])
def test_hand_to_hand_loop_matches_pinocchio(kind):
    for seed in (0, 1):
        p = HumanoidLoop(kind, seed)
        a_pin = p.coords.v_from_pin(p.pin_dynamics())
        lam_pin = p.pin_multipliers_in_sinews_order()
        assert np.abs(lam_pin).max() > 1e-3  # the loop carries load: the comparison can fail
        for method in METHODS:
            r = p.sinews(method)
            assert r.converged and not r.least_squares
            assert np.abs(r.qdd - a_pin).max() <= 1e-9 * (1 + np.abs(a_pin).max()), method
            assert np.abs(r.multipliers - lam_pin).max() <= 1e-9 * (1 + np.abs(lam_pin).max()), method


def test_loop_changes_the_motion():
    """Sanity of the oracle: without the loop the accelerations differ by O(1)."""
    import sinews

    p = HumanoidLoop("6d", 0)
    free = sinews.aba(p.model, p.q, p.v, p.tau)
    assert np.abs(p.sinews("tree_augmented").qdd - free).max() > 1e-2
