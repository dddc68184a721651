"""Input validation shared by the LCP solvers.

Every public solver calls these helpers first, so bad input (wrong shape, non-square matrix,
mismatched sizes, NaN or infinity) raises :class:`ValueError` naming the offending argument.
"""

from __future__ import annotations

import numpy as np


def as_matrix(value, name: str, *, square: bool = False, rows: int | None = None,
              cols: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite 2-D float array (not copied when already one).

    Raises ValueError naming ``name`` for a wrong shape or non-finite entries."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 2-D array ({exc})") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {arr.ndim} dimension(s)")
    if square and arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {arr.shape}")
    if rows is not None and arr.shape[0] != rows:
        raise ValueError(f"{name} must have {rows} rows, got shape {arr.shape}")
    if cols is not None and arr.shape[1] != cols:
        raise ValueError(f"{name} must have {cols} columns, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def as_vector(value, name: str, size: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite 1-D float array (of length ``size``), or raise ValueError."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 1-D array ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got {arr.ndim} dimension(s)")
    if size is not None and arr.shape[0] != size:
        raise ValueError(f"{name} must have length {size} to match M, got {arr.shape[0]}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def lcp_data(M, q) -> tuple[np.ndarray, np.ndarray]:
    """Validate an LCP (M square, q of matching length, both finite)."""
    M = as_matrix(M, "M", square=True)
    q = as_vector(q, "q", M.shape[0])
    return M, q


def check_tolerance(value, name: str) -> float:
    """A tolerance must be a real, non-NaN number (negative values select a default)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number") from None
    if np.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value
