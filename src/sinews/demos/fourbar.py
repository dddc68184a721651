"""Planar four-bar linkage under gravity: loop-closure drift with and without Baumgarte.

A crank-rocker four-bar in the x-y plane (gravity -9.81 along y): ground pivots at the origin
and at ``(GROUND, 0, 0)``, a crank (length ``CRANK``) and a rocker (``ROCKER``) on revolute-z
joints, a coupler (``COUPLER``) pinned to the crank tip.  The tree is closed by a loop
constraint between the coupler's far end and the rocker's tip, with the two translational
axes x and y (the motion is planar; z rows would be identically zero).  3 coordinates, 2
constraint rows, 1 degree of freedom.  Link lengths satisfy Grashof's condition
(s + l <= p + q), so the crank turns fully and the constraint Jacobian never loses rank.

The initial configuration is found with :func:`sinews.constraints.assemble_q` from a rough
guess (the crank angle is kept), the initial velocity with
:func:`sinews.constraints.assemble_qdot`.  The same passive motion (tau = 0) is integrated twice
with classical RK4 and :func:`sinews.constraints.forward_dynamics_constraints`: once with the
plain acceleration constraint ``G qdd = gamma``, whose position error ``phi`` drifts with the
integration error, and once with Baumgarte stabilisation (``gamma - 2 alpha phidot - beta^2
phi``, ``alpha = beta = 1 / T``), which pulls the error back.  The loop closure is workless, so
the mechanical energy is a second check of the integration.  Outputs:
``fourbar_closure_error.png`` (|phi| and |phidot| against time, log scale),
``fourbar_energy.png`` (energy drift), ``fourbar_trajectory.npz`` and ``fourbar_summary.json``
(the output convention of :mod:`sinews.demos`; without matplotlib the plots are skipped).

(RBDL's ``FourBarLinkage`` fixture, used in the tests, has both chains on the same ground
pivot; that kite-shaped linkage passes through singular configurations and is not a good
long-run demo.)
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

NAME = "fourbar"
DESCRIPTION = "planar four-bar under gravity: loop-closure error with and without Baumgarte stabilisation"

GROUND = 2.0
CRANK = 0.6
COUPLER = 2.0
ROCKER = 1.5


def build_model() -> Model:
    """Crank (1 kg), coupler (2 kg), rocker (1.5 kg): uniform rods on revolute-z joints."""
    import sinews
    from sinews import SpatialInertia, Transform
    from sinews import joints as J

    m = sinews.Model(gravity=(0.0, -9.81, 0.0), name="fourbar")
    crank = m.add_body(0, J.RevoluteZ(), None, SpatialInertia.from_rod(1.0, CRANK, axis=0), "crank")
    m.add_body(crank, J.RevoluteZ(), Transform.translation((CRANK, 0.0, 0.0)), SpatialInertia.from_rod(2.0, COUPLER, axis=0), "coupler")
    m.add_body(0, J.RevoluteZ(), Transform.translation((GROUND, 0.0, 0.0)), SpatialInertia.from_rod(1.5, ROCKER, axis=0), "rocker")
    return m


def build_constraints(model: Model, baumgarte: bool, time_constant: float = 0.05) -> ConstraintSet:
    """Loop closure: coupler far end == rocker tip (rows x and y of the coupler's end frame)."""
    from sinews import Transform
    from sinews.constraints import ConstraintSet

    time_constant = _args.positive(time_constant, "time_constant")

    cs = ConstraintSet()
    for axis in ((0, 0, 0, 1, 0, 0), (0, 0, 0, 0, 1, 0)):
        cs.add_loop_constraint(
            "rocker",
            "coupler",
            Transform.translation((ROCKER, 0.0, 0.0)),
            Transform.translation((COUPLER, 0.0, 0.0)),
            axis,
            baumgarte=baumgarte,
            time_constant=time_constant,
            name="closure",
        )
    return cs.bind(model)


def initial_state(model: Model, cs: ConstraintSet) -> tuple[np.ndarray, np.ndarray]:
    """Assemble q near a rough guess (keeping the two ground angles) and a consistent qdot:
    ``(q (nq,), v (nv,))``."""
    from sinews.constraints import assemble_q, assemble_qdot

    guess = np.array([np.pi / 2, -1.2, 1.8])
    ra = assemble_q(model, guess, cs, weights=[1.0, 0.0, 0.0])
    if not ra.converged:
        raise RuntimeError(f"four-bar assembly did not converge (residual {ra.residual:.3g})")
    rv = assemble_qdot(model, ra.q, np.array([4.0, 0.0, 0.0]), cs, weights=[1.0, 0.0, 0.0])
    return ra.q, rv.v


def simulate(model: Model, cs: ConstraintSet, q0: ArrayLike, v0: ArrayLike, t_end: float, dt: float,
             label: str = "", progress: bool = False) -> tuple[np.ndarray, ...]:
    """RK4 on (q, v) with ``forward_dynamics_constraints(method="direct")``, tau = 0.

    ``q0 (nq,)``, ``v0 (nv,)``.  Returns (t (n+1,), q (n+1, nq), v (n+1, nv), phi (n+1,),
    phidot (n+1,), energy (n+1,)) arrays, sampled every step.  ``ValueError`` (naming
    the argument) for bad ``q0``, ``v0``, ``t_end`` or ``dt``, or when the motion overflows.
    """
    import sinews
    from sinews.constraints import (
        constraint_position_error,
        constraint_velocity_error,
        forward_dynamics_constraints,
    )

    tau = np.zeros(model.nv)

    def acc(q, v):
        return forward_dynamics_constraints(model, q, v, tau, cs, method="direct").qdd

    q0, v0 = _args.state(model, q0, v0)
    n = _args.steps(t_end, dt)
    dt = _args.positive(dt, "dt")
    t = np.arange(n + 1) * dt
    Q = np.empty((n + 1, model.nq))
    V = np.empty((n + 1, model.nv))
    Q[0], V[0] = q0, v0
    q, v = q0.copy(), v0.copy()
    report = max(1, n // 5)
    for k in range(n):
        try:
            q, v = rk4_step(model, acc, q, v, dt)
        except ValueError as exc:  # the inputs are valid: the motion from (q0, v0) blew up
            raise ValueError(f"the motion from q0, v0 with step dt = {dt:.6g} is not finite at "
                             f"t = {t[k]:.6g} s (q0, v0 or dt too large in magnitude?): {exc}"
                             ) from exc
        Q[k + 1], V[k + 1] = q, v
        if progress and (k + 1) % report == 0:
            print(f"  {label}: t = {t[k + 1]:.2f} s ({100 * (k + 1) // n}%)", file=sys.stderr, flush=True)
    phi = np.array([np.linalg.norm(constraint_position_error(model, Q[k], cs)) for k in range(n + 1)])
    phid = np.array([np.linalg.norm(constraint_velocity_error(model, Q[k], V[k], cs)) for k in range(n + 1)])
    energy = np.array([sinews.mechanical_energy(model, Q[k], V[k]) for k in range(n + 1)])
    return t, Q, V, phi, phid, energy


def run(out_dir: pathlib.Path, quick: bool = False) -> dict:
    """Simulate, write plots and the trajectory into ``out_dir``, return files and a summary."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_end, dt = (0.5, 0.005) if quick else (10.0, 0.005)
    time_constant = 0.05
    model = build_model()
    cs_plain = build_constraints(model, baumgarte=False)
    cs_baum = build_constraints(model, baumgarte=True, time_constant=time_constant)
    q0, v0 = initial_state(model, cs_plain)
    print(f"four-bar: {t_end:g} s, dt = {dt:g} s, RK4, tau = 0 (gravity only)")
    t0 = time.perf_counter()
    runs = {}
    for label, cs in (("no stabilisation", cs_plain), (f"Baumgarte T = {time_constant:g} s", cs_baum)):
        runs[label] = simulate(model, cs, q0, v0, t_end, dt, label=label, progress=not quick)
    wall = time.perf_counter() - t0

    (t, Qp, Vp, phip, phidp, Ep), (_, Qb, Vb, phib, phidb, Eb) = runs.values()
    labels = list(runs)
    out = DemoOutput(out_dir, NAME)
    error = figure(
        t,
        Panel("|phi| (position error) [m]", [curve(phip, labels[0]), curve(phib, labels[1])], log=True,
              title="Four-bar loop closure error, RK4 dt = %g s" % dt, legend=True),
        Panel("|phi_dot| (velocity error) [m/s]", [curve(phidp, labels[0]), curve(phidb, labels[1])], log=True),
        grid="both",
    )
    energy = figure(t, Panel("E(t) - E(0) [J]", [curve(Ep - Ep[0], labels[0]), curve(Eb - Eb[0], labels[1])],
                             title="Four-bar mechanical energy drift (a passive, workless closure conserves E)",
                             legend=True))
    out.plot("fourbar_closure_error.png", error, figsize=(7.5, 5.6))
    out.plot("fourbar_energy.png", energy, figsize=(7.5, 2.8))
    out.trajectory(
        {
            "t": t,
            "q_plain": Qp, "v_plain": Vp, "phi_plain": phip, "phidot_plain": phidp, "energy_plain": Ep,
            "q_baumgarte": Qb, "v_baumgarte": Vb, "phi_baumgarte": phib, "phidot_baumgarte": phidb,
            "energy_baumgarte": Eb,
        },
        units={
            "t": "s",
            "q_plain": "rad", "v_plain": "rad/s", "phi_plain": "m", "phidot_plain": "m/s", "energy_plain": "J",
            "q_baumgarte": "rad", "v_baumgarte": "rad/s", "phi_baumgarte": "m", "phidot_baumgarte": "m/s",
            "energy_baumgarte": "J",
        },
    )
    summary = {
        "t_end": t_end,
        "dt": dt,
        "steps": len(t) - 1,
        "wall_s": round(wall, 3),
        "max_phi_plain": float(phip.max()),
        "max_phi_baumgarte": float(phib.max()),
        "final_phi_plain": float(phip[-1]),
        "final_phi_baumgarte": float(phib[-1]),
        "energy_drift_plain": float(np.abs(Ep - Ep[0]).max()),
        "energy_drift_baumgarte": float(np.abs(Eb - Eb[0]).max()),
        "baumgarte_time_constant": time_constant,
    }
    units = {
        "t_end": "s", "dt": "s", "steps": "1", "wall_s": "s",
        "max_phi_plain": "m", "max_phi_baumgarte": "m", "final_phi_plain": "m", "final_phi_baumgarte": "m",
        "energy_drift_plain": "J", "energy_drift_baumgarte": "J", "baumgarte_time_constant": "s",
    }
    print(
        f"  max |phi|: {summary['max_phi_plain']:.2e} without, {summary['max_phi_baumgarte']:.2e} with Baumgarte; "
        f"max |E - E0|: {summary['energy_drift_plain']:.2e} J / {summary['energy_drift_baumgarte']:.2e} J; "
        f"{wall:.1f} s"
    )
    return out.finish(summary, units)
