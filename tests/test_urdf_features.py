"""load_urdf as users have it: mimic joints, the inertia policy after fixed-joint merging,
limits/damping/friction, mesh paths, and the message without the ``urdf`` extra."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews._model_inertia import nearest_physical, problem
from sinews._urdf_geometry import rpy_matrix
from sinews.urdf import URDFError, URDFInertiaWarning, URDFWarning, load_urdf

pytest.importorskip("urdf_parser_py")

INERTIAL = """<inertial><origin xyz="{com}" rpy="{rpy}"/><mass value="{m}"/>
  <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="0" iyz="0"/></inertial>"""


def inertial(m=1.0, ixx=0.01, iyy=0.01, izz=0.01, ixy=0.0, com="0 0 0", rpy="0 0 0"):
    return INERTIAL.format(m=m, ixx=ixx, iyy=iyy, izz=izz, ixy=ixy, com=com, rpy=rpy)


def robot(body: str, name: str = "r") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def gripper(mimic='<mimic joint="finger1" multiplier="-0.5" offset="0.01"/>') -> str:
    """A revolute wrist and two prismatic fingers, the second mimicking the first."""
    return robot(f"""
<link name="base">{inertial(2.0)}</link>
<link name="hand">{inertial(0.7, 0.002, 0.003, 0.004, com="0.02 0 0.05")}</link>
<link name="left">{inertial(0.1, 1e-4, 1e-4, 5e-5, com="0 0.01 0.02")}</link>
<link name="right">{inertial(0.12, 1e-4, 1.2e-4, 6e-5, com="0 -0.01 0.02")}</link>
<joint name="wrist" type="revolute"><parent link="base"/><child link="hand"/>
  <origin xyz="0 0 0.3" rpy="0.2 0 0"/><axis xyz="0 1 0"/>
  <limit lower="-1.5" upper="2.0" effort="40" velocity="3"/><dynamics damping="0.3" friction="0.05"/></joint>
<joint name="finger1" type="prismatic"><parent link="hand"/><child link="left"/>
  <origin xyz="0 0.02 0.1"/><axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="20" velocity="0.2"/></joint>
<joint name="finger2" type="prismatic"><parent link="hand"/><child link="right"/>
  <origin xyz="0 -0.02 0.1"/><axis xyz="0 -1 0"/><limit lower="-0.04" upper="0.04" effort="20" velocity="0.2"/>
  {mimic}</joint>""")


# ----------------------------------------------------------------------------- mimic
def test_mimic_constraint_records_the_coupling():
    m = load_urdf(gripper())
    assert m.nq == m.nv == 3  # the mimicking joint stays a coordinate
    (rec,) = m.mimic_joints
    assert (rec.joint, rec.mimicked, rec.multiplier, rec.offset) == ("right", "left", -0.5, 0.01)
    assert load_urdf(gripper(), mimic="independent").mimic_joints == ()
    # default multiplier 1, offset 0
    (rec,) = load_urdf(gripper('<mimic joint="finger1"/>')).mimic_joints
    assert (rec.multiplier, rec.offset) == (1.0, 0.0)


def test_mimic_on_a_fixed_joint_is_ignored_and_to_a_fixed_joint_warns():
    xml = gripper().replace('name="finger2" type="prismatic"', 'name="finger2" type="fixed"')
    assert load_urdf(xml).mimic_joints == ()  # no coordinate to couple (Talos' reduced models)
    xml = gripper().replace('name="finger1" type="prismatic"', 'name="finger1" type="fixed"')
    with pytest.warns(URDFWarning, match="finger2.*'fixed' joint 'finger1'"):
        assert load_urdf(xml).mimic_joints == ()


def test_mimic_constraint_dynamics_match_the_projected_pinocchio_dynamics():
    """Constrained forward dynamics with the mimic row equal Pinocchio's full-model dynamics
    projected on the coupled coordinates: q = J r + c, M_r = J^T M J, a = J M_r^-1 J^T (tau - b)."""
    pin = pytest.importorskip("pinocchio")
    from sinews.constraints import ConstraintSet, forward_dynamics_constraints

    xml = gripper()
    model = load_urdf(xml)
    cs = ConstraintSet()
    assert len(cs.add_mimic_constraints(model)) == 1
    pm = pin.buildModelFromXML(xml)
    pd = pm.createData()
    order = [model.idx_v(model.frame(pm.names[i]).body) for i in range(1, pm.njoints)]
    P = np.eye(model.nv)[order]  # v_pin = P v
    # reduced coordinates (wrist, finger1) -> all (wrist, finger1, finger2)
    J = np.zeros((3, 2))
    J[0, 0] = J[1, 1] = 1.0
    J[2, 1] = -0.5
    c = np.array([0.0, 0.0, 0.01])
    rng = np.random.default_rng(5)
    for _ in range(4):
        r, rd, tau = rng.normal(size=2), rng.normal(size=2), rng.normal(size=3)
        q, v = J @ r + c, J @ rd
        res = forward_dynamics_constraints(model, q, v, tau, cs)
        assert res.converged
        Mp = pin.crba(pm, pd, P @ q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        M = P.T @ Mp @ P
        b = P.T @ pin.rnea(pm, pd, P @ q, P @ v, np.zeros(3))
        a_ref = J @ np.linalg.solve(J.T @ M @ J, J.T @ (tau - b))
        np.testing.assert_allclose(res.qdd, a_ref, rtol=1e-9, atol=1e-9)
    # Pinocchio's own mimic model has the reduced mass matrix J^T M J
    try:
        pmm = pin.buildModelFromXML(xml, mimic=True)
    except TypeError:  # pragma: no cover - older Pinocchio without mimic support
        return
    assert pmm.nv == 2


def _panda_path():
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    for f in dist.files or ():
        if str(f).endswith("panda_description/urdf/panda.urdf"):
            return Path(dist.locate_file(f))
    pytest.skip("panda.urdf not found in example-robot-data")


def test_panda_mimic_finger_matches_pinocchio_mimic_model():
    """Panda's finger_joint2 mimics finger_joint1: the constrained mass matrix J^T M J of sinews
    equals Pinocchio's mimic model's CRBA (``buildModelFromUrdf(mimic=True)``)."""
    pin = pytest.importorskip("pinocchio")
    path = _panda_path()
    model = load_urdf(path)
    (rec,) = model.mimic_joints
    assert rec.joint == "panda_rightfinger" and rec.mimicked == "panda_leftfinger"
    pmm = pin.buildModelFromUrdf(str(path), mimic=True)
    assert pmm.nv == model.nv - 1
    # J: sinews v = J v_reduced, the reduced coordinates ordered as Pinocchio's
    J = np.zeros((model.nv, pmm.nv))
    for i in range(1, pmm.njoints):
        jm = pmm.joints[i]
        if jm.nv == 0:
            continue
        J[model.idx_v(model.frame(pmm.names[i]).body), jm.idx_v] = 1.0
    k = model.idx_v(rec.joint)
    J[k] = rec.multiplier * J[model.idx_v(rec.mimicked)]
    pdm = pmm.createData()
    for _ in range(3):
        qr = pin.randomConfiguration(pmm)
        q = J @ qr + (np.arange(model.nv) == k) * rec.offset
        Mr = pin.crba(pmm, pdm, qr)
        Mr = np.triu(Mr) + np.triu(Mr, 1).T
        M = sinews.crba(model, q)
        np.testing.assert_allclose(J.T @ M @ J, Mr, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- inertia policy
BAD = dict(ixx=1e-6, iyy=1e-6, izz=3e-6)  # violates the triangle inequality (1 + 1 < 3)


def welded_placeholder(bad_root=False, floating=False):
    """A moving arm whose link carries a welded placeholder with a non-physical inertia."""
    root = inertial(0.001, **BAD) if bad_root else inertial(5.0, 0.1, 0.1, 0.1)
    return robot(f"""
<link name="base">{root}</link>
<link name="arm">{inertial(2.0, 0.02, 0.03, 0.04, com="0.1 0 0")}</link>
<link name="sensor">{inertial(1e-6, **BAD)}</link>
<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="mount" type="fixed"><parent link="arm"/><child link="sensor"/><origin xyz="0.2 0 0"/></joint>""")


def test_invalid_welded_placeholder_and_fixed_root_do_not_refuse_the_robot():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a warning: the merged inertias are physical
        m = load_urdf(welded_placeholder(bad_root=True), inertia="strict")
    # the merged link: arm + sensor (the sensor's inertia folded into the arm: same total)
    ref = sinews.SpatialInertia(2.0, (0.1, 0, 0), np.diag([0.02, 0.03, 0.04]))
    sensor = sinews.SpatialInertia.point_mass(1e-6, (0.2, 0, 0))
    Izz = ref.inertia_origin[2, 2] + sensor.inertia_origin[2, 2] + 3e-6
    np.testing.assert_allclose(sinews.crba(m, [0.3]), [[Izz]], rtol=1e-12)
    assert m.total_mass() == pytest.approx(2.0 + 1e-6, rel=1e-15)
    assert m.total_mass(include_ground=True) == pytest.approx(2.001 + 1e-6, rel=1e-15)
    # a floating base whose root is the placeholder alone: refused when strict
    with pytest.raises(URDFError, match="link 'base'.*non-physical inertia.*triangle"):
        load_urdf(welded_placeholder(bad_root=True), floating_base=True, inertia="strict")


def moving_bad():
    return robot(f"""
<link name="base"/>
<link name="arm">{inertial(0.5, 0.001, 0.001, 0.004, ixy=0.0, com="0 0 0.1", rpy="0.3 0.2 0.1")}</link>
<joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="1 0 0"/></joint>""")


def test_moving_invalid_inertia_strict_repair_warn():
    with pytest.raises(URDFError, match="link 'arm': non-physical inertia.*triangle.*inertia='repair'"):
        load_urdf(moving_bad(), inertia="strict")
    with pytest.warns(URDFInertiaWarning, match=r"(?s)robot 'r'.*repaired.*link 'arm'.*triangle.*-> repaired"):
        m = load_urdf(moving_bad())
    I = m.body("arm").inertia
    assert problem(I.mass, I.inertia_com) is None
    ev = np.linalg.eigvalsh(I.inertia_com)
    assert ev[0] + ev[1] == pytest.approx(ev[2], rel=1e-12)  # on the boundary: the nearest
    np.testing.assert_allclose(I.com, [0, 0, 0.1] @ sinews.Transform.identity().R)
    with pytest.warns(URDFInertiaWarning, match="link 'arm'.*kept as written"):
        w = load_urdf(moving_bad(), inertia="warn")
    # "warn" keeps Pinocchio's numbers: the mass matrix is that of the written inertia
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromXML(moving_bad())
    qp = np.array([np.cos(0.4), np.sin(0.4)])
    np.testing.assert_allclose(sinews.crba(w, [0.4]), pin.crba(pm, pm.createData(), qp), rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3),
       st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3))
def test_nearest_physical_is_the_projection(ev, probe):
    """Projection onto the convex cone of physical moments: the result is physical, physical
    inputs are kept, and (ev - p) . (y - p) <= 0 for every physical y (variational inequality)."""
    ev = np.sort(np.array(ev))
    R = rpy_matrix((0.3, -0.2, 1.1))
    m, Ic = nearest_physical(1.0, R @ np.diag(ev) @ R.T)
    assert m == 1.0 and problem(m, Ic) is None
    p = np.sort(np.linalg.eigvalsh(R.T @ Ic @ R))
    y = np.sort(np.array(probe))
    y[2] = min(y[2], y[0] + y[1])  # a physical probe
    assert (ev - p) @ (y - p) <= 1e-12
    if problem(1.0, np.diag(ev)) is None:
        np.testing.assert_allclose(p, ev, atol=1e-15)


# ----------------------------------------------------------------------------- limits
def test_limits_damping_friction_effort_velocity():
    m = load_urdf(gripper())
    order = [m.idx_q(b) for b in ("hand", "left", "right")]
    assert order == [0, 1, 2]
    np.testing.assert_array_equal(m.lower_position_limit, [-1.5, 0.0, -0.04])
    np.testing.assert_array_equal(m.upper_position_limit, [2.0, 0.04, 0.04])
    np.testing.assert_array_equal(m.effort_limit, [40, 20, 20])
    np.testing.assert_array_equal(m.velocity_limit, [3, 0.2, 0.2])
    np.testing.assert_array_equal(m.damping, [0.3, 0, 0])
    np.testing.assert_array_equal(m.friction, [0.05, 0, 0])
    np.testing.assert_array_equal(m.armature, [0, 0, 0])
    p = m.joint_properties("hand")
    assert (p.kind, p.lower.tolist(), p.damping.tolist()) == ("Revolute", [-1.5], [0.3])


def test_invalid_limits_name_the_joint():
    with pytest.raises(URDFError, match="joint 'wrist'.*lower must be <= upper"):
        load_urdf(gripper().replace('lower="-1.5" upper="2.0"', 'lower="2" upper="1"'))
    with pytest.raises(URDFError, match="joint 'wrist'.*damping.*non-negative"):
        load_urdf(gripper().replace('damping="0.3"', 'damping="-1"'))


def test_floating_base_and_fixed_joints_have_no_limits():
    m = load_urdf(gripper(), floating_base=True)
    assert np.all(np.isinf(m.lower_position_limit[:7])) and m.lower_position_limit[7] == -1.5


# ----------------------------------------------------------------------------- meshes
def mesh_robot(filename, extra=""):
    return robot(f"""
<material name="blue"><color rgba="0 0 1 1"/></material>
<link name="base">{inertial()}
  <visual name="shell"><origin xyz="0 0 0.1" rpy="0 0 1.5707963267948966"/>
    <geometry><mesh filename="{filename}" scale="0.001 0.001 0.001"/></geometry>
    <material name="blue"/></visual>
  <visual><geometry><box size="0.1 0.2 0.3"/></geometry><material name="red"><color rgba="1 0 0 1"/></material></visual>
  <collision><geometry><cylinder radius="0.05" length="0.4"/></geometry></collision>
  <collision><origin xyz="0 0 0.2"/><geometry><sphere radius="0.07"/></geometry></collision>
  {extra}
</link>""")


@pytest.fixture
def package(tmp_path):
    pkg = tmp_path / "ws" / "my_robot"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "urdf").mkdir()
    mesh = pkg / "meshes" / "shell.stl"
    mesh.write_bytes(b"solid x\nendsolid x\n")
    return pkg, mesh.resolve()


def test_package_uri_resolved_from_the_urdf_folders(package):
    pkg, mesh = package
    path = pkg / "urdf" / "r.urdf"
    path.write_text(mesh_robot("package://my_robot/meshes/shell.stl"))
    m = load_urdf(path)
    shell, box = m.visuals
    assert (shell.body, shell.kind, shell.mesh, shell.mesh_uri) == ("base", "mesh", str(mesh), "package://my_robot/meshes/shell.stl")
    assert shell.scale == (0.001, 0.001, 0.001) and shell.name == "shell" and shell.rgba == (0, 0, 1, 1)
    np.testing.assert_allclose(shell.X_body_geometry.p, [0, 0, 0.1])
    np.testing.assert_allclose(shell.X_body_geometry.R, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    assert (box.kind, box.size, box.rgba, box.mesh) == ("box", (0.1, 0.2, 0.3), (1, 0, 0, 1), None)
    cyl, sph = m.collisions
    assert (cyl.kind, cyl.size, sph.kind, sph.size) == ("cylinder", (0.05, 0.4), "sphere", (0.07,))
    np.testing.assert_allclose(sph.X_body_geometry.p, [0, 0, 0.2])
    # relative file names are relative to the URDF's folder; triple-slash package URIs work
    path.write_text(mesh_robot("../meshes/shell.stl"))
    assert load_urdf(path).visuals[0].mesh == str(mesh)
    path.write_text(mesh_robot("package:///my_robot/meshes/shell.stl"))
    assert load_urdf(path).visuals[0].mesh == str(mesh)


def test_package_dirs_and_ros_package_path(package, monkeypatch):
    pkg, mesh = package
    xml = mesh_robot("package://my_robot/meshes/shell.stl")
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    assert load_urdf(xml).visuals[0].mesh is None  # a string has no folder: not found, kept as a URI
    assert load_urdf(xml).visuals[0].mesh_uri == "package://my_robot/meshes/shell.stl"
    assert load_urdf(xml, package_dirs=pkg.parent).visuals[0].mesh == str(mesh)
    assert load_urdf(xml, package_dirs=[str(pkg)]).visuals[0].mesh == str(mesh)  # the package folder itself
    monkeypatch.setenv("ROS_PACKAGE_PATH", os.pathsep.join(["/nonexistent", str(pkg.parent)]))
    assert load_urdf(xml).visuals[0].mesh == str(mesh)


def test_example_robot_data_meshes_are_found():
    path = _panda_path()
    m = load_urdf(path)
    meshes = [v for v in m.visuals if v.kind == "mesh"]
    assert meshes and all(v.mesh is not None and Path(v.mesh).is_file() for v in meshes)


# ----------------------------------------------------------------------------- without the extra
@pytest.mark.parametrize("missing", ["urdf_parser_py", "lxml"])
def test_without_the_extra_the_error_names_it(monkeypatch, missing):
    for name in list(sys.modules):
        if name == missing or name.startswith(missing + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, missing, None)  # import fails
    with pytest.raises(ImportError, match=r'pip install "sinews\[urdf\]"'):
        sinews.load_urdf(gripper())


# ----------------------------------------------------------------------------- bad numbers, pickling
def test_non_finite_origins_and_inertials_name_the_element():
    xml = gripper().replace('<origin xyz="0 0.02 0.1"/>', '<origin xyz="0 nan 0.1"/>')
    with pytest.raises(URDFError, match="joint 'finger1': <origin> contains NaN"):
        load_urdf(xml)
    bad = robot(f'<link name="base"/><link name="hand">{inertial(0.7, com="inf 0 0")}</link>'
                '<joint name="j" type="continuous"><parent link="base"/><child link="hand"/></joint>')
    with pytest.raises(URDFError, match="link 'hand' <inertial>: <origin> contains NaN or infinity"):
        load_urdf(bad)
    with pytest.raises(URDFError, match="link 'hand': invalid <inertial>: mass and inertia must be finite"):
        load_urdf(bad.replace('xyz="inf 0 0"', 'xyz="0 0 0"').replace('value="0.7"', 'value="nan"'))


def test_a_loaded_model_pickles_with_its_records():
    import pickle

    m = load_urdf(gripper())
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.mimic_joints == m.mimic_joints
    np.testing.assert_array_equal(m2.lower_position_limit, m.lower_position_limit)
    np.testing.assert_array_equal(m2.damping, m.damping)
    np.testing.assert_array_equal(sinews.crba(m2, [0.1, 0.01, -0.01]), sinews.crba(m, [0.1, 0.01, -0.01]))
