"""Scale benchmark of the FCLib solvers on large sparse problems (1,000 and 10,000 contacts).

``run(sizes=(1000, 10000))`` builds, for each size, a random but physically structured local
frictional contact problem with that many contacts and solves it with
:func:`~sinews.contact.fclib.solve_pgs`, :func:`~sinews.contact.fclib.solve_admm` and
:func:`~sinews.contact.fclib.solve`, recording time, peak memory, the natural-map error (by
:func:`~sinews.contact.fclib.natural_map_error`) and the verdict.

The problem (:func:`make_problem`) is a "multibody stack": rigid bodies on a jittered cubic
lattice (unit spacing, masses 0.5-2, inertia of a cube of side 0.9), in contact with their lattice
neighbours and, for the bottom layer, with the ground.  Each contact has a frame [n, t1, t2]
whose normal is the lattice direction tilted by up to ~0.2 rad, and a Jacobian
G_a = [R^T, -R^T [p - c]x] for each body it touches (relative velocity of the second body with
respect to the first).  Then

    W = J M^-1 J^T + epsilon diag(J M^-1 J^T),      q = J v_free,

with v_free the velocity each body picks up from gravity in one step (h = 1e-2) plus a small
random drift.  ``epsilon`` = 1e-2 is a contact compliance (soft contacts) that makes W positive
definite, so the problem is well posed (a solution exists; Klarbring & Pang 1998), as in the
regularised formulations of MuJoCo and Drake's SAP.  Bodies have about six contacts each, so W
has ~100 non-zeros per contact row block: ~1M for 10,000 contacts, where a dense W would need
7.2 GB.

Memory is measured with :mod:`tracemalloc` (NumPy and SciPy allocations made during the solve;
the problem itself excluded), time with ``time.perf_counter`` (one call, after a warm-up on a
small problem so that Numba compilation is not counted).
``python -m sinews.bench._scale_fclib [SIZES...]`` prints the rows as JSON.
"""

from __future__ import annotations

import json
import math
import sys
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp

SOLVERS = ("pgs", "admm", "auto")


def _frames(normals):
    """Orthonormal [n, t1, t2] rows for each unit normal."""
    n = normals / np.linalg.norm(normals, axis=1)[:, None]
    helper = np.where(np.abs(n[:, [0]]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    t1 = np.cross(n, helper)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(n, t1)
    return np.stack([n, t1, t2], axis=1)  # (k, 3, 3), rows n, t1, t2


def _skew_rows(R, d):
    """R @ (-[d]x) for stacked 3x3 frames R and lever arms d: maps omega to R (omega x d)."""
    out = np.empty_like(R)
    # omega x d = -d x omega = -[d]x omega
    dx, dy, dz = d[:, 0], d[:, 1], d[:, 2]
    for row in range(3):
        a, b, c = R[:, row, 0], R[:, row, 1], R[:, row, 2]
        # row . (-[d]x)  with  [d]x = [[0, -dz, dy], [dz, 0, -dx], [-dy, dx, 0]]
        out[:, row, 0] = -(b * dz - c * dy)
        out[:, row, 1] = -(-a * dz + c * dx)
        out[:, row, 2] = -(a * dy - b * dx)
    return out


def make_problem(contacts, seed=0, *, compliance=1e-2, name=None):
    """A sparse, well-posed FrictionContactProblem with exactly ``contacts`` contacts."""
    from sinews.contact.fclib import FrictionContactProblem

    contacts = int(contacts)
    if contacts < 1:
        raise ValueError(f"contacts must be >= 1, got {contacts}")
    rng = np.random.default_rng(seed)
    side = max(2, math.ceil((contacts / 2.6) ** (1.0 / 3.0)))
    while True:  # lattice large enough to offer the requested number of contacts
        idx = np.arange(side**3).reshape(side, side, side)
        pairs = [np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1),
                 np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                 np.stack([idx[:, :, :-1].ravel(), idx[:, :, 1:].ravel()], 1)]
        ground = idx[:, :, 0].ravel()
        if sum(len(p) for p in pairs) + len(ground) >= contacts:
            break
        side += 1
    nb = side**3
    centres = np.stack(np.unravel_index(np.arange(nb), (side, side, side)), 1).astype(float)
    centres += rng.uniform(-0.02, 0.02, size=centres.shape)
    axes = np.concatenate([np.full(len(p), k) for k, p in enumerate(pairs)])
    allpairs = np.concatenate(pairs)
    # candidate contacts: body pairs (a, b) and ground contacts (a, -1)
    cand = np.concatenate([allpairs, np.stack([ground, np.full(len(ground), -1)], 1)])
    cand_axis = np.concatenate([axes, np.full(len(ground), 2)])
    keep = np.sort(rng.choice(len(cand), size=contacts, replace=False))
    cand, cand_axis = cand[keep], cand_axis[keep]
    a, b = cand[:, 0], cand[:, 1]
    is_ground = b < 0
    normals = np.eye(3)[cand_axis] + rng.normal(scale=0.1, size=(contacts, 3))
    R = _frames(normals)
    pa = centres[a]
    pb = np.where(is_ground[:, None], pa - [0.0, 0.0, 1.0], centres[np.maximum(b, 0)])
    point = 0.5 * (pa + pb)
    # relative velocity of the upper/second body w.r.t. the first: u = R (v_2 + w_2 x d_2)
    #   - R (v_1 + w_1 x d_1); the ground is body "1" (fixed) for ground contacts
    rows, cols, vals = [], [], []
    base_rows = 3 * np.arange(contacts)

    def add(body, sign, mask):
        d = point[mask] - centres[body[mask]]
        blocks = np.concatenate([R[mask], _skew_rows(R[mask], d)], axis=2) * sign  # (k, 3, 6)
        r0 = base_rows[mask]
        c0 = 6 * body[mask]
        rr = (r0[:, None, None] + np.arange(3)[None, :, None]) + np.zeros((1, 1, 6), int)
        cc = (c0[:, None, None] + np.arange(6)[None, None, :]) + np.zeros((1, 3, 1), int)
        rows.append(rr.ravel())
        cols.append(cc.ravel())
        vals.append(blocks.ravel())

    add(b, 1.0, ~is_ground)  # second body
    add(a, -1.0, ~is_ground)  # first body
    add(a, 1.0, is_ground)  # ground contact: the body moves against the fixed ground
    J = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(3 * contacts, 6 * nb))
    mass = rng.uniform(0.5, 2.0, size=nb)
    inertia = mass * 0.9**2 / 6.0
    minv = np.stack([1 / mass] * 3 + [1 / inertia] * 3, 1).ravel()  # [v, omega] per body
    W = sp.csr_matrix(J @ sp.diags(minv) @ J.T)
    W = W + sp.diags(compliance * W.diagonal())
    h = 1e-2
    v = np.zeros((nb, 6))
    v[:, 2] = -9.81 * h
    v += rng.normal(scale=1e-3, size=v.shape)
    q = J @ v.ravel()
    mu = rng.uniform(0.1, 0.8, size=contacts)
    return FrictionContactProblem(sp.csr_matrix(W), q, mu, 3,
                                  name or f"stack-{contacts}", "local")


def _warm_up():
    from sinews.contact import fclib

    small = make_problem(40, seed=1)
    for fn in (fclib.solve_pgs, fclib.solve_admm, fclib.solve):
        fn(small, max_iter=5, W=small.W)  # a sparse W: compile (or load) the CSR kernels


def solve_once(problem, solver, tol=1e-8, max_iter=5000):
    """One timed, memory-traced solve; returns a row (see :func:`run`)."""
    from sinews.contact import fclib

    fn = {"pgs": fclib.solve_pgs, "admm": fclib.solve_admm, "auto": fclib.solve}[solver]
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    res = fn(problem, tol=tol, max_iter=max_iter)
    sec = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"case": problem.name, "contacts": problem.contacts, "solver": solver,
            "solve_s": sec, "peak_mb": peak / 2**20,
            "error": fclib.natural_map_error(problem, res.r), "converged": bool(res.converged),
            "iterations": int(res.iterations), "path": res.info.get("path"), "nnz": problem.W.nnz}


def run(sizes=(1000, 10000), *, solvers=SOLVERS, tol=1e-8, max_iter=5000, seed=0, log=None):
    """Solve one generated problem per size with each solver; one dict per (size, solver) with
    keys case, contacts, solver, solve_s, peak_mb, error, converged, iterations (plus path and
    nnz)."""
    _warm_up()
    rows = []
    for n in sizes:
        problem = make_problem(n, seed=seed)
        for solver in solvers:
            row = solve_once(problem, solver, tol, max_iter)
            rows.append(row)
            if log is not None:
                log(row)
    return rows


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    sizes = tuple(int(a) for a in argv) or (1000, 10000)
    rows = run(sizes, log=lambda r: print(json.dumps(r), flush=True))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
