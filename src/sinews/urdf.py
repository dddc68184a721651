"""Load a URDF robot description into a :class:`sinews.Model`.

Parsing is done by ROS's own Python URDF parser, ``urdf_parser_py`` (PyPI: ``urdfdom-py``;
``pip install "sinews[urdf]"``), after a strict XML pass (:mod:`sinews._urdf_parse`); this module
maps the parsed description onto sinews bodies, joints, inertias, frames, joint properties,
mimic records and shape records, and rejects what it cannot represent faithfully.

Mapping (details and the list of errors: ``docs/urdf.md``):

* every URDF ``<link>`` becomes a body of the same name; the root link is the first body
  (id 1), welded to the world, or attached by a :func:`~sinews.joints.FreeFlyer` when
  ``floating_base=True``; the other bodies follow in depth-first order of the kinematic tree;
* the body frame is the URDF link frame, which coincides with the frame of the joint that
  carries the link; the joint ``<origin>`` becomes ``X_parent_joint``;
* ``revolute`` and ``continuous`` joints become :func:`~sinews.joints.Revolute` about the
  normalised ``<axis>`` (default ``1 0 0``), ``prismatic`` a :func:`~sinews.joints.Prismatic`,
  ``fixed`` a :func:`~sinews.joints.Fixed`, ``floating`` a :func:`~sinews.joints.FreeFlyer` and
  ``planar`` (axis ``0 0 1`` only) a :func:`~sinews.joints.Planar`;
* ``<inertial>`` (origin ``xyz`` = centre of mass, ``rpy`` = orientation of the principal
  frame in which ``<inertia>`` is given) becomes the body's :class:`~sinews.SpatialInertia`
  (a link without ``<inertial>`` is massless); validity is judged after fixed-joint merging
  with the ``inertia=`` policy (:mod:`sinews._urdf_inertia`);
* ``<limit>`` and ``<dynamics>`` become joint properties (``model.lower_position_limit``, ...;
  continuous joints stay unbounded); ``<mimic>`` becomes a ``model.mimic_joints`` record
  (``mimic="constraint"``) or is dropped (``mimic="independent"``, Pinocchio's default);
* every URDF joint also becomes a sinews *frame* of the same name, on its child body at the
  identity, so ``model.frame(joint_name).body`` is the body that the joint moves;
* ``<visual>`` and ``<collision>`` become ``model.visuals`` / ``model.collisions`` records with
  mesh paths resolved (:mod:`sinews._urdf_geometry`);
* ``<calibration>``, ``<safety_controller>``, ``<transmission>`` and ``<gazebo>`` are ignored.

Everything this loader cannot represent raises :class:`URDFError` (a ``ValueError``) naming
the offending argument, link or joint.  A missing file raises :class:`URDFFileNotFoundError`,
which is both a ``ValueError`` and a ``FileNotFoundError``.  Without the parser installed,
:func:`load_urdf` raises ``ImportError`` naming ``pip install "sinews[urdf]"``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import joints as J
from ._urdf_geometry import add_shapes, pose
from ._urdf_inertia import (INERTIA_POLICIES, URDFInertiaWarning, URDFWarning, raw_inertia,
                            resolve_inertias, user_stacklevel)
from ._urdf_parse import SUPPORTED_JOINT_TYPES, URDFError, URDFFileNotFoundError, parse, read_source
from .model import Model
from .spatial import Transform

__all__ = [
    "load_urdf",
    "URDFError",
    "URDFFileNotFoundError",
    "URDFWarning",
    "URDFInertiaWarning",
    "SUPPORTED_JOINT_TYPES",
    "MIMIC_MODES",
    "INERTIA_POLICIES",
]


MIMIC_MODES = ("constraint", "independent")
"""Values of ``load_urdf(mimic=...)``."""

_AXIS_TOL = 1e-9
_ONE_DOF = ("revolute", "continuous", "prismatic")


def _pose(origin, what: str) -> Transform:
    try:
        return pose(origin, what)
    except ValueError as exc:
        raise URDFError(str(exc)) from None


def _unit_axis(joint) -> np.ndarray:
    axis = np.asarray(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    if axis.shape != (3,) or not np.all(np.isfinite(axis)):
        raise URDFError(f"joint {joint.name!r}: <axis xyz=...> must be 3 finite numbers, got {axis.tolist()}")
    n = np.linalg.norm(axis)
    if n < _AXIS_TOL:
        raise URDFError(f"joint {joint.name!r}: <axis> is the zero vector")
    return axis / n


def _joint(joint) -> J.Joint:
    kind = joint.type
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
    seen, stack = set(), [roots[0]]
    while stack:
        name = stack.pop()
        seen.add(name)
        stack.extend(j.child for j in children[name])
    unreachable = [name for name in links if name not in seen]
    if unreachable:
        raise URDFError(f"source: links {unreachable} form a closed loop detached from the root link")
    return roots[0], links, children


def _properties(joint) -> dict:
    """Joint properties of a one-dof URDF joint from ``<limit>`` and ``<dynamics>``."""
    out = {}
    lim, dyn = joint.limit, joint.dynamics
    if lim is not None:
        if joint.type != "continuous":  # continuous joints are unbounded (URDF spec)
            out["lower"] = lim.lower if lim.lower is not None else 0.0
            out["upper"] = lim.upper if lim.upper is not None else 0.0
        if lim.effort is not None:
            out["effort_limit"] = lim.effort
        if lim.velocity is not None:
            out["velocity_limit"] = lim.velocity
    if dyn is not None:
        if dyn.damping is not None:
            out["damping"] = dyn.damping
        if dyn.friction is not None:
            out["friction"] = dyn.friction
    return out


def _check_args(floating_base, mimic, inertia):
    if not isinstance(floating_base, (bool, np.bool_)):
        raise URDFError(f"floating_base must be True or False, got {floating_base!r}")
    if not isinstance(mimic, str) or mimic not in MIMIC_MODES:
        raise URDFError(f"mimic must be one of {MIMIC_MODES}, got {mimic!r}")
    if not isinstance(inertia, str) or inertia not in INERTIA_POLICIES:
        raise URDFError(f"inertia must be one of {INERTIA_POLICIES}, got {inertia!r}")


def load_urdf(
    source: str | os.PathLike | bytes,
    floating_base: bool = False,
    *,
    gravity: ArrayLike = (0.0, 0.0, -9.81),
    name: str | None = None,
    mimic: str = "constraint",
    inertia: str = "repair",
    package_dirs: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
) -> Model:
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
    mimic:
        ``"constraint"`` (default): a ``<mimic>`` joint stays a coordinate of its own and the
        coupling ``q_joint = multiplier * q_mimicked + offset`` is recorded in
        ``model.mimic_joints`` (``ConstraintSet.add_mimic_constraints(model)`` enforces it).
        ``"independent"``: the mimic joint is an ordinary joint and nothing is recorded (as
        Pinocchio's ``buildModelFromUrdf`` without ``mimic=True``).
    inertia:
        What to do with a non-physical inertia, judged after merging the links welded by
        ``fixed`` joints: ``"repair"`` (default) uses the nearest physical inertia,
        ``"warn"`` keeps the values (as Pinocchio), both with a
        :class:`URDFInertiaWarning`; ``"strict"`` raises :class:`URDFError`.
    package_dirs:
        A folder or list of folders searched first for ``package://`` mesh files (then
        ``ROS_PACKAGE_PATH``, ``AMENT_PREFIX_PATH`` and the URDF file's folders).

    Returns
    -------
    Model
        Bodies named after the links (root first, then depth-first), one frame per URDF joint
        (same name, on the child body), joint limits/damping/friction, mimic records, and
        ``model.visuals`` / ``model.collisions`` shape records.

    Raises
    ------
    URDFError
        (a ``ValueError``) for malformed XML or unsupported/inconsistent URDF content;
        :class:`URDFFileNotFoundError` when the path does not exist; ``ImportError`` naming
        ``pip install "sinews[urdf]"`` without the parser.

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
    _check_args(floating_base, mimic, inertia)
    data, where, path = read_source(source)
    robot, xml_root = parse(data, where)
    root, links, children = _tree(robot)
    joints = {j.name: j for j in robot.joints}
    if root == "world":
        # A root link named "world" (a common URDF idiom) *is* the ground.
        if floating_base:
            raise URDFError(
                "floating_base: the root link is named 'world', i.e. the URDF is already fixed "
                "to the ground; a floating base cannot be added"
            )
        if links["world"].inertial is not None and links["world"].inertial.mass:
            raise URDFError("link 'world': the ground link cannot have a mass")
    model = Model(gravity=gravity, name=robot.name if name is None else name)

    # depth-first order, sinews joints, and the groups of links welded together
    order, kinds, parent_of = [root], {}, {root: None}
    stack = list(reversed(children[root]))
    while stack:
        joint = stack.pop()
        kinds[joint.name] = _joint(joint)
        order.append(joint.child)
        parent_of[joint.child] = joint
        stack.extend(reversed(children[joint.child]))
    group_of = {root: root if floating_base else None}
    X_group = {root: Transform.identity()}
    for lname in order[1:]:
        joint = parent_of[lname]
        if kinds[joint.name].code == J.JT_FIXED:
            group_of[lname] = group_of[joint.parent]
            X_group[lname] = X_group[joint.parent] @ _pose(joint.origin, f"joint {joint.name!r}")
        else:
            group_of[lname] = lname
            X_group[lname] = Transform.identity()
    raw = {n: raw_inertia(links[n].inertial, _pose, f"link {n!r}", URDFError) for n in order}
    stored = resolve_inertias(order, raw, group_of, X_group, inertia, URDFError, robot.name)

    if root != "world":
        model.add_body(0, J.FreeFlyer() if floating_base else J.Fixed(), None, stored[root], name=root)
    for lname in order[1:]:
        joint = parent_of[lname]
        if lname == "world":
            raise URDFError("link 'world': only the root link may be named 'world' (sinews' ground body)")
        model.add_body(joint.parent, kinds[joint.name], _pose(joint.origin, f"joint {joint.name!r}"),
                       stored[lname], name=lname)
        model.add_frame(joint.name, lname)
        if joint.type in _ONE_DOF:
            try:
                model.set_joint_properties(lname, **_properties(joint))
            except ValueError as exc:
                raise URDFError(f"joint {joint.name!r}: invalid <limit> or <dynamics>: {exc}") from None
    if mimic == "constraint":
        for joint in robot.joints:
            if joint.mimic is not None and joint.type != "fixed":  # a fixed joint has no coordinate
                _mimic(model, joint, joints)
    add_shapes(model, robot, xml_root, links, package_dirs, path)
    return model


def _mimic(model, joint, joints):
    """Record ``joint``'s ``<mimic>``; a coupling to a joint that is missing or has no single
    coordinate is dropped with a :class:`URDFWarning` (the joint stays independent)."""
    m = joint.mimic
    target = joints.get(m.joint)
    problem = None
    if target is None:
        problem = f"names {m.joint!r}, which is no joint of the URDF"
    else:
        for j in (joint, target):
            if j.type not in _ONE_DOF:
                problem = f"couples {joint.type!r} joint {joint.name!r} to {target.type!r} joint {target.name!r} (one-degree-of-freedom joints only)"
                break
    if problem is not None:
        warnings.warn(URDFWarning(f"joint {joint.name!r}: <mimic> {problem}; the joint is loaded as an independent joint"),
                      stacklevel=user_stacklevel())
        return
    try:
        model.add_mimic(joint.child, target.child, 1.0 if m.multiplier is None else m.multiplier,
                        0.0 if m.offset is None else m.offset)
    except ValueError as exc:
        raise URDFError(f"joint {joint.name!r}: invalid <mimic>: {exc}") from None
