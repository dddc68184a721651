"""``sinews.models``: built-in samples and the robots of example-robot-data (issue 10 item 3)."""

import numpy as np
import pytest

import sinews
import sinews.models as models
from sinews import Model


def test_models_lists_the_samples():
    infos = models.list()
    assert all(isinstance(i, models.ModelInfo) for i in infos)
    samples = [i.name for i in infos if i.source == "sample"]
    assert samples == ["arm7", "pendulum", "quadruped12", "random_tree"]
    assert models.names() == sorted(i.name for i in infos)
    assert len(set(models.names())) == len(infos)  # unique names


def test_models_load_samples_with_their_arguments():
    assert isinstance(models.load("arm7"), Model) and models.load("arm7").nv == 7
    assert models.load("pendulum", n=5).nv == 5
    assert models.load("quadruped12").nq == 19
    m = models.load("random_tree", n_bodies=6, rng=1)
    assert m.nbodies == 7


def test_models_unknown_names_list_close_matches():
    with pytest.raises(KeyError, match="did you mean 'pendulum'"):
        models.load("pendulm")
    with pytest.raises(KeyError, match="names"):
        models.load("pendulm")
    with pytest.raises(KeyError, match="model name"):
        models.load(3)


def test_models_without_example_robot_data(monkeypatch):
    monkeypatch.setattr(models, "robots_dir", lambda: None)
    assert [i.source for i in models.list()] == ["sample"] * 4
    with pytest.raises(ImportError, match=r"sinews\[robots\]"):
        models.load("panda")
    with pytest.raises(KeyError, match="robots need example-robot-data"):
        models.load("arm8")  # close to a sample: a KeyError, with the hint


@pytest.fixture(scope="module")
def robots():
    if models.robots_dir() is None:
        pytest.skip("example-robot-data is not installed (pip install 'sinews[robots]')")
    return {i.name: i for i in models.list() if i.source == "example-robot-data"}


def test_models_robot_names(robots):
    assert len(robots) >= 60
    for name in ("panda", "solo12", "ur5", "ur5_limited", "anymal", "anymal_c", "tiago", "talos_reduced", "hyq", "g1"):
        assert name in robots, name
        assert robots[name].path.is_file()
    assert robots["solo12"].floating_base and robots["talos_reduced"].floating_base
    assert not robots["panda"].floating_base and not robots["talos_arm"].floating_base


@pytest.mark.parametrize("name", ["panda", "solo12", "ur5"])
def test_models_load_robots_like_pinocchio(robots, name):
    pin = pytest.importorskip("pinocchio")
    info = robots[name]
    m = models.load(name)
    assert m.name == name
    pm = pin.buildModelFromUrdf(str(info.path), pin.JointModelFreeFlyer()) if info.floating_base else pin.buildModelFromUrdf(str(info.path))
    assert (m.nv, m.nq) == (pm.nv, pm.nq)
    assert m.total_mass() == pytest.approx(pin.computeTotalMass(pm), rel=1e-12)
    # keyword arguments reach load_urdf
    fixed = models.load(name, floating_base=False)
    assert fixed.nv == m.nv - (6 if info.floating_base else 0)
    q = sinews.neutral(m)
    assert np.all(np.isfinite(sinews.rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))))
