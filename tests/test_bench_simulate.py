"""``python -m sinews.bench simulate`` (sinews.bench.simulate): its rows, quickly, on the box stack."""

import json

import pytest

pytest.importorskip("mujoco")


def test_simulate_bench_rows(tmp_path, capsys):
    from sinews.bench.simulate import main

    out = tmp_path / "rows.json"
    assert main(["--quick", "--models", "box_stack", "--steppers", "default", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    step, run = rows
    assert step["model"] == "box_stack" and step["algorithm"] == "step default"
    # five boxes resting: 4 corners each; warm, the direct step solves it before any sweep
    assert step["contacts"] == 20 and step["solver_iterations"] == 0
    for key in ("sinews_us", "peer_us", "sinews_us_5_states", "peer_us_5_states"):
        assert step[key] > 0
    assert step["ratio"] == pytest.approx(step["sinews_us"] / step["peer_us"], rel=0.02)
    # MuJoCo timed from its own run's state (every face pressed: soft contacts), and from sinews'
    assert step["mujoco_contacts"] == 20
    assert 0 <= step["mujoco_contacts_sinews_state"] <= 20 and step["peer_us_sinews_state"] > 0
    assert step["ratio_sinews_state"] == pytest.approx(step["sinews_us_vs_sinews_state"] / step["peer_us_sinews_state"],
                                                       rel=0.02)
    # consecutive steps along each engine's own trajectory (the solver works: the warm start is
    # the previous step's answer); the stack keeps resting, so the direct step (before any
    # sweep) solves nearly every step
    assert step["sinews_us_trajectory"] > 0 and step["peer_us_trajectory"] > 0
    assert step["ratio_trajectory"] == pytest.approx(step["sinews_us_trajectory"] / step["peer_us_trajectory"], rel=0.02)
    assert 0 <= step["solver_iterations_trajectory"] < 1
    assert run["model"] == "box_stack 0.2 s run" and "default" in run["algorithm"]
    assert run["steps_per_second"] > 0 and run["peer_steps_per_second"] > 0
    assert run["final_base_height_m"] == pytest.approx(0.05, abs=2e-3)  # the bottom box still rests
    assert "steps/s" in capsys.readouterr().out
