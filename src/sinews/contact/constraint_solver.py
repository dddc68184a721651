r"""Rigid contact with polygonal Coulomb friction, limits and bilateral constraints as LCPs.

A reimplementation of Drake's ``ConstraintSolver`` (``examples/rod2d/constraint_solver.h``,
formerly ``multibody/constraint``; Drumwright 2017, after Anitescu & Potra 1997), with the
defects listed in the Drake reference notes corrected (see "Deviations" below and
docs/drake-constraint-solver.md).

Notation (Drake's symbols). nv generalized velocities, M the generalized inertia, nc contacts with
normal Jacobian N (nc x nv), nr = sum(r) friction spanning directions with Jacobian F (nr x nv;
each contact i contributes r[i] rows, the solver adds the negated directions -F itself), nl
generic unilateral constraints ("limits") L (nl x nv), nb bilateral constraints G (nb x nv).

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
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import real_dtype, real_scalar
from ._drake_operators import (InertiaSolve, Layout, Operator, Overflow, componentwise_ok,
                               cone_coupling, equilibration, finite, float_vector, guard,
                               index_vector, integer_arg, min_norm_solve, nonnegative_vector,
                               operator_pair, overflow_error, pinv_symmetric, real_ndarray,
                               rows_scale, step, zeros_if_empty)

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

_EPS = float(np.finfo(float).eps)


# --------------------------------------------------------------------------------------------
# Problem data
# --------------------------------------------------------------------------------------------

def _check_sorted_unique(indices: np.ndarray, name: str) -> None:
    if indices.size > 1 and np.any(np.diff(indices) <= 0):
        raise ValueError(f"{name} must be sorted and free of duplicates")


@dataclass(frozen=True, eq=False)
class AccelProblemData:
    """Acceleration-level problem data (Drake's ``ConstraintAccelProblemData``).

    Jacobian operators (N, F, L, G, and N_minus_mu_Q_T = N^T - mu Q^T; explicit transposes F_T,
    L_T, G_T are optional) accept dense arrays, SciPy sparse matrices or SciPy LinearOperators.
    ``solve_inertia`` is the inertia matrix M (Cholesky-factorised once) or a callable B -> M^-1 B.
    Counts are inferred: nc from the contact index lists, nr = sum(r), nl = len(kL),
    nb = len(kG), nv = len(tau). Empty kN or kF mean zeros. Instances are immutable; use
    :meth:`replace` to derive a modified copy.
    """

    tau: Any
    solve_inertia: Any
    N: Any = None
    N_minus_mu_Q_T: Any = None
    kN: Any = ()
    F: Any = None
    F_T: Any = None
    kF: Any = ()
    L: Any = None
    L_T: Any = None
    kL: Any = ()
    G: Any = None
    G_T: Any = None
    kG: Any = ()
    sliding_contacts: Any = ()
    non_sliding_contacts: Any = ()
    r: Any = ()
    mu_sliding: Any = ()
    mu_non_sliding: Any = ()
    use_complementarity_problem_solver: bool = True

    def __post_init__(self) -> None:
        put = object.__setattr__
        tau = float_vector(self.tau, "tau")
        nv = tau.size
        sliding = index_vector(self.sliding_contacts, "sliding_contacts")
        non_sliding = index_vector(self.non_sliding_contacts, "non_sliding_contacts")
        _check_sorted_unique(sliding, "sliding_contacts")
        _check_sorted_unique(non_sliding, "non_sliding_contacts")
        nc = sliding.size + non_sliding.size
        if not np.array_equal(np.sort(np.concatenate([sliding, non_sliding])), np.arange(nc)):
            raise ValueError("sliding_contacts and non_sliding_contacts must together list every "
                             f"contact 0..{nc - 1} exactly once")
        r = index_vector(self.r, "r")
        if r.size != non_sliding.size:
            raise ValueError(f"r must have one entry per non-sliding contact "
                             f"(len(non_sliding_contacts) = {non_sliding.size}), got {r.size}")
        nr = int(r.sum())
        mu_s = float_vector(self.mu_sliding, "mu_sliding", sliding.size, "len(sliding_contacts)")
        mu_ns = float_vector(self.mu_non_sliding, "mu_non_sliding", non_sliding.size,
                             "len(non_sliding_contacts)")
        if np.any(mu_s < 0):
            raise ValueError("mu_sliding must be >= 0")
        if np.any(mu_ns < 0):
            raise ValueError("mu_non_sliding must be >= 0")
        kN = float_vector(self.kN, "kN")
        kF = float_vector(self.kF, "kF")
        kL = float_vector(self.kL, "kL")
        kG = float_vector(self.kG, "kG")
        nl, nb = kL.size, kG.size
        if not isinstance(self.use_complementarity_problem_solver, (bool, np.bool_)):
            raise ValueError("use_complementarity_problem_solver must be a bool")
        inertia = InertiaSolve(self.solve_inertia, nv, dims="nv = len(tau)")
        cols = "nv = len(tau)"
        N_op = Operator(self.N, "N", (nc, nv), f"nc = len(sliding_contacts) + "
                        f"len(non_sliding_contacts), {cols}")
        if nc and N_op.kind == "zero":
            raise ValueError("N is required when there are contacts")
        if self.N_minus_mu_Q_T is None:
            NmQT_op = N_op.transposed("N_minus_mu_Q_T")
            if N_op.kind == "linop":
                try:
                    NmQT_op(np.zeros(nc))
                except NotImplementedError as exc:
                    raise ValueError("N is a LinearOperator without rmatvec; give "
                                     "N_minus_mu_Q_T explicitly") from exc
        else:
            NmQT_op = Operator(self.N_minus_mu_Q_T, "N_minus_mu_Q_T", (nv, nc),
                               f"{cols}, nc = number of contacts")
        F_op, FT_op = operator_pair(self.F, self.F_T, nr, nv, "F", "F_T", f"nr = sum(r), {cols}")
        L_op, LT_op = operator_pair(self.L, self.L_T, nl, nv, "L", "L_T", f"nl = len(kL), {cols}")
        G_op, GT_op = operator_pair(self.G, self.G_T, nb, nv, "G", "G_T", f"nb = len(kG), {cols}")
        kN = zeros_if_empty(kN, nc, "kN", "nc = number of contacts")
        kF = zeros_if_empty(kF, nr, "kF", "nr = sum(r)")
        for name, value in (("tau", tau), ("sliding_contacts", sliding),
                            ("non_sliding_contacts", non_sliding), ("r", r),
                            ("mu_sliding", mu_s), ("mu_non_sliding", mu_ns), ("kN", kN),
                            ("kF", kF), ("kL", kL), ("kG", kG)):
            put(self, name, value)
        put(self, "_ops", _Ops(nv, nc, nr, nl, nb, inertia, N_op, NmQT_op, F_op, FT_op, L_op,
                               LT_op, G_op, GT_op))

    # counts ------------------------------------------------------------------------------
    num_velocities = property(lambda self: self._ops.nv, doc="nv")
    num_contacts = property(lambda self: self._ops.nc, doc="nc (sliding + non-sliding)")
    num_sliding = property(lambda self: int(self.sliding_contacts.size), doc="ns")
    num_non_sliding = property(lambda self: int(self.non_sliding_contacts.size), doc="nns")
    num_friction_directions = property(lambda self: self._ops.nr, doc="nr = sum(r)")
    num_limits = property(lambda self: self._ops.nl, doc="nl = len(kL)")
    num_bilateral = property(lambda self: self._ops.nb, doc="nb = len(kG)")
    num_packed = property(lambda self: self._ops.nc + self._ops.nr + self._ops.nl + self._ops.nb,
                          doc="size of the packed cf = nc + nr + nl + nb")

    def replace(self, **changes: Any) -> "AccelProblemData":
        """A validated copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def inverse_inertia(self, b: Any) -> np.ndarray:
        """M^-1 b for a vector or the columns of a matrix."""
        try:
            return self._ops.inertia(b, "b")
        except Overflow:
            raise overflow_error(self, b=b) from None


@dataclass(frozen=True, eq=False)
class VelProblemData:
    """Velocity-level (impact / time-step) problem data (Drake's ``ConstraintVelProblemData``).

    Every contact gets a polygonal friction cone with r[i] spanning directions and friction
    coefficient mu[i]. Counts: nc = len(mu), nr = sum(r), nl = len(kL), nb = len(kG),
    nv = len(Mv). Empty gammas mean zeros; empty kN or kF mean zeros. Operators and
    ``solve_inertia`` as in :class:`AccelProblemData` (here N_T is N's optional transpose).
    """

    Mv: Any
    solve_inertia: Any
    N: Any = None
    N_T: Any = None
    kN: Any = ()
    gammaN: Any = ()
    F: Any = None
    F_T: Any = None
    kF: Any = ()
    gammaF: Any = ()
    gammaE: Any = ()
    L: Any = None
    L_T: Any = None
    kL: Any = ()
    gammaL: Any = ()
    G: Any = None
    G_T: Any = None
    kG: Any = ()
    mu: Any = ()
    r: Any = ()

    def __post_init__(self) -> None:
        put = object.__setattr__
        Mv = float_vector(self.Mv, "Mv")
        nv = Mv.size
        mu = float_vector(self.mu, "mu")
        if np.any(mu < 0):
            raise ValueError("mu must be >= 0")
        nc = mu.size
        r = index_vector(self.r, "r")
        if r.size != nc:
            raise ValueError(f"r must have one entry per contact (len(mu) = {nc}), got {r.size}")
        nr = int(r.sum())
        kN = float_vector(self.kN, "kN")
        kF = float_vector(self.kF, "kF")
        kL = float_vector(self.kL, "kL")
        kG = float_vector(self.kG, "kG")
        nl, nb = kL.size, kG.size
        cols = "nv = len(Mv)"
        inertia = InertiaSolve(self.solve_inertia, nv, dims=cols)
        N_op, NT_op = operator_pair(self.N, self.N_T, nc, nv, "N", "N_T", f"nc = len(mu), {cols}")
        F_op, FT_op = operator_pair(self.F, self.F_T, nr, nv, "F", "F_T", f"nr = sum(r), {cols}")
        L_op, LT_op = operator_pair(self.L, self.L_T, nl, nv, "L", "L_T", f"nl = len(kL), {cols}")
        G_op, GT_op = operator_pair(self.G, self.G_T, nb, nv, "G", "G_T", f"nb = len(kG), {cols}")
        kN = zeros_if_empty(kN, nc, "kN", "nc = len(mu)")
        kF = zeros_if_empty(kF, nr, "kF", "nr = sum(r)")
        gammaN = nonnegative_vector(self.gammaN, "gammaN", nc, "nc = len(mu)")
        gammaF = nonnegative_vector(self.gammaF, "gammaF", nr, "nr = sum(r)")
        gammaE = nonnegative_vector(self.gammaE, "gammaE", nc, "nc = len(mu)")
        gammaL = nonnegative_vector(self.gammaL, "gammaL", nl, "nl = len(kL)")
        for name, value in (("Mv", Mv), ("mu", mu), ("r", r), ("kN", kN), ("kF", kF),
                            ("kL", kL), ("kG", kG), ("gammaN", gammaN), ("gammaF", gammaF),
                            ("gammaE", gammaE), ("gammaL", gammaL)):
            put(self, name, value)
        put(self, "_ops", _Ops(nv, nc, nr, nl, nb, inertia, N_op, NT_op, F_op, FT_op, L_op,
                               LT_op, G_op, GT_op))

    num_velocities = property(lambda self: self._ops.nv, doc="nv")
    num_contacts = property(lambda self: self._ops.nc, doc="nc = len(mu)")
    num_friction_directions = property(lambda self: self._ops.nr, doc="nr = sum(r)")
    num_limits = property(lambda self: self._ops.nl, doc="nl = len(kL)")
    num_bilateral = property(lambda self: self._ops.nb, doc="nb = len(kG)")
    num_packed = property(lambda self: self._ops.nc + self._ops.nr + self._ops.nl + self._ops.nb,
                          doc="size of the packed cf = nc + nr + nl + nb")

    def replace(self, **changes: Any) -> "VelProblemData":
        """A validated copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def inverse_inertia(self, b: Any) -> np.ndarray:
        """M^-1 b for a vector or the columns of a matrix."""
        try:
            return self._ops.inertia(b, "b")
        except Overflow:
            raise overflow_error(self, b=b) from None


@dataclass(frozen=True)
class _Ops:
    """Normalised operators of a problem-data object. ``NT`` is N^T - mu Q^T for accel data."""

    nv: int
    nc: int
    nr: int
    nl: int
    nb: int
    inertia: InertiaSolve
    N: Operator
    NT: Operator
    F: Operator
    FT: Operator
    L: Operator
    LT: Operator
    G: Operator
    GT: Operator


def _ops(data: Any) -> _Ops:
    if not isinstance(data, (AccelProblemData, VelProblemData)):
        raise ValueError("problem_data must be an AccelProblemData or a VelProblemData")
    return data._ops


# --------------------------------------------------------------------------------------------
# Bilateral constraints: MLCP -> LCP
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MlcpToLcpData:
    """Block inverse of the saddle-point matrix A = [[M, -G^T], [G, 0]] (Drake's
    ``MlcpToLcpData``), built from the Delassus matrix Del = G M^-1 G^T and its pseudo-inverse.

    ``saddle_point_solve`` is Drake's ``A_solve``; ``projected_inertia_solve`` (C X, with
    C = M^-1 - M^-1 G^T Del^+ G M^-1) is Drake's ``fast_A_solve``.
    """

    num_velocities: int
    num_bilateral: int
    delassus: np.ndarray
    delassus_pinv: np.ndarray
    inverse_inertia_G_T: np.ndarray
    _inertia: InertiaSolve = field(repr=False)
    _G: Operator = field(repr=False)

    @classmethod
    def from_problem_data(cls, problem_data: Any) -> "MlcpToLcpData":
        """Build the bilateral-constraint solvers of ``problem_data`` (Drake's
        ``ConstructLinearEquationSolversForMlcp``)."""
        ops = _ops(problem_data)
        nv, nb = ops.nv, ops.nb
        if nb == 0:
            empty = np.zeros((0, 0))
            return cls(nv, 0, empty, empty, np.zeros((nv, 0)), ops.inertia, ops.G)
        MiGT = ops.inertia(ops.GT.matrix())
        delassus = finite(ops.G(MiGT))
        delassus = 0.5 * (delassus + delassus.T)
        delassus_pinv = finite(pinv_symmetric(delassus))
        for a in (delassus, delassus_pinv, MiGT):
            a.setflags(write=False)
        return cls(nv, nb, delassus, delassus_pinv, MiGT, ops.inertia, ops.G)

    def projected_inertia_solve(self, X: Any) -> np.ndarray:
        """C X with C = M^-1 - M^-1 G^T Del^+ G M^-1 (equals M^-1 X when nb = 0)."""
        X = self._checked(X, "X", self.num_velocities)
        try:
            return self._projected(X)
        except Overflow:
            raise overflow_error(None, self._inertia, (self._G,), X=X) from None

    def _projected(self, X: np.ndarray) -> np.ndarray:
        Y = self._inertia(X)
        if self.num_bilateral == 0:
            return Y
        return finite(Y - self.inverse_inertia_G_T @ (self.delassus_pinv @ self._G(Y)))

    def saddle_point_solve(self, B: Any) -> np.ndarray:
        """A^-1 [Y; Z] for A = [[M, -G^T], [G, 0]]: the solution (x, lam) of
        M x - G^T lam = Y, G x = Z (least squares in lam for redundant G)."""
        B = self._checked(B, "B", self.num_velocities + self.num_bilateral)
        try:
            return self._saddle(B)
        except Overflow:
            raise overflow_error(None, self._inertia, (self._G,), B=B) from None

    def _saddle(self, B: np.ndarray) -> np.ndarray:
        nv = self.num_velocities
        Y, Z = B[:nv], B[nv:]
        MiY = self._inertia(Y)
        if self.num_bilateral == 0:
            return MiY
        lam = self.delassus_pinv @ (Z - self._G(MiY))
        x = MiY + self.inverse_inertia_G_T @ lam
        return finite(np.concatenate([x, lam], axis=0))

    @staticmethod
    def _checked(X: Any, name: str, rows: int) -> np.ndarray:
        X = real_ndarray(X, name)
        if X.ndim not in (1, 2) or X.shape[0] != rows:
            raise ValueError(f"{name} must have shape ({rows},) or ({rows}, k), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name} contains NaN or infinite entries")
        return X


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# LCP assembly
# --------------------------------------------------------------------------------------------

def _delassus_blocks(ops: _Ops, inverse: Any) -> np.ndarray:
    """W = J X J~^T with J = [N; F; L], J~^T = [NT, F^T, L^T] and X = C (or M^-1)."""
    JT = np.hstack([ops.NT.matrix(), ops.FT.matrix(), ops.LT.matrix()])
    XJT = inverse(JT)
    return np.vstack([ops.N(XJT), ops.F(XJT), ops.L(XJT)])


def _rows(ops: _Ops, v: np.ndarray, data: Any) -> np.ndarray:
    """J v + k for J = [N; F; L] and k = [kN; kF; kL]."""
    return np.concatenate([ops.N(v) + data.kN, ops.F(v) + data.kF, ops.L(v) + data.kL])


def _accel_layout(data: AccelProblemData) -> Layout:
    o = data._ops
    return Layout(o.nc, o.nr, data.num_non_sliding, o.nl)


def _vel_layout(data: VelProblemData) -> Layout:
    o = data._ops
    return Layout(o.nc, o.nr, o.nc, o.nl)


def _unpack(layout: Layout, z: np.ndarray) -> np.ndarray:
    """(fN, fF, fL) from z."""
    return np.concatenate([z[layout.fN], z[layout.fDp] - z[layout.fDm], z[layout.fL]])


# --------------------------------------------------------------------------------------------
# CFM / ERP
# --------------------------------------------------------------------------------------------

def cfm_erp_from_stiffness_damping(stiffness: float, damping: float,
                                   dt: float) -> tuple[float, float]:
    """Constraint force mixing and error reduction for an implicit spring-damper.

    CFM = 1 / (dt k + b),  ERP = dt k / (dt k + b)  (Lacoursiere 2007; Drake's Rod2D).
    With force unknowns use gamma = CFM and kN = ERP phi / dt; with impulse unknowns
    (:meth:`ConstraintSolver.solve_impact_problem`) use gamma = CFM / dt.
    """
    k, b, h = real_scalar(stiffness, "stiffness"), real_scalar(damping, "damping"), step(dt)
    if k < 0:
        raise ValueError("stiffness must be finite and >= 0")
    if b < 0:
        raise ValueError("damping must be finite and >= 0")
    denominator = h * k + b
    if denominator <= 0:
        raise ValueError("stiffness and damping must not both be zero")
    cfm, erp = 1.0 / denominator, h * k / denominator
    if not (np.isfinite(cfm) and np.isfinite(erp)):
        raise ValueError("CFM = 1 / (dt stiffness + damping) overflows: stiffness, damping and "
                         "dt are too large or too small in magnitude")
    return cfm, erp


def stiffness_damping_from_cfm_erp(cfm: float, erp: float, dt: float) -> tuple[float, float]:
    """Inverse of :func:`cfm_erp_from_stiffness_damping`: k = ERP / (CFM dt), b = (1 - ERP)/CFM."""
    c, e, h = real_scalar(cfm, "cfm"), real_scalar(erp, "erp"), step(dt)
    if c <= 0:
        raise ValueError("cfm must be finite and > 0")
    if not 0.0 <= e <= 1.0:
        raise ValueError("erp must lie in [0, 1]")
    with np.errstate(over="ignore", divide="ignore"):
        k, b = np.float64(e) / (np.float64(c) * h), (1.0 - e) / np.float64(c)
    k, b = float(k), float(b)
    if not (np.isfinite(k) and np.isfinite(b)):
        raise ValueError("stiffness = erp / (cfm dt) or damping = (1 - erp) / cfm overflows: cfm "
                         "and dt are too small in magnitude")
    return k, b


# --------------------------------------------------------------------------------------------
# The solver
# --------------------------------------------------------------------------------------------

class ConstraintSolver:
    """Drake's ConstraintSolver: contact, limit and bilateral forces from LCPs.

    Parameters
    ----------
    lexicographic : Lemke's ratio-test tie-breaking. None (default): Drake's "first index
        wins" rule, and if that attempt fails, one retry with the lexicographic (anti-cycling)
        rule before any regularisation; False: Drake's rule only; True: lexicographic only.
    max_pivots : Lemke pivot limit (default: sinews.lcp's min(1000, 50 n)).
    regularization_exponents : (min_exp, step_exp, max_exp) of the impact fallback; Drake tries
        10^-16, 10^-15, ..., 10^0, i.e. (-16, 1, 1) with an exclusive upper bound.
    drake_compat : reproduce Drake's behaviour where it is defective (the LCP matrix built with
        M^-1 despite bilateral constraints, the limit rows without -mu Q^T, gammas counted twice
        in the time-stepping update). For comparisons only.
    """

    def __init__(self, *, lexicographic: bool | None = None, max_pivots: int | None = None,
                 regularization_exponents: tuple[int, int, int] = (-16, 1, 1),
                 drake_compat: bool = False):
        if max_pivots is not None:
            max_pivots = integer_arg(max_pivots, "max_pivots", minimum=0)
        try:
            exps = np.asarray(regularization_exponents)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"regularization_exponents must be three integers: {exc}") from None
        exps = tuple(real_dtype(exps, "regularization_exponents").reshape(-1).tolist())
        if len(exps) != 3 or np.ndim(regularization_exponents) != 1:
            raise ValueError("regularization_exponents must be (min_exp, step_exp > 0, max_exp), "
                             f"got {regularization_exponents!r}")
        exps = tuple(integer_arg(e, "regularization_exponents") for e in exps)
        if exps[1] <= 0 or max(abs(exps[0]), abs(exps[2])) > 300:
            raise ValueError("regularization_exponents must be (min_exp, step_exp > 0, max_exp) "
                             f"with |exponents| <= 300, got {exps}")
        if lexicographic not in (None, True, False):
            raise ValueError("lexicographic must be None, True or False")
        self.lexicographic = lexicographic
        self.max_pivots = max_pivots
        self.regularization_exponents = exps
        self.drake_compat = bool(drake_compat)

    # ---------------------------------------------------------------------------------------
    # LCP solving
    # ---------------------------------------------------------------------------------------
    def _solve_lcp(self, MM: np.ndarray, qq: np.ndarray, regularize: bool,
                   qq_scale: np.ndarray | None = None) -> dict:
        n = qq.size
        if n == 0:
            return dict(z=np.zeros(0), converged=True, regularization=0.0, pivots=0,
                        lcp_status="empty LCP", status="lcp")
        finite(MM), finite(qq)
        # Badly scaled data (rows of very different magnitudes) is equilibrated first: Lemke then
        # solves D MM D y + D qq, z = D y, and the small rows are not lost in round-off.  If that
        # attempt fails, the problem is also tried as posed.
        d = equilibration(MM)
        if d is not None:
            M1, q1 = d[:, None] * MM * d[None, :], d * qq
            if np.all(np.isfinite(M1)) and np.all(np.isfinite(q1)):
                out = self._lemke(MM, qq, M1, q1, d, regularize, qq_scale)
                if out["converged"]:
                    return out
                plain = self._lemke(MM, qq, MM, qq, None, regularize, qq_scale)
                plain["pivots"] += out["pivots"]
                return plain if plain["converged"] else dict(out, pivots=plain["pivots"])
        return self._lemke(MM, qq, MM, qq, None, regularize, qq_scale)

    def _lemke(self, MM, qq, M1, q1, d, regularize, qq_scale) -> dict:
        """Lemke (with Drake's retries) on (M1, q1) = (D MM D, D qq); the answer z = D y is
        judged on the posed (MM, qq)."""
        from sinews.lcp import check_lcp, solve_lemke, solve_lemke_regularized

        zero_tol = float(np.max(np.abs(M1))) * (qq.size * 10.0 * _EPS)
        zero_tol = zero_tol if zero_tol > 0 else -1.0
        res = solve_lemke(M1, q1, zero_tol=zero_tol, lexicographic=bool(self.lexicographic),
                          max_pivots=self.max_pivots)
        pivots = res.pivots
        regularization = 0.0
        status = "lcp"
        if not res.converged and self.lexicographic is None:
            retry = solve_lemke(M1, q1, zero_tol=zero_tol, lexicographic=True,
                                max_pivots=self.max_pivots)
            pivots += retry.pivots
            if retry.converged:
                res = retry
                status = "lcp (lexicographic retry)"
        if not res.converged and regularize:
            lo, step, hi = self.regularization_exponents
            reg = solve_lemke_regularized(M1, q1, min_exp=lo, step_exp=step, max_exp=hi,
                                          zero_tol=zero_tol)
            pivots += reg.pivots
            match = re.search(r"regularisation 1e(-?\d+)", reg.status)
            if match:
                regularization = 10.0 ** int(match.group(1))
            res = reg  # z = 0 with the wrapper's status if every attempt failed
            status = "regularized lcp" if regularization else "lcp"
        y = finite(np.array(res.z, dtype=float))
        z = y if d is None else finite(d * y)
        converged = bool(res.converged and check_lcp(MM, qq, z).ok
                         and componentwise_ok(MM, qq, z, qq_scale))
        if not converged:
            status = f"failed: {res.status}"
        return dict(z=z, converged=converged, regularization=regularization, pivots=pivots,
                    lcp_status=res.status, status=status)

    @staticmethod
    def _diagnostics(MM: np.ndarray, qq: np.ndarray, z: np.ndarray) -> dict:
        w = MM @ z + qq if z.size else np.zeros(0)
        if z.size == 0:
            return dict(lcp_z=z, lcp_w=w, complementarity=0.0, feasibility=0.0)
        with np.errstate(over="ignore"):
            complementarity = float(np.max(np.abs(z * w)))
        return dict(lcp_z=_frozen(finite(z)), lcp_w=_frozen(finite(w)),
                    complementarity=float(finite(np.asarray(complementarity))),
                    feasibility=max(0.0, float(-z.min()), float(-w.min())))

    # ---------------------------------------------------------------------------------------
    # Public entry points: type checks, then the work; an overflow inside becomes a ValueError
    # naming the inputs of extreme magnitude.
    # ---------------------------------------------------------------------------------------
    def solve_constraint_problem(self, problem_data: AccelProblemData) -> ConstraintSolution:
        """Solve the acceleration-level problem (Drake's ``SolveConstraintProblem``).

        Returns the packed forces cf = [fN | fF | fL | fG]. An LCP that Lemke cannot solve
        (e.g. a Painleve configuration) gives ``converged=False`` and cf from z = 0; there is no
        regularised fallback at this level (as in Drake).
        """
        if not isinstance(problem_data, AccelProblemData):
            raise ValueError("problem_data must be an AccelProblemData")
        return guard(problem_data, self._solve_constraint_problem, problem_data)

    def solve_impact_problem(self, problem_data: VelProblemData) -> ConstraintSolution:
        """Impulses for an impact (Drake's ``SolveImpactProblem``).

        Plain Lemke first; if it fails, Lemke on MM + alpha I for alpha in the regularisation
        schedule. ``converged`` is True only if the returned z solves the *unregularised* LCP
        within tolerance; ``regularization`` reports the alpha used.
        """
        if not isinstance(problem_data, VelProblemData):
            raise ValueError("problem_data must be a VelProblemData")
        return guard(problem_data, self._solve_impact_problem, problem_data)

    def construct_base_discretized_time_lcp(self, problem_data: VelProblemData
                                            ) -> DiscretizedTimeLcp:
        """The h-independent part of the time-stepping LCP (Drake's
        ``ConstructBaseDiscretizedTimeLcp``), built without gammas.

        Returns an inactive (empty) LCP when there are no constraints, or when nb = 0 and
        v = M^-1 Mv already satisfies N v + kN >= 0 and L v + kL >= 0.
        """
        if not isinstance(problem_data, VelProblemData):
            raise ValueError("problem_data must be a VelProblemData")
        return guard(problem_data, self._construct_base, problem_data)

    def update_discretized_time_lcp(self, problem_data: VelProblemData,
                                    base: DiscretizedTimeLcp, dt: float) -> DiscretizedTimeLcp:
        """The LCP for step ``dt`` (Drake's ``UpdateDiscretizedTimeLcp``), as a new object.

        MM_dt = dt * (dynamics blocks of base.MM) + cone coupling + diag(gammaN, gammaF, gammaF,
        gammaE, gammaL); qq from the current Mv, kN, kF, kL, kG. Neither ``base`` nor
        ``problem_data`` is modified, so the update can be repeated with another dt.
        """
        if not isinstance(problem_data, VelProblemData):
            raise ValueError("problem_data must be a VelProblemData")
        if not isinstance(base, DiscretizedTimeLcp):
            raise ValueError("base must be a DiscretizedTimeLcp")
        h = step(dt)
        return guard(problem_data, self._update, problem_data, base, h, dt=h)

    def solve_discretized_time_lcp(self, problem_data: VelProblemData,
                                   dt: float) -> ConstraintSolution:
        """Construct, update, solve (Lemke, no regularisation) and populate in one call.

        cf holds forces (not impulses); the post-step velocity is
        M^-1 (Mv + dt * generalized force), see :meth:`compute_generalized_acceleration`.
        """
        if not isinstance(problem_data, VelProblemData):
            raise ValueError("problem_data must be a VelProblemData")
        h = step(dt)
        return guard(problem_data, self._solve_discretized, problem_data, h, dt=h)

    # ---------------------------------------------------------------------------------------
    # Acceleration level
    # ---------------------------------------------------------------------------------------
    def _solve_constraint_problem(self, data: AccelProblemData) -> ConstraintSolution:
        ops = data._ops
        counts = (ops.nc, ops.nr, ops.nl, ops.nb)
        if ops.nc == ops.nl == ops.nb == 0:
            return ConstraintSolution(np.zeros(0), True, "no constraints", *counts)
        if ops.nb == 0:
            a0 = ops.inertia(data.tau)
            gN, gL = finite(ops.N(a0) + data.kN), finite(ops.L(a0) + data.kL)
            if np.all(gN >= 0) and np.all(gL >= 0):
                return ConstraintSolution(np.zeros(data.num_packed), True,
                                          "no active constraints", *counts)
        mlcp = MlcpToLcpData.from_problem_data(data)
        # Acceleration with bilateral constraints enforced and unilateral forces zero.
        a_b = mlcp._saddle(np.concatenate([data.tau, -data.kG]))[:ops.nv]
        compat = self.drake_compat
        inverse = ops.inertia if compat else mlcp._projected
        W = _delassus_blocks(ops, inverse)
        rows_k = _rows(ops, a_b, data)
        k_scale = rows_scale(ops, a_b, data)
        nc, nr = ops.nc, ops.nr
        extra: dict = {}
        if data.use_complementarity_problem_solver:
            W_lcp = W
            if compat and ops.nl:
                # Drake overwrites the LCP's L rows with the transpose of its L columns, which
                # drops -mu Q^T (its linear-system path does not).
                W_lcp = W.copy()
                W_lcp[nc + nr:, :nc] = W[:nc, nc + nr:].T
            layout = _accel_layout(data)
            P = layout.unpack_map()
            MM = P.T @ W_lcp @ P + cone_coupling(layout, data.r, data.non_sliding_contacts,
                                              data.mu_non_sliding)
            qq = P.T @ rows_k
            out = self._solve_lcp(MM, qq, regularize=False, qq_scale=np.abs(P.T) @ k_scale)
            z = out["z"]
            forces = _unpack(layout, z)
            extra = self._diagnostics(MM, qq, z)
            extra.update(pivots=out["pivots"], lcp_status=out["lcp_status"])
            converged, status = out["converged"], out["status"]
        else:
            forces, residual = min_norm_solve(finite(W), -finite(rows_k))
            scale = max(1.0, float(np.max(np.abs(W))) if W.size else 1.0,
                        float(np.max(np.abs(rows_k))) if rows_k.size else 1.0)
            # each row against its own scale too (see componentwise_ok)
            r = k_scale + np.abs(W) @ np.abs(forces)
            if r.size:
                r = r + np.minimum(float(np.median(r)),
                                   np.abs(W).sum(axis=1) * float(np.max(np.abs(forces))))
            converged = (residual <= np.sqrt(_EPS) * scale
                         and bool(np.all(np.abs(W @ forces + rows_k) <= 1e-7 * r)))
            status = "linear system" if converged else "failed: inconsistent linear system"
            extra = dict(residual=residual)
        fG = np.zeros(0)
        if ops.nb:
            generalized = (ops.NT(forces[:nc]) + ops.FT(forces[nc:nc + nr])
                           + ops.LT(forces[nc + nr:]))
            fG = mlcp._saddle(
                np.concatenate([data.tau + generalized, -data.kG]))[ops.nv:]
        cf = _frozen(np.concatenate([forces, fG]))
        solution = ConstraintSolution(cf, bool(converged), status, *counts, **extra)
        return self._check_bilateral(solution, data, lambda gf: ops.inertia(data.tau + gf))

    # ---------------------------------------------------------------------------------------
    # Velocity level
    # ---------------------------------------------------------------------------------------
    def _velocity_lcp(self, data: VelProblemData, mlcp: MlcpToLcpData, dt: float,
                      with_gammas: bool) -> tuple[np.ndarray, np.ndarray]:
        ops = data._ops
        layout = _vel_layout(data)
        inverse = ops.inertia if self.drake_compat else mlcp._projected
        W = _delassus_blocks(ops, inverse)
        P = layout.unpack_map()
        MM = dt * (P.T @ W @ P) + cone_coupling(layout, data.r, np.arange(ops.nc), data.mu)
        if with_gammas:
            MM[np.diag_indices_from(MM)] += _gamma_diagonal(data)
        v_b = mlcp._saddle(np.concatenate([data.Mv, -data.kG]))[:ops.nv]
        qq = P.T @ _rows(ops, v_b, data)
        return MM, qq, np.abs(P.T) @ rows_scale(ops, v_b, data)

    @staticmethod
    def _check_bilateral(solution: "ConstraintSolution", data, velocity) -> "ConstraintSolution":
        """Redundant bilateral rows with inconsistent ``kG`` make the projected solve a least
        squares compromise: then ``G x + kG != 0`` (x the acceleration, or the post-step
        velocity) and the solution must not be reported as converged."""
        ops = data._ops
        if not (ops.nb and solution.converged):
            return solution
        gf = ConstraintSolver._generalized_force(data, np.asarray(solution.cf))
        x = velocity(gf)
        r = ops.G(x) + data.kG
        scale = 1.0 + max(float(np.max(np.abs(ops.G(x)))), float(np.max(np.abs(data.kG))))
        if float(np.max(np.abs(r))) <= 1e-8 * scale:
            return solution
        return dataclasses.replace(
            solution, converged=False,
            status=f"failed: inconsistent bilateral constraints (max |G x + kG| = {np.max(np.abs(r)):.3g})")

    @staticmethod
    def _no_impact(data: VelProblemData) -> bool:
        ops = data._ops
        if ops.nb:
            return False
        v = ops.inertia(data.Mv)
        gN, gL = finite(ops.N(v) + data.kN), finite(ops.L(v) + data.kL)
        return bool(np.all(gN >= 0) and np.all(gL >= 0))

    def _solve_impact_problem(self, data: VelProblemData) -> ConstraintSolution:
        ops = data._ops
        counts = (ops.nc, ops.nr, ops.nl, ops.nb)
        if ops.nc == ops.nl == ops.nb == 0:
            return ConstraintSolution(np.zeros(0), True, "no constraints", *counts)
        if self._no_impact(data):
            return ConstraintSolution(np.zeros(data.num_packed), True, "no active constraints",
                                      *counts)
        mlcp = MlcpToLcpData.from_problem_data(data)
        MM, qq, qq_scale = self._velocity_lcp(data, mlcp, 1.0, with_gammas=True)
        out = self._solve_lcp(MM, qq, regularize=True, qq_scale=qq_scale)
        z = out["z"]
        a = np.concatenate([-data.Mv, data.kG])
        cf = _populate(data, mlcp, z, a, 1.0)
        extra = self._diagnostics(MM, qq, z)
        solution = ConstraintSolution(cf, out["converged"], out["status"], *counts,
                                      pivots=out["pivots"], regularization=out["regularization"],
                                      lcp_status=out["lcp_status"], **extra)
        return self._check_bilateral(solution, data, lambda gf: ops.inertia(data.Mv + gf))

    def _construct_base(self, data: VelProblemData) -> DiscretizedTimeLcp:
        mlcp = MlcpToLcpData.from_problem_data(data)
        ops = data._ops
        if ops.nc == ops.nl == ops.nb == 0 or self._no_impact(data):
            return DiscretizedTimeLcp(_frozen(np.zeros((0, 0))), _frozen(np.zeros(0)), mlcp,
                                      active=False)
        MM, qq, _ = self._velocity_lcp(data, mlcp, 1.0, with_gammas=self.drake_compat)
        return DiscretizedTimeLcp(_frozen(finite(MM)), _frozen(finite(qq)), mlcp)

    def _update(self, data: VelProblemData, base: DiscretizedTimeLcp,
                h: float) -> DiscretizedTimeLcp:
        ops = data._ops
        mlcp = MlcpToLcpData.from_problem_data(data) if ops.nb else base.mlcp_to_lcp
        a = _frozen(np.concatenate([-data.Mv, data.kG]))
        layout = _vel_layout(data)
        if not base.active:
            return DiscretizedTimeLcp(base.MM, base.qq, mlcp, h, a, active=False)
        if base.MM.shape != (layout.size, layout.size):
            raise ValueError(f"base has an LCP of size {base.MM.shape[0]}, but problem_data "
                             f"needs {layout.size}")
        MM = np.where(layout.lambda_mask(), base.MM, h * base.MM)
        MM[np.diag_indices_from(MM)] += _gamma_diagonal(data)
        v_b = mlcp._saddle(np.concatenate([data.Mv, -data.kG]))[:ops.nv]
        qq = layout.unpack_map().T @ _rows(ops, v_b, data)
        return DiscretizedTimeLcp(_frozen(finite(MM)), _frozen(finite(qq)), mlcp, h, a)

    def _solve_discretized(self, data: VelProblemData, dt: float) -> ConstraintSolution:
        lcp = self._update(data, self._construct_base(data), dt)
        ops = data._ops
        counts = (ops.nc, ops.nr, ops.nl, ops.nb)
        if not lcp.active:
            if ops.nc == ops.nl == ops.nb == 0:
                return ConstraintSolution(np.zeros(0), True, "no constraints", *counts)
            return ConstraintSolution(np.zeros(data.num_packed), True, "no active constraints",
                                      *counts)
        v_b = lcp.mlcp_to_lcp._saddle(np.concatenate([data.Mv, -data.kG]))[:ops.nv]
        qq_scale = np.abs(_vel_layout(data).unpack_map().T) @ rows_scale(ops, v_b, data)
        out = self._solve_lcp(lcp.MM, lcp.qq, regularize=False, qq_scale=qq_scale)
        z = out["z"]
        cf = _populate(data, lcp.mlcp_to_lcp, z, lcp.a, lcp.dt)
        extra = self._diagnostics(lcp.MM, lcp.qq, z)
        solution = ConstraintSolution(cf, out["converged"], out["status"], *counts,
                                      pivots=out["pivots"], lcp_status=out["lcp_status"], **extra)
        return self._check_bilateral(solution, data, lambda gf: ops.inertia(data.Mv + dt * gf))

    @staticmethod
    def populate_packed_constraint_forces_from_lcp_solution(
            problem_data: VelProblemData, mlcp_to_lcp: MlcpToLcpData, zz: Any, a: Any,
            dt: float) -> np.ndarray:
        """cf = [fN | fD+ - fD- | fL | fG] from the LCP solution zz (Drake's
        ``PopulatePackedConstraintForcesFromLcpSolution``).

        The bilateral forces solve M v+ - dt G^T fG = Mv + dt J^T f, G v+ = -kG, i.e.
        fG = (-A^-1 (a + [-dt J^T f; 0]))[nv:] / dt with a = [-Mv; kG]. An empty zz means that
        no unilateral constraint is active.
        """
        if not isinstance(problem_data, VelProblemData):
            raise ValueError("problem_data must be a VelProblemData")
        if not isinstance(mlcp_to_lcp, MlcpToLcpData):
            raise ValueError("mlcp_to_lcp must be an MlcpToLcpData")
        ops = problem_data._ops
        if (mlcp_to_lcp.num_velocities, mlcp_to_lcp.num_bilateral) != (ops.nv, ops.nb):
            raise ValueError(f"mlcp_to_lcp has (nv, nb) = ({mlcp_to_lcp.num_velocities}, "
                             f"{mlcp_to_lcp.num_bilateral}), problem_data ({ops.nv}, {ops.nb})")
        h = step(dt)
        zz = float_vector(zz, "zz")
        size = _vel_layout(problem_data).size
        if zz.size not in (0, size):
            raise ValueError(f"zz must be empty or have length {size}, got {zz.size}")
        a = float_vector(a, "a", ops.nv + ops.nb, "nv + nb") if ops.nb else None
        return guard(problem_data, _populate, problem_data, mlcp_to_lcp, zz, a, h, zz=zz,
                      a=np.zeros(0) if a is None else a, dt=h)

    # ---------------------------------------------------------------------------------------
    # Helpers that use cf
    # ---------------------------------------------------------------------------------------
    @staticmethod
    def _split_cf(data: Any, cf: Any) -> tuple[np.ndarray, ...]:
        ops = _ops(data)
        cf = float_vector(cf, "cf")
        if cf.size == 0:
            cf = np.zeros(data.num_packed)
        if cf.size != data.num_packed:
            raise ValueError(f"cf must have length {data.num_packed} (nc + nr + nl + nb), got "
                             f"{cf.size}")
        i = np.cumsum([ops.nc, ops.nr, ops.nl])
        return cf[:i[0]], cf[i[0]:i[1]], cf[i[1]:i[2]], cf[i[2]:]

    @staticmethod
    def _generalized_force(data: Any, cf: Any) -> np.ndarray:
        ops = data._ops
        fN, fF, fL, fG = ConstraintSolver._split_cf(data, cf)
        return finite(ops.NT(fN) + ops.FT(fF) + ops.LT(fL) + ops.GT(fG))

    @staticmethod
    def compute_generalized_force_from_constraint_forces(problem_data: Any,
                                                         cf: Any) -> np.ndarray:
        """(N^T - mu Q^T) fN + F^T fF + L^T fL + G^T fG for accel data;
        N^T fN + F^T fF + L^T fL + G^T fG for velocity data. Empty cf gives zeros."""
        _ops(problem_data)
        return guard(problem_data, ConstraintSolver._generalized_force, problem_data, cf, cf=cf)

    @staticmethod
    def compute_generalized_acceleration_from_constraint_forces(problem_data: Any,
                                                                cf: Any) -> np.ndarray:
        """M^-1 times the generalized constraint force."""
        ops = _ops(problem_data)
        return guard(problem_data, lambda: ops.inertia(
            ConstraintSolver._generalized_force(problem_data, cf)), cf=cf)

    @staticmethod
    def compute_generalized_acceleration(problem_data: Any, cf: Any, v: Any = None,
                                         dt: float | None = None) -> np.ndarray:
        """Generalized acceleration.

        AccelProblemData: M^-1 (tau + generalized constraint force).
        VelProblemData (``v`` and ``dt`` > 0 required): (v+ - v)/dt with
        v+ = M^-1 (Mv + dt * generalized constraint force); includes the external forces
        because Mv does.
        """
        ops = _ops(problem_data)
        if isinstance(problem_data, AccelProblemData):
            return guard(problem_data, lambda: ops.inertia(
                problem_data.tau + ConstraintSolver._generalized_force(problem_data, cf)), cf=cf)
        if v is None or dt is None:
            raise ValueError("v and dt are required for velocity-level problem data")
        v = float_vector(v, "v", ops.nv, "nv = len(Mv)")
        h = step(dt)

        def acceleration():
            gf = ConstraintSolver._generalized_force(problem_data, cf)
            v_plus = ops.inertia(finite(problem_data.Mv + h * gf))
            return finite((v_plus - v) / h)

        return guard(problem_data, acceleration, cf=cf, v=v, dt=h)

    @staticmethod
    def compute_generalized_velocity_change(problem_data: VelProblemData,
                                            cf: Any) -> np.ndarray:
        """Delta v = M^-1 (N^T fN + F^T fF + L^T fL + G^T fG) for impulses cf; the post-impact
        velocity is M^-1 Mv + Delta v."""
        if not isinstance(problem_data, VelProblemData):
            raise ValueError("problem_data must be a VelProblemData")
        return ConstraintSolver.compute_generalized_acceleration_from_constraint_forces(
            problem_data, cf)

    @staticmethod
    def calc_contact_forces_in_contact_frames(cf: Any, problem_data: Any,
                                              contact_frames: Any) -> np.ndarray:
        """Contact forces of a 2-D problem in each contact frame, an (nc, 2) array of
        (normal, tangential) components (Drake's ``CalcContactForcesInContactFrames``).

        ``contact_frames`` is a sequence of nc 2x2 rotation matrices whose columns are the
        contact normal and tangent in world coordinates. At acceleration level the tangent of a
        sliding contact must point along the slip (its friction is -mu fN along it).
        """
        ops = _ops(problem_data)
        fN, fF, _, _ = ConstraintSolver._split_cf(problem_data, cf)
        accel = isinstance(problem_data, AccelProblemData)
        frames = real_ndarray(contact_frames, "contact_frames")
        ncone = problem_data.num_non_sliding if accel else ops.nc
        if ops.nr != ncone or np.any(problem_data.r != 1):
            raise ValueError("calc_contact_forces_in_contact_frames needs a 2-D problem "
                             "(exactly one friction direction per friction cone, r[i] = 1)")
        if frames.size == 0:
            frames = frames.reshape(0, 2, 2)
        if frames.ndim != 3 or frames.shape[1:] != (2, 2) or frames.shape[0] != ops.nc:
            raise ValueError(f"contact_frames must have shape ({ops.nc}, 2, 2), got "
                             f"{frames.shape}")
        if not np.all(np.isfinite(frames)):
            raise ValueError("contact_frames contains NaN or infinite entries")
        tol = np.sqrt(_EPS)
        if np.any(np.abs(np.linalg.norm(frames, axis=1) - 1.0) > tol):
            raise ValueError("contact_frames columns must have unit length")
        if np.any(np.abs(np.einsum("ki,ki->k", frames[:, :, 0], frames[:, :, 1])) > tol):
            raise ValueError("contact_frames columns must be orthogonal")
        normal, tangent = frames[:, :, 0], frames[:, :, 1]
        if accel:
            tangential = np.zeros(ops.nc)
            tangential[problem_data.sliding_contacts] = (
                -problem_data.mu_sliding * fN[problem_data.sliding_contacts])
            tangential[problem_data.non_sliding_contacts] = fF
        else:
            tangential = fF
        with np.errstate(over="ignore", invalid="ignore"):
            f_world = normal * fN[:, None] + tangent * tangential[:, None]
            out = np.einsum("kji,kj->ki", frames, f_world)
        if not np.all(np.isfinite(out)):
            raise overflow_error(problem_data, cf=np.asarray(cf, dtype=float))
        return out


def _populate(data: VelProblemData, mlcp: MlcpToLcpData, zz: np.ndarray, a: Any,
              h: float) -> np.ndarray:
    """cf from a validated LCP solution (populate_packed_constraint_forces_from_lcp_solution)."""
    ops = data._ops
    layout = _vel_layout(data)
    forces = np.zeros(ops.nc + ops.nr + ops.nl) if zz.size == 0 else _unpack(layout, zz)
    fG = np.zeros(0)
    if ops.nb:
        nc, nr = ops.nc, ops.nr
        impulse = h * (ops.NT(forces[:nc]) + ops.FT(forces[nc:nc + nr]) + ops.LT(forces[nc + nr:]))
        rhs = finite(-(a + np.concatenate([-impulse, np.zeros(ops.nb)])))
        fG = mlcp._saddle(rhs)[ops.nv:] / h
    return _frozen(finite(np.concatenate([forces, fG])))


def _gamma_diagonal(data: VelProblemData) -> np.ndarray:
    return np.concatenate([data.gammaN, data.gammaF, data.gammaF, data.gammaE, data.gammaL])
