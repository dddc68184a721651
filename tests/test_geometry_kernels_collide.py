"""The allocation-free collision kernels of the compiled stepper
(:func:`sinews.geometry._collide_kernels.collide`, :func:`sinews.geometry._box_kernels.box_pair`
and the ``box_box`` wrapper of the narrow phase) against:

1. the kernels they replaced (frozen in test_geometry_kernels_legacy.py): the same contacts bit
   for bit and in the same order (geometry pairs, points, normals, distances), the same -1 / -2
   answers, on random scenes of boxes (stacked, nearly aligned, axis-aligned, rotated), spheres,
   points, capsules and half-spaces, with and without link poses;
2. the general path, :func:`sinews.geometry.contacts.find_contacts` with the NumPy box-box
   formulation (``narrow_phase.box_box_reference``): the same pairs in the same order, values to
   rounding;
3. Numba's allocation counters: no allocation per call; and one compiled copy of each kernel
   (no int-literal specialisations).
"""

from fractions import Fraction

import numpy as np
import pytest
import test_geometry_kernels_legacy as legacy
from numba import njit

from sinews.geometry import Box, Capsule, HalfSpace, Point, Sphere, narrow_phase
from sinews.geometry._box_kernels import box_box
from sinews.geometry._collide_kernels import collide
from sinews.geometry._fma import dot3
from sinews.geometry.contacts import find_contacts, support_points
from sinews.spatial import exp_so3

KIND = {HalfSpace: 0, Sphere: 1, Box: 2, Point: 3, Capsule: 4}


def _rotation(rng, mode):
    if mode == "random":
        return exp_so3(rng.normal(0.0, 2.0, 3))
    if mode == "axes":  # a signed permutation (exact ties between face axes)
        P = np.eye(3)[rng.permutation(3)] * rng.choice([-1.0, 1.0], 3)
        if np.linalg.det(P) < 0:
            P[:, 0] *= -1.0
        return P
    return exp_so3(rng.normal(0.0, 10.0 ** rng.uniform(-9, -2), 3))  # nearly aligned


def _scene(rng, modes=("random", "axes", "near"), links=True, pool=(Sphere, Box, Box, Box, Point, Capsule)):
    """Random shapes and the tables the compiled stepper builds for them
    (:class:`sinews.sim._fast_step.FastCoulomb`): gi, gf, pair, sup, lp; plus world poses."""
    n = int(rng.integers(2, 8))
    types = ([HalfSpace] if rng.random() < 0.7 else []) + [pool[t] for t in rng.integers(0, len(pool), n)]
    mode = modes[int(rng.integers(0, len(modes)))]
    stack = rng.random() < 0.5
    shapes, R, p = [], [], []
    for g, T in enumerate(types):
        if T is Box:
            shapes.append(Box(rng.uniform(0.04, 0.2, 3) if rng.random() < 0.5 else np.full(3, 0.1)))
        elif T is Sphere:
            shapes.append(Sphere(rng.uniform(0.01, 0.1)))
        elif T is Capsule:
            shapes.append(Capsule(rng.uniform(0.01, 0.05), rng.uniform(0.02, 0.2)))
        else:
            shapes.append(T())
        if T is HalfSpace:
            R.append(_rotation(rng, "near" if rng.random() < 0.5 else "random"))
            p.append(rng.normal(0.0, 0.01, 3))
        else:
            R.append(_rotation(rng, mode))
            p.append(np.array([rng.normal(0, 0.02), rng.normal(0, 0.02), 0.1 * g + rng.normal(0, 0.003)])
                     if stack else rng.uniform(-0.3, 0.3, 3))
    ng = len(shapes)
    R, p = np.array(R), np.array(p)
    gi = np.zeros((ng, 2), dtype=np.int64)
    gf = np.zeros((ng, 16))
    nl = 3 if links else 0
    lp = np.zeros((max(nl, 1), 12))
    for l in range(nl):
        lp[l, :9] = _rotation(rng, "random").reshape(-1)
        lp[l, 9:] = rng.normal(0.0, 0.2, 3)
    for g, sh in enumerate(shapes):
        gi[g, 0] = KIND[type(sh)]
        gi[g, 1] = int(rng.integers(-1, nl)) if links else -1
        if gi[g, 1] < 0:
            gf[g, 0:9], gf[g, 9:12] = R[g].reshape(-1), p[g]
        else:  # the geometry's pose in its link, and the world pose that results
            Rl, pl = lp[gi[g, 1], :9].reshape(3, 3), lp[gi[g, 1], 9:]
            gf[g, 0:9], gf[g, 9:12] = R[g].reshape(-1), p[g]
            R[g], p[g] = Rl @ R[g], pl + Rl @ p[g]
        if isinstance(sh, Box):
            gf[g, 12:15] = sh.half_extents
        elif isinstance(sh, Sphere):
            gf[g, 12] = sh.radius
        elif isinstance(sh, Capsule):
            gf[g, 12], gf[g, 13] = sh.radius, 0.5 * sh.length
    allowed = rng.random((ng, ng)) < 0.9
    allowed = allowed & allowed.T
    np.fill_diagonal(allowed, False)
    pair = np.zeros((ng, ng, 3))
    pair[:, :, 0] = allowed
    local, owner, rad, _ = support_points(shapes)
    sup = np.column_stack([local, rad, owner.astype(float)]).reshape(-1, 5)
    margin = float(rng.choice([0.0, 1e-3, 0.02]))
    return shapes, R, p, allowed, (gi, gf, pair, sup, lp, margin)


def _run(fn, tables, cap):
    gi = tables[0]
    ng = gi.shape[0]
    gR, gp = np.zeros((ng, 3, 3)), np.zeros((ng, 3))
    ci, cf = np.full((cap, 2), -7, dtype=np.int64), np.full((cap, 16), np.nan)
    k = fn(*tables, gR, gp, ci, cf, np.zeros((16, 3)), np.zeros((16, 3)), np.zeros(16))
    k = int(k)
    return k, ci[: max(k, 0)].copy(), cf[: max(k, 0), :7].copy(), gR, gp


def test_collide_returns_the_previous_kernels_results_bit_for_bit():
    rng = np.random.default_rng(20261124)
    seen = {"contacts": 0, "box-box": 0, "sphere-box": 0, "-1": 0, "-2": 0}
    for _ in range(800):
        shapes, R, p, allowed, tables = _scene(rng, links=rng.random() < 0.3)
        cap = int(rng.choice([3, 200, 200]))
        k0, ci0, cf0, gR0, gp0 = _run(legacy.collide, tables, cap)
        k1, ci1, cf1, gR1, gp1 = _run(collide, tables, cap)
        if k0 == -1:  # a capsule pair, which the old kernels left to the general path: the new
            seen["-1"] += 1  # ones handle capsule-capsule and capsule-sphere (compared with the
            continue  # general path below); capsule-box still returns -1
        assert k1 == k0
        assert np.array_equal(ci1, ci0) and np.array_equal(cf1, cf0)
        assert np.array_equal(gR1, gR0) and np.array_equal(gp1, gp0)
        seen["-2" if k0 == -2 else "contacts"] += 1
        kinds = tables[0][:, 0]
        for a, b in ci0:
            pair = sorted((kinds[a], kinds[b]))
            seen["box-box"] += pair == [2, 2]
            seen["sphere-box"] += pair in ([1, 2], [2, 3])
    # the scenes exercise every branch
    print(seen)
    assert seen["contacts"] > 300 and seen["-1"] > 50 and seen["-2"] > 50
    assert seen["box-box"] > 300 and seen["sphere-box"] > 20, seen


def test_box_box_wrapper_returns_the_previous_results_bit_for_bit():
    rng = np.random.default_rng(7)
    found = 0
    for t in range(600):
        mode = ("random", "axes", "near")[t % 3]
        R1, R2 = _rotation(rng, mode), _rotation(rng, mode)
        h1, h2 = rng.uniform(0.02, 0.1, 3), rng.uniform(0.02, 0.1, 3)
        if t % 2:
            h2 = h1.copy()
        p1 = rng.normal(0.0, 0.01, 3)
        p2 = p1 + rng.normal(0.0, 0.08, 3)
        old = [np.zeros((16, 3)), np.zeros((16, 3)), np.zeros(16)]
        new = [np.zeros((16, 3)), np.zeros((16, 3)), np.zeros(16)]
        k0 = legacy.box_box(R1, p1, h1, R2, p2, h2, 0.01, *old)
        k1 = box_box(R1, p1, h1, R2, p2, h2, 0.01, *new)
        assert k1 == k0
        for a, b in zip(old, new):
            assert np.array_equal(a[:k0], b[:k1])
        found += k0 > 0
    assert found > 300


def test_collide_agrees_with_the_general_path(monkeypatch):
    # the general path's box-box: the NumPy formulation, not the kernel under test
    monkeypatch.setitem(narrow_phase._PAIRS, (Box, Box), narrow_phase.box_box_reference)
    rng = np.random.default_rng(5)
    compared = capsules = 0
    for t in range(500):
        # every other scene without boxes: capsule-capsule and capsule-sphere/point pairs
        pool = (Sphere, Box, Box, Box, Point, Capsule) if t % 2 else (Sphere, Point, Capsule, Capsule)
        shapes, R, p, allowed, tables = _scene(rng, modes=("random", "near"), pool=pool)
        k, ci, cf, gR, gp = _run(collide, tables, 500)
        np.testing.assert_allclose(gR, R, atol=1e-13)
        np.testing.assert_allclose(gp, p, atol=1e-13)
        if k == -1:  # a capsule-box candidate: the compiled path has no routine
            kinds = tables[0][:, 0]
            assert 4 in kinds and 2 in kinds
            continue
        ref = find_contacts(shapes, R, p, allowed, np.zeros(allowed.shape), np.zeros(allowed.shape), tables[5])
        assert k == len(ref)
        assert np.array_equal(ci[:, 0], ref.geom_a) and np.array_equal(ci[:, 1], ref.geom_b)
        np.testing.assert_allclose(cf[:, 0:3], ref.points, atol=1e-12)
        np.testing.assert_allclose(cf[:, 3:6], ref.normals, atol=1e-12)
        np.testing.assert_allclose(cf[:, 6], ref.distances, atol=1e-12)
        compared += k > 0
        kinds = tables[0][:, 0]
        capsules += sum(4 in (kinds[a], kinds[b]) and 0 not in (kinds[a], kinds[b]) for a, b in ci)
    assert compared > 60
    assert capsules > 25  # capsule-capsule and capsule-sphere/point contacts were compared


def test_dot3_is_the_correctly_rounded_fused_chain():
    @njit
    def run(x, y):
        return dot3(x[0], x[1], x[2], y[0], y[1], y[2])

    def fma(a, b, c):
        return float(Fraction(a) * Fraction(b) + Fraction(c))

    rng = np.random.default_rng(3)
    for _ in range(200):
        x, y = rng.normal(size=3) * 10.0 ** rng.integers(-8, 8, 3), rng.normal(size=3)
        expect = fma(x[2], y[2], fma(x[1], y[1], x[0] * y[0]))
        assert run(x, y) == expect
    # a case where a separately rounded multiply-add gives 0: a * a = 1 + 2^-29 + 2^-60 exactly
    a = 1.0 + 2.0 ** -30
    x, y = np.array([-1.0, a, 0.0]), np.array([1.0 + 2.0 ** -29, a, 0.0])
    assert x[0] * y[0] + x[1] * y[1] == 0.0
    assert run(x, y) == 2.0 ** -60


def test_collide_allocates_nothing_per_call():
    from numba.core.runtime import _nrt_python, rtsys

    rng = np.random.default_rng(11)
    for _ in range(20):  # a stack of boxes on a half-space with contacts of every kind
        shapes, R, p, allowed, tables = _scene(rng, modes=("near",), links=False)
        if _run(collide, tables, 500)[0] > 4:
            break
    else:
        pytest.fail("no scene with contacts")

    @njit
    def loop(count, gi, gf, pair, sup, lp, margin, gR, gp, ci, cf, pts, nrm, dst):
        k = 0
        for _ in range(count):
            k = collide(gi, gf, pair, sup, lp, margin, gR, gp, ci, cf, pts, nrm, dst)
        return k

    ng = tables[0].shape[0]
    bufs = (np.zeros((ng, 3, 3)), np.zeros((ng, 3)), np.zeros((500, 2), dtype=np.int64), np.zeros((500, 16)),
            np.zeros((16, 3)), np.zeros((16, 3)), np.zeros(16))
    loop(1, *tables, *bufs)
    enabled = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        counts = []
        for count in (1, 50):
            a = rtsys.get_allocation_stats()
            assert loop(count, *tables, *bufs) > 4
            b = rtsys.get_allocation_stats()
            counts.append(b.alloc - a.alloc)
    finally:
        if not enabled:
            _nrt_python.memsys_disable_stats()
    assert counts[0] == counts[1]  # only the call's own boxing, not one per collide()


def test_no_literal_specialisations():
    # an int literal reaching a kernel argument compiles another copy of the callee (and of
    # everything it calls; docs/cold-start.md found such copies of _face and _reduce4 once).
    # A kernel loaded from the cache does not type its callees: each caller is compiled afresh
    # (uncached) here with the signatures it is called with, which types its callees.
    from sinews.geometry import _box_kernels as B
    from sinews.geometry import _collide_kernels as C

    rng = np.random.default_rng(2)
    fresh = njit(C.collide.py_func)
    for _ in range(5):
        _run(fresh, _scene(rng)[4], 200)
    njit(B.box_box.py_func)(np.eye(3), np.zeros(3), np.full(3, 0.5), np.eye(3), np.array([0.0, 0.0, 0.9]),
                            np.full(3, 0.5), 0.01, np.zeros((16, 3)), np.zeros((16, 3)), np.zeros(16))
    for caller in (B.box_pair, B._face):
        recompiled = njit(caller.py_func)
        for sig in caller.signatures:
            recompiled.compile(sig)
    for kernel in (C._sphere_box, B.box_pair, B._face, B._clip, B._reduce4):
        sigs = kernel.signatures
        assert sigs, kernel
        assert not any("Literal" in str(s) for s in sigs), (kernel, sigs)
