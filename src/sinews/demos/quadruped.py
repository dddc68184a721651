"""The Solo12 quadruped (example-robot-data) dropped onto the ground, standing under PD control.

The robot is read from its URDF (:func:`sinews.sim.scenes_io.scene_from_urdf`): the base and
upper legs collide through the bounding boxes of their collision meshes, each foot through a
sphere of the foot mesh's radius (16 mm); the lower legs and the foot meshes are drawn only.  It
starts in the SRDF's ``straight_standing`` posture with its feet 5 cm above the ground, and a
joint-space PD law ``tau = Kp (q_ref - q) - Kd v`` (Kp = 5 N m/rad, Kd = 0.2 N m s/rad on the 12
joints, no feed-forward) holds the posture through the landing.  The simulation uses the default
stepper (3-D Coulomb cone, friction 0.9) with a 1 ms step.

Files: trajectory (NPZ), plots (base height, vertical ground force against the weight, joint
angles, energy), the summary (JSON) and ``quadruped.html``, the 3-D animation
(:func:`sinews.viewer.write_html`).  Needs ``pip install "sinews[demo]"`` (example-robot-data).
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Callable

import numpy as np
from numpy.typing import ArrayLike

from ._output import DemoOutput, scene_trajectory
from ._plots import Panel, curve, figure, hline

if TYPE_CHECKING:
    from ..sim import Scene

NAME = "quadruped"
DESCRIPTION = "Solo12 quadruped dropped onto the ground, standing under PD control (3-D animation)"

LEGS = ("FL", "FR", "HL", "HR")
#: the SRDF's "straight_standing" posture: (HAA, HFE, KFE) per leg [rad]
STANDING = {"FL": (0.0, 0.8, -1.6), "FR": (0.0, 0.8, -1.6), "HL": (0.0, -0.8, 1.6), "HR": (0.0, -0.8, 1.6)}
#: the child link of each joint of a leg (HAA, HFE, KFE)
LEG_LINKS = ("SHOULDER", "UPPER_LEG", "LOWER_LEG")
KP, KD = 5.0, 0.2  # N m/rad, N m s/rad
FOOT_RADIUS = 0.016  # m, the foot mesh's half width
FRICTION = 0.9
DROP = 0.05  # m, feet above the ground at t = 0
INSTALL_HINT = 'pip install "sinews[demo]" (the example-robot-data package)'


def robots_dir() -> str:
    """The ``robots`` folder of the installed example-robot-data package (``RuntimeError`` with
    how to install it otherwise)."""
    from ..models import robots_dir as _robots_dir

    root = _robots_dir()
    if root is None:
        raise RuntimeError(f"this demo needs the example-robot-data package: {INSTALL_HINT}")
    return str(root)


def pd_controller(q_ref: np.ndarray, kp: float | ArrayLike, kd: float | ArrayLike, nq_base: int = 7,
                  nv_base: int = 6) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
    """``controller(t, q, v) -> tau``: joint PD about ``q_ref`` on the coordinates after the
    floating base (gains scalars or per joint)."""
    q_ref = np.asarray(q_ref, dtype=float)
    nj = len(q_ref) - nq_base
    kp = np.broadcast_to(np.asarray(kp, dtype=float), (nj,)).copy()
    kd = np.broadcast_to(np.asarray(kd, dtype=float), (nj,)).copy()

    def controller(t, q, v):
        tau = np.zeros(len(v))
        tau[nv_base:] = kp * (q_ref[nq_base:] - q[nq_base:]) - kd * v[nv_base:]
        return tau

    return controller


def compile_kernels(message: bool = True) -> float:
    """Compile the default stepper's Numba kernels (on the very first run only: they are cached
    on disk afterwards), in parallel child processes when the cache is cold
    (:func:`sinews._warmup.warmup_simulation`).  Returns seconds."""
    import sys
    import time

    from .._warmup import warmup_simulation

    if message:
        print("Preparing the simulation (the first run compiles the kernels, once)...",
              file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    warmup_simulation()
    return time.perf_counter() - t0


def warm_up(scene: Scene, q0: ArrayLike, v0: ArrayLike, dt: float,
            controller: Callable[[float, np.ndarray, np.ndarray], ArrayLike] | None = None,
            message: bool = True) -> float:
    """:func:`compile_kernels`, then one step of this scene (what is specific to it), so that no
    compilation falls in the timed run.  Returns seconds."""
    import time

    from ..sim import simulate

    t0 = time.perf_counter()
    compile_kernels(message)
    simulate(scene, q0, v0, dt, dt, controller=controller, progress=False)
    return time.perf_counter() - t0


def solo12_scene() -> tuple[Scene, np.ndarray]:
    """(scene, q_standing) of Solo12 on the ground (see the module docstring)."""
    from ..geometry import Sphere
    from ..sim.scenes_io import ROBOT_GROUP, scene_from_urdf

    path = os.path.join(robots_dir(), "solo_description", "robots", "solo12.urdf")
    contact = ["base_link"] + [f"{leg}_UPPER_LEG" for leg in LEGS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "meshes approximated by boxes": intended
        scene = scene_from_urdf(path, contact_links=contact, ground_friction=FRICTION, friction=FRICTION)
    for leg in LEGS:
        scene.add_geometry(f"{leg}_FOOT", Sphere(FOOT_RADIUS), name=f"{leg}_FOOT/contact",
                           friction=FRICTION, group=ROBOT_GROUP, mask=0xFFFFFFFF & ~ROBOT_GROUP,
                           color=(0.15, 0.15, 0.15))
    model = scene.model
    q = np.zeros(model.nq)
    q[6] = 1.0
    for leg in LEGS:
        for link, angle in zip(LEG_LINKS, STANDING[leg]):
            q[model.idx_q(f"{leg}_{link}")] = angle
    return scene, q


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..sim import simulate
    from ..sim.scenes_io import place_on_ground
    from ..viewer import write_html

    robots_dir()  # the install hint before any compilation
    compile_kernels()  # before the scene: placing the robot on the ground runs kinematics kernels
    scene, q_ref = solo12_scene()
    model = scene.model
    q0 = place_on_ground(scene, q_ref, clearance=DROP)
    q_ref = q0.copy()
    duration, dt = (0.6, 1e-3) if quick else (3.0, 1e-3)
    controller = pd_controller(q_ref, KP, KD)
    warm_up(scene, q0, np.zeros(model.nv), dt, controller, message=False)  # compiled above: one step
    res = simulate(scene, q0, np.zeros(model.nv), duration, dt, stepper="default",
                   controller=controller, progress=True)

    t, q = res.t, res.q
    weight = model.total_mass() * 9.81
    F = res.total_contact_force()
    height = q[:, 2]
    joints = q[:, 7:]
    settle = t >= t[-1] - min(0.2, 0.25 * t[-1])
    standing_height = float(np.mean(height[settle]))
    standing = bool(standing_height > 0.15 and np.all(np.abs(res.v[settle, :6]).max(axis=1) < 0.05)
                    and abs(np.mean(F[settle, 2]) - weight) < 0.05 * weight)

    out = DemoOutput(out_dir, NAME)
    scene_trajectory(out, res, height, F)

    out.plot("quadruped_height.png", figure(t, Panel(
        "base height [m]",
        [curve(height, "base height"), hline(q_ref[2] - DROP, "reference posture on the ground")], legend=True,
    ), grid=False))
    out.plot("quadruped_contact_force.png", figure(t, Panel(
        "force [N]", [curve(F[:, 2], "vertical ground force"), hline(weight, f"weight m g = {weight:.1f} N")],
        legend=True,
    ), grid=False))
    out.plot("quadruped_joints.png", figure(
        t, Panel("joint angles [rad]", [curve(joints[:, i], lw=1) for i in range(joints.shape[1])]), grid=False))
    out.plot("quadruped_energy.png", figure(t, Panel("mechanical energy [J]", [curve(res.energy)]), grid=False))
    html = write_html(scene, res, out.path("quadruped.html"), title="Solo12 drop (sinews)", visuals=True,
                      info={"stepper": res.stepper, "time step": f"{dt * 1e3:g} ms",
                            "PD gains": f"Kp {KP:g} N m/rad, Kd {KD:g} N m s/rad"})
    out.add_file(html)
    summary = {
        "robot": "Solo12 (example-robot-data)",
        "stepper": res.stepper,
        "duration_s": float(t[-1]),
        "dt_s": dt,
        "mass_kg": float(model.total_mass()),
        "drop_height_m": DROP,
        "standing_height_m": standing_height,
        "final_vertical_force_N": float(np.mean(F[settle, 2])),
        "weight_N": float(weight),
        "max_penetration_m": float(res.penetration.max()),
        "max_contacts": int(res.num_contacts.max()),
        "steps_per_second": float(res.steps / res.wall_time) if res.wall_time > 0 else 0.0,
        "standing": standing,
        "animation": html.name,
    }
    units = {"duration_s": "s", "dt_s": "s", "mass_kg": "kg", "drop_height_m": "m", "standing_height_m": "m",
             "final_vertical_force_N": "N", "weight_N": "N", "max_penetration_m": "m", "max_contacts": "1",
             "steps_per_second": "1/s"}
    return out.finish(summary, units)
