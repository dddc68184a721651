"""Property-based fuzzing of the public API's array arguments: the harness.

Every public entry point is one line of a table (:class:`E`): the callable, a factory of valid
arguments and the names of the array arguments to corrupt.  The tables live in
``test_api_fuzz_core.py`` (the tree algorithms, spatial algebra, configuration, simulate),
``test_api_fuzz_constraints.py``, ``test_api_fuzz_lcp.py`` and ``test_api_fuzz_contact.py``
(constraint solver, impulse solvers, FCLib, demos); each builds its tests with :func:`fuzz_tests`.
The corruptions are in ``test_api_fuzz_corruptions.py``.

For each entry and each *family* of corruptions, Hypothesis draws the details (which element,
which magnitude, which quaternion) and every argument of the entry is corrupted in turn with
every corruption of the family:

=============  ===========================================================================
shape          one element more or less, an extra axis, a 0-d scalar, an empty array, a
               transposed matrix, a ragged nested list
dtype          complex, bool, datetime64, timedelta64, str, bytes, object arrays
nonfinite      NaN, +inf, -inf at one position
extreme        +-1e300 or 1e-300 or a denormal at one position; the array scaled by 1e300,
               1e150 or 1e-300
layout         read-only, non-contiguous view, Fortran order, nested list, big-endian,
               integer dtype (integral values only); index arrays also as integral floats
quaternion     each quaternion of a configuration zeroed, or scaled by 1e-300, a denormal,
               1e-160, 1e160, 1e300 or 2 (free-flyer and spherical joints)
=============  ===========================================================================

Scalar arguments (time steps, masses, tolerances; kind ``scalar``) get the same families in
scalar form (NaN, 1e300, complex, str, ``np.timedelta64``, a non-number object, an array of
length 2, a 0-d array).

The invariant (:func:`check_call`):

* dtype corruptions are refused: ``ValueError`` whose message names the argument;
* layout corruptions are accepted and give the baseline's result;
* quaternion scalings give the result of the same call with that quaternion normalised
  exactly (the algorithms use the normalised quaternion; a denormal scaling changes the
  direction) or a ``ValueError`` naming the argument (functions that require unit
  quaternions); a zero quaternion is refused;
* everything else either returns a result of the baseline's structure whose floats are all
  finite (and whose ``converged`` flag, if any, passes the entry's independent check), or
  raises ``ValueError``/``KeyError`` whose message names the argument.

Any other exception type (``TypeError``, ``IndexError``, ``ZeroDivisionError``,
``OverflowError``, ``LinAlgError``, ...), non-finite output, or a dishonest ``converged`` is a
failure; a test lists every (argument, corruption, what happened) of its entry and family.

Run ``python tests/test_api_fuzz.py`` for the exhaustive report over every table (grouped by
source file), or ``python tests/test_api_fuzz.py ENTRY ARG CORRUPTION`` to reproduce one case.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import os
import re
import sys
import traceback
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import sinews

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_api_fuzz_corruptions import (FAMILIES, KIND_FAMILIES, SKIP, Arg,  # noqa: E402
                                       HypothesisDraw, RandomDraw, _quat_starts, corruptions)

# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

#: Argument kinds: ``real`` float arrays, ``index`` integer index arrays, ``q`` configurations
#: (real, plus the quaternion family), ``scalar`` real scalars.
KINDS = ("real", "index", "q", "scalar")


class E:
    """One entry point: ``E(fn, make, "q:q v a f_ext")``.

    ``fn`` is the public callable (it names the entry and its source file); ``make()`` returns
    the valid keyword arguments (fresh on every call); ``args`` lists the arguments to corrupt,
    ``name:kind`` with kind one of :data:`KINDS` (default ``real``).  ``call(**kwargs)``
    overrides how the entry is invoked (default ``fn(**kwargs)``; methods take ``self=``),
    ``honest(result, kwargs)`` returns a problem string when a ``converged`` result is not a
    solution, and ``label`` distinguishes several entries of the same callable.
    ``free_shape=True``: the shapes of the result's arrays may legitimately change with the
    corrupted values (vectorised functions, iteration histories; only the fields are compared); ``skip={arg: {corruption, ...}}``
    exempts documented exceptions (say why next to the entry).
    """

    def __init__(self, fn, make, args, *, call=None, honest=None, label="", owner=None,
                 free_shape=False, skip=None):
        self.fn = fn
        self.free_shape = free_shape
        self.skip = skip or {}
        self.make = make
        self.args = tuple(Arg(*a.split(":")) for a in args.split())
        self.call = call if call is not None else (lambda **kw: fn(**kw))
        self.honest = honest
        target = inspect.unwrap(getattr(fn, "__func__", fn))
        qual = getattr(target, "__qualname__", getattr(target, "__name__", repr(target)))
        module = getattr(target, "__module__", "?")
        self.name = f"{module}.{qual}" + (f"[{label}]" if label else "")
        if owner is None:
            try:
                owner = inspect.getsourcefile(target)
            except TypeError:
                owner = "?"
        self.owner = os.path.relpath(owner, _REPO) if owner and os.path.isabs(owner) else owner

    def __repr__(self):
        return self.name


_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --------------------------------------------------------------------------------------------
# Checking one call
# --------------------------------------------------------------------------------------------


def _leaves(obj, path="result", depth=0, seen=None):
    """(path, value) of every number or array inside a result."""
    if seen is None:
        seen = set()
    if depth > 6 or id(obj) in seen:
        return
    if isinstance(obj, (bool, np.bool_, str, bytes, type(None), enum.Enum)):
        return
    if isinstance(obj, (int, float, np.number)):
        yield path, np.asarray(obj)
        return
    if isinstance(obj, np.ndarray):
        yield path, obj
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("wall_time", "elapsed", "seconds"):
                continue
            yield from _leaves(v, f"{path}[{k!r}]", depth + 1, seen)
    elif isinstance(obj, (list, tuple)) and all(
            isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in obj):
        yield path, np.asarray(obj)  # a sequence of numbers (e.g. a history) is one array
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _leaves(v, f"{path}[{i}]", depth + 1, seen)
    elif isinstance(obj, sinews.Placements):  # (read-only properties, not dataclass fields)
        for name in ("R", "p", "frame_R", "frame_p"):
            yield from _leaves(getattr(obj, name), f"{path}.{name}", depth + 1, seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            if f.name.startswith("_") or f.name in ("model", "constraint_set", "group", "path",
                                                    "mlcp_to_lcp", "record", "constraint"):
                continue
            yield from _leaves(getattr(obj, f.name), f"{path}.{f.name}", depth + 1, seen)
    elif type(obj).__module__.startswith("scipy.sparse"):
        yield path, obj.toarray()


def _structure(result, free_shape=False):
    return [(p, None if free_shape else np.shape(v)) for p, v in _leaves(result)]


def _nonfinite_leaf(result):
    for p, v in _leaves(result):
        a = np.asarray(v)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            return p
    return None


def _names_arg(exc, name):
    msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", msg) is not None


def _allowed_exception(exc):
    return isinstance(exc, (ValueError, KeyError)) and not isinstance(
        exc, (np.linalg.LinAlgError, np.exceptions.AxisError, UnicodeError))


def _short(exc):
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg[:110]}"


def _same(a, b):
    la, lb = list(_leaves(a)), list(_leaves(b))
    if [(p, np.shape(v)) for p, v in la] != [(p, np.shape(v)) for p, v in lb]:
        return False
    for (_, x), (_, y) in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.kind not in "biufc" or y.dtype.kind not in "biufc":
            continue
        scale = max(1.0, float(np.max(np.abs(y)))) if y.size else 1.0
        if not np.allclose(x, y, rtol=1e-7, atol=1e-7 * scale, equal_nan=True):
            return False
    return True


def invoke(entry, kwargs):
    """Call the entry; (result, exception)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return entry.call(**kwargs), None
            except Exception as exc:  # noqa: BLE001 - classified by the caller
                return None, exc


def check_call(entry, arg, corruption, expect, kwargs, baseline):
    """None if the call keeps the invariant, else a one-line description of what happened."""
    result, exc = invoke(entry, kwargs)
    if exc is not None:
        if expect == "same":
            return f"valid input refused: {_short(exc)}"
        if not _allowed_exception(exc):
            return _short(exc)
        if not _names_arg(exc, arg.name):
            return f"message does not name {arg.name!r}: {_short(exc)}"
        return None
    if expect == "refuse":
        return "accepted (no error)"
    bad = _nonfinite_leaf(result)
    if bad is not None:
        return f"returned non-finite values ({bad}) without an error"
    if expect in ("same", "same_or_refuse"):
        if not _same(result, baseline):
            what = "the baseline" if expect == "same" else "the call with the quaternion normalised"
            return f"returned a result different from {what}"
        return None
    if _structure(result, entry.free_shape) != _structure(baseline, entry.free_shape):
        return "returned a result of another structure/shape than the baseline"
    if entry.honest is not None and getattr(result, "converged", False):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            problem = entry.honest(result, kwargs)
        if problem:
            return f"converged=True but {problem}"
    return None


_BASELINES: dict = {}


def baseline_of(entry):
    if entry.name not in _BASELINES:
        kwargs = entry.make()
        result, exc = invoke(entry, kwargs)
        if exc is not None:
            raise AssertionError(f"{entry.name}: the valid call fails: {_short(exc)}") from exc
        bad = _nonfinite_leaf(result)
        assert bad is None, f"{entry.name}: the valid call returns non-finite {bad}"
        if entry.honest is not None and getattr(result, "converged", False):
            problem = entry.honest(result, kwargs)
            assert not problem, f"{entry.name}: the valid call is dishonest: {problem}"
        _BASELINES[entry.name] = result
    return _BASELINES[entry.name]


def _normalised_reference(entry, arg, kwargs):
    """The result with every quaternion of the corrupted configuration normalised exactly
    (the direction of a quaternion scaled to the denormals is not the original one)."""
    q = np.array(kwargs[arg.name], dtype=float)
    for i in _quat_starts(kwargs):
        quat = q[i:i + 4] / np.max(np.abs(q[i:i + 4]))
        q[i:i + 4] = quat / np.linalg.norm(quat)
    ref_kwargs = entry.make()
    ref_kwargs[arg.name] = q
    result, exc = invoke(entry, ref_kwargs)
    if exc is not None or _nonfinite_leaf(result) is not None:
        return None, "general"
    return result, "same_or_refuse"


def run_case(entry, arg, name, corrupt, expect, draw, baseline):
    """Corrupt ``arg`` of ``entry`` with ``corrupt``; (kwargs, problem or None), or None if the
    corruption does not apply."""
    kwargs = entry.make()
    value = corrupt(kwargs[arg.name], draw, kwargs, arg)
    if value is SKIP or name in entry.skip.get(arg.name, ()):
        return None
    kwargs[arg.name] = value
    reference = baseline
    if expect == "same_or_refuse":
        reference, expect = _normalised_reference(entry, arg, kwargs)
    return kwargs, check_call(entry, arg, name, expect, kwargs, reference)


def run_family(entry, family, draw):
    """Corrupt every argument of ``entry`` with every corruption of ``family``; a list of
    (argument, corruption, what happened) for the calls that broke the invariant."""
    baseline = baseline_of(entry)
    failures = []
    for arg in entry.args:
        for name, corrupt, expect in corruptions(family, arg):
            out = run_case(entry, arg, name, corrupt, expect, draw, baseline)
            if out is not None and out[1]:
                failures.append((arg.name, name, out[1]))
    return failures


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------

#: Hypothesis examples per family (each example corrupts every argument with every member).
EXAMPLES = {"shape": 2, "dtype": 1, "nonfinite": 2, "extreme": 3, "layout": 1, "quaternion": 2}


def fuzz_tests(table):
    """The parametrised test function over ``table`` x the families (for a test module)."""
    cases = []
    for entry in table:
        kinds = {a.kind for a in entry.args}
        for family in FAMILIES:
            if any(family in KIND_FAMILIES[k] for k in kinds):
                if family == "quaternion" and "q" not in kinds:
                    continue
                cases.append(pytest.param(entry, family, id=f"{entry.name}-{family}"))

    @pytest.mark.parametrize("entry, family", cases)
    def test_api_fuzz(entry, family):
        baseline_of(entry)

        @settings(max_examples=EXAMPLES[family], deadline=None, database=None,
                  phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(st.data())
        def run(data):
            failures = run_family(entry, family, HypothesisDraw(data))
            assert not failures, f"{entry.name} ({entry.owner}), family {family}:\n" + "\n".join(
                f"  {a} <- {c}: {p}" for a, c, p in failures)

        run()

    return test_api_fuzz


def test_harness_detects_each_kind_of_failure():
    """The invariant's checks fire on deliberately bad entry points."""

    def bad_type(x):
        return np.asarray(x, dtype=float)[2]  # IndexError when shorter

    def silent_nan(x):
        x = np.asarray(x, dtype=float)
        return x / x.sum() * 0.0 + x  # NaN through, no error

    def good(x):
        from sinews._checks import real_array

        return real_array(x, "x", shape=(3,)) * 2.0

    draw = RandomDraw(0)
    for fn, family, expected in [(bad_type, "shape", "IndexError"),
                                 (silent_nan, "nonfinite", "non-finite"),
                                 (silent_nan, "dtype", "accepted")]:
        entry = E(fn, lambda: {"x": [1.0, 2.0, 3.0]}, "x", label=family)
        failures = run_family(entry, family, draw)
        assert any(expected in p for _, _, p in failures), failures
    for family in FAMILIES:
        entry = E(good, lambda: {"x": [1.0, 2.0, 3.0]}, "x", label="good")
        failures = run_family(entry, family, draw)
        if family == "extreme":  # 1e300 * 2 overflows: correctly reported
            assert all("non-finite" in p for _, _, p in failures)
        else:
            assert failures == [], (family, failures)


# --------------------------------------------------------------------------------------------
# The exhaustive report and the reproducer
# --------------------------------------------------------------------------------------------

TABLE_MODULES = ("test_api_fuzz_core", "test_api_fuzz_constraints", "test_api_fuzz_lcp",
                 "test_api_fuzz_contact")


def all_entries():
    import importlib

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    entries = []
    for mod in TABLE_MODULES:
        entries += importlib.import_module(mod).TABLE
    return entries


def report(rounds=4, entries=None, out=sys.stdout):
    """Every failing (function, argument, corruption, what happened), grouped by source file."""
    entries = all_entries() if entries is None else entries
    by_owner: dict = {}
    for entry in entries:
        try:
            baseline_of(entry)
        except AssertionError as exc:
            by_owner.setdefault(entry.owner, {}).setdefault(entry.name, {})[("-", "baseline")] = str(exc)
            continue
        for family in FAMILIES:
            for seed in range(rounds):
                for arg, corr, problem in run_family(entry, family, RandomDraw(seed)):
                    key = (arg, corr)
                    by_owner.setdefault(entry.owner, {}).setdefault(entry.name, {}).setdefault(key, problem)
    total = 0
    for owner in sorted(by_owner):
        print(f"\n## {owner}", file=out)
        for name in sorted(by_owner[owner]):
            print(f"  {name}", file=out)
            for (arg, corr), problem in sorted(by_owner[owner][name].items()):
                print(f"    {arg:<22} {corr:<14} {problem}", file=out)
                total += 1
    print(f"\n{total} failing (function, argument, corruption) cases", file=out)
    return by_owner


def reproduce(name, arg, corruption, seeds=range(8)):
    """Run one case (the first of ``seeds`` whose random choices break the invariant) and print
    what happened and the traceback, if any (``python tests/test_api_fuzz.py NAME ARG CORR``;
    NAME may be a suffix such as ``fclib.solve_pgs``)."""
    entries = [e for e in all_entries() if e.name == name or e.name.endswith("." + name)]
    if not entries:
        raise SystemExit(f"no entry {name!r}")
    entry = entries[0]
    spec = next((a for a in entry.args if a.name == arg), None)
    if spec is None:
        raise SystemExit(f"{entry.name} has no argument {arg!r}")
    found = [(f, c) for f in FAMILIES for c in corruptions(f, spec) if c[0] == corruption]
    if not found:
        raise SystemExit(f"no corruption {corruption!r}")
    family, (cname, corrupt, expect) = found[0]
    for seed in seeds:
        out = run_case(entry, spec, cname, corrupt, expect, RandomDraw(seed), baseline_of(entry))
        if out is None:
            raise SystemExit("the corruption does not apply to this argument")
        kwargs, problem = out
        if problem or seed == seeds[-1]:
            break
    print(f"{entry.name}: {arg} = {kwargs[arg]!r}  [{family}/{corruption}, expect {expect}]")
    print("->", problem or "OK")
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entry.call(**kwargs)
    except Exception:  # noqa: BLE001
        traceback.print_exc()


if __name__ == "__main__":
    if len(sys.argv) == 4:
        reproduce(*sys.argv[1:])
    else:
        report(rounds=int(sys.argv[1]) if len(sys.argv) == 2 else 4)
