"""MLCP reduction (complete orthogonal decomposition, block pivot) and solve_mlcp."""

import numpy as np
import pytest

from sinews.lcp import (CompleteOrthogonalDecomposition, check_mlcp, mlcp_to_lcp, solve_lemke,
                        solve_mlcp)


@pytest.mark.parametrize("shape,rank", [((5, 5), 5), ((6, 6), 3), ((4, 7), 2), ((7, 4), 4),
                                        ((3, 3), 0)])
def test_cod_pseudo_inverse_matches_numpy(shape, rank):
    rng = np.random.default_rng(sum(shape) + rank)
    A = rng.standard_normal((shape[0], rank)) @ rng.standard_normal((rank, shape[1]))
    cod = CompleteOrthogonalDecomposition(A)
    assert cod.rank == rank
    rhs = rng.standard_normal((shape[0], 3))
    np.testing.assert_allclose(cod.pinv_solve(rhs), np.linalg.pinv(A) @ rhs, atol=1e-10)
    np.testing.assert_allclose(cod.pinv_solve(rhs[:, 0]), np.linalg.pinv(A) @ rhs[:, 0],
                               atol=1e-10)


def planted_mlcp(rng, n, m, rank=None, pd=True):
    """An MLCP with a known solution: choose u*, v*, w* with v* perp w*, then set a and b."""
    K = rng.standard_normal((n + m, n + m))
    H = K @ K.T + np.eye(n + m)          # SPD saddle-free system, like M = J W J^T + ...
    A, C, D, B = H[:n, :n], H[:n, n:], H[n:, :n], H[n:, n:]
    if rank is not None and rank < n:
        P = rng.standard_normal((n, rank))
        A = P @ P.T                      # rank-deficient, PSD
        C = P @ rng.standard_normal((rank, m))
        D = C.T
    u = rng.standard_normal(n)
    active = rng.random(m) < 0.5
    v = np.where(active, rng.random(m) + 0.1, 0.0)
    w = np.where(active, 0.0, rng.random(m) + 0.1)
    a = -(A @ u + C @ v)
    b = w - D @ u - B @ v
    return A, C, D, B, a, b, u, v, w


@pytest.mark.parametrize("seed", range(6))
def test_full_rank_mlcp_recovers_planted_solution(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 6)), int(rng.integers(1, 8))
    A, C, D, B, a, b, u, v, w = planted_mlcp(rng, n, m)
    res = solve_mlcp(A, C, D, B, a, b)
    assert res.converged, res.status
    # H is SPD, so the reduced matrix (a Schur complement) is PD and the solution is unique.
    np.testing.assert_allclose(res.u, u, atol=1e-9)
    np.testing.assert_allclose(res.v, v, atol=1e-9)
    np.testing.assert_allclose(res.w, w, atol=1e-9)
    for method in ("principal_pivoting", "pgs"):
        other = solve_mlcp(A, C, D, B, a, b, method=method)
        assert other.converged, other.status
        np.testing.assert_allclose(other.v, v, atol=1e-7)


def test_reduction_matches_schur_complement():
    rng = np.random.default_rng(7)
    A, C, D, B, a, b, *_ = planted_mlcp(rng, 3, 4)
    red = mlcp_to_lcp(A, C, D, B, a, b)
    np.testing.assert_allclose(red.M, B - D @ np.linalg.solve(A, C), atol=1e-12)
    np.testing.assert_allclose(red.q, b - D @ np.linalg.solve(A, a), atol=1e-12)
    assert red.rank == 3 and red.exact and red.swapped.size == 0
    z = solve_lemke(red.M, red.q).z
    u, v = red.recover(z)
    np.testing.assert_allclose(v, z)
    np.testing.assert_allclose(A @ u + C @ v + a, 0, atol=1e-12)


def test_redundant_equality_rows_block_pivot_is_exact():
    # Two copies of the same equality row: A has rank 1. The minimum-norm elimination of Drake
    # would be exact only by luck; the block pivot must reproduce a true solution.
    A = np.array([[2.0, 1.0], [4.0, 2.0]])
    C = np.array([[1.0, 0.0], [2.0, 0.0]])
    D = np.array([[1.0, 0.0], [0.0, 1.0]])
    B = np.array([[1.0, 0.0], [0.0, 1.0]])
    a = np.array([-1.0, -2.0])
    b = np.array([0.5, -1.0])
    res = solve_mlcp(A, C, D, B, a, b)
    assert res.converged, res.status
    chk = check_mlcp(A, C, D, B, a, b, res.u, res.v)
    assert chk.ok and chk.equality_residual < 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_rank_deficient_planted_mlcp(seed):
    rng = np.random.default_rng(50 + seed)
    n, m = 4, 5
    A, C, D, B, a, b, u, v, w = planted_mlcp(rng, n, m, rank=2)
    res = solve_mlcp(A, C, D, B, a, b)
    assert res.converged, res.status
    chk = check_mlcp(A, C, D, B, a, b, res.u, res.v, tol=1e-8)
    assert chk.ok
    # u is not unique (null space of A), but the residuals of the planted solution and of the
    # returned one must both vanish.
    assert check_mlcp(A, C, D, B, a, b, u, v, tol=1e-8).ok


def test_inconsistent_equalities_reported():
    # 0 * u + 0 * v + 1 = 0 has no solution.
    for method in ("lemke", "principal_pivoting", "pgs"):
        res = solve_mlcp([[0.0]], [[0.0]], [[1.0]], [[1.0]], [1.0], [-1.0], method=method)
        assert not res.converged
        assert "also tried" in res.status or "failed" in res.status
    res = solve_mlcp([[0.0]], [[0.0]], [[1.0]], [[1.0]], [1.0], [-1.0])
    assert res.equality_residual == pytest.approx(1.0)
    assert "equality residual" in res.status and "split LCP" in res.status


def test_singular_pivot_block_with_unseen_free_variable():
    # u appears nowhere (A = 0, D = 0); the equality row fixes v = 1, and w = 0.
    # K = [[0, 1], [0, 0]] is singular; its pseudo-inverse still gives the exact answer.
    A, C, D, B, a, b = [[0.0]], [[1.0]], [[0.0]], [[0.0]], [-1.0], [0.0]
    red = mlcp_to_lcp(A, C, D, B, a, b)
    assert not red.exact and list(red.swapped) == [0]
    for method in ("lemke", "principal_pivoting"):
        res = solve_mlcp(A, C, D, B, a, b, method=method)
        assert res.converged, res.status
        np.testing.assert_allclose(res.v, [1.0])
        assert check_mlcp(A, C, D, B, a, b, res.u, res.v).ok
    pgs = solve_mlcp(A, C, D, B, a, b, method="pgs")  # reduced matrix has a zero diagonal
    assert not pgs.converged and "diagonal" in pgs.status


def test_pure_lcp_and_pure_linear_system():
    # n = 0: an LCP.
    res = solve_mlcp(np.zeros((0, 0)), np.zeros((0, 1)), np.zeros((1, 0)), [[2.0]], [], [-4.0])
    assert res.converged
    np.testing.assert_allclose(res.v, [2.0])
    # m = 0: a linear system.
    res = solve_mlcp([[2.0, 0.0], [0.0, 4.0]], np.zeros((2, 0)), np.zeros((0, 2)),
                     np.zeros((0, 0)), [-2.0, -8.0], [])
    assert res.converged
    np.testing.assert_allclose(res.u, [1.0, 2.0])


def test_bad_input_names_argument():
    A, C, D, B = np.eye(2), np.ones((2, 1)), np.ones((1, 2)), np.eye(1)
    a, b = np.zeros(2), np.zeros(1)
    with pytest.raises(ValueError, match="A"):
        solve_mlcp(np.ones((2, 3)), C, D, B, a, b)
    with pytest.raises(ValueError, match="B"):
        solve_mlcp(A, C, D, np.ones((1, 2)), a, b)
    with pytest.raises(ValueError, match="C"):
        solve_mlcp(A, np.ones((3, 1)), D, B, a, b)
    with pytest.raises(ValueError, match="D"):
        solve_mlcp(A, C, np.ones((1, 3)), B, a, b)
    with pytest.raises(ValueError, match="a"):
        solve_mlcp(A, C, D, B, np.zeros(3), b)
    with pytest.raises(ValueError, match="b"):
        solve_mlcp(A, C, D, B, a, [np.nan])
    with pytest.raises(ValueError, match="method"):
        solve_mlcp(A, C, D, B, a, b, method="simplex")


@pytest.mark.parametrize("seed", range(6))
def test_block_pivot_path_planted(seed):
    # A of rank n - 2 and a generic C: a + C v must lie in range(A), which constrains v, so the
    # minimum-norm elimination is wrong and the exact block pivot is needed.
    rng = np.random.default_rng(300 + seed)
    n, m = 4, 5
    A = rng.standard_normal((n, n - 2)) @ rng.standard_normal((n - 2, n))
    C = rng.standard_normal((n, m))
    D = C.T.copy()
    K = rng.standard_normal((m, m))
    B = K @ K.T + np.eye(m)
    u = rng.standard_normal(n)
    active = np.arange(m) < 3
    v = np.where(active, rng.random(m) + 0.1, 0.0)
    w = np.where(active, 0.0, rng.random(m) + 0.1)
    a = -(A @ u + C @ v)
    b = w - D @ u - B @ v
    red = mlcp_to_lcp(A, C, D, B, a, b)
    assert red.rank == n - 2 and red.swapped.size == 2 and red.exact
    res = solve_mlcp(A, C, D, B, a, b)
    assert res.converged, res.status
    assert "block pivot" in res.status
    assert check_mlcp(A, C, D, B, a, b, res.u, res.v, tol=1e-8).ok
