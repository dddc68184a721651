"""The "impulse" stepper's induced-impact models (Simbody's Simultaneous, Sequential, Mixed) on
Newton's cradles, against hand calculations.

Balls of unit mass on a line, frictionless, the first one moving at v into the others, all
touching.  Contact ``c_ij`` between balls i and j; a normal impulse P on it changes ball i by -P
and ball j by +P.  With e = 1:

* simultaneous (one coupled impact): the compression brings every ball to v/n; only the
  impacter ``c_01`` gets an expansion impulse (e times its compression impulse (n-1) v / n),
  the other contacts react: 3 balls -> (-v/3, 2v/3, 2v/3), 4 balls -> (-v/2, v/2, v/2, v/2);
* sequential (Simbody's rounds: only the impacting contacts take part; a round's Poisson
  expansion is applied in the next round, together with that round's compression): round 1
  compresses c01 (v/2, v/2, 0); round 2 applies its expansion P = v/2 while c12 compresses
  (0, v/2, v/2); round 3 applies c12's expansion: (0, 0, v).  With too few rounds the pending
  expansion is applied alone and what still approaches is left to the contact phase, which is
  plastic: 3 balls, 1 round -> (0, v, 0) after the impacts, (0, v/2, v/2) after the step;
* mixed: the sequential rounds, but the last one (round ``max_impact_rounds``) lets every
  proximal contact take part and a pending expansion is applied in a final round with every
  contact taking part.  With enough rounds it is the sequential answer; with 1 round it is
  the simultaneous one; the 4-ball cradle with 2 rounds is worked out in
  :func:`test_mixed_four_balls_two_rounds`.
"""

import numpy as np
import pytest

from sinews import Model
from sinews.geometry import Sphere
from sinews.joints import PrismaticX
from sinews.sim import Scene, simulate
from sinews.sim import examples as ex
from sinews.sim.impulse_stepper import ImpulseStepper
from sinews.spatial import SpatialInertia

V = 1.0
H = 1e-4


def cradle(n, restitution=1.0):
    """``n`` touching unit balls on PrismaticX joints, no gravity, the first one at speed V."""
    m = Model(gravity=(0.0, 0.0, 0.0), name=f"cradle{n}")
    scene = Scene(m, margin=1e-3)
    for i in range(n):
        m.add_body("world", PrismaticX(), inertia=SpatialInertia(1.0, np.zeros(3), np.eye(3) * 4e-3),
                   name=f"ball{i}")
        scene.add_geometry(f"ball{i}", Sphere(0.1), X_body_geometry=[0.2 * i, 0.0, 0.0],
                           restitution=restitution, friction=0.0)
    v0 = np.zeros(n)
    v0[0] = V
    return scene, np.zeros(n), v0


def one_step(scene, q0, v0, **options):
    out = ImpulseStepper(**options).step(scene, q0, v0, None, H)
    return out.v, out.stats


def energy(v):
    return 0.5 * float(np.sum(np.asarray(v) ** 2))


@pytest.mark.parametrize("restitution", ["poisson", "newton"])
def test_three_ball_cradle_all_models(restitution):
    sim, seq, mix = (-V / 3, 2 * V / 3, 2 * V / 3), (0.0, 0.0, V), (0.0, 0.0, V)
    for impacts, rounds, expect in (("simultaneous", 10, sim), ("sequential", 10, seq),
                                    ("mixed", 10, mix),  # the chain ends in 3 rounds < 10
                                    ("mixed", 1, sim),  # the only round is the coupled one
                                    ("mixed", 2, mix), ("sequential", 2, seq),  # final expansion
                                    ("sequential", 1, (0.0, V / 2, V / 2))):  # rest: plastic
        scene, q0, v0 = cradle(3)
        v, stats = one_step(scene, q0, v0, impacts=impacts, max_impact_rounds=rounds,
                            restitution=restitution)
        assert v == pytest.approx(expect, abs=1e-9), (impacts, rounds)
        assert v.sum() == pytest.approx(V, abs=1e-12)  # momentum
        assert stats["converged"]
        lossless = not (impacts == "sequential" and rounds == 1)
        assert energy(v) == pytest.approx(energy(v0), abs=1e-9) if lossless else energy(v) < energy(v0)


@pytest.mark.parametrize("restitution", ["poisson", "newton"])
def test_mixed_one_round_half_restitution(restitution):
    """e = 1/2, 3 balls, one coupled round.  Poisson: compression to v/3 each (P01 = 2v/3,
    P12 = v/3); expansion P01 e = v/3 takes ball 0 to 0 and ball 1 to 2v/3, c12 reacts: balls
    1 and 2 at v/2.  Newton: targets c01 = v/2, c12 = 0: 2 P01 - P12 = 3v/2, 2 P12 - P01 = 0,
    P01 = v, P12 = v/2: the same (0, v/2, v/2)."""
    scene, q0, v0 = cradle(3, restitution=0.5)
    v, _ = one_step(scene, q0, v0, impacts="mixed", max_impact_rounds=1, restitution=restitution)
    assert v == pytest.approx([0.0, V / 2, V / 2], abs=1e-9)


def test_mixed_four_balls_two_rounds():
    """Poisson.  Round 1 (sequential): c01 alone is compressed, (v/2, v/2, 0, 0), its expansion
    P = v/2 pending.  Round 2 (the last: every contact takes part): the expansion of c01 is
    applied (ball 0 -> 0, ball 1 -> v) while c12 (impacting at v/2) and c23 (closed) react:
    balls 1-3 at v/3, P12 = 2v/3, P23 = v/3.  Only the impacter c12 gets an expansion, 2v/3,
    applied in a final round with c01 and c23 taking part: ball 1 -> -v/3, ball 2 -> v, then
    c01 and c23 close: balls 0, 1 at -v/6, balls 2, 3 at 2v/3 -> (-v/6, -v/6, 2v/3, 2v/3),
    kinetic energy 17/18 of v^2/2.

    Newton.  Round 1: c01 rebounds, (0, v, 0, 0).  Round 2 (all take part): c12 impacts at v
    with target +v, c01 and c23 >= 0, all three active:
    2 P01 - P12 = -v, 2 P12 - P01 - P23 = 2v, 2 P23 - P12 = 0 -> P01 = v/4, P12 = 3v/2,
    P23 = 3v/4 -> (-v/4, -v/4, 3v/4, 3v/4): kinetic energy 5/4 of v^2/2, *gained* (Newton
    restitution in a coupled impact), where Poisson only loses."""
    scene, q0, v0 = cradle(4)
    v, stats = one_step(scene, q0, v0, impacts="mixed", max_impact_rounds=2)
    assert v == pytest.approx([-V / 6, -V / 6, 2 * V / 3, 2 * V / 3], abs=1e-9)
    assert energy(v) == pytest.approx(17 / 18 * energy(v0), abs=1e-9)
    assert stats["impact_rounds"] == 3  # two rounds and the final expansion
    v, stats = one_step(scene, q0, v0, impacts="mixed", max_impact_rounds=2, restitution="newton")
    assert v == pytest.approx([-V / 4, -V / 4, 3 * V / 4, 3 * V / 4], abs=1e-9)
    assert stats["impact_rounds"] == 2
    assert energy(v) == pytest.approx(1.25 * energy(v0), abs=1e-9)
    # the other models on the same cradle
    # sequential, 2 rounds: (0, 0, v, 0) after the final expansion of c12; c23 is then left
    # to the contact phase (plastic)
    v, _ = one_step(scene, q0, v0, impacts="sequential", max_impact_rounds=2)
    assert v == pytest.approx([0.0, 0.0, V / 2, V / 2], abs=1e-9)
    v, _ = one_step(scene, q0, v0, impacts="sequential")
    assert v == pytest.approx([0.0, 0.0, 0.0, V], abs=1e-9)
    v, _ = one_step(scene, q0, v0, impacts="mixed", max_impact_rounds=4)
    assert v == pytest.approx([0.0, 0.0, 0.0, V], abs=1e-9)
    v, _ = one_step(scene, q0, v0, impacts="simultaneous")
    assert v == pytest.approx([-V / 2, V / 2, V / 2, V / 2], abs=1e-9)


def test_mixed_through_simulate_and_pgs():
    """The option reaches the stepper through simulate, with either solver."""
    for solver in ("plus", "pgs"):
        scene, q0, v0 = ex.newtons_cradle(speed=V)
        res = simulate(scene, q0, v0, 0.005, 1e-3, stepper="impulse", progress=False,
                       stepper_options=dict(impacts="mixed", max_impact_rounds=1, solver=solver))
        assert res.v[-1] == pytest.approx([-V / 3, 2 * V / 3, 2 * V / 3], abs=1e-6)
        assert res.converged.all()


def test_bad_options_name_the_argument():
    for kw, name in ((dict(impacts="both"), "impacts"), (dict(projection="soft"), "projection"),
                     (dict(max_impact_rounds=0), "max_impact_rounds"),
                     (dict(restitution="poison"), "restitution"), (dict(solver="lemke"), "solver"),
                     (dict(capture_speed=-1.0), "capture_speed"),
                     (dict(min_cor_speed=float("nan")), "min_cor_speed")):
        with pytest.raises(ValueError, match=name):
            ImpulseStepper(**kw)
