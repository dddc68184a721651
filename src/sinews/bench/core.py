"""``python -m sinews.bench core [--json PATH] [--calls N] [--rounds R]``

Times sinews against Pinocchio (called from Python, in the same process, on identical inputs)
for RNEA, CRBA, ABA, forward kinematics with frames (vs ``framesForwardKinematics``; as a new
result, and ``forward_kinematics/out``: into the result of an earlier call), a frame
Jacobian (vs ``computeJointJacobians`` + ``getFrameJacobian``, and vs the one-shot
``computeFrameJacobian``), a point Jacobian, one frame's placement (``frame_placement``: vs
``forwardKinematics`` + ``updateFramePlacement``; ``frame_placement/ffk``: vs
``framesForwardKinematics`` + reading ``data.oMf``), the Jacobian time derivatives of a frame and
of a point (vs ``computeJointJacobiansTimeVariation`` + ``getFrameJacobianTimeVariation``), the
centre of mass and its Jacobian and the dense ``M^-1`` (vs ``computeMinverse``, which fills only
the upper triangle: sinews returns both) on Pinocchio's sample humanoid (through
``sinews.interop.from_pinocchio``), a 7-DoF arm and a 12-DoF quadruped with a free-flyer base (built in sinews and converted with ``to_pinocchio``),
and, when the optional ``example-robot-data`` package is installed, the Talos (reduced), Solo12,
Panda and UR5 URDFs (loaded with ``pinocchio.buildModelFromUrdf``, free-flyer root for Talos and
Solo12, converted with ``from_pinocchio``).

Method: for each (model, algorithm) the two libraries are timed in alternating rounds (sinews,
Pinocchio, sinews, ...), each round ``calls`` calls with ``timeit`` using the calling thread's
CPU time (``time.thread_time``, so that time stolen by other processes on a shared machine is
not counted for either library); the reported time is the median over rounds of the per-call
time (at least ``calls * rounds`` calls each, 3000 by default), and the ratio is
sinews / Pinocchio of those medians.  Results are checked for agreement before timing.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from ._timing import time_pair


def _models():
    import pinocchio as pin

    from sinews.interop import from_pinocchio, to_pinocchio
    from sinews.sample_models import arm7, quadruped12

    pm = pin.buildSampleModelHumanoid()
    yield "humanoid", from_pinocchio(pm), pm
    for build in (arm7, quadruped12):
        m = build()
        yield m.name, m, to_pinocchio(m)
    yield from robot_models()


#: Real robots from the ``example-robot-data`` package (URDF, loaded by Pinocchio): name, path
#: under its ``robots`` folder, free-flyer root.
ROBOTS = (
    ("talos", "talos_data/robots/talos_reduced.urdf", True),
    ("solo12", "solo_description/robots/solo12.urdf", True),
    ("panda", "panda_description/urdf/panda.urdf", False),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", False),
)


def robot_models():
    """(name, sinews model, Pinocchio model) for :data:`ROBOTS`; nothing (and a message) when
    the optional ``example-robot-data`` package is not installed."""
    import os

    import pinocchio as pin

    from sinews.interop import from_pinocchio
    from sinews.models import robots_dir

    root = robots_dir()
    if root is None:
        print("(example-robot-data is not installed: skipping Talos, Solo12, Panda and UR5; "
              "pip install example-robot-data)", flush=True)
        return
    for name, rel, free_flyer in ROBOTS:
        path = os.path.join(root, rel)
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if free_flyer else pin.buildModelFromUrdf(path)
        yield name, from_pinocchio(pm), pm


def run(calls: int = 200, rounds: int = 15, seed: int = 0, only=None, models=None):
    import pinocchio as pin

    import sinews
    from sinews.interop import PinocchioCoordinates

    rows = []
    for name, m, pm in _models():
        if models and name not in models:
            continue
        pd = pm.createData()
        cv = PinocchioCoordinates(m)
        rng = np.random.default_rng(seed)
        q = sinews.random_configuration(m, rng, -1.0, 1.0)
        v = rng.normal(size=m.nv)
        a = rng.normal(size=m.nv)
        vp, ap = cv.v_to_pin(v), cv.v_to_pin(a)
        tau = sinews.rnea(m, q, v, a)
        taup = cv.v_to_pin(tau)
        # the point: the last body's origin offset by 0.1 m
        body = m.bodies[-1]
        jid = pm.getJointId(body.name)
        point = np.array([0.0, 0.0, 0.1])
        fid = pm.addFrame(pin.Frame("bench_point", jid, pin.SE3(np.eye(3), point), pin.FrameType.OP_FRAME))
        pd = pm.createData()
        if "bench_point" not in m._frame_by_name:
            m.add_frame("bench_point", body.id, sinews.Transform.translation(point))

        # agreement first
        assert np.allclose(tau, cv.v_from_pin(pin.rnea(pm, pd, q, vp, ap)), atol=1e-9)
        Mp = pin.crba(pm, pd, q)
        assert np.allclose(sinews.crba(m, q), cv.matrix_from_pin(np.triu(Mp) + np.triu(Mp, 1).T), atol=1e-9)
        assert np.allclose(sinews.aba(m, q, v, tau), a, atol=1e-8)
        Jp = pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
        assert np.allclose(sinews.point_jacobian(m, q, body.id, point), cv.columns_from_pin(Jp), atol=1e-9)
        pin.framesForwardKinematics(pm, pd, q)
        fk = sinews.forward_kinematics(m, q)
        assert np.allclose(fk.frame("bench_point").R, pd.oMf[fid].rotation, atol=1e-9)
        assert np.allclose(fk.frame("bench_point").p, pd.oMf[fid].translation, atol=1e-9)
        assert sinews.forward_kinematics(m, q, out=fk) is fk
        assert sinews.forward_kinematics(m, q, out=fk) is fk  # (its own buffer made on first use)
        assert np.allclose(fk.frame("bench_point").p, pd.oMf[fid].translation, atol=1e-9)
        for ours_ref, pin_ref in (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)):
            Jp = pin.computeFrameJacobian(pm, pd, q, fid, pin_ref)
            J = sinews.frame_jacobian(m, q, "bench_point", ours_ref)
            assert np.allclose(J, cv.rows6_from_pin(cv.columns_from_pin(Jp)), atol=1e-9)
        Mi = pin.computeMinverse(pm, pd, q)
        Mi = np.triu(Mi) + np.triu(Mi, 1).T
        assert np.allclose(sinews.minverse(m, q), cv.matrix_from_pin(Mi), atol=1e-9)
        assert np.allclose(sinews.com_jacobian(m, q), cv.columns_from_pin(pin.jacobianCenterOfMass(pm, pd, q)), atol=1e-9)
        pin.computeJointJacobiansTimeVariation(pm, pd, q, vp)
        for ours_ref, pin_ref in (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)):
            dJp = cv.rows6_from_pin(cv.columns_from_pin(pin.getFrameJacobianTimeVariation(pm, pd, fid, pin_ref)))
            assert np.allclose(sinews.frame_jacobian_time_variation(m, q, v, "bench_point", ours_ref), dJp, atol=1e-9)
        assert np.allclose(sinews.point_jacobian_time_variation(m, q, v, body.id, point), dJp[3:], atol=1e-9)
        pin.forwardKinematics(pm, pd, q)
        assert np.allclose(sinews.frame_placement(m, q, "bench_point").p, pin.updateFramePlacement(pm, pd, fid).translation, atol=1e-9)
        assert np.allclose(sinews.center_of_mass(m, q), pin.centerOfMass(pm, pd, q), atol=1e-9)

        def pin_frame_placement():
            pin.forwardKinematics(pm, pd, q)
            return pin.updateFramePlacement(pm, pd, fid)

        def pin_frames_then_read():
            pin.framesForwardKinematics(pm, pd, q)
            return pd.oMf[fid]

        def pin_frame_dj():
            pin.computeJointJacobiansTimeVariation(pm, pd, q, vp)
            return pin.getFrameJacobianTimeVariation(pm, pd, fid, pin.LOCAL)

        def pin_point_dj():
            pin.computeJointJacobiansTimeVariation(pm, pd, q, vp)
            return pin.getFrameJacobianTimeVariation(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)

        def pin_joint_jacobians_then_frame():
            pin.computeJointJacobians(pm, pd, q)
            return pin.getFrameJacobian(pm, pd, fid, pin.LOCAL)

        cases = [
            ("rnea", lambda: sinews.rnea(m, q, v, a), lambda: pin.rnea(pm, pd, q, vp, ap)),
            ("crba", lambda: sinews.crba(m, q), lambda: pin.crba(pm, pd, q)),
            ("aba", lambda: sinews.aba(m, q, v, tau), lambda: pin.aba(pm, pd, q, vp, taup)),
            (
                "point_jacobian",
                lambda: sinews.point_jacobian(m, q, body.id, point),
                lambda: pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL_WORLD_ALIGNED),
            ),
            ("forward_kinematics", lambda: sinews.forward_kinematics(m, q), lambda: pin.framesForwardKinematics(pm, pd, q)),
            (
                "forward_kinematics/out",  # into a result of an earlier call, as Pinocchio into its data
                lambda: sinews.forward_kinematics(m, q, out=fk),
                lambda: pin.framesForwardKinematics(pm, pd, q),
            ),
            ("frame_jacobian/jj", lambda: sinews.frame_jacobian(m, q, "bench_point"), pin_joint_jacobians_then_frame),
            (
                "frame_jacobian/cf",
                lambda: sinews.frame_jacobian(m, q, "bench_point"),
                lambda: pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL),
            ),
            ("frame_placement", lambda: sinews.frame_placement(m, q, "bench_point"), pin_frame_placement),
            ("frame_placement/ffk", lambda: sinews.frame_placement(m, q, "bench_point"), pin_frames_then_read),
            ("frame_jacobian_dt", lambda: sinews.frame_jacobian_time_variation(m, q, v, "bench_point"), pin_frame_dj),
            ("point_jacobian_dt", lambda: sinews.point_jacobian_time_variation(m, q, v, body.id, point), pin_point_dj),
            ("center_of_mass", lambda: sinews.center_of_mass(m, q), lambda: pin.centerOfMass(pm, pd, q)),
            ("com_jacobian", lambda: sinews.com_jacobian(m, q), lambda: pin.jacobianCenterOfMass(pm, pd, q)),
            ("minverse", lambda: sinews.minverse(m, q), lambda: pin.computeMinverse(pm, pd, q)),
        ]
        for algo, f_ours, f_peer in cases:
            if only and algo not in only:
                continue
            ours, peer = time_pair(f_ours, f_peer, calls, rounds)
            rows.append(
                {
                    "model": name,
                    "algorithm": algo,
                    "sinews_us": round(ours, 3),
                    "peer": "pinocchio " + pin.__version__,
                    "peer_us": round(peer, 3),
                    "ratio": round(ours / peer, 3),
                }
            )
            print(f"{name:12s} {algo:18s} sinews {ours:8.2f} us   pinocchio {peer:8.2f} us   ratio {ours / peer:5.2f}", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m sinews.bench core", description=__doc__.split("\n\n")[1])
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    parser.add_argument("--calls", type=int, default=200, help="calls per timing round (default 200)")
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds (default 15)")
    parser.add_argument("--only", nargs="+", metavar="ALGO", help="time only these algorithms (e.g. minverse)")
    parser.add_argument("--models", nargs="+", metavar="MODEL", help="time only these models (e.g. ur5 panda)")
    args = parser.parse_args(argv)
    if args.calls < 1 or args.rounds < 1:
        parser.error("--calls and --rounds must be positive")
    import sinews

    sinews.warmup()
    print(f"sinews core benchmark: median of {args.rounds} alternating rounds x {args.calls} calls", flush=True)
    rows = run(args.calls, args.rounds, only=args.only, models=args.models)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows}, fh, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
