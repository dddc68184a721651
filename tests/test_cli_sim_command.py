"""The ``sinews simulate FILE`` command (URDF and MJCF), and ``sinews demo``'s default."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from sinews import cli

pytest.importorskip("urdf_parser_py", reason='URDF scenes need pip install "sinews[urdf]"')

BOX_URDF = """<robot name="box">
  <link name="body">
    <inertial><mass value="2.0"/><inertia ixx="0.0083" iyy="0.0083" izz="0.0133" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
</robot>
"""

BALL_MJCF = """<mujoco model="ball">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="ball" pos="0 0 0.3"><freejoint/><geom name="ball" type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
</mujoco>
"""


def test_cli_sim_urdf_writes_trajectory_summary_plots_and_animation(tmp_path, capsys):
    src = tmp_path / "box.urdf"
    src.write_text(BOX_URDF)
    out = tmp_path / "run"
    assert cli.main(["simulate", str(src), "--duration", "0.4", "--dt", "0.002", "--drop", "0.1",
                     "--stepper", "default", "--out", str(out), "--fps", "20"]) == 0
    text = capsys.readouterr()
    assert "Summary:" in text.out and "box.html" in text.out
    names = {p.name for p in out.iterdir()}
    assert names == {"box_trajectory.npz", "box_summary.json", "box_energy.png", "box_contact_forces.png",
                     "box_positions.png", "box.html"}
    summary = json.loads((out / "box_summary.json").read_text())
    assert summary["stepper"] == "default" and summary["dt_s"] == 0.002 and summary["steps"] == 200
    assert summary["animation"] == "box.html" and "box.html" in summary["files"]
    assert summary["source"] == str(src) and summary["model"] == "box"
    for plot, axes in summary["plots"].items():  # units on every axis
        for ax in axes:
            assert re.search(r"\[.+\]$", ax["x"]) and re.search(r"\[.+\]$", ax["y"]), (plot, ax)
    data = np.load(out / "box_trajectory.npz")
    units = json.loads(str(data["units"]))
    assert units["t"] == "s" and units["contact_forces"] == "N"
    t, q = data["t"], data["q"]
    assert q[0, 2] == pytest.approx(0.05 + 0.1, abs=1e-12)  # lowest corner 0.1 m above the ground
    assert q[-1, 2] == pytest.approx(0.05, abs=1e-4)  # resting on its face (half height)
    # at rest the ground carries the weight
    F = np.zeros((len(t), 3))
    np.add.at(F, data["contact_sample"], data["contact_forces"])
    assert F[-1, 2] == pytest.approx(2.0 * 9.81, rel=1e-3)
    page = (out / "box.html").read_text()
    assert "sinews-data" in page and "box (sinews)" in page


def test_cli_sim_mjcf_uses_the_file_time_step(tmp_path, capsys):
    pytest.importorskip("mujoco")
    src = tmp_path / "ball.xml"
    src.write_text(BALL_MJCF)
    out = tmp_path / "m"
    assert cli.main(["simulate", str(src), "--duration", "0.5", "--out", str(out), "--quiet", "--no-html",
                     "--no-plots"]) == 0
    assert "dt = 0.002 s" in capsys.readouterr().out
    assert {p.name for p in out.iterdir()} == {"ball_trajectory.npz", "ball_summary.json"}
    q = np.load(out / "ball_trajectory.npz")["q"]
    assert q[-1, 2] == pytest.approx(0.1, abs=1e-6)


@pytest.mark.parametrize("args, message", [
    (["missing.urdf"], "does not exist"),
    (["{file_txt}"], "must be a .urdf or an MJCF .xml"),
    (["{urdf}", "--stepper", "rk4"], "unknown stepper 'rk4'"),
    (["{urdf}", "--duration", "-1"], "--duration must be a positive number"),
    (["{urdf}", "--dt", "nan"], "--dt must be a positive number"),
    (["{urdf}", "--drop", "-0.1"], "--drop must be >= 0"),
    (["{urdf}", "--out", "{file_txt}"], "is not a folder"),
])
def test_cli_sim_bad_usage_exits_2(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "box.urdf").write_text(BOX_URDF)
    (tmp_path / "f.txt").write_text("x")
    args = [a.format(urdf=tmp_path / "box.urdf", file_txt=tmp_path / "f.txt") for a in args]
    assert cli.main(["simulate", *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_sim_failure_exits_1(tmp_path, capsys):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/><joint name='j' type='warp'/></robot>")
    assert cli.main(["simulate", str(bad), "--duration", "0.1", "--out", str(tmp_path / "o")]) == 1
    assert "sinews simulate: error" in capsys.readouterr().err


def test_cli_sim_default_demo_is_the_quadruped_drop():
    from sinews import demos

    assert cli.DEFAULT_DEMO == "quadruped"
    found = demos.discover()
    assert {"quadruped", "humanoid-fall"} <= set(found)
    assert cli.build_parser().parse_args(["demo"]).name == "quadruped"
