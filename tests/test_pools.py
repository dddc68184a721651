"""Pools of prepared results (sinews._pools): a pool whose results the caller has all dropped is
used again, so that a loop alternates between two blocks of memory; a result, one of its arrays
or any view of them that the caller still holds keeps its pool from being reused, so no result
ever changes after it was returned."""

from __future__ import annotations

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
                   lambda: M._tls.kin.Pp),
    "crba": (lambda q: sinews.crba(M, q), lambda q: sinews.crba(M, q, data=D), lambda: M._tls.fast[2].current.block),
    "minverse": (lambda q: sinews.minverse(M, q), lambda q: sinews.minverse(M, q, data=D),
                 lambda: M._tls.fast[2].current.block),
}


def _arrays(x):
    if isinstance(x, sinews.Placements):
        return [x.R, x.p, x.frame_R, x.frame_p]
    return [x.R, x.p] if isinstance(x, sinews.Transform) else [x]


def _equal(a, b):
    for x, y in zip(_arrays(a), _arrays(b)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("kind", KINDS)
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


def test_placements_whose_arrays_were_read_are_reused_too():
    """A loop that reads a result's arrays (made on first access, then kept by the result) and
    drops it still alternates two blocks of tables."""
    fast, checked, block = KINDS["placements"]
    blocks = set()
    for i in range(5 * KF.POOL):
        P = fast(_q(i % 3))
        assert np.array_equal(P.frame_p[0], checked(_q(i % 3)).frame_p[0])
        blocks.add(id(block()))
    assert len(blocks) == 2


def test_one_result_held_from_a_pool_keeps_that_pool():
    fast, checked, block = KINDS["transform"]
    first = fast(_q(1))
    for i in range(6 * KF.POOL):
        fast(_q(2))
    _equal(first, checked(_q(1)))


def test_free_reads_the_references():
    views = list(np.empty((4, 3)))
    pool = _pools.Pool(views[0].base, views, ((views, 1),), 4)
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
    objs = [object() for _ in range(3)]
    two = [objs[0], objs[1]]  # each held by objs and two
    pool.held = ((views, 1), (two, 2))
    assert pool.free()
    pool.held = ((views, 1), (objs, 2))
    assert not pool.free()


def test_without_the_native_layer_no_pool_is_reused(monkeypatch):
    monkeypatch.setattr(_pools, "_HELD_1", _pools._never())
    monkeypatch.setattr(_pools, "_HELD_2", _pools._never())
    fast, checked, block = KINDS["jacobian 6"]
    blocks = []
    for i in range(5 * KF.POOL):
        fast(_q(0))
        if not any(b is block() for b in blocks):
            blocks.append(block())
    assert len(blocks) >= 4
