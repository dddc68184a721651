"""Forward dynamics with constraints: ``qdd`` and the constraint forces ``lambda``.

Solves, at state ``(q, v)`` with joint forces ``tau`` and external wrenches ``f_ext``,

    H(q) qdd + C(q, v, f_ext) = tau + G(q)^T lambda
    G(q) qdd = gamma(q, v)                   (Baumgarte terms included where enabled)

by one of five methods, which agree on ``qdd`` *and* ``lambda``:

* ``"direct"``: the KKT system (:mod:`sinews.constraints.kkt_direct`);
* ``"range_space_sparse"``: ``G H^-1 G^T`` from the branch-sparse ``L^T L``
  (:mod:`sinews.constraints.range_space_sparse`);
* ``"null_space"``: QR of ``G^T`` (:mod:`sinews.constraints.null_space`);
* ``"kokkevis"``: test forces through the ABA (:mod:`sinews.constraints.kokkevis`);
* ``"tree_augmented"``: O(N) tree-augmented dynamics, ABA plus ``G M^-1 G^T`` from test-input
  sweeps over the constraint bodies' paths, no mass matrix
  (:mod:`sinews.constraints.tree_augmented`).

``lambda`` has one entry per row and is the physical constraint force (contact: ``> 0`` pushes
the body along the normal).  Redundant constraints give a flagged minimum-norm least-squares
answer (``least_squares=True``, ``rank < rows``); a system whose accelerations are not
determined raises ``ValueError``; NaN is never returned silently.

Implementation: for a set made only of point contacts, the range-space, direct and null-space
methods are one compiled call each (:mod:`sinews.constraints._compiled_contacts`: tree passes,
contact rows on the support chains, factorisation and solve; the direct method eliminates
``qdd`` from the KKT system through the Schur complement of ``H``, the null-space method
factorises ``G^T`` by a pivoted QR in the kernel).  A system those kernels do not solve
(singular ``H``, redundant or zero rows, borderline rank) and Kokkevis take the general path:
``G``, ``gamma`` (with Baumgarte terms), ``H`` and ``tau - C`` from one compiled kernel, then
the method's solver with its flagged least-squares answers and errors; other sets
evaluate each group in Python over one shared tree pass
(:class:`~sinews.constraints.ConstraintKinematics`).  All give the same numbers (tested).
Sets mixing point contacts, :class:`~sinews.constraints.LoopConstraint` rows, loops by joint
type (:class:`sinews.loops.LoopJoint`) and :class:`~sinews.constraints.CoordinateConstraint`
rows are one compiled call each for
``range_space_sparse``, ``direct`` and ``tree_augmented`` too
(:mod:`sinews.constraints._compiled_mixed`); sets with custom groups (and the ``null_space``
and ``kokkevis`` methods on mixed sets) take the general path.
Sets with more rows than coordinates and at least ``THIN_MIN_ROWS`` (256) rows are solved on
their compressed rows by every method (:mod:`sinews.constraints._thin`): no rows x rows matrix,
the same ``qdd``, ``G^T lambda`` and minimum-norm ``lambda``.

Source: RBDL ``ForwardDynamicsConstraints{Direct,RangeSpaceSparse,NullSpace}``,
``ForwardDynamicsContactsKokkevis`` (rbdl.md section 2); Featherstone RBDA chapter 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import raise_kernel_code, vector
from ..crba import crba
from ..rnea import nonlinear_effects
from ..algorithms import NO_FORCES, get_data, link_forces
from ._fast import contact_system, range_space
from ._kinematics import ConstraintKinematics
from ._linalg import zero_tiny_rows
from ._thin import is_thin, solve_compressed
from ._compiled_mixed import compiled_mixed
from .constraint_set import ConstraintSet
from .kkt_direct import solve_kkt
from .kokkevis import solve_kokkevis
from .null_space import solve_null_space
from .range_space_sparse import solve_range_space_sparse
from .system import _gamma, _groups, _jacobian
from .tree_augmented import solve_tree_augmented

if TYPE_CHECKING:
    from ..model import Data, Model
    from .constraint import Constraint

__all__ = ["ConstrainedDynamicsResult", "forward_dynamics_constraints", "METHODS"]

METHODS = ("direct", "range_space_sparse", "null_space", "kokkevis", "tree_augmented")
#: methods with a one-call compiled path for contacts-only sets
COMPILED_METHODS = ("direct", "range_space_sparse", "null_space")
#: methods with a one-call compiled path for mixed sets (loops, contacts, coordinate rows)
MIXED_METHODS = ("direct", "range_space_sparse", "tree_augmented")
# internal switch (tests only): False sends every call to the general Python path
_use_compiled = True
_FD_NAMES = ("q", "v", "tau", "f_ext")


@dataclass
class ConstrainedDynamicsResult:
    """Result of :func:`forward_dynamics_constraints`.

    ``qdd``: joint accelerations; ``multipliers``: per-row constraint forces ``lambda``
    (``H qdd + C = tau + G^T lambda``); ``method``; ``rows``; ``rank``: numerical rank of ``G``
    (``rows`` on the fast path); ``least_squares``: True when redundant rows made a
    minimum-norm least-squares answer necessary; ``constraint_residual``:
    ``max |G qdd - gamma|``; ``converged``: the residual is at round-off level (False means the
    constraints are inconsistent and ``qdd`` is a least-squares compromise).
    """

    qdd: np.ndarray
    multipliers: np.ndarray
    method: str
    rows: int
    rank: int
    least_squares: bool
    constraint_residual: float
    converged: bool
    constraint_set: object = field(default=None, repr=False)

    def group_multipliers(self, group: int | str | Constraint) -> np.ndarray:
        """The multipliers of one group (by group, index or name)."""
        return self.multipliers[self.constraint_set.group(group).rows]


def _check_method(method, allowed):
    if not isinstance(method, str) or method not in allowed:
        raise ValueError(f"method must be one of {allowed}, got {method!r}")


def _residual(G, x, rhs):
    """``max |G x - rhs|`` and whether it is at round-off level."""
    if not G.shape[0]:
        return 0.0, True
    Gx = G @ x
    r = float(np.abs(Gx - rhs).max())
    scale = 1.0 + max(float(np.abs(Gx).max()), float(np.abs(rhs).max()))
    return r, r <= 1e-9 * scale


def _contacts_only(model, cs) -> bool:
    """True when every group is a built-in point contact (the compiled path applies)."""
    return cs._contact_batch is not None and not cs._others and model.compiled.nlinks > 0


def _contact_system(model, cs, q, v, tau, f_ext, d):
    """``G``, ``gamma`` (Baumgarte included), ``H`` and ``tau - C`` of a contacts-only set from
    one compiled call (:func:`sinews.constraints._fast.contact_system`)."""
    c = model.compiled
    b = cs._contact_batch
    n = len(b.rows)
    alpha2 = np.zeros(n)
    for g in cs.groups:
        if g.baumgarte_enabled:  # contacts: phi = 0, phidot = G v
            alpha2[g.rows] = 2.0 * g.baumgarte_coefficients[0]
    F, flag = link_forces(model, d, f_ext)
    G = np.empty((n, c.nv))
    gamma = np.empty(n)
    H = np.zeros((c.nv, c.nv))
    top = np.empty(c.nv)
    code = contact_system(q, v, tau, F, flag, c.mi, c.mf, d.ws, b.link, b.r_link_c, b.point_ptr, b.N_c,
                          alpha2, G, gamma, H, top)
    if code:
        raise_kernel_code(code, ("q", "v", "tau", "f_ext"), model)
    return G, gamma, H, top


def _finite_system(names, *arrays):
    """Raise when a finite input gave a non-finite system (floating-point overflow: inputs of
    extreme magnitude) instead of letting a factorisation fail on it."""
    total = 0.0
    for a in arrays:  # one sum per array: NaN or infinity anywhere (or overflow) makes it non-finite
        total += float(a.sum())
    if not math.isfinite(total):
        raise ValueError(
            f"the constrained system is not finite (floating-point overflow): {', '.join(names)} "
            "too large in magnitude"
        )


def _bind_compiled(model, cs):
    """The compiled contacts path of ``cs`` after binding it to ``model`` if it is an unbound
    :class:`ConstraintSet` (so that its first call takes the same path as the later ones), or
    if another thread bound it to ``model`` since the caller found no compiled path (``bind``
    sets ``_compiled`` before ``model``, under its lock); ``None`` otherwise (the general path
    then checks ``cs`` and diagnoses the system)."""
    bound = getattr(cs, "model", False)
    if bound is None:
        _groups(model, cs, None)
    elif bound is not model:
        return None
    return cs._compiled


_empty = np.empty


def _set_lane(model, lane):
    """Keep the fast lane of the last mixed call in the calling thread's slot of ``model``."""
    tls = getattr(model, "_tls", None)
    if tls is not None:
        tls.fd_lane = lane


def _mixed(model, cs):
    """The compiled mixed path of ``cs`` (bound to ``model`` here if unbound), or ``None``."""
    cached = getattr(cs, "_mixed", None)
    if cached is not None and cached[0] is model and cached[1] == cs.structure_version:
        return cached[2]
    if type(cs) is not ConstraintSet:
        return None
    if cs.model is None:
        _groups(model, cs, None)
    elif cs.model is not model:
        return None  # the general path raises the error
    return compiled_mixed(model, cs)


def mixed_impulses(model, cs, q, qd_minus, target_velocity, data, method):
    """The one-call compiled impulse solve of a mixed set (loops, contacts, coordinate rows;
    ``direct`` and ``range_space_sparse``): ``(qd_plus, impulses, residual, converged)``, or
    ``None`` when the set or the system is not for the compiled path (the caller's general
    path then solves it).  For :func:`sinews.constraints.compute_constraint_impulses`."""
    if not _use_compiled or type(method) is not str or method not in ("direct", "range_space_sparse"):
        return None
    mixed = _mixed(model, cs)
    if mixed is None:
        return None
    return mixed.impulses(q, qd_minus, target_velocity, data, method)


def _solve(model, method, H, G, top, bottom):
    """``H x = top + G^T lambda``, ``G x = bottom`` by ``method`` (not Kokkevis).  Sets with
    many more rows than coordinates are solved on their compressed rows
    (:mod:`sinews.constraints._thin`)."""
    if is_thin(G.shape[0], H.shape[0]):
        return solve_compressed(lambda H, R, t, b: _solve_rows(model, method, H, np.ascontiguousarray(R), t, b),
                                H, G, top, bottom)
    return _solve_rows(model, method, H, G, top, bottom)


def _solve_rows(model, method, H, G, top, bottom):
    if method == "direct":
        return solve_kkt(H, G, top, bottom)
    if method == "null_space":
        return solve_null_space(H, G, top, bottom)
    n = G.shape[0]
    x = np.empty(H.shape[0])
    lam = np.empty(n)
    if n and range_space(H, model.compiled.lam, G, top, bottom, x, lam) == 0:
        return x, lam, {"rank": n, "least_squares": False}
    # not positive definite or redundant: the general path diagnoses it
    return solve_range_space_sparse(model, H, G, top, bottom)


def forward_dynamics_constraints(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, cs: ConstraintSet,
                                 method: str = "direct", f_ext: object = None, data: Data | None = None,
                                 ) -> ConstrainedDynamicsResult:
    """Constrained forward dynamics; see the module docstring for the equations and methods.

    ``q (nq,)``, ``v (nv,)``, ``tau (nv,)``; the result holds ``qdd (nv,)`` and the multipliers
    ``(cs.size,)``.

    ``f_ext``: external wrenches as in :func:`sinews.rnea` (body frame, about the body origin).
    ``cs`` is bound to ``model`` on first use.
    """
    if f_ext is None and _use_compiled:
        # the fast lane of a mixed set (loops, contacts, coordinate rows) called again with the
        # same set, method and workspace: one sealed kernel call (CompiledMixed.lane); any
        # mismatch, exception or non-zero code goes the full way below, which decides as before
        try:
            ln = model._tls.fd_lane
            if (ln[0] is cs and ln[2] is data and ln[1] == method and ln[3] == cs.structure_version
                    and ln[4] == cs.stabilisation_version):
                rows = ln[10]
                x = _empty(ln[9])
                mult = _empty(rows)
                code, res, ok, rank = ln[5](q, v, tau, NO_FORCES, ln[6], ln[7], ln[8], x, mult, 0)
                if code == 0:
                    return ConstrainedDynamicsResult(x, mult, method, rows, rank, rank < rows, res, ok, cs)
        except Exception:
            pass
    if type(method) is str and _use_compiled:
        if method in COMPILED_METHODS:
            fast = getattr(cs, "_compiled", None) or _bind_compiled(model, cs)
            if fast is not None and fast.model is model:
                # bound contacts-only set: one compiled call (sinews.constraints._compiled_contacts)
                out = fast.dynamics(q, v, tau, f_ext, data, method)
                if out is not None:
                    n = fast.rows
                    return ConstrainedDynamicsResult(out[0], out[1], method, n, n, False, out[2], out[3], cs)
                fast = False  # solved by the general path below
        else:
            fast = None
        if fast is None and method in MIXED_METHODS:
            mixed = _mixed(model, cs)
            if mixed is not None:
                # loops, contacts and coordinate rows: one compiled call (_compiled_mixed)
                out = mixed.dynamics(q, v, tau, f_ext, data, method)
                if out is not None:
                    if f_ext is None:
                        _set_lane(model, mixed.lane(cs, data, method))
                    return ConstrainedDynamicsResult(out[0], out[1], method, mixed.rows, out[5], out[4], out[2],
                                                     out[3], cs)
    _check_method(method, METHODS)
    groups, n = _groups(model, cs, None)
    tau = vector(tau, model.nv, "tau")
    if not np.isfinite(tau.sum()):
        raise ValueError("tau contains NaN or infinity")
    if method not in ("kokkevis", "tree_augmented") and _contacts_only(model, cs):
        # compiled path: G and gamma of all contact rows in one kernel call
        d = get_data(model, data)
        q = vector(q, model.nq, "q")
        v = vector(v, model.nv, "v")
        G, gamma, H, top = _contact_system(model, cs, q, v, tau, f_ext, d)
        _finite_system(_FD_NAMES, G, gamma, H, top)
        G = zero_tiny_rows(G)
        qdd, lam, info = _solve(model, method, H, G, top, gamma)
    else:
        kin = ConstraintKinematics(model, q, v, data)
        G = _jacobian(kin, groups, n)
        gamma = _gamma(kin, groups, n)
        _finite_system(_FD_NAMES, G, gamma)
        G = zero_tiny_rows(G)
        if method == "kokkevis":
            qdd, lam, info = solve_kokkevis(model, kin, tau, cs, G, gamma, f_ext, data)
        elif method == "tree_augmented":
            qdd, lam, info = solve_tree_augmented(model, kin, tau, G, gamma, f_ext, data)
        else:
            H = crba(model, kin.q, data)
            top = tau - nonlinear_effects(model, kin.q, kin.v, f_ext, data)
            _finite_system(_FD_NAMES, H, top)
            qdd, lam, info = _solve(model, method, H, G, top, gamma)
    res, ok = _residual(G, qdd, gamma)
    if not (np.isfinite(qdd.sum()) and np.isfinite(lam.sum())):
        raise ValueError(
            f"{method}: the solution is not finite: a singular system, or q, v, tau or f_ext too "
            "large in magnitude (floating-point overflow)"
        )
    return ConstrainedDynamicsResult(qdd, lam, method, n, info["rank"], info["least_squares"], res, ok, cs)
