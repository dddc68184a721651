"""The loop demos ``sinews demo stewart`` and ``sinews demo wishbone`` (quick mode)."""

import json

import numpy as np
import pytest

from sinews import demos
from sinews.demos._output import has_unit


@pytest.mark.parametrize("name", ["stewart", "wishbone"])
def test_loop_demo_runs_and_writes_labelled_outputs(name, tmp_path):
    assert name in demos.names()
    out = demos.get(name).run(tmp_path, quick=True)
    summary_file = tmp_path / f"{name}_summary.json"
    assert summary_file in out["files"] and all(f.exists() for f in out["files"])
    doc = json.loads(summary_file.read_text())
    for png, axes in doc.get("plots", {}).items():
        for ax in axes:
            assert has_unit(ax["x"]) and has_unit(ax["y"]), (png, ax)
    npz = np.load(tmp_path / f"{name}_trajectory.npz")
    units = json.loads(str(npz["units"]))
    assert set(units) == set(npz.files) - {"units"}
    s = out["summary"]
    if name == "stewart":
        assert s["max_fk_error_m"] < 1e-9
        # legs hold the platform: at rest the vertical leg-force components carry more than its weight
        assert s["max_static_leg_force_N"] > s["platform_weight_N"] / 6
    else:
        assert s["max_closure_residual"] < 1e-10 and s["max_constraint_drift"] < 1e-6
        lo, hi = s["travel_range_mm"]
        assert lo < -50 and hi > 50
        assert s["static_sag_mm"] < 0  # the wheel settles downwards on its spring
