"""The dense ``M(q)^-1`` kernel against Pinocchio's ``computeMinverse`` (upper triangle,
symmetrised here), against the link-frame variant and ``M``; every joint type, depth-first and
creation-order trees; errors; property tests."""

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sinews
from sinews.interop import PinocchioCoordinates, from_pinocchio, to_pinocchio
from sinews.joints import JT_FREEFLYER, JT_SPHERICAL
from sinews.sample_models import JOINT_FACTORIES, arm7, quadruped12, random_tree

TOL = 1e-12


def close(a, b, tol=TOL):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(1.0, np.abs(b).max(initial=0.0))
    err = np.abs(a - b).max(initial=0.0)
    assert err <= tol * scale, f"max error {err:.3e} (scale {scale:.3e})"


def _pin_minverse(pm, q, cv):
    Mi = pin.computeMinverse(pm, pm.createData(), q).copy()
    return cv.matrix_from_pin(np.triu(Mi) + np.triu(Mi, 1).T)


CASES = [("humanoid", lambda: (lambda pm: (from_pinocchio(pm), pm))(pin.buildSampleModelHumanoid()))]
CASES += [(n, lambda b=b: (lambda m: (m, to_pinocchio(m)))(b())) for n, b in (("arm7", arm7), ("quadruped12", quadruped12))]
CASES += [
    (f"random{s}", lambda s=s: (lambda m: (m, to_pinocchio(m)))(random_tree(15, s, joint_types=list(JOINT_FACTORIES))))
    for s in range(8)
]


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_against_pinocchio(name, build):
    m, pm = build()
    cv = PinocchioCoordinates(m)
    for seed in range(3):
        q = sinews.random_configuration(m, np.random.default_rng(seed), -1.5, 1.5)
        Mi = sinews.minverse(m, q)
        close(Mi, _pin_minverse(pm, q, cv))
        assert np.array_equal(Mi, Mi.T)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("depth_first", [True, False])
def test_against_the_mass_matrix_and_minv_times(seed, depth_first):
    m = random_tree(12, seed, joint_types=list(JOINT_FACTORIES), depth_first=depth_first)
    q = sinews.random_configuration(m, np.random.default_rng(seed), -1.5, 1.5)
    Mi = sinews.minverse(m, q)
    M = sinews.crba(m, q)
    close(Mi @ M, np.eye(m.nv), 1e-10)
    close(Mi, np.linalg.inv(M), 1e-9 * max(1.0, np.abs(Mi).max()))
    x = np.random.default_rng(3).normal(size=m.nv)
    close(Mi @ x, sinews.minv_times(m, q, x), 1e-11)


def test_no_moving_body():
    m = sinews.Model()
    m.add_body(0, sinews.joints.Fixed())
    assert sinews.minverse(m, np.zeros(0)).shape == (0, 0)


def test_errors():
    m = random_tree(5, 2, joint_types=["RX", "Spherical", "FreeFlyer"])
    q = sinews.neutral(m)
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="q contains NaN"):
        sinews.minverse(m, bad)
    with pytest.raises(ValueError, match="q must have shape"):
        sinews.minverse(m, q[:-1])
    k = next(b for b in m.bodies[1:] if b.joint.code in (JT_SPHERICAL, JT_FREEFLYER))
    i = k.idx_q + (3 if k.joint.code == JT_FREEFLYER else 0)
    z = q.copy()
    z[i : i + 4] = 0.0
    with pytest.raises(ValueError, match=r"^q\[.*zero"):
        sinews.minverse(m, z)
    massless = sinews.Model()
    massless.add_body(0, sinews.joints.RevoluteX())
    with pytest.raises(ValueError, match="cannot be inverted"):
        sinews.minverse(massless, np.zeros(1))
    with pytest.raises(ValueError, match="data must be"):
        sinews.minverse(m, q, data=massless.data())


_TREE = random_tree(9, 5, joint_types=list(JOINT_FACTORIES))


@settings(max_examples=40)
@given(q=hnp.arrays(np.float64, _TREE.nq, elements=st.floats(-4.0, 4.0, allow_nan=False)))
def test_inverse_property(q):
    q = sinews.normalize(_TREE, q + 1e-3)
    Mi = sinews.minverse(_TREE, q)
    M = sinews.crba(_TREE, q)
    np.testing.assert_allclose(Mi @ M, np.eye(_TREE.nv), atol=1e-8)
    np.testing.assert_array_equal(Mi, Mi.T)
    assert np.all(np.linalg.eigvalsh(Mi) > 0)


@pytest.mark.parametrize("seed", range(4))
def test_scratch_buffer_forms_agree(seed):
    """The kernel with the fast path's full buffer (no allocation, multi-dof rows as vectorised
    row operations on the buffer) and with the minimal ``12 * nv`` buffer (its own scratch, as the
    simulator calls it) give bit-identical results, equal to the public fast and checked paths."""
    from sinews import _minv_kernels as MK

    m = random_tree(12, seed, joint_types=list(JOINT_FACTORIES))
    c = m.compiled
    q = sinews.random_configuration(m, np.random.default_rng(seed), -1.5, 1.5)
    out = []
    for n in (12 * c.nv, MK.buffer_size(c.nlinks, c.nv)):
        Mi = np.empty((c.nv, c.nv))
        assert MK.minverse(q, Mi, c.mi, c.mf, m.data().ws, np.full(n, np.nan)) == 0
        out.append(Mi)
    assert np.array_equal(out[0], out[1])
    for _ in range(2):  # the first call binds this thread's fast path, the second takes it
        assert np.array_equal(sinews.minverse(m, q), out[0])
    assert np.array_equal(sinews.minverse(m, q, data=m.data()), out[0])
