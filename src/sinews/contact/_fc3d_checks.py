"""Validation of the scalar options of :mod:`sinews.contact.fclib` (ValueError naming the argument).

The common cases (a Python ``float`` tolerance, an ``int`` iteration cap) are recognised by one
``type(x) is ...`` test each, so that checking costs well under a microsecond on the solvers'
small-problem path.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

from .._checks import REAL_KINDS

#: Largest accepted iteration count or period (kept exact in the float64 parameter vectors).
INT_MAX = 2**53


def _is_real(x):
    """A real number: int, float, a NumPy integer or floating scalar, or a 0-d array of those
    (the one dtype rule: booleans, complex numbers and timedelta64, an np.integer subclass,
    are refused)."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (np.generic, np.ndarray)):
        return x.ndim == 0 and x.dtype.kind in REAL_KINDS
    return isinstance(x, numbers.Real)


def _describe(x):
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def positive_real(x, name):
    """A finite real number > 0 (bool, complex, strings, NaN and infinity refused)."""
    if type(x) is float:
        if 0.0 < x < math.inf:
            return x
    elif _is_real(x):
        v = float(x)
        if 0.0 < v < math.inf:
            return v
    raise ValueError(f"{name} must be a finite number > 0, got {_describe(x)}")


def real_in(x, name, lo, hi, *, lo_open=True, hi_open=True):
    """A finite real number in the interval (lo, hi), with open or closed ends."""
    if type(x) is float and lo < x < hi:
        return x
    if _is_real(x):
        v = float(x)
        above = v > lo if lo_open else v >= lo
        below = v < hi if hi_open else v <= hi
        if math.isfinite(v) and above and below:
            return v
    lb = "(" if lo_open else "["
    rb = ")" if hi_open else "]"
    raise ValueError(f"{name} must be a finite number in {lb}{lo:g}, {hi:g}{rb}, "
                     f"got {_describe(x)}")


def integer(x, name, lo=1, hi=INT_MAX):
    """An integer in [lo, hi]; integral floats (``1e4``) are accepted, bool is not."""
    if type(x) is int:
        if lo <= x <= hi:
            return x
    elif isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_)):
        v = int(x)
        if lo <= v <= hi:
            return v
    elif isinstance(x, (float, np.floating)) and math.isfinite(x) and float(x).is_integer():
        v = int(x)
        if lo <= v <= hi:
            return v
    raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {_describe(x)}")


def boolean(x, name):
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    raise ValueError(f"{name} must be True or False, got {_describe(x)}")


def one_of(x, name, choices):
    if isinstance(x, str) and x in choices:
        return x
    allowed = ", ".join(repr(c) for c in choices)
    raise ValueError(f"{name} must be one of {allowed}, got {_describe(x)}")


def sparse_W(W, m):
    """A SciPy sparse ``W`` as a validated, read-only (m, m) float64 CSR matrix (indices
    checked in full before any conversion touches them)."""
    if W.dtype.kind not in "iuf":
        raise ValueError(f"W must contain real numbers, got dtype {W.dtype}")
    if W.shape != (m, m):
        raise ValueError(f"W: shape {W.shape} does not match q of length {m}")
    try:
        if hasattr(W, "check_format"):  # CSR/CSC/BSR: SciPy's conversions trust the indices
            W = W.copy()
            W.check_format(full_check=True)
        A = sp.csr_matrix(W, dtype=np.float64, copy=True)
        A.check_format(full_check=True)
    except (ValueError, IndexError, TypeError) as exc:
        raise ValueError(f"W: invalid sparse structure ({exc})") from None
    A.sum_duplicates()
    if not np.all(np.isfinite(A.data)):
        raise ValueError("W contains NaN or infinity")
    for a in (A.data, A.indices, A.indptr):
        a.flags.writeable = False
    return A
