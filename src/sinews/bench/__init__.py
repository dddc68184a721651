"""Benchmarks of sinews against its peers, run as ``python -m sinews.bench GROUP``.

Groups live in their own modules (``core``, ``constrained``, ``contact``, ``lcp``); each exposes
``main(argv)``. Timings are medians of many calls in one process and are reported as ratios
sinews/peer; they are never asserted by the tests.
"""
