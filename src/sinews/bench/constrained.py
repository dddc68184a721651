"""``python -m sinews.bench constrained``: forward dynamics with constraints and constraint
impulses, sinews against Pinocchio.

Problem: Pinocchio's sample humanoid (``pin.buildSampleModelHumanoid()``: free-flyer + 28
revolute joints, nq = 35, nv = 34), converted with :func:`sinews.interop.from_pinocchio`, with 4
point contacts (3-D, 12 rows) on the hands and feet (a point 0.1 m along each wrist body's z
axis).  The same random state (q, v, tau; v and tau permuted between the two free-flyer
velocity orderings with :class:`sinews.interop.PinocchioCoordinates`) is given to

* sinews :func:`sinews.constraints.forward_dynamics_constraints` with each method vs
  ``pin.constraintDynamics`` (``CONTACT_3D`` constraints in ``LOCAL_WORLD_ALIGNED`` axes, no
  Baumgarte corrector, ``ProximalSettings(mu=0)``: the exact KKT solution);
* sinews :func:`sinews.constraints.compute_constraint_impulses` with each method vs
  ``pin.impulseDynamics`` (restitution 0, mu = 0).

Before any timing, the bench checks that every sinews method reproduces Pinocchio's
accelerations (resp. post-impact velocities) and contact forces (resp. impulses) to 1e-8
relative; a disagreement is printed and makes the exit code 1.  Each sinews method is timed
against Pinocchio in 10 alternating rounds of ``--calls``/10 calls (default 1000 calls in all;
``--quick``: 50) with the thread's CPU time (``sinews.bench._timing.time_pair``), in this
process, with a reused workspace on both sides (sinews ``data=``, Pinocchio ``Data``); the
medians per call are reported and ``ratio`` = sinews_us / peer_us.

Methods (every one is reported; the ``path`` column of the printed table says which code runs):
``direct``, ``range_space_sparse`` and ``null_space`` take the one-call compiled path of
contacts-only sets (:mod:`sinews.constraints._compiled_contacts`: ``direct`` by block
elimination of the KKT system, ``null_space`` by an in-kernel pivoted QR of ``G^T``);
``kokkevis`` (forward dynamics only) takes the general path.

Options: ``--json PATH`` writes ``{"rows": [{"model", "algorithm", "sinews_us", "peer",
"peer_us", "ratio"}]}``; ``--quick``; ``--calls N``; ``--seed S``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from sinews.constraints import compute_constraint_impulses, forward_dynamics_constraints

from ._timing import time_pair

MODEL_NAME = "pinocchio-sample-humanoid"
CONTACT_BODIES = ("rleg_wrist2_joint", "lleg_wrist2_joint", "rarm_wrist2_joint", "larm_wrist2_joint")
CONTACT_POINT = np.array([0.0, 0.0, 0.1])
AGREEMENT_TOL = 1e-8


class Problem:
    """The humanoid with 4 point contacts, in both libraries, at one random state."""

    def __init__(self, seed: int = 0):
        import pinocchio as pin

        import sinews
        from sinews.constraints import ConstraintSet
        from sinews.interop import PinocchioCoordinates, from_pinocchio

        self.pin = pin
        pm = pin.buildSampleModelHumanoid()
        self.pm, self.pd = pm, pm.createData()
        self.model = from_pinocchio(pm)
        self.data = self.model.data()
        self.coords = PinocchioCoordinates(self.model)

        cs = ConstraintSet()
        cms = pin.StdVec_RigidConstraintModel()
        for name in CONTACT_BODIES:
            for k, normal in enumerate(np.eye(3)):
                cs.add_contact_constraint(name, CONTACT_POINT, normal, name=name if k == 0 else None)
            cms.append(
                pin.RigidConstraintModel(
                    pin.ContactType.CONTACT_3D,
                    pm,
                    pm.getJointId(name),
                    pin.SE3(np.eye(3), CONTACT_POINT),
                    pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
                )
            )
        self.cs = cs.bind(self.model)
        self.cms = cms
        self.cds = pin.StdVec_RigidConstraintData()
        for cm in cms:
            self.cds.append(cm.createData())
        pin.initConstraintDynamics(pm, self.pd, cms, self.cds)
        self.prox = pin.ProximalSettings(1e-12, 0.0, 1)

        rng = np.random.default_rng(seed)
        self.q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        self.v_pin = rng.standard_normal(pm.nv)
        self.tau_pin = rng.standard_normal(pm.nv)
        self.v = self.coords.v_from_pin(self.v_pin)
        self.tau = self.coords.v_from_pin(self.tau_pin)
        # same configuration: the contact points coincide in both libraries
        for name, cm in zip(CONTACT_BODIES, cms):
            p_sin = sinews.point_position(self.model, self.q, name, CONTACT_POINT)
            pin.forwardKinematics(pm, self.pd, self.q)
            oMc = self.pd.oMi[cm.joint1_id] * cm.joint1_placement
            if not np.allclose(p_sin, oMc.translation, atol=1e-12):
                raise RuntimeError(f"contact point of {name} differs between sinews and Pinocchio")

    # ---------------------------------------------------------------- Pinocchio
    def pin_dynamics(self):
        a = self.pin.constraintDynamics(self.pm, self.pd, self.q, self.v_pin, self.tau_pin, self.cms, self.cds, self.prox)
        return a, self.pd.lambda_c

    def pin_impulses(self):
        vp = self.pin.impulseDynamics(self.pm, self.pd, self.q, self.v_pin, self.cms, self.cds, 0.0, self.prox)
        return vp, self.pd.impulse_c

    # ---------------------------------------------------------------- sinews
    def sinews_dynamics(self, method):
        return forward_dynamics_constraints(self.model, self.q, self.v, self.tau, self.cs, method=method, data=self.data)

    def sinews_impulses(self, method):
        return compute_constraint_impulses(self.model, self.q, self.v, self.cs, method=method, data=self.data)


def _rel_err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def check_agreement(p: Problem) -> list[tuple[str, float, bool]]:
    """(algorithm, relative error, ok) for every sinews method against Pinocchio."""
    from sinews.constraints import IMPULSE_METHODS, METHODS

    out = []
    a_pin, lam_pin = p.pin_dynamics()
    a_pin = p.coords.v_from_pin(a_pin)
    lam_pin = np.array(lam_pin, dtype=float)
    for m in METHODS:
        r = p.sinews_dynamics(m)
        err = max(_rel_err(r.qdd, a_pin), _rel_err(r.multipliers, lam_pin))
        out.append((f"forward_dynamics_constraints[{m}]", err, bool(err <= AGREEMENT_TOL and r.converged)))
    vp_pin, imp_pin = p.pin_impulses()
    vp_pin = p.coords.v_from_pin(vp_pin)
    imp_pin = np.array(imp_pin, dtype=float)
    for m in IMPULSE_METHODS:
        r = p.sinews_impulses(m)
        err = max(_rel_err(r.qd_plus, vp_pin), _rel_err(r.impulses, imp_pin))
        out.append((f"impulses[{m}]", err, bool(err <= AGREEMENT_TOL and r.converged)))
    return out


def run(calls: int = 1000, seed: int = 0, verbose: bool = True):
    """Check agreement, then time every pair; returns (rows, agreement list)."""
    from sinews.constraints import IMPULSE_METHODS, METHODS

    p = Problem(seed)
    agreement = check_agreement(p)
    if verbose:
        print(f"{MODEL_NAME}: nq = {p.model.nq}, nv = {p.model.nv}, {p.cs.size} constraint rows (4 point contacts)")
        for name, err, ok in agreement:
            print(f"  agreement {name:48s} rel. error {err:.1e}  {'ok' if ok else 'DISAGREES'}")
    rows = []
    rounds = min(10, calls)
    per_round = max(1, calls // rounds)
    for m in METHODS:
        t, pin_fd = time_pair(lambda m=m: p.sinews_dynamics(m), p.pin_dynamics, per_round, rounds)
        rows.append(_row(f"forward_dynamics_constraints[{m}]", t, "pinocchio.constraintDynamics", pin_fd))
    for m in IMPULSE_METHODS:
        t, pin_imp = time_pair(lambda m=m: p.sinews_impulses(m), p.pin_impulses, per_round, rounds)
        rows.append(_row(f"impulses[{m}]", t, "pinocchio.impulseDynamics", pin_imp))
    return rows, agreement


def method_paths(p: Problem) -> dict:
    """``{algorithm: "compiled" | "general"}``: whether the method's call on the problem is
    one compiled kernel call (the compiled contacts path solved it) or the general path."""
    from sinews.constraints import IMPULSE_METHODS, METHODS
    from sinews.constraints.forward_dynamics import COMPILED_METHODS

    fast = p.cs._compiled
    out = {}
    for m in METHODS:
        ok = m in COMPILED_METHODS and fast is not None and fast.dynamics(p.q, p.v, p.tau, None, p.data, m) is not None
        out[f"forward_dynamics_constraints[{m}]"] = "compiled" if ok else "general"
    for m in IMPULSE_METHODS:
        ok = m in COMPILED_METHODS and fast is not None and fast.impulses(p.q, p.v, None, p.data, m) is not None
        out[f"impulses[{m}]"] = "compiled" if ok else "general"
    return out


def _row(algorithm, sinews_us, peer, peer_us):
    return {
        "model": MODEL_NAME,
        "algorithm": algorithm,
        "sinews_us": round(sinews_us, 2),
        "peer": peer,
        "peer_us": round(peer_us, 2),
        "ratio": round(sinews_us / peer_us, 3),
    }


def print_table(rows, paths=None) -> None:
    """The rows as a table; ``paths`` (:func:`method_paths`) adds the ``path`` column."""
    paths = paths or {}
    head = f"{'algorithm':48s} {'path':9s} {'sinews [us]':>12s} {'peer':30s} {'peer [us]':>10s} {'ratio':>7s}"
    print(head)
    print("-" * len(head))
    for r in rows:
        path = paths.get(r["algorithm"], "")
        print(f"{r['algorithm']:48s} {path:9s} {r['sinews_us']:12.1f} {r['peer']:30s} {r['peer_us']:10.1f} "
              f"{r['ratio']:7.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sinews.bench constrained", description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON to this path")
    ap.add_argument("--quick", action="store_true", help="50 calls per timing (for tests)")
    ap.add_argument("--calls", type=int, default=None, help="calls per median (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    calls = args.calls if args.calls is not None else (50 if args.quick else 1000)
    if calls < 1:
        ap.error("--calls must be >= 1")
    rows, agreement = run(calls=calls, seed=args.seed)
    print(f"median of {calls} calls each, same process")
    print_table(rows, method_paths(Problem(args.seed)))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows}, indent=1))
        print(f"wrote {args.json}")
    bad = [name for name, _, ok in agreement if not ok]
    if bad:
        print("results disagree with Pinocchio: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
