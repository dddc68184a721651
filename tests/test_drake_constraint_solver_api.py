"""API tests for sinews.contact.constraint_solver: operator types, input validation, the
bilateral block inverse, the cf helpers, contact frames and the regularised impact fallback."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from scipy.sparse.linalg import LinearOperator, aslinearoperator

import sinews.contact
from sinews.contact.constraint_solver import (AccelProblemData, ConstraintSolution,
                                              ConstraintSolver, DiscretizedTimeLcp,
                                              MlcpToLcpData, VelProblemData,
                                              cfm_erp_from_stiffness_damping,
                                              stiffness_damping_from_cfm_erp)

from test_drake_rod2d import (Rod2D, accel_problem, check_vel_solution, impact_problem,
                              resting_horizontal, sliding_impacting_horizontal, sync)

SOLVER = ConstraintSolver()
M = np.diag([2.0, 2.0, 1.0])


def test_public_names_reexported_by_package():
    from sinews.contact import constraint_solver
    for name in constraint_solver.__all__:
        assert getattr(sinews.contact, name) is getattr(constraint_solver, name)


def _operator_variants(A):
    """The same Jacobian as dense, sparse (matrix and array) and LinearOperator."""
    return [A, scipy.sparse.csr_matrix(A), scipy.sparse.csr_array(A), aslinearoperator(A)]


def test_operator_types_and_inertia_callable_agree():
    rod = Rod2D(mu_coulomb=0.3, mu_static=0.3)
    q, v = sliding_impacting_horizontal(1.0)
    ref_data, dense = impact_problem(rod, q, v)
    L = np.array([[0.0, -1.0, 0.0]])
    G = np.array([[0.2, 0.0, 1.0]])
    ref_data = ref_data.replace(L=L, kL=[0.5], G=G, kG=[0.3])
    ref = SOLVER.solve_impact_problem(ref_data)
    assert ref.converged
    dense.L, dense.G = L, G
    check_vel_solution(sync(dense, ref_data), ref.cf)

    def inertia(B):
        return np.linalg.solve(M, B)

    for N_, F_, L_, G_ in zip(*(_operator_variants(X) for X in (dense.N, dense.F, L, G))):
        for solve_inertia in (M, scipy.sparse.csr_matrix(M), inertia):
            data = ref_data.replace(N=N_, F=F_, L=L_, G=G_, solve_inertia=solve_inertia)
            sol = SOLVER.solve_impact_problem(data)
            assert sol.converged
            assert sol.cf == pytest.approx(ref.cf, abs=1e-12)
    # explicit transposes given as LinearOperators with only a matvec
    def matvec_only(A):
        return LinearOperator(A.shape, matvec=lambda x, A=A: A @ x, dtype=float)

    data = ref_data.replace(N=matvec_only(dense.N), N_T=matvec_only(dense.N.T),
                            F=matvec_only(dense.F), F_T=matvec_only(dense.F.T),
                            L=matvec_only(L), L_T=matvec_only(L.T), G=matvec_only(G),
                            G_T=matvec_only(G.T))
    sol = SOLVER.solve_impact_problem(data)
    assert sol.cf == pytest.approx(ref.cf, abs=1e-12)


def test_accel_operator_types_agree():
    rod = Rod2D(mu_coulomb=0.1, mu_static=1.0)
    q, v = resting_horizontal()
    data, dense = accel_problem(rod, q, v, (3.0, 0.0, 0.0))
    ref = SOLVER.solve_constraint_problem(data)
    assert ref.converged
    for N_, NmQT_, F_ in zip(*(_operator_variants(X) for X in (dense.N, dense.NmQT, dense.F))):
        sol = SOLVER.solve_constraint_problem(data.replace(N=N_, N_minus_mu_Q_T=NmQT_, F=F_))
        assert sol.cf == pytest.approx(ref.cf, abs=1e-12)
    # N_minus_mu_Q_T defaults to N^T (no sliding contacts here)
    sol = SOLVER.solve_constraint_problem(data.replace(N_minus_mu_Q_T=None))
    assert sol.cf == pytest.approx(ref.cf, abs=1e-12)


def _vel(**kw):
    base = dict(Mv=[0.0, -1.0, 0.0], solve_inertia=M, N=[[0.0, 1.0, 0.0]], F=[[1.0, 0.0, 0.0]],
                mu=[0.5], r=[1])
    base.update(kw)
    return VelProblemData(**base)


def _acc(**kw):
    base = dict(tau=[0.0, -19.62, 0.0], solve_inertia=M, N=[[0.0, 1.0, 0.0]],
                F=[[1.0, 0.0, 0.0]], non_sliding_contacts=[0], r=[1], mu_non_sliding=[0.5])
    base.update(kw)
    return AccelProblemData(**base)


BAD_INPUTS = [
    ("tau", lambda: _acc(tau=[0.0, np.nan, 0.0])),
    ("solve_inertia", lambda: _acc(solve_inertia=np.ones((3, 2)))),
    ("solve_inertia", lambda: _acc(solve_inertia=np.diag([1.0, -1.0, 1.0]))),
    ("solve_inertia", lambda: _acc(solve_inertia=np.array([[1.0, 2, 0], [0, 1, 0], [0, 0, 1]]))),
    ("N", lambda: _acc(N=[[0.0, 1.0]])),
    ("N", lambda: _acc(N=lambda x: x)),
    ("F", lambda: _acc(r=[2])),
    ("r", lambda: _acc(r=[1, 1])),
    ("mu_non_sliding", lambda: _acc(mu_non_sliding=[-0.1])),
    ("mu_sliding", lambda: _acc(sliding_contacts=[0], non_sliding_contacts=[], r=[],
                                mu_non_sliding=[], F=None, mu_sliding=[-1.0])),
    ("sliding_contacts", lambda: _acc(sliding_contacts=[0], mu_sliding=[0.1])),
    ("non_sliding_contacts", lambda: _acc(N=np.zeros((2, 3)), non_sliding_contacts=[1, 0],
                                          r=[1, 1], F=np.zeros((2, 3)),
                                          mu_non_sliding=[0.1, 0.1])),
    ("kN", lambda: _acc(kN=[1.0, 2.0])),
    ("G", lambda: _acc(G=[[0.0, np.nan, 1.0]], kG=[0.0])),
    ("G", lambda: _acc(kG=[0.0])),
    # Drake's tests attach a dummy G while kG is empty; here a mismatched operator is an error
    ("G", lambda: _vel(G=[[0.0, 0.0, 1.0]])),
    ("G", lambda: _vel(G=aslinearoperator(np.ones((1, 3))))),
    ("N", lambda: _vel(N=[])),
    ("use_complementarity_problem_solver",
     lambda: _acc(use_complementarity_problem_solver="yes")),
    ("Mv", lambda: _vel(Mv=[[1.0, 2.0], [3.0, 4.0]])),
    ("mu", lambda: _vel(mu=[-0.5])),
    ("r", lambda: _vel(r=[1, 1])),
    ("gammaN", lambda: _vel(gammaN=[-1e-3])),
    ("gammaF", lambda: _vel(gammaF=[0.0, 0.0])),
    ("gammaE", lambda: _vel(gammaE=[np.nan])),
    ("gammaL", lambda: _vel(L=[[0.0, 1.0, 0.0]], kL=[0.0], gammaL=[-1.0])),
    ("L_T", lambda: _vel(L=LinearOperator((1, 3), matvec=lambda x: x[:1]), kL=[0.0])),
    ("N_minus_mu_Q_T", lambda: _acc(N=LinearOperator((1, 3), matvec=lambda x: x[1:2]))),
    ("N_T", lambda: _vel(N_T=np.zeros((1, 3)))),
    ("problem_data", lambda: SOLVER.solve_impact_problem(_acc())),
    ("problem_data", lambda: SOLVER.solve_constraint_problem(_vel())),
    ("cf", lambda: SOLVER.compute_generalized_force_from_constraint_forces(_vel(), [1.0])),
    ("cf", lambda: SOLVER.compute_generalized_acceleration(_acc(), [1.0, np.nan])),
    ("dt", lambda: SOLVER.compute_generalized_acceleration(_vel(), [1.0, 0.0], v=np.zeros(3),
                                                           dt=0.0)),
    ("v", lambda: SOLVER.compute_generalized_acceleration(_vel(), [1.0, 0.0], dt=0.1)),
    ("dt", lambda: SOLVER.solve_discretized_time_lcp(_vel(), -1.0)),
    ("base", lambda: SOLVER.update_discretized_time_lcp(_vel(), "base", 0.1)),
    ("base", lambda: SOLVER.update_discretized_time_lcp(
        _vel(N=np.zeros((2, 3)), mu=[0.1, 0.1], r=[1, 1], F=np.zeros((2, 3)), Mv=[0, -1, 0],
             kN=[-1, -1]), SOLVER.construct_base_discretized_time_lcp(_vel()), 0.1)),
    ("zz", lambda: SOLVER.populate_packed_constraint_forces_from_lcp_solution(
        _vel(), MlcpToLcpData.from_problem_data(_vel()), [1.0, 2.0], [0, 0, 0], 0.1)),
    ("stiffness", lambda: cfm_erp_from_stiffness_damping(-1.0, 1.0, 0.1)),
    ("damping", lambda: cfm_erp_from_stiffness_damping(1.0, np.nan, 0.1)),
    ("dt", lambda: cfm_erp_from_stiffness_damping(1.0, 1.0, 0.0)),
    ("cfm", lambda: stiffness_damping_from_cfm_erp(0.0, 0.5, 0.1)),
    ("erp", lambda: stiffness_damping_from_cfm_erp(0.1, 1.5, 0.1)),
    ("max_pivots", lambda: ConstraintSolver(max_pivots=-1)),
    ("lexicographic", lambda: ConstraintSolver(lexicographic="yes")),
]


@pytest.mark.parametrize("name,make", BAD_INPUTS, ids=[f"{i}-{n}" for i, (n, _) in
                                                       enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_argument(name, make):
    with pytest.raises(ValueError, match=name):
        make()


def test_empty_gammas_mean_zero_and_counts():
    data = _vel(L=[[0.0, 1.0, 0.0]], kL=[0.0], G=[[0.0, 0.0, 1.0]], kG=[0.0])
    assert (data.num_contacts, data.num_friction_directions, data.num_limits,
            data.num_bilateral, data.num_velocities, data.num_packed) == (1, 1, 1, 1, 3, 4)
    assert np.array_equal(data.gammaN, [0.0]) and np.array_equal(data.gammaL, [0.0])
    acc = _acc()
    assert (acc.num_sliding, acc.num_non_sliding) == (0, 1)
    assert np.array_equal(acc.kN, [0.0]) and np.array_equal(acc.kF, [0.0])


def test_mlcp_to_lcp_block_inverse():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(5, 5))
    Mass = A @ A.T + 5 * np.eye(5)
    G = rng.normal(size=(2, 5))
    data = VelProblemData(Mv=np.zeros(5), solve_inertia=Mass, G=G, kG=[0.0, 0.0])
    mlcp = MlcpToLcpData.from_problem_data(data)
    K = np.block([[Mass, -G.T], [G, np.zeros((2, 2))]])
    B = rng.normal(size=(7, 3))
    assert mlcp.saddle_point_solve(B) == pytest.approx(np.linalg.solve(K, B), abs=1e-12)
    X = rng.normal(size=(5, 4))
    C = mlcp.projected_inertia_solve(np.eye(5))
    assert mlcp.projected_inertia_solve(X) == pytest.approx(C @ X, abs=1e-12)
    assert C == pytest.approx(C.T, abs=1e-12)
    assert G @ C == pytest.approx(np.zeros((2, 5)), abs=1e-12)
    assert mlcp.delassus == pytest.approx(G @ np.linalg.solve(Mass, G.T), abs=1e-12)


def test_redundant_bilateral_constraints_use_pseudo_inverse():
    G = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])  # the same constraint twice
    data = VelProblemData(Mv=np.zeros(3), solve_inertia=M, G=G, kG=[1.0, 1.0])
    sol = SOLVER.solve_impact_problem(data)
    assert sol.converged
    dv = SOLVER.compute_generalized_velocity_change(data, sol.cf)
    assert dv == pytest.approx([0.0, 0.0, -1.0], abs=1e-12)
    assert sol.fG == pytest.approx([-0.5, -0.5], abs=1e-12)  # minimum-norm split


def test_generalized_force_helpers():
    rod = Rod2D(mu_coulomb=0.2, mu_static=0.7)
    q, v = resting_horizontal()
    data, dense = accel_problem(rod, q, np.array([0.0, 0.0, 0.0]))
    NmQT = dense.NmQT.copy()
    NmQT[:, 0] = dense.N[0] - 0.2 * dense.F[0]
    acc = data.replace(N_minus_mu_Q_T=NmQT, F=dense.F[1:2], kF=[0.0], sliding_contacts=[0],
                       non_sliding_contacts=[1], r=[1], mu_sliding=[0.2], mu_non_sliding=[0.7],
                       L=[[0.0, -1.0, 0.0]], kL=[0.0], G=[[0.0, 0.0, 1.0]], kG=[0.0])
    cf = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    gf = NmQT @ cf[:2] + dense.F[1] * 3.0 + np.array([0, -1.0, 0]) * 4.0 + np.array([0, 0, 1.0]) * 5
    assert SOLVER.compute_generalized_force_from_constraint_forces(acc, cf) == pytest.approx(gf)
    assert SOLVER.compute_generalized_acceleration_from_constraint_forces(
        acc, cf) == pytest.approx(np.linalg.solve(M, gf))
    assert SOLVER.compute_generalized_acceleration(acc, cf) == pytest.approx(
        np.linalg.solve(M, gf + acc.tau))
    assert SOLVER.compute_generalized_force_from_constraint_forces(acc, []) == pytest.approx(
        np.zeros(3))
    vel, vdense = impact_problem(rod, q, np.array([0.5, -1.0, 0.0]))
    cfv = np.array([1.0, 2.0, 3.0, 4.0])
    gfv = vdense.N.T @ cfv[:2] + vdense.F.T @ cfv[2:]
    assert SOLVER.compute_generalized_velocity_change(vel, cfv) == pytest.approx(
        np.linalg.solve(M, gfv))
    dt = 0.01
    v0 = np.array([0.5, -1.0, 0.0])
    expected = (np.linalg.solve(M, vel.Mv + dt * gfv) - v0) / dt
    assert SOLVER.compute_generalized_acceleration(vel, cfv, v=v0, dt=dt) == pytest.approx(
        expected)


def test_contact_frames_accel_and_vel():
    c, s = np.cos(0.3), np.sin(0.3)
    n, t = np.array([-s, c]), np.array([c, s])  # tilted ground, tangent along the slip
    frame = np.column_stack([n, t])
    acc = AccelProblemData(tau=np.zeros(3), solve_inertia=M, N=np.zeros((2, 3)),
                           F=np.zeros((1, 3)), sliding_contacts=[0], non_sliding_contacts=[1],
                           r=[1], mu_sliding=[0.4], mu_non_sliding=[0.9])
    out = SOLVER.calc_contact_forces_in_contact_frames([2.0, 3.0, -0.5], acc, [frame, frame])
    assert out == pytest.approx(np.array([[2.0, -0.8], [3.0, -0.5]]))
    # a frame that is not [normal | tangent] of the world: the output is R^T f_world
    R = np.array([[0.0, -1.0], [1.0, 0.0]])
    vel = VelProblemData(Mv=np.zeros(3), solve_inertia=M, N=np.zeros((1, 3)),
                         F=np.zeros((1, 3)), mu=[1.0], r=[1])
    out = SOLVER.calc_contact_forces_in_contact_frames([2.0, 0.5], vel, [R])
    f_world = R[:, 0] * 2.0 + R[:, 1] * 0.5
    assert out == pytest.approx((R.T @ f_world)[None, :])
    with pytest.raises(ValueError, match="unit length"):
        SOLVER.calc_contact_forces_in_contact_frames([2.0, 0.5], vel, [2 * R])
    with pytest.raises(ValueError, match="orthogonal"):
        SOLVER.calc_contact_forces_in_contact_frames([2.0, 0.5], vel,
                                                     [[[1.0, 1.0], [0.0, 0.0]]])
    with pytest.raises(ValueError, match="contact_frames"):
        SOLVER.calc_contact_forces_in_contact_frames([2.0, 0.5], vel, [R, R])
    with pytest.raises(ValueError, match="cf"):
        SOLVER.calc_contact_forces_in_contact_frames([2.0], vel, [R])
    vel2 = vel.replace(F=np.zeros((2, 3)), r=[2], kF=[], gammaF=[])
    with pytest.raises(ValueError, match="2-D"):
        SOLVER.calc_contact_forces_in_contact_frames([2.0, 0.5, 0.1], vel2, [R])


def test_regularised_fallback_is_reported():
    rod = Rod2D(mu_coulomb=15.0, mu_static=15.0)
    q, v = sliding_impacting_horizontal(1.0)
    data, dense = impact_problem(rod, q, v)
    ref = SOLVER.solve_impact_problem(data)
    assert ref.status == "lcp" and ref.regularization == 0.0
    # a zero pivot limit makes the plain Lemke attempt fail; the fallback must recover
    starved = ConstraintSolver(max_pivots=0).solve_impact_problem(data)
    assert starved.converged
    assert starved.pivots > 0
    assert (SOLVER.compute_generalized_velocity_change(data, starved.cf)
            == pytest.approx(SOLVER.compute_generalized_velocity_change(data, ref.cf),
                             abs=1e-10))
    # at acceleration level there is no fallback: the failure is reported
    adata, _ = accel_problem(rod, *resting_horizontal(), (100.0, 0.0, 0.0))
    failed = ConstraintSolver(max_pivots=0).solve_constraint_problem(adata)
    assert not failed.converged and failed.status.startswith("failed")


def test_result_objects():
    rod = Rod2D(mu_coulomb=0.1, mu_static=0.1)
    q, v = sliding_impacting_horizontal(1.0)
    data, _ = impact_problem(rod, q, v)
    data = data.replace(L=[[0.0, -1.0, 0.0]], kL=[0.0], G=[[0.0, 0.0, 1.0]], kG=[0.0])
    sol = SOLVER.solve_impact_problem(data)
    assert isinstance(sol, ConstraintSolution)
    assert np.array_equal(np.concatenate([sol.fN, sol.fF, sol.fL, sol.fG]), sol.cf)
    assert sol.lcp_z.size == 2 + 4 + 2 + 1
    assert sol.lcp_w == pytest.approx(sol.lcp_w.clip(min=0), abs=1e-12)
    assert sol.complementarity < 1e-12 and sol.feasibility < 1e-12
    base = SOLVER.construct_base_discretized_time_lcp(data)
    assert isinstance(base, DiscretizedTimeLcp) and base.dt is None and base.a is None
    upd = SOLVER.update_discretized_time_lcp(data, base, 0.01)
    assert upd.dt == 0.01 and upd.a == pytest.approx(np.r_[-data.Mv, data.kG])
    empty = SOLVER.solve_constraint_problem(AccelProblemData(tau=[0.0, -1.0],
                                                             solve_inertia=np.eye(2)))
    assert empty.cf.size == 0 and empty.status == "no constraints" and empty.converged


def test_lexicographic_retry_solves_what_drakes_tie_rule_cannot():
    """A degenerate time-stepping LCP where Moby's "first index wins" ratio test ray-terminates.
    The default solver retries with the lexicographic rule; the answer is checked with the
    Signorini/Coulomb checker on dense matrices."""
    from test_drake_rod2d import Dense

    rng = np.random.default_rng(4)
    nv, nc, r = 6, int(rng.integers(2, 5)), 2
    A = rng.normal(size=(nv, nv))
    Mass = A @ A.T + nv * np.eye(nv)
    N = rng.normal(size=(nc, nv)) * (rng.random((nc, nv)) < 0.4)
    F = rng.normal(size=(nc * r, nv)) * (rng.random((nc * r, nv)) < 0.4)
    data = VelProblemData(Mv=rng.normal(size=nv), solve_inertia=Mass, N=N, F=F,
                          kN=rng.uniform(-1, 0, nc), mu=np.full(nc, 0.5), r=np.full(nc, r))
    dt = 1e-3
    drake_rule = ConstraintSolver(lexicographic=False).solve_discretized_time_lcp(data, dt)
    assert not drake_rule.converged and "ray termination" in drake_rule.lcp_status
    sol = SOLVER.solve_discretized_time_lcp(data, dt)
    assert sol.converged and sol.status == "lcp (lexicographic retry)"
    dense = Dense(M=Mass, N=N, NmQT=N.T, F=F, kN=np.array(data.kN), kF=np.zeros(nc * r),
                  r=np.full(nc, r), cone_contacts=np.arange(nc), mu_cone=np.full(nc, 0.5),
                  L=np.zeros((0, nv)), G=np.zeros((0, nv)), Mv=np.array(data.Mv),
                  gammaN=np.zeros(nc))
    check_vel_solution(dense, sol.cf, dt=dt, tol=1e-7)
    with pytest.raises(AssertionError):
        check_vel_solution(dense, drake_rule.cf, dt=dt, tol=1e-7)
