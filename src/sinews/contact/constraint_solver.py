r"""Rigid contact with polygonal Coulomb friction, limits and bilateral constraints as LCPs.

A reimplementation of Drake's ``ConstraintSolver`` (``examples/rod2d/constraint_solver.h``,
formerly ``multibody/constraint``; Drumwright 2017, after Anitescu & Potra 1997), with the
defects listed in the Drake reference notes corrected (see "Deviations" below and
docs/drake-constraint-solver.md).

Notation (Drake's symbols). nv generalized velocities, M the generalized inertia, nc contacts with
normal Jacobian N (nc x nv), nr = sum(r) friction spanning directions with Jacobian F (nr x nv;
each contact i contributes r[i] rows, the solver adds the negated directions -F itself), nl
generic unilateral constraints ("limits") L (nl x nv), nb bilateral constraints G (nb x nv).
Vectors: generalized forces ``tau`` (nv,) and velocities ``v`` (nv,); ``kN`` (nc,), ``kF``
(nr,), ``kL`` (nl,), ``kG`` (nb,).

**Acceleration level** (:class:`AccelProblemData`,
:meth:`ConstraintSolver.solve_constraint_problem`)::

    M v' = tau + (N^T - mu Q^T) fN + F^T fF + L^T fL + G^T fG
    0 = G v' + kG
    0 <= N v' + kN  _|_  fN >= 0
    0 <= L v' + kL  _|_  fL >= 0

Sliding contacts get friction -mu fN along their slip direction Q (folded into the operator
N^T - mu Q^T); each non-sliding contact gets the linearised cone with fF = fD+ - fD-::

    0 <= F v' + kF + E lam  _|_ fD+ >= 0,     0 <= -(F v' + kF) + E lam  _|_  fD- >= 0,
    0 <= mu fN - E^T (fD+ + fD-)  _|_  lam >= 0.

The bilateral constraints are removed by the projected inverse inertia
C = M^-1 - M^-1 G^T (G M^-1 G^T)^+ G M^-1 (a pseudo-inverse tolerates redundant G), which leaves a
pure LCP in z = [fN, fD+, fD-, lam, fL]::

    MM = P^T (J C J~^T) P + [cone coupling E, mu],    qq = P^T (J a_b + k),

with J = [N; F; L], J~^T = [N^T - mu Q^T, F^T, L^T], P the map z -> (fN, fD+ - fD-, fL), and
a_b = C tau - M^-1 G^T (G M^-1 G^T)^+ kG the acceleration with every unilateral force at zero.

**Velocity level** (:class:`VelProblemData`): impacts and time steps. Unknowns are impulses for
:meth:`ConstraintSolver.solve_impact_problem`, forces for the time-discretised LCP
(:meth:`~ConstraintSolver.construct_base_discretized_time_lcp`,
:meth:`~ConstraintSolver.update_discretized_time_lcp`)::

    M v+ = Mv + h (N^T fN + F^T fF + L^T fL + G^T fG),    0 = G v+ + kG,
    0 <= N v+ + kN + gammaN fN  _|_  fN >= 0   (likewise L with gammaL; F rows with gammaF,
    lam rows with gammaE),

h = 1 for an impact. The LCP matrix is h P^T (J C J^T) P + cone coupling + diag(gammas).

**Regularisation** (Lacoursiere 2007; Catto 2011): with force unknowns, gamma = CFM = 1/(h k + b)
and kN = ERP phi / h with ERP = h k / (h k + b) turn each active contact into the implicit
spring-damper f = -k (phi + h phi'+) - b phi'+; with impulse unknowns use gamma = CFM / h.
See :func:`cfm_erp_from_stiffness_damping`.

Packed constraint forces: ``cf = [fN (nc) | fF (nr) | fL (nl) | fG (nb)]``; at acceleration level
fN is ordered by contact index and fF holds the signed friction of the non-sliding contacts only.

Deviations from Drake (regression tests in tests/test_drake_constraint_solver_defects.py and
tests/test_drake_constraint_solver_api.py):

1. the LCP matrix uses the projected inverse C, not M^-1, when bilateral constraints are present;
2. the limit rows of the acceleration LCP keep the -mu Q^T term (L C (N^T - mu Q^T));
3. the base time-stepping LCP is built without gammas and ``update`` adds them exactly once;
4. ``update_discretized_time_lcp`` never mutates its inputs (it returns a new LCP);
5. the acceleration fast exit returns zeros of size nc + nr + nl;
6. LCP failures are reported (``converged=False``) instead of raised, and a regularised impact
   answer counts as converged only if it also solves the unregularised LCP;
7. a failed Lemke attempt with Drake's "first index wins" ratio test is retried once with the
   lexicographic (anti-cycling) rule before giving up or regularising.

``ConstraintSolver(drake_compat=True)`` reproduces deviations 1-3 for comparison.

References: Drake ``examples/rod2d/constraint_solver.{h,cc}`` and ``constraint_problem_data.h``;
M. Anitescu & F. Potra, Nonlinear Dynamics 14 (1997); C. Lacoursiere, PhD thesis, Umea (2007).

Layout of the implementation (this module re-exports the public names):

* :mod:`sinews.contact._drake_operators` -- Jacobian operators, inertia solves, checks;
* :mod:`sinews.contact._drake_problem` -- :class:`AccelProblemData`, :class:`VelProblemData`,
  :func:`cfm_erp_from_stiffness_damping`, :func:`stiffness_damping_from_cfm_erp`;
* :mod:`sinews.contact._drake_mlcp` -- :class:`MlcpToLcpData` and the LCP assembly;
* :mod:`sinews.contact._drake_solution` -- :class:`ConstraintSolution`, :class:`DiscretizedTimeLcp`;
* :mod:`sinews.contact._drake_solver` -- :class:`ConstraintSolver`.
"""

from ._drake_mlcp import MlcpToLcpData
from ._drake_problem import (AccelProblemData, VelProblemData, cfm_erp_from_stiffness_damping,
                             stiffness_damping_from_cfm_erp)
from ._drake_solution import ConstraintSolution, DiscretizedTimeLcp
from ._drake_solver import ConstraintSolver

__all__ = [
    "AccelProblemData",
    "VelProblemData",
    "MlcpToLcpData",
    "DiscretizedTimeLcp",
    "ConstraintSolution",
    "ConstraintSolver",
    "cfm_erp_from_stiffness_damping",
    "stiffness_damping_from_cfm_erp",
]
