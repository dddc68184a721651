"""API fuzzing: the random choices and the corruptions fed to each argument (see
test_api_fuzz.py for the harness and the invariant; no tests here)."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
from hypothesis import strategies as st


@dataclasses.dataclass(frozen=True)
class Arg:
    """An argument to corrupt: its name and kind (real, index, q, scalar)."""

    name: str
    kind: str = "real"


# --------------------------------------------------------------------------------------------
# Random choices: Hypothesis in the tests, a seeded generator in the report
# --------------------------------------------------------------------------------------------


class HypothesisDraw:
    def __init__(self, data):
        self.data = data

    def index(self, n):
        return self.data.draw(st.integers(0, n - 1)) if n > 1 else 0

    def choice(self, seq):
        return seq[self.index(len(seq))]


class RandomDraw:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def index(self, n):
        return self.rng.randrange(n) if n > 1 else 0

    def choice(self, seq):
        return seq[self.index(len(seq))]


# --------------------------------------------------------------------------------------------
# Corruptions.  Each takes (value, draw, kwargs, arg) and returns the new value or SKIP.
# --------------------------------------------------------------------------------------------

SKIP = object()
DENORMAL = 5e-324


def _arr(value):
    return np.array(value)


def _float(value):
    a = np.array(value, dtype=float)
    return a


def _at(value, draw, x):
    a = _float(value)
    if a.size == 0:
        return SKIP
    a.flat[draw.index(a.size)] = x
    return a


def _scaled(value, s):
    a = _float(value)
    if a.size == 0 or not np.any(a):
        return SKIP
    return a * s


def _set_scalar(x):
    return lambda value, draw, kw, arg: x


def _len_plus(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim == 0:
        return SKIP
    return np.concatenate([a, a[:1] if a.shape[0] else np.zeros((1,) + a.shape[1:], a.dtype)])


def _len_minus(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim == 0 or a.shape[0] == 0:
        return SKIP
    return a[:-1].copy()


def _extra_axis(value, draw, kw, arg):
    a = _arr(value)
    return np.stack([a, a], axis=-1)


def _scalar0d(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim == 0:
        return SKIP
    return np.float64(1.0)


def _empty(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim == 0 or a.size == 0:
        return SKIP
    return np.zeros((0,) * a.ndim)


def _transposed(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim != 2 or a.shape[0] == a.shape[1]:
        return SKIP
    return a.T.copy()


def _ragged(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim == 0 or a.size < 2:
        return SKIP
    rows = a.tolist()
    if a.ndim == 1:
        return [rows[:1], rows[1:]]
    return [rows[0], rows[0][:-1]] + rows[2:]


def _as_dtype(make):
    def corrupt(value, draw, kw, arg):
        a = _arr(value)
        if arg.kind == "scalar":
            out = make(np.array([float(a)])).reshape(())[()]
            return object() if isinstance(out, float) else out  # "object": a non-number
        return make(a)

    return corrupt


DTYPES = {
    "complex": _as_dtype(lambda a: a.astype(complex)),
    "bool": _as_dtype(lambda a: a != 0),
    "datetime64": _as_dtype(lambda a: np.zeros(a.shape, dtype="datetime64[s]")),
    "timedelta64": _as_dtype(lambda a: np.zeros(a.shape, dtype="timedelta64[s]")),
    "str": _as_dtype(lambda a: a.astype(str)),
    "bytes": _as_dtype(lambda a: a.astype(str).astype("S")),
    "object": _as_dtype(lambda a: a.astype(object)),
}


def _nonfinite(x):
    def corrupt(value, draw, kw, arg):
        if arg.kind == "scalar":
            return x
        return _at(value, draw, x)

    return corrupt


def _extreme_at(values):
    def corrupt(value, draw, kw, arg):
        x = draw.choice(values)
        if arg.kind == "scalar":
            return x
        return _at(value, draw, x)

    return corrupt


def _extreme_scale(s):
    def corrupt(value, draw, kw, arg):
        r = _scaled(value, s)
        if r is SKIP or arg.kind == "scalar":
            return SKIP if r is SKIP else float(r)
        return r

    return corrupt


def _readonly(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim == 0:
        return SKIP
    a = a.copy()
    a.setflags(write=False)
    return a


def _noncontig(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim == 0 or a.size == 0:
        return SKIP
    axis = next((i for i in range(a.ndim) if a.shape[i] > 1), None)
    if axis is None:
        return SKIP
    view = np.repeat(a, 2, axis=axis)[(slice(None),) * axis + (slice(None, None, 2),)]
    assert np.array_equal(view, a) and not view.flags.c_contiguous
    return view


def _fortran(value, draw, kw, arg):
    a = _arr(value)
    if a.ndim < 2 or min(a.shape) < 2:
        return SKIP
    return np.asfortranarray(a)


def _as_list(value, draw, kw, arg):
    a = _arr(value)
    if arg.kind == "scalar":
        return SKIP
    return a.tolist()


def _bigendian(value, draw, kw, arg):
    a = _arr(value)
    if a.dtype.kind != "f":
        return SKIP
    return a.astype(">f8")


def _integer(value, draw, kw, arg):
    a = _arr(value)
    if a.dtype.kind not in "fiu" or not np.all(a == np.round(a)) or np.any(np.abs(a) > 2**31):
        return SKIP
    if a.dtype.kind in "iu" or arg.kind == "index":
        return SKIP
    return a.astype(np.int64)


def _quat_starts(kw):
    model = kw.get("model")
    if model is None:
        return ()
    c = model.compiled
    return tuple(int(s) for s in np.asarray(c.quat_slices).reshape(-1, 4)[:, 0]) if c.has_quaternion else ()


def _quat_scale(s):
    def corrupt(value, draw, kw, arg):
        starts = _quat_starts(kw)
        if not starts:
            return SKIP
        q = _float(value)
        i = draw.choice(starts)
        q[i:i + 4] = q[i:i + 4] * s
        return q

    return corrupt


def _quat_zero(value, draw, kw, arg):
    return _quat_scale(0.0)(value, draw, kw, arg)


#: family -> {corruption: (function, expectation)}; expectation is "refuse" (ValueError naming
#: the argument), "same" (the baseline's result), "same_or_refuse" or "general".
FAMILIES = {
    "shape": {
        "len+1": (_len_plus, "general"),
        "len-1": (_len_minus, "general"),
        "extra_axis": (_extra_axis, "general"),
        "scalar_0d": (_scalar0d, "general"),
        "empty": (_empty, "general"),
        "transposed": (_transposed, "general"),
        "ragged": (_ragged, "general"),
    },
    "dtype": {name: (fn, "refuse") for name, fn in DTYPES.items()},
    "nonfinite": {
        "nan": (_nonfinite(math.nan), "general"),
        "+inf": (_nonfinite(math.inf), "general"),
        "-inf": (_nonfinite(-math.inf), "general"),
    },
    "extreme": {
        "huge_entry": (_extreme_at([1e300, -1e300, 1.7e308]), "general"),
        "tiny_entry": (_extreme_at([1e-300, -1e-300, DENORMAL, -DENORMAL]), "general"),
        "scaled_1e300": (_extreme_scale(1e300), "general"),
        "scaled_1e150": (_extreme_scale(1e150), "general"),
        "scaled_1e-300": (_extreme_scale(1e-300), "general"),
    },
    "layout": {
        "readonly": (_readonly, "same"),
        "noncontiguous": (_noncontig, "same"),
        "fortran": (_fortran, "same"),
        "list": (_as_list, "same"),
        "bigendian": (_bigendian, "same"),
        "integer": (_integer, "same"),
    },
    "quaternion": {
        "zero": (_quat_zero, "refuse"),
        "x1e-300": (_quat_scale(1e-300), "same_or_refuse"),
        "xdenormal": (_quat_scale(DENORMAL), "same_or_refuse"),
        "x1e-160": (_quat_scale(1e-160), "same_or_refuse"),
        "x1e160": (_quat_scale(1e160), "same_or_refuse"),
        "x1e300": (_quat_scale(1e300), "same_or_refuse"),
        "x2": (_quat_scale(2.0), "same_or_refuse"),
    },
}

#: Which families apply to which kind of argument.
KIND_FAMILIES = {
    "real": ("shape", "dtype", "nonfinite", "extreme", "layout"),
    "index": ("shape", "dtype", "nonfinite", "extreme", "layout"),
    "q": ("shape", "dtype", "nonfinite", "extreme", "layout", "quaternion"),
    "scalar": ("shape", "dtype", "nonfinite", "extreme", "layout"),
}

#: Scalars: their own shape and layout corruptions.
SCALAR_SHAPE = {"len+1": lambda v, d, k, a: np.array([float(v), float(v)]),
                "empty": lambda v, d, k, a: np.zeros(0)}
SCALAR_LAYOUT = {"numpy_0d": lambda v, d, k, a: np.array(float(v)),
                 "numpy_scalar": lambda v, d, k, a: np.float64(v)}


def corruptions(family, arg):
    """(name, function, expectation) of ``family`` for argument ``arg``."""
    if family not in KIND_FAMILIES[arg.kind]:
        return []
    if arg.kind == "scalar" and family in ("shape", "layout"):
        table = SCALAR_SHAPE if family == "shape" else SCALAR_LAYOUT
        return [(n, f, "general" if family == "shape" else "same") for n, f in table.items()]
    out = [(n, f, e) for n, (f, e) in FAMILIES[family].items()]
    if arg.kind == "index" and family == "extreme":
        out = [(n, f, e) for n, f, e in out] + [
            ("negative_index", lambda v, d, k, a: _at(v, d, -1), "general"),
            ("int64_max", lambda v, d, k, a: _int_at(v, d, np.iinfo(np.int64).max), "general"),
        ]
    if arg.kind == "index" and family == "layout":
        # integral floats: the dtype rule admits floats, an index argument may still refuse them
        out.append(("float_indices", lambda v, d, k, a: np.asarray(v, dtype=float), "general"))
    return out


def _int_at(value, draw, x):
    a = np.array(value, dtype=np.int64)
    if a.size == 0:
        return SKIP
    a.flat[draw.index(a.size)] = x
    return a


