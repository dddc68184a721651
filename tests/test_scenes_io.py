"""sinews.sim.scenes_io: scenes from URDF <collision> elements and from MJCF geoms (checked
against MuJoCo's own geom placements and against a MuJoCo run of the same file)."""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest

import sinews
from sinews.geometry import Box, Capsule, Cylinder, HalfSpace, Sphere
from sinews.sim import Scene, simulate
from sinews.sim.scenes_io import (GROUND_GROUP, ROBOT_GROUP, initial_state, lowest_point, place_on_ground,
                                  read_stl_vertices, scene_from_file, scene_from_mjcf, scene_from_urdf)

pytest.importorskip("urdf_parser_py", reason='URDF scenes need pip install "sinews[urdf]"')

TRIANGLES = np.array([
    [[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.0, 0.1, 0.05]],
    [[0.3, 0.1, 0.05], [0.3, 0.0, 0.0], [-0.1, 0.1, 0.2]],
])


def write_binary_stl(path, tris):
    with open(path, "wb") as f:
        f.write(b"\0" * 80 + struct.pack("<I", len(tris)))
        for t in tris:
            f.write(struct.pack("<3f", 0, 0, 1) + struct.pack("<9f", *t.ravel()) + b"\0\0")


def write_ascii_stl(path, tris):
    lines = ["solid part"]
    for t in tris:
        lines += ["facet normal 0 0 1", " outer loop"] + [f"  vertex {x} {y} {z}" for x, y, z in t]
        lines += [" endloop", "endfacet"]
    path.write_text("\n".join(lines + ["endsolid part"]))


URDF = """<robot name="two">
  <link name="base">
    <inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision name="hull"><origin xyz="0 0 0.05" rpy="0.1 0.2 0.3"/><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
    <collision><origin xyz="0.2 0 0"/><geometry><mesh filename="part.stl" scale="2 1 1"/></geometry></collision>
  </link>
  <link name="leg">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.2"/><geometry><cylinder radius="0.03" length="0.4"/></geometry></collision>
    <collision><origin xyz="0 0 -0.4"/><geometry><sphere radius="0.04"/></geometry></collision>
  </link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="leg"/><origin xyz="0.1 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
</robot>
"""


@pytest.fixture
def urdf_file(tmp_path):
    write_binary_stl(tmp_path / "part.stl", TRIANGLES)
    path = tmp_path / "two.urdf"
    path.write_text(URDF)
    return path


def test_scenes_stl_reader_binary_and_ascii_agree(tmp_path):
    write_binary_stl(tmp_path / "b.stl", TRIANGLES)
    write_ascii_stl(tmp_path / "a.stl", TRIANGLES)
    np.testing.assert_allclose(read_stl_vertices(tmp_path / "b.stl"), TRIANGLES.reshape(-1, 3), atol=1e-7)
    np.testing.assert_allclose(read_stl_vertices(tmp_path / "a.stl"), TRIANGLES.reshape(-1, 3), atol=0)
    (tmp_path / "x.stl").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="path"):
        read_stl_vertices(tmp_path / "x.stl")


def test_scenes_urdf_collisions_become_geometries(urdf_file):
    with pytest.warns(RuntimeWarning, match="1 <mesh> collision shapes approximated by their bounding box"):
        scene = scene_from_urdf(urdf_file)
    m = scene.model
    assert m.nq == 8 and m.nv == 7  # floating base + hip
    geos = {g.name: g for g in scene.geometries}
    assert isinstance(geos["ground"].shape, HalfSpace) and geos["ground"].group == GROUND_GROUP
    hull = geos["base/hull"]
    assert hull.shape == Box([0.4, 0.2, 0.1])
    np.testing.assert_allclose(hull.X_body_geometry.p, [0, 0, 0.05])
    np.testing.assert_allclose(hull.X_body_geometry.R, sinews.spatial.rpy_to_matrix(0.1, 0.2, 0.3), atol=1e-15)
    # the mesh: its bounding box (scale 2 on x) centred in the mesh frame, offset by the origin
    mesh = [g for g in scene.geometries if g.body == m.body("base").id and g is not hull][0]
    V = TRIANGLES.reshape(-1, 3) * [2, 1, 1]
    np.testing.assert_allclose(mesh.shape.size, V.max(0) - V.min(0), atol=1e-6)
    np.testing.assert_allclose(mesh.X_body_geometry.p, [0.2, 0, 0] + 0.5 * (V.max(0) + V.min(0)), atol=1e-6)
    leg = [g for g in scene.geometries if g.body == m.body("leg").id]
    assert [type(g.shape) for g in leg] == [Cylinder, Sphere]
    assert leg[0].shape == Cylinder(0.03, 0.4) and leg[1].shape == Sphere(0.04)
    # no self-collision: robot shapes mask their own bit, and touch the ground
    for g in scene.geometries[1:]:
        assert g.group == ROBOT_GROUP and not (g.mask & ROBOT_GROUP) and (g.mask & GROUND_GROUP)


def test_scenes_urdf_options(urdf_file):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # mesh="skip": nothing approximated, no warning
        scene = scene_from_urdf(urdf_file, ground=False, floating_base=False, mesh="skip",
                                self_collision=True, contact_links=["leg"], friction=0.3)
    assert scene.model.nq == 1
    names = [g.name for g in scene.geometries]
    assert "ground" not in names and len(names) == 3
    base = [g for g in scene.geometries if g.body == scene.model.body("base").id]
    assert [(g.group, g.mask) for g in base] == [(0, 0)]  # drawn only
    legs = [g for g in scene.geometries if g.body == scene.model.body("leg").id]
    assert all(g.group == g.mask == 0xFFFFFFFF and g.friction == 0.3 for g in legs)
    with pytest.warns(RuntimeWarning, match="bounding sphere"):
        s2 = scene_from_urdf(urdf_file, mesh="sphere")
    assert sum(isinstance(g.shape, Sphere) for g in s2.geometries) == 2
    with pytest.raises(ValueError, match="mesh"):
        scene_from_urdf(urdf_file, mesh="hull")
    with pytest.raises(KeyError, match="contact_links"):
        scene_from_urdf(urdf_file, contact_links=["nope"])
    with pytest.raises(ValueError, match="path"):
        scene_from_file(urdf_file.with_suffix(".obj"))


def test_scenes_lowest_point_and_place_on_ground_match_the_box_corners():
    m = sinews.Model()
    m.add_body("world", sinews.joints.FreeFlyer(), inertia=sinews.SpatialInertia.point_mass(1.0), name="b")
    scene = Scene(m)
    scene.add_ground(height=0.3)
    X = sinews.Transform.rot_x(0.4, (0.1, 0.0, -0.2))
    scene.add_geometry("b", Box([0.3, 0.2, 0.1]), X)
    scene.add_geometry("b", Capsule(0.05, 0.2), sinews.Transform.rot_y(0.9, (0.0, 0.3, 0.0)))
    rng = np.random.default_rng(1)
    q = sinews.random_configuration(m, rng)
    pl = sinews.body_placement(m, q, "b") @ X
    corners = pl.p + Box([0.3, 0.2, 0.1]).vertices() @ pl.R.T
    cap = sinews.body_placement(m, q, "b") @ sinews.Transform.rot_y(0.9, (0.0, 0.3, 0.0))
    cap_low = min(cap.p[2] + s * 0.1 * cap.R[2, 2] for s in (-1, 1)) - 0.05
    assert lowest_point(scene, q) == pytest.approx(min(corners[:, 2].min(), cap_low), abs=1e-12)
    q2 = place_on_ground(scene, q, clearance=0.1, height=0.3)
    assert lowest_point(scene, q2) == pytest.approx(0.4, abs=1e-12)
    np.testing.assert_array_equal(np.delete(q2, 2), np.delete(q, 2))
    q3, v3, dt = initial_state(scene, drop=0.02)
    assert lowest_point(scene, q3) == pytest.approx(0.32, abs=1e-12) and not v3.any() and dt == 1e-3
    m2 = sinews.Model()
    m2.add_body("world", sinews.joints.RevoluteZ(), inertia=sinews.SpatialInertia.point_mass(1.0), name="b")
    with pytest.raises(ValueError, match="free joint"):
        place_on_ground(Scene(m2), [0.0])


# ---------------------------------------------------------------------------- MJCF
MJCF = """<mujoco model="arm">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" friction="0.8"/>
    <body name="upper" pos="0 0 0.5" euler="0.3 0 0">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom name="arm" type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" friction="0.6" contype="4" conaffinity="5"/>
      <body name="lower" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 0 1" range="-1 1"/>
        <geom name="hand" type="box" size="0.05 0.04 0.03" pos="0.1 0 0" euler="0 0.5 0.2"/>
        <geom name="knob" type="cylinder" size="0.02 0.05" pos="0 0.1 0" contype="2" conaffinity="2"/>
        <geom name="ghost" type="sphere" size="0.05" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

BALL = """<mujoco model="ball">
  <option timestep="0.001"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="ball" pos="0.1 -0.2 0.5">
      <freejoint/>
      <geom name="ball" type="sphere" size="0.1" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_scenes_mjcf_geoms_are_placed_as_mujoco_places_them(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "arm.xml"
    path.write_text(MJCF)
    with pytest.warns(RuntimeWarning, match="2 geom pairs collide in MuJoCo"):  # arm (4, 5) with floor, hand (1, 1)
        scene = scene_from_mjcf(path)
    mj = scene.mj_model
    names = [g.name for g in scene.geometries]
    assert names == ["floor", "arm", "hand", "knob"]  # the visual-only "ghost" is left out
    geo = {g.name: g for g in scene.geometries}
    assert isinstance(geo["floor"].shape, HalfSpace) and geo["floor"].friction == 0.8
    assert geo["arm"].shape == Capsule(0.03, 0.3) and geo["arm"].friction == pytest.approx(0.6)
    assert geo["hand"].shape == Box([0.1, 0.08, 0.06]) and geo["knob"].shape == Cylinder(0.02, 0.1)
    assert (geo["knob"].group, geo["knob"].mask) == (2, 2) and (geo["arm"].group, geo["arm"].mask) == (4, 5)
    data = mujoco.MjData(mj)
    q0, v0, dt = initial_state(scene)
    assert dt == 0.002 and not v0.any()
    rng = np.random.default_rng(0)
    for _ in range(3):
        data.qpos[:] = rng.uniform(-1, 1, mj.nq)
        mujoco.mj_forward(mj, data)
        R, p = scene.geometry_poses(data.qpos.copy())
        for i, g in enumerate(scene.geometries):
            k = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, g.name)
            np.testing.assert_allclose(p[i], data.geom_xpos[k], atol=1e-12)
            np.testing.assert_allclose(R[i], data.geom_xmat[k].reshape(3, 3), atol=1e-12)


def test_scenes_mjcf_same_file_runs_in_sinews_and_mujoco(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "ball.xml"
    path.write_text(BALL)
    scene = scene_from_file(path)
    q0, v0, dt = initial_state(scene)
    np.testing.assert_array_equal(q0, [0.1, -0.2, 0.5, 0, 0, 0, 1])
    res = simulate(scene, q0, v0, 0.6, dt, progress=False)
    mj = scene.mj_model
    data = mujoco.MjData(mj)
    z = [data.qpos[2]]
    for _ in range(600):
        mujoco.mj_step(mj, data)
        z.append(data.qpos[2])
    z = np.array(z)
    t = res.t
    # free fall until the ball touches the ground at t_c = sqrt(2 * 0.4 / g): both integrators
    t_c = np.sqrt(2 * 0.4 / 9.81)
    fall = t < t_c - 0.01
    np.testing.assert_allclose(res.q[fall, 2], 0.5 - 0.5 * 9.81 * t[fall] ** 2, atol=3e-3)
    np.testing.assert_allclose(z[fall], 0.5 - 0.5 * 9.81 * t[fall] ** 2, atol=3e-3)
    # at rest on the ground: sinews exactly at the radius, MuJoCo's soft contact within 2 mm
    assert res.q[-1, 2] == pytest.approx(0.1, abs=1e-6)
    assert z[-1] == pytest.approx(0.1, abs=2e-3)
    np.testing.assert_allclose(res.q[-1, :2], [0.1, -0.2], atol=1e-9)


def test_scenes_to_mjcf_round_trip_matches_mujoco(urdf_file, tmp_path):
    mujoco = pytest.importorskip("mujoco")
    from sinews.mujoco_import import MujocoCoordinates
    from sinews.sim.scenes_io import scene_to_mjcf

    with pytest.warns(RuntimeWarning):
        scene = scene_from_urdf(urdf_file, friction=0.7)
    xml = scene_to_mjcf(scene, dt=0.004)
    path = tmp_path / "two.xml"
    path.write_text(xml)
    back = scene_from_mjcf(path)
    mj = back.mj_model
    assert mj.opt.timestep == 0.004 and mj.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    np.testing.assert_allclose(mj.jnt_range[1], [-1.0, 1.0])  # the hip's limits, in radians
    m1, m2 = scene.model, back.model
    q = sinews.random_configuration(m1, np.random.default_rng(2))
    np.testing.assert_allclose(sinews.crba(m2, q), sinews.crba(m1, q), atol=1e-12)
    # MuJoCo's own mass matrix of the written file
    data = mujoco.MjData(mj)
    cv = MujocoCoordinates(m2, mj)
    data.qpos[:] = cv.qpos_from_q(q)
    mujoco.mj_forward(mj, data)
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, data, M)
    T = cv.T(q)
    np.testing.assert_allclose(T.T @ M @ T, sinews.crba(m1, q), atol=1e-12)
    # the same shapes at the same places, with their friction and collision bits
    R1, p1 = scene.geometry_poses(q)
    R2, p2 = back.geometry_poses(q)
    by_name = {g.name: i for i, g in enumerate(scene.geometries)}
    assert len(back.geometries) == len(scene.geometries)
    for j, g in enumerate(back.geometries):
        i = by_name[g.name]
        a = scene.geometries[i]
        assert g.shape == a.shape or np.allclose(g.shape.size, a.shape.size)
        assert (g.group, g.mask) == (a.group, a.mask) and g.friction == (a.friction or scene.default_friction)
        np.testing.assert_allclose(p2[j], p1[i], atol=1e-12)
        np.testing.assert_allclose(R2[j], R1[i], atol=1e-12)
    with pytest.raises(ValueError, match="dt"):
        scene_to_mjcf(scene, dt=0.0)


COUPLED = """<mujoco model="coupled">
  <option timestep="0.001"/>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/></body>
    <body name="b" pos="0 0.5 1"><joint name="j2" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/></body>
  </worldbody>
  <equality><joint joint1="j1" joint2="j2" polycoef="0.1 2 0 0 0"/></equality>
</mujoco>
"""


def test_scenes_mjcf_equalities_become_scene_constraints(tmp_path):
    pytest.importorskip("mujoco")
    path = tmp_path / "coupled.xml"
    path.write_text(COUPLED)
    scene = scene_from_mjcf(path)
    assert scene.constraints is not None and scene.constraints.size == 1
    q0, v0, dt = initial_state(scene)
    q0 = np.array([0.1 + 2 * 0.2, 0.2])  # on the constraint q1 = 0.1 + 2 q2
    res = simulate(scene, q0, v0, 0.3, dt, progress=False)
    assert res.q[-1, 1] > 0.5  # both fall under gravity (a positive turn about y lowers +x)...
    np.testing.assert_allclose(res.q[:, 0], 0.1 + 2 * res.q[:, 1], atol=1e-6)  # ...coupled


def test_scenes_urdf_missing_mesh_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "m.urdf"
    path.write_text(URDF.replace("part.stl", "missing.stl"))
    with pytest.warns(RuntimeWarning, match="1 <mesh> collision shapes skipped .*missing.stl"):
        scene = scene_from_urdf(path)
    assert len(scene.geometries) == 4  # ground, hull, cylinder, sphere


def test_scenes_viewer_draws_the_urdf_visual_meshes(urdf_file):
    from sinews.viewer import animation_data

    path = urdf_file.with_name("vis.urdf")
    path.write_text(URDF.replace('<collision name="hull">', '<visual><origin xyz="0 0.1 0"/><geometry>'
                                 '<mesh filename="part.stl"/></geometry></visual><collision name="hull">'))
    with pytest.warns(RuntimeWarning):
        scene = scene_from_urdf(path)
    q = sinews.random_configuration(scene.model, np.random.default_rng(4))
    data = animation_data(scene, (np.array([0.0, 0.1]), np.array([q, q + np.r_[0.1, np.zeros(7)]])), visuals=True)
    vis = [g for g in data["geometries"] if g["role"] == "visual"]
    assert len(vis) == 1 and vis[0]["kind"] == "mesh" and vis[0]["body"] == "base"
    U = np.array(vis[0]["params"]["vertices"]).reshape(-1, 3)
    F = np.array(vis[0]["params"]["faces"]).reshape(-1, 3)
    assert len(U) == 5  # 6 triangle corners, one shared
    np.testing.assert_allclose(U[F], TRIANGLES, atol=1e-5)  # the same triangles, shared vertices
    # posed like the base: the frame row of the visual is the base pose composed with its origin
    k = [g["name"] for g in data["geometries"] if not g["static"]].index(vis[0]["name"])
    X = sinews.body_placement(scene.model, q, "base") @ sinews.Transform.translation([0, 0.1, 0])
    np.testing.assert_allclose(data["frames"][0][7 * k:7 * k + 3], X.p, atol=1e-5)
    assert all(g["role"] == "collision" for g in animation_data(scene, (np.zeros(1), q[None]))["geometries"])


def test_scenes_urdf_mesh_as_convex_hull(urdf_file):
    from sinews.geometry import Convex

    with pytest.warns(RuntimeWarning, match="convex hull"):
        scene = scene_from_urdf(urdf_file, mesh="convex")
    hull = [g for g in scene.geometries if isinstance(g.shape, Convex)]
    assert len(hull) == 1
    V = TRIANGLES.reshape(-1, 3) * [2, 1, 1]
    np.testing.assert_allclose(np.sort(hull[0].shape.vertices, axis=0), np.sort(np.unique(V, axis=0), axis=0), atol=1e-6)
    np.testing.assert_allclose(hull[0].X_body_geometry.p, [0.2, 0, 0])
    # the viewer draws the hull with its triangles
    from sinews.viewer import animation_data

    q = sinews.neutral(scene.model)
    recs = [g for g in animation_data(scene, (np.zeros(1), q[None]))["geometries"] if g["kind"] == "mesh"]
    assert len(recs) == 1 and len(recs[0]["params"]["faces"]) == 3 * len(hull[0].shape.triangles)


ARM = """<mujoco model="arm2">
  <option timestep="0.001"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom name="upper" type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" mass="1"/>
      <body name="lower" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom name="lower" type="box" size="0.15 0.03 0.03" pos="0.15 0 0" mass="1"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_scenes_mjcf_adjacent_links_do_not_collide(tmp_path):
    """MuJoCo filters parent-child geoms: the capsule and the box overlap at the elbow, and
    neither simulator reports a contact between them while the arm swings above the floor."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "arm2.xml"
    path.write_text(ARM)
    scene = scene_from_mjcf(path)
    q0, v0, dt = initial_state(scene)
    res = simulate(scene, q0, v0, 0.1, dt, progress=False)
    assert res.num_contacts.max() == 0
    mj = scene.mj_model
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    assert data.ncon == 0
