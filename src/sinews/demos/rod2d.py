"""Drake's Rod2D falling to rest on the ground (docs/examples/rod2d.md).

Drake's rigid-contact example (:func:`sinews.sim.examples.rod2d`): a rod of mass 2 kg, half
length ``L = 1 m`` and rotational inertia 1 kg m^2 in a vertical plane (a planar joint), both
endpoints contact points, Coulomb friction 0.5.  Released at rest, tilted by ``theta0 = 0.6 rad``
with its centre ``y0 = 1 m`` above the ground, it falls, lands on one end, rotates down and comes
to rest lying on the ground.  As in Drake's ``kDiscretized`` mode it runs with the discretised
LCP (``stepper="lcp"``), whose CFM and ERP come from the contact stiffness ``k`` (1e6 N/m) and
damping.  Closed forms:

* free fall until the low end touches: ``y(t) = y0 - g t^2 / 2`` until
  ``t_c = sqrt(2 (y0 - L sin(theta0)) / g)`` (0.298 s); semi-implicit Euler follows the
  discrete parabola ``y_n = y0 - g t_n (t_n + h) / 2`` exactly (an ``O(h)`` difference, 3 mm);
* at rest: ``theta = 0``, the ground carries the weight ``m g`` (19.62 N), each endpoint
  ``m g / (2 k)`` below the surface (the contact spring): ``y = -m g / (2 k)`` = -9.8 um.

2 ms step, 2.5 s (``quick``: 1 s; the rod is at rest from about 0.6 s on).

Files: trajectory (NPZ: x, y, theta, their rates, the vertical contact force and the number of
contacts), ``rod2d.png`` (height and angle against time), ``rod2d_force.png`` (vertical ground
force against the weight), the summary (JSON) and ``rod2d.html`` (3-D animation; the rod is drawn
as a thin box, its contact points are the two ends).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ._output import DemoOutput
from ._plots import Panel, curve, figure, hline

NAME = "rod2d"
DESCRIPTION = "Drake's Rod2D (discretised LCP) falls, lands on one end and comes to rest on the ground"

ANGLE = 0.6  # rad, initial tilt
HEIGHT = 1.0  # m, initial height of the centre
HALF_LENGTH = 1.0  # m
MASS = 2.0  # kg
G = 9.81  # m/s^2, the models' gravity


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..sim import simulate
    from ..sim.examples import rod2d
    from ..viewer import write_html

    duration, dt = (1.0, 2e-3) if quick else (2.5, 2e-3)
    scene, q0, v0 = rod2d(angle=ANGLE, height=HEIGHT, half_length=HALF_LENGTH, mass=MASS)
    res = simulate(scene, q0, v0, duration, dt, stepper="lcp", progress=True)
    t = res.t
    x, y, theta = res.q.T
    F = res.total_contact_force()
    weight = MASS * G
    k = float(scene.stiffness)
    t_c = math.sqrt(2.0 * (HEIGHT - HALF_LENGTH * math.sin(ANGLE)) / G)
    touched = np.flatnonzero(F[:, 2] > 0.0)
    t_touch = float(t[touched[0]]) if len(touched) else float("nan")
    falling = t < t_c - 2 * dt
    y_ff = HEIGHT - 0.5 * G * t**2
    y_euler = HEIGHT - 0.5 * G * t * (t + dt)  # semi-implicit Euler's exact discrete parabola

    out = DemoOutput(out_dir, NAME)
    out.trajectory(
        {"t": t, "x": x, "y": y, "theta": theta, "vx": res.v[:, 0], "vy": res.v[:, 1], "omega": res.v[:, 2],
         "contact_force_vertical": F[:, 2], "num_contacts": res.num_contacts, "energy": res.energy},
        units={"t": "s", "x": "m", "y": "m", "theta": "rad", "vx": "m/s", "vy": "m/s", "omega": "rad/s",
               "contact_force_vertical": "N", "num_contacts": "1", "energy": "J"},
    )
    out.plot("rod2d.png", figure(
        t,
        Panel("height of the centre y [m]",
              [curve(y, "sinews ('lcp')"),
               curve(np.where(t <= t_c, y_ff, np.nan), "free fall y0 - g t^2 / 2", "k--", lw=1)],
              legend=True, title="Drake's Rod2D falls to rest"),
        Panel("angle theta [rad]", [curve(theta)]),
    ))
    out.plot("rod2d_force.png", figure(t, Panel(
        "vertical ground force [N]", [curve(F[:, 2], "sinews"), hline(weight, f"weight m g = {weight:.2f} N")],
        legend=True,
    )))
    scene.model.add_visual("rod", "box", (2 * HALF_LENGTH, 0.04, 0.04), rgba=(0.20, 0.47, 0.78, 1.0))
    html = write_html(scene, res, out.path("rod2d.html"), title="Drake's Rod2D (sinews)", visuals=True,
                      info={"stepper": res.stepper, "time step": f"{dt * 1e3:g} ms", "friction": "mu = 0.5"})
    out.add_file(html)

    summary = {
        "stepper": res.stepper, "duration_s": float(t[-1]), "dt_s": dt, "mass_kg": MASS,
        "contact_stiffness_N_m": k,
        "first_contact_time_closed_form_s": t_c,
        "first_contact_time_s": t_touch,
        "free_fall_max_error_m": float(np.abs(y[falling] - y_ff[falling]).max()),
        "free_fall_max_error_discrete_m": float(np.abs(y[falling] - y_euler[falling]).max()),
        "final_height_closed_form_m": -weight / (2.0 * k),
        "final_height_m": float(y[-1]),
        "final_angle_closed_form_rad": 0.0,
        "final_angle_rad": float(math.remainder(theta[-1], math.pi)),
        "final_vertical_force_closed_form_N": weight,
        "final_vertical_force_N": float(F[-1, 2]),
        "final_speed_max": float(np.abs(res.v[-1]).max()),
        "final_contacts": int(res.num_contacts[-1]),
        "all_converged": bool(np.all(res.converged)),
        "animation": html.name,
    }
    units = {"duration_s": "s", "dt_s": "s", "mass_kg": "kg", "contact_stiffness_N_m": "N/m",
             "first_contact_time_closed_form_s": "s", "first_contact_time_s": "s", "free_fall_max_error_m": "m",
             "free_fall_max_error_discrete_m": "m",
             "final_height_closed_form_m": "m", "final_height_m": "m", "final_angle_closed_form_rad": "rad",
             "final_angle_rad": "rad", "final_vertical_force_closed_form_N": "N", "final_vertical_force_N": "N",
             "final_speed_max": "m/s or rad/s", "final_contacts": "1"}
    return out.finish(summary, units)
