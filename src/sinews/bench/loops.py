"""``python -m sinews.bench loops``: forward dynamics of closed kinematic loops.

Three parts, all through :func:`sinews.constraints.forward_dynamics_constraints` on the
one-call compiled path of loop sets (:mod:`sinews.constraints._compiled_mixed`):

(a) **humanoid hand-to-hand loops vs Pinocchio**: Pinocchio's sample humanoid
    (``pin.buildSampleModelHumanoid()``, converted with :func:`sinews.interop.from_pinocchio`,
    nv = 34) with the right hand (a frame 0.1 m along the right wrist's z axis) welded (6-D
    loop, 6 rows) or pinned (3-D loop, 3 rows) to the left hand, the two frames coinciding at the
    random configuration; the same closure in Pinocchio is a ``RigidConstraintModel``
    (``CONTACT_6D`` / ``CONTACT_3D`` between the two joints, ``LOCAL``), solved by
    ``pin.constraintDynamics`` with ``ProximalSettings(1e-12, mu=0, 1)`` (the exact KKT
    solution).  The velocity satisfies the closure (``G v = 0``); accelerations and multipliers
    are checked against Pinocchio before timing (multipliers: sinews ``[angular; linear]`` on the
    successor, Pinocchio ``[linear; angular]`` on joint 1, so ``lambda_sinews = -P lambda_pin``).
    Peer: ``pinocchio.constraintDynamics``; target ratio <= 1.
(b) **four-bar and slider-crank vs ABA on the same tree**: the demos' 3-DoF four-bar and
    slider-crank (``fourbar``, ``slider_crank``: 2 loop rows, x and y, as ``sinews demo
    fourbar`` builds them) and the same mechanisms closed by a ``pin`` loop joint as
    docs/loops.md teaches (``fourbar-pin``, ``slider_crank-pin``, from
    :mod:`sinews.loops.examples`: 5 rows of rank 2, flagged least squares, solved in the
    kernel); peer: ``sinews.aba`` on the same model and state (the open tree); target ratio <= 2.
(c) **a chain of N links closed by one loop** (N = 10, 20, 50, 100, 200; revolute joints
    alternating about z and y, the tip pinned to a world point by a 3-D loop): the
    tree-augmented method against the direct method; the TA times are fitted to ``c N^p`` and
    the exponent ``p`` printed (linear: p close to 1).

Timing: :func:`sinews.bench._timing.time_pair` (alternating rounds, thread CPU time, medians),
reused workspaces on both sides.  Options: ``--json PATH`` writes ``{"rows": [{"model",
"algorithm", "sinews_us", "peer", "peer_us", "ratio"}], "chain_exponent": p}``; ``--quick``
(50 calls per timing, N up to 100); ``--calls N``; ``--seed S``.  Exit code 1 if a result
disagrees with Pinocchio or with the direct method.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from sinews.constraints import forward_dynamics_constraints

from ._timing import time_pair

HUMANOID = "pinocchio-sample-humanoid"
HANDS = ("rarm_wrist2_joint", "larm_wrist2_joint")
HAND_POINT = np.array([0.0, 0.0, 0.1])
METHODS = ("direct", "range_space_sparse", "tree_augmented")
CHAIN_SIZES = (10, 20, 50, 100, 200)
AGREEMENT_TOL = 1e-8


def _rel_err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


class HumanoidLoop:
    """The humanoid with a hand-to-hand loop (``kind`` "6d" or "3d") in both libraries."""

    def __init__(self, kind: str = "6d", seed: int = 0):
        import pinocchio as pin

        from sinews.constraints import ConstraintSet, constraint_jacobian
        from sinews.interop import PinocchioCoordinates, from_pinocchio
        from sinews.spatial import Transform

        self.pin, self.kind = pin, kind
        pm = pin.buildSampleModelHumanoid()
        self.pm, self.pd = pm, pm.createData()
        self.model = from_pinocchio(pm)
        self.data = self.model.data()
        self.coords = PinocchioCoordinates(self.model)
        rng = np.random.default_rng(seed)
        self.q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        jA, jB = pm.getJointId(HANDS[0]), pm.getJointId(HANDS[1])
        pin.forwardKinematics(pm, self.pd, self.q)
        pA = pin.SE3(np.eye(3), HAND_POINT)
        pB = self.pd.oMi[jB].inverse() * (self.pd.oMi[jA] * pA)  # the frames coincide at q
        ctype = pin.ContactType.CONTACT_6D if kind == "6d" else pin.ContactType.CONTACT_3D
        cm = pin.RigidConstraintModel(ctype, pm, jA, pA, jB, pB, pin.ReferenceFrame.LOCAL)
        self.cms = pin.StdVec_RigidConstraintModel()
        self.cms.append(cm)
        self.cds = pin.StdVec_RigidConstraintData()
        self.cds.append(cm.createData())
        pin.initConstraintDynamics(pm, self.pd, self.cms, self.cds)
        self.prox = pin.ProximalSettings(1e-12, 0.0, 1)
        cs = ConstraintSet()
        axes = np.eye(6) if kind == "6d" else np.eye(6)[3:]
        XA = Transform(pA.rotation, pA.translation)
        XB = Transform(pB.rotation, pB.translation)
        for ax in axes:
            cs.add_loop_constraint(HANDS[0], HANDS[1], XA, XB, ax, name="hands")
        self.cs = cs.bind(self.model)
        G = constraint_jacobian(self.model, self.q, cs)
        v = rng.standard_normal(self.model.nv)
        self.v = v - np.linalg.pinv(G) @ (G @ v)  # a velocity that keeps the loop closed
        self.tau = rng.standard_normal(self.model.nv)
        self.v_pin = self.coords.v_to_pin(self.v)
        self.tau_pin = self.coords.v_to_pin(self.tau)
        self.name = f"{HUMANOID}+hands-{kind}"

    def pin_dynamics(self):
        return self.pin.constraintDynamics(self.pm, self.pd, self.q, self.v_pin, self.tau_pin, self.cms, self.cds,
                                           self.prox)

    def pin_multipliers_in_sinews_order(self):
        lam = np.array(self.pd.lambda_c, dtype=float)
        return -(np.concatenate([lam[3:], lam[:3]]) if self.kind == "6d" else lam)

    def sinews(self, method):
        return forward_dynamics_constraints(self.model, self.q, self.v, self.tau, self.cs, method=method,
                                            data=self.data)


def _chain(n: int):
    """A chain of ``n`` revolute links (0.1 m, 1 kg) whose tip is pinned (3-D loop) to the world
    point where it is at the sampled configuration.  Returns (model, cs, q, v, tau)."""
    from sinews import joints, point_position
    from sinews.constraints import ConstraintSet, constraint_jacobian
    from sinews.model import Model
    from sinews.spatial import SpatialInertia, Transform

    m = Model(gravity=(0.0, 0.0, -9.81), name=f"chain{n}")
    inertia = SpatialInertia(1.0, (0.05, 0.0, 0.0), np.diag([1e-3, 1e-3, 1e-3]))
    parent = 0
    for i in range(n):
        j = joints.RevoluteY() if i % 2 else joints.RevoluteZ()
        parent = m.add_body(parent, j, (0.1, 0.0, 0.0) if i else None, inertia, f"l{i}")
    rng = np.random.default_rng(n)
    q = 0.3 * rng.standard_normal(n)
    tip = point_position(m, q, f"l{n - 1}", (0.1, 0.0, 0.0))
    cs = ConstraintSet()
    for ax in np.eye(6)[3:]:
        cs.add_loop_constraint(0, f"l{n - 1}", Transform.translation(tip), Transform.translation((0.1, 0.0, 0.0)),
                               ax, name="tip")
    cs.bind(m)
    G = constraint_jacobian(m, q, cs)
    v = rng.standard_normal(n)
    v -= np.linalg.pinv(G) @ (G @ v)
    return m, cs, q, v, rng.standard_normal(n)


def _demo_mechanisms():
    """(name, model, cs, q, v) of the demos' four-bar and slider-crank (2 loop rows each), and
    of the same mechanisms closed as docs/loops.md teaches, by a ``pin`` loop joint
    (:mod:`sinews.loops.examples`: 5 rows of rank 2, the 3 out-of-plane rows are zero rows of
    ``G``; crank speed 2 rad/s, the other velocities solved)."""
    out = []
    from sinews.demos import fourbar, slider_crank
    from sinews.loops import ConstraintKinematicsSolver
    from sinews.loops import examples

    for name, mod in (("fourbar", fourbar), ("slider_crank", slider_crank)):
        model = mod.build_model()
        cs = mod.build_constraints(model, False)
        q, v = mod.initial_state(model, cs)[:2]
        out.append((name, model, cs, np.asarray(q, float), np.asarray(v, float)))
    for name, build in (("fourbar-pin", examples.four_bar), ("slider_crank-pin", examples.slider_crank)):
        mech = build()
        v = ConstraintKinematicsSolver(mech.model, mech.cs).solve_u(mech.q0, np.r_[2.0, np.zeros(mech.model.nv - 1)])
        out.append((name, mech.model, mech.cs.bind(mech.model), mech.q0.copy(), v.value))
    return out


def _row(model, algorithm, sinews_us, peer, peer_us):
    return {"model": model, "algorithm": algorithm, "sinews_us": round(sinews_us, 2), "peer": peer,
            "peer_us": round(peer_us, 2), "ratio": round(sinews_us / peer_us, 3)}


def run(calls: int = 1000, seed: int = 0, quick: bool = False, verbose: bool = True):
    """Check agreement, then time; returns ``(rows, problems, chain_exponent)``."""
    import sinews

    rounds = min(10, calls)
    per_round = max(1, calls // rounds)
    rows, problems = [], []
    # (a) humanoid loops vs Pinocchio
    for kind in ("6d", "3d"):
        p = HumanoidLoop(kind, seed)
        a_pin = p.coords.v_from_pin(p.pin_dynamics())
        lam_pin = p.pin_multipliers_in_sinews_order()
        for m in METHODS:
            r = p.sinews(m)
            err = max(_rel_err(r.qdd, a_pin), _rel_err(r.multipliers, lam_pin))
            if verbose:
                print(f"  agreement {p.name} {m:20s} rel. error {err:.1e}")
            if not (err <= AGREEMENT_TOL and r.converged):
                problems.append(f"{p.name} {m}: rel. error {err:.1e} vs pinocchio")
        for m in METHODS:
            t, tp = time_pair(lambda m=m: p.sinews(m), p.pin_dynamics, per_round, rounds)
            rows.append(_row(p.name, f"forward_dynamics_constraints[{m}]", t, "pinocchio.constraintDynamics", tp))
    # (b) four-bar and slider-crank vs ABA on the same tree
    for name, model, cs, q, v in _demo_mechanisms():
        data = model.data()
        tau = np.zeros(model.nv)
        ref = forward_dynamics_constraints(model, q, v, tau, cs, method="direct", data=data)
        aba = lambda model=model, q=q, v=v, tau=tau, data=data: sinews.aba(model, q, v, tau, data=data)  # noqa: E731
        for m in METHODS:
            r = forward_dynamics_constraints(model, q, v, tau, cs, method=m, data=data)
            if max(_rel_err(r.qdd, ref.qdd), _rel_err(r.multipliers, ref.multipliers)) > AGREEMENT_TOL or (
                    r.rank, r.least_squares) != (ref.rank, ref.least_squares):
                problems.append(f"{name} {m}: disagrees with direct")
            f = lambda m=m, model=model, cs=cs, q=q, v=v, tau=tau, data=data: forward_dynamics_constraints(  # noqa: E731
                model, q, v, tau, cs, method=m, data=data)
            t, ta = time_pair(f, aba, per_round, rounds)
            rows.append(_row(name, f"forward_dynamics_constraints[{m}]", t, "sinews.aba (same tree)", ta))
    # (c) chain of N links closed by one loop: TA vs direct
    sizes = [n for n in CHAIN_SIZES if not quick or n <= 100]
    ta_times = []
    for n in sizes:
        model, cs, q, v, tau = _chain(n)
        data = model.data()
        fd = {m: (lambda m=m: forward_dynamics_constraints(model, q, v, tau, cs, method=m, data=data))
              for m in ("tree_augmented", "direct")}
        r_ta, r_d = fd["tree_augmented"](), fd["direct"]()
        err = max(_rel_err(r_ta.qdd, r_d.qdd), _rel_err(r_ta.multipliers, r_d.multipliers))
        if err > AGREEMENT_TOL:
            problems.append(f"chain{n}: TA vs direct rel. error {err:.1e}")
        c = max(1, per_round * 10 // n) if n >= 50 else per_round
        t, td = time_pair(fd["tree_augmented"], fd["direct"], c, rounds)
        ta_times.append(t)
        rows.append(_row(f"chain{n}+tip-3d", "forward_dynamics_constraints[tree_augmented]", t,
                         "forward_dynamics_constraints[direct]", td))
    exponent = float(np.polyfit(np.log(sizes), np.log(ta_times), 1)[0])
    big = [i for i, n in enumerate(sizes) if n >= 50]
    if len(big) >= 2:  # without the fixed cost of a call, which dominates the small chains
        tail = float(np.polyfit(np.log([sizes[i] for i in big]), np.log([ta_times[i] for i in big]), 1)[0])
        if verbose:
            print(f"  chain: tree_augmented ~ N^{exponent:.2f} over N = {sizes[0]}..{sizes[-1]}, "
                  f"N^{tail:.2f} over N >= 50")
    slower = [r["model"] for r in rows if r["model"].startswith("chain") and int(r["model"][5:].split("+")[0]) >= 50
              and r["ratio"] >= 1.0]
    if slower and verbose:
        print(f"  note: tree_augmented not faster than direct on {', '.join(slower)}")
    return rows, problems, exponent


def print_table(rows) -> None:
    head = f"{'model':34s} {'algorithm':44s} {'sinews [us]':>11s} {'peer':38s} {'peer [us]':>10s} {'ratio':>6s}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:34s} {r['algorithm']:44s} {r['sinews_us']:11.1f} {r['peer']:38s} {r['peer_us']:10.1f} "
              f"{r['ratio']:6.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sinews.bench loops", description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON to this path")
    ap.add_argument("--quick", action="store_true", help="50 calls per timing, chains up to N = 100 (for tests)")
    ap.add_argument("--calls", type=int, default=None, help="calls per median (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    calls = args.calls if args.calls is not None else (50 if args.quick else 1000)
    if calls < 1:
        ap.error("--calls must be >= 1")
    rows, problems, exponent = run(calls=calls, seed=args.seed, quick=args.quick)
    print(f"median of {calls} calls each (chains of N >= 50: fewer), same process")
    print_table(rows)
    print(f"chain closed by one loop: tree_augmented time ~ N^{exponent:.2f}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows, "chain_exponent": round(exponent, 3)}, indent=1))
        print(f"wrote {args.json}")
    if problems:
        print("disagreements: " + "; ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
