"""``from_mujoco``: MuJoCo's own dynamics as the oracle (issue 10 item 2 and its done-criterion).

A humanoid written in MJCF here (free root, bodies with several hinges about offset anchors,
ball joints, a slide joint, joint reference positions, unnormalised axes, armature, damping,
explicit and geom-derived inertias) must match ``mujoco.mj_forward``'s ``qacc`` at random
states to 1e-9 with the constraints disabled, as well as its mass matrix (``mj_fullM``) and
bias forces (``qfrc_bias``), and its body poses (``xpos``/``xquat``).
"""

import numpy as np
import pytest

import sinews

mujoco = pytest.importorskip("mujoco")
from sinews.mujoco_import import MujocoCoordinates, MujocoGeom, from_mujoco, mujoco_geoms  # noqa: E402

HUMANOID = """
<mujoco model="humanoid">
  <compiler angle="radian"/>
  <option gravity="0.1 -0.2 -9.81"/>
  <default>
    <joint armature="0.02" damping="0.5"/>
    <geom type="capsule" size="0.05" friction="0.9 0.01 0.001"/>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1.4" quat="0.99 0.05 0.1 0.0">
      <freejoint name="root"/>
      <geom name="torso_geom" fromto="0 -0.07 0 0 0.07 0" size="0.07"/>
      <site name="imu" pos="0 0 0.1" quat="0 1 0 0"/>
      <body name="head" pos="0 0 0.19">
        <joint name="neck" type="ball" pos="0 0 -0.04" armature="0.05" damping="0.2"/>
        <geom name="head_geom" type="sphere" size="0.09"/>
      </body>
      <body name="lower_torso" pos="-0.01 0 -0.26" quat="1 0 -0.05 0">
        <joint name="abdomen_z" axis="0 0 1" pos="0 0 0.065" range="-0.8 0.8"/>
        <joint name="abdomen_y" axis="0 1 0" pos="0 0 0.065" ref="0.1"/>
        <geom fromto="0 -0.06 0 0 0.06 0" size="0.06"/>
        <body name="pelvis" pos="0 0 -0.165" quat="1 0 -0.06 0">
          <joint name="abdomen_x" axis="1 0 0" pos="0 0 0.1" armature="0.1"/>
          <geom fromto="-0.02 -0.07 0 -0.02 0.07 0" size="0.09"/>
          <body name="right_thigh" pos="0 -0.1 -0.04">
            <joint name="right_hip_x" axis="1 0 0" range="-0.4 0.1"/>
            <joint name="right_hip_z" axis="0 0 1" pos="0.01 0 0" range="-1 0.6"/>
            <joint name="right_hip_y" axis="0 1 0" pos="0 0.02 0" range="-2 0.3" armature="0.03"/>
            <geom fromto="0 0 0 0 0.01 -0.34" size="0.06"/>
            <body name="right_shin" pos="0 0.01 -0.403">
              <joint name="right_knee" pos="0 0 0.02" axis="0 -1 0" range="-2.8 0"/>
              <geom fromto="0 0 0 0 0 -0.3" size="0.049"/>
              <body name="right_foot" pos="0 0 -0.45">
                <inertial pos="0.03 0 0.02" quat="0.9 0.1 0.3 0.2" mass="0.8" diaginertia="0.004 0.003 0.002"/>
                <joint name="right_ankle_y" axis="0 1 0" pos="0 0 0.08"/>
                <joint name="right_ankle_x" axis="1 0 0.5" pos="0 0 0.04"/>
                <geom type="box" size="0.1 0.04 0.02"/>
              </body>
            </body>
          </body>
          <body name="left_thigh" pos="0 0.1 -0.04">
            <joint name="left_hip" type="ball" pos="0 0.01 0.02"/>
            <geom fromto="0 0 0 0 -0.01 -0.34" size="0.06"/>
            <body name="left_shin" pos="0 -0.01 -0.403">
              <joint name="left_knee" pos="0 0 0.02" axis="0 -1 0" ref="-0.3"/>
              <geom fromto="0 0 0 0 0 -0.3" size="0.049"/>
            </body>
          </body>
        </body>
      </body>
      <body name="right_upper_arm" pos="0 -0.17 0.06">
        <joint name="right_shoulder1" axis="2 1 1" pos="0 0 0"/>
        <joint name="right_shoulder2" axis="0 -1 1" pos="0 0.01 0"/>
        <geom fromto="0 0 0 0.16 -0.16 -0.16" size="0.04"/>
        <body name="right_lower_arm" pos="0.18 -0.18 -0.18">
          <joint name="right_elbow" axis="0 -1 1" pos="0 0 0" ref="0.4" damping="1.5"/>
          <geom fromto="0.01 0.01 0.01 0.17 0.17 0.17" size="0.031"/>
        </body>
      </body>
      <body name="left_upper_arm" pos="0 0.17 0.06">
        <joint name="left_shoulder" type="ball" pos="0 -0.01 0.01"/>
        <geom fromto="0 0 0 0.16 0.16 -0.16" size="0.04"/>
        <body name="left_lower_arm" pos="0.18 0.18 -0.18">
          <joint name="left_forearm_slide" type="slide" axis="1 1 1" ref="0.02" range="-0.05 0.05"/>
          <joint name="left_elbow" axis="0 -1 -1" pos="0.01 0 0"/>
          <geom fromto="0.01 -0.01 0.01 0.17 -0.17 0.17" size="0.031"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _humanoid():
    mjm = mujoco.MjModel.from_xml_string(HUMANOID)
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    return mjm


def _random_state(mjm, rng):
    qpos = mjm.qpos0.copy()
    for j in range(mjm.njnt):
        qa, t = mjm.jnt_qposadr[j], mjm.jnt_type[j]
        if t == 0:  # free: position and a unit quaternion (w, x, y, z)
            qpos[qa : qa + 3] = rng.uniform(-1.0, 1.0, 3)
            quat = rng.normal(size=4)
            qpos[qa + 3 : qa + 7] = quat / np.linalg.norm(quat)
        elif t == 1:
            quat = rng.normal(size=4)
            qpos[qa : qa + 4] = quat / np.linalg.norm(quat)
        else:
            qpos[qa] = rng.uniform(-1.2, 1.2) if t == 3 else rng.uniform(-0.05, 0.05)
    return qpos, rng.normal(size=mjm.nv), rng.normal(size=mjm.nv) * 5.0


def _close(ours, theirs, what):
    scale = max(1.0, float(np.max(np.abs(theirs))))
    np.testing.assert_allclose(ours, theirs, atol=1e-9 * scale, rtol=0, err_msg=what)


def _check_against_mujoco(mjm, model, rng, states=4):
    cv = MujocoCoordinates(model, mjm)
    d = mujoco.MjData(mjm)
    names = [mujoco.mj_id2name(mjm, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}" for b in range(mjm.nbody)]
    for _ in range(states):
        qpos, qvel, qfrc = _random_state(mjm, rng)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
        mujoco.mj_forward(mjm, d)
        q = cv.q_from_qpos(qpos)
        np.testing.assert_array_equal(cv.qpos_from_q(q), qpos)
        v = cv.v_from_qvel(q, qvel)
        _close(cv.qvel_from_v(q, v), qvel, "qvel round trip")
        # poses: the sinews body frame is MuJoCo's body frame
        for b in range(1, mjm.nbody):
            X = sinews.body_placement(model, q, names[b])
            _close(X.p, d.xpos[b], f"xpos of {names[b]}")
            _close(X.R, d.xmat[b].reshape(3, 3), f"xmat of {names[b]}")
        # mass matrix (armature included) and bias forces
        M_mj = np.zeros((mjm.nv, mjm.nv))
        try:
            mujoco.mj_fullM(mjm, d, M_mj)  # MuJoCo >= 3.4
        except TypeError:
            mujoco.mj_fullM(mjm, M_mj, d.qM)
        M = sinews.crba(model, q)
        _close(M, cv.matrix_from_mj(q, M_mj), "M")
        Tdot_v = cv.qacc_from_a(q, v, np.zeros(model.nv))
        _close(sinews.nonlinear_effects(model, q, v), cv.force_from_qfrc(q, d.qfrc_bias + M_mj @ Tdot_v), "bias")
        # passive force = the damping only; then the accelerations
        _close(cv.force_from_qfrc(q, d.qfrc_passive), -model.damping * v, "qfrc_passive")
        tau = cv.force_from_qfrc(q, qfrc) - model.damping * v
        a = sinews.aba(model, q, v, tau)
        _close(cv.qacc_from_a(q, v, a), d.qacc, "qacc (aba)")
        _close(cv.a_from_qacc(q, v, d.qacc), a, "a from qacc")
        a_lagrangian = np.linalg.solve(M, tau - sinews.nonlinear_effects(model, q, v))
        _close(cv.qacc_from_a(q, v, a_lagrangian), d.qacc, "qacc (crba)")


def test_mujoco_humanoid_matches_mj_forward():
    mjm = _humanoid()
    model = from_mujoco(mjm)
    assert (model.nq, model.nv) == (mjm.nq, mjm.nv)
    assert mjm.nq == 7 + 4 * 3 + 15 and mjm.nv == 6 + 3 * 3 + 15  # free, 3 balls, 14 hinges + 1 slide
    _check_against_mujoco(mjm, model, np.random.default_rng(0))


def test_mujoco_joint_properties_gravity_and_sites():
    mjm = _humanoid()
    model = from_mujoco(mjm)
    cv = MujocoCoordinates(model, mjm)
    np.testing.assert_array_equal(model.gravity, [0.1, -0.2, -9.81])
    # per dof, with the free joint's [lin; ang] reordered to [ang; lin]
    np.testing.assert_array_equal(model.armature, cv.force_from_qfrc(mjm.qpos0 * 0 + _unit_q(cv), mjm.dof_armature))
    np.testing.assert_array_equal(model.damping[6:], mjm.dof_damping[6:])
    knee = model.joint_properties("right_knee")
    assert (knee.lower[0], knee.upper[0]) == (-2.8, 0.0)
    slide = model.joint_properties("left_forearm_slide")
    assert (slide.lower[0], slide.upper[0]) == (-0.05, 0.05)
    assert model.joint_properties("neck").armature.tolist() == [0.05] * 3
    assert np.all(np.isinf(model.joint_properties("left_shoulder").lower))
    # sites are frames on their body
    f = model.frame("imu")
    assert model.bodies[f.body].name == "torso"
    np.testing.assert_allclose(f.X_body_frame.p, [0.0, 0.0, 0.1])
    # gravity off in MuJoCo: off here
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_GRAVITY)
    assert not np.any(from_mujoco(mjm).gravity)


def _unit_q(cv):
    """An identity-orientation configuration (the free joint's T is then a permutation)."""
    q = np.zeros(cv.model.nq)
    for i in cv._quats:
        q[i + 3] = 1.0
    return cv.qpos_from_q(q)


ARM = """
<mujoco>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="base" pos="0.1 0 0.2">
      <joint name="slider" type="slide" axis="0 1 0" armature="0.4" damping="2"/>
      <geom type="box" size="0.1 0.1 0.05" mass="3"/>
      <body name="ball_link" pos="0 0 0.1">
        <joint name="ball" type="ball" pos="0 0 0.05" armature="0.07" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="tip" pos="0.3 0 0" euler="0.3 0.2 0.1">
          <joint name="hinge" axis="1 2 3" pos="0.02 0 0" armature="0.01" frictionloss="0.3"/>
          <geom type="sphere" size="0.05" pos="0.05 0 0"/>
        </body>
      </body>
    </body>
    <body name="floater" pos="1 1 1">
      <joint type="free" armature="0.3" damping="0.2"/>
      <inertial pos="0.1 0.05 0" quat="0.8 0.2 0.5 0.1" mass="2" diaginertia="0.3 0.2 0.15"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_mujoco_armature_slide_ball_and_free_base():
    mjm = mujoco.MjModel.from_xml_string(ARM)
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    # MuJoCo's armature on a free joint's translation acts in world axes: refused (it would not
    # match, see below), and dropped with unsupported="warn"
    with pytest.raises(ValueError, match="armature on the translation of free joint"):
        from_mujoco(mjm)
    with pytest.warns(UserWarning, match="free joint"):
        assert from_mujoco(mjm, unsupported="warn").armature[5:].tolist() == [0.3] * 3 + [0.0] * 3
    mjm.dof_armature[5:8] = 0.0  # the free joint's translation (MuJoCo's dofs 5-7)
    model = from_mujoco(mjm)
    assert model.armature.tolist() == [0.4, 0.07, 0.07, 0.07, 0.01] + [0.3] * 3 + [0.0] * 3
    assert model.friction[4] == 0.3
    assert model.body("floater_joint0").joint.kind == "FreeFlyer"  # unnamed free joint
    _check_against_mujoco(mjm, model, np.random.default_rng(3), states=3)


def test_mujoco_geoms_are_recorded_on_the_sinews_bodies():
    mjm = _humanoid()
    model = from_mujoco(mjm)
    geoms = mujoco_geoms(mjm)
    assert len(geoms) == mjm.ngeom and all(isinstance(g, MujocoGeom) for g in geoms)
    floor = geoms[0]
    assert (floor.name, floor.body, floor.type) == ("floor", "world", "plane")
    head = next(g for g in geoms if g.name == "head_geom")
    assert head.type == "sphere" and head.size[0] == pytest.approx(0.09)
    np.testing.assert_allclose(head.friction, [0.9, 0.01, 0.001])
    # a geom's world pose from the sinews body pose equals MuJoCo's geom_xpos / geom_xmat
    d = mujoco.MjData(mjm)
    qpos, _, _ = _random_state(mjm, np.random.default_rng(5))
    d.qpos[:] = qpos
    mujoco.mj_forward(mjm, d)
    q = MujocoCoordinates(model, mjm).q_from_qpos(qpos)
    for gid, g in enumerate(geoms):
        X = sinews.body_placement(model, q, g.body) @ g.X_body_geometry
        _close(X.p, d.geom_xpos[gid], f"geom {gid} position")
        _close(X.R, d.geom_xmat[gid].reshape(3, 3), f"geom {gid} rotation")


TENDON = """
<mujoco>
  <worldbody>
    <body name="a"><joint name="j1"/><geom size="0.1"/>
      <body name="b" pos="0 0 -0.3"><joint name="j2" stiffness="3"/><geom size="0.1"/></body>
    </body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="j1" coef="1"/><joint joint="j2" coef="-1"/></fixed></tendon>
  <equality><joint joint1="j1" joint2="j2"/></equality>
</mujoco>
"""


def test_mujoco_unsupported_features_are_refused_or_dropped_with_a_warning():
    mjm = mujoco.MjModel.from_xml_string(TENDON)
    with pytest.raises(ValueError) as err:
        from_mujoco(mjm)
    msg = str(err.value)
    assert "tendon" in msg and "equality" in msg and "stiffness" in msg and "unsupported='warn'" in msg
    with pytest.warns(UserWarning, match="tendon"):
        model = from_mujoco(mjm, unsupported="warn")
    assert model.nv == 2
    with pytest.raises(ValueError, match="unsupported"):
        from_mujoco(mjm, unsupported="ignore")
    with pytest.raises(ValueError, match="mj_model"):
        from_mujoco("humanoid.xml")


def test_mujoco_coordinates_check_their_arguments():
    mjm = mujoco.MjModel.from_xml_string(ARM)
    mjm.dof_armature[5:8] = 0.0
    model = from_mujoco(mjm)
    cv = MujocoCoordinates(model, mjm)
    with pytest.raises(ValueError, match="qpos"):
        cv.q_from_qpos(np.zeros(model.nq + 1))
    with pytest.raises(ValueError, match="qvel"):
        cv.v_from_qvel(np.zeros(model.nq), [np.nan] * model.nv)
    other = from_mujoco(mujoco.MjModel.from_xml_string(HUMANOID))
    with pytest.raises(ValueError, match="mj_model"):
        MujocoCoordinates(other, mjm)


LOOPS = """
<mujoco>
  <option jacobian="dense"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="ground_site" pos="-0.45 0.52 0.93" quat="0.7 0.1 -0.2 0.1"/>
    <body name="crank" pos="0 0 0.5">
      <joint name="j_crank" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
      <body name="coupler" pos="0.2 0 0">
        <joint name="j_coupler" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0.1" size="0.02"/>
      </body>
    </body>
    <body name="rocker" pos="0.6 0 0.3">
      <joint name="j_rocker" axis="0 1 0"/>
      <joint name="j_rocker_x" axis="1 0 0" pos="0 0 0.05"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 0.3" size="0.02"/>
    </body>
    <body name="slab" pos="-0.5 0.5 1">
      <joint name="slab_ball" type="ball"/>
      <geom type="box" size="0.1 0.05 0.02"/>
      <site name="slab_site" pos="0.05 0.02 -0.07" quat="0.7 0.1 -0.2 0.1"/>
    </body>
    <body name="gear_a" pos="0 1 0"><joint name="ga" axis="0 0 1"/><geom type="sphere" size="0.1"/></body>
    <body name="gear_b" pos="0.5 1 0"><joint name="gb" axis="0 0 1" ref="0.2"/><geom type="sphere" size="0.1"/></body>
    <body name="block" pos="1 -1 0.5">
      <joint name="bx" type="slide" axis="1 0 0"/><joint name="by" type="slide" axis="0 1 0"/>
      <joint name="bz" type="hinge" axis="0 0 1"/>
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="lid" pos="0 0 0.15"><joint name="lid_hinge" axis="1 0 0"/><geom type="box" size="0.1 0.1 0.02"/></body>
    </body>
  </worldbody>
  <equality>
    <connect name="close" body1="coupler" body2="rocker" anchor="0.5 0 0.1"/>
    <joint name="gearing" joint1="gb" joint2="ga" polycoef="0.1 -2 0 0 0"/>
    <weld name="glue" body1="block" body2="lid" relpose="0 0 0.15 1 0 0 0"/>
    <weld name="site_weld" site1="slab_site" site2="ground_site"/>
  </equality>
</mujoco>
"""


def test_mujoco_equality_constraints_match_mujoco_rows():
    """connect, weld (body and site) and joint equalities: the same zero set (configurations
    assembled by sinews satisfy MuJoCo's equalities; the compiler's anchors make the connect and
    the body weld hold at qpos0, the sites of the site weld coincide there; error sizes match MuJoCo's efc_pos at random states) and, on the
    constraint manifold, the same constraint directions (row spaces of MuJoCo's efc_J T and of
    sinews' G coincide)."""
    from sinews.constraints import assemble_q, constraint_jacobian, constraint_position_error
    from sinews.mujoco_import import mujoco_constraints

    mjm = mujoco.MjModel.from_xml_string(LOOPS)
    with pytest.raises(ValueError, match="mujoco_constraints"):
        from_mujoco(mjm)
    with pytest.warns(UserWarning, match="equality"):
        model = from_mujoco(mjm, unsupported="warn")
    cs = mujoco_constraints(mjm, model)
    assert [g.name for g in cs.groups] == ["close", "gearing", "glue", "site_weld"]
    cs.bind(model)
    cv = MujocoCoordinates(model, mjm)
    d = mujoco.MjData(mjm)
    rows_mj = {"close": slice(0, 3), "gearing": slice(3, 4), "glue": slice(4, 10), "site_weld": slice(10, 16)}

    def mj_rows(q):
        d.qpos[:] = cv.qpos_from_q(q)
        mujoco.mj_forward(mjm, d)
        rows = np.flatnonzero(d.efc_type == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY))
        assert rows.size == 16
        return d.efc_pos[rows].copy(), d.efc_J.reshape(d.nefc, mjm.nv)[rows] @ cv.T(q)

    q0 = cv.q_from_qpos(mjm.qpos0)
    pos, _ = mj_rows(q0)
    for name in ("close", "glue", "site_weld"):
        np.testing.assert_allclose(constraint_position_error(model, q0, cs)[cs.rows(name)], 0.0, atol=1e-12)
        np.testing.assert_allclose(pos[rows_mj[name]], 0.0, atol=1e-12)
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = sinews.normalize(model, q0 + rng.uniform(-0.4, 0.4, model.nq))
        phi = constraint_position_error(model, q, cs)
        pos, _ = mj_rows(q)
        for name in ("close", "gearing", "site_weld"):  # translation errors: the same size
            n = 3 if name != "gearing" else 1
            err_mj = np.linalg.norm(pos[rows_mj[name]][:n])
            assert np.linalg.norm(phi[cs.rows(name)][:n]) == pytest.approx(err_mj, rel=1e-9, abs=1e-12), name
        r = assemble_q(model, q, cs, np.ones(model.nv))
        assert r.converged
        pos, J = mj_rows(r.q)
        np.testing.assert_allclose(pos, 0.0, atol=1e-9)  # MuJoCo agrees: every equality holds
        G = constraint_jacobian(model, r.q, cs)
        for g in cs.groups:
            Jm, Gs = J[rows_mj[g.name]], G[cs.rows(g.name)]
            rank = np.linalg.matrix_rank(Jm, tol=1e-9)
            assert rank >= 1 and np.linalg.matrix_rank(Gs, tol=1e-9) == rank, g.name
            assert np.linalg.matrix_rank(np.vstack([Jm, Gs]), tol=1e-8) == rank, g.name
