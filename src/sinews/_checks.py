"""Argument checking shared by the public functions (done once per call, before a kernel)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._layout import MI_IQ

_F64 = np.dtype(np.float64)

#: The one rule for every array argument: real numeric dtypes only (signed/unsigned integers and
#: floats).  Complex values are never truncated, and booleans, datetimes, timedeltas, strings and
#: object arrays are refused instead of being reinterpreted as numbers.
REAL_KINDS = frozenset("iuf")


def real_dtype(a: np.ndarray, name: str) -> np.ndarray:
    """Raise ``ValueError`` naming ``name`` unless ``a`` (an ndarray) has a real numeric dtype."""
    kind = a.dtype.kind
    if kind not in REAL_KINDS:
        what = {"c": "complex values", "b": "booleans", "M": "datetimes", "m": "timedeltas",
                "O": "Python objects", "U": "strings", "S": "bytes", "V": "structured records"}
        raise ValueError(
            f"{name} must contain real numbers, got {what.get(kind, 'dtype')} (dtype {a.dtype})"
        )
    return a


def real_array(x: ArrayLike, name: str, shape: tuple[int | None, ...] | None = None, ndim: int | None = None,
               finite: bool = True) -> np.ndarray:
    """``x`` as a C-contiguous, writeable float64 array (a copy when it has to be).

    Refuses anything but real numeric input (:data:`REAL_KINDS`), a shape other than ``shape``
    (a tuple; ``None`` entries match any length) or a dimension other than ``ndim``, and, when
    ``finite``, NaN and infinity; every error is a ``ValueError`` naming ``name``.
    """
    if not (type(x) is np.ndarray and x.dtype is _F64):
        try:
            a = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a real array: {exc}") from None
        real_dtype(a, name)
        x = a.astype(np.float64, order="C", copy=False)
    if not (x.flags.c_contiguous and x.flags.writeable):
        x = np.array(x, dtype=np.float64, order="C")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {x.shape}")
    if shape is not None:
        if x.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, x.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {x.shape}")
    if finite and not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinity")
    return x


def vector(x: ArrayLike, n: int, name: str) -> np.ndarray:
    """``x`` as a contiguous float64 vector of length ``n`` (ValueError naming ``name``)."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.shape == (n,):
        flags = x.flags
        if flags.c_contiguous and flags.writeable:
            return x
    return _slow_vector(x, n, name)


_ND = np.ndarray


def state3(x, y, z, nx: int, n: int, names) -> tuple:
    """:func:`vector` for three arguments (``x`` of length ``nx``, ``y`` and ``z`` of length
    ``n``) in one call: the common case (contiguous, writeable float64 arrays of the right
    lengths; ``flags.carray``) costs a single check."""
    if (
        type(x) is _ND and type(y) is _ND and type(z) is _ND
        and x.dtype is _F64 and y.dtype is _F64 and z.dtype is _F64
        and x.shape == (nx,) and y.shape == (n,) and z.shape == (n,)
        and x.flags.carray and y.flags.carray and z.flags.carray
    ):
        return x, y, z
    return vector(x, nx, names[0]), vector(y, n, names[1]), vector(z, n, names[2])


def _slow_vector(x, n: int, name: str) -> np.ndarray:
    if type(x) is not np.ndarray or x.dtype is not _F64 or not x.flags.c_contiguous:
        try:
            a = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a real vector of length {n}: {exc}") from None
        real_dtype(a, name)
        x = np.ascontiguousarray(a, dtype=np.float64)
    if not x.flags.writeable:  # read-only inputs would make Numba compile a second kernel
        x = x.copy()
    if x.ndim != 1 or x.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    return x


def output(out, n: int, name: str = "out") -> np.ndarray:
    """A caller-provided output vector: it must be written in place, so no conversion."""
    if not (type(out) is np.ndarray and out.dtype == np.float64 and out.shape == (n,)
            and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"{name} must be a writeable C-contiguous float64 array of shape ({n},)")
    return out


def finite_vector(x, n: int, name: str) -> np.ndarray:
    x = vector(x, n, name)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinity")
    return x


def matrix(x, shape, name: str) -> np.ndarray:
    return real_array(x, name, shape=tuple(shape))


#: Kernel return codes besides ``-1 - i`` ("argument i is not finite"): the result overflowed,
#: and ``ZERO_QUATERNION - k``: the quaternion of kernel link ``k`` is zero or subnormal.
NOT_FINITE = -20
ZERO_QUATERNION = -1000
#: Smallest accepted largest-|component| of a quaternion: the smallest normal double.  Below it
#: (zero, or subnormal components with fewer than 53 significant bits) a quaternion does not
#: define its rotation to double precision and is refused.
QUAT_TINY = 2.2250738585072014e-308


def raise_kernel_code(code: int, names=("q", "v", "a", "f_ext"), model=None):
    """Turn a kernel's negative return code into a ValueError naming the argument (``model``,
    when given, lets a zero-quaternion error name the joint's coordinates and body)."""
    if code >= 0:
        return
    if code <= ZERO_QUATERNION:
        raise ValueError(zero_quaternion_message(model, ZERO_QUATERNION - code))
    if code == NOT_FINITE:
        raise_overflow(names)
    raise ValueError(f"{names[-code - 1]} contains NaN or infinity")


class NonFiniteResultError(ValueError):
    """A computation overflowed (its result is not finite) although its inputs were finite: some
    of them, named in the message, are too large in magnitude.  A ``ValueError``."""


def raise_overflow(names):
    raise NonFiniteResultError(overflow_message(names))


def overflow_message(names) -> str:
    return (
        f"the result is not finite (floating-point overflow): {', '.join(names)} (or the "
        "model's masses, placements or gravity) are too large in magnitude"
    )


def zero_quaternion_message(model, link: int, name: str = "q") -> str:
    """The error for a zero quaternion at kernel link ``link``."""
    rule = ("a rotation needs a quaternion (x, y, z, w) whose largest |component| is at least "
            "2.2e-308 (any finite norm above that is accepted)")
    if model is None:
        return f"{name} contains a zero (or subnormal) quaternion: {rule}"
    c = model.compiled
    b = model.bodies[int(c.link_body[link])]
    # the quaternion is the last 4 coordinates of its joint (free-flyer: [p; quat], spherical)
    i = int(c.mi[link, MI_IQ]) + b.joint.nq - 4
    body = b.name
    return f"{name}[{i}:{i + 4}] is a zero (or subnormal) quaternion (joint of body {body!r}): {rule}"


def real_scalar(x, name: str, finite: bool = True) -> float:
    """``x`` as a Python float: a real number (int, float, NumPy integer or floating scalar, or
    a 0-d array of those).  Booleans, complex numbers, strings and everything else raise a
    ValueError naming ``name``; so do NaN and infinity when ``finite``."""
    if type(x) is float:
        v = x
    elif (
        (isinstance(x, (int, float)) and not isinstance(x, bool))
        or (isinstance(x, (np.generic, np.ndarray)) and x.ndim == 0 and x.dtype.kind in REAL_KINDS)
    ):  # (np.timedelta64 is an np.integer subclass: the dtype kind tells them apart)
        try:
            v = float(x)
        except OverflowError:  # a Python int beyond the float range
            raise ValueError(f"{name} is too large for a float, got {x!r}") from None
    else:
        kind = "a boolean" if isinstance(x, (bool, np.bool_)) else type(x).__name__
        raise ValueError(f"{name} must be a real number, got {kind} {x!r}")
    if finite and not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def integer(x, name: str, minimum=None) -> int:
    """``x`` as a Python int (an int, a NumPy integer or an integral float; never a bool)."""
    if isinstance(x, (bool, np.bool_, np.timedelta64)) or not isinstance(x, (int, np.integer, float, np.floating)):
        raise ValueError(f"{name} must be an integer, got {type(x).__name__} {x!r}")
    if isinstance(x, (float, np.floating)):
        if not (math.isfinite(x) and float(x).is_integer()):
            raise ValueError(f"{name} must be an integer, got {x!r}")
    n = int(x)
    if minimum is not None and n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {n}")
    return n
