"""PLUS with structurally null friction rows (zero rows of ``A``) and its impending-flip retry.

A friction row whose Jacobian row is zero (a tangent along which the bodies cannot move: balls on
PrismaticX joints, the out-of-plane tangent of a planar joint) makes a zero row and column of
``A = G M^-1 G^T``.  Its impulse acts on nothing, so the answer must be the one of the same problem
without that row.  Oracles: the problem with those rows removed (contacts made frictionless),
enumeration of the frictionless active sets, the same problem with each null row replaced by a
decoupled unit row (``A_rr = 1``, which never carries an impulse either), closed forms for
independent point masses in a plane and for coupled contacts that all stick, and the impulse
stepper run with and without friction on a chain of balls on PrismaticX joints.
"""

import itertools

import numpy as np
import pytest

from sinews.contact.impulse_solver import (FricCond, PLUSImpulseSolver, UniCond,
                                           UniContactRT)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def lcp_by_enumeration(A, v):
    """The frictionless answer (pushing normals ``pi <= 0``) by trying every active set."""
    k = len(v)
    found = []
    for mask in itertools.product([False, True], repeat=k):
        S = np.flatnonzero(mask)
        pi = np.zeros(k)
        if S.size:
            pi[S] = np.linalg.solve(A[np.ix_(S, S)], v[S])
        w = v - A @ pi
        if np.all(pi <= 1e-12) and np.all(w >= -1e-12):
            found.append(pi)
    assert len(found) == 1
    return found[0]


def contacts(k, mu, frictionless=()):
    """``k`` contacts with rows [n, t1, t2]; those listed in ``frictionless`` carry no friction."""
    return [UniContactRT(normal=3 * i, friction=() if i in frictionless else (3 * i + 1, 3 * i + 2),
                         eff_mu=float(mu[i])) for i in range(k)]


def solve(A, v, recs, participating=None, roll=1e-3):
    return PLUSImpulseSolver(max_rolling_speed=roll).solve(0, participating, A, None, (), None, v,
                                                           None, uni_contact=recs)


def check_conditions(A, v, res, mu, k, null):
    """Pushing normals, no penetration, inside the cones, zero impulse on the null rows."""
    pi, w = res.pi, res.verr
    tol = 1e-9 * max(1.0, float(np.max(np.abs(pi))))
    np.testing.assert_allclose(w, v - A @ pi, atol=tol)
    assert np.all(pi[null] == 0.0)
    for i in range(k):
        n, F = 3 * i, [3 * i + 1, 3 * i + 2]
        assert pi[n] <= tol and w[n] >= -tol
        assert np.linalg.norm(pi[F]) <= mu[i] * abs(pi[n]) + tol


# ------------------------------------------------------------------------------------------------
# The reported case: balls on a line (PrismaticX), friction rows all zero
# ------------------------------------------------------------------------------------------------
MASS = np.array([1.17, 1.61, 0.59, 1.83])


def balls_on_a_line():
    """Four balls on PrismaticX joints, three touching pairs; rows [n, t1, t2] per pair with the
    tangent rows null.  The right-hand side pulls the first pair apart (its normal is off)."""
    G = np.zeros((3, 4))
    for i in range(3):
        G[i, i], G[i, i + 1] = -1.0, 1.0
    A1 = G @ np.diag(1.0 / MASS) @ G.T
    v1 = G @ np.array([-1.286, 0.18, -0.773, -0.678])
    v1[1] *= 2.0
    A = np.zeros((9, 9))
    A[0::3, 0::3] = A1
    v = np.zeros(9)
    v[0::3] = v1
    return A, v, A1, v1


@pytest.mark.parametrize("mu", [0.0, 0.3, 1.0])
def test_balls_on_a_line_with_null_friction_rows(mu):
    A, v, A1, v1 = balls_on_a_line()
    oracle = lcp_by_enumeration(A1, v1)  # the frictionless chain (closed form: one active set)
    assert oracle[0] == 0.0 and np.all(oracle[1:] < 0.0)  # the first pair separates
    recs = contacts(3, [mu] * 3)
    res = solve(A, v, recs)
    assert res.converged and res.intervals == 1
    np.testing.assert_allclose(res.pi[0::3], oracle, rtol=0, atol=1e-12)
    assert np.all(res.pi[1::3] == 0.0) and np.all(res.pi[2::3] == 0.0)
    # the same problem without the friction rows
    without = solve(A, v, contacts(3, [mu] * 3, frictionless=(0, 1, 2)),
                    participating=[0, 3, 6])
    assert without.converged
    np.testing.assert_allclose(res.pi, without.pi, rtol=0, atol=1e-15)
    # conditions: off contact -> friction off; pushing contacts roll (no slip possible)
    assert recs[0].contact_cond == UniCond.UNI_OFF and recs[0].friction_cond == FricCond.FRIC_OFF
    for rec in recs[1:]:
        assert rec.contact_cond == UniCond.UNI_ACTIVE and rec.friction_cond == FricCond.ROLLING
        assert rec.impulse[0] == rec.impulse[1] == 0.0 and rec.slip_mag == 0.0


def test_nearly_null_rows_from_rounding_are_null():
    """A tangent that is null only up to rounding (a rotated frame) behaves as an exact zero."""
    A, v, _A1, _v1 = balls_on_a_line()
    rng = np.random.default_rng(3)
    noise = np.zeros((9, 9))
    for r in (1, 2, 4, 5, 7, 8):
        noise[r] = noise[:, r] = 1e-17 * rng.normal(size=9)
    A_noisy = A + 0.5 * (noise + noise.T)
    v_noisy = v.copy()
    v_noisy[[1, 2, 4, 5, 7, 8]] = 1e-17 * rng.normal(size=6)
    exact = solve(A, v, contacts(3, [0.5] * 3))
    noisy = solve(A_noisy, v_noisy, contacts(3, [0.5] * 3))
    assert exact.converged and noisy.converged
    np.testing.assert_allclose(noisy.pi, exact.pi, rtol=0, atol=1e-14)


@pytest.mark.parametrize("mu", [0.0, 0.5])
@pytest.mark.parametrize("vn", [0.0, 0.3, -0.3])
def test_contact_with_all_rows_null(mu, vn):
    """A fourth contact whose normal and friction rows are all null: not approaching (``vn >=
    0``) it is off with zero impulses and leaves the others alone; approaching, no impulse can
    stop it and the solve says so."""
    A, v, A1, v1 = balls_on_a_line()
    A4 = np.zeros((12, 12))
    A4[:9, :9] = A
    v4 = np.concatenate([v, [vn, 0.0, 0.0]])
    recs = contacts(4, [mu] * 4)
    res = solve(A4, v4, recs)
    if vn < 0:
        assert not res.converged
        return
    assert res.converged
    np.testing.assert_allclose(res.pi[0:9:3], lcp_by_enumeration(A1, v1), rtol=0, atol=1e-12)
    assert np.all(res.pi[9:] == 0.0) and np.all(res.pi[1:9:3] == 0.0)
    assert recs[3].contact_cond == UniCond.UNI_OFF and recs[3].friction_cond == FricCond.FRIC_OFF


def test_null_normal_gives_its_friction_no_radius():
    """A null normal (the bodies cannot move along it) carries no load, so its friction, on a
    row that does move, must stay zero: the tangent keeps sliding freely."""
    A = np.diag([0.0, 0.5, 0.0])  # rows [n, t1, t2]: only t1 moves
    v = np.array([0.0, 1.0, 0.0])
    for roll in (1e-3, 1e9):  # sliding, and rolling at the start
        rec = UniContactRT(normal=0, friction=(1, 2), eff_mu=0.8)
        res = solve(A, v, [rec], roll=roll)
        assert res.converged
        assert np.all(res.pi == 0.0)
        np.testing.assert_array_equal(res.verr, v)
        assert rec.contact_cond == UniCond.UNI_OFF and rec.friction_cond == FricCond.FRIC_OFF


# ------------------------------------------------------------------------------------------------
# Random problems with null friction rows
# ------------------------------------------------------------------------------------------------
def null_problem(seed):
    """Random coupled contacts; about 40 % of the friction rows of ``G`` set to zero; some mu 0."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    n_dofs = max(3, 3 * k - 2 + int(rng.integers(0, 6)))
    G = rng.normal(size=(3 * k, n_dofs))
    L = rng.normal(size=(n_dofs, n_dofs))
    M = L @ L.T + n_dofs * np.eye(n_dofs)
    u = 2.0 * rng.normal(size=n_dofs)
    friction_rows = np.array([3 * i + j for i in range(k) for j in (1, 2)])
    null = friction_rows[rng.random(friction_rows.size) < 0.4]
    if null.size == 0:
        null = friction_rows[:1]
    G[null] = 0.0
    A = G @ np.linalg.solve(M, G.T)
    A = 0.5 * (A + A.T)
    mu = rng.uniform(0.0, 1.2, size=k)
    mu[rng.random(k) < 0.25] = 0.0
    return k, A, G @ u, mu, null


@pytest.mark.parametrize("roll", [1e-3, 1e-9])
def test_fully_null_groups_match_frictionless_contacts(roll):
    """A contact whose two friction rows are null gives the answer of the same contact without
    friction rows (exactly: the solver drops such rows), for mu > 0 and mu = 0."""
    compared = 0
    for seed in range(60):
        k, A, v, mu, null = null_problem(seed)
        both = [i for i in range(k) if 3 * i + 1 in null and 3 * i + 2 in null]
        if not both:
            continue
        res = solve(A, v, contacts(k, mu), roll=roll)
        dropped = {r for i in both for r in (3 * i + 1, 3 * i + 2)}
        part = [r for r in range(3 * k) if r not in dropped]
        oracle = solve(A, v, contacts(k, mu, frictionless=both), participating=part, roll=roll)
        assert res.converged == oracle.converged
        if not oracle.converged:
            continue
        compared += 1
        np.testing.assert_allclose(res.pi, oracle.pi, rtol=0, atol=1e-12)
        check_conditions(A, v, res, mu, k, null)
    assert compared >= 20


def test_null_rows_match_decoupled_rows():
    """Each null row replaced by a decoupled unit row (``A_rr = 1``, zero slip: it never carries
    an impulse either) is a well-posed problem with the same answer.  The sliding intervals are
    path dependent (a rounding-level difference can change a later interval's fraction), so
    answers are compared when both solves take one interval; every answer satisfies the
    conditions."""
    compared = 0
    for seed in range(100):
        k, A, v, mu, null = null_problem(seed)
        res = solve(A, v, contacts(k, mu))
        A2 = A.copy()
        A2[null, null] = 1.0
        oracle = solve(A2, v, contacts(k, mu))
        assert oracle.converged
        assert res.converged, seed
        check_conditions(A, v, res, mu, k, null)
        if res.intervals == oracle.intervals == 1:
            compared += 1
            scale = max(1.0, float(np.max(np.abs(oracle.pi))))
            np.testing.assert_allclose(res.pi, oracle.pi, rtol=0, atol=1e-11 * scale)
    assert compared >= 50


@pytest.mark.parametrize("seed", range(6))
def test_point_masses_in_a_plane_closed_form(seed):
    """Independent point masses that move in the x-z plane only hit the ground (normal z):
    the y tangent rows are null and friction is one-dimensional Coulomb friction along x."""
    rng = np.random.default_rng(seed)
    k = 4
    masses = rng.uniform(0.5, 3.0, size=k)
    A = np.zeros((3 * k, 3 * k))
    for i in range(k):
        A[3 * i, 3 * i] = A[3 * i + 1, 3 * i + 1] = 1.0 / masses[i]  # rows [n, t_x, t_y]
    v = np.zeros(3 * k)
    v[0::3] = -rng.uniform(0.1, 2.0, size=k)  # approaching
    v[1::3] = rng.normal(size=k)
    mu = rng.uniform(0.0, 1.0, size=k)
    mu[0] = 0.0
    res = solve(A, v, contacts(k, mu), roll=1e-9)
    assert res.converged
    for i in range(k):
        pn = masses[i] * v[3 * i]
        stick = masses[i] * v[3 * i + 1]
        cap = mu[i] * abs(pn)
        pt = stick if abs(stick) <= cap else cap * np.sign(stick)
        np.testing.assert_allclose(res.pi[3 * i:3 * i + 3], [pn, pt, 0.0], rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_coupled_contacts_that_stick_with_null_rows(seed):
    """Coupled contacts, all rolling, whose sticking impulses (zero on the null rows) lie inside
    their cones: the answer is those impulses."""
    rng = np.random.default_rng(100 + seed)
    G = rng.normal(size=(9, 12))
    null = [2, 4, 5] if seed % 2 else [1, 8]
    G[null] = 0.0
    L = rng.normal(size=(12, 12))
    M = L @ L.T + 12 * np.eye(12)
    A = G @ np.linalg.solve(M, G.T)
    A = 0.5 * (A + A.T)
    pi_star = np.zeros(9)
    pi_star[0::3] = -rng.uniform(1.0, 2.0, size=3)
    for i in range(3):
        d = rng.normal(size=2)
        pi_star[3 * i + 1:3 * i + 3] = 0.2 * abs(pi_star[3 * i]) * d / np.linalg.norm(d)
    pi_star[null] = 0.0
    v = A @ pi_star
    recs = contacts(3, np.ones(3))
    res = solve(A, v, recs, roll=1e9)  # everything starts rolling
    assert res.converged
    assert all(r.friction_cond == FricCond.ROLLING for r in recs)
    np.testing.assert_allclose(res.pi, pi_star, rtol=0, atol=1e-9)


def test_well_posed_problems_are_not_touched():
    """Without null rows the problem reaches the sliding intervals unchanged (same object)."""
    from sinews.contact._simbody_plus import _without_null_rows
    from sinews.contact._simbody_problem import assemble
    from sinews.contact.impulse_solver import BndCond, ContactType

    rng = np.random.default_rng(0)
    G = rng.normal(size=(6, 7))
    A = G @ G.T
    prob = assemble(None, A, None, (), None, G @ rng.normal(size=7), None, (),
                    contacts(2, [0.5, 0.0]), (), (), (), (), ContactType=ContactType,
                    UniCond=UniCond, FricCond=FricCond, BndCond=BndCond)
    reduced, *dropped = _without_null_rows(prob)
    assert reduced is prob and dropped == [[], [], []]


# ------------------------------------------------------------------------------------------------
# Through the impulse stepper: friction on balls that can only move along x changes nothing
# ------------------------------------------------------------------------------------------------
def ball_chain(mass, friction, restitution, gaps):
    from sinews import Model
    from sinews.geometry import Sphere
    from sinews.joints import PrismaticX
    from sinews.sim import Scene
    from sinews.spatial import SpatialInertia

    m = Model(gravity=(0.0, 0.0, 0.0), name="chain")
    scene = Scene(m, margin=1e-3)
    x = 0.0
    for i, mi in enumerate(mass):
        m.add_body("world", PrismaticX(), inertia=SpatialInertia(mi, np.zeros(3), np.eye(3) * 4e-3),
                   name=f"ball{i}")
        scene.add_geometry(f"ball{i}", Sphere(0.1), X_body_geometry=[x, 0.0, 0.0],
                           restitution=restitution, friction=friction)
        x += 0.2 + (gaps[i] if i < len(gaps) else 0.0)
    return scene, np.zeros(len(mass))


def test_impulse_stepper_balls_on_prismatic_joints_with_friction():
    """With friction the PLUS solves converge without the PGS fallback and give exactly the
    frictionless step (the tangent rows are null), for every impact model."""
    from sinews.sim.impulse_stepper import ImpulseStepper

    steps = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(3, 6))
        mass = rng.uniform(0.5, 2.0, k)
        v0 = rng.normal(size=k)
        gaps = rng.uniform(-2e-4, 5e-4, k - 1)
        e = float(rng.choice([0.0, 0.5, 1.0]))
        for impacts in ("simultaneous", "sequential", "mixed"):
            outs = []
            for friction in (0.0, 0.5):
                scene, q0 = ball_chain(mass, friction, e, gaps)
                outs.append(ImpulseStepper(impacts=impacts).step(scene, q0, v0, None, 1e-3))
            frictionless, frictional = outs
            assert frictional.stats["converged"] and frictional.stats["fallbacks"] == 0
            np.testing.assert_array_equal(frictional.v, frictionless.v)
            np.testing.assert_array_equal(frictional.q, frictionless.q)
            steps += 1
    assert steps == 24


@pytest.mark.parametrize("gap", [0.0, 5e-4])
def test_impulse_stepper_balls_on_a_rail_over_the_ground(gap):
    """Balls on PrismaticX joints touching (or within the margin of) the ground: the ground's
    normal row is null (gravity cannot load it), so ground friction does nothing; every step
    converges, and the trajectory is the frictionless one."""
    from sinews import Model
    from sinews.geometry import Sphere
    from sinews.joints import PrismaticX
    from sinews.sim import Scene, simulate
    from sinews.spatial import SpatialInertia

    runs = []
    for friction in (0.0, 0.5):
        m = Model(name="rail")
        scene = Scene(m, margin=1e-3)
        scene.add_ground(friction=friction)
        for i in range(2):
            m.add_body("world", PrismaticX(), inertia=SpatialInertia(1.0, np.zeros(3), np.eye(3) * 4e-3),
                       name=f"ball{i}")
            scene.add_geometry(f"ball{i}", Sphere(0.1), X_body_geometry=[0.3 * i, 0.0, 0.1 + gap],
                               friction=friction)
        runs.append(simulate(scene, np.zeros(2), np.array([1.0, 0.0]), 0.15, 1e-3,
                             stepper="impulse", progress=False))
    frictionless, frictional = runs
    assert frictional.converged.all() and frictionless.converged.all()
    np.testing.assert_array_equal(frictional.q, frictionless.q)
    np.testing.assert_array_equal(frictional.v, frictionless.v)
    assert frictional.v[-1] == pytest.approx([0.5, 0.5], abs=1e-12)  # plastic impact, momentum
