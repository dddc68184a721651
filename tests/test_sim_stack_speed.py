"""The direct step before the first sweep and its kept factor (sinews.sim._step_pgs): the two
forms of the step against the pseudo-inverse, the kept factor's stamp, verdicts judged by the
natural-map error of the assembled problem (never converged above tol), and runs of the 5-box
stack that stay bit-for-bit reproducible across a reset."""

from __future__ import annotations

import numpy as np
import pytest

import sinews.sim._fast_step as F
from sinews.contact import fclib
from sinews.sim import simulate
from sinews.sim import examples as ex
from sinews.sim._step_direct import _direct, polish
from sinews.sim._step_pgs import pgs_blocks
from sinews.sim.steppers import CoulombStepper


def _problem(rng, nc, nv, spread=0.05):
    """W = Y Y^T and q with a solution r_true strictly inside the cones (every contact sticking)."""
    Y = rng.standard_normal((3 * nc, nv))
    W = Y @ Y.T
    mu = np.full(nc, 0.8)
    r_true = np.zeros(3 * nc)
    r_true[0::3] = rng.uniform(1.0, 2.0, nc)
    r_true[1::3] = spread * rng.standard_normal(nc)
    r_true[2::3] = spread * rng.standard_normal(nc)
    q = -W @ r_true
    cols = np.tile(np.arange(nv), (nc, 1)).astype(np.int64)
    ncol = np.full((nc, 2), nv, dtype=np.int64)
    return W, q, mu, r_true, Y, cols, ncol


def _solve(W, q, mu, r, Y, cols, ncol, ibuf, buf, tol=1e-8, max_iter=200):
    m = q.shape[0]
    nb = np.full(m // 3, m // 3, dtype=np.int64)
    nbr = np.tile(np.arange(m // 3), (m // 3, 1)).astype(np.int64)
    scale = 1.0 + np.linalg.norm(q)
    return pgs_blocks(W, q, mu, r, buf, nb, nbr, tol, np.int64(max_iter), 1.0, np.int64(10), scale, np.bool_(False),
                      np.ascontiguousarray(Y.T), cols, ncol, ibuf, np.bool_(True))


def _buffers(m, nv, stamp=True):
    return np.zeros(5 * m + nv * (nv + 1)), np.zeros(2 * nv + m // 3 + (2 if stamp else 0), dtype=np.int64)


@pytest.mark.parametrize("nc, nv", [(3, 12), (6, 12), (4, 12)])
def test_direct_step_is_the_least_norm_step_in_either_form(nc, nv):
    # 9 rows on 12 columns: W_AA's own factor; 18 rows: G = Y_A^T Y_A (rank 12); 12 rows: G
    rng = np.random.default_rng(nc)
    W, q, mu, r_true, Y, cols, ncol = _problem(rng, nc, nv)
    r = r_true + 1e-4 * rng.standard_normal(r_true.shape)
    r0 = r.copy()
    u0 = W @ r0 + q
    G, x = np.zeros((nv, nv)), np.zeros(nv)
    ibuf = np.zeros(2 * nv + nc, dtype=np.int64)
    assert polish(W, q, mu, r, u0.copy(), np.ascontiguousarray(Y.T), cols, ncol, G, x, ibuf)
    np.testing.assert_allclose(r - r0, -np.linalg.pinv(W, rcond=1e-12) @ u0, rtol=0, atol=1e-9)
    assert fclib.natural_map_error(fclib.FrictionContactProblem(W, q, mu), r) < 1e-10


def test_kept_factor_is_stamped_reused_and_dropped():
    rng = np.random.default_rng(7)
    nc, nv = 6, 12
    W, q, mu, r_true, Y, cols, ncol = _problem(rng, nc, nv)
    m = 3 * nc
    buf, ibuf = _buffers(m, nv)
    G = buf[5 * m : 5 * m + nv * nv].reshape(nv, nv)
    x, tmp = buf[5 * m + nv * nv :], np.zeros(m)
    Yt = np.ascontiguousarray(Y.T)
    r = r_true + 1e-4 * rng.standard_normal(m)
    assert _direct(m, W, mu, r, W @ r + q, Yt, cols, ncol, G, x, tmp, ibuf) == 1  # fresh
    assert ibuf[-2] == m and ibuf[-1] == nv
    r = r_true + 1e-4 * rng.standard_normal(m)
    assert _direct(m, W, mu, r, W @ r + q, Yt, cols, ncol, G, x, tmp, ibuf) == 2  # kept (same sticking set)
    assert np.abs(W @ r + q).max() < 1e-9 * np.abs(q).max()  # solved (W has a null space: not r_true)
    r = r_true.copy()
    r[7] = mu[2] * r[6]  # contact 2 on its cone's boundary: another sticking set, a fresh factor
    r[8] = 0.0
    assert _direct(m, W, mu, r, W @ r + q, Yt, cols, ncol, G, x, tmp, ibuf) == 1
    # the solver drops the stamp on a cold start (r = 0) and for another m
    buf2, ibuf2 = _buffers(m, nv)
    r = r_true + 1e-4 * rng.standard_normal(m)
    it, err, conv = _solve(W, q, mu, r, Y, cols, ncol, ibuf2, buf2)
    assert conv and it == 0 and ibuf2[-2] == m  # the direct step before any sweep, on a fresh factor
    r = np.zeros(m)
    _solve(W, q, mu, r, Y, cols, ncol, ibuf2, buf2, max_iter=1)
    assert ibuf2[-2] == 0  # r = 0: cold (PGS' first sweep gives no sticking set to factor yet)
    ibuf2[-2] = m + 3
    r = r_true + 1e-4 * rng.standard_normal(m)
    it, err, conv = _solve(W, q, mu, r, Y, cols, ncol, ibuf2, buf2)
    assert conv and ibuf2[-2] == m  # refactored for this m


@pytest.mark.parametrize("seed", range(4))
def test_a_stale_factor_is_judged_by_the_test_never_trusted(seed):
    # the kept factor is of another W (the previous step's, or far off): the solver's verdict is
    # still the natural-map error of this problem, and an unconverged answer says so
    rng = np.random.default_rng(seed)
    nc, nv = 6, 12
    W, q, mu, r_true, Y, cols, ncol = _problem(rng, nc, nv)
    m = 3 * nc
    buf, ibuf = _buffers(m, nv)
    r = r_true + 1e-3 * rng.standard_normal(m)
    assert _solve(W, q, mu, r, Y, cols, ncol, ibuf, buf)[2]  # makes and keeps a factor
    prob = fclib.FrictionContactProblem(W, q, mu)
    for size in (1e-6, 1e-2, 1.0):
        Y2 = Y + size * rng.standard_normal(Y.shape)  # the next problem, near or far
        W2 = Y2 @ Y2.T
        q2 = -W2 @ r_true
        prob = fclib.FrictionContactProblem(W2, q2, mu)
        r = r_true + 1e-3 * rng.standard_normal(m)
        it, err, conv = _solve(W2, q2, mu, r, Y2, cols, ncol, ibuf, buf, max_iter=3)
        e = fclib.natural_map_error(prob, r)
        assert e == pytest.approx(err, rel=1e-6, abs=1e-15)
        assert e <= 1e-8 if conv else e > 0
        if size == 1e-6:
            assert conv and it == 0  # the kept factor (or a refinement) does it before any sweep


def _settled_stack():
    scene, q0, v0 = ex.box_stack(n=5)
    settle = simulate(scene, q0, v0, 0.3, 1e-3, progress=False)
    return scene, settle.q[-1].copy(), settle.v[-1].copy()


def test_stack_steps_converge_before_any_sweep_and_solve_the_assembled_problem():
    scene, q, v = _settled_stack()
    tau = np.zeros(scene.model.nv)
    st = CoulombStepper()
    st.step(scene, q, v, tau, 1e-3)
    its = []
    for k in range(60):
        out = st.step(scene, q, v, tau, 1e-3)
        assert isinstance(out, F.FastStepOutput) and out.stats["converged"] and out.stats["error"] <= st.tol
        if k % 20 == 0:
            fast = st._fast[3]
            m = 3 * len(out.contacts)
            prob = fclib.FrictionContactProblem(fast.W[: m * m].reshape(m, m).copy(), fast.cq[:m].copy(),
                                                fast.mu[: m // 3].copy())
            assert fclib.natural_map_error(prob, out.impulses.reshape(-1)) <= st.tol
        its.append(out.stats["iterations"])
        q, v = out.q, out.v
    assert np.mean(its) < 0.5  # no sweep on most steps (was 2.8 a step)
    # a repeated step from a solved state takes the warm start as it is
    a = st.step(scene, q, v, tau, 1e-3)
    b = st.step(scene, q, v, tau, 1e-3)
    assert b.stats["iterations"] == 0 and np.array_equal(a.impulses, b.impulses)


def test_runs_are_bit_for_bit_the_same_after_a_reset():
    scene, q, v = _settled_stack()
    tau = np.zeros(scene.model.nv)

    def run(st, n=40):
        qq, vv, out = q, v, []
        for _ in range(n):
            o = st.step(scene, qq, vv, tau, 1e-3)
            qq, vv = o.q, o.v
            out.append(np.concatenate([o.q, o.v, o.impulses.reshape(-1), [o.stats["iterations"]]]))
        return np.array(out)

    st = CoulombStepper()
    first = run(st)
    scene2, q2, v2 = ex.box_stack(n=5)
    simulate(scene2, q2, v2, 0.05, 1e-3, progress=False)
    st.reset()
    again = run(st)  # the kept factor of the first run is dropped by the cold start
    fresh = run(CoulombStepper())
    assert np.array_equal(first, again) and np.array_equal(first, fresh)


def test_stack_stands_still_for_10_s_at_1_ms():
    scene, q0, v0 = ex.box_stack(n=5)
    res = simulate(scene, q0, v0, 10.0, 1e-3, progress=False, record_every=100)
    assert res.converged.all() and res.iterations.mean() < 1.0
    drift = np.abs(res.q[:, 0:35:7] - q0[0:35:7]).max(), np.abs(res.q[:, 1:35:7] - q0[1:35:7]).max()
    assert max(drift) < 1e-3
    assert np.abs(res.q[:, 2:35:7] - q0[2:35:7]).max() < 1e-3
