"""Hardening of sinews.lcp: argument validation, honest failure reports, the Siconos readers.

Every test here failed (or crashed) before the hardening pass. The property tests at the end
check, over the public API's array arguments (wrong shape, dtype, NaN/inf, extreme magnitudes,
read-only and non-contiguous arrays), that each call either returns a result whose
``converged`` flag survives the package's own checker on the caller's data, or raises a
``ValueError`` whose message starts with the name of an argument; never another exception
and never a warning.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sinews.lcp import (CompleteOrthogonalDecomposition, ReducedLCP, check_lcp, check_mlcp,
                        mlcp_to_lcp, read_siconos_lcp, read_siconos_mlcp, solve_lemke,
                        solve_lemke_regularized, solve_mlcp, solve_pgs, solve_principal_pivoting,
                        solve_principal_pivoting_regularized)
from sinews.lcp.lemke import moby_pivot_tolerance, moby_zero_tolerance

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")   # incl. ComplexWarning

M2 = np.array([[2.0, 1.0], [1.0, 2.0]])
Q2 = np.array([-5.0, -6.0])
REGULARIZED = [solve_lemke_regularized, solve_principal_pivoting_regularized]


def _mlcp():
    """A small full-rank MLCP (n = 1, m = 1) with the solution u = -1, v = 1."""
    return dict(A=np.array([[1.0]]), C=np.array([[0.0]]), D=np.array([[0.0]]),
                B=np.array([[1.0]]), a=np.array([1.0]), b=np.array([-1.0]))


def _raises_named(name, fn, *args, **kwargs):
    with pytest.raises(ValueError) as info:
        fn(*args, **kwargs)
    assert str(info.value).startswith(name), (name, str(info.value))


# ---- item 1: regularisation exponents and numeric options ----------------------------------

@pytest.mark.parametrize("solver", REGULARIZED)
def test_regularisation_exponents_that_overflow_are_reported_not_raised(solver):
    res = solver(-M2, Q2, min_exp=300, max_exp=400)          # was OverflowError
    assert "overflows for k >= 309" in res.status
    assert res.converged == check_lcp(-M2, Q2, res.z).ok


@pytest.mark.parametrize("solver", REGULARIZED)
def test_regularised_matrix_that_overflows_stops_the_schedule(solver):
    M = np.diag([1.5e308, -1.0])                           # row 2 has no solution at all
    res = solver(M, np.array([-1.0, -1e305]), min_exp=307, step_exp=1, max_exp=310)
    assert not res.converged and "M + 1e308 I overflows" in res.status
    assert np.isfinite(res.z).all()


@pytest.mark.parametrize("solver", REGULARIZED)
def test_underflowing_exponents_are_skipped_without_enumerating_them(solver):
    res = solver(-M2, Q2, min_exp=-10 ** 18, step_exp=1, max_exp=-300)
    assert res.iterations <= 1 + 23                       # k = -323 .. -301 at most


BAD_OPTIONS = [
    (solve_lemke, "max_pivots", ["x", "3", 1.5, -1, True, 1j]),
    (solve_lemke, "zero_tol", ["x", np.nan, np.inf, 1j, True, None]),
    (solve_lemke, "piv_tol", ["x", np.nan, -np.inf, None]),
    (solve_lemke, "lexicographic", ["x", 1, None, 0.0]),
    (solve_lemke_regularized, "min_exp", ["x", 1.5, np.inf, np.nan, None]),
    (solve_lemke_regularized, "step_exp", [0, -1, "4", 2.5]),
    (solve_lemke_regularized, "max_exp", ["x", np.inf, 1e400, 2.5]),
    (solve_lemke_regularized, "zero_tol", ["x", np.nan]),
    (solve_lemke_regularized, "piv_tol", [np.inf]),
    (solve_principal_pivoting, "max_iter", ["x", -1, 2.5, False]),
    (solve_principal_pivoting, "zero_tol", ["x", np.nan]),
    (solve_principal_pivoting, "drake_compat", ["x", None, 1]),
    (solve_principal_pivoting_regularized, "min_exp", ["x", 0.5]),
    (solve_principal_pivoting_regularized, "step_exp", [0]),
    (solve_principal_pivoting_regularized, "max_exp", [np.inf]),
    (solve_principal_pivoting_regularized, "drake_compat", ["yes"]),
    (solve_pgs, "omega", ["x", 0.0, 2.0, np.nan, 1j]),
    (solve_pgs, "tol", ["x", -1.0, np.nan, np.inf]),
    (solve_pgs, "max_iter", ["x", -1, 0.5, "10"]),
    (check_lcp, "tol", ["x", -1.0, np.nan, 1j]),
]


@pytest.mark.parametrize("fn,name,values", BAD_OPTIONS,
                         ids=[f"{f.__name__}-{n}" for f, n, _ in BAD_OPTIONS])
def test_bad_numeric_options_name_the_option(fn, name, values):
    for value in values:
        if fn is check_lcp:
            _raises_named(name, fn, M2, Q2, np.zeros(2), **{name: value})
        else:
            _raises_named(name, fn, M2, Q2, **{name: value})


def test_huge_counts_are_accepted_and_clipped():
    assert solve_lemke(M2, Q2, max_pivots=10 ** 30).converged
    assert solve_pgs(M2, Q2, max_iter=10 ** 30).converged
    assert solve_principal_pivoting(M2, Q2, max_iter=np.int64(2 ** 62)).converged
    assert solve_lemke(M2, Q2, max_pivots=7.0).converged          # integral floats are fine


# ---- item 2: divergence inside a solver is reported, never raised ---------------------------

DIVERGES = np.array([[1.0, -1e3], [-1e3, 1.0]])


def test_pgs_divergence_is_a_reported_failure_with_finite_z():
    res = solve_pgs(DIVERGES, np.full(2, -1e200))
    assert not res.converged and "diverged" in res.status
    assert np.array_equal(res.z, np.zeros(2)) and np.isfinite(res.w).all()


@pytest.mark.parametrize("max_iter", [19, 20, 10_000])
def test_mlcp_with_diverging_pgs_reports_instead_of_raising_about_u(max_iter):
    d = _mlcp()
    res = solve_mlcp(d["A"], np.ones((1, 2)), np.zeros((2, 1)), DIVERGES, d["a"],
                     np.full(2, -1e200), method="pgs", max_iter=max_iter)   # was "u contains NaN"
    assert not res.converged and "diverged" in res.status
    assert np.isfinite(res.u).all() and np.isfinite(res.v).all()


def test_mlcp_options_are_checked_by_name():
    d = _mlcp()
    _raises_named("foo", solve_mlcp, **d, foo=1)                     # was a TypeError
    _raises_named("z0", solve_mlcp, **d, z0=np.zeros(1))
    _raises_named("tol", solve_mlcp, **d, method="pgs", tol="x")
    _raises_named("omega", solve_mlcp, **d, method="pgs", omega=3.0)
    _raises_named("max_pivots", solve_mlcp, **d, max_pivots="x")
    _raises_named("method", solve_mlcp, **d, method=["lemke"])      # unhashable: was TypeError
    _raises_named("rank_tol", solve_mlcp, **d, rank_tol=1.0)
    _raises_named("rank_tol", mlcp_to_lcp, **d, rank_tol=-1e-3)
    _raises_named("tol", check_mlcp, **d, u=[-1.0], v=[1.0], tol=np.nan)
    assert solve_mlcp(**d, method="pgs", omega=1.5, max_iter=500).converged


def test_mlcp_reduction_overflow_falls_back_to_the_split_lcp():
    big = 1e300
    A = np.array([[big, big], [big, -big]])
    res = solve_mlcp(A, np.ones((2, 1)) * big, np.ones((1, 2)) * big, np.array([[big]]),
                     np.array([big, big]), np.array([-big]))
    assert isinstance(res.status, str)
    assert res.converged == check_mlcp(A, np.ones((2, 1)) * big, np.ones((1, 2)) * big,
                                       np.array([[big]]), np.array([big, big]),
                                       np.array([-big]), res.u, res.v).ok


# ---- item 3: ReducedLCP.recover and its fields -------------------------------------------

def test_recover_refuses_nan_and_wrong_sizes():
    red = mlcp_to_lcp(**_mlcp())
    _raises_named("zeta", red.recover, [np.nan])                      # was silent NaN
    _raises_named("zeta", red.recover, [1.0, 2.0])
    _raises_named("zeta", red.recover_u, ["x"])
    u, v = red.recover([1.0])
    assert np.allclose(u, -1.0) and np.allclose(v, 1.0)


def test_reduced_lcp_fields_are_validated():
    red = mlcp_to_lcp(**_mlcp())
    fields = dict(M=red.M, q=red.q, rank=red.rank, swapped=red.swapped, exact=red.exact,
                  u_map=red.u_map, u_offset=red.u_offset, v_map=red.v_map,
                  v_offset=red.v_offset)
    bad = dict(M=np.ones((1, 2)), q=[np.nan], rank=-1, swapped=[0.5], exact="yes",
               u_map=np.ones((1, 3)), u_offset=[1.0, 2.0], v_map=[[np.inf]], v_offset=["x"])
    for name, value in bad.items():
        _raises_named(name, ReducedLCP, **{**fields, name: value})


def test_cod_arguments_are_validated():
    _raises_named("A", CompleteOrthogonalDecomposition, [[np.nan]])
    _raises_named("rank_tol", CompleteOrthogonalDecomposition, np.eye(2), rank_tol="x")
    cod = CompleteOrthogonalDecomposition(np.eye(2))
    _raises_named("rhs", cod.pinv_solve, np.ones(3))
    _raises_named("rhs", cod.pinv_solve, [np.inf, 0.0])
    _raises_named("rhs", cod.pinv_solve, np.ones((2, 2, 2)))


def test_cod_of_data_near_the_ends_of_the_float_range():
    cod = CompleteOrthogonalDecomposition(np.full((3, 3), 1.7e308))    # rank was 0 (overflow)
    assert cod.rank == 1
    np.testing.assert_allclose(cod.pinv_solve(np.ones(3)), np.full(3, 1 / 3 / 1.7e308), rtol=1e-12)
    tiny = CompleteOrthogonalDecomposition(np.full((2, 3), 5e-324))
    assert tiny.rank == 1
    _raises_named("rhs", tiny.pinv_solve, np.ones(2))                   # was inf, silently


# ---- item 4: Siconos readers -----------------------------------------------------------

SPARSE_HEAD = "2\n1\n2\n2\n"            # n = 2, storage 1, 2 x 2


def _sparse_lcp(nblocks=2, nbr=2, nbc=2, row_ends="1 2", col_ends="1 2", filled="3 2",
                index1="0 1 2", index2="0 1", blocks="0 1.0 1 2.0", q="-1 -1"):
    return (f"{SPARSE_HEAD}{nblocks}\n{nbr} {nbc}\n{row_ends}\n{col_ends}\n{filled}\n"
            f"{index1}\n{index2}\n{blocks}\n{q}\n")


SICONOS_LCP_BAD = {
    "index2 out of range": (dict(index2="0 5"), "block column index"),       # was IndexError
    "decreasing index1": (dict(index1="0 2 1"), "index1"),                  # was all-zero M
    "index1 not ending at nblocks": (dict(index1="0 1 1"), "index1"),
    "repeated block column": (dict(nblocks=2, nbr=1, row_ends="2", filled="2 2",
                                   index1="0 2", index2="1 1"), "strictly increasing"),
    "row ends not increasing": (dict(row_ends="2 1"), "row ends"),
    "row ends not reaching rows": (dict(row_ends="1 1"), "row ends"),
    "column ends beyond cols": (dict(col_ends="1 3"), "column ends"),
    "filled1 wrong": (dict(filled="2 2"), "filled1"),
    "filled2 wrong": (dict(filled="3 1"), "filled2"),
    "block number wrong": (dict(blocks="0 1.0 7 2.0"), "block number"),
    "nan in block": (dict(blocks="0 nan 1 2.0"), "non-finite"),
    "inf in q": (dict(q="-1 inf"), "non-finite"),
    "overflowing number": (dict(q="-1 1e400"), "non-finite"),
    "negative block count": (dict(nblocks=-1), "at least 0"),
    "file ends in q": (dict(q="-1"), "ended"),
    "underscore number": (dict(q="-1 1_0"), "expected a number"),
}


@pytest.mark.parametrize("case", sorted(SICONOS_LCP_BAD))
def test_malformed_sparse_block_lcp_files_are_refused(tmp_path, case):
    kwargs, words = SICONOS_LCP_BAD[case]
    path = tmp_path / "bad.dat"
    path.write_text(_sparse_lcp(**kwargs))
    with pytest.raises(ValueError) as info:
        read_siconos_lcp(path)
    msg = str(info.value)
    assert msg.startswith("path") and str(path) in msg and words in msg, msg


def test_the_good_sparse_file_of_those_tests_reads(tmp_path):
    path = tmp_path / "ok.dat"
    path.write_text(_sparse_lcp())
    lcp = read_siconos_lcp(path)
    np.testing.assert_array_equal(lcp.M, np.diag([1.0, 2.0]))
    np.testing.assert_array_equal(lcp.q, [-1.0, -1.0])


@pytest.mark.parametrize("text,words", [
    ("-2\n0\n0\n0\n0 0\n", "n must be at least 0"),
    ("1000000000\n0\n1000000000\n1000000000\n1000000000 1000000000\n1\n", "ended"),  # no alloc
    ("2\n1\n100000\n100000\n", "too large"),
    ("1\n0\n1\n1\n1 1\nnan\n1\n", "non-finite"),
    ("1\n0\n1\n1\n1 1\n1\n-inf\n", "non-finite"),
    ("2\n0\n1\n1\n1 1\n1\n1 1\n", "shape"),
    ("1.5\n", "integer"),
])
def test_malformed_dense_lcp_files_are_refused(tmp_path, text, words):
    path = tmp_path / "bad.dat"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        read_siconos_lcp(path)
    assert str(info.value).startswith("path") and words in str(info.value), str(info.value)


MLCP_OK = "1 1\n1 1\n0 1 2\n0 1\n0\n2\n2\n2 2\n1 0 0 1\n-1 -1\n1\n1\n0\n0\n-1\n-1\n"


@pytest.mark.parametrize("old,new,words", [
    ("0 1 2\n0 1\n", "0 1 0 2\n0 1 1\n", "block boundaries"),   # not increasing
    ("0 1 2\n0 1\n", "1 2\n0\n", "start at 0"),
    ("0 1 2\n0 1\n", "0 1 2\n0 7\n", "block flags"),
    ("1 1\n1 1\n0 1", "0 0\n1 1\n0 1", "no problem data"),
    ("1 1\n1 1\n0 1", "1 3\n1 1\n0 1", "isStorageType"),
    ("1 0 0 1\n-1 -1", "1 0 0 nan\n-1 -1", "non-finite"),
    ("\n-1\n-1\n", "\n-1\ninf\n", "non-finite"),
    ("0\n2\n2\n2 2\n1 0 0 1\n-1 -1", "0\n2\n1\n2 1\n1 0\n-1 -1", "columns"),
])
def test_malformed_mlcp_files_are_refused(tmp_path, old, new, words):
    assert old in MLCP_OK
    path = tmp_path / "ok.dat"
    path.write_text(MLCP_OK)
    assert read_siconos_mlcp(path).n == 1
    path.write_text(MLCP_OK.replace(old, new, 1))
    with pytest.raises(ValueError) as info:
        read_siconos_mlcp(path)
    assert str(info.value).startswith("path") and words in str(info.value), str(info.value)


@pytest.mark.parametrize("reader", [read_siconos_lcp, read_siconos_mlcp])
def test_reader_io_errors_name_the_path(tmp_path, reader):
    binary = tmp_path / "binary.dat"
    binary.write_bytes(b"\x89PNG\xff\xfe\x00")
    for path, words in [(binary, "not a text file"), (tmp_path, "not a regular file"),
                        (tmp_path / ("x" * 5000), "")]:          # the long name: was OSError
        with pytest.raises(ValueError) as info:
            reader(path)
        assert str(info.value).startswith("path") and words in str(info.value)
    for path in (3, None, b"/tmp"):
        _raises_named("path", reader, path)


# ---- items 5 and 6: every public function, every argument, wrong types -------------------

WRONG = ["x", object(), 1j, np.array(["1", "2"]), np.array([1 + 1j, 2]),
         np.array(["2020-01-01"], dtype="datetime64[D]"), np.array([1], dtype="timedelta64[s]"),
         np.array([True, False]), {"a": 1}]

RED = mlcp_to_lcp(**_mlcp())
COD = CompleteOrthogonalDecomposition(np.eye(2))
D = _mlcp()
CALLS = [  # (function, valid keyword arguments, arguments to spoil, arguments that may be None)
    (check_lcp, dict(M=M2, q=Q2, z=np.zeros(2), tol=1e-8), "M q z tol", "tol"),
    (solve_lemke, dict(M=M2, q=Q2, z0=np.ones(2), zero_tol=-1.0, piv_tol=-1.0,
                       lexicographic=False, max_pivots=10), "M q z0 zero_tol piv_tol "
     "lexicographic max_pivots", "z0 max_pivots"),
    (solve_lemke_regularized, dict(M=M2, q=Q2, min_exp=-2, step_exp=1, max_exp=0,
                                   piv_tol=-1.0, zero_tol=-1.0),
     "M q min_exp step_exp max_exp piv_tol zero_tol", ""),
    (solve_principal_pivoting, dict(M=M2, q=Q2, z0=np.ones(2), zero_tol=-1.0, max_iter=5,
                                    drake_compat=False),
     "M q z0 zero_tol max_iter drake_compat", "z0 max_iter"),
    (solve_principal_pivoting_regularized, dict(M=M2, q=Q2, min_exp=-2, step_exp=1, max_exp=0,
                                                zero_tol=-1.0, drake_compat=False),
     "M q min_exp step_exp max_exp zero_tol drake_compat", ""),
    (solve_pgs, dict(M=M2, q=Q2, z0=np.ones(2), omega=1.0, tol=1e-10, max_iter=100),
     "M q z0 omega tol max_iter", "z0"),
    (mlcp_to_lcp, dict(**D, rank_tol=None), "A C D B a b rank_tol", "rank_tol"),
    (solve_mlcp, dict(**D, method="lemke", rank_tol=None, tol=None, max_pivots=10),
     "A C D B a b method rank_tol tol max_pivots", "rank_tol tol max_pivots"),
    (check_mlcp, dict(**D, u=[-1.0], v=[1.0], tol=None), "A C D B a b u v tol", "tol"),
    (CompleteOrthogonalDecomposition, dict(A=np.eye(2), rank_tol=None), "A rank_tol",
     "rank_tol"),
    (COD.pinv_solve, dict(rhs=np.ones(2)), "rhs", ""),
    (RED.recover, dict(zeta=[1.0]), "zeta", ""),
    (RED.recover_u, dict(zeta=[1.0]), "zeta", ""),
    (moby_zero_tolerance, dict(M=M2), "M", ""),
    (moby_pivot_tolerance, dict(M=M2), "M", ""),
    (read_siconos_lcp, dict(path="missing.dat"), "path", ""),
    (read_siconos_mlcp, dict(path="missing.dat"), "path", ""),
]


@pytest.mark.parametrize("fn,kwargs,names,optional", CALLS,
                         ids=[c[0].__qualname__ for c in CALLS])
def test_every_argument_of_every_public_function_is_named_when_wrong(fn, kwargs, names,
                                                                     optional):
    if "path" not in kwargs:
        fn(**kwargs)                                               # the valid call works
    for name in names.split():
        for value in WRONG + ([] if name in optional.split() else [None]):
            _raises_named(name, fn, **{**kwargs, name: value})


# ---- item 7: property tests over the array arguments --------------------------------------

EXTREME = st.sampled_from([0.0, 1.0, -1.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300, 1.7e308])
NONFINITE = st.sampled_from([np.nan, np.inf, -np.inf])
REAL_DTYPES = st.sampled_from(["float64", "float32", "int64", "uint8", "int8"])
BAD_DTYPES = st.sampled_from(["complex128", "bool", "datetime64[s]", "timedelta64[s]", "U3",
                              "object"])


@st.composite
def array_arg(draw, shape, spoil=False):
    """An array of ``shape`` with finite values, ordinary or extreme (1e-300, 1e300, ...), of a
    real dtype, possibly read-only or non-contiguous; when ``spoil``, it is mis-shaped, of a
    refused dtype or holds NaN/inf."""
    how = draw(st.sampled_from(["shape", "dtype", "nonfinite"])) if spoil else None
    if how == "shape":
        shape = draw(st.sampled_from([(), (1,), (2, 3), (3, 3, 1), tuple(s + 1 for s in shape)]))
    size = int(np.prod(shape))
    values = draw(st.lists(EXTREME if draw(st.booleans()) else st.floats(-5, 5),
                           min_size=size, max_size=size))
    arr = np.array(values, dtype=float).reshape(shape)
    if how == "nonfinite" and size:
        arr.flat[draw(st.integers(0, size - 1))] = draw(NONFINITE)
    if how == "dtype":
        dtype = draw(BAD_DTYPES)
        arr = np.full(shape, "1") if dtype == "U3" else np.zeros(shape, dtype=dtype)
    else:
        dtype = draw(REAL_DTYPES)
        if dtype != "float64":
            with np.errstate(all="ignore"):
                arr = (np.clip(np.round(arr), 0, 100).astype(dtype) if "int" in dtype
                       else arr.astype(dtype))
    layout = draw(st.sampled_from(["plain", "readonly", "strided", "fortran"]))
    if layout == "strided" and arr.ndim:
        big = np.zeros(tuple(2 * s for s in arr.shape), dtype=arr.dtype)
        big[tuple(slice(None, None, 2) for _ in arr.shape)] = arr
        arr = big[tuple(slice(None, None, 2) for _ in arr.shape)]
    elif layout == "fortran":
        arr = np.asfortranarray(arr)
    elif layout == "readonly":
        arr.setflags(write=False)
    return arr


def _outcome(fn, names, *args, **kwargs):
    """The result, or None after a ValueError that names one of ``names``."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        assert any(str(exc).startswith(n) for n in names), str(exc)
        return None


LCP_SOLVERS = [
    (solve_lemke, {}), (solve_lemke, dict(lexicographic=True)), (solve_lemke_regularized, {}),
    (solve_principal_pivoting, {}), (solve_principal_pivoting_regularized, {}),
    (solve_pgs, dict(max_iter=300)),
]


@settings(max_examples=60)
@given(n=st.integers(0, 4), data=st.data())
def test_lcp_solvers_on_arbitrary_arrays_return_honest_results_or_name_the_argument(n, data):
    bad = data.draw(st.sampled_from([None, None, "M", "q", "z0"]))
    M = data.draw(array_arg((n, n), bad == "M"))
    q = data.draw(array_arg((n,), bad == "q"))
    z0 = data.draw(array_arg((n,), True)) if bad == "z0" else data.draw(
        st.none() | array_arg((n,)))
    before = (M.copy(), q.copy())
    for solver, opts in LCP_SOLVERS:
        kw = dict(opts) if solver in REGULARIZED or z0 is None else dict(opts, z0=z0)
        res = _outcome(solver, ("M", "q", "z0"), M, q, **kw)
        if res is None:
            continue
        assert isinstance(res.status, str)
        assert np.isfinite([*res.z, *res.w, res.complementarity, res.feasibility]).all()
        if res.converged:   # judged on the caller's M, q by the package's own checker
            assert check_lcp(M, q, res.z).ok, (solver.__name__, res.status)
    np.testing.assert_array_equal(M, before[0])            # inputs are never written to
    np.testing.assert_array_equal(q, before[1])


@settings(max_examples=40)
@given(n=st.integers(0, 3), m=st.integers(0, 3), data=st.data())
def test_mlcp_on_arbitrary_arrays_returns_honest_results_or_names_the_argument(n, m, data):
    bad = data.draw(st.sampled_from([None, None, *"ACDBab"]))
    args = [data.draw(array_arg(s, bad == name))
            for name, s in zip("ACDBab", [(n, n), (n, m), (m, n), (m, m), (n,), (m,)])]
    for method in ("lemke", "principal_pivoting", "pgs"):
        res = _outcome(solve_mlcp, "ACDBab", *args, method=method)
        if res is None:
            continue
        assert isinstance(res.status, str)
        assert np.isfinite([*res.u, *res.v, *res.w, res.equality_residual,
                            res.complementarity, res.feasibility]).all(), res.status
        if res.converged:
            assert check_mlcp(*args, res.u, res.v).ok, (method, res.status)
    red = _outcome(mlcp_to_lcp, "ACDBab", *args)
    if red is not None:
        zeta = data.draw(array_arg(red.q.shape, data.draw(st.booleans())))
        _outcome(red.recover, ("zeta",), zeta)


@settings(max_examples=60)
@given(n=st.integers(0, 4), data=st.data())
def test_check_lcp_on_arbitrary_arrays(n, data):
    bad = data.draw(st.sampled_from([None, "M", "q", "z"]))
    M, q, z = (data.draw(array_arg(s, bad == name)) for name, s in
               zip("Mqz", [(n, n), (n,), (n,)]))
    chk = _outcome(check_lcp, ("M", "q", "z"), M, q, z)
    if chk is not None:
        assert isinstance(chk.ok, bool)
        assert np.isfinite([*chk.w, chk.complementarity, chk.natural_residual,
                            chk.feasibility]).all()


READER_FILES = [(read_siconos_lcp, "lcp/lcp_trivial_block.dat"), (read_siconos_lcp,
                 "lcp/lcp_deudeu_block.dat"), (read_siconos_lcp, "lcp/lcp_CPS_2.dat"),
                (read_siconos_mlcp, "mlcp/m2n1_mlcp.dat"),
                (read_siconos_mlcp, "mlcp/Rectangular_mlcp.dat")]


@settings(max_examples=150)
@given(case=st.sampled_from(READER_FILES), data=st.data())
def test_mutated_siconos_files_read_validated_or_name_the_path(siconos_dir, tmp_path_factory,
                                                                case, data):
    reader, name = case
    tokens = (siconos_dir / name).read_text().split()
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(tokens) - 1))
        edit = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        token = data.draw(st.sampled_from(["-1", "0", "1", "3", "9", "10", "2.5", "1e400", "nan",
                                           "-inf", "x", "100000", "4294967296"]))
        if edit == "replace":
            tokens[k] = token
        elif edit == "delete":
            del tokens[k]
        else:
            tokens.insert(k, token)
    path = tmp_path_factory.mktemp("mutated") / "file.dat"
    path.write_text(" ".join(tokens))
    try:
        prob = reader(path)
    except ValueError as exc:
        assert str(exc).startswith("path") and str(path) in str(exc), str(exc)
        return
    arrays = [getattr(prob, f) for f in ("M", "q", "A", "B", "C", "D", "a", "b")
              if getattr(prob, f, None) is not None]
    assert all(np.isfinite(x).all() for x in arrays)
    if reader is read_siconos_lcp:
        assert prob.M.shape == (prob.q.size, prob.q.size)
    else:
        n, m = prob.n, prob.m
        assert prob.M is None or (prob.M.shape[1] == n + m and prob.q.shape == (n + m,))
        assert prob.A is None or (prob.A.shape, prob.C.shape, prob.b.shape) == ((n, n), (n, m),
                                                                                 (m,))


def test_solvers_give_identical_results_from_several_threads():
    """No module-level mutable state: concurrent calls give the serial results."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(3)
    problems = []
    for n in (3, 5, 8, 12):
        B = rng.standard_normal((n, n))
        problems.append((B @ B.T + np.eye(n), rng.standard_normal(n)))
    solvers = [solve_lemke, solve_principal_pivoting, solve_pgs, solve_lemke_regularized]

    def run(k):
        M, q = problems[k % len(problems)]
        return [s(M, q).z for s in solvers]

    serial = [run(k) for k in range(16)]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(run, range(16)))
    for a, b in zip(serial, parallel):
        for za, zb in zip(a, b):
            np.testing.assert_array_equal(za, zb)


# ---- results hold finite numbers only; converged means check_lcp(M, q, z).ok ------------------

def test_a_solution_whose_w_overflows_is_a_reported_failure_with_finite_numbers():
    M, q = np.array([[1.0, 0.0], [1e300, 1.0]]), np.array([-1e300, -1.0])   # w2 = 1e600
    for solver in (solve_lemke, solve_principal_pivoting, solve_pgs, *REGULARIZED):
        res = solver(M, q)                        # pp and pgs: converged with w = [0, inf]
        assert not res.converged, (solver.__name__, res.status)
        assert np.isfinite([*res.z, *res.w, res.complementarity, res.feasibility]).all()
    _raises_named("z", check_lcp, M, q, [1e300, 0.0])                    # was w = [0, inf]
    d = _mlcp()
    _raises_named("u, v", check_mlcp, **{**d, "u": [1e308], "v": [1e308], "C": [[1e10]]})


def test_a_correct_solution_of_huge_data_reports_a_saturated_complementarity():
    M, q = np.array([[1.0]]), np.array([-1e300])
    z = [np.nextafter(1e300, np.inf)]        # w = one ulp of 1e300 ~ 1e284: z w overflows
    chk = check_lcp(M, q, z)
    assert chk.ok and chk.complementarity == np.finfo(float).max          # was inf
    res = solve_lemke(M, q)
    assert res.converged and np.isfinite(res.complementarity)


def test_pgs_with_a_loose_tol_stops_early_but_does_not_claim_convergence():
    M, q = np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([-1.0, -2.0])
    res = solve_pgs(M, q, tol=1e300)                                    # was converged=True
    assert not res.converged and "solution check failed" in res.status
    assert solve_pgs(M, q).converged and check_lcp(M, q, solve_pgs(M, q).z).ok
