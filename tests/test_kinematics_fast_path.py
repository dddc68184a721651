"""The kinematics fast path (sinews._kinematics_fast): per-thread state, result pools, cached
name look-ups.  Results equal the checked path's (``data=``) exactly, survive later calls and
pool refills, follow frames added after the state was bound, and bad arguments give the checked
path's named errors (never a crash or a wrong result)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import sinews
from sinews import _kinematics_fast as KF
from sinews._checks import NonFiniteResultError
from sinews.sample_models import JOINT_FACTORIES, quadruped12, random_tree


def framed_random_tree(nbodies: int = 12):
    """A random tree of ``nbodies`` with every joint type and a frame off every other body."""
    m = random_tree(nbodies, 3, joint_types=list(JOINT_FACTORIES))
    for b in m.bodies[1::2]:
        m.add_frame(f"f{b.id}", b.id, sinews.Transform.from_rpy(0.2, -0.4, 0.7, [0.1, 0.0, -0.2]))
    return m


M = framed_random_tree()
FRAMES = [f.name for f in M.frames]
BODIES = [b.name for b in M.bodies[1:]]


def _state(m, seed):
    rng = np.random.default_rng(seed)
    return sinews.random_configuration(m, rng, -1.5, 1.5), rng.normal(size=m.nv)


def _calls(m, q, v, frame, body, point):
    """(name, fast call, checked call) of every kinematics function with a fast path."""
    d = m.data()
    out = []
    for ref in ("local", "world", "local_world_aligned"):
        out.append((f"frame_jacobian {ref}", lambda r=ref, **k: sinews.frame_jacobian(m, q, frame, r, **k)))
        out.append((f"body_jacobian {ref}", lambda r=ref, **k: sinews.body_jacobian(m, q, body, r, **k)))
        out.append((f"frame_dJ {ref}", lambda r=ref, **k: sinews.frame_jacobian_time_variation(m, q, v, frame, r, **k)))
    out += [
        ("point_jacobian", lambda **k: sinews.point_jacobian(m, q, body, point, **k)),
        ("point_jacobian_6d", lambda **k: sinews.point_jacobian_6d(m, q, body, point, **k)),
        ("point_jacobian origin", lambda **k: sinews.point_jacobian(m, q, body, **k)),
        ("point_dJ", lambda **k: sinews.point_jacobian_time_variation(m, q, v, body, point, **k)),
        ("point_dJ_6d", lambda **k: sinews.point_jacobian_time_variation_6d(m, q, v, body, point, **k)),
        ("center_of_mass", lambda **k: sinews.center_of_mass(m, q, **k)),
        ("com_velocity", lambda **k: sinews.com_velocity(m, q, v, **k)),
        ("com_jacobian", lambda **k: sinews.com_jacobian(m, q, **k)),
        ("frame_placement", lambda **k: sinews.frame_placement(m, q, frame, **k)),
        ("body_placement", lambda **k: sinews.body_placement(m, q, body, **k)),
        ("forward_kinematics", lambda **k: sinews.forward_kinematics(m, q, **k)),
    ]
    return [(name, f, lambda f=f: f(data=d)) for name, f in out]


def _arrays(x):
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, sinews.Transform):
        return [x.R, x.p]
    return [x.R, x.p, x.frame_R, x.frame_p]


def _equal(a, b):
    for x, y in zip(_arrays(a), _arrays(b)):
        np.testing.assert_array_equal(x, y)


def test_the_fast_path_is_taken_and_equals_the_checked_path():
    q, v = _state(M, 0)
    point = np.array([0.1, -0.2, 0.3])
    for frame, body in zip(FRAMES, BODIES):
        for name, fast, checked in _calls(M, q, v, frame, body, point):
            fast()  # the first call of a thread may bind the state
            before = M._tls.kin.ib[16:21].copy()
            got = fast()
            assert not np.array_equal(M._tls.kin.ib[16:21], before) or name == "forward_kinematics", name
            _equal(got, checked())


def test_results_survive_later_calls_and_pool_refills():
    """Each result is a slot of its own: 3 pools' worth of calls later, every result is still
    the one computed for its own configuration."""
    kept = []
    for i in range(3 * KF.POOL + 5):
        q, v = _state(M, 100 + i % 7)
        frame, body = FRAMES[i % len(FRAMES)], BODIES[i % len(BODIES)]
        for name, fast, checked in _calls(M, q, v, frame, body, np.array([0.0, 0.1, 0.0])):
            if i < 2 * KF.POOL or name.startswith(("frame_jacobian local", "forward", "frame_placement", "com_vel")):
                kept.append((name, fast(), checked))
    ids = {id(a) for _, got, _ in kept for a in _arrays(got)}
    assert len(ids) == sum(len(_arrays(got)) for _, got, _ in kept)  # no array handed out twice
    for name, got, checked in kept:
        _equal(got, checked())


def test_placements_are_read_only_and_jacobians_independent():
    q, v = _state(M, 1)
    X = sinews.frame_placement(M, q, FRAMES[0])
    assert not X.R.flags.writeable and not X.p.flags.writeable
    with pytest.raises(ValueError):
        X.R[0, 0] = 2.0
    J1 = sinews.frame_jacobian(M, q, FRAMES[0])
    J2 = sinews.frame_jacobian(M, q, FRAMES[0])
    J1[:] = 7.0  # a result is the caller's: writing it changes no other result
    np.testing.assert_array_equal(J2, sinews.frame_jacobian(M, q, FRAMES[0], data=M.data()))


def test_a_frame_added_after_binding_is_seen():
    m = quadruped12()
    q, v = _state(m, 2)
    sinews.forward_kinematics(m, q)
    sinews.frame_placement(m, q, 0 if m.frames else "trunk") if m.frames else None
    sinews.body_jacobian(m, q, "trunk")
    n_frames = len(m.frames)
    m.add_frame("late", m.nbodies - 1, sinews.Transform.translation([0.0, 0.0, -0.2]))
    fk = sinews.forward_kinematics(m, q)
    assert fk.frame_p.shape == (n_frames + 1, 3)
    d = m.data()
    np.testing.assert_array_equal(fk.frame("late").p, sinews.frame_placement(m, q, "late", data=d).p)
    np.testing.assert_array_equal(sinews.frame_placement(m, q, "late").p, fk.frame("late").p)
    np.testing.assert_array_equal(sinews.frame_jacobian(m, q, "late", "world"),
                                  sinews.frame_jacobian(m, q, "late", "world", data=d))


def _in_threads(work, n: int) -> None:
    """Run ``work`` on ``n`` threads at once; re-raise what any of them raised."""
    errors = []
    barrier = threading.Barrier(n)

    def run():
        try:
            barrier.wait()
            work()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_each_thread_has_its_own_state():
    q0, v0 = _state(M, 3)
    expected = sinews.frame_jacobian(M, q0, FRAMES[1], data=M.data())

    def work():
        for _ in range(2 * KF.POOL + 3):
            np.testing.assert_array_equal(sinews.frame_jacobian(M, q0, FRAMES[1]), expected)

    _in_threads(work, 3)


def _slots(s):
    """The slot counters and ring cursor of a state (what a call on it moves)."""
    from sinews import _kinematics_fast_kernels as FKK

    return [int(s.ib[h]) for h in (FKK.H_SLOT_T, FKK.H_SLOT_FK, FKK.H_SLOT_J6, FKK.H_SLOT_J3, FKK.H_SLOT_V3)]


def test_the_thread_that_calls_takes_the_model_state_over():
    """The fast path reads ``model._kin``, the state of the last thread that took it over; its
    native entry points refuse any other thread, whose call then takes it over with its own
    state (one refused call), gives the checked path's results and leaves the other state
    untouched."""
    m = framed_random_tree()
    q, v = _state(m, 5)
    point = np.array([0.1, 0.2, -0.3])
    calls = _calls(m, q, v, FRAMES[0], BODIES[2], point)
    for _, fast, _ in calls:
        fast()
        fast()
    main = m._kin
    assert main is m._tls.kin and main.buf.owner == threading.get_ident()
    before = _slots(main)
    ring = main.buf.ring[0]
    seen = {}

    def work():
        from sinews.kinematics import _FK

        seen["refused"] = _FK(main.buf, q) is main.buf  # (the main thread's buffer, on this thread)
        for _ in range(2 * KF.POOL + 3):
            for name, fast, checked in calls:
                _equal(fast(), checked())
        mine = seen["state"] = m._tls.kin
        seen["taken over"] = m._kin is mine
        P = sinews.forward_kinematics(m, q)
        seen["table in own ring"] = any(P._table is t for t in mine.buf.ring[0])
        seen["own buffer served"] = isinstance(_FK(mine.buf, q), sinews.Placements)

    _in_threads(work, 1)
    assert seen["refused"] and seen["taken over"] and seen["state"] is not main
    assert seen["table in own ring"] and seen["own buffer served"]
    assert _slots(main) == before and main.buf.ring[0] is ring
    for _, fast, checked in calls:  # (the main thread takes it back: the worker's state is refused here)
        _equal(fast(), checked())
    assert m._kin is main
    from sinews.kinematics import _FK

    assert isinstance(_FK(main.buf, q), sinews.Placements)  # (the native thread identity is Python's)


def test_a_frame_added_after_another_thread_bound_is_found_on_the_fast_path(monkeypatch):
    """A frame the state in ``model._kin`` does not know (another thread bound it before the
    frame was added): the first call rebinds this thread's state, the next ones take the fast
    path."""
    m = framed_random_tree()
    q, _ = _state(m, 8)
    _in_threads(lambda: sinews.frame_placement(m, q, FRAMES[0]) and sinews.frame_placement(m, q, FRAMES[0]), 1)
    m.add_frame("later", m.nbodies - 1, sinews.Transform.translation([0.0, 0.0, 0.3]))
    want = sinews.frame_placement(m, q, "later", data=m.data())
    _equal(sinews.frame_placement(m, q, "later"), want)
    import sinews.kinematics as K

    monkeypatch.setattr(K, "_row_placement", lambda *a: pytest.fail("checked path taken"))
    for _ in range(3):
        _equal(sinews.frame_placement(m, q, "later"), want)


def test_threads_calling_every_function_at_once_get_their_own_results():
    m = framed_random_tree()
    q, v = _state(m, 6)
    point = np.array([0.0, 0.1, 0.2])
    calls = _calls(m, q, v, FRAMES[1], BODIES[3], point)
    want = {name: checked() for name, _, checked in calls}

    def work():
        kept = []
        for i in range(KF.POOL + 5):
            for name, fast, _ in calls:
                x = fast()
                if i % 7 == 0:
                    kept.append((name, x))
        for name, x in kept:
            _equal(x, want[name])

    _in_threads(work, 4)


def test_copies_and_pickles_of_a_model_bind_their_own_state():
    import copy
    import pickle

    m = framed_random_tree()
    q, _ = _state(m, 7)
    sinews.forward_kinematics(m, q)
    for c in (copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert c._kin is None
        _equal(sinews.forward_kinematics(c, q), sinews.forward_kinematics(m, q, data=m.data()))
        assert c._kin is not None and c._kin is not m._kin and c._kin.model is c


def test_a_model_without_moving_joints():
    m = sinews.Model()
    b = m.add_body(0, sinews.joints.Fixed(), None, sinews.SpatialInertia.from_box(1.0, (0.1, 0.1, 0.1)), name="welded")
    m.add_frame("tag", b, sinews.Transform.translation([0.0, 0.0, 0.5]))
    q = np.zeros(0)
    for _ in range(2):
        np.testing.assert_array_equal(sinews.frame_placement(m, q, "tag").p, [0.0, 0.0, 0.5])
        assert sinews.frame_jacobian(m, q, "tag").shape == (6, 0)
        assert sinews.forward_kinematics(m, q).frame_p.shape == (1, 3)
        with pytest.raises(ValueError, match="no mass"):
            sinews.center_of_mass(m, q)


def _bad_q(m):
    q, _ = _state(m, 4)
    yield "short", q[:-1], ValueError, "q"
    yield "2-D", np.stack([q, q]), ValueError, "q"
    bad = q.copy()
    bad[-1] = np.nan
    yield "NaN", bad, ValueError, "q"
    bad = q.copy()
    bad[0] = np.inf
    yield "inf", bad, ValueError, "q"
    yield "string", "abc", ValueError, "q"
    yield "object array", np.array([None] * m.nq), ValueError, "q"


GOOD_CONVERSIONS = ("list", "float32", "int", "strided", "read-only")


def _converted(q, how):
    if how == "list":
        return q.tolist()
    if how == "float32":
        return q.astype(np.float32)
    if how == "int":
        return np.round(q).astype(np.int64)
    if how == "strided":
        return np.repeat(q, 2)[::2]
    r = q.copy()
    r.flags.writeable = False
    return r


FUNCS = {
    "forward_kinematics": lambda m, q, v, **k: sinews.forward_kinematics(m, q, **k),
    "frame_placement": lambda m, q, v, **k: sinews.frame_placement(m, q, FRAMES[2], **k),
    "body_placement": lambda m, q, v, **k: sinews.body_placement(m, q, BODIES[3], **k),
    "frame_jacobian": lambda m, q, v, **k: sinews.frame_jacobian(m, q, FRAMES[2], "local", **k),
    "body_jacobian": lambda m, q, v, **k: sinews.body_jacobian(m, q, BODIES[3], "world", **k),
    "point_jacobian": lambda m, q, v, **k: sinews.point_jacobian(m, q, BODIES[3], np.ones(3), **k),
    "frame_dJ": lambda m, q, v, **k: sinews.frame_jacobian_time_variation(m, q, v, FRAMES[2], **k),
    "point_dJ": lambda m, q, v, **k: sinews.point_jacobian_time_variation_6d(m, q, v, BODIES[3], **k),
    "center_of_mass": lambda m, q, v, **k: sinews.center_of_mass(m, q, **k),
    "com_velocity": lambda m, q, v, **k: sinews.com_velocity(m, q, v, **k),
    "com_jacobian": lambda m, q, v, **k: sinews.com_jacobian(m, q, **k),
}


@pytest.mark.parametrize("func", list(FUNCS))
def test_bad_q_gives_the_named_error(func):
    f = FUNCS[func]
    _, v = _state(M, 4)
    f(M, _state(M, 4)[0], v)  # bound: the next calls start on the fast path
    for label, q, exc, name in _bad_q(M):
        with pytest.raises(exc, match=name):
            f(M, q, v)
        with pytest.raises(exc, match=name):
            f(M, q, v, data=M.data())


@pytest.mark.parametrize("func", list(FUNCS))
def test_convertible_q_gives_the_checked_result(func):
    f = FUNCS[func]
    q, v = _state(M, 5)
    f(M, q, v)
    for how in GOOD_CONVERSIONS:
        qc = _converted(q, how)
        _equal(f(M, qc, v), f(M, qc, v, data=M.data()))


def test_other_bad_arguments():
    q, v = _state(M, 6)
    sinews.frame_jacobian(M, q, FRAMES[0])
    with pytest.raises(KeyError, match="frame"):
        sinews.frame_jacobian(M, q, "no such frame")
    with pytest.raises(KeyError, match="frame"):
        sinews.frame_placement(M, q, True)  # a bool is not a frame id
    with pytest.raises(KeyError, match="body"):
        sinews.body_jacobian(M, q, False)
    for f in (lambda: sinews.frame_jacobian(M, q, 1.0), lambda: sinews.frame_placement(M, q, 1.0)):
        with pytest.raises(KeyError, match="frame"):  # 1.0 == 1, but a float is no frame id
            f()
    for f in (lambda: sinews.body_jacobian(M, q, 2.0), lambda: sinews.point_jacobian(M, q, 2.0),
              lambda: sinews.body_placement(M, q, 2.0), lambda: sinews.point_jacobian_time_variation(M, q, v, 2.0)):
        with pytest.raises(KeyError, match="body"):
            f()
    with pytest.raises(KeyError, match="frame"):
        sinews.frame_jacobian(M, q, len(M.frames))
    with pytest.raises(ValueError, match="reference"):
        sinews.frame_jacobian(M, q, FRAMES[0], "global")
    with pytest.raises(ValueError, match="reference"):
        sinews.frame_jacobian_time_variation(M, q, v, FRAMES[0], ["local"])
    with pytest.raises(ValueError, match="frame"):
        sinews.body_jacobian(M, q, BODIES[0], "LOCAL")
    with pytest.raises(ValueError, match="point"):
        sinews.point_jacobian(M, q, BODIES[0], np.ones(4))
    with pytest.raises(ValueError, match="point"):
        sinews.point_jacobian(M, q, BODIES[0], np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="point"):
        sinews.point_jacobian_time_variation(M, q, v, BODIES[0], np.array([np.inf, 0.0, 0.0]))
    with pytest.raises(ValueError, match="v"):
        sinews.frame_jacobian_time_variation(M, q, v[:-1], FRAMES[0])
    bad = v.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="v"):
        sinews.com_velocity(M, q, bad)
    # int ids and numpy ints resolve as names do
    fid = M.frame_id(FRAMES[1])
    np.testing.assert_array_equal(sinews.frame_jacobian(M, q, np.int64(fid)), sinews.frame_jacobian(M, q, FRAMES[1]))


def test_a_zero_quaternion_is_refused_on_the_fast_path():
    m = quadruped12()
    q, v = _state(m, 7)
    sinews.frame_jacobian(m, q, m.frames[0].name) if m.frames else sinews.body_jacobian(m, q, "trunk")
    q[3:7] = 0.0
    for f in (lambda: sinews.body_jacobian(m, q, "trunk"), lambda: sinews.forward_kinematics(m, q),
              lambda: sinews.body_placement(m, q, m.nbodies - 1), lambda: sinews.center_of_mass(m, q)):
        with pytest.raises(ValueError, match="quaternion"):
            f()


def test_an_overflow_is_reported_on_the_fast_path():
    """Finite but huge prismatic coordinates overflow the positions: the named overflow error
    (a ValueError naming q), as on the checked path, and never an infinite result."""
    m = sinews.Model()
    a = m.add_body(0, sinews.joints.PrismaticX(), None, sinews.SpatialInertia.from_box(1.0, (0.1, 0.1, 0.1)), name="a")
    b = m.add_body(a, sinews.joints.PrismaticX(), None, sinews.SpatialInertia.from_box(1.0, (0.1, 0.1, 0.1)), name="b")
    m.add_frame("tip", b, sinews.Transform.translation([0.1, 0.0, 0.0]))
    q = np.zeros(2)
    for f in FAST_OF_PRISMATIC:
        f(m, q)  # binds; the next calls take the fast path
    huge = np.array([1.5e308, 1.5e308])
    for f in FAST_OF_PRISMATIC:
        with pytest.raises(NonFiniteResultError, match="q"):
            f(m, huge)


FAST_OF_PRISMATIC = (
    lambda m, q: sinews.forward_kinematics(m, q),
    lambda m, q: sinews.frame_placement(m, q, "tip"),
    lambda m, q: sinews.body_placement(m, q, "b"),
    lambda m, q: sinews.frame_jacobian(m, q, "tip", "world"),
    lambda m, q: sinews.center_of_mass(m, q),
)


def test_gravity_set_after_binding_is_seen_by_the_dynamics_and_ignored_by_kinematics():
    """The kinematics state copies the model's float table once; gravity, which may still be set
    afterwards, is not read from that copy (kinematics do not depend on it), and the dynamics
    read the model's own table."""
    m = framed_random_tree()
    q, v = _state(m, 7)
    com0, J0 = sinews.center_of_mass(m, q), sinews.frame_jacobian(m, q, FRAMES[0], "world")
    tau0 = sinews.rnea(m, q, v, np.zeros(m.nv))
    m.gravity = (0.0, 0.0, -3.0)
    assert np.array_equal(sinews.center_of_mass(m, q), com0)
    assert np.array_equal(sinews.frame_jacobian(m, q, FRAMES[0], "world"), J0)
    tau1 = sinews.rnea(m, q, v, np.zeros(m.nv))
    assert not np.allclose(tau0, tau1)
    assert np.allclose(tau1, sinews.rnea(m, q, v, np.zeros(m.nv), data=m.data()), atol=1e-12)
