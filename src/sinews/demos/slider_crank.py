"""Planar slider-crank driven by a crank torque, checked against its closed-form kinematics.

Mechanism (in the x-y plane, gravity -9.81 along y): a crank of radius ``r`` turning about the
ground origin (revolute z), a connecting rod of length ``l`` pinned at the crank tip (revolute
z), and a slider on the ground x axis (prismatic x).  The loop closure pins the rod's far end
to the slider: a loop constraint with the two translational axes x and y (the motion is
planar, so the z rows would be identically zero and are left out).  3 coordinates, 2
constraint rows, 1 degree of freedom.

The crank is driven by ``CRANK_TORQUE - CRANK_DAMPING * theta_dot`` (a motor with viscous
bearing losses), so the crank speed settles to a periodic steady state.

For any crank angle ``theta`` the slider position is known in closed form,

    x(theta) = r cos(theta) + sqrt(l^2 - r^2 sin(theta)^2),

an independent oracle for the simulated motion: the demo reports the largest deviation of the
simulated slider from ``x(theta(t))``.  The start configuration is assembled with
:func:`sinews.constraints.assemble_q` from a rough guess (crank angle kept), the start velocity
with :func:`sinews.constraints.assemble_qdot`; the motion is integrated with RK4 and
Baumgarte-stabilised forward dynamics with constraints.  Outputs (the output convention of
:mod:`sinews.demos`): ``slider_crank_motion.png`` (crank angle and speed, slider position vs.
closed form, closure error), ``slider_crank_trajectory.npz`` and ``.csv``,
``slider_crank_summary.json``.
"""

from __future__ import annotations

import pathlib
import sys
import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from sinews.simulate import rk4_step

if TYPE_CHECKING:
    from sinews import Model
    from sinews.constraints import ConstraintSet

from . import _args
from ._output import DemoOutput
from ._plots import Panel, curve, figure

NAME = "slider-crank"
DESCRIPTION = "planar slider-crank under a crank torque and gravity, slider position vs closed-form kinematics"

CRANK = 0.5  # r [m]
ROD = 1.5  # l [m]
CRANK_TORQUE = 8.0  # [N m]
CRANK_DAMPING = 1.0  # viscous damping at the crank bearing [N m s]


def build_model() -> Model:
    """Crank (1 kg), rod (1 kg), slider (2 kg); q = (theta, psi (rod relative), x)."""
    import sinews
    from sinews import SpatialInertia, Transform
    from sinews import joints as J

    m = sinews.Model(gravity=(0.0, -9.81, 0.0), name="slider-crank")
    crank = m.add_body(0, J.RevoluteZ(), None, SpatialInertia.from_rod(1.0, CRANK, axis=0), "crank")
    m.add_body(crank, J.RevoluteZ(), Transform.translation((CRANK, 0.0, 0.0)), SpatialInertia.from_rod(1.0, ROD, axis=0), "rod")
    m.add_body(0, J.PrismaticX(), None, SpatialInertia.point_mass(2.0), "slider")
    return m


def build_constraints(model: Model, baumgarte: bool = True, time_constant: float = 0.05) -> ConstraintSet:
    from sinews import Transform
    from sinews.constraints import ConstraintSet

    time_constant = _args.positive(time_constant, "time_constant")

    cs = ConstraintSet()
    for axis in ((0, 0, 0, 1, 0, 0), (0, 0, 0, 0, 1, 0)):
        cs.add_loop_constraint(
            "slider", "rod", Transform.identity(), Transform.translation((ROD, 0.0, 0.0)), axis,
            baumgarte=baumgarte, time_constant=time_constant, name="rod-slider pin",
        )
    return cs.bind(model)


def slider_position(theta: ArrayLike) -> np.ndarray:
    """Closed-form slider position for crank angle ``theta`` (a number or an array)."""
    theta = _args.finite(theta, "theta")
    return CRANK * np.cos(theta) + np.sqrt(ROD**2 - (CRANK * np.sin(theta)) ** 2)


def initial_state(model: Model, cs: ConstraintSet, theta0: float = np.pi / 3,
                  omega0: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Assembled ``(q (nq,), v (nv,))`` at crank angle ``theta0`` and crank speed ``omega0``."""
    from sinews.constraints import assemble_q, assemble_qdot

    theta0 = _args.real_scalar(theta0, "theta0")
    omega0 = _args.real_scalar(omega0, "omega0")
    guess = np.array([theta0, -0.2, 1.7])
    try:
        ra = assemble_q(model, guess, cs, weights=[1.0, 0.0, 0.0])
    except ValueError as exc:  # the guess is built from theta0
        raise ValueError(f"slider-crank assembly from theta0 = {theta0:.6g} failed: {exc}") from exc
    if not ra.converged:
        raise ValueError(f"slider-crank assembly from theta0 = {theta0:.6g} did not converge "
                         f"(residual {ra.residual:.3g})")
    try:
        rv = assemble_qdot(model, ra.q, [omega0, 0.0, 0.0], cs, weights=[1.0, 0.0, 0.0])
    except ValueError as exc:  # the initial guess of the velocity is built from omega0
        raise ValueError(f"slider-crank start velocity for omega0 = {omega0:.6g} failed: {exc}"
                         ) from exc
    if not np.all(np.isfinite(rv.v)):
        raise ValueError(f"the start velocity for omega0 = {omega0:.6g} is not finite (omega0 too "
                         "large in magnitude)")
    return ra.q, rv.v


def run(out_dir: pathlib.Path, quick: bool = False) -> dict:
    """Simulate, write the plot and the CSV trajectory into ``out_dir``; return files and summary."""
    from sinews.constraints import constraint_position_error, forward_dynamics_constraints

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_end, dt = (0.5, 0.0025) if quick else (8.0, 0.002)
    model = build_model()
    cs = build_constraints(model)
    q, v = initial_state(model, cs)
    def acc(q, v):
        tau = np.array([CRANK_TORQUE - CRANK_DAMPING * v[0], 0.0, 0.0])
        return forward_dynamics_constraints(model, q, v, tau, cs, method="direct").qdd

    n = int(round(t_end / dt))
    t = np.arange(n + 1) * dt
    Q = np.empty((n + 1, model.nq))
    V = np.empty((n + 1, model.nv))
    Q[0], V[0] = q, v
    print(
        f"slider-crank: {t_end:g} s, dt = {dt:g} s, RK4, crank torque {CRANK_TORQUE:g} N m "
        f"- {CRANK_DAMPING:g} N m s x crank speed, Baumgarte on"
    )
    t0 = time.perf_counter()
    report = max(1, n // 5)
    for k in range(n):
        q, v = rk4_step(model, acc, q, v, dt)
        Q[k + 1], V[k + 1] = q, v
        if not quick and (k + 1) % report == 0:
            print(f"  t = {t[k + 1]:.2f} s ({100 * (k + 1) // n}%)", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    phi = np.array([np.linalg.norm(constraint_position_error(model, Q[k], cs)) for k in range(n + 1)])
    theta, x = Q[:, 0], Q[:, 2]
    x_exact = slider_position(theta)
    dev = np.abs(x - x_exact)

    out = DemoOutput(out_dir, NAME)

    motion = figure(
        t,
        Panel("crank angle [rad]", [curve(theta, "crank angle theta")],
              title="Slider-crank, r = %g m, l = %g m, crank torque %g - %g theta_dot N m"
              % (CRANK, ROD, CRANK_TORQUE, CRANK_DAMPING)),
        Panel("crank speed [rad/s]", [curve(V[:, 0], "crank speed", color="tab:orange")]),
        Panel("slider x [m]", [curve(x, "simulated slider x"),
                               curve(x_exact, "closed form r cos(theta) + sqrt(l^2 - r^2 sin(theta)^2)", "--")],
              legend={"fontsize": 8}),
        Panel("error [m]", [curve(phi, "|phi| closure error"), curve(dev, "|x - x_closed_form|")], log=True,
              legend=True),
    )
    out.plot("slider_crank_motion.png", motion, figsize=(7.5, 9.0))
    columns = {"t": t, "theta": Q[:, 0], "psi": Q[:, 1], "x": Q[:, 2], "theta_dot": V[:, 0],
               "psi_dot": V[:, 1], "x_dot": V[:, 2], "x_closed_form": x_exact, "closure_error": phi}
    out.trajectory(columns, units={"t": "s", "theta": "rad", "psi": "rad", "x": "m", "theta_dot": "rad/s",
                                   "psi_dot": "rad/s", "x_dot": "m/s", "x_closed_form": "m",
                                   "closure_error": "m"})
    out.csv("slider_crank_trajectory.csv", columns)
    summary = {
        "t_end": t_end,
        "dt": dt,
        "steps": n,
        "wall_s": round(wall, 3),
        "crank_turns": float((theta[-1] - theta[0]) / (2 * np.pi)),
        "final_crank_speed": float(V[-1, 0]),
        "max_closure_error": float(phi.max()),
        "max_slider_deviation_from_closed_form": float(dev.max()),
    }
    units = {"t_end": "s", "dt": "s", "steps": "1", "wall_s": "s", "crank_turns": "turn",
             "final_crank_speed": "rad/s", "max_closure_error": "m",
             "max_slider_deviation_from_closed_form": "m"}
    print(
        f"  {summary['crank_turns']:.2f} crank turns; max |phi| {summary['max_closure_error']:.2e}; "
        f"max |x - closed form| {summary['max_slider_deviation_from_closed_form']:.2e} m; {wall:.1f} s"
    )
    return out.finish(summary, units)
