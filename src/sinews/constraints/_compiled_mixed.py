"""The one-call compiled path of mixed constraint sets (loops, contacts, coordinate constraints).

A bound :class:`~sinews.constraints.ConstraintSet` whose groups are all *compilable* gets a
:class:`CompiledMixed` (built on first use, kept on the set until its structure changes):

* :class:`~sinews.constraints.ContactConstraint`: a pair row "world frame / point on the body"
  with axis ``[0; n]`` and no position error;
* :class:`~sinews.constraints.LoopConstraint` (and subclasses that do not override its row
  formulas): a pair row per axis;
* :class:`sinews.loops.LoopJoint` (loops by joint type), read through its ``row_spec()``:
  translation rows along source axes, rotation rows ``phi = sum c (R_s e_i).(R_t e_j)`` whose
  direction moves with both frames, screw rows;
* any other group with a ``compiled_loop_rows()`` method returning a dict (``predecessor``,
  ``successor`` body ids, ``X_predecessor``, ``X_successor`` Transforms, ``axes`` (size, 6) in
  the predecessor frame, ``positional`` (size,) bools) whose rows are LoopConstraint's formulas
  with those axes (``None``: not compilable);
* :class:`~sinews.constraints.CoordinateConstraint`: a coordinate row.

Anything else (custom constraints) makes the set take the general path, unchanged.  The packed data (model topology, the pair frames in their
link frames, the axes, the coordinate indices, the *active links* -- the constraint bodies'
links and their ancestors --, Baumgarte gains, a private tree workspace and the solvers'
scratch) live in one int64 and one float64 array per workspace; one evaluation is one kernel
call: :func:`sinews.constraints._mixed_kernels.mixed_range_space` (``range_space_sparse`` and
``direct``, the KKT system by block elimination as on the contacts path) or
:func:`sinews.constraints._ta_kernels.tree_augmented` (``tree_augmented``).

Redundant rows: rows of ``G`` that are zero up to rounding (the test of
:func:`sinews.constraints._linalg.zero_tiny_rows`, per call) -- the three out-of-plane rows of
a planar mechanism closed by a ``pin`` loop joint, a point on the axis of the only joint
between the bodies -- are solved in the kernel: the reduced system of the other rows by
Cholesky, multiplier 0 on the zero rows.  That is the minimum-norm least-squares answer of the
general path (a zero row of ``G`` is a zero row and column of ``G M^-1 G^T``), reported the same
way (``least_squares=True``, ``rank`` = the other rows); the residual covers every row (a zero
row whose right-hand side is not zero is reported, as on the general path).  Genuinely
dependent non-zero rows (the same loop twice) fail the reduced Cholesky: ``direct`` and
``range_space_sparse`` then return ``None`` from :meth:`CompiledMixed.dynamics` (the general
path solves and flags them, as it does for a singular ``H`` or ``D``), and TA solves its
minimum-norm least squares on the reduced ``Lambda`` here (flagged) with a second kernel call
for the correction sweep.  Impulses with zero rows take the general path (the impulse result
carries no rank).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from .. import _layout as LY
from .._checks import NOT_FINITE, finite_vector, raise_kernel_code
from ..algorithms import NO_FORCES, link_forces
from ..model import Data
from . import _mixed_kernels as MK
from . import _ta_kernels as TK
from ._compiled_contacts import CompiledContacts, _checked_call, _offsets, _sealed
from ._linalg import solve_psd
from ._thin import is_thin
from .constraint import ContactConstraint, LoopConstraint

__all__ = ["CompiledMixed", "compiled_mixed", "baumgarte_gains"]

_LOCK = threading.RLock()


def baumgarte_gains(g) -> tuple[float, float]:
    """``(stiffness K, damping D)`` of a group with Baumgarte enabled: the stabilised equation
    is ``G qdd = gamma - D phidot - K phi``.  Read from ``g.baumgarte_gains`` when the group has
    it, else from the time-constant form ``(beta^2, 2 alpha)``; ``(0, 0)`` when disabled."""
    if not g.baumgarte_enabled:
        return 0.0, 0.0
    gains = getattr(g, "baumgarte_gains", None)
    if gains is not None:
        k, d = gains
        return float(k), float(d)
    alpha, beta = g.baumgarte_coefficients
    return beta * beta, 2.0 * alpha


def _loop_rows(g):
    """The pair description of a loop-like group, or None if it is not compilable."""
    if isinstance(g, LoopConstraint):
        cls = type(g)
        if all(getattr(cls, m) is getattr(LoopConstraint, m)
               for m in ("jacobian", "gamma", "position_error", "velocity_error")):
            return {"predecessor": g._pred, "successor": g._succ, "X_predecessor": g.X_predecessor,
                    "X_successor": g.X_successor, "axes": g.axis_matrix, "kinds": np.ones(g.size)}
    fn = getattr(g, "compiled_loop_rows", None)
    if callable(fn):
        return fn()
    return None


def _cut_joint_rows(g):
    """The pair description of a cut-joint loop (:class:`sinews.loops.LoopJoint`, read through
    its ``row_spec()``: translation rows along source axes, rotation rows ``sum c a_i.b_j``,
    screw rows), or None."""
    spec = getattr(g, "row_spec", None)
    if not callable(spec) or getattr(g, "_src", None) is None:
        return None
    rows = spec()
    axes = np.zeros((len(rows), 6))
    kinds = np.zeros(len(rows))
    for r, (kind, data) in enumerate(rows):
        if kind == "T":
            axes[r, 3 + int(data)] = 1.0
            kinds[r] = 1.0
        elif kind == "R":
            terms = tuple(data)
            if len(terms) > 2:
                return None
            for t, (c, i, j) in enumerate(terms):
                axes[r, 3 * t : 3 * t + 3] = (float(c), int(i), int(j))
            kinds[r] = 2.0
        elif kind == "S":
            axes[r] = (0.0, 0.0, -float(data), 0.0, 0.0, 1.0)
            kinds[r] = 3.0
        else:
            return None
    return {"predecessor": g._src, "successor": g._tgt, "X_predecessor": g.X_source, "X_successor": g.X_target,
            "axes": axes, "kinds": kinds}


def _coordinate(g):
    from .coordinate import CoordinateConstraint

    if type(g) is CoordinateConstraint:
        return g._iv, g._kv, g._iq, g._kq, g.ratio, g.offset
    return None


class CompiledMixed:
    """Packed data of the compiled mixed path of one bound set (see the module docstring)."""

    def __init__(self, model, cs, pairs, coords):
        c = model.compiled
        self.model = model
        self.cs = cs
        self.nq, self.nv = c.nq, c.nv
        nl, nv = c.nlinks, c.nv
        # pairs: (kP, X_link_P, kS, X_link_S, axes, positional, set rows, group)
        npair = len(pairs)
        npr = sum(len(p[6]) for p in pairs)
        ncr = len(coords)
        n = npr + ncr
        self.rows = n
        kP = np.array([p[0] for p in pairs], dtype=np.int64)
        kS = np.array([p[2] for p in pairs], dtype=np.int64)
        pptr = np.concatenate([[0], np.cumsum([len(p[6]) for p in pairs])]).astype(np.int64)
        setrow = np.array([r for p in pairs for r in p[6]] + [cc[6] for cc in coords], dtype=np.int64)
        cidx = np.array([cc[:4] for cc in coords], dtype=np.int64).reshape(-1)
        crat = np.array([cc[4:6] for cc in coords], dtype=float).reshape(-1)
        # active links: the constraint links and all their ancestors, topological order
        mark = np.zeros(nl, bool)
        starts = [k for p in pairs for k in (p[0], p[2]) if k >= 0]
        starts += [int(c.link_of_dof[cc[0]]) for cc in coords] + [int(c.link_of_dof[cc[1]]) for cc in coords]
        for k in starts:
            while k >= 0 and not mark[k]:
                mark[k] = True
                k = int(c.mi[k, LY.MI_PARENT])
        act = np.flatnonzero(mark).astype(np.int64)
        self.active_links = act
        pf = np.concatenate([np.concatenate([p[1].R.reshape(-1), p[1].p, p[3].R.reshape(-1), p[3].p]) for p in pairs]) \
            if pairs else np.zeros(0)
        T = np.concatenate([p[4] for p in pairs]).reshape(-1) if pairs else np.zeros(0)
        pos = np.concatenate([np.asarray(p[5], float) for p in pairs]) if pairs else np.zeros(0)
        self._groups_rows = [(p[7], p[8]) for p in pairs] + [(cc[7], cc[8]) for cc in coords]
        ws0 = Data(model).ws
        int_parts = [c.mi.reshape(-1), c.lam, kP, kS, pptr, setrow, cidx, act]
        float_parts = [pf, T, pos, np.zeros(n), np.zeros(n), crat, ws0,
                       np.zeros(npair * MK.PE_STRIDE), np.zeros(nv * nv), np.zeros(nv), np.zeros(nv),
                       np.zeros(n * nv), np.zeros(n), np.zeros(n * n), np.zeros(n), np.zeros(12 * npr),
                       np.zeros(6 * nl), np.zeros(6 * nl), np.zeros(nv), np.zeros(nv), np.zeros(n), np.zeros(n * nv), np.zeros(n * nl * 6), np.zeros(n * nv), np.zeros(n)]
        head = np.zeros(MK.Q_HEADER, dtype=np.int64)
        head[[MK.Q_NQ, MK.Q_NL, MK.Q_NV, MK.Q_NPAIR, MK.Q_NPR, MK.Q_NCR, MK.Q_NACT]] = (
            c.nq, nl, nv, npair, npr, ncr, len(act))
        head[[MK.Q_MI, MK.Q_LAM, MK.Q_KP, MK.Q_KS, MK.Q_PPTR, MK.Q_SETROW, MK.Q_CIDX, MK.Q_ACT]] = _offsets(
            int_parts, MK.Q_HEADER)
        head[[MK.Q_PF, MK.Q_T, MK.Q_POS, MK.Q_KB, MK.Q_DB, MK.Q_CRAT, MK.Q_WS, MK.Q_PE, MK.Q_H, MK.Q_C, MK.Q_ZERO,
              MK.Q_G, MK.Q_BOT, MK.Q_LAM_M, MK.Q_RHS, MK.Q_E, MK.Q_PA, MK.Q_AC, MK.Q_UU, MK.Q_QD, MK.Q_ML, MK.Q_W, MK.Q_PAN, MK.Q_EPS, MK.Q_RC]] = _offsets(
            float_parts, 0)
        head[MK.Q_NWS] = ws0.size
        self.pi = np.concatenate([head] + [np.asarray(p, dtype=np.int64).reshape(-1) for p in int_parts])
        self.mf = c.mf
        self._template = np.concatenate(float_parts)
        self._kb = slice(head[MK.Q_KB], head[MK.Q_KB] + n)
        self._db = slice(head[MK.Q_DB], head[MK.Q_DB] + n)
        self._lam_m = slice(head[MK.Q_LAM_M], head[MK.Q_LAM_M] + n * n)
        self._setrow = setrow
        self._bot = slice(head[MK.Q_BOT], head[MK.Q_BOT] + n)
        self._rhs = slice(head[MK.Q_RHS], head[MK.Q_RHS] + n)
        self._ml = slice(head[MK.Q_ML], head[MK.Q_ML] + n)
        self._rc = slice(head[MK.Q_RC], head[MK.Q_RC] + n)
        self._scratch = weakref.WeakKeyDictionary()
        self._last = (None, None)

    # ------------------------------------------------------------------ per workspace
    def _scratch_for(self, data):
        s = self._scratch.get(data)
        if s is None:
            s = [self._template.copy(), -1]
            self._scratch[data] = s
        self._last = (data, s)
        return s

    def _gains(self, s):
        """Refill the per-row Baumgarte gains (packed row order) of a scratch."""
        kb = s[0][self._kb]
        db = s[0][self._db]
        r = 0
        for g, size in self._groups_rows:
            k, d = baumgarte_gains(g)
            kb[r : r + size] = k
            db[r : r + size] = d
            r += size
        s[1] = self.cs.stabilisation_version

    def lane(self, cs, data, method):
        """The fast lane of :func:`sinews.constraints.forward_dynamics_constraints` for this set,
        ``data`` (``None``: the calling thread's default workspace) and ``method`` without
        ``f_ext``: ``(cs, method, data, structure_version, stabilisation_version, kernel, pi, mf,
        scratch, nv, rows)``, or ``None`` while the kernel is not yet compiled and sealed.  The
        caller keeps it in ``model._tls`` (one per thread) and uses it while the set's versions
        and the arguments match; everything else takes :meth:`dynamics`."""
        kern = _kernel(method)
        if kern not in _sealed:
            return None
        s = self._scratch_of(data)
        if s[1] != self.cs.stabilisation_version:
            self._gains(s)
        return (cs, method, data, cs.structure_version, s[1], kern, self.pi, self.mf, s[0], self.nv, self.rows)

    def _scratch_of(self, data):
        """The scratch of workspace ``data`` (``None``: the calling thread's default one), checked
        to be a workspace of this model; the last one used is kept at hand."""
        d = self.model.default_data if data is None else data
        last = self._last
        if d is last[0]:
            return last[1]
        if not isinstance(d, Data) or d.model is not self.model:
            raise ValueError("data must be a sinews.Data created for this model (model.data())")
        return self._scratch_for(d)

    def dynamics(self, q, v, tau, f_ext, data, method):
        """``(qdd, multipliers, residual, converged, least_squares, rank)`` or ``None`` (the
        general path then solves and diagnoses the system)."""
        kern = _kernel(method)
        s = self._scratch_of(data)
        if f_ext is None:
            fext, flags = NO_FORCES, 0
        else:
            fext, flags = link_forces(self.model, self.model.default_data if data is None else data, f_ext)
        if s[1] != self.cs.stabilisation_version:
            self._gains(s)
        x = np.empty(self.nv)
        mult = np.empty(self.rows)
        ps = s[0]
        try:
            if kern not in _sealed:
                raise TypeError("first call")
            code, res, ok, rank = kern(q, v, tau, fext, self.pi, self.mf, ps, x, mult, flags)
        except TypeError:
            code, res, ok, rank = _checked_call(kern, q, v, tau, fext, self.pi, self.mf, ps, x, mult, flags, self.nq,
                                                self.nv, ("q", "v", "tau"))
        if code == 0:
            # rank < rows: zero rows of G solved in the kernel (multiplier 0, minimum norm)
            return x, mult, res, ok, rank < self.rows, rank
        if code < 0:
            if code == NOT_FINITE:
                raise_kernel_code(code, ("q", "v", "tau", "f_ext"), self.model)
            return CompiledContacts._failed(self, code, q, v, tau, ("q", "v", "tau"))
        if code == 2 and kern is TK.tree_augmented:
            # redundant non-zero rows: minimum-norm least squares on the kept rows (``rank`` of
            # them: Lambda's strict upper triangle in LAM_M, its diagonal in the BOT region, the
            # right-hand side in RC), then the correction sweep, which spreads the multipliers
            nk = rank
            U = np.triu(ps[self._lam_m].reshape(self.rows, self.rows)[:nk, :nk], 1)
            Lm = U + U.T + np.diag(ps[self._bot][:nk])
            ml, full, rank = solve_psd(Lm, ps[self._rc][:nk].copy())
            if not np.isfinite(ml).all():
                return None
            ps[self._ml.start : self._ml.start + nk] = ml
            q = np.ascontiguousarray(q, dtype=float)
            v = np.ascontiguousarray(v, dtype=float)
            res, ok = TK.ta_correct(q, v, self.pi, self.mf, ps, x, mult, np.int64(nk))
            if not np.isfinite(x).all():
                return None
            return x, mult, res, ok, not full or nk < self.rows, rank
        return None


    def impulses(self, q, qd_minus, target, data, method="range_space_sparse"):
        """Impulses (``range_space_sparse`` or ``direct``): ``(qd_plus, impulses, residual,
        converged, rank)`` with ``G qd_plus = target`` (``None``: zero; rows of ``G`` that are
        zero up to rounding get impulse 0 and are not counted in ``rank``), or ``None`` when the
        system is singular or has dependent non-zero rows (the general path then solves and
        diagnoses it)."""
        ps = self._scratch_of(data)[0]
        flags = MK.F_IMPULSE
        if target is None:
            flags |= MK.F_ZERO_TARGET
        else:
            ps[self._bot] = finite_vector(target, self.rows, "target_velocity")[self._setrow]
        x = np.empty(self.nv)
        mult = np.empty(self.rows)
        kern = MK.mixed_range_space
        try:
            if kern not in _sealed:
                raise TypeError("first call")
            code, res, ok, rank = kern(q, qd_minus, qd_minus, NO_FORCES, self.pi, self.mf, ps, x, mult, flags)
        except TypeError:
            code, res, ok, rank = _checked_call(kern, q, qd_minus, qd_minus, NO_FORCES, self.pi, self.mf, ps, x,
                                                mult, flags, self.nq, self.nv, ("q", "qd_minus", "qd_minus"))
        if code < 0:
            return CompiledContacts._failed(self, code, q, qd_minus, qd_minus, ("q", "qd_minus", "qd_minus"))
        if code:
            return None
        return x, mult, res, ok, int(rank)


def _kernel(method):
    """The kernel of a compiled method (``tree_augmented``, else the range-space/KKT one)."""
    return TK.tree_augmented if method == "tree_augmented" else MK.mixed_range_space


def compiled_mixed(model, cs):
    """The :class:`CompiledMixed` of a bound set, built on first use; ``None`` when a group is
    not compilable (or the model has no moving link)."""
    version = getattr(cs, "structure_version", 0)
    cached = getattr(cs, "_mixed", None)
    if cached is not None and cached[0] is model and cached[1] == version:
        return cached[2]
    with _LOCK:
        built = _build(model, cs)
        cs._mixed = (model, version, built)
    return built


def _build(model, cs):
    c = model.compiled
    if c.nlinks == 0 or is_thin(cs.size, c.nv):
        return None  # (thin sets: solved on compressed rows by the general path)
    lob = c.link_of_body
    Xlb = c._X_link_body
    pairs, coords = [], []
    for g in cs.groups:
        rows = list(range(g.row_start, g.row_start + g.size))
        if type(g) is ContactConstraint:
            from ..spatial import Transform

            b = g._body_id
            k = int(lob[b])
            XS = Xlb[b] @ Transform(np.eye(3), g.body_point)
            axes = np.hstack([np.zeros((g.size, 3)), g.normal_matrix])
            pairs.append((-1, Transform.identity(), k, XS, axes, np.zeros(g.size), rows, g, g.size))
            continue
        lr = _cut_joint_rows(g) if type(g).__name__ == "LoopJoint" else _loop_rows(g)
        if lr is not None:
            bp, bs = int(lr["predecessor"]), int(lr["successor"])
            axes = np.asarray(lr["axes"], float).reshape(-1, 6)
            kinds = lr["kinds"] if "kinds" in lr else np.asarray(lr["positional"], bool).reshape(-1).astype(float)
            if axes.shape[0] != g.size or kinds.shape[0] != g.size:
                return None
            pairs.append((int(lob[bp]), Xlb[bp] @ lr["X_predecessor"], int(lob[bs]), Xlb[bs] @ lr["X_successor"],
                          axes, kinds, rows, g, g.size))
            continue
        co = _coordinate(g)
        if co is not None:
            coords.append((*co, rows[0], g, 1))
            continue
        return None
    return CompiledMixed(model, cs, pairs, coords)
