"""Loop closures by joint type (sinews.loops.LoopJoint): derivatives by finite differences,
Karana's QMats, node wrenches, cut-joint coordinates and forces, all solvers, bad input."""

import numpy as np
import pytest

import sinews
from sinews import Model, SpatialInertia, Transform, joints
from sinews.constraints import (
    METHODS,
    ConstraintSet,
    calc_forces,
    compute_constraint_impulses,
    constraint_gamma,
    constraint_jacobian,
    constraint_position_error,
    forward_dynamics_constraints,
    inverse_dynamics_constraints,
)
from sinews.constraints._kinematics import ConstraintKinematics
from sinews.loops import JOINT_TYPES, ConstraintKinematicsSolver, LoopJoint, cut_joint_forces, node_wrenches
from sinews.spatial import exp_so3


def _inertia(rng):
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    return SpatialInertia(rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2, R @ np.diag(rng.uniform(0.5, 1.0, 3)) @ R.T)


def tree(rng):
    """A branched fixed-base tree with revolute, prismatic, spherical and a free-flyer joint."""
    m = Model(gravity=(0, 0, -9.81))
    b1 = m.add_body(0, joints.RevoluteZ(), None, _inertia(rng), "b1")
    b2 = m.add_body(b1, joints.Spherical(), (0.5, 0, 0), _inertia(rng), "b2")
    m.add_body(b2, joints.RevoluteY(), (0.5, 0.1, 0), _inertia(rng), "b3")
    b4 = m.add_body(b1, joints.PrismaticX(), (0, 0.4, 0.1), _inertia(rng), "b4")
    b5 = m.add_body(b4, joints.Spherical(), (0.3, 0.2, 0), _inertia(rng), "b5")
    m.add_body(b5, joints.Revolute((0.6, 0.0, 0.8)), (0.2, 0, 0.1), _inertia(rng), "b6")
    m.add_body(0, joints.FreeFlyer(), None, _inertia(rng), "float")
    return m


def closed_loop(jt, seed, target="b6", closed=True):
    """A loop b3 -> target of type jt whose frames coincide at a random q (closed=True)."""
    rng = np.random.default_rng(seed)
    m = tree(rng)
    q = sinews.random_configuration(m, rng)
    X_s = Transform(exp_so3(rng.normal(size=3)), rng.uniform(-0.3, 0.3, 3))
    if closed:
        Xw_s = sinews.body_placement(m, q, "b3") @ X_s
        X_t = sinews.body_placement(m, q, target).inverse() @ Xw_s if target != "world" else Xw_s
    else:
        X_t = Transform(exp_so3(rng.normal(size=3)), rng.uniform(-0.3, 0.3, 3))
    cs = ConstraintSet()
    cs.add_loop_joint("b3", target, jt, X_s, X_t, pitch=0.2 if jt == "screw" else 0.0, name="L")
    cs.bind(m)
    v = rng.normal(size=m.nv)
    return m, cs, q, v, rng


@pytest.mark.parametrize("jt", JOINT_TYPES)
def test_derivatives_by_finite_differences(jt):
    """G v = d phi/dt (exact off the manifold, screw row on it) and gamma = -d(G v)/dt at qdd = 0,
    including the rows of the universal and constant-velocity joints whose direction moves with
    both frames."""
    for closed in (False, True):
        m, cs, q, v, _ = closed_loop(jt, 3, closed=closed)
        g = cs.groups[0]
        h = 1e-5

        def at(t):
            return sinews.integrate(m, q, v, t)

        dphi = (constraint_position_error(m, at(h), cs) - constraint_position_error(m, at(-h), cs)) / (2 * h)
        Gv = constraint_jacobian(m, q, cs) @ v
        rows = [k for k, (kind, _) in enumerate(g._rows) if kind != "S" or closed]
        np.testing.assert_allclose(dphi[rows], Gv[rows], atol=1e-7 * (1 + np.abs(Gv).max()))
        dGv = (constraint_jacobian(m, at(h), cs) @ v - constraint_jacobian(m, at(-h), cs) @ v) / (2 * h)
        gam = constraint_gamma(m, q, v, cs)
        np.testing.assert_allclose(gam, -dGv, atol=1e-6 * (1 + np.abs(gam).max()))


@pytest.mark.parametrize("jt", JOINT_TYPES)
def test_qmats_wrenches_and_methods(jt):
    m, cs, q, v, rng = closed_loop(jt, 5, closed=False)
    g = cs.groups[0]
    assert g.size == 6 - g.dof and g.constrains_q() and g.has_hinge() == (jt != "constant_velocity")
    kin = ConstraintKinematics(m, q, v)
    R_s, o_s, R_t, o_t = g.frames(kin)
    Q = g.qmats(m, q)
    nuS, nuT = kin.velocity6(g._src, o_s), kin.velocity6(g._tgt, o_t)
    Vs = np.r_[R_s.T @ nuS[:3], R_s.T @ nuS[3:]]
    Vt = np.r_[R_t.T @ nuT[:3], R_t.T @ nuT[3:]]
    Gv = constraint_jacobian(m, q, cs) @ v
    np.testing.assert_allclose(Q.source_Q @ Vs + Q.target_Q @ Vt, Gv, atol=1e-12)
    np.testing.assert_allclose(Q.rel_Q @ g.cut_state(m, q, v).V_rel, Gv, atol=1e-12)
    # the wrenches reproduce G^T lambda; the two node wrenches balance
    lam = rng.normal(size=g.size)
    tot = sum(kin.jacobian6(e.body, e.p_world_frame).T @ e.wrench for e in g.wrench_entries(kin, lam))
    np.testing.assert_allclose(tot, g.jacobian(kin).T @ lam, atol=1e-12)
    nw = node_wrenches(m, q, cs, lam)
    s, t = nw["L/source"], nw["L/target"]
    f = s.wrench_world[3:] + t.wrench_world[3:]
    mom = s.wrench_world[:3] + t.wrench_world[:3] + np.cross(t.p_world_node - s.p_world_node, t.wrench_world[3:])
    assert np.abs(f).max() < 1e-12 and np.abs(mom).max() < 1e-12
    np.testing.assert_allclose(s.R_world_node @ s.wrench_node[3:], s.wrench_world[3:], atol=1e-12)
    # every forward-dynamics method agrees, on qdd and the multipliers
    tau = rng.normal(size=m.nv)
    res = [forward_dynamics_constraints(m, q, v, tau, cs, method=k) for k in METHODS]
    for r in res:
        assert r.converged and not r.least_squares
        np.testing.assert_allclose(r.qdd, res[0].qdd, atol=1e-9 * (1 + np.abs(res[0].qdd).max()))
        np.testing.assert_allclose(r.multipliers, res[0].multipliers, atol=1e-9 * (1 + np.abs(res[0].multipliers).max()))
    w = calc_forces(m, q, cs, "L", res[0], frame="world")
    assert w.bodies == [g._src, g._tgt]


@pytest.mark.parametrize("jt", JOINT_TYPES)
def test_cut_state_and_cut_forces(jt):
    m, cs, q, v, rng = closed_loop(jt, 7)
    g = cs.groups[0]
    v = ConstraintKinematicsSolver(m, cs).solve_u(q, v).check().value
    st = g.cut_state(m, q, v)
    assert st.q.shape == (len(st.names),) and st.u.shape == (g.dof,)
    np.testing.assert_allclose(st.H @ st.u, st.V_rel, atol=1e-10)  # V_rel lies in the joint's motion map
    # the cut coordinates of a closed loop are those of the identity
    if jt in ("pin", "screw", "slider", "cylindrical", "universal", "planar", "constant_velocity"):
        np.testing.assert_allclose(st.q, 0.0, atol=1e-9)
    if g.dof == 0:
        with pytest.raises(ValueError, match="locked"):
            g.set_cut_force(stiffness=1.0)
        return
    # a motor's power tau_c . u equals the generalised force's power tau_gen . v
    tau_c = rng.normal(size=g.dof)
    gen = g.cut_force_generalized(m, q, tau_c)
    assert abs(gen @ v - tau_c @ st.u) < 1e-10 * (1 + abs(tau_c @ st.u))
    Ws, Wt = g.cut_force_wrenches(m, q, tau_c)
    np.testing.assert_allclose(Ws, -Wt)
    g.set_cut_force(motor=tau_c)
    np.testing.assert_allclose(cut_joint_forces(m, q, v, cs), gen, atol=1e-12)
    g.set_cut_force()
    assert not g.has_cut_force and not cut_joint_forces(m, q, v, cs).any()


def test_pin_cut_joint_spring_and_motion():
    """A cut-joint spring on a pin loop: tau_c = -k angle - c u, read through cut_state."""
    m, cs, q, v, rng = closed_loop("pin", 11)
    g = cs.groups[0]
    solver = ConstraintKinematicsSolver(m, cs)
    d = np.zeros(m.nv)
    d[1:4] = 0.3  # turn b2 (one branch) and re-close: the pin angle changes
    q1 = solver.solve_q(sinews.integrate(m, q, d)).check().value
    st = g.cut_state(m, q1)
    assert abs(st.q[0]) > 1e-3
    g.set_cut_force(stiffness=3.0, damping=0.5, rest=0.1)
    v1 = solver.solve_u(q1, v).value
    st = g.cut_state(m, q1, v1)
    tau_c = -3.0 * (st.q - 0.1) - 0.5 * st.u
    np.testing.assert_allclose(g.cut_force(st), tau_c)
    np.testing.assert_allclose(cut_joint_forces(m, q1, v1, cs), g.cut_force_generalized(m, q1, tau_c), atol=1e-12)
    assert abs(g.cut_spring_energy(m, q1) - 1.5 * (st.q[0] - 0.1) ** 2) < 1e-14


def test_mixed_with_contacts_coordinate_custom_and_other_algorithms():
    from sinews.constraints.custom import PinJointConstraint

    rng = np.random.default_rng(2)
    m = tree(rng)
    q = sinews.random_configuration(m, rng)
    Xw = sinews.body_placement(m, q, "b3")
    cs = ConstraintSet()
    cs.add_contact_constraint("float", (0.1, 0, 0), (0, 0, 1), name="c")
    cs.add_loop_joint("b3", "b6", "ball", None, sinews.body_placement(m, q, "b6").inverse() @ Xw, name="ball")
    cs.add_loop_joint("b2", "world", "universal", None, sinews.body_placement(m, q, "b2"), name="u")
    cs.add_custom_constraint(PinJointConstraint("b1", "float", None, sinews.body_placement(m, q, "float").inverse()
                                                @ sinews.body_placement(m, q, "b1"), name="pin"))
    cs.add_coordinate_constraint("b4", "b1", ratio=0.5, offset=float(q[m.idx_q("b4")] - 0.5 * q[0]), name="gear")
    v = ConstraintKinematicsSolver(m, cs).solve_u(q, rng.normal(size=m.nv)).check().value
    tau = rng.normal(size=m.nv)
    res = [forward_dynamics_constraints(m, q, v, tau, cs, method=k) for k in METHODS]
    for r in res[1:]:
        np.testing.assert_allclose(r.qdd, res[0].qdd, atol=1e-8)
    assert np.abs(constraint_position_error(m, q, cs)).max() < 1e-12
    # impulses: the post-impact velocity satisfies every row
    imp = compute_constraint_impulses(m, q, rng.normal(size=m.nv), cs)
    assert np.abs(constraint_jacobian(m, q, cs) @ imp.qd_plus).max() < 1e-10
    # inverse dynamics reproduces the forward solution (all joints actuated)
    inv = inverse_dynamics_constraints(m, q, v, res[0].qdd, cs, np.ones(m.nv, bool))
    fwd = forward_dynamics_constraints(m, q, v, inv.tau, cs)
    np.testing.assert_allclose(fwd.qdd, res[0].qdd, atol=1e-8)
    # an unbound copy has its own loop objects and nodes
    cp = cs.copy()
    assert not cp.bound and cp.group("ball").source_node.loop is cp.group("ball")
    cp.bind(m)
    np.testing.assert_allclose(constraint_jacobian(m, q, cp), constraint_jacobian(m, q, cs))
    # assembly from a perturbed configuration closes every group with a position error (a
    # contact row has none: it would freeze its point and over-constrain the pin)
    from sinews.constraints import assemble_q

    cp.remove("c")
    a = assemble_q(m, sinews.integrate(m, q, 0.05 * rng.normal(size=m.nv)), cp, np.ones(m.nv))
    assert a.converged and np.abs(constraint_position_error(m, a.q, cp)).max() < 1e-10
    # remove a loop after creation (Karana's discard): the others keep working
    cs.remove("ball")
    assert [g.label for g in cs.groups] == ["c", "u", "pin", "gear"]
    r2 = forward_dynamics_constraints(m, q, v, tau, cs)
    assert r2.rows == cs.size == 1 + 4 + 5 + 1


def test_loop_added_to_a_used_set_by_unbind():
    m, cs, q, v, _ = closed_loop("ball", 1)
    forward_dynamics_constraints(m, q, v, np.zeros(m.nv), cs)
    cs.unbind()
    cs.add_loop_joint("b2", "world", "ball", None, sinews.body_placement(m, q, "b2"), name="second")
    r = forward_dynamics_constraints(m, q, np.zeros(m.nv), np.zeros(m.nv), cs)
    assert r.rows == 6 and cs.bound


def test_bad_input():
    with pytest.raises(ValueError, match="joint_type"):
        LoopJoint("a", "b", "hinge-ish")
    with pytest.raises(ValueError, match="same body"):
        LoopJoint("a", "a", "pin")
    with pytest.raises(ValueError, match="axis"):
        LoopJoint("a", "b", "ball", axis=(1, 0, 0))
    with pytest.raises(ValueError, match="pitch"):
        LoopJoint("a", "b", "pin", pitch=0.1)
    m = tree(np.random.default_rng(0))
    cs = ConstraintSet()
    cs.add_loop_joint("b1", 1, "pin")
    with pytest.raises(ValueError, match="same body"):
        cs.bind(m)
    cs = ConstraintSet()
    cs.add_loop_joint("b1", "nope", "pin")
    with pytest.raises(KeyError, match="target"):
        cs.bind(m)
    mf = Model()
    a = mf.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "a")
    mf.add_body(a, joints.Fixed(), (1, 0, 0), SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "welded")
    cs = ConstraintSet()
    cs.add_loop_joint("a", "welded", "ball")
    with pytest.raises(ValueError, match="welded"):
        cs.bind(mf)
    g = LoopJoint("b1", "b2", "pin")
    with pytest.raises(RuntimeError, match="not bound"):
        g.qmats(m, np.zeros(m.nq))


def test_axis_option_and_aliases():
    """``axis=`` turns both frames so that their z axes lie along it; aliases name the types."""
    from sinews.loops import joint_type_name

    assert joint_type_name("Revolute") == "pin" and joint_type_name("CV") == "constant_velocity"
    assert joint_type_name("hooke") == "universal" and joint_type_name("weld") == "locked"
    g = LoopJoint("a", "b", "pin", axis=(1, 0, 0))
    np.testing.assert_allclose(g.X_source.R @ [0, 0, 1], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(g.X_target.R @ [0, 0, 1], [1, 0, 0], atol=1e-15)


def test_baumgarte_gains_and_compiled_descriptions():
    from sinews.constraints import LoopConstraint, constraint_velocity_error

    m, cs, q, v, _ = closed_loop("universal", 4, closed=False)
    g = cs.groups[0]
    K0, D0 = g.baumgarte_gains
    np.testing.assert_allclose((K0, D0), (100.0, 20.0), rtol=1e-15)  # the time-constant form, T = 0.1 s
    cs.set_baumgarte_gains("L", 4.0, 3.0)
    assert g.baumgarte_enabled and cs.baumgarte_gains("L") == (4.0, 3.0)
    extra = constraint_gamma(m, q, v, cs) - constraint_gamma(m, q, v, cs, baumgarte=False)
    np.testing.assert_allclose(extra, -3.0 * constraint_velocity_error(m, q, v, cs) - 4.0 * constraint_position_error(m, q, cs),
                               atol=1e-12)
    g.time_constant = 0.5  # back to the time-constant form
    assert g.baumgarte_gains == (4.0, 4.0) and g.baumgarte_coefficients == (2.0, 2.0)
    with pytest.raises(ValueError, match="stiffness"):
        g.set_baumgarte_gains(-1.0, 0.0)
    assert g.compiled_loop_rows() is None and g.row_spec()[-1][0] == "R"
    # a ball loop is exactly an RBDL-style LoopConstraint with the rows it describes
    m, cs, q, v, _ = closed_loop("ball", 4, closed=False)
    d = cs.groups[0].compiled_loop_rows()
    ref = ConstraintSet()
    for ax in d["axes"]:
        ref.add_loop_constraint(d["predecessor"], d["successor"], d["X_predecessor"], d["X_successor"], ax, name="r")
    for fn in (constraint_jacobian, constraint_position_error):
        np.testing.assert_allclose(fn(m, q, ref), fn(m, q, cs), atol=1e-14)
    np.testing.assert_allclose(constraint_gamma(m, q, v, ref), constraint_gamma(m, q, v, cs), atol=1e-12)
    assert isinstance(ref.groups[0], LoopConstraint)
