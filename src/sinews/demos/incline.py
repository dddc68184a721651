"""A block on an incline: it sticks iff ``tan(theta) <= mu`` (docs/examples/incline.md).

A 1 kg block (0.2 x 0.2 x 0.1 m, :func:`sinews.sim.examples.block_on_incline`) is put at rest on
a plane tilted by ``theta`` (a tilted ground half-space), Coulomb friction ``mu = 0.4``.  Static
friction holds it if and only if ``tan(theta) <= mu``; otherwise it slides down the slope with

    a = g (sin(theta) - mu cos(theta)),     s(t) = a t^2 / 2.

Two angles: 0.3 rad (``tan`` = 0.309 <= 0.4: it sticks) and 0.5 rad (``tan`` = 0.546 > 0.4: it
slides, a = 1.259 m/s^2).  ``default`` stepper, 1 ms step, 1 s (``quick``: 0.5 s).  The
simulated acceleration is the speed along the slope at the end divided by the time (the speed
grows by exactly ``a h`` per step).

Files: trajectory (NPZ: distance slid and speed for each angle), ``incline.png`` (distance and
speed against time, the closed form dashed), the summary (JSON) and ``incline_stick.html`` /
``incline_slide.html`` (3-D animations).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ._output import DemoOutput
from ._plots import Panel, curve, figure

NAME = "incline"
DESCRIPTION = "Block on an incline: sticks iff tan(theta) <= mu, else slides with g (sin - mu cos)"

FRICTION = 0.4
#: case -> tilt angle of the plane [rad]
ANGLES = {"stick": 0.3, "slide": 0.5}
G = 9.81  # m/s^2, the models' gravity
STICK_DISTANCE = 1e-4  # m: a block that moved less than this sticks


def _acceleration(angle: float, friction: float = FRICTION) -> float:
    """Closed-form acceleration down the slope [m/s^2] (0 when it sticks)."""
    if math.tan(angle) <= friction:
        return 0.0
    return G * (math.sin(angle) - friction * math.cos(angle))


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..sim import simulate
    from ..sim.examples import block_on_incline
    from ..viewer import write_html
    from .quadruped import compile_kernels

    compile_kernels()
    duration, dt = (0.5, 1e-3) if quick else (1.0, 1e-3)
    runs = {}
    for case, angle in ANGLES.items():
        scene, q0, v0 = block_on_incline(angle, FRICTION)
        runs[case] = (scene, q0, simulate(scene, q0, v0, duration, dt, stepper="default", progress=True))
    t = runs["stick"][2].t
    dist = {case: np.linalg.norm(res.q[:, :3] - q0[:3], axis=1) for case, (_, q0, res) in runs.items()}
    speed = {case: np.linalg.norm(res.v[:, 3:6], axis=1) for case, (_, _, res) in runs.items()}
    a_cf = {case: _acceleration(angle) for case, angle in ANGLES.items()}

    out = DemoOutput(out_dir, NAME)
    arrays, units = {"t": t}, {"t": "s"}
    for case in ANGLES:
        arrays.update({f"distance_{case}": dist[case], f"speed_{case}": speed[case],
                       f"distance_closed_form_{case}": 0.5 * a_cf[case] * t**2})
        units.update({f"distance_{case}": "m", f"speed_{case}": "m/s", f"distance_closed_form_{case}": "m"})
    out.trajectory(arrays, units)

    def label(case):
        th = ANGLES[case]
        return f"theta = {th:g} rad, tan = {math.tan(th):.3f} ({'<=' if math.tan(th) <= FRICTION else '>'} mu)"

    out.plot("incline.png", figure(
        t,
        Panel("distance slid down [m]", [curve(dist[c], label(c)) for c in ANGLES]
              + [curve(0.5 * a_cf[c] * t**2, "closed form a t^2 / 2" if c == "slide" else None, "k--", lw=1)
                 for c in ANGLES],
              legend=True, title=f"block on an incline, mu = {FRICTION:g}: sticks iff tan(theta) <= mu"),
        Panel("speed [m/s]", [curve(speed[c]) for c in ANGLES]
              + [curve(a_cf[c] * t, None, "k--", lw=1) for c in ANGLES]),
    ))
    htmls = []
    for case, (scene, _, res) in runs.items():
        htmls.append(out.add_file(write_html(
            scene, res, out.path(f"incline_{case}.html"), title=f"Block on an incline, {case}s (sinews)",
            info={"stepper": res.stepper, "time step": f"{dt * 1e3:g} ms",
                  "incline": f"{ANGLES[case]:g} rad (tan {math.tan(ANGLES[case]):.3f})",
                  "friction": f"mu = {FRICTION:g}"})))

    T = float(t[-1])
    angles = list(ANGLES.values())
    a_sim = [float(speed[c][-1] / T) for c in ANGLES]
    summary = {
        "friction": FRICTION, "duration_s": T, "dt_s": dt,
        "cases": ", ".join(ANGLES),
        "angle_rad": angles,
        "tan_angle": [math.tan(a) for a in angles],
        "sticks_closed_form": [math.tan(a) <= FRICTION for a in angles],
        "sticks_simulated": [bool(dist[c].max() < STICK_DISTANCE) for c in ANGLES],
        "acceleration_closed_form_m_s2": [a_cf[c] for c in ANGLES],
        "acceleration_simulated_m_s2": a_sim,
        "acceleration_error_m_s2": [abs(a - a_cf[c]) for a, c in zip(a_sim, ANGLES)],
        "distance_closed_form_m": [0.5 * a_cf[c] * T**2 for c in ANGLES],
        "distance_simulated_m": [float(dist[c][-1]) for c in ANGLES],
        "max_penetration_m": float(max(res.penetration.max() for _, _, res in runs.values())),
        "animations": ", ".join(h.name for h in htmls),
    }
    units = {"friction": "1", "duration_s": "s", "dt_s": "s", "angle_rad": "rad", "tan_angle": "1",
             "sticks_closed_form": "1 (true/false)", "sticks_simulated": "1 (true/false)",
             "acceleration_closed_form_m_s2": "m/s^2", "acceleration_simulated_m_s2": "m/s^2",
             "acceleration_error_m_s2": "m/s^2", "distance_closed_form_m": "m", "distance_simulated_m": "m",
             "max_penetration_m": "m"}
    return out.finish(summary, units)
