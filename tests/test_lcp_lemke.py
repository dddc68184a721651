"""Lemke (Drake MobyLcpSolver port): Drake's test tables (drake.md §4.5-4.6) and anti-cycling."""

import numpy as np
import pytest

from sinews.lcp import check_lcp, solve_lemke, solve_lemke_regularized
from sinews.lcp.lemke import moby_pivot_tolerance, moby_zero_tolerance

TOL = 1e-6  # Drake's moby_lcp_solver_test tolerance (absolute)

M_PROBLEM1 = np.eye(16) + 2.0 * np.triu(np.ones((16, 16)), 1)
M_PROBLEM4 = np.array([[0, 0, 10, 20], [0, 0, 30, 15], [10, 20, 0, 0], [30, 15, 0, 0]], float)
M_PROBLEM6 = np.array([[11, 0, 10, -1], [0, 11, 10, -1], [10, 10, 21, -1], [1, 1, 1, 0]], float)
M_KOSTREVA = np.array([[1, 2, 0], [0, 1, 2], [2, 0, 1]], float)


def problem6_solution(l):
    if l == 100:
        return np.array([3.0, 3.0, 0.0, 83.0])
    return np.array([(l + 16) / 13, (l + 16) / 13, 2 * (23 - l) / 13, (1286 - 9 * l) / 13])


# (name, M, q, expected z) for the problems every Lemke variant must solve.
SOLVABLE = [
    ("trivial", np.diag(np.arange(1.0, 10.0)), -np.ones(9), 1.0 / np.arange(1.0, 10.0)),
    ("problem1", M_PROBLEM1, -np.ones(16), np.eye(16)[15]),
    ("problem2", np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([-1.0, -1.0]), np.array([1.0, 0.0])),
    ("problem3", np.array([[0.0, -1, 2], [2, 0, -2], [-1, 1, 0]]), np.array([-3.0, 6, -1]),
     np.array([0.0, 1, 3])),
    ("problem6_l1", M_PROBLEM6, np.array([50.0, 50, 1, -6]), problem6_solution(1)),
    ("problem6_l16", M_PROBLEM6, np.array([50.0, 50, 16, -6]), problem6_solution(16)),
    ("problem6_l100", M_PROBLEM6, np.array([50.0, 50, 100, -6]), problem6_solution(100)),
    ("generic_solve", np.array([[1.0, 4], [3, 1]]), np.array([-16.0, -15]), np.array([16.0, 0])),
    ("psd_tie", np.array([[1.0, -1], [-1, 1]]), np.array([1.0, -1]), np.array([0.0, 1])),
]


def assert_is_solution(M, q, z):
    w = M @ z + q
    assert z.min() >= -TOL and w.min() >= -TOL
    assert np.max(np.abs(z * w)) <= TOL * max(1.0, np.max(np.abs(z)))


@pytest.mark.parametrize("name,M,q,z_expected", SOLVABLE, ids=[s[0] for s in SOLVABLE])
def test_lemke_drake_table(name, M, q, z_expected):
    res = solve_lemke(M, q)
    assert res.converged, res.status
    np.testing.assert_allclose(res.z, z_expected, atol=TOL)
    assert_is_solution(M, q, res.z)
    assert res.pivots > 0
    np.testing.assert_allclose(res.w, M @ res.z + q, atol=1e-12)


@pytest.mark.parametrize("name,M,q,z_expected", SOLVABLE, ids=[s[0] for s in SOLVABLE])
def test_lemke_lexicographic_and_regularized_match(name, M, q, z_expected):
    lex = solve_lemke(M, q, lexicographic=True)
    assert lex.converged, lex.status
    assert_is_solution(M, q, lex.z)
    reg = solve_lemke_regularized(M, q)
    assert reg.converged, reg.status
    np.testing.assert_allclose(reg.z, z_expected, atol=TOL)
    if name not in ("problem2",):  # problem 2 has a continuum of solutions
        np.testing.assert_allclose(lex.z, z_expected, atol=TOL)


def test_problem1_takes_31_pivots():
    # Murty-style triangular P-matrix; the reference port reports 31 pivots (drake.md §4.5).
    assert solve_lemke(M_PROBLEM1, -np.ones(16)).pivots == 31


def test_problem2_picks_first_of_many_solutions():
    # (1, 0), (0, 1), (1/2, 1/2) all solve it; Drake's "first index wins" rule gives (1, 0).
    z = solve_lemke([[1, 1], [1, 1]], [-1, -1]).z
    np.testing.assert_array_equal(z, [1.0, 0.0])


def test_problem4_bimatrix_lemke_reports_failure():
    res = solve_lemke(M_PROBLEM4, -np.ones(4))
    assert not res.converged
    assert "ray termination" in res.status
    np.testing.assert_array_equal(res.z, np.zeros(4))  # Drake #6947: z = 0 on failure
    np.testing.assert_array_equal(res.w, -np.ones(4))
    # The problem does have a solution (found by Drake's fast solver), so the failure is
    # Lemke's, not the problem's: check that solution independently.
    z_fast = np.array([1 / 90, 2 / 45, 1 / 90, 2 / 45])
    assert check_lcp(M_PROBLEM4, -np.ones(4), z_fast).ok


def test_problem4_regularized_is_not_marked_converged():
    res = solve_lemke_regularized(M_PROBLEM4, -np.ones(4))
    assert not check_lcp(M_PROBLEM4, -np.ones(4), res.z).ok
    assert not res.converged


def test_failure_negative_one():
    res = solve_lemke([[-1.0]], [-1.0])
    assert not res.converged
    np.testing.assert_array_equal(res.z, [0.0])
    assert not check_lcp([[-1.0]], [-1.0], res.z).ok
    reg = solve_lemke_regularized([[-1.0]], [-1.0])
    # No solution exists (w = -z - 1 < 0 for z >= 0); M + 1e4 I is "solved" but that is reported.
    assert not reg.converged
    assert "regularised" in reg.status


def test_empty_problem():
    res = solve_lemke(np.zeros((0, 0)), np.zeros(0))
    assert res.converged and res.z.shape == (0,)
    assert solve_lemke_regularized(np.zeros((0, 0)), np.zeros(0)).converged


def test_trivial_q_nonnegative_takes_no_pivots():
    res = solve_lemke(np.eye(3), np.ones(3))
    assert res.converged and res.pivots == 0
    np.testing.assert_array_equal(res.z, np.zeros(3))


def test_kostreva_cycling_plain_lemke_hits_pivot_limit():
    res = solve_lemke(M_KOSTREVA, -np.ones(3))
    assert not res.converged
    assert "pivot limit" in res.status
    assert res.pivots == 150  # min(1000, 50 n)


def test_kostreva_cycling_solved_lexicographically():
    res = solve_lemke(M_KOSTREVA, -np.ones(3), lexicographic=True)
    assert res.converged, res.status
    np.testing.assert_allclose(res.z, np.full(3, 1 / 3), atol=5e-14)
    np.testing.assert_allclose(res.w, 0.0, atol=5e-14)


def test_kostreva_regularized_reports_regularised_answer_honestly():
    # Drake's regularised Lemke returns (1/4, 1/4, 1/4), which solves M + I, not M.
    res = solve_lemke_regularized(M_KOSTREVA, -np.ones(3))
    assert not res.converged
    np.testing.assert_allclose(res.z, np.full(3, 0.25), atol=1e-12)


def test_warm_start_from_previous_solution():
    first = solve_lemke(M_KOSTREVA, -np.ones(3), lexicographic=True)
    second = solve_lemke(M_KOSTREVA, -2 * np.ones(3), z0=first.z)
    assert second.converged and second.pivots == 0
    np.testing.assert_allclose(second.z, 2 * first.z, atol=1e-13)


def test_warm_start_with_wrong_guess_still_solves():
    M = np.diag(np.arange(1.0, 6.0))
    q = np.array([-1.0, 1.0, -1.0, 1.0, -1.0])
    res = solve_lemke(M, q, z0=np.array([0.0, 1.0, 0.0, 1.0, 0.0]))
    assert res.converged, res.status
    np.testing.assert_allclose(res.z, np.maximum(-q, 0) / np.arange(1.0, 6.0), atol=1e-13)


def test_zero_tolerance_formula():
    assert moby_zero_tolerance(np.array([[1.0]])) == pytest.approx(10 * np.finfo(float).eps)
    assert moby_zero_tolerance(np.array([[1e10]])) == pytest.approx(1e11 * np.finfo(float).eps)
    assert moby_zero_tolerance(np.eye(10)) == pytest.approx(100 * np.finfo(float).eps)
    assert moby_pivot_tolerance(np.eye(10) * 0.5) == pytest.approx(10 * np.finfo(float).eps)


def test_max_pivots_respected():
    res = solve_lemke(M_PROBLEM1, -np.ones(16), max_pivots=5)
    assert not res.converged and res.pivots == 5 and "pivot limit" in res.status


@pytest.mark.parametrize("solver", [solve_lemke, solve_lemke_regularized])
def test_bad_input_names_argument(solver):
    with pytest.raises(ValueError, match="M"):
        solver(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="q"):
        solver(np.eye(2), np.ones(3))
    with pytest.raises(ValueError, match="M"):
        solver([[1.0, np.nan], [0.0, 1.0]], np.ones(2))
    with pytest.raises(ValueError, match="q"):
        solver(np.eye(2), [1.0, np.inf])
    with pytest.raises(ValueError, match="M"):
        solver(np.ones(3), np.ones(3))


# Answers of pydrake 1.51.1 ``MobyLcpSolver`` (SolveLcpLemkeRegularized with its (-20, 1, 1)
# schedule, reached through MathematicalProgram), recorded with ``python -m sinews.bench lcp``. Drake
# reports success on every one of these; sinews returns the same z and says whether it solves
# the problem as posed.
PYDRAKE_ANSWERS = [
    ("problem4", M_PROBLEM4, -np.ones(4), [1e13, 1e13, 0, 0], False),
    ("pang_perturbed", np.array([[0.0, -1, -1], [1, 0, 0], [-1, 0, 0]]),
     np.array([-1e-4, -1, 1]), [1, 0, 0], False),
    ("kostreva", M_KOSTREVA, -np.ones(3), [0.25, 0.25, 0.25], False),
    ("generic_solve", np.array([[1.0, 4], [3, 1]]), np.array([-16.0, -15]), [16, 0], True),
    ("problem2", np.ones((2, 2)), -np.ones(2), [1, 0], True),
]


@pytest.mark.parametrize("name,M,q,z_drake,solves", PYDRAKE_ANSWERS,
                         ids=[a[0] for a in PYDRAKE_ANSWERS])
def test_regularized_with_drake_schedule_reproduces_pydrake(name, M, q, z_drake, solves):
    res = solve_lemke_regularized(M, q, min_exp=-20, step_exp=1, max_exp=1)
    np.testing.assert_allclose(res.z, z_drake, rtol=1e-12, atol=1e-12)
    assert res.converged is solves
    assert check_lcp(M, q, res.z).ok is solves
