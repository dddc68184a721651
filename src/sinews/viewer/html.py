"""A run as an interactive 3-D animation: one self-contained HTML file (three.js inlined).

:func:`write_html` computes, in Python, the world pose of every collision geometry of a
:class:`sinews.sim.Scene` at each animation frame (forward kinematics of the stored ``q``,
subsampled to ``fps`` frames per second of simulated time: the stored state at or just before
each frame time, no interpolation) and writes an HTML page that embeds

* the frame data as JSON (positions and unit quaternions ``(x, y, z, w)`` of the moving
  geometries, rounded to 0.01 mm; geometries whose pose never changes are stored once),
* the vendored three.js bundle (``sinews/viewer/vendor/``, MIT licence, its licence text is
  embedded too) and the player script (``player.js``),

so the file opens offline (``file://``) in any WebGL browser.  The page draws spheres, boxes,
capsules, cylinders, points, meshes (shapes with ``vertices`` and ``faces``) and the ground
plane (a half-space, with a grid); it has play/pause, a time slider, a speed menu, keyboard
control (space, left/right arrows) and an orbit camera (drag to rotate, right-drag to pan,
wheel to zoom).  URL fragment parameters: ``#t=1.5`` opens paused at 1.5 s (``&play=1`` to
play from there), ``speed=0.5``, ``controls=0`` hides the control bar (for screenshots).
"""

from __future__ import annotations

import html as _html
import json
import math
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._checks import real_array, real_scalar
from ..spatial import matrix_to_quat

if TYPE_CHECKING:
    from ..sim.scene import Scene

__all__ = ["animation_data", "to_html", "write_html", "THREE_VERSION"]

#: the version of the vendored three.js bundle
THREE_VERSION = "0.187.0"

BACKGROUND = "#eef1f5"

#: colours of the bodies' geometries (by body, cycling), RGB in [0, 1]
PALETTE = (
    (0.20, 0.47, 0.78), (0.90, 0.45, 0.13), (0.22, 0.63, 0.33), (0.80, 0.22, 0.25),
    (0.55, 0.38, 0.73), (0.60, 0.42, 0.33), (0.85, 0.45, 0.70), (0.45, 0.45, 0.45),
    (0.74, 0.74, 0.16), (0.10, 0.70, 0.78),
)
GROUND_COLOR = (0.76, 0.79, 0.82, 1.0)

_ROUND = 5  # decimals of positions (0.01 mm) and quaternion components


def _vendor_text(name: str) -> str:
    return resources.files("sinews.viewer").joinpath(name).read_text(encoding="utf-8")


def _trajectory(result, t, q):
    """(t (n,), q (n, nq)) from a result object with ``t``/``q`` or from explicit arrays."""
    if result is not None:
        if t is not None or q is not None:
            raise ValueError("result: give either a result or t and q, not both")
        if isinstance(result, (tuple, list)) and len(result) == 2:
            t, q = result
        else:
            try:
                t, q = result.t, result.q
            except AttributeError:
                raise ValueError(
                    f"result must have attributes t and q (a SimulationResult), got {type(result).__name__}"
                ) from None
    if t is None or q is None:
        raise ValueError("result: give a result with t and q, or both t= and q=")
    t = real_array(t, "t", ndim=1)
    q = real_array(q, "q", ndim=2)
    if t.shape[0] != q.shape[0] or t.shape[0] == 0:
        raise ValueError(f"t and q must have the same nonzero length, got {t.shape[0]} and {q.shape[0]}")
    if np.any(np.diff(t) < 0):
        raise ValueError("t must be nondecreasing")
    return t, q


def _frame_indices(t: np.ndarray, fps: float, max_frames: int) -> np.ndarray:
    """Indices of the stored states shown: the last state at or before each frame time."""
    span = float(t[-1] - t[0])
    n = int(math.floor(span * fps + 1e-9)) + 1
    if n > max_frames:
        times = t[0] + np.linspace(0.0, span, max_frames)
    else:
        times = t[0] + np.arange(n) / fps
    idx = np.searchsorted(t, times + 1e-12, side="right") - 1
    idx = np.clip(idx, 0, len(t) - 1)
    if idx[-1] != len(t) - 1:  # always end on the last state
        idx = np.append(idx, len(t) - 1)
    return np.unique(idx)


def _shape_record(shape) -> tuple[str, dict] | None:
    kind = getattr(shape, "kind", type(shape).__name__.lower())
    if kind == "sphere":
        return kind, {"radius": float(shape.radius)}
    if kind == "point":
        return kind, {}
    if kind == "box":
        return kind, {"size": [float(x) for x in shape.size]}
    if kind in ("capsule", "cylinder"):
        return kind, {"radius": float(shape.radius), "length": float(shape.length)}
    if kind == "halfspace":
        return kind, {}
    V = getattr(shape, "vertices", None)
    F = getattr(shape, "faces", getattr(shape, "triangles", None))  # sinews.geometry.Convex: triangles
    if V is not None and F is not None and not callable(V) and not callable(F):
        V = np.asarray(V, dtype=float).reshape(-1, 3)
        F = np.asarray(F, dtype=np.int64).reshape(-1, 3)
        return "mesh", {"vertices": np.round(V, _ROUND).ravel().tolist(), "faces": F.ravel().tolist()}
    return None


VISUAL_COLOR = (0.72, 0.73, 0.76, 1.0)


def _mesh_params(path, scale):
    """``{"vertices", "faces"}`` of a mesh file (shared vertices, rounded to 0.01 mm), or None."""
    from ..sim.scenes_io import _mesh_vertices

    V = _mesh_vertices(path) if path else None
    if V is None:
        return None
    V = np.round(V * np.asarray(scale, dtype=float), _ROUND)
    U, inverse = np.unique(V, axis=0, return_inverse=True)
    return {"vertices": U.ravel().tolist(), "faces": inverse.reshape(-1).astype(int).tolist()}, \
        float(np.linalg.norm(U, axis=1).max())


def _drawables(scene, visuals: bool):
    """(body id, X_body_shape, kind, params, color, name, role, bounding radius) of every
    collision geometry and, with ``visuals``, of every visual shape record of the model."""
    model = scene.model
    out = []
    geos = [g for g in scene.geometries if _shape_record(g.shape) is not None]
    body_rank = {b: i for i, b in enumerate(sorted({g.body for g in geos if g.body != 0}))}
    for j, g in enumerate(geos):
        kind, params = _shape_record(g.shape)
        out.append((g.body, g.X_body_geometry, kind, params, _color(g, body_rank.get(g.body, 0)),
                    g.name or f"geometry{j}", "collision", g.shape.bounding_radius()))
    if not visuals:
        return out
    for k, rec in enumerate(getattr(model, "visuals", ()) or ()):
        size = tuple(float(x) for x in rec.size)
        if rec.kind == "box":
            params, radius = {"size": list(size)}, 0.5 * float(np.linalg.norm(size))
        elif rec.kind == "sphere":
            params, radius = {"radius": size[0]}, size[0]
        elif rec.kind in ("cylinder", "capsule"):
            params, radius = {"radius": size[0], "length": size[1]}, size[0] + 0.5 * size[1]
        elif rec.kind == "mesh":
            got = _mesh_params(rec.mesh, rec.scale)
            if got is None:
                continue
            params, radius = got
        else:
            continue
        color = list(rec.rgba) if rec.rgba is not None else list(VISUAL_COLOR)
        out.append((model.body(rec.body).id, rec.X_body_geometry, "mesh" if rec.kind == "mesh" else rec.kind,
                    params, color, f"{rec.body}/visual{k}", "visual", radius))
    return out


def _color(geo, index_of_body: int) -> list:
    c = getattr(geo, "color", None)
    if c is not None:
        c = tuple(float(x) for x in c)
        return list(c) + [1.0] * (4 - len(c))
    if geo.shape.kind == "halfspace":
        return list(GROUND_COLOR)
    return list(PALETTE[index_of_body % len(PALETTE)]) + [1.0]


def _pose7(R, p) -> list:
    quat = matrix_to_quat(R)
    return [round(float(x), _ROUND) for x in (*p, *quat)]


def _contact_frames(result, idx, extent):
    """Per frame ``[px, py, pz, qx, qy, qz, ...]``: contact point and arrow tip (point + force x
    scale), and the scale [m/N]; ``None`` when the result has no contact data."""
    try:
        sample = np.asarray(result.contact_sample, dtype=np.int64)
        P = np.asarray(result.contact_points, dtype=float).reshape(-1, 3)
        F = np.asarray(result.contact_forces, dtype=float).reshape(-1, 3)
    except (AttributeError, TypeError, ValueError):
        return None, None
    if len(sample) != len(P) or len(P) != len(F) or not len(P) or not np.all(np.isfinite(F)):
        return None, None
    norm = np.linalg.norm(F, axis=1)
    typical = float(np.percentile(norm[norm > 0], 90)) if np.any(norm > 0) else 0.0
    scale = 0.4 * extent / typical if typical > 0 else 0.0
    order = np.argsort(sample, kind="stable")
    sample, P, F = sample[order], P[order], F[order]
    start = np.searchsorted(sample, idx, side="left")
    stop = np.searchsorted(sample, idx, side="right")
    frames = []
    for a, b in zip(start, stop):
        seg = np.concatenate([P[a:b], P[a:b] + scale * F[a:b]], axis=1)
        frames.append(np.round(seg, 4).ravel().tolist())
    return frames, scale


def animation_data(scene: "Scene", result: Any = None, *, t: ArrayLike | None = None, q: ArrayLike | None = None,
                   fps: float = 30.0, title: str | None = None,
                   max_frames: int = 3000, info: dict | None = None, contacts: bool = True,
                   visuals: bool = False) -> dict:
    """The data the HTML player animates (a JSON-serialisable ``dict``).

    Args:
        scene: a :class:`sinews.sim.Scene` (its ``model`` and ``geometries`` are used).
        result: an object with ``t`` (n,) and ``q`` (n, nq) -- a
            :class:`sinews.sim.SimulationResult` or a :class:`sinews.simulate.Trajectory` -- or a
            pair ``(t, q)``; alternatively pass ``t=`` and ``q=``.
        fps: animation frames per second of simulated time (the stored states are subsampled).
        title: page title (default: the model's name).
        max_frames: cap on the number of frames (long runs are subsampled further).
        info: extra ``{label: value}`` lines shown in the page's caption.
        contacts: draw the contact forces of each frame's state as arrows from the contact
            points (when ``result`` has ``contact_sample``, ``contact_points`` and
            ``contact_forces``, as a ``SimulationResult`` does); the scale (m per N, ``"force_scale"``)
            draws the 90th percentile of the contact forces 0.4 x the scene's half size long.
        visuals: also draw the model's visual shapes (``model.visuals``, e.g. the
            ``<visual>`` meshes of a URDF: STL read by sinews, other formats with trimesh);
            the collision shapes are then hidden by default (a check box shows them).

    Returns ``{"title", "times" (frames,), "frames" (frames, 7 * moving), "geometries" [...],
    "bounds" [[min xyz], [max xyz]], "background", "info", "contacts", "force_scale"}``
    (``contacts``: per frame the flat list of segments ``[point (3), arrow tip (3)]`` or
    ``None``); each geometry record has
    ``name``, ``body``, ``kind``, ``params``, ``color`` (RGBA), ``role`` (``"collision"`` or
    ``"visual"``), ``static`` and, when static,
    ``pose`` (x, y, z, qx, qy, qz, qw).
    """
    from ..kinematics import forward_kinematics

    fps = real_scalar(fps, "fps")
    if not fps > 0:
        raise ValueError(f"fps must be > 0, got {fps}")
    if isinstance(max_frames, bool) or not isinstance(max_frames, (int, np.integer)) or max_frames < 1:
        raise ValueError(f"max_frames must be a positive integer, got {max_frames!r}")
    model = scene.model
    t, q = _trajectory(result, t, q)
    if q.shape[1] != model.nq:
        raise ValueError(f"q must have {model.nq} columns (model.nq), got {q.shape[1]}")
    idx = _frame_indices(t, fps, int(max_frames))

    if not isinstance(visuals, (bool, np.bool_)):
        raise ValueError(f"visuals must be True or False, got {visuals!r}")
    draw = _drawables(scene, bool(visuals))
    bodies = np.array([d[0] for d in draw], dtype=np.int64)
    X = [d[1] for d in draw]
    n, ng = len(idx), len(draw)
    R = np.empty((n, ng, 3, 3))
    P = np.empty((n, ng, 3))
    for f, k in enumerate(idx):
        pl = forward_kinematics(model, q[k])
        Rb, pb = pl.R[bodies], pl.p[bodies]
        for j, Xg in enumerate(X):
            R[f, j] = Rb[j] @ Xg.R
            P[f, j] = pb[j] + Rb[j] @ Xg.p
    static = [bool(np.all(R[:, j] == R[0, j]) and np.all(P[:, j] == P[0, j])) for j in range(ng)]
    moving = [j for j in range(ng) if not static[j]]

    records = []
    for j, (body, _, kind, params, color, name, role, _) in enumerate(draw):
        rec = {"name": name, "body": model.bodies[body].name, "kind": kind, "params": params, "color": color,
               "role": role, "static": static[j]}
        if static[j]:
            rec["pose"] = _pose7(R[0, j], P[0, j])
        records.append(rec)
    # moving geometries first in the frame rows, in the order of `records`
    records = [r for r in records if not r["static"]] + [r for r in records if r["static"]]
    frames = []
    for f in range(n):
        row = []
        for j in moving:
            row.extend(_pose7(R[f, j], P[f, j]))
        frames.append(row)

    # bounds: what moves (with its size) or, if nothing moves, the finite static shapes
    collide = [j for j in moving if draw[j][6] == "collision"]
    finite = [j for j in (collide or moving or range(ng)) if math.isfinite(draw[j][7])]
    if finite:
        rad = np.array([draw[j][7] for j in finite])
        pts = P[:, finite, :]
        lo = (pts - rad[None, :, None]).reshape(-1, 3).min(axis=0)
        hi = (pts + rad[None, :, None]).reshape(-1, 3).max(axis=0)
    else:
        lo, hi = -np.ones(3), np.ones(3)
    lo, hi = np.minimum(lo, hi - 1e-3), np.maximum(hi, lo + 1e-3)
    forces, scale = (None, None)
    if contacts and result is not None and not isinstance(result, (tuple, list)):
        forces, scale = _contact_frames(result, idx, max(0.25, 0.5 * float(np.linalg.norm(hi - lo))))
    return {
        "title": title if title is not None else (model.name or "sinews"),
        "times": [round(float(x), 6) for x in t[idx]],
        "frames": frames,
        "geometries": records,
        "bounds": [lo.round(4).tolist(), hi.round(4).tolist()],
        "background": BACKGROUND,
        "info": {str(k): str(v) for k, v in (info or {}).items()},
        "contacts": forces,
        "force_scale": scale,
    }


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sinews.viewer (three.js {three_version})">
<title>{title}</title>
<style>
  html, body {{ margin: 0; height: 100%; overflow: hidden; background: {background};
                font: 13px system-ui, -apple-system, "Segoe UI", sans-serif; color: #223; }}
  #view {{ position: absolute; inset: 0; }}
  #caption {{ position: absolute; top: 8px; left: 10px; pointer-events: none;
              background: rgba(255,255,255,0.7); padding: 4px 8px; border-radius: 4px; }}
  #caption b {{ font-size: 14px; }}
  #status {{ position: absolute; top: 40%; width: 100%; text-align: center; font-size: 16px; }}
  #bar {{ position: absolute; left: 0; right: 0; bottom: 0; display: flex; gap: 10px;
          align-items: center; padding: 8px 12px; background: rgba(255,255,255,0.85); }}
  #scrub {{ flex: 1; }}
  #clock {{ font-variant-numeric: tabular-nums; min-width: 15em; }}
  button {{ min-width: 5em; }}
</style>
</head>
<body data-state="loading">
<div id="view"></div>
<div id="caption"><b>{title}</b>{info}</div>
<div id="status"></div>
<div id="bar">
  <button id="play" type="button">Pause</button>
  <input id="scrub" type="range" min="0" max="0" step="1" value="0" aria-label="time">
  <span id="clock"></span>
  <label>speed <select id="speed">
    <option value="0.1">0.1x</option><option value="0.25">0.25x</option>
    <option value="0.5">0.5x</option><option value="1" selected>1x</option>
    <option value="2">2x</option><option value="4">4x</option></select></label>
  <label id="forces-label"><input id="forces" type="checkbox" checked> contact forces</label>
  <label id="collision-label"><input id="collision" type="checkbox" checked> collision shapes</label>
</div>
<script type="application/json" id="sinews-data">{data}</script>
<script>
/* three.js {three_version} (https://threejs.org), bundled for sinews.viewer.
{three_license}*/
{three}
</script>
<script>
{player}
</script>
</body>
</html>
"""


def to_html(scene: "Scene", result: Any = None, *, t: ArrayLike | None = None, q: ArrayLike | None = None,
            fps: float = 30.0, title: str | None = None,
            max_frames: int = 3000, info: dict | None = None, contacts: bool = True,
            visuals: bool = False) -> str:
    """The self-contained HTML page (a string) of :func:`write_html`."""
    data = animation_data(scene, result, t=t, q=q, fps=fps, title=title, max_frames=max_frames, info=info,
                          contacts=contacts, visuals=visuals)
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")  # never close the <script> element early
    info_html = "".join(f"<br>{_html.escape(k)}: {_html.escape(v)}" for k, v in data["info"].items())
    license_text = _vendor_text("vendor/LICENSE-three.txt").replace("*/", "* /")
    return _PAGE.format(
        title=_html.escape(data["title"]),
        info=info_html,
        background=data["background"],
        data=payload,
        three=_vendor_text("vendor/three.sinews.min.js"),
        three_license=license_text,
        three_version=THREE_VERSION,
        player=_vendor_text("player.js"),
    )


def write_html(scene: "Scene", result: Any = None, path: str | os.PathLike = "animation.html", *,
               t: ArrayLike | None = None, q: ArrayLike | None = None, fps: float = 30.0,
               title: str | None = None, max_frames: int = 3000, info: dict | None = None,
               contacts: bool = True, visuals: bool = False) -> Path:
    """Write the run ``result`` of ``scene`` as an interactive 3-D animation to ``path``.

    The file is self-contained (three.js, the player and the frames inlined): open it in a
    browser, also offline.  See :func:`animation_data` for the arguments; returns the path.

    >>> import sinews, numpy as np, tempfile, pathlib
    >>> from sinews.geometry import Sphere
    >>> from sinews.sim import Scene
    >>> m = sinews.Model()
    >>> b = m.add_body("world", sinews.joints.PrismaticZ(), inertia=sinews.SpatialInertia.point_mass(1.0), name="ball")
    >>> scene = Scene(m); g = scene.add_ground(); g = scene.add_geometry("ball", Sphere(0.1))
    >>> t = np.linspace(0.0, 1.0, 101); q = (1.0 - 4.9 * t**2).clip(0.1)[:, None]
    >>> out = write_html(scene, (t, q), pathlib.Path(tempfile.mkdtemp()) / "ball.html")
    >>> out.stat().st_size > 100_000
    True
    """
    text = to_html(scene, result, t=t, q=q, fps=fps, title=title, max_frames=max_frames, info=info,
                   contacts=contacts, visuals=visuals)
    path = Path(path)
    if path.exists() and path.is_dir():
        raise ValueError(f"path {str(path)!r} is a folder; give a file name such as animation.html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
