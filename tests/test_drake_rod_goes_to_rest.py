"""End-to-end Rod2D time stepping with the impact solver (Drake's ``RodGoesToRest``, drake.md §5.3).

Rod2D's discretized mode: both endpoints are always contacts (Anitescu-Hart style), each step
solves an impact problem with gammaN = gammaF = gammaE = gamma and kN = ERP * height / dt, then
v+ = v + Delta v and q+ = q + dt v+. The oracle is the closed-form static equilibrium: each endpoint
carries m |g| / 2, and with the implicit spring-damper of stiffness k_eff the rest penetration is
m |g| / (2 k_eff). With impulse unknowns the consistent regulariser is gamma = CFM/dt (k_eff = k);
Drake's Rod2D uses the force-level gamma = CFM, which makes the contact k/dt stiff.
"""

from __future__ import annotations

import numpy as np
import pytest

from sinews.contact.constraint_solver import (ConstraintSolver, VelProblemData,
                                              cfm_erp_from_stiffness_damping,
                                              stiffness_damping_from_cfm_erp)

from test_drake_rod2d import G_ACC, Rod2D

SOLVER = ConstraintSolver()


def simulate(rod, q, v, dt, steps, k=1e4, dissipation=1.0, drake_gamma=True):
    damping = 1.5 * dissipation * k * 1e-3 * rod.half_length  # linearised Hunt-Crossley
    cfm, erp = cfm_erp_from_stiffness_damping(k, damping, dt)
    gamma = cfm if drake_gamma else cfm / dt
    M = rod.M
    f_ext = np.array([0.0, rod.mass * G_ACC, 0.0])
    for _ in range(steps):
        ends = rod.endpoints(q)
        N = np.zeros((2, 3))
        F = np.zeros((2, 3))
        for i in range(2):
            r = ends[i] - q[:2]
            N[i] = [0.0, 1.0, r[0]]
            F[i] = [1.0, 0.0, -r[1]]
        v = v + dt * np.linalg.solve(M, f_ext)
        data = VelProblemData(Mv=M @ v, solve_inertia=M, N=N, kN=erp * ends[:, 1] / dt,
                              gammaN=[gamma] * 2, F=F, kF=[0.0, 0.0], gammaF=[gamma] * 2,
                              gammaE=[gamma] * 2, mu=[rod.mu_coulomb] * 2, r=[1, 1])
        sol = SOLVER.solve_impact_problem(data)
        assert sol.converged, sol.status
        v = v + SOLVER.compute_generalized_velocity_change(data, sol.cf)
        q = q + dt * v
    return q, v


@pytest.mark.parametrize("drake_gamma", [True, False])
def test_rod_goes_to_rest(drake_gamma):
    rod = Rod2D(mass=2.0, mu_coulomb=1000.0, mu_static=1000.0)
    s = np.sqrt(2.0) / 2
    q0 = np.array([-s, s, 3 * np.pi / 4])  # left end touches the ground at the origin
    v0 = np.array([1.0, 0.0, 0.0])
    dt, k = 1e-2, 1e4
    q, v = simulate(rod, q0, v0, dt, 1000, k=k, drake_gamma=drake_gamma)
    assert min(abs(q[2]), abs(q[2] - np.pi)) < 1e-6
    assert abs(v[2]) < 1e-6 and np.linalg.norm(v) < 1e-6
    k_eff = k / dt if drake_gamma else k
    assert q[1] == pytest.approx(rod.mass * G_ACC / 2 / k_eff, rel=1e-6)


def test_cfm_erp_rod2d_defaults_and_round_trip():
    k, b, dt = 1e4, 1.5 * 1.0 * 1e4 * 1e-3 * 1.0, 1e-2
    assert b == pytest.approx(15.0)
    cfm, erp = cfm_erp_from_stiffness_damping(k, b, dt)
    assert cfm == pytest.approx(1 / 115) and erp == pytest.approx(100 / 115)
    assert stiffness_damping_from_cfm_erp(cfm, erp, dt) == pytest.approx((k, b))
    rng = np.random.default_rng(0)
    for _ in range(20):
        k, b, dt = 10 ** rng.uniform(0, 8), 10 ** rng.uniform(-3, 4), 10 ** rng.uniform(-5, -1)
        assert stiffness_damping_from_cfm_erp(*cfm_erp_from_stiffness_damping(k, b, dt),
                                              dt) == pytest.approx((k, b), rel=1e-9)
