"""API fuzzing (see test_api_fuzz.py): sinews.constraints."""

from __future__ import annotations

import numpy as np
from test_api_fuzz import E, fuzz_tests
from test_api_fuzz_core import FEXT, Q, V, X4, ZOO
from test_constraints_b_models import FOURBAR_Q, FOURBAR_V, fourbar

import sinews
from sinews import Transform
from sinews import constraints as C

TY = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
POINT = np.array([0.0, 0.0, -0.1])
NORMALS = np.eye(3)
TIP = Transform.translation((0.4, 0.0, 0.0))


def zoo_set():
    """Three contact rows on the free-flyer base and one loop row between two branches."""
    cs = C.ConstraintSet()
    for n in NORMALS:
        cs.add_contact_constraint("base", POINT, n, name="foot")
    cs.add_loop_constraint("hinge", "slide", TIP, Transform.identity(), TY, name="loop")
    return cs.bind(ZOO)


CS = zoo_set()
FB, FB_CS = fourbar()
TAU = np.linspace(-1.0, 1.0, ZOO.nv)
FD = C.forward_dynamics_constraints(ZOO, Q, V, TAU, CS)
IMP = C.compute_constraint_impulses(ZOO, Q, V, CS)
FB_FD = C.forward_dynamics_constraints(FB, FOURBAR_Q, FOURBAR_V, np.array([1.5, 0.0, -2.0, 0.0, 0.0]), FB_CS)
KIN = C.ConstraintKinematics(ZOO, Q, V)
R0 = X4[:3, :3]


def zoo(**kw):
    out = dict(model=ZOO, cs=CS)
    out.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()})
    return out


def fb(**kw):
    out = dict(model=FB, cs=FB_CS)
    out.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()})
    return out


def _scale(*arrays):
    return max([1.0] + [float(np.max(np.abs(a))) for a in arrays if np.size(a)])


def fd_honest(r, kw):
    """G qdd = gamma and H qdd + C = tau + G^T lambda."""
    model, q, v, cs = kw["model"], kw["q"], kw["v"], kw["cs"]
    G = C.constraint_jacobian(model, q, cs)
    gamma = C.constraint_gamma(model, q, v, cs)
    H = sinews.crba(model, q)
    Cv = sinews.nonlinear_effects(model, q, v, kw.get("f_ext"))
    e1 = np.max(np.abs(G @ r.qdd - gamma), initial=0.0) / _scale(G @ r.qdd, gamma)
    e2 = np.max(np.abs(H @ r.qdd + Cv - np.asarray(kw["tau"], float) - G.T @ r.multipliers)) / _scale(H @ r.qdd, Cv, kw["tau"])
    if max(e1, e2) > 1e-6:
        return f"relative residuals |G qdd - gamma| {e1:.2g}, dynamics {e2:.2g}"
    return None


def impulse_honest(r, kw):
    model, q, cs = kw["model"], kw["q"], kw["cs"]
    G = C.constraint_jacobian(model, q, cs)
    H = sinews.crba(model, q)
    target = np.zeros(cs.size) if kw.get("target_velocity") is None else np.asarray(kw["target_velocity"], float)
    e1 = np.max(np.abs(G @ r.qd_plus - target)) / _scale(G @ r.qd_plus, target)
    e2 = np.max(np.abs(H @ (r.qd_plus - np.asarray(kw["qd_minus"], float)) - G.T @ r.impulses)) / _scale(H @ r.qd_plus, G.T @ r.impulses)
    if max(e1, e2) > 1e-6:
        return f"relative residuals |G qd+ - target| {e1:.2g}, momentum {e2:.2g}"
    return None


def assemble_q_honest(r, kw):
    err = np.max(np.abs(C.constraint_position_error(kw["model"], r.q, kw["cs"])))
    tol = max(1e-6, 10 * float(kw["tol"]))  # converged means "within the caller's tol"
    return f"position error {err:.2g} at the returned q (tol {kw['tol']:.3g})" if err > tol else None


def assemble_qdot_honest(r, kw):
    G = C.constraint_jacobian(kw["model"], kw["q"], kw["cs"])
    target = np.zeros(G.shape[0]) if kw.get("target") is None else np.asarray(kw["target"], float)
    err = np.max(np.abs(G @ r.v - target)) / _scale(G @ r.v, target)
    return f"relative |G v - target| {err:.2g}" if err > 1e-6 else None


def idc_honest(r, kw):
    fd = C.forward_dynamics_constraints(kw["model"], kw["q"], kw["v"], r.tau, kw["cs"], f_ext=kw.get("f_ext"))
    err = np.max(np.abs(fd.qdd - r.qdd)) / _scale(fd.qdd, r.qdd)
    return f"forward dynamics with the returned tau gives another qdd (relative {err:.2g})" if err > 1e-6 else None


def with_contact(body_point, world_normal):
    cs = C.ConstraintSet()
    cs.add_contact_constraint("base", body_point, world_normal)
    return C.constraint_jacobian(ZOO, Q, cs.bind(ZOO))


def with_loop(X_predecessor, X_successor, axis, time_constant):
    cs = C.ConstraintSet()
    cs.add_loop_constraint("hinge", "slide", X_predecessor, X_successor, axis, baumgarte=True,
                           time_constant=time_constant)
    return C.constraint_jacobian(ZOO, Q, cs.bind(ZOO))


def contact_group(body_point, world_normal):
    g = C.ContactConstraint("base", body_point)
    g.add_normal(world_normal)
    return g.normal_matrix, g.body_point


def loop_group(X_predecessor, X_successor, axis):
    g = C.LoopConstraint("hinge", "slide", X_predecessor, X_successor)
    g.add_axis(axis)
    return g.axis_matrix


def pin_joint(X_predecessor, X_successor):
    cs = C.ConstraintSet()
    cs.add_custom_constraint(C.PinJointConstraint("ball", "hinge", X_predecessor, X_successor))
    return C.constraint_jacobian(ZOO, Q, cs.bind(ZOO))


def kinematics(model, q, v):
    kin = C.ConstraintKinematics(model, q, v)
    return kin.body_pose(3), kin.jacobian6(3, POINT), kin.velocity6(3, POINT), kin.bias6(3, POINT)


TABLE = [
    # -- building sets and groups
    E(C.ConstraintSet.add_contact_constraint, lambda: dict(body_point=POINT.copy(), world_normal=NORMALS[2].copy()), "body_point world_normal", call=with_contact),
    E(C.ConstraintSet.add_loop_constraint, lambda: dict(X_predecessor=X4.copy(), X_successor=X4.copy(), axis=TY.copy(), time_constant=0.1), "X_predecessor X_successor axis time_constant:scalar", call=with_loop),
    E(C.ContactConstraint, lambda: dict(body_point=POINT.copy(), world_normal=NORMALS[2].copy()), "body_point world_normal", call=contact_group),
    E(C.LoopConstraint, lambda: dict(X_predecessor=X4.copy(), X_successor=X4.copy(), axis=TY.copy()), "X_predecessor X_successor axis", call=loop_group),
    E(C.PinJointConstraint, lambda: dict(X_predecessor=X4.copy(), X_successor=X4.copy()), "X_predecessor X_successor", call=pin_joint),
    # -- kinematics
    E(C.ConstraintKinematics, lambda: dict(model=ZOO, q=Q.copy(), v=V.copy()), "q:q v", call=kinematics),
    E(C.ConstraintKinematics.frame_pose, lambda: dict(self=KIN, body=3, R_body_frame=R0.copy(), p_body_frame=POINT.copy()), "R_body_frame p_body_frame"),
    E(C.ConstraintKinematics.jacobian6, lambda: dict(self=KIN, body=3, p_world_point=POINT.copy()), "p_world_point"),
    E(C.ConstraintKinematics.velocity6, lambda: dict(self=KIN, body=3, p_world_point=POINT.copy()), "p_world_point"),
    E(C.ConstraintKinematics.bias6, lambda: dict(self=KIN, body=3, p_world_point=POINT.copy()), "p_world_point"),
    # -- system quantities
    E(C.constraint_jacobian, lambda: zoo(q=Q), "q:q"),
    E(C.constraint_gamma, lambda: zoo(q=Q, v=V), "q:q v"),
    E(C.constraint_position_error, lambda: zoo(q=Q), "q:q"),
    E(C.constraint_velocity_error, lambda: zoo(q=Q, v=V), "q:q v"),
    E(C.baumgarte_terms, lambda: zoo(q=Q, v=V), "q:q v"),
    E(C.constrained_system, lambda: zoo(q=Q, v=V, f_ext=FEXT), "q:q v f_ext"),
    E(C.ConstraintSet.split, lambda: dict(self=CS, per_row=np.arange(CS.size, dtype=float)), "per_row"),
    # -- dynamics and impulses
    *[E(C.forward_dynamics_constraints, lambda m=m: zoo(q=Q, v=V, tau=TAU, f_ext=FEXT, method=m), "q:q v tau f_ext", honest=fd_honest, label=m)
      for m in C.METHODS],
    *[E(C.compute_constraint_impulses, lambda m=m: zoo(q=Q, qd_minus=V, target_velocity=np.full(CS.size, 0.1), method=m), "q:q qd_minus target_velocity", honest=impulse_honest, label=m)
      for m in C.IMPULSE_METHODS],
    E(C.calc_forces, lambda: zoo(q=Q, group="foot", multipliers=FD.multipliers.copy()), "q:q multipliers"),
    E(C.calc_impulses, lambda: zoo(q=Q, group="loop", impulses=IMP.impulses.copy()), "q:q impulses"),
    E(C.ConstraintSet.calc_forces, lambda: dict(self=CS, group="loop", q=Q.copy(), multipliers=FD.multipliers.copy()), "q:q multipliers"),
    E(C.ConstraintSet.calc_impulses, lambda: dict(self=CS, group="foot", q=Q.copy(), impulses=IMP.impulses.copy()), "q:q impulses"),
    # -- assembly and inverse dynamics (four-bar)
    E(C.assemble_q, lambda: fb(q_init=FOURBAR_Q + 0.05, weights=np.array([1.0, 0, 1, 0, 0]), tol=1e-12), "q_init weights tol:scalar", honest=assemble_q_honest),
    E(C.assemble_qdot, lambda: fb(q=FOURBAR_Q, qd_init=FOURBAR_V, weights=np.array([1.0, 0, 1, 0, 0]), target=np.array([0.1, 0.0, -0.1])), "q qd_init weights target", honest=assemble_qdot_honest),
    E(C.actuation_map, lambda: dict(model=FB, actuated=np.array([0, 2])), "actuated:index", free_shape=True),  # n_a follows actuated
    E(C.is_fully_actuated, lambda: fb(q=FOURBAR_Q, actuated=np.array([0, 2])), "q actuated:index"),
    E(C.inverse_dynamics_constraints, lambda: fb(q=FOURBAR_Q, v=FOURBAR_V, qdd_desired=FB_FD.qdd, actuated=np.array([0, 2]), f_ext=np.zeros((FB.nbodies, 6))), "q v qdd_desired actuated:index f_ext", honest=idc_honest),
    E(C.inverse_dynamics_constraints_relaxed, lambda: fb(q=FOURBAR_Q, v=FOURBAR_V, qdd_desired=FB_FD.qdd, actuated=np.array([0]), weight=np.array([[2.0]]), weight_scale=100.0), "q v qdd_desired actuated:index weight weight_scale:scalar", honest=idc_honest),
]

test_api_fuzz_constraints = fuzz_tests(TABLE)
