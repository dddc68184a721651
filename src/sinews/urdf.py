"""Load a URDF robot description into a :class:`sinews.Model`.

Parsing is done by `yourdfpy <https://github.com/clemense/yourdfpy>`_ (``pip install
sinews[urdf]``); this module maps the parsed description onto sinews bodies, joints, inertias
and frames, and rejects what it cannot represent faithfully.

Mapping (details and the list of errors: ``docs/urdf.md``):

* every URDF ``<link>`` becomes a body of the same name; the root link is the first body
  (id 1), welded to the world, or attached by a :func:`~sinews.joints.FreeFlyer` when
  ``floating_base=True``; the other bodies follow in depth-first order of the kinematic tree;
* the body frame is the URDF link frame, which coincides with the frame of the joint that
  carries the link; the joint ``<origin>`` becomes ``X_parent_joint``;
* ``revolute`` and ``continuous`` joints become :func:`~sinews.joints.Revolute` about the
  normalised ``<axis>``, ``prismatic`` a :func:`~sinews.joints.Prismatic`, ``fixed`` a
  :func:`~sinews.joints.Fixed`, ``floating`` a :func:`~sinews.joints.FreeFlyer` and ``planar``
  (axis ``0 0 1`` only) a :func:`~sinews.joints.Planar`;
* ``<inertial>`` (origin ``xyz`` = centre of mass, ``rpy`` = orientation of the principal
  frame in which ``<inertia>`` is given) becomes the body's
  :class:`~sinews.SpatialInertia`; a link without ``<inertial>`` is massless;
* every URDF joint also becomes a sinews *frame* of the same name, on its child body at the
  identity, so ``model.frame(joint_name).body`` is the body that the joint moves;
* joint limits, ``<dynamics>`` (damping, friction), ``<calibration>``,
  ``<safety_controller>``, visuals, collisions, materials, ``<transmission>`` and
  ``<gazebo>`` tags are ignored.

Everything this loader cannot represent raises :class:`URDFError` (a ``ValueError``) naming
the offending argument, link or joint: malformed XML, an unknown joint type, a zero axis,
mimic joints, a link with several parents, closed loops, several root links, joints that
reference unknown links.  A missing file raises :class:`URDFFileNotFoundError`, which is both
a ``ValueError`` and a ``FileNotFoundError``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from . import joints as J
from .model import Model
from .spatial import SpatialInertia, Transform

__all__ = ["load_urdf", "URDFError", "URDFFileNotFoundError", "SUPPORTED_JOINT_TYPES"]

SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
"""URDF joint types this loader maps (every other type is rejected)."""

_INERTIA_ATTRS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_AXIS_TOL = 1e-9


class URDFError(ValueError):
    """A URDF that cannot be loaded: malformed, inconsistent or using unsupported features."""


class URDFFileNotFoundError(URDFError, FileNotFoundError):
    """The URDF path given to :func:`load_urdf` does not exist."""


# ----------------------------------------------------------------------------- reading
def _read_source(source) -> tuple[bytes, str]:
    """The XML bytes of ``source`` and a short description of where they came from."""
    if isinstance(source, bytes):
        return source, "<XML bytes>"
    if isinstance(source, os.PathLike):
        path = Path(source)
    elif isinstance(source, str):
        text = source.lstrip("\ufeff \t\r\n")  # an XML declaration must come first
        if text.startswith("<"):
            return text.encode("utf-8"), "<XML string>"
        if not source.strip():
            raise URDFError("source: empty string (expected a URDF file path or an XML string)")
        path = Path(source)
    else:
        raise URDFError(
            f"source must be a file path or a URDF XML string, got {type(source).__name__}"
        )
    if not path.is_file():
        raise URDFFileNotFoundError(f"source: URDF file not found: {str(path)!r}")
    return path.read_bytes(), str(path)


def _check_xml(data: bytes, where: str):
    """Strict XML parse (yourdfpy silently *recovers* from broken XML, we refuse it)."""
    from lxml import etree

    try:
        root = etree.fromstring(data, parser=etree.XMLParser(remove_comments=True))
    except etree.XMLSyntaxError as exc:
        raise URDFError(f"source: malformed XML in {where}: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"source: the root element of {where} is <{root.tag}>, expected <robot>")
    if not root.get("name"):
        raise URDFError(f"source: the <robot> element of {where} has no 'name' attribute")
    # yourdfpy fills missing inertia entries with defaults (ixx = 1 ...): demand them all.
    for link in root.findall("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        lname = link.get("name")
        if inertial.find("mass") is None or inertial.find("mass").get("value") is None:
            raise URDFError(f"link {lname!r}: <inertial> needs <mass value=...>")
        inertia = inertial.find("inertia")
        if inertia is None:
            raise URDFError(f"link {lname!r}: <inertial> needs an <inertia> element")
        missing = [a for a in _INERTIA_ATTRS if inertia.get(a) is None]
        if missing:
            raise URDFError(f"link {lname!r}: <inertia> misses attribute(s) {', '.join(missing)}")
    for joint in root.findall("joint"):
        jname = joint.get("name")
        for tag in ("parent", "child"):
            el = joint.find(tag)
            if el is None or not el.get("link"):
                raise URDFError(f"joint {jname!r}: missing <{tag} link=...>")
    return root


def _parse(data: bytes, where: str):
    """Parse with yourdfpy (no meshes, no scene graph)."""
    try:
        import yourdfpy
    except ImportError as exc:  # pragma: no cover - exercised only without yourdfpy
        raise ImportError("sinews.load_urdf needs yourdfpy: pip install 'sinews[urdf]'") from exc
    try:
        return yourdfpy.URDF.load(
            io.BytesIO(data),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        ).robot
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise URDFError(f"source: invalid URDF in {where}: {type(exc).__name__}: {exc}") from None


# ----------------------------------------------------------------------------- mapping
def _transform(T, what: str) -> Transform:
    if T is None:
        return Transform.identity()
    T = np.asarray(T, dtype=float)
    if not np.all(np.isfinite(T)):
        raise URDFError(f"{what}: <origin> contains NaN or infinity")
    return Transform.from_matrix(T)


def _inertia(link) -> SpatialInertia:
    """The link's spatial inertia in the link frame (massless without ``<inertial>``)."""
    inertial = link.inertial
    if inertial is None:
        return SpatialInertia.zero()
    X = _transform(inertial.origin, f"link {link.name!r} <inertial>")
    mass = float(inertial.mass)
    I = np.asarray(inertial.inertia, dtype=float)
    try:
        return SpatialInertia(mass, X.p, X.R @ I @ X.R.T)
    except ValueError as exc:
        raise URDFError(f"link {link.name!r}: invalid <inertial>: {exc}") from None


def _unit_axis(joint) -> np.ndarray:
    axis = np.asarray(joint.axis, dtype=float)
    if axis.shape != (3,) or not np.all(np.isfinite(axis)):
        raise URDFError(f"joint {joint.name!r}: <axis xyz=...> must be 3 finite numbers, got {axis.tolist()}")
    n = np.linalg.norm(axis)
    if n < _AXIS_TOL:
        raise URDFError(f"joint {joint.name!r}: <axis> is the zero vector")
    return axis / n


def _joint(joint) -> J.Joint:
    kind = joint.type
    if joint.mimic is not None:
        raise URDFError(
            f"joint {joint.name!r}: mimic joints are not supported (a mimic joint is a "
            "constraint between coordinates, not a tree joint)"
        )
    if kind in ("revolute", "continuous"):
        return J.Revolute(_unit_axis(joint))
    if kind == "prismatic":
        return J.Prismatic(_unit_axis(joint))
    if kind == "fixed":
        return J.Fixed()
    if kind == "floating":
        return J.FreeFlyer()
    if kind == "planar":
        axis = _unit_axis(joint)
        if np.abs(axis - np.array([0.0, 0.0, 1.0])).max() > _AXIS_TOL:
            raise URDFError(
                f"joint {joint.name!r}: planar joints are supported only with <axis xyz=\"0 0 1\"> "
                f"(motion in the joint's x-y plane), got axis {np.asarray(joint.axis).tolist()}; "
                "rotate the joint <origin> instead"
            )
        return J.Planar()
    raise URDFError(
        f"joint {joint.name!r}: unsupported joint type {kind!r} "
        f"(supported: {', '.join(SUPPORTED_JOINT_TYPES)})"
    )


def _tree(robot):
    """Root link name and, for every link, its child joints in file order (with checks)."""
    links = {}
    for link in robot.links:
        if link.name in links:
            raise URDFError(f"link {link.name!r} is defined twice")
        links[link.name] = link
    if not links:
        raise URDFError("source: the URDF has no <link>")
    children = {name: [] for name in links}
    parent_joint = {}
    names = set()
    for joint in robot.joints:
        if joint.name in names:
            raise URDFError(f"joint {joint.name!r} is defined twice")
        names.add(joint.name)
        for role, lname in (("parent", joint.parent), ("child", joint.child)):
            if lname not in links:
                raise URDFError(f"joint {joint.name!r}: {role} link {lname!r} is not defined")
        if joint.child in parent_joint:
            raise URDFError(
                f"link {joint.child!r} has several parents (joints {parent_joint[joint.child].name!r} "
                f"and {joint.name!r}): closed kinematic loops are not supported"
            )
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise URDFError("source: the URDF has no root link (the joints form a closed loop)")
    if len(roots) > 1:
        raise URDFError(f"source: the URDF has several root links {roots}; it must be a single tree")
    # every link must be reachable from the root (otherwise a loop is detached from it)
    seen, stack = set(), [roots[0]]
    while stack:
        name = stack.pop()
        seen.add(name)
        stack.extend(j.child for j in children[name])
    unreachable = [name for name in links if name not in seen]
    if unreachable:
        raise URDFError(f"source: links {unreachable} form a closed loop detached from the root link")
    return roots[0], links, children


def load_urdf(source, floating_base: bool = False, *, gravity=(0.0, 0.0, -9.81), name=None) -> Model:
    """Build a :class:`sinews.Model` from a URDF file path or XML string.

    Parameters
    ----------
    source:
        A path (``str`` or ``os.PathLike``) to a ``.urdf`` file, or the URDF XML itself (a
        ``str`` starting with ``<``, or ``bytes``).
    floating_base:
        ``False`` (default): the root link is welded to the world.  ``True``: a
        :func:`~sinews.joints.FreeFlyer` joint connects the world to the root link
        (``q[:7] = [position; quaternion xyzw]``, ``v[:6] = [omega; v]`` in root-link axes).
    gravity:
        Gravity vector of the model (default ``(0, 0, -9.81)``).
    name:
        Model name (default: the ``<robot name=...>``).

    Returns
    -------
    Model
        Bodies named after the links (root first, then depth-first), one frame per URDF joint
        (same name, on the child body).

    Raises
    ------
    URDFError
        (a ``ValueError``) for malformed XML or unsupported/inconsistent URDF content;
        :class:`URDFFileNotFoundError` when the path does not exist.

    Example
    -------
    >>> import sinews
    >>> xml = '''<robot name="pendulum">
    ...   <link name="base"/>
    ...   <link name="rod"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    ...     <inertia ixx="0.083" iyy="0.083" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
    ...   <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
    ...     <axis xyz="0 1 0"/></joint>
    ... </robot>'''
    >>> model = sinews.load_urdf(xml)
    >>> model.nq, model.body_names
    (1, ['world', 'base', 'rod'])
    """
    if not isinstance(floating_base, (bool, np.bool_)):
        raise URDFError(f"floating_base must be True or False, got {floating_base!r}")
    data, where = _read_source(source)
    _check_xml(data, where)
    robot = _parse(data, where)
    root, links, children = _tree(robot)

    model = Model(gravity=gravity, name=robot.name if name is None else name)
    if root == "world":
        # A root link named "world" (a common URDF idiom) *is* the ground.
        if floating_base:
            raise URDFError(
                "floating_base: the root link is named 'world', i.e. the URDF is already fixed "
                "to the ground; a floating base cannot be added"
            )
        if links["world"].inertial is not None and links["world"].inertial.mass:
            raise URDFError("link 'world': the ground link cannot have a mass")
    elif floating_base:
        model.add_body(0, J.FreeFlyer(), None, _inertia(links[root]), name=root)
    else:
        # The mass of a body welded to the ground has no dynamic effect: it is left out.
        _inertia(links[root])  # still validated
        model.add_body(0, J.Fixed(), None, None, name=root)

    welded_to_world = {root: not floating_base}
    stack = list(reversed(children[root]))
    while stack:
        joint = stack.pop()
        jt = _joint(joint)
        link = links[joint.child]
        if link.name == "world":
            raise URDFError("link 'world': only the root link may be named 'world' (sinews' ground body)")
        inertia = _inertia(link)
        welded = welded_to_world[joint.parent] and jt.code == J.JT_FIXED
        welded_to_world[link.name] = welded
        model.add_body(
            joint.parent,
            jt,
            _transform(joint.origin, f"joint {joint.name!r}"),
            None if welded else inertia,
            name=link.name,
        )
        model.add_frame(joint.name, link.name)
        stack.extend(reversed(children[link.name]))
    return model
