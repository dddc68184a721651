"""Stewart-Gough platform: forward kinematics by the constraint solver and leg forces along a
manoeuvre.

The 6-6 platform of :func:`sinews.loops.examples.stewart_platform`: six universal-prismatic-ball
legs (lower tube on a universal joint at the base, upper rod on a prismatic joint whose
coordinate is the leg length, a **ball** loop at the platform), a 20 kg platform on a free
joint, gravity -9.81 m/s^2 along z.

The platform follows a prescribed manoeuvre (heave, surge and roll sinusoids, period ``PERIOD``).
At every sample:

1. inverse kinematics in closed form gives the leg lengths; the
   :class:`~sinews.loops.ConstraintKinematicsSolver` with the six lengths frozen solves the
   *forward* kinematics from the previous pose (the error against the prescribed pose is
   reported);
2. the velocities and accelerations of the manoeuvre (central differences of the closed-form
   configuration) give the actuator forces by constrained inverse dynamics
   (:func:`sinews.constraints.inverse_dynamics_constraints`, the six prismatic joints
   actuated), next to the static forces (the same pose at rest).

Outputs: ``stewart_leg_forces.png`` (six actuator forces [N] against time [s], dynamic and
static), ``stewart_legs.png`` (leg lengths [m] and the forward-kinematics error [m] against
time [s]), ``stewart_trajectory.npz``, ``stewart_summary.json``.
"""

from __future__ import annotations

import math
import pathlib
import time

import numpy as np

from ._output import DemoOutput
from ._plots import Panel, curve, figure

NAME = "stewart"
DESCRIPTION = "Stewart-Gough platform (six UPS legs, ball loops): forward kinematics and leg forces along a manoeuvre"

PERIOD = 2.0  # s
AMPLITUDE = {"heave": 0.08, "surge": 0.06, "roll": 0.12}  # m, m, rad


def pose(t: float, home: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prescribed platform pose ``(R, p)`` at time ``t``."""
    from sinews.spatial import rot_x

    w = 2.0 * math.pi / PERIOD
    p = home + np.array([AMPLITUDE["surge"] * math.sin(w * t), 0.0, AMPLITUDE["heave"] * math.sin(2 * w * t)])
    return rot_x(AMPLITUDE["roll"] * math.sin(w * t)), p


def run(out_dir: pathlib.Path, quick: bool = False) -> dict:
    """Run the manoeuvre, write plots and data into ``out_dir``, return files and a summary."""
    import sinews
    from sinews.constraints import inverse_dynamics_constraints
    from sinews.loops import ConstraintKinematicsSolver
    from sinews.loops.examples import stewart_configuration, stewart_leg_lengths, stewart_platform

    out_dir = pathlib.Path(out_dir)
    t0 = time.perf_counter()
    mech = stewart_platform()
    m, cs, info = mech.model, mech.cs, mech.info
    legs = info["leg_v"]
    solver = ConstraintKinematicsSolver(m, cs)
    for i in range(6):
        solver.freeze(f"leg{i}_upper", which="q")
    actuated = np.zeros(m.nv, bool)
    actuated[legs] = True

    n = 21 if quick else 201
    T = np.linspace(0.0, PERIOD, n)
    h = 1e-4

    def q_at(t):
        return stewart_configuration(mech, *pose(t, info["home"]))

    L = np.empty((n, 6))
    F_dyn = np.empty((n, 6))
    F_static = np.empty((n, 6))
    fk_err = np.empty(n)
    iters = np.empty(n, dtype=int)
    q_prev = mech.q0.copy()
    zero = np.zeros(m.nv)
    for k, t in enumerate(T):
        R, p = pose(t, info["home"])
        L[k] = stewart_leg_lengths(mech, R, p)
        guess = q_prev.copy()
        guess[info["leg_q"]] = L[k]
        sol = solver.solve_q(guess).check()  # forward kinematics from the previous pose
        X = sinews.body_placement(m, sol.value, "platform")
        fk_err[k] = max(float(np.abs(X.p - p).max()), float(np.abs(X.R - R).max()))
        iters[k] = sol.iterations
        q_prev = sol.value
        q = q_at(t)
        qm, qp = q_at(t - h), q_at(t + h)
        v = (sinews.difference(m, qm, qp)) / (2 * h)
        a = (sinews.difference(m, q, qp) - sinews.difference(m, qm, q)) / (h * h)
        a = solver.solve_udot(q, v, a).value  # remove the finite-difference noise off the manifold
        F_dyn[k] = inverse_dynamics_constraints(m, q, v, a, cs, actuated).tau[legs]
        F_static[k] = inverse_dynamics_constraints(m, q, zero, zero, cs, actuated).tau[legs]
    wall = time.perf_counter() - t0

    out = DemoOutput(out_dir, NAME)

    legend = {"ncol": 3, "fontsize": 8}
    forces = figure(T, Panel(
        "actuator force (push +) [N]",
        [c for i in range(6) for c in (curve(F_dyn[:, i], f"leg {i}", color=f"C{i}"),
                                       curve(F_static[:, i], color=f"C{i}", ls=":", lw=1))],
        title="Leg forces along the manoeuvre (solid: dynamic, dotted: static)", legend=legend,
    ))
    legs = figure(
        T,
        Panel("leg length [m]", [curve(L[:, i], f"leg {i}") for i in range(6)],
              title="Leg lengths (closed-form inverse kinematics)", legend=legend),
        Panel("forward-kinematics pose error [m]", [curve(fk_err)], log=True),
    )
    out.plot("stewart_leg_forces.png", forces, figsize=(8.0, 5.0))
    out.plot("stewart_legs.png", legs, figsize=(7.5, 5.6))
    out.trajectory(
        {"t": T, "leg_length": L, "leg_force": F_dyn, "leg_force_static": F_static, "fk_error": fk_err,
         "fk_iterations": iters},
        units={"t": "s", "leg_length": "m", "leg_force": "N", "leg_force_static": "N", "fk_error": "m",
               "fk_iterations": "1"},
    )
    summary = {
        "samples": n,
        "max_leg_force_N": float(np.abs(F_dyn).max()),
        "max_static_leg_force_N": float(np.abs(F_static).max()),
        "platform_weight_N": 20.0 * 9.81,
        "max_fk_error_m": float(fk_err.max()),
        "mean_fk_iterations": float(iters.mean()),
        "wall_s": round(wall, 3),
    }
    units = {"samples": "1", "max_leg_force_N": "N", "max_static_leg_force_N": "N", "platform_weight_N": "N",
             "max_fk_error_m": "m", "mean_fk_iterations": "1", "wall_s": "s"}
    print(f"stewart: {n} poses, max leg force {summary['max_leg_force_N']:.0f} N (static "
          f"{summary['max_static_leg_force_N']:.0f} N), forward-kinematics error <= {fk_err.max():.1e} m; {wall:.1f} s")
    return out.finish(summary, units)
