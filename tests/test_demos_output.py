"""Every demo follows the output convention of ``sinews.demos`` (``demos/_output.py``).

Each discovered demo (new demos are picked up without editing this file) is run in quick mode
twice: with matplotlib, where every plot must have units on both axes, and in a subprocess where
matplotlib cannot be imported, where the data files and the summary must still be written and
the skipped plots said on the console and in the summary.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sinews import demos
from sinews.demos._output import DemoOutput, has_unit

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DEMOS = demos.names()


def _check_common(name, out, result):
    """What holds with or without matplotlib: NPZ with units, summary JSON with units."""
    prefix = name.replace("-", "_")
    files = [p for p in result["files"]]
    assert files and all(p.parent == out and p.is_file() and p.stat().st_size > 0 for p in files)
    npz_path = out / f"{prefix}_trajectory.npz"
    assert npz_path in files
    with np.load(npz_path) as npz:
        units = json.loads(str(npz["units"]))
        arrays = [k for k in npz.files if k != "units"]
        assert "t" in arrays and units["t"] == "s"
        assert set(arrays) == set(units), "every trajectory array needs a unit"
        assert npz["t"].ndim == 1 and npz["t"].size >= 2 and np.all(np.diff(npz["t"]) > 0)
    summary_path = out / f"{prefix}_summary.json"
    assert files[-1] == summary_path
    doc = json.loads(summary_path.read_text())
    assert doc["demo"] == name
    assert doc["files"] == [p.name for p in files]
    for key, value in result["summary"].items():
        assert doc[key] == value or (isinstance(value, float) and np.isnan(value))
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        numeric = numeric or (isinstance(value, list) and value and all(isinstance(x, (int, float)) for x in value))
        if numeric:
            assert isinstance(doc["units"].get(key), str) and doc["units"][key], f"{name}: {key} has no unit"
    return doc


@pytest.mark.parametrize("name", DEMOS)
def test_demo_writes_the_convention_with_units_on_every_axis(name, tmp_path):
    result = demos.run(name, tmp_path, quick=True)
    doc = _check_common(name, tmp_path, result)
    pngs = [p for p in result["files"] if p.suffix == ".png"]
    assert pngs, f"demo {name} wrote no plot"
    assert "plots_skipped" not in doc and "plot" not in doc
    assert set(doc["plots"]) == {p.name for p in pngs}
    for png in pngs:
        assert png.read_bytes()[:8] == PNG_MAGIC
        axes = doc["plots"][png.name]
        assert axes
        for labels in axes:
            assert has_unit(labels["x"]) and has_unit(labels["y"]), f"{png.name}: {labels}"


NO_MPL = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.modules["matplotlib"] = None  # import matplotlib -> ImportError
    from sinews import demos
    out = Path(sys.argv[1])
    results = {}
    for name in sys.argv[2:]:
        r = demos.run(name, out / name, quick=True)
        results[name] = {"files": [str(p) for p in r["files"]], "summary": r["summary"],
                         "mpl_loaded": sys.modules.get("matplotlib") is not None}
    print("RESULTS=" + json.dumps(results))
""")


@pytest.fixture(scope="module")
def without_matplotlib(tmp_path_factory):
    out = tmp_path_factory.mktemp("nompl")
    proc = subprocess.run([sys.executable, "-c", NO_MPL, str(out), *DEMOS],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULTS=")][-1]
    return out, json.loads(line[len("RESULTS="):]), proc.stderr


@pytest.mark.parametrize("name", DEMOS)
def test_demo_runs_without_matplotlib(name, without_matplotlib):
    out, results, stderr = without_matplotlib
    r = results[name]
    assert not r["mpl_loaded"]
    from pathlib import Path

    result = {"files": [Path(p) for p in r["files"]], "summary": r["summary"]}
    doc = _check_common(name, out / name, result)
    assert not list((out / name).glob("*.png"))
    assert doc["plots_skipped"] and all(f.endswith(".png") for f in doc["plots_skipped"])
    assert "matplotlib is not installed" in doc["plot"] and "sinews[plot]" in doc["plot"]
    assert r["summary"]["plot"] == doc["plot"]  # the CLI prints the summary: the user sees it
    for f in doc["plots_skipped"]:
        assert f"{name}: plot {f} skipped: matplotlib is not installed" in stderr


# ------------------------------------------------------------------ the helper itself
def test_output_refuses_a_plot_axis_without_unit(tmp_path):
    pytest.importorskip("matplotlib")
    out = DemoOutput(tmp_path, "x")

    def draw(fig):
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("time [s]")
        ax.set_ylabel("angle")

    with pytest.raises(ValueError, match="the y axis .* 'angle'.*unit"):
        out.plot("x.png", draw)
    assert not (tmp_path / "x.png").exists()


def test_output_shared_axis_label_counts_for_its_siblings(tmp_path):
    pytest.importorskip("matplotlib")
    out = DemoOutput(tmp_path, "x")

    def draw(fig):
        a, b = fig.subplots(2, 1, sharex=True)
        a.plot([0, 1], [0, 1])
        b.plot([0, 1], [1, 0])
        a.set_ylabel("q [rad]")
        b.set_ylabel("v [rad/s]")
        b.set_xlabel("time [s]")

    assert out.plot("x.png", draw) == tmp_path / "x.png"
    assert out.plots["x.png"] == [{"x": "time [s]", "y": "q [rad]"}, {"x": "time [s]", "y": "v [rad/s]"}]


def test_output_needs_units_for_numbers_and_arrays(tmp_path):
    out = DemoOutput(tmp_path, "my-demo")
    with pytest.raises(ValueError, match="units.*'q'"):
        out.trajectory({"t": [0.0, 1.0], "q": [0.0, 1.0]}, units={"t": "s"})
    with pytest.raises(ValueError, match="units.*'drift'"):
        out.finish({"drift": 1.0, "method": "rk4"}, units={})
    with pytest.raises(ValueError, match="reserved"):
        out.finish({"files": 1}, units={"files": "1"})
    with pytest.raises(ValueError, match="filename"):
        out.path("../escape.txt")
    r = out.finish({"drift": 1.0, "method": "rk4", "ok": True}, units={"drift": "J"})
    assert r["files"] == [tmp_path / "my_demo_summary.json"]
    doc = json.loads((tmp_path / "my_demo_summary.json").read_text())
    assert doc["units"] == {"drift": "J"} and doc["method"] == "rk4" and doc["ok"] is True
