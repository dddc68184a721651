"""Demo ``pendulum``: a passive triple pendulum released from horizontal.

Three uniform rods (1 m, 1 kg each, thin-rod inertia ``m L^2 / 12`` about their centres) are
hinged end to end by revolute joints about the horizontal y axis; at ``q = 0`` every rod lies
along +x, i.e. horizontal, and gravity is ``-9.81`` along z.  Released at rest, the chain
falls and swings chaotically; with no friction and no motor the mechanical energy is
conserved, so its drift measures the integration error.

Files written into the output folder:

``pendulum.png``
    joint angles and total energy against time, and snapshots of the chain in the x-z plane;
``pendulum_trajectory.npz``
    arrays ``t``, ``q``, ``v``, ``energy``, ``tip`` (tip position, x-z) and the model data, with
    their units (the ``units`` entry);
``pendulum_trajectory.csv``
    one row per sample: ``t, q1, q2, q3, v1, v2, v3, energy``;
``pendulum_summary.json``
    the summary returned by :func:`run`, with the unit of every value (``units``).

The files follow the demos' output convention (:mod:`sinews.demos`).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

import sinews
from sinews import joints as J
from sinews.simulate import simulate

from . import _args
from ._output import DemoOutput

NAME = "pendulum"
DESCRIPTION = "3-link pendulum released from horizontal (RK4, energy conservation, plot + trajectory files)"

LENGTH = 1.0  # m, every link
MASS = 1.0  # kg, every link
DURATION = 5.0  # s
QUICK_DURATION = 1.0  # s
DT = 1e-3  # s


def build_model(n_links: int = 3, length: float = LENGTH, mass: float = MASS) -> sinews.Model:
    """The chain: ``n_links`` thin uniform rods along their local x axes, hinged about y."""
    model = sinews.Model(gravity=(0.0, 0.0, -9.81), name=f"{n_links}-link pendulum")
    parent = 0
    for i in range(n_links):
        parent = model.add_body(
            parent,
            J.RevoluteY(),
            (length if i else 0.0, 0.0, 0.0),
            sinews.SpatialInertia.from_rod(mass, length, axis=0),
            name=f"link{i + 1}",
        )
    return model


def joint_positions(model: sinews.Model, q: ArrayLike, length: float = LENGTH) -> np.ndarray:
    """World (x, z) of the pivot and of every link end at ``q (nq,)``, shape (n_links + 1, 2)."""
    length = _args.real_scalar(length, "length")
    pts = [np.zeros(3)]
    for b in model.bodies[1:]:
        pts.append(sinews.point_position(model, q, b.id, (length, 0.0, 0.0)))
    return np.array(pts)[:, [0, 2]]


def _warm_up(model, q0, v0) -> float:
    """Run each kernel once (Numba compiles them on first use, then caches them on disk);
    says so on stderr if that takes more than a second.  Returns the time taken."""
    t0 = time.perf_counter()
    note = threading.Timer(
        1.0,
        lambda: print("Compiling the numerical kernels (first run only, they are cached afterwards)...",
                      file=sys.stderr, flush=True),
    )
    note.start()
    try:
        sinews.aba(model, q0, v0, np.zeros(model.nv))
        sinews.mechanical_energy(model, q0, v0)
        sinews.point_position(model, q0, model.nbodies - 1)
    finally:
        note.cancel()
    return time.perf_counter() - t0


def _draw(traj, tip, chains, energy_scale: float, title: str):
    """A ``draw(fig)`` for :meth:`DemoOutput.plot`: angles, energy and chain snapshots."""

    def draw(fig) -> None:
        grid = fig.add_gridspec(2, 2, width_ratios=[1.3, 1])
        ax_q = fig.add_subplot(grid[0, 0])
        ax_e = fig.add_subplot(grid[1, 0], sharex=ax_q)
        ax_xz = fig.add_subplot(grid[:, 1])

        for i in range(traj.q.shape[1]):
            ax_q.plot(traj.t, traj.q[:, i], label=f"q{i + 1} (joint {i + 1})")
        ax_q.set_xlabel("time [s]")
        ax_q.set_ylabel("joint angle [rad]")
        ax_q.legend(loc="upper left", fontsize="small")
        ax_q.grid(alpha=0.3)
        ax_q.set_title(title)

        drift = traj.energy - traj.energy[0]
        ax_e.plot(traj.t, traj.energy, color="k")
        ax_e.set_xlabel("time [s]")
        ax_e.set_ylabel("total energy T + V [J]")
        ax_e.grid(alpha=0.3)
        span = max(np.abs(drift).max(), 1e-12)
        ax_e.set_ylim(traj.energy[0] - 3 * span, traj.energy[0] + 3 * span)
        ax_e.text(
            0.01, 0.95,
            f"max |E - E0| = {np.abs(drift).max():.3g} J ({np.abs(drift).max() / energy_scale:.2e} of max kinetic energy)",
            transform=ax_e.transAxes, va="top", fontsize="small",
        )

        colors = [(0.2, 0.3, 0.8, a) for a in np.linspace(0.15, 1.0, len(chains))]
        for (t, pts), c in zip(chains, colors):
            ax_xz.plot(pts[:, 0], pts[:, 1], "-o", color=c, ms=3, lw=1.5)
        ax_xz.plot(tip[:, 0], tip[:, 1], color="tab:red", lw=0.6, alpha=0.7, label="tip path")
        ax_xz.plot([0], [0], "ks", ms=6, label="pivot")
        ax_xz.set_aspect("equal")
        ax_xz.set_xlabel("x [m]")
        ax_xz.set_ylabel("z [m]")
        ax_xz.set_title(f"snapshots every {chains[1][0] - chains[0][0]:.2g} s (darker = later)" if len(chains) > 1 else "snapshot")
        ax_xz.legend(loc="lower left", fontsize="small")
        ax_xz.grid(alpha=0.3)

    return draw


def run(out_dir: Path, quick: bool = False) -> dict:
    """Simulate, write the plot, the trajectory (NPZ and CSV) and a JSON summary.

    Returns ``{"files": [...], "summary": {...}}``; the summary has the energy drift
    (absolute, and relative to the largest kinetic energy reached), the number of steps and
    the wall time.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = build_model()
    duration = QUICK_DURATION if quick else DURATION
    q0 = np.zeros(model.nq)  # every link horizontal
    v0 = np.zeros(model.nv)

    setup = _warm_up(model, q0, v0)
    traj = simulate(model, q0, v0, duration, DT, method="rk4")
    wall = traj.info["wall_time"]

    data = model.data()
    kinetic = np.array([sinews.kinetic_energy(model, q, v, data=data) for q, v in zip(traj.q, traj.v)])
    energy_scale = max(abs(traj.energy[0]), kinetic.max())
    drift_abs = traj.energy_drift
    tip = np.array([sinews.point_position(model, q, "link3", (LENGTH, 0.0, 0.0), data=data)[[0, 2]] for q in traj.q])

    out = DemoOutput(out_dir, NAME)
    out.trajectory(
        {"t": traj.t, "q": traj.q, "v": traj.v, "energy": traj.energy, "tip": tip,
         "link_length": LENGTH, "link_mass": MASS, "gravity": model.gravity},
        units={"t": "s", "q": "rad", "v": "rad/s", "energy": "J", "tip": "m",
               "link_length": "m", "link_mass": "kg", "gravity": "m/s^2"},
    )
    out.add_file(traj.save_csv(out.path("pendulum_trajectory.csv"), ["q1", "q2", "q3"], ["v1", "v2", "v3"]))

    step = max(1, int(round(duration / 10 / traj.info["dt"])))  # about 11 snapshots
    chains = [(traj.t[k], joint_positions(model, traj.q[k])) for k in range(0, len(traj.t), step)]
    title = f"{model.name}: released from horizontal, RK4 dt = {traj.info['dt']:g} s"
    out.plot("pendulum.png", _draw(traj, tip, chains, energy_scale, title), figsize=(12, 6.5))

    summary = {
        "model": model.name,
        "method": traj.info["method"],
        "duration_s": duration,
        "dt_s": traj.info["dt"],
        "steps": traj.info["steps"],
        "wall_time_s": round(wall, 4),
        "setup_time_s": round(setup, 4),
        "energy_initial_J": float(traj.energy[0]),
        "energy_final_J": float(traj.energy[-1]),
        "energy_drift_abs_J": drift_abs,
        "energy_drift_rel": drift_abs / energy_scale,
        "max_kinetic_energy_J": float(kinetic.max()),
        "final_q_rad": [float(x) for x in traj.q[-1]],
    }
    units = {
        "duration_s": "s", "dt_s": "s", "steps": "1", "wall_time_s": "s", "setup_time_s": "s",
        "energy_initial_J": "J", "energy_final_J": "J", "energy_drift_abs_J": "J",
        "energy_drift_rel": "1", "max_kinetic_energy_J": "J", "final_q_rad": "rad",
    }
    return out.finish(summary, units)
