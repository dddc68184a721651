"""Double-wishbone suspension: camber and toe against wheel travel, and a spring-damper drop.

The corner of :func:`sinews.loops.examples.double_wishbone` (chassis fixed; x forward, y
outward, z up): lower control arm on a revolute joint, spindle on the lower ball joint, upper
control arm and tie rod on spherical joints of the spindle, closed by a **pin** loop (upper arm
to chassis) and a **ball** loop (tie rod to chassis).

1. Kinematics: the lower-arm angle is frozen at values across the travel and the
   :class:`~sinews.loops.ConstraintKinematicsSolver` closes both loops; the wheel centre's
   height gives the wheel travel, the spindle's spin axis the camber (negative: top of the wheel
   inward) and the toe (rotation of the wheel about z; positive: front of the wheel outward).
2. Dynamics: a torsion bar with a damper on the upper-arm pivot (a cut-joint force of the pin
   loop) carries the corner; released at the reference position, the wheel drops and settles
   (:func:`sinews.simulate` with constraints and projection).  The reaction force at the pin
   loop's node (:func:`sinews.loops.node_wrenches`) is recorded.

Outputs: ``wishbone_camber_toe.png`` (camber and toe [deg] against travel [mm]),
``wishbone_drop.png`` (travel [mm] and pivot force [N] against time [s]),
``wishbone_trajectory.npz``, ``wishbone_summary.json``.
"""

from __future__ import annotations

import math
import pathlib
import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ._output import DemoOutput
from ._plots import Panel, curve, figure

if TYPE_CHECKING:
    from ..loops.examples import Mechanism

NAME = "wishbone"
DESCRIPTION = "double-wishbone suspension (pin and ball loops): camber and toe vs wheel travel, spring-damper drop"

SPRING = (1500.0, 40.0)  # torsion bar on the upper-arm pivot: N m/rad, N m s/rad


def sweep(mech: Mechanism, angles: ArrayLike) -> tuple[np.ndarray, ...]:
    """Closed configurations for the lower-arm ``angles``; returns (q list, travel m, camber rad,
    toe rad, residuals)."""
    import sinews
    from sinews.loops import ConstraintKinematicsSolver

    m, info = mech.model, mech.info
    solver = ConstraintKinematicsSolver(m, mech.cs).freeze("lower_arm")
    wc = np.array(info["wheel_centre"])
    z0 = (sinews.body_placement(m, mech.q0, "spindle").R @ wc + sinews.body_placement(m, mech.q0, "spindle").p)[2]
    order = np.argsort(np.abs(angles))  # from the reference outwards: each start is close
    Q = [None] * len(angles)
    travel, camber, toe, res = (np.empty(len(angles)) for _ in range(4))
    q_up, q_down = mech.q0.copy(), mech.q0.copy()
    for i in order:
        q = (q_up if angles[i] >= 0 else q_down).copy()
        q[info["lca_q"]] = angles[i]
        sol = solver.solve_q(q).check()
        q = sol.value
        if angles[i] >= 0:
            q_up = q
        else:
            q_down = q
        X = sinews.body_placement(m, q, "spindle")
        a = X.R[:, 1]  # spin axis (outward)
        f = X.R[:, 0]  # wheel forward direction
        Q[i] = q
        travel[i] = (X.R @ wc + X.p)[2] - z0
        camber[i] = -math.asin(a[2])
        toe[i] = math.atan2(f[1], f[0])
        res[i] = sol.residual
    return np.array(Q), travel, camber, toe, res


def run(out_dir: pathlib.Path, quick: bool = False) -> dict:
    """Sweep the travel, simulate the drop, write plots and data into ``out_dir``."""
    import sinews
    from sinews.loops import node_wrenches
    from sinews.loops.examples import double_wishbone
    from sinews.constraints import forward_dynamics_constraints
    from sinews.loops import cut_joint_forces

    out_dir = pathlib.Path(out_dir)
    t0 = time.perf_counter()
    mech = double_wishbone(spring=SPRING)
    m, cs = mech.model, mech.cs
    n = 11 if quick else 61
    angles = np.linspace(-0.25, 0.25, n)
    _, travel, camber, toe, res = sweep(mech, angles)
    print(f"wishbone: travel {1e3 * travel.min():.0f} .. {1e3 * travel.max():.0f} mm, camber "
          f"{math.degrees(camber.min()):.2f} .. {math.degrees(camber.max()):.2f} deg")

    duration, dt = (0.3, 5e-3) if quick else (2.0, 2e-3)
    tr = sinews.simulate(m, mech.q0, np.zeros(m.nv), duration=duration, dt=dt, constraints=cs,
                         progress=not quick, record_every=1 if quick else 5)
    wc = np.array(mech.info["wheel_centre"])
    z = np.array([(sinews.body_placement(m, q, "spindle").R @ wc + sinews.body_placement(m, q, "spindle").p)[2]
                  for q in tr.q])
    drop = z - z[0]
    force = np.empty(len(tr.t))
    for k, (q, v) in enumerate(zip(tr.q, tr.v)):
        tau = cut_joint_forces(m, q, v, cs)
        r = forward_dynamics_constraints(m, q, v, tau, cs)
        force[k] = np.linalg.norm(node_wrenches(m, q, cs, r)["upper_arm_pivot/source"].wrench_world[3:])
    wall = time.perf_counter() - t0

    out = DemoOutput(out_dir, NAME)

    kinematics = figure(
        1e3 * travel,
        Panel("camber (top inward -) [deg]", [curve(np.degrees(camber), None, "o-", ms=3)], title="Camber curve"),
        Panel("toe (front outward +) [deg]", [curve(np.degrees(toe), None, "o-", ms=3, color="C1")],
              title="Bump steer"),
        xlabel="wheel travel (bump +) [mm]", columns=True,
    )
    drop_plot = figure(
        tr.t,
        Panel("wheel travel [mm]", [curve(1e3 * drop)],
              title=f"Drop on a torsion bar k = {SPRING[0]:g} N m/rad, c = {SPRING[1]:g} N m s/rad"),
        Panel("upper pivot force [N]", [curve(force, color="C3")]),
    )
    out.plot("wishbone_camber_toe.png", kinematics, figsize=(9.0, 4.0))
    out.plot("wishbone_drop.png", drop_plot, figsize=(7.5, 5.0))
    out.trajectory(
        {"lower_arm_angle": angles, "travel": travel, "camber": camber, "toe": toe, "t": tr.t, "q": tr.q, "v": tr.v,
         "drop": drop, "pivot_force": force, "constraint_error": tr.constraint_error, "energy": tr.energy},
        units={"lower_arm_angle": "rad", "travel": "m", "camber": "rad", "toe": "rad", "t": "s", "q": "rad or m (per joint)",
               "v": "rad/s or m/s (per joint)", "drop": "m", "pivot_force": "N", "constraint_error": "m",
               "energy": "J"},
    )
    summary = {
        "travel_range_mm": [1e3 * float(travel.min()), 1e3 * float(travel.max())],
        "camber_range_deg": [math.degrees(float(camber.min())), math.degrees(float(camber.max()))],
        "toe_range_deg": [math.degrees(float(toe.min())), math.degrees(float(toe.max()))],
        "max_closure_residual": float(res.max()),
        "static_sag_mm": 1e3 * float(drop[-1]),
        "final_pivot_force_N": float(force[-1]),
        "max_constraint_drift": float(tr.constraint_error.max()),
        "duration": duration,
        "dt": dt,
        "wall_s": round(wall, 3),
    }
    units = {"travel_range_mm": "mm", "camber_range_deg": "deg", "toe_range_deg": "deg",
             "max_closure_residual": "m", "static_sag_mm": "mm", "final_pivot_force_N": "N",
             "max_constraint_drift": "m", "duration": "s", "dt": "s", "wall_s": "s"}
    print(f"  drop: sag {summary['static_sag_mm']:.1f} mm, pivot force {force[-1]:.0f} N, "
          f"max drift {summary['max_constraint_drift']:.1e} m; {wall:.1f} s")
    return out.finish(summary, units)
