"""Scenario A of rbdl.md section 5.2: the planar four-bar linkage (RBDL ``FourBarLinkage``).

RBDL's printed numbers are checked to 1e-8 where RBDL is right.  Where RBDL is wrong (its loop
rotation rows carry an extra ``-p x t_w`` linear term, rbdl.md section 0.5), the correct value
is derived from RBDL's own numbers and tested, with the reason stated.
"""

import numpy as np
import pytest

from sinews.constraints import (
    METHODS,
    baumgarte_terms,
    calc_forces,
    compute_constraint_impulses,
    constrained_system,
    constraint_gamma,
    constraint_jacobian,
    constraint_position_error,
    constraint_velocity_error,
    forward_dynamics_constraints,
)
from sinews.constraints.examples import four_bar
from sinews import point_position

Q_A = np.array([3 * np.pi / 4, -np.pi / 2, np.pi / 4, np.pi / 2, -np.pi / 2])
QD_A = np.array([-1.0, -1.0, -2.0, 1.0, -1.0])
TAU_A = np.array([1.0, -2.0, 3.0, -5.0, 7.0])


def _rbdl_to_correct(lam_rbdl, p):
    """RBDL's rotation row is G3_rbdl = G3 - p_y G1 + p_x G2 (rows x, y, Rz; p = world position
    of the constraint point), so G_rbdl^T lam_rbdl = G^T lam with
    lam = (l1 - p_y l3, l2 + p_x l3, l3)."""
    l1, l2, l3 = lam_rbdl
    return np.array([l1 - p[1] * l3, l2 + p[0] * l3, l3])


def test_constraints_fourbar_errors_and_jacobian():
    m, cs = four_bar()
    assert np.allclose(constraint_position_error(m, Q_A, cs), 0, atol=1e-14)
    assert np.allclose(constraint_velocity_error(m, Q_A, QD_A, cs), 0, atol=1e-14)
    G = constraint_jacobian(m, Q_A, cs)
    assert np.allclose(G[0], [2, 0, -2, -2, 0], atol=1e-12)
    assert np.allclose(G[1], [-2, -2, 2, 0, 0], atol=1e-12)
    # RBDL prints (-6.656854249, -1, 6.656854249, 6.656854249, 1) for the Rz row (section 0.5
    # quirk); the relative angular velocity of B5 w.r.t. B2 about z is -qd0-qd1+qd2+qd3+qd4.
    assert np.allclose(G[2], [-1, -1, 1, 1, 1], atol=1e-12)
    p = point_position(m, Q_A, "B2", (2, 0, 0))
    rbdl_row = np.array([-6.656854249, -1, 6.656854249, 6.656854249, 1])
    assert np.allclose(G[2] - p[1] * G[0] + p[0] * G[1], rbdl_row, atol=1e-8)


@pytest.mark.parametrize("method", ["direct", "null_space"])
def test_constraints_fourbar_forward_dynamics(method):
    m, cs = four_bar()
    r = forward_dynamics_constraints(m, Q_A, QD_A, TAU_A, cs, method=method)
    qdd_rbdl = [0.836177318511, -2.826200790868, -1.990023472357, 2.826200790868, -2.826200790868]
    assert np.allclose(r.qdd, qdd_rbdl, atol=1e-8, rtol=0)
    # RBDL lambda = (-28.8133527596, 2.2066705787, -7) belongs to its quirky rotation row;
    # mapped to the correct rows (same constraint force G^T lambda):
    p = point_position(m, Q_A, "B2", (2, 0, 0))
    lam = _rbdl_to_correct([-28.8133527596, 2.2066705787, -7.0], p)
    assert np.allclose(r.multipliers, lam, atol=1e-8, rtol=0)
    assert r.multipliers[2] == pytest.approx(-TAU_A[4], abs=1e-10)  # B5 is massless
    G = constraint_jacobian(m, Q_A, cs)
    assert np.allclose(G @ r.qdd, constraint_gamma(m, Q_A, QD_A, cs), atol=1e-10)
    assert not r.least_squares and r.converged and r.rank == 3


def test_constraints_fourbar_generalised_force_equals_rbdl():
    """The constraint *force* G^T lambda is the same as RBDL's, only its split over rows differs."""
    m, cs = four_bar()
    r = forward_dynamics_constraints(m, Q_A, QD_A, TAU_A, cs)
    G = constraint_jacobian(m, Q_A, cs)
    G_rbdl = np.array([[2, 0, -2, -2, 0], [-2, -2, 2, 0, 0], [-6.656854249, -1, 6.656854249, 6.656854249, 1]])
    lam_rbdl = np.array([-28.8133527596, 2.2066705787, -7.0])
    assert np.allclose(G.T @ r.multipliers, G_rbdl.T @ lam_rbdl, atol=1e-7)


def test_constraints_fourbar_zero_configuration():
    m, cs = four_bar()
    z = np.zeros(5)
    r = forward_dynamics_constraints(m, z, z, TAU_A, cs)
    qdd_rbdl = [-4.80949926362, 4.14600883652, -2.45235640648, -0.568276877761, 2.35714285714]
    assert np.allclose(r.qdd, qdd_rbdl, atol=1e-8, rtol=0)
    # RBDL lambda = (0, 31.8571428571, -7) with the constraint point at p = (4, 0, 0)
    assert np.allclose(r.multipliers, _rbdl_to_correct([0, 31.8571428571, -7], (4, 0, 0)), atol=1e-8)


def test_constraints_fourbar_massless_leaf_per_method():
    """B5 is massless: H is singular.  direct and null_space work; range_space_sparse and
    kokkevis raise a clear ValueError (RBDL returns NaN from range space)."""
    m, cs = four_bar()
    ref = forward_dynamics_constraints(m, Q_A, QD_A, TAU_A, cs, method="null_space")
    assert np.all(np.isfinite(ref.qdd))
    with pytest.raises(ValueError, match="positive definite"):
        forward_dynamics_constraints(m, Q_A, QD_A, TAU_A, cs, method="range_space_sparse")
    with pytest.raises(ValueError, match="massless"):
        forward_dynamics_constraints(m, Q_A, QD_A, TAU_A, cs, method="kokkevis")
    with pytest.raises(ValueError, match="positive definite"):
        compute_constraint_impulses(m, Q_A, QD_A, cs, method="range_space_sparse")


def test_constraints_fourbar_impulse_A1():
    m, cs = four_bar()
    qdm = np.array([1.0, 2.0, 3.0, 0.0, 0.0])
    res = {meth: compute_constraint_impulses(m, Q_A, qdm, cs, method=meth) for meth in ("direct", "null_space")}
    qdp_rbdl = [1.538461538, 1.461538462, 3, -1.461538462, 1.461538462]
    for r in res.values():
        assert np.allclose(r.qd_plus, qdp_rbdl, atol=1e-8)
        # RBDL's Direct stores the negative impulse (-3.41025641, 0, 0); ours is physical, and
        # its rotation row is 0 so the quirk does not change the split.
        assert np.allclose(r.impulses, [3.41025641, 0, 0], atol=1e-8)
        G = constraint_jacobian(m, Q_A, cs)
        assert np.allclose(G @ r.qd_plus, 0, atol=1e-12)
    assert np.allclose(res["direct"].impulses, res["null_space"].impulses, atol=1e-12)


def test_constraints_fourbar_baumgarte_A2():
    q = Q_A.copy()
    q[3] += 0.05
    qd = np.array([0.1, -0.2, 0.3, 0.0, 0.1])
    m, cs = four_bar(baumgarte=True, time_constant=0.1)
    g = cs.group("loop")
    assert g.baumgarte_enabled and cs.baumgarte_coefficients("loop") == (10.0, 10.0)
    err = constraint_position_error(m, q, cs)
    assert np.allclose(err, [-0.0999583385, -0.0024994792, 0.0499791693], atol=1e-9)
    errd = constraint_velocity_error(m, q, qd, cs)
    gam0 = constraint_gamma(m, q, qd, cs, baumgarte=False)
    gam = constraint_gamma(m, q, qd, cs)
    # RBDL's own formulas, evaluated with the core's point kinematics, reproduce its printed
    # numbers (this validates the fixture): it evaluates the predecessor at p (not at s) and
    # adds -p x t_w to the Rz axis.
    from sinews import body_placement, point_acceleration_6d, point_velocity_6d

    R_P = body_placement(m, q, "B2").R
    p = point_position(m, q, "B2", (2, 0, 0))
    nuP, nuS = point_velocity_6d(m, q, qd, "B2", (2, 0, 0)), point_velocity_6d(m, q, qd, "B5")
    aP, aS = point_acceleration_6d(m, q, qd, np.zeros(5), "B2", (2, 0, 0)), point_acceleration_6d(m, q, qd, np.zeros(5), "B5")
    w = nuP[:3]
    D = np.array([[0, 0, 0, *R_P[:, 0]], [0, 0, 0, *R_P[:, 1]], [*R_P[:, 2], *-R_P @ np.cross(p, [0, 0, 1])]])  # RBDL: R_P (t_v - p x t_w)
    Ddot = np.array([np.r_[np.cross(w, d[:3]), np.cross(w, d[3:])] for d in D])
    errd_rbdl = D @ (nuS - nuP)
    gam0_rbdl = -D @ (aS - aP) - Ddot @ (nuS - nuP)
    assert np.allclose(errd_rbdl, [-0.3992501562, 0.7700124984, 1.6292499715], atol=1e-9)
    assert np.allclose(gam0_rbdl[:2], [0.2280049994, 0.1997000625], atol=1e-9)
    assert np.allclose(gam0_rbdl[:2] - 20 * errd_rbdl[:2] - 100 * err[:2], [18.2088419783, -14.9506019853], atol=1e-9)
    # sinews evaluates the predecessor at s, so errd is d(phi)/dt (RBDL's is not, once s != p):
    eps = 1e-6
    fd = (constraint_position_error(m, q + eps * qd, cs) - constraint_position_error(m, q - eps * qd, cs)) / (2 * eps)
    assert np.allclose(errd[:2], fd[:2], atol=1e-8)
    assert not np.allclose(errd_rbdl[:2], fd[:2], atol=1e-3)
    # the correct Rz velocity error is the relative angular velocity of B5 w.r.t. B2
    assert errd[2] == pytest.approx(-qd[0] - qd[1] + qd[2] + qd[3] + qd[4], abs=1e-14)
    assert np.allclose(gam, gam0 - 20 * errd - 100 * err, atol=1e-12)
    assert np.allclose(baumgarte_terms(m, q, qd, cs), -20 * errd - 100 * err, atol=1e-12)
    # qdd differs from RBDL's (5.68.., ...) because RBDL's rows and gamma differ off the
    # manifold (see above); check the defining property and method agreement instead
    r = forward_dynamics_constraints(m, q, qd, np.zeros(5), cs)
    G = constraint_jacobian(m, q, cs)
    assert np.allclose(G @ r.qdd, gam, atol=1e-10)
    r2 = forward_dynamics_constraints(m, q, qd, np.zeros(5), cs, method="null_space")
    assert np.allclose(r.qdd, r2.qdd, atol=1e-9) and np.allclose(r.multipliers, r2.multipliers, atol=1e-9)
    cs.disable_baumgarte("loop")
    assert np.allclose(constraint_gamma(m, q, qd, cs), gam0, atol=1e-14)


def test_constraints_fourbar_constrained_system():
    from sinews import crba, nonlinear_effects

    m, cs = four_bar()
    s = constrained_system(m, Q_A, QD_A, cs)
    assert np.allclose(s.H, crba(m, Q_A))
    assert np.allclose(s.C, nonlinear_effects(m, Q_A, QD_A))
    assert np.allclose(s.G, constraint_jacobian(m, Q_A, cs))
    assert np.allclose(s.gamma, constraint_gamma(m, Q_A, QD_A, cs))
    assert s.position_error.shape == (3,) and s.velocity_error.shape == (3,)


def test_constraints_fourbar_wrenches_reproduce_generalised_force():
    """sum_k J6(body_k, point_k)^T wrench_k = G^T lambda (world and local reports agree)."""
    from sinews import point_jacobian_6d

    m, cs = four_bar()
    r = forward_dynamics_constraints(m, Q_A, QD_A, TAU_A, cs)
    G = constraint_jacobian(m, Q_A, cs)
    W = calc_forces(m, Q_A, cs, "loop", r, frame="world")
    Wl = calc_forces(m, Q_A, cs, "loop", r, frame="local")
    gen = np.zeros(5)
    from sinews import body_placement

    for (b, X, w), (bl, Xl, wl) in zip(W, Wl):
        assert b == bl
        gen += point_jacobian_6d(m, Q_A, b, X.p if b == 0 else body_placement(m, Q_A, b).inverse().act_point(X.p)).T @ w
        Xw = body_placement(m, Q_A, b) @ Xl  # local frame in the world
        assert np.allclose(Xw.p, X.p, atol=1e-12)
        assert np.allclose(np.concatenate([Xw.R @ wl[:3], Xw.R @ wl[3:]]), w, atol=1e-12)
    assert np.allclose(gen, G.T @ r.multipliers, atol=1e-10)
    # predecessor and successor wrenches are equal and opposite at the same point
    assert np.allclose(W.wrenches[0], -W.wrenches[1], atol=1e-12)
