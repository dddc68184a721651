"""URDF ``<visual>`` and ``<collision>`` elements as :class:`sinews.model.ShapeRecord` records,
with mesh file names resolved to files.

Resolution of a mesh ``filename`` (as Pinocchio's ``retrieveResourcePath`` does, plus the
URDF's own folders):

* ``package://PKG/REST`` (also ``package:///PKG/REST``): the first existing ``D/PKG/REST`` or,
  when ``D`` itself is named ``PKG``, ``D/REST``, for ``D`` in, in order: the ``package_dirs``
  argument, the folders of the ``ROS_PACKAGE_PATH`` environment variable, ``share`` folders of
  ``AMENT_PREFIX_PATH``, then the folders containing the URDF file and their ancestors;
* ``file://PATH`` and absolute paths: the path itself;
* a relative path: relative to the URDF file's folder.

A mesh that is not found keeps ``mesh=None`` on its record (its ``mesh_uri`` is the name as
written); loading the model never fails because of a mesh.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .spatial import Transform

__all__ = ["search_dirs", "resolve_mesh", "add_shapes", "pose", "rpy_matrix"]


def search_dirs(package_dirs, urdf_path: Path | None) -> list[Path]:
    """The folders searched for ``package://`` resources, in order (see the module docstring)."""
    dirs: list[Path] = []
    if package_dirs is not None:
        if isinstance(package_dirs, (str, os.PathLike)):
            package_dirs = [package_dirs]
        try:
            items = list(package_dirs)
        except TypeError:
            raise ValueError(
                f"package_dirs must be a folder or a list of folders, got {type(package_dirs).__name__}"
            ) from None
        for d in items:
            if not isinstance(d, (str, os.PathLike)):
                raise ValueError(f"package_dirs must contain folder paths, got {d!r}")
            dirs.append(Path(d))
    for var, sub in (("ROS_PACKAGE_PATH", ""), ("AMENT_PREFIX_PATH", "share")):
        for d in os.environ.get(var, "").split(os.pathsep):
            if d:
                dirs.append(Path(d) / sub if sub else Path(d))
    if urdf_path is not None:
        dirs.extend(urdf_path.parents)
    return dirs


def resolve_mesh(uri: str, dirs: list[Path], urdf_path: Path | None) -> str | None:
    """The absolute path of the mesh file ``uri`` names, or ``None`` when it is not found."""
    if uri.startswith("package://"):
        rest = uri[len("package://"):].lstrip("/")
        pkg, _, sub = rest.partition("/")
        if not pkg or not sub:
            return None
        for d in dirs:
            for cand in (d / pkg / sub, d / sub if d.name == pkg else None):
                if cand is not None and cand.is_file():
                    return str(cand.resolve())
        return None
    if uri.startswith("file://"):
        p = Path(uri[len("file://"):])
    else:
        p = Path(uri)
        if not p.is_absolute():
            if urdf_path is None:
                return None
            p = urdf_path.parent / p
    return str(p.resolve()) if p.is_file() else None


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def pose(origin, what: str = "<origin>") -> Transform:
    """The :class:`Transform` of a URDF ``<origin>`` (identity when absent); ``ValueError``
    naming ``what`` for NaN or infinity."""
    if origin is None:
        return Transform.identity()
    xyz = np.asarray(origin.xyz if origin.xyz is not None else (0, 0, 0), dtype=float)
    rpy = np.asarray(origin.rpy if origin.rpy is not None else (0, 0, 0), dtype=float)
    if xyz.shape != (3,) or rpy.shape != (3,) or not (np.all(np.isfinite(xyz)) and np.all(np.isfinite(rpy))):
        raise ValueError(f"{what}: <origin> contains NaN or infinity (or not 3 xyz and rpy values)")
    return Transform(rpy_matrix(rpy), xyz)


def _rgba(visual, materials) -> tuple | None:
    mat = getattr(visual, "material", None)
    if mat is None:
        return None
    color = getattr(mat, "color", None)
    if color is None and getattr(mat, "name", None) in materials:
        color = getattr(materials[mat.name], "color", None)
    if color is None or color.rgba is None:
        return None
    return tuple(float(c) for c in color.rgba)


def add_shapes(model, robot, xml_root, links, package_dirs, urdf_path: Path | None) -> None:
    """Record every ``<visual>`` and ``<collision>`` of ``links`` on ``model`` (mesh paths
    resolved).  A shape whose numbers are invalid (negative radius...) is skipped: shapes are
    for viewers and never refuse a robot."""
    dirs = search_dirs(package_dirs, urdf_path)
    materials = {m.name: m for m in getattr(robot, "materials", []) or [] if getattr(m, "name", None)}
    cache: dict[str, str | None] = {}
    # element names (the parser drops the optional name attribute), per link, in file order
    names = {(el.get("name"), role): [e.get("name") for e in el.findall(role)]
             for el in xml_root.findall("link") for role in ("visual", "collision")}
    for lname, link in links.items():
        body = lname  # a root link named "world" is sinews' ground body (id 0)
        for role, elements in (("visual", link.visuals), ("collision", link.collisions)):
            add = model.add_visual if role == "visual" else model.add_collision
            el_names = names.get((lname, role), [])
            for i, el in enumerate(elements):
                g = el.geometry
                kind = type(g).__name__.lower()
                kw = dict(name=el_names[i] if i < len(el_names) else None,
                          rgba=_rgba(el, materials) if role == "visual" else None)
                try:
                    kw["X_body_geometry"] = pose(el.origin)
                    if kind == "box":
                        add(body, "box", tuple(g.size), **kw)
                    elif kind == "sphere":
                        add(body, "sphere", (g.radius,), **kw)
                    elif kind == "cylinder":
                        add(body, "cylinder", (g.radius, g.length), **kw)
                    elif kind == "capsule":
                        add(body, "capsule", (g.radius, g.length), **kw)
                    elif kind == "mesh" and g.filename:
                        if g.filename not in cache:
                            cache[g.filename] = resolve_mesh(g.filename, dirs, urdf_path)
                        add(body, "mesh", (), mesh=cache[g.filename], mesh_uri=g.filename,
                            scale=tuple(g.scale) if g.scale is not None else (1.0, 1.0, 1.0), **kw)
                except (ValueError, TypeError):
                    continue
