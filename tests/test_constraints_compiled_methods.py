"""The one-call compiled ``direct`` and ``null_space`` methods of contacts-only sets (and the
range-space one next to them): each must give the numbers, flags and errors of the general
Python path (forced with the internal switch ``forward_dynamics._use_compiled``) to 1e-9, for
every row layout, with external forces, Baumgarte terms and targets; singular and redundant
sets keep the general path's flagged least-squares answers; threads are bit-identical to a
serial run."""

import threading

import numpy as np
import pytest

import sinews
from sinews import Model, SpatialInertia, Transform, joints
from sinews.constraints import ConstraintSet, compute_constraint_impulses, forward_dynamics_constraints
from sinews.constraints import forward_dynamics as fd
from sinews.sample_models import quadruped12, random_tree

TOL = 1e-9
METHODS = ("direct", "range_space_sparse", "null_space")
FIELDS = ("method", "rows", "rank", "least_squares", "converged")


def _humanoid_like(rng):
    m = Model(gravity=(0, 0, -9.81))

    def inertia():
        return SpatialInertia(rng.uniform(0.5, 2), rng.normal(size=3) * 0.1, np.diag(rng.uniform(0.6, 1.0, 3)))

    base = m.add_body(0, joints.FreeFlyer(), None, inertia(), "base")
    chest = m.add_body(base, joints.RevoluteZ(), (0, 0, 0.3), inertia(), "chest")
    chest2 = m.add_body(chest, joints.RevoluteY(), (0, 0, 0.2), inertia(), "chest2")
    for side, y in (("l", 0.2), ("r", -0.2)):
        parent = chest2
        for k, jt in enumerate((joints.RevoluteX(), joints.RevoluteY(), joints.Spherical())):
            parent = m.add_body(parent, jt, (0, y if k == 0 else 0, -0.25), inertia(), f"{side}arm{k}")
        parent = base
        for k, jt in enumerate((joints.RevoluteZ(), joints.RevoluteX(), joints.RevoluteY(), joints.PrismaticZ())):
            parent = m.add_body(parent, jt, (0, y if k == 0 else 0, -0.3), inertia(), f"{side}leg{k}")
    return m


def _state(m, rng):
    return sinews.random_configuration(m, rng), rng.normal(size=m.nv), rng.normal(size=m.nv)


def _general(fn, *args, **kw):
    fd._use_compiled = False
    try:
        return fn(*args, **kw)
    finally:
        fd._use_compiled = True


def _same(a, b, arrays):
    for f in FIELDS:
        assert getattr(a, f) == getattr(b, f), f
    for f in arrays:
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), atol=TOL, rtol=0)


def _check(m, cs, q, v, tau, f_ext=None, target=None, expect_compiled=True):
    """Every compiled method against its general path, dynamics and impulses."""
    assert cs._compiled is not None
    for method in METHODS:
        fast = forward_dynamics_constraints(m, q, v, tau, cs, method=method, f_ext=f_ext)
        ref = _general(forward_dynamics_constraints, m, q, v, tau, cs, method=method, f_ext=f_ext)
        _same(fast, ref, ("qdd", "multipliers"))
        assert abs(fast.constraint_residual - ref.constraint_residual) < 1e-9
        compiled = cs._compiled.dynamics(q, v, tau, f_ext, None, method)
        if expect_compiled:
            assert compiled is not None, method
            np.testing.assert_array_equal(compiled[0], fast.qdd)
            assert fast.converged and not fast.least_squares
            assert fast.constraint_residual < 1e-9
        imp = compute_constraint_impulses(m, q, v, cs, method=method, target_velocity=target)
        iref = _general(compute_constraint_impulses, m, q, v, cs, method=method, target_velocity=target)
        _same(imp, iref, ("qd_plus", "impulses"))
        if expect_compiled:
            assert cs._compiled.impulses(q, v, target, None, method) is not None, method
        elif fast.least_squares:
            assert compiled is None  # handed to the general path


def test_every_row_layout_f_ext_baumgarte_and_targets():
    rng = np.random.default_rng(11)
    m = _humanoid_like(rng)
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("lleg3", (0.05, 0, -0.1), n, name="lfoot")
    cs.add_contact_constraint("rleg3", (0, 0, -0.1), (0, 0, 1), name="rfoot")
    n1 = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    n2 = np.array([-1.0, 1.0, 0.0]) / np.sqrt(2)
    cs.add_contact_constraint("larm2", (0, 0, -0.1), n1, name="lhand")
    cs.add_contact_constraint("larm2", (0, 0, -0.1), n2, name="lhand")
    for n in np.eye(3):
        cs.add_contact_constraint("larm2", (0.1, 0.0, 0.0), n, name="lhand2")
    cs.add_contact_constraint("base", (0.1, 0.2, 0.0), (0, 1, 0), name="base")
    cs.add_contact_constraint("chest2", (0.0, 0.1, 0.1), (1, 0, 0), name="chest")
    cs.bind(m)
    q, v, tau = _state(m, rng)
    _check(m, cs, q, v, tau)
    f_ext = {"chest": rng.normal(size=6), "rleg1": rng.normal(size=6)}
    _check(m, cs, q, v, tau, f_ext=f_ext, target=rng.normal(size=cs.size))
    cs.enable_baumgarte("lfoot", time_constant=0.05)
    cs.enable_baumgarte("lhand", time_constant=0.2)
    _check(m, cs, q, v, tau, f_ext=f_ext)


@pytest.mark.parametrize("seed", range(6))
def test_random_trees_including_redundant_sets(seed):
    rng = np.random.default_rng(100 + seed)
    m = random_tree(int(rng.integers(3, 12)), rng)
    names = [b.name for b in m.bodies[1:]]
    cs = ConstraintSet()
    for k in range(int(rng.integers(1, 5))):
        body = names[int(rng.integers(len(names)))]
        point = rng.normal(size=3) * 0.3
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        for n in R[: int(rng.integers(1, 4))]:
            cs.add_contact_constraint(body, point, n, name=f"p{k}")
    cs.bind(m)
    if cs._compiled is None:
        pytest.skip("a point on a body welded to the world")
    q, v, tau = _state(m, rng)
    G = sinews.constraints.constraint_jacobian(m, q, cs)
    _check(m, cs, q, v, tau, expect_compiled=np.linalg.matrix_rank(G) == cs.size)


def test_singular_sets_keep_the_general_answers_and_flags():
    m = quadruped12()
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("FL_shank", [0, 0, -0.25], n, name="a")
    cs.add_contact_constraint("FL_shank", [0, 0, -0.25], (0, 0, 1), name="again")
    cs.bind(m)
    q, v, tau = _state(m, np.random.default_rng(1))
    _check(m, cs, q, v, tau, expect_compiled=False)
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
        assert r.least_squares and r.rank == 3
    # a point on the axis of its only joint: a zero row (multiplier 0, flagged)
    t = random_tree(4, 1, joint_types=["RX", "RY"])
    cs = ConstraintSet()
    cs.add_contact_constraint(4, [0.1, 0.0, 0.0], [0, 0, 1])
    cs.bind(t)
    q, v, tau = _state(t, np.random.default_rng(0))
    _check(t, cs, q, v, tau, expect_compiled=False)
    # a point on a body welded to the world next to a regular one
    w = Model()
    w.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (0.1, 0, 0), np.eye(3)), "b")
    w.add_body(0, joints.Fixed(), Transform.rot_x(0.3, (1, 0, 0)), SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "welded")
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (0.5, 0, 0), (0, 1, 0), name="b")
    cs.add_contact_constraint("welded", (0, 0, 0), (0, 0, 1), name="welded")
    cs.bind(w)
    _check(w, cs, np.zeros(1), np.zeros(1), np.ones(1), expect_compiled=False)


def test_massless_leaf_fixed_by_a_contact_direct_and_null_space():
    """``H`` singular, the KKT matrix and ``Z^T H Z`` regular: direct hands over to the
    general LAPACK solver, null_space solves it in the kernel; both as the general path."""
    m = Model(gravity=(0, 0, -9.81))
    a = m.add_body(0, joints.RevoluteY(), None, SpatialInertia(1.0, (0.3, 0, 0), np.diag([0.1, 0.1, 0.1])), "a")
    m.add_body(a, joints.RevoluteY(), (0.6, 0, 0), SpatialInertia(0.0, (0, 0, 0), np.zeros((3, 3))), "leaf")
    cs = ConstraintSet()
    cs.add_contact_constraint("leaf", (0.4, 0, 0), (0, 0, 1))
    cs.bind(m)
    q, v, tau = np.array([0.2, 0.5]), np.array([0.3, -0.2]), np.array([0.1, 0.0])
    for method in ("direct", "null_space"):
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
        ref = _general(forward_dynamics_constraints, m, q, v, tau, cs, method=method)
        _same(r, ref, ("qdd", "multipliers"))
    assert cs._compiled.dynamics(q, v, tau, None, None, "direct") is None  # H singular
    assert cs._compiled.dynamics(q, v, tau, None, None, "null_space") is not None


def test_bad_input_names_the_argument():
    m = quadruped12()
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("FL_shank", [0, 0, -0.25], n, name="FL")
    cs.bind(m)
    q, v, tau = _state(m, np.random.default_rng(0))
    zq = q.copy()
    zq[3:7] = 0.0
    for method in ("direct", "null_space"):
        for name, args in (("q", (np.full(m.nq, np.nan), v, tau)), ("v", (q, v * np.inf, tau)),
                           ("tau", (q, v, np.full(m.nv, np.nan)))):
            with pytest.raises(ValueError, match=rf"^{name} "):
                forward_dynamics_constraints(m, *args, cs, method=method)
        with pytest.raises(ValueError, match="quaternion"):
            forward_dynamics_constraints(m, zq, v, tau, cs, method=method)
        with pytest.raises(ValueError, match="f_ext"):
            forward_dynamics_constraints(m, q, v, tau, cs, method=method, f_ext={"FL_shank": [np.nan] * 6})
        for bad in ((q[:-1], v, tau), (q, v[:-1], tau), (q, v, tau[:-1])):
            with pytest.raises(ValueError, match=r"^(q|v|tau)\b"):
                forward_dynamics_constraints(m, *bad, cs, method=method)
        with pytest.raises(ValueError, match="qd_minus"):
            compute_constraint_impulses(m, q, v[:-1], cs, method=method)
        with pytest.raises(ValueError, match="qd_minus"):
            compute_constraint_impulses(m, q, v * np.nan, cs, method=method)
        with pytest.raises(ValueError, match="target_velocity"):
            compute_constraint_impulses(m, q, v, cs, method=method, target_velocity=[0, np.nan, 0])
        with pytest.raises(ValueError, match="target_velocity"):
            compute_constraint_impulses(m, q, v, cs, method=method, target_velocity=[0, 0])
        ro = q.copy()
        ro.flags.writeable = False
        r = forward_dynamics_constraints(m, ro, list(v), tuple(tau), cs, method=method)
        ref = _general(forward_dynamics_constraints, m, q, v, tau, cs, method=method)
        _same(r, ref, ("qdd", "multipliers"))


def test_threads_are_bit_identical_to_serial_runs():
    m = quadruped12()
    cs = ConstraintSet()
    for leg in ("FL", "FR", "HL", "HR"):
        for k, n in enumerate(np.eye(3)):
            cs.add_contact_constraint(f"{leg}_shank", [0, 0, -0.25], n, name=leg if k == 0 else None)
    cs.bind(m)
    rng = np.random.default_rng(7)
    states = [_state(m, rng) for _ in range(8)]

    def work(s, data=None):
        out = []
        for method in METHODS:
            r = forward_dynamics_constraints(m, *s, cs, method=method, data=data)
            i = compute_constraint_impulses(m, s[0], s[1], cs, method=method, data=data)
            out.append((r.qdd, r.multipliers, i.qd_plus, i.impulses))
        return out

    serial = [work(s) for s in states]
    for use_data in (False, True):
        results = [None] * len(states)

        def run(k):
            d = m.data() if use_data else None
            for _ in range(20):
                results[k] = work(states[k], d)

        threads = [threading.Thread(target=run, args=(k,)) for k in range(len(states))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for got, want in zip(results, serial):
            for a, b in zip(got, want):
                for x, y in zip(a, b):
                    assert np.array_equal(x, y)


def test_compiled_methods_agree_with_pinocchio():
    pytest.importorskip("pinocchio")
    from sinews.bench.constrained import Problem, check_agreement

    for name, err, ok in check_agreement(Problem(3)):
        assert ok, (name, err)
