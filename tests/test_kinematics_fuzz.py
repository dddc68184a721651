"""API fuzzing (see test_api_fuzz.py) of the kinematics entry points with a fast call path:
frame placements and Jacobians, and the Jacobian time derivatives."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_api_fuzz import E, fuzz_tests  # noqa: E402
from test_api_fuzz_core import P0, Q, V, st  # noqa: E402

import sinews  # noqa: E402

#: a result to pass as forward_kinematics' out= (its own fast-path buffer after the first use)
OUT = sinews.forward_kinematics(st()["model"], Q)

TABLE = [
    E(sinews.forward_kinematics, lambda: st(q=Q, out=OUT), "q:q", label="out"),
    E(sinews.frame_placement, lambda: st(q=Q, frame="tip"), "q:q"),
    E(sinews.frame_jacobian, lambda: st(q=Q, frame="tip", reference="local_world_aligned"), "q:q"),
    E(sinews.frame_jacobian_time_variation, lambda: st(q=Q, v=V, frame="tip", reference="local"), "q:q v"),
    E(sinews.point_jacobian_time_variation, lambda: st(q=Q, v=V, body="hinge", point=P0), "q:q v point"),
    E(sinews.point_jacobian_time_variation_6d, lambda: st(q=Q, v=V, body="hinge", point=P0), "q:q v point"),
]

test_kinematics_fuzz = fuzz_tests(TABLE)


def test_fast_and_checked_paths_agree():
    """The fast path (no ``data``) and the checked path (``data=``) give identical results."""
    from test_api_fuzz_core import ZOO

    d = ZOO.data()
    for f, args in (
        (sinews.forward_kinematics, (Q,)),
        (sinews.frame_jacobian, (Q, "tip", "world")),
        (sinews.point_jacobian, (Q, "hinge", P0)),
        (sinews.point_jacobian_6d, (Q, "hinge")),
        (sinews.body_jacobian, (Q, "hinge", "local")),
        (sinews.com_jacobian, (Q,)),
        (sinews.center_of_mass, (Q,)),
        (sinews.com_velocity, (Q, V)),
        (sinews.frame_jacobian_time_variation, (Q, V, "tip", "local_world_aligned")),
        (sinews.point_jacobian_time_variation, (Q, V, "hinge", P0)),
    ):
        fast, checked = f(ZOO, *args), f(ZOO, *args, data=d)
        if isinstance(fast, np.ndarray):
            np.testing.assert_array_equal(fast, checked)
        else:
            np.testing.assert_array_equal(fast.R, checked.R)
            np.testing.assert_array_equal(fast.frame_p, checked.frame_p)
    for f, args in ((sinews.frame_placement, (Q, "tip")), (sinews.body_placement, (Q, "hinge"))):
        fast, checked = f(ZOO, *args), f(ZOO, *args, data=d)
        np.testing.assert_array_equal(fast.R, checked.R)
        np.testing.assert_array_equal(fast.p, checked.p)
        assert not fast.R.flags.writeable and not fast.p.flags.writeable
