"""The independent checker check_lcp and the result objects."""

import dataclasses

import numpy as np
import pytest

import sinews.lcp as lcp
from sinews.lcp import LCPResult, check_lcp, solve_lemke


def test_check_measures_by_hand():
    M = np.array([[2.0, 0.0], [0.0, 1.0]])
    q = np.array([-2.0, 1.0])
    chk = check_lcp(M, q, [1.0, 0.0])
    np.testing.assert_array_equal(chk.w, [0.0, 1.0])
    assert chk.ok and chk.feasibility == 0.0 and chk.complementarity == 0.0
    chk = check_lcp(M, q, [2.0, 0.0])          # w = (2, 1): complementarity violated
    assert not chk.ok and chk.complementarity == 4.0 and chk.natural_residual == 2.0
    chk = check_lcp(M, q, [0.5, -0.1])         # z < 0 and w < 0
    assert not chk.ok and chk.feasibility == pytest.approx(1.0)


def test_check_tolerance_is_honoured():
    M, q = np.eye(1), np.array([-1.0])
    z = np.array([1.0 - np.finfo(float).eps])  # Drake's IsSolution example: accepted
    assert check_lcp(M, q, z).ok
    assert not check_lcp(M, q, [1.0 - 1e-6], tol=1e-9).ok
    assert check_lcp(M, q, [1.0 - 1e-6], tol=1e-5).ok


def test_large_z_accepted_with_scale_free_complementarity():
    # Drake problem 6 (l = 1): z4 ~ 98 with w4 = 0 exactly in exact arithmetic.
    M = np.array([[11, 0, 10, -1], [0, 11, 10, -1], [10, 10, 21, -1], [1, 1, 1, 0]], float)
    q = np.array([50.0, 50, 1, -6])
    assert check_lcp(M, q, np.array([17, 17, 44, 1277]) / 13).ok


def test_result_fields():
    names = [f.name for f in dataclasses.fields(LCPResult)]
    assert names == ["z", "w", "converged", "status", "pivots", "iterations",
                     "complementarity", "feasibility"]
    res = solve_lemke(np.eye(2), [-1.0, -2.0])
    assert isinstance(res.converged, bool) and isinstance(res.status, str)
    assert res.complementarity == 0.0 and res.feasibility == 0.0


def test_public_api():
    for name in ("LCPResult", "check_lcp", "solve_lemke", "solve_lemke_regularized",
                 "solve_principal_pivoting", "solve_pgs", "mlcp_to_lcp", "solve_mlcp",
                 "read_siconos_lcp", "read_siconos_mlcp"):
        assert name in lcp.__all__ and hasattr(lcp, name)


def test_check_bad_input():
    with pytest.raises(ValueError, match="M"):
        check_lcp(np.ones((2, 3)), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="q"):
        check_lcp(np.eye(2), np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="z"):
        check_lcp(np.eye(2), np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="z"):
        check_lcp(np.eye(2), np.ones(2), [np.nan, 0.0])
    with pytest.raises(ValueError, match="zero_tol"):
        solve_lemke(np.eye(2), np.ones(2), zero_tol=float("nan"))


def test_dense_lu_kernel_matches_numpy():
    from sinews.lcp._dense_lu import _selftest, lu_factor, lu_solve

    A, b, x, y = _selftest()
    np.testing.assert_allclose(x, np.linalg.solve(A, b), atol=1e-12)
    np.testing.assert_allclose(y, np.linalg.solve(A.T, b), atol=1e-12)
    S = np.array([[1.0, 2.0], [2.0, 4.0]])      # singular: the solve must not raise
    perm = np.zeros(2, dtype=np.int64)
    lu_factor(S, perm)
    out = np.empty(2)
    lu_solve(S, perm, np.array([1.0, 1.0]), out)
    assert not np.all(np.isfinite(out))
