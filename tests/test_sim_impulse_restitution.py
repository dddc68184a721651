"""The "impulse" stepper's restitution: Simbody's velocity-dependent COR (capture and min-COR
speeds) and Poisson versus Newton restitution on eccentric rod impacts, against hand-derived
closed forms.

Simbody's ``ConditionalConstraint::calcEffectiveCOR(minCOR, vCapture, vMinCOR, v)``: 0 if
``v <= vCapture``, ``minCOR`` if ``v >= vMinCOR``, else ``1 - (1 - minCOR) v / vMinCOR``; the
stepper uses ``vCapture = max(capture, 2 consTol)`` and ``vMinCOR = max(minCORSpeed,
vCapture)`` (``getDefaultImpact...VelocityInUse``).
"""

import math

import numpy as np
import pytest

from sinews import Model
from sinews.geometry import Point, Sphere
from sinews.joints import FreeFlyer, Planar
from sinews.sim import Scene, simulate
from sinews.sim import examples as ex
from sinews.sim.impulse_stepper import ImpulseStepper, effective_cor
from sinews.spatial import SpatialInertia, Transform

H = 1e-4
MARGIN = 1e-3  # consTol


def test_effective_cor_table():
    """Simbody's law, evaluated by hand for minCOR 0.5, capture 0.01, min-COR speed 1."""
    v = [0.0, 0.005, 0.01, 0.0100001, 0.2, 0.5, 0.999, 1.0, 2.0, 50.0]
    expect = [0.0, 0.0, 0.0, 1 - 0.5 * 0.0100001, 0.9, 0.75, 1 - 0.5 * 0.999, 0.5, 0.5, 0.5]
    assert effective_cor(0.5, 0.01, 1.0, v) == pytest.approx(expect, abs=1e-15)
    # minCOR 1 (elastic): 1 above capture; minCOR 0: the line from 1 down to 0 at vMinCOR
    assert effective_cor(1.0, 0.01, 1.0, [0.01, 0.02, 3.0]) == pytest.approx([0.0, 1.0, 1.0])
    assert effective_cor(0.0, 0.01, 1.0, [0.25, 1.0]) == pytest.approx([0.75, 0.0])
    # capture = min-COR speed (the stepper's default): a step from 0 to minCOR
    assert effective_cor(0.3, 0.002, 0.002, [0.002, 0.0020001]) == pytest.approx([0.0, 0.3])
    # vectorised over the per-contact COR
    assert effective_cor(np.array([0.2, 0.8]), 0.0, 1.0, [0.5, 0.5]) == pytest.approx([0.6, 0.9])


def test_speeds_in_use():
    """Simbody's InUse rules: capture at least 2 consTol, min-COR speed at least capture."""
    assert ImpulseStepper().cor_speeds(MARGIN) == (2e-3, 2e-3)
    assert ImpulseStepper(capture_speed=0.0).cor_speeds(MARGIN) == (2e-3, 2e-3)
    assert ImpulseStepper(capture_speed=0.1).cor_speeds(MARGIN) == (0.1, 0.1)
    assert ImpulseStepper(capture_speed=0.1, min_cor_speed=0.05).cor_speeds(MARGIN) == (0.1, 0.1)
    assert ImpulseStepper(min_cor_speed=1.0).cor_speeds(MARGIN) == (2e-3, 1.0)
    assert ImpulseStepper(capture_speed=0.5, min_cor_speed=2.0).cor_speeds(MARGIN) == (0.5, 2.0)


def falling_ball(speed, e):
    """A ball touching the ground, moving down at ``speed``, no gravity."""
    m = Model(gravity=(0.0, 0.0, 0.0), name="ball")
    scene = Scene(m, margin=MARGIN)
    scene.add_ground(friction=0.0, restitution=e)
    m.add_body("world", FreeFlyer(), inertia=SpatialInertia(1.0, np.zeros(3), np.eye(3) * 4e-3), name="ball")
    scene.add_geometry("ball", Sphere(0.1), friction=0.0, restitution=e)
    v0 = np.zeros(6)
    v0[5] = -speed
    return scene, ex.free_q([0.0, 0.0, 0.1]), v0


@pytest.mark.parametrize("restitution", ["poisson", "newton"])
def test_rebound_speed_follows_the_cor_law(restitution):
    """One contact: rebound = e_eff(v) v, with capture 0.5, min-COR speed 2, pair COR 0.5."""
    opts = dict(restitution=restitution, capture_speed=0.5, min_cor_speed=2.0)
    for v, e in ((0.3, 0.0), (0.5, 0.0), (1.0, 1 - 0.5 * 1.0 / 2.0), (1.5, 1 - 0.5 * 1.5 / 2.0),
                 (2.0, 0.5), (3.0, 0.5)):
        scene, q0, v0 = falling_ball(v, 0.5)
        out = ImpulseStepper(**opts).step(scene, q0, v0, None, H)
        assert out.v[5] == pytest.approx(e * v, abs=1e-12), v
    # defaults: capture = min-COR speed = 2 consTol: exactly the pair's COR above it, 0 below
    for v, e in ((1.5e-3, 0.0), (2.5e-3, 0.5), (1.0, 0.5)):
        scene, q0, v0 = falling_ball(v, 0.5)
        out = ImpulseStepper(restitution=restitution, capture_speed=0.0).step(scene, q0, v0, None, H)
        assert out.v[5] == pytest.approx(e * v, abs=1e-12), v
    # restitution "none": plastic at every speed
    scene, q0, v0 = falling_ball(3.0, 0.5)
    assert ImpulseStepper(restitution="none").step(scene, q0, v0, None, H).v[5] == pytest.approx(0, abs=1e-12)


def test_capture_stops_the_bouncing_ball():
    """With gravity the apexes fall as e^2 until the impact speed drops below capture: then the
    ball stays on the ground (no Zeno bouncing).  Capture 0.6 m/s, e = 0.5, from 0.2 m: impact
    speeds sqrt(2 g 0.2) = 1.98, then 0.99, then 0.495 < 0.6: captured at the third impact."""
    scene, q0, v0 = ex.bouncing_ball(height=0.2, radius=0.1, restitution=0.5)
    res = simulate(scene, q0, v0, 0.8, 1e-3, stepper="impulse", progress=False,
                   stepper_options=dict(capture_speed=0.6))
    z = res.q[:, 2] - 0.1
    g = 9.81
    t1 = math.sqrt(2 * 0.2 / g)  # first impact
    v1 = g * t1
    t3 = t1 + 2 * 0.5 * v1 / g + 2 * 0.25 * v1 / g  # third impact
    after = res.t > t3 + 0.03  # (the O(h) event time, and the last 1 mm inside the margin)
    assert np.abs(z[after]).max() < 2e-3 and np.abs(res.v[after, 5]).max() < 1e-9
    before = (res.t > t3 - 0.05) & (res.t < t3 - 0.01)
    assert z[before].max() > 0.005  # still bouncing before it


# ------------------------------------------------------------------------- eccentric rod
M_ROD, J_ROD, L = 2.0, 1.0, 1.0


def rod(angle, e, friction, ends=("left", "right")):
    """A planar rod (mass 2, J = 1 about its centre, half length 1), contact points at its
    ends, no gravity, its lowest end on the ground.  Coordinates (x, z, theta) (planar joint in
    the world x-z plane, as Drake's Rod2D): end s at (x + s L cos, z + s L sin)."""
    m = Model(gravity=(0.0, 0.0, 0.0), name="rod")
    m.add_body("world", Planar(), Transform.rot_x(math.pi / 2),
               inertia=SpatialInertia(M_ROD, np.zeros(3), np.diag([J_ROD] * 3)), name="rod")
    scene = Scene(m, margin=MARGIN)
    scene.add_ground(friction=friction, restitution=e)
    for s, name in ((-1.0, "left"), (1.0, "right")):
        if name in ends:
            scene.add_geometry("rod", Point(), X_body_geometry=[s * L, 0.0, 0.0], name=name,
                               friction=friction, restitution=e)
    return scene, np.array([0.0, L * math.sin(angle), angle])


@pytest.mark.parametrize("friction", [0.0, 0.5])
def test_eccentric_single_contact_newton_equals_poisson(friction):
    """The rod at 30 degrees falls at v with its left end on the ground.  Contact rows (normal
    z, tangent x) of the left end: n = (0, 1, -L cos), t = (1, 0, L sin); A = [[a_nn, a_nt],
    [a_nt, a_tt]] with a_nn = 1/m + L^2 cos^2/J, a_nt = -L^2 sin cos/J, a_tt = 1/m + L^2 sin^2/J.

    Frictionless: P_n = (1 + e) v / a_nn.  With mu = 0.5 < |a_nt| / a_tt the end cannot stick:
    it slides towards -x, friction P_t = mu P_n, and c_n = -v + (a_nn + mu a_nt) P_n = e v gives
    P_n = (1 + e) v / (a_nn + mu a_nt).  Poisson (compression P_c, then e P_c) is the same
    impulse scaled, because the slip keeps its direction: Newton = Poisson for one contact."""
    th, v, e = math.pi / 6, 1.0, 0.6
    c, s = math.cos(th), math.sin(th)
    a_nn, a_nt, a_tt = 1 / M_ROD + L**2 * c * c / J_ROD, -L**2 * s * c / J_ROD, 1 / M_ROD + L**2 * s * s / J_ROD
    assert friction < abs(a_nt) / a_tt
    Pn = (1 + e) * v / (a_nn + friction * a_nt)
    Pt = friction * Pn
    gen = Pn * np.array([0.0, 1.0, -L * c]) + Pt * np.array([1.0, 0.0, L * s])
    expect = np.array([0.0, -v, 0.0]) + gen / np.array([M_ROD, M_ROD, J_ROD])
    for restitution in ("poisson", "newton"):
        scene, q0 = rod(th, e, friction, ends=("left",))
        out = ImpulseStepper(restitution=restitution).step(scene, q0, np.array([0.0, -v, 0.0]), None, H)
        assert out.v == pytest.approx(expect, abs=1e-9), restitution
        cn = out.v[1] - L * c * out.v[2]
        assert cn == pytest.approx(e * v, abs=1e-9)
        assert out.stats["converged"]


def test_flat_rod_newton_gains_energy_poisson_does_not():
    """The rod lies flat (both ends on the ground, frictionless), turning so that its left end
    comes down at v = 1 while its right end rises at w = 1/2: z' = (w - v)/2, theta' = (w + v)/2.
    End normal velocities c = (z' - theta', z' + theta'); A = [[3/2, -1/2], [-1/2, 3/2]]
    (1/m +- L^2/J).  e = 1.

    Newton (target c_L = e v, c_R >= 0): the right end alone would be pushed down
    (w - (1 + e) v / 3 < 0), so both ends act: c+ = (1, 0), z' = 1/2, theta' = -1/2, kinetic
    energy 3/8 > 11/32 before: energy *gained*.
    Poisson: compression of the left end alone (P = 2/3) leaves c_R = w - v/3 > 0; the expansion
    (P = 2/3 again) would leave c_R = w - 2v/3 = -1/6, so the right end reacts with
    P_R = 1/9, and c_L = 1 - P_R / 2 = 17/18: z' = -theta' = 17/36, energy 0.3345 < 11/32."""
    v, w = 1.0, 0.5
    v0 = np.array([0.0, (w - v) / 2, (w + v) / 2])

    def energy(u):
        return 0.5 * M_ROD * u[1] ** 2 + 0.5 * J_ROD * u[2] ** 2

    out = {}
    for restitution in ("newton", "poisson"):
        scene, q0 = rod(0.0, 1.0, 0.0)
        out[restitution] = ImpulseStepper(restitution=restitution).step(scene, q0, v0, None, H).v
    assert out["newton"] == pytest.approx([0.0, 0.5, -0.5], abs=1e-9)
    assert out["poisson"] == pytest.approx([0.0, 17 / 36, -17 / 36], abs=1e-9)
    assert energy(v0) == pytest.approx(11 / 32)
    assert energy(out["newton"]) == pytest.approx(3 / 8, abs=1e-9)
    assert energy(out["poisson"]) < energy(v0)
