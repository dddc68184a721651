"""Behaviour of every stepper that the example tests do not reach: a custom constraint, the
`lcp` stepper's contact stiffness (CFM/ERP), the polygonal cone's size, and joint damping and
dry friction under all three steppers, each against a closed form."""

import numpy as np
import pytest

import sinews
from sinews.constraints import ConstraintSet, CustomConstraint
from sinews.sim import Scene, simulate
from sinews.sim import examples as ex

STEPPERS = ("default", "lcp", "impulse")
G = 9.81


class _Gear(CustomConstraint):
    """``q_b = -q_a / 2`` written as a custom constraint (a gear pair of ratio -1/2)."""

    size = 1

    def jacobian(self, kin):
        J = np.zeros((1, kin.nv))
        J[0, 0], J[0, 1] = 0.5, 1.0
        return J

    def gamma(self, kin):
        return np.zeros(1)

    def position_error(self, kin):
        return np.array([kin.q[1] + 0.5 * kin.q[0]])


def _pendulum(**props):
    """A 1 kg point mass on a 1 m massless rod, hinged about y (gravity torque g sin q)."""
    m = sinews.Model(name="pendulum")
    m.add_body("world", sinews.joints.RevoluteY(), inertia=sinews.SpatialInertia.point_mass(1.0, [0, 0, -1.0]),
               name="link")
    if props:
        m.set_joint_properties("link", **props)
    return Scene(m)


@pytest.mark.parametrize("stepper", STEPPERS)
def test_a_custom_constraint_holds_under_every_stepper(stepper):
    m = sinews.Model(name="geared")
    for name in ("a", "b"):
        m.add_body("world", sinews.joints.RevoluteY(), inertia=sinews.SpatialInertia.point_mass(1.0, [0, 0, -1.0]),
                   name=name)
    cs = ConstraintSet()
    cs.add_custom_constraint(_Gear(name="gear"))
    res = simulate(Scene(m, cs), [0.6, -0.3], [0.0, 0.0], 0.5, 1e-3, stepper=stepper, progress=False,
                   record_every=25)
    assert np.abs(res.q[:, 1] + 0.5 * res.q[:, 0]).max() <= 1e-4  # the gear holds
    assert np.ptp(res.q[:, 0]) > 0.1  # and the pair swings


@pytest.mark.parametrize("stiffness", [1e4, 1e5])
def test_lcp_resting_penetration_is_weight_over_stiffness(stiffness):
    """Drake's CFM/ERP from a contact stiffness k: a 1 kg ball at rest sinks m g / k."""
    scene, q0, v0 = ex.bouncing_ball(height=0.0, restitution=0.0)
    scene.stiffness = stiffness
    res = simulate(scene, q0, v0, 1.0, 1e-3, stepper="lcp", progress=False, record_every=100)
    penetration = 0.1 - res.q[-1, 2]  # radius 0.1 m
    assert penetration == pytest.approx(G / stiffness, rel=0.02)


def test_polygonal_cone_size_sets_the_diagonal_friction():
    """A brick sliding diagonally at 2 m/s (mu 0.5): with 2 directions (a square cone along x and
    y) the friction along the diagonal is mu N / sqrt(2), so it slides v^2 / (2 (mu / sqrt 2) g);
    with 4 or more directions the diagonal is an edge of the cone and it slides v^2 / (2 mu g)."""
    v, mu = 2.0, 0.5
    out = {}
    for directions in (2, 4, 8):
        scene, q0, v0 = ex.sliding_brick(speed=v, friction=mu)
        v0[3:6] = 0.0
        v0[3] = v0[4] = v / np.sqrt(2.0)
        res = simulate(scene, q0, v0, 0.8, 1e-3, stepper="lcp", progress=False, record_every=100,
                       stepper_options={"directions": directions})
        out[directions] = np.linalg.norm(res.q[-1, :2] - q0[:2])
    assert out[2] == pytest.approx(v**2 / (2 * mu / np.sqrt(2.0) * G), rel=0.01)
    for directions in (4, 8):
        assert out[directions] == pytest.approx(v**2 / (2 * mu * G), rel=0.01)


@pytest.mark.parametrize("stepper", STEPPERS)
def test_joint_damping_and_dry_friction_under_every_stepper(stepper):
    free = simulate(_pendulum(), [1.0], [0.0], 1.0, 1e-3, stepper=stepper, progress=False)
    damped = simulate(_pendulum(damping=2.0), [1.0], [0.0], 1.0, 1e-3, stepper=stepper, progress=False)
    assert np.ptp(free.energy) <= 0.02 * abs(free.energy[0])  # (semi-implicit Euler: bounded error)
    assert np.all(np.diff(damped.energy) <= 1e-9) and damped.energy[-1] < free.energy[-1] - 1.0
    # dry friction: held when it exceeds the gravity torque g sin(1) = 8.25 N m, slipping below
    held = simulate(_pendulum(friction=10.0), [1.0], [0.0], 0.2, 1e-3, stepper=stepper, progress=False)
    slips = simulate(_pendulum(friction=5.0), [1.0], [0.0], 0.2, 1e-3, stepper=stepper, progress=False)
    assert np.abs(held.q[:, 0] - 1.0).max() <= 1e-9
    # slipping: the net torque g sin q - 5 decelerates it by less than gravity alone would
    assert 0.85 < slips.q[-1, 0] < 0.99
    assert slips.q[-1, 0] > free.q[200, 0]
