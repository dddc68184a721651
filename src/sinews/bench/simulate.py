"""``python -m sinews.bench simulate``: one time step of each sinews stepper against MuJoCo's
``mj_step`` on the same scene (one call each), and whole runs end to end (the amortised cost).

Scenes (each written as MJCF by :func:`sinews.sim.scenes_io.scene_to_mjcf`, and both sides
built from that one file: MuJoCo by ``MjModel.from_xml_path``, sinews by
:func:`~sinews.sim.scenes_io.scene_from_mjcf`; same time step, MuJoCo's elliptic cone):

* ``box_stack``: 5 cubes of 0.1 m stacked on the ground (:func:`sinews.sim.examples.box_stack`),
  dt = 1 ms;
* ``quadruped``: Solo12 standing on its four feet (the ``quadruped`` demo's scene: base and
  upper-leg boxes, foot spheres; needs example-robot-data), dt = 1 ms, PD joint torques.

Each side is timed from the state its own simulation reaches after 0.3 s from the scene's
initial state (the stack settled, the robot standing, with the same PD law: contacts active).
Each engine steps a state of its own physics: MuJoCo's contacts are soft, so its resting stack
presses every face (20 contacts, 2 mm of total compression) and the robot's feet sink a little;
a sinews run leaves the resting gaps at zero to rounding (speculative contacts, exact sticking),
and how many contacts MuJoCo finds in *that* state is a toss-up per face or foot (the stack: 12
to 20 of its 20, the robot: 0 or 4; mj_step's cost follows).  One step from the state is timed
repeatedly on both sides (MuJoCo: the state and ``qfrc_applied`` set, then ``mj_step``; sinews:
``stepper.step(scene, q, v, tau, h)``, warm from its own previous step), CPU time of this thread,
alternating rounds (:func:`sinews.bench._timing.time_pair`).  Rows: ``model``, ``algorithm``
(``step default``, ``step lcp``, ``step impulse``), ``sinews_us``, ``peer`` (``mujoco
mj_step``), ``peer_us``, ``ratio`` = sinews_us / peer_us, plus ``contacts`` (sinews contact
points in the step, and MuJoCo's) and ``solver_iterations`` (of the timed step).  The solver's
work depends on the state (the PGS sweeps to convergence and the cost of the careful verdict),
so the ``default`` rows also give the mean over the five states at 0.26, 0.27, ..., 0.30 s of
each run (``*_5_states``), each stepped repeatedly from itself as above, and ``mj_step`` timed
from sinews' state (``peer_us_sinews_state``, ``mujoco_contacts_sinews_state``,
``ratio_sinews_state``, against the same sinews step timed again, ``sinews_us_vs_sinews_state``).

Consecutive steps: the ``default`` rows also time :data:`TRAJECTORY_STEPS` consecutive steps
along each engine's own trajectory from its settled state (``*_trajectory``: only the step calls
timed, the controller outside; median of :data:`TRAJECTORY_ROUNDS` alternating rounds).  A
repeated step from one state is warm-started from the answer to the *same* problem; along a
trajectory the warm start is the previous step's answer: this is the figure a run pays per step.

The end-to-end rows (``model`` ``box_stack 2 s run`` and ``quadruped 10 s run``, ``algorithm``
``simulate default (end to end)``) run :func:`sinews.sim.simulate` from the scene's initial state
(2000 and 10 000 steps; the quadruped with its PD controller; no progress bar; every step
recorded) against a Python loop of ``mj_step`` calls with the same control law: the amortised
cost of a step, recording and controller included.  ``sinews_us``/``peer_us`` are wall-clock
microseconds per step (``*_cpu_us`` the thread's CPU time, which other processes on a shared
machine do not inflate), ``steps_per_second`` (wall clock) and ``steps_per_cpu_second`` are
reported for both, with the mean solver iterations of the sinews run.

Options: ``--json PATH``, ``--quick`` (fewer repeats, 1 s run), ``--models NAME ...``,
``--steppers NAME ...``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from ._timing import time_pair

PEER = "mujoco mj_step"
DT = 1e-3


def _box_stack():
    from ..sim.examples import box_stack

    scene, q0, v0 = box_stack(5)
    return scene, q0, v0, None


def _quadruped():
    from ..demos.quadruped import KD, KP, pd_controller, solo12_scene
    from ..sim.scenes_io import place_on_ground

    scene, q_ref = solo12_scene()
    q0 = place_on_ground(scene, q_ref, clearance=0.0)
    return scene, q0, np.zeros(scene.model.nv), pd_controller(q0.copy(), KP, KD)


MODELS = {"box_stack": _box_stack, "quadruped": _quadruped}
RUNS = {"box_stack": 2.0, "quadruped": 10.0}  # seconds simulated end to end
SETTLE = 0.3  # seconds simulated before the timed step


def same_scene(scene, dt, folder):
    """(sinews scene read from the MJCF, mujoco model, MujocoCoordinates) of ``scene``."""
    import mujoco

    from ..mujoco_import import MujocoCoordinates
    from ..sim.scenes_io import scene_from_mjcf, scene_to_mjcf

    path = Path(folder) / f"{scene.model.name}.xml"
    path.write_text(scene_to_mjcf(scene, dt))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ours = scene_from_mjcf(path)
    mj = mujoco.MjModel.from_xml_path(str(path))
    return ours, mj, MujocoCoordinates(ours.model, mj)


def _joint_force(cv, q, tau):
    """MuJoCo generalized force equivalent to sinews' ``tau`` (``f_mj = T^-T tau``)."""
    T = cv.T(q)
    return np.linalg.solve(T.T, tau)


def bench_steps(name, steppers, calls, rounds, folder):
    from ..sim import simulate
    from ..sim.steppers import make_stepper

    scene0, q0, v0, controller = MODELS[name]()
    scene, mj, cv = same_scene(scene0, DT, folder)
    settle = simulate(scene, q0, v0, SETTLE, DT, controller=controller, progress=False)
    q, v = settle.q[-1].copy(), settle.v[-1].copy()
    tau = controller(SETTLE, q, v) if controller is not None else np.zeros(scene.model.nv)
    # MuJoCo from the states its own run reaches (at 0.26, ..., 0.30 s; the last is the one timed)
    own = _mujoco_states(mj, cv, q0, v0, controller)
    peer, ncon = _mj_stepper(mj, own[-1:])
    # and from sinews' state (where MuJoCo's contact count is a toss-up: see the module docstring)
    peer_s, ncon_s = _mj_stepper(mj, [(cv.qpos_from_q(q), cv.qvel_from_v(q, v), _joint_force(cv, q, tau))])

    rows = []
    for st in steppers:
        stepper = make_stepper(st)
        if hasattr(stepper, "reset"):
            stepper.reset()
        stepper.step(scene, q, v, tau, DT)
        out = stepper.step(scene, q, v, tau, DT)  # as timed: warm from its own previous step

        def ours():
            stepper.step(scene, q, v, tau, DT)

        us, peer_us = time_pair(ours, peer, calls, rounds)
        row = {"model": name, "algorithm": f"step {st}", "sinews_us": round(us, 2), "peer": PEER,
               "peer_us": round(peer_us, 2), "ratio": round(us / peer_us, 2), "contacts": len(out.contacts),
               "mujoco_contacts": ncon[0], "solver_iterations": int(out.stats.get("iterations", 0))}
        if st == "default":
            # the mean over five states (the solver's work varies from state to state)
            us5, peer5 = _five_states(scene, settle, controller, mj, own, calls, rounds)
            row.update(sinews_us_5_states=round(us5, 2), peer_us_5_states=round(peer5, 2),
                       ratio_5_states=round(us5 / peer5, 2))
            # MuJoCo stepped from sinews' state instead
            us_s, peer_us_s = time_pair(ours, peer_s, calls, rounds)
            row.update(sinews_us_vs_sinews_state=round(us_s, 2), peer_us_sinews_state=round(peer_us_s, 2),
                       ratio_sinews_state=round(us_s / peer_us_s, 2), mujoco_contacts_sinews_state=ncon_s[0])
        if st == "default":
            # along each engine's own trajectory: consecutive steps from the settled states (the
            # warm start is then the previous step's answer, not the same problem's)
            us_t, peer_t, sweeps = _trajectory_steps(scene, stepper, q, v, controller, mj, cv, own[-1])
            row.update(sinews_us_trajectory=round(us_t, 2), peer_us_trajectory=round(peer_t, 2),
                       ratio_trajectory=round(us_t / peer_t, 2), solver_iterations_trajectory=round(sweeps, 2))
        rows.append(row)
        extra = (f"   (5 states: {row['ratio_5_states']}; MuJoCo from sinews' state: {row['peer_us_sinews_state']} us, "
                 f"{ncon_s[0]} contacts, ratio {row['ratio_sinews_state']})" if st == "default" else "")
        print(f"{name:10s} step {st:8s} {us:10.1f} us   {PEER} {peer_us:7.1f} us   ratio {us / peer_us:8.1f}"
              f"   contacts {len(out.contacts)} (MuJoCo {ncon[0]}){extra}", flush=True)
        if st == "default":
            print(f"{name:10s} step default, {TRAJECTORY_STEPS} consecutive steps: {row['sinews_us_trajectory']} us "
                  f"({row['solver_iterations_trajectory']} sweeps a step)   {PEER} {row['peer_us_trajectory']} us   "
                  f"ratio {row['ratio_trajectory']}", flush=True)
    return rows


def _mujoco_states(mj, cv, q0, v0, controller):
    """MuJoCo's own run from ``(q0, v0)`` (the same control law): ``(qpos, qvel, qfrc_applied)``
    of its states at 0.26, 0.27, ..., 0.30 s (:data:`SETTLE`), the force that of the step from
    there."""
    import mujoco

    data = mujoco.MjData(mj)
    data.qpos[:] = cv.qpos_from_q(q0)
    data.qvel[:] = cv.qvel_from_v(q0, v0)
    n = int(round(SETTLE / DT))
    keep = {n - 10 * j for j in range(5)}
    states = []
    for k in range(n + 1):
        if controller is not None:
            q = cv.q_from_qpos(data.qpos)
            v = cv.v_from_qvel(q, data.qvel)
            data.qfrc_applied[:] = _joint_force(cv, q, controller(k * DT, q, v))
        if k in keep:
            states.append((data.qpos.copy(), data.qvel.copy(), data.qfrc_applied.copy()))
        if k < n:
            mujoco.mj_step(mj, data)
    return states


def _mj_stepper(mj, states):
    """(a call that runs one ``mj_step`` from each of ``states`` (one MjData each), MuJoCo's
    contact counts in those steps)."""
    import mujoco

    cases = [(mujoco.MjData(mj), *s) for s in states]

    def peer():
        for data, qpos, qvel, frc in cases:
            data.qpos[:] = qpos
            data.qvel[:] = qvel
            data.qfrc_applied[:] = frc
            mujoco.mj_step(mj, data)

    peer()
    return peer, [int(c[0].ncon) for c in cases]


def _five_states(scene, settle, controller, mj, own, calls, rounds):
    """Per-step CPU time (us) of the default stepper over the states at 0.26, 0.27, ..., 0.30 s
    of the settling run (one stepper per state, each warm from its own previous step as in the
    single-state rows) and of mj_step over its own run's states ``own`` at those times."""
    from ..sim.steppers import make_stepper

    cases = []
    for j in range(5):
        i = settle.q.shape[0] - 1 - 10 * j
        q, v = settle.q[i].copy(), settle.v[i].copy()
        tau = controller(settle.t[i], q, v) if controller is not None else np.zeros(scene.model.nv)
        st = make_stepper("default")
        st.step(scene, q, v, tau, DT)
        cases.append((st, q, v, tau))

    def ours():
        for st, q, v, tau in cases:
            st.step(scene, q, v, tau, DT)

    peer, _ = _mj_stepper(mj, own)
    us, peer_us = time_pair(ours, peer, calls, rounds)
    return us / len(cases), peer_us / len(own)


TRAJECTORY_STEPS = 500  # consecutive steps timed along each engine's own trajectory
TRAJECTORY_ROUNDS = 5


def _trajectory_steps(scene, stepper, q0, v0, controller, mj, cv, own):
    """Per-step CPU time (us) of ``stepper`` and of ``mj_step`` along their own trajectories:
    :data:`TRAJECTORY_STEPS` consecutive steps from the settled state of each engine (sinews'
    ``(q0, v0)``, MuJoCo's ``own``), only the step calls timed (the controller's torques are
    computed outside), median over :data:`TRAJECTORY_ROUNDS` alternating rounds; and the mean
    solver iterations of sinews' steps."""
    import mujoco

    data = mujoco.MjData(mj)
    clock = time.thread_time_ns
    ours, theirs, sweeps = [], [], []
    for _ in range(TRAJECTORY_ROUNDS):
        if hasattr(stepper, "reset"):
            stepper.reset()
        q, v = q0.copy(), v0.copy()
        spent, its = 0, 0
        for k in range(TRAJECTORY_STEPS):
            tau = controller(SETTLE + k * DT, q, v) if controller is not None else np.zeros(scene.model.nv)
            t0 = clock()
            out = stepper.step(scene, q, v, tau, DT)
            spent += clock() - t0
            q, v = out.q, out.v
            its += int(out.stats.get("iterations", 0))
        ours.append(spent / TRAJECTORY_STEPS / 1e3)
        sweeps.append(its / TRAJECTORY_STEPS)
        data.qpos[:], data.qvel[:], data.qfrc_applied[:] = own
        mujoco.mj_forward(mj, data)
        spent = 0
        for k in range(TRAJECTORY_STEPS):
            if controller is not None:
                qq = cv.q_from_qpos(data.qpos)
                data.qfrc_applied[:] = _joint_force(cv, qq, controller(SETTLE + k * DT, qq, cv.v_from_qvel(qq, data.qvel)))
            t0 = clock()
            mujoco.mj_step(mj, data)
            spent += clock() - t0
        theirs.append(spent / TRAJECTORY_STEPS / 1e3)
    return float(np.median(ours)), float(np.median(theirs)), float(np.mean(sweeps))


def bench_run(name, duration, folder):
    """sinews simulate vs a MuJoCo mj_step loop (the same controller law in Python, if any),
    ``name``'s scene for ``duration`` seconds from its initial state."""
    import mujoco

    from ..sim import simulate

    scene0, q0, v0, controller = MODELS[name]()
    scene, mj, cv = same_scene(scene0, DT, folder)
    simulate(scene, q0, v0, 0.01, DT, controller=controller, progress=False)  # compile first
    t0, c0 = time.perf_counter(), time.thread_time()
    res = simulate(scene, q0, v0, duration, DT, controller=controller, progress=False)
    wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    data = mujoco.MjData(mj)
    data.qpos[:] = cv.qpos_from_q(q0)
    data.qvel[:] = cv.qvel_from_v(q0, v0)
    n = int(round(duration / DT))
    t0, c0 = time.perf_counter(), time.thread_time()
    for k in range(n):
        if controller is not None:
            q = cv.q_from_qpos(data.qpos)
            v = cv.v_from_qvel(q, data.qvel)
            data.qfrc_applied[:] = _joint_force(cv, q, controller(k * DT, q, v))
        mujoco.mj_step(mj, data)
    wall_mj, cpu_mj = time.perf_counter() - t0, time.thread_time() - c0
    us, peer_us = wall / res.steps * 1e6, wall_mj / n * 1e6
    # the peer loop converts MuJoCo's coordinates to sinews' and back on every step (the
    # controller is written in sinews' coordinates): that Python work is in its time
    law = " (same PD law in Python, with a per-step coordinate conversion)" if controller is not None else ""
    row = {"model": f"{name} {duration:g} s run", "algorithm": "simulate default (end to end)",
           "sinews_us": round(us, 2), "peer": f"mujoco mj_step loop{law}",
           "peer_us": round(peer_us, 2), "ratio": round(us / peer_us, 2),
           "sinews_cpu_us": round(cpu / res.steps * 1e6, 2), "peer_cpu_us": round(cpu_mj / n * 1e6, 2),
           "steps_per_second": round(res.steps / wall, 1), "peer_steps_per_second": round(n / wall_mj, 1),
           "steps_per_cpu_second": round(res.steps / cpu, 1), "peer_steps_per_cpu_second": round(n / cpu_mj, 1),
           "mean_solver_iterations": round(float(res.iterations.mean()), 2),
           "final_base_height_m": round(float(res.q[-1, 2]), 4),
           "peer_final_base_height_m": round(float(data.qpos[2]), 4)}
    print(f"{name} {duration:g} s run: sinews {row['steps_per_second']} steps/s ({us:.1f} us/step), MuJoCo loop "
          f"{row['peer_steps_per_second']} steps/s ({peer_us:.1f} us/step), ratio {us / peer_us:.2f} "
          f"(final height {row['final_base_height_m']} m vs {row['peer_final_base_height_m']} m)", flush=True)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m sinews.bench simulate", description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON to this path")
    ap.add_argument("--quick", action="store_true", help="fewer repeats, runs of a tenth of the length")
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--steppers", nargs="*", default=["default", "lcp", "impulse"])
    args = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        import mujoco
    except ImportError:
        print('the simulate benchmark needs MuJoCo: pip install "sinews[bench]"', file=sys.stderr)
        return 1
    calls, rounds = (5, 3) if args.quick else (20, 9)
    rows = []
    print(f"sinews steppers vs MuJoCo {mujoco.__version__} mj_step, dt = {DT * 1e3:g} ms, CPU time per step")
    with tempfile.TemporaryDirectory(prefix="sinews-bench-sim-") as folder:
        for name in args.models:
            try:
                rows += bench_steps(name, args.steppers, calls, rounds, folder)
            except RuntimeError as exc:  # example-robot-data missing
                print(f"(skipping {name}: {exc})", file=sys.stderr)
        for name in args.models:
            try:
                rows.append(bench_run(name, RUNS[name] / (10 if args.quick else 1), folder))
            except RuntimeError as exc:
                print(f"(skipping the {name} run: {exc})", file=sys.stderr)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows}, indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
