"""Bad input gets a clear error naming the argument: one test per case."""

import numpy as np
import pytest

import sinews
from sinews import joints as J
from sinews.sample_models import pendulum, quadruped12
from sinews.spatial import SpatialInertia, Transform


@pytest.fixture
def model():
    return pendulum(3)


def test_wrong_shape_q(model):
    with pytest.raises(ValueError, match=r"q must have shape \(3,\)"):
        sinews.rnea(model, np.zeros(4), np.zeros(3), np.zeros(3))


def test_wrong_shape_v(model):
    with pytest.raises(ValueError, match="v must have shape"):
        sinews.aba(model, np.zeros(3), np.zeros((3, 1)), np.zeros(3))


def test_wrong_shape_tau(model):
    with pytest.raises(ValueError, match="tau must have shape"):
        sinews.aba(model, np.zeros(3), np.zeros(3), np.zeros(2))


def test_wrong_dtype(model):
    with pytest.raises(ValueError, match="q must contain real numbers"):
        sinews.crba(model, np.array(["a", "b", "c"]))


def test_complex_input_rejected(model):
    with pytest.raises(ValueError, match="q must contain real numbers"):
        sinews.crba(model, np.zeros(3, dtype=complex) + 1j)


def test_nan_in_q(model):
    with pytest.raises(ValueError, match="q contains NaN"):
        sinews.crba(model, np.array([0.0, np.nan, 0.0]))


def test_nan_in_v(model):
    with pytest.raises(ValueError, match="v contains NaN"):
        sinews.rnea(model, np.zeros(3), np.array([0.0, np.inf, 0.0]), np.zeros(3))


def test_nan_in_tau(model):
    with pytest.raises(ValueError, match="tau contains NaN"):
        sinews.aba(model, np.zeros(3), np.zeros(3), np.array([np.nan, 0.0, 0.0]))


def test_nan_in_f_ext(model):
    F = np.zeros((model.nbodies, 6))
    F[2, 4] = np.nan
    with pytest.raises(ValueError, match="f_ext contains NaN"):
        sinews.rnea(model, np.zeros(3), np.zeros(3), np.zeros(3), F)


def test_f_ext_wrong_shape(model):
    with pytest.raises(ValueError, match=r"f_ext must have shape \(4, 6\)"):
        sinews.rnea(model, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros((3, 6)))


def test_nan_in_point(model):
    with pytest.raises(ValueError, match="point contains NaN"):
        sinews.point_position(model, np.zeros(3), "link1", [0.0, np.nan, 0.0])


def test_unknown_body_name(model):
    with pytest.raises(KeyError, match="no body named 'hand'"):
        sinews.point_jacobian(model, np.zeros(3), "hand")


def test_unknown_body_id(model):
    with pytest.raises(KeyError, match="no body with id 17"):
        sinews.point_position(model, np.zeros(3), 17)


def test_unknown_frame_name(model):
    pl = sinews.forward_kinematics(model, np.zeros(3))
    with pytest.raises(KeyError, match="no frame named 'toolx'"):
        pl.frame("toolx")


def test_missing_parent():
    m = sinews.Model()
    with pytest.raises(KeyError, match="parent: no body named 'base'"):
        m.add_body("base", J.RevoluteZ())


def test_non_unit_axis():
    with pytest.raises(ValueError, match="axis must be a unit vector"):
        J.Revolute([0.0, 0.0, 2.0])


def test_non_unit_multi_axis():
    with pytest.raises(ValueError, match="unit screw"):
        J.MultiAxis([[0.0, 0.0, 0.5, 0.0, 0.0, 0.0]])


def test_non_positive_definite_inertia():
    with pytest.raises(ValueError, match="inertia_com must be positive semi-definite"):
        SpatialInertia(1.0, [0, 0, 0], np.diag([1.0, 1.0, -1.0]))


def test_inertia_violating_triangle_inequality():
    with pytest.raises(ValueError, match="triangle inequality"):
        SpatialInertia(1.0, [0, 0, 0], np.diag([1.0, 1.0, 5.0]))


def test_negative_mass():
    with pytest.raises(ValueError, match="mass must be finite and non-negative"):
        SpatialInertia(-1.0, [0, 0, 0], np.eye(3))


def test_non_rotation_placement():
    with pytest.raises(ValueError, match="R must be a rotation matrix"):
        Transform(np.diag([1.0, 1.0, -1.0]), [0, 0, 0])


def test_duplicate_body_name(model):
    m = sinews.Model()
    m.add_body(0, J.RevoluteZ(), name="a")
    with pytest.raises(ValueError, match="name 'a' is already used"):
        m.add_body(0, J.RevoluteZ(), name="a")


def test_adding_after_finalize_is_refused(model):
    sinews.crba(model, np.zeros(3))
    with pytest.raises(RuntimeError, match="finalized"):
        model.add_body(0, J.RevoluteZ())


def test_joint_argument_type():
    with pytest.raises(ValueError, match="joint must be a sinews.joints joint"):
        sinews.Model().add_body(0, "revolute")


def test_massless_subtree_is_reported_not_nan():
    m = sinews.Model()
    m.add_body(0, J.RevoluteZ(), None, SpatialInertia.zero(), "ghost")
    with pytest.raises(ValueError, match="articulated inertia at body 'ghost' is singular"):
        sinews.aba(m, np.zeros(1), np.zeros(1), np.ones(1))


def test_non_unit_quaternion_in_integrate():
    m = quadruped12()
    q = sinews.neutral(m)
    q[6] = 2.0
    with pytest.raises(ValueError, match="unit quaternion"):
        sinews.integrate(m, q, np.zeros(m.nv), 0.1)


def test_bad_gravity(model):
    with pytest.raises(ValueError, match="gravity must be a finite 3-vector"):
        model.gravity = [0.0, 0.0]


def test_wrong_data_for_model(model):
    other = pendulum(3)
    with pytest.raises(ValueError, match="data must be a sinews.Data created for this model"):
        sinews.crba(model, np.zeros(3), data=other.data())


def test_body_jacobian_unknown_frame_kind(model):
    with pytest.raises(ValueError, match="frame must be 'local'"):
        sinews.body_jacobian(model, np.zeros(3), "link1", "body")


def test_bodies_welded_to_the_world_stay_on_the_ground():
    """Regression: a body welded to the world (link index -1) must not leak into the last link."""
    m = sinews.Model()
    base = m.add_body(0, J.Fixed(), Transform.translation([0, 0, 1.0]), SpatialInertia.from_box(5.0, (1, 1, 1)), "base")
    plate = m.add_body(base, J.Fixed(), Transform.translation([0.5, 0, 0]), SpatialInertia.point_mass(3.0), "plate")
    rod = m.add_body(base, J.RevoluteY(), None, SpatialInertia.from_rod(1.0, 1.0), "rod")
    m.add_frame("on_plate", plate, Transform.translation([0, 0.1, 0]))
    ref = sinews.Model()
    ref.add_body(0, J.RevoluteY(), Transform.translation([0, 0, 1.0]), SpatialInertia.from_rod(1.0, 1.0), "rod")
    q = np.array([0.4])
    np.testing.assert_allclose(sinews.crba(m, q), sinews.crba(ref, q), atol=1e-14)
    pl = sinews.forward_kinematics(m, q)
    np.testing.assert_allclose(pl.p[plate], [0.5, 0, 1.0], atol=1e-14)
    np.testing.assert_allclose(pl.R[base], np.eye(3), atol=1e-14)
    np.testing.assert_allclose(pl.frame("on_plate").p, [0.5, 0.1, 1.0], atol=1e-14)
    np.testing.assert_allclose(pl.p[rod], [0, 0, 1.0], atol=1e-14)
    F = np.zeros((m.nbodies, 6))
    F[plate] = [0, 7.0, 0, 0, 0, 5.0]
    z = np.zeros(1)
    np.testing.assert_allclose(sinews.rnea(m, q, z, z, F), sinews.rnea(ref, q, z, z), atol=1e-12)
    np.testing.assert_allclose(sinews.point_jacobian(m, q, plate), np.zeros((3, 1)))


def test_warmup_can_be_called_twice():
    """Regression: importing the implementation module must not shadow ``sinews.warmup``."""
    sinews.warmup()
    sinews.warmup()
    assert callable(sinews.warmup)
