"""Where does a cold start spend its time?  Per Numba dispatcher: compile time and signatures.

Runs a command in this process with a listener on Numba's ``numba:compile`` event and prints,
per kernel, the number of signatures compiled and the compile time (inclusive, and exclusive of
the kernels it compiled while being typed).  Cache hits are not compile events, so to see the
whole cold cost give it an empty cache::

    NUMBA_CACHE_DIR=$(mktemp -d) python tools/compile_profile.py -- sinews demo quadruped --quick --out /tmp/x
    NUMBA_CACHE_DIR=$(mktemp -d) python tools/compile_profile.py --json prof.json -- python -c "import sinews; sinews.warmup(processes=1)"

After ``--`` comes either ``sinews ARGS`` (the CLI, run in this process), ``python -c CODE`` or
``python SCRIPT ARGS``.  ``--signatures`` lists every signature of the kernels compiled more
than once (duplicated specialisations: C vs A layout, int32 vs int64, readonly arrays...).
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
import time
from collections import defaultdict


class CompileProfile:
    """Listener on ``numba:compile``: inclusive and exclusive time per dispatcher and signature."""

    def __init__(self):
        self.stack = []  # [name, start, child_time]
        self.rows = defaultdict(lambda: {"module": "", "signatures": [], "inclusive_s": 0.0,
                                         "exclusive_s": 0.0, "first_at_s": None})
        self.t0 = time.perf_counter()

    def _name(self, dispatcher):
        f = dispatcher.py_func
        return f"{f.__module__}.{f.__qualname__}", f.__module__

    def on_start(self, event):
        self.stack.append([event.data["dispatcher"], time.perf_counter(), 0.0])

    def on_end(self, event):
        disp, t0, child = self.stack.pop()
        dt = time.perf_counter() - t0
        if self.stack:
            self.stack[-1][2] += dt
        name, module = self._name(disp)
        row = self.rows[name]
        row["module"] = module
        if row["first_at_s"] is None:
            row["first_at_s"] = t0 - self.t0
        row["signatures"].append(", ".join(str(a) for a in event.data["args"]))
        row["inclusive_s"] += dt
        row["exclusive_s"] += dt - child

    def notify(self, event):
        if event.is_start:
            self.on_start(event)
        else:
            self.on_end(event)

    def install(self):
        from numba.core import event as ev

        class _L(ev.Listener):
            def on_start(_, e):
                self.on_start(e)

            def on_end(_, e):
                self.on_end(e)

        self._listener = _L()
        ev.register("numba:compile", self._listener)

    def table(self, top=40, signatures=False):
        rows = sorted(self.rows.items(), key=lambda kv: -kv[1]["exclusive_s"])
        total = sum(r["exclusive_s"] for _, r in rows)
        nsig = sum(len(r["signatures"]) for _, r in rows)
        lines = [f"compiled: {len(rows)} kernels, {nsig} signatures, {total:.1f} s exclusive compile time",
                 f"{'exclusive s':>11} {'inclusive s':>11} {'sigs':>4} {'at s':>6}  kernel"]
        for name, r in rows[:top]:
            lines.append(f"{r['exclusive_s']:11.2f} {r['inclusive_s']:11.2f} {len(r['signatures']):4d} {r['first_at_s']:6.1f}  {name}")
        per_module = defaultdict(float)
        for _, r in rows:
            per_module[r["module"]] += r["exclusive_s"]
        lines.append("\nper module (exclusive s):")
        for mod, t in sorted(per_module.items(), key=lambda kv: -kv[1])[:25]:
            lines.append(f"{t:11.2f}  {mod}")
        if signatures:
            lines.append("\nkernels compiled for more than one signature:")
            for name, r in rows:
                if len(r["signatures"]) > 1:
                    lines.append(f"  {name}")
                    lines.extend(f"      ({s})" for s in r["signatures"])
        return "\n".join(lines)

    def as_json(self):
        return {name: dict(r) for name, r in self.rows.items()}


def _run(cmd):
    if not cmd:
        raise SystemExit("give a command after --")
    if cmd[0] == "sinews":
        from sinews.cli import main

        return main(cmd[1:])
    if cmd[0] in ("python", "python3", sys.executable):
        if len(cmd) >= 3 and cmd[1] == "-c":
            sys.argv = ["-c", *cmd[3:]]
            exec(compile(cmd[2], "<string>", "exec"), {"__name__": "__main__"})
            return 0
        sys.argv = cmd[1:]
        runpy.run_path(cmd[1], run_name="__main__")
        return 0
    raise SystemExit(f"unknown command {cmd[0]!r}: use 'sinews ...' or 'python ...'")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = []
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--top", type=int, default=40, help="kernels to list (default 40)")
    p.add_argument("--signatures", action="store_true", help="list duplicated specialisations")
    p.add_argument("--json", help="write the per-kernel rows to this file")
    args = p.parse_args(argv)
    prof = CompileProfile()
    prof.install()
    t0 = time.perf_counter()
    try:
        rc = _run(cmd)
    finally:
        wall = time.perf_counter() - t0
        print(f"\n=== compile profile (wall {wall:.1f} s) ===", file=sys.stderr)
        print(prof.table(args.top, args.signatures), file=sys.stderr)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"wall_s": wall, "kernels": prof.as_json()}, fh, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
