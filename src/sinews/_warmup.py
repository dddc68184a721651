"""Ahead-of-time compilation of the core kernels (``sinews.warmup()``).

Kernels compile lazily on first use and are cached on disk (Numba ``cache=True``), so the first
call in a fresh installation takes seconds and later processes load them in milliseconds.
``warmup()`` triggers every core kernel once on a tiny model with every joint type, so that a
program can pay that cost up front (and a benchmark never times a compilation).

Numba compiles under a global lock, one function at a time per process.  With ``processes > 1``
the kernels are split into groups that compile in that many child processes at once, each
writing to the shared on-disk cache; then this process runs every group itself, loading the
kernels from the cache (milliseconds each; anything the children could not cache, for example
when the cache directory is read-only, is compiled here as usual).  See ``docs/cold-start.md``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np


def _setup():
    import sinews
    from sinews.sample_models import random_tree

    m = random_tree(6, 0, joint_types=["RX", "Prismatic", "Spherical", "FreeFlyer", "Planar", "Helical"])
    m.add_frame("tip", m.nbodies - 1)
    q = sinews.neutral(m)
    v = np.zeros(m.nv)
    F = np.zeros((m.nbodies, 6))
    return sinews, m, q, v, F


def _group_rnea(sinews, m, q, v, F):
    sinews.rnea(m, q, v, v, F)
    sinews.normalize(m, sinews.integrate(m, q, v, 0.1))


def _group_aba(sinews, m, q, v, F):
    sinews.aba(m, q, v, v, F)
    sinews.minv_times(m, q, v)
    sinews.minverse(m, q)


def _group_crba(sinews, m, q, v, F):
    sinews.ltl_factor(m, sinews.crba(m, q)).solve(v)
    sinews.com_jacobian(m, q)
    sinews.center_of_mass(m, q)
    sinews.com_velocity(m, q, v)


def _group_kinematics(sinews, m, q, v, F):
    sinews.point_jacobian(m, q, m.nbodies - 1)
    sinews.point_jacobian_6d(m, q, m.nbodies - 1)
    sinews.body_jacobian(m, q, m.nbodies - 1)
    sinews.body_placement(m, q, m.nbodies - 1)
    sinews.forward_kinematics(m, q)
    sinews.point_acceleration(m, q, v, v, 1)
    sinews.mechanical_energy(m, q, v)  # the kinematics pass and its input check
    # the kinematics fast path's entry kernels (sinews._kinematics_fast: the calls above bound
    # the thread's state; these take the fast path)
    sinews.point_jacobian_time_variation(m, q, v, m.nbodies - 1)
    sinews.frame_jacobian_time_variation(m, q, v, "tip")
    sinews.center_of_mass(m, q)
    sinews.com_velocity(m, q, v)
    sinews.com_jacobian(m, q)


#: the groups (each also compiles the shared joint pass), ordered so that two processes get
#: about equal halves; together they trigger every core kernel
GROUPS = (_group_aba, _group_kinematics, _group_rnea, _group_crba)


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


def _sim_contact(sinews, m, q, v, F):
    from .contact import fclib

    W = np.array([[2.0, 0.1, 0.0, 0.5, 0.0, 0.0], [0.1, 2.0, 0.0, 0.0, 0.5, 0.0],
                  [0.0, 0.0, 2.0, 0.0, 0.0, 0.5], [0.5, 0.0, 0.0, 2.0, 0.1, 0.0],
                  [0.0, 0.5, 0.0, 0.1, 2.0, 0.0], [0.0, 0.0, 0.5, 0.0, 0.0, 2.0]])
    problem = fclib.FrictionContactProblem(W, np.array([-1.0, 0.2, 0.0, -0.5, 0.0, 0.1]), np.array([0.9, 0.5]))
    fclib.solve(problem, tol=1e-6, max_iter=1000)
    from .geometry import Box
    from .geometry.narrow_phase import box_box

    box_box(Box([1.0, 1.0, 1.0]), np.eye(3), np.zeros(3), Box([1.0, 1.0, 1.0]), np.eye(3), np.array([0.0, 0.0, 0.9]))


#: groups of the default stepper's kernels (:func:`warmup_simulation`)
SIM_GROUPS = (_sim_aba, _sim_inertia, _sim_kinematics, _sim_contact)
_GROUP_SETS = {"core": GROUPS, "simulation": SIM_GROUPS}


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

        magic = K.aba.targetctx.codegen().magic_tuple()
        kernels = [K.joint_pass, K.crba, K.aba, MK.minverse, KK.frame_jacobian]
        if which == "core":
            kernels.append(K.rnea)
        else:
            from .contact import _fc3d_pgs

            kernels.append(_fc3d_pgs.pgs_kernel)
        for kernel in kernels:
            index = kernel._cache._cache_file._load_index()
            if not any(key[1] == magic for key in index):
                return False
        return True
    except Exception:
        return True


def warmup(processes: int | None = None) -> None:
    """Compile (or load from the cache) every core kernel; ``processes``: child processes that
    compile in parallel first (``None``: one per group, at most one per CPU; 1: none)."""
    if processes is None:
        processes = min(len(GROUPS), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if processes > 1 and sys.executable and not _cache_is_warm():
        _compile_in_children(min(int(processes), len(GROUPS)))
    args = _setup()
    for group in GROUPS:
        group(*args)


def warmup_simulation(processes: int | None = None) -> None:
    """Compile (or load from the cache) the kernels of the ``"default"`` simulation stepper, in
    parallel child processes when the cache is cold.  The demos call it before their first step;
    a program that simulates can do the same.

    ``processes``: child processes that compile first (``None``: one per group, at most one per
    CPU, as :func:`warmup`; 1: none).  Each child compiles the shared joint pass again and pays
    its start-up (about 6-10 s of CPU more in all on the quadruped demo), which the parallelism
    repays when the CPUs are otherwise idle (docs/cold-start.md)."""
    if processes is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        processes = min(len(SIM_GROUPS), cpus)
    if processes > 1 and sys.executable and not _cache_is_warm("simulation"):
        _compile_in_children(min(int(processes), len(SIM_GROUPS)), "simulation")
    args = _setup()
    for group in SIM_GROUPS:
        group(*args)
    # the stepper's own fused kernel (sinews.sim._step_kernels), last and in this process: it
    # calls the kernels above, which it now loads from the cache instead of compiling them
    from .sim import simulate
    from .sim.examples import bouncing_ball

    scene, q0, v0 = bouncing_ball(height=0.0)
    simulate(scene, q0, v0, 0.003, 1e-3, progress=False)
