"""Drake's ConstraintSolver itself (:mod:`sinews.contact.constraint_solver`).

:class:`ConstraintSolver` assembles the LCP of a problem (:mod:`._drake_mlcp`), solves it with
Lemke's method (:mod:`sinews.lcp`), with the lexicographic retry and the regularised fallback,
and maps the solution back to packed constraint forces and to generalized accelerations or
velocity changes.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from .._checks import real_dtype
from ._drake_mlcp import MlcpToLcpData, _accel_layout, _delassus_blocks, _rows, _unpack, _vel_layout
from ._drake_operators import (componentwise_ok, cone_coupling, equilibration, finite,
                               float_vector, guard, integer_arg, min_norm_solve,
                               overflow_error, real_ndarray, rows_scale, step)
from ._drake_problem import AccelProblemData, VelProblemData, _ops
from ._drake_solution import ConstraintSolution, DiscretizedTimeLcp, _frozen

_EPS = float(np.finfo(float).eps)


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
                 drake_compat: bool = False) -> None:
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
