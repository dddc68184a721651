"""Problem data of Drake's ConstraintSolver (:mod:`sinews.contact.constraint_solver`).

:class:`AccelProblemData` (acceleration level: contact, limit and bilateral forces) and
:class:`VelProblemData` (velocity level: impacts and time steps) check their arguments once and
wrap the Jacobians and the inverse inertia in the operators of :mod:`._drake_operators` (kept as
``data._ops``).  :func:`cfm_erp_from_stiffness_damping` and its inverse turn a contact
stiffness and damping into the regularisation (``gamma``, ``kN``) of velocity-level data.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._checks import real_scalar
from ._drake_operators import (InertiaSolve, Operator, Overflow, float_vector, index_vector,
                               nonnegative_vector, operator_pair, overflow_error, step,
                               zeros_if_empty)

_EPS = float(np.finfo(float).eps)


# --------------------------------------------------------------------------------------------
# Problem data
# --------------------------------------------------------------------------------------------

def _check_sorted_unique(indices: np.ndarray, name: str) -> None:
    if indices.size > 1 and np.any(np.diff(indices) <= 0):
        raise ValueError(f"{name} must be sorted and free of duplicates")


def _count(getter: Callable[[Any], int], doc: str) -> property:
    """A read-only ``int`` property (the problem's sizes)."""

    def fget(self: Any) -> int:
        return getter(self)

    fget.__doc__ = doc
    return property(fget, doc=doc)


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
    num_velocities = _count(lambda self: self._ops.nv, doc="nv")
    num_contacts = _count(lambda self: self._ops.nc, doc="nc (sliding + non-sliding)")
    num_sliding = _count(lambda self: int(self.sliding_contacts.size), doc="ns")
    num_non_sliding = _count(lambda self: int(self.non_sliding_contacts.size), doc="nns")
    num_friction_directions = _count(lambda self: self._ops.nr, doc="nr = sum(r)")
    num_limits = _count(lambda self: self._ops.nl, doc="nl = len(kL)")
    num_bilateral = _count(lambda self: self._ops.nb, doc="nb = len(kG)")
    num_packed = _count(lambda self: self._ops.nc + self._ops.nr + self._ops.nl + self._ops.nb,
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

    num_velocities = _count(lambda self: self._ops.nv, doc="nv")
    num_contacts = _count(lambda self: self._ops.nc, doc="nc = len(mu)")
    num_friction_directions = _count(lambda self: self._ops.nr, doc="nr = sum(r)")
    num_limits = _count(lambda self: self._ops.nl, doc="nl = len(kL)")
    num_bilateral = _count(lambda self: self._ops.nb, doc="nb = len(kG)")
    num_packed = _count(lambda self: self._ops.nc + self._ops.nr + self._ops.nl + self._ops.nb,
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
