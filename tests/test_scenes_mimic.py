"""URDF <mimic> joints are enforced in scenes built from the URDF (scene_from_urdf)."""

from __future__ import annotations

import numpy as np
import pytest

import sinews
from sinews.sim import scene_from_urdf, simulate

from test_urdf_features import _panda_path


def test_panda_scene_keeps_its_mimic_finger_coupled():
    path = _panda_path()
    scene = scene_from_urdf(path, ground=False, floating_base=False, mesh="skip")
    model = scene.model
    (rec,) = model.mimic_joints
    assert scene.constraints is not None and scene.constraints.ngroups == 1
    i, k = model.idx_v(rec.joint), model.idx_v(rec.mimicked)
    assert model.idx_q(rec.joint) == i and model.idx_q(rec.mimicked) == k  # revolute/prismatic arm

    q0 = sinews.neutral(model)
    q0[k] = 0.01
    q0[i] = rec.multiplier * q0[k] + rec.offset

    def push_left_finger(t, q, v):  # a force on the mimicked finger only
        tau = sinews.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))  # hold the arm
        tau[k] += 5.0
        return tau

    res = simulate(scene, q0, np.zeros(model.nv), 0.05, 1e-3, controller=push_left_finger, progress=False)
    gap = res.q[:, i] - (rec.multiplier * res.q[:, k] + rec.offset)
    assert np.abs(res.q[-1, k] - q0[k]) > 1e-4  # the pushed finger moved ...
    assert np.abs(gap).max() < 1e-6  # ... and the mimic finger followed it


def test_user_constraints_are_not_replaced():
    path = _panda_path()
    cs = sinews.constraints.ConstraintSet()
    scene = scene_from_urdf(path, ground=False, floating_base=False, mesh="skip", constraints=cs)
    assert scene.constraints is cs
