"""CRBA on trees with free-flyer joints: the entries of a free-flyer root in its descendants'
columns are computed as the columns' forces in the root's own axes (sinews._crba_kernels.
_in_link_axes), other free-flyers (not link 0, or a second tree's root) by the general
products.  Oracle: M column by column from RNEA, M e_i = rnea(q, 0, e_i) - rnea(q, 0, 0)."""

import numpy as np
import pytest

import sinews
from sinews.sample_models import quadruped12, random_tree

crba_mod = __import__("sinews.crba", fromlist=["_crba"])


def _m_from_rnea(m, q):
    z = np.zeros(m.nv)
    g = sinews.rnea(m, q, z, z)
    return np.column_stack([sinews.rnea(m, q, z, e) - g for e in np.eye(m.nv)])


def _trees():
    yield "quadruped12", quadruped12()
    for seed in range(40):
        m = random_tree(7, seed, joint_types=["FreeFlyer", "RX", "RZ", "Revolute", "Spherical", "PY"])
        yield f"random_tree seed {seed}", m


@pytest.mark.parametrize("name, m", list(_trees()), ids=lambda x: x if isinstance(x, str) else "")
def test_crba_with_free_flyers_matches_rnea_columns(name, m):
    rng = np.random.default_rng(7)
    q = sinews.random_configuration(m, rng, -1.0, 1.0)
    want = _m_from_rnea(m, q)
    fast = sinews.crba(m, q)  # the first call binds the fast path, the second takes it
    fast = sinews.crba(m, q)
    checked = crba_mod._crba(m, q, None)
    scale = max(1.0, float(np.abs(want).max()))
    assert np.allclose(fast, want, rtol=0.0, atol=1e-10 * scale), name
    assert np.array_equal(fast, checked)
    assert np.array_equal(fast, fast.T)


def test_the_cases_include_a_free_flyer_root_with_a_second_tree_and_deeper_free_flyers():
    """The random trees above cover what the kernel tells apart."""
    from sinews.joints import JT_FREEFLYER

    seen = set()
    for _, m in _trees():
        mi = m.compiled.mi
        from sinews import _layout as L

        ff = mi[:, L.MI_TYPE] == JT_FREEFLYER
        roots = np.flatnonzero(mi[:, L.MI_PARENT] < 0)
        if ff[0] and len(roots) > 1:
            seen.add("root free-flyer and a second tree")
        if ff[1:].any():
            seen.add("a free-flyer that is not link 0")
        if ff[0] and (mi[:, L.MI_PARENT] == 0).any():
            seen.add("a root free-flyer with children")
    assert seen == {"root free-flyer and a second tree", "a free-flyer that is not link 0",
                    "a root free-flyer with children"}


minv_mod = __import__("sinews.minv", fromlist=["_minverse"])


@pytest.mark.parametrize("name, m", list(_trees()), ids=lambda x: x if isinstance(x, str) else "")
def test_minverse_with_free_flyers_inverts_m(name, m):
    """``minverse`` takes the same shortcut for a free-flyer root (the products of its motion
    subspace with a descendant's ``U = IA S`` in its own axes): ``M^-1 M = 1`` with ``M`` from
    RNEA columns, fast path = checked path."""
    rng = np.random.default_rng(11)
    q = sinews.random_configuration(m, rng, -1.0, 1.0)
    M = _m_from_rnea(m, q)
    sinews.minverse(m, q)
    fast = sinews.minverse(m, q)
    assert np.array_equal(fast, minv_mod._minverse(m, q, None))
    assert np.allclose(fast @ M, np.eye(m.nv), rtol=0.0, atol=1e-8 * np.linalg.cond(M)), name
    assert np.array_equal(fast, fast.T)
