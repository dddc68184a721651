"""One output convention for every demo (private helper, not a demo).

A demo's ``run(out_dir, quick)`` builds a :class:`DemoOutput` and writes through it:

``NAME_trajectory.npz``
    the time series (:meth:`DemoOutput.trajectory`): one array per quantity, first axis time,
    plus a ``units`` entry (a JSON string ``{array name: unit}``) that names the unit of every
    array;
``NAME_*.csv`` (optional, :meth:`DemoOutput.csv`)
    the same data as a table for spreadsheets, with a header row;
``NAME*.png``
    plots (:meth:`DemoOutput.plot`), every axis labelled with its unit in square brackets
    (``"time [s]"``, ``"|phi| [m]"``, ``"ratio [1]"`` for a dimensionless quantity).  The
    labels are checked when the figure is saved (``ValueError`` otherwise) and recorded in the
    summary, so that a test can check them without reading pixels.  Without matplotlib the plot
    is skipped: the data files are still written, a line on stderr says so, and the summary
    lists the skipped plot under ``plots_skipped``;
``NAME_summary.json``
    written by :meth:`DemoOutput.finish`: the summary values at the top level (the keys a user
    reads first), ``"units"`` (the unit of every numeric value), ``"demo"`` (the demo's name),
    ``"files"`` (the files written, relative to the output folder), ``"plots"`` (for each PNG
    the x and y labels of its axes) and, when plots were skipped, ``"plots_skipped"``.

:meth:`DemoOutput.finish` returns the ``{"files": [...], "summary": {...}, "units": {...}}``
dictionary that ``run`` returns (``files`` as :class:`pathlib.Path`, the summary JSON last).

Example (a demo module's ``run``)::

    out = DemoOutput(out_dir, "mydemo")
    out.trajectory({"t": t, "q": Q}, units={"t": "s", "q": "rad"})

    def draw(fig):
        ax = fig.subplots()
        ax.plot(t, Q[:, 0])
        ax.set_xlabel("time [s]")
        ax.set_ylabel("joint angle [rad]")

    out.plot("mydemo.png", draw)
    return out.finish({"steps": n, "energy_drift_J": drift}, units={"steps": "1", "energy_drift_J": "J"})
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, TextIO

import numpy as np

__all__ = ["DemoOutput", "UNIT_PATTERN", "has_unit", "matplotlib_available", "scene_trajectory"]

#: A label carries its unit as the last bracketed group: ``"time [s]"``, ``"energy [J]"``.
UNIT_PATTERN = re.compile(r"\[[^\[\]]+\]\s*$")

#: The keys of the summary JSON that are not summary values.
RESERVED = ("demo", "units", "files", "plots", "plots_skipped")

PLOT_HINT = "pip install 'sinews[plot]'"


def has_unit(label: str) -> bool:
    """True if the axis label ends with a unit in square brackets (``"x [m]"``)."""
    return bool(UNIT_PATTERN.search(label or ""))


def matplotlib_available() -> bool:
    """True if matplotlib can be imported (the plots are written)."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        return False
    return True


def _is_number(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float, np.integer, np.floating)):
        return True
    if isinstance(x, (list, tuple)) and x and all(_is_number(e) for e in x):
        return True
    return False


def _jsonable(x: Any) -> Any:
    if isinstance(x, Path):
        return str(x)
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else str(x)
    if isinstance(x, (list, tuple)):
        return [_jsonable(e) for e in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    return x


def _axes_labels(fig) -> list[dict[str, str]]:
    """The x and y labels of every axes that shows data; a shared axis may carry its label on a
    sibling (``sharex=True`` subplots label only the bottom one).  ``ValueError`` when one lacks
    a unit."""
    axes = [ax for ax in fig.get_axes() if ax.get_visible() and ax.has_data()]
    if not axes:
        raise ValueError("the figure has no axes with data")
    labels = []
    for ax in axes:
        entry = {}
        for which, shared in (("x", ax.get_shared_x_axes()), ("y", ax.get_shared_y_axes())):
            own = getattr(ax, f"get_{which}label")()
            label = own
            if not has_unit(label):
                for sib in shared.get_siblings(ax):
                    cand = getattr(sib, f"get_{which}label")()
                    if has_unit(cand):
                        label = cand
                        break
            if not has_unit(label):
                title = ax.get_title() or "(untitled)"
                raise ValueError(
                    f"the {which} axis of the plot {title!r} has label {own!r}: every axis needs a "
                    f"unit in square brackets, e.g. 'time [s]' ('[1]' if dimensionless)"
                )
            entry[which] = label
        labels.append(entry)
    return labels


class DemoOutput:
    """Writes a demo's files into ``out_dir`` under the names ``NAME_*`` (see the module doc).

    ``out_dir`` is created if needed; ``name`` is the file prefix (the demo's name with ``-``
    replaced by ``_``).  ``console`` (default ``sys.stderr``) receives the "plot skipped" notes.
    """

    def __init__(self, out_dir: str | Path, name: str, console: TextIO | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.prefix = name.replace("-", "_")
        self.console = console
        self.files: list[Path] = []
        self.plots: dict[str, list[dict[str, str]]] = {}
        self.plots_skipped: list[str] = []
        self.trajectory_units: dict[str, str] = {}

    # ------------------------------------------------------------------ data files
    def path(self, filename: str) -> Path:
        """``out_dir / filename`` (a plain file name, no folders)."""
        if not isinstance(filename, str) or not filename or Path(filename).name != filename:
            raise ValueError(f"filename must be a plain file name, got {filename!r}")
        return self.out_dir / filename

    def add_file(self, path: str | Path) -> Path:
        """Record a file the demo wrote itself (listed in the summary and the result)."""
        path = Path(path)
        if path not in self.files:
            self.files.append(path)
        return path

    def trajectory(self, arrays: Mapping[str, Any], units: Mapping[str, str],
                   filename: str | None = None) -> Path:
        """Write ``arrays`` (name -> array) to ``NAME_trajectory.npz`` with their ``units``.

        Every array needs a unit (``"1"`` if dimensionless); the units are stored in the file
        as the JSON string ``units`` (read them with ``json.loads(str(npz["units"]))``).
        """
        missing = [k for k in arrays if k not in units]
        if missing:
            raise ValueError(f"units: no unit given for the arrays {missing}")
        if "units" in arrays:
            raise ValueError("arrays: 'units' is reserved for the units table")
        unit_table = {k: str(units[k]) for k in arrays}
        path = self.path(filename or f"{self.prefix}_trajectory.npz")
        np.savez(path, units=np.array(json.dumps(unit_table)),
                 **{k: np.asarray(v) for k, v in arrays.items()})
        self.trajectory_units.update(unit_table)
        return self.add_file(path)

    def csv(self, filename: str, columns: Mapping[str, Any]) -> Path:
        """Write equal-length 1-D ``columns`` (name -> array) as a CSV table with a header row.

        The header is the column names (units are not put in the header, so that the names
        stay valid identifiers; they are in the NPZ and the summary)."""
        names = list(columns)
        table = np.column_stack([np.asarray(columns[k], dtype=float) for k in names])
        path = self.path(filename)
        np.savetxt(path, table, delimiter=",", fmt="%.12g", header=",".join(names), comments="")
        return self.add_file(path)

    # ------------------------------------------------------------------ plots
    def plot(self, filename: str, draw: Callable[[Any], None], *, figsize: tuple[float, float] = (7.5, 5.0), dpi: int = 110) -> Path | None:
        """Call ``draw(fig)`` on a new matplotlib figure and save it as ``filename`` (PNG).

        Every axes with data must label both axes with a unit in square brackets (``ValueError``
        naming the axis otherwise).  Without matplotlib nothing is drawn, the skip is said on the
        console and recorded, and ``None`` is returned.
        """
        path = self.path(filename)
        if not matplotlib_available():
            self.plots_skipped.append(filename)
            print(f"{self.name}: plot {filename} skipped: matplotlib is not installed ({PLOT_HINT}); "
                  "the data files are written", file=self.console or sys.stderr, flush=True)
            return None
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize, layout="constrained")
        FigureCanvasAgg(fig)
        draw(fig)
        labels = _axes_labels(fig)
        fig.savefig(path, dpi=dpi)
        self.plots[filename] = labels
        return self.add_file(path)

    # ------------------------------------------------------------------ summary
    def finish(self, summary: Mapping[str, Any], units: Mapping[str, str]) -> dict:
        """Write ``NAME_summary.json`` and return ``{"files", "summary", "units"}``.

        Every numeric value of ``summary`` (numbers, lists of numbers) needs a unit in
        ``units`` (``"1"`` if dimensionless); strings and booleans need none.
        """
        clash = [k for k in summary if k in RESERVED]
        if clash:
            raise ValueError(f"summary: the keys {clash} are reserved ({', '.join(RESERVED)})")
        missing = [k for k, v in summary.items() if _is_number(v) and k not in units]
        if missing:
            raise ValueError(f"units: no unit given for the summary values {missing}")
        values = {k: _jsonable(v) for k, v in summary.items()}
        unit_table = {k: str(units[k]) for k in summary if k in units}
        if self.plots_skipped:
            values_out = dict(values, plot="skipped: matplotlib is not installed (" + PLOT_HINT + ")")
        else:
            values_out = dict(values)
        path = self.path(f"{self.prefix}_summary.json")
        files = [*self.files, path]
        doc = {
            "demo": self.name,
            **values_out,
            "units": unit_table,
            "files": [str(f.relative_to(self.out_dir)) for f in files],
            "plots": self.plots,
        }
        if self.plots_skipped:
            doc["plots_skipped"] = list(self.plots_skipped)
        path.write_text(json.dumps(doc, indent=2) + "\n")
        self.add_file(path)
        return {"files": list(self.files), "summary": values_out, "units": unit_table}


#: The trajectory arrays of a floating-base robot scene and their units (:func:`scene_trajectory`).
SCENE_UNITS = {"t": "s", "q": "m (base position), 1 (quaternion), rad (joints)",
               "v": "rad/s (base angular), m/s (base linear), rad/s (joints)", "base_height": "m",
               "contact_force": "N", "energy": "J", "num_contacts": "1"}


def scene_trajectory(out: DemoOutput, res: Any, base_height: Any, contact_force: Any) -> Path:
    """Write the trajectory of a floating-base robot dropped in a scene (``res``, a
    ``sinews.sim`` simulation result; the quadruped and humanoid demos): ``t``, ``q``, ``v``,
    ``energy``, ``num_contacts`` of ``res`` with the ``base_height`` and the total
    ``contact_force`` on the robot (:data:`SCENE_UNITS`)."""
    return out.trajectory(
        {"t": res.t, "q": res.q, "v": res.v, "base_height": base_height, "contact_force": contact_force,
         "energy": res.energy, "num_contacts": res.num_contacts},
        units=SCENE_UNITS,
    )
