"""Runnable demonstrations (``sinews demo NAME``), discovered automatically.

Every public module of this package (name not starting with ``_``) is a demo if it defines

``NAME``
    the demo's command-line name (``str``);
``DESCRIPTION``
    a one-line description;
``run(out_dir: pathlib.Path, quick: bool = False) -> dict``
    runs the demo, writes its files into ``out_dir`` (which exists) and returns
    ``{"files": [paths written], "summary": {name: value}}``.  ``quick=True`` must finish
    in a few seconds (used by the tests).

Adding a demo is dropping such a module here: nothing else needs editing.  A module that
fails to import, or lacks one of the three names, is skipped with a warning so that one
broken demo does not break the others.

Output convention
-----------------
Every demo writes its files through ``sinews.demos._output.DemoOutput`` (``NAME`` below is the
demo's name with ``-`` replaced by ``_``), so that all demos leave the same kinds of files:

``NAME_trajectory.npz``
    the time series, one array per quantity (first axis time, ``t`` in seconds), and a
    ``units`` entry, the JSON string ``{array name: unit}`` (``out.trajectory(arrays, units)``);
``NAME*.png``
    plots (``out.plot(filename, draw)``, ``draw(fig)`` draws on a matplotlib figure); every axis
    is labelled with its unit in square brackets (``"time [s]"``, ``"[1]"`` if dimensionless),
    which is checked when the figure is saved;
``NAME_summary.json``
    the summary values, the unit of every numeric value (``"units"``), the files written and
    the axis labels of every plot (``out.finish(summary, units)``, whose return value is what
    ``run`` returns);
``NAME_*.csv`` (optional)
    tables for spreadsheets (``out.csv(filename, columns)``).

Without matplotlib a demo still runs: the data files and the summary are written, the console
says which plot was skipped and why, and the summary records it (``"plot"`` and
``"plots_skipped"``).  Demos import matplotlib only through ``DemoOutput.plot``.  Line plots
(panels of curves against time) are described with ``sinews.demos._plots`` (``figure``,
``Panel``, ``curve``), which draws them all alike; a figure of another kind is a ``draw(fig)``
of the demo's own.  A minimal demo module::

    from ._output import DemoOutput
    from ._plots import Panel, curve, figure

    NAME = "mydemo"
    DESCRIPTION = "one line"

    def run(out_dir, quick=False):
        t, q = ...                                    # simulate
        out = DemoOutput(out_dir, NAME)
        out.trajectory({"t": t, "q": q}, units={"t": "s", "q": "rad"})
        out.plot("mydemo.png", figure(t, Panel("joint angle [rad]", [curve(q[:, 0])])))
        return out.finish({"steps": len(t) - 1}, units={"steps": "1"})

``tests/test_demos_output.py`` runs every discovered demo (``quick=True``) with and without
matplotlib and checks these files, so a new demo is covered without editing the tests.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

__all__ = ["Demo", "discover", "names", "get", "run"]


@dataclass(frozen=True)
class Demo:
    """A discovered demo: its name, one-line description, module and ``run`` function."""

    name: str
    description: str
    module: ModuleType
    run: Callable[..., dict]


def _as_demo(module: ModuleType) -> Demo | None:
    name = getattr(module, "NAME", None)
    description = getattr(module, "DESCRIPTION", None)
    run_fn = getattr(module, "run", None)
    if not isinstance(name, str) or not name or not isinstance(description, str) or not callable(run_fn):
        warnings.warn(
            f"{module.__name__} is not a demo (it needs NAME, DESCRIPTION and run(out_dir, quick)); skipped",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return Demo(name, description.strip().splitlines()[0] if description.strip() else "", module, run_fn)


def discover() -> dict[str, Demo]:
    """All demos of this package, by name (sorted)."""
    found: dict[str, Demo] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        modname = f"{__name__}.{info.name}"
        try:
            module = importlib.import_module(modname)
        except Exception as exc:  # a broken demo must not hide the others
            warnings.warn(f"demo module {modname} failed to import ({type(exc).__name__}: {exc}); skipped",
                          RuntimeWarning, stacklevel=2)
            continue
        demo = _as_demo(module)
        if demo is None:
            continue
        if demo.name in found:
            warnings.warn(
                f"demo name {demo.name!r} is defined by both {found[demo.name].module.__name__} and "
                f"{modname}; keeping the first",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        found[demo.name] = demo
    return dict(sorted(found.items()))


def names() -> list[str]:
    """The names of the available demos, sorted."""
    return list(discover())


def get(name: str) -> Demo:
    """The demo called ``name``; ``KeyError`` listing the available ones if there is none."""
    demos = discover()
    try:
        return demos[name]
    except KeyError:
        raise KeyError(
            f"name: unknown demo {name!r}; available demos: {', '.join(demos) or '(none)'}"
        ) from None


def run(name: str, out_dir: str | Path, quick: bool = False) -> dict:
    """Run demo ``name``, writing into ``out_dir`` (created if needed); returns its result."""
    demo = get(name)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = demo.run(out, quick=quick)
    if not isinstance(result, dict) or "files" not in result or "summary" not in result:
        raise RuntimeError(f"demo {name!r} returned {type(result).__name__}, expected {{'files': ..., 'summary': ...}}")
    return result
