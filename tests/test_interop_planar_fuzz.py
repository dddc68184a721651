"""Property-based fuzzing (the harness of ``test_api_fuzz.py``) of the ``PinocchioCoordinates``
conversions that take ``q`` and ``v``: those of a model with a Pinocchio planar joint (the
q-free paths are fuzzed in ``test_api_fuzz_core.py``)."""

import os
import sys

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_api_fuzz import E, fuzz_tests  # noqa: E402

from sinews.interop import PinocchioCoordinates, from_pinocchio  # noqa: E402

PM = pin.Model()
_j = PM.addJoint(0, pin.JointModelPlanar(), pin.SE3.Identity(), "base")
PM.appendBodyToJoint(_j, pin.Inertia(2.0, np.array([0.1, 0.0, 0.0]), np.diag([0.1, 0.2, 0.25])), pin.SE3.Identity())
_k = PM.addJoint(_j, pin.JointModelRX(), pin.SE3(np.eye(3), np.array([0.3, 0.0, 0.0])), "arm")
PM.appendBodyToJoint(_k, pin.Inertia(1.0, np.array([0.0, 0.2, 0.0]), np.diag([0.05, 0.02, 0.05])), pin.SE3.Identity())
CV = PinocchioCoordinates(from_pinocchio(PM), PM)
Q = np.array([0.3, -0.2, 0.8, 0.4])
V = np.array([0.5, -0.1, 1.2, -0.7])
M = np.diag([1.0, 2.0, 3.0, 4.0]) + 0.1
JAC = np.arange(24.0).reshape(6, 4)

TABLE = [
    E(PinocchioCoordinates.v_to_pin, lambda: dict(self=CV, v=V.copy(), q=Q.copy()), "v q", label="planar"),
    E(PinocchioCoordinates.v_from_pin, lambda: dict(self=CV, v_pin=V.copy(), q=Q.copy()), "v_pin q", label="planar"),
    E(PinocchioCoordinates.a_to_pin, lambda: dict(self=CV, a=V[::-1].copy(), q=Q.copy(), v=V.copy()), "a q v",
      label="planar"),
    E(PinocchioCoordinates.a_from_pin, lambda: dict(self=CV, a_pin=V[::-1].copy(), q=Q.copy(), v=V.copy()),
      "a_pin q v", label="planar"),
    E(PinocchioCoordinates.matrix_from_pin, lambda: dict(self=CV, M_pin=M.copy(), q=Q.copy()), "M_pin q",
      label="planar"),
    E(PinocchioCoordinates.columns_from_pin, lambda: dict(self=CV, J_pin=JAC.copy(), q=Q.copy()), "J_pin q",
      label="planar", free_shape=True),
]

test_interop_planar_fuzz = fuzz_tests(TABLE)
