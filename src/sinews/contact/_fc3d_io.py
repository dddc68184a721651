"""Readers for frictional-contact problem files: FCLib HDF5 and Siconos ``.dat``.

Both formats store the *local* frictional contact problem (Acary, Brémond, Huber 2018, §2)

    u = W r + q,        K*_mu  ∋  u + [mu ||u_T||, 0, 0]  ⊥  r  ∈  K_mu        (per contact)

with components ordered **[n, t1, t2]** per contact (normal first; [n, t] in 2-D).  The FCLib
*global* form (FCLib spec, ``fclib.h``) stores instead

    M v = H r + f,      u = H^T v + w,

which, without equality constraints (no ``G``), condenses to the local form by eliminating v:

    W = H^T M^-1 H,     q = H^T M^-1 f + w.

File layouts are described in ``README.md`` of the shipped problems (``sinews/data/siconos/``):

* FCLib matrices follow CSparse: ``nz = -1`` is CSC, ``nz = -2`` is CSR and ``nz >= 0`` is a
  triplet list with ``i`` = row and ``p`` = column (0-based).
* Siconos ``.dat`` files are whitespace-separated tokens: ``d``, ``nc``, a matrix block (dense
  column-major, or sparse block), ``q`` and ``mu``.  Trailing tokens are ignored.

Everything read from a file is validated before any array is built from it (SciPy's sparse
constructors and the solver kernels trust their index arrays): sizes and counts are integers in
range, CSparse pointers start at 0 and never decrease, every row/column index lies inside the
matrix, block indices of sparse-block files increase, and values are finite real numbers.  The
functions here raise ``ValueError`` with a message *without* the path;
:mod:`sinews.contact.fclib` prefixes ``path: <file>:``.

These functions return plain arrays; :mod:`sinews.contact.fclib` wraps them in a
``FrictionContactProblem``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

#: Largest number of entries accepted in one dataset or matrix dimension (2^28: 2 GiB of
#: float64), so that a corrupt header cannot make a reader allocate without bound.
MAX_ENTRIES = 2**28
#: Sparse-block ``.dat`` matrices up to this size are returned dense (as before), larger sparse.
DAT_DENSE_MAX = 2048
_REAL = frozenset("iuf")


# --------------------------------------------------------------------------------------------
# FCLib HDF5
# --------------------------------------------------------------------------------------------


def _member(parent, name, kind):
    import h5py

    want = h5py.Group if kind == "group" else h5py.Dataset
    where = f"{parent.name.rstrip('/')}/{name}"
    if name not in parent:
        raise ValueError(f"missing {kind} {where}")
    obj = parent[name]
    if not isinstance(obj, want):
        raise ValueError(f"{where} is not a {kind}")
    return obj


def _array(parent, name, integer=False):
    """A dataset as a flat array, after checking its dtype and size (before reading it)."""
    ds = _member(parent, name, "dataset")
    kinds = "iu" if integer else _REAL
    if ds.dtype.kind not in kinds:
        what = "integers" if integer else "real numbers"
        raise ValueError(f"{ds.name} must hold {what}, got dtype {ds.dtype}")
    if ds.size > MAX_ENTRIES:
        raise ValueError(f"{ds.name} has {ds.size} entries (more than {MAX_ENTRIES})")
    a = np.asarray(ds[()]).ravel()
    if integer:
        if a.dtype.kind == "u" and a.size and a.max() > 2**62:
            raise ValueError(f"{ds.name} holds an index out of range ({a.max()})")
        return a.astype(np.int64, copy=False)
    a = a.astype(np.float64, copy=False)
    return a


def _int_scalar(parent, name, lo, hi):
    a = _array(parent, name, integer=True)
    if a.size < 1:
        raise ValueError(f"{parent.name.rstrip('/')}/{name} is empty")
    v = int(a[0])
    if not lo <= v <= hi:
        raise ValueError(f"{parent.name.rstrip('/')}/{name} = {v} is out of range [{lo}, {hi}]")
    return v


def _finite(a, where):
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where} contains NaN or infinity")
    return a


def _vector(group, name, length):
    a = _array(_member(group, "vectors", "group"), name)
    where = f"{group.name}/vectors/{name}"
    if a.shape[0] != length:
        raise ValueError(f"{where} has length {a.shape[0]}, expected {length}")
    return _finite(a, where)


def _check_pointers(p, count, nnz_cap, where):
    """CSparse column/row pointers: p[0] = 0, non-decreasing, p[count] within the arrays."""
    if p.shape[0] < count + 1:
        raise ValueError(f"{where}/p has {p.shape[0]} entries, needs {count + 1}")
    p = p[: count + 1]
    if p[0] != 0:
        raise ValueError(f"{where}/p must start at 0, got {p[0]}")
    if count and np.any(np.diff(p) < 0):
        raise ValueError(f"{where}/p decreases (pointers must be non-decreasing)")
    if p[-1] > nnz_cap:
        raise ValueError(f"{where}/p ends at {p[-1]}, beyond the {nnz_cap} stored entries")
    return p


def _check_indices(idx, bound, where, label):
    if idx.size and (idx.min() < 0 or idx.max() >= bound):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise ValueError(f"{where}/{label} holds index {bad}, outside [0, {bound})")
    return idx


def read_csparse(group) -> sp.csr_matrix:
    """One FCLib matrix group (CSparse layout), validated, as a SciPy CSR matrix."""
    where = group.name
    m = _int_scalar(group, "m", 0, MAX_ENTRIES)
    n = _int_scalar(group, "n", 0, MAX_ENTRIES)
    nz = _int_scalar(group, "nz", -2, MAX_ENTRIES)
    p = _array(group, "p", integer=True)
    i = _array(group, "i", integer=True)
    x = _array(group, "x")
    stored = min(i.shape[0], x.shape[0])
    if nz in (-1, -2):  # compressed columns (-1) or rows (-2)
        major, minor = (n, m) if nz == -1 else (m, n)
        p = _check_pointers(p, major, stored, where)
        nnz = int(p[-1])
        i = _check_indices(i[:nnz], minor, where, "i")
        x = _finite(x[:nnz], f"{where}/x")
        cls = sp.csc_matrix if nz == -1 else sp.csr_matrix
        mat = cls((x, i, p), shape=(m, n))
    else:  # triplets: i = row, p = column (duplicates are summed)
        if min(stored, p.shape[0]) < nz:
            raise ValueError(f"{where}: nz = {nz} but i, p, x hold {i.shape[0]}, {p.shape[0]}, "
                             f"{x.shape[0]} entries")
        i = _check_indices(i[:nz], m, where, "i")
        p = _check_indices(p[:nz], n, where, "p (column)")
        x = _finite(x[:nz], f"{where}/x")
        mat = sp.coo_matrix((x, (i, p)), shape=(m, n))
    out = sp.csr_matrix(mat)
    out.sum_duplicates()
    return out


def _string(group, name):
    try:
        value = group["info"][name][()]
    except (KeyError, TypeError, ValueError, OSError):
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").strip()
    return str(value).strip()


def condense_global(M, H, f, w):
    """Eliminate the global velocity: W = H^T M^-1 H and q = H^T M^-1 f + w (sparse W).

    M is inverted exactly where it is block diagonal (rigid bodies: 6x6 blocks, or diagonal),
    which keeps W sparse; a coupled M is factorised with a sparse LU (W then dense-ish).
    """
    M = sp.csr_matrix(M)
    H = sp.csc_matrix(H)
    diag = M.diagonal()
    if M.nnz == np.count_nonzero(diag) and np.all(diag != 0.0):
        # Diagonal mass matrix (all FCLib rigid-body files here): a row scaling.
        Minv = sp.diags(1.0 / diag)
    else:
        Minv = _block_inverse(M)
    if Minv is not None:
        Minv_H = sp.csr_matrix(Minv @ H)
        Minv_f = Minv @ f
    else:
        try:
            lu = spla.splu(sp.csc_matrix(M))
        except RuntimeError as exc:
            raise ValueError(f"M: the mass matrix is singular ({exc})") from None
        Minv_H = sp.csc_matrix(lu.solve(H.toarray()))
        Minv_f = lu.solve(f)
    W = sp.csr_matrix(H.T @ Minv_H)
    q = np.asarray(H.T @ Minv_f + w, dtype=np.float64).ravel()
    if not (np.all(np.isfinite(W.data)) and np.all(np.isfinite(q))):
        raise ValueError("M: the condensed problem H^T M^-1 H overflows (M nearly singular)")
    return W, q


def _block_inverse(M, max_block=64):
    """M^-1 as a sparse matrix when M is block diagonal with blocks of at most ``max_block``
    (connected components of its pattern); None otherwise."""
    if M.shape[0] == 0:
        return sp.csr_matrix((0, 0))
    nb, labels = connected_components(abs(M) + abs(M.T), directed=False)
    sizes = np.bincount(labels, minlength=nb)
    if sizes.max(initial=0) > max_block:
        return None
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)))
    rows, cols, vals = [], [], []
    Md = M.tocsr()
    for size in np.unique(sizes):
        comps = np.nonzero(sizes == size)[0]
        idx = np.stack([order[starts[c] : starts[c] + size] for c in comps])  # (k, size)
        blocks = np.stack([Md[ix][:, ix].toarray() for ix in idx])
        with np.errstate(all="ignore"):
            try:
                inv = np.linalg.inv(blocks)
            except np.linalg.LinAlgError:
                raise ValueError("M: the mass matrix is singular") from None
        if not np.all(np.isfinite(inv)):
            raise ValueError("M: the mass matrix is singular")
        rows.append(np.repeat(idx, size, axis=1).ravel())
        cols.append(np.tile(idx, (1, size)).ravel())
        vals.append(inv.ravel())
    n = M.shape[0]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n))


def read_fclib_arrays(path):
    """Read an FCLib HDF5 file; return a dict with W (sparse), q, mu, dimension, kind, title."""
    import h5py  # optional dependency (extra "fclib")

    try:
        h5 = h5py.File(path, "r")
    except OSError as exc:
        raise ValueError(f"cannot be opened as an HDF5 file ({exc})") from None
    with h5:
        try:
            return _read_h5(h5)
        except (OSError, KeyError, TypeError, RuntimeError, AttributeError, IndexError) as exc:
            raise ValueError(f"unreadable FCLib data ({type(exc).__name__}: {exc})") from None


def _read_h5(h5):
    if "fclib_local" in h5:
        g = _member(h5, "fclib_local", "group")
        if "V" in g or "R" in g:
            raise ValueError("mixed FCLib local problems (V, R) are not supported")
        dim = _int_scalar(g, "spacedim", 2, 3)
        W = read_csparse(_member(g, "W", "group"))
        m = W.shape[0]
        if W.shape[1] != m:
            raise ValueError(f"/fclib_local/W must be square, got {W.shape}")
        q = _vector(g, "q", m)
        kind = "local"
    elif "fclib_global" in h5:
        g = _member(h5, "fclib_global", "group")
        if "G" in g:
            raise ValueError("global FCLib problems with equality constraints (G) are not "
                             "supported")
        dim = _int_scalar(g, "spacedim", 2, 3)
        M = read_csparse(_member(g, "M", "group"))
        H = read_csparse(_member(g, "H", "group"))
        n = M.shape[0]
        if M.shape != (n, n):
            raise ValueError(f"/fclib_global/M must be square, got {M.shape}")
        if H.shape[0] != n:
            raise ValueError(f"/fclib_global/H has {H.shape[0]} rows, M has {n}")
        m = H.shape[1]
        f = _vector(g, "f", n)
        w = _vector(g, "w", m)
        W, q = condense_global(M, H, f, w)
        kind = "global"
    else:
        raise ValueError("holds no /fclib_local or /fclib_global group")
    if m % dim:
        raise ValueError(f"the problem size {m} is not a multiple of spacedim = {dim}")
    mu = _vector(g, "mu", m // dim)
    return {"W": W, "q": q, "mu": mu, "dimension": dim, "kind": kind, "title": _string(g, "title")}


# --------------------------------------------------------------------------------------------
# Siconos .dat
# --------------------------------------------------------------------------------------------


class _Tokens:
    def __init__(self, data: bytes):
        self.items = data.split()
        self.pos = 0

    def take(self, n, what):
        if n > len(self.items) - self.pos:
            raise ValueError(f"unexpected end of file while reading {what} "
                             f"({n} values needed, {len(self.items) - self.pos} left)")
        out = self.items[self.pos : self.pos + n]
        self.pos += n
        return out

    def floats(self, n, what):
        try:
            a = np.array(self.take(n, what), dtype=np.float64)
        except ValueError as exc:
            if "unexpected end" in str(exc):
                raise
            raise ValueError(f"{what}: not a number ({exc})") from None
        return _finite(a, what)

    def ints(self, n, what, lo, hi):
        a = self.floats(n, what)
        if np.any(a != np.round(a)):
            raise ValueError(f"{what}: expected integers")
        if a.size and (a.min() < lo or a.max() > hi):
            bad = a.min() if a.min() < lo else a.max()
            raise ValueError(f"{what}: value {bad:g} out of range [{lo}, {hi}]")
        return a.astype(np.int64)

    def int(self, what, lo, hi):
        return int(self.ints(1, what, lo, hi)[0])


def _strictly_increasing_ends(ends, total, what):
    if ends.size == 0 or ends[0] < 1 or np.any(np.diff(ends) < 1) or ends[-1] != total:
        raise ValueError(f"{what}: block ends must increase strictly and finish at {total}")
    return np.concatenate(([0], ends[:-1]))


def _read_matrix_block(tok: _Tokens, m):
    """A Siconos NumericsMatrix of size m x m: dense (0, column-major) or sparse block (1)."""
    storage = tok.int("matrix storage type", 0, 2)
    size0 = tok.int("matrix rows", 0, MAX_ENTRIES)
    size1 = tok.int("matrix columns", 0, MAX_ENTRIES)
    if (size0, size1) != (m, m):
        raise ValueError(f"matrix is {size0}x{size1}, expected {m}x{m} (d * nc)")
    if storage == 0:
        again = tok.ints(2, "repeated matrix sizes", 0, MAX_ENTRIES)
        if tuple(again) != (m, m):
            raise ValueError(f"repeated matrix sizes {tuple(again)} differ from ({m}, {m})")
        vals = tok.floats(m * m, "matrix values")
        return vals.reshape((m, m), order="F")
    if storage == 2:
        raise ValueError("CSparse matrix storage (type 2) is not supported")
    nbblocks = tok.int("number of blocks", 0, MAX_ENTRIES)
    nrb = tok.int("number of block rows", 1, max(m, 1))
    ncb = tok.int("number of block columns", 1, max(m, 1))
    row_ends = tok.ints(nrb, "block row sizes", 1, m)
    col_ends = tok.ints(ncb, "block column sizes", 1, m)
    row_starts = _strictly_increasing_ends(row_ends, m, "block row sizes")
    col_starts = _strictly_increasing_ends(col_ends, m, "block column sizes")
    filled1 = tok.int("block row pointer count", 0, MAX_ENTRIES)
    filled2 = tok.int("block index count", 0, MAX_ENTRIES)
    if filled1 != nrb + 1 or filled2 != nbblocks:
        raise ValueError(f"inconsistent sparse-block header: pointer counts ({filled1}, "
                         f"{filled2}), expected ({nrb + 1}, {nbblocks})")
    index1 = tok.ints(filled1, "block row pointers", 0, nbblocks)
    index2 = tok.ints(filled2, "block column indices", 0, ncb - 1)
    if index1[0] != 0 or index1[-1] != nbblocks or np.any(np.diff(index1) < 0):
        raise ValueError("block row pointers must start at 0, never decrease and end at the "
                         "number of blocks")
    block_row = np.repeat(np.arange(nrb), np.diff(index1))
    same_row = block_row[1:] == block_row[:-1]
    if np.any(same_row & (np.diff(index2) <= 0)):
        raise ValueError("block column indices must increase within each block row")
    h = (row_ends - row_starts)[block_row]
    w = (col_ends - col_starts)[index2]
    sizes = h * w
    total = int(nbblocks + sizes.sum())
    flat = tok.floats(total, "matrix blocks")
    heads = (np.cumsum(1 + sizes) - (1 + sizes)).astype(np.int64)
    if np.any(flat[heads] != np.arange(nbblocks)):
        raise ValueError("block numbers must run 0, 1, 2, ...")
    keep = np.ones(total, dtype=bool)
    keep[heads] = False
    vals = flat[keep]
    # entry e of block k (column-major, h_k rows): row r0 + e % h_k, column c0 + e // h_k
    k = np.repeat(np.arange(nbblocks), sizes)
    e = np.arange(vals.shape[0]) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    rows = row_starts[block_row][k] + e % h[k]
    cols = col_starts[index2][k] + e // h[k]
    W = sp.csr_matrix((vals, (rows, cols)), shape=(m, m))
    return W.toarray() if m <= DAT_DENSE_MAX else W


def read_siconos_dat_arrays(path):
    """Read a Siconos fc2d/fc3d ``.dat`` file; return a dict with W, q, mu, dimension.

    W is dense, except for sparse-block files larger than :data:`DAT_DENSE_MAX` (CSR).
    """
    with open(path, "rb") as fh:
        tok = _Tokens(fh.read())
    dim = tok.int("dimension d", 2, 3)
    nc = tok.int("number of contacts nc", 1, MAX_ENTRIES // 3)
    m = dim * nc
    if m > len(tok.items):  # q alone needs m values: a header cannot claim more than the file holds
        raise ValueError(f"nc = {nc} contacts need more values than the file holds")
    W = _read_matrix_block(tok, m)
    q = tok.floats(m, "q")
    mu = tok.floats(nc, "mu")
    return {"W": W, "q": q, "mu": mu, "dimension": dim, "kind": "local", "title": ""}
