"""``python -m sinews.bench scale [--json PATH] [--sizes 1000,10000]``

Contact problems at scale: time and peak memory for

* ``constraints``: a constraint set of N point contacts on a 100-body tree, bound once and solved
  by range-space constrained forward dynamics (``sinews.bench._scale_constraints``);
* ``fclib``: a sparse FCLib frictional-contact problem with N contacts solved by each FCLib
  solver without densifying ``W`` (``sinews.bench._scale_fclib``).

Method: every (group, size) runs in a fresh Python process, so that one case's memory is not
counted in another's.  Each case reports its own figures (wall time of binding and solving,
peak traced memory of the case); this driver adds the process's peak resident set size
(``ru_maxrss``, which includes the interpreter, NumPy, SciPy and the compiled kernels, about
150-250 MB before any case starts) as ``process_peak_mb``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

GROUPS = ("constraints", "fclib")

_CHILD = (
    "import json, resource, sys\n"
    "from sinews.bench import _scale_{group} as mod\n"
    "rows = mod.run(sizes=({n},))\n"
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0\n"
    "for r in rows:\n"
    "    r['group'] = '{group}'\n"
    "    r['process_peak_mb'] = peak\n"
    "sys.stdout.write('@@' + json.dumps(rows) + '\\n')\n"
)


def run_case(group: str, n: int, timeout: float = 3600.0) -> list[dict]:
    """Run one (group, size) in a fresh process; returns its rows."""
    if group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}, got {group!r}")
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be a positive number of contacts, got {n}")
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD.format(group=group, n=n)],
        capture_output=True, text=True, timeout=timeout,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    raise RuntimeError(
        f"scale case {group} with {n} contacts failed (exit {proc.returncode}):\n"
        + proc.stderr[-2000:]
    )


def run(sizes=(1000, 10000), groups=GROUPS) -> list[dict]:
    rows = []
    for group in groups:
        for n in sizes:
            rows.extend(run_case(group, n))
    return rows


def _fmt(x):
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sinews.bench scale", description=__doc__.split("\n\n")[1])
    ap.add_argument("--json", help="write the rows to this JSON file")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated contact counts")
    ap.add_argument("--groups", default=",".join(GROUPS), help="comma-separated: " + ",".join(GROUPS))
    args = ap.parse_args(argv)
    try:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    except ValueError:
        ap.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    groups = tuple(g for g in args.groups.split(",") if g)
    rows = []
    for group in groups:
        for n in sizes:
            print(f"[scale] {group}: {n} contacts ...", file=sys.stderr, flush=True)
            got = run_case(group, n)
            rows.extend(got)
            for r in got:
                print("  " + ", ".join(f"{k}={_fmt(v)}" for k, v in r.items() if k != "group"), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
