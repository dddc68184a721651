"""Property-based hardening of the FCLib public API (``sinews.contact.fclib``).

Every array argument of every public function is fed variants of a valid value -- other shapes,
every dtype family (ints, unsigned, float32, bool, complex, datetime, strings, objects), NaN,
infinity, extreme magnitudes, read-only and non-contiguous arrays -- and malformed FCLib HDF5
and Siconos ``.dat`` files are generated and read.  The properties:

* each call returns a result or raises ``ValueError`` whose message names the argument (files:
  the path), never another exception or a crash;
* a solver result marked converged has ``natural_map_error(problem, r) <= tol`` on the problem
  the user passed in;
* solving one problem from several threads gives the serial answers.
"""

from __future__ import annotations

import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from sinews.contact import fclib
from sinews.contact.fclib import (FrictionContactProblem, natural_map_error, natural_map_residual,
                                  project_on_cone, read_fclib, read_siconos_dat, solve, solve_admm,
                                  solve_pgs)

SOLVERS = {"pgs": solve_pgs, "admm": solve_admm, "auto": solve}
FAST = settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])

W0 = np.array([[4.0, 1.0, 0.0, 0.5, 0.0, 0.0], [1.0, 3.0, 0.5, 0.0, 0.2, 0.0],
               [0.0, 0.5, 2.0, 0.0, 0.0, 0.1], [0.5, 0.0, 0.0, 5.0, 1.0, 0.0],
               [0.0, 0.2, 0.0, 1.0, 4.0, 0.3], [0.0, 0.0, 0.1, 0.0, 0.3, 3.0]])
Q0 = np.array([-1.0, 0.3, -0.2, -0.5, 2.0, 0.1])
MU0 = np.array([0.3, 0.8])
P0 = FrictionContactProblem(W0, Q0, MU0)


# ------------------------------------------------------------------------------------------
# Variants of a valid array
# ------------------------------------------------------------------------------------------

DTYPES = ["float64", "float32", "int64", "int8", "uint16", "bool", "complex128",
          "datetime64[s]", "timedelta64[s]", "U4", "object"]
VALUES = ["same", "nan", "inf", "-inf", "huge", "tiny", "zero", "negative"]


@st.composite
def variant(draw, good):
    """``good`` or a variant of it: (array-like, whether it is still a valid argument)."""
    good = np.asarray(good, dtype=float)
    valid = True
    kind = draw(st.sampled_from(["same", "values", "dtype", "shape", "readonly", "strided",
                                 "list", "scalar"]))
    a = good.copy()
    if kind == "values":
        how = draw(st.sampled_from(VALUES))
        idx = draw(st.integers(0, max(a.size - 1, 0)))
        if a.size:
            flat = a.reshape(-1)
            flat[idx] = {"same": flat[idx], "nan": np.nan, "inf": np.inf, "-inf": -np.inf,
                         "huge": 1e300, "tiny": 1e-300, "zero": 0.0, "negative": -1.0}[how]
            valid = how not in ("nan", "inf", "-inf")
        return a, valid, how
    if kind == "dtype":
        dt = draw(st.sampled_from(DTYPES))
        if dt.startswith(("datetime", "timedelta")):
            a = a.astype(np.int64).astype(dt)
        elif dt == "U4":
            a = a.astype(str).astype("U4")
        elif dt == "object":
            a = a.astype(object)
        else:
            with np.errstate(all="ignore"):
                a = a.astype(dt)
        return a, dt in ("float64", "float32", "int64", "int8", "uint16"), dt
    if kind == "shape":
        shape = draw(st.sampled_from(["extra", "short", "column", "empty", "2d"]))
        if shape == "extra":
            a = np.concatenate([a.reshape(-1), [1.0]])
        elif shape == "short":
            a = a.reshape(-1)[:-1]
        elif shape == "column":
            a = a.reshape(-1, 1)
        elif shape == "empty":
            a = np.zeros(0)
        else:
            a = np.stack([a.reshape(-1)] * 2)
        return a, False, shape
    if kind == "readonly":
        a.flags.writeable = False
        return a, True, kind
    if kind == "strided":
        big = np.zeros(a.shape + (2,))
        big[..., 0] = a
        view = big[..., 0]
        assert not view.flags.c_contiguous or view.size <= 1
        return view, True, kind
    if kind == "list":
        return a.tolist(), True, kind
    if kind == "scalar":
        return 1.0, False, kind
    return a, True, kind


def expect_value_error_naming(fn, name, *args, **kwargs):
    """Call fn: a result, or a ValueError whose message names ``name``."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        assert name in str(exc), f"{name!r} not in {exc!r}"
        return None


# ------------------------------------------------------------------------------------------
# Problems, checker and projection
# ------------------------------------------------------------------------------------------


@FAST
@given(data=st.data(), which=st.sampled_from(["W", "q", "mu"]), sparse_W=st.booleans())
def test_problem_construction_validates_every_array(data, which, sparse_W):
    args = {"W": W0, "q": Q0, "mu": MU0}
    value, valid, how = data.draw(variant(args[which]))
    if which == "W" and sparse_W and isinstance(value, np.ndarray) and value.ndim == 2 \
            and value.dtype.kind in "iufcb":
        value = sp.csr_matrix(value)
    args[which] = value
    p = expect_value_error_naming(FrictionContactProblem, which, **args)
    if p is None:
        return
    if which == "mu" and how == "negative":
        pytest.fail("a negative friction coefficient was accepted")
    assert p.W.dtype == np.float64 and p.q.dtype == np.float64 and p.mu.dtype == np.float64
    assert np.all(np.isfinite(p.q)) and np.all(np.isfinite(p.mu)) and np.all(p.mu >= 0)
    for method in SOLVERS.values():
        if method is not solve_admm and not p._diag_positive:
            continue
        res = method(p, tol=1e-8, max_iter=50)
        assert not res.converged or natural_map_error(p, res.r) <= 1e-8


@FAST
@given(data=st.data(), fn=st.sampled_from(["error", "residual", "velocity"]))
def test_checker_validates_r(data, fn):
    value, valid, _ = data.draw(variant(np.array([0.5, -0.1, 0.0, 1.0, 0.2, 0.1])))
    call = {"error": lambda r: natural_map_error(P0, r),
            "residual": lambda r: natural_map_residual(P0, r),
            "velocity": lambda r: P0.velocity(r)}[fn]
    out = expect_value_error_naming(call, "r", value)
    if out is not None:
        assert np.all(~np.isnan(out))  # overflow gives inf, never NaN


@FAST
@given(data=st.data(), which=st.sampled_from(["r", "mu"]))
def test_project_on_cone_validates_its_arrays(data, which):
    args = {"r": np.array([1.0, 2.0, -1.0, -3.0, 0.5, 0.5]), "mu": MU0}
    value, valid, how = data.draw(variant(args[which]))
    args[which] = value
    out = expect_value_error_naming(project_on_cone, which, args["r"], args["mu"])
    if out is not None:
        P = np.asarray(out, dtype=float).reshape(-1, 3)
        assert np.all(np.isfinite(P))
        mu = np.broadcast_to(np.asarray(args["mu"], dtype=float).reshape(-1), (P.shape[0],))
        assert np.all(np.hypot(P[:, 1], P[:, 2]) <= mu * P[:, 0] * (1 + 1e-12) + 1e-300)


@FAST
@given(x=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=3, max_size=3),
       mu=st.floats(0.0, 1e6))
def test_projection_is_a_projection(x, mu):
    p = project_on_cone(x, [mu])
    assert np.all(np.isfinite(p))
    again = project_on_cone(p, [mu])
    np.testing.assert_allclose(again, p, rtol=1e-12, atol=1e-300)
    assert np.hypot(p[1], p[2]) <= mu * p[0] * (1 + 1e-12) + 1e-300


# ------------------------------------------------------------------------------------------
# Solvers: arrays (r0, W) and honest verdicts
# ------------------------------------------------------------------------------------------


@FAST
@given(data=st.data(), method=st.sampled_from(sorted(SOLVERS)), which=st.sampled_from(["r0", "W"]))
def test_solver_arrays_are_validated(data, method, which):
    good = {"r0": np.zeros(6), "W": W0}[which]
    value, valid, how = data.draw(variant(good))
    if which == "W" and valid:  # only the problem's own W, in any exact representation
        with np.errstate(all="ignore"):
            valid = np.shape(value) == W0.shape and np.array_equal(np.asarray(value, float), W0)
    res = expect_value_error_naming(SOLVERS[method], which, P0, tol=1e-9, max_iter=200,
                                    **{which: value})
    if res is not None:
        assert not res.converged or natural_map_error(P0, res.r) <= 1e-9
    elif valid and how != "scalar":
        pytest.fail(f"a valid {which} ({how}) was refused")


@st.composite
def problems(draw):
    """Small random problems: W = A A^T with singular values spread over up to 30 decades,
    scaled by up to 1e+-100, q likewise, any friction."""
    nc = draw(st.integers(1, 4))
    m = 3 * nc
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.normal(size=(m, m)))
    decades = draw(st.floats(0, 30))
    W = (U * 10.0 ** rng.uniform(-decades, 0, size=m)) @ U.T
    W = 0.5 * (W + W.T) + 10.0 ** -decades * np.eye(m) * draw(st.sampled_from([0.0, 1.0]))
    W *= 10.0 ** draw(st.integers(-100, 100))
    q = rng.normal(size=m) * 10.0 ** draw(st.integers(-100, 100))
    mu = rng.uniform(0, 2, size=nc) * draw(st.sampled_from([0.0, 1.0]))
    return FrictionContactProblem(W, q, mu)


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(), method=st.sampled_from(sorted(SOLVERS)),
       tol=st.sampled_from([1e-4, 1e-8, 1e-10, 1e-12]), sparse=st.booleans())
def test_converged_means_natural_map_error_below_tol(p, method, tol, sparse):
    """A result marked converged has natural_map_error <= tol on the user's problem, and the
    reported error is that error."""
    assume(method == "admm" or p._diag_positive)
    res = SOLVERS[method](p, tol=tol, max_iter=300, W=sp.csr_matrix(p.W) if sparse else None)
    if not np.all(np.isfinite(res.r)):
        assert not res.converged
        return
    err = natural_map_error(p, res.r)
    event(f"converged={res.converged}")
    assert res.error == pytest.approx(err, rel=2e-3, abs=1e-3 * tol)
    if res.converged:
        assert err <= tol


# ------------------------------------------------------------------------------------------
# Malformed files
# ------------------------------------------------------------------------------------------

INTS = st.integers(-3, 8)


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(m=INTS, n=INTS, nz=st.integers(-3, 12), p=st.lists(INTS, max_size=10),
       i=st.lists(INTS, max_size=12), x=st.lists(st.floats(allow_nan=True), max_size=12),
       q=st.lists(st.floats(-5, 5), min_size=0, max_size=7),
       mu=st.lists(st.floats(-1, 2), min_size=0, max_size=3), dim=st.integers(1, 4))
def test_random_fclib_files_never_crash(m, n, nz, p, i, x, q, mu, dim):
    h5py = pytest.importorskip("h5py")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.hdf5")
        with h5py.File(path, "w") as h5:
            g = h5.create_group("fclib_local")
            g["spacedim"] = np.array([dim], dtype=np.int32)
            w = g.create_group("W")
            for key, val in (("m", [m]), ("n", [n]), ("nz", [nz]), ("p", p), ("i", i)):
                w[key] = np.array(val, dtype=np.int32)
            w["x"] = np.array(x, dtype=float)
            v = g.create_group("vectors")
            v["q"], v["mu"] = np.array(q, dtype=float), np.array(mu, dtype=float)
        problem = expect_value_error_naming(read_fclib, path, path)
        if problem is not None:
            problem.dense_W()
            if problem.dimension == 3:
                res = solve_admm(problem, max_iter=20)
                assert not res.converged or natural_map_error(problem, res.r) <= 1e-8


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=st.lists(st.one_of(st.integers(-2, 7).map(str),
                                 st.sampled_from(["0.5", "-1", "nan", "inf", "1e400", "x", "3.5"])),
                       max_size=60),
       header=st.sampled_from(["3 2 1 6 6 ", "3 1 0 3 3 3 3 ", "2 1 1 2 2 ", ""]))
def test_random_dat_files_never_crash(tokens, header):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.dat")
        with open(path, "w") as fh:
            fh.write(header + " ".join(tokens))
        problem = expect_value_error_naming(read_siconos_dat, path, path)
        if problem is not None:
            assert np.all(np.isfinite(problem.dense_W()))


# ------------------------------------------------------------------------------------------
# Threads
# ------------------------------------------------------------------------------------------


def test_solvers_are_thread_safe(siconos_dir):
    """Fresh problems (no cached dense W or CSR arrays yet) solved from 8 threads at once give
    the serial answers bit for bit; the kernels release the GIL."""
    from sinews.bench._scale_fclib import make_problem

    def fresh():
        return [fclib.load_problem(siconos_dir / "fclib/Box_Stacks-i0122-82-5.hdf5"),
                fclib.load_problem(siconos_dir / "fc3d/Rover4396.dat"), make_problem(600, seed=2)]

    jobs = [(k, name) for k in range(3) for name in sorted(SOLVERS)]
    serial = {(k, name): SOLVERS[name](p, tol=1e-8, max_iter=400)
              for (k, name), p in zip(jobs, [q for q in fresh() for _ in SOLVERS])}
    shared = fresh()
    barrier = threading.Barrier(8)

    def work(t):
        barrier.wait()
        out = {}
        for k, name in jobs[t % len(jobs):] + jobs[: t % len(jobs)]:
            out[(k, name)] = SOLVERS[name](shared[k], tol=1e-8, max_iter=400)
        return out

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    for out in results:
        for key, res in out.items():
            np.testing.assert_array_equal(res.r, serial[key].r)
            assert res.error == serial[key].error and res.converged == serial[key].converged


def test_dense_and_csr_checkers_agree_bitwise(siconos_dir):
    """The solvers may take their verdict on the dense form of a sparse W while
    natural_map_error uses the CSR form: both must give the very same numbers."""
    from sinews.contact._fc3d_exact import careful_error_csr, careful_error_dense

    p = fclib.load_problem(siconos_dir / "fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5")
    rng = np.random.default_rng(0)
    ref = solve(p, tol=1e-8).r
    for k in range(20):
        r = ref * (1 + 10.0 ** rng.uniform(-14, -2) * rng.normal(size=p.size))
        outs = []
        for fn, W in ((careful_error_dense, (p._dense_arrays(),)),
                      (careful_error_csr, p._csr_arrays())):
            u, F, work = np.empty(p.size), np.empty(p.size), np.empty(p.size)
            err, tier = fn(*W, p._q, p._mu, r, 3, 1.0 + p._norm_q, 0.0, 0.0, u, F, work)
            outs.append((err, tier, u, F))
        assert outs[0][:2] == outs[1][:2]
        np.testing.assert_array_equal(outs[0][2], outs[1][2])
        np.testing.assert_array_equal(outs[0][3], outs[1][3])


def test_checker_is_not_compiled_with_the_kernels_fast_math(siconos_dir):
    """Numba compiles a function without fast-math flags that is first called from a fast-math
    kernel with the kernel's flags (and caches that variant).  The checker's tier-1 sums must
    stay strictly sequential whatever ran first: compare them with Python's own sums."""
    from sinews.contact._fc3d_exact import _matvec_bound_csr, _matvec_bound_dense

    p = fclib.load_problem(siconos_dir / "fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5")
    solve_pgs(p, W=p.W, max_iter=3)  # the fast-math kernels call the checker first
    solve_pgs(p, W=p.dense_W(), max_iter=3)
    r = np.random.default_rng(0).normal(size=p.size) * 1e3
    indptr, indices, data = p._csr_arrays()
    D = p._dense_arrays()
    for i in range(0, p.size, 7):
        s = p._q[i]
        for k in range(indptr[i], indptr[i + 1]):
            s = s + data[k] * r[indices[k]]
        for fn, W in ((_matvec_bound_csr, (indptr, indices, data)), (_matvec_bound_dense, (D,))):
            u, b = np.empty(p.size), np.empty(p.size)
            fn(*W, p._q, r, u, b)
            assert u[i] == s
    res = solve_pgs(p, W=p.W, tol=1e-8)
    assert res.converged and natural_map_error(p, res.r) <= 1e-8
    assert res.error == pytest.approx(natural_map_error(p, res.r), rel=2.0**-10, abs=1e-11)


def test_extreme_warm_starts_and_penalties_never_return_non_finite_reactions():
    """r0 or rho so extreme that the iterate overflows: zero reactions with their own honest
    error and info["diverged"], never NaN/inf (and never ZeroDivisionError from the checker)."""
    P = fclib.FrictionContactProblem(2 * np.eye(6), np.ones(6), [0.5, 0.3])
    huge = np.array([0.1, 0.1, 1.7e308, 0.1, 0.1, 0.1])
    for res in (fclib.solve_pgs(P, r0=huge), fclib.solve_admm(P, r0=huge), fclib.solve(P, r0=huge),
                fclib.solve_admm(P, rho=1e300), fclib.solve_admm(P, rho=1e-300)):
        assert np.all(np.isfinite(res.r)) and np.all(np.isfinite(res.u))
        assert res.converged == (fclib.natural_map_error(P, res.r) <= 1e-8)


def test_scalar_options_follow_the_dtype_rule():
    P = fclib.FrictionContactProblem(2 * np.eye(6), np.ones(6), [0.5, 0.3])
    assert fclib.solve_pgs(P, tol=np.array(1e-8), omega=np.float32(1.2)).converged
    for bad in (np.timedelta64(1, "s"), True, 1e-8 + 0j, "1e-8"):
        with pytest.raises(ValueError, match="tol"):
            fclib.solve_pgs(P, tol=bad)
    with pytest.raises(ValueError, match="r and mu do not match"):
        fclib.project_on_cone([], [0.5, 0.3])
