"""Ahead-of-time compilation of the core kernels (``sinews.warmup()``).

Kernels compile lazily on first use and are cached on disk (Numba ``cache=True``), so the first
call in a fresh installation takes seconds and later processes load them in milliseconds.
``warmup()`` triggers every core kernel once on a tiny model with every joint type, so that a
program can pay that cost up front (and a benchmark never times a compilation).
"""

from __future__ import annotations

import numpy as np


def warmup() -> None:
    import sinews
    from sinews.sample_models import random_tree

    m = random_tree(6, 0, joint_types=["RX", "Prismatic", "Spherical", "FreeFlyer", "Planar", "Helical"])
    q = sinews.neutral(m)
    v = np.zeros(m.nv)
    F = np.zeros((m.nbodies, 6))
    tau = sinews.rnea(m, q, v, v, F)
    sinews.crba(m, q)
    sinews.aba(m, q, v, tau, F)
    sinews.minv_times(m, q, v)
    sinews.point_jacobian(m, q, m.nbodies - 1)
    sinews.point_jacobian_6d(m, q, m.nbodies - 1)
    sinews.body_jacobian(m, q, m.nbodies - 1)
    sinews.body_placement(m, q, m.nbodies - 1)
    sinews.forward_kinematics(m, q)
    sinews.com_jacobian(m, q)
    sinews.center_of_mass(m, q)
    sinews.com_velocity(m, q, v)
    sinews.minverse(m, q)
    sinews.point_acceleration(m, q, v, v, 1)
    sinews.ltl_factor(m, sinews.crba(m, q)).solve(v)
    sinews.mechanical_energy(m, q, v)  # the kinematics pass and its input check
    sinews.normalize(m, sinews.integrate(m, q, v, 0.1))
