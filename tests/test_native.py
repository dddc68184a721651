"""The native call layer (sinews._native): its self-test, what its entry points refuse, reference
counts, and the fallback with SINEWS_NATIVE=0.  Every refused argument must give exactly what the
checked path gives (result or error)."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews import _native
from sinews.sample_models import arm7, quadruped12

rnea_mod = __import__("sinews.rnea", fromlist=["_rnea"])
crba_mod = __import__("sinews.crba", fromlist=["_crba"])
aba_mod = __import__("sinews.aba", fromlist=["_aba"])
minv_mod = __import__("sinews.minv", fromlist=["_minverse"])

NATIVE = _native.available()


class Sub(np.ndarray):
    pass


def _model():
    m = quadruped12()
    rng = np.random.default_rng(3)
    q = sinews.random_configuration(m, rng, -1.0, 1.0)
    sinews.rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))  # binds the thread's fast path
    return m, q, rng.normal(size=m.nv), rng.normal(size=m.nv)


def test_native_layer_is_used_on_this_interpreter():
    """CPython 64-bit (not free-threaded) is what the layer is for: the self-test must pass here,
    or every fast path would quietly lose its speed."""
    if sys.implementation.name == "cpython" and sys.maxsize > 2**32:
        assert NATIVE
    cx = _native.context(1, 1, np.zeros((1, 1), np.int64), np.zeros(1), np.zeros(1), np.zeros(1))
    assert isinstance(cx, np.ndarray) and cx.dtype == np.int64 and len(cx.arrays) == 4


@pytest.mark.skipif(not NATIVE, reason="the native layer is not available on this interpreter")
def test_refused_arguments_return_the_context_block():
    m, q, v, a = _model()
    sinews.rnea(m, q, v, a)
    f = rnea_mod._RNEA
    cx, nv, _ = m._tls.fast
    tau = np.empty(nv)
    assert f(cx, q, v, a, tau) is tau
    ro = np.empty(nv)
    ro.flags.writeable = False
    refused = [
        (q.astype(np.int64), v, a, tau),  # same item size, other dtype
        (q.astype(np.float32), v, a, tau),
        (q.view(Sub), v, a, tau),  # a subclass
        (q.astype(">f8"), v, a, tau),  # another byte order
        (np.repeat(q, 2)[::2], v, a, tau),  # strided
        (q[None, :], v, a, tau),  # 2-D
        (q[:-1], v, a, tau),  # wrong length
        (q, v, a, ro),  # read-only output
        (q, v, a, np.empty((nv, 1))),
        (q.tolist(), v, a, tau),
        (q, v, 1.0, tau),
        (q, v, None, tau),
    ]
    for args in refused:
        assert f(cx, *args) is cx
    assert f(cx, q, v, a) is cx  # too few arguments
    assert f(cx, q, v, a, tau, tau) is cx
    with pytest.raises(TypeError):
        f(cx, q, v, a, out=tau)
    # crba and minverse take the thread's pool of results and hand out its last matrix
    pool = m._tls.fast[2]
    pool.refill()
    n = len(pool)
    last = pool[-1]
    M = crba_mod._CRBA(cx, q, pool)
    assert M is last and len(pool) == n - 1
    del last
    # (M, the argument, the list of its block's views): the pool's reference passed on, none added
    assert sys.getrefcount(M) == 3
    assert minv_mod._MINV(cx, q, pool) is not cx and len(pool) == n - 2
    pool.clear()
    assert crba_mod._CRBA(cx, q, pool) is cx and minv_mod._MINV(cx, q, pool) is cx  # used up
    for bad in (np.empty((nv, nv), order="F")[:, :-1], np.empty((nv, nv + 1)), np.empty(nv * nv),
                np.empty((nv, nv), np.float32), np.asfortranarray(np.empty((nv, nv))), ro):
        pool.append(bad)
        assert crba_mod._CRBA(cx, q, pool) is cx and minv_mod._MINV(cx, q, pool) is cx
        assert pool.pop() is bad and not pool  # a refused call leaves the pool as it was
    pool.append(np.empty((nv, nv)))
    for other in ([np.empty((nv, nv))], np.empty((nv, nv)), (np.empty((nv, nv)),)):  # not the pool's type
        assert crba_mod._CRBA(cx, q, other) is cx and minv_mod._MINV(cx, q, other) is cx
    assert crba_mod._CRBA(cx, q.astype(np.float32), pool) is cx and len(pool) == 1
    assert crba_mod._CRBA(cx, np.full(m.nq, np.nan), pool) is cx and len(pool) == 1


@pytest.mark.skipif(not NATIVE, reason="the native layer is not available on this interpreter")
def test_reference_counts_stay_balanced():
    m, q, v, a = _model()
    cx = m._tls.fast[0]
    before = [sys.getrefcount(x) for x in (q, v, a, cx)]
    for _ in range(1000):
        sinews.rnea(m, q, v, a)
        sinews.aba(m, q, v, a)
        sinews.crba(m, q)
        sinews.minverse(m, q)
        rnea_mod._RNEA(cx, q.astype(np.int64), v, a, np.empty(m.nv))  # refused: returns cx
    assert [sys.getrefcount(x) for x in (q, v, a, cx)] == before
    tau = sinews.rnea(m, q, v, a)
    assert sys.getrefcount(tau) == 2  # the name and getrefcount's argument: nothing leaked


def _of_kind(x, dtype, step, extra, ndim, readonly, nan, pickled=False):
    """The vector ``x`` made into one kind of argument: a NaN last, one value more or fewer,
    strided, another dtype, unpickled, 2-D, read-only."""
    import pickle

    if nan:
        x[-1] = np.nan
    x = np.resize(x, len(x) + extra) if extra else x
    x = np.repeat(x, step)[::step] if step > 1 else x
    with np.errstate(invalid="ignore"):  # NaN to int64
        x = x.astype(dtype)
    if pickled:
        x = pickle.loads(pickle.dumps(x))
    if ndim == 2:
        x = x[None, :]
    if readonly:
        x.flags.writeable = False
    return x


#: the argument kinds of the Hypothesis tests (with ``dtype``)
_KINDS = dict(
    step=st.sampled_from([1, 2]),
    extra=st.integers(-1, 1),
    ndim=st.sampled_from([1, 2]),
    readonly=st.booleans(),
    which=st.integers(0, 2),
    nan=st.booleans(),
)


@given(dtype=st.sampled_from([np.float64, np.float32, np.int64, np.complex128, ">f8"]), **_KINDS)
@settings(max_examples=60, deadline=None)
def test_any_argument_gives_what_the_checked_path_gives(dtype, step, extra, ndim, readonly, which, nan):
    m, q, v, a = _STATE
    args = [q.copy(), v.copy(), a.copy()]
    args[which] = _of_kind(args[which], dtype, step, extra, ndim, readonly, nan)
    try:
        expect = rnea_mod._rnea(m, *args, None, None, None)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            sinews.rnea(m, *args)
        assert str(got.value) == str(exc)
        return
    assert np.array_equal(sinews.rnea(m, *args), expect)


_STATE = _model()


def test_disabled_by_the_environment_gives_the_same_bits():
    """SINEWS_NATIVE=0: every entry point (tree algorithms and kinematics, pools refilled) is the
    dispatcher path, with the same results."""
    code = textwrap.dedent(
        """
        import json, sys
        import numpy as np
        import sinews
        from sinews import _native
        from sinews.sample_models import arm7
        m = arm7()
        rng = np.random.default_rng(0)
        q, v, a = rng.normal(size=7), rng.normal(size=7), rng.normal(size=7)
        m.add_frame("tip", m.nbodies - 1)
        p = np.array([0.1, -0.2, 0.05])
        out = []
        for _ in range(40):  # the kinematics pools used up and refilled
            out = [sinews.rnea(m, q, v, a), sinews.aba(m, q, v, a), sinews.crba(m, q), sinews.minverse(m, q),
                   sinews.forward_kinematics(m, q).R, sinews.body_placement(m, q, 3).p,
                   sinews.frame_placement(m, q, "tip").R, sinews.point_jacobian(m, q, 3, p),
                   sinews.body_jacobian(m, q, 3, "world"), sinews.frame_jacobian(m, q, "tip"),
                   sinews.frame_jacobian_time_variation(m, q, v, "tip"),
                   sinews.point_jacobian_time_variation(m, q, v, 3, p), sinews.center_of_mass(m, q),
                   sinews.com_velocity(m, q, v), sinews.com_jacobian(m, q)]
        entries = [("rnea", "_RNEA"), ("aba", "_ABA"), ("crba", "_CRBA"), ("minv", "_MINV"),
                   ("kinematics", "_FK"), ("kinematics", "_ROW"), ("kinematics", "_FJ"), ("kinematics", "_FJK"),
                   ("kinematics", "_DJ"), ("kinematics", "_DJK"), ("_kinematics_com", "_COM"),
                   ("_kinematics_com", "_COMV"), ("_kinematics_com", "_COMJ")]
        kinds = [type(vars(__import__("sinews." + mod, fromlist=["x"]))[name]).__name__ for mod, name in entries]
        print(json.dumps({"available": _native.available(), "kinds": kinds,
                          "out": [x.tobytes().hex() for x in out]}))
        """
    )
    runs = {}
    for flag in ("0", "1"):
        env = dict(__import__("os").environ, SINEWS_NATIVE=flag)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        runs[flag] = json.loads(res.stdout.strip().splitlines()[-1])
    assert runs["0"]["available"] is False
    assert runs["0"]["kinds"] == ["function"] * 13
    assert runs["0"]["out"] == runs["1"]["out"]
    if NATIVE:
        assert runs["1"]["kinds"] == ["builtin_function_or_method"] * 13


def _assert_fast_is_checked(m, q, v, a):
    """rnea, aba, crba and minverse: the fast path (the second call) gives the checked path's bits."""
    for _ in range(2):
        fast = sinews.rnea(m, q, v, a), sinews.aba(m, q, v, a), sinews.crba(m, q), sinews.minverse(m, q)
    checked = (rnea_mod._rnea(m, q, v, a, None, None, None), aba_mod._aba(m, q, v, a, None, None, None),
               crba_mod._crba(m, q, m.data()), minv_mod._minverse(m, q, m.data()))
    for x, y in zip(fast, checked):
        assert x.tobytes() == y.tobytes()


def test_arm_results_match_the_checked_path_bit_for_bit():
    m = arm7()
    rng = np.random.default_rng(5)
    for _ in range(20):
        _assert_fast_is_checked(m, *rng.normal(size=(3, 7)))


def _kin_calls(m, q, v, point, d=None):
    b = m.nbodies - 1
    return (sinews.forward_kinematics(m, q, d).R, sinews.body_placement(m, q, b, d).p,
            sinews.frame_placement(m, q, "tip", d).R, sinews.point_jacobian(m, q, b, point, d),
            sinews.point_jacobian_6d(m, q, b, point, d), sinews.body_jacobian(m, q, b, "world", d),
            sinews.frame_jacobian(m, q, "tip", "local_world_aligned", d),
            sinews.frame_jacobian_time_variation(m, q, v, "tip", data=d),
            sinews.point_jacobian_time_variation(m, q, v, b, point, d), sinews.center_of_mass(m, q, d),
            sinews.com_velocity(m, q, v, d), sinews.com_jacobian(m, q, d))


@pytest.mark.parametrize(
    "convert",
    [
        lambda x: x,
        lambda x: x.astype(np.float32),
        lambda x: x.tolist(),
        lambda x: np.repeat(x, 2)[::2],
        lambda x: x.view(Sub),
        lambda x: x.astype(">f8"),
    ],
)
def test_kinematics_arguments_of_every_kind_give_the_checked_results(convert):
    m = arm7()
    m.add_frame("tip", m.nbodies - 1)
    rng = np.random.default_rng(2)
    q, v = rng.normal(size=7), rng.normal(size=7)
    point = np.array([0.1, -0.2, 0.3])
    args = convert(q), convert(v), convert(point)
    expect = _kin_calls(m, *args, m.data())  # the checked path
    for _ in range(3):  # the fast path (its pools filled and refilled)
        got = _kin_calls(m, *args)
    for x, y in zip(got, expect):
        assert np.array_equal(x, y)


@pytest.mark.skipif(not NATIVE, reason="the native layer is not available on this interpreter")
def test_kinematics_reference_counts_stay_balanced():
    m = arm7()
    m.add_frame("tip", m.nbodies - 1)
    q, v, point = np.full(7, 0.3), np.full(7, -0.2), np.array([0.1, 0.0, 0.0])
    _kin_calls(m, q, v, point)
    s = m._tls.kin
    before = [sys.getrefcount(x) for x in (q, v, point, s.buf)]
    for _ in range(300):  # several pools used up and replaced
        _kin_calls(m, q, v, point)
    assert [sys.getrefcount(x) for x in (q, v, point, s.buf)] == before
    J = sinews.frame_jacobian(m, q, "tip")
    assert sys.getrefcount(J) == 3  # the name, getrefcount's argument and the pool's list


def test_every_joint_type_gives_the_checked_results():
    """The native crba composes the world poses with the kinematics pass (axis-aligned revolute
    and prismatic joints cheaply, every other joint by the general pass): the same M as the
    checked path's joint pass, on a tree with every joint type."""
    from sinews.sample_models import random_tree

    m = random_tree(12, 3, joint_types=["RX", "RY", "RZ", "Prismatic", "Spherical", "FreeFlyer", "Planar",
                                        "Helical", "Revolute"])
    rng = np.random.default_rng(11)
    for _ in range(5):
        _assert_fast_is_checked(m, sinews.random_configuration(m, rng, -1.0, 1.0), *rng.normal(size=(2, m.nv)))


@pytest.mark.skipif(not NATIVE, reason="the native layer is not available on this interpreter")
def test_a_wrong_first_argument_is_refused_not_read():
    """The entry points check their first argument's type before reading it: a fake model, a
    float or an array where the context block or the state's buffer belongs is refused (the
    checked path then raises), never dereferenced."""
    import types

    q = np.zeros(7)
    fake = types.SimpleNamespace(_tls=types.SimpleNamespace(fast=(1.5, 7, (7, 7))))
    with pytest.raises(ValueError, match="Model"):
        sinews.rnea(fake, q, q, q)
    f = rnea_mod._RNEA
    assert f(1.5, q, q, q, q) == 1.5
    assert f(np.zeros(16, dtype=np.int64), q, q, q, q).dtype == np.int64  # an array, not a Context
    assert isinstance(f(), np.ndarray)  # no argument: its own self, refused
    m = arm7()
    sinews.forward_kinematics(m, q)
    sinews.forward_kinematics(m, q)
    s = m._tls.kin
    K = __import__("sinews.kinematics", fromlist=["x"])
    plain = np.asarray(s.buf).copy()  # the same bytes, but not the state's KinBuffer
    assert K._FK(plain, q) is plain
    assert K._FK(s.buf, q, q) is s.buf  # one argument too many: refused
    assert K._FK(s.buf) is s.buf
    P = sinews.forward_kinematics(m, q)
    sinews.forward_kinematics(m, q, out=P)
    assert K._FK(P._buf, q) is P._buf  # an out's own buffer has no ring: refused
    C = __import__("sinews._kinematics_com", fromlist=["x"])
    assert C._COM() is not None and C._COMJ(3) == 3


@pytest.mark.skipif(not NATIVE, reason="the native layer is not available on this interpreter")
def test_unpickled_arrays_take_the_native_path():
    """An unpickled float64 array has a dtype object of its own (and so has every array NumPy
    derives from it): the native layer accepts it by its scalar type and byte order."""
    import pickle

    m, q, v, a = _model()
    qp, vp, ap = (pickle.loads(pickle.dumps(x)) for x in (q, v, a))
    assert qp.dtype is not np.dtype(np.float64)
    cx = m._tls.fast[0]
    tau = np.empty(m.nv)
    assert rnea_mod._RNEA(cx, qp, vp, ap * 1.0, tau) is tau
    assert np.array_equal(tau, sinews.rnea(m, q, v, a))
    assert rnea_mod._RNEA(cx, q.astype(">f8"), v, a, tau) is cx  # another byte order: refused


def test_refused_and_failing_calls_print_nothing(capfd):
    """A C function that raised would print an "Exception ignored" report and return NULL: no
    call, refused, failing or succeeding, may do that."""
    m, q, v, a = _model()
    qz = q.copy()
    qz[3:7] = 0.0
    bad = v.copy()
    bad[0] = np.nan
    for args in ((q, v, a), (q, bad, a), (qz, v, a), (q * 1e300, v, a), (q.astype(np.int64), v, a)):
        for call in (lambda: sinews.rnea(m, *args), lambda: sinews.aba(m, *args), lambda: sinews.crba(m, args[0]),
                     lambda: sinews.minverse(m, args[0]), lambda: sinews.forward_kinematics(m, args[0]),
                     lambda: sinews.point_jacobian_time_variation(m, args[0], args[1], 2),
                     lambda: sinews.com_jacobian(m, args[0])):
            try:
                call()
            except ValueError:
                pass
    out, err = capfd.readouterr()
    assert err == ""


_KIN = arm7()
_KIN.add_frame("tip", _KIN.nbodies - 1)


@given(dtype=st.sampled_from([np.float64, np.float32, np.int64, ">f8"]), pickled=st.booleans(), **_KINDS)
@settings(max_examples=60, deadline=None)
def test_any_kinematics_argument_gives_what_the_checked_path_gives(dtype, step, extra, ndim, readonly, which, nan,
                                                                   pickled):
    """q, v and the point of the kinematics calls, and q of crba and minverse, of every kind: the
    fast path (native entry points) gives exactly what the checked path (``data=``) gives, result
    or error."""
    m = _KIN
    rng = np.random.default_rng(7)
    args = [rng.normal(size=m.nq), rng.normal(size=m.nv), np.array([0.1, -0.2, 0.3])]
    args[which] = _of_kind(args[which], dtype, step, extra, ndim, readonly, nan, pickled)
    q, v, point = args
    calls = [
        lambda d: sinews.forward_kinematics(m, q, d).R,
        lambda d: sinews.frame_placement(m, q, "tip", d).p,
        lambda d: sinews.point_jacobian(m, q, 3, point, d),
        lambda d: sinews.frame_jacobian(m, q, "tip", "world", d),
        lambda d: sinews.point_jacobian_time_variation(m, q, v, 3, point, d),
        lambda d: sinews.frame_jacobian_time_variation(m, q, v, "tip", data=d),
        lambda d: sinews.com_velocity(m, q, v, d),
        lambda d: sinews.com_jacobian(m, q, d),
        lambda d: sinews.crba(m, q, d),
        lambda d: sinews.minverse(m, q, d),
    ]
    for call in calls:
        try:
            expect = call(m.data())
        except (ValueError, KeyError) as exc:
            with pytest.raises(type(exc)) as got:
                call(None)
            assert str(got.value) == str(exc)
            continue
        assert call(None).tobytes() == np.asarray(expect).tobytes()


def _public_calls(m, q, v, a, p):
    """Every public call with a native entry point (15 calls over the 13 entry points)."""
    return [lambda: sinews.rnea(m, q, v, a), lambda: sinews.aba(m, q, v, a), lambda: sinews.crba(m, q),
            lambda: sinews.minverse(m, q), lambda: sinews.forward_kinematics(m, q),
            lambda: sinews.body_placement(m, q, 3), lambda: sinews.frame_placement(m, q, "tip"),
            lambda: sinews.point_jacobian(m, q, 3, p), lambda: sinews.body_jacobian(m, q, 3, "world"),
            lambda: sinews.frame_jacobian(m, q, "tip"), lambda: sinews.frame_jacobian_time_variation(m, q, v, "tip"),
            lambda: sinews.point_jacobian_time_variation(m, q, v, 3, p), lambda: sinews.center_of_mass(m, q),
            lambda: sinews.com_velocity(m, q, v), lambda: sinews.com_jacobian(m, q)]


@pytest.mark.skipif(not NATIVE, reason="the native layer is not available on this interpreter")
def test_every_entry_point_runs_its_kernel_natively(monkeypatch):
    """With the checked paths replaced by a failure, every public call (its pools used up and
    refilled) still gives its result: each entry point's C function called its kernel by
    address, none refused."""
    m = arm7()
    m.add_frame("tip", m.nbodies - 1)
    rng = np.random.default_rng(1)
    q, v, a = rng.normal(size=(3, m.nv))
    p = np.array([0.1, -0.2, 0.05])
    calls = _public_calls(m, q, v, a, p)
    expected = [np.copy(getattr(c(), "p", c())) for c in calls]  # binds the fast paths

    def checked(*args, **kwargs):
        raise AssertionError("the checked path was taken")

    kin = __import__("sinews.kinematics", fromlist=["x"])
    com = __import__("sinews._kinematics_com", fromlist=["x"])
    for mod, name in ((rnea_mod, "_rnea"), (aba_mod, "_aba"), (crba_mod, "_crba"), (minv_mod, "_minverse"),
                      (kin, "checked_data"), (com, "checked_data")):
        monkeypatch.setattr(mod, name, checked)
    for _ in range(70):  # more than a pool of results
        for c, want in zip(calls, expected):
            r = c()
            assert np.array_equal(getattr(r, "p", r), want)


@pytest.mark.skipif(not NATIVE, reason="the native layer is not available on this interpreter")
def test_a_kernel_slot_of_another_signature_is_refused():
    """An entry point calls its kernel only when the slot's key is that of the kernel and the
    argument types it was compiled with: another key (a slot filled for another signature) is a
    refused call, which the checked path then serves."""
    from sinews._native_entry import STATE_ARGS
    from sinews._rnea_kernels import rnea as rnea_kernel

    m, q, v, a = _model()
    f = rnea_mod._RNEA
    slots = f.__self__
    assert slots[2] == _native.kernel_address(rnea_kernel, STATE_ARGS)  # ([type, op, address, key])
    assert slots[3] == _native.kernel_key(rnea_kernel, STATE_ARGS) != 0
    cx = m._tls.fast[0]
    tau = np.empty(m.nv)
    assert f(cx, q, v, a, tau) is tau
    want = tau.copy()
    key = slots[3]
    slots[3] = key ^ 4
    try:
        assert f(cx, q, v, a, np.empty(m.nv)) is cx
        assert np.array_equal(sinews.rnea(m, q, v, a), want)
    finally:
        slots[3] = key
    assert f(cx, q, v, a, tau) is tau


def test_crba_and_minverse_results_from_the_pool_are_never_reused():
    """The fast paths of crba and minverse hand out views prepared in a pool (one block per
    refill): over more calls than a block holds, every result keeps its own values and memory."""
    m = arm7()
    rng = np.random.default_rng(5)
    qs = rng.normal(size=(150, m.nq))
    sinews.crba(m, qs[0])  # binds this thread's fast path and its result pool
    count = m._tls.fast[2].count
    assert len(qs) > 2 * count
    for f, checked in ((sinews.crba, lambda q: crba_mod._crba(m, q, None)),
                       (sinews.minverse, lambda q: minv_mod._minverse(m, q, None))):
        got = [f(m, q) for q in qs]
        for i, (q, r) in enumerate(zip(qs, got)):
            assert np.array_equal(r, checked(q))
            assert r.shape == (m.nv, m.nv) and r.flags.writeable and r.flags.c_contiguous
            if i:
                assert not np.shares_memory(r, got[i - 1])
        got[0][:] = 0.0  # a result is the caller's to change
        assert np.array_equal(got[1], checked(qs[1]))
