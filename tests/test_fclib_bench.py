"""``python -m sinews.bench contact`` in quick mode, and its pieces."""

import json
import math

import numpy as np
import pytest

from sinews.bench import contact as bench
from sinews.contact.fclib import load_problem, natural_map_error

KEYS = {"problem", "contacts", "solver", "sinews_error", "sinews_iterations", "sinews_us", "peer",
        "peer_error", "peer_us", "ratio"}


def test_fclib_bench_quick_main_writes_rows(tmp_path):
    pytest.importorskip("pinocchio")
    out = tmp_path / "contact.json"
    plot = tmp_path / "profile.png"
    md = tmp_path / "table.md"
    assert bench.main(["--quick", "--json", str(out), "--plot", str(plot), "--markdown", str(md)]) == 0
    assert md.read_text().count("| Rover4396 | 2 |") == 1
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == len(bench.SINEWS_SOLVERS) * len(bench.PEERS)
    for row in rows:
        assert KEYS <= set(row)
        assert row["problem"] == bench.QUICK_PROBLEM and row["contacts"] == 2
        assert row["sinews_error"] <= 1e-6 and row["sinews_us"] > 0
        if row["ratio"] is not None:
            assert row["peer_error"] <= 1e-6
            assert row["ratio"] == pytest.approx(row["sinews_us"] / row["peer_us"])
        else:
            assert row["peer_error"] is None or row["peer_error"] > 1e-6
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_fclib_bench_peer_answer_is_checked_independently(siconos_dir):
    """The Pinocchio bridge permutes [n, t1, t2] <-> [t1, t2, n]; on a problem Pinocchio's ADMM
    solves, our checker must confirm its answer in FCLib order."""
    pytest.importorskip("pinocchio")
    p = load_problem(siconos_dir / "fc3d/FC3D_Example1.dat")
    r, iters, sec = bench.run_peer(p, "pin-admm", 1e-10, 2000, 1, 0.0)
    assert r is not None and iters > 0 and sec > 0
    assert natural_map_error(p, r) <= 1e-6
    # the same answer read without the permutation is not a solution
    lam = r[bench._pin_permutation(p.contacts)]
    assert natural_map_error(p, lam) > 1e-3


def test_fclib_bench_permutation_roundtrip():
    perm = bench._pin_permutation(3)
    np.testing.assert_array_equal(perm[:3], [1, 2, 0])
    assert sorted(perm) == list(range(9))


def test_fclib_bench_rows_and_ratio_rules():
    runs = []
    for who, err, us in [("pgs", 1e-9, 10.0), ("admm", 1e-3, 50.0), ("auto", 1e-9, 12.0),
                         ("pin-pgs", 1e-7, 20.0), ("pin-admm", 2e-6, 5.0)]:
        runs.append({"problem": "P", "contacts": 1, "who": who, "error": err, "iterations": 3,
                     "us": us, "converged": err <= 1e-6})
    rows = bench.rows_from_runs(runs)
    by = {(r["solver"], r["peer"]): r for r in rows}
    assert by[("pgs", "pin-pgs")]["ratio"] == pytest.approx(0.5)
    assert by[("pgs", "pin-admm")]["ratio"] is None  # peer not accepted
    assert by[("admm", "pin-pgs")]["ratio"] is None  # sinews not accepted
    assert math.isclose(by[("auto", "pin-pgs")]["ratio"], 0.6)


def test_fclib_bench_profile_png(tmp_path):
    runs = []
    for k, name in enumerate(["A", "B", "C"]):
        for j, who in enumerate(bench.SINEWS_SOLVERS + bench.PEERS):
            runs.append({"problem": name, "contacts": 1, "who": who, "error": 1e-9,
                         "iterations": 1, "us": 10.0 * (1 + j + k), "converged": (j + k) % 3 != 0})
    path = bench.performance_profile(runs, tmp_path / "p.png")
    assert path.stat().st_size > 1000


def test_fclib_bench_unknown_problem_filter():
    assert bench.main(["--problems", "no-such-problem-name", "--no-plot"]) == 1


# ------------------------------------------------------------------------------------------
# Large sparse problems (sinews.bench._scale_fclib): never densified, bounded memory
# ------------------------------------------------------------------------------------------

SCALE_KEYS = {"case", "contacts", "solver", "solve_s", "peak_mb", "error", "converged",
              "iterations"}


def test_fclib_scale_generator_is_a_well_posed_sparse_problem():
    import scipy.sparse as sp

    from sinews.bench._scale_fclib import make_problem

    p = make_problem(300, seed=4)
    assert p.contacts == 300 and sp.issparse(p.W)
    W = p.W.toarray()
    np.testing.assert_allclose(W, W.T, atol=1e-14 * np.abs(W).max())
    assert np.linalg.eigvalsh(W).min() > 0  # compliance: positive definite
    assert p.W.nnz < 0.2 * p.size**2 and np.any(p.q[0::3] < 0)


def test_fclib_scale_1000_contacts_in_bounded_memory():
    """Regression (adversarial run): a 10,000-contact FCLib problem made dense_W allocate 7 GB
    and ADMM run out of memory.  At 1,000 contacts (m = 3000; a dense W alone would take
    72 MB) every solver works on the CSR matrix and stays within a few MB."""
    from sinews.bench import _scale_fclib as scale

    rows = scale.run(sizes=(1000,))
    assert [r["solver"] for r in rows] == list(scale.SOLVERS)
    for row in rows:
        assert SCALE_KEYS <= set(row)
        assert row["contacts"] == 1000 and row["path"] == "sparse"
        assert row["converged"] and row["error"] <= 1e-8
        assert row["peak_mb"] < 20.0, row
        assert row["solve_s"] > 0 and row["iterations"] > 0


@pytest.mark.slow
def test_fclib_scale_10000_contacts_pgs():
    """The 10,000-contact case (~0.8M non-zeros) with PGS: 2-6 s on the 2-core VM;
    ADMM (~30 s) is left to ``python -m sinews.bench._scale_fclib``."""
    from sinews.bench import _scale_fclib as scale

    problem = scale.make_problem(10000)
    for solver in ("pgs",):
        row = scale.solve_once(problem, solver)
        assert row["converged"] and row["error"] <= 1e-8 and row["path"] == "sparse"
        assert row["peak_mb"] < 100.0, row
    assert problem._dense is None  # never densified
