"""A stack of five boxes standing still for 10 s (docs/examples/box-stack.md).

Five 10 cm cubes (1 kg each, friction 0.8, :func:`sinews.sim.examples.box_stack`) are stacked on
the ground at rest.  The closed form is that nothing moves: every box stays where it is (the
demo reports the largest displacement of any box, which should stay below 1 mm), and the ground
carries the weight of the stack, ``5 m g`` = 49.05 N.  Each face-to-face contact is four
points (20 in all).  ``default`` stepper, 10 ms step, 10 s (also with ``quick``: the run takes a
fraction of a second).

Files: trajectory (NPZ: the coordinates, the displacement of every box, the vertical ground
force, the number of contacts), ``box_stack.png`` (height change of each box against time),
``box_stack_force.png`` (vertical ground force against the weight), the summary (JSON) and
``box_stack.html`` (3-D animation).
"""

from __future__ import annotations

import os

import numpy as np

from ._output import DemoOutput
from ._plots import Panel, curve, figure, hline

NAME = "box-stack"
DESCRIPTION = "Five stacked boxes stand still for 10 s (drift < 1 mm, the ground carries 5 m g)"

N_BOXES = 5
MASS = 1.0  # kg per box
G = 9.81  # m/s^2, the models' gravity
DRIFT_LIMIT = 1e-3  # m


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..sim import simulate
    from ..sim.examples import box_stack
    from ..viewer import write_html
    from .quadruped import compile_kernels

    compile_kernels()
    duration, dt = 10.0, 1e-2  # cheap enough for quick mode too
    scene, q0, v0 = box_stack(n=N_BOXES, mass=MASS)
    res = simulate(scene, q0, v0, duration, dt, stepper="default", progress=True)
    t = res.t
    pos = np.stack([res.q[:, 7 * i:7 * i + 3] - q0[7 * i:7 * i + 3] for i in range(N_BOXES)], axis=1)  # (N, 5, 3)
    displacement = np.linalg.norm(pos, axis=2)  # (N, 5)
    # the force of each contact acts on the second geometry of its pair: on a box where the
    # ground (geometry 0) is first, on the ground where it is second
    sign = (res.contact_geoms[:, 0] == 0).astype(float) - (res.contact_geoms[:, 1] == 0)
    ground_force = np.zeros(len(t))
    np.add.at(ground_force, res.contact_sample, sign * res.contact_forces[:, 2])
    weight = N_BOXES * MASS * G

    out = DemoOutput(out_dir, NAME)
    out.trajectory(
        {"t": t, "q": res.q, "displacement": displacement, "height_change": pos[:, :, 2],
         "ground_force_vertical": ground_force, "num_contacts": res.num_contacts},
        units={"t": "s", "q": "m (positions), 1 (quaternions)", "displacement": "m", "height_change": "m",
               "ground_force_vertical": "N", "num_contacts": "1"},
    )
    out.plot("box_stack.png", figure(
        t,
        Panel("height change [mm]", [curve(1e3 * pos[:, i, 2], f"box {i + 1}") for i in range(N_BOXES)]
              + [hline(1e3 * DRIFT_LIMIT, "limit +-1 mm"), hline(-1e3 * DRIFT_LIMIT)],
              legend={"ncol": 3, "fontsize": 8},
              title=f"{N_BOXES} stacked boxes, {duration:g} s at dt = {dt * 1e3:g} ms (closed form: no motion)"),
        Panel("displacement |p - p0| [m]", [curve(displacement[:, i]) for i in range(N_BOXES)]
              + [hline(DRIFT_LIMIT)], log=True),
    ), figsize=(7.5, 6.0))
    out.plot("box_stack_force.png", figure(t, Panel(
        "vertical ground force [N]", [curve(ground_force, "sinews"), hline(weight, f"weight 5 m g = {weight:.2f} N")],
        legend=True,
    )))
    html = write_html(scene, res, out.path("box_stack.html"), title="Five stacked boxes (sinews)",
                      info={"stepper": res.stepper, "time step": f"{dt * 1e3:g} ms"})
    out.add_file(html)

    drift = float(displacement.max())
    summary = {
        "stepper": res.stepper, "duration_s": float(t[-1]), "dt_s": dt, "boxes": N_BOXES,
        "max_drift_closed_form_m": 0.0,
        "max_drift_m": drift,
        "drift_limit_m": DRIFT_LIMIT,
        "stands_still": bool(drift < DRIFT_LIMIT),
        "ground_force_closed_form_N": weight,
        "final_ground_force_N": float(ground_force[-1]),
        "ground_force_rel_error": float(abs(ground_force[-1] - weight) / weight),
        "final_contacts": int(res.num_contacts[-1]),
        "max_penetration_m": float(res.penetration.max()),
        "all_converged": bool(np.all(res.converged)),
        "animation": html.name,
    }
    units = {"duration_s": "s", "dt_s": "s", "boxes": "1", "max_drift_closed_form_m": "m", "max_drift_m": "m",
             "drift_limit_m": "m", "ground_force_closed_form_N": "N", "final_ground_force_N": "N",
             "ground_force_rel_error": "1", "final_contacts": "1", "max_penetration_m": "m"}
    return out.finish(summary, units)
