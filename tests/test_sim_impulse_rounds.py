"""The "impulse" stepper's impact rounds against an independent replica of Simbody's
``SemiExplicitEulerTimeStepper`` impact logic (``performSimultaneousImpact`` and the
sequential / mixed loop of ``stepTo``), written here for frictionless balls on a line.

The replica solves every round's complementarity problem by enumerating active sets (exact for
these small problems) instead of PLUS, works directly on the chain's velocities (``c_i =
u_{i+1} - u_i``, impulse ``P_i >= 0`` moves ball i by ``-P_i / m_i`` and ball i+1 by
``+P_i / m_{i+1}``), and follows Simbody's control flow line by line:

* CORs from the velocities at the start of each round (0 unless approaching faster than the
  capture speed 2 consTol);
* classification: *expanders* (an expansion impulse pending from the previous round: normal
  given), *impacters* (``c < -0.1 consTol``), *observers* (taking part only in the last mixed
  round, and always when simultaneous);
* Poisson: the next expansion impulse is ``e P`` of this round's impacters; Newton: the
  right-hand side gets ``+ e c`` on them;
* after the last allowed round a pending expansion is applied alone (sequential) or with every
  contact taking part (mixed); simultaneous: compression, expansion, then a plastic correction
  round if a contact still approaches;
* then the contact phase of a step without forces: one plastic round, every contact taking part.
"""

import itertools

import numpy as np
import pytest

from sinews import Model
from sinews.geometry import Sphere
from sinews.joints import PrismaticX
from sinews.sim import Scene
from sinews.sim.impulse_stepper import ImpulseStepper
from sinews.spatial import SpatialInertia

TOL = 1e-3  # consTol = scene.margin


def lcp(A, base, part):
    """``P >= 0`` on ``part`` (0 elsewhere) with ``c = base + A P >= 0`` on ``part`` and
    ``P_i c_i = 0``: the first consistent active set, by enumeration."""
    part = list(part)
    for size in range(len(part) + 1):
        for act in itertools.combinations(part, size):
            P = np.zeros(len(base))
            if act:
                P[list(act)] = np.linalg.solve(A[np.ix_(act, act)], -base[list(act)])
            c = base + A @ P
            if (P >= -1e-12).all() and all(c[i] >= -1e-12 for i in part if i not in act):
                return P
    raise AssertionError("no solution")


def simbody_chain(mass, u, e_pair, impacts, max_rounds, newton):
    """Velocities after one step of Simbody's stepper (no applied forces)."""
    n = len(mass)
    G = np.zeros((n - 1, n))
    G[np.arange(n - 1), np.arange(n - 1)] = -1.0
    G[np.arange(n - 1), np.arange(1, n)] = 1.0
    Minv = np.diag(1.0 / mass)
    A = G @ Minv @ G.T
    k = n - 1
    u = np.array(u, dtype=float)

    def apply(P):
        return u + Minv @ G.T @ P

    def cors(c):
        return np.where(c < -2 * TOL, e_pair, 0.0)

    if impacts == "simultaneous":
        c = G @ u
        imp = c < -0.1 * TOL
        if imp.any():
            e = cors(c)
            P = lcp(A, c + (e * c if newton else 0.0), range(k))
            u = apply(P)
            PE = np.where(imp & (e > 0), e * P, 0.0) if not newton else np.zeros(k)
            if PE.any():
                free = [i for i in range(k) if PE[i] == 0]
                u = apply(lcp(A, G @ u + A @ PE, free) + PE)
            if (G @ u < -0.1 * TOL).any():
                u = apply(lcp(A, G @ u, range(k)))
    else:
        PE = np.zeros(k)
        rounds = 0
        while True:
            c = G @ u
            last = rounds >= max_rounds - 1
            expander = PE != 0
            impacter = ~expander & (c < -0.1 * TOL)
            observer = ~expander & ~impacter
            if not (impacter.any() or expander.any()):
                break
            rounds += 1
            e = cors(c)
            part = np.flatnonzero(impacter | (observer & (impacts == "mixed" and last)))
            P = lcp(A, c + (e * c if newton else 0.0) + A @ PE, part)
            u = apply(P + PE)
            PE = np.where(impacter & (e > 0) & (P > 0), e * P, 0.0) if not newton else np.zeros(k)
            if last:
                if PE.any():
                    part = np.flatnonzero(PE == 0) if impacts == "mixed" else []
                    u = apply(lcp(A, G @ u + A @ PE, part) + PE)
                break
    # contact phase (no forces): plastic, every contact taking part
    return apply(lcp(A, G @ u, range(k)))


def chain_scene(mass, e_pair):
    m = Model(gravity=(0.0, 0.0, 0.0), name="chain")
    scene = Scene(m, margin=TOL)
    for i, mi in enumerate(mass):
        m.add_body("world", PrismaticX(), inertia=SpatialInertia(mi, np.zeros(3), np.eye(3) * 1e-3),
                   name=f"ball{i}")
        scene.add_geometry(f"ball{i}", Sphere(0.1), X_body_geometry=[0.2 * i, 0.0, 0.0],
                           restitution=e_pair, friction=0.0)
    return scene


def test_replica_reproduces_the_hand_calculations():
    """The replica itself, on the cradles worked out by hand in test_sim_impulse_mixed.py."""
    one = np.ones(4)
    v0 = [1.0, 0.0, 0.0, 0.0]
    assert simbody_chain(one, v0, 1.0, "mixed", 2, False) == pytest.approx([-1 / 6, -1 / 6, 2 / 3, 2 / 3])
    assert simbody_chain(one, v0, 1.0, "mixed", 2, True) == pytest.approx([-1 / 4, -1 / 4, 3 / 4, 3 / 4])
    assert simbody_chain(one, v0, 1.0, "sequential", 10, False) == pytest.approx([0, 0, 0, 1])
    assert simbody_chain(one, v0, 1.0, "simultaneous", 1, False) == pytest.approx([-1 / 2, 1 / 2, 1 / 2, 1 / 2])
    assert simbody_chain(one[:3], v0[:3], 1.0, "sequential", 1, False) == pytest.approx([0, 1 / 2, 1 / 2])


@pytest.mark.parametrize("impacts", ["simultaneous", "sequential", "mixed"])
def test_random_chains_match_simbody_replica(impacts):
    rng = np.random.default_rng({"simultaneous": 1, "sequential": 2, "mixed": 3}[impacts])
    for trial in range(25):
        n = int(rng.integers(2, 6))
        mass = rng.uniform(0.3, 3.0, n)
        u0 = rng.normal(size=n)
        e = float(rng.choice([0.0, 0.5, 1.0]))
        rounds = int(rng.integers(1, 6))
        newton = bool(rng.integers(0, 2))
        expect = simbody_chain(mass, u0, e, impacts, rounds, newton)
        stepper = ImpulseStepper(impacts=impacts, max_impact_rounds=rounds, projection="none",
                                 restitution="newton" if newton else "poisson")
        out = stepper.step(chain_scene(mass, e), np.zeros(n), u0, None, 1e-6)
        case = (trial, n, e, rounds, newton)
        assert out.v == pytest.approx(expect, abs=1e-9), case
        assert out.stats["converged"] and out.stats["fallbacks"] == 0, case
        assert mass @ out.v == pytest.approx(mass @ u0, abs=1e-12), case  # momentum
        if not newton:  # Poisson with e <= 1 never creates energy
            assert mass @ out.v**2 <= mass @ u0**2 + 1e-12, case
