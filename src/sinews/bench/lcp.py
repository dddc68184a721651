"""``python -m sinews.bench lcp``: sinews' Lemke vs pydrake's MobyLcpSolver.

Problems: Drake's table, the Siconos LCP files and random PSD LCPs.  Run
``python -m sinews.bench lcp [--repeat N] [--json PATH]``.  Needs ``pydrake``
(``pip install drake``; not a sinews dependency).  pydrake reaches Moby only through
``MathematicalProgram``, where it always runs ``SolveLcpLemkeRegularized`` with Drake's defaults
(min_exp, step_exp, max_exp) = (-20, 1, 1); sinews is run with the same schedule for the
comparison.  Timings are medians of ``repeat`` calls in one process (pydrake:
``solver.Solve(prog)`` on a prebuilt program).  They are reported, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from sinews.data import siconos_dir
from sinews.lcp import check_lcp, read_siconos_lcp, solve_lemke, solve_lemke_regularized

__all__ = ["main"]


def drake_table():
    M1 = np.eye(16) + 2.0 * np.triu(np.ones((16, 16)), 1)
    M4 = np.array([[0, 0, 10, 20], [0, 0, 30, 15], [10, 20, 0, 0], [30, 15, 0, 0]], float)
    M6 = np.array([[11, 0, 10, -1], [0, 11, 10, -1], [10, 10, 21, -1], [1, 1, 1, 0]], float)
    yield "drake trivial", np.diag(np.arange(1.0, 10.0)), -np.ones(9)
    yield "drake problem1", M1, -np.ones(16)
    yield "drake problem2", np.ones((2, 2)), -np.ones(2)
    M3 = np.array([[0.0, -1, 2], [2, 0, -2], [-1, 1, 0]])
    yield "drake problem3", M3, np.array([-3.0, 6, -1])
    yield "drake problem4", M4, -np.ones(4)
    for l in (1, 16, 100):
        yield f"drake problem6 l={l}", M6, np.array([50.0, 50, l, -6])
    yield "kostreva cycling", np.array([[1.0, 2, 0], [0, 1, 2], [2, 0, 1]]), -np.ones(3)


def siconos_problems():
    for path in sorted((siconos_dir() / "lcp").glob("*.dat")):
        p = read_siconos_lcp(path)
        yield path.name, p.M, p.q


def random_psd_problems(sizes=(10, 20, 50, 100, 200), seed=0):
    """Random PSD LCPs ``M = B B^T`` (B with n/2 columns, so M is singular PSD) plus a small
    multiple of the identity, and standard normal ``q``: feasible, solvable by Lemke."""
    rng = np.random.default_rng(seed)
    for n in sizes:
        B = rng.normal(size=(n, max(1, n // 2)))
        M = B @ B.T / n + 1e-3 * np.eye(n)
        yield f"random psd n={n}", M, rng.normal(size=n)


def _median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    try:
        from pydrake.solvers import MathematicalProgram, MobyLcpSolver
    except ImportError:
        print("pydrake is not installed (pip install drake); nothing to compare against.")
        return 1
    solver = MobyLcpSolver()
    print("| problem | n | drake ok | sinews (same schedule) ok | sinews converged | max|dz| | "
          "drake ms | sinews ms | ratio | sinews plain Lemke ms |")
    print("|---|---:|---|---|---|---:|---:|---:|---:|---:|")
    rows = []
    for name, M, q in list(drake_table()) + list(siconos_problems()) + list(random_psd_problems()):
        n = len(q)
        prog = MathematicalProgram()
        z = prog.NewContinuousVariables(n, "z")
        prog.AddLinearComplementarityConstraint(M, q, z)
        result = solver.Solve(prog, None, None)
        z_drake = result.GetSolution(z)
        drake_ok = bool(check_lcp(M, q, z_drake).ok)
        ours = solve_lemke_regularized(M, q, min_exp=-20, step_exp=1, max_exp=1)
        ours_ok = bool(check_lcp(M, q, ours.z).ok)
        dz = float(np.max(np.abs(ours.z - z_drake))) if n else 0.0
        t_drake = _median_time(lambda: solver.Solve(prog, None, None), args.repeat)
        t_ours = _median_time(
            lambda: solve_lemke_regularized(M, q, min_exp=-20, step_exp=1, max_exp=1),
            args.repeat)
        t_plain = _median_time(lambda: solve_lemke(M, q), args.repeat)
        print(f"| {name} | {n} | {result.is_success()} (checked {drake_ok}) | {ours_ok} | "
              f"{ours.converged} | {dz:.2g} | {t_drake * 1e3:.3f} | {t_ours * 1e3:.3f} | "
              f"{t_ours / t_drake:.2f} | {t_plain * 1e3:.3f} |", flush=True)
        rows.append({
            "problem": name, "n": n, "algorithm": "lemke_regularized", "sinews_us": t_ours * 1e6,
            "sinews_converged": bool(ours.converged), "peer": "drake MobyLcpSolver",
            "peer_us": t_drake * 1e6, "peer_ok": drake_ok,
            "ratio": t_ours / t_drake if (ours_ok and drake_ok) else None,
        })
    if args.json:
        import json

        try:
            with open(args.json, "w") as fh:
                json.dump({"rows": rows}, fh, indent=2)
        except OSError as exc:
            parser.error(f"--json: cannot write {args.json}: {exc.strerror or exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
