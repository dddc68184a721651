"""The fast call path of rnea / crba / aba / minverse (sinews._entry, sinews._native): same results and the
same errors as the checked path, for every kind of argument, and from several threads."""

import re
import threading

import numpy as np
import pytest

import sinews
from sinews import _native
from sinews.sample_models import arm7, quadruped12

rnea_mod = __import__("sinews.rnea", fromlist=["_rnea"])
crba_mod = __import__("sinews.crba", fromlist=["_crba"])
aba_mod = __import__("sinews.aba", fromlist=["_aba"])
minv_mod = __import__("sinews.minv", fromlist=["_minverse"])


@pytest.fixture(params=[arm7, quadruped12])
def state(request):
    m = request.param()
    rng = np.random.default_rng(1)
    q = sinews.random_configuration(m, rng, -1.0, 1.0)
    return m, q, rng.normal(size=m.nv), rng.normal(size=m.nv)


def _checked(m, q, v, a):
    return (
        rnea_mod._rnea(m, q, v, a, None, None, None),
        crba_mod._crba(m, q, None),
        aba_mod._aba(m, q, v, a, None, None, None),
        minv_mod._minverse(m, q, m.data()),
    )


def _fast(m, q, v, a):
    return sinews.rnea(m, q, v, a), sinews.crba(m, q), sinews.aba(m, q, v, a), sinews.minverse(m, q)


def test_fast_path_matches_checked_path(state):
    m, q, v, a = state
    for _ in range(3):  # the first call binds the thread's workspace, later ones take the fast path
        fast = _fast(m, q, v, a)
    assert m._tls.fast is not None
    for x, y in zip(fast, _checked(m, q, v, a)):
        assert np.array_equal(x, y)
    # after the first calls the entry points are bound: built-in functions over C code
    for mod, name in ((rnea_mod, "_RNEA"), (crba_mod, "_CRBA"), (aba_mod, "_ABA"), (minv_mod, "_MINV")):
        f = getattr(mod, name)
        assert not isinstance(f, _native.Entry)
        assert type(f).__name__ == ("builtin_function_or_method" if _native.available() else "function")


@pytest.mark.parametrize(
    "convert",
    [
        lambda x: x.astype(np.float32),
        lambda x: np.round(x * 100).astype(np.int64),
        lambda x: x.tolist(),
        lambda x: np.repeat(x, 2)[::2],  # non-contiguous
        lambda x: np.frombuffer(x.tobytes()),  # read-only
    ],
)
def test_other_argument_kinds_fall_back(state, convert):
    m, q, v, a = state
    _fast(m, q, v, a)
    qc, vc, ac = convert(q), convert(v), convert(a)
    try:
        expect = _checked(m, qc, vc, ac)
    except ValueError as exc:  # e.g. a rounded zero quaternion: the same error both ways
        with pytest.raises(ValueError, match=str(exc)[:30].replace("(", r"\(").replace("[", r"\[")):
            sinews.rnea(m, qc, vc, ac)
        return
    for x, y in zip(_fast(m, qc, vc, ac), expect):
        assert np.array_equal(x, y)


def test_errors_are_the_same(state):
    m, q, v, a = state
    _fast(m, q, v, a)
    bad = v.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="v contains NaN"):
        sinews.rnea(m, q, bad, a)
    with pytest.raises(ValueError, match="tau contains NaN"):
        sinews.aba(m, q, v, bad)
    with pytest.raises(ValueError, match="shape"):
        sinews.rnea(m, q, v[:-1], a)
    with pytest.raises(ValueError, match="shape"):
        sinews.crba(m, q[:-1])
    with pytest.raises(ValueError, match="complex"):
        sinews.aba(m, q, v.astype(complex), a)
    with pytest.raises(ValueError, match="shape"):
        sinews.minverse(m, q[:-1])
    if m.compiled.has_quaternion:
        qz = q.copy()
        qz[3:7] = 0.0
        with pytest.raises(ValueError, match=r"q\[3:7\] is a zero"):
            sinews.crba(m, qz)
        with pytest.raises(ValueError, match=r"q\[3:7\] is a zero"):
            sinews.minverse(m, qz)


@pytest.mark.parametrize("scale", [1e100, 1e160, 1e200, 1e300])
def test_overflow_is_reported_the_same_way(state, scale):
    """A finite q whose result overflows: the fast entry kernels check the whole output (crba:
    exponent bits over all of M) and must agree with the checked path, error or result."""
    m, q, v, a = state
    _fast(m, q, v, a)
    qb = q.copy()
    qb[0] = scale  # the free-flyer's x (quadruped12) or the first joint angle (arm7)
    for fast, checked in (
        (lambda: sinews.crba(m, qb), lambda: crba_mod._crba(m, qb, m.data())),
        (lambda: sinews.minverse(m, qb), lambda: minv_mod._minverse(m, qb, m.data())),
    ):
        try:
            expect = checked()
        except ValueError as exc:
            with pytest.raises(ValueError, match=re.escape(str(exc))):
                fast()
            continue
        got = fast()
        assert np.array_equal(got, expect, equal_nan=True)


def test_threads(state):
    m, q, v, a = state
    expect = _checked(m, q, v, a)
    errors = []

    def work():
        try:
            for _ in range(200):
                for x, y in zip(_fast(m, q, v, a), expect):
                    assert np.array_equal(x, y)
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_the_calling_thread_takes_the_fast_path_over(state, monkeypatch):
    """``model._fast`` is the context block of the thread that called last: its entry points
    refuse another thread (which then takes the checked path once, and the fast path over),
    and leave the other thread's workspace and pool alone."""
    m, q, v, a = state
    expect = _checked(m, q, v, a)
    for _ in range(3):
        _fast(m, q, v, a)
    main = m._fast
    assert main is m._tls.fast and main[0].owner == threading.get_ident()
    pool = list(main[2])
    seen = {}

    def work():
        cx = main[0]
        seen["refused"] = [rnea_mod._RNEA(cx, q, v, a, np.empty(m.nv)) is cx, crba_mod._CRBA(cx, q, main[2]) is cx,
                           aba_mod._ABA(cx, q, v, a, np.empty(m.nv)) is cx, minv_mod._MINV(cx, q, main[2]) is cx]
        for _ in range(3):
            got = _fast(m, q, v, a)
        seen["equal"] = all(np.array_equal(x, y) for x, y in zip(got, expect))
        seen["taken over"] = m._fast is m._tls.fast and m._fast is not main

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert all(seen["refused"]) and seen["equal"] and seen["taken over"]
    assert len(main[2]) == len(pool) and all(x is y for x, y in zip(main[2], pool))  # (nothing taken from it)
    _fast(m, q, v, a)  # (the main thread takes it back, then stays on the fast path)
    assert m._fast is main
    for mod, name in ((rnea_mod, "_rnea"), (crba_mod, "_crba"), (aba_mod, "_aba"), (minv_mod, "_minverse")):
        monkeypatch.setattr(mod, name, lambda *args: pytest.fail("checked path taken"))
    for x, y in zip(_fast(m, q, v, a), expect):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("name", ["crba", "minverse"])
def test_a_refused_call_never_refills_another_threads_pool(name, monkeypatch):
    """Thread B refills its pool of matrices; right after its spare was found free, thread A runs
    a call that finds ``model._fast`` to be B's: A takes its own over and leaves B's pool alone,
    so no matrix is handed out twice (the interleaving a GIL switch inside the refill can make,
    forced here at that point)."""
    from sinews import _pools

    fn = getattr(sinews, name)
    m = arm7()
    rng = np.random.default_rng(2)
    qs = [sinews.random_configuration(m, rng) for _ in range(300)]
    free = _pools.Pool.free
    a_bound, go_a, a_done = threading.Event(), threading.Event(), threading.Event()
    st = {"armed": False, "B": None}

    def free_then_switch(self):
        r = free(self)
        if st["armed"] and threading.get_ident() == st["B"]:
            st["armed"] = False
            go_a.set()
            a_done.wait(30)
        return r

    monkeypatch.setattr(_pools.Pool, "free", free_then_switch)

    def thread_a():
        fn(m, qs[0])
        fn(m, qs[0])
        a_bound.set()
        go_a.wait(30)
        st["A found B's"] = m._fast[0].owner == st["B"]
        st["A's result"] = (fn(m, qs[1]), fn(m, qs[1], data=m.data()))
        a_done.set()

    def thread_b():
        st["B"] = threading.get_ident()
        a = threading.Thread(target=thread_a)
        a.start()
        a_bound.wait(30)
        for _ in range(3 * 64):  # (arm7: pools of 64 matrices, used up and dropped: the spare is free)
            fn(m, qs[2])
        st["armed"] = True
        kept = [(q, fn(m, q)) for q in qs[10:210]]
        a.join(30)
        d = m.data()
        st["wrong"] = sum(not np.array_equal(M, fn(m, q, data=d)) for q, M in kept)
        st["shared"] = len(kept) - len({M.__array_interface__["data"][0] for _, M in kept})

    b = threading.Thread(target=thread_b)
    b.start()
    b.join(60)
    assert not st["armed"] and st["A found B's"], "the interleaving was not reached"
    assert st["wrong"] == 0 and st["shared"] == 0
    np.testing.assert_array_equal(*st["A's result"])


def test_out_takes_the_fast_path_and_bad_outs_the_checked_path(state, monkeypatch):
    """rnea and aba with ``out=``: the entry point writes the caller's array (the same bits as a
    new result); an out it refuses gets the checked path's error."""
    m, q, v, a = state
    _fast(m, q, v, a)
    out = np.full(m.nv, 7.0)
    assert sinews.rnea(m, q, v, a, out=out) is out
    assert np.array_equal(out, rnea_mod._rnea(m, q, v, a, None, None, None))
    assert sinews.aba(m, q, v, a, out=out) is out
    assert np.array_equal(out, aba_mod._aba(m, q, v, a, None, None, None))
    # the fast path, not the checked one: with the checked path made to fail, out= still works
    monkeypatch.setattr(rnea_mod, "_rnea", lambda *args: pytest.fail("checked path taken"))
    monkeypatch.setattr(aba_mod, "_aba", lambda *args: pytest.fail("checked path taken"))
    assert sinews.rnea(m, q, v, a, out=out) is out
    assert sinews.aba(m, q, v, a, out=out) is out
    monkeypatch.undo()
    ro = np.zeros(m.nv)
    ro.flags.writeable = False
    for bad in (np.zeros(m.nv, dtype=np.float32), np.zeros(m.nv + 1), np.zeros(2 * m.nv)[::2], ro, [0.0] * m.nv):
        for f in (sinews.rnea, sinews.aba):
            with pytest.raises(ValueError, match="out must be a writeable C-contiguous float64"):
                f(m, q, v, a, out=bad)
