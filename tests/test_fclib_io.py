"""Readers of FCLib HDF5 and Siconos fc3d ``.dat`` frictional-contact problems."""

import numpy as np
import pytest
import scipy.sparse as sp

from sinews.contact.fclib import FrictionContactProblem, load_problem, read_fclib, read_siconos_dat

# file -> (dimension, contacts, kind); from shared/data/siconos/README.md
EXPECTED = {
    "fclib/Box_Stacks-i0122-82-5.hdf5": (3, 82, "global"),
    "fclib/Capsules-i125-1213.hdf5": (3, 286, "local"),
    "fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5": (3, 60, "local"),
    "fclib/Spheres-i099-356-679.hdf5": (3, 356, "global"),
    "fclib/spheres-in-a-box-98-i10000-256-10.hdf5": (3, 256, "global"),
    "fc3d/BoxesStack1-i100000-32.hdf5.dat": (3, 52, "local"),
    "fc3d/Capsules-i101-404.dat": (3, 225, "local"),
    "fc3d/Confeti-ex13-4contact-Fc3D-SBM.dat": (3, 4, "local"),
    "fc3d/FC3D_Example1.dat": (3, 3, "local"),
    "fc3d/FrictionContact3D_1c.dat": (3, 1, "local"),
    "fc3d/FrictionContactProblem00031.dat": (2, 11, "local"),
    "fc3d/FrictionContactProblem00394.dat": (2, 6, "local"),
    "fc3d/NESpheres_10_1.dat": (3, 9, "local"),
    "fc3d/OneObject-i1028-138.hdf5.dat": (3, 23, "local"),
    "fc3d/Rover11035.dat": (3, 1, "local"),
    "fc3d/Rover4396.dat": (3, 2, "local"),
    "fc3d/Rover9770.dat": (3, 5, "local"),
}


def _dense(W):
    return W.toarray() if sp.issparse(W) else np.asarray(W)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fclib_reads_listed_files(siconos_dir, name):
    dim, nc, kind = EXPECTED[name]
    p = load_problem(siconos_dir / name)
    assert (p.dimension, p.contacts, p.kind) == (dim, nc, kind)
    m = dim * nc
    assert p.W.shape == (m, m) and p.q.shape == (m,) and p.mu.shape == (nc,)
    W = _dense(p.W)
    assert np.all(np.isfinite(W)) and np.all(np.diag(W) > 0)
    # Delassus matrices are symmetric up to the asymmetry of the physics engines' output
    # (at most ~2e-3 relative in Capsules, exactly 0 for most files)
    assert np.abs(W - W.T).max() <= 3e-3 * np.abs(W).max()
    assert np.all(p.mu >= 0)


def test_fclib_every_shared_file_reads(siconos_dir):
    paths = sorted((siconos_dir / "fclib").glob("*.hdf5")) + sorted((siconos_dir / "fc3d").glob("*.dat"))
    assert len(paths) == 37
    for path in paths:
        p = load_problem(path)
        assert p.size == p.dimension * p.contacts
        assert np.all(np.isfinite(p.q))


def test_fclib_dat_is_column_major(siconos_dir):
    # FrictionContact3D_1c stores 15 -1 -2 / -1 14 1 / -2 1 16, q = (-1, 2, 3), mu = 0.1
    p = read_siconos_dat(siconos_dir / "fc3d/FrictionContact3D_1c.dat")
    np.testing.assert_array_equal(p.W, [[15, -1, -2], [-1, 14, 1], [-2, 1, 16]])
    np.testing.assert_array_equal(p.q, [-1, 2, 3])
    np.testing.assert_array_equal(p.mu, [0.1])
    # Rover11035 is not exactly symmetric: the second stored value is entry (1, 0)
    r = read_siconos_dat(siconos_dir / "fc3d/Rover11035.dat")
    assert r.W[1, 0] == pytest.approx(-1.426574206813656e-04, rel=1e-14)
    assert r.W[0, 1] == pytest.approx(-1.438285701497408e-04, rel=1e-14)
    assert r.mu[0] == pytest.approx(0.7)


def test_fclib_sparse_block_matches_blocks(siconos_dir):
    # BoxesStack1: sparse-block storage; every diagonal 3x3 block is stored, W symmetric
    p = read_siconos_dat(siconos_dir / "fc3d/BoxesStack1-i100000-32.hdf5.dat")
    W = p.W
    for a in range(p.contacts):
        blk = W[3 * a : 3 * a + 3, 3 * a : 3 * a + 3]
        assert np.linalg.eigvalsh(0.5 * (blk + blk.T)).min() > 0
    assert np.abs(W - W.T).max() < 1e-12 * np.abs(W).max()


def test_fclib_global_condensation_is_HT_Minv_H(siconos_dir):
    """Oracle: rebuild W = H^T M^-1 H and q = H^T M^-1 f + w densely straight from the file."""
    h5py = pytest.importorskip("h5py")
    path = siconos_dir / "fclib/Box_Stacks-i0122-82-5.hdf5"
    with h5py.File(path, "r") as h5:
        g = h5["fclib_global"]

        def triplet(name):
            grp = g[name]
            m, n, nz = int(grp["m"][0]), int(grp["n"][0]), int(grp["nz"][0])
            A = np.zeros((m, n))
            for i, j, x in zip(grp["i"][:nz], grp["p"][:nz], grp["x"][:nz]):
                A[i, j] += x
            return A

        M, H = triplet("M"), triplet("H")
        f, w = g["vectors/f"][()], g["vectors/w"][()]
    Minv = np.linalg.inv(M)
    p = read_fclib(path)
    np.testing.assert_allclose(_dense(p.W), H.T @ Minv @ H, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(p.q, H.T @ Minv @ f + w, rtol=1e-12, atol=1e-16)
    # physics sanity: every contact of the resting stack approaches under gravity (q_n < 0)
    assert np.all(p.q[0::3] < 0)


def test_fclib_local_csr_matches_file(siconos_dir):
    h5py = pytest.importorskip("h5py")
    path = siconos_dir / "fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5"
    with h5py.File(path, "r") as h5:
        g = h5["fclib_local/W"]
        assert int(g["nz"][0]) == -2
        p_, i_, x_ = g["p"][()], g["i"][()], g["x"][()]
    p = read_fclib(path)
    W = _dense(p.W)
    row = 7
    for k in range(p_[row], p_[row + 1]):
        assert W[row, i_[k]] == x_[k]


def test_fclib_problem_rejects_bad_input():
    W = np.eye(3)
    with pytest.raises(ValueError, match="mu"):
        FrictionContactProblem(W, [1.0, 0, 0], [-0.1])
    with pytest.raises(ValueError, match="mu"):
        FrictionContactProblem(W, [1.0, 0, 0], [0.1, 0.2])
    with pytest.raises(ValueError, match="q"):
        FrictionContactProblem(W, [np.nan, 0, 0], [0.1])
    with pytest.raises(ValueError, match="W"):
        FrictionContactProblem(np.eye(6), [1.0, 0, 0], [0.1])
    with pytest.raises(ValueError, match="W"):
        FrictionContactProblem(np.full((3, 3), np.inf), [1.0, 0, 0], [0.1])
    with pytest.raises(ValueError, match="q"):
        FrictionContactProblem(np.eye(4), [1.0, 0, 0, 0], [0.1], dimension=3)
    with pytest.raises(ValueError, match="dimension"):
        FrictionContactProblem(W, [1.0, 0, 0], [0.1], dimension=4)
    with pytest.raises(ValueError, match="path"):
        read_fclib("/nonexistent/problem.hdf5")
    with pytest.raises(ValueError, match="path"):
        read_siconos_dat("/nonexistent/problem.dat")


def test_fclib_truncated_dat_raises(tmp_path):
    bad = tmp_path / "bad.dat"
    bad.write_text("3\n1\n0\n3\n3\n3 3\n1 0 0\n0 1 0\n")
    with pytest.raises(ValueError, match="path"):
        read_siconos_dat(bad)


# ------------------------------------------------------------------------------------------
# Malformed files: every defect is a ValueError naming the path, never a crash
# ------------------------------------------------------------------------------------------

GOOD_W = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]])


def write_local(path, W=GOOD_W, q=(-1.0, 0.2, 0.1), mu=(0.3,), spacedim=3, fmt="csc",
                **override):
    """An FCLib local problem; ``override`` replaces W-group datasets (m, n, nz, p, i, x)."""
    h5py = pytest.importorskip("h5py")
    A = sp.csc_matrix(W) if fmt == "csc" else sp.csr_matrix(W) if fmt == "csr" else sp.coo_matrix(W)
    if fmt == "coo":
        parts = {"nz": A.nnz, "p": A.col, "i": A.row, "x": A.data}
    else:
        parts = {"nz": -1 if fmt == "csc" else -2, "p": A.indptr, "i": A.indices, "x": A.data}
    parts = {"m": A.shape[0], "n": A.shape[1], "nzmax": A.nnz, **parts, **override}
    with h5py.File(path, "w") as h5:
        g = h5.create_group("fclib_local")
        g["spacedim"] = np.array([spacedim], dtype=np.int32)
        w = g.create_group("W")
        for key, value in parts.items():
            if value is None:
                continue
            value = np.atleast_1d(np.asarray(value))
            if value.dtype.kind in "iu":  # FCLib's int32, unless the value needs more
                small = value.size == 0 or np.abs(value).max() < 2**31
                value = value.astype(np.int32 if small else np.int64)
            w[key] = value
        v = g.create_group("vectors")
        v["q"] = np.asarray(q, dtype=float)
        v["mu"] = np.asarray(mu, dtype=float)
    return path


def test_fclib_hdf5_roundtrip_of_the_test_writer(tmp_path):
    for fmt in ("csc", "csr", "coo"):
        p = read_fclib(write_local(tmp_path / f"ok_{fmt}.hdf5", fmt=fmt))
        np.testing.assert_array_equal(_dense(p.W), GOOD_W)
        assert p.contacts == 1 and p.mu[0] == 0.3


BAD_LOCAL = {
    # CSparse index arrays (the SIGSEGV / heap corruption of the adversarial run)
    "row_index_negative": dict(i=[0, 1, -1, 1, 2, 1, 2]),
    "row_index_too_large": dict(i=[0, 1, 3, 1, 2, 1, 2]),
    "pointers_decrease": dict(p=[0, 2, 1, 7]),
    "pointers_start_late": dict(p=[1, 2, 5, 7]),
    "pointers_past_arrays": dict(p=[0, 2, 5, 70]),
    "pointers_too_short": dict(p=[0, 2]),
    "nz_unknown": dict(nz=-3),
    "triplet_nz_too_large": dict(nz=50),
    "triplet_column_out_of_range": dict(nz=2, p=[0, 5], i=[0, 1], x=[1.0, 2.0]),
    "rows_negative": dict(m=-3),
    "rows_huge": dict(m=2**40),
    "index_dtype_float": dict(i=np.array([0.0, 1, 0, 1, 2, 1, 2])),
    "value_nan": dict(x=[4.0, 1.0, np.nan, 3.0, 0.5, 0.5, 2.0]),
    "value_inf": dict(x=[4.0, 1.0, np.inf, 3.0, 0.5, 0.5, 2.0]),
    "missing_x": dict(x=None),
    "missing_m": dict(m=None),
}


@pytest.mark.parametrize("case", sorted(BAD_LOCAL))
def test_fclib_malformed_matrix_is_a_value_error_naming_the_path(tmp_path, case):
    path = write_local(tmp_path / f"{case}.hdf5", **BAD_LOCAL[case])
    with pytest.raises(ValueError, match="path: .*" + case):
        read_fclib(path)


@pytest.mark.parametrize("case, kwargs, what", [
    ("mu_negative", dict(mu=(-0.1,)), "mu"),
    ("mu_nan", dict(mu=(np.nan,)), "mu"),
    ("mu_length", dict(mu=(0.1, 0.2)), "mu"),
    ("q_nan", dict(q=(np.nan, 0.0, 0.0)), "q"),
    ("q_length", dict(q=(1.0, 0.0)), "q"),
    ("spacedim_4", dict(spacedim=4), "spacedim"),
    ("not_square", dict(W=np.ones((3, 2))), "square"),
    ("size_not_multiple", dict(W=np.eye(4), q=(1.0, 0, 0, 0)), "multiple"),
])
def test_fclib_inconsistent_problem_is_a_value_error(tmp_path, case, kwargs, what):
    path = write_local(tmp_path / f"{case}.hdf5", **kwargs)
    with pytest.raises(ValueError, match=f"path: .*{case}.*{what}"):
        read_fclib(path)


def test_fclib_bad_index_file_never_reaches_a_kernel(tmp_path):
    """Regression (adversarial run): a CSC file with row index -1 used to be accepted and
    ``dense_W()`` wrote out of bounds (SIGSEGV).  Run in a child process so that a crash
    fails this test instead of killing the session."""
    import subprocess
    import sys

    path = write_local(tmp_path / "bad.hdf5", i=[0, 1, -1, 1, 2, 1, 2])
    code = ("import sys\nfrom sinews.contact.fclib import read_fclib, solve\n"
            "try:\n    p = read_fclib(sys.argv[1]); p.dense_W(); solve(p)\n"
            "except ValueError as e:\n    print('VALUEERROR', e)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "VALUEERROR path:" in proc.stdout and str(path) in proc.stdout


def test_fclib_unreadable_files_name_the_path(tmp_path):
    h5py = pytest.importorskip("h5py")
    junk = tmp_path / "junk.hdf5"
    junk.write_bytes(b"definitely not HDF5\x00\x01" * 10)
    with pytest.raises(ValueError, match=f"path: {junk}.*HDF5"):
        read_fclib(junk)
    empty = tmp_path / "empty.hdf5"
    with h5py.File(empty, "w") as h5:
        h5.create_group("something_else")
    with pytest.raises(ValueError, match=f"path: {empty}.*fclib_local"):
        read_fclib(empty)
    wrong = tmp_path / "wrong.hdf5"
    with h5py.File(wrong, "w") as h5:
        h5.create_group("fclib_local")["W"] = np.zeros(3)  # a dataset where a group belongs
        h5["fclib_local/spacedim"] = [3]
    with pytest.raises(ValueError, match=f"path: {wrong}.*W"):
        read_fclib(wrong)
    strings = tmp_path / "strings.hdf5"
    write_local(strings)
    with h5py.File(strings, "a") as h5:
        del h5["fclib_local/vectors/q"]
        h5["fclib_local/vectors/q"] = np.array([b"a", b"b", b"c"])
    with pytest.raises(ValueError, match=f"path: {strings}.*q.*real"):
        read_fclib(strings)
    with pytest.raises(ValueError, match="path"):
        read_fclib(tmp_path)  # a directory
    with pytest.raises(ValueError, match="path"):
        read_fclib(12345)
    with pytest.raises(ValueError, match="path"):
        load_problem(None)


def test_fclib_global_problem_validation(tmp_path):
    h5py = pytest.importorskip("h5py")

    def write(path, M, H, f, w, mu):
        with h5py.File(path, "w") as h5:
            g = h5.create_group("fclib_global")
            g["spacedim"] = [3]
            for name, A in (("M", sp.coo_matrix(M)), ("H", sp.coo_matrix(H))):
                grp = g.create_group(name)
                for key, val in (("m", [A.shape[0]]), ("n", [A.shape[1]]), ("nz", [A.nnz]),
                                 ("p", A.col), ("i", A.row), ("x", A.data)):
                    grp[key] = np.asarray(val)
            v = g.create_group("vectors")
            v["f"], v["w"], v["mu"] = f, w, mu
        return path

    rng = np.random.default_rng(0)
    B = rng.normal(size=(6, 6))
    M = B @ B.T + 6 * np.eye(6)  # a full (not diagonal) mass matrix: one 6x6 block
    H = rng.normal(size=(6, 3))
    f, w = rng.normal(size=6), rng.normal(size=3)
    p = read_fclib(write(tmp_path / "g.hdf5", M, H, f, w, [0.5]))
    Minv = np.linalg.inv(M)
    np.testing.assert_allclose(_dense(p.W), H.T @ Minv @ H, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(p.q, H.T @ Minv @ f + w, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="path: .*M.*singular"):
        read_fclib(write(tmp_path / "s.hdf5", np.diag([1.0, 1, 1, 1, 1, 0]) + np.eye(6, k=1),
                         H, f, w, [0.5]))
    with pytest.raises(ValueError, match="path: .*H"):
        read_fclib(write(tmp_path / "h.hdf5", M, H[:5], f, w, [0.5]))
    with pytest.raises(ValueError, match="path: .*f"):
        read_fclib(write(tmp_path / "f.hdf5", M, H, f[:5], w, [0.5]))


# Siconos .dat: FrictionContact3D_1c in dense storage, and a two-contact sparse-block file
DAT_DENSE = "3\n1\n0\n3\n3\n3 3\n15 -1 -2\n-1 14 1\n-2 1 16\n-1 2 3\n0.1\n"
DAT_BLOCKS = ("3 2\n1 6 6\n3 2 2\n3 6\n3 6\n3 3\n0 2 3\n0 1 1\n"
              "0\n4 1 0 1 3 0 0 0 2\n1\n0.1 0 0 0 0.1 0 0 0 0.1\n2\n5 0 0 0 5 0 0 0 5\n"
              "-1 0 0 -1 0 0\n0.5 0.5\n")


def test_fclib_dat_test_files_read(tmp_path):
    (tmp_path / "d.dat").write_text(DAT_DENSE)
    (tmp_path / "b.dat").write_text(DAT_BLOCKS)
    assert read_siconos_dat(tmp_path / "d.dat").W[0, 1] == -1
    b = read_siconos_dat(tmp_path / "b.dat")
    assert b.W[0, 0] == 4 and b.W[0, 3] == 0.1 and b.W[3, 0] == 0 and b.W[5, 5] == 5


BAD_DAT = {
    "dimension_4": (DAT_DENSE.replace("3\n1\n0", "4\n1\n0", 1), "dimension"),
    "dimension_fraction": (DAT_DENSE.replace("3\n1\n0", "3.5\n1\n0", 1), "dimension"),
    "contacts_zero": (DAT_DENSE.replace("3\n1\n0", "3\n0\n0", 1), "contacts"),
    "contacts_huge": (DAT_DENSE.replace("3\n1\n0", "3\n1000000000\n0", 1), "contacts"),
    "contacts_beyond_file": (DAT_DENSE.replace("3\n1\n0", "3\n5000000\n0", 1), "more values"),
    "size_mismatch": (DAT_DENSE.replace("0\n3\n3\n3 3", "0\n4\n4\n4 4", 1), "matrix"),
    "value_nan": (DAT_DENSE.replace("15", "nan", 1), "matrix values"),
    "value_word": (DAT_DENSE.replace("15", "fifteen", 1), "matrix values"),
    "mu_inf": (DAT_DENSE.replace("0.1\n", "inf\n"), "mu"),
    "mu_negative": (DAT_DENSE.replace("0.1\n", "-0.1\n"), "mu"),
    "truncated": (DAT_DENSE[:-6], "end of file"),
    "storage_csparse": (DAT_DENSE.replace("3\n1\n0", "3\n1\n2", 1), "storage"),
    "block_column_decreasing": (DAT_BLOCKS.replace("0 1 1\n", "1 0 1\n"), "increase"),
    "block_column_out_of_range": (DAT_BLOCKS.replace("0 1 1\n", "0 2 1\n"), "column indices"),
    "block_row_pointers_decrease": (DAT_BLOCKS.replace("0 2 3\n", "0 3 2\n"), "pointers"),
    "block_sizes_decrease": (DAT_BLOCKS.replace("3 6\n3 6\n", "6 3\n3 6\n"), "block row sizes"),
    "block_number_wrong": (DAT_BLOCKS.replace("\n1\n0.1", "\n7\n0.1"), "block numbers"),
    "block_header_inconsistent": (DAT_BLOCKS.replace("3 3\n0 2 3", "3 4\n0 2 3"), "header"),
}


@pytest.mark.parametrize("case", sorted(BAD_DAT))
def test_fclib_malformed_dat_is_a_value_error_naming_the_path(tmp_path, case):
    text, what = BAD_DAT[case]
    path = tmp_path / f"{case}.dat"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"path: .*{case}.dat: .*{what}"):
        read_siconos_dat(path)


def test_fclib_binary_dat_is_a_value_error(tmp_path):
    path = tmp_path / "binary.dat"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match=f"path: {path}"):
        read_siconos_dat(path)
