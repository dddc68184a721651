"""Spatial algebra: identities and an independent oracle (SciPy's Rotation)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from sinews import spatial as S
from sinews.spatial import SpatialInertia, Transform

vec3 = st.lists(st.floats(-3, 3), min_size=3, max_size=3).map(np.array)
vec6 = st.lists(st.floats(-3, 3), min_size=6, max_size=6).map(np.array)


def random_transform(seed):
    rng = np.random.default_rng(seed)
    return Transform(Rotation.random(random_state=seed).as_matrix(), rng.normal(size=3))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10**6))
def test_quaternion_matches_scipy(seed):
    rot = Rotation.random(random_state=seed)
    quat = rot.as_quat()  # scalar last, like sinews
    np.testing.assert_allclose(S.quat_to_matrix(quat), rot.as_matrix(), atol=1e-12)
    back = S.matrix_to_quat(rot.as_matrix())
    assert min(np.abs(back - quat).max(), np.abs(back + quat).max()) < 1e-12


@settings(max_examples=50, deadline=None)
@given(vec3)
def test_rpy_matches_scipy_extrinsic_xyz(rpy):
    R = S.rpy_to_matrix(*rpy)
    np.testing.assert_allclose(R, Rotation.from_euler("xyz", rpy).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(S.rpy_to_matrix(*S.matrix_to_rpy(R)), R, atol=1e-10)


@settings(max_examples=50, deadline=None)
@given(vec3)
def test_exp_log_so3_match_scipy(w):
    np.testing.assert_allclose(S.exp_so3(w), Rotation.from_rotvec(w).as_matrix(), atol=1e-12)
    if np.linalg.norm(w) < np.pi - 1e-3:
        np.testing.assert_allclose(S.log_so3(S.exp_so3(w)), w, atol=1e-9)


def test_axis_rotations_are_consistent():
    a = 0.7
    for axis, f in zip(np.eye(3), (S.rot_x, S.rot_y, S.rot_z)):
        np.testing.assert_allclose(f(a), S.rot_axis(axis, a), atol=1e-15)
        np.testing.assert_allclose(f(a), Rotation.from_rotvec(axis * a).as_matrix(), atol=1e-15)


@settings(max_examples=50, deadline=None)
@given(vec6)
def test_exp_log_se3(twist):
    R, p = S.exp_se3(twist)
    if np.linalg.norm(twist[:3]) < np.pi - 1e-3:
        np.testing.assert_allclose(S.log_se3(R, p), twist, atol=1e-9)
    # exp of a pure translation
    R, p = S.exp_se3(np.r_[0, 0, 0, twist[3:]])
    np.testing.assert_allclose(p, twist[3:])


@pytest.mark.parametrize("seed", range(5))
def test_transform_actions_match_matrices(seed):
    X = random_transform(seed)
    rng = np.random.default_rng(seed)
    m, f, x = rng.normal(size=6), rng.normal(size=6), rng.normal(size=3)
    np.testing.assert_allclose(X.act_motion(m), X.motion_matrix() @ m, atol=1e-12)
    np.testing.assert_allclose(X.act_force(f), X.force_matrix() @ f, atol=1e-12)
    # power is frame-invariant: (X m) . (X* f) = m . f
    assert np.isclose(X.act_motion(m) @ X.act_force(f), m @ f)
    # force matrix is the inverse transpose of the motion matrix
    np.testing.assert_allclose(X.force_matrix(), np.linalg.inv(X.motion_matrix()).T, atol=1e-12)
    # composition and inverse
    Y = random_transform(seed + 100)
    np.testing.assert_allclose((X @ Y).motion_matrix(), X.motion_matrix() @ Y.motion_matrix(), atol=1e-12)
    np.testing.assert_allclose((X @ X.inverse()).homogeneous(), np.eye(4), atol=1e-12)
    np.testing.assert_allclose(X.act_point(x), X.R @ x + X.p)
    np.testing.assert_allclose(X.homogeneous() @ np.r_[x, 1.0], np.r_[X.R @ x + X.p, 1.0])


@settings(max_examples=50, deadline=None)
@given(vec6, vec6, vec6)
def test_cross_products(m, u, f):
    np.testing.assert_allclose(S.cross_motion(m, u), S.motion_cross_matrix(m) @ u, atol=1e-12)
    np.testing.assert_allclose(S.cross_force(m, f), S.force_cross_matrix(m) @ f, atol=1e-12)
    # m x m = 0 and the duality (m x u) . f = -u . (m x* f)
    np.testing.assert_allclose(S.cross_motion(m, m), 0, atol=1e-12)
    assert np.isclose(S.cross_motion(m, u) @ f, -u @ S.cross_force(m, f), atol=1e-9)


def test_spatial_inertia_matrix_and_kinetic_energy():
    rng = np.random.default_rng(0)
    R = Rotation.random(random_state=1).as_matrix()
    I = SpatialInertia(2.5, rng.normal(size=3), R @ np.diag([0.3, 0.4, 0.5]) @ R.T)
    v = rng.normal(size=6)
    # kinetic energy by hand: 1/2 m |v_c|^2 + 1/2 w^T Ic w with v_c = v_o + w x c
    w, vo = v[:3], v[3:]
    vc = vo + np.cross(w, I.com)
    T = 0.5 * I.mass * vc @ vc + 0.5 * w @ I.inertia_com @ w
    assert np.isclose(0.5 * v @ I.matrix() @ v, T)
    # transforming the inertia = congruence with the force/motion matrices
    X = random_transform(3)
    Xm = X.inverse().motion_matrix()
    np.testing.assert_allclose(I.transformed(X).matrix(), Xm.T @ I.matrix() @ Xm, atol=1e-12)
    # adding inertias adds matrices
    J = SpatialInertia.from_box(1.0, (0.1, 0.2, 0.3), com=(0.1, 0, 0))
    np.testing.assert_allclose((I + J).matrix(), I.matrix() + J.matrix(), atol=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="quat must be a unit quaternion"):
        S.quat_to_matrix([0, 0, 0, 2.0])
    with pytest.raises(ValueError, match="m must have shape"):
        S.cross_motion(np.zeros(5), np.zeros(6))
    with pytest.raises(ValueError, match="T must have shape"):
        Transform.from_matrix(np.eye(3))
    with pytest.raises(ValueError, match="p must be finite"):
        Transform(np.eye(3), [0, np.nan, 0])
