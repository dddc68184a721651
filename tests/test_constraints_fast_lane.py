"""The fast lane of ``forward_dynamics_constraints`` for compiled mixed sets (loops, contacts,
coordinate rows): a repeated call with the same set, method and workspace is one sealed kernel
call; it must give the full path's answer bit for bit, step aside whenever anything it keyed on
changes, and keep per-thread workspaces apart."""

import threading

import numpy as np
import pytest

import sinews.constraints.forward_dynamics as FD
from sinews.constraints import ConstraintSet, forward_dynamics_constraints
from sinews.loops import ConstraintKinematicsSolver
from sinews.loops import examples as E
from sinews.sample_models import quadruped12

METHODS = ("direct", "range_space_sparse", "tree_augmented")


def _mixed_set(m):
    cs = ConstraintSet()
    for k, n in enumerate(np.eye(3)):
        cs.add_contact_constraint("FL_shank", [0, 0, -0.25], n, name="FL" if k == 0 else None)
    cs.add_loop_constraint("FR_shank", "HR_shank", (0, 0, -0.25), (0, 0, -0.25), (0, 0, 0, 0, 0, 1),
                           baumgarte=True, time_constant=0.2, name="rod")
    return cs.bind(m)


def _states(m, count, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        q = rng.standard_normal(m.nq)
        q[3:7] /= np.linalg.norm(q[3:7])
        out.append((q, rng.standard_normal(m.nv), rng.standard_normal(m.nv)))
    return out


def _full(m, q, v, tau, cs, method, data=None):
    """The answer without the lane (the lane is dropped before the call)."""
    m._tls.__dict__.pop("fd_lane", None)
    r = forward_dynamics_constraints(m, q, v, tau, cs, method=method, data=data)
    m._tls.__dict__.pop("fd_lane", None)
    return r


def test_the_lane_is_taken_and_equals_the_full_path_bit_for_bit():
    m = quadruped12()
    cs = _mixed_set(m)
    for method in METHODS:
        for q, v, tau in _states(m, 5):
            ref = _full(m, q, v, tau, cs, method)
            forward_dynamics_constraints(m, q, v, tau, cs, method=method)  # leaves the lane
            assert m._tls.fd_lane[0] is cs and m._tls.fd_lane[1] == method
            r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
            assert np.array_equal(r.qdd, ref.qdd) and np.array_equal(r.multipliers, ref.multipliers)
            assert (r.rank, r.least_squares, r.converged, r.constraint_residual, r.method, r.rows) == (
                ref.rank, ref.least_squares, ref.converged, ref.constraint_residual, ref.method, ref.rows)
            assert r.constraint_set is cs


def test_the_lane_steps_aside_when_gains_method_data_or_set_change():
    m = quadruped12()
    cs = _mixed_set(m)
    q, v, tau = _states(m, 1)[0]
    forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    # new Baumgarte gains: the answer changes, as on the full path
    before = forward_dynamics_constraints(m, q, v, tau, cs, method="direct").qdd
    cs.set_baumgarte_time_constant("rod", 0.05)
    after = forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    assert not np.array_equal(before, after.qdd)
    assert np.array_equal(after.qdd, _full(m, q, v, tau, cs, "direct").qdd)
    # another method, another workspace, another set: each its own answer
    d = m.data()
    for method, data in (("tree_augmented", None), ("direct", d), ("range_space_sparse", d)):
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=method, data=data)
        assert r.method == method
        assert np.array_equal(r.qdd, _full(m, q, v, tau, cs, method, data).qdd)
    other = _mixed_set(m)
    other.disable_baumgarte("rod")
    r = forward_dynamics_constraints(m, q, v, tau, other, method="range_space_sparse", data=d)
    assert r.constraint_set is other
    assert np.array_equal(r.qdd, _full(m, q, v, tau, other, "range_space_sparse", d).qdd)
    # with f_ext the lane is not used (and the answer differs)
    f_ext = np.zeros((m.nbodies, 6))
    f_ext[1, 5] = 10.0
    r = forward_dynamics_constraints(m, q, v, tau, other, method="range_space_sparse", f_ext=f_ext, data=d)
    assert not np.array_equal(r.qdd, _full(m, q, v, tau, other, "range_space_sparse", d).qdd)


def test_bad_input_after_the_lane_gets_the_full_paths_errors():
    m = quadruped12()
    cs = _mixed_set(m)
    q, v, tau = _states(m, 1)[0]
    for _ in range(2):
        forward_dynamics_constraints(m, q, v, tau, cs)
    with pytest.raises(ValueError, match="tau"):
        forward_dynamics_constraints(m, q, v, tau[:-1], cs)
    with pytest.raises(ValueError, match="q"):
        forward_dynamics_constraints(m, q * np.nan, v, tau, cs)
    with pytest.raises(ValueError, match="method"):
        forward_dynamics_constraints(m, q, v, tau, cs, method="nope")
    # lists and integer arrays are converted by the full path, as without the lane
    r = forward_dynamics_constraints(m, list(q), list(v), list(tau), cs)
    assert np.array_equal(r.qdd, _full(m, q, v, tau, cs, "direct").qdd)


def test_the_lane_off_the_compiled_path_is_not_used():
    mech = E.four_bar()
    m, cs = mech.model, mech.cs.bind(mech.model)
    v = ConstraintKinematicsSolver(m, cs).solve_u(mech.q0, [2.0, 0.0, 0.0]).value
    tau = np.zeros(m.nv)
    forward_dynamics_constraints(m, mech.q0, v, tau, cs)
    FD._use_compiled = False
    try:
        general = forward_dynamics_constraints(m, mech.q0, v, tau, cs)
    finally:
        FD._use_compiled = True
    fast = forward_dynamics_constraints(m, mech.q0, v, tau, cs)
    assert np.abs(fast.qdd - general.qdd).max() <= 1e-9 * (1 + np.abs(general.qdd).max())
    assert fast.rank == general.rank == 2 and fast.least_squares and general.least_squares


def test_8_threads_without_data_match_serial_bit_for_bit():
    m = quadruped12()
    cs = _mixed_set(m)
    states = _states(m, 40, seed=3)
    serial = {meth: [_full(m, *s, cs, meth).qdd for s in states] for meth in METHODS}
    errors = []
    start = threading.Barrier(8)

    def work(k):
        start.wait()
        for rep in range(3):
            for i, s in enumerate(states):
                meth = METHODS[(i + k + rep) % 3]
                r = forward_dynamics_constraints(m, *s, cs, method=meth)
                if not np.array_equal(r.qdd, serial[meth][i]):
                    errors.append((k, i, meth))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
