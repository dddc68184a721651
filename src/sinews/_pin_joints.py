"""Pinocchio joint models <-> sinews joints, for :mod:`sinews.interop` (private).

``joint_from_pin`` maps each Pinocchio joint type with a sinews equivalent (the placement to
append for composites: ``X = P_1 J_1(q_1) ... P_k J_k(q_k)`` becomes ``(P_1 ... P_k)
exp(s'_1 q_1) ... exp(s'_k q_k)``), ``joint_to_pin`` the other way (multi-axis joints as
composites); ``planar_properties`` says which velocity-sized properties of a Pinocchio planar
joint have a faithful image in sinews' ``Planar`` coordinates.
"""

from __future__ import annotations

import numpy as np

from . import joints as J
from .spatial import Transform

#: Pinocchio joint types with no sinews equivalent, and why (from_pinocchio refuses them)
REFUSED = {
    "JointModelMimic": (
        "a Pinocchio mimic joint has no degrees of freedom of its own; load the robot with "
        "independent mimic joints (e.g. pin.buildModelFromUrdf(..., mimic=False)) and couple them "
        "with sinews' Model.add_mimic / ConstraintSet.add_mimic_constraints"
    ),
    "JointModelEllipsoid": "sinews has no ellipsoid joint",
}

#: unbounded (continuous) revolute joints: q = (cos t, sin t) in Pinocchio, q = t in sinews
UNBOUNDED = {"JointModelRUBX": 0, "JointModelRUBY": 1, "JointModelRUBZ": 2, "JointModelRevoluteUnboundedUnaligned": None}

#: Pinocchio's planar joint: q = (x, y, cos t, sin t), v = the child twist in child axes
#: (vx, vy, w); sinews' Planar has q = (x, y, t) and v = dq/dt (same placement)
PLANAR = "JointModelPlanar"


def _screw_from_pin(jm, where: str) -> np.ndarray:
    """The unit screw axis ``[omega; v]`` of a one-dof Pinocchio joint (revolute, prismatic or
    helical, aligned or not), for a composite joint's parts."""
    name = jm.shortname()
    if hasattr(jm, "extract"):
        jm = jm.extract()
    axis = None
    if name[-2:-1] in ("R", "P", "H") and name[-1] in "XYZ" and name.startswith("JointModel") and len(name) == 12:
        axis = np.eye(3)["XYZ".index(name[-1])]
        kind = name[-2]
    elif name in ("JointModelRevoluteUnaligned", "JointModelPrismaticUnaligned", "JointModelHelicalUnaligned"):
        axis = np.asarray(jm.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        kind = name[10]
    if axis is None:
        raise ValueError(
            f"{where}: a Pinocchio composite joint converts to a sinews MultiAxis joint only when "
            f"all its parts are one-dof revolute, prismatic or helical joints; it holds a {name}"
        )
    if kind == "R":
        return np.r_[axis, 0.0, 0.0, 0.0]
    if kind == "P":
        return np.r_[0.0, 0.0, 0.0, axis]
    return np.r_[axis, float(jm.pitch) * axis]


def _composite_from_pin(jm, where: str):
    """A Pinocchio ``JointModelComposite`` ``X = P_1 J_1(q_1) P_2 J_2(q_2) ... P_k J_k(q_k)`` as
    ``(P_1 ... P_k, MultiAxis)``: ``X = (P_1 ... P_k) exp(s'_1 q_1) ... exp(s'_k q_k)`` with
    ``s'_i = Ad(Q_i^-1) s_i`` and ``Q_i = P_{i+1} ... P_k``.  Velocities are ``dq/dt`` in both."""
    parts = list(jm.joints)
    if not 1 <= len(parts) <= 6:
        raise ValueError(f"{where}: a composite joint of {len(parts)} parts (sinews' MultiAxis takes 1 to 6)")
    P = [Transform(np.asarray(X.rotation), np.asarray(X.translation)) for X in jm.jointPlacements]
    axes = []
    for i, part in enumerate(parts):
        Q = Transform.identity()
        for X in P[i + 1 :]:
            Q = Q @ X
        Qi = Q.inverse()
        s = _screw_from_pin(part, where)
        w = Qi.R @ s[:3]
        axes.append(np.r_[w, Qi.R @ s[3:] + np.cross(Qi.p, w)])
    total = Transform.identity()
    for X in P:
        total = total @ X
    return total, J.MultiAxis(np.array(axes))


def _unbounded_axis(jm) -> np.ndarray:
    """The axis of a ``JointModelRevoluteUnboundedUnaligned`` (Pinocchio's Python bindings do not
    expose it): the angular part of its motion subspace at ``q = (cos 0, sin 0)``."""
    jd = jm.createData()
    jm.calc(jd, np.array([1.0, 0.0]))
    return np.asarray(jd.S, dtype=float).reshape(6)[3:]


def joint_from_pin(jm, where: str = "joint"):
    """``(X_extra, joint)``: the sinews joint equivalent to a Pinocchio joint model and the
    placement to append to the Pinocchio joint placement (identity except for composites)."""
    name = jm.shortname()
    if name == "JointModelRevoluteUnboundedUnaligned":
        return Transform.identity(), J.Revolute(_unbounded_axis(jm))
    if name in REFUSED:
        raise ValueError(f"{where}: Pinocchio joint type {name} has no sinews equivalent: {REFUSED[name]}")
    if name == "JointModelComposite":
        return _composite_from_pin(jm.extract() if hasattr(jm, "extract") else jm, where)
    if hasattr(jm, "extract"):  # the generic JointModel wrapper hides axis and pitch
        jm = jm.extract()
    I = Transform.identity()
    table = {
        "JointModelRX": J.RevoluteX,
        "JointModelRY": J.RevoluteY,
        "JointModelRZ": J.RevoluteZ,
        "JointModelPX": J.PrismaticX,
        "JointModelPY": J.PrismaticY,
        "JointModelPZ": J.PrismaticZ,
        "JointModelSpherical": J.Spherical,
        "JointModelFreeFlyer": J.FreeFlyer,
        "JointModelTranslation": J.TranslationXYZ,
        "JointModelSphericalZYX": J.EulerZYX,
    }
    if name in table:
        return I, table[name]()
    if name in UNBOUNDED:
        return I, (J.RevoluteX, J.RevoluteY, J.RevoluteZ)[UNBOUNDED[name]]()
    if name == "JointModelRevoluteUnaligned":
        return I, J.Revolute(np.asarray(jm.axis, dtype=float))
    if name == "JointModelPrismaticUnaligned":
        return I, J.Prismatic(np.asarray(jm.axis, dtype=float))
    if name in ("JointModelHX", "JointModelHY", "JointModelHZ"):
        axis = np.eye(3)["XYZ".index(name[-1])]
        return I, J.Helical(axis, float(jm.pitch))
    if name == "JointModelHelicalUnaligned":
        return I, J.Helical(np.asarray(jm.axis, dtype=float), float(jm.pitch))
    if name == PLANAR:
        # X = T(x, y) Rz(t) in both; only the coordinates differ (PinocchioCoordinates)
        return I, J.Planar()
    if name == "JointModelUniversal":
        # X = R(axis1, q1) R(axis2, q2), v = dq/dt
        a1 = np.asarray(jm.axis1, dtype=float)
        a2 = np.asarray(jm.axis2, dtype=float)
        return I, J.MultiAxis([np.r_[a1, 0.0, 0.0, 0.0], np.r_[a2, 0.0, 0.0, 0.0]], kind="Universal")
    raise ValueError(f"{where}: Pinocchio joint type {name} has no sinews equivalent")


def planar_properties(ours: str, theirs: str, vals: np.ndarray, name: str) -> None:
    """Refuse the x, y values of a planar joint's velocity-sized property that have no faithful
    image in sinews coordinates.  ``v_pin = T(t) v`` with ``T = diag(R(t)^T, 1)``, a rotation:

    * damping (a quadratic form ``v^T D v``) is unchanged when its x and y values are equal;
    * limits and Coulomb friction (boxes on components) are unchanged only when unlimited
      (``inf``) or zero (friction);
    * armature must be zero along x and y: Pinocchio adds ``armature * a_pin`` with
      ``a_pin = d v_pin / dt = T a + (w u_y, -w u_x)``, sinews ``armature * a``, and even an
      isotropic x, y armature differs between the two by ``armature * w (u_y, -u_x)``.
    """
    x, y = float(vals[0]), float(vals[1])
    if ours == "damping":
        ok = x == y
        need = "equal x and y values (a rotation leaves only an isotropic diag(d, d) unchanged)"
    elif ours == "armature":
        ok = x == 0.0 and y == 0.0
        need = ("zero x and y values (Pinocchio's armature multiplies the child-axis acceleration, "
                "which differs from d2(x, y)/dt2 by a velocity term)")
    else:
        neutral = 0.0 if ours == "friction" else np.inf
        ok = x == neutral and y == neutral
        need = (f"x and y values of {neutral} (a box on child-axis components is not a box on the "
                "joint-frame components sinews uses)")
    if not ok:
        raise ValueError(
            f"pin_model: planar joint {name!r} has {theirs} ({x}, {y}) along its child x and y axes; "
            f"sinews' Planar joint takes v = dq/dt in the joint frame, so converting it needs {need}"
        )


def _multiaxis_to_pin(pin, joint: J.Joint):
    """A multi-axis joint ``exp(s_1 q_1) ... exp(s_k q_k)`` as a Pinocchio composite: each unit
    screw ``s = [w; v]`` is ``P exp(s0 q) P^-1`` with ``P = T(w x v)`` (a point of its axis) and
    ``s0`` the revolute/helical joint about ``w`` through the origin (pitch ``w . v``), or a
    prismatic joint along ``v`` (``w = 0``).  Returns the composite (placements ``P_1``,
    ``P_1^-1 P_2``, ...) and the trailing ``P_k^-1``: the sinews child frame in the Pinocchio
    joint frame."""
    comp = pin.JointModelComposite()
    prev = Transform.identity()
    for s in joint.axes:
        w, v = np.asarray(s[:3], dtype=float), np.asarray(s[3:], dtype=float)
        if np.linalg.norm(w) > 0.5:
            pitch = float(w @ v)
            P = Transform(np.eye(3), np.cross(w, v))
            jm = pin.JointModelHelicalUnaligned(w, pitch) if pitch != 0.0 else pin.JointModelRevoluteUnaligned(*w)
        else:
            P = Transform.identity()
            jm = pin.JointModelPrismaticUnaligned(*v)
        X = prev.inverse() @ P
        comp.addJoint(jm, pin.SE3(X.R, X.p))
        prev = P
    return comp, prev.inverse()


def joint_to_pin(pin, joint: J.Joint):
    """``(Pinocchio joint model, X_pinframe_child)``: the equivalent joint and the sinews child
    frame in the Pinocchio joint frame (the identity except for multi-axis joints with axes off
    the origin)."""
    I = Transform.identity()
    if joint.code == J.JT_REVOLUTE:
        code = joint.axis_code
        if code:
            return [pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ][code - 1](), I
        return pin.JointModelRevoluteUnaligned(*joint.axis), I
    if joint.code == J.JT_PRISMATIC:
        code = joint.axis_code
        if code:
            return [pin.JointModelPX, pin.JointModelPY, pin.JointModelPZ][code - 1](), I
        return pin.JointModelPrismaticUnaligned(*joint.axis), I
    if joint.code == J.JT_HELICAL:
        return pin.JointModelHelicalUnaligned(np.asarray(joint.axis), joint.pitch), I
    if joint.code == J.JT_SPHERICAL:
        return pin.JointModelSpherical(), I
    if joint.code == J.JT_FREEFLYER:
        return pin.JointModelFreeFlyer(), I
    if joint.code == J.JT_MULTIAXIS:
        return _multiaxis_to_pin(pin, joint)
    raise ValueError(f"joint {joint!r} cannot be converted to Pinocchio")
