"""``python -m sinews.bench batch [--json PATH] [--states N] [--runs R] [--repeat K] [--no-mujoco]``

Per-state cost of :mod:`sinews.batch` (``aba``, ``rnea``, ``crba``) on ``N`` (default 1000)
random states of Pinocchio's sample humanoid (nq 35, nv 34, through
:func:`sinews.interop.from_pinocchio`), against

* a Python loop over Pinocchio's ``pin.aba`` / ``pin.rnea`` / ``pin.crba`` (inputs converted to
  Pinocchio's velocity order beforehand, one reused ``pin.Data``);
* a Python loop over the single-state ``sinews.aba`` / ``sinews.rnea`` / ``sinews.crba``;
* for ``aba``, if MuJoCo is installed (``pip install mujoco``): ``mujoco.rollout.rollout`` of one
  step from each of the ``N`` initial states (one ``mj_step``: forward dynamics and an Euler
  step; contacts and constraints disabled; generalised forces as ``qfrc_applied``) on the same
  humanoid exported to MJCF by :func:`to_mjcf`, with one ``MjData`` per thread.

The batch functions and the rollout run at 1 thread and at all of Numba's threads
(``numba.get_num_threads()``; MuJoCo gets as many ``MjData``).  Every case is checked for
agreement before timing (MuJoCo's accelerations from ``mj_forward`` against ``sinews.aba``).

Method: one pass over the ``N`` states is timed with both the wall clock
(``time.perf_counter``) and the calling thread's CPU time (``time.thread_time``); in each of
``R`` runs (default 15) every case is timed ``K`` times (default 3) in turn and the run keeps
the medians.  Reported per state: wall min / median / max over the runs and the median CPU
time, and each batch case's ratio to each peer (per run, then median and range over the runs),
on the CPU clock when both sides run on one thread (time taken by other processes does not
count) and on the wall clock otherwise.  Other processes on a shared machine inflate the
multi-threaded times most: read the spread.  ``--layer`` picks Numba's threading layer.
``--json PATH`` writes the rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from xml.sax.saxutils import quoteattr

import numpy as np

__all__ = ["to_mjcf", "run", "main"]


# ----------------------------------------------------------------------------------------------
# MJCF export (for this benchmark only)


def _fmt(x) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(x))


def _quat_wxyz(R) -> np.ndarray:
    import mujoco

    q = np.empty(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, dtype=float).reshape(9))
    return q


def to_mjcf(model, integrator: str = "Euler", timestep: float = 1e-3) -> str:
    """The MJCF text of a sinews model: bodies with their joint placements and inertials, and
    hinge (revolute), slide (prismatic), ball (spherical), free (free-flyer, at the root with an
    identity placement) joints, or none (fixed).  Contacts and constraints are disabled.  Other
    joint types raise ``ValueError``.  Joints are named after their bodies."""
    from sinews.joints import JT_FIXED, JT_FREEFLYER, JT_PRISMATIC, JT_REVOLUTE, JT_SPHERICAL

    bodies = model.bodies
    children = {b.id: [] for b in bodies}
    for b in bodies[1:]:
        children[b.parent].append(b.id)
    g = _fmt(model.gravity)
    lines = [
        f"<mujoco model={quoteattr(model.name)}>",
        '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
        f'  <option gravity="{g}" integrator="{integrator}" timestep="{timestep!r}">',
        '    <flag contact="disable" constraint="disable" limit="disable" equality="disable"/>',
        "  </option>",
        "  <worldbody>",
    ]

    def emit(bid, depth):
        b = bodies[bid]
        pad = "  " * depth
        X, j, I = b.X_parent_joint, b.joint, b.inertia
        lines.append(f"{pad}<body name={quoteattr(b.name)} pos=\"{_fmt(X.p)}\" quat=\"{_fmt(_quat_wxyz(X.R))}\">")
        name = quoteattr(b.name)
        if j.code == JT_REVOLUTE:
            lines.append(f'{pad}  <joint name={name} type="hinge" axis="{_fmt(j.axis)}"/>')
        elif j.code == JT_PRISMATIC:
            lines.append(f'{pad}  <joint name={name} type="slide" axis="{_fmt(j.axis)}"/>')
        elif j.code == JT_SPHERICAL:
            lines.append(f'{pad}  <joint name={name} type="ball"/>')
        elif j.code == JT_FREEFLYER:
            if b.parent != 0 or not (np.array_equal(X.R, np.eye(3)) and not np.any(X.p)):
                raise ValueError(f"body {b.name!r}: a free-flyer must be a root joint with an identity placement")
            lines.append(f"{pad}  <freejoint name={name}/>")
        elif j.code != JT_FIXED:
            raise ValueError(f"body {b.name!r}: joint {j!r} has no MJCF equivalent here")
        if I.mass > 0:
            Ic = I.inertia_com
            full = [Ic[0, 0], Ic[1, 1], Ic[2, 2], Ic[0, 1], Ic[0, 2], Ic[1, 2]]
            lines.append(f'{pad}  <inertial pos="{_fmt(I.com)}" mass="{I.mass!r}" fullinertia="{_fmt(full)}"/>')
        for c in children[bid]:
            emit(c, depth + 1)
        lines.append(f"{pad}</body>")

    for c in children[0]:
        emit(c, 2)
    lines += ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines) + "\n"


class MujocoMap:
    """Coordinates of the exported model: sinews (q, v, tau, qdd) to and from MuJoCo's (qpos,
    qvel, qfrc, qacc).  Quaternions are (x, y, z, w) in sinews and (w, x, y, z) in MuJoCo; a
    free joint's linear velocity (and force, acceleration) is in world axes in MuJoCo and in
    body axes in sinews, angular first in sinews."""

    def __init__(self, model, mjm):
        import mujoco

        from sinews.joints import JT_FREEFLYER, JT_SPHERICAL

        self.joints = []
        for b in model.bodies[1:]:
            if b.joint.nv == 0:
                continue
            jid = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_JOINT, b.name)
            kind = "free" if b.joint.code == JT_FREEFLYER else "ball" if b.joint.code == JT_SPHERICAL else "1"
            self.joints.append((kind, b.idx_q, b.idx_v, int(mjm.jnt_qposadr[jid]), int(mjm.jnt_dofadr[jid])))
        self.nq, self.nv = mjm.nq, mjm.nv

    @staticmethod
    def _rot(q_xyzw):
        import mujoco

        R = np.empty(9)
        mujoco.mju_quat2Mat(R, np.array([q_xyzw[3], q_xyzw[0], q_xyzw[1], q_xyzw[2]]) / np.linalg.norm(q_xyzw))
        return R.reshape(3, 3)

    def state(self, q, v, tau):
        """``(qpos, qvel, qfrc_applied)`` of one sinews state."""
        qpos, qvel, qfrc = np.empty(self.nq), np.empty(self.nv), np.empty(self.nv)
        for kind, iq, iv, aq, av in self.joints:
            if kind == "free":
                R = self._rot(q[iq + 3 : iq + 7])
                qpos[aq : aq + 3] = q[iq : iq + 3]
                qpos[aq + 3 : aq + 7] = q[[iq + 6, iq + 3, iq + 4, iq + 5]]
                qvel[av : av + 3] = R @ v[iv + 3 : iv + 6]
                qvel[av + 3 : av + 6] = v[iv : iv + 3]
                qfrc[av : av + 3] = R @ tau[iv + 3 : iv + 6]
                qfrc[av + 3 : av + 6] = tau[iv : iv + 3]
            elif kind == "ball":
                qpos[aq : aq + 4] = q[[iq + 3, iq, iq + 1, iq + 2]]
                qvel[av : av + 3] = v[iv : iv + 3]
                qfrc[av : av + 3] = tau[iv : iv + 3]
            else:
                qpos[aq] = q[iq]
                qvel[av] = v[iv]
                qfrc[av] = tau[iv]
        return qpos, qvel, qfrc

    def qdd(self, q, v, qacc):
        """sinews ``qdd`` from MuJoCo's ``qacc`` at the sinews state ``(q, v)``."""
        out = np.empty(len(v))
        for kind, iq, iv, aq, av in self.joints:
            if kind == "free":
                R = self._rot(q[iq + 3 : iq + 7])
                w, vb = v[iv : iv + 3], v[iv + 3 : iv + 6]
                out[iv : iv + 3] = qacc[av + 3 : av + 6]
                out[iv + 3 : iv + 6] = R.T @ qacc[av : av + 3] - np.cross(w, vb)
            else:
                n = 3 if kind == "ball" else 1
                out[iv : iv + n] = qacc[av : av + n]
        return out


# ----------------------------------------------------------------------------------------------
# the benchmark


def _time(f, repeat):
    """Median wall-clock and calling-thread CPU time of ``repeat`` calls of ``f``."""
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.thread_time()
        f()
        cpu.append(time.thread_time() - c0)
        wall.append(time.perf_counter() - w0)
    return float(np.median(wall)), float(np.median(cpu))


def _threads_of(label: str) -> int:
    """Threads of a case label (``"..., 2 threads"``); loops run on one."""
    tail = label.rsplit(", ", 1)[-1]
    return int(tail.split()[0]) if tail.endswith(("thread", "threads")) else 1


def _mujoco_cases(m, Q, V, T, nthreads, ref_qdd, problems):
    """The rollout cases (label -> callable) or {} when MuJoCo is missing or disagrees."""
    try:
        import mujoco
        from mujoco import rollout
    except ImportError:
        print("mujoco not installed (pip install mujoco): no MuJoCo comparison", flush=True)
        return {}, None
    mjm = mujoco.MjModel.from_xml_string(to_mjcf(m))
    mjd = mujoco.MjData(mjm)
    mp = MujocoMap(m, mjm)
    n = Q.shape[0]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty((n, mujoco.mj_stateSize(mjm, spec)))
    ctrl = np.empty((n, 1, mjm.nv))
    worst = 0.0
    for i in range(n):
        qpos, qvel, qfrc = mp.state(Q[i], V[i], T[i])
        mujoco.mj_resetData(mjm, mjd)
        mjd.qpos[:], mjd.qvel[:], mjd.qfrc_applied[:] = qpos, qvel, qfrc
        mujoco.mj_getState(mjm, mjd, state[i], spec)
        ctrl[i, 0] = qfrc
        if i < 20:  # agreement: MuJoCo's forward dynamics against sinews.aba
            mujoco.mj_forward(mjm, mjd)
            qdd = mp.qdd(Q[i], V[i], mjd.qacc)
            worst = max(worst, float(np.abs(qdd - ref_qdd[i]).max() / (1.0 + np.abs(ref_qdd[i]).max())))
    if worst > 1e-8:
        problems.append(f"mujoco disagrees with sinews.aba: relative error {worst:.2e}")
    qfrc_spec = int(mujoco.mjtState.mjSTATE_QFRC_APPLIED)
    cases = {}
    for t in sorted({1, nthreads}):
        datas = [mujoco.MjData(mjm) for _ in range(t)]
        out = np.empty((n, 1, state.shape[1]))

        def f(datas=datas, out=out):
            rollout.rollout(mjm, datas, state, ctrl, control_spec=qfrc_spec, nstep=1, state=out)

        cases[f"mujoco rollout 1 step, {t} thread{'s' if t > 1 else ''}"] = f
    return cases, f"mujoco {mujoco.__version__}"


def run(n_states: int = 1000, runs: int = 15, repeat: int = 3, seed: int = 0, use_mujoco: bool = True):
    import numba
    import pinocchio as pin

    import sinews
    import sinews.batch as B
    from sinews.interop import PinocchioCoordinates, from_pinocchio

    pm = pin.buildSampleModelHumanoid()
    pd = pm.createData()
    m = from_pinocchio(pm)
    cv = PinocchioCoordinates(m)
    rng = np.random.default_rng(seed)
    n = n_states
    Q = np.array([sinews.random_configuration(m, rng, -1.0, 1.0) for _ in range(n)])
    V = rng.normal(size=(n, m.nv))
    A = rng.normal(size=(n, m.nv))
    T = B.rnea(m, Q, V, A)
    Vp = np.array([cv.v_to_pin(x) for x in V])
    Ap = np.array([cv.v_to_pin(x) for x in A])
    Tp = np.array([cv.v_to_pin(x) for x in T])
    nthreads = numba.get_num_threads()
    problems = []
    B.aba(m, Q, V, A)  # the first parallel call picks the threading layer
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel call yet (one thread, or a small batch)
        layer = "no"
    print(f"sinews batch benchmark: {n} humanoid states, {runs} runs x {repeat} timings, Numba threads: "
          f"{nthreads} ({layer} threading layer)", flush=True)

    # agreement first
    qdd = B.aba(m, Q, V, T)
    M = B.crba(m, Q)
    for i in range(min(n, 20)):
        if not np.allclose(T[i], cv.v_from_pin(pin.rnea(pm, pd, Q[i], Vp[i], Ap[i])), atol=1e-8):
            problems.append(f"rnea disagrees with pin.rnea at state {i}")
        if not np.allclose(qdd[i], cv.v_from_pin(pin.aba(pm, pd, Q[i], Vp[i], Tp[i])), atol=1e-7):
            problems.append(f"aba disagrees with pin.aba at state {i}")
        Mp = pin.crba(pm, pd, Q[i])
        if not np.allclose(M[i], cv.matrix_from_pin(np.triu(Mp) + np.triu(Mp, 1).T), atol=1e-9):
            problems.append(f"crba disagrees with pin.crba at state {i}")

    def with_threads(t, f):
        def g():
            before = numba.get_num_threads()
            numba.set_num_threads(t)
            try:
                f()
            finally:
                numba.set_num_threads(before)
        return g

    out_v = np.empty((n, m.nv))
    out_m = np.empty((n, m.nv, m.nv))
    algos = {
        "aba": (lambda: B.aba(m, Q, V, T, out=out_v),
                lambda: [pin.aba(pm, pd, Q[i], Vp[i], Tp[i]) for i in range(n)],
                lambda: [sinews.aba(m, Q[i], V[i], T[i]) for i in range(n)]),
        "rnea": (lambda: B.rnea(m, Q, V, A, out=out_v),
                 lambda: [pin.rnea(pm, pd, Q[i], Vp[i], Ap[i]) for i in range(n)],
                 lambda: [sinews.rnea(m, Q[i], V[i], A[i]) for i in range(n)]),
        "crba": (lambda: B.crba(m, Q, out=out_m),
                 lambda: [pin.crba(pm, pd, Q[i]) for i in range(n)],
                 lambda: [sinews.crba(m, Q[i]) for i in range(n)]),
    }
    peer = f"pinocchio {pin.__version__}"
    rows = []
    for algo, (batch, pin_loop, sin_loop) in algos.items():
        cases = {}
        for t in sorted({1, nthreads}):
            cases[f"sinews.batch.{algo}, {t} thread{'s' if t > 1 else ''}"] = with_threads(t, batch)
        cases[f"loop of pin.{algo}"] = pin_loop
        cases[f"loop of sinews.{algo}"] = sin_loop
        mj_peer = None
        if algo == "aba" and use_mujoco:
            mj, mj_peer = _mujoco_cases(m, Q, V, T, nthreads, qdd, problems)
            cases.update(mj)
        for f in cases.values():  # warm-up (compilation, thread pools)
            f()
        wall = {k: [] for k in cases}
        cpu = {k: [] for k in cases}
        for _ in range(runs):
            for k, f in cases.items():
                w, c = _time(f, repeat)
                wall[k].append(w / n * 1e6)
                cpu[k].append(c / n * 1e6)
        print(f"\n{algo}: per-state time over {runs} runs of {n} states, us (wall: min / median / max; "
              "CPU of the calling thread: median)", flush=True)
        for k in cases:
            w = wall[k]
            print(f"  {k:38s} {min(w):8.3f} {np.median(w):8.3f} {max(w):8.3f}   cpu {np.median(cpu[k]):8.3f}", flush=True)
        for k in cases:
            if not k.startswith("sinews.batch"):
                continue
            for p in cases:
                if p.startswith("sinews.batch"):
                    continue
                # one thread on both sides: CPU time (immune to other processes); else wall time
                clock = "cpu" if _threads_of(k) == 1 and _threads_of(p) == 1 else "wall"
                t = cpu if clock == "cpu" else wall
                ours, theirs = np.array(t[k]), np.array(t[p])
                r = ours / theirs
                rows.append({
                    "model": "humanoid", "algorithm": algo, "case": k, "versus": p, "states": n,
                    "threads": _threads_of(k), "clock": clock,
                    "sinews_us_per_state": round(float(np.median(ours)), 3),
                    "sinews_us_min_max": [round(float(ours.min()), 3), round(float(ours.max()), 3)],
                    "peer": mj_peer if p.startswith("mujoco") else peer if p.startswith("loop of pin") else "sinews",
                    "peer_us_per_state": round(float(np.median(theirs)), 3),
                    "peer_us_min_max": [round(float(theirs.min()), 3), round(float(theirs.max()), 3)],
                    "ratio_median": round(float(np.median(r)), 3),
                    "ratio_min": round(float(r.min()), 3),
                    "ratio_max": round(float(r.max()), 3),
                })
                print(f"    ratio ({clock}) {k} / {p}: {np.median(r):.3f} (runs: {r.min():.3f}-{r.max():.3f})", flush=True)
    return rows, problems


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m sinews.bench batch", description=__doc__.split("\n\n")[1])
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    parser.add_argument("--states", type=int, default=1000, help="states per batch (default 1000)")
    parser.add_argument("--runs", type=int, default=15, help="runs (default 15)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per case and run (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-mujoco", action="store_true", help="skip the MuJoCo comparison")
    parser.add_argument("--layer", choices=("default", "omp", "workqueue", "tbb"), default="default",
                        help="Numba threading layer (default: Numba's choice, or $NUMBA_THREADING_LAYER)")
    args = parser.parse_args(argv)
    if args.states < 1 or args.runs < 1 or args.repeat < 1:
        parser.error("--states, --runs and --repeat must be positive")
    import numba

    if args.layer != "default":
        numba.config.THREADING_LAYER = args.layer  # before the first parallel call

    import sinews

    sinews.warmup()
    rows, problems = run(args.states, args.runs, args.repeat, args.seed, not args.no_mujoco)
    for p in problems:
        print("DISAGREEMENT:", p, flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "problems": problems}, fh, indent=2)
        print(f"wrote {args.json}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
