"""Reading a URDF: the source, a strict XML pass, then the ROS parser ``urdf_parser_py``.

The parser is ROS's own Python URDF parser, ``urdf_parser_py``, distributed on PyPI as
``urdfdom-py`` (``pip install "sinews[urdf]"``: it needs ``lxml`` and ``pyyaml`` and nothing of a
mesh or scene stack).  Before it runs, a strict pass over the XML (with ``lxml``) refuses what
the parser would quietly accept (missing inertia entries, a robot without a name, malformed XML)
and removes what a dynamics model never reads and the parser may choke on (``<transmission>``,
``<gazebo>``, material ``<texture>``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

INSTALL_HINT = 'pip install "sinews[urdf]"'

_INERTIA_ATTRS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
"""URDF joint types :func:`sinews.load_urdf` maps (every other type is rejected)."""
_LOCK = threading.Lock()  # urdf_parser_py reports through a module-level hook


class URDFError(ValueError):
    """A URDF that cannot be loaded: malformed, inconsistent or using unsupported features."""


class URDFFileNotFoundError(URDFError, FileNotFoundError):
    """The URDF path given to :func:`sinews.load_urdf` does not exist."""


def _import_parser():
    """``(lxml.etree, urdf_parser_py.urdf, urdf_parser_py.xml_reflection.core)`` or an
    ``ImportError`` naming the extra to install."""
    try:
        from lxml import etree
        from urdf_parser_py import urdf
        from urdf_parser_py.xml_reflection import core
    except ImportError as exc:
        raise ImportError(
            f"sinews.load_urdf needs the URDF parser of the 'urdf' extra ({exc.name or exc} is "
            f"missing): {INSTALL_HINT}"
        ) from exc
    return etree, urdf, core


def read_source(source) -> tuple[bytes, str, Path | None]:
    """The XML bytes of ``source``, a short description of where they came from, and the
    file's path (``None`` for XML given as a string or bytes)."""
    if isinstance(source, bytes):
        return source, "<XML bytes>", None
    if isinstance(source, os.PathLike):
        path = Path(source)
    elif isinstance(source, str):
        text = source.lstrip("\ufeff \t\r\n")  # an XML declaration must come first
        if text.startswith("<"):
            return text.encode("utf-8"), "<XML string>", None
        if not source.strip():
            raise URDFError("source: empty string (expected a URDF file path or an XML string)")
        path = Path(source)
    else:
        raise URDFError(
            f"source must be a file path or a URDF XML string, got {type(source).__name__}"
        )
    if not path.is_file():
        raise URDFFileNotFoundError(f"source: URDF file not found: {str(path)!r}")
    return path.read_bytes(), str(path), path.resolve()


def _strict_checks(root, where: str) -> None:
    if root.tag != "robot":
        raise URDFError(f"source: the root element of {where} is <{root.tag}>, expected <robot>")
    if not root.get("name"):
        raise URDFError(f"source: the <robot> element of {where} has no 'name' attribute")
    # the parser fills missing inertia entries with 0: demand them all
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
        kind = joint.get("type")
        if kind not in SUPPORTED_JOINT_TYPES:
            raise URDFError(
                f"joint {jname!r}: unsupported joint type {kind!r} "
                f"(supported: {', '.join(SUPPORTED_JOINT_TYPES)})"
            )
        for tag in ("parent", "child"):
            el = joint.find(tag)
            if el is None or not el.get("link"):
                raise URDFError(f"joint {jname!r}: missing <{tag} link=...>")


def _strip_unused(root) -> None:
    """Remove elements a dynamics model does not read and that ``urdf_parser_py`` refuses in
    some real files (PR2's transmissions, iCub's and Romeo's textures without a file)."""
    for el in list(root):
        if el.tag in ("transmission", "gazebo"):
            root.remove(el)
    for tex in root.iter("texture"):
        parent = tex.getparent()
        if parent is not None:
            parent.remove(tex)


def parse(data: bytes, where: str):
    """``(robot, root)``: the ``urdf_parser_py`` robot of ``data`` after the strict checks
    (``URDFError`` for anything malformed) and the XML tree it was read from."""
    etree, urdf, core = _import_parser()
    try:
        root = etree.fromstring(
            data, parser=etree.XMLParser(remove_comments=True, remove_pis=True, resolve_entities=False)
        )
    except etree.XMLSyntaxError as exc:
        raise URDFError(f"source: malformed XML in {where}: {exc}") from None
    _strict_checks(root, where)
    _strip_unused(root)
    with _LOCK:  # the parser prints unknown tags (<contact>, vendor extensions) to stderr
        saved = core.on_error
        core.on_error = lambda message: None
        try:
            robot = urdf.URDF.from_xml(root, core.Path(urdf.URDF.XML_REFL.tag, tree=etree.ElementTree(root)))
        except Exception as exc:  # the parser raises ParseError, AssertionError, ValueError, ...
            raise URDFError(f"source: invalid URDF in {where}: {type(exc).__name__}: {exc}") from None
        finally:
            core.on_error = saved
    return robot, root
