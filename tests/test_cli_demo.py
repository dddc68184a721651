"""The ``sinews`` command line and the demo registry."""

import json
import struct
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import sinews
from sinews import cli, demos

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "sinews.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def png_size(path: Path):
    """(width, height) from a PNG header; asserts the signature and the IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def test_cli_demo_quick_writes_files(tmp_path):
    out = tmp_path / "result"
    proc = run_cli("demo", "pendulum", "--quick", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "energy_drift_rel" in proc.stdout and "steps" in proc.stdout and "wall_time_s" in proc.stdout
    names = {"pendulum.png", "pendulum_trajectory.npz", "pendulum_trajectory.csv", "pendulum_summary.json"}
    assert names <= {p.name for p in out.iterdir()}
    width, height = png_size(out / "pendulum.png")
    assert width > 500 and height > 300
    import matplotlib.image

    assert matplotlib.image.imread(out / "pendulum.png").shape[:2] == (height, width)
    summary = json.loads((out / "pendulum_summary.json").read_text())
    assert summary["steps"] == 1000
    assert summary["energy_drift_rel"] < 1e-6
    assert summary["max_kinetic_energy_J"] > 10.0  # the pendulum did fall
    traj = np.load(out / "pendulum_trajectory.npz")
    assert traj["q"].shape == (1001, 3) and traj["t"][-1] == pytest.approx(1.0)
    csv = (out / "pendulum_trajectory.csv").read_text().splitlines()
    assert csv[0] == "t,q1,q2,q3,v1,v2,v3,energy" and len(csv) == 1002
    # the stored states are the physics: energy column = T + V recomputed
    from sinews.demos.pendulum import build_model

    m = build_model()
    k = 500
    assert traj["energy"][k] == pytest.approx(sinews.mechanical_energy(m, traj["q"][k], traj["v"][k]), abs=1e-9)


def test_cli_demo_list():
    proc = run_cli("demo", "--list")
    assert proc.returncode == 0
    assert "pendulum" in proc.stdout and "3-link pendulum" in proc.stdout


def test_cli_demo_unknown_name_exits_2_with_the_list(tmp_path):
    proc = run_cli("demo", "no-such-demo", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "unknown demo 'no-such-demo'" in proc.stderr and "pendulum" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_cli_version_and_help(capsys):
    for argv in (["--version"], ["--help"], ["demo", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert f"sinews {sinews.__version__}" in out
    assert "usage: sinews [-h] [--version]" in out and "demo" in out
    assert "usage: sinews demo" in out and "--quick" in out and "--out" in out and "--list" in out


def test_cli_no_command_prints_help(capsys):
    assert cli.main([]) == 2
    assert "usage: sinews" in capsys.readouterr().out


def test_cli_console_script_is_declared():
    scripts = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert scripts.get("sinews") == "sinews.cli:main"


def test_cli_demo_default_out_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "DEFAULT_DEMO", "pendulum")  # the default is the (slower) quadruped
    assert cli.main(["demo", "--quick"]) == 0
    out = tmp_path / "sinews-demo-pendulum"
    assert (out / "pendulum.png").is_file()
    assert "Summary:" in capsys.readouterr().out


def test_cli_demo_out_is_a_file(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert cli.main(["demo", "--quick", "--out", str(f)]) == 2
    assert "not a folder" in capsys.readouterr().err


# ----------------------------------------------------------------------------- registry
@pytest.fixture
def extra_demo_dir(tmp_path, monkeypatch):
    """A second folder on the sinews.demos package path, for throw-away demo modules."""
    folder = tmp_path / "more_demos"
    folder.mkdir()
    monkeypatch.setattr(demos, "__path__", [*demos.__path__, str(folder)])
    yield folder
    for name in list(sys.modules):
        if name.startswith("sinews.demos.zz_test_"):
            del sys.modules[name]


def test_cli_registry_discovers_new_modules_without_edits(extra_demo_dir, tmp_path, capsys):
    folder = extra_demo_dir
    (folder / "zz_test_hello.py").write_text(textwrap.dedent('''
        NAME = "hello"
        DESCRIPTION = "writes a greeting"

        def run(out_dir, quick=False):
            path = out_dir / "hello.txt"
            path.write_text("hello" if quick else "hello, world")
            return {"files": [str(path)], "summary": {"quick": quick, "answer": 0.5}}
    '''))
    found = demos.discover()
    assert "hello" in found and "pendulum" in found
    assert found["hello"].description == "writes a greeting"
    assert cli.main(["demo", "--list"]) == 0
    assert "hello" in capsys.readouterr().out
    out = tmp_path / "h"
    assert cli.main(["demo", "hello", "--quick", "--out", str(out)]) == 0
    assert (out / "hello.txt").read_text() == "hello"
    text = capsys.readouterr().out
    assert "answer" in text and "0.5" in text


def test_cli_registry_skips_broken_modules(extra_demo_dir):
    folder = extra_demo_dir
    (folder / "zz_test_broken.py").write_text("raise RuntimeError('boom')\n")
    (folder / "zz_test_incomplete.py").write_text("NAME = 'incomplete'\n")
    with pytest.warns(RuntimeWarning) as record:
        found = demos.discover()
    assert "pendulum" in found and "incomplete" not in found
    messages = " ".join(str(w.message) for w in record)
    assert "zz_test_broken" in messages and "zz_test_incomplete" in messages


def test_cli_demo_failure_exits_1(extra_demo_dir, tmp_path, capsys):
    folder = extra_demo_dir
    (folder / "zz_test_fails.py").write_text(textwrap.dedent('''
        NAME = "fails"
        DESCRIPTION = "always fails"

        def run(out_dir, quick=False):
            raise ValueError("no luck")
    '''))
    assert cli.main(["demo", "fails", "--out", str(tmp_path / "f")]) == 1
    assert "no luck" in capsys.readouterr().err


def test_cli_registry_get_unknown_lists_names():
    with pytest.raises(KeyError, match="name: unknown demo 'nope'.*pendulum"):
        demos.get("nope")
