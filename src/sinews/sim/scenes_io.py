"""Scenes from robot description files: URDF (``<collision>`` elements) and MJCF (geoms).

* :func:`scene_from_urdf` -- :func:`sinews.load_urdf` plus one :class:`~sinews.geometry.Geometry`
  per ``<collision>`` element, and a ground plane;
* :func:`scene_from_mjcf` -- the MJCF file read by the ``mujoco`` package's own parser, imported
  as a sinews model (:func:`sinews.mujoco_import.from_mujoco`) with one geometry per geom, so
  that the same file runs in sinews and in MuJoCo;
* :func:`scene_from_file` -- either, by file suffix (``.urdf`` / ``.xml``, ``.mjcf``);
* :func:`scene_to_mjcf` -- the other way: a scene (tree of revolute, prismatic, free and fixed
  joints; sphere, box, capsule, cylinder and ground shapes) as MJCF text for MuJoCo (used by the
  ``simulate`` benchmark to run the same scene in both);
* :func:`lowest_point` and :func:`place_on_ground` -- lift a floating robot so that it starts
  just above the ground.

Shapes.  URDF ``box``, ``sphere``, ``cylinder`` (axis z, as sinews' :class:`Cylinder`) and
``capsule`` map one to one; MJCF ``plane`` -> :class:`HalfSpace`, ``sphere``, ``capsule``,
``cylinder`` (MuJoCo sizes are half lengths: doubled), ``box`` (half sizes: doubled),
``ellipsoid`` -> the sphere of its largest radius (with a warning).  **Meshes** (URDF
``<mesh>``, MJCF ``mesh`` geoms) become, by ``mesh=``:

``"box"`` (default)
    the mesh's axis-aligned bounding box in the geometry frame (a warning says how many meshes
    were approximated);
``"sphere"``
    the smallest sphere about the bounding box's centre that holds the box;
``"convex"``
    the mesh's convex hull (:class:`sinews.geometry.Convex`): exact vertex contacts with the
    ground, one GJK/EPA contact against other shapes through coal (``pip install coal``);
    more contact points, slower steps;
``"skip"``
    no geometry.

Collision filtering.  URDF robots have **no self-collision by default** (``self_collision=False``,
PyBullet's default for URDFs): every robot geometry is in group bit 1 and masks it out, so it
touches the ground (bit 0) and other objects only.  MJCF geoms keep their ``contype`` /
``conaffinity`` bits as sinews ``group`` / ``mask`` (sinews tests a pair when
``(a.group & b.mask) and (b.group & a.mask)``; MuJoCo uses "or": the two agree for the usual
symmetric bits, e.g. the default 1/1; a warning is given for asymmetric bits).

Friction and restitution.  URDF has neither: ``friction`` / ``restitution`` apply to every robot
geometry (``None``: the scene defaults).  MJCF: each geom's sliding friction (first of its three
``friction`` values); sinews combines a pair's friction by the geometric mean where MuJoCo takes
the maximum -- the same value whenever the two geoms have equal friction.  MuJoCo has no
restitution coefficient (its contacts are soft, ``solref``): restitution 0.

MJCF ``<contact>``: ``<exclude body1 body2>`` -> :meth:`Scene.exclude_bodies`; ``<pair geom1
geom2>`` -> :meth:`Scene.set_pair` with ``force=True`` (collides whatever the bits and filters
say, as in MuJoCo) and the pair's tangential friction (the first of its five values; 0 for
``condim="1"``); what has no sinews equivalent (torsional/rolling friction, anisotropy, the
pair's margin, gap, solref, solimp) is named in a warning.  :func:`scene_to_mjcf` writes the
rules back.
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path
from typing import Any, Iterable

import numpy as np
from numpy.typing import ArrayLike

from .._checks import real_scalar
from ..geometry.shapes import ALL_GROUPS, Box, Capsule, Cylinder, HalfSpace, Sphere
from ..spatial import Transform
from .scene import Scene

__all__ = [
    "scene_from_urdf",
    "scene_from_mjcf",
    "scene_from_file",
    "lowest_point",
    "place_on_ground",
    "GROUND_GROUP",
    "ROBOT_GROUP",
    "MESH_MODES",
    "read_stl_vertices",
    "initial_state",
    "scene_to_mjcf",
]

#: collision bit of the ground plane added by :func:`scene_from_urdf`
GROUND_GROUP = 1 << 0
#: collision bit of the robot geometries of :func:`scene_from_urdf` (``self_collision=False``)
ROBOT_GROUP = 1 << 1
MESH_MODES = ("box", "sphere", "convex", "skip")


def _mesh_mode(mesh):
    if mesh not in MESH_MODES:
        raise ValueError(f"mesh must be one of {', '.join(map(repr, MESH_MODES))}, got {mesh!r}")
    return mesh


def _box_from_points(V: np.ndarray, mode: str):
    """(shape, X_geometry_shape) approximating the point set ``V`` (n, 3) by ``mode``."""
    if mode == "convex":
        from ..geometry.shapes import Convex

        return Convex(np.unique(np.round(V, 9), axis=0)), Transform.identity()
    lo, hi = V.min(axis=0), V.max(axis=0)
    size = np.maximum(hi - lo, 1e-6)
    centre = 0.5 * (lo + hi)
    if mode == "sphere":
        return Sphere(0.5 * float(np.linalg.norm(size))), Transform.translation(centre)
    return Box(size), Transform.translation(centre)


_MESH_CACHE: dict = {}


def read_stl_vertices(path: str | os.PathLike) -> np.ndarray:
    """The triangle vertices (3 n, 3) of a binary or ASCII STL file (``ValueError`` if it is
    neither)."""
    data = Path(path).read_bytes()
    if len(data) >= 84:
        n = int(np.frombuffer(data, dtype="<u4", count=1, offset=80)[0])
        if len(data) == 84 + 50 * n:  # binary: 80-byte header, count, 50 bytes per triangle
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                count=n, offset=84)
            return rec["v"].reshape(-1, 3).astype(float)
    text = data.decode("ascii", errors="replace")
    if text.lstrip().startswith("solid"):
        rows = [line.split()[1:4] for line in text.splitlines() if line.strip().startswith("vertex")]
        try:
            return np.array(rows, dtype=float).reshape(-1, 3)
        except ValueError:
            pass
    raise ValueError(f"path {str(path)!r} is not an STL file")


def _mesh_vertices(path: str) -> np.ndarray | None:
    """Vertices of a mesh file: STL read here, other formats through trimesh when installed;
    ``None`` when unreadable (reported by the caller)."""
    if path in _MESH_CACHE:
        return _MESH_CACHE[path]
    V = None
    try:
        if str(path).lower().endswith(".stl"):
            V = read_stl_vertices(path)
        else:
            import trimesh  # optional: OBJ, DAE, ... meshes

            V = np.asarray(trimesh.load(path, force="mesh", process=False).vertices, dtype=float).reshape(-1, 3)
        if V.shape[0] == 0 or not np.all(np.isfinite(V)):
            V = None
    except Exception:
        V = None
    _MESH_CACHE[path] = V
    return V


def scene_from_urdf(path: str | os.PathLike, ground: bool = True, *, floating_base: bool = True,
                    mesh: str = "box", self_collision: bool = False, friction: float | None = None,
                    restitution: float | None = None, ground_friction: float | None = None,
                    ground_restitution: float | None = None, contact_links: Iterable[str] | None = None,
                    package_dirs: Any = None, **scene_options: Any) -> Scene:
    """A :class:`Scene` from a URDF file: the robot, its ``<collision>`` shapes and a ground.

    Args:
        path: the ``.urdf`` file (or URDF XML, as :func:`sinews.load_urdf` accepts).
        ground: add the ground plane ``z <= 0`` (default ``True``).
        floating_base: attach the root link by a free joint (default ``True``: a robot that
            falls and walks); ``False`` welds it to the world.
        mesh: how ``<mesh>`` collisions are approximated: ``"box"``, ``"sphere"``, ``"convex"``
            or ``"skip"`` (module docstring).
        self_collision: let the robot's geometries collide with each other (default
            ``False``; parent/child pairs never collide).
        friction, restitution: of every robot geometry (default ``None``: scene defaults).
        ground_friction, ground_restitution: of the ground plane.
        contact_links: the links (names) whose ``<collision>`` shapes take part in contact
            (default ``None``: all); the shapes of the other links are kept as *visual-only*
            geometries (``group = mask = 0``: drawn by :mod:`sinews.viewer`, never in contact).
        package_dirs: folders searched for ``package://`` meshes (see :func:`sinews.load_urdf`).
        **scene_options: passed to :class:`Scene` (``margin``, ``default_friction``, ...).
            Without ``constraints=``, the URDF's ``<mimic>`` joints become coordinate
            constraints of the scene (``ConstraintSet.add_mimic_constraints``).
    """
    from ..urdf import load_urdf

    mode = _mesh_mode(mesh)
    if not isinstance(ground, (bool, np.bool_)):
        raise ValueError(f"ground must be True or False, got {ground!r}")
    model = load_urdf(path, floating_base=bool(floating_base), package_dirs=package_dirs)
    records = model.collisions  # sinews.model.ShapeRecord: body (name), kind, size, X_body_geometry, mesh, ...
    links = contact_links
    if links is not None:
        links = {str(x) for x in ([links] if isinstance(links, str) else links)}
        unknown = links - set(model.body_names)
        if unknown:
            raise KeyError(f"contact_links: no link named {', '.join(sorted(map(repr, unknown)))} in the URDF")
    if model.mimic_joints and scene_options.get("constraints") is None:
        # URDF <mimic> joints (recorded by load_urdf) are enforced as coordinate constraints
        from ..constraints import ConstraintSet

        mimic = ConstraintSet()
        mimic.add_mimic_constraints(model)
        scene_options["constraints"] = mimic.bind(model)
    scene = Scene(model, **scene_options)
    if ground:
        scene.add_ground(friction=ground_friction, restitution=ground_restitution,
                         group=GROUND_GROUP if not self_collision else ALL_GROUPS)
    group, mask = (ALL_GROUPS, ALL_GROUPS) if self_collision else (ROBOT_GROUP, ALL_GROUPS & ~ROBOT_GROUP)
    approximated, missing = 0, []
    for rec in records:
        body = str(rec.body)
        contact = links is None or body in links
        kind = rec.kind
        params = tuple(float(x) for x in rec.size)
        X = rec.X_body_geometry
        if kind == "box":
            shape, X_gs = Box(params[:3]), None
        elif kind == "sphere":
            shape, X_gs = Sphere(params[0]), None
        elif kind == "cylinder":
            shape, X_gs = Cylinder(params[0], params[1]), None
        elif kind == "capsule":
            shape, X_gs = Capsule(params[0], params[1]), None
        elif kind == "mesh":
            if mode == "skip":
                continue
            V = _mesh_vertices(rec.mesh) if rec.mesh else None
            if V is None:
                missing.append(str(rec.mesh_uri or rec.mesh))
                continue
            shape, X_gs = _box_from_points(V * np.asarray(rec.scale, dtype=float), mode)
            approximated += 1
        else:
            continue
        if X_gs is not None:
            X = X @ X_gs
        name = f"{body}/{rec.name}" if rec.name else None
        if name is not None and name in {g.name for g in scene.geometries}:
            name = None
        scene.add_geometry(body, shape, X, name=name, friction=friction, restitution=restitution,
                           group=group if contact else 0, mask=mask if contact else 0)
    if approximated:
        warnings.warn(f"scene_from_urdf: {approximated} <mesh> collision shapes approximated by their "
                      f"{dict(box='bounding box', sphere='bounding sphere', convex='convex hull')[mode]} "
                      f"(mesh={mode!r})", RuntimeWarning, stacklevel=2)
    if missing:
        warnings.warn(f"scene_from_urdf: {len(missing)} <mesh> collision shapes skipped (file not found or "
                      f"unreadable: {', '.join(sorted(set(missing))[:3])}{', ...' if len(set(missing)) > 3 else ''})",
                      RuntimeWarning, stacklevel=2)
    return scene


# ----------------------------------------------------------------------------- MJCF
def _import_mujoco():
    try:
        import mujoco
    except ImportError:
        raise ImportError('scene_from_mjcf needs the mujoco package: pip install "sinews[mujoco]"') from None
    return mujoco


def scene_from_mjcf(path: str | os.PathLike, *, mesh: str = "box", unsupported: str = "raise",
                    **scene_options: Any) -> Scene:
    """A :class:`Scene` from an MJCF file read by MuJoCo's parser (``pip install "sinews[mujoco]"``).

    The model is :func:`sinews.mujoco_import.from_mujoco` of the compiled ``mujoco.MjModel``
    (sinews ``q`` is MuJoCo's ``qpos`` with quaternions as ``(x, y, z, w)``); every geom with a
    collision bit (``contype`` or ``conaffinity`` nonzero) becomes a geometry on its body, at
    its ``geom_pos``/``geom_quat``, with the geom's sliding friction; planes become
    half-spaces.  ``mesh`` as in :func:`scene_from_urdf`.  Equality constraints (connect, weld,
    linear joint couplings) become ``scene.constraints``
    (:func:`sinews.mujoco_import.mujoco_constraints`), which every stepper enforces; other
    features without a sinews equivalent (tendons, springs, ...) are refused, or dropped with a
    warning when ``unsupported="warn"``.  The ``<contact>`` section's exclusions and pairs become
    the scene's pair rules (module docstring; the pair's tangential friction is its ``mu``;
    unsupported pair attributes are named in a warning).  The compiled ``mujoco.MjModel`` is kept as
    ``scene.mj_model`` (its ``opt.timestep`` is the file's time step).
    """
    mujoco = _import_mujoco()
    from ..mujoco_import import from_mujoco, mujoco_geoms

    mode = _mesh_mode(mesh)
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path {str(path)!r} is not an MJCF file")
    try:
        mj = mujoco.MjModel.from_xml_path(str(p))
    except ValueError as exc:
        raise ValueError(f"path {str(path)!r}: MuJoCo cannot read it: {exc}") from None
    constraints = None
    if mj.neq:  # equalities become exact bilateral constraints of the scene
        from ..mujoco_import import mujoco_constraints

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = from_mujoco(mj, unsupported="warn")
        others = [str(w.message) for w in caught if "equality constraint" not in str(w.message)]
        if others and unsupported == "raise":
            raise ValueError(f"path {str(path)!r}: features without a sinews equivalent (pass "
                             f"unsupported='warn' to drop them): {'; '.join(others)}")
        for text in others:
            warnings.warn(text, RuntimeWarning, stacklevel=2)
        constraints = mujoco_constraints(mj, model)
    else:
        model = from_mujoco(mj, unsupported=unsupported)
    scene = Scene(model, constraints, **scene_options)
    approximated, used, bits, index = 0, set(), [], {}
    in_pairs = {int(g) for g in mj.pair_geom1} | {int(g) for g in mj.pair_geom2}
    for g, geo in enumerate(mujoco_geoms(mj)):
        if geo.contype == 0 and geo.conaffinity == 0 and g not in in_pairs:
            continue  # a visual-only geom (a geom of a <pair> collides through its pair only)
        size = np.asarray(geo.size, dtype=float)
        X = geo.X_body_geometry
        if geo.type == "plane":
            shape = HalfSpace()
        elif geo.type == "sphere":
            shape = Sphere(size[0])
        elif geo.type == "capsule":
            shape = Capsule(size[0], 2.0 * size[1])
        elif geo.type == "cylinder":
            shape = Cylinder(size[0], 2.0 * size[1])
        elif geo.type == "box":
            shape = Box(2.0 * size)
        elif geo.type == "ellipsoid":
            shape = Sphere(float(size.max()))
            approximated += 1
        elif geo.type == "mesh" and mode != "skip":
            mid = int(mj.geom_dataid[g])
            start, n = int(mj.mesh_vertadr[mid]), int(mj.mesh_vertnum[mid])
            shape, X_gs = _box_from_points(np.asarray(mj.mesh_vert[start:start + n], dtype=float), mode)
            X = X @ X_gs
            approximated += 1
        else:
            continue  # height fields, SDFs, skipped meshes
        name = geo.name if geo.name and geo.name not in used else None
        used.add(name)
        bits.append((geo.contype, geo.conaffinity))
        index[g] = len(scene.geometries)
        scene.add_geometry(geo.body, shape, X, name=name, friction=float(geo.friction[0]), restitution=None,
                           group=geo.contype & ALL_GROUPS, mask=geo.conaffinity & ALL_GROUPS)
    if approximated:
        warnings.warn(f"scene_from_mjcf: {approximated} mesh/ellipsoid geoms approximated (mesh={mode!r})",
                      RuntimeWarning, stacklevel=2)
    # pairs that MuJoCo's rule (either direction) accepts and sinews' (both directions) refuses
    differ = sum(bool(ci & aj) != bool(cj & ai) for i, (ci, ai) in enumerate(bits) for (cj, aj) in bits[i + 1:])
    if differ:
        warnings.warn(f"scene_from_mjcf: {differ} geom pairs collide in MuJoCo (contype of one & conaffinity "
                      "of the other) but not in sinews (both ways needed)", RuntimeWarning, stacklevel=2)
    from ._mjcf_contact import read_contact_section

    read_contact_section(mujoco, mj, scene, index)
    scene.mj_model = mj
    return scene


def scene_from_file(path: str | os.PathLike, **options: Any) -> Scene:
    """:func:`scene_from_urdf` for ``*.urdf``, :func:`scene_from_mjcf` for ``*.xml`` / ``*.mjcf``."""
    suffix = Path(path).suffix.lower()
    if suffix == ".urdf":
        return scene_from_urdf(path, **options)
    if suffix in (".xml", ".mjcf"):
        return scene_from_mjcf(path, **options)
    raise ValueError(f"path: expected a .urdf or an MJCF .xml file, got {str(path)!r}")


# ----------------------------------------------------------------------------- placing
def lowest_point(scene: Scene, q: ArrayLike) -> float:
    """The lowest world height ``z`` of the geometries on moving bodies at ``q`` (``inf`` if
    there are none)."""
    from ..kinematics import forward_kinematics

    model = scene.model
    pl = forward_kinematics(model, q)
    low = math.inf
    for g in scene.geometries:
        s = g.shape
        if g.body == 0 or isinstance(s, HalfSpace):
            continue
        Rb, pb = pl.R[g.body], pl.p[g.body]
        R = Rb @ g.X_body_geometry.R
        z = float(pb[2] + Rb[2] @ g.X_body_geometry.p)
        r2 = R[2]  # world z of the geometry axes
        if s.kind in ("sphere", "point"):
            z -= s.radius
        elif s.kind == "box":
            z -= float(np.abs(r2) @ s.half_extents)
        elif s.kind == "capsule":
            z -= abs(r2[2]) * 0.5 * s.length + s.radius
        elif s.kind == "cylinder":
            z -= abs(r2[2]) * 0.5 * s.length + s.radius * math.sqrt(max(0.0, 1.0 - r2[2] ** 2))
        else:
            z -= s.bounding_radius()
        low = min(low, z)
    return low


def place_on_ground(scene: Scene, q: ArrayLike, clearance: float = 0.0, height: float = 0.0) -> np.ndarray:
    """``q`` with the floating base (first joint, a free joint on the world) moved vertically so
    that the lowest geometry is ``clearance`` above the plane ``z = height``."""
    from ..joints import JT_FREEFLYER

    model = scene.model
    clearance = real_scalar(clearance, "clearance")
    height = real_scalar(height, "height")
    q = np.array(q, dtype=float)
    if q.shape != (model.nq,):
        raise ValueError(f"q must have shape ({model.nq},), got {q.shape}")
    root = next((b for b in model.bodies[1:] if b.parent == 0 and b.joint is not None
                 and b.joint.code == JT_FREEFLYER), None)
    if root is None:
        raise ValueError("q: the model has no free joint on the world to lift")
    low = lowest_point(scene, q)
    if not math.isfinite(low):
        raise ValueError("scene: no geometry on a moving body")
    q[root.idx_q + 2] += height + clearance - low
    return q


def initial_state(scene: Scene, drop: float = 0.0) -> tuple[np.ndarray, np.ndarray, float]:
    """``(q0, v0, dt)`` to start a scene loaded from a file: for an MJCF scene its ``qpos0``
    (:class:`sinews.mujoco_import.MujocoCoordinates`), zero velocity and its ``opt.timestep``;
    otherwise the neutral configuration, zero velocity and 1 ms.  A model with a floating base
    (a free joint on the world) and a ground is then lifted so that its lowest geometry is
    ``drop`` above the ground (``place_on_ground``)."""
    from ..configuration import neutral
    from ..joints import JT_FREEFLYER

    model = scene.model
    drop = real_scalar(drop, "drop")
    if drop < 0:
        raise ValueError(f"drop must be >= 0, got {drop}")
    mj = getattr(scene, "mj_model", None)
    if mj is not None:
        from ..mujoco_import import MujocoCoordinates

        q = MujocoCoordinates(model, mj).q_from_qpos(np.asarray(mj.qpos0, dtype=float))
        dt = float(mj.opt.timestep)
        return q, np.zeros(model.nv), dt
    q = neutral(model)
    floating = any(b.parent == 0 and b.joint is not None and b.joint.code == JT_FREEFLYER for b in model.bodies[1:])
    grounds = [g for g in scene.geometries if isinstance(g.shape, HalfSpace)]
    if floating and len(grounds) == 1 and math.isfinite(lowest_point(scene, q)):
        q = place_on_ground(scene, q, clearance=drop, height=float(grounds[0].X_body_geometry.p[2]))
    return q, np.zeros(model.nv), 1e-3


# ----------------------------------------------------------------------------- to MJCF
def _f(x) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(x))


def _wxyz(R) -> str:
    from ..spatial import matrix_to_quat

    x, y, z, w = matrix_to_quat(R)
    return _f([w, x, y, z])


def _bits(x: int) -> int:
    """A 32-bit mask as MuJoCo's signed int."""
    x = int(x) & ALL_GROUPS
    return x - (1 << 32) if x >= (1 << 31) else x


def scene_to_mjcf(scene: Scene, dt: float = 1e-3, *, cone: str = "elliptic", name: str | None = None) -> str:
    """The scene as MJCF text: the same bodies, inertias, joints (with their limits, damping and
    armature), collision shapes (size, pose, friction, ``group``/``mask`` as
    ``contype``/``conaffinity``), gravity and time step ``dt``; ``cone`` is MuJoCo's friction
    cone (``"elliptic"``: the 3-D Coulomb cone of the default stepper).

    Reading it back with :func:`scene_from_mjcf` gives a model whose ``q`` equals this one's
    (MuJoCo's ``qpos`` up to the quaternion order).  Supported: revolute, prismatic, fixed
    joints, and free joints on the world with an identity ``X_parent_joint``; a geometry
    without friction gets the scene's ``default_friction``.  Pair rules become a ``<contact>``
    section: body exclusions ``<exclude>``, pairs with a rule that collide ``<pair>`` with the
    pair's friction (a geometry exclusion has no MJCF equivalent unless its bodies are excluded
    or the pair is forced).  Restitution has no MuJoCo equivalent and is dropped.
    ``ValueError`` names what cannot be written.
    """
    from xml.sax.saxutils import quoteattr

    from ..joints import JT_FIXED, JT_FREEFLYER, JT_PRISMATIC, JT_REVOLUTE

    model = scene.model
    dt = real_scalar(dt, "dt")
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt}")
    if cone not in ("elliptic", "pyramidal"):
        raise ValueError(f"cone must be 'elliptic' or 'pyramidal', got {cone!r}")
    lower, upper = model.lower_position_limit, model.upper_position_limit
    damping, armature = model.damping, model.armature
    children: dict[int, list] = {}
    for b in model.bodies[1:]:
        children.setdefault(b.parent, []).append(b)
    geoms: dict[int, list] = {}
    for g in scene.geometries:
        geoms.setdefault(g.body, []).append(g)

    def geom_xml(g, pad):
        s, X = g.shape, g.X_body_geometry
        kind = s.kind
        if kind == "sphere":
            size = _f(s.radius)
        elif kind == "box":
            size = _f(0.5 * s.size)
        elif kind in ("capsule", "cylinder"):
            size = _f([s.radius, 0.5 * s.length])
        elif kind == "halfspace":
            kind, size = "plane", "0 0 1"
        else:
            raise ValueError(f"scene: geometry {g.name!r} ({kind}) has no MJCF equivalent")
        mu = scene.default_friction if g.friction is None else g.friction
        return (f'{pad}<geom name={quoteattr(g.name)} type="{kind}" size="{size}" pos="{_f(X.p)}" '
                f'quat="{_wxyz(X.R)}" friction="{_f(mu)} 0 0" condim="3" '
                f'contype="{_bits(g.group)}" conaffinity="{_bits(g.mask)}"/>')

    def body_xml(b, depth):
        pad = "  " * (depth + 1)
        j, X = b.joint, b.X_parent_joint
        lines = [f'{pad}<body name={quoteattr(b.name)} pos="{_f(X.p)}" quat="{_wxyz(X.R)}">']
        inner = pad + "  "
        if j.code == JT_FREEFLYER:
            if b.parent != 0 or not (np.allclose(X.R, np.eye(3), atol=0) and not X.p.any()):
                raise ValueError(f"scene: free joint of body {b.name!r} must be on the world at the identity")
            lines.append(f"{inner}<freejoint name={quoteattr(b.name + '_free')}/>")
        elif j.code in (JT_REVOLUTE, JT_PRISMATIC):
            iq, iv = b.idx_q, b.idx_v
            attrs = f'type="{"hinge" if j.code == JT_REVOLUTE else "slide"}" axis="{_f(j.axis)}"'
            if np.isfinite(lower[iq]) or np.isfinite(upper[iq]):
                lo = lower[iq] if np.isfinite(lower[iq]) else -1e10
                hi = upper[iq] if np.isfinite(upper[iq]) else 1e10
                attrs += f' limited="true" range="{_f([lo, hi])}"'
            if damping[iv]:
                attrs += f' damping="{_f(damping[iv])}"'
            if armature[iv]:
                attrs += f' armature="{_f(armature[iv])}"'
            lines.append(f"{inner}<joint name={quoteattr(b.name + '_joint')} {attrs}/>")
        elif j.code != JT_FIXED:
            raise ValueError(f"scene: joint {j.kind} of body {b.name!r} has no MJCF equivalent here")
        I = b.inertia
        if I.mass > 0:
            w, V = np.linalg.eigh(0.5 * (I.inertia_com + I.inertia_com.T))
            if np.linalg.det(V) < 0:
                V[:, 0] = -V[:, 0]
            w = np.maximum(w, 1e-12)
            lines.append(f'{inner}<inertial pos="{_f(I.com)}" quat="{_wxyz(V)}" mass="{_f(I.mass)}" '
                         f'diaginertia="{_f(w)}"/>')
        lines += [geom_xml(g, inner) for g in geoms.get(b.id, [])]
        for c in children.get(b.id, []):
            lines += body_xml(c, depth + 1)
        lines.append(f"{pad}</body>")
        return lines

    out = [f"<mujoco model={quoteattr(name or model.name)}>",
           '  <compiler angle="radian" inertiafromgeom="false"/>',
           f'  <option timestep="{_f(dt)}" gravity="{_f(model.gravity)}" cone="{cone}"/>',
           "  <worldbody>"]
    out += [geom_xml(g, "    ") for g in geoms.get(0, [])]
    for b in children.get(0, []):
        out += body_xml(b, 1)
    out += ["  </worldbody>"]
    from ._mjcf_contact import contact_xml

    out += contact_xml(scene)
    out += ["</mujoco>", ""]
    return "\n".join(out)
