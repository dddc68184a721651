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


#: the groups (each also compiles the shared joint pass), ordered so that two processes get
#: about equal halves; together they trigger every core kernel
GROUPS = (_group_aba, _group_kinematics, _group_rnea, _group_crba)


def _run_group(index: int) -> None:
    """Entry point of a child process: compile (and cache) the kernels of one group."""
    GROUPS[index](*_setup())


def _compile_in_children(processes: int) -> None:
    groups = list(range(len(GROUPS)))
    children = []
    try:
        for start in range(processes):
            mine = groups[start::processes]
            code = "from sinews._warmup import _run_group\n" + "".join(f"_run_group({i})\n" for i in mine)
            children.append(
                subprocess.Popen(
                    [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
    finally:
        for child in children:
            child.wait()  # a failed child only means this process compiles that group itself


def _cache_is_warm() -> bool:
    """Whether the on-disk cache already holds the big kernels for this CPU (then starting
    children would only cost their start-up).  Reads Numba's cache index (internal API: on any
    surprise, answer True and compile serially)."""
    try:
        from . import _kernels as K
        from . import _kinematics_kernels as KK
        from . import _minv_kernels as MK

        magic = K.aba.targetctx.codegen().magic_tuple()
        for kernel in (K.joint_pass, K.rnea, K.crba, K.aba, MK.minverse, KK.frame_jacobian):
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
