"""Newton's cradle: sequential against simultaneous impacts (docs/examples/newtons-cradle.md).

Three equal balls (radius 0.1 m, 1 kg) touch in a row, each on a prismatic joint along x, no
gravity (:func:`sinews.sim.examples.newtons_cradle`); the first arrives at ``v = 1 m/s``,
restitution ``e = 1``.  The velocities after the impact depend on the impact model:

* sequential impacts (the ``impulse`` stepper, ``impacts="sequential"``: only the contacts that
  are impacting take part, in rounds): ball 1 stops, ball 2 passes it on, ``(0, 0, v)``;
* simultaneous impacts (the ``impulse`` stepper, ``impacts="simultaneous"``, and the ``default``
  stepper, which solves one coupled velocity-level problem per step):
  ``(-v/3, 2v/3, 2v/3)``.

Both conserve momentum (``m v``) and kinetic energy (``m v^2 / 2``).  1 ms step, 1 s (``quick``:
0.3 s).

Files: trajectory (NPZ: positions and velocities of the three balls for each case),
``newtons_cradle.png`` (velocities after the impact against the closed forms),
``newtons_cradle_positions.png`` (positions against time), the summary (JSON) and
``newtons_cradle_sequential.html`` / ``newtons_cradle_simultaneous.html`` (3-D animations).
"""

from __future__ import annotations

import os

import numpy as np

from ._output import DemoOutput
from ._plots import Panel, curve, figure

NAME = "newtons-cradle"
DESCRIPTION = "Newton's cradle: sequential (0, 0, v) against simultaneous (-v/3, 2v/3, 2v/3) impacts"

SPEED = 1.0  # m/s, speed of the first ball
MASS = 1.0  # kg per ball
#: case -> (stepper, stepper options, closed-form velocities after the impact / SPEED)
CASES = {
    "sequential": ("impulse", {"impacts": "sequential", "restitution": "poisson"}, (0.0, 0.0, 1.0)),
    "simultaneous": ("impulse", {"impacts": "simultaneous", "restitution": "poisson"}, (-1 / 3, 2 / 3, 2 / 3)),
    "default": ("default", {}, (-1 / 3, 2 / 3, 2 / 3)),
}
LABELS = {"sequential": "sequential impacts (stepper 'impulse')",
          "simultaneous": "simultaneous impacts (stepper 'impulse')",
          "default": "stepper 'default' (one simultaneous problem per step)"}


def _bars(cases: dict, closed: dict):
    """``draw(fig)``: a bar per ball and case (sinews), the closed form as black marks."""

    def draw(fig) -> None:
        ax = fig.subplots()
        width = 0.8 / len(cases)
        for j, (case, v) in enumerate(cases.items()):
            x = np.arange(3) + (j - (len(cases) - 1) / 2) * width
            ax.bar(x, v, width, label=LABELS[case])
            ax.plot(x, closed[case], "k_", ms=16, mew=2, label="closed form" if j == 0 else None)
        ax.axhline(0.0, color="0.5", lw=0.6)
        ax.set_xticks(range(3), ["ball 1", "ball 2", "ball 3"])
        ax.set_xlabel("ball [1]")
        ax.set_ylabel("velocity after the impact [m/s]")
        ax.set_title(f"Newton's cradle, v = {SPEED:g} m/s, e = 1: sinews (bars), closed form (black)")
        ax.legend()

    return draw


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..sim import simulate
    from ..sim.examples import newtons_cradle
    from ..viewer import write_html
    from .quadruped import compile_kernels

    compile_kernels()
    duration, dt = (0.3, 1e-3) if quick else (1.0, 1e-3)
    runs = {}
    for case, (stepper, options, _) in CASES.items():
        scene, q0, v0 = newtons_cradle(speed=SPEED, mass=MASS)
        runs[case] = (scene, simulate(scene, q0, v0, duration, dt, stepper=stepper, progress=True,
                                      stepper_options=options))
    t = runs["sequential"][1].t
    after = {case: res.v[-1] for case, (_, res) in runs.items()}
    closed = {case: SPEED * np.array(c[2]) for case, c in CASES.items()}

    out = DemoOutput(out_dir, NAME)
    arrays, units = {"t": t}, {"t": "s"}
    for case, (_, res) in runs.items():
        arrays.update({f"x_{case}": res.q, f"v_{case}": res.v})
        units.update({f"x_{case}": "m", f"v_{case}": "m/s"})
    out.trajectory(arrays, units)

    out.plot("newtons_cradle.png", _bars(after, closed))
    out.plot("newtons_cradle_positions.png", figure(t, *[
        Panel("displacement [m]", [curve(runs[case][1].q[:, i], f"ball {i + 1}") for i in range(3)],
              title=LABELS[case], legend=case == "sequential")
        for case in CASES
    ], grid=False), figsize=(7.5, 7.0))
    htmls = []
    for case in ("sequential", "simultaneous"):
        scene, res = runs[case]
        htmls.append(out.add_file(write_html(
            scene, res, out.path(f"newtons_cradle_{case}.html"), title=f"Newton's cradle, {case} impacts (sinews)",
            info={"stepper": f"{res.stepper} (impacts={case})", "time step": f"{dt * 1e3:g} ms",
                  "closed form": f"v after = {tuple(round(float(x), 3) for x in closed[case])} m/s"})))

    summary = {"speed_m_s": SPEED, "mass_kg": MASS, "restitution": 1.0, "duration_s": float(t[-1]), "dt_s": dt}
    units = {"speed_m_s": "m/s", "mass_kg": "kg", "restitution": "1", "duration_s": "s", "dt_s": "s"}
    worst = 0.0
    for case in CASES:
        err = float(np.abs(after[case] - closed[case]).max())
        worst = max(worst, err)
        summary.update({
            f"v_after_{case}_m_s": after[case],
            f"v_closed_form_{case}_m_s": closed[case],
            f"v_error_{case}_m_s": err,
            f"momentum_after_{case}_kg_m_s": float(MASS * after[case].sum()),
            f"kinetic_energy_after_{case}_J": float(0.5 * MASS * (after[case] ** 2).sum()),
        })
        units.update({f"v_after_{case}_m_s": "m/s", f"v_closed_form_{case}_m_s": "m/s",
                      f"v_error_{case}_m_s": "m/s", f"momentum_after_{case}_kg_m_s": "kg m/s",
                      f"kinetic_energy_after_{case}_J": "J"})
    summary["momentum_before_kg_m_s"] = MASS * SPEED
    summary["kinetic_energy_before_J"] = 0.5 * MASS * SPEED**2
    summary["max_v_error_m_s"] = worst
    units.update({"momentum_before_kg_m_s": "kg m/s", "kinetic_energy_before_J": "J", "max_v_error_m_s": "m/s"})
    summary["animations"] = ", ".join(h.name for h in htmls)
    return out.finish(summary, units)
