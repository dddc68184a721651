"""API fuzzing (see test_api_fuzz.py) of the MuJoCo and Pinocchio coordinate converters:
``sinews.mujoco_import.MujocoCoordinates`` and ``PinocchioCoordinates`` built with a Pinocchio
model that has continuous joints (``q`` of different lengths)."""

from __future__ import annotations

import numpy as np
import pytest
from test_api_fuzz import E, fuzz_tests

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")

from sinews.interop import PinocchioCoordinates, from_pinocchio  # noqa: E402
from sinews.mujoco_import import MujocoCoordinates, from_mujoco  # noqa: E402

XML = """<mujoco><worldbody>
  <body name="base" pos="0 0 1"><freejoint/><geom type="box" size="0.2 0.1 0.05"/>
    <body name="arm" pos="0.2 0 0"><joint name="ball" type="ball" pos="0 0 0.01"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="tip" pos="0.3 0 0"><joint name="hinge" axis="0 1 0"/><joint name="slide" type="slide" axis="1 0 0"/>
        <geom type="sphere" size="0.05"/></body></body></body>
</worldbody></mujoco>"""
MJM = mujoco.MjModel.from_xml_string(XML)
MODEL = from_mujoco(MJM)
CV = MujocoCoordinates(MODEL, MJM)
RNG = np.random.default_rng(3)
QPOS = MJM.qpos0.copy()
QPOS[3:7] = [0.9, 0.1, -0.3, 0.2]
QPOS[3:7] /= np.linalg.norm(QPOS[3:7])
QPOS[7:11] = [0.8, 0.0, 0.6, 0.0]
QPOS[11:] = [0.4, 0.05]
Q = CV.q_from_qpos(QPOS)
V = RNG.uniform(-1, 1, MODEL.nv)
A = RNG.uniform(-1, 1, MODEL.nv)
M_MJ = np.eye(MODEL.nv) + 0.1

PM = pin.Model()
_j = PM.addJoint(0, pin.JointModelRUBZ(), pin.SE3.Identity(), "wheel")
PM.appendBodyToJoint(_j, pin.Inertia.FromBox(1.0, 0.1, 0.2, 0.3), pin.SE3.Identity())
_j = PM.addJoint(_j, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "float")
PM.appendBodyToJoint(_j, pin.Inertia.FromBox(1.0, 0.1, 0.2, 0.3), pin.SE3.Identity())
PMODEL = from_pinocchio(PM)
PCV = PinocchioCoordinates(PMODEL, PM)
QP = PCV.q_to_pin(np.r_[0.7, 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0])


def _m(**kw):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()}


TABLE = [
    E(MujocoCoordinates.q_from_qpos, lambda: _m(self=CV, qpos=QPOS), "qpos"),
    E(MujocoCoordinates.qpos_from_q, lambda: _m(self=CV, q=Q), "q"),
    E(MujocoCoordinates.v_from_qvel, lambda: _m(self=CV, q=Q, qvel=V), "q:q qvel"),
    E(MujocoCoordinates.qvel_from_v, lambda: _m(self=CV, q=Q, v=V), "q:q v"),
    E(MujocoCoordinates.qacc_from_a, lambda: _m(self=CV, q=Q, v=V, a=A), "q:q v a"),
    E(MujocoCoordinates.a_from_qacc, lambda: _m(self=CV, q=Q, v=V, qacc=A), "q:q v qacc"),
    E(MujocoCoordinates.force_from_qfrc, lambda: _m(self=CV, q=Q, qfrc=A), "q:q qfrc"),
    E(MujocoCoordinates.T, lambda: _m(self=CV, q=Q), "q:q"),
    E(MujocoCoordinates.matrix_from_mj, lambda: _m(self=CV, q=Q, M_mj=M_MJ), "q:q M_mj"),
    E(PinocchioCoordinates.q_to_pin, lambda: _m(self=PCV, q=PCV.q_from_pin(QP)), "q", label="continuous"),
    E(PinocchioCoordinates.q_from_pin, lambda: _m(self=PCV, q=QP), "q", label="continuous"),
]

test_api_fuzz = fuzz_tests(TABLE)
