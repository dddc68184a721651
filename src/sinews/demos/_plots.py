"""The demos' line plots, drawn from a description (private helper, not a demo).

Most demo figures are one or more panels of curves against one x axis (time, mostly).  A demo
describes such a figure and :func:`figure` returns the ``draw(fig)`` that
:meth:`sinews.demos._output.DemoOutput.plot` calls, so one place draws every demo's panels
(labels, log scales, legends, grids) and matplotlib is still imported only by
``DemoOutput.plot``: without it the plot is skipped and the demo says so.

* :func:`curve` -- one line ``y`` against the panel's x (or its own ``x``), with an optional
  legend ``label``, a matplotlib format string (``"o-"``, ``"--"``) and line keywords
  (``color``, ``ls``, ``lw``, ``drawstyle``, ...);
* :func:`hline` -- a horizontal reference line (grey and dashed unless told otherwise);
* :class:`Panel` -- one axes: its y label (with its unit in square brackets, as every label),
  its curves, and optionally a title, a log scale (``semilogy``; values below
  :data:`LOG_FLOOR` are drawn at the floor, so that exact zeros stay on the plot) and a legend;
* :func:`figure` -- the panels stacked in rows sharing the x axis (the x label on the bottom
  one) or side by side in columns (each with its own x label).

Example (in a demo's ``run``)::

    out.plot("mydemo_error.png", figure(
        t,
        Panel("|phi| [m]", [curve(phi, "closure error")], log=True, legend=True),
        Panel("energy [J]", [curve(E - E[0])]),
    ))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["Curve", "Panel", "LOG_FLOOR", "curve", "hline", "figure"]

#: The smallest value a log-scale panel shows: smaller values (exact zeros) are drawn at it.
LOG_FLOOR = 1e-17


@dataclass(frozen=True)
class Curve:
    """One line of a :class:`Panel` (build it with :func:`curve` or :func:`hline`)."""

    y: Any
    label: str | None = None
    fmt: str = ""
    style: Mapping[str, Any] = field(default_factory=dict)
    x: Any = None
    horizontal: bool = False


def curve(y: Any, label: str | None = None, fmt: str = "", *, x: Any = None, **style: Any) -> Curve:
    """The line ``y`` against ``x`` (default: the figure's x), with a legend ``label``, a
    matplotlib format string ``fmt`` and line keywords ``style``."""
    return Curve(y, label, fmt, dict(style), x)


def hline(y: float, label: str | None = None, **style: Any) -> Curve:
    """A horizontal line at ``y`` (a reference value), grey and dashed unless ``style`` says."""
    return Curve(y, label, "", {"color": "0.5", "ls": "--", **style}, None, True)


@dataclass(frozen=True)
class Panel:
    """One axes of a :func:`figure`: ``ylabel`` (with its unit), the ``curves``, an optional
    ``title``, a log y axis (``log``), a legend (``legend``: ``True`` or the keywords of
    ``ax.legend``) and, for panels side by side, their own ``xlabel``."""

    ylabel: str
    curves: Sequence[Curve]
    title: str | None = None
    log: bool = False
    legend: bool | Mapping[str, Any] = False
    xlabel: str | None = None


def _draw_panel(ax, x, panel: Panel, grid: bool | str) -> None:
    for c in panel.curves:
        kwargs = dict(c.style)
        if c.label is not None:
            kwargs["label"] = c.label
        if c.horizontal:
            ax.axhline(c.y, **kwargs)
            continue
        y = np.maximum(c.y, LOG_FLOOR) if panel.log else c.y
        plot = ax.semilogy if panel.log else ax.plot
        args = (x if c.x is None else c.x, y) + ((c.fmt,) if c.fmt else ())
        plot(*args, **kwargs)
    ax.set_ylabel(panel.ylabel)
    if panel.title is not None:
        ax.set_title(panel.title)
    if panel.legend:
        ax.legend(**(panel.legend if isinstance(panel.legend, Mapping) else {}))
    if grid:
        ax.grid(True, which="both" if grid == "both" else "major", alpha=0.3)


def figure(x: Any, *panels: Panel, xlabel: str = "time [s]", columns: bool = False,
           grid: bool | str = True) -> Callable[[Any], None]:
    """The ``draw(fig)`` of :meth:`~sinews.demos._output.DemoOutput.plot` for ``panels`` against
    ``x``: stacked in rows sharing the x axis, labelled ``xlabel`` under the bottom one, or with
    ``columns`` side by side, each labelled with its own ``xlabel`` (or ``xlabel``).  ``grid``:
    light grid lines (``"both"``: at the minor ticks of log axes too), ``False``: none."""
    if not panels:
        raise ValueError("panels: a figure needs at least one Panel")

    def draw(fig) -> None:
        if len(panels) == 1:
            axes = [fig.subplots()]
        elif columns:
            axes = list(fig.subplots(1, len(panels)))
        else:
            axes = list(fig.subplots(len(panels), 1, sharex=True))
        for ax, panel in zip(axes, panels):
            _draw_panel(ax, x, panel, grid)
            if columns or len(panels) == 1:
                ax.set_xlabel(panel.xlabel or xlabel)
        if not columns and len(panels) > 1:
            axes[-1].set_xlabel(xlabel)

    return draw
