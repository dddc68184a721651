"""Results of Drake's ConstraintSolver (:mod:`sinews.contact.constraint_solver`).

:class:`ConstraintSolution` (packed forces or impulses and how they were obtained) and
:class:`DiscretizedTimeLcp` (a time-stepping LCP, base or updated for one step).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._drake_mlcp import MlcpToLcpData


@dataclass(frozen=True, eq=False)
class ConstraintSolution:
    """Packed constraint forces (or impulses) and how they were obtained.

    cf              [fN (nc) | fF (nr) | fL (nl) | fG (nb)]
    converged       True when the assembled LCP (or linear system) was solved within tolerance
    status          "no constraints", "no active constraints", "lcp",
                    "lcp (lexicographic retry)", "regularized lcp", "linear system" or
                    "failed: ..."
    lcp_z, lcp_w    the LCP unknowns z = [fN, fD+, fD-, lam, fL] and w = MM z + qq of the
                    *unregularised* problem (empty when no LCP was solved)
    pivots          Lemke pivots (summed over regularisation attempts)
    regularization  alpha of the M + alpha I fallback that produced z (0 if none)
    complementarity max |z_i w_i| of the unregularised LCP; feasibility max(0, -min z, -min w)
    residual        max |MM z + qq| of the linear-system alternative (0 otherwise)
    lcp_status      the LCP solver's own status message
    """

    cf: np.ndarray
    converged: bool
    status: str
    num_contacts: int
    num_friction_directions: int
    num_limits: int
    num_bilateral: int
    lcp_z: np.ndarray = field(default_factory=lambda: np.zeros(0))
    lcp_w: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pivots: int = 0
    regularization: float = 0.0
    complementarity: float = 0.0
    feasibility: float = 0.0
    residual: float = 0.0
    lcp_status: str = ""

    @property
    def fN(self) -> np.ndarray:
        return self.cf[:self.num_contacts]

    @property
    def fF(self) -> np.ndarray:
        s = self.num_contacts
        return self.cf[s:s + self.num_friction_directions]

    @property
    def fL(self) -> np.ndarray:
        s = self.num_contacts + self.num_friction_directions
        return self.cf[s:s + self.num_limits]

    @property
    def fG(self) -> np.ndarray:
        s = self.num_contacts + self.num_friction_directions + self.num_limits
        return self.cf[s:s + self.num_bilateral]


@dataclass(frozen=True, eq=False)
class DiscretizedTimeLcp:
    """A time-discretised LCP  MM z + qq >= 0 _|_ z >= 0  with z = [fN, fD+, fD-, lam, fL].

    The base (from :meth:`ConstraintSolver.construct_base_discretized_time_lcp`) holds the
    h-independent matrix without gammas (``dt`` and ``a`` are None); an updated LCP (from
    :meth:`ConstraintSolver.update_discretized_time_lcp`) holds the matrix for step ``dt`` with
    the gammas added once, and a = [-Mv; kG]. ``MM`` is empty when no constraint can be active
    (``active`` is False). Arrays are read-only.
    """

    MM: np.ndarray
    qq: np.ndarray
    mlcp_to_lcp: MlcpToLcpData
    dt: float | None = None
    a: np.ndarray | None = None
    active: bool = True

    @property
    def size(self) -> int:
        return int(self.qq.size)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a
