"""Tests of sinews.contact.impulse_solver (Simbody's PGS and PLUS impulse solvers).

Oracles: closed-form point-mass impacts, Newton's cradle algebra, a rigid brick landing flat
(symmetry), brute-force enumeration of active sets for frictionless problems, and an independent
checker of the contact conditions written here.
"""

import numpy as np
import pytest

from sinews.contact.impulse_solver import (
    BndCond,
    BoundedRT,
    ConstraintLtdFrictionRT,
    ContactType,
    FricCond,
    ImpulseResult,
    PGSImpulseSolver,
    PLUSImpulseSolver,
    StateLtdFrictionRT,
    UncondRT,
    UniCond,
    UniContactRT,
    UniSpeedRT,
)

SOLVERS = [PGSImpulseSolver, PLUSImpulseSolver]

# Numerical trouble (overflow, 0/0) must not pass silently.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def tight(cls):
    """Solvers with tight tolerances so that closed forms can be compared to 1e-9."""
    if cls is PGSImpulseSolver:
        return PGSImpulseSolver(convergence_tol=1e-12, max_iters=2000)
    return PLUSImpulseSolver(max_rolling_speed=1e-9)


def point_mass_contact(mass, v_normal, v_tangent, mu):
    """A point mass against the ground: rows (normal, tx, ty), A = I/m, verr = relative velocity."""
    A = np.eye(3) / mass
    verr = np.array([v_normal, v_tangent[0], v_tangent[1]])
    rec = UniContactRT(normal=0, friction=(1, 2), eff_mu=mu)
    return A, verr, rec


# ------------------------------------------------------------------------------------------------
# Enum values are Simbody's
# ------------------------------------------------------------------------------------------------
def test_enum_values_match_simbody():
    assert [int(c) for c in ContactType] == [-1, 0, 1, 2]
    assert [int(c) for c in UniCond] == [-1, 0, 1, 2]
    assert (FricCond.FRIC_NA, FricCond.FRIC_OFF, FricCond.SLIDING, FricCond.IMPENDING,
            FricCond.ROLLING) == (-1, 0, 1, 2, 3)
    assert (BndCond.BND_NA, BndCond.SLIP_LOW, BndCond.IMPEND_LOW, BndCond.ENGAGED,
            BndCond.IMPEND_HIGH, BndCond.SLIP_HIGH) == (-1, 0, 1, 2, 3, 4)


# ------------------------------------------------------------------------------------------------
# Single frictionless contact: pi = verr / a if approaching, 0 if separating
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("v", [-2.0, -0.3, 0.0, 0.7])
def test_single_frictionless_contact(cls, sign, v):
    a = 0.25  # 1 / mass
    rec = UniContactRT(normal=0, sign=sign)
    res = tight(cls).solve(0, None, [[a]], None, (), None, [v], None, uni_contact=[rec])
    approaching = sign * v < 0
    expected = v / a if approaching else 0.0
    assert isinstance(res, ImpulseResult)
    assert res.converged
    assert res.pi[0] == pytest.approx(expected, abs=1e-9)
    assert res.verr[0] == pytest.approx(0.0 if approaching else v, abs=1e-9)
    if v != 0.0:  # at v = 0 both conditions describe the (zero) solution
        assert rec.contact_cond == (UniCond.UNI_ACTIVE if approaching else UniCond.UNI_OFF)
    assert rec.impulse[2] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("cls", SOLVERS)
def test_softness_d_enters_the_matrix(cls):
    rec = UniContactRT(normal=0)
    res = tight(cls).solve(0, None, [[2.0]], [0.5], (), None, [-1.0], None, uni_contact=[rec])
    assert res.pi[0] == pytest.approx(-1.0 / 2.5, abs=1e-9)


# ------------------------------------------------------------------------------------------------
# Point mass with friction: rolling iff |v_t| <= mu |v_n|
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("ratio", [0.0, 0.3, 0.99, 1.01, 1.5, 4.0])
def test_point_mass_stick_slip_threshold(cls, ratio):
    mass, mu, vn = 2.0, 0.6, -1.5
    angle = 0.7
    speed = ratio * mu * abs(vn)
    t_dir = np.array([np.cos(angle), np.sin(angle)])
    A, verr, rec = point_mass_contact(mass, vn, speed * t_dir, mu)
    res = tight(cls).solve(0, None, A, None, (), None, verr, None, uni_contact=[rec])
    assert res.converged
    pi_n = res.pi[0]
    assert pi_n == pytest.approx(mass * vn, abs=1e-9)  # normal velocity removed
    if ratio <= 1.0:
        assert rec.friction_cond == FricCond.ROLLING
        np.testing.assert_allclose(res.verr, 0.0, atol=1e-9)
        np.testing.assert_allclose(res.pi[1:], mass * speed * t_dir, atol=1e-9)
    else:
        assert rec.friction_cond == FricCond.SLIDING
        # friction at the cone boundary, multiplier along the slip (force opposes it)
        np.testing.assert_allclose(res.pi[1:], mu * abs(pi_n) * t_dir, atol=1e-9)
        np.testing.assert_allclose(res.verr[1:], (speed - mu * abs(vn)) * t_dir, atol=1e-9)
        assert rec.slip_mag == pytest.approx(speed - mu * abs(vn), abs=1e-9)


def test_plus_slip_reversal_within_an_interval():
    """Sliding at the start, the slip would reverse: s = |v_t| / (mu |v_n|), then rolling."""
    mass, mu, vn, vt = 1.0, 0.6, -1.0, 0.5
    A, verr, rec = point_mass_contact(mass, vn, (vt, 0.0), mu)
    res = PLUSImpulseSolver(max_rolling_speed=1e-9).solve(0, None, A, None, (), None, verr, None,
                                                          uni_contact=[rec])
    assert res.converged
    assert res.intervals == 2
    assert res.fractions[0] == pytest.approx(vt / (mu * abs(vn)), rel=1e-9)
    assert res.fractions[-1] == 1.0
    assert rec.friction_cond == FricCond.ROLLING
    np.testing.assert_allclose(res.verr, 0.0, atol=1e-12)
    np.testing.assert_allclose(res.pi, [mass * vn, mass * vt, 0.0], atol=1e-12)


def test_plus_sliding_direction_turns_at_most_30_degrees_per_interval():
    """Anisotropic tangential mobility: the slip direction rotates; PLUS cuts the intervals."""
    mu = 0.8
    A = np.diag([1.0, 1.0, 10.0])  # rows: normal, tx, ty
    verr = np.array([-1.0, 1.0, 1.0])
    rec = UniContactRT(normal=0, friction=(1, 2), eff_mu=mu)
    solver = PLUSImpulseSolver(max_rolling_speed=1e-9)
    res = solver.solve(0, None, A, None, (), None, verr, None, uni_contact=[rec])
    assert res.converged
    assert res.intervals > 2
    assert all(0 < s <= 1 for s in res.fractions)
    # Replay the intervals with a frozen direction each: every interval turns the slip <= 30 deg.
    v = verr[1:].copy()
    n_left = 1.0  # normal velocity to remove, scaled as intervals are committed (A_nn = 1)
    for s in res.fractions:
        if np.linalg.norm(v) <= 1e-9:
            break
        u = v / np.linalg.norm(v)
        v_end = v - A[1:, 1:] @ (mu * n_left * u)  # whole remaining normal impulse along u
        v_new = v + s * (v_end - v)
        if np.linalg.norm(v_new) > 1e-9:
            cosang = v @ v_new / (np.linalg.norm(v) * np.linalg.norm(v_new))
            assert cosang >= np.cos(np.deg2rad(30)) - 1e-9
        v, n_left = v_new, (1 - s) * n_left
    # total friction impulse within the cone of the total normal impulse; energy dissipated
    assert np.linalg.norm(res.pi[1:]) <= mu * abs(res.pi[0]) + 1e-9
    ke0 = 0.5 * verr @ np.linalg.solve(A, verr)
    ke1 = 0.5 * res.verr @ np.linalg.solve(A, res.verr)
    assert ke1 <= ke0 + 1e-12


# ------------------------------------------------------------------------------------------------
# Redundant rows: PLUS gives the minimum-norm (equal) split
# ------------------------------------------------------------------------------------------------
def test_solve_bilateral_redundant_rows():
    A = np.ones((2, 2))  # two copies of the same constraint on a unit mass
    rhs = np.array([1.0, 1.0])
    plus = PLUSImpulseSolver().solve_bilateral(None, A, None, rhs)
    assert plus.converged
    np.testing.assert_allclose(plus.pi, [0.5, 0.5], atol=1e-12)
    pgs = PGSImpulseSolver(convergence_tol=1e-10, max_iters=1000)
    pgs = pgs.solve_bilateral(None, A, None, rhs)
    assert pgs.converged
    assert pgs.pi.sum() == pytest.approx(1.0, abs=1e-8)  # exact, not necessarily min-norm


def test_solve_bilateral_participating_subset_and_least_squares():
    A = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]])
    rhs = np.array([1.0, 2.0, 5.0])
    res = PLUSImpulseSolver().solve_bilateral([0, 1], A, None, rhs)
    np.testing.assert_allclose(res.pi[:2], np.linalg.solve(A[:2, :2], rhs[:2]), atol=1e-12)
    assert res.pi[2] == 0.0
    # inconsistent: the least-squares solution of minimum norm
    A2 = np.ones((2, 2))
    res2 = PLUSImpulseSolver().solve_bilateral(None, A2, None, [1.0, 3.0])
    np.testing.assert_allclose(res2.pi, np.linalg.pinv(A2) @ [1.0, 3.0], atol=1e-12)
    res3 = PGSImpulseSolver(max_iters=50).solve_bilateral(None, A2, None, [1.0, 3.0])
    assert not res3.converged  # no exact solution exists


def test_plus_redundant_unilateral_contacts_equal_split():
    """One mass, two identical unilateral normals: the min-norm split is equal."""
    A = np.full((2, 2), 0.5)
    recs = [UniContactRT(normal=0), UniContactRT(normal=1)]
    res = PLUSImpulseSolver().solve(0, None, A, None, (), None, [-1.0, -1.0], None,
                                    uni_contact=recs)
    assert res.converged
    np.testing.assert_allclose(res.pi, [-1.0, -1.0], atol=1e-10)
    pgs = tight(PGSImpulseSolver).solve(0, None, A, None, (), None, [-1.0, -1.0], None,
                                        uni_contact=[UniContactRT(normal=0),
                                                     UniContactRT(normal=1)])
    assert pgs.converged
    assert pgs.pi.sum() == pytest.approx(-2.0, abs=1e-8)
    assert np.all(pgs.pi <= 1e-12)


def brick_landing(half=(0.2, 0.3, 0.4), mass=2.0, velocity=(0.0, 0.0, -3.0), omega=(0, 0, 0)):
    """A brick landing flat on z = 0 with its four lower corners; rows (n, tx, ty) per corner."""
    hx, hy, hz = half
    inertia = mass / 3.0 * np.array([hy**2 + hz**2, hx**2 + hz**2, hx**2 + hy**2])
    M = np.diag(np.concatenate([[mass] * 3, inertia]))
    rows = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            p = np.array([sx * hx, sy * hy, -hz])
            for e in np.eye(3)[[2, 0, 1]]:  # normal z first, then x, y
                rows.append(np.concatenate([e, np.cross(p, e)]))  # e.(v + w x p)
    G = np.array(rows)
    u = np.concatenate([velocity, omega])
    return M, G, u


def test_plus_flat_brick_landing_is_symmetric():
    """Simbody's TestPLUS_SingleBrick C1: flat landing, equal corner impulses, no spin."""
    M, G, u = brick_landing()
    A = G @ np.linalg.solve(M, G.T)
    recs = [UniContactRT(normal=3 * i, friction=(3 * i + 1, 3 * i + 2), eff_mu=0.6)
            for i in range(4)]
    res = PLUSImpulseSolver().solve(0, None, A, None, (), None, G @ u, None, uni_contact=recs)
    assert res.converged
    normals = res.pi[0::3]
    np.testing.assert_allclose(normals, -2.0 * 3.0 / 4, rtol=1e-9)  # m v / 4 each
    np.testing.assert_allclose(res.pi[1::3], 0.0, atol=1e-9)
    np.testing.assert_allclose(res.pi[2::3], 0.0, atol=1e-9)
    u_after = u - np.linalg.solve(M, G.T @ res.pi)
    np.testing.assert_allclose(u_after, 0.0, atol=1e-9)  # no rebound, no spin


# ------------------------------------------------------------------------------------------------
# Expansion impulses (Poisson) and Newton's cradle
# ------------------------------------------------------------------------------------------------
def cradle(n=3):
    """n unit balls on a line; contact k between balls k, k+1; verr = v_{k+1} - v_k."""
    G = np.zeros((n - 1, n))
    for k in range(n - 1):
        G[k, k], G[k, k + 1] = -1.0, 1.0
    return G


@pytest.mark.parametrize("cls", SOLVERS)
def test_newtons_cradle_simultaneous_poisson(cls):
    """Compression brings all to v/3; the expansion (e = 1) gives (-v/3, 2v/3, 2v/3)."""
    v = 1.0
    G = cradle()
    u = np.array([v, 0.0, 0.0])
    A = G @ G.T
    solver = tight(cls)
    recs = [UniContactRT(normal=0), UniContactRT(normal=1)]
    comp = solver.solve(0, None, A, None, (), None, G @ u, None, uni_contact=recs)
    assert comp.converged
    u1 = u - G.T @ comp.pi
    np.testing.assert_allclose(u1, v / 3, atol=1e-9)
    known = [UniContactRT(normal=0, contact_type=ContactType.KNOWN),
             UniContactRT(normal=1, contact_type=ContactType.KNOWN)]
    exp = solver.solve(1, None, A, None, [0, 1], comp.pi, G @ u1, None, uni_contact=known)
    assert exp.converged
    np.testing.assert_allclose(exp.pi, 0.0)  # nothing unknown: pi excludes pi_expand
    assert all(r.contact_cond == UniCond.UNI_KNOWN for r in known)
    u2 = u1 - G.T @ (exp.pi + comp.pi)
    np.testing.assert_allclose(u2, [-v / 3, 2 * v / 3, 2 * v / 3], atol=1e-9)
    np.testing.assert_allclose(exp.verr, G @ u2, atol=1e-9)
    assert solver.n_solves[:2] == [1, 1]


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("vt", [5.0, 0.8])
def test_known_contact_friction_limited_by_expansion_impulse(cls, e, vt):
    """Point mass landing while sliding: the expansion round's friction is limited by e*pi_c
    (with vt = 0.8 the slip stops during the expansion: PLUS cuts that interval short)."""
    mass, mu, vn = 1.0, 0.3, -2.0
    A, verr, rec = point_mass_contact(mass, vn, (vt, 0.0), mu)
    solver = tight(cls)
    comp = solver.solve(0, None, A, None, (), None, verr, None, uni_contact=[rec])
    v1 = comp.verr
    assert v1[0] == pytest.approx(0.0, abs=1e-9)
    assert v1[1] == pytest.approx(max(0.0, vt - mu * abs(vn)), abs=1e-9)
    piE = np.zeros(3)
    piE[0] = e * comp.pi[0]
    known = UniContactRT(normal=0, friction=(1, 2), eff_mu=mu, contact_type=ContactType.KNOWN)
    exp = solver.solve(0, None, A, None, [0], piE, v1, None, uni_contact=[known])
    assert exp.converged
    assert exp.verr[0] == pytest.approx(-e * vn, abs=1e-9)  # rebound -e v_n
    assert exp.verr[1] == pytest.approx(max(0.0, vt - (1 + e) * mu * abs(vn)), abs=1e-9)
    assert exp.pi[0] == 0.0
    if cls is PLUSImpulseSolver and vt < (1 + e) * mu * abs(vn):
        assert exp.fractions[0] < 1.0 and known.friction_cond == FricCond.ROLLING


# ------------------------------------------------------------------------------------------------
# The other record kinds
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("v, expected, cond", [(0.5, 1.0, BndCond.ENGAGED),
                                               (3.0, 2.0, BndCond.SLIP_HIGH),
                                               (-3.0, -1.5, BndCond.SLIP_LOW)])
def test_bounded_row(cls, v, expected, cond):
    rec = BoundedRT(row=0, lb=-1.5, ub=2.0)
    res = tight(cls).solve(0, None, [[0.5]], None, (), None, [v], None, bounded=[rec])
    assert res.converged
    assert res.pi[0] == pytest.approx(expected, abs=1e-9)
    assert rec.bounded_cond == cond
    assert rec.impulse == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("cls", SOLVERS)
def test_ratchet(cls):
    for v, expected in [(-1.0, -2.0), (1.0, 0.0)]:
        rec = UniSpeedRT(row=0, sign=1)
        res = tight(cls).solve(0, None, [[0.5]], None, (), None, [v], None, uni_speed=[rec])
        assert res.converged
        assert res.pi[0] == pytest.approx(expected, abs=1e-9)
        assert rec.speed_cond == (UniCond.UNI_ACTIVE if expected else UniCond.UNI_OFF)


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("vt", [0.2, 2.0])
def test_state_limited_friction(cls, vt):
    mass, mu, known = 1.0, 0.5, 1.0  # radius 0.5
    rec = StateLtdFrictionRT(friction=(0, 1), known_n=known, eff_mu=mu)
    res = tight(cls).solve(0, None, np.eye(2) / mass, None, (), None, [vt, 0.0], None,
                           state_ltd_friction=[rec])
    assert res.converged
    expected = min(vt * mass, mu * known)
    np.testing.assert_allclose(res.pi, [expected, 0.0], atol=1e-9)
    assert rec.friction_cond == (FricCond.ROLLING if vt * mass <= mu * known else FricCond.SLIDING)
    np.testing.assert_allclose(rec.friction_impulse, res.pi, atol=1e-12)


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("vx", [0.1, 3.0])
def test_constraint_limited_friction_bead_on_wire(cls, vx):
    """A bead on a straight wire: reaction row y (bilateral), friction row x, limit mu |pi_y|."""
    mass, mu, vy = 2.0, 0.4, -1.5
    A = np.eye(2) / mass  # rows: 0 = y (reaction), 1 = x (friction)
    unc = UncondRT(mults=[0])
    clf = ConstraintLtdFrictionRT(friction=(1,), normal=(0,), eff_mu=mu)
    res = tight(cls).solve(0, None, A, None, (), None, [vy, vx], None, unconditional=[unc],
                           cons_ltd_friction=[clf])
    assert res.converged
    assert res.pi[0] == pytest.approx(mass * vy, abs=1e-9)
    expected = np.sign(vx) * min(abs(vx) * mass, mu * mass * abs(vy))
    assert res.pi[1] == pytest.approx(expected, abs=1e-9)
    np.testing.assert_allclose(unc.impulse, [mass * vy], atol=1e-9)


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("push", [1.0, 5.0])
def test_applied_force_does_not_set_the_sliding_direction(cls, push):
    """A resting point mass pushed sideways: sticks if push <= mu g, else impending slip."""
    mu, g, h = 0.3, 9.81, 0.01
    A = np.eye(3)
    rec = UniContactRT(normal=0, friction=(1, 2), eff_mu=mu)
    verr_applied = np.array([-g * h, push * h, 0.0])
    res = tight(cls).solve(0, None, A, None, (), None, np.zeros(3), verr_applied,
                           uni_contact=[rec])
    assert res.converged
    assert res.pi[0] == pytest.approx(-g * h, abs=1e-9)
    slip = max(0.0, push - mu * g) * h
    np.testing.assert_allclose(res.verr, [0.0, slip, 0.0], atol=1e-9)
    if push > mu * g:
        expected = FricCond.IMPENDING if cls is PLUSImpulseSolver else FricCond.SLIDING
        assert rec.friction_cond == expected
    else:
        assert rec.friction_cond == FricCond.ROLLING


@pytest.mark.parametrize("cls", SOLVERS)
def test_non_participating_and_observing_rows_get_zero(cls):
    A = np.eye(4)
    recs = [UniContactRT(normal=0), UniContactRT(normal=1),
            UniContactRT(normal=2, contact_type=ContactType.OBSERVING)]
    unc = UncondRT(mults=[3])
    res = tight(cls).solve(2, [0, 2, 3], A, None, (), None, [-1.0, -1.0, -1.0, 2.0], None,
                           unconditional=[unc], uni_contact=recs)
    np.testing.assert_allclose(res.pi, [-1.0, 0.0, 0.0, 2.0], atol=1e-9)
    assert recs[1].contact_cond == UniCond.UNI_OFF
    assert recs[2].contact_cond == UniCond.UNI_OFF
    np.testing.assert_allclose(res.verr, [0.0, -1.0, -1.0, 0.0], atol=1e-9)


# ------------------------------------------------------------------------------------------------
# Non-convergence is reported, statistics are kept
# ------------------------------------------------------------------------------------------------
def test_pgs_iteration_cap_reported_not_converged():
    M, G, u = brick_landing(velocity=(1.0, 0.5, -3.0), omega=(0.3, -0.2, 0.5))
    A = G @ np.linalg.solve(M, G.T)
    recs = [UniContactRT(normal=3 * i, friction=(3 * i + 1, 3 * i + 2), eff_mu=0.5)
            for i in range(4)]
    solver = PGSImpulseSolver(max_iters=2)
    res = solver.solve(1, None, A, None, (), None, G @ u, None, uni_contact=recs)
    assert not res.converged
    assert res.iterations == 2
    assert solver.n_failures == [0, 1, 0] and solver.n_solves == [0, 1, 0]
    assert solver.n_iterations[1] == 2
    solver.clear_stats()
    assert solver.n_solves == [0, 0, 0] and solver.n_failures == [0, 0, 0]
    assert solver.n_bilateral_solves == 0


def test_plus_caps_reported_not_converged():
    A, verr, rec = point_mass_contact(1.0, -1.0, (0.5, 0.0), 0.6)
    one_interval = PLUSImpulseSolver(max_rolling_speed=1e-9, max_intervals=1)
    res = one_interval.solve(0, None, A, None, (), None, verr, None, uni_contact=[rec])
    assert not res.converged and res.intervals == 1
    assert one_interval.n_failures[0] == 1
    # A Newton cap of one iteration cannot solve the nonlinear impending-slip equations.
    A2 = np.array([[1.0, 0.3, 0.1], [0.3, 2.0, 0.4], [0.1, 0.4, 0.5]])
    rec2 = UniContactRT(normal=0, friction=(1, 2), eff_mu=0.2)
    res2 = PLUSImpulseSolver(max_iters=1).solve(0, None, A2, None, (), None, np.zeros(3),
                                                [-1.0, 2.0, -1.0], uni_contact=[rec2])
    assert not res2.converged
    ok = PLUSImpulseSolver().solve(0, None, A2, None, (), None, np.zeros(3), [-1.0, 2.0, -1.0],
                                   uni_contact=[UniContactRT(normal=0, friction=(1, 2),
                                                             eff_mu=0.2)])
    assert ok.converged


def test_bilateral_statistics():
    s = PLUSImpulseSolver()
    s.solve_bilateral(None, np.eye(2), None, [1.0, 2.0])
    s.solve_bilateral([], np.eye(2), None, [1.0, 2.0])
    assert s.n_bilateral_solves == 2 and s.n_bilateral_failures == 0


# ------------------------------------------------------------------------------------------------
# Bad input raises ValueError naming the argument
# ------------------------------------------------------------------------------------------------
def _solve(solver, A=None, D=None, verr=None, **kw):
    A = np.eye(3) if A is None else A
    verr = np.array([-1.0, 0.1, 0.0]) if verr is None else verr
    kw.setdefault("uni_contact", [UniContactRT(normal=0, friction=(1, 2), eff_mu=0.5)])
    return solver.solve(0, None, A, D, (), None, verr, None, **kw)


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("kwargs, word", [
    ({"A": np.ones((3, 2))}, "A"),
    ({"A": np.array([[1.0, 0, 0], [0, np.nan, 0], [0, 0, 1]])}, "A"),
    ({"A": np.array([[1.0, 2, 0], [0, 1, 0], [0, 0, 1]])}, "symmetric"),
    ({"verr": np.zeros(2)}, "verr_start"),
    ({"verr": np.array([np.nan, 0, 0])}, "verr_start"),
    ({"D": np.array([1.0, -1.0, 0.0])}, "D"),
    ({"D": np.zeros(4)}, "D"),
    ({"uni_contact": [UniContactRT(normal=0, friction=(1, 2), eff_mu=-0.1)]}, "eff_mu"),
    ({"uni_contact": [UniContactRT(normal=0, friction=(1,), eff_mu=0.1)]}, "friction"),
    ({"uni_contact": [UniContactRT(normal=5)]}, "normal"),
    ({"uni_contact": [UniContactRT(normal=0, sign=0)]}, "sign"),
    ({"uni_contact": [UniContactRT(normal=0, friction=(1, 2)), UniContactRT(normal=1)]},
     "more than one"),
    ({"uni_contact": [UniContactRT(normal=0)]}, "participating"),
    ({"uni_contact": [], "bounded": [BoundedRT(row=0, lb=1.0, ub=-1.0),
                                     BoundedRT(row=1, lb=0, ub=0), BoundedRT(row=2, lb=0, ub=0)]},
     "lb"),
    ({"uni_contact": [], "state_ltd_friction": [StateLtdFrictionRT(friction=(0, 1), known_n=-1),
                                                StateLtdFrictionRT(friction=(2,), known_n=1)]},
     "known_n"),
])
def test_bad_input_raises_value_error(cls, kwargs, word):
    with pytest.raises(ValueError, match=word):
        _solve(cls(), **kwargs)


@pytest.mark.parametrize("cls", SOLVERS)
def test_bad_phase_and_settings(cls):
    with pytest.raises(ValueError, match="phase"):
        cls().solve(3, None, np.eye(1), None, (), None, [0.0], None,
                    uni_contact=[UniContactRT(normal=0)])
    with pytest.raises(ValueError, match="pi_expand"):
        cls().solve(0, None, np.eye(1), None, [0], [np.nan], [0.0], None,
                    uni_contact=[UniContactRT(normal=0)])
    with pytest.raises(ValueError, match="max_iters"):
        cls(max_iters=0)
    with pytest.raises(ValueError, match="max_rolling_speed"):
        cls(max_rolling_speed=-1.0)
    with pytest.raises(ValueError, match="rhs"):
        cls().solve_bilateral(None, np.eye(2), None, [1.0])


# ------------------------------------------------------------------------------------------------
# A brick sliding to a stop (contact solves over time steps, velocity level)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", SOLVERS)
def test_brick_slides_to_a_stop(cls):
    """v0 = 2 m/s, mu = 0.5: stops after v0/(mu g) having slid v0^2/(2 mu g), then stays."""
    g, mu, v0, h = 9.8066, 0.5, 2.0, 2e-3
    M, G, u = brick_landing(velocity=(v0, 0.0, 0.0))
    mass = M[0, 0]
    Minv = np.linalg.inv(M)
    A = G @ Minv @ G.T
    du_applied = h * Minv @ np.array([0.0, 0.0, -mass * g, 0.0, 0.0, 0.0])  # gravity
    solver = tight(cls) if cls is PGSImpulseSolver else PLUSImpulseSolver()
    x, stop_time = 0.0, None
    for step in range(260):
        recs = [UniContactRT(normal=3 * i, friction=(3 * i + 1, 3 * i + 2), eff_mu=mu)
                for i in range(4)]
        res = solver.solve(0, None, A, None, (), None, G @ u, G @ du_applied, uni_contact=recs)
        assert res.converged
        normals = res.pi[0::3]
        assert normals.sum() == pytest.approx(-mass * g * h, rel=1e-9)  # supports the weight
        u_new = u + du_applied - Minv @ G.T @ res.pi
        if step == 0:
            assert u_new[0] == pytest.approx(v0 - mu * g * h, rel=1e-9)  # dynamic friction
            # (PGS may carry the weight on the front corners only: the back ones are then off)
            assert all(r.friction_cond in (FricCond.SLIDING, FricCond.FRIC_OFF) for r in recs)
            if cls is PLUSImpulseSolver:  # min-norm: left/right symmetric, front carries more
                assert all(r.friction_cond == FricCond.SLIDING for r in recs)
                assert normals[0] == pytest.approx(normals[1], rel=1e-9)
                assert normals[2] == pytest.approx(normals[3], rel=1e-9)
                assert abs(normals[2]) > abs(normals[0])
        if cls is PLUSImpulseSolver:
            assert abs(u_new[5]) < 1e-12  # no yaw
        np.testing.assert_allclose(u_new[2:5], 0.0, atol=1e-9)  # stays flat on the ground
        u = u_new
        x += h * u[0]
        if stop_time is None and abs(u[0]) < 1e-9:
            stop_time = (step + 1) * h
    assert stop_time == pytest.approx(v0 / (mu * g), abs=h)
    assert x == pytest.approx(v0**2 / (2 * mu * g), abs=h * v0)  # first-order stepping
    assert abs(u[0]) < 1e-9
    assert all(r.friction_cond in (FricCond.ROLLING, FricCond.FRIC_OFF) for r in recs)
    assert any(r.friction_cond == FricCond.ROLLING for r in recs)


@pytest.mark.parametrize("cls", SOLVERS)
@pytest.mark.parametrize("theta_deg", [10.0, 25.0, 26.0, 40.0])
def test_block_on_incline_stick_slip(cls, theta_deg):
    """At rest on a slope: stays if tan(theta) <= mu, else slides at g (sin - mu cos)."""
    g, mu, h, mass = 9.81, 0.48, 1e-3, 3.0  # atan(0.48) = 25.6 degrees
    th = np.deg2rad(theta_deg)
    n = np.array([-np.sin(th), 0.0, np.cos(th)])  # slope normal
    down = np.array([-np.cos(th), 0.0, -np.sin(th)])  # down-slope direction
    G = np.array([n, down, np.cross(n, down)])
    Minv = np.eye(3) / mass
    A = G @ Minv @ G.T
    du_applied = h * Minv @ (mass * g * np.array([0.0, 0.0, -1.0]))
    rec = UniContactRT(normal=0, friction=(1, 2), eff_mu=mu)
    res = tight(cls).solve(0, None, A, None, (), None, np.zeros(3), G @ du_applied,
                           uni_contact=[rec])
    assert res.converged
    u = du_applied - Minv @ G.T @ res.pi
    accel = max(0.0, g * (np.sin(th) - mu * np.cos(th)))
    np.testing.assert_allclose(u, h * accel * down, atol=1e-12)
    assert res.pi[0] == pytest.approx(-mass * g * np.cos(th) * h, rel=1e-9)
    if np.tan(th) <= mu:
        assert rec.friction_cond == FricCond.ROLLING
    else:
        assert rec.friction_cond in (FricCond.SLIDING, FricCond.IMPENDING)


def test_interface_is_abstract_and_reexported():
    import sinews.contact as contact
    from sinews.contact.impulse_solver import ImpulseSolver

    with pytest.raises(TypeError):
        ImpulseSolver(1e-3, 1e-6, 10)
    assert contact.PLUSImpulseSolver is PLUSImpulseSolver
    assert contact.ContactType is ContactType
    assert issubclass(PGSImpulseSolver, ImpulseSolver) and issubclass(PLUSImpulseSolver,
                                                                      ImpulseSolver)
