"""API fuzzing (see test_api_fuzz.py): sinews.contact (Drake's constraint solver, Simbody's
impulse solvers, FCLib) and the demos' helpers."""

from __future__ import annotations

import numpy as np
from test_api_fuzz import E, fuzz_tests

from sinews.contact import constraint_solver as cs_mod
from sinews.contact import fclib
from sinews.contact import impulse_solver as imp
from sinews.contact.constraint_solver import (AccelProblemData, ConstraintSolver, MlcpToLcpData,
                                              VelProblemData)
from sinews.demos import fourbar as demo_fourbar
from sinews.demos import pendulum as demo_pendulum
from sinews.demos import slider_crank as demo_slider

SOLVER = ConstraintSolver()
CS = ConstraintSolver  # static methods

# -- Drake: a rod (x, y, theta) with two contacts, a limit and a bilateral row ----------------
MASS = np.diag([2.0, 2.0, 0.5])
N = np.array([[0.0, 1.0, 0.5], [0.0, 1.0, -0.5]])
Q_SLIP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # slip direction of the sliding contact 0
MU_S, MU_NS = 0.3, 0.5
F1 = np.array([[1.0, 0.0, 0.2]])
L1 = np.array([[0.0, 0.0, 1.0]])
G1 = np.array([[1.0, 0.0, 0.0]])


def accel(**changes):
    kw = dict(tau=np.array([1.0, -19.62, 0.3]), solve_inertia=MASS.copy(), N=N.copy(),
              N_minus_mu_Q_T=(N - MU_S * Q_SLIP).T.copy(), kN=np.array([0.1, -0.2]), F=F1.copy(),
              F_T=F1.T.copy(), kF=np.array([0.05]), L=L1.copy(), L_T=L1.T.copy(), kL=np.array([-0.1]),
              G=G1.copy(), G_T=G1.T.copy(), kG=np.array([0.2]), sliding_contacts=np.array([0]),
              non_sliding_contacts=np.array([1]), r=np.array([1]), mu_sliding=np.array([MU_S]),
              mu_non_sliding=np.array([MU_NS]))
    kw.update(changes)
    return kw


FV = np.array([[1.0, 0.0, 0.5], [1.0, 0.0, -0.5]])


def vel(**changes):
    kw = dict(Mv=MASS @ np.array([0.5, -2.0, 0.3]), solve_inertia=MASS.copy(), N=N.copy(), N_T=N.T.copy(),
              kN=np.array([0.01, 0.0]), gammaN=np.array([1e-3, 0.0]), F=FV.copy(), F_T=FV.T.copy(),
              kF=np.array([0.0, 0.01]), gammaF=np.array([0.0, 1e-4]), gammaE=np.array([1e-4, 0.0]),
              L=L1.copy(), L_T=L1.T.copy(), kL=np.array([0.1]), gammaL=np.array([1e-3]), G=G1.copy(),
              G_T=G1.T.copy(), kG=np.array([0.1]), mu=np.array([0.4, 0.6]), r=np.array([1, 1]))
    kw.update(changes)
    return kw


ACCEL_ARGS = ("tau solve_inertia N N_minus_mu_Q_T kN F F_T kF L L_T kL G G_T kG sliding_contacts:index "
              "non_sliding_contacts:index r:index mu_sliding mu_non_sliding")
VEL_ARGS = "Mv solve_inertia N N_T kN gammaN F F_T kF gammaF gammaE L L_T kL gammaL G G_T kG mu r:index"
ACCEL = AccelProblemData(**accel())
VEL = VelProblemData(**vel())
MLCP = MlcpToLcpData.from_problem_data(VEL)
BASE = SOLVER.construct_base_discretized_time_lcp(VEL)
STEP = SOLVER.update_discretized_time_lcp(VEL, BASE, 0.01)
SOL = SOLVER.solve_discretized_time_lcp(VEL, 0.01)


def _scale(*arrays):
    return max([1.0] + [float(np.max(np.abs(a))) for a in arrays if np.size(a)])


def _dense(kw, name):
    return np.atleast_2d(np.asarray(kw[name], float))


def accel_honest(sol, kw):
    """fN >= 0 _|_ N a + kN >= 0, fL >= 0 _|_ L a + kL >= 0, G a + kG = 0 (linear: all = 0)."""
    data = AccelProblemData(**kw)
    a = CS.compute_generalized_acceleration(data, sol.cf)
    Nn, Ll, Gg = _dense(kw, "N"), _dense(kw, "L"), _dense(kw, "G")
    gN, gL, gG = Nn @ a + data.kN, Ll @ a + data.kL, Gg @ a + data.kG
    s = _scale(Nn @ a, data.kN, Ll @ a, data.kL, Gg @ a, data.kG) * _scale(sol.cf)
    if not kw.get("use_complementarity_problem_solver", True):
        err = max(np.max(np.abs(gN)), np.max(np.abs(gL)), np.max(np.abs(gG)))
    else:
        err = max(0.0, -sol.fN.min(), -gN.min(), np.max(np.abs(sol.fN * gN)), -sol.fL.min(), -gL.min(),
                  np.max(np.abs(sol.fL * gL)), np.max(np.abs(gG)))
    return f"the forces violate the constraints by {err:.2g} (scale {s:.2g})" if err > 1e-6 * s else None


def vel_honest(h):
    def honest(sol, kw):
        """v+ = M^-1 (Mv + h J^T f); fN >= 0 _|_ N v+ + kN + gammaN fN >= 0 (L alike);
        G v+ + kG = 0."""
        kw = dict(kw)
        dt = kw.pop("dt", h)
        data = VelProblemData(**kw)
        v_plus = data.inverse_inertia(data.Mv + dt * CS.compute_generalized_force_from_constraint_forces(data, sol.cf))
        Nn, Ll, Gg = _dense(kw, "N"), _dense(kw, "L"), _dense(kw, "G")
        gN = Nn @ v_plus + data.kN + data.gammaN * sol.fN
        gL = Ll @ v_plus + data.kL + data.gammaL * sol.fL
        gG = Gg @ v_plus + data.kG
        s = _scale(Nn @ v_plus, data.kN, Ll @ v_plus, data.kL, Gg @ v_plus, data.kG) * _scale(sol.cf)
        err = max(0.0, -sol.fN.min(), -gN.min(), np.max(np.abs(sol.fN * gN)), -sol.fL.min(), -gL.min(),
                  np.max(np.abs(sol.fL * gL)), np.max(np.abs(gG)))
        return f"the impulses violate the constraints by {err:.2g} (scale {s:.2g})" if err > 1e-6 * s else None

    return honest


def solve_accel(**kw):
    return SOLVER.solve_constraint_problem(AccelProblemData(**kw))


def solve_impact(**kw):
    return SOLVER.solve_impact_problem(VelProblemData(**kw))


def solve_step(dt=0.01, **kw):
    return SOLVER.solve_discretized_time_lcp(VelProblemData(**kw), dt)


def solver_options(regularization_exponents, max_pivots):
    solver = ConstraintSolver(regularization_exponents=regularization_exponents, max_pivots=max_pivots)
    return solver.solve_impact_problem(VEL)


# -- Simbody: eight rows, one record of every kind -------------------------------------------
_X = np.random.default_rng(5).uniform(-0.3, 0.3, (8, 8))
AMAT = _X @ _X.T + np.eye(8)


def records(mults=(0,), normal=1, friction=(2, 3), sign=1, eff_mu=0.5, row=4, lb=-0.2, ub=0.3,
            known_n=1.0):
    return dict(unconditional=[imp.UncondRT(mults)],
                uni_contact=[imp.UniContactRT(normal=normal, friction=friction, sign=sign, eff_mu=eff_mu)],
                uni_speed=[imp.UniSpeedRT(row=5)],
                bounded=[imp.BoundedRT(row=row, lb=lb, ub=ub)],
                cons_ltd_friction=[imp.ConstraintLtdFrictionRT(friction=(6,), normal=(0,), eff_mu=0.3)],
                state_ltd_friction=[imp.StateLtdFrictionRT(friction=(7,), known_n=known_n, eff_mu=0.2)])


def impulse(**changes):
    kw = dict(phase=0, participating=np.arange(8), A=AMAT.copy(), D=np.full(8, 1e-3),
              expanding=np.array([1]), pi_expand=np.full(8, -0.1),
              verr_start=np.array([0.2, -1.0, 0.3, -0.2, 0.5, -0.4, 0.1, 0.2]),
              verr_applied=np.full(8, -0.05), **records())
    kw.update(changes)
    return kw


def impulse_honest(res, kw):
    """verr = verr_start + verr_applied - (A + D)(pi_expand + pi) and the unilateral, ratchet
    and bounded conditions hold."""
    A, D = np.asarray(kw["A"], float), np.asarray(kw["D"], float)
    piE = np.zeros(A.shape[0])
    rows = np.asarray(kw["expanding"], int)
    piE[rows] = np.asarray(kw["pi_expand"], float)[rows]
    verr = np.asarray(kw["verr_start"], float) + np.asarray(kw["verr_applied"], float) - (A + np.diag(D)) @ (piE + res.pi)
    s = _scale(A, kw["verr_start"], kw["verr_applied"]) * _scale(res.pi, piE)
    err = float(np.max(np.abs(verr - res.verr)))
    n = kw["uni_contact"][0].normal
    err = max(err, res.pi[n], -res.verr[n] if res.pi[n] < -1e-12 * s else 0.0, res.pi[5], -res.verr[5] if res.pi[5] < -1e-12 * s else 0.0,
              res.pi[4] - kw["bounded"][0].ub, kw["bounded"][0].lb - res.pi[4])
    tol = 1e-6 * s + 100 * getattr(kw.get("solver"), "convergence_tol", 1e-10)
    return f"the impulses violate the conditions by {err:.2g} (scale {s:.2g})" if err > tol else None


def solve_pgs(**kw):
    return imp.PGSImpulseSolver(convergence_tol=1e-10, max_iters=2000).solve(**kw)


def solve_plus(**kw):
    return imp.PLUSImpulseSolver().solve(**kw)


def solve_records(solver, **fields):
    return solver().solve(**impulse(**records(**fields)))


def bilateral(**kw):
    return dict(participating=np.array([0, 2, 3]), A=AMAT.copy(), D=np.full(8, 1e-3),
                rhs=np.linspace(-1.0, 1.0, 8), **kw)


def bilateral_honest(res, kw):
    A = np.asarray(kw["A"], float) + np.diag(np.asarray(kw["D"], float))
    p = np.asarray(kw["participating"], int)
    err = np.max(np.abs((A @ res.pi)[p] - np.asarray(kw["rhs"], float)[p]), initial=0.0)
    s = _scale(A, kw["rhs"]) * _scale(res.pi)
    return f"P((A + D) pi - rhs) = {err:.2g} (scale {s:.2g})" if err > 1e-6 * s else None


# -- FCLib: two contacts ----------------------------------------------------------------------
_Y = np.random.default_rng(11).uniform(-0.2, 0.2, (6, 6))
W = _Y @ _Y.T + np.eye(6)
QF = np.array([-1.0, 0.3, -0.1, -0.5, -0.2, 0.4])
MU = np.array([0.5, 0.3])
PROBLEM = fclib.FrictionContactProblem(W, QF, MU)


def fc_honest(res, kw):
    problem = kw.get("problem") or fclib.FrictionContactProblem(kw["W"], kw["q"], kw["mu"])
    err = fclib.natural_map_error(problem, res.r)
    u_err = np.max(np.abs(problem.velocity(res.r) - res.u)) / _scale(res.u)
    tol = max(1e-6, 10 * float(kw.get("tol", 1e-8)))  # converged means "within the caller's tol"
    return f"natural-map error {err:.2g}, |u - (W r + q)| {u_err:.2g}" if err > tol or u_err > 1e-9 else None


def fc(**kw):
    return dict(problem=PROBLEM, **{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()})


# -- demos -------------------------------------------------------------------------------------
FOURBAR = demo_fourbar.build_model()
FOURBAR_CS = demo_fourbar.build_constraints(FOURBAR, baumgarte=True)
FQ0, FV0 = demo_fourbar.initial_state(FOURBAR, FOURBAR_CS)
PENDULUM = demo_pendulum.build_model(2)
SLIDER = demo_slider.build_model()
SLIDER_CS = demo_slider.build_constraints(SLIDER)

TABLE = [
    # -- Drake's constraint solver
    E(AccelProblemData, accel, ACCEL_ARGS, call=solve_accel, honest=accel_honest, label="lcp"),
    E(AccelProblemData, lambda: accel(use_complementarity_problem_solver=False), ACCEL_ARGS, call=solve_accel, honest=accel_honest, label="linear"),
    E(VelProblemData, vel, VEL_ARGS, call=solve_impact, honest=vel_honest(1.0), label="impact"),
    # without the explicit transposes (which must match the operators), so that the operators
    # themselves can be corrupted alone
    E(AccelProblemData, lambda: accel(N_minus_mu_Q_T=None, F_T=None, L_T=None, G_T=None), "N F L G", call=solve_accel, honest=accel_honest, label="lcp, no transposes"),
    E(AccelProblemData, lambda: accel(N_minus_mu_Q_T=None, F_T=None, L_T=None, G_T=None, use_complementarity_problem_solver=False), "N F L G", call=solve_accel, honest=accel_honest, label="linear, no transposes"),
    E(VelProblemData, lambda: vel(N_T=None, F_T=None, L_T=None, G_T=None), "N F L G", call=solve_impact, honest=vel_honest(1.0), label="impact, no transposes"),
    E(ConstraintSolver.solve_discretized_time_lcp, lambda: vel(dt=0.01), VEL_ARGS + " dt:scalar", call=solve_step, honest=vel_honest(0.01)),
    E(ConstraintSolver, lambda: dict(regularization_exponents=np.array([-16, 1, 1]), max_pivots=100), "regularization_exponents:index max_pivots:scalar", call=solver_options),
    E(ConstraintSolver.update_discretized_time_lcp, lambda: dict(self=SOLVER, problem_data=VEL, base=BASE, dt=0.01), "dt:scalar"),
    E(ConstraintSolver.populate_packed_constraint_forces_from_lcp_solution, lambda: dict(problem_data=VEL, mlcp_to_lcp=MLCP, zz=SOL.lcp_z.copy(), a=STEP.a.copy(), dt=0.01), "zz a dt:scalar"),
    E(AccelProblemData.inverse_inertia, lambda: dict(self=ACCEL, b=np.array([1.0, 2.0, 3.0])), "b", free_shape=True),
    E(VelProblemData.inverse_inertia, lambda: dict(self=VEL, b=np.eye(3)[:, :2].copy()), "b", free_shape=True),
    E(MlcpToLcpData.projected_inertia_solve, lambda: dict(self=MLCP, X=np.array([1.0, 2.0, 3.0])), "X", free_shape=True),
    E(MlcpToLcpData.saddle_point_solve, lambda: dict(self=MLCP, B=np.array([1.0, 2.0, 3.0, 0.5])), "B", free_shape=True),
    E(CS.compute_generalized_force_from_constraint_forces, lambda: dict(problem_data=ACCEL, cf=np.arange(1.0, 6.0)), "cf"),
    E(CS.compute_generalized_acceleration_from_constraint_forces, lambda: dict(problem_data=VEL, cf=SOL.cf.copy()), "cf"),
    E(CS.compute_generalized_acceleration, lambda: dict(problem_data=VEL, cf=SOL.cf.copy(), v=np.array([0.5, -2.0, 0.3]), dt=0.01), "cf v dt:scalar"),
    E(CS.compute_generalized_acceleration, lambda: dict(problem_data=ACCEL, cf=np.arange(1.0, 6.0)), "cf", label="accel"),
    E(CS.compute_generalized_velocity_change, lambda: dict(problem_data=VEL, cf=SOL.cf.copy()), "cf"),
    E(CS.calc_contact_forces_in_contact_frames, lambda: dict(cf=SOL.cf.copy(), problem_data=VEL, contact_frames=np.array([np.eye(2), [[0.0, -1.0], [1.0, 0.0]]])), "cf contact_frames"),
    E(cs_mod.cfm_erp_from_stiffness_damping, lambda: dict(stiffness=1e4, damping=10.0, dt=1e-3), "stiffness:scalar damping:scalar dt:scalar"),
    E(cs_mod.stiffness_damping_from_cfm_erp, lambda: dict(cfm=1e-2, erp=0.2, dt=1e-3), "cfm:scalar erp:scalar dt:scalar"),
    # -- Simbody's impulse solvers
    E(imp.PGSImpulseSolver.solve, impulse, "participating:index A D expanding:index pi_expand verr_start verr_applied", call=solve_pgs, honest=impulse_honest, label="PGS"),
    E(imp.PLUSImpulseSolver.solve, impulse, "participating:index A D expanding:index pi_expand verr_start verr_applied", call=solve_plus, honest=impulse_honest, label="PLUS", free_shape=True),
    E(imp.ImpulseSolver.solve, lambda: dict(solver=imp.PGSImpulseSolver, mults=np.array([0]), normal=1, friction=np.array([2, 3]), sign=1, eff_mu=0.5, row=4, lb=-0.2, ub=0.3, known_n=1.0),
      "mults:index normal:scalar friction:index sign:scalar eff_mu:scalar row:scalar lb:scalar ub:scalar known_n:scalar", call=solve_records, label="records"),
    E(imp.PGSImpulseSolver.solve_bilateral, lambda: bilateral(self=imp.PGSImpulseSolver(convergence_tol=1e-12, max_iters=5000)), "participating:index A D rhs", honest=bilateral_honest, label="PGS"),
    E(imp.PLUSImpulseSolver.solve_bilateral, lambda: bilateral(self=imp.PLUSImpulseSolver()), "participating:index A D rhs", honest=bilateral_honest, label="PLUS"),
    E(imp.PGSImpulseSolver, lambda: dict(max_rolling_speed=1e-3, convergence_tol=1e-6, max_iters=100, sor=1.2), "max_rolling_speed:scalar convergence_tol:scalar max_iters:scalar sor:scalar",
      call=lambda **kw: imp.PGSImpulseSolver(**kw).solve(**impulse())),
    E(imp.PLUSImpulseSolver, lambda: dict(max_rolling_speed=1e-3, convergence_tol=1e-10, max_iters=50, max_intervals=100), "max_rolling_speed:scalar convergence_tol:scalar max_iters:scalar max_intervals:scalar",
      call=lambda **kw: imp.PLUSImpulseSolver(**kw).solve(**impulse()), free_shape=True),
    # -- FCLib
    E(fclib.FrictionContactProblem, lambda: dict(W=W.copy(), q=QF.copy(), mu=MU.copy()), "W q mu",
      call=lambda **kw: fclib.solve_pgs(fclib.FrictionContactProblem(**kw), max_iter=500), honest=fc_honest),
    E(fclib.FrictionContactProblem.velocity, lambda: dict(self=PROBLEM, r=np.arange(6.0)), "r"),
    E(fclib.natural_map_error, lambda: fc(r=np.arange(6.0)), "r"),
    E(fclib.natural_map_residual, lambda: fc(r=np.arange(6.0)), "r"),
    E(fclib.project_on_cone, lambda: dict(r=np.arange(6.0) - 2.0, mu=MU.copy()), "r mu"),
    E(fclib.solve_pgs, lambda: fc(r0=np.full(6, 0.1), W=W.copy(), tol=1e-8, omega=1.2), "r0 W tol:scalar omega:scalar", honest=fc_honest),
    E(fclib.solve_admm, lambda: fc(r0=np.full(6, 0.1), W=W.copy(), rho=1.0), "r0 W rho:scalar", honest=fc_honest),
    E(fclib.solve, lambda: fc(r0=np.full(6, 0.1), W=W.copy()), "r0 W", honest=fc_honest),
    # -- demos' helpers
    E(demo_pendulum.joint_positions, lambda: dict(model=PENDULUM, q=np.array([0.3, -0.2]), length=1.0), "q length:scalar"),
    E(demo_slider.slider_position, lambda: dict(theta=np.array([0.1, 1.0, 2.0])), "theta", free_shape=True),
    E(demo_slider.initial_state, lambda: dict(model=SLIDER, cs=SLIDER_CS, theta0=1.0, omega0=1.0), "theta0:scalar omega0:scalar"),
    E(demo_fourbar.simulate, lambda: dict(model=FOURBAR, cs=FOURBAR_CS, q0=FQ0.copy(), v0=FV0.copy(), t_end=0.02, dt=0.01), "q0 v0 t_end:scalar dt:scalar", free_shape=True),
    E(demo_fourbar.build_constraints, lambda: dict(model=demo_fourbar.build_model(), baumgarte=True, time_constant=0.05), "time_constant:scalar",
      call=lambda **kw: demo_fourbar.build_constraints(**kw).size),
    E(demo_pendulum.build_model, lambda: dict(n_links=2, length=1.0, mass=1.0), "length:scalar mass:scalar",
      call=lambda **kw: [b.inertia.matrix() for b in demo_pendulum.build_model(**kw).bodies[1:]]),
]

test_api_fuzz_contact = fuzz_tests(TABLE)
