"""Cold start: ``import sinews`` is cheap (no Numba, no SciPy) and its lazy names resolve.

Each check runs in a fresh interpreter, since this process has long since imported everything.
The checks look at ``sys.modules``, never at timings (those are in ``python -m sinews.bench
coldstart`` and ``docs/cold-start.md``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def run_fresh(code: str, prelude: str = "") -> dict:
    """Run ``prelude`` then ``code`` (dedented) in a fresh interpreter; the JSON of its last line."""
    proc = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


HEAVY = ("numba", "scipy", "llvmlite")

#: Prepended to a child script: ``signatures(own=True)``, the compiled signatures (sorted) of
#: every Numba dispatcher in the sinews modules (with ``own``, only those of sinews functions),
#: and ``bound(entries)``, which of the native entry points ``(module, global)`` are bound.
PROBES = """
import sys
from numba.core.registry import CPUDispatcher


def signatures(own=True):
    found = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith("sinews") or mod is None:
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, CPUDispatcher) and (not own or obj.py_func.__module__.startswith("sinews")):
                key = obj.py_func.__module__ + "." + obj.py_func.__qualname__
                found[key] = sorted(str(s) for s in obj.signatures)
    return found


def bound(entries):
    from sinews import _native

    return [name for mod, name in entries if not isinstance(vars(sys.modules["sinews." + mod])[name], _native.Entry)]
"""


def test_import_sinews_imports_neither_numba_nor_scipy():
    out = run_fresh(
        """
        import json, sys
        import sinews
        print(json.dumps({
            "heavy": sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "scipy", "llvmlite")),
            "submodules": sorted(m for m in sys.modules if m.startswith("sinews.")),
        }))
        """
    )
    assert out["heavy"] == [], out["heavy"]
    assert out["submodules"] == [], out["submodules"]


def test_model_building_does_not_import_numba():
    out = run_fresh(
        """
        import json, sys
        import sinews
        from sinews.sample_models import arm7
        m = arm7()
        print(json.dumps({"heavy": sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "scipy"))}))
        """
    )
    assert out["heavy"] == []


def test_lazy_attributes_resolve():
    out = run_fresh(
        """
        import inspect, json, sys, types
        import sinews
        names = {}
        for name in sinews.__all__:
            obj = getattr(sinews, name)
            names[name] = "module" if isinstance(obj, types.ModuleType) else type(obj).__name__
        from sinews import aba, Model, Transform
        import sinews.aba, sinews.crba, sinews.rnea, sinews.simulate
        print(json.dumps({
            "names": names,
            "dir_has_all": set(sinews.__all__) <= set(dir(sinews)),
            "same": aba is sinews.aba and Model is sinews.model.Model and Transform is sinews.spatial.Transform,
            "functions": [inspect.isfunction(getattr(sinews, n)) for n in ("aba", "crba", "rnea", "simulate")],
            "kernels": hasattr(sinews._kernels, "aba"),
            "lagrangian_scipy_linalg": "scipy.linalg" in sys.modules,
        }))
        """
    )
    assert out["dir_has_all"] and out["same"] and out["kernels"]
    assert out["functions"] == [True] * 4
    assert out["names"]["joints"] == out["names"]["spatial"] == "module"
    assert out["names"]["Model"] == "type" and out["names"]["aba"] == "function"
    assert not out["lagrangian_scipy_linalg"]  # SciPy's linalg waits for the first Lagrangian call


@pytest.mark.parametrize("first", ["sinews.aba", "sinews.crba", "sinews.rnea", "sinews.simulate", "sinews.minv"])
def test_importing_a_submodule_first_keeps_the_function(first):
    # importing the submodule binds it to the package attribute: the function must win
    out = run_fresh(
        f"""
        import inspect, json
        import {first}
        import sinews
        print(json.dumps([inspect.isfunction(getattr(sinews, n)) for n in ("aba", "crba", "rnea", "simulate")]))
        """
    )
    assert out == [True] * 4


@pytest.mark.parametrize("name, bad", [("processes", 0), ("processes", -2), ("processes", 1.5), ("processes", True),
                                       ("processes", "2"), ("simulation", 1), ("constraints", "yes"), ("batch", None)])
def test_warmup_refuses_bad_arguments_before_compiling(name, bad):
    import sinews

    with pytest.raises(ValueError, match=f"^{name}: expected"):
        sinews.warmup(**{name: bad})


def test_warmup_takes_a_numpy_integer_for_processes():
    import numpy as np

    import sinews

    sinews.warmup(processes=np.int64(1))  # the cache is warm here: loads only


def test_unknown_attribute_raises_attribute_error():
    import sinews

    with pytest.raises(AttributeError, match="no_such_name"):
        sinews.no_such_name  # noqa: B018
    assert not hasattr(sinews, "no_such_name")



#: Prepended to a child script: ``QUADRUPED_ON_GROUND``, code that builds ``m`` (quadruped12),
#: ``scene`` (ground, a box on the trunk, a sphere on every other body) and ``q`` (placed on the
#: ground), for ``exec`` after the warm-up (so that its imports come after it).
SCENE = '''
QUADRUPED_ON_GROUND = """
import sinews
from sinews.geometry import Box, Sphere
from sinews.sample_models import quadruped12
from sinews.sim import Scene, simulate
from sinews.sim.scenes_io import place_on_ground

m = quadruped12()
scene = Scene(m)
scene.add_ground()
scene.add_geometry(1, Box([0.3, 0.2, 0.1]))
for b in range(2, m.nbodies):
    scene.add_geometry(b, Sphere(0.02))
q = place_on_ground(scene, sinews.neutral(m), clearance=-1e-3)
"""
'''


def test_warmup_simulation_covers_the_default_steppers_kernels():
    """After ``warmup_simulation()``, placing a floating robot on the ground and two steps of the
    default stepper compile nothing: no kernel they call (the fused step kernel, aba, crba,
    minverse, joint pass, placements, body Jacobian, integrate, energy, the FCLib PGS kernel and
    its careful checker, the collision kernels) gets a new signature.  A new signature
    here is a duplicated specialisation (a literal, a layout or a dtype that the warm-up's public
    path does not use), which costs seconds of compilation on a cold start."""
    out = run_fresh(
        """
        import json
        import numpy as np
        from sinews._warmup import warmup_simulation

        warmup_simulation(processes=1)
        before = signatures(own=False)
        bound = bound((("aba", "_ABA"), ("crba", "_CRBA"), ("minv", "_MINV")))
        import sinews
        exec(QUADRUPED_ON_GROUND)  # m, scene, q
        res = simulate(scene, q, np.zeros(m.nv), 2e-3, 1e-3, progress=False)
        after = signatures(own=False)
        grew = sorted(k for k in after if set(after[k]) - set(before.get(k, ())))
        print(json.dumps({"grew": grew, "contacts": int(res.num_contacts.max()), "entries_bound": bound,
                          "warm": sorted(k for k in before if before[k])}))
        """,
        PROBES + SCENE,
    )
    assert out["contacts"] > 0  # the contact path ran
    for kernel in ("sinews._joint_pass.joint_pass", "sinews.contact._fc3d_pgs.pgs_kernel",
                   "sinews.sim._step_kernels.coulomb_step"):
        assert kernel in out["warm"], kernel
    assert out["entries_bound"] == ["_ABA", "_CRBA", "_MINV"]  # the public fast paths' entry points
    assert out["grew"] == [], out["grew"]


def test_warmup_steppers_covers_the_lcp_and_impulse_steppers():
    """After ``warmup_simulation()`` and ``warmup_steppers()``, a floating robot on the ground
    stepped by ``"lcp"`` and by ``"impulse"`` compiles nothing (Lemke's pivot rule was compiled
    four times, once per literal ``0``/``True``/``False`` argument, before its call sites passed
    typed values)."""
    out = run_fresh(
        """
        import json
        import numpy as np
        from sinews._warmup import warmup_simulation, warmup_steppers

        warmup_simulation(processes=1)
        warmup_steppers(processes=1)
        before = signatures(own=False)
        import sinews
        exec(QUADRUPED_ON_GROUND)  # m, scene, q
        contacts = [int(simulate(scene, q, np.zeros(m.nv), 2e-3, 1e-3, stepper=name, progress=False)
                        .num_contacts.max()) for name in ("lcp", "impulse")]
        after = signatures(own=False)
        grew = sorted(k for k in after if set(after[k]) - set(before.get(k, ())))
        print(json.dumps({"grew": grew, "contacts": contacts, "warm": sorted(k for k in before if before[k])}))
        """,
        PROBES + SCENE,
    )
    assert min(out["contacts"]) > 0  # the contact paths ran
    assert "sinews.lcp.lemke._lemke_kernel" in out["warm"]
    assert out["grew"] == [], out["grew"]


def test_warmup_batch_and_contact_solvers_leave_nothing_to_load():
    """After ``warmup_batch()`` and ``warmup_steppers()`` (in one process), :mod:`sinews.batch` on
    200 states of a quadruped (the parallel driver) and the contact solvers on other problems
    (FCLib PGS on a sparse W, Simbody's PGS and PLUS) neither compile nor even load a kernel:
    Numba's cache log (``NUMBA_DEBUG_CACHE``, printed) is silent after the warm-ups.  (Kernels
    built as closures, like the batch ones, are not module attributes: the log sees them.)"""
    out = run_fresh(
        """
        import os
        os.environ["NUMBA_DEBUG_CACHE"] = "1"
        import contextlib, io, json
        import numpy as np
        import scipy.sparse as sp
        from sinews._warmup import warmup_batch, warmup_steppers

        warmup_batch()
        warmup_steppers(processes=1)
        import sinews, sinews.batch
        from sinews.contact import fclib
        from sinews.contact.impulse_solver import PGSImpulseSolver, PLUSImpulseSolver, UniContactRT
        from sinews.sample_models import quadruped12

        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            model = quadruped12()
            rng = np.random.default_rng(0)
            q = np.array([sinews.random_configuration(model, rng) for _ in range(200)])
            v = rng.normal(size=(200, model.nv))
            sinews.batch.aba(model, q, v, v); sinews.batch.rnea(model, q, v, v); sinews.batch.crba(model, q)
            sinews.batch.forward_kinematics(model, q); sinews.batch.center_of_mass(model, q)
            sinews.batch.point_jacobian(model, q, "FL_shank", (0.0, 0.0, -0.25))
            W = sp.random(9, 9, density=0.3, random_state=1)
            W = sp.csr_matrix(W @ W.T + 3 * sp.eye(9))
            problem = fclib.FrictionContactProblem(W, rng.normal(size=9), np.array([0.5, 0.8, 0.3]))
            res = fclib.solve(problem, tol=1e-8, max_iter=2000, W=problem.W)
            for solver in (PLUSImpulseSolver(), PGSImpulseSolver()):
                contact = UniContactRT(normal=0, friction=(1, 2), eff_mu=0.3)
                solver.solve(0, None, np.eye(3), None, (), None, np.array([-1.0, 0.2, 0.1]), None,
                             uni_contact=[contact])
        print(json.dumps({"log": [l for l in log.getvalue().splitlines() if l.startswith("[cache]")],
                          "iterations": int(res.iterations)}))
        """
    )
    assert out["iterations"] > 0  # the sparse PGS ran
    assert out["log"] == [], out["log"][:6]


def test_warmup_constrained_covers_the_compiled_constrained_dynamics():
    """After ``warmup_constrained()``, a program's constrained dynamics on its own robots (a
    contacts-only set by every compiled method, with impulses; a mixed set with loop-closure,
    contact and coordinate rows by every method of the mixed lane) add no signature to any
    kernel: the wheel's pre-built cache (setup.py) then holds everything those calls need."""
    out = run_fresh(
        """
        import json
        import numpy as np
        from sinews._warmup import warmup_constrained

        warmup_constrained(processes=1)
        before = signatures(own=False)
        import sinews
        from sinews import Transform
        from sinews.constraints import ConstraintSet, compute_constraint_impulses, forward_dynamics_constraints
        from sinews.constraints.forward_dynamics import COMPILED_METHODS, MIXED_METHODS
        from sinews.sample_models import arm7, quadruped12

        lanes = []
        for make in (arm7, quadruped12):
            m = make()
            q, v = sinews.neutral(m), np.zeros(m.nv)
            b = m.nbodies - 1
            cs = ConstraintSet()
            for n in ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]):
                cs.add_contact_constraint(b, [0.0, 0.0, 0.1], n)
            mx = ConstraintSet()
            mx.add_loop_constraint(b - 1, b, Transform.identity(), Transform.translation([0.0, 0.0, 0.1]),
                                   [0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
            mx.add_contact_constraint(b - 2, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
            mx.add_coordinate_constraint(b - 1, b - 2, 0.5)
            for _ in range(2):
                for method in COMPILED_METHODS:
                    forward_dynamics_constraints(m, q, v, v, cs, method=method)
                    compute_constraint_impulses(m, q, v, cs, method=method)
                for method in MIXED_METHODS:
                    forward_dynamics_constraints(m, q, v, v, mx, method=method)
                    lanes.append(m._tls.fd_lane[1])
        after = signatures(own=False)
        grew = sorted(k for k in after if set(after[k]) - set(before.get(k, ())))
        print(json.dumps({"grew": grew, "lanes": sorted(set(lanes)), "warm": sorted(k for k in before if before[k])}))
        """,
        PROBES,
    )
    for kernel in ("sinews.constraints._fast_range_space.contact_range_space",
                   "sinews.constraints._fast_null_space.contact_null_space",
                   "sinews.constraints._mixed_kernels.mixed_range_space", "sinews.constraints._ta_kernels.tree_augmented"):
        assert kernel in out["warm"], kernel
    assert out["lanes"] == sorted(("direct", "range_space_sparse", "tree_augmented"))  # the mixed lane ran
    assert out["grew"] == [], out["grew"]


def test_warmup_compiles_each_core_kernel_once_without_literal_specialisations():
    """``sinews.warmup()`` (in one process) compiles every core kernel for one signature, and
    leaves nothing to compile: a program's later calls (a new model's checked first call, then
    the fast path's entry kernels) add no signature to any kernel.  A kernel called from
    another kernel with a bare integer (``f(x, 2)``) is typed ``Literal[int](2)`` and compiled
    again beside its ``int64`` version: for the joint pass that is 4 s of cold start per literal
    (pass ``np.int64(2)``)."""
    out = run_fresh(
        """
        import json
        import sinews

        sinews.warmup(processes=1)
        found = signatures()
        bound = bound((("rnea", "_RNEA"), ("aba", "_ABA"), ("crba", "_CRBA"), ("minv", "_MINV")))
        # a program's own calls after the warm-up: a new model (its first call takes the checked
        # path), then the fast path's entry kernels, for every core algorithm
        import numpy as np
        from sinews.sample_models import arm7, quadruped12

        for make in (arm7, quadruped12):
            m = make()
            m.add_frame("warm_tip", m.nbodies - 1)
            q, v = sinews.neutral(m), np.zeros(m.nv)
            F = np.zeros((m.nbodies, 6))
            b = m.nbodies - 1
            for _ in range(2):
                sinews.aba(m, q, v, v); sinews.aba(m, q, v, v, F); sinews.rnea(m, q, v, v)
                sinews.rnea(m, q, v, v, F); sinews.crba(m, q); sinews.minverse(m, q); sinews.minv_times(m, q, v)
                sinews.ltl_factor(m, sinews.crba(m, q)).solve(v)
                sinews.forward_kinematics(m, q); sinews.body_placement(m, q, b); sinews.frame_placement(m, q, "warm_tip")
                sinews.point_jacobian(m, q, b); sinews.point_jacobian_6d(m, q, b); sinews.body_jacobian(m, q, b)
                sinews.frame_jacobian(m, q, "warm_tip"); sinews.frame_jacobian_time_variation(m, q, v, "warm_tip")
                sinews.point_jacobian_time_variation(m, q, v, b); sinews.center_of_mass(m, q)
                sinews.com_velocity(m, q, v); sinews.com_jacobian(m, q); sinews.kinetic_energy(m, q, v)
                sinews.mechanical_energy(m, q, v); sinews.normalize(m, sinews.integrate(m, q, v, 0.1))
        after = signatures()
        grew = sorted(k for k in after if set(after[k]) - set(found.get(k, ())))
        print(json.dumps({"found": found, "grew": grew, "bound": bound}))
        """,
        PROBES,
    )
    found = out["found"]
    assert len(found) > 20  # the core kernels were reached
    assert out["bound"] == ["_RNEA", "_ABA", "_CRBA", "_MINV"]  # the fast paths' entry points (sinews._native)
    literal = {k: s for k, s in found.items() if any("Literal" in x for x in s)}
    assert literal == {}, literal
    twice = {k: s for k, s in found.items() if len(s) > 1}
    assert twice == {}, twice
    # nothing is left to compile: no kernel a later call uses gets a new signature
    assert out["grew"] == [], out["grew"]


def test_warmup_plan_shares_every_group_out_once():
    """The core groups are shared out between this process and the children: each exactly
    once; this process starts with the joint pass ("rnea"); a child runs the groups that do not
    need the joint pass first (it waits for this process to cache it)."""
    from sinews import _warmup

    for processes in range(1, len(_warmup._CORE) + 1):
        plan = _warmup._plan(processes)
        assert len(plan) == processes
        assert sorted(n for names in plan for n in names) == sorted(_warmup._CORE)
        assert plan[0][0] == "rnea"
        for names in plan[1:]:
            needs = [_warmup._CORE[n][2] for n in names]
            assert needs == sorted(needs)  # jp-free (False) first
    assert set(_warmup.GROUPS) == {group for group, _, _ in _warmup._CORE.values()}
