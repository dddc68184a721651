"""Readers for frictional-contact problem files: FCLib HDF5 and Siconos ``.dat``.

Both formats store the *local* frictional contact problem (Acary, Brémond, Huber 2018, §2)

    u = W r + q,        K*_mu  ∋  u + [mu ||u_T||, 0, 0]  ⊥  r  ∈  K_mu        (per contact)

with components ordered **[n, t1, t2]** per contact (normal first; [n, t] in 2-D).  The FCLib
*global* form (FCLib spec, ``fclib.h``) stores instead

    M v = H r + f,      u = H^T v + w,

which, without equality constraints (no ``G``), condenses to the local form by eliminating v:

    W = H^T M^-1 H,     q = H^T M^-1 f + w.

File layouts are described in ``shared/data/siconos/README.md``:

* FCLib matrices follow CSparse: ``nz = -1`` is CSC, ``nz = -2`` is CSR and ``nz >= 0`` is a
  triplet list with ``i`` = row and ``p`` = column (0-based).
* Siconos ``.dat`` files are whitespace-separated tokens: ``d``, ``nc``, a matrix block (dense
  column-major, or sparse block), ``q`` and ``mu``.  Trailing tokens are ignored.

These functions return plain arrays; :mod:`sinews.contact.fclib` wraps them in a
``FrictionContactProblem``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


# --------------------------------------------------------------------------------------------
# FCLib HDF5
# --------------------------------------------------------------------------------------------


def _read_csparse(group) -> sp.csr_matrix:
    """One FCLib matrix group (CSparse layout) as a SciPy CSR matrix."""
    m = int(np.asarray(group["m"]).ravel()[0])
    n = int(np.asarray(group["n"]).ravel()[0])
    nz = int(np.asarray(group["nz"]).ravel()[0])
    p = np.asarray(group["p"], dtype=np.int64).ravel()
    i = np.asarray(group["i"], dtype=np.int64).ravel()
    x = np.asarray(group["x"], dtype=np.float64).ravel()
    if nz == -1:  # compressed columns
        nnz = p[n]
        mat = sp.csc_matrix((x[:nnz], i[:nnz], p[: n + 1]), shape=(m, n))
    elif nz == -2:  # compressed rows
        nnz = p[m]
        mat = sp.csr_matrix((x[:nnz], i[:nnz], p[: m + 1]), shape=(m, n))
    elif nz >= 0:  # triplets: i = row, p = column (duplicates are summed)
        mat = sp.coo_matrix((x[:nz], (i[:nz], p[:nz])), shape=(m, n))
    else:
        raise ValueError(f"path: unknown CSparse storage code nz={nz}")
    return sp.csr_matrix(mat)


def _vector(group, name):
    return np.asarray(group["vectors"][name], dtype=np.float64).ravel()


def _string(group, name):
    try:
        value = group["info"][name][()]
    except KeyError:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").strip()
    return str(value).strip()


def condense_global(M, H, f, w):
    """Eliminate the global velocity: W = H^T M^-1 H and q = H^T M^-1 f + w (sparse W)."""
    M = sp.csc_matrix(M)
    H = sp.csc_matrix(H)
    diag = M.diagonal()
    if M.nnz == np.count_nonzero(diag) and np.all(diag != 0.0):
        # Diagonal mass matrix (all FCLib rigid-body files here): a row scaling.
        Minv_H = sp.diags(1.0 / diag) @ H
        Minv_f = f / diag
    else:
        lu = spla.splu(M)
        Minv_H = sp.csc_matrix(lu.solve(H.toarray()))
        Minv_f = lu.solve(f)
    W = sp.csr_matrix(H.T @ Minv_H)
    q = H.T @ Minv_f + w
    return W, np.asarray(q, dtype=np.float64).ravel()


def read_fclib_arrays(path):
    """Read an FCLib HDF5 file; return a dict with W (sparse), q, mu, dimension, kind, title."""
    import h5py  # optional dependency (extra "fclib")

    with h5py.File(path, "r") as h5:
        if "fclib_local" in h5:
            g = h5["fclib_local"]
            if "V" in g or "R" in g:
                raise ValueError("path: mixed FCLib local problems (V, R) are not supported")
            W = _read_csparse(g["W"])
            q = _vector(g, "q")
            kind = "local"
        elif "fclib_global" in h5:
            g = h5["fclib_global"]
            if "G" in g:
                raise ValueError("path: global FCLib problems with equality constraints (G) are not supported")
            M = _read_csparse(g["M"])
            H = _read_csparse(g["H"])
            W, q = condense_global(M, H, _vector(g, "f"), _vector(g, "w"))
            kind = "global"
        else:
            raise ValueError(f"path: {path} holds no /fclib_local or /fclib_global group")
        dim = int(np.asarray(g["spacedim"]).ravel()[0])
        mu = _vector(g, "mu")
        title = _string(g, "title")
    return {"W": W, "q": q, "mu": mu, "dimension": dim, "kind": kind, "title": title}


# --------------------------------------------------------------------------------------------
# Siconos .dat
# --------------------------------------------------------------------------------------------


class _Tokens:
    def __init__(self, text):
        self.items = text.split()
        self.pos = 0

    def take(self, n=1):
        if self.pos + n > len(self.items):
            raise ValueError("path: unexpected end of file")
        out = self.items[self.pos : self.pos + n]
        self.pos += n
        return out

    def int(self):
        return int(float(self.take()[0]))

    def ints(self, n):
        return np.array([int(float(t)) for t in self.take(n)], dtype=np.int64)

    def floats(self, n):
        return np.array(self.take(n), dtype=np.float64)


def _read_matrix_block(tok: _Tokens):
    """A Siconos NumericsMatrix: dense (0, column-major) or sparse block (1)."""
    storage = tok.int()
    size0 = tok.int()
    size1 = tok.int()
    if storage == 0:
        tok.take(2)  # sizes repeated
        vals = tok.floats(size0 * size1)
        return vals.reshape((size0, size1), order="F")
    if storage == 1:
        nbblocks = tok.int()
        nrow_blocks = tok.int()
        ncol_blocks = tok.int()
        row_ends = tok.ints(nrow_blocks)
        col_ends = tok.ints(ncol_blocks)
        filled1 = tok.int()
        filled2 = tok.int()
        if filled1 != nrow_blocks + 1 or filled2 != nbblocks:
            raise ValueError("path: inconsistent sparse-block header")
        index1 = tok.ints(filled1)
        index2 = tok.ints(filled2)
        row_starts = np.concatenate(([0], row_ends[:-1]))
        col_starts = np.concatenate(([0], col_ends[:-1]))
        out = np.zeros((size0, size1))
        for bi in range(nrow_blocks):
            for k in range(index1[bi], index1[bi + 1]):
                tok.take(1)  # block number
                bj = index2[k]
                r0, r1 = row_starts[bi], row_ends[bi]
                c0, c1 = col_starts[bj], col_ends[bj]
                vals = tok.floats((r1 - r0) * (c1 - c0))
                out[r0:r1, c0:c1] = vals.reshape((r1 - r0, c1 - c0), order="F")
        return out
    raise ValueError(f"path: unsupported Siconos matrix storage type {storage}")


def read_siconos_dat_arrays(path):
    """Read a Siconos fc2d/fc3d ``.dat`` file; return a dict with W (dense), q, mu, dimension."""
    tok = _Tokens(Path(path).read_text())
    dim = tok.int()
    nc = tok.int()
    W = _read_matrix_block(tok)
    m = dim * nc
    if W.shape != (m, m):
        raise ValueError(f"path: matrix is {W.shape}, expected ({m}, {m}) for d={dim}, nc={nc}")
    q = tok.floats(m)
    mu = tok.floats(nc)
    return {"W": W, "q": q, "mu": mu, "dimension": dim, "kind": "local", "title": Path(path).stem}
