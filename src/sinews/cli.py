"""The ``sinews`` command line.

::

    sinews --version
    sinews demo --list                 # the available demos
    sinews demo [NAME] [--out DIR] [--quick]
    sinews simulate FILE [--duration T] [--dt H] [--stepper NAME] [--out DIR] ...

``sinews demo`` runs the ``quadruped`` demo by default (the Solo12 robot dropped onto the
ground, standing under PD control) and writes its files into ``./sinews-demo-NAME`` (or
``--out DIR``, created if needed).  Demos are discovered in the :mod:`sinews.demos` package.

``sinews simulate FILE`` simulates a URDF (``.urdf``: the robot on a floating base above a
ground plane, collision shapes from its ``<collision>`` elements) or an MJCF file (``.xml``:
read by MuJoCo's parser, geoms as collision shapes) with contact and friction, and writes into
``./sinews-sim-STEM`` (or ``--out DIR``): ``STEM_trajectory.npz``, ``STEM_summary.json``, PNG
plots (energy, contact forces, positions; units on every axis) and ``STEM.html`` (3-D
animation).  Reference: docs/cli.md.

Exit codes: 0 success, 1 the demo or simulation failed, 2 bad usage (an unknown demo or
stepper name, a missing input file, an output path that is a file, a nonpositive time).
``python -m sinews.cli`` works too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

DEFAULT_DEMO = "quadruped"

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
    sim = sub.add_parser(
        "simulate",
        help="simulate a URDF or MJCF file with contact; write data, plots and a 3-D animation",
        description="Simulate a robot (URDF, on a floating base above a ground plane) or an MJCF scene "
                    "with contact and friction, and write the trajectory (NPZ), a summary (JSON), plots "
                    "(PNG) and a 3-D animation (HTML).",
        epilog="Example: sinews simulate robot.urdf --duration 2 --dt 1e-3 --stepper default --out run",
    )
    sim.add_argument("file", metavar="FILE", type=Path, help="a .urdf file or an MJCF .xml file")
    sim.add_argument("--duration", metavar="T", type=float, default=2.0, help="simulated time [s] (default 2)")
    sim.add_argument("--dt", metavar="H", type=float, default=None,
                     help="time step [s] (default: the MJCF's timestep, 1e-3 for a URDF)")
    sim.add_argument("--stepper", metavar="NAME", default="default",
                     help="time stepper: default (3-D Coulomb cone), lcp (Drake's LCP) or impulse "
                          "(Simbody's impulse stepper); default: default")
    sim.add_argument("--out", metavar="DIR", type=Path, default=None,
                     help="output folder, created if needed (default: ./sinews-sim-STEM)")
    sim.add_argument("--fixed-base", action="store_true", help="URDF: weld the root link to the world")
    sim.add_argument("--drop", metavar="M", type=float, default=0.0,
                     help="URDF, floating base: start with the lowest shape this high above the ground [m] "
                          "(default 0: touching it)")
    sim.add_argument("--mesh", choices=("box", "sphere", "convex", "skip"), default="box",
                     help="collision meshes become their bounding box (default), bounding sphere, convex "
                          "hull, or nothing")
    sim.add_argument("--fps", type=float, default=30.0, help="frames per second of the animation (default 30)")
    sim.add_argument("--no-html", action="store_true", help="do not write the HTML animation")
    sim.add_argument("--no-plots", action="store_true", help="do not write the PNG plots")
    sim.add_argument("--quiet", action="store_true", help="no progress bar")
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
    _print_summary(result.get("summary", {}), result.get("files", []), time.perf_counter() - t0,
                   result.get("units"))
    return 0


def _print_summary(summary, files, elapsed, units=None):
    units = units or {}
    if summary:
        print("Summary:")
        width = max(len(str(k)) for k in summary)
        for key, value in summary.items():
            unit = units.get(key)
            tail = f" {unit}" if unit and unit != "1" else ""
            print(f"  {str(key).ljust(width)}  {_format(value)}{tail}")
    print("Files:")
    for f in files:
        print(f"  {f}")
    print(f"Done in {elapsed:.1f} s.")


def _amend_summary(path: Path, extra: dict) -> None:
    """Add the input file, model name and animation to the summary JSON written by
    ``SimulationResult.save``."""
    import json

    doc = json.loads(path.read_text())
    doc.update(extra)
    if "animation" in extra:
        doc["files"] = [f for f in doc.get("files", []) if f != path.name] + [extra["animation"], path.name]
    path.write_text(json.dumps(doc, indent=2) + "\n")


def _run_simulate(args) -> int:
    import warnings

    err = sys.stderr
    path = args.file
    if not path.is_file():
        print(f"sinews simulate: error: FILE {str(path)!r} does not exist", file=err)
        return 2
    suffix = path.suffix.lower()
    if suffix not in (".urdf", ".xml", ".mjcf"):
        print(f"sinews simulate: error: FILE must be a .urdf or an MJCF .xml file, got {str(path)!r}", file=err)
        return 2
    for name, value in (("--duration", args.duration), ("--fps", args.fps)) + (
            (("--dt", args.dt),) if args.dt is not None else ()):
        if not (value > 0 and value < float("inf")):
            print(f"sinews simulate: error: {name} must be a positive number, got {value}", file=err)
            return 2
    if not args.drop >= 0:
        print(f"sinews simulate: error: --drop must be >= 0, got {args.drop}", file=err)
        return 2
    from .sim.steppers import STEPPERS

    if args.stepper not in STEPPERS:
        print(f"sinews simulate: error: unknown stepper {args.stepper!r}; choose from {', '.join(STEPPERS)}", file=err)
        return 2
    out = args.out if args.out is not None else Path.cwd() / f"sinews-sim-{path.stem}"
    if out.exists() and not out.is_dir():
        print(f"sinews simulate: error: --out {str(out)!r} exists and is not a folder", file=err)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    print(f"Simulating {str(path)!r} for {args.duration:g} s with the {args.stepper!r} stepper")
    print(f"Output folder: {out.resolve()}", flush=True)
    t0 = time.perf_counter()
    try:
        from .sim.scenes_io import initial_state, scene_from_file

        options = {"mesh": args.mesh}
        if suffix == ".urdf":
            options["floating_base"] = not args.fixed_base
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scene = scene_from_file(path, **options)
        for w in caught:
            print(f"note: {w.message}", file=err)
        q0, v0, dt = initial_state(scene, drop=args.drop)
        dt = args.dt if args.dt is not None else dt
        m = scene.model
        print(f"Scene: {m.name!r}, {len(m.bodies) - 1} bodies, nq = {m.nq}, nv = {m.nv}, "
              f"{len(scene.geometries)} collision shapes; dt = {dt:g} s", flush=True)
        from .sim import simulate

        result = simulate(scene, q0, v0, args.duration, dt, stepper=args.stepper, progress=not args.quiet)
        stem = path.stem
        files = [Path(f) for f in result.save(out, name=stem, plots=not args.no_plots)]
        extra = {"source": str(path), "model": m.name}
        if not args.no_html:
            from .viewer import write_html

            html = write_html(scene, result, out / f"{stem}.html", fps=args.fps, title=f"{stem} (sinews)",
                              info={"stepper": result.stepper, "time step": f"{dt:g} s"},
                              visuals=bool(getattr(m, "visuals", ())))
            files.insert(-1, html)
            extra["animation"] = html.name
        _amend_summary(out / f"{stem}_summary.json", extra)
    except KeyboardInterrupt:
        print("\ninterrupted", file=err)
        return 130
    except Exception as exc:  # report, do not dump a traceback on the user
        print(f"sinews simulate: error: {type(exc).__name__}: {exc}", file=err)
        return 1
    _print_summary(result.summary(), files, time.perf_counter() - t0)
    return 0


def main(argv: list[str] | None = None) -> int:
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
    if args.command == "simulate":
        return _run_simulate(args)
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first
    return 2


if __name__ == "__main__":
    sys.exit(main())
