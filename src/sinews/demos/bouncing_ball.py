"""A bouncing ball: each apex is ``e^2`` times the previous one (docs/examples/bouncing-ball.md).

A ball of radius 0.1 m (:func:`sinews.sim.examples.bouncing_ball`) is dropped from rest with its
lowest point ``h = 1 m`` above the ground, coefficient of restitution ``e = 0.8``, no friction.
Each bounce leaves the ground with ``e`` times the impact speed, so the ``k``-th apex is

    h_k = e^(2k) h          (0.64 m, 0.41 m, 0.26 m, ...)

The demo runs the ``default`` stepper (Newton restitution) and the ``impulse`` stepper (Poisson
restitution), 1 ms step, 3 s (``quick``: 2.3 s, three apexes), and compares the first
:data:`N_APEX` apexes of each with the closed form (the error is of order ``h |v| / h_k``: the
impact is resolved at the step where it happens).

Files: trajectory (NPZ: height of the lowest point, vertical velocity and energy of both runs),
``bouncing_ball.png`` (height against time, the closed-form apexes dashed),
``bouncing_ball_apex.png`` (apex heights against the bounce number), the summary (JSON, the
closed-form apexes next to the simulated ones) and ``bouncing_ball.html`` (3-D animation of the
``default`` run).
"""

from __future__ import annotations

import os

import numpy as np

from ._output import DemoOutput
from ._plots import Panel, curve, figure, hline

NAME = "bouncing-ball"
DESCRIPTION = "Ball bouncing with restitution e = 0.8: apex heights against the closed form e^(2k) h"

HEIGHT = 1.0  # m, lowest point of the ball above the ground at t = 0
RADIUS = 0.1  # m
RESTITUTION = 0.8
STEPPERS = ("default", "impulse")
N_APEX = 3  # apexes compared with the closed form


def _apexes(z: np.ndarray) -> np.ndarray:
    """Indices of the local maxima of the height ``z`` (the apexes of the bounces)."""
    return np.flatnonzero((z[1:-1] > z[:-2]) & (z[1:-1] >= z[2:])) + 1


def _apex_times(n: int, g: float = 9.81) -> np.ndarray:
    """Closed-form times of the first ``n`` apexes [s]: with ``u = sqrt(2 g h) / g`` the fall
    time, ``t_k = u (1 + 2 (e + ... + e^(k-1)) + e^k)``."""
    u = np.sqrt(2.0 * g * HEIGHT) / g
    e = RESTITUTION
    return np.array([u * (1.0 + 2.0 * sum(e**j for j in range(1, k)) + e**k) for k in range(1, n + 1)])


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..sim import simulate
    from ..sim.examples import bouncing_ball
    from ..viewer import write_html
    from .quadruped import compile_kernels

    compile_kernels()
    duration, dt = (2.3, 1e-3) if quick else (3.0, 1e-3)
    runs = {}
    for stepper in STEPPERS:
        scene, q0, v0 = bouncing_ball(height=HEIGHT, radius=RADIUS, restitution=RESTITUTION)
        runs[stepper] = (scene, simulate(scene, q0, v0, duration, dt, stepper=stepper, progress=True))
    t = runs["default"][1].t
    closed = HEIGHT * RESTITUTION ** (2 * np.arange(1, N_APEX + 1))
    closed_t = _apex_times(N_APEX)
    z, vz, apex, apex_t = {}, {}, {}, {}
    for stepper, (_, res) in runs.items():
        z[stepper] = res.q[:, 2] - RADIUS
        vz[stepper] = res.v[:, 5]
        i = _apexes(z[stepper])
        apex[stepper], apex_t[stepper] = z[stepper][i], res.t[i]
    for stepper in STEPPERS:
        if len(apex[stepper]) < N_APEX:
            raise RuntimeError(f"bouncing-ball: the {stepper!r} run has {len(apex[stepper])} apexes, "
                               f"expected at least {N_APEX}")

    out = DemoOutput(out_dir, NAME)
    arrays, units = {"t": t}, {"t": "s"}
    for stepper, (_, res) in runs.items():
        arrays.update({f"z_{stepper}": z[stepper], f"vz_{stepper}": vz[stepper], f"energy_{stepper}": res.energy})
        units.update({f"z_{stepper}": "m", f"vz_{stepper}": "m/s", f"energy_{stepper}": "J"})
    out.trajectory(arrays, units)

    refs = [hline(h, "closed form e^(2k) h" if k == 0 else None) for k, h in enumerate(closed)]
    out.plot("bouncing_ball.png", figure(t, Panel(
        "height of the lowest point [m]",
        [curve(z[s], f"stepper {s!r}") for s in STEPPERS] + refs,
        title=f"bouncing ball, e = {RESTITUTION:g}: apexes at e^(2k) h (dashed)", legend=True,
    )))
    k_all = np.arange(1, max(len(a) for a in apex.values()) + 1)
    out.plot("bouncing_ball_apex.png", figure(k_all, Panel(
        "apex height [m]",
        [curve(HEIGHT * RESTITUTION ** (2 * k_all), "closed form e^(2k) h", "k--")]
        + [curve(apex[s], f"stepper {s!r}", "o", x=np.arange(1, len(apex[s]) + 1)) for s in STEPPERS],
        log=True, legend=True, title="apex heights against the closed form",
    ), xlabel="bounce k [1]"))
    scene, res = runs["default"]
    html = write_html(scene, res, out.path("bouncing_ball.html"), title="Bouncing ball (sinews)",
                      info={"stepper": res.stepper, "time step": f"{dt * 1e3:g} ms",
                            "restitution": f"e = {RESTITUTION:g}"})
    out.add_file(html)

    summary = {
        "restitution": RESTITUTION,
        "drop_height_m": HEIGHT,
        "duration_s": float(t[-1]),
        "dt_s": dt,
        "apex_closed_form_m": closed,
        "apex_time_closed_form_s": closed_t,
    }
    units = {"restitution": "1", "drop_height_m": "m", "duration_s": "s", "dt_s": "s", "apex_closed_form_m": "m",
             "apex_time_closed_form_s": "s"}
    worst = 0.0
    for stepper in STEPPERS:
        sim = apex[stepper][:N_APEX]
        rel = np.abs(sim - closed) / closed
        worst = max(worst, float(rel.max()))
        summary.update({
            f"apex_{stepper}_m": sim,
            f"apex_time_{stepper}_s": apex_t[stepper][:N_APEX],
            f"apex_rel_error_{stepper}": rel,
            f"max_penetration_{stepper}_m": float(runs[stepper][1].penetration.max()),
        })
        units.update({f"apex_{stepper}_m": "m", f"apex_time_{stepper}_s": "s", f"apex_rel_error_{stepper}": "1",
                      f"max_penetration_{stepper}_m": "m"})
    summary["max_apex_rel_error"] = worst
    units["max_apex_rel_error"] = "1"
    summary["animation"] = html.name
    return out.finish(summary, units)
