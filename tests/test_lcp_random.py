"""Random PD / PSD LCPs: Lemke, principal pivoting and PGS agree.

For positive definite M the LCP has exactly one solution (CPS Thm 3.1.6), so all methods must
return the same z. For symmetric PSD M with a feasible q, w = M z + q is the same for every
solution (monotonicity: (z1 - z2)^T M (z1 - z2) <= 0 forces M (z1 - z2) = 0), so the w agree.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sinews.lcp import (check_lcp, solve_lemke, solve_lemke_regularized, solve_pgs,
                        solve_principal_pivoting)


def random_pd(rng, n, symmetric=True):
    A = rng.standard_normal((n, n))
    M = A @ A.T + 0.5 * np.eye(n)
    if not symmetric:
        S = rng.standard_normal((n, n))
        M = M + (S - S.T)  # skew part keeps x^T M x > 0
    return M


@pytest.mark.parametrize("seed", range(12))
def test_pd_all_methods_agree(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    M = random_pd(rng, n)
    q = 3.0 * rng.standard_normal(n)
    lem = solve_lemke(M, q)
    lex = solve_lemke(M, q, lexicographic=True)
    pp = solve_principal_pivoting(M, q)
    pgs = solve_pgs(M, q, tol=1e-12, max_iter=200_000)
    for r in (lem, lex, pp, pgs):
        assert r.converged, r.status
        assert check_lcp(M, q, r.z).ok
    scale = max(1.0, np.abs(lem.z).max())
    np.testing.assert_allclose(lex.z, lem.z, atol=1e-10 * scale)
    np.testing.assert_allclose(pp.z, lem.z, atol=1e-10 * scale)
    np.testing.assert_allclose(pgs.z, lem.z, atol=1e-7 * scale)


@pytest.mark.parametrize("seed", range(6))
def test_nonsymmetric_pd_lemke_and_principal_pivoting_agree(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 20))
    M = random_pd(rng, n, symmetric=False)
    q = 3.0 * rng.standard_normal(n)
    lem = solve_lemke(M, q)
    pp = solve_principal_pivoting(M, q)
    assert lem.converged and pp.converged
    np.testing.assert_allclose(pp.z, lem.z, atol=1e-9 * max(1.0, np.abs(lem.z).max()))


@pytest.mark.parametrize("seed", range(8))
def test_psd_w_agrees(seed):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(3, 20))
    r = int(rng.integers(1, n))
    J = rng.standard_normal((r, n))
    M = J.T @ J                                   # Delassus-like, rank r < n
    q = J.T @ rng.standard_normal(r) + rng.random(n)  # feasible: q = M y + (positive) for some y
    lex = solve_lemke(M, q, lexicographic=True)
    pgs = solve_pgs(M, q, tol=1e-11, max_iter=500_000)
    assert lex.converged, lex.status
    assert pgs.converged, pgs.status
    scale = max(1.0, np.abs(lex.w).max())
    np.testing.assert_allclose(pgs.w, lex.w, atol=1e-6 * scale)
    pp = solve_principal_pivoting(M, q)
    if pp.converged:  # the "fast" method is a heuristic for PSD M (see docs/lcp.md)
        np.testing.assert_allclose(pp.w, lex.w, atol=1e-8 * scale)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(n=st.integers(1, 8), seed=st.integers(0, 2**31 - 1))
def test_lemke_solutions_pass_independent_check(n, seed):
    rng = np.random.default_rng(seed)
    M = random_pd(rng, n, symmetric=bool(seed % 2))
    q = rng.standard_normal(n)
    res = solve_lemke(M, q, lexicographic=bool(seed % 3 == 0))
    assert res.converged
    w = M @ res.z + q
    assert res.z.min() >= -1e-10 and w.min() >= -1e-9
    assert abs(res.z @ w) <= 1e-8 * max(1.0, np.abs(res.z).max())
    reg = solve_lemke_regularized(M, q)
    np.testing.assert_allclose(reg.z, res.z, atol=1e-8 * max(1.0, np.abs(res.z).max()))


def test_degenerate_ties_lexicographic_terminates():
    # Many equal entries of q produce ties in every ratio test.
    for n in (3, 5, 8):
        M = np.eye(n) + 2 * np.roll(np.eye(n), 1, axis=1)   # Kostreva-like circulant
        res = solve_lemke(M, -np.ones(n), lexicographic=True)
        assert res.converged, (n, res.status)
        w = M @ res.z - 1.0
        assert res.z.min() >= 0 and w.min() >= -1e-12 and abs(res.z @ w) <= 1e-12
        if n == 3:  # a P-matrix: the solution is unique
            np.testing.assert_allclose(res.z, np.full(n, 1 / 3), atol=1e-12)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(n=st.integers(1, 5), data=st.data())
def test_degenerate_integer_problems_never_raise_and_never_lie(n, data):
    """Small integer matrices (often singular, degenerate, with ties): every solver either
    returns a checked solution or reports failure; nothing raises."""
    entries = st.integers(-2, 2)
    M = np.array(data.draw(st.lists(entries, min_size=n * n, max_size=n * n)), float)
    M = M.reshape(n, n)
    q = np.array(data.draw(st.lists(entries, min_size=n, max_size=n)), float)
    results = [solve_lemke(M, q), solve_lemke(M, q, lexicographic=True),
               solve_principal_pivoting(M, q), solve_pgs(M, q, max_iter=200),
               solve_lemke_regularized(M, q)]
    tol = np.sqrt(np.finfo(float).eps) * max(1.0, np.abs(M).max(), np.abs(q).max())  # documented
    for res in results:
        assert isinstance(res.status, str) and res.status
        if res.converged:
            w = M @ res.z + q
            assert res.z.min() >= -tol and w.min() >= -tol
            assert np.max(np.minimum(np.abs(res.z), np.abs(w))) <= tol
