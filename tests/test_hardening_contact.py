"""Regression tests of the hardening of sinews.contact (Drake's constraint solver, Simbody's impulse
solvers) and of the demos' helpers: bad input gets a ValueError naming the argument, extreme data
gets a finite answer or a ValueError, ``converged`` is honest.  The generic cases are also covered
by the API fuzz suite (tests/test_api_fuzz_contact.py); these pin down the specific fixes."""

from __future__ import annotations

import numpy as np
import pytest

from sinews.contact import impulse_solver as imp
from sinews.contact.constraint_solver import (AccelProblemData, ConstraintSolver, MlcpToLcpData,
                                              VelProblemData, cfm_erp_from_stiffness_damping,
                                              stiffness_damping_from_cfm_erp)
from sinews.demos import fourbar, pendulum, slider_crank

SOLVER = ConstraintSolver()
MASS = np.diag([2.0, 2.0, 0.5])
N = np.array([[0.0, 1.0, 0.5], [0.0, 1.0, -0.5]])
F = np.array([[1.0, 0.0, 0.5], [1.0, 0.0, -0.5]])


def vel(**changes):
    """Two frictional contacts, a limit and a bilateral row on a planar rod (x, y, theta)."""
    kw = dict(Mv=MASS @ np.array([0.5, -2.0, 0.3]), solve_inertia=MASS, N=N, kN=[0.01, 0.0],
              F=F, kF=[0.0, 0.01], L=[[0.0, 0.0, 1.0]], kL=[0.1], G=[[1.0, 0.0, 0.0]], kG=[0.1],
              mu=[0.4, 0.6], r=[1, 1])
    kw.update(changes)
    return VelProblemData(**kw)


def accel(**changes):
    kw = dict(tau=[1.0, -19.62, 0.3], solve_inertia=MASS, N=N, kN=[0.1, -0.2], F=F[1:],
              sliding_contacts=[0], non_sliding_contacts=[1], r=[1], mu_sliding=[0.3],
              mu_non_sliding=[0.5])
    kw.update(changes)
    return AccelProblemData(**kw)


# ------------------------------------------------------------------------------------------------
# Drake: the dtype rule, shapes, scalars
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [
    ("Mv", np.array([1.0, 2.0, 3.0], dtype=complex)),
    ("Mv", np.array(["1", "2", "3"])),
    ("N", N.astype(bool)),
    ("N", N.astype(object)),
    ("kN", np.zeros(2, dtype="timedelta64[s]")),
    ("mu", np.array([0.4, 0.6], dtype=object)),
    ("r", np.array([True, True])),
    ("r", np.array([1.5, 1.0])),
    ("r", np.array([1, 2**40])),
    ("solve_inertia", MASS.astype(complex)),
    ("G", [[1.0, 0.0], [0.0]]),  # ragged
])
def test_vel_problem_data_refuses_bad_arrays_naming_them(field, value):
    with pytest.raises(ValueError, match=rf"\b{field}\b"):
        vel(**{field: value})


def test_sizes_derived_from_another_argument_name_it():
    with pytest.raises(ValueError, match=r"nl = len\(kL\)"):
        vel(kL=[0.1, 0.2])
    with pytest.raises(ValueError, match=r"nv = len\(Mv\)"):
        vel(Mv=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"len\(non_sliding_contacts\)"):
        accel(non_sliding_contacts=[], sliding_contacts=[0, 1], mu_sliding=[0.3, 0.3])
    with pytest.raises(ValueError, match=r"nr = sum\(r\)"):
        vel(r=[1, 2])


def test_explicit_transposes_must_be_transposes():
    with pytest.raises(ValueError, match="F_T must be the transpose of F"):
        vel(F_T=F.T * 2.0)
    vel(F_T=F.T.copy())  # an exact transpose is fine


def test_scalar_arguments_follow_the_dtype_rule():
    data = vel()
    for dt in (np.float64(0.01), np.array(0.01), 1):
        SOLVER.solve_discretized_time_lcp(data, dt)
    for dt in ("0.01", 0.01 + 0j, True, np.nan, np.array([0.01]), 0.0):
        with pytest.raises(ValueError, match=r"\bdt\b"):
            SOLVER.solve_discretized_time_lcp(data, dt)
    with pytest.raises(ValueError, match="stiffness"):
        cfm_erp_from_stiffness_damping("1e4", 1.0, 1e-3)
    with pytest.raises(ValueError, match="overflows"):  # was a ZeroDivisionError
        stiffness_damping_from_cfm_erp(1e-2, 0.2, 5e-324)
    ConstraintSolver(max_pivots=np.array(100), regularization_exponents=np.array([-16, 1, 1]))
    with pytest.raises(ValueError, match="max_pivots"):
        ConstraintSolver(max_pivots=np.inf)
    with pytest.raises(ValueError, match="regularization_exponents"):
        ConstraintSolver(regularization_exponents=(np.nan, 1, 1))
    with pytest.raises(ValueError, match="regularization_exponents"):
        ConstraintSolver(regularization_exponents=np.array([-16, 1, 1], dtype=object))


def test_public_solves_name_their_own_argument():
    data = vel()
    with pytest.raises(ValueError, match=r"\bb\b"):
        data.inverse_inertia([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\bb\b"):
        data.inverse_inertia([1.0, np.nan, 2.0])
    mlcp = MlcpToLcpData.from_problem_data(data)
    with pytest.raises(ValueError, match=r"\bX\b"):
        mlcp.projected_inertia_solve(np.array([1.0, 2.0, 3.0], dtype=complex))
    with pytest.raises(ValueError, match=r"\bB\b"):
        mlcp.saddle_point_solve([1.0, 2.0, 3.0])  # nv + nb = 4
    with pytest.raises(ValueError, match="contact_frames"):
        ConstraintSolver.calc_contact_forces_in_contact_frames(
            np.zeros(6), data, np.array([np.eye(2)] * 2, dtype=object))


# ------------------------------------------------------------------------------------------------
# Drake: extreme magnitudes and honest convergence
# ------------------------------------------------------------------------------------------------
def test_overflow_is_a_value_error_naming_the_large_input():
    with pytest.raises(ValueError, match=r"not finite.*\bN\b"):
        SOLVER.solve_impact_problem(vel(N=N * 1e200))
    with pytest.raises(ValueError, match=r"not finite.*\bMv\b"):
        SOLVER.solve_impact_problem(vel(Mv=[1e308, 1e308, 1e308]))
    with pytest.raises(ValueError, match=r"not finite.*\bcf\b"):
        ConstraintSolver.compute_generalized_velocity_change(vel(), np.full(6, 1e308))


def _impact_violation(data, sol):
    """Largest violation of fN >= 0 _|_ N v+ + kN >= 0 and G v+ + kG = 0 (relative)."""
    v = data.inverse_inertia(data.Mv + ConstraintSolver.compute_generalized_force_from_constraint_forces(data, sol.cf))
    g = N @ v + data.kN
    scale = 1.0 + np.max(np.abs(N @ v)) + np.max(np.abs(sol.cf))
    return max(0.0, -sol.fN.min(), -g.min(), np.max(np.abs(sol.fN * g)),
               abs(v[0] + data.kG[0])) / scale


@pytest.mark.parametrize("changes", [
    dict(kF=[0.0, 1e300]),  # was converged=True with both contacts penetrating
    dict(mu=[0.4e150, 0.6e150]),
    dict(gammaN=[1e300, 0.0]),
    dict(F=F * 1e150),
])
def test_badly_scaled_impacts_are_never_falsely_converged(changes):
    data = vel(**changes)
    sol = SOLVER.solve_impact_problem(data)
    assert np.all(np.isfinite(sol.cf))
    if sol.converged:
        assert _impact_violation(data, sol) < 1e-6


def test_a_contact_row_in_other_units_gives_the_same_impulses():
    """Row 0 of N and kN and mu[0] multiplied by s (its normal impulse divided by s): the physics
    is unchanged; the equilibrated LCP solves it (plain Lemke loses the other rows)."""
    ref = SOLVER.solve_impact_problem(vel())
    assert ref.converged
    for s in (1e3, 1e9, 1e12):
        Ns, kN = N.copy(), np.array([0.01, 0.0])
        Ns[0] *= s
        kN[0] *= s
        sol = SOLVER.solve_impact_problem(vel(N=Ns, kN=kN, mu=[0.4 * s, 0.6]))
        assert sol.converged, (s, sol.status)
        cf = sol.cf.copy()
        cf[0] *= s
        np.testing.assert_allclose(cf, ref.cf, rtol=1e-7, atol=1e-9)


def test_linear_system_path_is_not_falsely_converged():
    # G_T inconsistent with G used to give converged=True with N a + kN = -9
    with pytest.raises(ValueError, match="G_T must be the transpose of G"):
        accel(G=[[1.0, 0.0, 0.0]], kG=[0.2], G_T=[[1.0], [0.0], [1e300]],
              use_complementarity_problem_solver=False)


# ------------------------------------------------------------------------------------------------
# Simbody: PLUS keeps bounded rows and known-normal friction within their limits over intervals
# ------------------------------------------------------------------------------------------------
_X = np.random.default_rng(5).uniform(-0.3, 0.3, (8, 8))
A8 = _X @ _X.T + np.eye(8)


def _impulse_problem(lb=-0.2, ub=0.3, known_n=1.0):
    return dict(phase=0, participating=np.arange(8), A=A8, D=np.full(8, 1e-3),
                expanding=np.array([1]), pi_expand=np.full(8, -0.1),
                verr_start=np.array([0.2, -1.0, 0.3, -0.2, 0.5, -0.4, 0.1, 0.2]),
                verr_applied=np.full(8, -0.05),
                unconditional=[imp.UncondRT([0])],
                uni_contact=[imp.UniContactRT(normal=1, friction=(2, 3), eff_mu=0.5)],
                uni_speed=[imp.UniSpeedRT(row=5)], bounded=[imp.BoundedRT(row=4, lb=lb, ub=ub)],
                cons_ltd_friction=[imp.ConstraintLtdFrictionRT(friction=(6,), normal=(0,), eff_mu=0.3)],
                state_ltd_friction=[imp.StateLtdFrictionRT(friction=(7,), known_n=known_n, eff_mu=0.2)])


def test_plus_keeps_a_bounded_row_within_its_bounds_over_several_intervals():
    """A sliding contact cuts the impact into intervals; each solved the rest of the impact with
    the full bounds, so the committed total ended at 0.373 > ub = 0.3 (with converged=True)."""
    res = imp.PLUSImpulseSolver().solve(**_impulse_problem())
    assert res.converged and res.intervals > 1
    assert -0.2 - 1e-12 <= res.pi[4] <= 0.3 + 1e-12
    ref = imp.PGSImpulseSolver(convergence_tol=1e-12, max_iters=5000).solve(**_impulse_problem())
    np.testing.assert_allclose(res.pi, ref.pi, atol=1e-6)


def test_plus_keeps_known_normal_friction_within_its_disk_over_several_intervals():
    problem = _impulse_problem(known_n=0.05)
    res = imp.PLUSImpulseSolver().solve(**problem)
    assert res.intervals > 1
    assert abs(res.pi[7]) <= 0.2 * 0.05 * (1 + 1e-9)
    ref = imp.PGSImpulseSolver(convergence_tol=1e-12, max_iters=5000).solve(**_impulse_problem(known_n=0.05))
    np.testing.assert_allclose(res.pi, ref.pi, atol=1e-6)


# ------------------------------------------------------------------------------------------------
# Simbody: input checks and extreme magnitudes
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [imp.PGSImpulseSolver, imp.PLUSImpulseSolver])
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_extreme_velocity_scales_are_solved_in_scaled_units(cls, scale):
    """Velocities of 1e300 overflowed the sums of squares (residual inf); 1e-300 underflowed."""
    base = _impulse_problem()
    kw = dict(max_iters=5000) if cls is imp.PGSImpulseSolver else {}
    ref = cls(convergence_tol=1e-10, **kw).solve(**base)  # PGS's tolerance is absolute: scaled too
    p = _impulse_problem(lb=-0.2 * scale, ub=0.3 * scale, known_n=scale)
    for key in ("verr_start", "verr_applied", "pi_expand"):
        p[key] = p[key] * scale
    tol = 1e-10 * scale if cls is imp.PGSImpulseSolver else 1e-10
    res = cls(convergence_tol=tol, **kw).solve(**p)
    assert np.isfinite(res.residual) and res.converged and ref.converged
    np.testing.assert_allclose(res.pi / scale, ref.pi, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("cls", [imp.PGSImpulseSolver, imp.PLUSImpulseSolver])
def test_an_overflowing_right_hand_side_is_a_value_error(cls):
    p = _impulse_problem()
    p["pi_expand"] = np.full(8, 1.7e308)  # (A + D) pi_expand overflows (was a ZeroDivisionError)
    with pytest.raises(ValueError, match=r"not finite.*pi_expand"):
        cls().solve(**p)
    p = _impulse_problem()
    p["verr_start"] = np.full(8, 1e300)
    res = cls(convergence_tol=1e290).solve(**p) if cls is imp.PGSImpulseSolver else cls().solve(**p)
    assert np.all(np.isfinite(res.pi)) and np.isfinite(res.residual)
    assert all(np.isfinite(c.slip_mag) for c in p["uni_contact"])  # was inf (norm overflow)


def test_records_and_settings_are_checked():
    s = imp.PGSImpulseSolver()
    cases = [
        (dict(uni_contact=[imp.UniContactRT(normal=1, friction=(2, 3), sign=1 + 0j, eff_mu=0.5)]), r"\.sign"),
        (dict(uni_contact=[imp.UniContactRT(normal=np.array([1, 2]), friction=(2, 3))]), r"\.normal must be a single"),
        (dict(unconditional=[imp.UncondRT([])]), r"\.mults must list"),
        (dict(unconditional=[imp.UncondRT([0, 1])]), r"also to unconditional\[0\]\.mults"),
        (dict(participating=np.ones(8, dtype=bool)), "participating"),
        (dict(bounded=[imp.BoundedRT(row=4, lb="-0.2", ub=0.3)]), r"\.lb"),
        (dict(state_ltd_friction=[imp.StateLtdFrictionRT(friction=(7,), known_n=np.nan)]), r"\.known_n"),
        (dict(A=[[1.0] * 8] * 7 + [[1.0] * 7]), r"\bA\b"),
        (dict(phase=np.nan), "phase"),
    ]
    for changes, match in cases:
        p = _impulse_problem()
        p.update(changes)
        with pytest.raises(ValueError, match=match):
            s.solve(**p)
    p = _impulse_problem()
    del p["unconditional"]
    with pytest.raises(ValueError, match="not described by any record .*mults"):
        s.solve(**p)
    for kwargs, match in [(dict(max_iters=1e300), "max_iters"), (dict(max_iters=np.nan), "max_iters"),
                          (dict(sor="1.2"), "sor"), (dict(convergence_tol=np.array([1e-6])), "convergence_tol")]:
        with pytest.raises(ValueError, match=match):
            imp.PGSImpulseSolver(**kwargs)
    with pytest.raises(ValueError, match="max_intervals"):
        imp.PLUSImpulseSolver(max_intervals=np.inf)
    imp.PGSImpulseSolver(max_iters=np.array(50), convergence_tol=np.float32(1e-6))


# ------------------------------------------------------------------------------------------------
# Demos' helpers
# ------------------------------------------------------------------------------------------------
def test_demo_helpers_check_their_arguments():
    model = fourbar.build_model()
    cs = fourbar.build_constraints(model, baumgarte=True)
    q0, v0 = fourbar.initial_state(model, cs)
    for kwargs, match in [(dict(dt=0.0), r"\bdt\b"), (dict(dt=5e-324), r"t_end / dt"),
                          (dict(t_end=np.inf), "t_end"), (dict(q0=q0[:2]), "q0"),
                          (dict(v0=v0.astype(complex)), "v0"), (dict(v0=v0 * 1e300), "v0")]:
        args = dict(model=model, cs=cs, q0=q0, v0=v0, t_end=0.02, dt=0.01)
        args.update(kwargs)
        with pytest.raises(ValueError, match=match):
            fourbar.simulate(**args)
    with pytest.raises(ValueError, match="time_constant"):
        fourbar.build_constraints(fourbar.build_model(), True, time_constant=np.timedelta64(1, "s"))
    with pytest.raises(ValueError, match="theta"):
        slider_crank.slider_position([0.1, np.nan])
    with pytest.raises(ValueError, match="theta0"):
        slider_crank.initial_state(slider_crank.build_model(), None, theta0="1.0")
    with pytest.raises(ValueError, match="length"):
        pendulum.joint_positions(pendulum.build_model(2), [0.1, 0.2], length=np.nan)
