"""Argument checks shared by the demos' helper functions (private: not a demo)."""

from __future__ import annotations

import numpy as np

from sinews._checks import real_array, real_scalar

#: The most integration steps a demo helper accepts (t_end / dt): more is a mistake, not a demo.
MAX_STEPS = 10_000_000


def state(model, q0, v0):
    """``q0`` (length nq) and ``v0`` (length nv) as finite float copies (ValueError naming them)."""
    q0 = real_array(q0, "q0", shape=(model.nq,)).copy()
    v0 = real_array(v0, "v0", shape=(model.nv,)).copy()
    return q0, v0


def positive(x, name: str) -> float:
    """A finite real number > 0."""
    x = real_scalar(x, name)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {x}")
    return x


def steps(t_end, dt) -> int:
    """The number of steps ``round(t_end / dt)`` of a run (at least 1, at most MAX_STEPS)."""
    t_end, dt = positive(t_end, "t_end"), positive(dt, "dt")
    n = t_end / dt
    if not n <= MAX_STEPS:
        raise ValueError(f"t_end / dt = {n:.3g} steps is more than {MAX_STEPS}: t_end is too "
                         "large or dt too small")
    return max(1, int(round(n)))


def finite(x, name: str) -> np.ndarray:
    """A finite real array."""
    return real_array(x, name)
