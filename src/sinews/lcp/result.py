"""Result objects and the independent solution checker shared by every LCP solver.

The linear complementarity problem LCP(M, q) asks for z with

    w = M z + q,    z >= 0,    w >= 0,    z^T w = 0            (Cottle, Pang & Stone 1992, §1.1)

:func:`check_lcp` looks only at (M, q, z). It does not know which algorithm produced z. Every
solver computes the diagnostics of its :class:`LCPResult` with it, so a result marked
``converged`` has passed the same independent test whatever the method.

Measures (documented once, here):

* ``feasibility  = max(0, -min z, -min w)``: the largest violation of z >= 0 or w >= 0;
* ``complementarity = max_i |z_i w_i|``: the largest complementarity product (Drake's measure;
  reported only, and saturated at the largest float when the product overflows, which a correct
  solution of data near 1e300 can do);
* acceptance (``LCPCheck.ok``): ``feasibility <= tol`` and ``max_i min(|z_i|, |w_i|) <= tol``.
  The second test is the scale-free form of ``z_i w_i = 0``: it asks that in every pair one
  of the two is (within tol) zero, however large the other is. An absolute bound on the
  product would reject correct solutions with large z (Drake's test problem 6 has z ~ 98) and
  is what makes Drake's accept/reject decisions rounding-sensitive (reference notes §4.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_vector, lcp_data, optional_tolerance

EPS = np.finfo(float).eps
FLOAT_MAX = float(np.finfo(float).max)


@dataclass(frozen=True)
class LCPCheck:
    """What :func:`check_lcp` measured for a candidate z."""

    w: np.ndarray
    complementarity: float   # max |z_i w_i|
    natural_residual: float  # max min(|z_i|, |w_i|)
    feasibility: float       # max(0, -min z, -min w)
    tol: float
    ok: bool


@dataclass
class LCPResult:
    """Outcome of an LCP solve.

    z, w            the solution candidate and w = M z + q (z = 0 after a pivoting failure, as
                    in Drake, so that w is still meaningful)
    converged       True only when the solver finished normally *and* :func:`check_lcp` accepts z
    status          a short human-readable reason ("solved", "ray termination", ...)
    pivots          number of basis (or active-set) changes
    iterations      number of outer iterations / sweeps (equal to pivots for Lemke)
    complementarity max |z_i w_i|
    feasibility     max(0, -min z, -min w)
    """

    z: np.ndarray
    w: np.ndarray
    converged: bool
    status: str
    pivots: int = 0
    iterations: int = 0
    complementarity: float = 0.0
    feasibility: float = 0.0


@dataclass
class MLCPResult:
    """Outcome of a mixed LCP solve (Siconos convention, see :mod:`sinews.lcp.mlcp`).

    u               the free unknowns (size n)
    v               the complementary unknowns (size m), v >= 0
    w               w = D u + B v + b, w >= 0, v^T w = 0
    converged       True only when the reduced LCP converged and every residual is within tol
    status          reason
    equality_residual  max |A u + C v + a|
    complementarity    max |v_i w_i|
    feasibility        max(0, -min v, -min w)
    lcp             the result of the reduced LCP solve (diagnostics, pivots, iterations)
    """

    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    converged: bool
    status: str
    equality_residual: float = 0.0
    complementarity: float = 0.0
    feasibility: float = 0.0
    lcp: LCPResult | None = field(default=None, repr=False)


def default_check_tolerance(M: np.ndarray, q: np.ndarray) -> float:
    """sqrt(eps) times the problem scale max(1, max|M_ij|, max|q_i|)."""
    scale = 1.0
    if M.size:
        scale = max(scale, float(np.abs(M).max()))
    if q.size:
        scale = max(scale, float(np.abs(q).max()))
    return float(np.sqrt(EPS)) * scale


def check_lcp(M: ArrayLike, q: ArrayLike, z: ArrayLike, tol: float | None = None) -> LCPCheck:
    """Check a candidate solution z of LCP(M, q) independently of how it was obtained.

    Parameters
    ----------
    M, q : (n, n) array, (n,) array
        The problem (validated: M square, q of matching length, finite).
    z : (n,) array
        The candidate (finite).
    tol : float or None
        Acceptance tolerance, a finite number >= 0; ``None`` selects
        ``sqrt(eps) * max(1, max|M|, max|q|)``.

    Returns
    -------
    LCPCheck
        w = M z + q and the measures defined in the module docstring.

    Raises
    ------
    ValueError
        A z so large that w = M z + q overflows the float range cannot be checked and is
        refused (the message names z).
    """
    M, q = lcp_data(M, q)
    z = as_vector(z, "z", M.shape[0])
    tol = optional_tolerance(tol, "tol")
    chk = _evaluate(M, q, z, tol)
    if not _finite(chk):
        raise ValueError("z: w = M z + q overflows the float range (z too large for this M, "
                         "q); the candidate cannot be checked")
    return chk


def _finite(chk: LCPCheck) -> bool:
    """w (and with it every measure: z is finite) is finite."""
    return bool(np.isfinite(chk.w).all())


def _evaluate(M: np.ndarray, q: np.ndarray, z: np.ndarray, tol: float | None) -> LCPCheck:
    """check_lcp without input validation (for already validated data).

    Non-finite values (an overflowing M z, a diverged z) give NaN or inf measures and
    ``ok = False``; they never raise."""
    if tol is None:
        tol = default_check_tolerance(M, q)
    with np.errstate(over="ignore", invalid="ignore"):
        w = M @ z + q
        if z.size == 0:
            return LCPCheck(w, 0.0, 0.0, 0.0, float(tol), True)
        zmin, wmin = -float(z.min()), -float(w.min())
        feasibility = max(0.0, zmin, wmin) if zmin == zmin and wmin == wmin else np.nan
        complementarity = min(float(np.abs(z * w).max()), FLOAT_MAX)   # NaN stays NaN
        natural = float(np.minimum(np.abs(z), np.abs(w)).max())
    ok = feasibility <= tol and natural <= tol and np.isfinite(w).all()
    return LCPCheck(w, complementarity, natural, feasibility, float(tol), bool(ok))


def make_result(M: np.ndarray, q: np.ndarray, z: np.ndarray, finished: bool, status: str,
                pivots: int, iterations: int, tol: float | None = None) -> LCPResult:
    """Build an LCPResult whose diagnostics come from :func:`check_lcp`.

    M, q, z must already be validated. ``finished`` is the solver's own claim of success;
    ``converged`` is that claim confirmed by the checker. A claim the checker rejects is
    reported with the reason appended to status. A z for which w = M z + q overflows is a
    failure: z = 0 is returned instead (as after a pivoting failure), so that every number in
    the result is finite.
    """
    chk = _evaluate(M, q, z, tol)
    if not _finite(chk):
        z = np.zeros_like(z)
        chk = _evaluate(M, q, z, tol)
        finished = False
        status = (f"numerical overflow: w = M z + q is not finite for the solver's z (its "
                  f"status: {status}); z = 0 returned")
    converged = bool(finished and chk.ok)
    if finished and not chk.ok:
        status = (f"{status}, but the solution check failed (feasibility {chk.feasibility:.3g}, "
                  f"natural residual {chk.natural_residual:.3g} > tol {chk.tol:.3g})")
    return LCPResult(z=z, w=chk.w, converged=converged, status=status, pivots=int(pivots),
                     iterations=int(iterations), complementarity=chk.complementarity,
                     feasibility=chk.feasibility)
