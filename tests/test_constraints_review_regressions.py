"""Regression tests for findings of an independent review of the constraints package."""

import gc

import numpy as np
import pytest

import sinews
from sinews.constraints import ConstraintSet, assemble_q, forward_dynamics_constraints
from sinews.sample_models import quadruped12


def _feet(m):
    cs = ConstraintSet()
    for leg in ("FL", "FR", "HL", "HR"):
        for k, n in enumerate(np.eye(3)):
            cs.add_contact_constraint(f"{leg}_shank", [0, 0, -0.25], n, name=leg if k == 0 else None)
    return cs.bind(m)


def test_fresh_constraint_sets_do_not_accumulate_scratch():
    m = quadruped12()
    d = m.data()
    q = sinews.neutral(m)
    z = np.zeros(m.nv)
    forward_dynamics_constraints(m, q, z, z, _feet(m), method="range_space_sparse", data=d)
    before = len(d.__dict__)
    for _ in range(50):
        forward_dynamics_constraints(m, q, z, z, _feet(m), method="range_space_sparse", data=d)
    gc.collect()
    assert len(d.__dict__) == before


def test_self_loop_is_refused():
    m = quadruped12()
    cs = ConstraintSet()
    cs.add_loop_constraint("trunk", "trunk", None, sinews.Transform.translation([1.0, 0, 0]), [0, 0, 0, 1, 0, 0])
    with pytest.raises(ValueError, match="predecessor and successor are the same body"):
        cs.bind(m)


def test_assemble_q_rejects_non_unit_quaternions_up_front():
    m = quadruped12()
    q = sinews.neutral(m)
    q[6] = 3.0
    with pytest.raises(ValueError, match=r"q_init\[3:7\] must be a unit quaternion"):
        assemble_q(m, q, _feet(m), weights=np.ones(m.nv))
