"""API fuzzing (see test_api_fuzz.py): sinews.geometry and sinews.sim."""

from __future__ import annotations

import numpy as np
from test_api_fuzz import E, fuzz_tests

from sinews.geometry import Box, Capsule, HalfSpace, Sphere, collide, sweep_and_prune
from sinews.sim import simulate
from sinews.sim import examples as ex
from sinews.spatial import Transform

_XA = Transform.rot_z(0.3, [0.0, 0.0, 0.5]).homogeneous()
_XB = Transform.rot_x(0.2, [0.05, 0.0, 1.45]).homogeneous()
_LO = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [2.0, 0.0, 0.0]])
_HI = _LO + 0.7
_BALL = ex.bouncing_ball(height=0.01)


def mk(**kw):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()}


def _sim(scene, q0, v0, dt, stepper):
    return simulate(scene, q0, v0, 0.003, dt, stepper=stepper, progress=False)


TABLE = [
    E(collide, lambda: mk(a=Box(np.ones(3)), X_world_a=_XA, b=Box(np.ones(3)), X_world_b=_XB, margin=0.01),
      "X_world_a X_world_b margin:scalar", free_shape=True, label="box-box"),
    E(collide, lambda: mk(a=HalfSpace(), X_world_a=_XA, b=Capsule(0.1, 0.5), X_world_b=_XB, margin=0.01),
      "X_world_a X_world_b margin:scalar", free_shape=True, label="halfspace-capsule"),
    E(collide, lambda: mk(a=Sphere(0.3), X_world_a=_XA, b=Box(np.ones(3)), X_world_b=_XB, margin=0.01),
      "X_world_a X_world_b margin:scalar", free_shape=True, label="sphere-box"),
    E(sweep_and_prune, lambda: mk(lower=_LO, upper=_HI), "lower upper", free_shape=True),
]
for stepper in ("default", "lcp", "impulse"):
    TABLE.append(E(simulate, lambda stepper=stepper: mk(scene=_BALL[0], q0=_BALL[1], v0=_BALL[2], dt=1e-3, stepper=stepper),
                   "q0:q v0 dt:scalar", call=_sim, free_shape=True, label=stepper))

test_sim_api_fuzz = fuzz_tests(TABLE)
