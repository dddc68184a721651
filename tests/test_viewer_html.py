"""sinews.viewer: the animation data (poses checked against forward kinematics), the page's
self-containment, and the page drawn by a headless Chromium (bodies drawn, and moving)."""

from __future__ import annotations

import json
import re
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinews
from sinews import joints as J
from sinews.geometry import Box, Capsule, Cylinder, Sphere
from sinews.sim import Scene
from sinews.spatial import Transform, quat_to_matrix
from sinews.viewer import animation_data, find_browser, screenshot, to_html, write_html
from sinews.viewer.browser import INSTALL_HINT


def falling_ball(color=(1.0, 0.0, 0.0)):
    m = sinews.Model(name="ball")
    m.add_body("world", J.PrismaticZ(), inertia=sinews.SpatialInertia.point_mass(1.0), name="ball")
    scene = Scene(m)
    scene.add_ground()
    scene.add_geometry("ball", Sphere(0.1), color=color)
    t = np.linspace(0.0, 1.0, 1001)
    q = (1.0 - 0.9 * t)[:, None]  # from 1.0 m down to 0.1 m
    return scene, t, q


def tumbling_body():
    """A free body with a box, a capsule and a cylinder, offset and rotated in the body."""
    m = sinews.Model(name="tumbler")
    m.add_body("world", J.FreeFlyer(), inertia=sinews.SpatialInertia(1.0, np.zeros(3), np.eye(3) * 0.1), name="b")
    scene = Scene(m)
    scene.add_ground()
    scene.add_geometry("b", Box([0.2, 0.1, 0.05]), Transform.rot_x(0.3, (0.1, 0.0, 0.0)))
    scene.add_geometry("b", Capsule(0.03, 0.2), Transform.rot_y(0.7, (0.0, 0.2, 0.0)))
    scene.add_geometry("b", Cylinder(0.05, 0.1), Transform.rot_z(-0.4, (0.0, 0.0, 0.3)))
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 0.5, 51)
    q = np.array([sinews.random_configuration(m, rng) for _ in t])
    return scene, t, q


def test_viewer_poses_are_forward_kinematics_of_the_subsampled_states():
    scene, t, q = tumbling_body()
    data = animation_data(scene, (t, q), fps=20.0)
    # 0.5 s at 20 frames/s: frames at 0, 0.05, ..., 0.5 -> states 0, 5, ..., 50
    np.testing.assert_allclose(data["times"], t[::5], atol=1e-12)
    moving = [g for g in data["geometries"] if not g["static"]]
    assert [g["kind"] for g in moving] == ["box", "capsule", "cylinder"]
    assert [g["kind"] for g in data["geometries"] if g["static"]] == ["halfspace"]
    geos = [g for g in scene.geometries if g.body != 0]
    for f, k in enumerate(range(0, 51, 5)):
        row = np.asarray(data["frames"][f]).reshape(-1, 7)
        body = sinews.body_placement(scene.model, q[k], "b")
        for j, g in enumerate(geos):
            X = body @ g.X_body_geometry
            np.testing.assert_allclose(row[j, :3], X.p, atol=1e-5)
            np.testing.assert_allclose(quat_to_matrix(row[j, 3:] / np.linalg.norm(row[j, 3:])), X.R, atol=1e-4)
    lo, hi = np.array(data["bounds"])
    assert np.all(lo < hi)


def test_viewer_frames_hold_the_state_at_or_before_each_frame_time():
    scene, t, q = falling_ball()
    t2 = np.array([0.0, 0.01, 0.02, 0.049, 0.051, 0.1])
    q2 = np.arange(6.0)[:, None]
    data = animation_data(scene, (t2, q2), fps=20.0)  # frames at 0, 0.05, 0.1
    assert data["times"] == [0.0, 0.049, 0.1]
    assert [f[2] for f in data["frames"]] == [0.0, 3.0, 5.0]
    # a cap on the number of frames still ends on the last state
    data = animation_data(scene, (t, q), fps=1000.0, max_frames=7)
    assert len(data["frames"]) == 7 and data["times"][-1] == 1.0 and data["frames"][-1][2] == pytest.approx(0.1)


def test_viewer_accepts_result_objects_and_refuses_bad_input():
    scene, t, q = falling_ball()

    class Result:  # what sinews.sim.SimulationResult and sinews.simulate.Trajectory provide
        pass

    r = Result()
    r.t, r.q = t, q
    assert animation_data(scene, r)["frames"] == animation_data(scene, t=t, q=q)["frames"]
    with pytest.raises(ValueError, match="result"):
        animation_data(scene, object())
    with pytest.raises(ValueError, match="result"):
        animation_data(scene, r, t=t, q=q)
    with pytest.raises(ValueError, match="q"):
        animation_data(scene, (t, np.zeros((len(t), 2))))
    with pytest.raises(ValueError, match="t"):
        animation_data(scene, (t[::-1], q))
    with pytest.raises(ValueError, match="q"):
        animation_data(scene, (t, np.full_like(q, np.nan)))
    with pytest.raises(ValueError, match="fps"):
        animation_data(scene, r, fps=0.0)
    with pytest.raises(ValueError, match="max_frames"):
        animation_data(scene, r, max_frames=0)


def test_viewer_page_is_self_contained(tmp_path):
    scene, t, q = falling_ball()
    path = write_html(scene, (t, q), tmp_path / "sub" / "ball.html", title="a </script> title", info={"dt": "1 ms"})
    text = path.read_text(encoding="utf-8")
    assert text == to_html(scene, (t, q), title="a </script> title", info={"dt": "1 ms"})
    # no network: no external scripts, stylesheets or imports
    assert not re.search(r"<(script|link)[^>]+(src|href)=", text)
    assert "import(" not in text.split('id="sinews-data"')[1].split("</script>")[0]
    assert "The MIT License" in text and "three.js authors" in text
    payload = text.split('<script type="application/json" id="sinews-data">')[1].split("</script>")[0]
    data = json.loads(payload)
    assert data["title"] == "a </script> title" and data["info"] == {"dt": "1 ms"}
    assert len(data["frames"]) == 31  # 1 s at 30 frames/s
    with pytest.raises(ValueError, match="path"):
        write_html(scene, (t, q), tmp_path)


# ---------------------------------------------------------------------------- browser
def read_png(path) -> np.ndarray:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) to (h, w, 3) uint8."""
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    idat = b""
    while pos < len(raw):
        n, kind = struct.unpack(">I4s", raw[pos:pos + 8])
        body = raw[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IDAT":
            idat += body
        else:
            chunks[kind] = body
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and ctype in (2, 6) and interlace == 0
    bpp = 3 if ctype == 2 else 4
    data = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + w * bpp)
    out = np.zeros((h, w * bpp), dtype=np.int64)
    prev = np.zeros(w * bpp, dtype=np.int64)
    for y in range(h):
        ftype, line = data[y, 0], data[y, 1:].astype(np.int64)
        cur = np.zeros_like(line)
        if ftype == 0:
            cur = line
        elif ftype == 2:
            cur = (line + prev) & 255
        else:  # 1 (sub), 3 (average), 4 (Paeth) depend on the left neighbour: byte by byte
            for i in range(len(line)):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                if ftype == 1:
                    cur[i] = (line[i] + a) & 255
                elif ftype == 3:
                    cur[i] = (line[i] + (a + b) // 2) & 255
                else:
                    c = prev[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    cur[i] = (line[i] + pred) & 255
        out[y] = cur
        prev = cur
    return out.reshape(h, w, bpp)[:, :, :3].astype(np.uint8)


needs_browser = pytest.mark.skipif(find_browser() is None, reason=INSTALL_HINT)


@needs_browser
def test_viewer_page_draws_the_bodies_and_they_move(tmp_path):
    scene, t, q = falling_ball(color=(1.0, 0.0, 0.0))
    page = write_html(scene, (t, q), tmp_path / "ball.html")
    shots = [read_png(screenshot(page, tmp_path / f"t{k}.png", t=k, width=480, height=360)) for k in (0.0, 1.0)]
    centroids = []
    for img in shots:
        assert img.shape == (360, 480, 3)
        rgb = img.astype(int)
        background = np.array([0xEE, 0xF1, 0xF5])
        drawn = np.any(np.abs(rgb - background) > 12, axis=2)
        assert drawn.mean() > 0.2  # the ground plane and the ball, not an empty page
        red = (rgb[:, :, 0] > 120) & (rgb[:, :, 1] < 80) & (rgb[:, :, 2] < 80)
        assert red.sum() > 200, "the red ball is not drawn"
        ys, xs = np.nonzero(red)
        centroids.append((ys.mean(), xs.mean()))
    # the ball fell by 0.9 m: it is drawn lower in the picture (image y grows downwards)
    assert centroids[1][0] - centroids[0][0] > 40
    assert np.any(shots[0] != shots[1])


@needs_browser
def test_viewer_screenshot_refuses_a_missing_page(tmp_path):
    with pytest.raises(ValueError, match="html_path"):
        screenshot(tmp_path / "none.html", tmp_path / "x.png")


def test_viewer_screenshot_without_browser_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("SINEWS_BROWSER", str(tmp_path / "no-such-browser"))
    assert find_browser() is None
    with pytest.raises(RuntimeError, match="apt-get install -y chromium"):
        screenshot(tmp_path / "a.html", tmp_path / "a.png")


def test_viewer_contact_forces_are_segments_from_the_points_of_each_frame():
    scene, t, q = falling_ball()

    class Result:
        pass

    r = Result()
    r.t, r.q = t[:11], q[:11]  # 0 .. 0.01 s, frames at 1000 fps: every state
    r.contact_sample = np.array([3, 3, 7])
    r.contact_points = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.2, 0.0]])
    r.contact_forces = np.array([[0.0, 0.0, 10.0], [0.0, 0.0, 5.0], [1.0, 0.0, 20.0]])
    data = animation_data(scene, r, fps=1000.0)
    c, s = data["contacts"], data["force_scale"]
    assert len(c) == 11 and s > 0
    assert [len(f) for f in c] == [0, 0, 0, 12, 0, 0, 0, 6, 0, 0, 0]
    np.testing.assert_allclose(c[3], [0, 0, 0, 0, 0, 10 * s, 0.1, 0, 0, 0.1, 0, 5 * s], atol=1e-4)
    np.testing.assert_allclose(c[7], [0, 0.2, 0, s, 0.2, 20 * s], atol=1e-4)
    assert animation_data(scene, r, fps=1000.0, contacts=False)["contacts"] is None
    assert animation_data(scene, (r.t, r.q))["contacts"] is None  # plain arrays: no contact data


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), span=st.floats(0.0, 5.0), fps=st.floats(0.5, 200.0),
       max_frames=st.integers(1, 50), seed=st.integers(0, 2**31 - 1))
def test_viewer_frame_times_property(n, span, fps, max_frames, seed):
    """Frames are stored states in order, at most max_frames (+1 for the last state), starting
    at the first state and ending on the last; each shows the latest state at or before its time."""
    scene, _, _ = falling_ball()
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, span, n)) if n > 1 else np.zeros(1)
    q = rng.uniform(0.0, 2.0, (n, 1))
    data = animation_data(scene, (t, q), fps=fps, max_frames=max_frames)
    times = np.array(data["times"])
    ball = [g for g in data["geometries"] if g["kind"] == "sphere"][0]
    # a ball that never moves (one state, or equal states) is stored once, as a static pose
    z = np.full(len(times), ball["pose"][2]) if ball["static"] else np.array([f[2] for f in data["frames"]])
    assert 1 <= len(times) <= max_frames + 1
    assert times[0] == round(t[0], 6) and times[-1] == round(t[-1], 6)
    assert np.all(np.diff(times) >= 0)
    for tf, zf in zip(times, z):
        k = np.searchsorted(t, tf + 1e-6, side="right") - 1
        assert np.any(np.isclose(zf, q[: k + 1, 0], atol=1e-5))


@pytest.mark.parametrize("bad, arg", [
    ((np.array([0.0, np.nan]), np.zeros((2, 1))), "t"),
    ((np.array([0.0, 1.0]), np.array([[0.0], [np.inf]])), "q"),
    ((np.array([0.0, 1.0]), np.zeros((2, 1), dtype=complex)), "q"),
    ((np.array(["a", "b"]), np.zeros((2, 1))), "t"),
    ((np.zeros((2, 2)), np.zeros((2, 1))), "t"),
    ((np.array([0.0, 1.0]), np.zeros(2)), "q"),
    ((np.array([0.0, 1.0]), np.zeros((3, 1))), "t and q"),
])
def test_viewer_bad_arrays_are_refused_naming_the_argument(bad, arg):
    scene, _, _ = falling_ball()
    with pytest.raises(ValueError, match=arg):
        animation_data(scene, bad)
