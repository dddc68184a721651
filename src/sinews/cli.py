"""The ``sinews`` command line.

::

    sinews --version
    sinews demo --list                 # the available demos
    sinews demo [NAME] [--out DIR] [--quick]

``sinews demo`` runs the ``pendulum`` demo by default and writes its files into
``./sinews-demo-NAME`` (or ``--out DIR``, created if needed).  Demos are discovered in the
:mod:`sinews.demos` package.  Exit codes: 0 success, 1 the demo failed, 2 bad usage (an
unknown demo name, an output path that is a file).  ``python -m sinews.cli`` works too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

DEFAULT_DEMO = "pendulum"

__all__ = ["main", "build_parser"]


def _version() -> str:
    from . import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``sinews`` command."""
    parser = argparse.ArgumentParser(
        prog="sinews",
        description="sinews: constrained rigid multibody dynamics. Run a demo with 'sinews demo'.",
    )
    parser.add_argument("--version", action="version", version=f"sinews {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="run a demo simulation that writes plots and data files",
        description="Run a demo: it simulates, prints a summary and writes plots and data files.",
        epilog="Example: sinews demo pendulum --out results --quick",
    )
    demo.add_argument("name", nargs="?", default=DEFAULT_DEMO, metavar="NAME",
                      help=f"the demo to run (default: {DEFAULT_DEMO}; see --list)")
    demo.add_argument("--out", metavar="DIR", type=Path, default=None,
                      help="output folder, created if needed (default: ./sinews-demo-NAME)")
    demo.add_argument("--quick", action="store_true", help="short run (a few seconds)")
    demo.add_argument("--list", action="store_true", help="list the available demos and exit")
    return parser


def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    return str(value)


def _list_demos(out=None) -> int:
    from . import demos

    out = sys.stdout if out is None else out
    found = demos.discover()
    if not found:
        print("No demos available.", file=out)
        return 0
    width = max(len(n) for n in found)
    print("Available demos:", file=out)
    for name, demo in found.items():
        print(f"  {name.ljust(width)}  {demo.description}", file=out)
    return 0


def _run_demo(args) -> int:
    from . import demos

    available = demos.discover()
    if args.name not in available:
        print(
            f"sinews demo: error: unknown demo {args.name!r}. Available demos: {', '.join(available) or '(none)'}",
            file=sys.stderr,
        )
        return 2
    out = args.out if args.out is not None else Path.cwd() / f"sinews-demo-{args.name}"
    if out.exists() and not out.is_dir():
        print(f"sinews demo: error: --out {str(out)!r} exists and is not a folder", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    mode = " (quick)" if args.quick else ""
    print(f"Running demo {args.name!r}{mode}: {available[args.name].description}")
    print(f"Output folder: {out.resolve()}", flush=True)
    t0 = time.perf_counter()
    try:
        result = demos.run(args.name, out, quick=args.quick)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # report, do not dump a traceback on the user
        print(f"sinews demo: error: demo {args.name!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - t0
    summary = result.get("summary", {})
    if summary:
        print("Summary:")
        width = max(len(str(k)) for k in summary)
        for key, value in summary.items():
            print(f"  {str(key).ljust(width)}  {_format(value)}")
    print("Files:")
    for f in result.get("files", []):
        print(f"  {f}")
    print(f"Done in {elapsed:.1f} s.")
    return 0


def main(argv=None) -> int:
    """Entry point of the ``sinews`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo":
        if args.list:
            return _list_demos()
        return _run_demo(args)
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first
    return 2


if __name__ == "__main__":
    sys.exit(main())
