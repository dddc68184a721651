"""Pools of prepared results (sinews._pools): a pool whose results the caller has all dropped is
used again, so that a loop alternates between two blocks of memory; a result, one of its arrays
or any view of them that the caller still holds keeps its pool from being reused, so no result
ever changes after it was returned.  forward_kinematics' ring of tables (one table at a time
reused: a loop alternates two tables) keeps the same promise."""

from __future__ import annotations

import random
import weakref

import numpy as np
import pytest

import sinews
from sinews import _kinematics_fast as KF
from sinews import _native, _pools
from sinews.sample_models import arm7

pytestmark = pytest.mark.skipif(not _native.available(), reason="pools are reused only with the native layer")


def _model():
    m = arm7()
    m.add_frame("tip", m.nbodies - 1, sinews.Transform.translation([0.0, 0.0, 0.1]))
    return m


M = _model()
D = M.data()


def _q(i):
    return sinews.random_configuration(M, np.random.default_rng(i), -1.5, 1.5)


#: kind -> (fast call of q, the checked call, the block of the pool the thread hands out from)
KINDS = {
    "transform": (lambda q: sinews.frame_placement(M, q, "tip"), lambda q: sinews.frame_placement(M, q, "tip", data=D),
                  lambda: M._tls.kin.Tp),
    "jacobian 6": (lambda q: sinews.frame_jacobian(M, q, "tip"), lambda q: sinews.frame_jacobian(M, q, "tip", data=D),
                   lambda: M._tls.kin.J6p),
    "jacobian 3": (lambda q: sinews.point_jacobian(M, q, 3), lambda q: sinews.point_jacobian(M, q, 3, data=D),
                   lambda: M._tls.kin.J3p),
    "vector 3": (lambda q: sinews.center_of_mass(M, q), lambda q: sinews.center_of_mass(M, q, data=D),
                 lambda: M._tls.kin.V3p),
    "placements": (lambda q: sinews.forward_kinematics(M, q), lambda q: sinews.forward_kinematics(M, q, data=D),
                   None),  # (a ring of tables: tested below)
    "crba": (lambda q: sinews.crba(M, q), lambda q: sinews.crba(M, q, data=D), lambda: M._tls.fast[2].pools.current.block),
    "minverse": (lambda q: sinews.minverse(M, q), lambda q: sinews.minverse(M, q, data=D),
                 lambda: M._tls.fast[2].pools.current.block),
}


def _arrays(x):
    if isinstance(x, sinews.Placements):
        return [x.R, x.p, x.frame_R, x.frame_p]
    return [x.R, x.p] if isinstance(x, sinews.Transform) else [x]


def _equal(a, b):
    for x, y in zip(_arrays(a), _arrays(b)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("kind", [k for k in KINDS if KINDS[k][2] is not None])
def test_a_loop_that_drops_its_results_alternates_two_blocks(kind):
    fast, checked, block = KINDS[kind]
    q = _q(0)
    fast(q)
    fast(q)
    blocks = set()
    for i in range(5 * KF.POOL):
        x = fast(q)  # (the previous x is still referenced during the call)
        blocks.add(id(block()))
    assert len(blocks) == 2
    _equal(x, checked(q))


@pytest.mark.parametrize("hold", ["result", "array", "view", "view of a view", "subclass view"])
@pytest.mark.parametrize("kind", KINDS)
def test_whatever_the_caller_holds_is_never_reused(kind, hold):
    """One result of every call kept, in some form; 4 pools' worth of calls later each still
    holds the values computed for its own configuration."""
    fast, checked, _ = KINDS[kind]
    keep = {
        "result": lambda x: x,
        "array": lambda x: _arrays(x)[-1],
        "view": lambda x: _arrays(x)[-1][1:],
        "view of a view": lambda x: _arrays(x)[0].T[::-1][-2:],
        "subclass view": lambda x: _arrays(x)[0].view(_Sub),
    }[hold]
    kept = [(i, keep(fast(_q(i)))) for i in range(4 * KF.POOL + 3)]
    for i, x in kept:
        want = keep(checked(_q(i)))
        if hold == "result":
            _equal(x, want)
        else:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(want))


class _Sub(np.ndarray):
    pass


def _ring():
    return M._tls.kin.buf.ring[0]


@pytest.mark.parametrize("read", [False, True])
def test_a_placements_loop_alternates_two_tables(read):
    """A loop that keeps only its latest result (``P = ...``: the previous P still referenced
    during the call), and reads its arrays or not (made on first access, then kept by the
    result and reused with it), writes two tables of one ring."""
    fast, checked, _ = KINDS["placements"]
    P = fast(_q(0))
    P = fast(_q(0))
    ring, tables, objects = _ring(), set(), set()
    for i in range(5 * KF.POOL):
        P = fast(_q(i % 3))
        if read:
            np.testing.assert_array_equal(P.frame_p, checked(_q(i % 3)).frame_p)
            np.testing.assert_array_equal(P.R, checked(_q(i % 3)).R)
        tables.add(id(P._table))
        objects.add(id(P))
    assert _ring() is ring and len(tables) == 2 and len(objects) == 2
    _equal(P, checked(_q((5 * KF.POOL - 1) % 3)))


def _holds(P):
    """Ways to keep something of a result P, each with the arrays it must keep equal."""
    return {
        "result": (P, lambda x: _arrays(x)),
        "array": (P.p, lambda x: [x]),
        "view": (P.frame_p[1:], lambda x: [x]),
        "view of a view": (P.R.T[::-1][-2:], lambda x: [x]),
        "subclass view": (P.R.view(_Sub), lambda x: [np.asarray(x)]),
        "transform": (P.frame("tip"), lambda x: [x.R, x.p]),
        "table row": (P.frame_R[0], lambda x: [x]),
    }


def test_the_ring_never_hands_out_what_the_caller_still_holds():
    """Results kept in some form for a random while, among calls that drop theirs: each thing
    kept keeps the values of its own call, and every result is right."""
    fast, checked, _ = KINDS["placements"]
    rng = random.Random(7)
    kept: list = []  # (drop after call, what, arrays of, the values it must keep)
    rings = set()
    for i in range(12 * KF.POOL):
        q = _q(i % 11)
        P = fast(q)
        want = checked(q)
        _equal(P, want)
        if rng.random() < 0.3:
            name = rng.choice(sorted(_holds(P)))
            thing, arrays = _holds(P)[name]
            kept.append((i + rng.randrange(1, 3 * KF.POOL), name, thing, arrays, [np.array(a) for a in arrays(thing)]))
        del P, want
        rings.add(id(_ring()))
        for entry in kept:
            _, name, thing, arrays, values = entry
            for a, v in zip(arrays(thing), values):
                np.testing.assert_array_equal(a, v, err_msg=name)
        kept = [k for k in kept if k[0] > i]
    assert len(rings) < 12  # (tables reused: not a new ring every K calls)


@pytest.mark.parametrize("change", ["writeable", "shape", "dtype", "weakref"])
def test_a_changed_dropped_placements_is_not_handed_out(change):
    """A view of a result whose flags, shape or dtype were changed, or that is weakly
    referenced, then dropped with its result: its table is not written again, and later
    results have the arrays of a new one."""
    fast, checked, _ = KINDS["placements"]
    P = fast(_q(0))
    x = P.frame_p
    if change == "writeable":
        x.flags.writeable = False
    elif change == "shape":
        x.shape = (1,) + x.shape
    elif change == "dtype":
        x.dtype = np.int64
    else:
        w = weakref.ref(x)
    t = id(P._table)  # (the ring holds the table: the id stays its own)
    del x, P
    for i in range(3 * KF.POOL):
        P = fast(_q(i % 4))
        assert id(P._table) != t
        assert P.frame_p.flags.writeable and P.frame_p.shape == (len(M.frames), 3) and P.frame_p.dtype == np.float64
        _equal(P, checked(_q(i % 4)))
    if change == "weakref":
        assert w() is not None


@pytest.mark.parametrize("hold", ["result", "array", "row", "transposed view", "table"])
def test_the_ring_check_reads_the_references(hold):
    """The native check of one table (through the fast path): the result, any of its arrays or a
    view of them held elsewhere keeps its table from being written; once dropped, the loop
    still alternates two tables of the same ring."""
    fast, checked, _ = KINDS["placements"]
    P = fast(_q(0))
    P = fast(_q(0))
    t = id(P._table)
    held = {"result": lambda: P, "array": lambda: P.R, "row": lambda: P.R[0], "transposed view": lambda: P.frame_p.T,
            "table": lambda: P._table}[hold]()
    want = np.array(held._table if hold == "result" else held)
    del P
    ring = _ring()
    for i in range(3 * KF.POOL):
        P = fast(_q(1 + i % 2))
        assert id(P._table) != t
    np.testing.assert_array_equal(held._table if hold == "result" else held, want)
    del held, P
    tables = set()
    for i in range(3 * KF.POOL):
        P = fast(_q(1))
        tables.add(id(P._table))
    assert _ring() is ring and len(tables) == 2


def test_without_the_ring_check_each_table_is_handed_out_once(monkeypatch):
    """Where the native layer cannot read what the ring checks (slot offsets 0), no table is
    written twice: each ring serves K calls, then a new one is made."""
    monkeypatch.setattr(KF, "slot_offsets", lambda P: (0, 0))
    m = _model()
    sinews.forward_kinematics(m, _q(0))  # (the first call binds the thread's state)
    rings = []
    for i in range(3 * KF.POOL):
        P = sinews.forward_kinematics(m, _q(i % 3))
        ring = m._tls.kin.buf.ring[0]
        if not any(r is ring for r in rings):
            rings.append(ring)  # (kept: the ring's tables too)
        assert any(P._table is t for t in ring)
    assert len(rings) >= 3  # (with the check: one ring, two of its tables)
    _equal(P, sinews.forward_kinematics(m, _q((3 * KF.POOL - 1) % 3), data=m.data()))


def test_one_result_held_from_a_pool_keeps_that_pool():
    fast, checked, block = KINDS["transform"]
    first = fast(_q(1))
    for i in range(6 * KF.POOL):
        fast(_q(2))
    _equal(first, checked(_q(1)))


def test_free_reads_the_references():
    views = list(np.empty((4, 3)))
    like = np.empty((1, 3))[0]
    pool = _pools.Pool(views[0].base, views, ((views, 1, _pools.ARRAYS, like),), 4)
    _pools.warm()
    assert pool.free()
    held = views[2]
    assert not pool.free()
    del held
    assert pool.free()
    row = views[1][1:]  # a view of a view: its base is the block
    assert not pool.free()
    del row
    assert pool.free()
    w = weakref.ref(views[3])  # a weak reference: the result could still be reached
    assert not pool.free()
    del w
    assert pool.free()
    for change in ("writeable", "shape", "dtype"):  # state a dropped result would hand on
        x = views[0]
        if change == "writeable":
            x.flags.writeable = False
        elif change == "shape":
            x.shape = (3, 1)
        else:
            x.dtype = np.int64
        del x
        assert not pool.free(), change
        views[0] = views[0].base[0]  # (a fresh view in its place)
        assert pool.free()
    objs = [sinews.Transform.identity() for _ in range(3)]  # each held by objs only
    pool.held = ((views, 1, _pools.ARRAYS, like), (objs, 1, _pools.OBJECTS, sinews.Transform))
    assert pool.free()
    held = objs[1]
    assert not pool.free()
    del held
    assert pool.free()
    pool.held = ((views, 1, _pools.ARRAYS, like), (objs, 1, _pools.OBJECTS, sinews.Placements))  # another class
    assert not pool.free()


def test_without_the_native_layer_no_pool_is_reused(monkeypatch):
    for name in _pools._HELD_NAMES:
        monkeypatch.setattr(_pools, name, _pools._never())
    fast, checked, block = KINDS["jacobian 6"]
    blocks = []
    for i in range(5 * KF.POOL):
        fast(_q(0))
        if not any(b is block() for b in blocks):
            blocks.append(block())
    assert len(blocks) >= 4


def _churn(fast, calls=5 * KF.POOL):
    for i in range(calls):
        fast(_q(i % 5))


@pytest.mark.parametrize("kind", KINDS)
def test_a_weakly_referenced_result_is_never_reused(kind):
    """A weak reference to a dropped result: the result dies as before (or, an array still
    reachable that way, keeps its values); it is never handed out again with new values."""
    fast, checked, _ = KINDS[kind]
    x = fast(_q(0))
    target = _arrays(x)[-1]
    want = np.array(target)
    w = weakref.ref(target)
    del x, target
    _churn(fast)
    if w() is not None:
        np.testing.assert_array_equal(w(), want)


def test_results_have_no_state_to_hand_on():
    """What a caller could change on a dropped result and so hand on to a later caller: the
    objects have no __dict__ and read-only attributes; arrays whose flags, shape or dtype were
    changed are not reused."""
    X = sinews.frame_placement(M, _q(0), "tip")
    with pytest.raises(TypeError):
        vars(X)
    with pytest.raises(AttributeError):
        X.p = np.zeros(3)
    P = sinews.forward_kinematics(M, _q(0))
    for name in ("R", "p", "frame_R", "frame_p", "model"):
        with pytest.raises(AttributeError):
            setattr(P, name, None)
    X.p.flags.writeable = True  # (its base is writeable: NumPy allows it)
    del X
    J = sinews.frame_jacobian(M, _q(0), "tip")
    J.flags.writeable = False
    del J
    M3 = sinews.crba(M, _q(0))
    M3.shape = (M.nv * M.nv,)
    del M3
    for i in range(5 * KF.POOL):
        X = sinews.frame_placement(M, _q(i % 5), "tip")
        J = sinews.frame_jacobian(M, _q(i % 5), "tip")
        C = sinews.crba(M, _q(i % 5))
        assert not X.p.flags.writeable and J.flags.writeable and C.shape == (M.nv, M.nv)


def test_a_frozen_dropped_matrix_does_not_stall_the_fast_path(monkeypatch):
    import importlib

    crba_mod = importlib.import_module("sinews.crba")

    X = sinews.crba(M, _q(0))
    X.flags.writeable = False
    del X
    _churn(lambda q: sinews.crba(M, q))
    monkeypatch.setattr(crba_mod, "_crba", lambda *a: pytest.fail("checked path taken"))
    for i in range(3 * KF.POOL):
        sinews.crba(M, _q(i % 5))


def test_out_must_be_the_result_itself():
    """An object that forwards its attributes to a result is not that result."""
    P = sinews.forward_kinematics(M, _q(0))
    sinews.forward_kinematics(M, _q(0), out=P)

    class Forward:
        def __getattr__(self, name):
            return getattr(P, name)

    for kw in ({}, {"data": D}):
        with pytest.raises(ValueError, match="out must be the Placements"):
            sinews.forward_kinematics(M, _q(1), out=Forward(), **kw)


def _header_names_its_ring(s) -> bool:
    """The ring's header names the lists the buffer holds, or no list (the next call then asks
    for a new ring)."""
    from sinews import _kinematics_fast_kernels as FKK

    ib, ring = s.ib, s.buf.ring
    return ib[FKK.H_P_RESULTS] == 0 or (ib[FKK.H_P_RESULTS] == id(ring[1]) and ib[FKK.H_P_TABLES] == id(ring[0]))


def test_a_call_made_while_the_ring_is_replaced_reads_no_freed_list():
    """Finalizers that run while a new ring replaces the old one (the old tables being freed)
    and call forward_kinematics: each such call finds the header naming the ring the buffer
    holds (or none), and gets the checked path's result."""
    m = _model()
    fast, checked, _ = KINDS["placements"]
    q = _q(3)
    sinews.forward_kinematics(m, q)
    s = m._kin
    seen = []

    def finalizer():
        seen.append(_header_names_its_ring(s))
        _equal(sinews.forward_kinematics(m, q), sinews.forward_kinematics(m, q, data=m.data()))

    for i in range(3 * KF.POOL):
        P = sinews.forward_kinematics(m, q)
        if not seen:
            weakref.finalize(P.R.base, finalizer)  # (a weak reference: the table is not reused)
        del P
    assert seen and all(seen)


def test_a_ring_replacement_interrupted_at_any_line_leaves_a_consistent_header():
    """A KeyboardInterrupt (a signal handler's exception) at each line of KinState.ring in turn:
    the header names the ring the buffer holds or none (then the next call makes a new ring),
    and later calls give the checked path's results."""
    import sys

    ring_code = KF.KinState.ring.__code__
    lines = sorted({line for _, _, line in ring_code.co_lines() if line and line > ring_code.co_firstlineno})
    assert len(lines) > 8
    for target in lines:
        m = _model()
        sinews.forward_kinematics(m, _q(0))
        held = [sinews.forward_kinematics(m, _q(0))]

        def tracer(frame, event, arg):
            if frame.f_code is ring_code:
                def local(frame, event, arg):
                    if event == "line" and frame.f_lineno == target:
                        sys.settrace(None)
                        raise KeyboardInterrupt
                    return local
                return local

        with pytest.raises(KeyboardInterrupt):
            sys.settrace(tracer)
            try:
                for i in range(3 * KF.POOL):
                    held.append(sinews.forward_kinematics(m, _q(i % 4)))  # (all kept: the ring fills)
            finally:
                sys.settrace(None)
        held.clear()
        assert _header_names_its_ring(m._kin), target
        for i in range(2 * KF.POOL):
            _equal(sinews.forward_kinematics(m, _q(i % 4)), sinews.forward_kinematics(m, _q(i % 4), data=m.data()))
        P = sinews.forward_kinematics(m, _q(0))
        assert _header_names_its_ring(m._kin) and any(P._table is t for t in m._kin.buf.ring[0])  # (fast again)


def test_a_live_result_takes_no_state_and_its_table_is_checked():
    """__setstate__ only on a new object (copy, pickle); a result whose table slot was set to
    another array behind its back (the ring's table still held by the caller) is not reused."""
    fast, checked, _ = KINDS["placements"]
    P = fast(_q(0))
    with pytest.raises(TypeError, match="__setstate__"):
        P.__setstate__({"_table": np.zeros_like(P._table), "_nbodies": P._nbodies, "_model": M})
    kept = P._table
    values = np.array(kept)
    type(P)._table.__set__(P, np.zeros_like(kept))
    del P
    for i in range(3 * KF.POOL):
        _equal(fast(_q(1 + i % 3)), checked(_q(1 + i % 3)))
    np.testing.assert_array_equal(kept, values)
