"""Scale benchmark of constraint sets: thousands of point contacts on a 100-body tree.

Problem (one per ``contacts`` size): :func:`sinews.sample_models.random_tree` with 100 bodies
and revolute joints (nv = 100, seed 0; ``joint_type="Spherical"``: nv = 300), ``contacts`` contact points spread evenly over the
bodies (random points within 0.3 m of each body origin), each a 3-D contact (three rows along
the world axes: ``3 * contacts`` rows), at a random configuration with ``v = 0`` and random
``tau``.  Such a set is massively redundant (``rank(G) <= nv``): the answer is the flagged
minimum-norm least-squares one.

For each size, :func:`run` measures, in this process:

* ``build_s``: adding the rows (``ConstraintSet.add_contact_constraint``);
* ``bind_s``: ``ConstraintSet.bind`` (must be linear in the number of contacts);
* ``solve_s``: one :func:`sinews.constraints.forward_dynamics_constraints` call
  (``method``, default ``range_space_sparse``) after warm-up calls on a 4-contact set and on
  a smaller set of the same kind (so that loading the compiled kernels is not counted);
* ``peak_mb``: the peak memory traced by :mod:`tracemalloc` during bind + solve (NumPy and
  SciPy arrays; LAPACK's internal workspaces are not traced), and ``rss_mb``: the process's
  peak resident set size so far (``resource.getrusage``, a bound on the real peak);

plus diagnostics: ``rows``, ``nv``, ``rank``, ``least_squares``, ``converged``,
``constraint_residual``, ``method`` and ``path`` (``"thin"`` when the set is solved by row
compression, see ``docs/constraints.md``, else ``"dense"``).

Run ``python -c "from sinews.bench._scale_constraints import main; main()"`` (sizes as
arguments, default 1000 10000).
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc

import numpy as np

__all__ = ["run", "build_problem", "main"]

N_BODIES = 100


def build_problem(contacts: int, seed: int = 0, joint_types=("Revolute",)):
    """``(model, add_rows, q, v, tau)``: ``add_rows(cs)`` adds the contact rows to a new set."""
    from sinews.configuration import random_configuration
    from sinews.sample_models import random_tree

    rng = np.random.default_rng(seed)
    model = random_tree(N_BODIES, rng, joint_types=list(joint_types))
    bodies = 1 + np.arange(contacts) % N_BODIES
    points = rng.uniform(-0.3, 0.3, (contacts, 3))

    def add_rows(cs, count=None):
        for b, p in zip(bodies[:count].tolist(), points[:count]):
            for n in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)):
                cs.add_contact_constraint(b, p, n)
        return cs

    q = random_configuration(model, rng)
    v = np.zeros(model.nv)
    tau = rng.standard_normal(model.nv)
    return model, add_rows, q, v, tau


def _rss_mb() -> float:
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux
    except Exception:  # pragma: no cover - non-POSIX
        return float("nan")


def _warm_up(model, add_rows, q, v, tau, method):
    """Load the kernels of both paths: a 4-contact set (compiled kernel) and a copy of the first
    rows of the problem large enough for the thin path."""
    from sinews.constraints import ConstraintSet, forward_dynamics_constraints
    from sinews.constraints._thin import THIN_MIN_ROWS

    cs = ConstraintSet()
    for b in (1, 2, 3, 4):
        cs.add_contact_constraint(b, (0.1, 0.0, 0.0), (0.0, 0.0, 1.0))
    forward_dynamics_constraints(model, q, v, tau, cs, method=method)
    small = ConstraintSet()
    add_rows(small, max(model.nv, THIN_MIN_ROWS) // 3 + 1)
    forward_dynamics_constraints(model, q, v, tau, small, method=method)


def run_one(contacts: int, method: str = "range_space_sparse", seed: int = 0, joint_type: str = "Revolute") -> dict:
    """One size: see the module docstring for the keys."""
    from sinews.constraints import ConstraintSet, forward_dynamics_constraints
    from sinews.constraints._thin import uses_thin_path

    model, add_rows, q, v, tau = build_problem(contacts, seed, (joint_type,))
    _warm_up(model, add_rows, q, v, tau, method)
    t0 = time.perf_counter()
    cs = add_rows(ConstraintSet())
    build_s = time.perf_counter() - t0
    gc.collect()
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        cs.bind(model)
        bind_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = forward_dynamics_constraints(model, q, v, tau, cs, method=method)
        solve_s = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {
        "case": f"random_tree{N_BODIES}-{joint_type.lower()}/{method}",
        "contacts": int(contacts),
        "rows": int(cs.size),
        "nv": int(model.nv),
        "method": method,
        "path": "thin" if uses_thin_path(cs) else "dense",
        "build_s": round(build_s, 4),
        "bind_s": round(bind_s, 4),
        "solve_s": round(solve_s, 4),
        "peak_mb": round(peak / 2**20, 1),
        "rss_mb": round(_rss_mb(), 1),
        "rank": int(res.rank),
        "least_squares": bool(res.least_squares),
        "converged": bool(res.converged),
        "constraint_residual": float(res.constraint_residual),
    }


def run(sizes=(1000, 10000), method: str = "range_space_sparse", seed: int = 0, joint_type: str = "Revolute") -> list[dict]:
    """One dict per size (keys: ``case``, ``contacts``, ``bind_s``, ``solve_s``, ``peak_mb`` and
    the diagnostics of the module docstring).  ``joint_type``: ``"Revolute"`` (nv = 100) or
    ``"Spherical"`` (nv = 300)."""
    return [run_one(int(n), method, seed, joint_type) for n in sizes]


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    sizes = [int(a) for a in argv] or [1000, 10000]
    for row in run(sizes):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
