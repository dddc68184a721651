"""Randomised properties of the constraint solver on random Rod2D impacts and accelerations.

* Frictionless problems have a unique answer (the post-impact velocity is the M-projection of the
  free velocity onto the feasible set; Gauss' principle at acceleration level). It is compared
  with the exact enumeration of the unreduced MLCP in (v, fG; fN, fL), which never forms a
  Delassus matrix.
* Frictional problems: every answer reported as converged must satisfy the Signorini/Coulomb
  conditions re-evaluated from dense matrices; the problems without bilateral constraints
  (solvable by Anitescu & Potra's theorem) must converge.
"""

from __future__ import annotations

import numpy as np
import pytest

from sinews.contact.constraint_solver import ConstraintSolver

from test_drake_rod2d import (Rod2D, accel_problem, check_accel_solution, check_vel_solution,
                              enumerate_mlcp, impact_problem, sync)

SOLVER = ConstraintSolver()


def _random_rod_state(rng):
    rod = Rod2D(mu_coulomb=rng.uniform(0, 1.5), mu_static=rng.uniform(0, 1.5))
    theta = rng.uniform(-0.4, 0.4) + rng.choice([0.0, np.pi])
    # both ends on or below the ground half of the time, otherwise only the lower one
    y = 0.0 if rng.random() < 0.5 else abs(np.sin(theta)) * rod.half_length
    q = np.array([rng.normal(), y, theta])
    if rng.random() < 0.5:
        q[1] = 0.0
        q[2] = rng.choice([0.0, np.pi])
    v = rng.normal(size=3)
    return rod, q, v


def _frictionless_oracle(dense, level):
    """Unique v (post-impact velocity or acceleration) from the MLCP in u = (v, fG),
    z = (fN, fL), solved by exact enumeration."""
    M, N, L, G = dense.M, dense.N, dense.L, dense.G
    nv, nc, nl, nb = 3, N.shape[0], L.shape[0], G.shape[0]
    A_u = np.block([[M, -G.T], [G, np.zeros((nb, nb))]])
    normal_T = dense.NmQT if level == "accel" else N.T
    B_u = np.vstack([np.hstack([-normal_T, -L.T]), np.zeros((nb, nc + nl))])
    rhs = dense.tau if level == "accel" else dense.Mv
    a = np.concatenate([-rhs, dense.kG])
    C_z = np.vstack([np.hstack([N, np.zeros((nc, nb))]), np.hstack([L, np.zeros((nl, nb))])])
    sols = enumerate_mlcp(A_u, B_u, a, C_z, np.zeros((nc + nl, nc + nl)),
                          np.concatenate([dense.kN, dense.kL]))
    return [u[:nv] for u, _ in sols]


def _add_limit_and_bilateral(rng, data, dense, with_limit, with_bilateral):
    changes = {}
    if with_limit:
        L = np.array([[rng.normal(), -1.0, rng.normal()]])
        changes.update(L=L, kL=[rng.uniform(0.0, 1.0)])
        dense.L = L
    if with_bilateral:
        G = np.array([[rng.normal(), 0.0, 1.0]])
        changes.update(G=G, kG=[rng.normal()])
        dense.G = G
    data = data.replace(**changes)
    return data, sync(dense, data)


@pytest.mark.parametrize("seed", range(3))
def test_frictionless_impacts_match_projection_oracle(seed):
    rng = np.random.default_rng(seed)
    for case in range(12):
        rod, q, v = _random_rod_state(rng)
        rod.mu_coulomb = 0.0
        data, dense = impact_problem(rod, q, v)
        if data.num_contacts == 0:
            continue
        data = data.replace(kN=rng.uniform(-0.5, 0.5, data.num_contacts))
        data, dense = _add_limit_and_bilateral(rng, data, dense, case % 2 == 0, case % 3 == 0)
        sol = SOLVER.solve_impact_problem(data)
        assert sol.converged, (seed, case, sol.status)
        v_plus = check_vel_solution(dense, sol.cf)
        oracle = _frictionless_oracle(dense, "vel")
        assert oracle, "feasible by construction (the limit is satisfied by v = 0)"
        for u in oracle:
            assert v_plus == pytest.approx(u, abs=1e-8)


@pytest.mark.parametrize("seed", range(3))
def test_frictionless_accelerations_match_gauss_oracle(seed):
    rng = np.random.default_rng(100 + seed)
    for case in range(12):
        rod, q, v = _random_rod_state(rng)
        rod.mu_coulomb = rod.mu_static = 0.0
        data, dense = accel_problem(rod, q, v, rng.normal(scale=20.0, size=3))
        if data.num_contacts == 0:
            continue
        data, dense = _add_limit_and_bilateral(rng, data, dense, case % 2 == 0, case % 3 == 0)
        sol = SOLVER.solve_constraint_problem(data)
        assert sol.converged, (seed, case, sol.status)
        vdot = check_accel_solution(dense, sol.cf)
        for u in _frictionless_oracle(dense, "accel"):
            assert vdot == pytest.approx(u, abs=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_frictional_impacts_are_physical(seed):
    rng = np.random.default_rng(200 + seed)
    for case in range(15):
        rod, q, v = _random_rod_state(rng)
        cd = int(rng.integers(0, 2))
        fd = int(rng.integers(0, 3))
        data, dense = impact_problem(rod, q, v, contact_dup=cd, friction_dir_dup=fd)
        if data.num_contacts == 0:
            continue
        with_bilateral = case % 4 == 0
        data, dense = _add_limit_and_bilateral(rng, data, dense, case % 3 == 0, with_bilateral)
        sol = SOLVER.solve_impact_problem(data)
        if not with_bilateral:
            assert sol.converged, (seed, case, sol.status)
        if sol.converged:
            check_vel_solution(dense, sol.cf, tol=1e-7)
        # the time-stepping path on the same data (forces, dt = 1e-3)
        step = SOLVER.solve_discretized_time_lcp(data, 1e-3)
        if not with_bilateral:
            assert step.converged, (seed, case, step.status)
        if step.converged:
            check_vel_solution(dense, step.cf, dt=1e-3, tol=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_frictional_accelerations_are_physical(seed):
    rng = np.random.default_rng(300 + seed)
    converged = 0
    for case in range(15):
        rod, q, v = _random_rod_state(rng)
        if rng.random() < 0.5:
            v[0] = v[2] = 0.0  # non-sliding contacts with friction cones
        data, dense = accel_problem(rod, q, v, rng.normal(scale=20.0, size=3),
                                    friction_dir_dup=int(rng.integers(0, 2)))
        if data.num_contacts == 0:
            continue
        sol = SOLVER.solve_constraint_problem(data)
        # sliding friction can make the LCP unsolvable (Painleve); otherwise it must converge
        if data.num_sliding == 0:
            assert sol.converged, (seed, case, sol.status)
        if sol.converged:
            converged += 1
            check_accel_solution(dense, sol.cf, tol=1e-7)
    assert converged > 0
