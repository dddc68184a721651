"""Readers for the Siconos ``.dat`` LCP and MLCP test files (shared/data/siconos/README.md).

Siconos writes these files with ``fprintf`` and reads them with ``fscanf``, so a file is a stream
of whitespace-separated tokens; line breaks carry no meaning and trailing tokens (comments, stray
numbers) are ignored.

* Dense matrices (storage 0) are stored **column-major**: value k is entry (k mod rows, k div rows).
* Sparse-block matrices (storage 1) list dense blocks (each column-major) with CSR-like block
  pointers.
* In MLCP files the A, B, C, D blocks are stored **row-major**, unlike the M block.

LCP file:  n, <matrix M>, q.
MLCP file: st1 st2, n m, block boundaries (0 ... n+m), block flags, [<matrix M>, q if st1],
           [A (n x n), B (m x m), C (n x m), D (m x n), a (n), b (m) if st2].
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["SiconosLCP", "SiconosMLCP", "read_siconos_lcp", "read_siconos_mlcp"]


@dataclass(frozen=True)
class SiconosLCP:
    """An LCP read from a Siconos file: w = M z + q, 0 <= z perp w >= 0."""

    M: np.ndarray
    q: np.ndarray
    path: Path


@dataclass(frozen=True)
class SiconosMLCP:
    """A mixed LCP read from a Siconos file.

    Unknowns u (n, free) and v (m, >= 0); A u + C v + a = 0 and 0 <= w = D u + B v + b perp v.
    ``M`` (possibly non-square, as stored) and ``q`` are None when the file has no (M, q) part;
    A..b are None when it has no ABCD part.
    """

    n: int
    m: int
    M: np.ndarray | None
    q: np.ndarray | None
    A: np.ndarray | None
    B: np.ndarray | None
    C: np.ndarray | None
    D: np.ndarray | None
    a: np.ndarray | None
    b: np.ndarray | None
    block_boundaries: tuple[int, ...]
    block_flags: tuple[int, ...]
    path: Path


class _Tokens:
    def __init__(self, path: Path):
        self.path = path
        self.items = Path(path).read_text().split()
        self.pos = 0

    def next(self, what: str) -> str:
        if self.pos >= len(self.items):
            raise ValueError(f"path: {self.path} ended while reading {what}")
        tok = self.items[self.pos]
        self.pos += 1
        return tok

    def int(self, what: str) -> int:
        tok = self.next(what)
        try:
            return int(tok)
        except ValueError:
            raise ValueError(f"path: {self.path}: expected an integer for {what}, "
                             f"got {tok!r}") from None

    def floats(self, count: int, what: str) -> np.ndarray:
        out = np.empty(count)
        for k in range(count):
            tok = self.next(what)
            try:
                out[k] = float(tok)
            except ValueError:
                raise ValueError(f"path: {self.path}: expected a number in {what}, "
                                 f"got {tok!r}") from None
        return out


def _read_matrix(tok: _Tokens, what: str) -> np.ndarray:
    """Read a Siconos matrix block (storage 0 dense or 1 sparse block)."""
    storage = tok.int(f"{what} storage type")
    rows = tok.int(f"{what} rows")
    cols = tok.int(f"{what} columns")
    if storage == 0:
        rows2, cols2 = tok.int(f"{what} rows"), tok.int(f"{what} columns")
        if (rows2, cols2) != (rows, cols):
            raise ValueError(f"path: {tok.path}: {what} sizes {rows}x{cols} and "
                             f"{rows2}x{cols2} disagree")
        vals = tok.floats(rows * cols, what)
        return vals.reshape((rows, cols), order="F")
    if storage == 1:
        tok.int(f"{what} number of blocks")
        nbr, nbc = tok.int(f"{what} block rows"), tok.int(f"{what} block columns")
        row_ends = [tok.int(f"{what} block row sizes") for _ in range(nbr)]
        col_ends = [tok.int(f"{what} block column sizes") for _ in range(nbc)]
        filled1, filled2 = tok.int(f"{what} filled1"), tok.int(f"{what} filled2")
        index1 = [tok.int(f"{what} index1") for _ in range(filled1)]
        index2 = [tok.int(f"{what} index2") for _ in range(filled2)]
        out = np.zeros((rows, cols))
        row_starts = [0] + row_ends[:-1]
        col_starts = [0] + col_ends[:-1]
        for br in range(nbr):
            for k in range(index1[br], index1[br + 1]):
                tok.int(f"{what} block number")
                bc = index2[k]
                r0, r1 = row_starts[br], row_ends[br]
                c0, c1 = col_starts[bc], col_ends[bc]
                block = tok.floats((r1 - r0) * (c1 - c0), f"{what} block {k}")
                out[r0:r1, c0:c1] = block.reshape((r1 - r0, c1 - c0), order="F")
        return out
    raise ValueError(f"path: {tok.path}: unsupported matrix storage type {storage} for {what}")


def read_siconos_lcp(path) -> SiconosLCP:
    """Read a Siconos LCP ``.dat`` file (dense or sparse-block M)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no such file {path}")
    tok = _Tokens(path)
    n = tok.int("n")
    M = _read_matrix(tok, "M")
    if M.shape != (n, n):
        raise ValueError(f"path: {path}: M has shape {M.shape}, expected ({n}, {n})")
    q = tok.floats(n, "q")
    return SiconosLCP(M=M, q=q, path=path)


def read_siconos_mlcp(path) -> SiconosMLCP:
    """Read a Siconos MLCP ``.dat`` file ((M, q) and/or the ABCD blocks)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no such file {path}")
    tok = _Tokens(path)
    st1, st2 = tok.int("isStorageType1"), tok.int("isStorageType2")
    n, m = tok.int("n"), tok.int("m")
    boundaries = [tok.int("block boundaries")]
    while boundaries[-1] != n + m:
        if len(boundaries) > n + m + 1:
            raise ValueError(f"path: {path}: block boundaries do not end with n + m = {n + m}")
        boundaries.append(tok.int("block boundaries"))
    flags = [tok.int("block flags") for _ in range(len(boundaries) - 1)]
    M = q = A = B = C = D = a = b = None
    if st1:
        M = _read_matrix(tok, "M")
        q = tok.floats(n + m, "q")
    if st2:
        A = tok.floats(n * n, "A").reshape(n, n)
        B = tok.floats(m * m, "B").reshape(m, m)
        C = tok.floats(n * m, "C").reshape(n, m)
        D = tok.floats(m * n, "D").reshape(m, n)
        a = tok.floats(n, "a")
        b = tok.floats(m, "b")
    return SiconosMLCP(n=n, m=m, M=M, q=q, A=A, B=B, C=C, D=D, a=a, b=b,
                       block_boundaries=tuple(boundaries), block_flags=tuple(flags), path=path)
