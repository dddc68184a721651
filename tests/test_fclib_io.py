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
