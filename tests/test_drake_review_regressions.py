"""Regression tests for findings of an independent review of the Drake ConstraintSolver port."""

import numpy as np

from sinews.contact import ConstraintSolver, VelProblemData


def _rod(kG):
    M = np.diag([2.0, 2.0, 1.0])
    N = np.array([[0, 1, -1], [0, 1, 1.0]])
    F = np.array([[1, 0, 0], [1, 0, 0.0]])
    g = np.array([[0.1, 0, -1.0]])
    return VelProblemData(Mv=M @ [1.0, -1, 0.3], solve_inertia=M, N=N, F=F, mu=[1, 0.2], r=[1, 1],
                          G=np.vstack([g, g]), kG=kG)


def _bilateral_residual(solver, data, solution):
    v_plus = data.inverse_inertia(data.Mv) + solver.compute_generalized_velocity_change(data, solution.cf)
    return np.vstack([[0.1, 0, -1.0]] * 2) @ v_plus + np.asarray(data.kG)


def test_inconsistent_redundant_bilateral_rows_are_not_converged():
    solver = ConstraintSolver()
    data = _rod([0.0, 0.1])
    sol = solver.solve_impact_problem(data)
    assert np.abs(_bilateral_residual(solver, data, sol)).max() > 1e-3  # no exact answer exists
    assert not sol.converged
    assert "inconsistent bilateral" in sol.status
    sol_dt = solver.solve_discretized_time_lcp(data, 0.01)
    assert not sol_dt.converged


def test_consistent_redundant_bilateral_rows_still_converge():
    solver = ConstraintSolver()
    data = _rod([0.0, 0.0])
    sol = solver.solve_impact_problem(data)
    assert sol.converged
    assert np.abs(_bilateral_residual(solver, data, sol)).max() < 1e-9


def test_user_operator_outputs_are_checked_and_named():
    import pytest
    from scipy.sparse.linalg import LinearOperator

    M = np.diag([2.0, 2.0, 1.0])
    N = np.array([[0, 1, -1], [0, 1, 1.0]])
    bad_N = LinearOperator((2, 3), matvec=lambda x: np.full(2, np.nan), rmatvec=lambda y: N.T @ y)
    data = VelProblemData(Mv=M @ [1.0, -1, 0.3], solve_inertia=M, N=bad_N, mu=[0.0, 0.0], r=[0, 0])
    with pytest.raises(ValueError, match="N .LinearOperator. returned NaN"):
        ConstraintSolver().solve_impact_problem(data)
    data = VelProblemData(Mv=M @ [1.0, -1, 0.3], solve_inertia=lambda b: np.full(np.shape(b), np.nan), N=N, mu=[0.0, 0.0], r=[0, 0])
    with pytest.raises(ValueError, match="solve_inertia .callable. returned NaN"):
        ConstraintSolver().solve_impact_problem(data)
