"""Natural-map error checker and the 3-D frictional contact solvers (PGS, ADMM, auto)."""

import numpy as np
import pytest

from sinews.contact import fclib
from sinews.contact.fclib import (
    FrictionContactProblem,
    load_problem,
    natural_map_error,
    natural_map_residual,
    project_on_cone,
    solve,
    solve_admm,
    solve_pgs,
)

SOLVERS = {"pgs": solve_pgs, "admm": solve_admm, "auto": solve}


# ------------------------------------------------------------------------------------------
# Closed-form single-contact problems (W = diag(wn, wt, wt): the rows decouple)
# ------------------------------------------------------------------------------------------
# sticking: q = (-1, 0.1, 0), mu = 0.5, W = I  ->  u = 0, r = -q = (1, -0.1, 0)
# sliding:  q = (-1, 2, 0),   mu = 0.5, W = I  ->  r_n = 1, r_t = -mu r_n (1, 0), u = (0, 1.5, 0)
# sliding with W = diag(2, 4, 4), q = (-2, 0, 6), mu = 0.25: r_n = 1, r_t = (0, -0.25),
#          u_t = 4 (-0.25) + 6 = 5 > 0  (opposite to r_t)
# take-off: q = (1, 3, 0)  ->  r = 0, u = q
# frictionless (mu = 0): q = (-1, 2, 0)  ->  r = (1, 0, 0), u = (0, 2, 0)
CASES = {
    "frictionless": (np.eye(3), [-1.0, 2.0, 0.0], 0.0, [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]),
    "stick": (np.eye(3), [-1.0, 0.1, 0.0], 0.5, [1.0, -0.1, 0.0], [0.0, 0.0, 0.0]),
    "slide": (np.eye(3), [-1.0, 2.0, 0.0], 0.5, [1.0, -0.5, 0.0], [0.0, 1.5, 0.0]),
    "slide_diag": (np.diag([2.0, 4.0, 4.0]), [-2.0, 0.0, 6.0], 0.25, [1.0, 0.0, -0.25], [0.0, 0.0, 5.0]),
    "separate": (np.eye(3), [1.0, 3.0, 0.0], 0.5, [0.0, 0.0, 0.0], [1.0, 3.0, 0.0]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fclib_error_zero_at_closed_form_solution(case):
    W, q, mu, r, u = CASES[case]
    p = FrictionContactProblem(W, q, [mu])
    np.testing.assert_allclose(p.velocity(r), u, atol=1e-15)
    assert natural_map_error(p, r) == 0.0
    assert natural_map_error(p, r, relative_to="q") == 0.0


@pytest.mark.parametrize("case", sorted(CASES))
def test_fclib_error_positive_off_solution(case):
    W, q, mu, r, _ = CASES[case]
    p = FrictionContactProblem(W, q, [mu])
    rng = np.random.default_rng(3)
    for _ in range(20):
        d = rng.normal(size=3) * 10.0 ** rng.uniform(-6, 0)
        assert natural_map_error(p, np.asarray(r) + d) > 0.0


def test_fclib_error_catches_wrong_sliding_direction():
    # On the cone boundary, complementary in the normal direction, but friction pushes the
    # wrong way (r_t parallel to u_t): only the De Saxcé/natural-map test sees this.
    p = FrictionContactProblem(np.eye(3), [-1.0, 2.0, 0.0], [0.5])
    wrong = np.array([1.0, 0.5, 0.0])
    assert natural_map_error(p, wrong) > 0.1


def test_fclib_error_normalisation():
    W, q, mu, r, _ = CASES["slide"]
    p = FrictionContactProblem(W, q, [mu])
    bad = np.array(r) + [0.3, 0.0, 0.0]
    raw = natural_map_error(p, bad, relative_to="none")
    nq = np.linalg.norm(q)
    assert raw > 0
    assert natural_map_error(p, bad) == pytest.approx(raw / (1 + nq))
    assert natural_map_error(p, bad, relative_to="q") == pytest.approx(raw / nq)
    with pytest.raises(ValueError, match="relative_to"):
        natural_map_error(p, bad, relative_to="max")
    with pytest.raises(ValueError, match="r"):
        natural_map_error(p, [1.0, 2.0])
    with pytest.raises(ValueError, match="r"):
        natural_map_error(p, [np.nan, 0, 0])


def test_fclib_cone_projection_properties():
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.05, 2.0, size=200)
    x = rng.normal(size=600) * 3
    px = project_on_cone(x, mu).reshape(-1, 3)
    # in the cone, idempotent, and x - P(x) in the polar cone, orthogonal to P(x)
    assert np.all(np.hypot(px[:, 1], px[:, 2]) <= mu * px[:, 0] + 1e-12)
    np.testing.assert_allclose(project_on_cone(px.ravel(), mu), px.ravel(), atol=1e-13)
    d = x.reshape(-1, 3) - px
    np.testing.assert_allclose(np.sum(d * px, axis=1), 0.0, atol=1e-11)
    # polar cone of K_mu is -K*_mu: -d in K*  <=>  mu ||d_t|| <= -d_n
    assert np.all(mu * np.hypot(d[:, 1], d[:, 2]) <= -d[:, 0] + 1e-11)


def test_fclib_error_kernel_agrees_with_numpy_checker(siconos_dir):
    from sinews.contact._fc3d_cone import natural_map_sq_sum, natural_map_sq_sum_scaled

    p = load_problem(siconos_dir / "fc3d/NESpheres_10_1.dat")
    rng = np.random.default_rng(1)
    r = rng.normal(size=p.size)
    u = p.velocity(r)
    expected = np.linalg.norm(natural_map_residual(p, r)) ** 2
    assert natural_map_sq_sum(r, u, p.mu, 3) == pytest.approx(expected, rel=1e-12)
    c = rng.uniform(0.5, 2.0, size=p.contacts)
    cc = np.repeat(c, 3)
    got = natural_map_sq_sum_scaled(r / cc, u * cc, c, p.mu)
    assert got == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------------------------------
# Solvers
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(SOLVERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_fclib_solvers_recover_closed_form(method, case):
    W, q, mu, r, u = CASES[case]
    p = FrictionContactProblem(W, q, [mu])
    res = SOLVERS[method](p, tol=1e-12, max_iter=5000)
    assert res.converged
    np.testing.assert_allclose(res.r, r, atol=1e-9)
    np.testing.assert_allclose(res.u, u, atol=1e-9)
    assert natural_map_error(p, res.r) <= 1e-12


SMALL = ["fc3d/FC3D_Example1.dat", "fc3d/NESpheres_10_1.dat", "fc3d/Rover11035.dat",
         "fc3d/Rover4396.dat", "fc3d/Rover1039.dat", "fc3d/FrictionContact3D_1c.dat",
         "fc3d/Confeti-ex13-4contact-Fc3D-SBM.dat"]


@pytest.mark.parametrize("name", SMALL)
def test_fclib_pgs_and_admm_agree_on_small_problems(siconos_dir, name):
    p = load_problem(siconos_dir / name)
    a = solve_pgs(p, tol=1e-11, max_iter=20000)
    b = solve_admm(p, tol=1e-11, max_iter=20000)
    assert a.converged and b.converged
    assert natural_map_error(p, a.r) <= 1e-11 and natural_map_error(p, b.r) <= 1e-11
    scale = np.abs(a.r).max()
    np.testing.assert_allclose(a.r, b.r, atol=1e-7 * scale)
    np.testing.assert_allclose(a.u, b.u, atol=1e-7 * max(np.abs(a.u).max(), 1e-12))


@pytest.mark.parametrize("seed", range(6))
def test_fclib_random_problems_pgs_admm_agree(seed):
    """Random well-conditioned problems (W = J J^T + small ridge, mixed statuses): both solvers
    reach 1e-10 by the independent checker and agree on the (unique) velocities."""
    rng = np.random.default_rng(seed)
    nc = int(rng.integers(2, 9))
    J = rng.normal(size=(3 * nc, 3 * nc + 6))
    W = J @ J.T / (3 * nc) + 0.05 * np.eye(3 * nc)
    q = rng.normal(size=3 * nc)
    mu = rng.uniform(0.0, 1.0, size=nc)
    p = FrictionContactProblem(W, q, mu)
    a = solve_pgs(p, tol=1e-10, max_iter=50000)
    b = solve_admm(p, tol=1e-10, max_iter=50000)
    assert a.converged and b.converged
    assert natural_map_error(p, a.r) <= 1e-10 and natural_map_error(p, b.r) <= 1e-10
    np.testing.assert_allclose(a.u, b.u, atol=1e-6 * (1 + np.abs(a.u).max()))
    # the reactions lie in the cones
    ra = a.r.reshape(-1, 3)
    assert np.all(np.hypot(ra[:, 1], ra[:, 2]) <= mu * ra[:, 0] + 1e-12)


def test_fclib_velocities_agree_on_singular_stack(siconos_dir):
    # Box_Stacks' W is rank deficient: reactions are not unique, velocities are
    p = load_problem(siconos_dir / "fclib/Box_Stacks-i0122-82-5.hdf5")
    a = solve_pgs(p, tol=1e-11, max_iter=20000)
    b = solve_admm(p, tol=1e-11, max_iter=20000)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.u, b.u, atol=1e-7 * np.abs(a.u).max())


REAL = ["fclib/Box_Stacks-i0122-82-5.hdf5", "fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
        "fc3d/OneObject-i100000-316.hdf5.dat", "fc3d/Rover9770.dat"]


@pytest.mark.parametrize("method", sorted(SOLVERS))
@pytest.mark.parametrize("name", REAL)
def test_fclib_solvers_reach_target_on_real_files(siconos_dir, name, method):
    p = load_problem(siconos_dir / name)
    res = SOLVERS[method](p, tol=1e-8, max_iter=5000)
    err = natural_map_error(p, res.r)
    assert res.converged and err <= 1e-8
    # the kernels sum in a different order (fastmath re-association): agree to ~1e-3 relative
    assert res.error == pytest.approx(err, rel=1e-3, abs=1e-15)
    np.testing.assert_allclose(res.u, p.velocity(res.r), atol=1e-12 * (1 + np.abs(res.u).max()))


def test_fclib_admm_solves_stack_where_pgs_stalls(siconos_dir):
    p = load_problem(siconos_dir / "fc3d/BoxesStack1-i100000-32.hdf5.dat")
    pgs = solve_pgs(p, tol=1e-8, max_iter=300)
    assert not pgs.converged and natural_map_error(p, pgs.r) > 1e-8
    adm = solve_admm(p, tol=1e-8, max_iter=5000)
    assert adm.converged and natural_map_error(p, adm.r) <= 1e-8
    auto = solve(p, tol=1e-8, max_iter=5000)
    assert auto.converged and natural_map_error(p, auto.r) <= 1e-8
    assert "admm" in auto.solver


def test_fclib_non_convergence_is_reported(siconos_dir):
    p = load_problem(siconos_dir / "fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5")
    for method in SOLVERS.values():
        res = method(p, tol=1e-12, max_iter=3)
        assert not res.converged
        assert res.iterations <= 3
        assert res.error == pytest.approx(natural_map_error(p, res.r), rel=1e-3)
        assert res.error > 1e-12


def test_fclib_warm_start_from_solution(siconos_dir):
    p = load_problem(siconos_dir / "fc3d/NESpheres_10_1.dat")
    ref = solve_pgs(p, tol=1e-12, max_iter=20000)
    again = solve_pgs(p, tol=1e-10, r0=ref.r)
    assert again.converged and again.iterations <= 2


def test_fclib_solvers_reject_bad_input():
    p = FrictionContactProblem(np.eye(3), [-1.0, 0.0, 0.0], [0.5])
    for method in SOLVERS.values():
        with pytest.raises(ValueError, match="tol"):
            method(p, tol=-1.0)
        with pytest.raises(ValueError, match="tol"):
            method(p, tol=np.nan)
        with pytest.raises(ValueError, match="max_iter"):
            method(p, max_iter=0)
        with pytest.raises(ValueError, match="r"):
            method(p, r0=np.zeros(4))
        with pytest.raises(ValueError, match="problem"):
            method("not a problem")
    with pytest.raises(ValueError, match="omega"):
        solve_pgs(p, omega=2.5)
    with pytest.raises(ValueError, match="rho"):
        solve_admm(p, rho=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        solve_admm(p, alpha=2.0)
    with pytest.raises(ValueError, match="eta"):
        solve_admm(p, eta=-1.0)
    with pytest.raises(ValueError, match="W"):
        solve_pgs(p, W=np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError, match="chunk"):
        solve(p, chunk=0)
    p2 = FrictionContactProblem(np.eye(2), [-1.0, 0.0], [0.5], dimension=2)
    with pytest.raises(ValueError, match="dimension"):
        solve_pgs(p2)
    zero_diag = FrictionContactProblem(np.diag([0.0, 1.0, 1.0]), [-1.0, 0.0, 0.0], [0.5])
    with pytest.raises(ValueError, match="W"):
        solve_pgs(zero_diag)


def test_fclib_module_exports():
    assert set(fclib.__all__) >= {"FrictionContactProblem", "FrictionContactResult", "read_fclib",
                                   "read_siconos_dat", "natural_map_error", "solve_pgs", "solve_admm"}
    for name in fclib.__all__:
        assert hasattr(fclib, name)
