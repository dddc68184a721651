"""The four-bar and slider-crank demos (quick mode) and the constrained benchmark (quick mode).

The demos are checked against physics, not only for their files: the slider-crank's simulated
slider must follow the closed-form kinematics x(theta), the four-bar's closure error must stay
small (and the energy of the passive linkage nearly constant).  The bench checks sinews against Pinocchio before
timing; here it must report agreement (exit code 0) and write the JSON rows.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from sinews.demos import fourbar, slider_crank

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("mod,name", [(fourbar, "fourbar"), (slider_crank, "slider-crank")])
def test_demo_interface(mod, name):
    assert mod.NAME == name
    assert isinstance(mod.DESCRIPTION, str) and mod.DESCRIPTION and "\n" not in mod.DESCRIPTION
    assert callable(mod.run)


def _check_files(result, out_dir):
    files = [p for p in result["files"]]
    assert files
    for p in files:
        assert p.parent == out_dir and p.is_file() and p.stat().st_size > 0
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == PNG_MAGIC
    return {p.suffix for p in files}


def test_fourbar_demo_quick(tmp_path, capsys):
    r = fourbar.run(tmp_path, quick=True)
    assert {".png", ".npz"} <= _check_files(r, tmp_path)
    s = r["summary"]
    assert s["max_phi_plain"] < 1e-5 and s["max_phi_baumgarte"] < 1e-5
    assert s["energy_drift_plain"] < 1e-3
    data = np.load(tmp_path / "fourbar_trajectory.npz")
    assert data["t"].shape[0] == s["steps"] + 1
    np.testing.assert_allclose(data["phi_plain"].max(), s["max_phi_plain"])
    assert "four-bar" in capsys.readouterr().out


def test_slider_crank_demo_quick_matches_closed_form(tmp_path):
    r = slider_crank.run(tmp_path, quick=True)
    assert {".png", ".csv"} <= _check_files(r, tmp_path)
    s = r["summary"]
    assert s["max_slider_deviation_from_closed_form"] < 1e-7
    table = np.loadtxt(tmp_path / "slider_crank_trajectory.csv", delimiter=",", skiprows=1)
    theta, x = table[:, 1], table[:, 3]
    np.testing.assert_allclose(x, slider_crank.slider_position(theta), atol=1e-7)
    assert abs(theta[-1] - theta[0]) > 0.1  # the crank moved


def test_constrained_bench_quick(tmp_path, capsys):
    pytest.importorskip("pinocchio")
    from sinews.bench import constrained

    out = tmp_path / "bench.json"
    rc = constrained.main(["--quick", "--calls", "5", "--json", str(out)])
    assert rc == 0, capsys.readouterr().err
    rows = json.loads(out.read_text())["rows"]
    algos = {r["algorithm"] for r in rows}
    assert "forward_dynamics_constraints[direct]" in algos and "impulses[null_space]" in algos
    for r in rows:
        assert set(r) == {"model", "algorithm", "sinews_us", "peer", "peer_us", "ratio"}
        assert r["sinews_us"] > 0 and r["peer_us"] > 0
        assert r["ratio"] == pytest.approx(r["sinews_us"] / r["peer_us"], rel=1e-2)
    text = capsys.readouterr().out
    assert "DISAGREES" not in text and "pinocchio.constraintDynamics" in text


def test_bench_agreement_check_detects_a_wrong_answer(monkeypatch):
    pytest.importorskip("pinocchio")
    from sinews.bench import constrained

    p = constrained.Problem(seed=1)
    assert all(ok for _, _, ok in constrained.check_agreement(p))
    # break Pinocchio's side (a different torque): every dynamics row must disagree
    p.tau_pin = p.tau_pin + 1.0
    res = constrained.check_agreement(p)
    assert not any(ok for name, _, ok in res if name.startswith("forward_dynamics"))
