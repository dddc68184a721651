"""Regression tests for defects found by an independent review of the core."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

import sinews
from sinews import joints as J
from sinews import spatial as S
from sinews.interop import PinocchioCoordinates, from_pinocchio, to_pinocchio
from sinews.sample_models import pendulum, quadruped12, random_tree
from sinews.spatial import SpatialInertia, Transform


@pytest.mark.parametrize("seed", range(3))
def test_from_pinocchio_reads_unaligned_and_helical_joints(seed):
    m = random_tree(8, seed, joint_types=["Revolute", "Prismatic", "Helical", "RX", "PZ"])
    back = from_pinocchio(to_pinocchio(m))
    q = sinews.random_configuration(m, seed)
    v = np.random.default_rng(seed).normal(size=m.nv)
    np.testing.assert_allclose(sinews.crba(back, q), sinews.crba(m, q), atol=1e-12)
    np.testing.assert_allclose(sinews.rnea(back, q, v, v), sinews.rnea(m, q, v, v), atol=1e-11)


@pytest.mark.parametrize("eps", [1e-12, 1e-9, 1e-6, 1e-4, 1e-2])
def test_log_so3_is_accurate_near_pi(eps):
    for seed in range(10):
        axis = Rotation.random(random_state=seed).as_rotvec()
        w = axis / np.linalg.norm(axis) * (np.pi - eps)
        np.testing.assert_allclose(S.log_so3(Rotation.from_rotvec(w).as_matrix()), w, atol=1e-13)


@pytest.mark.parametrize("speed", [1e-7, 1e-6, 1e-5, 1e-3])
def test_free_flyer_integrate_small_rotations_match_pinocchio(speed):
    m = quadruped12()
    pm = to_pinocchio(m)
    cv = PinocchioCoordinates(m)
    q = sinews.random_configuration(m, 1, -1, 1)
    v = np.zeros(m.nv)
    v[:3] = speed * np.array([1.0, -2.0, 0.5])
    v[3:6] = [3.0, 10.0, 13.0]
    q1 = sinews.integrate(m, q, v, 1.0)
    qp = pin.integrate(pm, q, cv.v_to_pin(v))
    np.testing.assert_allclose(q1[:3], qp[:3], atol=1e-13)
    np.testing.assert_allclose(sinews.difference(m, q, q1), v, atol=1e-12)


def test_out_must_be_a_writeable_float64_vector():
    m = pendulum(3)
    z = np.zeros(3)
    with pytest.raises(ValueError, match="out must be a writeable C-contiguous float64"):
        sinews.rnea(m, z, z, z, out=np.zeros(3, dtype=np.float32))
    ro = np.zeros(3)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="out must be"):
        sinews.aba(m, z, z, z, out=ro)
    out = np.empty(3)
    assert sinews.aba(m, z, z, z, out=out) is out


def test_model_data_is_not_shared_with_the_caller():
    p = np.array([0.0, 0.0, -1.0])
    com = np.array([0.0, 0.0, -0.5])
    X = Transform.translation(p)
    inertia = SpatialInertia(1.0, com, np.eye(3) * 0.01)
    p[2] = 5.0
    com[2] = 7.0
    assert X.p[2] == -1.0 and inertia.com[2] == -0.5
    with pytest.raises(ValueError):
        X.p[0] = 1.0  # read-only
    with pytest.raises(ValueError):
        J.RevoluteX().axis[0] = 2.0


def test_read_only_inputs_are_accepted():
    m = pendulum(3)
    q = np.array([0.1, 0.2, 0.3])
    q.setflags(write=False)
    np.testing.assert_allclose(sinews.crba(m, q), sinews.crba(m, q.copy()))


def test_errors_name_the_right_argument():
    m = pendulum(3)
    z = np.zeros(3)
    with pytest.raises(ValueError, match="x contains NaN"):
        sinews.minv_times(m, z, np.array([np.nan, 0, 0]))
    with pytest.raises(ValueError, match="tau contains NaN"):
        sinews.forward_dynamics_lagrangian(m, z, z, np.array([np.nan, 0, 0]))
    with pytest.raises(ValueError, match="f_ext must be"):
        sinews.rnea(m, z, z, z, f_ext="abc")
    with pytest.raises(ValueError, match="dt must be a real number"):
        sinews.integrate(m, z, z, "a")
    with pytest.raises(ValueError, match="model must be a sinews.Model"):
        sinews.gravity_torques("not a model", z)
    with pytest.raises(ValueError, match="model must be a sinews.Model"):
        sinews.neutral(None)
    f = sinews.ltl_factor(m, sinews.crba(m, z))
    with pytest.raises(ValueError, match="b contains NaN"):
        f.solve(np.array([np.nan, 0, 0]))
    with pytest.raises(ValueError, match="b must have 3 rows"):
        f.solve(1.0)


def test_world_point_result_is_a_new_array():
    m = pendulum(2)
    p = np.array([1.0, 2.0, 3.0])
    out = sinews.point_position(m, np.zeros(2), 0, p)
    assert out is not p and np.array_equal(out, p)


def test_columns_from_pin_with_one_dof():
    m = pendulum(1)
    pm = to_pinocchio(m)
    pd = pm.createData()
    Jp = pin.computeJointJacobian(pm, pd, np.zeros(1), 1)
    assert PinocchioCoordinates(m).columns_from_pin(Jp).shape == (6, 1)


def test_to_pinocchio_refuses_frame_names_that_shadow_bodies():
    m = pendulum(2)
    m.add_frame("link1", "link2")
    with pytest.raises(ValueError, match="also a body name"):
        to_pinocchio(m)
