"""The one-call compiled range-space path of contacts-only sets
(:mod:`sinews.constraints._compiled_contacts`): it must give the numbers of the general path and
of Kokkevis (test forces through the ABA, a different algorithm) for every layout it packs —
points with 1, 2 or 3 normals, several points on one link, points on the floating base, points
sharing part of their support chain — with external forces, Baumgarte terms and targets, and
fall back to the general path's diagnosis for singular sets."""

import numpy as np
import pytest

import sinews
from sinews import Model, SpatialInertia, Transform, joints
from sinews.constraints import (
    IMPULSE_METHODS,
    ConstraintSet,
    compute_constraint_impulses,
    constraint_gamma,
    constraint_jacobian,
    forward_dynamics_constraints,
)
from sinews.sample_models import quadruped12, random_tree

TOL = 1e-9


def _humanoid_like(rng):
    """Free-flyer base with a spine and four limbs of different lengths."""
    m = Model(gravity=(0, 0, -9.81))

    def inertia():
        return SpatialInertia(rng.uniform(0.5, 2), rng.normal(size=3) * 0.1, np.diag(rng.uniform(0.6, 1.0, 3)))

    base = m.add_body(0, joints.FreeFlyer(), None, inertia(), "base")
    chest = m.add_body(base, joints.RevoluteZ(), (0, 0, 0.3), inertia(), "chest")
    chest2 = m.add_body(chest, joints.RevoluteY(), (0, 0, 0.2), inertia(), "chest2")
    for side, y in (("l", 0.2), ("r", -0.2)):
        parent = chest2
        for k, jt in enumerate((joints.RevoluteX(), joints.RevoluteY(), joints.Spherical())):
            parent = m.add_body(parent, jt, (0, y if k == 0 else 0, -0.25), inertia(), f"{side}arm{k}")
        parent = base
        for k, jt in enumerate((joints.RevoluteZ(), joints.RevoluteX(), joints.RevoluteY(), joints.PrismaticZ())):
            parent = m.add_body(parent, jt, (0, y if k == 0 else 0, -0.3), inertia(), f"{side}leg{k}")
    return m


def _state(m, rng):
    q = sinews.random_configuration(m, rng)
    return q, rng.normal(size=m.nv), rng.normal(size=m.nv)


def _check_against_reference(m, cs, q, v, tau, f_ext=None, target=None):
    """range_space_sparse (compiled) vs direct and kokkevis (general path), dynamics and
    impulses, qdd and multipliers."""
    assert cs._compiled is not None, "the set should take the compiled path"
    fast = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse", f_ext=f_ext)
    G = constraint_jacobian(m, q, cs)
    gamma = constraint_gamma(m, q, v, cs)
    for method in ("direct", "kokkevis"):
        ref = forward_dynamics_constraints(m, q, v, tau, cs, method=method, f_ext=f_ext)
        np.testing.assert_allclose(fast.qdd, ref.qdd, atol=TOL, rtol=0)
        np.testing.assert_allclose(fast.multipliers, ref.multipliers, atol=TOL, rtol=0)
    assert fast.converged and not fast.least_squares and fast.rank == cs.size
    if not any(g.baumgarte_enabled for g in cs):
        np.testing.assert_allclose(G @ fast.qdd, gamma, atol=1e-9)
    assert fast.constraint_residual < 1e-9
    imp = compute_constraint_impulses(m, q, v, cs, method="range_space_sparse", target_velocity=target)
    ref = compute_constraint_impulses(m, q, v, cs, method="direct", target_velocity=target)
    np.testing.assert_allclose(imp.qd_plus, ref.qd_plus, atol=TOL, rtol=0)
    np.testing.assert_allclose(imp.impulses, ref.impulses, atol=TOL, rtol=0)
    np.testing.assert_allclose(G @ imp.qd_plus, np.zeros(cs.size) if target is None else target, atol=1e-10)
    H = sinews.crba(m, q)
    np.testing.assert_allclose(H @ (imp.qd_plus - v), G.T @ imp.impulses, atol=1e-9)
    assert imp.converged


def test_compiled_contacts_every_row_layout_matches_direct_and_kokkevis():
    rng = np.random.default_rng(11)
    m = _humanoid_like(rng)
    cs = ConstraintSet()
    # 3 normals on a foot, 1 normal on the other foot, 2 normals on a hand (oblique, orthogonal),
    # a second point on the same hand link, a point on the floating base, one on the chest
    for n in np.eye(3):
        cs.add_contact_constraint("lleg3", (0.05, 0, -0.1), n, name="lfoot")
    cs.add_contact_constraint("rleg3", (0, 0, -0.1), (0, 0, 1), name="rfoot")
    n1 = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    n2 = np.array([-1.0, 1.0, 0.0]) / np.sqrt(2)
    cs.add_contact_constraint("larm2", (0, 0, -0.1), n1, name="lhand")
    cs.add_contact_constraint("larm2", (0, 0, -0.1), n2, name="lhand")
    for n in np.eye(3):
        cs.add_contact_constraint("larm2", (0.1, 0.0, 0.0), n, name="lhand2")
    cs.add_contact_constraint("base", (0.1, 0.2, 0.0), (0, 1, 0), name="base")
    cs.add_contact_constraint("chest2", (0.0, 0.1, 0.1), (1, 0, 0), name="chest")
    cs.bind(m)
    q, v, tau = _state(m, rng)
    _check_against_reference(m, cs, q, v, tau)
    f_ext = {"chest": rng.normal(size=6), "rleg1": rng.normal(size=6)}
    _check_against_reference(m, cs, q, v, tau, f_ext=f_ext, target=rng.normal(size=cs.size))
    cs.enable_baumgarte("lfoot", time_constant=0.05)
    cs.enable_baumgarte("lhand", time_constant=0.2)
    _check_against_reference(m, cs, q, v, tau, f_ext=f_ext)


@pytest.mark.parametrize("seed", range(6))
def test_compiled_contacts_random_trees(seed):
    """Random depth-first trees of every joint type, 1-4 contact points with 1-3 normals."""
    rng = np.random.default_rng(100 + seed)
    m = random_tree(int(rng.integers(3, 12)), rng)
    names = [b.name for b in m.bodies[1:]]
    cs = ConstraintSet()
    for k in range(int(rng.integers(1, 5))):
        body = names[int(rng.integers(len(names)))]
        point = rng.normal(size=3) * 0.3
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        for n in R[: int(rng.integers(1, 4))]:
            cs.add_contact_constraint(body, point, n, name=f"p{k}")
    cs.bind(m)
    if cs._compiled is None:
        pytest.skip("a point on a body welded to the world (checked elsewhere)")
    q, v, tau = _state(m, rng)
    G = constraint_jacobian(m, q, cs)
    if np.linalg.matrix_rank(G) < cs.size:
        # redundant: the compiled path hands over to the general path's diagnosis
        r = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse")
        assert r.least_squares and r.rank < cs.size
        return
    _check_against_reference(m, cs, q, v, tau)


def test_compiled_contacts_matches_across_workspaces_and_default_data():
    m = quadruped12()
    cs = ConstraintSet()
    for leg in ("FL", "FR", "HL", "HR"):
        for k, n in enumerate(np.eye(3)):
            cs.add_contact_constraint(f"{leg}_shank", [0, 0, -0.25], n, name=leg if k == 0 else None)
    cs.bind(m)
    rng = np.random.default_rng(3)
    states = [_state(m, rng) for _ in range(3)]
    ref = [forward_dynamics_constraints(m, *s, cs, method="direct") for s in states]
    d1, d2 = m.data(), m.data()
    for data in (d1, None, d2, d1, None):  # switching workspaces must not mix their scratch
        for s, r in zip(states, ref):
            out = forward_dynamics_constraints(m, *s, cs, method="range_space_sparse", data=data)
            np.testing.assert_allclose(out.qdd, r.qdd, atol=TOL, rtol=0)
            np.testing.assert_allclose(out.multipliers, r.multipliers, atol=TOL, rtol=0)
    # results are fresh arrays, not views of a reused buffer
    a = forward_dynamics_constraints(m, *states[0], cs, method="range_space_sparse")
    b = forward_dynamics_constraints(m, *states[1], cs, method="range_space_sparse")
    assert not np.shares_memory(a.qdd, b.qdd) and not np.shares_memory(a.multipliers, b.multipliers)
    with pytest.raises(ValueError, match="data"):
        forward_dynamics_constraints(m, *states[0], cs, method="range_space_sparse", data=quadruped12().data())


def test_compiled_contacts_bad_input_names_the_argument():
    m = quadruped12()
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("FL_shank", [0, 0, -0.25], n, name="FL")
    cs.bind(m)
    q, v, tau = _state(m, np.random.default_rng(0))
    for name, args in (("q", (np.full(m.nq, np.nan), v, tau)), ("v", (q, v * np.inf, tau)),
                       ("tau", (q, v, np.full(m.nv, np.nan)))):
        with pytest.raises(ValueError, match=rf"^{name} "):
            forward_dynamics_constraints(m, *args, cs, method="range_space_sparse")
    with pytest.raises(ValueError, match="f_ext"):
        forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse", f_ext={"FL_shank": [np.nan] * 6})
    with pytest.raises(ValueError, match="tau"):
        forward_dynamics_constraints(m, q, v, tau[:-1], cs, method="range_space_sparse")
    with pytest.raises(ValueError, match="qd_minus"):
        compute_constraint_impulses(m, q, v[:-1], cs, method="range_space_sparse")
    with pytest.raises(ValueError, match="qd_minus"):
        compute_constraint_impulses(m, q, v * np.nan, cs, method="range_space_sparse")
    with pytest.raises(ValueError, match="target_velocity"):
        compute_constraint_impulses(m, q, v, cs, method="range_space_sparse", target_velocity=[0, np.nan, 0])
    with pytest.raises(ValueError, match="target_velocity"):
        compute_constraint_impulses(m, q, v, cs, method="range_space_sparse", target_velocity=[0, 0])
    # lists and read-only arrays are accepted (converted once)
    ro = q.copy()
    ro.flags.writeable = False
    r = forward_dynamics_constraints(m, ro, list(v), tuple(tau), cs, method="range_space_sparse")
    ref = forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    np.testing.assert_allclose(r.qdd, ref.qdd, atol=TOL, rtol=0)
    # a Fortran-ordered, read-only external force array is converted, not refused
    F = np.asfortranarray(np.random.default_rng(2).normal(size=(m.nbodies, 6)))
    F[0] = 0.0
    F.flags.writeable = False
    r = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse", f_ext=F)
    ref = forward_dynamics_constraints(m, q, v, tau, cs, method="direct", f_ext=np.array(F))
    np.testing.assert_allclose(r.qdd, ref.qdd, atol=TOL, rtol=0)
    np.testing.assert_allclose(r.multipliers, ref.multipliers, atol=TOL, rtol=0)


def test_compiled_contacts_singular_sets_take_the_general_diagnosis():
    """A repeated contact (redundant rows) and a point on a body welded to the world (a zero
    row) cannot be solved by the compiled Cholesky: the answer is the general path's flagged
    least-squares one, identical to the direct method's."""
    m = quadruped12()
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("FL_shank", [0, 0, -0.25], n, name="a")
    cs.add_contact_constraint("FL_shank", [0, 0, -0.25], (0, 0, 1), name="again")
    cs.bind(m)
    q, v, tau = _state(m, np.random.default_rng(1))
    r = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse")
    d = forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    assert r.least_squares and r.rank == 3 and d.least_squares
    np.testing.assert_allclose(r.qdd, d.qdd, atol=TOL, rtol=0)
    imp = compute_constraint_impulses(m, q, v, cs, method="range_space_sparse")
    assert imp.least_squares and imp.rank == 3

    w = Model()
    b = w.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (0.1, 0, 0), np.eye(3)), "b")
    w.add_body(0, joints.Fixed(), Transform.rot_x(0.3, (1, 0, 0)), SpatialInertia(1.0, (0, 0, 0), np.eye(3)), "welded")
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (0.5, 0, 0), (0, 1, 0), name="b")
    cs.add_contact_constraint("welded", (0, 0, 0), (0, 0, 1), name="welded")
    cs.bind(w)
    assert cs._compiled is not None and b == 1
    r = forward_dynamics_constraints(w, np.zeros(1), np.zeros(1), np.ones(1), cs, method="range_space_sparse")
    d = forward_dynamics_constraints(w, np.zeros(1), np.zeros(1), np.ones(1), cs, method="direct")
    assert r.least_squares and r.rank == 1
    np.testing.assert_allclose(r.qdd, d.qdd, atol=TOL, rtol=0)


def test_compiled_contacts_unbound_set_is_bound_by_the_first_call_and_other_models_refused():
    m = quadruped12()
    cs = ConstraintSet()
    for n in np.eye(3):
        cs.add_contact_constraint("HR_shank", [0, 0, -0.25], n, name="HR")
    q, v, tau = _state(m, np.random.default_rng(5))
    assert cs._compiled is None and not cs.bound
    r = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse")
    assert cs.bound and cs._compiled is not None and cs._compiled.model is m
    ref = forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    np.testing.assert_allclose(r.qdd, ref.qdd, atol=TOL, rtol=0)
    cs2 = ConstraintSet()
    cs2.add_contact_constraint("HR_shank", [0, 0, -0.25], (0, 0, 1))
    imp = compute_constraint_impulses(m, q, v, cs2, method="range_space_sparse")
    assert cs2._compiled is not None and imp.converged
    with pytest.raises(ValueError, match="different model"):
        forward_dynamics_constraints(quadruped12(), q, v, tau, cs, method="range_space_sparse")
    with pytest.raises(ValueError, match="different model"):
        compute_constraint_impulses(quadruped12(), q, v, cs, method="range_space_sparse")


def test_compiled_contacts_see_gravity_set_after_binding():
    """Review finding: the packed data once held a copy of the model's gravity."""
    rng = np.random.default_rng(0)
    m = random_tree(4, 1, joint_types=["RX", "RY"])
    cs = ConstraintSet()
    cs.add_contact_constraint(3, [0.1, 0.2, 0.3], [0, 0, 1])
    q, v, tau = _state(m, rng)
    forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse")
    m.gravity = (0.3, 0, -1.62)
    fast = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse")
    ref = forward_dynamics_constraints(m, q, v, tau, cs, method="kokkevis")
    np.testing.assert_allclose(fast.qdd, ref.qdd, atol=TOL, rtol=0)
    np.testing.assert_allclose(fast.multipliers, ref.multipliers, atol=TOL, rtol=0)


def test_compiled_contacts_accept_data_subclasses():
    class MyData(sinews.Data):
        pass

    m = quadruped12()
    cs = ConstraintSet()
    cs.add_contact_constraint("FL_shank", [0, 0, -0.25], (0, 0, 1))
    q, v, tau = _state(m, np.random.default_rng(1))
    r = forward_dynamics_constraints(m, q, v, tau, cs, method="range_space_sparse", data=MyData(m))
    ref = forward_dynamics_constraints(m, q, v, tau, cs, method="direct")
    np.testing.assert_allclose(r.qdd, ref.qdd, atol=TOL, rtol=0)


@pytest.mark.parametrize("method", ["direct", "range_space_sparse", "null_space", "kokkevis"])
def test_a_contact_on_the_axis_of_its_only_joint_is_rank_deficient_not_converged_garbage(method):
    """Review finding: a point on the axis of the only joint moving it gives a row of rounding
    noise (~1e-17); relative rank tests accepted it and returned multipliers of ~1e19 marked
    converged.  Such rows count as zero: a flagged least-squares answer, multiplier 0, the
    free motion of the rest."""
    m = random_tree(4, 1, joint_types=["RX", "RY"])
    rng = np.random.default_rng(0)
    q, v, tau = _state(m, rng)
    cs = ConstraintSet()
    cs.add_contact_constraint(4, [0.1, 0.0, 0.0], [0, 0, 1])
    cs.bind(m)
    G = constraint_jacobian(m, q, cs)
    assert np.abs(G).max() < 1e-14  # the row is rounding noise
    r = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
    assert r.least_squares and r.rank == 0
    np.testing.assert_allclose(r.multipliers, 0.0, atol=0)
    free = sinews.aba(m, q, v, tau)
    np.testing.assert_allclose(r.qdd, free, atol=1e-9)
    if method != "kokkevis":
        imp = compute_constraint_impulses(m, q, v, cs, method=method)
        assert imp.least_squares and np.all(imp.impulses == 0.0)
        np.testing.assert_allclose(imp.qd_plus, v, atol=1e-12)
