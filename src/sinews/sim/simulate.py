"""Run a scene: :func:`simulate` steps it with a stepper chosen by name and records the run.

>>> import numpy as np, sinews
>>> from sinews.geometry import Sphere
>>> from sinews.sim import Scene, simulate
>>> m = sinews.Model()
>>> b = m.add_body("world", sinews.joints.FreeFlyer(), inertia=sinews.SpatialInertia.point_mass(1.0), name="ball")
>>> scene = Scene(m)
>>> g = scene.add_ground()
>>> g = scene.add_geometry("ball", Sphere(0.1))
>>> q0 = np.array([0, 0, 0.3, 0, 0, 0, 1.0])
>>> res = simulate(scene, q0, np.zeros(6), duration=0.5, dt=1e-3, progress=False)
>>> round(float(res.q[-1, 2]), 3)   # resting on the ground: centre at the radius
0.1
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .._checks import integer, real_scalar, vector
from .result import SimulationResult
from .scene import Scene
from .steppers import STEPPERS, CoulombStepper, Stepper, make_stepper

__all__ = ["simulate", "STEPPERS", "MAX_STEPS"]

_F64 = np.dtype(np.float64)
_CHUNK = 128  # steps per kernel call without a controller (progress updated in between)

#: the most steps one call may take (a guard against a mistyped duration or dt)
MAX_STEPS = 10**9


def _controller_torque(controller, t, q, v, nv, effort, speed=None):
    """The controller's joint forces after the actuator limits: clipped to ``effort``
    ``(-limit, limit)``, and cut to zero in the direction of motion for a joint moving faster
    than its velocity limit ``speed`` (Gazebo's rule: an actuator cannot drive past its top
    speed, but it may brake)."""
    if controller is None:
        return np.zeros(nv)
    tau = np.asarray(controller(t, q.copy(), v.copy()), dtype=float)
    if tau.shape != (nv,) or not np.isfinite(tau).all():
        raise ValueError(f"controller must return {nv} finite joint forces, got shape {tau.shape}")
    if effort is not None:
        tau = np.minimum(np.maximum(tau, effort[0]), effort[1])
    if speed is not None:
        tau = np.where(((v > speed) & (tau > 0)) | ((v < -speed) & (tau < 0)), 0.0, tau)
    return tau


def _contact_rows(out):
    """``(k, rows (k, 12), iterations, converged, error)`` of a step's output: rows hold
    ``ga, gb, point, normal, distance, world impulse``; a compiled-path output gives its record
    undecoded (``rows`` is then (k, REC_W), converted by :func:`_recorded_rows`)."""
    record = getattr(out, "record", None)
    if record is not None:
        k, C, it, err = record()
        return k, C, it, True, err, True
    c = out.contacts
    k = len(c)
    st = out.stats
    rows = None
    if k:
        rows = np.empty((k, 12))
        rows[:, 0] = c.geom_a
        rows[:, 1] = c.geom_b
        rows[:, 2:5] = c.points
        rows[:, 5:8] = c.normals
        rows[:, 8] = c.distances
        rows[:, 9:12] = np.einsum("ki,kij->kj", out.impulses, out.frames)
    return k, rows, st.get("iterations", 0), st.get("converged", True), st.get("error", 0.0), False


def _recorded_rows(C):
    """The (k, 12) rows of :func:`_contact_rows` from compiled-path records (k, REC_W)."""
    rows = np.empty((C.shape[0], 12))
    rows[:, 0:9] = C[:, 0:9]
    rows[:, 9:12] = C[:, 17:18] * C[:, 5:8] + C[:, 18:19] * C[:, 11:14] + C[:, 19:20] * C[:, 14:17]
    return rows


def _energy_function(model):
    """``energy(q, v)``: :func:`sinews.mechanical_energy` by one kernel call with preallocated
    buffers (:func:`sinews.sim._step_kernels.mechanical_energy`), falling back to the checked
    function (which raises the named error) for anything the kernel refuses."""
    from ..energy import mechanical_energy

    c = model.compiled
    if not c.nlinks:
        return lambda q, v: mechanical_energy(model, q, v)
    from ._step_kernels import mechanical_energy as kernel

    data = model.data()
    M = np.zeros((model.nv, model.nv))
    out = np.zeros(1)
    mi, mf, ws = c.mi, c.mf, data.ws

    def energy(q, v):
        if (type(q) is np.ndarray and type(v) is np.ndarray and q.dtype == _F64 and v.dtype == _F64
                and q.shape == (model.nq,) and v.shape == (model.nv,) and q.flags.c_contiguous
                and v.flags.c_contiguous and kernel(q, v, M, mi, mf, ws, out) == 0 and math.isfinite(out[0])):
            return float(out[0])
        return mechanical_energy(model, q, v)

    return energy


def simulate(scene: Scene, q0: ArrayLike, v0: ArrayLike, duration: float, dt: float,
             stepper: str | Stepper = "default",
             controller: Callable[[float, np.ndarray, np.ndarray], ArrayLike] | None = None,
             progress: bool = True, record_every: int = 1,
             stepper_options: dict[str, Any] | None = None) -> SimulationResult:
    """Simulate ``scene`` from ``(q0, v0)`` for ``duration`` seconds with time step ``dt``.

    Args:
        scene: a :class:`~sinews.sim.Scene`.
        q0, v0: initial configuration (nq,) and velocity (nv,).
        duration: simulated time [s] (> 0); dt: time step [s] (> 0).
        stepper: ``"default"`` (3-D Coulomb cone, FCLib solvers), ``"lcp"`` (Drake's
            discretised LCP, polygonal cones, CFM/ERP), ``"impulse"`` (Simbody's semi-explicit
            Euler with restitution) or a :class:`~sinews.sim.steppers.Stepper` instance.
        controller: optional ``controller(t, q, v) -> tau`` (nv,) joint forces, the actuators'.
            They are clipped to the model's ``effort_limit``, and a joint moving faster than its
            ``velocity_limit`` gets no force in its direction of motion (it may still brake:
            Gazebo's rule).  Passive forces (damping, friction, limits, contacts) are not
            limited.
        progress: show a progress bar (tqdm) on stderr; ``False`` for none.
        record_every: keep every ``record_every``-th step (the last step is always kept).
        stepper_options: keyword arguments of the stepper's constructor.

    Returns a :class:`~sinews.sim.SimulationResult`.  The run is deterministic: the same inputs
    give bit-for-bit the same result.
    """
    if not isinstance(scene, Scene):
        raise ValueError(f"scene must be a sinews.sim.Scene, got {type(scene).__name__}")
    model = scene.model
    q = vector(q0, model.nq, "q0").copy()
    v = vector(v0, model.nv, "v0").copy()
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise ValueError("q0 and v0 must be finite")
    T = real_scalar(duration, "duration")
    h = real_scalar(dt, "dt")
    if T <= 0:
        raise ValueError(f"duration must be > 0, got {T}")
    if h <= 0:
        raise ValueError(f"dt must be > 0, got {h}")
    record_every = integer(record_every, "record_every", 1)
    if controller is not None and not callable(controller):
        raise ValueError("controller must be a callable controller(t, q, v) -> tau or None")
    step_obj = make_stepper(stepper, **(stepper_options or {}))
    if hasattr(step_obj, "reset"):
        step_obj.reset()
    ratio = T / h
    if not ratio <= MAX_STEPS:
        raise ValueError(f"duration / dt = {ratio:.3g} steps: more than {MAX_STEPS:.0e}; check "
                         "duration and dt")
    nsteps = max(1, int(round(ratio)))
    from ..configuration import normalize
    from ..energy import mechanical_energy

    q = normalize(model, q)
    effort = getattr(model, "effort_limit", None)
    if effort is not None and np.all(np.isinf(effort)):
        effort = None
    keep = np.arange(0, nsteps + 1, record_every)
    if keep[-1] != nsteps:
        keep = np.append(keep, nsteps)
    N = len(keep)
    t_out = np.zeros(N)
    Q = np.zeros((N, model.nq))
    V = np.zeros((N, model.nv))
    E = np.zeros(N)
    cerr = np.zeros(N)
    pen = np.zeros(N)
    ncon = np.zeros(N, dtype=np.int64)
    iters = np.zeros(N, dtype=np.int64)
    conv = np.ones(N, dtype=bool)
    serr = np.zeros(N)

    energy = _energy_function(model)

    def constraint_error(qc):
        if scene.constraints is None or not scene.constraints.size:
            return 0.0
        from ..constraints import constraint_position_error

        return float(np.max(np.abs(constraint_position_error(model, qc, scene.constraints))))

    try:
        Q[0], V[0], E[0] = q, v, mechanical_energy(model, q, v)  # checks q0, v0 by name
        E[0] = energy(q, v)
        cerr[0] = constraint_error(q)
    except ValueError as exc:
        raise ValueError(f"q0, v0: {exc}") from exc
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=nsteps, desc=f"simulate ({step_obj.name})", unit="step",
                       mininterval=0.5, leave=False)
        except ImportError:  # pragma: no cover - tqdm is a dependency
            bar = None
    row = 1
    blocks = []  # (sample or samples, rows, compiled record?) of the recorded steps with contacts
    if effort is not None:
        effort = (-effort, effort)
    speed = getattr(model, "velocity_limit", None)
    if speed is not None and np.all(np.isinf(speed)):
        speed = None
    from ._fast_step import FastStepOutput

    recorded = np.zeros(nsteps + 1, dtype=np.int64)
    recorded[keep] = 1
    # without a controller, the default stepper takes runs of steps in one kernel call (not a
    # subclass with its own step)
    chunked = (controller is None and isinstance(step_obj, CoulombStepper)
               and type(step_obj).step is CoulombStepper.step)

    def failed(s, exc):
        return ValueError(f"step {s} (t = {(s - 1) * h:g} s) failed; q0, v0, dt or the controller's forces "
                          f"may be too large: {exc}")

    def record(s, out):
        nonlocal row
        t_out[row] = s * h
        Q[row], V[row] = out.q, out.v
        try:
            E[row] = energy(out.q, out.v)
            cerr[row] = constraint_error(out.q)
        except ValueError as exc:
            raise ValueError(f"step {s}: q0, v0, dt or the controller's forces may be too large: {exc}") from exc
        k, rows, iters[row], conv[row], serr[row], compiled = _contact_rows(out)
        ncon[row] = k
        if k:
            blocks.append((row, rows, compiled))
        row += 1

    def record_chunk(s, Qc, Vc, Ec, hdr, Cc, taken):
        nonlocal row
        n = Qc.shape[0]
        if not n:
            return
        rr = np.arange(row, row + n)
        t_out[rr] = (s + 1 + np.flatnonzero(recorded[s + 1 : s + 1 + taken])) * h
        Q[rr], V[rr], E[rr] = Qc, Vc, Ec
        for j in np.flatnonzero(~np.isfinite(Ec)):  # the checked function names the problem
            try:
                E[row + j] = energy(Qc[j], Vc[j])
            except ValueError as exc:
                raise ValueError(f"q0, v0 or dt may be too large: {exc}") from exc
        ks = hdr[:, 0].astype(np.int64)
        ncon[rr] = ks
        iters[rr] = hdr[:, 1]
        serr[rr] = hdr[:, 2]
        if Cc.shape[0]:
            blocks.append((np.repeat(rr, ks), Cc, True))
        row += n

    t0 = time.perf_counter()
    try:
        s = 0
        while s < nsteps:
            # (the first step goes through step(): it builds the stepper's tables, and a warm-up
            # run loads both kernels, the single step's and the chunk's)
            if chunked and s:
                n = min(_CHUNK, nsteps - s)
                res = step_obj._advance(scene, q, v, h, recorded[s + 1 : s + 1 + n])
                if res is None:
                    chunked = False
                    continue
                taken, code, q, v, Qc, Vc, Ec, hdr, Cc = res
                record_chunk(s, Qc, Vc, Ec, hdr, Cc, taken)
                s += taken
                if taken < n:  # this step's kernel handed it back: finish it as step() does
                    s += 1
                    try:
                        out = step_obj._finish_step(scene, q, v, h, code)
                    except ValueError as exc:  # raised by the algorithms, naming their own q, v
                        raise failed(s, exc) from exc
                else:
                    out = None
            else:
                s += 1
                tau = _controller_torque(controller, (s - 1) * h, q, v, model.nv, effort, speed)
                try:
                    out = step_obj.step(scene, q, v, tau, h)
                except ValueError as exc:  # raised by the algorithms, naming their own q, v
                    raise failed(s, exc) from exc
            if out is not None:
                q, v = out.q, out.v
                # the compiled path checked its own output
                if type(out) is not FastStepOutput and not (np.isfinite(q).all() and np.isfinite(v).all()):
                    raise ValueError(f"the state is not finite at step {s} (t = {s * h:g} s): q0, v0 "
                                     "or the controller's forces are too large, or dt is too long")
                if recorded[s]:
                    record(s, out)
            if bar is not None and (s % 100 == 0 or s == nsteps or chunked):
                bar.update(s - bar.n)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0

    # the compiled path's records converted in one go, then the blocks in sample order
    comp = [b[1] for b in blocks if b[2]]
    converted = _recorded_rows(np.concatenate(comp)) if comp else None
    if len(comp) == len(blocks):
        rows = converted if comp else np.zeros((0, 12))
    else:
        pieces, off = [], 0
        for _, arr, compiled in blocks:
            if compiled:
                pieces.append(converted[off : off + arr.shape[0]])
                off += arr.shape[0]
            else:
                pieces.append(arr)
        rows = np.concatenate(pieces)
    sample = (np.concatenate([b[0] if isinstance(b[0], np.ndarray) else np.full(b[1].shape[0], b[0])
                              for b in blocks]).astype(np.int64) if blocks else np.zeros(0, dtype=np.int64))
    if sample.size:  # the deepest penetration of each recorded step with contacts
        starts = np.flatnonzero(np.concatenate([[True], sample[1:] != sample[:-1]]))
        pen[sample[starts]] = np.maximum(0.0, -np.minimum.reduceat(rows[:, 8], starts))
    imp = rows[:, 9:12].copy()
    return SimulationResult(
        t=t_out, q=Q, v=V, energy=E, constraint_error=cerr, penetration=pen, num_contacts=ncon,
        iterations=iters, converged=conv, solver_error=serr,
        contact_sample=sample, contact_geoms=rows[:, 0:2].astype(np.int64),
        contact_points=rows[:, 2:5].copy(), contact_normals=rows[:, 5:8].copy(),
        contact_distances=rows[:, 8].copy(), contact_impulses=imp, contact_forces=imp / h,
        stepper=step_obj.name, dt=h, steps=nsteps,
        geometry_names=tuple(g.name for g in scene.geometries), info={"wall_time": wall},
    )
