"""ConstraintSet API: rows vs groups, grouping rules, look-ups, Baumgarte settings, errors."""

import numpy as np
import pytest

from sinews import Model, SpatialInertia, Transform, joints
from sinews.constraints import (
    ConstraintSet,
    CustomConstraint,
    PinJointConstraint,
    calc_forces,
    constraint_jacobian,
    forward_dynamics_constraints,
)

EX, EY, EZ = np.eye(3)
E6 = np.eye(6)


def _model():
    m = Model(gravity=(0, -9.81, 0))
    a = m.add_body(0, joints.RevoluteZ(), None, SpatialInertia(1.0, (0.5, 0, 0), np.eye(3)), "a")
    m.add_body(a, joints.RevoluteZ(), (1, 0, 0), SpatialInertia(1.0, (0.5, 0, 0), np.eye(3)), "b")
    return m


def test_constraints_set_rows_and_groups():
    cs = ConstraintSet()
    assert cs.add_contact_constraint("b", (1, 0, 0), EY, name="tip", id=7) == 0
    assert cs.add_contact_constraint("b", (1, 0, 0), EX) == 1  # anonymous: joins the last group
    assert cs.add_contact_constraint("a", (1, 0, 0), EY) == 2  # other point: new group
    assert cs.add_loop_constraint("a", "b", (1, 0, 0), None, E6[3], name="pin") == 3
    assert cs.add_loop_constraint("a", "b", (1, 0, 0), None, E6[4], name="pin") == 4
    assert cs.size == len(cs) == 5 and cs.ngroups == 3
    assert cs.row_group.tolist() == [0, 0, 1, 2, 2]
    assert cs.row_types == ["contact", "contact", "contact", "loop", "loop"]
    assert cs.row_names == ["tip", "tip", None, "pin", "pin"]
    g = cs.group("tip")
    assert (g.index, g.name, g.id, g.type, g.size, g.rows) == (0, "tip", 7, "contact", 2, slice(0, 2))
    assert cs.group_by_id(7) is g and cs.group(0) is g and cs.group(g) is g
    assert cs.group_by_assigned_id(1) is g and cs.group_by_assigned_id(4) is cs.group("pin")
    assert cs.group_index("pin") == 2 and cs.rows("pin") == slice(3, 5)
    assert [h.index for h in cs] == [0, 1, 2] and cs.groups[1].name is None
    assert cs.groups[1].label == "contact[1]"
    assert list(cs.split(np.arange(5.0))) == ["tip", "contact[1]", "pin"]
    assert "tip" in cs.summary()


def test_constraints_set_named_rows_join_despite_default_id():
    """RBDL splits ("name", 7) followed by default-id rows into two groups; sinews does not."""
    cs = ConstraintSet()
    cs.add_loop_constraint("a", "b", (1, 0, 0), None, E6[3], name="loop", id=7)
    cs.add_loop_constraint("a", "b", (1, 0, 0), None, E6[4])
    cs.add_loop_constraint("a", "b", (1, 0, 0), None, E6[2], id=7)
    assert cs.ngroups == 1 and cs.group("loop").size == 3


def test_constraints_set_grouping_conflicts():
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (1, 0, 0), EY, name="tip", id=1)
    with pytest.raises(ValueError, match="different"):
        cs.add_contact_constraint("b", (0.5, 0, 0), EX, name="tip")
    with pytest.raises(ValueError, match="id"):
        cs.add_contact_constraint("b", (1, 0, 0), EX, name="tip", id=2)
    cs.add_contact_constraint("a", (1, 0, 0), EY, name="other", id=2)
    with pytest.raises(ValueError, match="two different groups"):
        cs.add_contact_constraint("a", (1, 0, 0), EX, name="other", id=1)
    with pytest.raises(ValueError, match="contiguous"):
        cs.add_contact_constraint("b", (1, 0, 0), EX, name="tip")
    with pytest.raises(ValueError, match="loop"):
        cs.add_loop_constraint("a", "b", None, None, E6[0], name="other")
    assert cs.size == 2  # failed adds leave no trace
    cs.add_loop_constraint("a", "b", None, None, E6[0], name="L", baumgarte=True, time_constant=0.2)
    with pytest.raises(ValueError, match="baumgarte"):
        cs.add_loop_constraint("a", "b", None, None, E6[1], name="L", baumgarte=False)
    with pytest.raises(ValueError, match="time_constant"):
        cs.add_loop_constraint("a", "b", None, None, E6[1], name="L", time_constant=0.3)
    cs.add_loop_constraint("a", "b", None, None, E6[1], name="L")  # inherits
    assert cs.group("L").baumgarte_enabled and cs.group("L").time_constant == 0.2


def test_constraints_set_normals_and_axes_checked():
    cs = ConstraintSet()
    with pytest.raises(ValueError, match="world_normal.*unit"):
        cs.add_contact_constraint("b", (1, 0, 0), (0, 2, 0))
    cs.add_contact_constraint("b", (1, 0, 0), EY)
    with pytest.raises(ValueError, match="orthogonal"):
        cs.add_contact_constraint("b", (1, 0, 0), (np.sqrt(0.5), np.sqrt(0.5), 0))
    cs.add_contact_constraint("b", (1, 0, 0), EX)
    cs.add_contact_constraint("b", (1, 0, 0), EZ)
    with pytest.raises(ValueError, match="3 normals"):
        cs.add_contact_constraint("b", (1, 0, 0), EZ)
    with pytest.raises(ValueError, match="axis.*unit"):
        cs.add_loop_constraint("a", "b", None, None, (0, 0, 1, 1, 0, 0))
    cs.add_loop_constraint("a", "b", None, None, E6[2])
    with pytest.raises(ValueError, match="orthogonal"):
        cs.add_loop_constraint("a", "b", None, None, (0, 0, np.sqrt(0.5), np.sqrt(0.5), 0, 0))
    with pytest.raises(ValueError, match="body_point"):
        cs.add_contact_constraint("b", (1, 0), EX)
    with pytest.raises(ValueError, match="time_constant"):
        cs.add_loop_constraint("a", "b", None, None, E6[2], time_constant=0.0)
    with pytest.raises(ValueError, match="id"):
        cs.add_contact_constraint("b", (0, 0, 0), EX, id="seven")


def test_constraints_set_lookup_errors_name_the_key():
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (1, 0, 0), EY, name="tip")
    with pytest.raises(KeyError, match="'nope'"):
        cs.group("nope")
    with pytest.raises(KeyError, match="user id 3"):
        cs.group_by_id(3)
    with pytest.raises(KeyError, match="index 5"):
        cs.group(5)
    with pytest.raises(KeyError, match="row 9"):
        cs.group_by_assigned_id(9)
    with pytest.raises(KeyError):
        cs.enable_baumgarte("nope")


def test_constraints_set_bind_rules():
    m = _model()
    cs = ConstraintSet()
    cs.add_contact_constraint("nobody", (0, 0, 0), EY)
    with pytest.raises(KeyError, match="body.*nobody"):
        cs.bind(m)
    cs = ConstraintSet()
    cs.add_loop_constraint("a", 17, None, None, E6[0])
    with pytest.raises(KeyError, match="successor"):
        cs.bind(m)
    with pytest.raises(ValueError, match="empty"):
        ConstraintSet().bind(m)
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (1, 0, 0), EY)
    assert cs.bind(m) is cs and cs.bound and cs.bind(m) is cs
    with pytest.raises(RuntimeError, match="bound"):
        cs.add_contact_constraint("b", (1, 0, 0), EX)
    with pytest.raises(RuntimeError):
        cs.add_custom_constraint(PinJointConstraint("a", "b"))
    with pytest.raises(RuntimeError, match="another model"):
        cs.bind(_model())
    with pytest.raises(ValueError, match="different model"):
        constraint_jacobian(_model(), np.zeros(2), cs)
    # Baumgarte stays changeable after binding
    cs.enable_baumgarte(0, time_constant=0.25)
    assert cs.is_baumgarte_enabled(0) and cs.baumgarte_coefficients(0) == (4.0, 4.0)
    cs.disable_baumgarte(0)
    assert not cs.is_baumgarte_enabled(0)


def test_constraints_set_auto_bind_and_bad_arguments():
    m = _model()
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (1, 0, 0), EY)
    r = forward_dynamics_constraints(m, np.zeros(2), np.zeros(2), np.zeros(2), cs)
    assert cs.model is m and r.method == "direct"
    with pytest.raises(ValueError, match="method"):
        forward_dynamics_constraints(m, np.zeros(2), np.zeros(2), np.zeros(2), cs, method="lu")
    with pytest.raises(ValueError, match="tau"):
        forward_dynamics_constraints(m, np.zeros(2), np.zeros(2), np.zeros(3), cs)
    with pytest.raises(ValueError, match="q "):
        forward_dynamics_constraints(m, [np.nan, 0], np.zeros(2), np.zeros(2), cs)
    with pytest.raises(ValueError, match="cs"):
        constraint_jacobian(m, np.zeros(2), "cs")
    with pytest.raises(ValueError, match="multipliers"):
        calc_forces(m, np.zeros(2), cs, 0, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="frame"):
        calc_forces(m, np.zeros(2), cs, 0, [1.0], frame="body")


def test_constraints_set_custom_constraint_rules():
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (1, 0, 0), EY, name="tip")
    assert cs.add_custom_constraint(PinJointConstraint(0, "a", name="pin", id=4)) == 1
    assert cs.group("pin").rows == slice(1, 6) and cs.group_by_assigned_id(5).name == "pin"
    with pytest.raises(ValueError, match="already used"):
        cs.add_custom_constraint(PinJointConstraint(0, "a", name="tip"))
    with pytest.raises(ValueError, match="already used"):
        cs.add_custom_constraint(PinJointConstraint(0, "a", id=4))
    with pytest.raises(ValueError, match="CustomConstraint"):
        cs.add_custom_constraint(object())

    class Empty(CustomConstraint):
        size = 0

    with pytest.raises(ValueError, match="size"):
        cs.add_custom_constraint(Empty())
    with pytest.raises(ValueError, match="pin_axis"):
        PinJointConstraint(0, "a", pin_axis=3)


def test_constraints_set_copy_is_unbound_and_independent():
    m = _model()
    cs = ConstraintSet()
    cs.add_contact_constraint("b", (1, 0, 0), EY, name="tip", id=3)
    cs.add_contact_constraint("b", (1, 0, 0), EX, name="tip")
    cs.add_loop_constraint("a", "b", (1, 0, 0), None, E6[2], name="pin", baumgarte=True)
    cs.bind(m)
    c2 = cs.copy()
    assert not c2.bound and c2.size == 3 and [g.name for g in c2] == ["tip", "pin"]
    assert c2.group_by_id(3).size == 2 and c2.group("pin").baumgarte_enabled
    c2.add_contact_constraint("a", (0.5, 0, 0), EY, name="extra")  # the copy can grow
    c2.disable_baumgarte("pin")
    assert cs.group("pin").baumgarte_enabled and cs.size == 3
    m2 = _model()
    c2.bind(m2)
    q = np.array([0.3, -0.2])
    assert np.allclose(constraint_jacobian(m2, q, c2)[:3], constraint_jacobian(m, q, cs))


class _JointLock(CustomConstraint):
    """A joint-space custom constraint: dof ``j`` keeps the value ``target`` (1 row).  It has no
    Cartesian wrench, so it does not implement ``wrench_entries``."""

    size = 1

    def __init__(self, j, target, **kw):
        super().__init__(**kw)
        self.j, self.target = j, target

    def jacobian(self, kin):
        G = np.zeros((1, kin.nv))
        G[0, self.j] = 1.0
        return G

    def gamma(self, kin):
        return np.zeros(1)

    def position_error(self, kin):
        return np.array([kin.q[self.j] - self.target])


def test_constraints_set_joint_space_custom_constraint():
    from sinews import crba, nonlinear_effects
    from sinews.constraints import constraint_gamma, constraint_position_error

    m = _model()
    cs = ConstraintSet()
    cs.add_custom_constraint(_JointLock(1, 0.2, name="lock", baumgarte=True, time_constant=0.5))
    q, v, tau = np.array([0.3, 0.25]), np.array([0.4, -0.1]), np.array([0.5, -0.3])
    assert constraint_position_error(m, q, cs)[0] == pytest.approx(0.05)
    # Baumgarte: gamma = -2 alpha phidot - beta^2 phi with alpha = beta = 2
    assert constraint_gamma(m, q, v, cs)[0] == pytest.approx(-4 * (-0.1) - 4 * 0.05)
    r = forward_dynamics_constraints(m, q, v, tau, cs)
    assert r.qdd[1] == pytest.approx(constraint_gamma(m, q, v, cs)[0])
    # the multiplier is the joint torque that enforces it
    H, C = crba(m, q), nonlinear_effects(m, q, v)
    assert np.allclose(H @ r.qdd + C, tau + np.array([0, r.multipliers[0]]))
    for method in ("range_space_sparse", "null_space"):
        r2 = forward_dynamics_constraints(m, q, v, tau, cs, method=method)
        assert np.allclose(r2.qdd, r.qdd, atol=1e-12) and np.allclose(r2.multipliers, r.multipliers, atol=1e-12)
    with pytest.raises(ValueError, match="wrench_entries"):
        forward_dynamics_constraints(m, q, v, tau, cs, method="kokkevis")
    with pytest.raises(ValueError, match="wrench_entries"):
        calc_forces(m, q, cs, "lock", r)
