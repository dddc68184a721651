"""Ahead-of-time compilation of the core kernels (``sinews.warmup()``).

Kernels compile lazily on first use and are cached on disk (Numba ``cache=True``), so the first
call in a fresh installation takes seconds and later processes load them in milliseconds.
``warmup()`` calls every core algorithm on tiny models with every joint type, twice: the first
call of a model takes the checked path (and binds the model's workspace), the second the fast
path's entry kernel (``*_x``, ``sinews._kinematics_fast_kernels``), so that both are compiled
and a program (or a benchmark) never compiles later.

Numba compiles under a global lock, one function at a time per process.  With ``processes > 1``
the groups of kernels below are shared out (longest first) between this process and
``processes - 1`` child processes, which all compile at once into the shared on-disk cache; then
this process runs every group, loading the children's kernels from the cache (milliseconds
each; anything the children could not cache, for example when the cache directory is read-only,
is compiled here as usual).  Every tree algorithm calls the joint pass, the biggest shared
kernel: this process compiles it first, and a child starts with the kernels that do not need it
(configuration, ``L^T L``, checks), then waits (boundedly) until the joint pass is in the cache
and loads it instead of compiling it a second time.  See ``docs/cold-start.md``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

_JOINT_TYPES = ["RX", "Prismatic", "Spherical", "FreeFlyer", "Planar", "Helical"]


def _model():
    """A tiny model with every joint type and one frame, "tip" (a new one per call: its first
    call of an algorithm takes the checked path)."""
    from sinews.sample_models import random_tree

    m = random_tree(6, 0, joint_types=_JOINT_TYPES)
    m.add_frame("tip", m.nbodies - 1)
    return m


def _setup():
    import sinews

    m = _model()
    q = sinews.neutral(m)
    v = np.zeros(m.nv)
    F = np.zeros((m.nbodies, 6))
    return sinews, m, q, v, F


def _twice(call):
    """``call(model)`` on a new model, twice: the checked path, then the fast path."""
    m = _model()
    call(m)
    call(m)


def _out_twice(f, m, q):
    """``f(m, q, out=)`` twice into a result of ``f``: the checked path, then the fast path."""
    out = f(m, q)
    f(m, q, out=out)
    f(m, q, out=out)


def _group_misc(sinews, m, q, v, F):
    """Kernels that do not call the joint pass: configuration, ``L^T L``, the input checks, the
    cores of the CRBA and of ``M^-1`` (which start from the world poses), compiled for the
    signatures the algorithms call them with, and the result pools' reference-count reader."""
    from . import _native, _pools
    from ._crba_kernels import crba_core
    from ._native_entry import CRBA_CORE_ARGS, MINVERSE_ARGS
    from ._minv_kernels import minverse_core

    sinews.normalize(m, sinews.integrate(m, q, v, 0.1))
    sinews.ltl_factor(m, np.eye(m.nv)).solve(v)
    _native.kernel_address(crba_core, CRBA_CORE_ARGS)
    _native.kernel_address(minverse_core, MINVERSE_ARGS)
    _pools.warm()  # (the reference-count reader of the result pools)


def _group_rnea(sinews, m, q, v, F):
    _twice(lambda m: sinews.rnea(m, q, v, v, F))
    _twice(lambda m: sinews.rnea(m, q, v, v))


def _group_aba(sinews, m, q, v, F):
    _twice(lambda m: sinews.aba(m, q, v, v, F))
    _twice(lambda m: sinews.aba(m, q, v, v))
    _twice(lambda m: sinews.minv_times(m, q, v))


def _group_minverse(sinews, m, q, v, F):
    _twice(lambda m: sinews.minverse(m, q))


def _group_crba(sinews, m, q, v, F):
    _twice(lambda m: sinews.crba(m, q))
    _twice(lambda m: sinews.ltl_factor(m, sinews.crba(m, q)).solve(v))


def _group_kinematics(sinews, m, q, v, F):
    """Placements and Jacobians (the native entry points of forward kinematics, placements and
    Jacobians with their kernels)."""
    tip = m.nbodies - 1
    for call in (
        lambda m: sinews.forward_kinematics(m, q),
        lambda m: _out_twice(sinews.forward_kinematics, m, q),
        lambda m: sinews.body_placement(m, q, tip),
        lambda m: sinews.frame_placement(m, q, "tip"),
        lambda m: sinews.point_jacobian(m, q, tip),
        lambda m: sinews.point_jacobian_6d(m, q, tip),
        lambda m: sinews.body_jacobian(m, q, tip),
        lambda m: sinews.body_jacobian(m, q, tip, "world"),
        lambda m: sinews.frame_jacobian(m, q, "tip"),
    ):
        _twice(call)


def _group_kinematics_dt(sinews, m, q, v, F):
    """Point accelerations, the Jacobians' time derivatives, the centre of mass and the
    energies."""
    tip = m.nbodies - 1
    for call in (
        lambda m: sinews.point_acceleration(m, q, v, v, 1),
        lambda m: sinews.point_jacobian_time_variation(m, q, v, tip),
        lambda m: sinews.frame_jacobian_time_variation(m, q, v, "tip"),
        lambda m: sinews.center_of_mass(m, q),
        lambda m: sinews.com_velocity(m, q, v),
        lambda m: sinews.com_jacobian(m, q),
        lambda m: sinews.kinetic_energy(m, q, v),
        lambda m: sinews.mechanical_energy(m, q, v),
    ):
        _twice(call)


#: name -> (group, estimated compile seconds (CPU, measured on the 2-core development machine,
#: without the joint pass), whether it calls the joint pass).  Together the groups trigger
#: every core kernel.
_CORE = {
    "misc": (_group_misc, 5.1, False),
    "rnea": (_group_rnea, 1.9, True),
    "aba": (_group_aba, 4.2, True),
    "minverse": (_group_minverse, 2.8, True),
    "crba": (_group_crba, 1.6, True),
    "kinematics": (_group_kinematics, 6.5, True),
    "kinematics_dt": (_group_kinematics_dt, 7.2, True),
}
#: the groups in the order this process runs them (the joint pass first, in "rnea")
GROUPS = tuple(_CORE[name][0] for name in ("rnea", "aba", "minverse", "crba", "kinematics", "kinematics_dt", "misc"))
_JOINT_PASS_S = 3.5  # Numba's import and the joint pass with its helpers (compiled once, by this process)
_CHILD_START_S = 1.5  # a child's interpreter, Numba and the kernel modules


def _plan(processes: int) -> list[list[str]]:
    """The core groups shared out between this process (first list; it compiles the joint pass
    first, with "rnea") and ``processes - 1`` children: longest group first, each to the least
    loaded process.  A child's jp-free groups come first."""
    load = [_JOINT_PASS_S] + [_CHILD_START_S] * (processes - 1)
    plan: list[list[str]] = [["rnea"]] + [[] for _ in range(processes - 1)]
    load[0] += _CORE["rnea"][1]
    for name in sorted((n for n in _CORE if n != "rnea"), key=lambda n: -_CORE[n][1]):
        i = min(range(processes), key=lambda j: load[j])
        plan[i].append(name)
        load[i] += _CORE[name][1]
    for names in plan[1:]:
        names.sort(key=lambda n: _CORE[n][2])  # jp-free first (stable: longest first after)
    return plan


def _is_cached(kernel) -> bool:
    """Whether Numba's cache index of ``kernel`` has an entry for this CPU (internal API: on any
    surprise, answer True)."""
    try:
        magic = kernel.targetctx.codegen().magic_tuple()
        index = kernel._cache._cache_file._load_index()
        return any(key[1] == magic for key in index)
    except Exception:
        return True


def _wait_for_joint_pass(timeout: float = 20.0) -> None:
    """Wait until the joint pass is in the cache (another process compiles it), at most
    ``timeout`` seconds; then this process loads it instead of compiling it too."""
    from ._joint_pass import joint_pass_links

    t_end = time.monotonic() + timeout
    while not _is_cached(joint_pass_links) and time.monotonic() < t_end:
        time.sleep(0.05)


def _run_groups(names, wait: bool = False) -> None:
    """Entry point of a child process: compile (and cache) the kernels of the core groups
    ``names``; with ``wait``, the joint pass is loaded from the cache once another process has
    put it there (:func:`_wait_for_joint_pass`)."""
    args = _setup()
    waited = not wait
    for name in names:
        group, _, needs_joint_pass = _CORE[name]
        if needs_joint_pass and not waited:
            _wait_for_joint_pass()
            waited = True
        group(*args)


# ------------------------------------------------------------------ the default stepper's kernels
# What a simulation with ``stepper="default"`` compiles (measured with tools/compile_profile.py on
# the quadruped demo): aba, crba and minverse with the joint pass, placements and the world body
# Jacobian, integrate, the energy, the FCLib PGS kernel with its careful checker, the collision
# and box kernels, and the fused step kernel that calls them (sinews.sim._step_kernels).  The
# groups below compile the callees (they can run in parallel processes); warmup_simulation then
# compiles the step kernel itself.  The step kernel calls the fast entry kernels (``*_x``, see
# sinews._entry), while a model's first public call takes the checked path (and binds the model's
# workspace): the groups bind the workspace first, so that they compile the same specialisations.


def _bound(m):
    m.default_data  # binds the thread's workspace: the next call takes the fast path
    return m


def _sim_aba(sinews, m, q, v, F):
    sinews.aba(_bound(m), q, v, v)


def _sim_inertia(sinews, m, q, v, F):
    sinews.crba(_bound(m), q)
    sinews.minverse(m, q)


def _sim_kinematics(sinews, m, q, v, F):
    from .geometry import Sphere
    from .sim import Scene

    fresh = _setup()[1]
    sinews.forward_kinematics(fresh, q)  # a model's first call: the checked path (scene placement)
    sinews.body_jacobian(_bound(m), q, m.nbodies - 1, "world")
    sinews.mechanical_energy(m, q, v)  # the energy of every sample (joint pass, input checks)
    scene = Scene(m)
    scene.add_ground()
    # a sphere this large meets the ground whatever the posture: the contact path runs
    scene.add_geometry(m.nbodies - 1, Sphere(100.0))
    scene.add_geometry(1, Sphere(100.0))
    scene.collide(q, 1e-3)
    sinews.normalize(m, sinews.integrate(m, q, v, 0.1))


def _two_contacts(W_form=np.asarray):
    """A frictional-contact problem of two contacts whose 6 x 6 symmetric positive definite
    ``W`` is ``W_form(W)`` (a dense array by default; ``scipy.sparse.csr_matrix`` for the CSR
    kernels)."""
    from .contact import fclib

    W = np.array([[2.0, 0.1, 0.0, 0.5, 0.0, 0.0], [0.1, 2.0, 0.0, 0.0, 0.5, 0.0],
                  [0.0, 0.0, 2.0, 0.0, 0.0, 0.5], [0.5, 0.0, 0.0, 2.0, 0.1, 0.0],
                  [0.0, 0.5, 0.0, 0.1, 2.0, 0.0], [0.0, 0.0, 0.5, 0.0, 0.0, 2.0]])
    return fclib.FrictionContactProblem(W_form(W), np.array([-1.0, 0.2, 0.0, -0.5, 0.0, 0.1]), np.array([0.9, 0.5]))


def _sim_contact(sinews, m, q, v, F):
    from .contact import fclib

    fclib.solve(_two_contacts(), tol=1e-6, max_iter=1000)
    from .geometry import Box
    from .geometry.narrow_phase import box_box

    box_box(Box([1.0, 1.0, 1.0]), np.eye(3), np.zeros(3), Box([1.0, 1.0, 1.0]), np.eye(3), np.array([0.0, 0.0, 0.9]))


#: groups of the default stepper's kernels (:func:`warmup_simulation`)
SIM_GROUPS = (_sim_aba, _sim_inertia, _sim_kinematics, _sim_contact)


def _three_steps(stepper: str = "default") -> None:
    """Three steps of ``stepper`` on a ball resting on the ground (the contact path runs)."""
    from .sim import simulate
    from .sim.examples import bouncing_ball

    scene, q0, v0 = bouncing_ball(height=0.0)
    simulate(scene, q0, v0, 0.003, 1e-3, stepper=stepper, progress=False)


def _stepper(name):
    def group(sinews, m, q, v, F):
        _three_steps(name)

    group.__doc__ = f"Three steps of the ``{name!r}`` stepper."
    return group


def _contact_solvers(sinews, m, q, v, F):
    """The frictional-contact solvers' sparse (CSR) kernels (the default stepper warms up the
    dense ones) and Simbody's PGS and PLUS impulse solvers, on tiny problems."""
    import scipy.sparse as sp

    from .contact import fclib
    from .contact.impulse_solver import PGSImpulseSolver, PLUSImpulseSolver, UniContactRT

    problem = _two_contacts(sp.csr_matrix)
    fclib.solve(problem, tol=1e-6, max_iter=1000, W=problem.W)
    fclib.natural_map_error(problem, np.zeros(6))
    for solver in (PLUSImpulseSolver(max_rolling_speed=1e-9), PGSImpulseSolver(convergence_tol=1e-12, max_iters=100)):
        contact = UniContactRT(normal=0, friction=(1, 2), eff_mu=0.6)
        solver.solve(0, None, np.eye(3) / 2.0, None, (), None, np.array([-1.5, 0.5, 0.0]), None, uni_contact=[contact])


#: the other two steppers and the contact solvers (:func:`warmup_steppers`): ``"lcp"`` (Lemke
#: and its dense LU), ``"impulse"``, the sparse FCLib kernels and Simbody's impulse solvers
STEPPER_GROUPS = (_stepper("lcp"), _stepper("impulse"), _contact_solvers)


def _batch(sinews, m, q, v, F):
    """Every algorithm of :mod:`sinews.batch` on 16 states (two chunks: the parallel driver
    runs on a machine with two threads or more; it is compiled here in any case)."""
    from . import batch
    from ._batch_kernels import MIN_CHUNK, driver

    driver()
    Q, V = np.tile(q, (2 * MIN_CHUNK, 1)), np.zeros((2 * MIN_CHUNK, m.nv))
    b = m.nbodies - 1
    batch.aba(m, Q, V, V)
    batch.rnea(m, Q, V, V)
    batch.crba(m, Q)
    batch.forward_kinematics(m, Q)
    batch.point_jacobian(m, Q, b, (0.0, 0.0, 0.1))
    batch.center_of_mass(m, Q)


#: the batch algorithms (:func:`warmup_batch`)
BATCH_GROUPS = (_batch,)


def _con_contacts(sinews, m, q, v, F):
    """Constrained dynamics and impulses of a contacts-only set by every compiled method
    (``sinews.constraints._compiled_contacts``), twice each: a set's first call binds it."""
    from .constraints import ConstraintSet, compute_constraint_impulses, forward_dynamics_constraints
    from .constraints.forward_dynamics import COMPILED_METHODS

    b = m.nbodies - 1
    cs = ConstraintSet()
    cs.add_contact_constraint(b, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    cs.add_contact_constraint(b, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    # a redundant set (three rows on a body with fewer degrees of freedom): the compiled path
    # hands it to the general one
    redundant = ConstraintSet()
    for n in ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]):
        redundant.add_contact_constraint(1, [0.0, 0.1, 0.2], n)
    for method in COMPILED_METHODS:
        for contacts in (cs, redundant):
            for _ in range(2):
                forward_dynamics_constraints(m, q, v, v, contacts, method=method)
                compute_constraint_impulses(m, q, v, contacts, method=method)


def _con_mixed(sinews, m, q, v, F):
    """Constrained dynamics of a mixed set (a loop-closure row and a contact) by every method
    of the mixed lane (``sinews.constraints._compiled_mixed``), twice each."""
    from .constraints import ConstraintSet, forward_dynamics_constraints
    from .constraints.forward_dynamics import MIXED_METHODS
    from .spatial import Transform

    b = m.nbodies - 1
    cs = ConstraintSet()
    cs.add_loop_constraint(1, b, Transform.identity(), Transform.identity(), [0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    cs.add_contact_constraint(b, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    for method in MIXED_METHODS:
        for _ in range(2):
            forward_dynamics_constraints(m, q, v, v, cs, method=method)


#: groups of the constrained dynamics' compiled paths (:func:`warmup_constrained`)
CONSTRAINED_GROUPS = (_con_contacts, _con_mixed)
_GROUP_SETS = {"core": GROUPS, "simulation": SIM_GROUPS, "steppers": STEPPER_GROUPS, "constrained": CONSTRAINED_GROUPS,
               "batch": BATCH_GROUPS}


def _run_group(index: int, which: str = "core") -> None:
    """Entry point of a child process: compile (and cache) the kernels of one group."""
    _GROUP_SETS[which][index](*_setup())


def _compile_in_children(processes: int, which: str = "core") -> None:
    groups = list(range(len(_GROUP_SETS[which])))
    children = []
    try:
        for start in range(processes):
            mine = groups[start::processes]
            code = "from sinews._warmup import _run_group\n" + "".join(f"_run_group({i}, {which!r})\n" for i in mine)
            children.append(
                subprocess.Popen(
                    [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
    finally:
        for child in children:
            child.wait()  # a failed child only means this process compiles that group itself


def _cache_is_warm(which: str = "core") -> bool:
    """Whether the on-disk cache already holds the big kernels for this CPU (then starting
    children would only cost their start-up).  Reads Numba's cache index (internal API: on any
    surprise, answer True and compile serially)."""
    try:
        from . import _kernels as K
        from . import _kinematics_kernels as KK
        from . import _minv_kernels as MK
        from ._joint_pass import joint_pass_links

        kernels = [joint_pass_links, K.crba, K.aba, MK.minverse, KK.frame_jacobian]
        if which == "core":
            from . import _native, _native_entry, _native_kinematics

            kernels.append(K.rnea)
            natives = [_native_entry.aba_n, _native_entry.minverse_n, _native_kinematics.placements_n]
            if _native.available() and not all(_native.is_cached(f) for f in natives):
                return False
        elif which == "steppers":
            from .lcp import lemke

            kernels.append(lemke._lemke_kernel)
        elif which == "constrained":
            from .constraints import _fast_null_space, _fast_range_space, _mixed_kernels

            kernels += [_fast_range_space.contact_range_space, _fast_null_space.contact_null_space,
                        _mixed_kernels.mixed_range_space]
        elif which == "simulation":
            from .contact import _fc3d_pgs

            kernels.append(_fc3d_pgs.pgs_kernel)
        else:
            return True  # a set without a probe: compile serially
        return all(_is_cached(kernel) for kernel in kernels)
    except Exception:
        return True


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def warmup(processes: int | None = None) -> None:
    """Compile (or load from the cache) every core kernel; ``processes``: how many processes
    compile at once, this one included (``None``: one per CPU, at most four; 1: this one only)."""
    if processes is None:
        processes = min(4, _cpus())
    processes = max(1, min(int(processes), len(_CORE)))
    children = []
    if processes > 1 and sys.executable and not _cache_is_warm():
        plan = _plan(processes)
        try:
            for names in plan[1:]:
                code = f"from sinews._warmup import _run_groups\n_run_groups({names!r}, wait=True)\n"
                children.append(
                    subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                )
            args = _setup()
            for name in plan[0]:
                _CORE[name][0](*args)
        finally:
            for child in children:
                child.wait()  # a failed child only means this process compiles its groups below
    args = _setup()
    for group in GROUPS:
        group(*args)


def _warm_set(which: str, processes: int | None) -> None:
    """The groups of ``_GROUP_SETS[which]``: first in ``processes`` child processes (``None``: one
    per group, at most one per CPU) when the cache is cold, then all in this process."""
    groups = _GROUP_SETS[which]
    if processes is None:
        processes = min(len(groups), _cpus())
    if processes > 1 and sys.executable and not _cache_is_warm(which):
        _compile_in_children(min(int(processes), len(groups)), which)
    args = _setup()
    for group in groups:
        group(*args)


def warmup_simulation(processes: int | None = None) -> None:
    """Compile (or load from the cache) the kernels of the ``"default"`` simulation stepper, in
    parallel child processes when the cache is cold.  The demos call it before their first step;
    a program that simulates can do the same.

    ``processes``: child processes that compile first (``None``: one per group, at most one per
    CPU, as :func:`warmup`; 1: none).  Each child compiles the shared joint pass again and pays
    its start-up (about 6-10 s of CPU more in all on the quadruped demo), which the parallelism
    repays when the CPUs are otherwise idle (docs/cold-start.md)."""
    _warm_set("simulation", processes)
    # the stepper's own fused kernel (sinews.sim._step_kernels), last and in this process: it
    # calls the kernels above, which it now loads from the cache instead of compiling them
    _three_steps()


def warmup_constrained(processes: int | None = None) -> None:
    """Compile (or load from the cache) the kernels of the compiled constrained-dynamics paths:
    ``forward_dynamics_constraints`` of a contacts-only set (methods ``direct``,
    ``range_space_sparse``, ``null_space``) and of a mixed set (loop closures, contacts:
    ``direct``, ``range_space_sparse``, ``tree_augmented``), and ``compute_constraint_impulses``.
    ``processes`` as :func:`warmup_simulation` (the two groups compile in child processes first
    when the cache is cold)."""
    _warm_set("constrained", processes)


def warmup_steppers(processes: int | None = None) -> None:
    """Compile (or load from the cache) the kernels of the ``"lcp"`` and ``"impulse"`` steppers
    and of the contact solvers (FCLib's sparse kernels, Simbody's PGS and PLUS), after
    :func:`warmup_simulation`, which compiles the tree algorithms they share; ``processes`` as
    :func:`warmup_simulation`."""
    _warm_set("steppers", processes)


def warmup_batch() -> None:
    """Compile (or load from the cache) the kernels of :mod:`sinews.batch` (one group, in this
    process)."""
    _warm_set("batch", 1)
