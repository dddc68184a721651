"""``python -m sinews.bench lcp``: sinews' Lemke against Drake's MobyLcpSolver (needs pydrake).

The implementation lives in :mod:`sinews.lcp.bench_drake`.
"""

from sinews.lcp.bench_drake import main

__all__ = ["main"]
