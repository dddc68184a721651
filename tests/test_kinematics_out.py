"""``forward_kinematics(..., out=)``: the placements written into the table of an earlier
result, which is returned (its arrays keep their identity) and allocates nothing; the same bits
as a new result on the fast and the checked path; refused, with a named error, for anything but
a result of this model with its current frames."""

from __future__ import annotations

import re
import threading
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews.sample_models import arm7, quadruped12
from test_kinematics_fast_path import framed_random_tree

M = framed_random_tree(10)


def _q(m, seed):
    return sinews.random_configuration(m, np.random.default_rng(seed), -1.5, 1.5)


def _same(a, b):
    for name in ("R", "p", "frame_R", "frame_p"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_out_is_filled_in_place_and_returned():
    P = sinews.forward_kinematics(M, _q(M, 0))
    R, fp = P.R, P.frame_p  # views made before: they follow the new values
    for seed in range(1, 6):
        q = _q(M, seed)
        got = sinews.forward_kinematics(M, q, out=P)
        assert got is P and P.R is R and P.frame_p is fp
        _same(P, sinews.forward_kinematics(M, q, data=M.data()))
        _same(P, sinews.forward_kinematics(M, q))


def test_out_from_the_checked_path_and_with_data():
    d = M.data()
    P = sinews.forward_kinematics(M, _q(M, 0), data=d)
    for seed in (3, 4):
        q = _q(M, seed)
        assert sinews.forward_kinematics(M, q, data=d, out=P) is P
        _same(P, sinews.forward_kinematics(M, q))
        assert sinews.forward_kinematics(M, q, out=P) is P  # the fast path, its own buffer
        _same(P, sinews.forward_kinematics(M, q, data=d))


def test_out_allocates_nothing():
    m = arm7()
    q = _q(m, 1)
    P = sinews.forward_kinematics(m, q)
    sinews.forward_kinematics(m, q, out=P)
    sinews.forward_kinematics(m, q, out=P)  # (its buffer is made on first use)

    def peak(call):
        tracemalloc.start()
        try:
            for _ in range(300):
                call()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    # the control: new results (pools of tables and their objects) take memory
    assert peak(lambda: sinews.forward_kinematics(m, q)) > 4000
    assert peak(lambda: sinews.forward_kinematics(m, q, out=P)) < 1000


def test_a_frame_added_makes_an_older_out_refused_on_both_paths():
    m = quadruped12()
    q = _q(m, 2)
    P = sinews.forward_kinematics(m, q)
    sinews.forward_kinematics(m, q, out=P)  # (bound to a buffer of the current frames)
    m.add_frame("late", m.nbodies - 1, sinews.Transform.translation([0.0, 0.0, -0.2]))
    for kw in ({}, {"data": m.data()}):
        with pytest.raises(ValueError, match="out must be the Placements"):
            sinews.forward_kinematics(m, q, out=P, **kw)
    fresh = sinews.forward_kinematics(m, q)
    assert sinews.forward_kinematics(m, _q(m, 3), out=fresh) is fresh
    sinews.forward_kinematics(m, _q(m, 3), out=fresh)
    _same(fresh, sinews.forward_kinematics(m, _q(m, 3), data=m.data()))
    np.testing.assert_array_equal(fresh.frame("late").p, sinews.frame_placement(m, _q(m, 3), "late").p)


@pytest.mark.parametrize("bad", [
    None,
    np.zeros((M.nbodies + len(M.frames), 12)),
    "placements",
    sinews.Placements(np.zeros((2, 3, 3)), np.zeros((2, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)), M),
])
def test_out_must_be_a_result(bad):
    q = _q(M, 0)
    if bad is None:  # out=None is the default: a new result
        assert sinews.forward_kinematics(M, q, out=bad) is not None
        return
    for kw in ({}, {"data": M.data()}):
        with pytest.raises(ValueError, match="out must be the Placements"):
            sinews.forward_kinematics(M, q, out=bad, **kw)


def test_out_of_another_model_or_read_only_is_refused():
    other = framed_random_tree(10)  # the same structure, another model
    P = sinews.forward_kinematics(other, _q(other, 0))
    sinews.forward_kinematics(other, _q(other, 0), out=P)
    with pytest.raises(ValueError, match="out must be the Placements"):
        sinews.forward_kinematics(M, _q(M, 0), out=P)
    Q = sinews.forward_kinematics(M, _q(M, 0))
    Q._table.flags.writeable = False
    with pytest.raises(ValueError, match="out must be the Placements"):
        sinews.forward_kinematics(M, _q(M, 0), out=Q)


def test_bad_q_with_out_gives_the_named_error():
    P = sinews.forward_kinematics(M, _q(M, 0))
    sinews.forward_kinematics(M, _q(M, 0), out=P)
    for bad, match in ((np.full(M.nq, np.nan), "q"), (np.zeros(M.nq + 1), "q"), ("x", "q")):
        with pytest.raises(ValueError, match=match):
            sinews.forward_kinematics(M, bad, out=P)
    # a list converts, as without out
    q = _q(M, 5)
    assert sinews.forward_kinematics(M, list(q), out=P) is P
    _same(P, sinews.forward_kinematics(M, q))


def test_an_out_used_by_several_threads_in_turn():
    P = sinews.forward_kinematics(M, _q(M, 0))
    errors = []

    def work(seed):
        try:
            q = _q(M, seed)
            want = sinews.forward_kinematics(M, q, data=M.data())
            _same(sinews.forward_kinematics(M, q, out=P), want)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    for seed in range(4):  # one at a time: an out, like a Data, is used by one thread at a time
        t = threading.Thread(target=work, args=(seed,))
        t.start()
        t.join()
    assert not errors, errors


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=M.nq, max_size=M.nq))
def test_out_equals_a_new_result_for_any_q(values):
    q = np.array(values)
    try:
        want = sinews.forward_kinematics(M, q, data=M.data())
    except ValueError as e:  # (a zero quaternion): the same error with out
        with pytest.raises(ValueError, match=re.escape(str(e))):
            sinews.forward_kinematics(M, q, out=OUT)
        return
    assert sinews.forward_kinematics(M, q, out=OUT) is OUT
    _same(OUT, want)


OUT = sinews.forward_kinematics(M, _q(M, 9))


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_copied_result_gets_a_buffer_of_its_own(how):
    """A result used as out carries its fast path's buffer (which holds addresses): copies,
    deep copies and pickles leave it out, and each copy works as out on its own."""
    import copy
    import pickle

    P = sinews.forward_kinematics(M, _q(M, 0))
    sinews.forward_kinematics(M, _q(M, 0), out=P)
    sinews.forward_kinematics(M, _q(M, 0), out=P)
    C = {"copy": copy.copy, "deepcopy": copy.deepcopy, "pickle": lambda x: pickle.loads(pickle.dumps(x))}[how](P)
    assert C._buf is None
    _same(C, P)
    m = C.model  # (a deep copy or a pickle carries a copy of the model: then out of that model only)
    assert (m is M) == (how == "copy")
    if m is not M:
        with pytest.raises(ValueError, match="out must be the Placements"):
            sinews.forward_kinematics(M, _q(M, 1), out=C)
    assert sinews.forward_kinematics(m, _q(M, 1), out=C) is C
    assert sinews.forward_kinematics(m, _q(M, 2), out=C) is C
    _same(C, sinews.forward_kinematics(M, _q(M, 2), data=M.data()))
    if how != "copy":  # its own arrays: the original keeps its values
        _same(P, sinews.forward_kinematics(M, _q(M, 0), data=M.data()))
