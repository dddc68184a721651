"""The direct step of the compiled ``default`` stepper's PGS (sinews.sim._step_direct.polish) and
what it buys on the 5-box stack: checked against the pseudo-inverse, the natural-map error of the
assembled problem and the stack's closed-form physics (at rest)."""

from __future__ import annotations

import numpy as np
import pytest

import sinews.sim._fast_step as F
from sinews.contact import fclib
from sinews.sim import simulate
from sinews.sim import examples as ex
from sinews.sim._step_direct import polish
from sinews.sim.steppers import CoulombStepper


def _sticking_problem(rng, nc=6, nv=12):
    """W = Y Y^T with more rows than dofs (rank nv, like a stack's), and a q for which the
    reactions ``r_true`` strictly inside their cones give u = 0."""
    Y = rng.standard_normal((3 * nc, nv))
    W = Y @ Y.T
    mu = np.full(nc, 0.8)
    r_true = np.zeros(3 * nc)
    r_true[0::3] = rng.uniform(1.0, 2.0, nc)
    r_true[1::3] = 0.05 * rng.standard_normal(nc)
    r_true[2::3] = 0.05 * rng.standard_normal(nc)
    q = -W @ r_true
    cols = np.tile(np.arange(nv)[::-1], (nc, 1)).astype(np.int64)
    ncol = np.zeros((nc, 2), dtype=np.int64)
    ncol[:, 0] = nv
    ncol[:, 1] = nv
    return W, q, mu, r_true, Y, cols, ncol


def _polish(W, q, mu, r, Y, cols, ncol):
    nv = Y.shape[1]
    u = W @ r + q
    G = np.zeros((nv, nv))
    x = np.zeros(nv)
    ibuf = np.zeros(2 * nv + q.shape[0] // 3, dtype=np.int64)
    return polish(W, q, mu, r, u, np.ascontiguousarray(Y.T), cols, ncol, G, x, ibuf)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_direct_step_is_the_least_norm_solution_of_the_sticking_rows(seed):
    rng = np.random.default_rng(seed)
    W, q, mu, r_true, Y, cols, ncol = _sticking_problem(rng)
    r = r_true + 1e-4 * rng.standard_normal(r_true.shape)  # a PGS iterate near the solution
    r0 = r.copy()
    u0 = W @ r0 + q
    assert _polish(W, q, mu, r, Y, cols, ncol)
    # every contact sticking: dr = -W^+ u (least norm), and u = W r + q = 0
    np.testing.assert_allclose(r - r0, -np.linalg.pinv(W, rcond=1e-12) @ u0, rtol=0, atol=1e-9)
    assert np.abs(W @ r + q).max() < 1e-9 * np.abs(q).max()
    prob = fclib.FrictionContactProblem(W, q, mu)
    assert fclib.natural_map_error(prob, r) < 1e-10 < fclib.natural_map_error(prob, r0)


def test_direct_step_keeps_sliding_and_resting_contacts():
    rng = np.random.default_rng(5)
    W, q, mu, r_true, Y, cols, ncol = _sticking_problem(rng)
    r0 = r_true.copy()
    r0[3:6] = 0.0  # contact 1 at rest
    r0[7] = mu[2] * r0[6]  # contact 2 on its cone's boundary (sliding)
    r0[8] = 0.0
    active = np.r_[0:3, 9:18]
    ref = r0.copy()
    ref[active] += 1e-4 * rng.standard_normal(active.size)
    q = -W @ ref  # the sticking rows are solved by ref
    r = r0.copy()
    assert _polish(W, q, mu, r, Y, cols, ncol)
    np.testing.assert_array_equal(r[3:9], r0[3:9])
    Wa = W[np.ix_(active, active)]
    np.testing.assert_allclose(r[active] - r0[active], -np.linalg.pinv(Wa, rcond=1e-12) @ (W @ r0 + q)[active],
                               rtol=0, atol=1e-9)
    assert np.abs((W @ r + q)[active]).max() < 1e-9
    # nothing sticking: no step
    r = np.zeros_like(r0)
    assert not _polish(W, q, mu, r, Y, cols, ncol)
    assert not r.any()


def _settled_stack():
    scene, q0, v0 = ex.box_stack(n=5)
    settle = simulate(scene, q0, v0, 0.3, 1e-3, progress=False)
    return scene, settle.q[-1].copy(), settle.v[-1].copy()


def test_cold_step_on_the_settled_stack_converges_on_the_compiled_path(monkeypatch):
    # from no warm start, plain PGS sweeps stagnate on this problem (the FCLib driver takes over
    # and stops at max_iter); with the direct step the kernel converges in a few dozen sweeps
    scene, q, v = _settled_stack()
    tau = np.zeros(scene.model.nv)
    handed = []
    orig = F.FastCoulomb._general_solve
    monkeypatch.setattr(F.FastCoulomb, "_general_solve", lambda self, *a: handed.append(1) or orig(self, *a))
    st = CoulombStepper()
    out = st.step(scene, q, v, tau, 1e-3)
    assert isinstance(out, F.FastStepOutput) and not handed
    assert out.stats["converged"] and out.stats["iterations"] <= 30 and out.stats["error"] <= st.tol
    # the impulses solve the assembled problem (W is the general path's: test_sim_fast_step)
    fast = st._fast[3]
    k = len(out.contacts)
    m = 3 * k
    prob = fclib.FrictionContactProblem(fast.W[: m * m].reshape(m, m).copy(), fast.cq[:m].copy(),
                                        fast.mu[:k].copy())
    assert fclib.natural_map_error(prob, out.impulses.reshape(-1)) <= st.tol
    # the stack at rest: every box's velocity stays below 1 mm/s, the contact forces carry the
    # weight (impulses sum to m g h per box above each face, 1 kg boxes)
    assert np.abs(out.v).max() < 1e-3
    z = out.contacts.points[:, 2]
    for face in range(5):
        on = np.abs(z - 0.1 * face) < 1e-3
        assert on.sum() == 4
        assert out.impulses[on, 0].sum() == pytest.approx((5 - face) * 9.81 * 1e-3, rel=1e-2)
    # plain PGS (the same kernel without the direct step) cannot converge from there
    monkeypatch.setattr(F.FastCoulomb, "direct", False)
    plain = CoulombStepper()
    assert plain.step(scene, q, v, tau, 1e-3).stats["iterations"] > 100


def test_stack_run_converges_every_step_in_few_sweeps_bit_for_bit():
    scene, q0, v0 = ex.box_stack(n=5)
    a = simulate(scene, q0, v0, 1.0, 1e-3, progress=False)
    b = simulate(scene, q0, v0, 1.0, 1e-3, progress=False)
    assert a.converged.all()
    assert a.iterations.mean() < 15 and a.iterations.max() <= 100
    for name in ("q", "v", "iterations", "solver_error", "contact_impulses"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    drift = a.q[:, 0::7][:, :5] - q0[0::7][:5], a.q[:, 2::7][:, :5] - q0[2::7][:5]
    assert max(np.abs(d).max() for d in drift) < 1e-3  # standing still (the 10 s check: test_sim_examples)


def test_plain_pgs_needs_many_more_sweeps_on_the_stack(monkeypatch):
    monkeypatch.setattr(F.FastCoulomb, "direct", False)
    scene, q0, v0 = ex.box_stack(n=5)
    res = simulate(scene, q0, v0, 0.3, 1e-3, progress=False)
    assert res.iterations.mean() > 25


def test_direct_step_agrees_with_plain_pgs_on_a_mixed_scene(monkeypatch):
    # half-spaces, box-box, sphere-box, sphere-sphere, a point, a capsule and a joint limit
    # (frictionless rows in the sticking set): the same motion as plain PGS sweeps, to the
    # solvers' tolerance, every step converged
    from test_sim_fast_step import _mixed_scene

    scene, q0, v0 = _mixed_scene()
    a = simulate(scene, q0, v0, 0.05, 1e-3, progress=False)
    monkeypatch.setattr(F.FastCoulomb, "direct", False)
    scene, q0, v0 = _mixed_scene()
    b = simulate(scene, q0, v0, 0.05, 1e-3, progress=False)
    assert a.converged.all() and b.converged.all()
    assert np.array_equal(a.num_contacts, b.num_contacts)
    np.testing.assert_allclose(a.q, b.q, atol=1e-6)
    # velocities: plain PGS stops within its natural-map tolerance, which on the box pair's
    # ill-conditioned W leaves velocity errors up to ~3e-4 m/s
    np.testing.assert_allclose(a.v, b.v, atol=1e-3)
    assert a.iterations.sum() <= b.iterations.sum()
