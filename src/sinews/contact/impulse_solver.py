r"""Simbody's impulse solvers: the :class:`ImpulseSolver` interface, PGS and PLUS.

This is a from-scratch Python port of the design of Simbody's ``ImpulseSolver``,
``PGSImpulseSolver`` and ``PLUSImpulseSolver`` (M. Sherman, T. Uchida; Simbody 3.5+,
``Simbody/include/simbody/internal/ImpulseSolver.h``), described in
``docs/simbody-impulse-solver.md``.  The PLUS method is the one of T. K. Uchida, M. A. Sherman and
S. L. Delp, "Making a meaningful impact: modelling simultaneous frictional collisions in spatial
multibody systems", Proc. R. Soc. A 471:20140859 (2015).

The problem
-----------
With ``M`` the mass matrix, ``G`` the constraint Jacobian (one row per constraint equation, a
"multiplier"), ``A = G M^-1 G^T`` and ``D >= 0`` a diagonal softness, both an impact (time frozen)
and a contact step of size ``h`` reduce to one problem in the constraint-space impulses ``pi``::

    [A + D] (pi_expand + pi) = verr_start + verr_applied          (on the enforced rows)

subject to inequalities.  ``verr_start = G u - b`` (plus a Newton restitution term) is the current
velocity error, ``verr_applied = h G M^-1 f`` is what the applied forces would do in one step, and
``pi_expand`` is a *given* Poisson expansion impulse.  The generalized impulse applied to the
system is ``-G^T pi`` (Simbody's multiplier sign convention), so the velocity error left after the
solve is::

    verr = verr_start + verr_applied - [A + D] (pi_expand + pi).

Inequalities, per constraint kind (``sign = +-1``)::

    unilateral normal        sign * pi_n <= 0,  sign * verr_n >= 0,  pi_n * verr_n = 0
    unilateral friction      ||pi_F|| <= mu |pi_n + pi_expand_n|   (circular cone)
                             verr_F = 0 (rolling)  or  pi_F = mu N verr_F / ||verr_F|| (sliding)
    ratchet (uni speed)      like a frictionless normal on its one row
    bounded                  lb <= pi <= ub, verr = 0 when strictly inside
    state-limited friction   ||pi_F|| <= mu N_known
    constraint-limited fric. ||pi_F|| <= mu ||pi_N||   (pi_N: reaction rows of a bilateral)

Friction impulses point *along* the slip velocity error because the force applied to the system is
``-G^T pi``: the friction force opposes slip.

Solvers
-------
* :class:`PGSImpulseSolver` -- projected Gauss--Seidel with successive over-relaxation (SOR factor
  1.2, reduced by 0.8 whenever the error grows), groups swept in Simbody's order, radial projection
  onto the friction disk, RMS convergence test.  The sweeps run in a Numba kernel
  (:mod:`sinews.contact._simbody_pgs`) compiled on the first PGS solve, not at import.
* :class:`PLUSImpulseSolver` -- sliding *intervals*: friction that slides at the start of an
  interval keeps its direction; a Newton solve on the current active set (minimum-norm
  least-squares steps from a complete orthogonal factorization, LAPACK ``gelsy``, with a
  backtracking line search) finds the impulses; pruning moves contacts to off, rolling friction to
  impending; then only the fraction ``s`` of the interval for which no sliding direction turns by
  more than 30 degrees (or passes through rolling speed) is accepted, and a new interval starts.

Both return an :class:`ImpulseResult`; conditions (rolling, sliding, off, ...) are written back into
the run-time records, as Simbody does.  Bad input raises :class:`ValueError`; a solve that does not
converge is reported with ``converged=False``.

Reference: Simbody, https://github.com/simbody/simbody (``ImpulseSolver.h``,
``PGSImpulseSolver.cpp``, ``PLUSImpulseSolver.cpp``).

Layout of the implementation (this module re-exports the public names):

* :mod:`sinews.contact._simbody_records` -- enums, run-time records, :class:`ImpulseResult`,
  :class:`BilateralResult`;
* :mod:`sinews.contact._simbody_problem` -- argument checks and the assembled problem;
* :mod:`sinews.contact._simbody_interface` -- :class:`ImpulseSolver`;
* :mod:`sinews.contact._simbody_pgs_solver` -- :class:`PGSImpulseSolver`, over the compiled
  sweeps of :mod:`sinews.contact._simbody_pgs`;
* :mod:`sinews.contact._simbody_plus` -- :class:`PLUSImpulseSolver`, with the active set of one
  sliding interval in :mod:`sinews.contact._simbody_plus_active_set`.
"""

# Submodules are imported by name, not with ``from . import x``: the latter asks the package for
# the attribute first, which makes its lazy ``__getattr__`` import every sibling module.
from ._simbody_interface import ImpulseSolver
from ._simbody_pgs_solver import PGSImpulseSolver
from ._simbody_plus import PLUSImpulseSolver
from ._simbody_records import (MAX_NUM_PHASES, BilateralResult, BndCond, BoundedRT,
                               ConstraintLtdFrictionRT, ContactType, FricCond, ImpulseResult,
                               StateLtdFrictionRT, UncondRT, UniCond, UniContactRT, UniSpeedRT)

__all__ = [
    "MAX_NUM_PHASES",
    "ContactType",
    "UniCond",
    "FricCond",
    "BndCond",
    "UncondRT",
    "UniContactRT",
    "UniSpeedRT",
    "BoundedRT",
    "ConstraintLtdFrictionRT",
    "StateLtdFrictionRT",
    "ImpulseResult",
    "BilateralResult",
    "ImpulseSolver",
    "PGSImpulseSolver",
    "PLUSImpulseSolver",
]
