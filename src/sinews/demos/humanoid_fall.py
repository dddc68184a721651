"""The Talos humanoid (example-robot-data) pushed and falling over onto the ground.

The robot is ``talos_reduced.urdf`` read by :func:`sinews.sim.scenes_io.scene_from_urdf`: every
``<collision>`` shape takes part in contact with the ground, its meshes through their bounding
boxes (no self-collision).  It starts in the SRDF's ``half_sitting`` posture, feet on the
ground, with a forward push of 0.8 m/s on the base; a soft joint PD law (``Kp = M_ii w^2``,
``Kd = 2 M_ii w`` with ``M_ii`` the diagonal of the joint-space inertia at the posture and
w = 2 pi x 6 rad/s) cannot hold the posture against the push and gravity, so the robot topples
and comes to rest on the ground.  Default stepper (3-D Coulomb cone, friction 0.8), 1 ms step.

Files: trajectory (NPZ), plots (height of the base, number of contact points and vertical
ground force, energy), the summary (JSON) and ``humanoid_fall.html`` (3-D animation).  Needs
``pip install "sinews[demo]"`` (example-robot-data).
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ._output import DemoOutput, scene_trajectory
from ._plots import Panel, curve, figure

if TYPE_CHECKING:
    from ..sim import Scene
from .quadruped import pd_controller, robots_dir, warm_up

NAME = "humanoid-fall"
DESCRIPTION = "Talos humanoid pushed over: falls onto the ground (contacts on every link, 3-D animation)"

#: the SRDF's "half_sitting" posture (joints not listed: 0) [rad]
HALF_SITTING = {
    "arm_left_1_joint": 0.25847, "arm_left_2_joint": 0.173046, "arm_left_3_joint": -0.0002,
    "arm_left_4_joint": -0.525366, "arm_left_7_joint": 0.1,
    "arm_right_1_joint": -0.25847, "arm_right_2_joint": -0.173046, "arm_right_3_joint": 0.0002,
    "arm_right_4_joint": -0.525366, "arm_right_7_joint": 0.1,
    "leg_left_3_joint": -0.411354, "leg_left_4_joint": 0.859395, "leg_left_5_joint": -0.448041,
    "leg_left_6_joint": -0.001708,
    "leg_right_3_joint": -0.411354, "leg_right_4_joint": 0.859395, "leg_right_5_joint": -0.448041,
    "leg_right_6_joint": -0.001708,
    "torso_2_joint": 0.006761,
}
PUSH = 0.8  # m/s, initial forward speed of the base
OMEGA = 2 * np.pi * 6.0  # rad/s, PD bandwidth
FRICTION = 0.8


def talos_scene() -> tuple[Scene, np.ndarray]:
    """(scene, q_half_sitting) of Talos on the ground (see the module docstring)."""
    from ..sim.scenes_io import scene_from_urdf

    path = os.path.join(robots_dir(), "talos_data", "robots", "talos_reduced.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "meshes approximated by boxes": intended
        scene = scene_from_urdf(path, friction=FRICTION, ground_friction=FRICTION)
    model = scene.model
    q = np.zeros(model.nq)
    q[6] = 1.0
    for joint, angle in HALF_SITTING.items():
        q[model.idx_q(model.frame(joint).body)] = angle  # a URDF joint is a frame on its child
    return scene, q


def run(out_dir: str | os.PathLike, quick: bool = False) -> dict:
    from ..crba import crba
    from ..sim import simulate
    from ..sim.scenes_io import place_on_ground
    from ..viewer import write_html

    scene, q_ref = talos_scene()
    model = scene.model
    q0 = place_on_ground(scene, q_ref, clearance=0.0)
    q_ref = q0.copy()
    d = np.diag(crba(model, q_ref))[6:]
    controller = pd_controller(q_ref, d * OMEGA**2, 2.0 * d * OMEGA)
    v0 = np.zeros(model.nv)
    v0[3] = PUSH  # base linear velocity along the base x axis (forward)
    duration, dt = (0.25, 1e-3) if quick else (1.5, 1e-3)
    warm_up(scene, q0, v0, dt, controller)
    res = simulate(scene, q0, v0, duration, dt, stepper="default", controller=controller, progress=True)

    t, q = res.t, res.q
    F = res.total_contact_force()
    height = q[:, 2]
    out = DemoOutput(out_dir, NAME)
    scene_trajectory(out, res, height, F)

    out.plot("humanoid_fall_height.png", figure(t, Panel("base height [m]", [curve(height)]), grid=False))
    out.plot("humanoid_fall_contacts.png", figure(
        t,
        Panel("contact points [1]", [curve(res.num_contacts, drawstyle="steps-post")]),
        Panel("vertical ground force [N]", [curve(F[:, 2])]),
        grid=False,
    ))
    out.plot("humanoid_fall_energy.png", figure(t, Panel("mechanical energy [J]", [curve(res.energy)]), grid=False))
    html = write_html(scene, res, out.path("humanoid_fall.html"), title="Talos falls over (sinews)", visuals=True,
                      info={"stepper": res.stepper, "time step": f"{dt * 1e3:g} ms", "push": f"{PUSH:g} m/s"})
    out.add_file(html)
    summary = {
        "robot": "Talos reduced (example-robot-data)",
        "stepper": res.stepper,
        "duration_s": float(t[-1]),
        "dt_s": dt,
        "mass_kg": float(model.total_mass()),
        "initial_base_height_m": float(height[0]),
        "final_base_height_m": float(height[-1]),
        "fell": bool(height[-1] < 0.5 * height[0]),
        "max_contacts": int(res.num_contacts.max()),
        "max_penetration_m": float(res.penetration.max()),
        "energy_dissipated_J": float(res.energy[0] - res.energy[-1]),
        "steps_per_second": float(res.steps / res.wall_time) if res.wall_time > 0 else 0.0,
        "animation": html.name,
    }
    units = {"duration_s": "s", "dt_s": "s", "mass_kg": "kg", "initial_base_height_m": "m",
             "final_base_height_m": "m", "max_contacts": "1", "max_penetration_m": "m",
             "energy_dissipated_J": "J", "steps_per_second": "1/s"}
    return out.finish(summary, units)
