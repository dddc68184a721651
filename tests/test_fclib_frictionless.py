"""Regression: frictionless contacts (mu = 0) with a pulling free solution.

The cone K_0 is the half-line {r_t = 0, r_n >= 0}; the projection of a point with r_n < 0 and
r_t = 0 onto it is 0.  It used to be returned unchanged (``t <= mu * r_n`` reads ``0 <= -0.0``),
so every FCLib solver reported negative normal reactions as converged.
"""

import numpy as np
import pytest

from sinews.contact import fclib


def _problem():
    B = np.array([[2.0, -1.0], [-1.0, 2.0]])
    W = np.zeros((6, 6))
    for a in range(2):
        for b in range(2):
            W[3 * a, 3 * b] = B[a, b]
    W[np.arange(6) % 3 != 0, np.arange(6) % 3 != 0] = 1.0
    q = np.array([2.0, 0, 0, 0, 0, 0])  # separating: the solution is r = 0
    return fclib.FrictionContactProblem(W=W, q=q, mu=np.zeros(2))


def test_project_on_cone_mu0_pulling_is_zero():
    r = np.array([-1.0, 0.0, 0.0, 3.0, 0.0, 0.0])
    p = fclib.project_on_cone(r, np.zeros(2))
    np.testing.assert_array_equal(p, [0, 0, 0, 3.0, 0, 0])


@pytest.mark.parametrize("solver", ["solve", "solve_pgs", "solve_admm"])
def test_frictionless_separating_contacts_give_zero_reactions(solver):
    P = _problem()
    res = getattr(fclib, solver)(P)
    r = res.r if hasattr(res, "r") else res[0]
    assert np.all(r.reshape(-1, 3)[:, 0] >= -1e-12)
    np.testing.assert_allclose(r, 0.0, atol=1e-9)
    # the independent check: the natural-map error of the wrong answer is large
    wrong = np.array([-4 / 3, 0, 0, -2 / 3, 0, 0])
    assert fclib.natural_map_error(P, wrong) > 0.1
