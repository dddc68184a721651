"""Actuator limits in ``sinews.sim.simulate``: the controller's forces are clipped to the model's
``effort_limit``, and a joint faster than its ``velocity_limit`` gets no actuator force in its
direction of motion (it may brake).  Oracle: a free rotor (no gravity, no contact), whose speed
under a constant torque tau is v0 + tau / I t in closed form."""

import numpy as np
import pytest

from sinews import Model, SpatialInertia, joints
from sinews.sim import Scene, simulate

IZZ = 0.5


def _rotor(velocity_limit=None, effort_limit=None):
    m = Model(gravity=(0.0, 0.0, 0.0))
    m.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, [0.0, 0.0, 0.0], np.diag([0.3, 0.3, IZZ])), "rotor")
    kw = {}
    if velocity_limit is not None:
        kw["velocity_limit"] = velocity_limit
    if effort_limit is not None:
        kw["effort_limit"] = effort_limit
    if kw:
        m.set_joint_properties("rotor", **kw)
    return Scene(m)


def _run(scene, v0, torque, T=1.0, h=1e-3):
    return simulate(scene, np.zeros(1), np.array([v0]), T, h, controller=lambda t, q, v: np.array([torque]),
                    progress=False)


def test_without_limits_the_rotor_accelerates_at_tau_over_inertia():
    res = _run(_rotor(), 0.0, 2.0)
    assert res.v[-1, 0] == pytest.approx(2.0 / IZZ * 1.0, rel=1e-9)


def test_the_velocity_limit_caps_the_driven_speed():
    h, tau, limit = 1e-3, 2.0, 1.5
    res = _run(_rotor(velocity_limit=limit), 0.0, tau, h=h)
    v = res.v[:, 0]
    assert v.max() <= limit + tau / IZZ * h + 1e-12  # at most one step of acceleration past it
    assert v[-1] == pytest.approx(limit, abs=tau / IZZ * h)
    t_reach = limit / (tau / IZZ)  # below the limit it accelerates freely
    k = int(round(0.5 * t_reach / h))
    assert v[k] == pytest.approx(tau / IZZ * k * h, rel=1e-9)


def test_a_joint_above_its_limit_coasts_and_may_brake():
    limit = 1.0
    coast = _run(_rotor(velocity_limit=limit), 5.0, 2.0)  # driving forward: no force
    assert np.all(coast.v[:, 0] == 5.0)
    brake = _run(_rotor(velocity_limit=limit), 5.0, -2.0, T=0.5)  # braking is allowed
    assert brake.v[-1, 0] == pytest.approx(5.0 - 2.0 / IZZ * 0.5, rel=1e-9)
    backward = _run(_rotor(velocity_limit=limit), -5.0, -2.0)  # the same rule backwards
    assert np.all(backward.v[:, 0] == -5.0)


def test_effort_and_velocity_limits_together():
    res = _run(_rotor(velocity_limit=3.0, effort_limit=0.5), 0.0, 10.0, T=1.0)
    v = res.v[:, 0]
    assert v[100] == pytest.approx(0.5 / IZZ * 0.1, rel=1e-9)  # clipped to the effort limit
    assert v.max() <= 3.0 + 0.5 / IZZ * 1e-3 + 1e-12
