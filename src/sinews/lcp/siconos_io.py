"""Readers for the Siconos ``.dat`` LCP and MLCP test files (layouts: ``README.md`` of the
shipped problems, ``sinews.data.path("siconos", "README.md")``).

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

Everything read is validated before use, and a malformed file raises ``ValueError`` naming the
path and what is wrong: a size or count that is negative or inconsistent, a sparse-block
structure whose pointers or indices are out of range, decreasing or repeated, a value that is
NaN or infinite, a file that ends early, that cannot be read or is not text. A file never
yields a partly read or silently zero-filled matrix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

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


#: A sparse-block matrix is expanded to a dense one; refuse sizes beyond this many entries
#: (800 MB) instead of failing with a MemoryError (the LCP solvers are dense anyway).
MAX_DENSE_ENTRIES = 10 ** 8


def _open(path) -> tuple[Path, list[str]]:
    """The file's whitespace-separated tokens; every failure names the path."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    try:
        path = Path(path)
    except TypeError as exc:        # a PathLike whose __fspath__ returns bytes, ...
        raise ValueError(f"path must be a str or os.PathLike: {exc}") from None
    shown = _short(str(path), 200)
    try:
        if not path.is_file():
            raise ValueError(f"path: {shown} does not exist or is not a regular file")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"path: {shown} is not a text file (not UTF-8)") from None
    except OSError as exc:
        raise ValueError(f"path: {shown} cannot be read: {exc.strerror or exc}") from None
    return path, text.split()


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class _Tokens:
    def __init__(self, path: Path, items: list[str]):
        self.path = path
        self.items = items
        self.pos = 0

    def error(self, message: str) -> ValueError:
        return ValueError(f"path: {self.path}: {message}")

    def next(self, what: str) -> str:
        if self.pos >= len(self.items):
            raise ValueError(f"path: {self.path} ended while reading {what}")
        tok = self.items[self.pos]
        self.pos += 1
        return tok

    def int(self, what: str, minimum: int | None = 0) -> int:
        """An integer token (>= ``minimum`` unless that is None)."""
        tok = self.next(what)
        try:
            value = int(tok) if "_" not in tok else None
        except ValueError:
            value = None
        if value is None:
            raise self.error(f"expected an integer for {what}, got {_short(tok)!r}")
        if minimum is not None and value < minimum:
            raise self.error(f"{what} must be at least {minimum}, got {value}")
        return value

    def ints(self, count: int, what: str, minimum: int | None = 0) -> list[int]:
        self.need(count, what)
        return [self.int(what, minimum) for _ in range(count)]

    def need(self, count: int, what: str) -> None:
        """Fail before allocating anything when fewer than ``count`` tokens are left."""
        left = len(self.items) - self.pos
        if count > left:
            raise ValueError(f"path: {self.path} ended while reading {what} ({count} values "
                             f"needed, {left} left)")

    def floats(self, count: int, what: str) -> np.ndarray:
        """``count`` finite numbers."""
        self.need(count, what)
        out = np.empty(count)
        for k in range(count):
            tok = self.next(what)
            try:
                if "_" in tok:          # Python accepts 1_0; fscanf does not
                    raise ValueError(tok)
                out[k] = float(tok)
            except ValueError:
                raise self.error(f"expected a number in {what}, got {_short(tok)!r}") from None
            if not np.isfinite(out[k]):
                raise self.error(f"{what} contains a non-finite value {_short(tok)!r} (NaN, "
                                 f"infinity or out of the float range)")
        return out


def _ends(tok: _Tokens, count: int, total: int, what: str) -> list[int]:
    """Cumulative block ends: strictly increasing, ending at ``total``."""
    ends = tok.ints(count, what, minimum=1)
    if any(b <= a for a, b in zip(ends, ends[1:])):
        raise tok.error(f"{what} {ends} must be strictly increasing")
    if (ends[-1] if ends else 0) != total:
        raise tok.error(f"{what} {ends} must end at {total}")
    return ends


def _read_matrix(tok: _Tokens, what: str) -> np.ndarray:
    """Read a Siconos matrix block (storage 0 dense or 1 sparse block)."""
    storage = tok.int(f"{what} storage type", minimum=None)
    rows = tok.int(f"{what} rows")
    cols = tok.int(f"{what} columns")
    if storage == 0:
        rows2, cols2 = tok.int(f"{what} rows"), tok.int(f"{what} columns")
        if (rows2, cols2) != (rows, cols):
            raise tok.error(f"{what} sizes {rows}x{cols} and {rows2}x{cols2} disagree")
        vals = tok.floats(rows * cols, what)
        return vals.reshape((rows, cols), order="F")
    if storage != 1:
        raise tok.error(f"unsupported matrix storage type {storage} for {what}")
    if rows * cols > MAX_DENSE_ENTRIES:
        raise tok.error(f"{what} is {rows}x{cols}, too large to read as a dense matrix")
    nblocks = tok.int(f"{what} number of blocks")
    nbr, nbc = tok.int(f"{what} block rows"), tok.int(f"{what} block columns")
    row_ends = _ends(tok, nbr, rows, f"{what} block row ends")
    col_ends = _ends(tok, nbc, cols, f"{what} block column ends")
    filled1, filled2 = tok.int(f"{what} filled1"), tok.int(f"{what} filled2")
    if filled1 != nbr + 1:
        raise tok.error(f"{what} filled1 = {filled1} must be the number of block rows + 1 "
                        f"= {nbr + 1}")
    if filled2 != nblocks:
        raise tok.error(f"{what} filled2 = {filled2} must equal the number of blocks "
                        f"{nblocks}")
    index1 = tok.ints(filled1, f"{what} index1 (block row pointers)")
    if index1[0] != 0 or index1[-1] != nblocks or any(
            b < a for a, b in zip(index1, index1[1:])):
        raise tok.error(f"{what} index1 {index1} must be non-decreasing from 0 to the number "
                        f"of blocks {nblocks}")
    index2 = tok.ints(filled2, f"{what} index2 (block column indices)")
    for br in range(nbr):
        cols_br = index2[index1[br]:index1[br + 1]]
        if any(bc >= nbc for bc in cols_br):
            raise tok.error(f"{what} index2 has a block column index >= the number of block "
                            f"columns {nbc} (block row {br}: {cols_br})")
        if any(b <= a for a, b in zip(cols_br, cols_br[1:])):
            raise tok.error(f"{what} index2 must be strictly increasing within block row "
                            f"{br}, got {cols_br}")
    out = np.zeros((rows, cols))
    row_starts = [0] + row_ends[:-1]
    col_starts = [0] + col_ends[:-1]
    for br in range(nbr):
        for k in range(index1[br], index1[br + 1]):
            number = tok.int(f"{what} block number")
            if number != k:
                raise tok.error(f"{what}: block number {number} where {k} was expected")
            bc = index2[k]
            r0, r1 = row_starts[br], row_ends[br]
            c0, c1 = col_starts[bc], col_ends[bc]
            block = tok.floats((r1 - r0) * (c1 - c0), f"{what} block {k}")
            out[r0:r1, c0:c1] = block.reshape((r1 - r0, c1 - c0), order="F")
    return out


def read_siconos_lcp(path: str | os.PathLike) -> SiconosLCP:
    """Read a Siconos LCP ``.dat`` file (dense or sparse-block M), validated (module docstring)."""
    path, items = _open(path)
    tok = _Tokens(path, items)
    n = tok.int("n")
    M = _read_matrix(tok, "M")
    if M.shape != (n, n):
        raise tok.error(f"M has shape {M.shape}, expected ({n}, {n})")
    q = tok.floats(n, "q")
    return SiconosLCP(M=M, q=q, path=path)


def read_siconos_mlcp(path: str | os.PathLike) -> SiconosMLCP:
    """Read a Siconos MLCP ``.dat`` file ((M, q) and/or the ABCD blocks), validated.

    M may have any number of rows (``Rectangular_mlcp.dat`` stores 3 x 2) but must have n + m
    columns, matching q.
    """
    path, items = _open(path)
    tok = _Tokens(path, items)
    st1, st2 = tok.int("isStorageType1"), tok.int("isStorageType2")
    if st1 not in (0, 1) or st2 not in (0, 1):
        raise tok.error(f"isStorageType1 and isStorageType2 must be 0 or 1, got {st1} {st2}")
    if not (st1 or st2):
        raise tok.error("isStorageType1 and isStorageType2 are both 0: no problem data")
    n, m = tok.int("n"), tok.int("m")
    boundaries = [tok.int("block boundaries")]
    if boundaries[0] != 0:
        raise tok.error(f"block boundaries must start at 0, got {boundaries[0]}")
    while boundaries[-1] != n + m:
        boundaries.append(tok.int("block boundaries"))
        if boundaries[-1] <= boundaries[-2] or boundaries[-1] > n + m:
            raise tok.error(f"block boundaries {boundaries} must increase strictly up to "
                            f"n + m = {n + m}")
    flags = tok.ints(len(boundaries) - 1, "block flags")
    if any(f not in (0, 1) for f in flags):
        raise tok.error(f"block flags {flags} must be 0 (equality) or 1 (complementarity)")
    M = q = A = B = C = D = a = b = None
    if st1:
        M = _read_matrix(tok, "M")
        if M.shape[1] != n + m:
            raise tok.error(f"M has shape {M.shape}, expected n + m = {n + m} columns")
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
