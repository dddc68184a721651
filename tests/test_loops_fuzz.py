"""API fuzzing (see test_api_fuzz.py) of sinews.loops and the coordinate constraints."""

from __future__ import annotations

import numpy as np
from test_api_fuzz import E, fuzz_tests
from test_api_fuzz_core import Q, V, X4, ZOO

from sinews import constraints as C
from sinews import loops as LP

LOOP_X = np.eye(4)


def loop_set():
    """A ball loop between two branches of the zoo and a coordinate coupling, closed at Q."""
    import sinews
    from sinews import Transform

    X_t = sinews.body_placement(ZOO, Q, "slide").inverse() @ sinews.body_placement(ZOO, Q, "hinge") @ Transform.from_matrix(X4)
    cs = C.ConstraintSet()
    cs.add_loop_joint("hinge", "slide", "ball", X4, X_t, name="loop")
    offset = float(Q[ZOO.idx_q("slide")] - 0.5 * Q[ZOO.idx_q("hinge")])
    cs.add_coordinate_constraint("slide", "hinge", ratio=0.5, offset=offset, name="gear")
    return cs.bind(ZOO)


CS = loop_set()
LOOP = CS.group("loop")
SOLVER = LP.ConstraintKinematicsSolver(ZOO, CS).freeze("hinge")
LAM = np.linspace(-1.0, 1.0, CS.size)


def zoo(**kw):
    out = dict(model=ZOO, cs=CS)
    out.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()})
    return out


def with_loop(X_source, X_target, axis, pitch):
    cs = C.ConstraintSet()
    cs.add_loop_joint("hinge", "slide", "screw", X_source, X_target, axis=axis, pitch=pitch)
    return C.constraint_jacobian(ZOO, Q, cs.bind(ZOO))


def with_coordinate(ratio, offset):
    cs = C.ConstraintSet()
    cs.add_coordinate_constraint("slide", "hinge", ratio=ratio, offset=offset)
    return C.constraint_position_error(ZOO, Q, cs.bind(ZOO))


def cut_force(stiffness, damping, rest, motor):
    cs = C.ConstraintSet()
    cs.add_loop_joint("hinge", "slide", "cylindrical", None, None, name="c")
    cs.bind(ZOO)
    cs.group("c").set_cut_force(stiffness=stiffness, damping=damping, rest=rest, motor=motor)
    return LP.cut_joint_forces(ZOO, Q, V, cs)


def solve_honest(r, kw):
    if r.level == "q":
        err = float(np.abs(C.constraint_position_error(ZOO, r.value, CS)).max())
        tol = max(1e-6, 10 * float(kw["tol"]))  # converged means "within the caller's tol"
        return f"position error {err:.2g}" if err > tol else None
    return None


def simulate_closed(q0, v0, dt):
    from sinews.simulate import simulate

    return simulate(ZOO, q0, v0, duration=2e-3, dt=dt, constraints=CS, progress=False)


Q_CLOSED = SOLVER.solve_q(Q).check().value
V_CLOSED = SOLVER.solve_u(Q_CLOSED, V).value


TABLE = [
    E(simulate_closed, lambda: dict(q0=Q_CLOSED.copy(), v0=V_CLOSED.copy(), dt=2e-3), "q0:q v0 dt:scalar", label="constraints"),
    E(C.ConstraintSet.add_loop_joint, lambda: dict(X_source=X4.copy(), X_target=X4.copy(), axis=np.array([0.0, 1.0, 0.0]), pitch=0.1),
      "X_source X_target axis pitch:scalar", call=with_loop),
    E(C.ConstraintSet.add_coordinate_constraint, lambda: dict(ratio=0.5, offset=0.1), "ratio:scalar offset:scalar", call=with_coordinate),
    E(LP.LoopJoint.set_cut_force, lambda: dict(stiffness=np.array([1.0, 2.0]), damping=np.array([0.1, 0.2]), rest=np.array([0.0, 0.1]),
                                               motor=np.array([0.5, -0.5])), "stiffness damping rest motor", call=cut_force),
    E(LP.LoopJoint.qmats, lambda: dict(self=LOOP, model=ZOO, q=Q.copy()), "q:q"),
    E(LP.LoopJoint.cut_state, lambda: dict(self=LOOP, model=ZOO, q=Q.copy(), v=V.copy()), "q:q v"),
    E(LP.LoopJoint.cut_force_generalized, lambda: dict(self=LOOP, model=ZOO, q=Q.copy(), tau_cut=np.array([1.0, -1.0, 0.5])),
      "q:q tau_cut"),
    E(LP.LoopJoint.cut_force_wrenches, lambda: dict(self=LOOP, model=ZOO, q=Q.copy(), tau_cut=np.array([1.0, -1.0, 0.5])),
      "q:q tau_cut"),
    E(LP.node_wrenches, lambda: zoo(q=Q, multipliers=LAM), "q:q multipliers"),
    E(LP.cut_joint_forces, lambda: zoo(q=Q, v=V), "q:q v"),
    E(LP.ConstraintKinematicsSolver.solve_q, lambda: dict(self=SOLVER, q=Q.copy(), tol=1e-10), "q:q tol:scalar", honest=solve_honest),
    E(LP.ConstraintKinematicsSolver.solve_u, lambda: dict(self=SOLVER, q=Q.copy(), v=V.copy()), "q:q v"),
    E(LP.ConstraintKinematicsSolver.solve_udot, lambda: dict(self=SOLVER, q=Q.copy(), v=V.copy(), qdd=V.copy()), "q:q v qdd"),
]

test_loops_fuzz = fuzz_tests(TABLE)
