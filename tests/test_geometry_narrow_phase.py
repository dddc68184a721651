"""Narrow phase, broad phase and filtering of sinews.geometry against independent references:
analytic distances, brute-force sampling of the surfaces, and the all-pairs broad phase."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews.geometry import (Box, Capsule, Cylinder, Geometry, HalfSpace, Point, Sphere, aabb_overlaps,
                             collide, combine_friction, combine_restitution, sweep_and_prune)
from sinews.geometry.narrow_phase import box_box, box_box_reference
from sinews.spatial import Transform, exp_so3

coord = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(coord, coord, coord).map(np.array)
rot = st.tuples(st.floats(-3, 3), st.floats(-3, 3), st.floats(-3, 3)).map(lambda w: exp_so3(np.array(w)))
pos = st.floats(0.05, 0.6)
SETTINGS = settings(max_examples=60, deadline=None)


def _check_witness(points, normals, dists):
    assert np.allclose(np.linalg.norm(normals, axis=1), 1.0)
    return points - 0.5 * dists[:, None] * normals, points + 0.5 * dists[:, None] * normals


@SETTINGS
@given(R=rot, p=vec3, r=pos, Rh=rot, ph=vec3)
def test_sphere_halfspace_analytic(R, p, r, Rh, ph):
    P, N, D = collide(HalfSpace(), (Rh, ph), Sphere(r), (R, p), margin=10.0)
    n = Rh[:, 2]
    assert D.shape == (1,)
    assert D[0] == pytest.approx(n @ (p - ph) - r, abs=1e-12)
    assert np.allclose(N[0], n)
    a, b = _check_witness(P, N, D)
    assert n @ (a[0] - ph) == pytest.approx(0.0, abs=1e-12)  # on the plane
    assert np.linalg.norm(b[0] - p) == pytest.approx(r, abs=1e-12)  # on the sphere


@SETTINGS
@given(R=rot, p=vec3, size=st.tuples(pos, pos, pos))
def test_box_halfspace_corners(R, p, size):
    box = Box(size)
    P, N, D = collide(HalfSpace(), Transform.identity(), box, (R, p), margin=10.0)
    corners = p + box.vertices() @ R.T
    assert sorted(D) == pytest.approx(sorted(corners[:, 2]), abs=1e-12)
    # the deepest point of the box (brute force over a surface grid) is a reported corner
    g = np.linspace(-0.5, 0.5, 7)
    grid = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T * box.size
    assert D.min() == pytest.approx((p + grid @ R.T)[:, 2].min(), abs=1e-12)


@SETTINGS
@given(R=rot, p=vec3, r=pos, L=st.floats(0.0, 1.0))
def test_capsule_and_cylinder_halfspace_sampled(R, p, r, L):
    P, N, D = collide(HalfSpace(), Transform.identity(), Capsule(r, L), (R, p), margin=10.0)
    s = np.linspace(-L / 2, L / 2, 201)
    axis_pts = p + np.outer(s, R[:, 2])
    assert D.min() == pytest.approx(axis_pts[:, 2].min() - r, abs=1e-12)
    cyl = Cylinder(r, max(L, 0.05))
    P, N, D = collide(HalfSpace(), Transform.identity(), cyl, (R, p), margin=10.0)
    th = np.linspace(0, 2 * np.pi, 2001)
    rim = np.concatenate([p + np.outer(np.cos(th), R[:, 0]) * r + np.outer(np.sin(th), R[:, 1]) * r
                          + sgn * cyl.length / 2 * R[:, 2] for sgn in (-1, 1)])
    assert D.min() == pytest.approx(rim[:, 2].min(), abs=2e-6 * r + 1e-12)
    assert D.min() <= rim[:, 2].min() + 1e-12


def _seg_dist(a0, a1, b0, b1, n=101):
    s = np.linspace(0, 1, n)
    A = a0 + np.outer(s, a1 - a0)
    B = b0 + np.outer(s, b1 - b0)
    return np.min(np.linalg.norm(A[:, None, :] - B[None, :, :], axis=2))


@SETTINGS
@given(R1=rot, p1=vec3, R2=rot, p2=vec3, r1=pos, r2=pos, L1=st.floats(0, 1), L2=st.floats(0, 1))
def test_capsule_capsule_and_spheres_sampled(R1, p1, R2, p2, r1, r2, L1, L2):
    c1, c2 = Capsule(r1, L1), Capsule(r2, L2)
    P, N, D = collide(c1, (R1, p1), c2, (R2, p2), margin=10.0)
    a0, a1 = p1 - R1[:, 2] * L1 / 2, p1 + R1[:, 2] * L1 / 2
    b0, b1 = p2 - R2[:, 2] * L2 / 2, p2 + R2[:, 2] * L2 / 2
    ref = _seg_dist(a0, a1, b0, b1) - r1 - r2
    assert D[0] <= ref + 1e-12  # sampling can only overestimate the distance
    assert D[0] == pytest.approx(ref, abs=2e-2 * (L1 + L2) + 1e-9)
    P, N, D = collide(Sphere(r1), (R1, p1), c2, (R2, p2), margin=10.0)
    assert D[0] == pytest.approx(_seg_dist(p1, p1, b0, b1, 1001) - r1 - r2, abs=2e-3 * L2 + 1e-9)
    P, N, D = collide(Sphere(r1), (R1, p1), Sphere(r2), (R2, p2), margin=10.0)
    assert D[0] == pytest.approx(np.linalg.norm(p2 - p1) - r1 - r2, abs=1e-12)
    assert np.allclose(p1 + N[0] * np.linalg.norm(p2 - p1), p2, atol=1e-9) or np.linalg.norm(p2 - p1) < 1e-9


def _box_signed_distance(box, R, p, x):
    """Signed distance from world point x to the box (negative inside)."""
    local = R.T @ (x - p)
    h = box.half_extents
    q = np.abs(local) - h
    return np.linalg.norm(np.maximum(q, 0)) + min(q.max(), 0.0)


@SETTINGS
@given(R=rot, p=vec3, c=vec3, r=pos, size=st.tuples(pos, pos, pos))
def test_sphere_box_analytic(R, p, c, r, size):
    box = Box(size)
    P, N, D = collide(Sphere(r), (np.eye(3), c), box, (R, p), margin=10.0)
    assert D[0] == pytest.approx(_box_signed_distance(box, R, p, c) - r, abs=1e-12)
    # the reversed order flips the normal only
    P2, N2, D2 = collide(box, (R, p), Sphere(r), (np.eye(3), c), margin=10.0)
    assert np.allclose(N2, -N) and np.allclose(D2, D)


@SETTINGS
@given(size1=st.tuples(pos, pos, pos), size2=st.tuples(pos, pos, pos), d=vec3)
def test_box_box_axis_aligned_exact(size1, size2, d):
    b1, b2 = Box(size1), Box(size2)
    gaps = np.abs(d) - (b1.half_extents + b2.half_extents)
    P, N, D = collide(b1, (np.eye(3), np.zeros(3)), b2, (np.eye(3), 2 * d), margin=10.0)
    gaps = np.abs(2 * d) - (b1.half_extents + b2.half_extents)
    if len(D) and (gaps < 0).sum() >= 2:  # face contact along the axis of largest gap
        assert D.max() == pytest.approx(gaps.max(), abs=1e-12)


@SETTINGS
@given(R1=rot, R2=rot, p1=vec3, d=vec3, s1=st.tuples(pos, pos, pos), s2=st.tuples(pos, pos, pos))
def test_box_box_kernel_vs_reference_and_sampling(R1, R2, p1, d, s1, s2):
    b1, b2 = Box(s1), Box(s2)
    p2 = p1 + d
    Pk, Nk, Dk = box_box(b1, R1, p1, b2, R2, p2, 0.05)
    Pr, Nr, Dr = box_box_reference(b1, R1, p1, b2, R2, p2, 0.05)
    assert (len(Dk) == 0) == (len(Dr) == 0)
    if not len(Dk):
        # separated by more than the margin: every corner of each box is outside the other
        for (ba, Ra, pa), (bb, Rb, pb) in (((b1, R1, p1), (b2, R2, p2)), ((b2, R2, p2), (b1, R1, p1))):
            for x in pa + ba.vertices() @ Ra.T:
                assert _box_signed_distance(bb, Rb, pb, x) > 0.0
        return
    assert np.allclose(Nk[0], Nr[0], atol=1e-9)
    assert Dk.min() == pytest.approx(Dr.min(), abs=1e-9)
    assert len(Dk) <= 4 or len(Dk) == len(Dr)
    # witness points: the first lies on box 1's surface when separated, inside when overlapping
    a, b = _check_witness(Pk, Nk, Dk)
    for x, dist in zip(a, Dk):
        assert _box_signed_distance(b1, R1, p1, x) <= 1e-9 + max(0.0, 0.0)


def test_box_box_stack_manifold():
    b = Box([1.0, 1.0, 1.0])
    P, N, D = collide(b, Transform.translation([0, 0, 0.5]), b, Transform.rot_z(0.7, [0.1, 0, 1.49]))
    assert len(D) == 4 and np.allclose(D, -0.01) and np.allclose(N, [0, 0, 1])
    P, N, D = collide(b, Transform.translation([0, 0, 0.5]), b, Transform.translation([0.1, 0, 1.49]))
    assert len(D) == 4 and np.allclose(sorted(P[:, 0]), [-0.4, -0.4, 0.5, 0.5])


def test_unsupported_pair_raises():
    with pytest.raises(NotImplementedError, match="HalfSpace"):
        collide(HalfSpace(), Transform.identity(), HalfSpace(), Transform.identity())
    with pytest.raises(ValueError, match="X_world_a"):
        collide(Sphere(1.0), np.full((4, 4), np.nan), Sphere(1.0), Transform.identity())


@SETTINGS
@given(st.integers(0, 60), st.integers(0, 2**31))
def test_sweep_and_prune_equals_all_pairs(n, seed):
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1, 1, (n, 3))
    h = rng.uniform(0.0, 0.3, (n, 3))
    got = sweep_and_prune(c - h, c + h)
    ref = aabb_overlaps(c - h, c + h)
    assert got.tolist() == sorted(ref.tolist())


def test_shapes_validate():
    for bad in (lambda: Sphere(-1), lambda: Box([1, 0, 1]), lambda: Capsule(0.1, -1),
                lambda: Cylinder(0, 1), lambda: Geometry(0, Sphere(1), friction=-1),
                lambda: Geometry(0, Sphere(1), restitution=2), lambda: Geometry(0, "ball"),
                lambda: Geometry(0, Sphere(1), group=-1), lambda: Sphere(float("nan"))):
        with pytest.raises(ValueError):
            bad()
    assert combine_friction(0.25, 1.0, 0.5) == pytest.approx(0.5)
    assert combine_friction(None, 0.3, 0.5) == 0.3 and combine_friction(None, None, 0.7) == 0.7
    assert combine_restitution(0.2, 0.9, 0.0) == 0.9 and combine_restitution(None, None, 0.1) == 0.1


def test_scene_filtering():
    from sinews.sim import Scene

    m = sinews.Model()
    a = m.add_body("world", sinews.joints.FreeFlyer(), inertia=sinews.SpatialInertia.from_box(1, [1, 1, 1]), name="a")
    b = m.add_body("a", sinews.joints.RevoluteZ(), inertia=sinews.SpatialInertia.from_box(1, [1, 1, 1]), name="b")
    c = m.add_body("world", sinews.joints.FreeFlyer(), inertia=sinews.SpatialInertia.from_box(1, [1, 1, 1]), name="c")
    s = Scene(m)
    s.add_ground()
    s.add_geometry("a", Sphere(0.5), group=1)
    s.add_geometry("b", Sphere(0.5), group=1)  # child of a: never tested against a
    s.add_geometry("c", Sphere(0.5), group=2, mask=2)  # only with geometries in group 2
    q = np.zeros(m.nq)
    q[6] = q[14] = 1.0  # unit quaternions, everything overlapping at the origin
    con = s.collide(q)
    pairs = sorted(set(zip(con.geom_a.tolist(), con.geom_b.tolist())))
    names = [(s.geometries[i].name, s.geometries[j].name) for i, j in pairs]
    assert names == [("ground", "a/sphere"), ("ground", "b/sphere"), ("ground", "c/sphere")]
    assert len(s.geometries) == 4 and s.geometry("c/sphere").group == 2
    with pytest.raises(ValueError, match="already used"):
        s.add_geometry("c", Sphere(0.1), name="ground")
    with pytest.raises(ValueError, match="HalfSpace"):
        s.add_geometry("a", HalfSpace())


def _cube_hull(size):
    h = 0.5 * np.asarray(size, dtype=float)
    return np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)]) * h


@SETTINGS
@given(R=rot, p=vec3, size=st.tuples(pos, pos, pos))
def test_convex_hull_against_halfspace_is_the_box(R, p, size):
    from sinews.geometry import Convex

    rng = np.random.default_rng(0)
    inner = rng.uniform(-0.4, 0.4, (20, 3)) * np.asarray(size)  # interior points are dropped
    hull = Convex(np.vstack([_cube_hull(size), inner]))
    assert len(hull.vertices) == 8
    a = collide(HalfSpace(), Transform.identity(), hull, (R, p), margin=10.0)
    b = collide(HalfSpace(), Transform.identity(), Box(size), (R, p), margin=10.0)
    assert sorted(a[2]) == pytest.approx(sorted(b[2]), abs=1e-12)


@SETTINGS
@given(R=rot, p=vec3, c=vec3, r=pos, size=st.tuples(pos, pos, pos))
def test_coal_pairs_match_the_analytic_routines(R, p, c, r, size):
    pytest.importorskip("coal")
    from sinews.geometry import Convex
    from sinews.geometry.narrow_phase import coal_pair

    box = Box(size)
    ref = collide(Sphere(r), (np.eye(3), c), box, (R, p), margin=10.0)
    got = coal_pair(Sphere(r), np.eye(3), c, box, R, p, margin=10.0)
    assert got[2][0] == pytest.approx(ref[2][0], abs=1e-6)
    if abs(ref[2][0]) > 1e-3:
        assert got[1][0] == pytest.approx(ref[1][0], abs=1e-4)
    hull = collide(Sphere(r), (np.eye(3), c), Convex(_cube_hull(size)), (R, p), margin=10.0)
    assert hull[2][0] == pytest.approx(ref[2][0], abs=1e-6)


def test_coal_cylinder_box():
    pytest.importorskip("coal")
    P, N, D = collide(Cylinder(0.2, 1.0), Transform.identity(), Box([1, 1, 1]), Transform.translation([0, 0, 0.95]))
    assert D == pytest.approx([-0.05]) and N[0] == pytest.approx([0, 0, 1], abs=1e-9)


def test_scene_filtering_looks_through_welded_bodies():
    """MJCF imports put a massless joint body between two links (lower -Fixed-> joint body
    -hinge-> upper): the two links are still parent and child."""
    from sinews.sim import Scene

    m = sinews.Model()
    I = sinews.SpatialInertia.from_box(1, [0.2, 0.2, 0.2])
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="upper")
    m.add_body("upper", sinews.joints.RevoluteZ(), inertia=None, name="elbow")
    m.add_body("elbow", sinews.joints.Fixed(), inertia=I, name="lower")
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="other")
    s = Scene(m)
    for b in ("upper", "lower", "other"):
        s.add_geometry(b, Sphere(0.5))
    q = np.zeros(m.nq)
    q[6] = q[14] = 1.0
    con = s.collide(q)
    pairs = sorted(set(zip(con.geom_a.tolist(), con.geom_b.tolist())))
    assert pairs == [(0, 2), (1, 2)]  # upper-other, lower-other; never upper-lower


def test_pair_without_routine_warns_and_is_skipped(monkeypatch):
    from sinews.geometry import narrow_phase
    from sinews.sim import Scene

    monkeypatch.setattr(narrow_phase, "coal_available", lambda: False)
    m = sinews.Model()
    I = sinews.SpatialInertia.from_box(1, [0.2, 0.2, 0.2])
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="a")
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=I, name="b")
    s = Scene(m)
    s.add_geometry("a", Cylinder(0.1, 0.2))
    s.add_geometry("b", Box([0.2, 0.2, 0.2]))
    q = np.zeros(m.nq)
    q[6] = q[13] = 1.0
    with pytest.warns(RuntimeWarning, match="no contact routine"):
        assert len(s.collide(q)) == 0


def test_box_box_separated_parallel_faces_use_the_face_not_an_equal_edge_axis():
    """Regression (found by Hypothesis): two boxes with the same orientation, separated within
    the margin along one face normal.  The edge axis y x z equals that normal with the same
    (negative) overlap; the face-preference bias 0.95 * overlap favoured the edge when the
    overlap is negative, and the witness point fell outside box 1's face."""
    R = np.array([[0.73781005, -0.16121107, 0.65547489],
                  [0.16121107, -0.90087717, -0.40302769],
                  [0.65547489, 0.40302769, -0.63868721]])
    U, _, Vt = np.linalg.svd(R)
    R = U @ Vt
    b1, b2 = Box((0.5, 0.5, 0.5)), Box((0.125, 0.5, 0.5))
    p1, p2 = np.zeros(3), np.array([0.125, 0.5, 0.25])
    for fn in (box_box, box_box_reference):
        P, N, D = fn(b1, R, p1, b2, R, p2, 0.05)
        assert len(D) >= 2 and np.allclose(D, D[0]) and D[0] == pytest.approx(0.0242005, abs=1e-6)
        a, b = _check_witness(P, N, D)
        for x, y in zip(a, b):
            assert abs(_box_signed_distance(b1, R, p1, x)) < 1e-9  # on box 1's face
            assert abs(_box_signed_distance(b2, R, p2, y)) < 1e-9  # on box 2's face
