"""The Siconos problems are package data, reachable through the public :mod:`sinews.data`, and
``python -m sinews.bench contact`` finds them wherever sinews is installed (the wheel itself is
checked by tests/test_packaging_wheel.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import sinews
from sinews import data
from sinews.bench import contact as bench

ROOT = Path(__file__).resolve().parents[1]


def test_problems_live_in_the_package(monkeypatch):
    monkeypatch.delenv("SINEWS_SICONOS_DIR", raising=False)
    root = data.siconos_dir()
    assert root == Path(sinews.__file__).resolve().parent / "data" / "siconos"
    counts = {kind: len(data.siconos_problems(kind)) for kind in data.SICONOS_KINDS}
    assert counts == {"lcp": 20, "mlcp": 12, "fc2d": 3, "fc3d": 32, "fclib": 5}
    assert (root / "LICENSE-Apache-2.0.txt").is_file() and (root / "README.md").is_file()
    assert data.path("siconos", "fc3d", "Rover4396.dat").is_file()
    assert not (ROOT / "data" / "siconos").exists(), "one copy of the problems: src/sinews/data/siconos"


def test_data_arguments_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="kind must be one of"):
        data.siconos_problems("fc4d")
    with pytest.raises(FileNotFoundError, match="'siconos/nope.dat' does not exist.*lcp"):
        data.path("siconos", "nope.dat")
    for bad in ("..", "a/b", "", 3):
        with pytest.raises(ValueError, match="parts"):
            data.path("siconos", bad)


def test_environment_variable_overrides_the_shipped_folder(monkeypatch, tmp_path):
    (tmp_path / "fc3d").mkdir()
    monkeypatch.setenv("SINEWS_SICONOS_DIR", str(tmp_path))
    assert data.siconos_dir() == tmp_path and data.siconos_problems("fc3d") == []
    # an empty collection: the bench says where it looked, never a bare "no problems matched"
    assert bench.main(["--quick", "--no-plot"]) == 1


def test_bench_empty_collection_message(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SINEWS_SICONOS_DIR", str(tmp_path))
    assert bench.main(["--quick", "--no-plot"]) == 1
    err = capsys.readouterr().err
    assert str(tmp_path) in err and "SINEWS_SICONOS_DIR" in err


def test_bench_contact_runs_a_chosen_solver(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("SINEWS_SICONOS_DIR", raising=False)
    out = tmp_path / "rows.json"
    assert bench.main(["--quick", "--solvers", "pgs", "--no-plot", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    ran = {r["solver"]: r for r in rows}
    assert ran["pgs"]["sinews_error"] <= 1e-6 and ran["pgs"]["sinews_us"] > 0
    assert ran["admm"]["sinews_error"] is None and ran["auto"]["sinews_error"] is None
    assert "Rover4396" in capsys.readouterr().out


def test_docs_example_problem_loads_from_the_package():
    pytest.importorskip("h5py")
    from sinews.contact.fclib import load_problem

    p = load_problem(data.siconos_dir() / "fclib" / "Box_Stacks-i0122-82-5.hdf5")
    assert p.contacts == 82 and p.kind == "global" and np.all(np.isfinite(p.q))
