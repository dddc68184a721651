"""Property tests of sinews.contact.impulse_solver on random small problems (Hypothesis).

Oracles: brute-force enumeration of active sets (frictionless problems, unique solution), an
independent checker of the contact conditions, kinetic energy computed in generalized coordinates.
"""

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sinews.contact.impulse_solver import (
    ContactType,
    FricCond,
    PGSImpulseSolver,
    PLUSImpulseSolver,
    UniCond,
    UniContactRT,
)

FAST = settings(max_examples=40, deadline=None)

# Numerical trouble (overflow, 0/0) must not pass silently.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def random_system(seed, n_rows, n_dofs, velocity_scale=2.0):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(n_rows, n_dofs))
    L = rng.normal(size=(n_dofs, n_dofs))
    M = L @ L.T + n_dofs * np.eye(n_dofs)
    u = velocity_scale * rng.normal(size=n_dofs)
    return rng, G, M, u


def impulse_to_velocity(M, G, u, pi):
    """Generalized velocity after the impulse ``-G^T pi``."""
    return u - np.linalg.solve(M, G.T @ pi)


def kinetic_energy(M, u):
    return 0.5 * u @ M @ u


def lcp_by_enumeration(A, v, signs):
    """The unique solution of the frictionless problem by trying every active set."""
    k = len(v)
    found = []
    for mask in itertools.product([False, True], repeat=k):
        S = np.flatnonzero(mask)
        pi = np.zeros(k)
        if S.size:
            pi[S] = np.linalg.solve(A[np.ix_(S, S)], v[S])
        w = v - A @ pi
        if np.all(signs * pi <= 1e-10) and np.all(signs * w >= -1e-10):
            found.append(pi)
    return found


# ------------------------------------------------------------------------------------------------
# Frictionless: PGS, PLUS and enumeration agree (A positive definite => unique solution)
# ------------------------------------------------------------------------------------------------
@FAST
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 5), extra=st.integers(0, 3))
def test_frictionless_pgs_plus_and_enumeration_agree(seed, k, extra):
    rng, G, M, u = random_system(seed, k, k + extra)
    A = G @ np.linalg.solve(M, G.T)
    A = 0.5 * (A + A.T)
    assume(np.linalg.cond(A) < 1e3)
    signs = rng.choice([-1, 1], size=k)
    v = G @ u
    (oracle,) = lcp_by_enumeration(A, v, signs)
    scale = max(1.0, np.max(np.abs(oracle)))
    for solver in (PGSImpulseSolver(convergence_tol=1e-12, max_iters=20000), PLUSImpulseSolver()):
        recs = [UniContactRT(normal=i, sign=int(signs[i])) for i in range(k)]
        res = solver.solve(0, None, A, None, (), None, v, None, uni_contact=recs)
        assert res.converged
        np.testing.assert_allclose(res.pi, oracle, atol=1e-7 * scale)
        for i, rec in enumerate(recs):
            if abs(oracle[i]) > 1e-6 * scale:
                assert rec.contact_cond == UniCond.UNI_ACTIVE


# ------------------------------------------------------------------------------------------------
# Independent checks of the frictional conditions
# ------------------------------------------------------------------------------------------------
def frictional_problem(seed, k, extra):
    rng, G, M, u = random_system(seed, 3 * k, max(3, 3 * k - 2 + extra))
    A = G @ np.linalg.solve(M, G.T)
    A = 0.5 * (A + A.T)
    mu = rng.uniform(0.0, 1.2, size=k)
    return G, M, u, A, mu


def contacts(k, mu, types=None):
    types = types or [ContactType.PARTICIPATING] * k
    return [UniContactRT(normal=3 * i, friction=(3 * i + 1, 3 * i + 2), eff_mu=float(mu[i]),
                         contact_type=types[i]) for i in range(k)]


def check_common(A, v, pi, verr, mu, k, tol):
    """Conditions every converged answer satisfies (also PLUS across several intervals)."""
    np.testing.assert_allclose(verr, v - A @ pi, atol=tol)
    for i in range(k):
        n, F = 3 * i, [3 * i + 1, 3 * i + 2]
        assert pi[n] <= tol  # pushes
        assert verr[n] >= -tol  # no penetration left
        assert np.linalg.norm(pi[F]) <= mu[i] * abs(pi[n]) + tol  # inside the cone


@FAST
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 3), extra=st.integers(0, 5))
def test_pgs_solution_satisfies_its_conditions(seed, k, extra):
    G, M, u, A, mu = frictional_problem(seed, k, extra)
    v = G @ u
    recs = contacts(k, mu)
    res = PGSImpulseSolver(convergence_tol=1e-11, max_iters=5000).solve(
        0, None, A, None, (), None, v, None, uni_contact=recs)
    assume(res.converged)
    pi, w = res.pi, res.verr
    tol = 1e-6 * max(1.0, np.max(np.abs(pi)))
    check_common(A, v, pi, w, mu, k, tol)
    for i, rec in enumerate(recs):
        n, F = 3 * i, [3 * i + 1, 3 * i + 2]
        assert abs(pi[n] * w[n]) <= tol * max(1.0, abs(w[n]))  # complementarity
        if rec.friction_cond == FricCond.ROLLING:
            np.testing.assert_allclose(w[F], 0.0, atol=tol)
        elif rec.friction_cond == FricCond.SLIDING:
            # PGS's fixed point: pi_F on the boundary, parallel to diag(A_FF)^-1 w_F.
            assert np.linalg.norm(pi[F]) == pytest.approx(mu[i] * abs(pi[n]), abs=tol)
            scaled = w[F] / np.diag(A)[F]
            cross = pi[F][0] * scaled[1] - pi[F][1] * scaled[0]
            assert abs(cross) <= tol * max(1.0, np.linalg.norm(scaled))
            assert pi[F] @ scaled >= -tol


@FAST
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 3), extra=st.integers(0, 5))
def test_plus_solution_satisfies_its_conditions(seed, k, extra):
    G, M, u, A, mu = frictional_problem(seed, k, extra)
    v = G @ u
    recs = contacts(k, mu)
    res = PLUSImpulseSolver(max_rolling_speed=1e-9).solve(0, None, A, None, (), None, v, None,
                                                          uni_contact=recs)
    assume(res.converged)
    pi, w = res.pi, res.verr
    tol = 1e-6 * max(1.0, np.max(np.abs(pi)))
    check_common(A, v, pi, w, mu, k, tol)
    if res.intervals != 1:
        return
    # One interval: the final state is exactly the one PLUS solved for.
    for i, rec in enumerate(recs):
        n, F = 3 * i, [3 * i + 1, 3 * i + 2]
        radius = mu[i] * abs(pi[n])
        if rec.contact_cond == UniCond.UNI_ACTIVE:
            assert abs(w[n]) <= tol
        else:
            assert abs(pi[n]) <= tol and np.linalg.norm(pi[F]) <= tol
        if rec.friction_cond == FricCond.ROLLING:
            np.testing.assert_allclose(w[F], 0.0, atol=tol)
        elif rec.friction_cond == FricCond.IMPENDING:  # maximal dissipation at the end slip
            assert np.linalg.norm(pi[F]) == pytest.approx(radius, abs=tol)
            assert np.linalg.norm(np.linalg.norm(w[F]) * pi[F] - radius * w[F]) <= tol * max(
                1.0, np.linalg.norm(w[F]))
        elif rec.friction_cond == FricCond.SLIDING:  # along the slip at the start, <= 30 deg turn
            u0 = v[F] / np.linalg.norm(v[F])
            np.testing.assert_allclose(pi[F], radius * u0, atol=tol)
            if np.linalg.norm(w[F]) > tol:
                assert w[F] @ u0 >= np.cos(np.deg2rad(30)) * np.linalg.norm(w[F]) - tol


# ------------------------------------------------------------------------------------------------
# Kinetic energy never increases (compression, then a Poisson expansion with one e <= 1)
# ------------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 3), extra=st.integers(0, 5),
       e=st.floats(0.0, 1.0), plus=st.booleans())
def test_kinetic_energy_never_increases(seed, k, extra, e, plus):
    G, M, u, A, mu = frictional_problem(seed, k, extra)
    solver = (PLUSImpulseSolver(max_rolling_speed=1e-9) if plus
              else PGSImpulseSolver(convergence_tol=1e-11, max_iters=5000))
    recs = contacts(k, mu)
    comp = solver.solve(0, None, A, None, (), None, G @ u, None, uni_contact=recs)
    u1 = impulse_to_velocity(M, G, u, comp.pi)
    expanding = [3 * i for i in range(k) if recs[i].contact_cond == UniCond.UNI_ACTIVE]
    pi_expand = np.zeros(3 * k)
    pi_expand[expanding] = e * comp.pi[expanding]
    types = [ContactType.KNOWN if 3 * i in expanding else ContactType.PARTICIPATING
             for i in range(k)]
    exp = solver.solve(1, None, A, None, expanding, pi_expand, G @ u1, None,
                       uni_contact=contacts(k, mu, types))
    assume(comp.converged and exp.converged)
    u2 = impulse_to_velocity(M, G, u1, exp.pi + pi_expand)
    ke0 = kinetic_energy(M, u)
    assert kinetic_energy(M, u1) <= ke0 * (1 + 1e-9) + 1e-12
    assert kinetic_energy(M, u2) <= ke0 * (1 + 1e-9) + 1e-12


def test_plus_converges_on_most_random_frictional_problems():
    """Honest reporting must not hide a solver that rarely works: check the success rate."""
    solver = PLUSImpulseSolver(max_rolling_speed=1e-9)
    ok = 0
    trials = 60
    for seed in range(trials):
        G, M, u, A, mu = frictional_problem(seed, 1 + seed % 3, seed % 5)
        ok += solver.solve(0, None, A, None, (), None, G @ u, None,
                           uni_contact=contacts(1 + seed % 3, mu)).converged
    assert ok >= 0.9 * trials
    assert solver.n_solves[0] == trials and solver.n_failures[0] == trials - ok


# ------------------------------------------------------------------------------------------------
# PGS and PLUS agree where the frictional solution is unique
# ------------------------------------------------------------------------------------------------
@FAST
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 4))
def test_pgs_and_plus_agree_on_independent_point_masses(seed, k):
    """Independent point masses (block-diagonal isotropic A): one unique answer per contact."""
    rng = np.random.default_rng(seed)
    masses = rng.uniform(0.5, 3.0, size=k)
    A = np.diag(np.repeat(1.0 / masses, 3))
    v = rng.normal(size=3 * k)
    v[0::3] = -np.abs(v[0::3]) - 0.1  # all approaching
    mu = rng.uniform(0.0, 1.0, size=k)
    pgs = PGSImpulseSolver(convergence_tol=1e-12, max_iters=5000).solve(
        0, None, A, None, (), None, v, None, uni_contact=contacts(k, mu))
    plus = PLUSImpulseSolver(max_rolling_speed=1e-9).solve(
        0, None, A, None, (), None, v, None, uni_contact=contacts(k, mu))
    assert pgs.converged and plus.converged
    np.testing.assert_allclose(pgs.pi, plus.pi, atol=1e-8)
    for i in range(k):  # and both equal the closed form
        F = [3 * i + 1, 3 * i + 2]
        pn = masses[i] * v[3 * i]
        vt = v[F]
        stick = masses[i] * vt
        cap = mu[i] * abs(pn)
        expected = stick if np.linalg.norm(stick) <= cap else cap * vt / np.linalg.norm(vt)
        np.testing.assert_allclose(plus.pi[F], expected, atol=1e-8)


@pytest.mark.parametrize("seed", range(8))
def test_pgs_and_plus_agree_when_all_contacts_stick(seed):
    """Coupled contacts, all rolling at the start, whose sticking impulses lie inside the cones."""
    rng, G, M, u = random_system(seed, 9, 12)
    A = G @ np.linalg.solve(M, G.T)
    A = 0.5 * (A + A.T)
    pi_star = np.zeros(9)
    pi_star[0::3] = -rng.uniform(1.0, 2.0, size=3)
    for i in range(3):
        d = rng.normal(size=2)
        pi_star[3 * i + 1:3 * i + 3] = 0.2 * abs(pi_star[3 * i]) * d / np.linalg.norm(d)
    v = A @ pi_star
    mu = np.full(3, 1.0)
    pgs = PGSImpulseSolver(convergence_tol=1e-12, max_iters=20000).solve(
        0, None, A, None, (), None, v, None, uni_contact=contacts(3, mu))
    recs = contacts(3, mu)
    plus = PLUSImpulseSolver(max_rolling_speed=1e9).solve(  # everything starts rolling
        0, None, A, None, (), None, v, None, uni_contact=recs)
    assert pgs.converged and plus.converged
    assert all(r.friction_cond == FricCond.ROLLING for r in recs)
    np.testing.assert_allclose(plus.pi, pi_star, atol=1e-8)
    np.testing.assert_allclose(pgs.pi, pi_star, atol=1e-7)


# ------------------------------------------------------------------------------------------------
# Mixed bilateral / unilateral / ratchet / bounded rows: a box-constrained QP with one answer
# ------------------------------------------------------------------------------------------------
def box_qp_by_enumeration(A, rhs, lower, upper):
    """min 1/2 x'Ax - rhs'x on a box, by trying every free/lower/upper pattern (A pos. def.)."""
    k = len(rhs)
    options = [[s for s, bound in (("free", 0.0), ("lo", lower[i]), ("hi", upper[i]))
                if np.isfinite(bound)] for i in range(k)]
    for pattern in itertools.product(*options):
        x = np.zeros(k)
        fixed = [i for i in range(k) if pattern[i] != "free"]
        for i in fixed:
            x[i] = lower[i] if pattern[i] == "lo" else upper[i]
        free = [i for i in range(k) if pattern[i] == "free"]
        if free:
            x[free] = np.linalg.solve(A[np.ix_(free, free)], rhs[free] - A[np.ix_(free, fixed)]
                                      @ x[fixed])
        w = rhs - A @ x
        tol = 1e-10 * max(1.0, np.max(np.abs(x)))
        ok = all(lower[i] - tol <= x[i] <= upper[i] + tol for i in free)
        ok &= all(w[i] <= tol for i in range(k) if pattern[i] == "lo")
        ok &= all(w[i] >= -tol for i in range(k) if pattern[i] == "hi")
        if ok:
            return x
    raise AssertionError("no KKT point found")


@FAST
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 5))
def test_mixed_rows_match_box_qp(seed, k):
    from sinews.contact.impulse_solver import BoundedRT, UncondRT, UniSpeedRT

    rng, G, M, u = random_system(seed, k, k + 2)
    A = G @ np.linalg.solve(M, G.T)
    A = 0.5 * (A + A.T)
    assume(np.linalg.cond(A) < 1e3)
    v = G @ u
    lower, upper = np.full(k, -np.inf), np.full(k, np.inf)
    kinds = rng.integers(0, 4, size=k)
    records = {"unconditional": [], "uni_contact": [], "uni_speed": [], "bounded": []}
    for i, kind in enumerate(kinds):
        sign = int(rng.choice([-1, 1]))
        if kind == 0:
            records["unconditional"].append(UncondRT(mults=[i]))
        elif kind in (1, 2):
            (lower if sign < 0 else upper)[i] = 0.0
            if kind == 1:
                records["uni_contact"].append(UniContactRT(normal=i, sign=sign))
            else:
                records["uni_speed"].append(UniSpeedRT(row=i, sign=sign))
        else:
            lower[i], upper[i] = -rng.uniform(0.1, 3.0), rng.uniform(0.1, 3.0)
            records["bounded"].append(BoundedRT(row=i, lb=lower[i], ub=upper[i]))
    oracle = box_qp_by_enumeration(A, v, lower, upper)
    scale = max(1.0, np.max(np.abs(oracle)))
    for solver in (PGSImpulseSolver(convergence_tol=1e-12, max_iters=20000), PLUSImpulseSolver()):
        res = solver.solve(0, None, A, None, (), None, v, None, **records)
        assert res.converged
        np.testing.assert_allclose(res.pi, oracle, atol=1e-7 * scale)
