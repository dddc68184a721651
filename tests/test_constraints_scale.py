"""Large constraint sets: thousands of point contacts on a 100-body tree.

* binding is linear in the number of contacts (no contacts x contacts table) and a set with
  many more rows than coordinates keeps no rows x rows matrix;
* the row-compressed solve (:mod:`sinews.constraints._thin`) gives the answers of the dense
  path (qdd, the constraint forces ``G^T lambda`` and the minimum-norm ``lambda``, to 1e-9) for
  every method, for dynamics and impulses, full-rank and rank-deficient ``G``;
* 1,000 and 10,000 contacts are solved in bounded memory (tracemalloc).
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

import sinews.constraints._thin as thin
from sinews.bench._scale_constraints import build_problem, run
from sinews.constraints import (
    IMPULSE_METHODS,
    METHODS,
    ConstraintSet,
    compute_constraint_impulses,
    constraint_jacobian,
    forward_dynamics_constraints,
)

TOL = 1e-9


def _rel(a, b):
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def _solve_both(model, add_rows, call, monkeypatch):
    """``call(cs)`` on the thin path and on the dense path (threshold raised), each on its own
    freshly bound set."""
    out = []
    for threshold in (thin.THIN_MIN_ROWS, 10**9):
        monkeypatch.setattr(thin, "THIN_MIN_ROWS", threshold)
        cs = add_rows(ConstraintSet()).bind(model)
        assert thin.uses_thin_path(cs) == (threshold < 10**9)
        out.append((call(cs), cs))
    return out


def _check_agreement(model, q, thin_res, dense_res, x_attr, lam_attr, cs):
    G = constraint_jacobian(model, q, cs)
    x1, l1 = getattr(thin_res, x_attr), getattr(thin_res, lam_attr)
    x0, l0 = getattr(dense_res, x_attr), getattr(dense_res, lam_attr)
    assert _rel(x1, x0) <= TOL
    assert _rel(G.T @ l1, G.T @ l0) <= TOL
    assert _rel(l1, l0) <= TOL  # both minimum-norm
    assert thin_res.rank == dense_res.rank and thin_res.least_squares and dense_res.least_squares
    assert thin_res.converged == dense_res.converged


@pytest.mark.parametrize("method", METHODS)
def test_thin_path_matches_dense_path_on_200_contacts(method, monkeypatch):
    """200 contacts (600 rows) on the 100-body revolute tree (nv = 100, rank(G) = nv):
    consistent (v = 0) and inconsistent (random v: the least-squares compromise) systems, with
    external forces."""
    model, add_rows, q, v, tau = build_problem(200, 1)
    rng = np.random.default_rng(2)
    f_ext = np.zeros((model.nbodies, 6))
    f_ext[5] = rng.normal(size=6)
    for vel in (v, rng.normal(size=model.nv)):
        (r1, cs), (r0, _) = _solve_both(
            model, add_rows, lambda cs: forward_dynamics_constraints(model, q, vel, tau, cs, method=method, f_ext=f_ext),
            monkeypatch)
        _check_agreement(model, q, r1, r0, "qdd", "multipliers", cs)
        assert r1.rank == model.nv


def test_thin_path_on_an_ill_conditioned_rank_deficient_set(monkeypatch):
    """120 contacts (360 rows) on the spherical-joint tree (nv = 300, rank(G) = 264, the smallest
    kept singular value of L^-T G^T is 5e-4 of the largest: cond(K) ~ 5e6), random v.  At this
    conditioning rounding (which also depends on BLAS threading) moves the answers by up to a
    few 1e-9, so every answer, thin or dense, is compared with the dense null-space answer
    (QR-based, the most accurate) at 1e-8.  (With single-threaded BLAS the thin answers of all
    four methods agree with it to about 1e-12: the thin path drops the 36 redundant directions
    before solving, so each method solves a regular system.)"""
    model, add_rows, q, _, tau = build_problem(120, 1, ("Spherical",))
    rng = np.random.default_rng(2)
    vel = rng.normal(size=model.nv)
    out = {}
    for method in METHODS:
        (r1, cs), (r0, _) = _solve_both(
            model, add_rows, lambda cs: forward_dynamics_constraints(model, q, vel, tau, cs, method=method), monkeypatch)
        out[method] = r1, r0
        assert r1.rank == r0.rank < model.nv and not r1.converged and not r0.converged
    G = constraint_jacobian(model, q, cs)
    ref = out["null_space"][1]
    for method, (r1, r0) in out.items():
        for x in (r1, r0):
            assert _rel(x.qdd, ref.qdd) <= 10 * TOL and _rel(G.T @ x.multipliers, G.T @ ref.multipliers) <= 10 * TOL
            assert _rel(x.multipliers, ref.multipliers) <= 10 * TOL


@pytest.mark.parametrize("method", IMPULSE_METHODS)
def test_thin_path_matches_dense_path_for_impulses(method, monkeypatch):
    model, add_rows, q, _, _ = build_problem(120, 3)
    rng = np.random.default_rng(4)
    qd = rng.normal(size=model.nv)
    target = rng.normal(size=360) * 1e-3
    for tv in (None, target):
        (r1, cs), (r0, _) = _solve_both(
            model, add_rows, lambda cs: compute_constraint_impulses(model, q, qd, cs, method=method, target_velocity=tv),
            monkeypatch)
        _check_agreement(model, q, r1, r0, "qd_plus", "impulses", cs)


@pytest.mark.parametrize("method", METHODS)
def test_thin_path_matches_dense_path_rank_deficient(method, monkeypatch):
    """Contacts on a few bodies only: rank(G) < nv < rows.  With v in the null space of G the
    system is consistent (converged); Baumgarte terms on some groups."""
    model, _, q, _, tau = build_problem(10, 5)
    rng = np.random.default_rng(6)
    bodies = [3, 17, 40]
    pts = rng.uniform(-0.3, 0.3, (100, 3))

    def add_rows(cs):
        for k, p in enumerate(pts):
            for n in np.eye(3):
                cs.add_contact_constraint(bodies[k % 3], p, n, name=f"c{k}" if n[0] else None)
        cs.enable_baumgarte("c0", time_constant=0.1)
        return cs

    cs0 = add_rows(ConstraintSet()).bind(model)
    G = constraint_jacobian(model, q, cs0)
    r = np.linalg.matrix_rank(G)
    assert r < model.nv < cs0.size
    _, _, Vt = np.linalg.svd(G)
    v = Vt[r:].T @ rng.normal(size=model.nv - r)  # G v = 0
    (r1, cs), (r0, _) = _solve_both(
        model, add_rows, lambda cs: forward_dynamics_constraints(model, q, v, tau, cs, method=method), monkeypatch)
    _check_agreement(model, q, r1, r0, "qdd", "multipliers", cs)
    assert r1.rank == r and r1.converged


def test_kokkevis_batch_test_wrenches_match_the_groups(monkeypatch):
    """The vectorised contact test wrenches of large sets equal the groups' wrench_entries."""
    from sinews.constraints._kinematics import ConstraintKinematics
    from sinews.constraints.kokkevis import _test_wrenches

    model, add_rows, q, v, _ = build_problem(100, 8)
    cs = add_rows(ConstraintSet()).bind(model)
    kin = ConstraintKinematics(model, q, v)
    batch = _test_wrenches(model, kin, cs, cs.size)
    monkeypatch.setattr(thin, "THIN_MIN_ROWS", 10**9)
    loop = _test_wrenches(model, kin, cs, cs.size)
    assert np.allclose(batch, loop, rtol=0, atol=1e-12)


def test_small_sets_keep_their_paths():
    """The compiled kernel of small contacts-only sets is kept; the threshold is documented."""
    model, add_rows, q, v, tau = build_problem(100, 0)
    cs = add_rows(ConstraintSet(), 4).bind(model)
    assert cs._compiled is not None and not thin.uses_thin_path(cs)
    assert not thin.is_thin(255, 10) and thin.is_thin(256, 10) and not thin.is_thin(1000, 1000)
    assert thin.is_thin(1001, 1000)
    big = add_rows(ConstraintSet(), 100).bind(model)  # 300 rows > nv = 100
    assert big._compiled is None and thin.uses_thin_path(big)


def test_binding_is_linear_and_holds_no_rows_squared_arrays():
    """Binding 1,000 and 4,000 contacts: no contacts x contacts table (the old bind built one in
    a Python double loop: 5 s and 400 MB for 1,000 contacts)."""
    peaks, times = [], []
    for n in (1000, 4000):
        model, add_rows, *_ = build_problem(n, 0)
        cs = add_rows(ConstraintSet())
        tracemalloc.start()
        t0 = time.perf_counter()
        cs.bind(model)
        times.append(time.perf_counter() - t0)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert cs._compiled is None
    assert peaks[1] < 8 * peaks[0] + 2**20 and peaks[1] < 20 * 2**20  # linear, a few MB
    assert times[1] < 5.0


def _bounded_solve(n, limit_mb, method="range_space_sparse"):
    row = run((n,), method=method)[0]
    assert row["path"] == "thin" and row["least_squares"] and row["converged"]
    assert row["rank"] == row["nv"] and row["rows"] == 3 * n
    assert row["peak_mb"] < limit_mb, row
    return row


def test_1000_contacts_bind_and_solve_in_bounded_memory():
    """1,000 contacts (3,000 rows): the old path peaked at ~430 MB traced (a 3000 x 3000 K and
    a contacts x contacts table); now a few MB."""
    _bounded_solve(1000, 50)


@pytest.mark.parametrize("method", METHODS)
def test_1000_contacts_every_method(method):
    _bounded_solve(1000, 100, method)


@pytest.mark.slow
def test_10000_contacts_bind_and_solve_under_2_gb():
    """10,000 contacts (30,000 rows) on the 100-body tree: bind + solve traced memory < 2 GB
    (about 70 MB; the old path needed 2.4 GB to bind and 7.8 GB to solve)."""
    row = _bounded_solve(10000, 2048)
    assert row["bind_s"] < 10.0


def test_bench_rows_have_the_documented_keys():
    row = run((100,))[0]
    for key in ("case", "contacts", "bind_s", "solve_s", "peak_mb", "rows", "nv", "path", "rss_mb"):
        assert key in row
    assert row["contacts"] == 100 and row["path"] == "thin" and isinstance(row["case"], str)
