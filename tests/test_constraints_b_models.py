"""Model builders for the constraints part-B tests (RBDL reference scenarios, rbdl.md §5.2),
plus sanity tests of the builders themselves (each fixture starts where RBDL says it does).

RBDL conventions translated to sinews:

* ``Body(m, c, d)`` = inertia about the COM ``diag(d)``; sinews rejects non-physical inertias
  (triangle inequality), so components that cannot influence the planar motion of a fixture
  are raised to make the tensor physical (noted where done);
* RBDL ``SpatialTransform(E, r)`` for a joint frame: E rotates parent coordinates into joint
  coordinates, so the sinews pose is ``Transform(E^T, r)``; RBDL's ``roty(a)`` is the
  coordinate rotation ``Ry(a)^T`` (physical), hence ``Transform.rot_y(a, r)``;
* a loop frame ``X`` given to RBDL's ``AddLoopConstraint`` is read with ``X.E`` as the frame
  -> body rotation (rbdl.md §0.6).  For the slider-crank (scenario H) that reading puts the
  two loop frames at a relative rotation of pi about y in the assembled state, where the
  sin-based rotation error of the Rz row does not change under rotations about z
  (d phi_rz / d theta = 0 where G has 1): Gauss-Newton assembly of the spherical-joint variant then
  stalls near the assembled state.  sinews reads frames as poses (``Transform(X.E^T, X.r)``),
  under which the two frames coincide when assembled, the geometry the fixture intends;
* RBDL multi-axis joints (chains of virtual bodies) are sinews ``MultiAxis`` joints.
"""

from __future__ import annotations

import numpy as np

import sinews
from sinews import SpatialInertia, Transform
from sinews import joints as J
from sinews.constraints import ConstraintSet, constraint_position_error

PI = np.pi
Z3 = np.zeros(3)
EX, EY, EZ = np.eye(3)
TX, TY, TZ = np.r_[Z3, EX], np.r_[Z3, EY], np.r_[Z3, EZ]
RX, RY, RZ = np.r_[EX, Z3], np.r_[EY, Z3], np.r_[EZ, Z3]


# ------------------------------------------------------------------------------------ A
def fourbar(baumgarte=False, time_constant=0.1):
    """Scenario A: planar four-bar, one loop group (x, y, rz) link2 tip -> massless body 5.

    RBDL's link inertia diag(0, 0, 8/3) is not physical; Iyy = 8/3 is added (no effect on a
    motion about z only)."""
    m = sinews.Model(gravity=(0.0, -9.81, 0.0), name="fourbar")
    inertia = SpatialInertia(2.0, (1.0, 0.0, 0.0), np.diag([0.0, 8.0 / 3.0, 8.0 / 3.0]))
    tip = Transform.translation((2.0, 0.0, 0.0))
    b1 = m.add_body(0, J.RevoluteZ(), None, inertia, "b1")
    m.add_body(b1, J.RevoluteZ(), tip, inertia, "b2")
    b3 = m.add_body(0, J.RevoluteZ(), None, inertia, "b3")
    b4 = m.add_body(b3, J.RevoluteZ(), tip, inertia, "b4")
    m.add_body(b4, J.RevoluteZ(), tip, None, "b5")
    cs = ConstraintSet()
    for axis in (TX, TY, RZ):
        cs.add_loop_constraint("b2", "b5", tip, Transform.identity(), axis, baumgarte=baumgarte, time_constant=time_constant, id=1)
    return m, cs.bind(m)


FOURBAR_Q = np.array([3 * PI / 4, -PI / 2, PI / 4, PI / 2, -PI / 2])
FOURBAR_V = np.array([-1.0, -1.0, -2.0, 1.0, -1.0])
FOURBAR_TAU = np.array([1.0, -2.0, 3.0, -5.0, 7.0])


# ------------------------------------------------------------------------------------ B/C
def pendulum_joint_model():
    """Scenario B joint-coordinate double perpendicular pendulum (2 DoF)."""
    m = sinews.Model(gravity=(0.0, -9.81, 0.0), name="pendulum-joint")
    l1 = m.add_body(0, J.RevoluteZ(), None, SpatialInertia(1.0, (0, -0.5, 0), np.diag([1 / 3, 1 / 30, 1 / 3])), "link1")
    m.add_body(l1, J.RevoluteY(), Transform.translation((0, -1, 0)), SpatialInertia(1.0, (0.5, 0, 0), np.diag([1 / 30, 1 / 3, 1 / 3])), "link2")
    return m


def pendulum_absolute_model():
    """Scenario B absolute-coordinate pendulum: each link on a 6-axis joint (Tx, Ty, Tz, then
    Euler ZYX, RBDL's TranslationXYZ + EulerZYX pair), 12 DoF, closed by two 5-row loop groups."""
    m = sinews.Model(gravity=(0.0, -9.81, 0.0), name="pendulum-absolute")
    six = [TX, TY, TZ, RZ, RY, RX]
    l1 = m.add_body(0, J.MultiAxis(six), None, SpatialInertia(1.0, (0, -0.5, 0), np.diag([1 / 3, 1 / 30, 1 / 3])), "link1")
    l2 = m.add_body(0, J.MultiAxis(six), None, SpatialInertia(1.0, (0.5, 0, 0), np.diag([1 / 30, 1 / 3, 1 / 3])), "link2")
    cs = ConstraintSet()
    for axis in (TX, TY, TZ, RX, RY):
        cs.add_loop_constraint(0, l1, Transform.identity(), Transform.identity(), axis, name="RzBase")
    for axis in (TX, TY, TZ, RX, RZ):
        cs.add_loop_constraint(l1, l2, Transform.translation((0, -1, 0)), Transform.identity(), axis, name="RyLink1")
    return m, cs.bind(m)


def pendulum_absolute_model_custom(m=None):
    """Scenario K: the same closures as two 5-row custom ``PinJointConstraint`` groups (on
    ``m``, an absolute pendulum model, or a new one)."""
    from sinews.constraints import PinJointConstraint

    if m is None:
        m, _ = pendulum_absolute_model()
    cs = ConstraintSet()
    cs.add_custom_constraint(PinJointConstraint(0, "link1", None, None, pin_axis=2, name="RzBase"))
    cs.add_custom_constraint(PinJointConstraint("link1", "link2", Transform.translation((0, -1, 0)), None, pin_axis=1, name="RyLink1"))
    return m, cs.bind(m)


def pendulum_absolute_state(qj, qdj):
    """Map the joint-model state into the absolute model (rbdl.md §5.2 B)."""
    mj = pendulum_joint_model()
    r2 = sinews.point_position(mj, qj, "link2")
    qa = np.zeros(12)
    qa[3] = qj[0]
    qa[6:9] = r2
    qa[9:11] = qj
    # absolute velocities: link1 Euler z rate = qd0; link2 origin velocity; link2 Euler rates:
    # R2 = Rz(q0) Ry(q1) -> (z, y, x) rates = (qd0, qd1, 0)
    qda = np.zeros(12)
    qda[3] = qdj[0]
    qda[6:9] = sinews.point_velocity(mj, qj, qdj, "link2")
    qda[9:11] = qdj
    return qa, qda


# ------------------------------------------------------------------------------------ H
def slider_crank_3d(spherical=False):
    """Scenario H: RBDL's SliderCrank3D (EulerZYX rod) or SliderCrank3DSphericalJoint.

    Crank inertia diag(0, 0, 1) is made physical as diag(0, 1, 1)."""
    m = sinews.Model(gravity=(0.0, -9.81, 0.0), name="slider-crank-3d")
    slider = m.add_body(0, J.PrismaticX(), None, SpatialInertia(5.0, Z3, np.eye(3)), "slider")
    crank = m.add_body(0, J.RevoluteZ(), Transform.rot_y(-PI / 2, (0, 0, 2.1)), SpatialInertia(3.0, (0.5, 0, 0), np.diag([0.0, 1.0, 1.0])), "crank")
    rod_joint = J.Spherical() if spherical else J.EulerZYX()
    rod = m.add_body(crank, rod_joint, Transform.rot_y(PI, (1, 0, 0)), SpatialInertia(1.0, (1.5, 0, 0), np.diag([0.02, 0.76, 0.76])), "rod")
    cs = ConstraintSet()
    # RBDL: rod frame (E = roty(-pi/2), r = (3, 0, 0)); as a pose: Transform(E^T, r), so that
    # both loop frames coincide at q = 0 (see the module docstring)
    X_rod = Transform(_rbdl_roty(-PI / 2).T, (3.0, 0.0, 0.0))
    for axis in (TX, TY, TZ, RZ):
        cs.add_loop_constraint(slider, rod, Transform.translation((0, 0, 0.1)), X_rod, axis, name="loop")
    return m, cs.bind(m)


def _rbdl_roty(a):
    """RBDL's ``roty(a)``: the coordinate rotation matrix, i.e. the physical Ry(a) transposed."""
    return sinews.spatial.rot_y(a).T


# ------------------------------------------------------------------------------------ I
def planar_biped(stance="double"):
    """Scenario I: planar biped on a floating (Tx, Tz, Ry) pelvis; contacts x and z at the
    feet.  RBDL's inertias diag(0, d, 0) are made physical as d * identity (only Iyy acts)."""
    m = sinews.Model(gravity=(0.0, 0.0, -9.81), name="planar-biped")
    pelvis = m.add_body(0, J.MultiAxis([TX, TZ, RY]), None, SpatialInertia(50.0, Z3, np.eye(3) * 50 * 0.04 / 3), "pelvis")
    seg = SpatialInertia(1.0, (0, 0, -0.25), np.eye(3) * 0.25 / 3)
    feet = []
    for side, x in (("left", -0.1), ("right", 0.1)):
        upper = m.add_body(pelvis, J.RevoluteY(), Transform.translation((x, 0, 0)), seg, f"{side}_upper")
        lower = m.add_body(upper, J.RevoluteY(), Transform.translation((0, 0, -0.5)), seg, f"{side}_lower")
        feet.append(lower)
    cs = ConstraintSet()
    for foot in feet if stance == "double" else feet[:1]:
        for normal in (EX, EZ):
            cs.add_contact_constraint(foot, (0, 0, -0.5), normal)
    return m, cs.bind(m)


# ------------------------------------------------------------------------------------ J
def cart_pendulum():
    """Scenario J: cart on a (Tx, Tz, Ry) joint held by loop rows Tz and Ry; link about y."""
    m = sinews.Model(gravity=(0.0, 0.0, -9.81), name="cart-pendulum")
    cart = m.add_body(0, J.MultiAxis([TX, TZ, RY]), None, SpatialInertia(10.0, Z3, np.diag([0.41667, 1.04167, 1.04167])), "cart")
    m.add_body(cart, J.RevoluteY(), None, SpatialInertia(1.0, (0, -0.5, 0), np.diag([1 / 3, 1 / 3, 1 / 30])), "link")
    cs = ConstraintSet()
    for axis in (TZ, RY):
        cs.add_loop_constraint(0, cart, Transform.identity(), Transform.identity(), axis, name="rail")
    return m, cs.bind(m)


# ------------------------------------------------------------------------------------ tests
def test_fourbar_reference_configuration_is_closed():
    m, cs = fourbar()
    assert np.abs(constraint_position_error(m, FOURBAR_Q, cs)).max() < 1e-14


def test_slider_crank_zero_configuration_is_closed():
    for spherical in (False, True):
        m, cs = slider_crank_3d(spherical)
        assert np.abs(constraint_position_error(m, sinews.neutral(m), cs)).max() < 1e-14


def test_pendulum_absolute_state_is_closed():
    m, cs = pendulum_absolute_model()
    qa, qda = pendulum_absolute_state(np.array([PI / 3, PI / 6]), np.array([PI, PI / 2]))
    # rbdl.md §5.2 B lists qa and qda
    np.testing.assert_allclose(qa, [0, 0, 0, PI / 3, 0, 0, 0.866025403784, -0.5, 0, PI / 3, PI / 6, 0], atol=1e-11)
    np.testing.assert_allclose(qda, [0, 0, 0, PI, 0, 0, 1.570796326795, 2.720699046351, 0, PI, PI / 2, 0], atol=1e-11)
    from sinews.constraints import constraint_velocity_error

    assert np.abs(constraint_position_error(m, qa, cs)).max() < 1e-14
    assert np.abs(constraint_velocity_error(m, qa, qda, cs)).max() < 1e-12
