"""Every Siconos LCP and MLCP test file: read, solved or reported unsolvable, checked independently.

The checks here are written out inline (w = M z + q, z >= 0, w >= 0, z.w ~ 0) instead of calling
sinews.lcp.check_lcp, so that they are independent of the library's own checker. Existence or
non-existence of solutions of the small problems is decided by an independent oracle: one linear
feasibility program per complementary support set (scipy.optimize.linprog).
"""

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from sinews.lcp import (read_siconos_lcp, read_siconos_mlcp, solve_lemke,
                        solve_mlcp, solve_pgs, solve_principal_pivoting)

LCP_FILES = [
    "lcp_CPS_1.dat", "lcp_CPS_2.dat", "lcp_CPS_3.dat", "lcp_CPS_4.dat", "lcp_CPS_4bis.dat",
    "lcp_CPS_5.dat", "lcp_Pang_isolated_sol.dat", "lcp_Pang_isolated_sol_perturbed.dat",
    "lcp_deudeu.dat", "lcp_deudeu_block.dat", "lcp_enum_fails.dat", "lcp_exp_murty.dat",
    "lcp_exp_murty2.dat", "lcp_inf_sol_perturbed.dat", "lcp_mmc.dat", "lcp_ortiz.dat",
    "lcp_ortiz_block.dat", "lcp_tobenna.dat", "lcp_trivial.dat", "lcp_trivial_block.dat",
]
MLCP_FILES = [
    "PDSym_mlcp.dat", "PD_mlcp.dat", "RCD_mlcp.dat", "RLCD_mlcp.dat", "Rectangular_mlcp.dat",
    "deudeu_mlcp.dat", "diodeBridge20_mlcp.dat", "diodeBridge_mlcp.dat", "m2n1_mlcp.dat",
    "m3n2_mlcp.dat", "relay2_mlcp.dat", "relay3_mlcp.dat",
]

# Files with no solution, and why (proved below by the enumeration oracle and by hand):
# Pang perturbed: w1 = z0 - 1 >= 0 and w2 = 1 - z0 >= 0 force z0 = 1, and then
# w0 = -z1 - z2 - 1e-4 < 0.
NO_SOLUTION = {"lcp_Pang_isolated_sol_perturbed.dat"}

# Files on which Lemke's method ray-terminates although a solution exists (bimatrix game, Drake
# testProblem4); the principal pivoting solver finds it.
LEMKE_RAY_TERMINATES = {"lcp_CPS_3.dat"}

# Files on which Lemke without anti-cycling hits its pivot limit; lexicographic Lemke solves them.
LEMKE_CYCLES = {"lcp_tobenna.dat"}


def independent_lcp_check(M, q, z, tol):
    w = M @ z + q
    scale = max(1.0, np.max(np.abs(z)), np.max(np.abs(w)))
    return (z.min() >= -tol and w.min() >= -tol and abs(z @ w) <= tol * scale * len(z))


def lcp_has_solution(M, q, tol=1e-9):
    """Enumerate supports A: is {z_A >= 0, M_AA z_A = -q_A, M_IA z_A + q_I >= 0} non-empty?"""
    n = len(q)
    for k in range(n + 1):
        for A in itertools.combinations(range(n), k):
            A = list(A)
            I = [i for i in range(n) if i not in A]
            if k == 0:
                if q.min() >= -tol:
                    return True
                continue
            res = linprog(np.zeros(k),
                          A_ub=-M[np.ix_(I, A)] if I else None, b_ub=q[I] + tol if I else None,
                          A_eq=M[np.ix_(A, A)], b_eq=-q[A], bounds=[(0, None)] * k,
                          method="highs")
            if res.status == 0:
                return True
    return False


def best_effort(M, q):
    """Lexicographic Lemke first, then principal pivoting."""
    res = solve_lemke(M, q, lexicographic=True)
    if res.converged:
        return res
    pp = solve_principal_pivoting(M, q)
    return pp if pp.converged else res


@pytest.mark.parametrize("name", LCP_FILES)
def test_siconos_lcp_solved_or_reported(siconos_dir, name):
    prob = read_siconos_lcp(siconos_dir / "lcp" / name)
    M, q = prob.M, prob.q
    n = len(q)
    assert M.shape == (n, n)
    res = best_effort(M, q)
    if name in NO_SOLUTION:
        assert not res.converged
        assert res.status  # a reason is given
        assert not solve_lemke(M, q).converged
        assert not solve_principal_pivoting(M, q).converged
        assert not lcp_has_solution(M, q)
        return
    assert res.converged, f"{name}: {res.status}"
    assert independent_lcp_check(M, q, res.z, 1e-8 * max(1.0, np.abs(M).max(), np.abs(q).max()))
    np.testing.assert_allclose(res.w, M @ res.z + q, atol=1e-12 * max(1, np.abs(q).max()))
    if n <= 4:  # the oracle agrees that a solution exists (the checked z already proves it)
        assert lcp_has_solution(M, q)


@pytest.mark.parametrize("name", sorted(LEMKE_RAY_TERMINATES | LEMKE_CYCLES))
def test_siconos_lcp_documented_lemke_failures(siconos_dir, name):
    prob = read_siconos_lcp(siconos_dir / "lcp" / name)
    plain = solve_lemke(prob.M, prob.q)
    assert not plain.converged
    if name in LEMKE_RAY_TERMINATES:
        assert "ray termination" in plain.status
        assert solve_principal_pivoting(prob.M, prob.q).converged
    else:
        assert "pivot limit" in plain.status
        assert solve_lemke(prob.M, prob.q, lexicographic=True).converged


def test_siconos_lcp_known_solutions(siconos_dir):
    d = siconos_dir / "lcp"
    p = read_siconos_lcp(d / "lcp_CPS_2.dat")  # README: M read column-major, z = (0, 1, 3)
    np.testing.assert_allclose(p.M, [[0, -1, 2], [2, 0, -2], [-1, 1, 0]])
    np.testing.assert_allclose(solve_lemke(p.M, p.q).z, [0, 1, 3], atol=1e-12)
    p = read_siconos_lcp(d / "lcp_exp_murty.dat")  # upper triangular, z = e6
    assert np.allclose(np.tril(p.M, -1), 0)
    np.testing.assert_allclose(solve_lemke(p.M, p.q).z, np.eye(6)[5], atol=1e-12)
    p = read_siconos_lcp(d / "lcp_deudeu.dat")  # PD, interior solution z = M^-1 (-q)
    np.testing.assert_allclose(solve_lemke(p.M, p.q).z, np.linalg.solve(p.M, -p.q), atol=1e-12)
    p = read_siconos_lcp(d / "lcp_trivial.dat")
    np.testing.assert_allclose(solve_lemke(p.M, p.q).z, 1 / np.arange(1, 10), atol=1e-12)


@pytest.mark.parametrize("base", ["lcp_deudeu", "lcp_ortiz", "lcp_trivial"])
def test_sparse_block_storage_matches_dense(siconos_dir, base):
    dense = read_siconos_lcp(siconos_dir / "lcp" / f"{base}.dat")
    block = read_siconos_lcp(siconos_dir / "lcp" / f"{base}_block.dat")
    np.testing.assert_allclose(block.M, dense.M, rtol=1e-6)
    np.testing.assert_allclose(block.q, dense.q)


def test_mmc_symmetric_pd_all_methods_agree(siconos_dir):
    p = read_siconos_lcp(siconos_dir / "lcp" / "lcp_mmc.dat")
    ref = solve_lemke(p.M, p.q)
    pp = solve_principal_pivoting(p.M, p.q)
    pgs = solve_pgs(p.M, p.q, tol=1e-12, max_iter=100_000)
    assert ref.converged and pp.converged and pgs.converged, (pp.status, pgs.status)
    scale = np.abs(ref.z).max()
    np.testing.assert_allclose(pp.z, ref.z, atol=1e-9 * scale)
    np.testing.assert_allclose(pgs.z, ref.z, atol=1e-6 * scale)


@pytest.mark.parametrize("name", MLCP_FILES)
def test_siconos_mlcp_solved(siconos_dir, name):
    p = read_siconos_mlcp(siconos_dir / "mlcp" / name)
    n, m = p.n, p.m
    assert p.A.shape == (n, n) and p.B.shape == (m, m)
    assert p.C.shape == (n, m) and p.D.shape == (m, n)
    if p.M.shape == (n + m, n + m):  # self-check of the two storage forms (README)
        np.testing.assert_allclose(p.M, np.block([[p.A, p.C], [p.D, p.B]]))
        np.testing.assert_allclose(p.q, np.concatenate([p.a, p.b]))
    else:
        assert name == "Rectangular_mlcp.dat" and p.M.shape == (3, 2)
    res = solve_mlcp(p.A, p.C, p.D, p.B, p.a, p.b)
    assert res.converged, f"{name}: {res.status}"
    # Independent check from the ABCD data.
    scale = max(1.0, max(np.abs(x).max() for x in (p.A, p.B, p.C, p.D, p.a, p.b)))
    tol = 1e-8 * scale
    assert np.max(np.abs(p.A @ res.u + p.C @ res.v + p.a)) <= tol
    w = p.D @ res.u + p.B @ res.v + p.b
    np.testing.assert_allclose(res.w, w, atol=tol)
    assert res.v.min() >= -tol and w.min() >= -tol
    assert np.max(np.abs(res.v * w)) <= tol * max(1.0, np.abs(res.v).max(), np.abs(w).max())
    # Independent check from the file's (M, q) form when it is square.
    if p.M.shape == (n + m, n + m):
        ww = p.M @ np.concatenate([res.u, res.v]) + p.q
        assert np.max(np.abs(ww[:n])) <= tol
        np.testing.assert_allclose(ww[n:], w, atol=tol)


@pytest.mark.parametrize("name", MLCP_FILES)
def test_siconos_mlcp_principal_pivoting_agrees_on_w(siconos_dir, name):
    p = read_siconos_mlcp(siconos_dir / "mlcp" / name)
    lem = solve_mlcp(p.A, p.C, p.D, p.B, p.a, p.b)
    pp = solve_mlcp(p.A, p.C, p.D, p.B, p.a, p.b, method="principal_pivoting")
    assert pp.converged, pp.status
    # Both must satisfy the MLCP; the solutions of these circuit problems coincide.
    np.testing.assert_allclose(pp.v, lem.v, atol=1e-7 * max(1.0, np.abs(lem.v).max()))
    np.testing.assert_allclose(pp.u, lem.u, atol=1e-7 * max(1.0, np.abs(lem.u).max()))


def test_reader_errors(tmp_path):
    with pytest.raises(ValueError, match="path"):
        read_siconos_lcp(tmp_path / "missing.dat")
    bad = tmp_path / "bad.dat"
    bad.write_text("2\n0\n2\n2\n2 2\n1 0 0\n")
    with pytest.raises(ValueError, match="path"):
        read_siconos_lcp(bad)
    bad.write_text("1\n7\n1\n1\n")
    with pytest.raises(ValueError, match="storage"):
        read_siconos_lcp(bad)
