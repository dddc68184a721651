"""Timing shared by the benchmark groups.

:func:`time_pair` times two callables in alternating rounds (ours, peer, ours, ...) using the
calling thread's CPU time (``time.thread_time``), so that time stolen by other processes on a
shared machine counts for neither side, and returns the median per-call time of each in
microseconds.  Alternation keeps the ratio meaningful when the machine's speed drifts.
"""

from __future__ import annotations

import time
import timeit

import numpy as np


def time_pair(f_ours, f_peer, calls: int, rounds: int) -> tuple[float, float]:
    """Median per-call CPU time (us) of ``f_ours`` and ``f_peer`` over ``rounds`` alternating
    rounds of ``calls`` calls each (after one warm-up call of each)."""
    f_ours()
    f_peer()
    t_ours = timeit.Timer(f_ours, timer=time.thread_time)
    t_peer = timeit.Timer(f_peer, timer=time.thread_time)
    ours, peer = [], []
    for _ in range(rounds):
        ours.append(t_ours.timeit(number=calls) / calls)
        peer.append(t_peer.timeit(number=calls) / calls)
    return float(np.median(ours)) * 1e6, float(np.median(peer)) * 1e6
