"""The result of :func:`sinews.sim.simulate`: trajectory, contacts, energy, solver statistics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SimulationResult"]


@dataclass
class SimulationResult:
    """A simulated run, sampled every ``record_every`` steps (N samples, the first at t = 0).

    Attributes:
        t: (N,) time [s].
        q: (N, nq), v: (N, nv) state.
        energy: (N,) mechanical energy (kinetic + potential) [J].
        constraint_error: (N,) largest bilateral position error |phi_G| [m or rad] (0 without
            ``scene.constraints``).
        penetration: (N,) deepest penetration among the contacts of the step, >= 0 [m].
        num_contacts: (N,) contact points in the step that produced the sample.
        iterations, converged, solver_error: (N,) the solver's statistics of that step (FCLib:
            PGS sweeps + ADMM iterations and the natural-map error; LCP: Lemke pivots and the
            complementarity/feasibility error; impulse: PGS sweeps or PLUS Newton iterations).
        contact_sample: (K,) sample index of each recorded contact point.
        contact_geoms: (K, 2) geometry indices (normal from the first to the second).
        contact_points, contact_normals: (K, 3) world point and normal.
        contact_distances: (K,) signed distance at the start of the step [m].
        contact_impulses: (K, 3) impulse on the second geometry in world axes over the step [N s].
        contact_forces: (K, 3) the average force ``impulse / h`` [N].
        stepper: the stepper's name; dt: the time step [s]; steps: steps taken.
        geometry_names: the scene's geometry names (index = geometry id).
        info: ``{"wall_time": seconds spent stepping}`` (also the property ``wall_time``).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    constraint_error: np.ndarray
    penetration: np.ndarray
    num_contacts: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    solver_error: np.ndarray
    contact_sample: np.ndarray
    contact_geoms: np.ndarray
    contact_points: np.ndarray
    contact_normals: np.ndarray
    contact_distances: np.ndarray
    contact_impulses: np.ndarray
    contact_forces: np.ndarray
    stepper: str = ""
    dt: float = 0.0
    steps: int = 0
    geometry_names: tuple = ()
    info: dict = field(default_factory=dict)

    @property
    def wall_time(self) -> float:
        """Seconds spent stepping (``info["wall_time"]``; it is not part of the run's data)."""
        return float(self.info.get("wall_time", 0.0))

    def contacts_at(self, sample: int) -> dict:
        """The contact rows of one sample: a dict of arrays (points, normals, forces, ...)."""
        sel = self.contact_sample == sample
        return {
            "geoms": self.contact_geoms[sel], "points": self.contact_points[sel],
            "normals": self.contact_normals[sel], "distances": self.contact_distances[sel],
            "impulses": self.contact_impulses[sel], "forces": self.contact_forces[sel],
        }

    def total_contact_force(self) -> np.ndarray:
        """(N, 3) sum of the contact forces of each sample [N]."""
        out = np.zeros((len(self.t), 3))
        np.add.at(out, self.contact_sample, self.contact_forces)
        return out

    def summary(self) -> dict:
        """Scalar facts of the run (JSON-ready)."""
        return {
            "stepper": self.stepper,
            "dt_s": self.dt,
            "duration_s": float(self.t[-1]) if len(self.t) else 0.0,
            "steps": int(self.steps),
            "samples": int(len(self.t)),
            "wall_time_s": float(self.wall_time),
            "steps_per_second": float(self.steps / self.wall_time) if self.wall_time > 0 else None,
            "energy_initial_J": float(self.energy[0]) if len(self.energy) else None,
            "energy_final_J": float(self.energy[-1]) if len(self.energy) else None,
            "max_penetration_m": float(self.penetration.max()) if len(self.penetration) else 0.0,
            "max_constraint_error": float(self.constraint_error.max()) if len(self.constraint_error) else 0.0,
            "max_contacts": int(self.num_contacts.max()) if len(self.num_contacts) else 0,
            "all_converged": bool(np.all(self.converged)),
            "max_solver_error": float(self.solver_error.max()) if len(self.solver_error) else 0.0,
        }

    _UNITS = {
        "t": "s", "q": "m or rad (per coordinate)", "v": "m/s or rad/s (per coordinate)",
        "energy": "J", "constraint_error": "m or rad", "penetration": "m", "num_contacts": "1",
        "iterations": "1", "converged": "1", "solver_error": "1", "contact_sample": "1",
        "contact_geoms": "1", "contact_points": "m", "contact_normals": "1",
        "contact_distances": "m", "contact_impulses": "N s", "contact_forces": "N",
    }

    def save(self, out_dir: str | os.PathLike, name: str = "simulation", plots: bool = True) -> list:
        """Write ``NAME_trajectory.npz`` (every array, with units), ``NAME_summary.json`` and,
        with matplotlib, PNG plots (energy, total contact force, positions) with units on every
        axis; returns the paths written."""
        from ..demos._output import DemoOutput

        out = DemoOutput(out_dir, name)
        arrays = {k: getattr(self, k) for k in self._UNITS}
        out.trajectory(arrays, units=dict(self._UNITS))
        if plots:
            t = self.t
            E = self.energy
            F = self.total_contact_force()
            Q = self.q

            def draw_energy(fig):
                ax = fig.subplots()
                ax.plot(t, E)
                ax.set_xlabel("time [s]")
                ax.set_ylabel("mechanical energy [J]")

            def draw_force(fig):
                ax = fig.subplots()
                for i, lab in enumerate("xyz"):
                    ax.plot(t, F[:, i], label=f"F{lab}")
                ax.legend()
                ax.set_xlabel("time [s]")
                ax.set_ylabel("total contact force [N]")

            def draw_q(fig):
                ax = fig.subplots()
                for i in range(min(Q.shape[1], 12)):
                    ax.plot(t, Q[:, i], label=f"q{i}")
                ax.set_xlabel("time [s]")
                ax.set_ylabel("coordinates [m or rad]")

            out.plot(f"{name}_energy.png", draw_energy)
            out.plot(f"{name}_contact_forces.png", draw_force)
            out.plot(f"{name}_positions.png", draw_q)
        summ = self.summary()
        units = {"dt_s": "s", "duration_s": "s", "steps": "1", "samples": "1", "wall_time_s": "s",
                 "steps_per_second": "1/s", "energy_initial_J": "J", "energy_final_J": "J",
                 "max_penetration_m": "m", "max_constraint_error": "m or rad", "max_contacts": "1",
                 "max_solver_error": "1"}
        res = out.finish(summ, units={k: u for k, u in units.items() if k in summ})
        return res["files"]
