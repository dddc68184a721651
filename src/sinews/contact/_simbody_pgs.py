"""Compiled projected Gauss--Seidel sweeps for Simbody's PGS impulse solver.

Used by :class:`sinews.contact.impulse_solver.PGSImpulseSolver`.

The groups of a problem are flattened into one integer table, one float table and one array of
row indices; :func:`pgs_sweeps` then runs whole sweeps in machine code.  Compiled lazily (Numba,
``cache=True``) on the first PGS solve, never at import.

Group table ``itab[g] = (kind, start, stop, lim_start, lim_stop)``: the group's rows are
``rows[start:stop]``; a friction group's limit rows (the contact normal, or the reaction rows)
are ``rows[lim_start:lim_stop]``.  ``ftab[g]`` holds ``(sign, 0)`` for normals and ratchets,
``(mu, N_known)`` for friction and ``(lb, ub)`` for bounded rows.
"""

import numpy as np
from .._jit import njit

UNCOND, NORMAL, SPEED, FRICTION_CONTACT, BOUNDED, FRICTION_KNOWN, FRICTION_REACTION = range(7)

# Group states returned by the kernel.
FREE = 0  # active normal / rolling friction / engaged bounded row
AT_BOUND = 1  # normal off / friction sliding / bounded at lb
AT_UPPER = 2  # bounded at ub
NO_FRICTION = 2  # contact friction whose disk has radius 0


@njit(cache=True)
def pgs_sweeps(A, rhs, pi_expand, itab, rows, ftab, tol, max_iters, sor):
    """Run SOR sweeps until the RMS errors fall below ``tol``.

    Returns ``(pi, state, iterations, error, converged)``.
    """
    m = A.shape[0]
    n_groups = itab.shape[0]
    pi = np.zeros(m)
    state = np.zeros(n_groups, dtype=np.int64)
    p = 0
    widest = 1
    for g in range(n_groups):
        p += itab[g, 2] - itab[g, 1]
        widest = max(widest, itab[g, 2] - itab[g, 1])
    res = np.zeros(widest)
    new = np.zeros(widest)
    prev = np.inf
    err = np.inf
    converged = False
    it = 0
    if p == 0:
        return pi, state, 0, 0.0, True
    for it in range(1, max_iters + 1):
        sum_enforced = 0.0
        sum_change = 0.0
        for g in range(n_groups):
            kind, a, b = itab[g, 0], itab[g, 1], itab[g, 2]
            k = b - a
            for j in range(k):  # Jacobi inside the group: residuals first
                r = rows[a + j]
                acc = rhs[r]
                for c in range(m):
                    acc -= A[r, c] * pi[c]
                res[j] = acc
                d = A[r, r]
                new[j] = pi[r] + (sor * acc / d if d > 0.0 else 0.0)
            st = FREE
            if kind == NORMAL or kind == SPEED:
                if ftab[g, 0] * new[0] > 0.0:
                    new[0] = 0.0
                    st = AT_BOUND
            elif kind == BOUNDED:
                if new[0] <= ftab[g, 0]:
                    new[0] = ftab[g, 0]
                    st = AT_BOUND
                elif new[0] >= ftab[g, 1]:
                    new[0] = ftab[g, 1]
                    st = AT_UPPER
            elif kind != UNCOND:  # friction: radial projection onto the disk
                mu = ftab[g, 0]
                la, lb = itab[g, 3], itab[g, 4]
                if kind == FRICTION_CONTACT:
                    n = rows[la]
                    radius = mu * abs(pi[n] + pi_expand[n])
                elif kind == FRICTION_KNOWN:
                    radius = mu * ftab[g, 1]
                else:
                    s2 = 0.0
                    for j in range(la, lb):
                        v = pi[rows[j]] + pi_expand[rows[j]]
                        s2 += v * v
                    radius = mu * np.sqrt(s2)
                norm = 0.0
                for j in range(k):
                    norm += new[j] * new[j]
                norm = np.sqrt(norm)
                if norm > radius:
                    scale = radius / norm
                    for j in range(k):
                        new[j] *= scale
                    st = AT_BOUND
                if radius == 0.0 and kind == FRICTION_CONTACT:
                    st = NO_FRICTION
            for j in range(k):
                r = rows[a + j]
                change = A[r, r] * (new[j] - pi[r])
                sum_change += change * change
                pi[r] = new[j]
                if st == FREE:
                    sum_enforced += res[j] * res[j]
            state[g] = st
        err = max(np.sqrt(sum_enforced / p), np.sqrt(sum_change / p))
        if err < tol:
            converged = True
            break
        if err > prev:
            sor = max(0.8 * sor, 0.1)
        prev = err
    return pi, state, it, err, converged
