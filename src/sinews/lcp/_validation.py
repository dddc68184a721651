"""Input validation shared by the LCP solvers.

Every public function calls these helpers first, so bad input raises :class:`ValueError` whose
message starts with the name of the offending argument. Arrays follow the library's one dtype
rule (:func:`sinews._checks.real_array`): real numeric dtypes only; complex, bool, datetime,
timedelta, string and object data are refused, never truncated or reinterpreted. Scalar options
are checked for type (a string, a bool or a complex number is not a tolerance) and range.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike

from sinews._checks import real_array

#: Largest pivot / iteration / sweep count handed to a compiled kernel (int64); a larger
#: request means "no limit" and is clipped to this.
MAX_COUNT = 2 ** 62


def as_matrix(value, name: str, *, square: bool = False, rows: int | None = None,
              cols: int | None = None, finite: bool = True) -> np.ndarray:
    """``value`` as a finite 2-D float64 array (not copied when it already is one)."""
    arr = real_array(value, name, ndim=2, finite=False)
    if square and arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {arr.shape}")
    if rows is not None and arr.shape[0] != rows:
        raise ValueError(f"{name} must have {rows} rows, got shape {arr.shape}")
    if cols is not None and arr.shape[1] != cols:
        raise ValueError(f"{name} must have {cols} columns, got shape {arr.shape}")
    if finite and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def as_vector(value: ArrayLike, name: str, size: int | None = None, *, what: str = "M") -> np.ndarray:
    """``value`` as a finite 1-D float64 array (of length ``size``, to match ``what``)."""
    arr = real_array(value, name, ndim=1, finite=False)
    if size is not None and arr.shape[0] != size:
        raise ValueError(f"{name} must have length {size} to match {what}, got {arr.shape[0]}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def lcp_data(M: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate an LCP (M square, q of matching length, both finite)."""
    M = as_matrix(M, "M", square=True)
    q = as_vector(q, "q", M.shape[0])
    return M, q


def _is_real_scalar(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iuf"
    return isinstance(value, (numbers.Real, np.integer, np.floating))


def real_number(value, name: str) -> float:
    """A finite real number (int, float or NumPy real scalar; not bool, str or complex)."""
    if type(value) is float:                          # the common case, cheaply
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite real number, got {value}")
        return value
    if not _is_real_scalar(value):
        raise ValueError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        out = float(value)
    except (OverflowError, TypeError, ValueError):
        raise ValueError(f"{name} must be a finite real number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be a finite real number, got {out}")
    return out


def check_tolerance(value, name: str) -> float:
    """A tolerance: a finite real number; negative values select a default where documented."""
    return real_number(value, name)


def nonnegative(value, name: str) -> float:
    """A finite real number >= 0."""
    out = real_number(value, name)
    if out < 0:
        raise ValueError(f"{name} must be non-negative, got {out}")
    return out


def optional_tolerance(value: float | None, name: str) -> float | None:
    """None, or a finite real number >= 0."""
    return None if value is None else nonnegative(value, name)


def integer(value, name: str, *, minimum: int | None = None) -> int:
    """An integer (int, NumPy integer or an integral float; not bool or str), >= ``minimum``."""
    if type(value) is int or (isinstance(value, (numbers.Integral, np.integer))
                              and not isinstance(value, (bool, np.bool_))):
        out = int(value)
    elif _is_real_scalar(value) and float(value).is_integer():
        out = int(float(value))
    else:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {out}")
    return out


def count(value, name: str) -> int:
    """A non-negative iteration / pivot count, clipped to :data:`MAX_COUNT`."""
    return min(integer(value, name, minimum=0), MAX_COUNT)


def flag(value, name: str) -> bool:
    """A bool (or NumPy bool); anything else is refused instead of being truth-tested."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


# 10.0 ** k is positive from _MIN_EXP on and overflows from _OVERFLOW_EXP on.
_MIN_EXP = -323
_OVERFLOW_EXP = 309


def regularisation_schedule(min_exp, step_exp, max_exp) -> tuple[range, str]:
    """The exponents k = min_exp, min_exp + step_exp, ... (< max_exp) worth trying.

    Exponents whose 10^k underflows to 0 would repeat the unregularised attempt and are left
    out; those whose 10^k overflows cannot be tried. Returns the exponents (a range, computed
    without enumerating the ones left out) and a note for the status ("" if nothing was left
    out because of overflow).
    """
    lo = integer(min_exp, "min_exp")
    step = integer(step_exp, "step_exp", minimum=1)
    hi = integer(max_exp, "max_exp")
    if lo < _MIN_EXP:
        lo += -((lo - _MIN_EXP) // step) * step              # first k >= _MIN_EXP
    note = ""
    if hi > _OVERFLOW_EXP:
        first_over = lo + max(0, -((lo - _OVERFLOW_EXP) // step)) * step
        if first_over < hi:
            note = f"10^k overflows for k >= {_OVERFLOW_EXP}; those exponents were not tried"
        hi = _OVERFLOW_EXP
    return range(lo, hi, step), note


def regularised(M: np.ndarray, k: int) -> np.ndarray | None:
    """M + 10^k I, or None when that overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        MM = M + (10.0 ** k) * np.eye(M.shape[0])
    return MM if np.isfinite(MM).all() else None
