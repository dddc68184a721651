"""The 23 scenarios of Drake's ``constraint_solver_test.cc`` (reference notes drake.md §5.2) on the
Rod2D model, with the contact (0, 1, 2 extra copies) and friction-direction (1..4 directions per
cone) duplication sweeps.

Every solution is checked independently: the Signorini/Coulomb conditions are re-evaluated from
the test's own dense matrices (``check_accel_solution`` / ``check_vel_solution``), sums over
contacts are asserted where the split between redundant contacts is not unique, and the exact
values of the reference port are asserted only for the problems without duplication.
"""

from __future__ import annotations

import numpy as np
import pytest

from sinews.contact.constraint_solver import (AccelProblemData, ConstraintSolver,
                                              VelProblemData)
from sinews.lcp import check_lcp, solve_lemke

from test_drake_rod2d import (G_ACC, Rod2D, accel_problem, check_accel_solution,
                              check_vel_solution, discretized_problem, impact_problem,
                              resting_horizontal, resting_vertical, sliding_impacting_horizontal,
                              sliding_impacting_vertical, split_cf, sync)

SOLVER = ConstraintSolver()
DUPS = [(cd, fd) for cd in (0, 1, 2) for fd in (0, 1, 2, 3)]
DT = 1e-4
MG = 2.0 * 9.81
TOL = 1e-9
SIGNS = [1.0, -1.0]


def approx(value, abs_tol=TOL):
    return pytest.approx(value, abs=abs_tol)


def solve_accel(data, dense, physical=True):
    sol = SOLVER.solve_constraint_problem(data)
    assert sol.converged, sol.status
    assert sol.cf.size == data.num_packed
    vdot = SOLVER.compute_generalized_acceleration(data, sol.cf)
    if physical:
        vdot_check = check_accel_solution(sync(dense, data), sol.cf)
        assert vdot == approx(vdot_check)
    return sol, vdot


def solve_impact(data, dense):
    sol = SOLVER.solve_impact_problem(data)
    assert sol.converged, sol.status
    assert sol.cf.size == data.num_packed
    v_plus = data.inverse_inertia(data.Mv) + SOLVER.compute_generalized_velocity_change(
        data, sol.cf)
    assert v_plus == approx(check_vel_solution(sync(dense, data), sol.cf))
    return sol, v_plus


def solve_discretized(data, dense, v0, dt=DT):
    """Construct, update, solve with a (lexicographic) Lemke and populate, as the Drake test's
    SolveDiscretizationProblem; returns (cf, vdot)."""
    base = SOLVER.construct_base_discretized_time_lcp(data)
    lcp = SOLVER.update_discretized_time_lcp(data, base, dt)
    if lcp.active:
        res = solve_lemke(lcp.MM, lcp.qq, lexicographic=True)
        assert res.converged, res.status
        n = lcp.size
        t = n * np.max(np.abs(lcp.MM), initial=1.0) * 10 * np.finfo(float).eps * max(1, n)
        w = lcp.MM @ res.z + lcp.qq
        assert res.z.min(initial=0) > -t and w.min(initial=0) > -t
        assert np.max(np.abs(res.z * w), initial=0) < (max(1, res.z.max(initial=0))
                                                         * max(1, w.max(initial=0)) * t)
        zz = res.z
    else:
        zz = np.zeros(0)
    cf = SOLVER.populate_packed_constraint_forces_from_lcp_solution(
        data, lcp.mlcp_to_lcp, zz, lcp.a, dt)
    one_call = SOLVER.solve_discretized_time_lcp(data, dt)
    assert one_call.converged
    # the all-in-one call may pick another split between duplicates, never other velocities
    vdot = SOLVER.compute_generalized_acceleration(data, cf, v=v0, dt=dt)
    assert SOLVER.compute_generalized_acceleration(data, one_call.cf, v=v0, dt=dt) == approx(
        vdot, 1e-6)
    v_plus = check_vel_solution(sync(dense, data), cf, dt=dt)
    assert vdot == approx((v_plus - v0) / dt, 1e-6)
    return cf, vdot


def friction_per_contact(data, fF):
    """Sum of the signed friction over each cone's directions."""
    r = np.asarray(data.r)
    return np.add.reduceat(fF, np.r_[0, np.cumsum(r)[:-1]]) if r.size else np.zeros(0)


def check_frames(sol_cf, data, frames, fd, expected_tangent_sum=None):
    """2-D contact-frame forces: must refuse problems with duplicated friction directions."""
    if fd > 0 and data.num_friction_directions > 0:
        with pytest.raises(ValueError):
            SOLVER.calc_contact_forces_in_contact_frames(sol_cf, data, frames)
        return None
    local = SOLVER.calc_contact_forces_in_contact_frames(sol_cf, data, frames)
    assert local.shape == (data.num_contacts, 2)
    if expected_tangent_sum is not None:
        assert local[:, 1].sum() == approx(expected_tangent_sum, 1e-8)
    return local


# 1 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_single_point_sticking(sign):
    rod = Rod2D(mu_coulomb=15.0, mu_static=15.0)
    q, v = resting_vertical(rod)
    for cd, fd in DUPS:
        data, dense = accel_problem(rod, q, v, (sign * 100, 0, sign * 100 * rod.half_length),
                                    cd, fd)
        nc = data.num_contacts
        sol, _ = solve_accel(data.replace(kN=np.full(nc, 9.81)), dense)
        assert np.linalg.norm(sol.cf) < TOL
        for case, kN in ((2, 0.0), (3, -9.81)):
            d = data.replace(kN=np.full(nc, kN))
            sol, vdot = solve_accel(d, dense)
            assert sol.fF.sum() == approx(-sign * 100, 1e-8)
            assert sol.fN.sum() == approx(MG * (case - 1), 1e-8)
            assert np.linalg.norm(vdot) == approx(0.0 if case == 2 else 9.81, 1e-8)
            check_frames(sol.cf, d, dense.frames, fd, -sign * 100)
            if cd == fd == 0:
                assert sol.cf == approx([MG * (case - 1), -sign * 100], 1e-10)


# 2 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_single_point_sticking_discretized(sign):
    rod = Rod2D(mu_coulomb=15.0, mu_static=15.0)
    q, v = resting_vertical(rod)
    for cd, fd in DUPS:
        data, dense = discretized_problem(rod, q, v, DT, cd, fd)
        data = data.replace(Mv=data.Mv + np.array([sign * 100, 0, sign * 100]) * DT)
        nc = data.num_contacts
        cf, _ = solve_discretized(data.replace(kN=np.full(nc, 9.81 * DT)), dense, v)
        assert np.linalg.norm(cf) < TOL
        for case, kN in ((2, 0.0), (3, -9.81 * DT)):
            d = data.replace(kN=np.full(nc, kN))
            cf, vdot = solve_discretized(d, dense, v)
            fN, fF, _, _ = split_cf(dense, cf)
            assert fF.sum() == approx(-sign * 100, 1e-7)
            assert fN.sum() == approx(MG * (case - 1), 1e-7)
            assert np.linalg.norm(vdot) == approx(0.0 if case == 2 else 9.81, 1e-7)
            check_frames(cf, d, dense.frames, fd, -sign * 100)


# 3 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_lcp", [True, False])
@pytest.mark.parametrize("sign", SIGNS)
def test_two_point_sticking(sign, use_lcp):
    rod = Rod2D(mu_coulomb=0.0, mu_static=15.0)
    q, v = resting_horizontal()
    for cd, fd in DUPS:
        data, dense = accel_problem(rod, q, v, (sign * 100, 0, 0), cd, fd)
        data = data.replace(use_complementarity_problem_solver=use_lcp)
        nc = data.num_contacts
        sol, _ = solve_accel(data.replace(kN=np.full(nc, 9.81)), dense)
        assert np.linalg.norm(sol.cf) < TOL
        for case, kN in ((2, 0.0), (3, -9.81)):
            sol, vdot = solve_accel(data.replace(kN=np.full(nc, kN)), dense)
            assert sol.fF.sum() == approx(-sign * 100, 1e-8)
            assert sol.fN.sum() == approx(MG * (case - 1), 1e-8)
            assert np.linalg.norm(vdot) == approx(0.0 if case == 2 else 9.81, 1e-8)
            if cd == fd == 0 and case == 2:
                expected = ([9.81, 9.81, -sign * 100, 0] if use_lcp
                            else [9.81, 9.81, -sign * 50, -sign * 50])
                assert sol.cf == approx(expected, 1e-10)


# 4 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_two_point_non_sliding_to_sliding(sign):
    rod = Rod2D(mu_coulomb=0.0, mu_static=0.1)
    q, v = resting_horizontal()
    for cd, fd in DUPS:
        data, dense = accel_problem(rod, q, v, (sign * 100, 0, 0), cd, fd)
        nc = data.num_contacts
        for case, kN in ((2, 0.0), (3, -9.81)):
            sol, vdot = solve_accel(data.replace(kN=np.full(nc, kN)), dense)
            assert -sign * sol.fF.sum() == approx(0.1 * sol.fN.sum(), 1e-8)
            assert np.sign(vdot[0]) == sign
            assert sol.fN.sum() == approx(MG * (case - 1), 1e-8)
            assert vdot[0] == approx(sign * (100 - 0.1 * MG * (case - 1)) / 2, 1e-8)
            if case == 3:
                assert vdot[1] == approx(9.81, 1e-8)
            if cd == fd == 0:
                s = case - 1
                assert sol.cf == approx([9.81 * s, 9.81 * s, -sign * 0.981 * s,
                                         -sign * 0.981 * s], 1e-10)


# 5 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_two_point_non_sliding_to_sliding_discretized(sign):
    rod = Rod2D(mu_coulomb=0.1, mu_static=0.1)
    q, v = resting_horizontal()
    for cd, fd in DUPS:
        data, dense = discretized_problem(rod, q, v, DT, cd, fd)
        data = data.replace(Mv=data.Mv + np.array([sign * 100 * DT, 0, 0]))
        nc = data.num_contacts
        for case, kN in ((2, 0.0), (3, -9.81 * DT)):
            cf, vdot = solve_discretized(data.replace(kN=np.full(nc, kN)), dense, v)
            fN, fF, _, _ = split_cf(dense, cf)
            per_contact = friction_per_contact(data, fF)
            # every contact slides, so each one is saturated on its own
            assert -sign * per_contact == approx(0.1 * fN, 1e-7)
            assert fN.sum() == approx(MG * (case - 1), 1e-7)
            assert np.sign(vdot[0]) == sign
            if case == 3:
                assert vdot[1] == approx(9.81, 1e-6)
            if cd == fd == 0:
                s = case - 1
                assert cf == approx([9.81 * s, 9.81 * s, -sign * 0.981 * s, -sign * 0.981 * s],
                                    1e-7)


# 6 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_two_point_impact_no_transition_to_stiction(sign):
    mu = 1e-4
    rod = Rod2D(mu_coulomb=mu, mu_static=mu)
    q, v = sliding_impacting_horizontal(sign)
    for cd, fd in DUPS:
        data, dense = impact_problem(rod, q, v, cd, fd)
        nc = data.num_contacts
        sol, _ = solve_impact(data.replace(kN=np.ones(nc)), dense)
        assert np.linalg.norm(sol.cf) < TOL
        sol, v_plus = solve_impact(data.replace(kN=np.zeros(nc)), dense)
        per_contact = friction_per_contact(data, sol.fF)
        assert -sign * per_contact == approx(mu * sol.fN, 1e-12)
        assert sign * v_plus[0] > 0
        assert sol.fN.sum() == approx(2.0, 1e-9)
        sol3, v_plus3 = solve_impact(data.replace(kN=-np.ones(nc)), dense)
        assert abs(sol3.fF.sum()) == approx(mu * sol3.fN.sum(), 1e-12)
        assert v_plus3[1] == approx(1.0, 1e-9)
        if cd == fd == 0:
            assert sol.cf == approx([1, 1, -sign * mu, -sign * mu], 1e-12)
            assert v_plus == approx([sign * (1 - mu), 0, 0], 1e-12)
            assert sol3.fN == approx([2, 2], 1e-10)


# 7 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_two_point_impacting_and_sticking(sign):
    rod = Rod2D(mu_coulomb=15.0, mu_static=15.0)
    q, v = sliding_impacting_horizontal(sign)
    for cd, fd in DUPS:
        data, dense = impact_problem(rod, q, v, cd, fd)
        nc = data.num_contacts
        sol, _ = solve_impact(data.replace(kN=np.ones(nc)), dense)
        assert np.linalg.norm(sol.cf) < TOL
        sol, v_plus = solve_impact(data.replace(kN=np.zeros(nc)), dense)
        assert np.linalg.norm(v_plus) < TOL
        assert sol.fN.sum() == approx(2.0, 1e-9)
        assert sol.fF.sum() == approx(-2.0 * sign, 1e-9)
        sol, v_plus = solve_impact(data.replace(kN=-np.ones(nc)), dense)
        assert v_plus == approx([0.0, 1.0, 0.0], 1e-9)


# 8 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_lcp", [True, False])
@pytest.mark.parametrize("upright", [False, True])
@pytest.mark.parametrize("sign", SIGNS)
def test_sliding(sign, upright, use_lcp):
    rod = Rod2D(mu_coulomb=0.0, mu_static=1000.0)
    q = resting_vertical(rod)[0] if upright else resting_horizontal()[0]
    v = np.array([sign, 0.0, 0.0])
    for cd, fd in DUPS:
        data, dense = accel_problem(rod, q, v, (0, 0, 0), cd, fd)
        data = data.replace(use_complementarity_problem_solver=use_lcp)
        nc = data.num_contacts
        assert data.num_sliding == nc
        sol, _ = solve_accel(data.replace(kN=np.full(nc, 9.81)), dense)
        assert np.linalg.norm(sol.cf) < TOL
        d = data.replace(kN=np.zeros(nc))
        sol, vdot = solve_accel(d, dense)
        assert sol.cf.size == nc
        assert sol.fN.sum() == approx(MG, 1e-8)
        local = check_frames(sol.cf, d, dense.frames, fd)
        assert np.abs(local[:, 1]).sum() == approx(0.0)
        assert local[:, 0].sum() == approx(MG, 1e-8)
        if cd == fd == 0:
            assert sol.cf == approx([MG] if upright else [9.81, 9.81], 1e-10)
        sol, vdot = solve_accel(data.replace(kN=np.full(nc, -9.81)), dense)
        assert vdot[1] == approx(9.81, 1e-8)


# 9 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("upright", [False, True])
@pytest.mark.parametrize("sign", SIGNS)
def test_sliding_discretized(sign, upright):
    rod = Rod2D(mu_coulomb=0.0, mu_static=0.0)
    q = resting_vertical(rod)[0] if upright else resting_horizontal()[0]
    v = np.array([sign, 0.0, 0.0])
    for cd, fd in DUPS:
        data, dense = discretized_problem(rod, q, v, DT, cd, fd)
        nc = data.num_contacts
        cf, _ = solve_discretized(data.replace(kN=np.full(nc, 9.81 * DT)), dense, v)
        assert np.linalg.norm(cf) < TOL
        d = data.replace(kN=np.zeros(nc))
        cf, vdot = solve_discretized(d, dense, v)
        fN, fF, _, _ = split_cf(dense, cf)
        assert fN.sum() == approx(MG, 1e-7)
        assert np.abs(fF).sum() == approx(0.0)
        check_frames(cf, d, dense.frames, fd, 0.0)
        if cd == fd == 0:
            assert fN == approx([MG] if upright else [9.81, 9.81], 1e-7)
        cf, vdot = solve_discretized(data.replace(kN=np.full(nc, -9.81 * DT)), dense, v)
        assert vdot[1] == approx(9.81, 1e-6)


# 10 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_lcp", [True, False])
@pytest.mark.parametrize("sign", SIGNS)
def test_sliding_plus_bilateral(sign, use_lcp):
    rod = Rod2D(mu_coulomb=0.1, mu_static=0.1)
    q = resting_vertical(rod)[0]
    v = np.array([sign, 0.0, 0.0])
    G = np.array([[0.0, 0.0, 1.0]])
    for cd, fd in DUPS:
        data, dense = accel_problem(rod, q, v, (0, 0, 0), cd, fd)
        dense.G = G
        data = data.replace(G=G, kG=[0.0], use_complementarity_problem_solver=use_lcp,
                            kN=np.zeros(data.num_contacts))
        sol, vdot = solve_accel(data, dense)
        assert sol.cf.size == data.num_contacts + 1
        assert sol.fN.sum() == approx(MG, 1e-8)
        local = check_frames(sol.cf, data, dense.frames, fd)
        assert local[:, 1].sum() == approx(-0.1 * MG, 1e-8)
        assert abs(vdot[2]) < TOL
        if cd == fd == 0:
            assert sol.cf == approx([MG, sign * 0.1 * MG], 1e-10)
            assert vdot == approx([-sign * 0.05 * MG, 0, 0], 1e-10)
        sol, vdot = solve_accel(data.replace(kG=[1.0]), dense)
        assert vdot[2] == approx(-1.0, 1e-9)


# 11 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_sliding_plus_bilateral_impact(sign):
    rod = Rod2D(mu_coulomb=0.1, mu_static=0.1)
    q, v = sliding_impacting_vertical(sign)
    G = np.array([[0.0, 0.0, 1.0]])
    for cd, fd in DUPS:
        data, dense = impact_problem(rod, q, v, cd, fd)
        dense.G = G
        data = data.replace(G=G, kG=[0.0])
        sol, v_plus = solve_impact(data, dense)
        assert sol.cf.size == data.num_contacts + data.num_friction_directions + 1
        assert sol.fN.sum() == approx(2.0, 1e-9)
        assert sol.fF.sum() == approx(-sign * 0.2, 1e-9)
        assert abs(v_plus[2]) < TOL
        check_frames(sol.cf, data, dense.frames, fd, -sign * 0.2)
        if cd == fd == 0:
            assert sol.cf.size == 3
            assert sol.cf == approx([2.0, -sign * 0.2, sign * 0.2], 1e-12)
            assert v_plus == approx([sign * 0.9, 0, 0], 1e-12)
        sol, v_plus = solve_impact(data.replace(kG=[1.0]), dense)
        assert v_plus[2] == approx(-1.0, 1e-9)


# 12 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", SIGNS)
def test_sliding_plus_bilateral_discretized(sign):
    rod = Rod2D(mu_coulomb=0.1, mu_static=0.1)
    q, v = resting_vertical(rod)
    G = np.array([[0.0, 0.0, 1.0]])
    for cd, fd in DUPS:
        data, dense = discretized_problem(rod, q, v, DT, cd, fd)
        dense.G = G
        data = data.replace(G=G, kG=[0.0], Mv=data.Mv + np.array([sign * rod.mass, 0, 0]))
        cf, vdot = solve_discretized(data, dense, v)
        fN, fF, _, fG = split_cf(dense, cf)
        assert cf.size == data.num_packed
        assert fF.sum() == approx(-fG[0], 10 * np.finfo(float).eps * 100)
        assert fN.sum() == approx(MG, 1e-7)
        assert fF.sum() == approx(-sign * 0.1 * MG, 1e-7)
        assert abs(vdot[2]) < 1e-7
        assert vdot[0] == approx(sign * (1.0 - 0.1 * 9.81 * DT) / DT, 1e-6)
        if cd == fd == 0:
            assert cf == approx([MG, -sign * 0.1 * MG, sign * 0.1 * MG], 1e-7)
        cf, vdot = solve_discretized(data.replace(kG=[1.0]), dense, v)
        assert vdot[2] * DT == approx(-1.0, 1e-9)


# 13 --------------------------------------------------------------------------------------------
def _one_point_plus_limit(rod):
    q, _ = resting_horizontal()
    v = np.array([1.0, 0.0, 0.0])
    data, dense = accel_problem(rod, q, v)
    L = dense.N[1:2].copy()
    N = dense.N[0:1].copy()
    NmQT = dense.NmQT[:, 0:1].copy()
    data = AccelProblemData(tau=data.tau, solve_inertia=rod.M, N=N, N_minus_mu_Q_T=NmQT,
                            kN=[0.0], L=L, kL=[0.0], sliding_contacts=[0],
                            mu_sliding=[rod.mu_coulomb])
    dense.N, dense.NmQT, dense.L = N, NmQT, L
    dense.F = np.zeros((0, 3))
    dense.r = np.zeros(0, int)
    dense.cone_contacts = np.zeros(0, int)
    dense.mu_cone = np.zeros(0)
    return data, dense


@pytest.mark.parametrize("use_lcp", [True, False])
def test_one_point_plus_limit(use_lcp):
    rod = Rod2D(mu_coulomb=0.1, mu_static=0.1)
    data, dense = _one_point_plus_limit(rod)
    data = data.replace(use_complementarity_problem_solver=use_lcp)
    sol, _ = solve_accel(data.replace(kN=[9.81], kL=[9.81]), dense)
    assert np.linalg.norm(sol.cf) < TOL
    sol, vdot = solve_accel(data.replace(kN=[0.0], kL=[0.0]), dense)
    assert sol.cf.size == 2
    assert vdot[1] == approx(0.0)
    assert sol.cf == approx([9.81, 9.81], 1e-10)
    assert vdot == approx([-0.4905, 0, 0], 1e-10)
    sol, vdot = solve_accel(data.replace(kN=[-9.81], kL=[-9.81]), dense)
    assert vdot[1] == approx(9.81, 1e-9)


# 14 --------------------------------------------------------------------------------------------
def test_one_point_plus_limit_discretized():
    rod = Rod2D(mu_coulomb=0.0, mu_static=0.0)
    q, _ = resting_horizontal()
    v = np.array([1.0, 0.0, 0.0])
    full, dense = discretized_problem(rod, q, v, DT)
    L = dense.N[1:2].copy()
    dense.N, dense.NmQT, dense.F, dense.L = dense.N[0:1], dense.N[0:1].T, dense.F[0:1], L
    dense.r, dense.cone_contacts, dense.mu_cone = np.array([1]), np.array([0]), np.array([0.0])
    data = VelProblemData(Mv=full.Mv, solve_inertia=rod.M, N=dense.N, kN=[0.0], gammaN=[0.0],
                          F=dense.F, kF=[0.0], gammaF=[0.0], gammaE=[0.0], L=L, kL=[0.0],
                          gammaL=[0.0], mu=[0.0], r=[1])
    cf, _ = solve_discretized(data.replace(kN=[9.81 * DT], kL=[9.81 * DT]), dense, v)
    assert np.linalg.norm(cf) < TOL
    cf, vdot = solve_discretized(data, dense, v)
    assert cf.size == 3
    assert vdot[1] == approx(0.0, 1e-7)
    cf, vdot = solve_discretized(data.replace(kN=[-9.81 * DT], kL=[-9.81 * DT]), dense, v)
    assert vdot[1] == approx(9.81, 1e-6)


# 15 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_lcp", [True, False])
def test_two_point_contact_cross_terms(use_lcp):
    rod = Rod2D(mu_coulomb=0.1, mu_static=1.0)
    q, v = resting_horizontal()
    data, dense = accel_problem(rod, q, v)
    # contact 0 rides a conveyor belt (tangential velocity +1): it slides; contact 1 sticks.
    NmQT = dense.NmQT.copy()
    NmQT[:, 0] = dense.N[0] - 0.1 * dense.F[0]
    F = dense.F[1:2].copy()
    data = data.replace(N_minus_mu_Q_T=NmQT, F=F, kF=[0.0], sliding_contacts=[0],
                        non_sliding_contacts=[1], r=[1], mu_sliding=[0.1], mu_non_sliding=[1.0],
                        use_complementarity_problem_solver=use_lcp)
    dense.NmQT, dense.F, dense.r = NmQT, F, np.array([1])
    dense.cone_contacts, dense.mu_cone = np.array([1]), np.array([1.0])
    sol, vdot = solve_accel(data, dense)
    assert sol.cf.size == 3
    assert vdot[0] == approx(0.0)
    assert sol.cf == approx([9.81, 9.81, 0.981], 1e-10)


# 16 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_lcp", [True, False])
def test_contact_limit_cross_term_accel(use_lcp):
    rod = Rod2D(mu_coulomb=0.0, mu_static=1.0)
    q, v = resting_horizontal()
    data, dense = accel_problem(rod, q, v)
    tau = np.array(data.tau)
    tau[0] = 1.0
    L = np.array([[0.0, -1.0, 0.0]])
    data = data.replace(tau=tau, L=L, kL=[0.0], use_complementarity_problem_solver=use_lcp)
    dense.L = L
    sol, vdot = solve_accel(data, dense, physical=use_lcp)
    assert sol.cf.size == 5
    assert vdot[:2] == approx([0.0, 0.0])
    assert sol.fF.sum() == approx(-1.0, 1e-10)
    if not use_lcp:
        # minimum-norm least squares ignores fL >= 0 (as in Drake)
        assert sol.cf == approx([6.54, 6.54, -0.5, -0.5, -6.54], 1e-10)


# 17 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_lcp", [True, False])
def test_two_point_as_limit(use_lcp):
    rod = Rod2D()
    tau = np.array([0.0, rod.mass * G_ACC, 0.0])
    L = np.array([[0.0, 1.0, 0.0]])
    data = AccelProblemData(tau=tau, solve_inertia=rod.M, L=L, kL=[0.0],
                            use_complementarity_problem_solver=use_lcp)
    sol = SOLVER.solve_constraint_problem(data)
    assert sol.converged and sol.cf == approx([MG], 1e-10)
    sol = SOLVER.solve_constraint_problem(data.replace(L=-L, tau=-tau))
    assert sol.converged and sol.cf == approx([MG], 1e-10)
    vdot = SOLVER.compute_generalized_acceleration(data.replace(L=-L, tau=-tau), sol.cf)
    assert vdot[1] == approx(0.0)


# 18 --------------------------------------------------------------------------------------------
def test_two_point_as_limit_discretized():
    rod = Rod2D()
    Mv = np.array([0.0, rod.mass * G_ACC * DT, 0.0])
    L = np.array([[0.0, 1.0, 0.0]])
    data = VelProblemData(Mv=Mv, solve_inertia=rod.M, L=L, kL=[0.0], gammaL=[0.0])
    for d in (data, data.replace(L=-L, Mv=-Mv)):
        sol = SOLVER.solve_discretized_time_lcp(d, DT)
        assert sol.converged and sol.cf == approx([MG], 1e-9)
        vdot = SOLVER.compute_generalized_acceleration(d, sol.cf, v=np.zeros(3), dt=DT)
        assert vdot[1] == approx(0.0, 1e-9)


# 19 --------------------------------------------------------------------------------------------
def test_two_point_pulled_upward():
    rod = Rod2D()
    q, v = resting_horizontal()
    for cd, fd in DUPS:
        data, _ = accel_problem(rod, q, v, (0, 100, 0), cd, fd)
        sol = SOLVER.solve_constraint_problem(data)
        assert sol.converged and sol.status == "no active constraints"
        assert sol.cf.size == data.num_packed and np.linalg.norm(sol.cf) < TOL


# 20 --------------------------------------------------------------------------------------------
def test_no_impact_implies_no_impulses():
    rod = Rod2D()
    q = np.zeros(3)
    v = np.array([0.0, 1.0, 0.0])
    for cd, fd in DUPS:
        data, _ = impact_problem(rod, q, v, cd, fd)
        sol = SOLVER.solve_impact_problem(data)
        assert sol.converged and sol.status == "no active constraints"
        assert sol.cf.size == data.num_packed and np.linalg.norm(sol.cf) < TOL


# 21 --------------------------------------------------------------------------------------------
def test_contact_limit_cross_term_vel():
    rod = Rod2D(mu_coulomb=1.0, mu_static=1.0)
    q, v = sliding_impacting_horizontal(1.0)
    data, dense = impact_problem(rod, q, v)
    Mv = np.array(data.Mv)
    Mv[0] = 1.0
    L = np.array([[0.0, -1.0, 0.0]])
    data = data.replace(Mv=Mv, L=L, kL=[0.0], gammaL=[0.0])
    dense.L = L
    sol, v_plus = solve_impact(data, dense)
    assert sol.cf.size == 5
    assert v_plus[:2] == approx([0.0, 0.0])
    assert sol.fF.sum() == approx(-1.0, 1e-10)


# 22 --------------------------------------------------------------------------------------------
def test_two_point_impact_as_limit():
    rod = Rod2D()
    q, v = sliding_impacting_horizontal(1.0)
    L = np.array([[0.0, 1.0, 0.0]])
    data = VelProblemData(Mv=rod.M @ v, solve_inertia=rod.M, L=L, kL=[0.0], gammaL=[0.0])
    sol = SOLVER.solve_impact_problem(data)
    assert sol.converged and sol.cf == approx([2.0], 1e-12)
    data = data.replace(L=-L, Mv=-data.Mv)
    sol = SOLVER.solve_impact_problem(data)
    v_plus = data.inverse_inertia(data.Mv) + SOLVER.compute_generalized_velocity_change(data,
                                                                                        sol.cf)
    assert sol.converged and sol.cf == approx([2.0], 1e-12)
    assert v_plus[1] == approx(0.0)
    v0 = -v
    data = data.replace(kL=-L @ v0)
    assert data.kL == approx([-1.0])
    sol = SOLVER.solve_impact_problem(data)
    assert sol.converged and sol.cf == approx([4.0], 1e-12)


# 23 --------------------------------------------------------------------------------------------
def test_bilateral_only():
    rod = Rod2D()
    data = VelProblemData(Mv=np.zeros(3), solve_inertia=rod.M, G=np.array([[0.0, 0.0, 1.0]]),
                          kG=[1.0])
    sol = SOLVER.solve_impact_problem(data)
    assert sol.converged and sol.cf == approx([-1.0], 1e-12)
    v_plus = SOLVER.compute_generalized_velocity_change(data, sol.cf)
    assert v_plus == approx([0.0, 0.0, -1.0], 1e-12)
    # pure bilateral time stepping (Drake #9054): empty LCP, fG from the saddle-point solve
    step = SOLVER.solve_discretized_time_lcp(data, 0.01)
    assert step.converged and step.cf == approx([-100.0], 1e-9)
    assert check_lcp(np.zeros((0, 0)), np.zeros(0), np.zeros(0)).ok
