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

import time
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from .._checks import integer, real_scalar, vector
from .result import SimulationResult
from .scene import Scene
from .steppers import STEPPERS, Stepper, make_stepper

__all__ = ["simulate", "STEPPERS", "MAX_STEPS"]

#: the most steps one call may take (a guard against a mistyped duration or dt)
MAX_STEPS = 10**9


def _controller_torque(controller, t, q, v, nv, effort):
    if controller is None:
        return np.zeros(nv)
    tau = np.asarray(controller(t, q.copy(), v.copy()), dtype=float)
    if tau.shape != (nv,) or not np.all(np.isfinite(tau)):
        raise ValueError(f"controller must return {nv} finite joint forces, got shape {tau.shape}")
    if effort is not None:
        tau = np.clip(tau, -effort, effort)
    return tau


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
        if (type(q) is np.ndarray and type(v) is np.ndarray and q.dtype == np.float64 and v.dtype == np.float64
                and q.shape == (model.nq,) and v.shape == (model.nv,)
                and kernel(np.ascontiguousarray(q), np.ascontiguousarray(v), M, mi, mf, ws, out) == 0
                and np.isfinite(out[0])):
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
        controller: optional ``controller(t, q, v) -> tau`` (nv,) joint forces, clipped to the
            model's ``effort_limit``.
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
    c_rows = {k: [] for k in ("sample", "geoms", "points", "normals", "dist", "imp")}

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
    t0 = time.perf_counter()
    try:
        for s in range(1, nsteps + 1):
            t = (s - 1) * h
            tau = _controller_torque(controller, t, q, v, model.nv, effort)
            try:
                out = step_obj.step(scene, q, v, tau, h)
            except ValueError as exc:  # raised by the algorithms, naming their own q, v
                raise ValueError(f"step {s} (t = {(s - 1) * h:g} s) failed; q0, v0, dt or the "
                                 f"controller's forces may be too large: {exc}") from exc
            q, v = out.q, out.v
            if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
                raise ValueError(f"the state is not finite at step {s} (t = {s * h:g} s): q0, v0 "
                                 "or the controller's forces are too large, or dt is too long")
            if bar is not None:
                bar.update(1)
            if row < N and keep[row] == s:
                t_out[row] = s * h
                Q[row], V[row] = q, v
                try:
                    E[row] = energy(q, v)
                    cerr[row] = constraint_error(q)
                except ValueError as exc:
                    raise ValueError(f"step {s}: q0, v0, dt or the controller's forces may be too "
                                     f"large: {exc}") from exc
                c = out.contacts
                k = len(c)
                ncon[row] = k
                st = out.stats
                iters[row] = st.get("iterations", 0)
                conv[row] = st.get("converged", True)
                serr[row] = st.get("error", 0.0)
                if k:
                    pen[row] = max(0.0, -float(c.distances.min()))
                    c_rows["sample"].append(np.full(k, row))
                    c_rows["geoms"].append(np.stack([c.geom_a, c.geom_b], axis=1))
                    c_rows["points"].append(c.points)
                    c_rows["normals"].append(c.normals)
                    c_rows["dist"].append(c.distances)
                    c_rows["imp"].append(np.einsum("ki,kij->kj", out.impulses, out.frames))
                row += 1
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0

    def cat(key, shape):
        return np.concatenate(c_rows[key]) if c_rows[key] else np.zeros(shape)

    imp = cat("imp", (0, 3))
    return SimulationResult(
        t=t_out, q=Q, v=V, energy=E, constraint_error=cerr, penetration=pen, num_contacts=ncon,
        iterations=iters, converged=conv, solver_error=serr,
        contact_sample=cat("sample", (0,)).astype(np.int64),
        contact_geoms=cat("geoms", (0, 2)).astype(np.int64),
        contact_points=cat("points", (0, 3)), contact_normals=cat("normals", (0, 3)),
        contact_distances=cat("dist", (0,)), contact_impulses=imp, contact_forces=imp / h,
        stepper=step_obj.name, dt=h, steps=nsteps,
        geometry_names=tuple(g.name for g in scene.geometries), info={"wall_time": wall},
    )
