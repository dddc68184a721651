"""Linear complementarity problems: w = M z + q, z >= 0, w >= 0, z^T w = 0.

Solvers (one algorithm per module):

* :func:`solve_lemke`, :func:`solve_lemke_regularized` -- Lemke's complementary pivoting
  (Drake's MobyLcpSolver), :mod:`sinews.lcp.lemke`;
* :func:`solve_principal_pivoting` -- principal pivoting for PSD problems (Moby's "fast" solver),
  :mod:`sinews.lcp.principal_pivoting`;
* :func:`solve_pgs` -- projected Gauss-Seidel / SOR, :mod:`sinews.lcp.pgs`;
* :func:`mlcp_to_lcp`, :func:`solve_mlcp` -- mixed LCPs reduced to LCPs, :mod:`sinews.lcp.mlcp`;
* :func:`read_siconos_lcp`, :func:`read_siconos_mlcp` -- Siconos ``.dat`` readers,
  :mod:`sinews.lcp.siconos_io`.

Array shapes: an LCP has ``M`` (n, n) and ``q`` (n,); its solution and warm start ``z``, ``z0``
are (n,).  An MLCP in "ABCD" form has ``A`` (n, n), ``C`` (n, m), ``D`` (m, n), ``B`` (m, m),
``a`` (n,), ``b`` (m,), and its solution ``u`` (n,) (free) and ``v`` (m,) (complementary).

Every solver returns an :class:`LCPResult` whose diagnostics come from the independent checker
:func:`check_lcp`. See docs/lcp.md for which solver to use when.
"""

from .lemke import solve_lemke, solve_lemke_regularized
from .mlcp import (CompleteOrthogonalDecomposition, MLCPCheck, ReducedLCP, check_mlcp,
                   mlcp_to_lcp, solve_mlcp)
from .pgs import solve_pgs
from .principal_pivoting import solve_principal_pivoting, solve_principal_pivoting_regularized
from .result import LCPCheck, LCPResult, MLCPResult, check_lcp
from .siconos_io import SiconosLCP, SiconosMLCP, read_siconos_lcp, read_siconos_mlcp

__all__ = [
    "LCPResult",
    "LCPCheck",
    "MLCPResult",
    "check_lcp",
    "solve_lemke",
    "solve_lemke_regularized",
    "solve_principal_pivoting",
    "solve_principal_pivoting_regularized",
    "solve_pgs",
    "mlcp_to_lcp",
    "solve_mlcp",
    "check_mlcp",
    "MLCPCheck",
    "ReducedLCP",
    "CompleteOrthogonalDecomposition",
    "read_siconos_lcp",
    "read_siconos_mlcp",
    "SiconosLCP",
    "SiconosMLCP",
]
