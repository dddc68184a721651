"""PLUS active-set loop: a backward impending root is retried from its mirror image, and a
consistent active set reached again after a cycle is accepted.

Regressions: a ``flip`` (an impending friction whose Newton root has ``lambda < 0``, restarted from
the mirrored direction) left the active-set signature unchanged, so the retry was always taken for
a cycle (failure, or release of every sliding direction) before its Newton solve was looked at;
and an active set seen before was reported as a failure even when its solve had no violation left.
Each problem below failed (``converged=False``) before the fix.  Oracle: the independent check of
the contact conditions (pushing normals, no penetration left, inside the cones, ``verr``
consistent with ``pi``) and, for the one-contact problems, kinetic energy that does not grow.
"""

import numpy as np
import pytest

from sinews.contact.impulse_solver import PLUSImpulseSolver, UniContactRT

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def frictional_problem(seed):
    """The random coupled problems of test_simbody_impulse_properties (``k`` from the seed)."""
    k, extra = 1 + seed % 4, seed % 6
    rng = np.random.default_rng(seed)
    n_dofs = max(3, 3 * k - 2 + extra)
    G = rng.normal(size=(3 * k, n_dofs))
    L = rng.normal(size=(n_dofs, n_dofs))
    M = L @ L.T + n_dofs * np.eye(n_dofs)
    u = 2.0 * rng.normal(size=n_dofs)
    A = G @ np.linalg.solve(M, G.T)
    A = 0.5 * (A + A.T)
    mu = rng.uniform(0.0, 1.2, size=k)
    return k, G, M, u, A, mu


# (seed, max_rolling_speed): 1045 needs both fixes, the others the flip retry
CASES = [(7, 1e-3), (224, 1e-3), (224, 1e-9), (295, 1e-3), (519, 1e-3), (554, 1e-3), (833, 1e-3),
         (853, 1e-3), (1045, 1e-3), (1045, 1e-9), (1382, 1e-3), (1389, 1e-9)]


@pytest.mark.parametrize("seed, roll", CASES)
def test_problems_that_needed_the_flip_retry_converge(seed, roll):
    k, G, M, u, A, mu = frictional_problem(seed)
    v = G @ u
    recs = [UniContactRT(normal=3 * i, friction=(3 * i + 1, 3 * i + 2), eff_mu=float(mu[i]))
            for i in range(k)]
    res = PLUSImpulseSolver(max_rolling_speed=roll).solve(0, None, A, None, (), None, v, None,
                                                          uni_contact=recs)
    assert res.converged
    pi, w = res.pi, res.verr
    tol = 1e-9 * max(1.0, float(np.max(np.abs(pi))))
    np.testing.assert_allclose(w, v - A @ pi, atol=tol)
    for i in range(k):
        n, F = 3 * i, [3 * i + 1, 3 * i + 2]
        assert pi[n] <= tol and w[n] >= -tol
        assert np.linalg.norm(pi[F]) <= mu[i] * abs(pi[n]) + tol
    u_after = u - np.linalg.solve(M, G.T @ pi)
    assert u_after @ M @ u_after <= (u @ M @ u) * (1 + 1e-9)
