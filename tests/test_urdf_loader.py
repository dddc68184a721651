"""sinews.load_urdf: sources, mapping details with closed-form checks, and bad input."""

from pathlib import Path

import numpy as np
import pytest

import sinews
from sinews.urdf import URDFError, URDFFileNotFoundError, load_urdf

DATA = Path(__file__).parent / "data"

ROD = """<inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
  <inertia ixx="0.1666" iyy="0.1666" izz="0" ixy="0" ixz="0" iyz="0"/></inertial>"""


def robot(body: str, name: str = "r") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def pendulum(joint_type="continuous", axis="0 1 0", extra="") -> str:
    return robot(
        f"""<link name="base"/>
<link name="rod">{ROD}</link>
<joint name="hinge" type="{joint_type}"><parent link="base"/><child link="rod"/>
  <origin xyz="0 0 1"/><axis xyz="{axis}"/>{extra}</joint>"""
    )


# ----------------------------------------------------------------------------- sources
def test_urdf_path_string_pathlike_xml_and_bytes_agree():
    path = DATA / "urdf_arm3.urdf"
    models = [load_urdf(path), load_urdf(str(path)), load_urdf(path.read_text()), load_urdf(path.read_bytes())]
    q = np.array([0.3, -0.7, 0.05])
    ref = sinews.crba(models[0], q)
    for m in models:
        assert m.body_names == ["world", "base", "upper_arm", "forearm", "hand"]
        assert m.name == "arm3"
        np.testing.assert_array_equal(sinews.crba(m, q), ref)


def test_urdf_xml_string_may_start_with_blank_lines():
    # a triple-quoted string usually starts with a newline, before the XML declaration
    m = load_urdf("\n    " + (DATA / "urdf_arm3.urdf").read_text())
    assert m.nq == 3


def test_urdf_package_level_load_urdf_delegates():
    m = sinews.load_urdf(DATA / "urdf_floating.urdf", floating_base=True, gravity=(0, 0, -1.62))
    assert m.body(1).joint.kind == "FreeFlyer" and m.body(1).name == "body"
    np.testing.assert_array_equal(m.gravity, [0, 0, -1.62])


# ----------------------------------------------------------------------------- mapping
def test_urdf_simple_pendulum_closed_form():
    """A rod hanging 1 m below a hinge 1 m above the origin: M = m l^2 / 3 about its end."""
    m = load_urdf(pendulum())
    assert m.body_names == ["world", "base", "rod"]
    assert m.body("rod").joint.kind == "Revolute"
    np.testing.assert_array_equal(m.body("rod").joint.axis, [0, 1, 0])
    np.testing.assert_allclose(m.body("rod").X_parent_joint.p, [0, 0, 1])
    I_end = 0.1666 + 2 * 0.5**2
    np.testing.assert_allclose(sinews.crba(m, [0.3]), [[I_end]], rtol=1e-14)
    # gravity torque of a rod hanging at angle th: m g (l/2) sin th (about +y, restoring)
    th = 0.3
    np.testing.assert_allclose(sinews.gravity_torques(m, [th]), [2 * 9.81 * 0.5 * np.sin(th)], rtol=1e-12)


def test_urdf_axis_is_normalised():
    m = load_urdf(pendulum(axis="0 3 4"))
    np.testing.assert_allclose(m.body("rod").joint.axis, [0, 0.6, 0.8], rtol=1e-15)


def test_urdf_prismatic_joint_mass_matrix_is_the_mass():
    m = load_urdf(pendulum("prismatic", axis="1 1 0", extra='<limit lower="-1" upper="1" effort="1" velocity="1"/>'))
    assert m.body("rod").joint.kind == "Prismatic"
    np.testing.assert_allclose(sinews.crba(m, [0.2]), [[2.0]], rtol=1e-14)


def test_urdf_inertial_rpy_rotates_the_inertia_tensor():
    # diag(1, 2, 3) given in a principal frame yawed by 90 degrees: diag(2, 1, 3) in the link
    xml = robot(
        """<link name="base"/><link name="box"><inertial>
  <origin xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"/><mass value="4"/>
  <inertia ixx="1" iyy="2" izz="3" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="continuous"><parent link="base"/><child link="box"/><axis xyz="0 0 1"/></joint>"""
    )
    inertia = load_urdf(xml).body("box").inertia
    assert inertia.mass == 4.0
    np.testing.assert_allclose(inertia.com, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(inertia.inertia_com, np.diag([2.0, 1.0, 3.0]), atol=1e-15)


def test_urdf_link_without_inertial_is_massless_and_joint_frames_exist():
    m = load_urdf(DATA / "urdf_floating.urdf", floating_base=True)
    assert m.body("hr_foot").inertia.mass == 0.0
    assert not np.any(m.body("imu").inertia.inertia_com)
    # one frame per URDF joint, on the child link, at the identity
    for joint, child in [("fl_hip", "fl_upper"), ("fl_knee", "fl_lower"), ("hr_hip", "hr_upper"),
                         ("hr_ankle", "hr_foot"), ("imu_weld", "imu")]:
        f = m.frame(joint)
        assert m.bodies[f.body].name == child
        np.testing.assert_array_equal(f.X_body_frame.R, np.eye(3))
        np.testing.assert_array_equal(f.X_body_frame.p, np.zeros(3))


def test_urdf_depth_first_body_order():
    m = load_urdf(DATA / "urdf_tree.urdf")
    names = m.body_names[1:]
    assert names[0] == "torso"
    for b in m.bodies[2:]:
        assert b.parent < b.id  # parents come first
    # a branch is complete before the next one starts
    assert names.index("left_foot") < names.index("right_sled")


def test_urdf_floating_base_free_fall():
    """A free-floating model falls with g whatever its joints: the CoM acceleration is g."""
    m = load_urdf(DATA / "urdf_floating.urdf", floating_base=True)
    rng = np.random.default_rng(3)
    q = sinews.random_configuration(m, rng)
    a = sinews.aba(m, q, np.zeros(m.nv), np.zeros(m.nv))
    J = sinews.com_jacobian(m, q)
    np.testing.assert_allclose(J @ a, [0, 0, -9.81], atol=1e-10)


def test_urdf_root_link_named_world_is_the_ground():
    xml = robot(
        """<link name="world"/><link name="base"/><link name="rod">"""
        + ROD
        + """</link>
<joint name="weld" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 2"/></joint>
<joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/><axis xyz="1 0 0"/></joint>"""
    )
    m = load_urdf(xml)
    assert m.body_names == ["world", "base", "rod"]
    assert m.body("base").parent == 0
    np.testing.assert_allclose(sinews.point_position(m, [0.0], "rod"), [0, 0, 2])
    with pytest.raises(ValueError, match="floating_base"):
        load_urdf(xml, floating_base=True)


def test_urdf_transmissions_are_ignored_limits_are_kept():
    xml = pendulum(extra='<limit lower="-1" upper="1" effort="3" velocity="2"/><dynamics damping="0.1"/>')
    xml = xml.replace(
        "</robot>",
        '<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="hinge"/></transmission></robot>',
    )
    m = load_urdf(xml)
    assert m.nv == 1
    # a continuous joint is unbounded whatever its <limit> says (URDF spec)
    assert m.lower_position_limit.tolist() == [-np.inf] and m.upper_position_limit.tolist() == [np.inf]
    assert m.effort_limit.tolist() == [3.0] and m.velocity_limit.tolist() == [2.0]
    assert m.damping.tolist() == [0.1] and m.friction.tolist() == [0.0]


# ----------------------------------------------------------------------------- bad input
def test_urdf_missing_file():
    missing = DATA / "no_such_robot.urdf"
    with pytest.raises(URDFFileNotFoundError, match="source.*no_such_robot.urdf"):
        load_urdf(missing)
    with pytest.raises(FileNotFoundError):
        load_urdf(str(missing))
    with pytest.raises(ValueError):
        load_urdf(str(missing))


def test_urdf_malformed_xml():
    with pytest.raises(URDFError, match="source: malformed XML"):
        load_urdf('<robot name="r"><link name="a"></robot>')


def test_urdf_unknown_joint_type():
    with pytest.raises(URDFError, match="joint 'hinge'.*unsupported joint type 'spherical'"):
        load_urdf(pendulum("spherical"))


def test_urdf_zero_axis():
    with pytest.raises(URDFError, match="joint 'hinge'.*zero vector"):
        load_urdf(pendulum(axis="0 0 0"))


def test_urdf_mimic_of_an_unknown_joint_warns_and_loads_independent():
    from sinews.urdf import URDFWarning

    with pytest.warns(URDFWarning, match="joint 'hinge'.*<mimic> names 'other'.*independent"):
        m = load_urdf(pendulum(extra='<mimic joint="other" multiplier="2"/>'))
    assert m.nv == 1 and m.mimic_joints == ()


def test_urdf_planar_joint_needs_z_axis():
    with pytest.raises(URDFError, match="joint 'hinge'.*planar.*0 0 1"):
        load_urdf(pendulum("planar", axis="1 0 0"))


def test_urdf_closed_loop_rejected():
    xml = pendulum().replace(
        "</robot>",
        '<joint name="loop" type="continuous"><parent link="base"/><child link="rod"/></joint></robot>',
    )
    with pytest.raises(URDFError, match="link 'rod' has several parents.*closed"):
        load_urdf(xml)


def test_urdf_several_roots_rejected():
    xml = pendulum().replace("</robot>", '<link name="stray"/></robot>')
    with pytest.raises(URDFError, match="several root links"):
        load_urdf(xml)


def test_urdf_unknown_link_reference_rejected():
    xml = pendulum().replace('<child link="rod"/>', '<child link="rood"/>')
    with pytest.raises(URDFError, match="joint 'hinge': child link 'rood' is not defined"):
        load_urdf(xml)


def test_urdf_not_a_robot_element():
    with pytest.raises(URDFError, match="expected <robot>"):
        load_urdf("<model name='x'/>")


def test_urdf_incomplete_inertia_rejected():
    xml = pendulum().replace(' iyz="0"', "")
    with pytest.raises(URDFError, match="link 'rod'.*iyz"):
        load_urdf(xml)


def test_urdf_negative_mass_rejected_when_strict_repaired_to_zero_by_default():
    from sinews.urdf import URDFInertiaWarning

    xml = pendulum().replace('<mass value="2"/>', '<mass value="-2"/>')
    with pytest.raises(URDFError, match="link 'rod'.*mass"):
        load_urdf(xml, inertia="strict")
    with pytest.warns(URDFInertiaWarning, match="link 'rod'.*mass -2 -> 0"):
        m = load_urdf(xml)
    assert m.body("rod").inertia.mass == 0.0


def test_urdf_bad_argument_types():
    with pytest.raises(ValueError, match="source"):
        load_urdf(42)
    with pytest.raises(ValueError, match="floating_base"):
        load_urdf(pendulum(), floating_base="yes")
    with pytest.raises(ValueError, match="mimic must be one of"):
        load_urdf(pendulum(), mimic="yes")
    with pytest.raises(ValueError, match="inertia must be one of"):
        load_urdf(pendulum(), inertia=None)
    with pytest.raises(ValueError, match="package_dirs"):
        load_urdf(pendulum().replace("</link>", '<visual><geometry><mesh filename="a.stl"/></geometry></visual></link>', 1),
                  package_dirs=42)
