"""A small fixed-step integrator for unconstrained kinematic trees.

:func:`simulate` advances ``(q, v)`` with the forward dynamics of :func:`sinews.aba` and
returns a :class:`Trajectory` (time, configurations, velocities, mechanical energy).

Two methods:

``"rk4"`` (default)
    The classical fourth-order Runge-Kutta scheme in its Lie-group form (Runge-Kutta-Munthe-Kaas,
    RKMK4).  Velocities are Euclidean and are integrated as usual.  Configurations are updated
    only through :func:`sinews.integrate` (``q exp(u)``), so quaternions stay unit quaternions;
    for the spherical and free-flyer joints the stage increments are corrected by
    ``dexp^-1`` truncated after the double commutator (``u' = v + [u, v]/2 + [u, [u, v]]/12``),
    which keeps the method fourth-order on SO(3) and SE(3).  For Euclidean joints this is
    exactly classical RK4.
``"semi_implicit_euler"``
    Symplectic Euler: ``v+ = v + h a(q, v)``, ``q+ = integrate(q, v+, h)``.  First order, but
    its energy error stays bounded for conservative systems.

**Closed chains and other bilateral constraints** (``constraints=cs``, a
:class:`~sinews.constraints.ConstraintSet` of loops, coordinate couplings, custom constraints or
held contacts): the accelerations come from
:func:`~sinews.constraints.forward_dynamics_constraints` (Baumgarte terms of the groups where it
is enabled included) plus the generalised forces of the cut-joint springs, dampers and motors
of :class:`sinews.loops.LoopJoint` groups.  After every step the state is projected back onto
the constraint manifold (``projection=True``, Karana's ``ProjectConstraintError``): ``q`` by
mass-weighted Gauss-Newton steps ``d = argmin d^T M d`` subject to ``G d = -phi`` (at most
``projection_iterations``, through :func:`sinews.integrate`), then ``v`` by the mass-weighted
projection ``v+ = v - M^-1 G^T (G M^-1 G^T)^-1 G v`` (a plastic constraint impulse: it removes
only the drift's kinetic energy).  The trajectory reports the drift before each projection in
``constraint_error`` (``max |phi|``) and ``constraint_velocity_error`` (``max |G v|``) at every
sample.  Without constraints this is the integrator for free trees (demos, tests, quick
experiments); unilateral contact with friction is :mod:`sinews.sim`.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np
from numpy.typing import ArrayLike

from ._checks import NonFiniteResultError, finite_vector, integer, real_scalar
from .aba import aba
from .algorithms import check_model
from .configuration import _check_unit_quaternions, integrate
from .energy import mechanical_energy
from .joints import JT_FREEFLYER, JT_SPHERICAL

if TYPE_CHECKING:
    import os

    from .constraints import ConstraintSet
    from .model import Model

__all__ = ["simulate", "rk4_step", "Trajectory", "METHODS"]

METHODS = ("rk4", "semi_implicit_euler")

#: Largest number of steps :func:`simulate` accepts (``ceil(duration / dt)``).
MAX_STEPS = 10**9
#: Largest memory (bytes) :func:`simulate` may allocate for the recorded samples.
MAX_RECORD_BYTES = 4 * 2**30


@dataclass
class Trajectory:
    """Samples of a simulation: ``t`` (N,), ``q`` (N, nq), ``v`` (N, nv), ``energy`` (N,).

    With constraints: ``constraint_error`` (N,) ``max |phi|`` and ``constraint_velocity_error``
    (N,) ``max |G v|`` of the state reached by each step *before* its projection (the drift one
    step produces; the projected state is on the manifold to ``projection_tol``); ``None``
    without constraints.

    ``energy`` is the mechanical energy ``T + V`` (:func:`sinews.mechanical_energy`, plus the
    energy of cut-joint springs of loop constraints); it is conserved by the exact dynamics when
    ``tau`` does no work.  ``info`` holds the run's
    settings and statistics (method, step, number of steps, wall time).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    info: dict = field(default_factory=dict)
    constraint_error: np.ndarray | None = None
    constraint_velocity_error: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.t)

    @property
    def energy_drift(self) -> float:
        """Largest absolute deviation of the energy from its initial value."""
        return float(np.max(np.abs(self.energy - self.energy[0])))

    def save_npz(self, path: str | os.PathLike) -> Path:
        """Write ``t, q, v, energy`` (and the constraint errors of a constrained run) to a NumPy
        ``.npz`` archive; returns the path."""
        path = Path(path)
        extra = {}
        if self.constraint_error is not None:
            extra = {"constraint_error": self.constraint_error,
                     "constraint_velocity_error": self.constraint_velocity_error}
        np.savez(path, t=self.t, q=self.q, v=self.v, energy=self.energy, **extra)
        return path

    def save_csv(self, path: str | os.PathLike, q_names: list[str] | None = None,
                 v_names: list[str] | None = None) -> Path:
        """Write one row per sample: ``t, q..., v..., energy`` with a header line."""
        path = Path(path)
        nq, nv = self.q.shape[1], self.v.shape[1]
        q_names = list(q_names) if q_names is not None else [f"q{i}" for i in range(nq)]
        v_names = list(v_names) if v_names is not None else [f"v{i}" for i in range(nv)]
        if len(q_names) != nq or len(v_names) != nv:
            raise ValueError(f"q_names/v_names must have {nq} and {nv} entries")
        header = ",".join(["t", *q_names, *v_names, "energy"])
        table = np.column_stack([self.t, self.q, self.v, self.energy])
        np.savetxt(path, table, delimiter=",", header=header, comments="", fmt="%.10g")
        return path


class _Progress:
    """A one-line progress report on stderr, shown once a run has lasted ``delay`` seconds."""

    def __init__(self, mode, nsteps: int, label: str, delay: float = 1.0, every: float = 0.25):
        self.callback = mode if callable(mode) else None
        self.enabled = mode is None or mode is True
        self.delay = 0.0 if mode is True else delay
        self.every = every
        self.nsteps = nsteps
        self.label = label
        self.t0 = time.perf_counter()
        self.last = -np.inf
        self.shown = False
        self.last_step = -1
        self.t1 = None

    def __call__(self, step: int):
        if self.callback is not None:
            self.callback(step, self.nsteps)
            return
        if not self.enabled:
            return
        now = time.perf_counter()
        if step == 1:
            self.t1 = now  # the rate is measured from the first step (excludes compilation)
        elapsed = now - self.t0
        if elapsed < self.delay or (now - self.last < self.every and step < self.nsteps):
            return
        self.last = now
        self.shown = True
        self.last_step = step
        frac = step / self.nsteps
        if step > 1 and self.t1 is not None:
            left = f"~{(now - self.t1) / (step - 1) * (self.nsteps - step):.1f} s left"
        else:
            left = "starting"
        sys.stderr.write(
            f"\r{self.label}: {100 * frac:5.1f}% ({step}/{self.nsteps} steps, "
            f"{elapsed:.1f} s elapsed, {left})   "
        )
        sys.stderr.flush()

    def close(self):
        if self.shown:
            if self.last_step != self.nsteps:
                self.last = -np.inf
                self(self.nsteps)
            sys.stderr.write("\n")
            sys.stderr.flush()


def rk4_step(model: Model, acc: Callable[[np.ndarray, np.ndarray], ArrayLike], q: ArrayLike, v: ArrayLike,
             dt: float) -> tuple[np.ndarray, np.ndarray]:
    """One classical RK4 step of ``(q, v)`` for a user acceleration ``qdd = acc(q, v)`` (for
    example constrained forward dynamics); ``q`` is moved with :func:`sinews.integrate`, so
    quaternion coordinates stay on their manifold.  ``q (nq,)``, ``v (nv,)``; returns ``(q_next (nq,),
    v_next (nv,))``."""
    nv = check_model(model).nv
    q = finite_vector(q, model.nq, "q")
    v = finite_vector(v, nv, "v")
    dt = real_scalar(dt, "dt")
    if not callable(acc):
        raise ValueError("acc must be a callable acc(q, v) -> array of length nv")
    user_acc = acc

    def acc(q, v):
        return finite_vector(user_acc(q, v), nv, "acc(q, v)")

    v1, a1 = v, acc(q, v)
    v2 = v + 0.5 * dt * a1
    a2 = acc(integrate(model, q, v1, 0.5 * dt), v2)
    v3 = v + 0.5 * dt * a2
    a3 = acc(integrate(model, q, v2, 0.5 * dt), v3)
    v4 = v + dt * a3
    a4 = acc(integrate(model, q, v3, dt), v4)
    q_next = integrate(model, q, (v1 + 2 * v2 + 2 * v3 + v4) / 6.0, dt)
    v_next = v + dt * (a1 + 2 * a2 + 2 * a3 + a4) / 6.0
    if not np.all(np.isfinite(v_next)):
        raise ValueError("the result is not finite (floating-point overflow): v, dt or acc(q, v) too large")
    return q_next, v_next


def _lie_blocks(model):
    """(kind, iv) of the spherical and free-flyer joints (their tangent spaces do not commute)."""
    blocks = []
    for b in model.bodies[1:]:
        if b.joint.code in (JT_SPHERICAL, JT_FREEFLYER):
            blocks.append((b.joint.code, b.idx_v))
    return blocks


def _bracket(blocks, u, w):
    """Lie bracket ``[u, w]`` blockwise: so(3) cross product, se(3) ``[omega; v]`` bracket."""
    out = np.zeros_like(w)
    for code, iv in blocks:
        if code == JT_SPHERICAL:
            out[iv : iv + 3] = np.cross(u[iv : iv + 3], w[iv : iv + 3])
        else:
            uw, uv = u[iv : iv + 3], u[iv + 3 : iv + 6]
            ww, wv = w[iv : iv + 3], w[iv + 3 : iv + 6]
            out[iv : iv + 3] = np.cross(uw, ww)
            out[iv + 3 : iv + 6] = np.cross(uw, wv) - np.cross(ww, uv)
    return out


def _dexpinv(blocks, u, v):
    """``d/dt u`` such that ``q0 exp(u(t))`` moves with body velocity ``v`` (truncated series)."""
    if not blocks:
        return v
    uv = _bracket(blocks, u, v)
    return v + 0.5 * uv + _bracket(blocks, u, uv) / 12.0


def _torque_function(model, tau):
    nv = model.nv
    if tau is None:
        zero = np.zeros(nv)
        return lambda t, q, v: zero
    if callable(tau):

        def f(t, q, v):
            return finite_vector(tau(t, q, v), nv, "tau(t, q, v)")

        return f
    const = finite_vector(tau, nv, "tau").copy()
    return lambda t, q, v: const


def _plan(model, duration: float, dt: float, record_every: int) -> tuple[int, int]:
    """``(nsteps, nrec)``, refusing runs beyond :data:`MAX_STEPS` steps or
    :data:`MAX_RECORD_BYTES` of samples with a ValueError that says what they would need."""
    ratio = duration / dt  # may be inf (duration=1e300, dt=1e-300)
    per_sample = (model.nq + model.nv + 2) * 8
    if ratio <= MAX_STEPS:
        nsteps = max(1, math.ceil(ratio - 1e-9))
        nrec = 1 + nsteps // record_every + (1 if nsteps % record_every else 0)
        need = nrec * per_sample
        if need <= MAX_RECORD_BYTES:
            return nsteps, nrec
    need = (1.0 + ratio / record_every) * per_sample
    raise ValueError(
        f"duration={duration:g}, dt={dt:g} and record_every={record_every} need {ratio:.4g} steps "
        f"and {need / 2**30:.4g} GiB for the recorded samples; the limits are {MAX_STEPS:.0e} steps "
        f"(sinews.simulate.MAX_STEPS) and {MAX_RECORD_BYTES / 2**30:g} GiB "
        "(sinews.simulate.MAX_RECORD_BYTES): use a larger dt, a shorter duration or a larger "
        "record_every"
    )


def simulate(
    model: Model,
    q0: ArrayLike,
    v0: ArrayLike,
    duration: float,
    dt: float,
    tau: ArrayLike | Callable[[float, np.ndarray, np.ndarray], ArrayLike] | None = None,
    method: str = "rk4",
    progress: bool | None = None,
    record_every: int = 1,
    constraints: ConstraintSet | None = None,
    constraint_method: str = "direct",
    projection: bool = True,
    projection_tol: float = 1e-12,
    projection_iterations: int = 10,
) -> Trajectory:
    """Integrate the dynamics of ``model`` (a free tree, or closed chains and other bilateral
    constraints with ``constraints=``) from ``(q0, v0)`` for ``duration`` seconds.

    Parameters
    ----------
    model:
        A :class:`sinews.Model` (every subtree must have mass: ABA needs it).
    q0, v0:
        Initial configuration (length ``nq``) and velocity (length ``nv``).
    duration, dt:
        Simulated time and the (largest) step.  The run takes ``n = ceil(duration / dt)``
        equal steps of ``h = duration / n <= dt`` so that it ends exactly at ``duration``.
    tau:
        Joint forces: ``None`` (passive), a constant vector of length ``nv``, or a callable
        ``tau(t, q, v) -> array (nv,)``.
    method:
        ``"rk4"`` (Lie-group RK4, default) or ``"semi_implicit_euler"``.
    progress:
        ``None`` (default): print a progress line on stderr if the run lasts over ~1 s;
        ``True``: always print it; ``False``: never; or a callable ``progress(step, nsteps)``.
    record_every:
        Keep every ``record_every``-th step (the first and last states are always kept).
    constraints:
        ``None`` (free tree) or a :class:`~sinews.constraints.ConstraintSet` (bound to ``model``
        on first use); see the module docstring.  ``q0, v0`` should satisfy the constraints
        (:class:`sinews.loops.ConstraintKinematicsSolver` solves them); they are projected
        first when ``projection`` is on, and ``ValueError`` (naming ``q0``) is raised when that
        leaves ``max |phi|`` above ``max(projection_tol, 1e-8)`` (a loop that cannot close).
    constraint_method:
        The :func:`~sinews.constraints.forward_dynamics_constraints` method.
    projection, projection_tol, projection_iterations:
        Project ``q`` and ``v`` onto the manifold after each step (on by default) until
        ``max |phi| <= projection_tol`` (at most ``projection_iterations`` Gauss-Newton steps;
        ``info["projection_failures"]`` counts the steps where it was not reached).

    Returns
    -------
    Trajectory
        ``t``, ``q``, ``v``, ``energy`` (mechanical energy at each sample) and ``info``.

    Example
    -------
    >>> import numpy as np, sinews
    >>> from sinews.simulate import simulate
    >>> m = sinews.Model()
    >>> _ = m.add_body(0, sinews.joints.RevoluteY(), inertia=sinews.SpatialInertia.from_rod(1.0, 1.0, axis=0))
    >>> traj = simulate(m, [0.0], [0.0], duration=0.1, dt=1e-3)
    >>> traj.q.shape, bool(traj.energy_drift < 1e-9)
    ((101, 1), True)
    """
    check_model(model)
    if not (isinstance(method, str) and method in METHODS):
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    q = finite_vector(q0, model.nq, "q0").copy()
    v = finite_vector(v0, model.nv, "v0").copy()
    duration = real_scalar(duration, "duration")
    dt = real_scalar(dt, "dt")
    if not duration > 0:
        raise ValueError(f"duration must be a positive number, got {duration}")
    if not dt > 0:
        raise ValueError(f"dt must be a positive number, got {dt}")
    record_every = integer(record_every, "record_every", minimum=1)
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise ValueError("progress must be None, True, False or a callable(step, nsteps)")
    nsteps, nrec = _plan(model, duration, dt, record_every)
    if model.compiled.has_quaternion:
        _check_unit_quaternions(model.compiled, q, "q0")
        q = integrate(model, q, np.zeros(model.nv), 0.0)  # exactly unit quaternions

    h = duration / nsteps
    torque = _torque_function(model, tau)
    data = model.data()
    blocks = _lie_blocks(model)
    closed = None
    if constraints is not None:
        from .loops._projection import ClosedChain

        closed = ClosedChain(model, constraints, constraint_method, projection, projection_tol,
                             projection_iterations, data)
        try:  # without projection this only records the drift of q0, v0
            q, v = closed.project(q, v, count=False, iterations=max(closed.iterations, 50))
        except ValueError as exc:  # kinematics of extreme q0 / v0 overflow
            raise ValueError(f"q0, v0: the initial projection onto the constraints failed: {exc}") from None
        if projection:
            closed.check_initial()  # a loop that cannot close from q0 is an error, not a jump

        def accel(t, q, v):
            return closed.accel(q, v, torque(t, q, v))
    else:

        def accel(t, q, v):
            return aba(model, q, v, torque(t, q, v), data=data)

    T = np.empty(nrec)
    Q = np.empty((nrec, model.nq))
    V = np.empty((nrec, model.nv))
    E = np.empty(nrec)

    PHI = np.zeros(nrec) if closed is not None else None
    PHID = np.zeros(nrec) if closed is not None else None

    def record(k, t, q, v):
        T[k], Q[k], V[k] = t, q, v
        E[k] = mechanical_energy(model, q, v, data=data)
        if closed is not None:
            PHI[k], PHID[k] = closed.last_drift
            E[k] += closed.spring_energy(q)

    def after_step(q, v):
        return closed.project(q, v) if closed is not None else (q, v)

    report = _Progress(progress, nsteps, f"simulate ({method}, {nsteps} steps)")
    wall0 = time.perf_counter()
    try:
        # an overflow in the step arithmetic raises at once instead of feeding inf onwards
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            rec = _run(model, method, q, v, h, nsteps, record_every, accel, blocks, record, report, after_step)
    except (NonFiniteResultError, FloatingPointError) as exc:
        report.close()
        raise NonFiniteResultError(
            "the state is not finite (floating-point overflow) during the simulation: q0, v0, "
            f"tau, duration or dt are too large in magnitude, or the motion is unstable ({exc})"
        ) from None
    report.close()
    wall = time.perf_counter() - wall0
    info = {"method": method, "dt": h, "steps": nsteps, "duration": duration, "wall_time": wall}
    if closed is not None:
        info.update(closed.stats())
        return Trajectory(T[:rec], Q[:rec], V[:rec], E[:rec], info, PHI[:rec], PHID[:rec])
    return Trajectory(T[:rec], Q[:rec], V[:rec], E[:rec], info)


def _run(model, method, q, v, h, nsteps, record_every, accel, blocks, record, report, after_step) -> int:
    """The integration loop of :func:`simulate`; returns the number of samples recorded."""
    record(0, 0.0, q, v)
    rec = 1
    for step in range(1, nsteps + 1):
        t = (step - 1) * h
        if method == "rk4":
            a1 = accel(t, q, v)
            k1 = v
            u = 0.5 * h * k1
            v2 = v + 0.5 * h * a1
            a2 = accel(t + 0.5 * h, integrate(model, q, u, 1.0), v2)
            k2 = _dexpinv(blocks, u, v2)
            u = 0.5 * h * k2
            v3 = v + 0.5 * h * a2
            a3 = accel(t + 0.5 * h, integrate(model, q, u, 1.0), v3)
            k3 = _dexpinv(blocks, u, v3)
            u = h * k3
            v4 = v + h * a3
            a4 = accel(t + h, integrate(model, q, u, 1.0), v4)
            k4 = _dexpinv(blocks, u, v4)
            q = integrate(model, q, (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4), 1.0)
            v = v + (h / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        else:
            v = v + h * accel(t, q, v)
            q = integrate(model, q, v, h)
        q, v = after_step(q, v)
        if step % record_every == 0 or step == nsteps:
            record(rec, step * h, q, v)
            rec += 1
        report(step)
    return rec
