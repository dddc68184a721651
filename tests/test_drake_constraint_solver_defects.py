"""Regression tests for the Drake ConstraintSolver defects that sinews corrects (drake.md §2.2,
§2.3, §3.3, §3.7, §7).

Each test compares the default solver with an oracle that does not share the solver's reduction:
the unreduced MLCP (accelerations or velocities and bilateral forces free) solved by enumerating
its complementary active sets, a block LCP matrix assembled by hand from the reference formula,
or a closed-form spring-damper. ``ConstraintSolver(drake_compat=True)`` reproduces each defect,
and the same oracle rejects it, which shows that the test would fail on the defect.
"""

from __future__ import annotations

import numpy as np
import pytest

from sinews.contact.constraint_solver import (ConstraintSolver, VelProblemData,
                                              cfm_erp_from_stiffness_damping)

from test_drake_rod2d import (Rod2D, accel_problem, check_accel_solution, check_vel_solution,
                              enumerate_mlcp, impact_problem, resting_horizontal, resting_vertical,
                              sliding_impacting_horizontal, sliding_impacting_vertical, sync)

FIXED = ConstraintSolver()
DRAKE = ConstraintSolver(drake_compat=True)


def vel_mlcp(dense, dt=1.0):
    """Unreduced velocity-level MLCP: u = (v+, fG), z = (fN, fD+, fD-, lam, fL)."""
    M, N, F, L, G = dense.M, dense.N, dense.F, dense.L, dense.G
    nv, nc, nr, nl, nb = M.shape[0], N.shape[0], F.shape[0], L.shape[0], G.shape[0]
    E = np.zeros((nr, nc))
    E[np.arange(nr), np.repeat(np.arange(nc), dense.r)] = 1.0
    Z = np.zeros
    A_u = np.block([[M, -dt * G.T], [G, Z((nb, nb))]])
    B_u = np.vstack([np.hstack([-dt * N.T, -dt * F.T, dt * F.T, Z((nv, nc)), -dt * L.T]),
                     Z((nb, nc + 2 * nr + nc + nl))])
    a = np.concatenate([-dense.Mv, dense.kG])
    C_z = np.vstack([np.hstack([N, Z((nc, nb))]), np.hstack([F, Z((nr, nb))]),
                     np.hstack([-F, Z((nr, nb))]), Z((nc, nv + nb)), np.hstack([L, Z((nl, nb))])])
    D_z = np.block([[Z((nc, nc)), Z((nc, nr)), Z((nc, nr)), Z((nc, nc)), Z((nc, nl))],
                    [Z((nr, nc)), Z((nr, nr)), Z((nr, nr)), E, Z((nr, nl))],
                    [Z((nr, nc)), Z((nr, nr)), Z((nr, nr)), E, Z((nr, nl))],
                    [np.diag(dense.mu_cone), -E.T, -E.T, Z((nc, nc)), Z((nc, nl))],
                    [Z((nl, nc)), Z((nl, nr)), Z((nl, nr)), Z((nl, nc)), Z((nl, nl))]])
    b = np.concatenate([dense.kN, dense.kF, -dense.kF, np.zeros(nc), dense.kL])
    return enumerate_mlcp(A_u, B_u, a, C_z, D_z, b)


def accel_mlcp_no_friction(dense):
    """Unreduced acceleration-level MLCP for sliding contacts and limits: u = (vdot, fG),
    z = (fN, fL)."""
    M, N, L, G = dense.M, dense.N, dense.L, dense.G
    nv, nc, nl, nb = M.shape[0], N.shape[0], L.shape[0], G.shape[0]
    A_u = np.block([[M, -G.T], [G, np.zeros((nb, nb))]])
    B_u = np.vstack([np.hstack([-dense.NmQT, -L.T]), np.zeros((nb, nc + nl))])
    a = np.concatenate([-dense.tau, dense.kG])
    C_z = np.vstack([np.hstack([N, np.zeros((nc, nb))]), np.hstack([L, np.zeros((nl, nb))])])
    D_z = np.zeros((nc + nl, nc + nl))
    b = np.concatenate([dense.kN, dense.kL])
    return enumerate_mlcp(A_u, B_u, a, C_z, D_z, b)


# Defect 1: LCP matrix built with M^-1 instead of the projected inverse C ---------------------
def _bilateral_sticking_impact():
    rod = Rod2D(mu_coulomb=15.0, mu_static=15.0)
    q, v = sliding_impacting_vertical(1.0)
    data, dense = impact_problem(rod, q, v)
    G = np.array([[0.0, 0.0, 1.0]])
    dense.G = G
    data = data.replace(G=G, kG=[0.0])
    return data, sync(dense, data)


def test_bilateral_impact_uses_projected_inertia():
    data, dense = _bilateral_sticking_impact()
    oracle = vel_mlcp(dense)
    assert oracle, "the MLCP must have a solution"
    v_oracle = {tuple(np.round(u[:3], 9)) for u, _ in oracle}
    assert v_oracle == {(0.0, 0.0, 0.0)}  # mu = 15: the rod sticks

    sol = FIXED.solve_impact_problem(data)
    assert sol.converged
    assert sol.cf == pytest.approx([2.0, -2.0, 2.0], abs=1e-12)
    v_plus = data.inverse_inertia(data.Mv) + FIXED.compute_generalized_velocity_change(data,
                                                                                       sol.cf)
    assert v_plus == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    check_vel_solution(dense, sol.cf)

    # Drake's matrix (M^-1) gives an impulse that is not an MLCP solution: the rod keeps sliding.
    bad = DRAKE.solve_impact_problem(data)
    assert bad.cf == pytest.approx([2.0, -2 / 3, 2 / 3], abs=1e-12)
    with pytest.raises(AssertionError):
        check_vel_solution(dense, bad.cf)


def test_bilateral_discretized_and_accel_use_projected_inertia():
    # time step: same geometry, forces instead of impulses
    data, dense = _bilateral_sticking_impact()
    dt = 1e-3
    sol = FIXED.solve_discretized_time_lcp(data, dt)
    assert sol.converged
    v_plus = check_vel_solution(dense, sol.cf, dt=dt)
    assert v_plus == pytest.approx(np.zeros(3), abs=1e-9)
    bad = DRAKE.solve_discretized_time_lcp(data, dt)
    with pytest.raises(AssertionError):
        check_vel_solution(dense, bad.cf, dt=dt)

    # acceleration level: upright rod at rest pushed sideways with theta locked, mu = 15 -> sticks
    rod = Rod2D(mu_coulomb=15.0, mu_static=15.0)
    q, v = resting_vertical(rod)
    adata, adense = accel_problem(rod, q, v, (30.0, 0.0, 0.0))
    G = np.array([[0.0, 0.0, 1.0]])
    adata = adata.replace(G=G, kG=[0.0])
    adense.G = G
    sol = FIXED.solve_constraint_problem(adata)
    assert sol.converged
    vdot = check_accel_solution(sync(adense, adata), sol.cf)
    assert vdot == pytest.approx(np.zeros(3), abs=1e-9)
    bad = DRAKE.solve_constraint_problem(adata)
    with pytest.raises(AssertionError):
        check_accel_solution(adense, bad.cf)


# Defect 2: limit rows missing -mu Q^T -------------------------------------------------------
def test_limit_rows_keep_sliding_friction_term():
    rod = Rod2D(mu_coulomb=0.5, mu_static=0.5)
    q, _ = resting_vertical(rod)
    v = np.array([1.0, 0.0, 0.0])
    data, dense = accel_problem(rod, q, v)
    L = np.array([[0.0, 0.0, 1.0]])  # thetadot' >= 0
    data = data.replace(L=L, kL=[0.0])
    dense.L = L
    sync(dense, data)

    oracle = accel_mlcp_no_friction(dense)
    assert len(oracle) == 1
    vdot_oracle, z_oracle = oracle[0][0], oracle[0][1]
    assert z_oracle == pytest.approx([19.62, 9.81])
    assert vdot_oracle[2] == pytest.approx(0.0, abs=1e-12)

    sol = FIXED.solve_constraint_problem(data)
    assert sol.converged
    assert sol.cf == pytest.approx(z_oracle, abs=1e-10)
    vdot = check_accel_solution(dense, sol.cf)
    assert vdot == pytest.approx(vdot_oracle, abs=1e-10)
    # the linear-system alternative agrees (all constraints active here)
    lin_data = data.replace(use_complementarity_problem_solver=False)
    lin = FIXED.solve_constraint_problem(lin_data)
    assert lin.cf == pytest.approx(z_oracle, abs=1e-10)
    # ... and so does Drake's linear-system path, which never had the defect
    assert DRAKE.solve_constraint_problem(lin_data).cf == pytest.approx(z_oracle, abs=1e-10)

    # Drake's L rows: the LCP "succeeds" with fL = 0 and thetadot' = -9.81 (limit violated).
    bad = DRAKE.solve_constraint_problem(data)
    assert bad.cf[1] == pytest.approx(0.0, abs=1e-12)
    assert FIXED.compute_generalized_acceleration(data, bad.cf)[2] == pytest.approx(-9.81)
    with pytest.raises(AssertionError):
        check_accel_solution(dense, bad.cf)


# Defect 3: gammas counted twice by the time-stepping update; CFM/ERP spring-damper -----------
def _penetrating_contact(dt, k=1e4, b=15.0, phi=-1e-3, phidot=-0.2, impulses=False):
    """Upright rod whose lower end penetrates by -phi and approaches at phidot, frictionless."""
    M = np.diag([2.0, 2.0, 1.0])
    cfm, erp = cfm_erp_from_stiffness_damping(k, b, dt)
    gamma = cfm / dt if impulses else cfm
    v = np.array([0.0, phidot, 0.0])
    Mv = M @ v + dt * np.array([0.0, 2.0 * -9.81, 0.0])
    data = VelProblemData(Mv=Mv, solve_inertia=M, N=[[0.0, 1.0, 0.0]], kN=[erp * phi / dt],
                          gammaN=[gamma], F=[[1.0, 0.0, 1.0]], kF=[0.0], gammaF=[gamma],
                          gammaE=[gamma], mu=[0.0], r=[1])
    return data, M


def _independent_time_lcp(data, M, dt):
    """The stepped LCP written block by block from drake.md §3.2/§3.3 (1 contact, r = 1)."""
    N = np.array([[0.0, 1.0, 0.0]])
    F = np.array([[1.0, 0.0, 1.0]])
    Mi = np.linalg.inv(M)
    nn, nf, ff = (N @ Mi @ N.T)[0, 0], (N @ Mi @ F.T)[0, 0], (F @ Mi @ F.T)[0, 0]
    gN, gF, gE = data.gammaN[0], data.gammaF[0], data.gammaE[0]
    mu = data.mu[0]
    MM = np.array([[dt * nn + gN, dt * nf, -dt * nf, 0.0],
                   [dt * nf, dt * ff + gF, -dt * ff, 1.0],
                   [-dt * nf, -dt * ff, dt * ff + gF, 1.0],
                   [mu, -1.0, -1.0, gE]])
    v_star = Mi @ data.Mv
    qq = np.array([(N @ v_star)[0] + data.kN[0], (F @ v_star)[0], -(F @ v_star)[0], 0.0])
    return MM, qq


@pytest.mark.parametrize("dt", [1e-2, 1e-3])
def test_time_lcp_adds_gammas_once(dt):
    data, M = _penetrating_contact(dt)
    base = FIXED.construct_base_discretized_time_lcp(data)
    lcp = FIXED.update_discretized_time_lcp(data, base, dt)
    MM, qq = _independent_time_lcp(data, M, dt)
    assert lcp.MM == pytest.approx(MM, abs=1e-14)
    assert lcp.qq == pytest.approx(qq, abs=1e-14)
    drake_lcp = DRAKE.update_discretized_time_lcp(data, DRAKE.construct_base_discretized_time_lcp(
        data), dt)
    assert drake_lcp.MM[0, 0] == pytest.approx(MM[0, 0] + dt * data.gammaN[0])  # (1+h) gammaN
    assert drake_lcp.MM[3, 3] == pytest.approx(2 * data.gammaE[0])              # 2 gammaE


@pytest.mark.parametrize("dt", [1e-2, 1e-3])
def test_cfm_erp_give_implicit_spring_damper(dt):
    """f = -k (phi + h phidot+) - b phidot+ (drake.md §3.7), forces with gamma = CFM."""
    k, b, phi = 1e4, 15.0, -1e-3
    data, M = _penetrating_contact(dt, k, b, phi)
    sol = FIXED.solve_discretized_time_lcp(data, dt)
    assert sol.converged
    f = sol.cf[0]
    v_plus = np.linalg.solve(M, data.Mv + dt * (np.array([0.0, 1.0, 0.0]) * f))
    phidot_plus = v_plus[1]
    assert f > 0
    assert f == pytest.approx(-k * (phi + dt * phidot_plus) - b * phidot_plus, rel=1e-10)
    bad = DRAKE.solve_discretized_time_lcp(data, dt)
    v_bad = np.linalg.solve(M, data.Mv + dt * np.array([0.0, bad.cf[0], 0.0]))
    assert bad.cf[0] != pytest.approx(-k * (phi + dt * v_bad[1]) - b * v_bad[1], rel=1e-6)


@pytest.mark.parametrize("dt", [1e-2, 1e-3])
def test_impulse_regularisation_is_cfm_over_dt(dt):
    """With impulse unknowns (solve_impact_problem) gamma = CFM/h gives the same spring-damper."""
    k, b, phi = 1e4, 15.0, -1e-3
    data, M = _penetrating_contact(dt, k, b, phi, impulses=True)
    sol = FIXED.solve_impact_problem(data)
    assert sol.converged
    p = sol.cf[0]
    phidot_plus = (data.inverse_inertia(data.Mv)
                   + FIXED.compute_generalized_velocity_change(data, sol.cf))[1]
    assert p / dt == pytest.approx(-k * (phi + dt * phidot_plus) - b * phidot_plus, rel=1e-10)


# Defect 4: update mutated its inputs in place ------------------------------------------------
def test_update_does_not_mutate_and_is_repeatable():
    data, M = _penetrating_contact(1e-2)
    base = FIXED.construct_base_discretized_time_lcp(data)
    MM0, qq0 = base.MM.copy(), base.qq.copy()
    Mv0, kN0 = data.Mv.copy(), data.kN.copy()
    first = FIXED.update_discretized_time_lcp(data, base, 1e-2)
    other = FIXED.update_discretized_time_lcp(data, base, 1e-3)
    again = FIXED.update_discretized_time_lcp(data, base, 1e-2)
    assert np.array_equal(first.MM, again.MM) and np.array_equal(first.qq, again.qq)
    assert other.MM == pytest.approx(_independent_time_lcp(data, M, 1e-3)[0], abs=1e-14)
    assert np.array_equal(base.MM, MM0) and np.array_equal(base.qq, qq0)
    assert np.array_equal(data.Mv, Mv0) and np.array_equal(data.kN, kN0)
    for arr in (base.MM, base.qq, first.MM, first.qq, data.Mv, data.kN):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 1.0


def test_input_arrays_are_copied():
    Mv = np.array([0.0, -1.0, 0.0])
    N = np.array([[0.0, 1.0, 0.0]])
    data = VelProblemData(Mv=Mv, solve_inertia=np.eye(3), N=N, mu=[0.0], r=[0])
    Mv[1] = 5.0
    N[0, 1] = -1.0
    sol = FIXED.solve_impact_problem(data)
    assert sol.cf == pytest.approx([1.0], abs=1e-12)


# Defect 5: acceleration fast exit returned cf of the caller's size --------------------------
def test_fast_exit_returns_full_size_zeros():
    rod = Rod2D()
    q, v = resting_horizontal()
    data, _ = accel_problem(rod, q, v, (0.0, 100.0, 0.0), friction_dir_dup=1)
    data = data.replace(L=[[0.0, 1.0, 0.0]], kL=[1.0])
    sol = FIXED.solve_constraint_problem(data)
    assert sol.status == "no active constraints"
    assert sol.cf.shape == (2 + 4 + 1,) and not np.any(sol.cf)


# Defect 6: LCP failures are reported, not raised and not faked -----------------------------
def test_painleve_configuration_is_reported_unsolved():
    rod = Rod2D(mu_coulomb=10.0, mu_static=10.0)
    q = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4), np.pi / 4])  # left end at the origin
    v = np.array([-1.0, 0.0, 0.0])  # sliding to the left
    data, dense = accel_problem(rod, q, v)
    assert data.num_contacts == 1 and data.num_sliding == 1
    # N M^-1 (N - mu Q)^T < 0 and N a + kN < 0: the LCP has no solution (Painleve paradox)
    NMQ = (dense.N @ np.linalg.solve(dense.M, dense.NmQT))[0, 0]
    assert NMQ < 0
    sol = FIXED.solve_constraint_problem(data)
    assert not sol.converged
    assert sol.status.startswith("failed")
    assert sol.cf.size == data.num_packed


def test_unsolvable_impact_is_reported_not_faked():
    """A wedge of two contacts, a limit and a bilateral constraint whose impact MLCP has no
    solution (proved by enumerating every active set): the fixed solver reports
    converged=False; Drake's matrix returns an "answer" that violates non-penetration."""
    rod = Rod2D(mu_coulomb=0.3, mu_static=0.3)
    q, v = sliding_impacting_horizontal(1.0)
    data, dense = impact_problem(rod, q, v)
    L = np.array([[0.0, -1.0, 0.5]])
    G = np.array([[0.2, 0.0, 1.0]])
    data = data.replace(L=L, kL=[0.1], G=G, kG=[0.3])
    dense.L, dense.G = L, G
    sync(dense, data)
    assert vel_mlcp(dense) == []
    sol = FIXED.solve_impact_problem(data)
    assert not sol.converged and sol.status.startswith("failed")
    assert sol.feasibility > 1e-6 or sol.complementarity > 1e-6
    bad = DRAKE.solve_impact_problem(data)
    assert bad.converged  # Drake's wrong matrix happens to be solvable ...
    with pytest.raises(AssertionError, match="normal constraint violated"):
        check_vel_solution(dense, bad.cf)  # ... but its answer is not a solution
