"""Hardening of the constraint sets (``sinews.constraints``): bad arguments of the public API,
malformed custom constraints, thread safety of shared sets, and property tests over every array
argument.  Every bad input must give a ``ValueError`` (``KeyError`` for unknown names) that
names the argument or the custom constraint, never a crash from deep inside or a silent
answer."""

from __future__ import annotations

import re
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews.constraints import (
    METHODS,
    ConstraintSet,
    CustomConstraint,
    PinJointConstraint,
    WrenchEntry,
    assemble_q,
    assemble_qdot,
    calc_forces,
    calc_impulses,
    compute_constraint_impulses,
    constrained_system,
    constraint_gamma,
    constraint_jacobian,
    constraint_position_error,
    constraint_velocity_error,
    forward_dynamics_constraints,
    inverse_dynamics_constraints,
    inverse_dynamics_constraints_relaxed,
)
from sinews.sample_models import pendulum, quadruped12

EX, EY, EZ = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


def _names(msg, *names):
    return all(re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", msg) for n in names)


# ============================================================================ 1. argument checks
def _fourbar_like():
    m = pendulum(3)
    cs = ConstraintSet()
    cs.add_contact_constraint("link3", (0, 0, -1), EX, name="tip")
    cs.add_contact_constraint("link3", (0, 0, -1), EZ, name="tip")
    cs.add_loop_constraint("link1", "link3", None, None, (0, 0, 0, 0, 1, 0), name="loop")
    return m, cs


BAD_SET_CALLS = [
    # (call on a fresh unbound set, exception, words the message must contain)
    (lambda cs: cs.split(1.0), ValueError, ["per_row"]),
    (lambda cs: cs.split([1.0]), ValueError, ["per_row"]),
    (lambda cs: cs.split(np.array([1j, 2, 3])), ValueError, ["per_row", "complex"]),
    (lambda cs: cs.split(np.array(["a", "b", "c"])), ValueError, ["per_row"]),
    (lambda cs: cs.split([[1, 2], [3]]), ValueError, ["per_row"]),
    (lambda cs: cs.add_contact_constraint("link1", (0, 0, 0), np.array([1 + 1j, 0, 0])), ValueError, ["world_normal", "complex"]),
    (lambda cs: cs.add_contact_constraint("link1", (0, 0, 1j), EX), ValueError, ["body_point", "complex"]),
    (lambda cs: cs.add_contact_constraint("link1", (0, 0, np.nan), EX), ValueError, ["body_point"]),
    (lambda cs: cs.add_contact_constraint("link1", "abc", EX), ValueError, ["body_point"]),
    (lambda cs: cs.add_contact_constraint("link1", (0, 0, 0), (True, False, False)), ValueError, ["world_normal"]),
    (lambda cs: cs.add_contact_constraint("link1", (0, 0, 0), (2.0, 0, 0)), ValueError, ["world_normal", "unit"]),
    (lambda cs: cs.add_contact_constraint(None, (0, 0, 0), EX), ValueError, ["body"]),
    (lambda cs: cs.add_contact_constraint(1.5, (0, 0, 0), EX), ValueError, ["body"]),
    (lambda cs: cs.add_contact_constraint(True, (0, 0, 0), EX), ValueError, ["body"]),
    (lambda cs: cs.add_contact_constraint(-1, (0, 0, 0), EX), ValueError, ["body"]),
    (lambda cs: cs.add_contact_constraint("link1", (0, 0, 0), EX, name=7), ValueError, ["name"]),
    (lambda cs: cs.add_contact_constraint("link1", (0, 0, 0), EX, id=1.0), ValueError, ["id"]),
    (lambda cs: cs.add_loop_constraint("link1", "link2", None, None, (0, 0, 0, 1j, 0, 0)), ValueError, ["axis"]),
    (lambda cs: cs.add_loop_constraint("link1", "link2", np.eye(4) * 1j, None, EX + EX), ValueError, ["X_predecessor"]),
    (lambda cs: cs.add_loop_constraint("link1", "link2", None, "x", (1, 0, 0, 0, 0, 0)), ValueError, ["X_successor"]),
    (lambda cs: cs.add_loop_constraint("link1", "link2", None, None, (1, 0, 0, 0, 0, 0), time_constant=1j), ValueError, ["time_constant"]),
    (lambda cs: cs.add_loop_constraint("link1", "link2", None, None, (1, 0, 0, 0, 0, 0), time_constant="1"), ValueError, ["time_constant"]),
    (lambda cs: cs.add_loop_constraint("link1", "link2", None, None, (1, 0, 0, 0, 0, 0), baumgarte="yes"), ValueError, ["baumgarte"]),
    (lambda cs: cs.add_loop_constraint([1], "link2", None, None, (1, 0, 0, 0, 0, 0)), ValueError, ["predecessor"]),
    (lambda cs: cs.group(1.0), ValueError, ["group"]),
    (lambda cs: cs.group(None), ValueError, ["group"]),
    (lambda cs: cs.group(7), KeyError, ["index 7"]),
    (lambda cs: cs.group("nope"), KeyError, ["nope"]),
    (lambda cs: cs.group_by_name(3), ValueError, ["name"]),
    (lambda cs: cs.group_by_id(1.5), ValueError, ["id"]),
    (lambda cs: cs.group_by_id("1"), ValueError, ["id"]),
    (lambda cs: cs.group_by_id(99), KeyError, ["99"]),
    (lambda cs: cs.group_by_assigned_id(1.0), ValueError, ["row"]),
    (lambda cs: cs.group_by_assigned_id(-1), KeyError, ["row"]),
    (lambda cs: cs.enable_baumgarte("loop", time_constant=np.nan), ValueError, ["time_constant"]),
    (lambda cs: cs.enable_baumgarte("loop", time_constant=np.complex128(1)), ValueError, ["time_constant"]),
    (lambda cs: cs.set_baumgarte_time_constant("loop", True), ValueError, ["time_constant"]),
    (lambda cs: setattr(cs.group("loop"), "baumgarte_enabled", "on"), ValueError, ["baumgarte_enabled"]),
    (lambda cs: cs.add_custom_constraint(5), ValueError, ["c"]),
    (lambda cs: cs.bind("model"), ValueError, ["model"]),
]


@pytest.mark.parametrize("k", range(len(BAD_SET_CALLS)))
def test_constraint_set_api_refuses_bad_arguments(k):
    call, exc, words = BAD_SET_CALLS[k]
    _, cs = _fourbar_like()
    with pytest.raises(exc) as info:
        call(cs)
    msg = str(info.value)
    assert all(w in msg for w in words), msg


def test_split_regression_scalar_and_arrays():
    """``split(1.0)`` raised IndexError; a per-row vector of any real dtype and layout splits,
    anything else (2-D, NaN) is refused naming ``per_row``."""
    m, cs = _fourbar_like()
    with pytest.raises(ValueError, match="per_row"):
        cs.split(1.0)
    parts = cs.split(np.arange(6)[::2])  # integers, strided
    assert parts["tip"].tolist() == [0.0, 2.0] and parts["loop"].tolist() == [4.0]
    for bad in (constraint_jacobian(m, np.zeros(3), cs), [1.0, np.nan, 2.0]):
        with pytest.raises(ValueError, match="per_row"):
            cs.split(bad)


M3, Q3 = pendulum(3), np.zeros(3)
BAD_FUNCTION_CALLS = [
    (lambda cs: forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, method=3), ["method"]),
    (lambda cs: forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, method=np.array(["direct"])), ["method"]),
    (lambda cs: forward_dynamics_constraints(M3, Q3, Q3, Q3 + 1j, cs), ["tau"]),
    (lambda cs: forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, f_ext=np.zeros((4, 6)) + 1j), ["f_ext"]),
    (lambda cs: forward_dynamics_constraints("m", Q3, Q3, Q3, cs.bind(M3)), ["model"]),
    (lambda cs: forward_dynamics_constraints(M3, Q3, Q3, Q3, "cs"), ["cs"]),
    (lambda cs: forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, data="d"), ["data"]),
    (lambda cs: compute_constraint_impulses(M3, Q3, Q3, cs, target_velocity=[1j, 0, 0]), ["target_velocity"]),
    (lambda cs: compute_constraint_impulses(M3, Q3, Q3, cs, method="kokkevis"), ["method"]),
    (lambda cs: constraint_jacobian(M3, Q3, cs, group=1.0), ["group"]),
    (lambda cs: constraint_gamma(M3, Q3, Q3, cs, baumgarte="yes"), ["baumgarte"]),
    (lambda cs: calc_forces(M3, Q3, cs, "tip", [1j, 0]), ["multipliers"]),
    (lambda cs: calc_forces(M3, Q3, cs, "tip", "ab"), ["multipliers"]),
    (lambda cs: calc_forces(M3, Q3, cs, "tip", np.ones((2, 1))), ["multipliers"]),
    (lambda cs: calc_forces(M3, Q3, cs, "tip", [1.0, 2.0], frame=3), ["frame"]),
    (lambda cs: calc_impulses(M3, Q3, cs, "tip", [np.inf, 0]), ["impulses"]),
    (lambda cs: assemble_q(M3, Q3, cs, np.ones(3), tol=1j), ["tol"]),
    (lambda cs: assemble_q(M3, Q3, cs, np.ones(3), max_iter=1.5), ["max_iter"]),
    (lambda cs: assemble_q("m", Q3, cs, np.ones(3)), ["model"]),
    (lambda cs: assemble_qdot(M3, Q3, Q3, cs, np.ones(3), tol="x"), ["tol"]),
    (lambda cs: inverse_dynamics_constraints(M3, Q3, Q3, Q3, cs, [[0, 1]]), ["actuated"]),
    (lambda cs: inverse_dynamics_constraints(M3, Q3, Q3, Q3, cs, [0, [1, 2]]), ["actuated"]),
    (lambda cs: inverse_dynamics_constraints("m", Q3, Q3, Q3, cs, [0]), ["model"]),
    (lambda cs: inverse_dynamics_constraints_relaxed(M3, Q3, Q3, Q3, cs, [0, 1], weight=1j), ["weight"]),
    (lambda cs: inverse_dynamics_constraints_relaxed(M3, Q3, Q3, Q3, cs, [0, 1], weight_scale="x"), ["weight_scale"]),
    (lambda cs: inverse_dynamics_constraints_relaxed(M3, Q3, Q3, Q3, cs, [0, 1], weight_scale=np.nan), ["weight_scale"]),
]


@pytest.mark.parametrize("k", range(len(BAD_FUNCTION_CALLS)))
def test_constraint_functions_refuse_bad_arguments(k):
    call, words = BAD_FUNCTION_CALLS[k]
    cs = ConstraintSet()
    cs.add_contact_constraint("link3", (0, 0, -1), EX, name="tip")
    cs.add_contact_constraint("link3", (0, 0, -1), EZ, name="tip")
    with pytest.raises(ValueError) as info:
        call(cs)
    assert _names(str(info.value), *words), str(info.value)


def test_kinematics_helpers_refuse_bad_bodies_and_points():
    from sinews.constraints import ConstraintKinematics

    kin = ConstraintKinematics(M3, Q3, Q3)
    for call, word in [
        (lambda: kin.body_pose(17), "body"),
        (lambda: kin.jacobian6(1.0, np.zeros(3)), "body"),
        (lambda: kin.jacobian6(1, [0, 0]), "p_world_point"),
        (lambda: kin.velocity6(1, np.array([0, 0, 1j])), "p_world_point"),
        (lambda: kin.bias6(1, [np.nan, 0, 0]), "p_world_point"),
        (lambda: kin.frame_pose(1, np.eye(2), np.zeros(3)), "R_body_frame"),
    ]:
        with pytest.raises(ValueError, match=word):
            call()


# ============================================================================ 2-3. custom constraints
class _Lock(CustomConstraint):
    """Joint 0 of the pendulum locked (1 row), with a wrench: the torque about the world y
    axis is a pure moment on link1 (and its reaction on the world)."""

    size = 1

    def jacobian(self, kin):
        G = np.zeros((1, kin.nv))
        G[0, 0] = 1.0
        return G

    def gamma(self, kin):
        return np.zeros(1)

    def position_error(self, kin):
        return np.array([kin.q[0]])

    def wrench_entries(self, kin, multipliers):
        R, p = kin.body_pose(1)
        w = np.array([0.0, multipliers[0], 0.0, 0.0, 0.0, 0.0])
        return [WrenchEntry(1, R, p, w), WrenchEntry(0, np.eye(3), p, -w)]


def _bad(**methods):
    cls = type("Bad", (_Lock,), methods)
    return cls(name="bad", baumgarte=True)


BAD_CUSTOM = {
    "NaN Jacobian": (dict(jacobian=lambda s, k: np.full((1, k.nv), np.nan)), "jacobian(kin) returned NaN"),
    "wrong Jacobian shape": (dict(jacobian=lambda s, k: np.zeros((2, k.nv))), "jacobian(kin) must return shape (1, 3)"),
    "Jacobian None": (dict(jacobian=lambda s, k: None), "jacobian(kin) returned None"),
    "complex Jacobian": (dict(jacobian=lambda s, k: np.ones((1, k.nv)) * 1j), "jacobian(kin) must return real"),
    "Jacobian of strings": (dict(jacobian=lambda s, k: [["a", "b", "c"]]), "jacobian(kin) must return real"),
    "ragged Jacobian": (dict(jacobian=lambda s, k: [[1.0, 2.0], [3.0]]), "jacobian(kin) did not return an array"),
    "missing gamma": (dict(gamma=CustomConstraint.gamma), "does not implement gamma"),
    "gamma wrong length": (dict(gamma=lambda s, k: np.zeros(3)), "gamma(kin) must return 1 values"),
    "gamma infinite": (dict(gamma=lambda s, k: np.array([np.inf])), "gamma(kin) returned NaN or infinity"),
    "position error NaN": (dict(position_error=lambda s, k: np.array([np.nan])), "position_error(kin) returned NaN"),
    "missing position error": (dict(position_error=CustomConstraint.position_error), "does not implement position_error"),
    "velocity error object": (dict(velocity_error=lambda s, k: {"a": 1}), "velocity_error(kin) must return real"),
}


@pytest.mark.parametrize("case", sorted(BAD_CUSTOM))
@pytest.mark.parametrize("method", METHODS)
def test_malformed_custom_constraint_is_named_for_every_method(case, method):
    methods, words = BAD_CUSTOM[case]
    cs = ConstraintSet()
    cs.add_custom_constraint(_bad(**methods))
    with pytest.raises(ValueError) as info:
        forward_dynamics_constraints(M3, np.full(3, 0.1), np.full(3, 0.2), Q3, cs, method=method)
    msg = str(info.value)
    assert "custom constraint 'bad'" in msg and words in msg, msg


def test_nan_jacobian_with_kokkevis_is_an_error_not_the_unconstrained_answer():
    """Regression: Kokkevis returned the unconstrained ABA accelerations (flagged) for a NaN
    Jacobian; every method now names the constraint."""
    cs = ConstraintSet()
    cs.add_custom_constraint(_bad(jacobian=lambda s, k: np.full((1, k.nv), np.nan)))
    for method in METHODS:
        with pytest.raises(ValueError, match="custom constraint 'bad'.*NaN"):
            forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, method=method)
    for call in (lambda: compute_constraint_impulses(M3, Q3, Q3, cs),
                 lambda: constraint_jacobian(M3, Q3, cs),
                 lambda: inverse_dynamics_constraints(M3, Q3, Q3, Q3, cs, [1, 2]),
                 lambda: assemble_qdot(M3, Q3, Q3, cs, np.ones(3))):
        with pytest.raises(ValueError, match="custom constraint 'bad'"):
            call()


@pytest.mark.parametrize("entries, words", [
    (lambda s, k, l: [1, 2], "must be a WrenchEntry"),
    (lambda s, k, l: None, "must return a list of WrenchEntry"),
    (lambda s, k, l: [WrenchEntry(9, np.eye(3), np.zeros(3), np.zeros(6))], "body must be a body id"),
    (lambda s, k, l: [WrenchEntry(1, np.eye(3), np.zeros(3), np.full(6, np.nan))], "wrench contains NaN"),
    (lambda s, k, l: [WrenchEntry(1, np.eye(2), np.zeros(3), np.zeros(6))], "R_world_frame must be a real array"),
    (lambda s, k, l: [WrenchEntry(1, np.eye(3), np.zeros(3), np.zeros(6) + 1j)], "wrench must be a real array"),
])
def test_malformed_wrench_entries_are_named(entries, words):
    cs = ConstraintSet()
    cs.add_custom_constraint(_bad(wrench_entries=entries))
    for call in (lambda: forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, method="kokkevis"),
                 lambda: calc_forces(M3, Q3, cs, "bad", [1.0])):
        with pytest.raises(ValueError, match=re.escape(words)) as info:
            call()
        assert "custom constraint 'bad'" in str(info.value)


def test_custom_constraint_declaration_errors():
    class NoInit(_Lock):
        def __init__(self):
            pass

    class FloatSize(_Lock):
        size = 1.5

    class StrSize(_Lock):
        size = "2"

    for c, word in ((NoInit(), "super().__init__"), (FloatSize(), "c.size"), (StrSize(), "c.size")):
        with pytest.raises(ValueError, match=re.escape(word)):
            ConstraintSet().add_custom_constraint(c)
    good = _Lock(name="ok")
    cs = ConstraintSet()
    cs.add_custom_constraint(good)
    r = forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, method="kokkevis")
    ref = forward_dynamics_constraints(M3, Q3, Q3, Q3, cs, method="direct")
    assert r.qdd[0] == pytest.approx(0.0, abs=1e-12) and np.allclose(r.multipliers, ref.multipliers)


# ============================================================================ 4. threads
def _quadruped_sets():
    """A contacts-only set (compiled kernel), a mixed set (contacts, a loop with Baumgarte, a
    custom pin: general path) and a large set (thin path), all on the quadruped."""
    m = quadruped12()
    feet = ConstraintSet()
    for leg in ("FL", "FR", "HL", "HR"):
        for k, n in enumerate(np.eye(3)):
            feet.add_contact_constraint(f"{leg}_shank", [0, 0, -0.25], n, name=leg if k == 0 else None)
    mixed = ConstraintSet()
    for k, n in enumerate(np.eye(3)):
        mixed.add_contact_constraint("FL_shank", [0, 0, -0.25], n, name="FL" if k == 0 else None)
    mixed.add_loop_constraint("FR_shank", "HR_shank", (0, 0, -0.25), (0, 0, -0.25), (0, 0, 0, 0, 0, 1),
                              baumgarte=True, time_constant=0.2, name="rod")
    mixed.add_custom_constraint(PinJointConstraint("trunk", "HL_hip", None, None, pin_axis=0, name="pin"))
    big = ConstraintSet()
    rng = np.random.default_rng(0)
    for b in range(1, m.nbodies):
        for _ in range(8):
            p = rng.uniform(-0.2, 0.2, 3)
            for n in np.eye(3):
                big.add_contact_constraint(b, p, n)
    return m, {"feet": feet, "mixed": mixed, "big": big}


def _thread_jobs(m, sets, states):
    """(name, function of a state index) for every constrained algorithm."""
    f_ext = np.zeros((m.nbodies, 6))
    f_ext[1] = [0.1, -0.2, 0.3, 1.0, 2.0, -3.0]
    f_ext[4] = [0.0, 0.5, 0.0, -1.0, 0.0, 2.0]
    jobs = []
    for sname, cs in sets.items():
        for method in METHODS:
            jobs.append((f"fd[{sname},{method}]", lambda i, cs=cs, method=method: (
                lambda r: (r.qdd, r.multipliers))(forward_dynamics_constraints(m, *states[i], cs, method=method, f_ext=f_ext))))
        for method in ("direct", "range_space_sparse", "null_space"):
            jobs.append((f"impulses[{sname},{method}]", lambda i, cs=cs, method=method: (
                lambda r: (r.qd_plus, r.impulses))(compute_constraint_impulses(m, states[i][0], states[i][1], cs, method=method))))
    cs = sets["mixed"]
    jobs += [
        ("system", lambda i: tuple(vars(constrained_system(m, states[i][0], states[i][1], cs, f_ext=f_ext)).values())),
        ("idc", lambda i: (lambda r: (r.tau, r.qdd, r.multipliers))(
            inverse_dynamics_constraints(m, states[i][0], states[i][1], states[i][2], cs, list(range(6, 18)), f_ext=f_ext))),
        ("idc_relaxed", lambda i: (lambda r: (r.tau, r.qdd))(
            inverse_dynamics_constraints_relaxed(m, states[i][0], states[i][1], states[i][2], cs, list(range(6, 18))))),
        ("assemble_q", lambda i: (assemble_q(m, states[i][0], cs, np.ones(m.nv), max_iter=20).q,)),
        ("assemble_qdot", lambda i: (assemble_qdot(m, states[i][0], states[i][1], cs, np.ones(m.nv)).v,)),
        ("wrenches", lambda i: tuple(calc_forces(m, states[i][0], cs, g, np.linspace(-1, 1, cs.size) * (i + 1),
                                                 frame="world").wrenches for g in ("FL", "rod", "pin"))),
    ]
    return jobs


@pytest.mark.parametrize("bind_first", [True, False])
def test_shared_sets_from_8_threads_match_serial_bit_for_bit(bind_first):
    """The same sets used from 8 threads without ``data=`` give the serial answers exactly
    (no shared scratch: per-thread default workspaces, per-workspace kernel scratch, no caches
    of results).  Unbound sets are bound by the first calls, concurrently."""
    m, sets = _quadruped_sets()
    rng = np.random.default_rng(1)
    states = [(sinews.random_configuration(m, rng), rng.normal(size=m.nv), rng.normal(size=m.nv)) for _ in range(6)]
    ref_sets = {k: v.copy().bind(m) for k, v in sets.items()}
    serial = {name: [fn(i) for i in range(len(states))] for name, fn in _thread_jobs(m, ref_sets, states)}
    if bind_first:
        for cs in sets.values():
            cs.bind(m)
    jobs = _thread_jobs(m, sets, states)
    errors, mismatches = [], []
    start = threading.Barrier(8)

    def worker(t):
        try:
            start.wait()
            for rep in range(3):
                for k in range(len(jobs)):
                    name, fn = jobs[(k + t) % len(jobs)]  # threads run different jobs at once
                    i = (t + rep) % len(states)
                    got = fn(i)
                    if not all(np.array_equal(a, b) for a, b in zip(got, serial[name][i])):
                        mismatches.append((name, t, i))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[:3]
    assert not mismatches, f"{len(mismatches)} results differ from the serial ones: {mismatches[:5]}"


def test_a_set_bound_by_another_thread_meanwhile_keeps_the_compiled_path():
    """``forward_dynamics_constraints`` and ``compute_constraint_impulses`` read the set's
    compiled path, then bind the set through ``_bind_compiled`` when there is none: when another
    thread bound the set in between, the compiled path is still the answer.  (It was ``None``,
    and that one call took the general path, whose last bits differ: the 8-thread test above
    failed once on a clean clone.)"""
    from sinews.constraints.forward_dynamics import _bind_compiled

    m, sets = _quadruped_sets()
    cs = sets["feet"].copy()
    cs.bind(m)  # by "another thread", after this one found no compiled path
    assert cs._compiled is not None
    assert _bind_compiled(m, cs) is cs._compiled
    other = quadruped12()
    assert _bind_compiled(other, cs) is None  # bound to another model: the general path decides
    fresh = sets["feet"].copy()
    assert _bind_compiled(m, fresh) is fresh._compiled is not None  # unbound: bound here


# ============================================================================ 6. property tests
def _fuzz_targets():
    """name -> (argument name, valid value, call taking the argument)."""
    m, sets = _quadruped_sets()
    feet, mixed = sets["feet"].bind(m), sets["mixed"].bind(m)
    rng = np.random.default_rng(7)
    q, v, tau = sinews.random_configuration(m, rng), rng.normal(size=m.nv), rng.normal(size=m.nv)
    F = np.zeros((m.nbodies, 6))
    F[2] = rng.normal(size=6)
    t = {}
    for sname, cs in (("feet", feet), ("mixed", mixed)):
        for method in METHODS:
            def fd(x, which, cs=cs, method=method):
                args = {"q": q, "v": v, "tau": tau, "f_ext": F}
                args[which] = x
                return forward_dynamics_constraints(m, args["q"], args["v"], args["tau"], cs, method=method,
                                                    f_ext=args["f_ext"])
            for arg, val in (("q", q), ("v", v), ("tau", tau), ("f_ext", F)):
                t[f"fd[{sname},{method}].{arg}"] = (arg, val, lambda x, fd=fd, arg=arg: fd(x, arg))
        for method in ("direct", "range_space_sparse", "null_space"):
            t[f"impulses[{sname},{method}].q"] = ("q", q, lambda x, cs=cs, mt=method: compute_constraint_impulses(m, x, v, cs, mt))
            t[f"impulses[{sname},{method}].qd_minus"] = ("qd_minus", v, lambda x, cs=cs, mt=method: compute_constraint_impulses(m, q, x, cs, mt))
            t[f"impulses[{sname},{method}].target_velocity"] = (
                "target_velocity", np.zeros(cs.size), lambda x, cs=cs, mt=method: compute_constraint_impulses(m, q, v, cs, mt, x))
    cs = mixed
    t.update({
        "jacobian.q": ("q", q, lambda x: constraint_jacobian(m, x, cs)),
        "gamma.v": ("v", v, lambda x: constraint_gamma(m, q, x, cs)),
        "position_error.q": ("q", q, lambda x: constraint_position_error(m, x, cs)),
        "velocity_error.v": ("v", v, lambda x: constraint_velocity_error(m, q, x, cs)),
        "system.f_ext": ("f_ext", F, lambda x: constrained_system(m, q, v, cs, f_ext=x)),
        "calc_forces.multipliers": ("multipliers", np.ones(cs.size), lambda x: calc_forces(m, q, cs, "rod", x)),
        "calc_forces.q": ("q", q, lambda x: calc_forces(m, x, cs, "pin", np.ones(cs.size))),
        "calc_impulses.impulses": ("impulses", np.ones(3), lambda x: calc_impulses(m, q, cs, "FL", x)),
        "split.per_row": ("per_row", np.arange(cs.size, dtype=float), lambda x: cs.split(x)),
        "add_contact.body_point": ("body_point", np.zeros(3), lambda x: ConstraintSet().add_contact_constraint(1, x, EZ)),
        "add_contact.world_normal": ("world_normal", np.array(EZ), lambda x: ConstraintSet().add_contact_constraint(1, EX, x)),
        "add_loop.axis": ("axis", np.array(EZ + (0.0, 0.0, 0.0)), lambda x: ConstraintSet().add_loop_constraint(1, 2, None, None, x)),
        "add_loop.X_predecessor": ("X_predecessor", np.eye(4), lambda x: ConstraintSet().add_loop_constraint(1, 2, x, None, EZ + (0.0, 0.0, 0.0))),
        "assemble_q.q_init": ("q_init", q, lambda x: assemble_q(m, x, cs, np.ones(m.nv), max_iter=3)),
        "assemble_q.weights": ("weights", np.ones(m.nv), lambda x: assemble_q(m, q, cs, x, max_iter=3)),
        "assemble_qdot.qd_init": ("qd_init", v, lambda x: assemble_qdot(m, q, x, cs, np.ones(m.nv))),
        "assemble_qdot.target": ("target", np.zeros(cs.size), lambda x: assemble_qdot(m, q, v, cs, np.ones(m.nv), target=x)),
        "idc.qdd_desired": ("qdd_desired", tau, lambda x: inverse_dynamics_constraints(m, q, v, x, cs, list(range(6, 18)))),
        "idc.v": ("v", v, lambda x: inverse_dynamics_constraints(m, q, x, tau, cs, list(range(6, 18)))),
        "idc.f_ext": ("f_ext", F, lambda x: inverse_dynamics_constraints(m, q, v, tau, cs, list(range(6, 18)), f_ext=x)),
        "idc_relaxed.weight": ("weight", np.ones(12), lambda x: inverse_dynamics_constraints_relaxed(
            m, q, v, tau, cs, list(range(6, 18)), weight=x)),
        "idc_relaxed.q": ("q", q, lambda x: inverse_dynamics_constraints_relaxed(m, x, v, tau, cs, list(range(6, 18)))),
    })
    return t


FUZZ = _fuzz_targets()
_SPECIAL = [np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, 1e154, -1e200]
_DTYPES = [np.float32, np.int64, np.int8, np.uint16, np.bool_, np.complex128, object, np.str_, "datetime64[s]"]


@st.composite
def _variant(draw, valid):
    """``valid`` changed in one way: dtype, shape, values (NaN, infinities, extreme
    magnitudes), memory layout (read-only, non-contiguous), container (list)."""
    a = np.array(valid, dtype=float)
    kind = draw(st.sampled_from(["dtype", "shape", "value", "values", "readonly", "strided", "list", "scalar"]))
    if kind == "dtype":
        dt = draw(st.sampled_from(_DTYPES))
        return a.astype(dt) if dt != "datetime64[s]" else a.astype(np.int64).astype(dt)
    if kind == "shape":
        how = draw(st.sampled_from(["short", "long", "2d", "empty", "transpose"]))
        if how == "short":
            return a.reshape(-1)[:-1] if a.ndim == 1 else a[:-1]
        if how == "long":
            return np.concatenate([a, a[:1]])
        if how == "2d":
            return a[None, ...]
        if how == "empty":
            return np.zeros((0,))
        return a.T if a.ndim == 2 else a.reshape(1, -1).T
    if kind in ("value", "values"):
        flat = a.reshape(-1).copy()
        if flat.size:
            x = draw(st.sampled_from(_SPECIAL))
            if kind == "value":
                flat[draw(st.integers(0, flat.size - 1))] = x
            else:
                flat[:] = x
        return flat.reshape(a.shape)
    if kind == "readonly":
        b = a.copy()
        b.flags.writeable = False
        return b
    if kind == "strided":
        big = np.repeat(a[..., None], 2, axis=-1)
        return big[..., 0]
    if kind == "list":
        return a.tolist()
    return float(draw(st.sampled_from([0.0, 1.0, np.nan])))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # overflow on extreme magnitudes, then a ValueError
@pytest.mark.parametrize("target", sorted(FUZZ))
@settings(max_examples=12)
@given(data=st.data())
def test_property_array_arguments_give_a_result_or_a_named_error(target, data):
    arg, valid, call = FUZZ[target]
    x = data.draw(_variant(valid))
    try:
        call(x)
    except (ValueError, KeyError) as exc:
        msg = str(exc)
        assert _names(msg, arg), f"{target}: {type(exc).__name__} does not name {arg!r}: {msg}"


def test_zero_quaternion_in_constrained_dynamics_names_q_and_the_body():
    """The compiled contact kernels check the quaternions too (K.check_q), so a zero free-flyer
    quaternion is refused naming q's slice and the body, not by a bare ZeroDivisionError."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_constraints_compiled_contacts import _humanoid_like, _state

    from sinews.constraints import ConstraintSet, forward_dynamics_constraints

    rng = np.random.default_rng(0)
    m = _humanoid_like(rng)
    cs = ConstraintSet()
    for b in ("larm2", "rarm2", "lleg2", "rleg2"):
        for n in ([1, 0, 0], [0, 1, 0], [0, 0, 1]):
            cs.add_contact_constraint(b, [0, 0, -0.1], n)
    cs.bind(m)
    q, v, tau = _state(m, rng)[:3]
    q[3:7] = 0.0
    for method in ("range_space_sparse", "direct", "null_space", "kokkevis"):
        with pytest.raises(ValueError, match=r"q.*zero"):
            forward_dynamics_constraints(m, q, v, tau, cs, method=method)
    with pytest.raises(ValueError, match=r"q\[3:7\].*'base'"):
        forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse")
