"""Principal pivoting (Drake's SolveLcpFast) and PGS on Drake's table (drake.md §4.5)."""

import numpy as np
import pytest

from sinews.lcp import (check_lcp, solve_pgs, solve_principal_pivoting,
                        solve_principal_pivoting_regularized)

TOL = 1e-6
M_PROBLEM1 = np.eye(16) + 2.0 * np.triu(np.ones((16, 16)), 1)
M_PROBLEM4 = np.array([[0, 0, 10, 20], [0, 0, 30, 15], [10, 20, 0, 0], [30, 15, 0, 0]], float)
M_PROBLEM6 = np.array([[11, 0, 10, -1], [0, 11, 10, -1], [10, 10, 21, -1], [1, 1, 1, 0]], float)

FAST_TABLE = [
    ("trivial", np.diag(np.arange(1.0, 10.0)), -np.ones(9), 1.0 / np.arange(1.0, 10.0)),
    ("problem2", np.ones((2, 2)), -np.ones(2), np.array([1.0, 0.0])),
    ("problem3", np.array([[0.0, -1, 2], [2, 0, -2], [-1, 1, 0]]), np.array([-3.0, 6, -1]),
     np.array([0.0, 1, 3])),
    ("problem4", M_PROBLEM4, -np.ones(4), np.array([1 / 90, 2 / 45, 1 / 90, 2 / 45])),
    ("problem6_l1", M_PROBLEM6, np.array([50.0, 50, 1, -6]),
     np.array([17 / 13, 17 / 13, 44 / 13, 1277 / 13])),
    ("problem6_l16", M_PROBLEM6, np.array([50.0, 50, 16, -6]),
     np.array([32 / 13, 32 / 13, 14 / 13, 1142 / 13])),
    ("problem6_l100", M_PROBLEM6, np.array([50.0, 50, 100, -6]), np.array([3.0, 3, 0, 83])),
]


@pytest.mark.parametrize("name,M,q,z", FAST_TABLE, ids=[t[0] for t in FAST_TABLE])
def test_fast_drake_table(name, M, q, z):
    res = solve_principal_pivoting(M, q)
    assert res.converged, res.status
    assert res.pivots > 0
    np.testing.assert_allclose(res.z, z, atol=TOL)
    reg = solve_principal_pivoting_regularized(M, q)
    assert reg.converged
    np.testing.assert_allclose(reg.z, z, atol=TOL)


def test_fast_problem1_unique_solution():
    # M is a P-matrix, so e16 is the only solution; the corrected drop rule finds it in 2n.
    res = solve_principal_pivoting(M_PROBLEM1, -np.ones(16))
    assert res.converged, res.status
    np.testing.assert_allclose(res.z, np.eye(16)[15], atol=1e-12)
    assert solve_principal_pivoting(M_PROBLEM1, -np.ones(16), max_iter=3).converged is False


def test_fast_problem1_drake_compat_reproduces_drake_outcomes():
    # Drake's test table: Fast fails on problem 1, and FastRegularized returns something else
    # (0.5 in the last entry, at alpha = 1), which does not solve the original problem.
    res = solve_principal_pivoting(M_PROBLEM1, -np.ones(16), drake_compat=True)
    assert not res.converged and "iteration limit" in res.status
    reg = solve_principal_pivoting_regularized(M_PROBLEM1, -np.ones(16), drake_compat=True)
    assert not reg.converged and "1e0 I" in reg.status
    np.testing.assert_allclose(reg.z[-1], 0.5, atol=1e-12)
    np.testing.assert_allclose(reg.z[:-1], 0.0, atol=1e-12)


@pytest.mark.parametrize("name,M,q,z", FAST_TABLE, ids=[t[0] for t in FAST_TABLE])
def test_fast_drake_compat_table(name, M, q, z):
    res = solve_principal_pivoting(M, q, drake_compat=True)
    assert res.converged, res.status
    np.testing.assert_allclose(res.z, z, atol=TOL)


def test_fast_failure_and_empty():
    res = solve_principal_pivoting([[-1.0]], [-1.0])
    assert not res.converged
    np.testing.assert_array_equal(res.z, [0.0])
    reg = solve_principal_pivoting_regularized([[-1.0]], [-1.0])
    # Drake returns z ~ 1e-4 (the solution of M + 1e4 I) as a success; here it is reported.
    assert not reg.converged
    np.testing.assert_allclose(reg.z, [1.0 / (1e4 - 1)], rtol=1e-10)
    assert solve_principal_pivoting(np.zeros((0, 0)), np.zeros(0)).converged


def test_fast_warm_start():
    M = np.diag(np.arange(1.0, 10.0))
    q = -np.ones(9)
    cold = solve_principal_pivoting(M, q)
    warm = solve_principal_pivoting(M, q, z0=cold.z)
    assert warm.converged and warm.iterations == 1 and warm.pivots == 0
    np.testing.assert_allclose(warm.z, cold.z)


def test_pgs_closed_form_diagonal():
    d = np.arange(1.0, 10.0)
    q = np.array([-1.0, 2, -3, 4, -5, 6, -7, 8, -9])
    res = solve_pgs(np.diag(d), q)
    assert res.converged and res.iterations == 1
    np.testing.assert_allclose(res.z, np.maximum(-q, 0) / d, atol=1e-15)


def test_pgs_problem6_and_sor():
    # Problem 6 has a positive diagonal except M_44 = 0: PGS cannot sweep it and says so.
    res = solve_pgs(M_PROBLEM6, np.array([50.0, 50, 1, -6]))
    assert not res.converged and "diagonal" in res.status
    # SPD example: omega = 1.3 converges to the same point as omega = 1.
    rng = np.random.default_rng(3)
    A = rng.standard_normal((8, 8))
    M = A @ A.T + np.eye(8)
    q = rng.standard_normal(8)
    a = solve_pgs(M, q)
    b = solve_pgs(M, q, omega=1.3)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.z, b.z, atol=1e-8)
    assert check_lcp(M, q, b.z).ok


def test_pgs_reports_sweep_limit():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((10, 10))
    M = A @ A.T + 1e-3 * np.eye(10)
    q = rng.standard_normal(10)
    res = solve_pgs(M, q, max_iter=2)
    assert not res.converged and "sweep limit" in res.status and res.iterations == 2


def test_pgs_warm_start_from_solution_takes_one_sweep():
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    q = np.array([-5.0, -6.0])
    z = np.linalg.solve(M, -q)
    res = solve_pgs(M, q, z0=z)
    assert res.converged and res.iterations == 1


@pytest.mark.parametrize("solver", [solve_principal_pivoting, solve_pgs])
def test_bad_input(solver):
    with pytest.raises(ValueError, match="M"):
        solver(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="q"):
        solver(np.eye(2), np.ones(3))
    with pytest.raises(ValueError, match="q"):
        solver(np.eye(2), [np.nan, 1.0])
    with pytest.raises(ValueError, match="z0"):
        solver(np.eye(2), np.ones(2), z0=np.ones(3))


def test_pgs_bad_omega():
    with pytest.raises(ValueError, match="omega"):
        solve_pgs(np.eye(2), np.ones(2), omega=2.5)
