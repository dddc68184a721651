"""``python -m sinews.bench contact``: sinews' 3-D friction solvers against Pinocchio 4's.

Every 3-D problem of the Siconos collection shipped with sinews (:mod:`sinews.data`;
``$SINEWS_SICONOS_DIR`` overrides it): ``fclib`` (FCLib HDF5, read with the ``fclib`` extra;
global problems condensed to W = H^T M^-1 H) and ``fc3d`` (Siconos ``.dat``; the six 2-D
``FrictionContactProblem000xx`` files are skipped) is solved by

* sinews: :func:`~sinews.contact.fclib.solve_pgs`, :func:`~sinews.contact.fclib.solve_admm`
  and :func:`~sinews.contact.fclib.solve` (PGS then ADMM);
* Pinocchio 4.1: ``PGSConstraintSolver`` and ``ADMMConstraintSolver`` on a
  ``DelassusOperatorDense`` (components permuted from FCLib's [n, t1, t2] to Pinocchio's
  [t1, t2, n]; one ``PointContactConstraintModel`` per contact carries mu; ``solve_ncp=True``),

all with tolerance 1e-8 and the same iteration cap, from a zero initial guess.  Every answer is
judged by the same independent checker, :func:`sinews.contact.fclib.natural_map_error`
(||F_nat(r)|| / (1 + ||q||)); a run counts as converged when that error is <= 1e-6
(``--accept``), whatever the solver's own flag says.  Times are wall-clock medians of repeated
calls in this process (one call when a call takes longer than 0.1 s), including the operator and
result set-up on both sides and excluding file reading (calls under 2 ms are timed in batches of
back-to-back calls); ``ratio`` = sinews_us / peer_us, null unless both converged.

Pinocchio's dense PGS keeps an m×m matrix on the stack and crashes above ~341 contacts with the
default 8 MiB stack (see ``shared/reference/landscape.md`` §1.1); such runs are done in a child
process with an unlimited stack soft limit.

Options: ``--json PATH`` (rows as in the issue), ``--markdown PATH`` (the docs table), ``--quick`` (one small problem, few repeats),
``--problems SUBSTR ...`` (filter by name), ``--solvers pgs|admm|auto ...`` (the sinews solvers to
run, default all), ``--max-iter N`` (default 5000), ``--tol``,
``--accept``, ``--plot PATH`` (performance profile; the full run writes
``docs/img/contact-performance-profile.png`` when that folder exists), ``--no-plot``.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sinews.data import siconos_dir

SINEWS_SOLVERS = ("pgs", "admm", "auto")
PEERS = ("pin-pgs", "pin-admm")
QUICK_PROBLEM = "Rover4396"
DEFAULT_PLOT = Path("docs/img/contact-performance-profile.png")


# --------------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------------


def problem_paths(root=None):
    root = Path(root) if root is not None else siconos_dir()
    return sorted((root / "fclib").glob("*.hdf5")) + sorted((root / "fc3d").glob("*.dat"))


def load_problems(filters=(), root=None):
    from sinews.contact.fclib import load_problem

    out = []
    skipped = []
    for path in problem_paths(root):
        if filters and not any(f in path.name for f in filters):
            continue
        try:
            p = load_problem(path)
        except ModuleNotFoundError as exc:  # FCLib HDF5 files need h5py (the ``fclib`` extra)
            if exc.name != "h5py":
                raise
            skipped.append(path.name)
            continue
        if p.dimension != 3:
            continue
        out.append(p)
    if skipped:
        print(f"skipped {len(skipped)} FCLib HDF5 problems: h5py is not installed "
              "(pip install 'sinews[fclib]')", file=sys.stderr)
    return out


# --------------------------------------------------------------------------------------------
# Timing helpers
# --------------------------------------------------------------------------------------------


def _timed(fn, repeats, budget):
    """Median wall time of ``fn`` in seconds, and its last output.

    One call when a call takes over 0.1 s; otherwise up to ``repeats`` samples within ``budget``
    seconds, each sample averaging enough back-to-back calls to last about 2 ms (so that
    microsecond-scale calls are not dominated by timer and scheduling noise).
    """
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    if first >= 0.1:
        return out, first
    batch = max(1, int(2e-3 / max(first, 1e-7)))
    samples = []
    spent = first
    while len(samples) < repeats and spent < budget:
        t0 = time.perf_counter()
        for _ in range(batch):
            out = fn()
        dt = time.perf_counter() - t0
        spent += dt
        samples.append(dt / batch)
    return out, float(np.median(samples)) if samples else first


# --------------------------------------------------------------------------------------------
# sinews side
# --------------------------------------------------------------------------------------------


def run_sinews(problem, solver, tol, max_iter, repeats, budget):
    from sinews.contact import fclib

    fn = {"pgs": fclib.solve_pgs, "admm": fclib.solve_admm, "auto": fclib.solve}[solver]
    W = problem.dense_W()
    res, sec = _timed(lambda: fn(problem, tol=tol, max_iter=max_iter, W=W), repeats, budget)
    return res.r, res.iterations, sec


# --------------------------------------------------------------------------------------------
# Pinocchio side
# --------------------------------------------------------------------------------------------


def _pin_permutation(nc):
    """perm[k] = FCLib index of Pinocchio component k ([t1, t2, n] per contact)."""
    perm = np.empty(3 * nc, dtype=np.int64)
    for a in range(nc):
        perm[3 * a : 3 * a + 3] = (3 * a + 1, 3 * a + 2, 3 * a)
    return perm


def _pin_solve_arrays(kind, G, g, mu, tol, max_iter, repeats, budget):
    """Solve with Pinocchio's PGS/ADMM given G, g in Pinocchio order; return (lam, iters, sec)."""
    import pinocchio as pin

    model = pin.Model()
    jid = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "body")
    model.appendBodyToJoint(jid, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    cms = pin.StdVec_ConstraintModel()
    cds = pin.StdVec_ConstraintData()
    for m_a in mu:
        pc = pin.PointContactConstraintModel(model, jid, pin.SE3.Identity())
        pc.setFriction(float(m_a))
        cm = pin.ConstraintModel(pc)
        cms.append(cm)
        cds.append(cm.createData())
    if kind == "pin-pgs":
        Solver, Settings, Result = pin.PGSConstraintSolver, pin.PGSSolverSettings, pin.PGSSolverResult
    else:
        Solver, Settings, Result = pin.ADMMConstraintSolver, pin.ADMMSolverSettings, pin.ADMMSolverResult
    settings = Settings()
    settings.max_iterations = int(max_iter)
    for name in ("absolute_complementarity_tol", "absolute_feasibility_tol",
                 "relative_complementarity_tol", "relative_feasibility_tol"):
        setattr(settings, name, float(tol))
    settings.solve_ncp = True
    n = g.shape[0]

    def once():
        # a fresh operator every call: ADMM modifies the Delassus operator it is given
        delassus = pin.DelassusOperatorDense(G)
        result = Result()
        Solver(n).solve(delassus, g, cms, cds, settings, result)
        return np.array(result.retrieveConstraintImpulses()).ravel(), int(result.iterations)

    (lam, iters), sec = _timed(once, repeats, budget)
    return lam, iters, sec


def _needs_big_stack(kind, m):
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    if kind != "pin-pgs" or soft == resource.RLIM_INFINITY:
        return False
    return 8 * m * m > 0.9 * soft


def _raise_stack():
    _, hard = resource.getrlimit(resource.RLIMIT_STACK)
    resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))


def run_peer(problem, kind, tol, max_iter, repeats, budget):
    """Pinocchio solve of the FCLib problem; returns (r in FCLib order, iterations, seconds)."""
    perm = _pin_permutation(problem.contacts)
    W = problem.dense_W()
    G = np.ascontiguousarray(W[np.ix_(perm, perm)])
    g = np.ascontiguousarray(problem.q[perm])
    args = (kind, G, g, problem.mu, tol, max_iter, repeats, budget)
    if _needs_big_stack(kind, problem.size):
        lam, iters, sec = _in_child(args)
    else:
        lam, iters, sec = _pin_solve_arrays(*args)
    if lam is None or lam.shape[0] != problem.size or not np.all(np.isfinite(lam)):
        return None, iters, sec
    r = np.empty(problem.size)
    r[perm] = lam
    return r, iters, sec


def _in_child(args):
    """Run :func:`_pin_solve_arrays` in a child process with an unlimited stack soft limit."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.pkl"
        dst = Path(tmp) / "out.pkl"
        src.write_bytes(pickle.dumps(args))
        code = ("import pickle,sys; from sinews.bench.contact import _pin_solve_arrays as f; "
                "a=pickle.load(open(sys.argv[1],'rb')); pickle.dump(f(*a), open(sys.argv[2],'wb'))")
        proc = subprocess.run([sys.executable, "-c", code, str(src), str(dst)],
                              preexec_fn=_raise_stack, capture_output=True, text=True)
        if proc.returncode != 0 or not dst.exists():
            return None, -1, math.nan
        return pickle.loads(dst.read_bytes())


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def _warm_up(solvers=SINEWS_SOLVERS):
    """Compile (or load from cache) the Numba kernels of ``solvers`` on a tiny problem before
    timing ("auto" uses both PGS and ADMM)."""
    from sinews.contact import fclib

    p = fclib.FrictionContactProblem(np.eye(3) * 2.0, np.array([-1.0, 0.5, 0.0]), [0.5])
    if {"pgs", "auto"} & set(solvers):
        fclib.solve_pgs(p)
    if {"admm", "auto"} & set(solvers):
        fclib.solve_admm(p)


def benchmark(problems, *, tol=1e-8, max_iter=5000, accept=1e-6, repeats=7, budget=0.5, log=print,
              solvers=SINEWS_SOLVERS):
    """Run every sinews solver of ``solvers`` (the others are reported as not run, like a
    missing peer) and both Pinocchio solvers on every problem; one dict per (problem, solver)."""
    from sinews.contact.fclib import natural_map_error

    _warm_up(solvers)
    runs = []  # one dict per (problem, solver)
    for p in problems:
        for who in SINEWS_SOLVERS + PEERS:
            if who in SINEWS_SOLVERS and who not in solvers:
                r, iters, sec = None, -1, math.nan
            elif who in SINEWS_SOLVERS:
                r, iters, sec = run_sinews(p, who, tol, max_iter, repeats, budget)
            elif _pin_available():
                r, iters, sec = run_peer(p, who, tol, max_iter, repeats, budget)
            else:  # peer not installed: reported as not solved
                r, iters, sec = None, -1, math.nan
            err = natural_map_error(p, r) if r is not None else math.nan
            ok = bool(r is not None and err <= accept)
            runs.append({"problem": p.name, "contacts": p.contacts, "who": who, "error": err,
                         "iterations": iters, "us": sec * 1e6, "converged": ok})
        log(_problem_line(p, [x for x in runs if x["problem"] == p.name]))
    return runs


def rows_from_runs(runs):
    """The JSON rows: every sinews solver against every peer on every problem."""
    rows = []
    by = {(x["problem"], x["who"]): x for x in runs}
    problems = list(dict.fromkeys(x["problem"] for x in runs))
    for name in problems:
        for s in SINEWS_SOLVERS:
            a = by[(name, s)]
            for peer in PEERS:
                b = by[(name, peer)]
                ratio = a["us"] / b["us"] if a["converged"] and b["converged"] else None
                rows.append({
                    "problem": name, "contacts": a["contacts"], "solver": s,
                    "sinews_error": _num(a["error"]), "sinews_iterations": a["iterations"],
                    "sinews_us": _num(a["us"]), "sinews_converged": a["converged"],
                    "peer": peer, "peer_error": _num(b["error"]), "peer_iterations": b["iterations"],
                    "peer_us": _num(b["us"]), "peer_converged": b["converged"],
                    "ratio": _num(ratio),
                })
    return rows


def _num(x):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return float(x)


def _cell(x):
    mark = "" if x["converged"] else "✗"
    return f"{x['error']:8.1e}{mark:1s} {x['iterations']:5d} {_fmt_us(x['us'])}"


def _fmt_us(us):
    if not math.isfinite(us):
        return "      -"
    if us >= 1e6:
        return f"{us / 1e6:6.2f}s"
    if us >= 1e3:
        return f"{us / 1e3:5.1f}ms"
    return f"{us:5.0f}us"


HEADER = (f"{'problem':38s} {'nc':>4s} | " + " | ".join(f"{w:^23s}" for w in SINEWS_SOLVERS + PEERS)
          + " | best sinews/best pin")


def _problem_line(p, runs):
    by = {x["who"]: x for x in runs}
    cells = " | ".join(_cell(by[w]) for w in SINEWS_SOLVERS + PEERS)
    ours = [by[w]["us"] for w in SINEWS_SOLVERS if by[w]["converged"]]
    theirs = [by[w]["us"] for w in PEERS if by[w]["converged"]]
    ratio = f"{min(ours) / min(theirs):6.2f}" if ours and theirs else "     -"
    return f"{p.name[:38]:38s} {p.contacts:4d} | {cells} | {ratio}"


def performance_profile(runs, path):
    """Dolan-Moré performance profile of time-to-accepted-solution (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = list(dict.fromkeys(x["problem"] for x in runs))
    who = SINEWS_SOLVERS + PEERS
    T = np.full((len(problems), len(who)), np.inf)
    for x in runs:
        if x["converged"]:
            T[problems.index(x["problem"]), who.index(x["who"])] = x["us"]
    best = T.min(axis=1)
    solved = np.isfinite(best)
    ratios = T[solved] / best[solved, None]
    finite = ratios[np.isfinite(ratios)]
    tmax = max(2.0, float(finite.max()) * 1.5) if finite.size else 2.0
    taus = np.logspace(0, np.log10(tmax), 400)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"pgs": "-", "admm": "-", "auto": "-", "pin-pgs": "--", "pin-admm": "--"}
    for k, w in enumerate(who):
        frac = [(ratios[:, k] <= t).sum() / len(problems) for t in taus]
        label = f"sinews {w}" if w in SINEWS_SOLVERS else f"Pinocchio {w[4:].upper()}"
        ax.step(taus, frac, styles[w], where="post", label=label, lw=2)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("τ (time / fastest time on the problem) [1]")
    ax.set_ylabel("fraction of problems solved within τ [1]")
    ax.set_title(f"FCLib/Siconos 3-D problems ({len(problems)}): error ≤ 1e-6 by the natural map")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m sinews.bench contact", description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON to this path")
    ap.add_argument("--quick", action="store_true", help=f"only {QUICK_PROBLEM}, few repeats")
    ap.add_argument("--problems", nargs="*", default=None, help="substrings of file names to run")
    ap.add_argument("--solvers", nargs="+", choices=SINEWS_SOLVERS, default=list(SINEWS_SOLVERS),
                    help="the sinews solvers to run (default: all; the others are reported as not run)")
    ap.add_argument("--max-iter", type=int, default=5000)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--accept", type=float, default=1e-6)
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--markdown", type=Path, default=None, help="write the table as Markdown")
    args = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    filters = args.problems if args.problems else ((QUICK_PROBLEM,) if args.quick else ())
    problems = load_problems(filters)
    if not problems:
        root = siconos_dir()
        have = [p.name for p in problem_paths(root)]
        where = (f"{len(have)} problem files in {root}" if have else
                 f"no problem files in {root} (set SINEWS_SICONOS_DIR to a folder with fclib/ and fc3d/)")
        print(f"no problems matched {list(filters) or 'any'}: {where}", file=sys.stderr)
        return 1
    repeats, budget = (3, 0.05) if args.quick else (7, 0.5)
    print(f"sinews vs Pinocchio {_pin_version()} frictional contact: tol {args.tol:g}, "
          f"cap {args.max_iter} iterations, accepted if ||F_nat||/(1+||q||) <= {args.accept:g}")
    print("cells: error (✗ = not accepted), iterations, time")
    print(HEADER)
    runs = benchmark(problems, tol=args.tol, max_iter=args.max_iter, accept=args.accept,
                     repeats=repeats, budget=budget, solvers=tuple(args.solvers))
    rows = rows_from_runs(runs)
    _summary(runs)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows}, indent=1))
        print(f"wrote {args.json}")
    if args.markdown is not None:
        args.markdown.write_text(markdown_table(rows))
        print(f"wrote {args.markdown}")
    plot = args.plot
    if plot is None and not args.quick and not args.no_plot and DEFAULT_PLOT.parent.is_dir():
        plot = DEFAULT_PLOT
    if plot is not None and not args.no_plot:
        print(f"wrote {performance_profile(runs, plot)}")
    return 0


def _summary(runs):
    problems = list(dict.fromkeys(x["problem"] for x in runs))
    by = {(x["problem"], x["who"]): x for x in runs}
    for w in SINEWS_SOLVERS + PEERS:
        n = sum(by[(p, w)]["converged"] for p in problems)
        print(f"  {w:9s} accepted on {n}/{len(problems)}")
    wins = both = 0
    for p in problems:
        ours = [by[(p, w)]["us"] for w in SINEWS_SOLVERS if by[(p, w)]["converged"]]
        theirs = [by[(p, w)]["us"] for w in PEERS if by[(p, w)]["converged"]]
        if ours and theirs:
            both += 1
            wins += min(ours) <= min(theirs)
    print(f"  fastest sinews solver at least as fast as the fastest Pinocchio solver on {wins}/{both} "
          f"problems both solve")


def _pin_available():
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return False
    return True


def markdown_table(rows):
    """The JSON rows as the Markdown table of ``docs/frictional-contact.md``."""
    def fmt_us(us):
        if us >= 1e6:
            return f"{us / 1e6:.2f} s"
        if us >= 1e3:
            return f"{us / 1e3:.1f} ms"
        return f"{us:.0f} µs"

    def cell(err, it, us, ok):
        if err is None or us is None:
            return "failed"
        return f"{err:.1e}{'' if ok else ' ✗'} / {it} / {fmt_us(us)}"

    out = ["| problem | contacts | sinews PGS | sinews ADMM | sinews auto | Pinocchio PGS | "
           "Pinocchio ADMM | best sinews / best Pinocchio |",
           "|---|---:|---|---|---|---|---|---:|"]
    for name in dict.fromkeys(r["problem"] for r in rows):
        rs = [r for r in rows if r["problem"] == name]
        ours = {r["solver"]: r for r in rs}
        peers = {r["peer"]: r for r in rs}
        cells = [cell(ours[k]["sinews_error"], ours[k]["sinews_iterations"], ours[k]["sinews_us"],
                      ours[k]["sinews_converged"]) for k in SINEWS_SOLVERS]
        cells += [cell(peers[k]["peer_error"], peers[k]["peer_iterations"], peers[k]["peer_us"],
                       peers[k]["peer_converged"]) for k in PEERS]
        t_ours = [ours[k]["sinews_us"] for k in SINEWS_SOLVERS if ours[k]["sinews_converged"]]
        t_peer = [peers[k]["peer_us"] for k in PEERS if peers[k]["peer_converged"]]
        ratio = "–"
        if t_ours and t_peer:
            ratio = f"{min(t_ours) / min(t_peer):.2f}"
            if min(t_ours) > min(t_peer):
                ratio = f"**{ratio}**"
        out.append(f"| {name} | {rs[0]['contacts']} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(out) + "\n"


def _pin_version():
    try:
        import pinocchio

        return pinocchio.__version__
    except Exception:  # pragma: no cover - peer missing
        return "(not installed)"


if __name__ == "__main__":
    sys.exit(main())
