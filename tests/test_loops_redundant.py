"""Redundant loop rows on the compiled mixed path (issue 8): a planar mechanism closed by a
``pin`` loop joint has 5 rows of rank 2 (its 3 out-of-plane rows are zero rows of ``G``); the
compiled direct, range-space and TA kernels solve them in one call (multiplier 0 on the zero
rows: the minimum-norm answer) with the general path's answer and diagnostics.  Genuinely
dependent non-zero rows still hand over (direct, range-space) or take TA's least squares."""

from __future__ import annotations

import numpy as np
import pytest

import sinews
import sinews.constraints.forward_dynamics as FD
from sinews.constraints import ConstraintSet, compute_constraint_impulses, forward_dynamics_constraints
from sinews.constraints._compiled_mixed import compiled_mixed
from sinews.constraints.forward_dynamics import mixed_impulses
from sinews.loops import ConstraintKinematicsSolver
from sinews.loops import examples as E

METHODS = ("direct", "range_space_sparse", "tree_augmented")


def _general(model, q, v, tau, cs, method, **kw):
    FD._use_compiled = False
    try:
        return forward_dynamics_constraints(model, q, v, tau, cs, method=method, **kw)
    finally:
        FD._use_compiled = True


def _general_impulses(model, q, v, cs, method, target):
    FD._use_compiled = False
    try:
        return compute_constraint_impulses(model, q, v, cs, method=method, target_velocity=target)
    finally:
        FD._use_compiled = True


def _close(a, b, tol=1e-9):
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() <= tol * (1.0 + np.abs(b).max())


def _states(mech, rng, count):
    """Closed states (crank angle driven, rest solved, a consistent velocity) and open ones
    (random joint angles and velocities: the loop rows' errors are not zero)."""
    m, cs = mech.model, mech.cs
    solver = ConstraintKinematicsSolver(m, cs).freeze(1)  # the crank (body 1)
    q = mech.q0.copy()
    out = []
    for k in range(count):
        guess = q.copy()
        guess[0] = mech.q0[0] + 0.4 * (k + 1)
        q = solver.solve_q(guess).check().value
        v = solver.solve_u(q, np.r_[rng.standard_normal(), np.zeros(m.nv - 1)]).value
        out.append((q, v, rng.standard_normal(m.nv)))
        out.append((q + 0.05 * rng.standard_normal(m.nq), rng.standard_normal(m.nv), rng.standard_normal(m.nv)))
    return out


@pytest.mark.parametrize("build", [E.four_bar, E.slider_crank], ids=["four_bar", "slider_crank"])
@pytest.mark.parametrize("baumgarte", [False, True])
def test_pin_closed_planar_mechanisms_take_the_compiled_path(build, baumgarte):
    mech = build()
    m, cs = mech.model, mech.cs
    name = cs.groups[0].name
    if baumgarte:
        cs.set_baumgarte_gains(name, 40.0, 12.0)
    rng = np.random.default_rng(7)
    fast = None
    for q, v, tau in _states(mech, rng, 4):
        f_ext = {m.nbodies - 1: rng.standard_normal(6)} if rng.random() < 0.5 else None
        kkt = _general(m, q, v, tau, cs, "direct", f_ext=f_ext)  # KKT by LAPACK, least squares
        assert kkt.rows == 5 and kkt.rank == 2 and kkt.least_squares
        for method in METHODS:
            ref = _general(m, q, v, tau, cs, method, f_ext=f_ext)
            fast = compiled_mixed(m, cs)
            assert fast is not None
            out = fast.dynamics(q, v, tau, f_ext, None, method)
            assert out is not None, method  # solved in the kernel, no hand-over
            r = forward_dynamics_constraints(m, q, v, tau, cs, method=method, f_ext=f_ext)
            for other in (ref, kkt):
                assert _close(r.qdd, other.qdd), method
                assert _close(r.multipliers, other.multipliers), method
            assert np.array_equal(r.qdd, out[0]) and np.array_equal(r.multipliers, out[1])
            assert (r.rank, r.least_squares, r.rows) == (ref.rank, ref.least_squares, ref.rows) == (2, True, 5)
            assert r.converged == ref.converged
            assert r.constraint_residual == pytest.approx(ref.constraint_residual, abs=1e-9)
            # the out-of-plane rows carry no force (minimum norm), the in-plane ones the reaction
            assert np.all(r.multipliers[2:] == 0.0)
            assert np.abs(r.multipliers[:2]).max() > 0.0
    assert compiled_mixed(m, cs) is fast  # prepared once


def _doubled_four_bar():
    """The four-bar closed twice by the same pin loop: 10 rows, 6 of them zero rows, the other
    4 in two identical pairs (rank 2: genuinely dependent non-zero rows)."""
    mech = E.four_bar()
    m, g = mech.model, mech.cs.groups[0]
    cs = ConstraintSet()
    for name in ("pin_a", "pin_b"):
        cs.add_loop_joint("coupler", "rocker", "pin", g.X_source, g.X_target, name=name, baumgarte=True,
                          time_constant=0.05)
    return mech, m, cs


def test_a_genuinely_dependent_loop_is_still_correct_and_flagged():
    mech, m, cs = _doubled_four_bar()
    rng = np.random.default_rng(3)
    fast = compiled_mixed(m, cs.bind(m))
    assert fast is not None and fast.rows == 10
    for q, v, tau in _states(mech, rng, 2):
        kkt = _general(m, q, v, tau, cs, "direct")
        assert kkt.rank == 2 and kkt.least_squares
        for method in METHODS:
            ref = _general(m, q, v, tau, cs, method)
            out = fast.dynamics(q, v, tau, None, None, method)
            # direct and range-space hand the dependent rows over to the general path; TA solves
            # its minimum-norm least squares on the whole Lambda (whose kept-row compaction
            # must leave the strict upper triangle and the diagonal intact)
            assert (out is None) == (method != "tree_augmented"), method
            r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
            for other in (ref, kkt):
                assert _close(r.qdd, other.qdd), method
                assert _close(r.multipliers, other.multipliers), method
            assert (r.rank, r.least_squares) == (ref.rank, ref.least_squares) == (2, True)
            # the minimum-norm split of a doubled loop: equal halves, zero out of plane
            lam = r.multipliers
            assert _close(lam[:2], lam[5:7]) and np.all(np.abs(lam[np.r_[2:5, 7:10]]) <= 1e-12)


def test_a_row_that_is_zero_at_some_configurations_only():
    """A contact row (normal x at the origin of link b, on b's own joint axis) is zero exactly
    when q_a = 0; a coordinate row and a second contact stay.  The same workspace alternates
    between configurations with and without the zero row (the kernels' compaction must not
    leave stale rows behind)."""
    from sinews import joints
    from sinews.model import Model
    from sinews.spatial import SpatialInertia

    m = Model(gravity=(0.0, 0.0, -9.81))
    inertia = SpatialInertia(1.0, (0.3, 0.1, 0.0), np.eye(3) * 0.1)
    a = m.add_body(0, joints.RevoluteZ(), None, inertia, "a")
    b = m.add_body(a, joints.RevoluteY(), (1.0, 0.0, 0.0), inertia, "b")
    m.add_body(b, joints.RevoluteX(), (0.5, 0.0, 0.0), inertia, "c")
    m.add_body(0, joints.RevoluteZ(), (0.0, 2.0, 0.0), inertia, "d")
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), name="on_axis")
    cs.add_contact_constraint("c", (0.2, 0.1, 0.0), (0.0, 0.0, 1.0), name="tip")
    cs.add_coordinate_constraint("d", "a", ratio=0.5, name="gear")
    cs.bind(m)
    rng = np.random.default_rng(11)
    data = m.data()
    fast = compiled_mixed(m, cs)
    for qa in (0.3, 0.0, -0.7, 0.0, 0.2):
        q = np.r_[qa, rng.standard_normal(3)]
        v, tau = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
        for method in METHODS:
            ref = _general(m, q, v, tau, cs, method)
            assert ref.rank == (2 if qa == 0.0 else 3)
            assert fast.dynamics(q, v, tau, None, data, method) is not None
            r = forward_dynamics_constraints(m, q, v, tau, cs, method=method, data=data)
            assert _close(r.qdd, ref.qdd) and _close(r.multipliers, ref.multipliers), (qa, method)
            assert (r.rank, r.least_squares, r.converged) == (ref.rank, ref.least_squares, ref.converged)
            if qa == 0.0:
                assert r.multipliers[0] == 0.0


def test_impulses_with_zero_rows_take_the_compiled_path():
    """Impulses of a pin-closed four-bar (5 rows, 3 of them zero rows of G) are solved in the
    kernel: zero impulses on the dead rows, flagged least squares with rank 2, equal to the
    general path's minimum-norm answer; a target on a dead row cannot be met and is reported."""
    mech = E.four_bar()
    m, cs = mech.model, mech.cs
    rng = np.random.default_rng(5)
    q = mech.q0
    G = sinews.constraints.constraint_jacobian(m, q, cs)
    dead = np.abs(G).max(axis=1) <= 1e-12 * max(1.0, np.abs(G).max())
    assert dead.sum() == 3
    for method in ("direct", "range_space_sparse"):
        for _ in range(5):
            v = rng.standard_normal(m.nv)
            target = np.where(dead, 0.0, rng.standard_normal(cs.size))
            out = mixed_impulses(m, cs, q, v, target, None, method)
            assert out is not None and out[4] == 2
            r = compute_constraint_impulses(m, q, v, cs, method=method, target_velocity=target)
            g = _general_impulses(m, q, v, cs, method, target)
            assert r.least_squares and g.least_squares and r.rank == g.rank == 2
            assert r.converged and g.converged
            assert _close(r.qd_plus, g.qd_plus) and _close(r.impulses, g.impulses)
            assert np.all(r.impulses[dead] == 0.0)
            assert np.abs(G @ r.qd_plus - target).max() <= 1e-10
        # a velocity asked of a dead row cannot be produced: not converged, on both paths
        bad = np.where(dead, 1.0, 0.0)
        r = compute_constraint_impulses(m, q, v, cs, method=method, target_velocity=bad)
        g = _general_impulses(m, q, v, cs, method, bad)
        assert not r.converged and not g.converged
        assert _close(r.qd_plus, g.qd_plus)


def test_simulate_a_pin_closed_four_bar_on_the_compiled_path():
    mech = E.four_bar()
    m, cs = mech.model, mech.cs
    v0 = ConstraintKinematicsSolver(m, cs).solve_u(mech.q0, [3.0, 0.0, 0.0]).value
    fast = compiled_mixed(m, cs.bind(m))
    compiled, general = [], []
    inner, check = fast.dynamics, FD._check_method

    def counted(*args):
        out = inner(*args)
        compiled.append(out is not None)
        return out

    fast.dynamics = counted
    FD._check_method = lambda *a: general.append(1) or check(*a)  # only the general path calls it
    try:
        tr = sinews.simulate(m, mech.q0, v0, duration=0.1, dt=0.01, constraints=cs, progress=False)
    finally:
        del fast.dynamics
        FD._check_method = check
    # 10 RK4 steps: every evaluation in the kernel (the first through CompiledMixed.dynamics,
    # the others through the fast lane it leaves), none on the general path
    assert compiled and all(compiled) and not general
    lane = m._tls.fd_lane
    assert lane[0] is cs and lane[1] == "direct"  # simulate's default constraint_method
    FD._use_compiled = False
    try:
        ref = sinews.simulate(m, mech.q0, v0, duration=0.1, dt=0.01, constraints=cs, progress=False)
    finally:
        FD._use_compiled = True
    assert np.abs(tr.q - ref.q).max() <= 1e-10 and np.abs(tr.v - ref.v).max() <= 1e-9
    assert tr.constraint_error.max() <= 1e-8

