"""The whole-API fuzz harness (tests/test_api_fuzz.py) over the model-record entry points:
joint properties, shape records and mimic records (array and scalar arguments)."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_api_fuzz import E, fuzz_tests  # noqa: E402

import sinews  # noqa: E402
from sinews import SpatialInertia  # noqa: E402
from sinews import joints as J  # noqa: E402


def fresh_model():
    m = sinews.Model()
    a = m.add_body(0, J.RevoluteZ(), None, SpatialInertia.from_box(1.0, (0.1, 0.2, 0.3)), "a")
    m.add_body(a, J.Spherical(), (0.1, 0, 0), SpatialInertia.from_box(1.0, (0.1, 0.2, 0.3)), "ball")
    m.add_body(a, J.PrismaticX(), None, SpatialInertia.point_mass(0.5), "slide")
    return m


X4 = np.eye(4)
X4[:3, 3] = (0.1, 0.2, 0.3)

TABLE = [
    E(sinews.Model.set_joint_properties,
      lambda: dict(self=fresh_model(), body="ball", lower=np.full(4, -1.0), upper=np.full(4, 1.0),
                   velocity_limit=np.full(3, 2.0), effort_limit=np.full(3, 5.0), damping=np.full(3, 0.1),
                   friction=np.full(3, 0.2), armature=np.full(3, 0.01)),
      "lower upper velocity_limit effort_limit damping friction armature"),
    E(sinews.Model.add_visual,
      lambda: dict(self=fresh_model(), body="a", kind="box", size=np.array([0.1, 0.2, 0.3]),
                   X_body_geometry=X4.copy(), scale=np.ones(3), rgba=np.array([1.0, 0.0, 0.0, 1.0])),
      "size X_body_geometry scale rgba"),
    E(sinews.Model.add_collision,
      lambda: dict(self=fresh_model(), body="a", kind="cylinder", size=np.array([0.05, 0.4])), "size"),
    E(sinews.Model.add_mimic,
      lambda: dict(self=fresh_model(), joint="slide", mimicked="a", multiplier=-0.5, offset=0.01),
      "multiplier:scalar offset:scalar"),
]

test_model_fuzz = fuzz_tests(TABLE)
