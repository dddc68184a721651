"""A brick sliding to a stop: distance ``v^2 / (2 mu g)`` (docs/examples/sliding-brick.md).

A 1 kg brick (0.2 x 0.1 x 0.05 m, :func:`sinews.sim.examples.sliding_brick`) is launched along x
at ``v = 2 m/s`` on the ground with Coulomb friction ``mu = 0.5``.  Kinetic friction decelerates
it at ``mu g``, so it stops after

    d = v^2 / (2 mu g) = 0.408 m     at     t_stop = v / (mu g) = 0.408 s

and stays there (static friction holds it).  The demo runs the three steppers (``default``,
``lcp``, ``impulse``), 1 ms step, 1 s (``quick``: 0.5 s), and compares the stopping distance and
time of each with the closed form (semi-implicit Euler: an error of order ``h v / 2``).

Files: trajectory (NPZ: position and velocity along x for each stepper), ``sliding_brick.png``
(position and velocity against time, the closed form dashed), the summary (JSON) and
``sliding_brick.html`` (3-D animation of the ``default`` run).
"""

from __future__ import annotations

import os

import numpy as np

from ._output import DemoOutput
from ._plots import Panel, curve, figure

NAME = "sliding-brick"
DESCRIPTION = "Brick sliding to a stop under Coulomb friction: distance against v^2 / (2 mu g)"

SPEED = 2.0  # m/s
FRICTION = 0.5
G = 9.81  # m/s^2, the models' gravity
STEPPERS = ("default", "lcp", "impulse")
REST_SPEED = 1e-6  # m/s: below this sliding speed the brick counts as stopped


def _closed_form(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x(t), v(t)) of the brick: uniform deceleration ``mu g`` until it stops, then at rest."""
    ts = SPEED / (FRICTION * G)
    tt = np.minimum(t, ts)
    return SPEED * tt - 0.5 * FRICTION * G * tt**2, SPEED - FRICTION * G * tt


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..sim import simulate
    from ..sim.examples import sliding_brick
    from ..viewer import write_html
    from .quadruped import compile_kernels

    compile_kernels()
    duration, dt = (0.5, 1e-3) if quick else (1.0, 1e-3)
    runs = {}
    for stepper in STEPPERS:
        scene, q0, v0 = sliding_brick(speed=SPEED, friction=FRICTION)
        runs[stepper] = (scene, simulate(scene, q0, v0, duration, dt, stepper=stepper, progress=True))
    t = runs["default"][1].t
    x_cf, v_cf = _closed_form(t)
    d_cf, t_cf = SPEED**2 / (2 * FRICTION * G), SPEED / (FRICTION * G)

    out = DemoOutput(out_dir, NAME)
    arrays, units = {"t": t, "x_closed_form": x_cf, "vx_closed_form": v_cf}, {"t": "s", "x_closed_form": "m",
                                                                           "vx_closed_form": "m/s"}
    for stepper, (_, res) in runs.items():
        arrays.update({f"x_{stepper}": res.q[:, 0], f"vx_{stepper}": res.v[:, 3]})
        units.update({f"x_{stepper}": "m", f"vx_{stepper}": "m/s"})
    out.trajectory(arrays, units)

    out.plot("sliding_brick.png", figure(
        t,
        Panel("position x [m]", [curve(runs[s][1].q[:, 0], f"stepper {s!r}") for s in STEPPERS]
              + [curve(x_cf, "closed form", "k--", lw=1)], legend=True,
              title=f"brick sliding to a stop: v^2 / (2 mu g) = {d_cf:.3f} m"),
        Panel("velocity v_x [m/s]", [curve(runs[s][1].v[:, 3]) for s in STEPPERS] + [curve(v_cf, None, "k--", lw=1)]),
    ))
    scene, res = runs["default"]
    html = write_html(scene, res, out.path("sliding_brick.html"), title="Brick sliding to a stop (sinews)",
                      info={"stepper": res.stepper, "time step": f"{dt * 1e3:g} ms",
                            "friction": f"mu = {FRICTION:g}", "closed form": f"stops after {d_cf:.3f} m"})
    out.add_file(html)

    summary = {
        "speed_m_s": SPEED, "friction": FRICTION, "duration_s": float(t[-1]), "dt_s": dt,
        "stop_distance_closed_form_m": d_cf, "stop_time_closed_form_s": t_cf,
    }
    units = {"speed_m_s": "m/s", "friction": "1", "duration_s": "s", "dt_s": "s",
             "stop_distance_closed_form_m": "m", "stop_time_closed_form_s": "s"}
    worst = 0.0
    for stepper, (_, res) in runs.items():
        vx = res.v[:, 3]
        moving = np.flatnonzero(np.linalg.norm(res.v[:, 3:5], axis=1) >= REST_SPEED)  # sliding speed
        t_stop = float(res.t[moving[-1] + 1]) if len(moving) and moving[-1] + 1 < len(t) else float("nan")
        d = float(res.q[-1, 0])
        rel = abs(d - d_cf) / d_cf
        worst = max(worst, rel)
        summary.update({
            f"stop_distance_{stepper}_m": d,
            f"stop_distance_rel_error_{stepper}": rel,
            f"stop_time_{stepper}_s": t_stop,
            f"final_speed_{stepper}_m_s": float(np.abs(vx[-1])),
            f"max_penetration_{stepper}_m": float(res.penetration.max()),
        })
        units.update({f"stop_distance_{stepper}_m": "m", f"stop_distance_rel_error_{stepper}": "1",
                      f"stop_time_{stepper}_s": "s", f"final_speed_{stepper}_m_s": "m/s",
                      f"max_penetration_{stepper}_m": "m"})
    summary["max_stop_distance_rel_error"] = worst
    units["max_stop_distance_rel_error"] = "1"
    summary["animation"] = html.name
    return out.finish(summary, units)
