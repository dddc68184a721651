"""``python -m sinews.bench coldstart [--json PATH] [--runs R] [--only CASE ...] [--no-cold] [--installed]``

Cold-start costs, each measured in fresh Python processes (``sys.executable -c ...``):

* ``import``: ``import sinews`` (no kernel is compiled or loaded, Numba and SciPy are not
  imported);
* ``first <alg>`` for ``aba``, ``rnea``, ``crba`` and ``forward_kinematics``: ``import sinews``,
  a 7-DoF arm (:func:`sinews.sample_models.arm7`), then the first call of the algorithm, which
  compiles its kernels (an **empty** Numba cache) or loads them from disk (a **warm** cache);
* ``warmup``: ``import sinews; sinews.warmup()``, empty and warm cache;
* ``pinocchio`` (when installed): ``import pinocchio``, its sample humanoid and a first ``aba``,
  for scale.

The cache is chosen with ``NUMBA_CACHE_DIR``: a new empty directory for every cold run, and for
the warm runs one directory that a first (uncounted) run of the same case has filled.  Each child
times itself with ``time.perf_counter`` (``import`` = the ``import sinews`` statement, ``call`` =
the first call, model building excluded) and the parent times the whole process (``process``:
interpreter start-up included).  Reported: min / median / max over ``R`` runs (default 3) of
each figure, in seconds.  Cold runs take seconds each (the kernels compile): ``--no-cold`` skips
them, ``--only`` picks cases by name (``import``, ``aba``, ``rnea``, ``crba``,
``forward_kinematics``, ``warmup``, ``pinocchio``).  ``--json PATH`` writes the rows.

``--installed`` adds an **installed** cache state: ``NUMBA_CACHE_DIR`` unset, so the kernels come
from the cache shipped in the installation (the wheel's pre-built cache, ``setup.py``), as in a
fresh environment after ``pip install .``.  Run it with the interpreter of such an environment
(a new virtual environment with sinews installed from a wheel); every run after the first sees
what the first compiled, so read its first run (``first``) as the cold-start figure.  The row
records the installation's ``_kernel_cache.json`` (``shipped``; None when it has none, e.g. an
editable install).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

__all__ = ["CASES", "run", "main"]

_PRELUDE = """
import json, time
t0 = time.perf_counter()
import sinews
t1 = time.perf_counter()
"""

_FIRST_CALL = _PRELUDE + """
import numpy as np
from sinews.sample_models import arm7
m = arm7()
q, v = np.zeros(m.nq), np.zeros(m.nv)
t2 = time.perf_counter()
{call}
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "call": t3 - t2}}))
"""

#: case name -> (child script, whether the Numba cache matters)
CASES = {
    "import": (_PRELUDE + 'print(json.dumps({"import": t1 - t0}))', False),
    "aba": (_FIRST_CALL.format(call="sinews.aba(m, q, v, v)"), True),
    "rnea": (_FIRST_CALL.format(call="sinews.rnea(m, q, v, v)"), True),
    "crba": (_FIRST_CALL.format(call="sinews.crba(m, q)"), True),
    "forward_kinematics": (_FIRST_CALL.format(call="sinews.forward_kinematics(m, q)"), True),
    "warmup": (
        _PRELUDE
        + "sinews.warmup()\nt2 = time.perf_counter()\n"
        + 'print(json.dumps({"import": t1 - t0, "call": t2 - t1}))',
        True,
    ),
    "pinocchio": (
        textwrap.dedent(
            """
            import json, time
            t0 = time.perf_counter()
            import pinocchio as pin
            t1 = time.perf_counter()
            import numpy as np
            m = pin.buildSampleModelHumanoid()
            d = m.createData()
            q, v = pin.neutral(m), np.zeros(m.nv)
            t2 = time.perf_counter()
            pin.aba(m, d, q, v, v)
            t3 = time.perf_counter()
            print(json.dumps({"import": t1 - t0, "call": t3 - t2}))
            """
        ),
        False,
    ),
}


def _child(script: str, cache_dir: str | None) -> dict:
    """One fresh process; ``cache_dir``: its ``NUMBA_CACHE_DIR`` (None: unset, the installation's
    own cache)."""
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900
    )
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process"] = wall
    return out


def _stats(values: list[float]) -> dict:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _row(case: str, cache: str, runs: list[dict]) -> dict:
    row = {"case": case, "cache": cache, "runs": len(runs)}
    for key in ("import", "call", "process"):
        if key in runs[0]:
            row[key] = _stats([r[key] for r in runs])
    return row


def _has_pinocchio() -> bool:
    import importlib.util

    return importlib.util.find_spec("pinocchio") is not None


def shipped_record() -> dict | None:
    """The installation's record of its pre-built kernel cache (``sinews/_kernel_cache.json``,
    written by the build step of ``setup.py``), or None."""
    from pathlib import Path

    import sinews

    path = Path(sinews.__file__).parent / "_kernel_cache.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def run(runs: int = 3, only=None, cold: bool = True, installed: bool = False) -> list[dict]:
    """The rows: one per (case, cache state), each with min/median/max seconds of the ``import``
    statement, the first ``call`` and the whole ``process``; ``installed``: also the state of the
    installation's own cache, first (see the module docstring)."""
    names = list(only) if only else list(CASES)
    rows = []
    if installed:
        shipped = shipped_record()
        for name in names:
            script, uses_cache = CASES[name]
            if uses_cache:
                results = [_child(script, None) for _ in range(runs)]
                row = _row(name, "installed", results)
                row["first"] = results[0].get("call")
                row["shipped"] = shipped
                rows.append(row)
    tmp_root = tempfile.mkdtemp(prefix="sinews-coldstart-")
    try:
        for name in names:
            script, uses_cache = CASES[name]
            if name == "pinocchio" and not _has_pinocchio():
                continue
            if not uses_cache:
                warm = tempfile.mkdtemp(dir=tmp_root)
                _child(script, warm)  # one uncounted run: the OS file cache
                rows.append(_row(name, "n/a", [_child(script, warm) for _ in range(runs)]))
                continue
            if cold:
                results = [_child(script, tempfile.mkdtemp(dir=tmp_root)) for _ in range(runs)]
                rows.append(_row(name, "empty", results))
            warm = tempfile.mkdtemp(dir=tmp_root)
            _child(script, warm)  # fills the cache
            rows.append(_row(name, "warm", [_child(script, warm) for _ in range(runs)]))
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    return rows


def _fmt(stats: dict | None) -> str:
    if stats is None:
        return "-"
    return f"{stats['median']:.3f} [{stats['min']:.3f}, {stats['max']:.3f}]"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sinews.bench coldstart", description=__doc__.split("\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per case and cache state (>= 1)")
    parser.add_argument("--only", nargs="+", choices=list(CASES), help="cases to run")
    parser.add_argument("--no-cold", action="store_true", help="skip the empty-cache runs")
    parser.add_argument("--installed", action="store_true",
                        help="also the installation's own (shipped) cache, NUMBA_CACHE_DIR unset")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    rows = run(args.runs, only=args.only, cold=not args.no_cold, installed=args.installed)
    print("seconds, median [min, max] over %d fresh processes" % args.runs)
    if args.installed:
        print(f"installed: {shipped_record() or 'no pre-built kernel cache in this installation'}")
    print(f"{'case':<20}{'cache':<10}{'import':>26}{'first call':>26}{'process':>26}")
    for r in rows:
        print(
            f"{r['case']:<20}{r['cache']:<10}{_fmt(r.get('import')):>26}{_fmt(r.get('call')):>26}"
            f"{_fmt(r.get('process')):>26}"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows}, fh, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
