"""Point contacts: scenarios D, E, F, G and L of rbdl.md section 5.2, redundant constraints.

RBDL fixtures: ``ForwardDynamicsConstraintsDirectMoving`` (D), ``FixedBase6DoF`` (E),
``ImpulsesFixture`` (F), ``TestExtendedConstraintFunctionsContact`` (G); gravity (0, -9.81, 0).
"""

import numpy as np
import pytest

from sinews import Model, SpatialInertia, Transform, crba, joints, point_acceleration, point_velocity
from sinews.constraints import (
    IMPULSE_METHODS,
    METHODS,
    ConstraintSet,
    calc_forces,
    calc_impulses,
    compute_constraint_impulses,
    constraint_gamma,
    constraint_jacobian,
    constraint_position_error,
    constraint_velocity_error,
    forward_dynamics_constraints,
)

GY = (0.0, -9.81, 0.0)
E6 = np.eye(6)


def _unit_body():
    return SpatialInertia(1.0, (0, 0, 0), np.eye(3))


# ------------------------------------------------------------------ D: free body, point contact
def _scenario_d():
    m = Model(gravity=GY)
    b = m.add_body(0, joints.MultiAxis([E6[3], E6[4], E6[5], E6[2], E6[1], E6[0]]), None, _unit_body(), "body")
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint(b, (0, -1, 0), n)
    return m, cs


@pytest.mark.parametrize("method", METHODS)
def test_constraints_contacts_D_moving(method):
    m, cs = _scenario_d()
    q = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    qd = np.array([1.1, 1.2, 1.3, -1.4, -1.5, -1.6])
    r = forward_dynamics_constraints(m, q, qd, np.zeros(6), cs, method=method)
    qdd_rbdl = [0.577622487794, -1.75321359773, 1.34934126214, 6.30218319222, -3.41881793397, 6.49814040844]
    assert np.allclose(r.qdd, qdd_rbdl, atol=1e-8, rtol=0)
    # null_space included: RBDL's NullSpace returns (0.5313, 7.7223, 3.0745) here (its bug,
    # rbdl.md section 0.3); the correct multipliers are Direct's
    assert np.allclose(r.multipliers, [0.577622487794, 8.05678640227, 1.34934126214], atol=1e-8, rtol=0)
    assert np.allclose(point_acceleration(m, q, qd, r.qdd, "body", (0, -1, 0)), 0, atol=1e-10)
    assert cs.ngroups == 1 and cs.size == 3


def test_constraints_contacts_D_simple():
    m, cs = _scenario_d()
    q = np.array([0, 1, 0, 0, 0, 0.0])
    qd = np.array([1, 0, 0, -1, 0, 0.0])
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, qd, np.zeros(6), cs, method=method)
        assert np.allclose(r.qdd, [0, -1, 0, 0, 0, 0], atol=1e-12)
        assert np.allclose(r.multipliers, [0, 8.81, 0], atol=1e-12)  # lambda > 0 pushes along +n


# ------------------------------------------------------------------ E: fixed-base chain
def _scenario_e(normals):
    m = Model(gravity=GY)
    a = m.add_body(0, joints.RevoluteZ(), None, None, "a_rz")
    a = m.add_body(a, joints.RevoluteY(), None, None, "a_ry")
    a = m.add_body(a, joints.RevoluteX(), None, SpatialInertia(1.0, (0.5, 0, 0), np.eye(3)), "a")
    b = m.add_body(a, joints.RevoluteZ(), (1, 0, 0), None, "b_rz")
    b = m.add_body(b, joints.RevoluteY(), None, None, "b_ry")
    b = m.add_body(b, joints.RevoluteX(), None, SpatialInertia(1.0, (0, 0.5, 0), np.eye(3)), "b")
    cs = ConstraintSet()
    for n in normals:
        cs.add_contact_constraint("b", (0.5, 0.5, 0), n)
    return m, cs


@pytest.mark.parametrize(
    "normals, q, qd",
    [
        ([(0, 1, 0)], [0.6, 0, 0, 0.6 * np.pi, 0.1, 0], [-0.3, 0.1, -0.5, 0.8, 0, 0]),
        ([(1, 0, 0), (0, 1, 0)], [np.pi / 4, 0.2, 0, np.pi / 2, 0, 0], [0, 0, 0, 0, 0, 0]),
    ],
)
def test_constraints_contacts_E_kokkevis_vs_direct(normals, q, qd):
    m, cs = _scenario_e(normals)
    q, qd = np.array(q, float), np.array(qd, float)
    ref = forward_dynamics_constraints(m, q, qd, np.zeros(6), cs)
    a = point_acceleration(m, q, qd, ref.qdd, "b", (0.5, 0.5, 0))
    assert np.allclose(np.array(normals) @ a, 0, atol=1e-10)
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, qd, np.zeros(6), cs, method=method)
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9, rtol=0)
        assert np.allclose(r.multipliers, ref.multipliers, atol=1e-9, rtol=0)


# ------------------------------------------------------------------ F: impulses
def _scenario_f():
    m = Model(gravity=GY)
    I = SpatialInertia(1.0, (0, 1, 0), np.eye(3))
    axes = [E6[2], E6[1], E6[0]]
    b0 = m.add_body(0, joints.MultiAxis(axes), None, I, "base")
    m.add_body(b0, joints.MultiAxis(axes), (1, 0, 0), I, "child")
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("child", (0, 1, 0), n, name="tip")
    return m, cs


@pytest.mark.parametrize("target", [None, (1.0, 2.0, 3.0)])
def test_constraints_contacts_F_impulses(target):
    m, cs = _scenario_f()
    q = np.array([0.2, -0.5, 0.1, -0.4, -0.1, 0.4])
    qdm = np.array([0.1, -0.2, 0.1, 0, 0, 0])
    H = crba(m, q)
    G = constraint_jacobian(m, q, cs)
    ref = compute_constraint_impulses(m, q, qdm, cs, target_velocity=target)
    want = np.zeros(3) if target is None else np.array(target)
    for method in IMPULSE_METHODS:
        r = compute_constraint_impulses(m, q, qdm, cs, method=method, target_velocity=target)
        assert np.allclose(point_velocity(m, q, r.qd_plus, "child", (0, 1, 0)), want, atol=1e-12)
        assert np.allclose(r.qd_plus, ref.qd_plus, atol=1e-9, rtol=0)
        # one sign convention for every method (RBDL: Direct stores -Lambda, NullSpace garbage):
        # Lambda is the physical impulse, H (qd+ - qd-) = G^T Lambda
        assert np.allclose(r.impulses, ref.impulses, atol=1e-9, rtol=0)
        assert np.allclose(H @ (r.qd_plus - qdm), G.T @ r.impulses, atol=1e-12)
        assert r.converged and not r.least_squares


# ------------------------------------------------------------------ G: box on two corners
def _box():
    m = Model(gravity=GY)
    m.add_body(0, joints.Planar(), None, _unit_body(), "box")
    cs = ConstraintSet()
    cs.add_contact_constraint("box", (-0.5, 0, 0), (0, 1, 0), name="LeftCorner")
    cs.add_contact_constraint("box", (-0.5, 0, 0), (1, 0, 0), name="LeftCorner")
    cs.add_contact_constraint("box", (0.5, 0, 0), (0, 1, 0), name="RightCorner")
    return m, cs


def test_constraints_contacts_G_box_statics_and_forces():
    m, cs = _box()
    assert [g.size for g in cs] == [2, 1] and cs.row_group.tolist() == [0, 0, 1]
    q = np.array([0, 0, np.pi / 3])
    for method in METHODS:
        r = forward_dynamics_constraints(m, q, np.zeros(3), np.zeros(3), cs, method=method)
        assert np.allclose(r.qdd, 0, atol=1e-12)
        assert np.allclose(r.multipliers, [4.905, 0, 4.905], atol=1e-12)
    assert np.allclose(r.group_multipliers("LeftCorner"), [4.905, 0])
    L = calc_forces(m, q, cs, "LeftCorner", r)  # local
    assert L.bodies == [1, 0]
    assert np.allclose(L.wrenches[0], [0, 0, 0, 4.24785460556, 2.4525, 0], atol=1e-10)
    assert np.allclose(L.wrenches[1], [0, 0, 0, 0, -4.905, 0], atol=1e-12)
    assert np.allclose(L.frames[0].p, [-0.5, 0, 0]) and np.allclose(L.frames[0].R, np.eye(3))
    W = calc_forces(m, q, cs, 0, r, frame="world")
    assert np.allclose(W.frames[0].p, [-0.25, -0.433012701892, 0], atol=1e-11)
    assert np.allclose(W.wrenches[0], [0, 0, 0, 0, 4.905, 0], atol=1e-12)
    assert np.allclose(W.frames[1].p, W.frames[0].p)


def test_constraints_contacts_G_box_impulses():
    m, cs = _box()
    q = np.zeros(3)
    for method in IMPULSE_METHODS:
        r = compute_constraint_impulses(m, q, [2.0, -1.0, 0.0], cs, method=method)
        assert np.allclose(r.qd_plus, 0, atol=1e-12)
        # RBDL Direct prints (-0.5, 2, -0.5): the negative of the physical impulse
        assert np.allclose(r.impulses, [0.5, -2, 0.5], atol=1e-12)
        a = calc_impulses(m, q, cs, "LeftCorner", r)
        b = calc_impulses(m, q, cs, "RightCorner", r)
        assert a.kind == "impulse"
        assert np.allclose(a.wrenches[0], [0, 0, 0, -2, 0.5, 0], atol=1e-12)
        assert np.allclose(b.wrenches[0], [0, 0, 0, 0, 0.5, 0], atol=1e-12)


def test_constraints_contacts_errors_per_group():
    m, cs = _box()
    q = np.array([0.1, 0.2, 0.3])
    qd = np.array([0.5, -0.2, 0.7])
    assert np.all(constraint_position_error(m, q, cs) == 0)  # contacts have no position error
    e = constraint_velocity_error(m, q, qd, cs)
    vL = point_velocity(m, q, qd, "box", (-0.5, 0, 0))
    assert np.allclose(e[:2], [vL[1], vL[0]], atol=1e-14)
    assert np.allclose(constraint_velocity_error(m, q, qd, cs, group="RightCorner"), e[2:])
    assert np.allclose(constraint_jacobian(m, q, cs, group=1), constraint_jacobian(m, q, cs)[2:])
    # Baumgarte on a contact group: only the velocity term acts
    g0 = constraint_gamma(m, q, qd, cs)
    cs.enable_baumgarte("RightCorner", time_constant=0.5)
    g1 = constraint_gamma(m, q, qd, cs)
    assert np.allclose(g1[:2], g0[:2]) and g1[2] == pytest.approx(g0[2] - 2 * 2.0 * e[2])


# ------------------------------------------------------------------ L: regression checks
def test_constraints_contacts_L_orientation_only_loop_free_fall():
    """Orientation lock of a free body to the ground at ground point (2,0,0): free fall at -g
    and no spin.  RBDL gives -1.962 m/s^2 and 3.924 rad/s^2 (rbdl.md section 0.5)."""
    six_axis = joints.MultiAxis([E6[3], E6[4], E6[5], E6[2], E6[1], E6[0]])
    # (joint, slice of linear velocity dofs, slice of angular ones)
    for joint, lin, ang in ((joints.FreeFlyer(), slice(3, 6), slice(0, 3)), (six_axis, slice(0, 3), slice(3, 6))):
        m = Model(gravity=GY)
        m.add_body(0, joint, None, SpatialInertia(1.0, (0, 0, 0), np.diag([1.0, 2.0, 2.5])), "body")
        cs = ConstraintSet()
        for k in range(3):
            cs.add_loop_constraint(0, "body", Transform.translation((2, 0, 0)), None, E6[k])
        q = np.zeros(m.nq)
        if m.nq == 7:
            q[6] = 1.0
        v = np.zeros(m.nv)
        v[lin] = [0.3, -0.4, 0.5]  # translating is allowed
        for method in METHODS:
            r = forward_dynamics_constraints(m, q, v, np.zeros(m.nv), cs, method=method)
            assert np.allclose(r.qdd[lin], GY, atol=1e-12)
            assert np.allclose(r.qdd[ang], 0, atol=1e-12)
            assert np.allclose(r.multipliers, 0, atol=1e-12)


def test_constraints_contacts_redundant_rows_flagged():
    """The same corner constrained twice: rank 3 of 4 rows.  Every method returns the same
    qdd, flags the least-squares answer and gives the same minimum-norm multipliers."""
    m, cs = _box()
    cs2 = ConstraintSet()
    for g in cs:
        for n in g.normals:
            cs2.add_contact_constraint("box", g.body_point, n, name=g.name)
    cs2.add_contact_constraint("box", (0.5, 0, 0), (0, 1, 0), name="dup")
    q = np.array([0, 0, np.pi / 3])
    qd = np.zeros(3)
    tau = np.array([0.3, -0.2, 0.1])
    ref = forward_dynamics_constraints(m, q, qd, tau, cs)
    sols = [forward_dynamics_constraints(m, q, qd, tau, cs2, method=meth) for meth in METHODS]
    for r in sols:
        assert r.least_squares and r.rank == 3 and r.rows == 4 and r.converged
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9)
        assert np.allclose(r.multipliers, sols[0].multipliers, atol=1e-9)
        # minimum norm: the duplicated rows share the force equally
        assert r.multipliers[2] == pytest.approx(r.multipliers[3], abs=1e-9)
        assert r.multipliers[2] + r.multipliers[3] == pytest.approx(ref.multipliers[2], abs=1e-9)
    for meth in IMPULSE_METHODS:
        r = compute_constraint_impulses(m, q, [1.0, -2.0, 0.5], cs2, method=meth)
        r0 = compute_constraint_impulses(m, q, [1.0, -2.0, 0.5], cs, method=meth)
        assert r.least_squares and np.allclose(r.qd_plus, r0.qd_plus, atol=1e-9)


def test_constraints_contacts_inconsistent_redundancy_flagged_not_nan():
    m, cs = _box()
    cs2 = ConstraintSet()
    cs2.add_contact_constraint("box", (0.5, 0, 0), (0, 1, 0), name="a")
    cs2.add_contact_constraint("box", (0.5, 0, 0), (0, 1, 0), name="b")
    cs2.enable_baumgarte("b", 0.1)  # b asks for a different acceleration when moving
    q = np.array([0, 0, 0.2])
    qd = np.array([0.1, 0.3, 0.2])
    for meth in METHODS:
        r = forward_dynamics_constraints(m, q, qd, np.zeros(3), cs2, method=meth)
        assert r.least_squares and not r.converged
        assert np.all(np.isfinite(r.qdd)) and np.all(np.isfinite(r.multipliers))


def test_constraints_contacts_undetermined_system_raises():
    """A massless body that no constraint fixes: accelerations undetermined -> ValueError."""
    m = Model(gravity=GY)
    a = m.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (1, 0, 0), np.eye(3)), "a")
    m.add_body(a, joints.RevoluteZ(), (1, 0, 0), None, "massless")
    cs = ConstraintSet()
    cs.add_contact_constraint("a", (1, 0, 0), (0, 1, 0))
    for meth in ("direct", "null_space", "range_space_sparse", "kokkevis"):
        with pytest.raises(ValueError):
            forward_dynamics_constraints(m, np.zeros(2), np.zeros(2), np.zeros(2), cs, method=meth)


def test_constraints_contacts_compiled_path_matches_per_group_formulas():
    """Contacts-only sets take a compiled path (one kernel for G, gamma, H, C); it must agree
    with the per-group Python formulas, with Baumgarte terms, external forces, a welded body,
    a free-flyer and a spherical joint, and with Kokkevis (which uses the Python path)."""
    import sinews
    from sinews.constraints import constraint_gamma, constraint_jacobian

    m = Model(gravity=(0, 0, -9.81))
    rng = np.random.default_rng(4)
    I = lambda: SpatialInertia(rng.uniform(0.5, 2), rng.normal(size=3) * 0.1, np.diag(rng.uniform(0.6, 1.0, 3)))  # noqa: E731
    base = m.add_body(0, joints.FreeFlyer(), None, I(), "base")
    a = m.add_body(base, joints.Spherical(), (0.3, 0, 0), I(), "a")
    m.add_body(a, joints.Fixed(), Transform.rot_z(0.4, (0.2, 0.1, 0)), I(), "welded")
    b = m.add_body(base, joints.RevoluteY(), (-0.3, 0, 0), I(), "b")
    m.add_body(b, joints.PrismaticX(), (0, 0, -0.4), I(), "c")
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("welded", (0.1, 0.2, 0.3), n, name="w")
    cs.add_contact_constraint("c", (0.0, 0.1, 0.0), (0, 0, 1), name="c")
    cs.add_contact_constraint("c", (0.0, 0.1, 0.0), (np.sqrt(0.5), np.sqrt(0.5), 0), name="c")
    cs.enable_baumgarte("c", time_constant=0.2)
    q = sinews.random_configuration(m, rng)
    v = rng.normal(size=m.nv)
    tau = rng.normal(size=m.nv)
    f_ext = {"a": rng.normal(size=6), "welded": rng.normal(size=6)}
    G_groups = np.vstack([constraint_jacobian(m, q, cs, group=g) for g in cs])
    gam_groups = np.concatenate([constraint_gamma(m, q, v, cs, group=g) for g in cs])
    assert np.allclose(constraint_jacobian(m, q, cs), G_groups, atol=1e-13)
    assert np.allclose(constraint_gamma(m, q, v, cs), gam_groups, atol=1e-12)
    ref = forward_dynamics_constraints(m, q, v, tau, cs, method="kokkevis", f_ext=f_ext)
    assert np.allclose(G_groups @ ref.qdd, gam_groups, atol=1e-10)
    for method in ("direct", "range_space_sparse", "null_space"):
        r = forward_dynamics_constraints(m, q, v, tau, cs, method=method, f_ext=f_ext)
        assert np.allclose(r.qdd, ref.qdd, atol=1e-9, rtol=0) and np.allclose(r.multipliers, ref.multipliers, atol=1e-9, rtol=0)
    H = crba(m, q)
    for method in IMPULSE_METHODS:
        r = compute_constraint_impulses(m, q, v, cs, method=method)
        assert np.allclose(G_groups @ r.qd_plus, 0, atol=1e-12)
        assert np.allclose(H @ (r.qd_plus - v), G_groups.T @ r.impulses, atol=1e-10)
