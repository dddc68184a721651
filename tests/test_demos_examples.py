"""The demos of the simulation examples (docs/examples/) against their closed forms.

Each demo (``sinews demo NAME``) runs in quick mode and its summary must agree with the closed
form, recomputed here (not read from the demo), within the stated tolerance: a demo that
silently diverges, or states a wrong closed form, fails.  The output convention itself (files,
units, plots with and without matplotlib) is checked for every demo by test_demos_output.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sinews import demos

G = 9.81
EXAMPLES = ("bouncing-ball", "newtons-cradle", "sliding-brick", "incline", "rod2d", "box-stack")


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """name -> (output folder, result of the quick run), each demo run once."""
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp(name.replace("-", "_"))
            cache[name] = (out, demos.run(name, out, quick=True))
        return cache[name]

    return get


def summary_of(quick_runs, name):
    out, result = quick_runs(name)
    doc = json.loads((out / f"{name.replace('-', '_')}_summary.json").read_text())
    assert doc["demo"] == name
    # what the summary file says is what run() returned
    for key, value in result["summary"].items():
        assert doc[key] == value or (isinstance(value, float) and math.isnan(value)), key
    return doc


def test_the_examples_are_demos():
    available = demos.names()
    for name in EXAMPLES:
        assert name in available
        assert demos.get(name).description


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_demo_writes_an_animation(name, quick_runs):
    out, result = quick_runs(name)
    htmls = [p for p in result["files"] if p.suffix == ".html"]
    assert htmls and all(p.stat().st_size > 100_000 for p in htmls)
    assert "three" in htmls[0].read_text(encoding="utf-8")[:200_000].lower()


def test_bouncing_ball_apexes_are_e_squared_times_the_previous(quick_runs):
    s = summary_of(quick_runs, "bouncing-ball")
    e, h = 0.8, 1.0
    closed = [h * e ** (2 * k) for k in (1, 2, 3)]
    assert s["restitution"] == e and s["drop_height_m"] == h
    assert s["apex_closed_form_m"] == pytest.approx(closed, rel=1e-12)
    u = math.sqrt(2 * G * h) / G  # fall time; apex k at u (1 + 2 (e + ... + e^(k-1)) + e^k)
    closed_t = [u * (1 + 2 * sum(e**j for j in range(1, k)) + e**k) for k in (1, 2, 3)]
    assert s["apex_time_closed_form_s"] == pytest.approx(closed_t, rel=1e-12)
    for stepper in ("default", "impulse"):
        # the impact is resolved at the step where it happens: O(h |v| / h_k), 0.5 % here
        assert s[f"apex_{stepper}_m"] == pytest.approx(closed, rel=1.5e-2), stepper
        # each bounce shifts the apex time by at most a few steps
        assert s[f"apex_time_{stepper}_s"] == pytest.approx(closed_t, abs=0.02), stepper
        assert s[f"max_penetration_{stepper}_m"] < 2e-3
    assert s["max_apex_rel_error"] < 1.5e-2
    assert s["units"]["apex_default_m"] == "m" and s["units"]["apex_closed_form_m"] == "m"


def test_newtons_cradle_sequential_and_simultaneous(quick_runs):
    s = summary_of(quick_runs, "newtons-cradle")
    v = 1.0
    assert s["speed_m_s"] == v
    expect = {"sequential": [0.0, 0.0, v], "simultaneous": [-v / 3, 2 * v / 3, 2 * v / 3],
              "default": [-v / 3, 2 * v / 3, 2 * v / 3]}
    for case, tol in (("sequential", 1e-9), ("simultaneous", 1e-9), ("default", 1e-5)):  # default: solver tol
        assert s[f"v_closed_form_{case}_m_s"] == pytest.approx(expect[case], abs=1e-15)
        assert s[f"v_after_{case}_m_s"] == pytest.approx(expect[case], abs=tol), case
        assert s[f"v_error_{case}_m_s"] < tol
        # momentum and (e = 1) kinetic energy conserved
        assert s[f"momentum_after_{case}_kg_m_s"] == pytest.approx(v, abs=1e-9)
        assert s[f"kinetic_energy_after_{case}_J"] == pytest.approx(0.5 * v**2, abs=1e-5)
    assert s["units"]["v_after_sequential_m_s"] == "m/s"


def test_sliding_brick_stops_after_v2_over_2_mu_g(quick_runs):
    out, _ = quick_runs("sliding-brick")
    s = summary_of(quick_runs, "sliding-brick")
    v, mu = 2.0, 0.5
    d, t_stop = v**2 / (2 * mu * G), v / (mu * G)
    assert s["speed_m_s"] == v and s["friction"] == mu
    assert s["stop_distance_closed_form_m"] == pytest.approx(d, rel=1e-12)
    assert s["stop_time_closed_form_s"] == pytest.approx(t_stop, rel=1e-12)
    for stepper in ("default", "lcp", "impulse"):
        assert s[f"stop_distance_{stepper}_m"] == pytest.approx(d, rel=5e-3), stepper  # O(h v / d)
        assert s[f"stop_time_{stepper}_s"] == pytest.approx(t_stop, abs=0.01), stepper
        assert s[f"final_speed_{stepper}_m_s"] < 1e-6  # static friction holds it
    traj = np.load(out / "sliding_brick_trajectory.npz")
    t = traj["t"]
    sliding = t < t_stop - 0.01
    x_cf = v * t - 0.5 * mu * G * t**2
    assert np.abs(traj["x_default"][sliding] - x_cf[sliding]).max() < 2e-3  # h v = 2 mm
    assert json.loads(str(traj["units"]))["x_default"] == "m"


def test_incline_sticks_iff_tan_le_mu_else_slides_with_g_sin_minus_mu_cos(quick_runs):
    s = summary_of(quick_runs, "incline")
    mu = s["friction"]
    angles = s["angle_rad"]
    T = s["duration_s"]
    assert len(angles) >= 2
    sticks = [math.tan(a) <= mu for a in angles]
    assert True in sticks and False in sticks  # both regimes are shown
    assert s["sticks_closed_form"] == sticks
    assert s["sticks_simulated"] == sticks
    a_cf = [0.0 if st else G * (math.sin(a) - mu * math.cos(a)) for a, st in zip(angles, sticks)]
    assert s["acceleration_closed_form_m_s2"] == pytest.approx(a_cf, abs=1e-12)
    assert s["acceleration_simulated_m_s2"] == pytest.approx(a_cf, rel=1e-4, abs=1e-6)
    d_cf = [0.5 * a * T**2 for a in a_cf]
    # semi-implicit Euler slides a T (T + h) / 2: h / T = 0.2 % more
    assert s["distance_simulated_m"] == pytest.approx(d_cf, rel=5e-3, abs=1e-4)
    assert s["units"]["acceleration_simulated_m_s2"] == "m/s^2"


def test_rod2d_falls_and_rests_on_the_ground(quick_runs):
    s = summary_of(quick_runs, "rod2d")
    m, L, y0, th0 = 2.0, 1.0, 1.0, 0.6
    k = s["contact_stiffness_N_m"]
    assert s["stepper"] == "lcp" and k == 1e6
    t_c = math.sqrt(2 * (y0 - L * math.sin(th0)) / G)
    assert s["first_contact_time_closed_form_s"] == pytest.approx(t_c, rel=1e-12)
    assert s["first_contact_time_s"] == pytest.approx(t_c, abs=2 * s["dt_s"])
    assert s["free_fall_max_error_discrete_m"] < 1e-9  # the discrete parabola, exactly
    assert s["free_fall_max_error_m"] < G * t_c * s["dt_s"]  # O(h) from the continuous one
    # at rest, lying on the ground, each end m g / (2 k) deep, the ground carrying m g
    assert s["final_height_closed_form_m"] == pytest.approx(-m * G / (2 * k), rel=1e-12)
    assert s["final_height_m"] == pytest.approx(-m * G / (2 * k), rel=1e-3)
    assert abs(s["final_angle_rad"]) < 1e-6
    assert s["final_vertical_force_N"] == pytest.approx(m * G, rel=1e-6)
    assert s["final_speed_max"] < 1e-6
    assert s["final_contacts"] == 2 and s["all_converged"] is True


def test_box_stack_stands_still_for_10_s(quick_runs):
    out, _ = quick_runs("box-stack")
    s = summary_of(quick_runs, "box-stack")
    assert s["duration_s"] == pytest.approx(10.0) and s["boxes"] == 5
    assert s["max_drift_m"] < 1e-3 and s["stands_still"] is True
    assert s["ground_force_closed_form_N"] == pytest.approx(5 * 1.0 * G, rel=1e-12)
    assert s["final_ground_force_N"] == pytest.approx(5 * G, rel=1e-3)
    assert s["final_contacts"] == 20  # four corners per face
    traj = np.load(out / "box_stack_trajectory.npz")
    assert traj["displacement"].shape == (len(traj["t"]), 5)
    assert np.abs(traj["displacement"]).max() == pytest.approx(s["max_drift_m"])
