"""The compiled path of mixed sets (issue 8 item 7): loops, contacts and coordinate constraints
in one kernel call, prepared once per set; fallbacks; workspaces; the loops benchmark group."""

from __future__ import annotations

import numpy as np
import pytest

import sinews.constraints.forward_dynamics as FD
from sinews import joints
from sinews.constraints import ConstraintSet, forward_dynamics_constraints
from sinews.constraints._compiled_mixed import compiled_mixed
from sinews.model import Model
from sinews.spatial import SpatialInertia, Transform


def _general(model, q, v, tau, cs, method="direct", **kw):
    FD._use_compiled = False
    try:
        return forward_dynamics_constraints(model, q, v, tau, cs, method=method, **kw)
    finally:
        FD._use_compiled = True


def _gear_and_fourbar():
    """A planar four-bar (pin loop: x, y rows) whose crank drives a gear wheel through a
    coordinate constraint (ratio -2), and a point contact on the wheel."""
    m = Model(gravity=(0, -9.81, 0))
    rod = lambda mass, L: SpatialInertia(mass, (L / 2, 0, 0), np.diag([1e-3, mass * L * L / 12, mass * L * L / 12]))  # noqa: E731
    crank = m.add_body(0, joints.RevoluteZ(), None, rod(1.0, 0.5), "crank")
    m.add_body(crank, joints.RevoluteZ(), (0.5, 0, 0), rod(2.0, 1.5), "coupler")
    m.add_body(0, joints.RevoluteZ(), (1.2, 0, 0), rod(1.5, 1.0), "rocker")
    m.add_body(0, joints.RevoluteZ(), (0, -1.0, 0), SpatialInertia(0.5, (0, 0, 0), np.eye(3) * 0.01), "wheel")
    m.add_body("wheel", joints.PrismaticY(), None, SpatialInertia(0.2, (0, 0, 0), np.eye(3) * 0.01), "pad")
    cs = ConstraintSet()
    for ax in np.eye(6)[3:5]:
        cs.add_loop_constraint("coupler", "rocker", Transform.translation((1.5, 0, 0)), Transform.translation((1.0, 0, 0)),
                               ax, name="pin", baumgarte=True, time_constant=0.1)
    cs.add_coordinate_constraint("wheel", "crank", ratio=-2.0, offset=0.1, name="gear")
    cs.add_contact_constraint("pad", (0.1, 0, 0), (0, 1, 0), name="pad")
    return m, cs


def test_loops_coordinates_and_contacts_in_one_compiled_call():
    m, cs = _gear_and_fourbar()
    rng = np.random.default_rng(0)
    q = np.array([1.3, -1.0, 1.9, 0.2, 0.05])
    for _ in range(3):
        v, tau = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
        ref = _general(m, q, v, tau, cs)
        for method in ("direct", "range_space_sparse", "tree_augmented"):
            r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
            assert np.abs(r.qdd - ref.qdd).max() <= 1e-9 * (1 + np.abs(ref.qdd).max())
            assert np.abs(r.multipliers - ref.multipliers).max() <= 1e-9 * (1 + np.abs(ref.multipliers).max())
            assert r.converged and r.rows == cs.size == 4
        # the gear row: qdd_wheel = -2 qdd_crank - D phidot - K phi (Baumgarte off on "gear")
        assert r.qdd[3] == pytest.approx(-2.0 * r.qdd[0], abs=1e-9)
    fast = compiled_mixed(m, cs)
    assert fast is not None and fast.rows == 4
    assert compiled_mixed(m, cs) is fast  # prepared once per set
    assert r.group_multipliers("gear").shape == (1,)


def test_workspaces_and_a_set_changed_after_binding():
    m, cs = _gear_and_fourbar()
    q = np.array([1.3, -1.0, 1.9, 0.2, 0.05])
    v, tau = np.ones(m.nv), np.zeros(m.nv)
    d1, d2 = m.data(), m.data()
    a = forward_dynamics_constraints(m, q, v, tau, cs, method="tree_augmented", data=d1)
    b = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse", data=d1)
    c = forward_dynamics_constraints(m, q, v, tau, cs, method="tree_augmented", data=d2)
    assert np.allclose(a.qdd, b.qdd, atol=1e-10) and np.array_equal(a.qdd, c.qdd)
    with pytest.raises(ValueError, match="data"):
        forward_dynamics_constraints(m, q, v, tau, cs, method="tree_augmented", data=Model().data() if False else object())
    # a Baumgarte change after binding is seen by the compiled path
    cs.disable_baumgarte("pin")
    ref = _general(m, q, v, tau, cs)
    r = forward_dynamics_constraints(m, q, v, tau, cs, method="tree_augmented")
    assert np.allclose(r.qdd, ref.qdd, atol=1e-9)
    # removing a group (structure change) rebuilds the compiled data
    cs.remove("pad")
    r = forward_dynamics_constraints(m, q[:], v, tau, cs, method="tree_augmented")
    assert r.rows == 3 and compiled_mixed(m, cs).rows == 3
    assert np.allclose(r.qdd, _general(m, q, v, tau, cs).qdd, atol=1e-9)


def test_bad_inputs_on_the_compiled_path():
    m, cs = _gear_and_fourbar()
    q = np.array([1.3, -1.0, 1.9, 0.2, 0.05])
    v, tau = np.zeros(m.nv), np.zeros(m.nv)
    for method in ("direct", "tree_augmented"):
        with pytest.raises(ValueError, match="q"):
            forward_dynamics_constraints(m, q[:3], v, tau, cs, method=method)
        with pytest.raises(ValueError, match="v"):
            forward_dynamics_constraints(m, q, np.full(m.nv, np.inf), tau, cs, method=method)
        # lists and integer arrays are converted
        r = forward_dynamics_constraints(m, q.tolist(), [0] * m.nv, np.zeros(m.nv, dtype=int), cs, method=method)
        assert np.all(np.isfinite(r.qdd))


def test_loops_bench_runs_and_agrees():
    pytest.importorskip("pinocchio")
    from sinews.bench import loops

    rows, problems, exponent = loops.run(calls=2, quick=True, verbose=False)
    assert not problems
    names = {(r["model"], r["algorithm"]) for r in rows}
    assert ("fourbar", "forward_dynamics_constraints[tree_augmented]") in names
    for model in ("fourbar-pin", "slider_crank-pin"):  # the pin loop joint versions (5 rows, rank 2)
        assert {(model, f"forward_dynamics_constraints[{m}]") for m in loops.METHODS} <= names
    assert {"model", "algorithm", "sinews_us", "peer", "peer_us", "ratio"} <= set(rows[0])
    assert np.isfinite(exponent)


def test_loops_by_joint_type_take_the_compiled_path():
    """Every cut-joint type of sinews.loops (translation rows, rotation rows moving with both
    frames, the screw row) on random trees, Baumgarte on: the compiled direct, range-space and TA methods
    against the general direct method, accelerations and multipliers to 1e-9."""
    from sinews import loops
    from sinews.sample_models import random_tree

    for seed in range(3):
        for jt in loops.JOINT_TYPES:
            rng = np.random.default_rng(seed)
            m = random_tree(10, rng)
            cs = ConstraintSet()
            kw = {"pitch": 0.05} if jt == "screw" else {}
            cs.add_loop_joint(3, 8, jt, Transform.rot_x(0.3, (0.1, 0.2, 0)), Transform.rot_y(0.2, (0, 0.1, 0.3)),
                              name="lj", baumgarte=True, time_constant=0.05, **kw)
            q = rng.standard_normal(m.nq)
            for sl in m.compiled.quat_slices:
                q[sl] /= np.linalg.norm(q[sl])
            v, tau = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
            ref = _general(m, q, v, tau, cs)
            assert compiled_mixed(m, cs) is not None, jt
            for method in ("direct", "range_space_sparse", "tree_augmented"):
                r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
                assert np.abs(r.qdd - ref.qdd).max() <= 1e-9 * (1 + np.abs(ref.qdd).max()), (jt, method)
                assert np.abs(r.multipliers - ref.multipliers).max() <= 1e-9 * (1 + np.abs(ref.multipliers).max())


def test_compiled_impulses_of_mixed_sets():
    from sinews.constraints import compute_constraint_impulses
    from sinews.constraints.forward_dynamics import mixed_impulses

    m, cs = _gear_and_fourbar()
    q = np.array([1.3, -1.0, 1.9, 0.2, 0.05])
    rng = np.random.default_rng(4)
    v = rng.standard_normal(m.nv)
    for target in (None, rng.standard_normal(cs.size)):
        FD._use_compiled = False
        try:
            ref = compute_constraint_impulses(m, q, v, cs, target_velocity=target)
        finally:
            FD._use_compiled = True
        for method in ("direct", "range_space_sparse"):
            qd_plus, imp, res, ok, rank = mixed_impulses(m, cs, q, v, target, None, method)
            assert ok and np.allclose(qd_plus, ref.qd_plus, atol=1e-12) and np.allclose(imp, ref.impulses, atol=1e-12)
            r = compute_constraint_impulses(m, q, v, cs, method=method, target_velocity=target)
            assert np.allclose(r.qd_plus, ref.qd_plus, atol=1e-12) and np.allclose(r.impulses, ref.impulses, atol=1e-12)
    assert mixed_impulses(m, cs, q, v, None, None, "null_space") is None  # (general path)
    with pytest.raises(ValueError, match="target_velocity"):
        mixed_impulses(m, cs, q, v, np.zeros(2), None, "direct")


def test_coordinate_only_set_and_a_row_on_a_welded_body():
    """No pair rows at all (a gear only); a contact on a body welded to the world (a zero row:
    redundant, flagged, minimum-norm zero multiplier, solved in the kernel) next to a regular
    one."""
    m = Model()
    inertia = SpatialInertia(1.0, (0.3, 0, 0), np.eye(3) * 0.1)
    a = m.add_body(0, joints.RevoluteZ(), None, inertia, "a")
    m.add_body(a, joints.RevoluteY(), (1, 0, 0), inertia, "b")
    m.add_body(0, joints.Fixed(), (0, 0, 1), inertia, "welded")
    q, v, tau = np.array([0.3, 0.1]), np.array([0.5, -0.2]), np.zeros(2)
    gear = ConstraintSet()
    gear.add_coordinate_constraint("b", "a", ratio=2.0)
    both = ConstraintSet()
    both.add_contact_constraint("welded", (0, 0, 0), (0, 0, 1))
    both.add_contact_constraint("b", (0.5, 0, 0), (0, 0, 1))
    for cs, redundant in ((gear, False), (both, True)):
        ref = _general(m, q, v, tau, cs)
        for method in ("direct", "range_space_sparse", "tree_augmented"):
            r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
            assert np.allclose(r.qdd, ref.qdd, atol=1e-12) and np.allclose(r.multipliers, ref.multipliers, atol=1e-12)
            assert r.least_squares == redundant and r.converged and r.rank == ref.rank
            assert compiled_mixed(m, cs).dynamics(q, v, tau, None, None, method) is not None
        assert compiled_mixed(m, cs) is not None
