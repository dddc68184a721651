"""Regression test for an independent review of the Simbody port."""

import numpy as np

from sinews.contact.impulse_solver import PGSImpulseSolver, PLUSImpulseSolver


def test_inconsistent_bilateral_system_is_not_converged():
    A = np.ones((2, 2))
    for solver in (PLUSImpulseSolver(), PGSImpulseSolver(max_iters=200)):
        res = solver.solve_bilateral(None, A, None, np.array([1.0, 0.0]))
        assert not res.converged and res.residual > 0.1
    # consistent redundant rows: PLUS returns the equal minimum-norm split and converges
    res = PLUSImpulseSolver().solve_bilateral(None, A, None, np.array([1.0, 1.0]))
    assert res.converged
    np.testing.assert_allclose(res.pi, [0.5, 0.5], atol=1e-12)
