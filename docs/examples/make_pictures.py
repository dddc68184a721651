"""Write the pictures of the simulation examples (docs/examples/*.png).

Run from the repository root: ``python docs/examples/make_pictures.py [OUT_DIR]``.  Each picture
shows a run of sinews.sim next to its closed form (units on both axes); they are kept small
(about 40 kB each).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sinews.sim import examples as ex  # noqa: E402
from sinews.sim import simulate  # noqa: E402

G = 9.81


def _save(fig, out, name):
    fig.tight_layout()
    path = Path(out) / name
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def bouncing_ball(out):
    e = 0.8
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for stepper in ("default", "impulse"):
        scene, q0, v0 = ex.bouncing_ball(restitution=e)
        r = simulate(scene, q0, v0, 3.0, 1e-3, stepper=stepper, progress=False, record_every=5)
        ax.plot(r.t, r.q[:, 2] - 0.1, label=f"stepper {stepper!r}")
    for k in range(1, 5):
        ax.axhline(e ** (2 * k), color="gray", lw=0.6, ls="--")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("height of the lowest point [m]")
    ax.set_title("bouncing ball, e = 0.8: apexes at e^(2k) (dashed)")
    ax.legend()
    return _save(fig, out, "bouncing_ball.png")


def newtons_cradle(out):
    fig, ax = plt.subplots(figsize=(6, 3.4))
    width = 0.25
    for j, (impacts, expect) in enumerate((("sequential", [0, 0, 1]), ("simultaneous", [-1 / 3, 2 / 3, 2 / 3]))):
        scene, q0, v0 = ex.newtons_cradle()
        r = simulate(scene, q0, v0, 0.005, 1e-3, stepper="impulse", progress=False,
                     stepper_options=dict(impacts=impacts))
        x = np.arange(3) + (j - 0.5) * width
        ax.bar(x, r.v[-1], width, label=f"{impacts} (sinews)")
        ax.plot(x, expect, "k_", ms=18)
    ax.set_xticks(range(3), ["ball 1", "ball 2", "ball 3"])
    ax.set_xlabel("ball [1]")
    ax.set_ylabel("velocity after the impact [m/s]")
    ax.set_title("Newton's cradle, v = 1 m/s, e = 1 (black: closed form)")
    ax.legend()
    return _save(fig, out, "newtons_cradle.png")


def sliding_brick(out):
    v, mu = 2.0, 0.5
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for stepper in ("default", "lcp", "impulse"):
        scene, q0, v0 = ex.sliding_brick(speed=v, friction=mu)
        r = simulate(scene, q0, v0, 0.6, 1e-3, stepper=stepper, progress=False, record_every=10)
        ax.plot(r.t, r.q[:, 0], label=f"stepper {stepper!r}")
    t = np.linspace(0, 0.6, 200)
    ts = v / (mu * G)
    tt = np.minimum(t, ts)
    ax.plot(t, v * tt - 0.5 * mu * G * tt**2, "k--", lw=1, label="closed form")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("position x [m]")
    ax.set_title("brick sliding to a stop: v^2 / (2 mu g) = 0.408 m")
    ax.legend()
    return _save(fig, out, "sliding_brick.png")


def incline(out):
    angle = 0.35
    fig, ax = plt.subplots(figsize=(6, 3.4))
    T = 0.5
    for mu in (0.5, 0.33, 0.2):
        scene, q0, v0 = ex.block_on_incline(angle, mu)
        r = simulate(scene, q0, v0, T, 1e-3, progress=False, record_every=10)
        d = np.linalg.norm(r.q[:, :3] - q0[:3], axis=1)
        ax.plot(r.t, d, label=f"mu = {mu}")
        a = max(0.0, G * (math.sin(angle) - mu * math.cos(angle)))
        ax.plot(r.t, 0.5 * a * r.t**2, "k--", lw=0.8)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("distance slid down [m]")
    ax.set_title("block on a 20 deg incline (tan = 0.365; dashed: closed form)")
    ax.legend()
    return _save(fig, out, "incline.png")


def rod2d(out):
    scene, q0, v0 = ex.rod2d()
    r = simulate(scene, q0, v0, 2.5, 1e-3, stepper="lcp", progress=False, record_every=5)
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.plot(r.t, r.q[:, 1], label="height y [m]")
    ax.plot(r.t, r.q[:, 2], label="angle theta [rad]")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("y [m], theta [rad]")
    ax.set_title("Drake's Rod2D (stepper 'lcp') falls to rest")
    ax.legend()
    return _save(fig, out, "rod2d.png")


def box_stack(out):
    scene, q0, v0 = ex.box_stack()
    r = simulate(scene, q0, v0, 10.0, 1e-2, progress=False, record_every=10)
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for i in range(5):
        ax.plot(r.t, 1e3 * (r.q[:, 7 * i + 2] - q0[7 * i + 2]), label=f"box {i + 1}")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("height change [mm]")
    ax.set_ylim(-1, 1)
    ax.set_title("5 stacked boxes, 10 s at dt = 10 ms (default stepper)")
    ax.legend(ncol=5, fontsize=7)
    return _save(fig, out, "box_stack.png")


ALL = (bouncing_ball, newtons_cradle, sliding_brick, incline, rod2d, box_stack)


def main(out=None):
    out = Path(out or Path(__file__).parent)
    out.mkdir(parents=True, exist_ok=True)
    return [f(out) for f in ALL]


if __name__ == "__main__":
    for p in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(p)
