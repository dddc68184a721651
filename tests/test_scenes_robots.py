"""The quadruped and humanoid examples: Solo12 stands after the drop, Talos is pushed over
(example-robot-data robots read from their URDFs)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("urdf_parser_py", reason='URDF scenes need pip install "sinews[urdf]"')
try:
    from sinews.demos.quadruped import robots_dir

    robots_dir()
except RuntimeError as exc:  # example-robot-data missing
    pytest.skip(str(exc), allow_module_level=True)

from sinews import demos


def test_scenes_quadruped_drop_stands_and_the_ground_carries_its_weight(tmp_path):
    result = demos.run("quadruped", tmp_path, quick=True)
    s = result["summary"]
    assert s["standing"] is True
    assert s["final_vertical_force_N"] == pytest.approx(s["weight_N"], rel=1e-3)
    assert s["weight_N"] == pytest.approx(2.5 * 9.81, rel=1e-3)
    assert s["max_penetration_m"] < 1e-6 and s["max_contacts"] == 4
    data = np.load(tmp_path / "quadruped_trajectory.npz")
    z, t = data["base_height"], data["t"]
    # free fall for the first 5 cm, until the feet touch (t = 0.101 s): semi-implicit Euler's
    # exact discrete parabola z_n = z0 - g h^2 n (n + 1) / 2, the joints at rest in their posture
    early = t < 0.09
    h = s["dt_s"]
    np.testing.assert_allclose(z[early], z[0] - 0.5 * 9.81 * t[early] * (t[early] + h), atol=1e-9)
    np.testing.assert_allclose(data["q"][early, 7:], np.broadcast_to(data["q"][0, 7:], (early.sum(), 12)), atol=1e-9)
    # standing: the base settled a little below the reference posture's height on the ground
    assert 0.20 < s["standing_height_m"] < z[0] - 0.05
    summary = json.loads((tmp_path / "quadruped_summary.json").read_text())
    assert summary["animation"] == "quadruped.html" and "quadruped.html" in summary["files"]


def test_scenes_humanoid_is_pushed_over(tmp_path):
    result = demos.run("humanoid-fall", tmp_path, quick=True)
    data = np.load(tmp_path / "humanoid_fall_trajectory.npz")
    q, n, F = data["q"], data["num_contacts"], data["contact_force"]
    assert np.all(n[1:] >= 8)  # both soles (4 corners each) on the ground from the start
    assert result["summary"]["max_penetration_m"] < 1e-4
    assert q[-1, 0] > q[0, 0] + 0.05  # pushed forward
    assert q[-1, 2] < q[0, 2] - 0.01  # and going down
    mg = result["summary"]["mass_kg"] * 9.81
    assert np.all(F[50:, 2] > 0.5 * mg)  # still standing on its feet during the quick run
    assert (tmp_path / "humanoid_fall.html").stat().st_size > 500_000


#: the links whose soles stand on the ground in the starting posture
TALOS_FEET = {"leg_left_6_link", "leg_right_6_link"}


def _talos_links_on_ground(scene, q):
    """Names of the links with a collision shape within 1 mm of the ground at ``q``."""
    contacts = scene.collide(q, margin=1e-3)
    body = np.array([g.body for g in scene.geometries])
    other = np.where(body[contacts.geom_a] == 0, contacts.geom_b, contacts.geom_a)
    return {scene.model.bodies[b].name for b in body[other]}


@pytest.mark.slow
def test_scenes_humanoid_full_run_falls_over_onto_its_body(tmp_path):
    """The full-length humanoid-fall demo (1.5 s; about 5 s of run time on an idle machine): Talos
    starts on its two feet, is pushed over and ends lying on the ground, touching it with links
    other than its feet, the ground carrying its weight (the quick run stops while it stands)."""
    from sinews.demos.humanoid_fall import talos_scene

    result = demos.run("humanoid-fall", tmp_path, quick=False)
    s = result["summary"]
    assert s["duration_s"] == pytest.approx(1.5)
    assert s["fell"] is True
    assert s["initial_base_height_m"] > 0.9
    assert s["final_base_height_m"] < 0.3
    data = np.load(tmp_path / "humanoid_fall_trajectory.npz")
    q, z, F, t = data["q"], data["base_height"], data["contact_force"], data["t"]
    assert z[-1] == pytest.approx(s["final_base_height_m"]) and z[-1] < 0.3
    assert q[-1, 0] > q[0, 0] + 0.3  # it fell forward, the way it was pushed
    # the contacts, recomputed from the stored configurations: the feet only at the start, the
    # body (not the feet) at the end
    scene, _ = talos_scene()
    assert _talos_links_on_ground(scene, q[0]) == TALOS_FEET
    final = _talos_links_on_ground(scene, q[-1])
    assert len(final - TALOS_FEET) >= 3, final
    assert any(name.startswith(("head", "arm", "gripper", "torso")) for name in final), final
    # lying still at the end: the ground carries the weight
    mg = s["mass_kg"] * 9.81
    assert np.all(np.abs(F[t > t[-1] - 0.1, 2] - mg) < 0.02 * mg)
    assert np.abs(data["v"][-1]).max() < 0.05
