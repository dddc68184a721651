"""Conversion to and from Pinocchio models (``pip install pin``).

``from_pinocchio(pin_model)`` builds the equivalent :class:`sinews.Model`: one body per
Pinocchio joint (same names, same order, so ``idx_q``/``idx_v`` match), one sinews frame per
Pinocchio frame of type BODY, FIXED_JOINT or OP_FRAME.  ``to_pinocchio(model)`` goes the other
way; multi-axis joints (planar, translation, Euler, general) become Pinocchio composite joints.

Coordinates differ in one place only: a free-flyer velocity is ``[omega; v]`` in sinews (angular
first, like every spatial vector here) and ``[v; omega]`` in Pinocchio.  Use
:class:`PinocchioCoordinates` (``model_map.v_to_pin(v)`` etc.) to convert q, v, tau and
Jacobian columns.  6-D Jacobian *rows* are ``[angular; linear]`` here and ``[linear; angular]``
in Pinocchio.
"""

from __future__ import annotations

import numpy as np

from . import joints as J
from ._checks import finite_vector, real_array
from .model import Model
from .spatial import SpatialInertia, Transform

__all__ = ["from_pinocchio", "to_pinocchio", "PinocchioCoordinates"]


def _pin():
    try:
        import pinocchio as pin
    except ImportError as exc:  # pragma: no cover - exercised only without pin
        raise ImportError("sinews.interop needs Pinocchio: pip install pin") from exc
    return pin


def _joint_from_pin(jm):
    name = jm.shortname()
    if hasattr(jm, "extract"):  # the generic JointModel wrapper hides axis and pitch
        jm = jm.extract()
    table = {
        "JointModelRX": lambda: J.RevoluteX(),
        "JointModelRY": lambda: J.RevoluteY(),
        "JointModelRZ": lambda: J.RevoluteZ(),
        "JointModelPX": lambda: J.PrismaticX(),
        "JointModelPY": lambda: J.PrismaticY(),
        "JointModelPZ": lambda: J.PrismaticZ(),
        "JointModelSpherical": J.Spherical,
        "JointModelFreeFlyer": J.FreeFlyer,
        "JointModelTranslation": J.TranslationXYZ,
        "JointModelSphericalZYX": J.EulerZYX,
    }
    if name in table:
        return table[name]()
    if name == "JointModelRevoluteUnaligned":
        return J.Revolute(np.asarray(jm.axis, dtype=float))
    if name == "JointModelPrismaticUnaligned":
        return J.Prismatic(np.asarray(jm.axis, dtype=float))
    if name in ("JointModelHX", "JointModelHY", "JointModelHZ"):
        axis = np.eye(3)["XYZ".index(name[-1])]
        return J.Helical(axis, float(jm.pitch))
    if name == "JointModelHelicalUnaligned":
        return J.Helical(np.asarray(jm.axis, dtype=float), float(jm.pitch))
    raise ValueError(f"Pinocchio joint type {name} has no sinews equivalent yet")


def from_pinocchio(pin_model) -> Model:
    """A sinews model equivalent to a Pinocchio ``Model``."""
    pin = _pin()
    if not isinstance(pin_model, pin.Model):
        raise ValueError(f"pin_model must be a pinocchio.Model, got {type(pin_model).__name__}")
    g = np.asarray(pin_model.gravity.linear, dtype=float)
    model = Model(gravity=g, name=str(pin_model.name) or "pinocchio")
    for i in range(1, pin_model.njoints):
        jm = pin_model.joints[i]
        placement = pin_model.jointPlacements[i]
        I = pin_model.inertias[i]
        inertia = SpatialInertia(float(I.mass), np.asarray(I.lever), np.asarray(I.inertia))
        model.add_body(
            int(pin_model.parents[i]),
            _joint_from_pin(jm),
            Transform(np.asarray(placement.rotation), np.asarray(placement.translation)),
            inertia,
            name=str(pin_model.names[i]),
        )
    used = set()
    kinds = (pin.FrameType.BODY, pin.FrameType.FIXED_JOINT, pin.FrameType.OP_FRAME)
    for f in pin_model.frames:
        if f.type not in kinds:
            continue
        name = str(f.name)
        while name in used:
            name += "_"
        used.add(name)
        model.add_frame(name, int(f.parentJoint), Transform(np.asarray(f.placement.rotation), np.asarray(f.placement.translation)))
    return model


def _joint_to_pin(pin, joint: J.Joint):
    if joint.code == J.JT_REVOLUTE:
        code = joint.axis_code
        if code:
            return [pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ][code - 1]()
        return pin.JointModelRevoluteUnaligned(*joint.axis)
    if joint.code == J.JT_PRISMATIC:
        code = joint.axis_code
        if code:
            return [pin.JointModelPX, pin.JointModelPY, pin.JointModelPZ][code - 1]()
        return pin.JointModelPrismaticUnaligned(*joint.axis)
    if joint.code == J.JT_HELICAL:
        return pin.JointModelHelicalUnaligned(np.asarray(joint.axis), joint.pitch)
    if joint.code == J.JT_SPHERICAL:
        return pin.JointModelSpherical()
    if joint.code == J.JT_FREEFLYER:
        return pin.JointModelFreeFlyer()
    if joint.code == J.JT_MULTIAXIS:
        comp = pin.JointModelComposite()
        for s in joint.axes:
            w, v = s[:3], s[3:]
            if np.linalg.norm(w) > 0.5:
                if np.linalg.norm(v) > 0:
                    raise ValueError("to_pinocchio: multi-axis joints with offset or screw axes are not supported")
                comp.addJoint(pin.JointModelRevoluteUnaligned(*w))
            else:
                comp.addJoint(pin.JointModelPrismaticUnaligned(*v))
        return comp
    raise ValueError(f"joint {joint!r} cannot be converted to Pinocchio")


def to_pinocchio(model: Model):
    """A Pinocchio ``Model`` equivalent to ``model`` (welded bodies become extra bodies
    appended to their movable ancestor, plus a frame of the same name)."""
    pin = _pin()
    if not isinstance(model, Model):
        raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
    c = model.compiled
    _require_depth_first(model)
    pm = pin.Model()
    pm.name = model.name
    pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
    joint_of_link = {}
    for b in model.bodies[1:]:
        k = int(c.link_of_body[b.id])
        parent_link = int(c.link_of_body[b.parent])
        parent_joint = joint_of_link.get(parent_link, 0) if parent_link >= 0 else 0
        X_parent = Transform(c.X_link_body_R[b.parent], c.X_link_body_p[b.parent]) @ b.X_parent_joint
        if b.joint.code == J.JT_FIXED:
            X = Transform(c.X_link_body_R[b.id], c.X_link_body_p[b.id])
            jid = joint_of_link.get(k, 0)
            se3 = pin.SE3(X.R, X.p)
            if b.inertia.mass > 0 or np.any(b.inertia.inertia_com):
                pm.appendBodyToJoint(jid, pin.Inertia(b.inertia.mass, b.inertia.com, b.inertia.inertia_com), se3)
            pm.addFrame(pin.Frame(b.name, jid, se3, pin.FrameType.BODY))
            continue
        jid = pm.addJoint(parent_joint, _joint_to_pin(pin, b.joint), pin.SE3(X_parent.R, X_parent.p), b.name)
        joint_of_link[k] = jid
        I = b.inertia
        pm.appendBodyToJoint(jid, pin.Inertia(I.mass, I.com, I.inertia_com), pin.SE3.Identity())
        pm.addFrame(pin.Frame(b.name, jid, pin.SE3.Identity(), pin.FrameType.BODY))
    names = {b.name for b in model.bodies}
    for f in model.frames:
        if f.name in names:
            raise ValueError(f"to_pinocchio: frame name {f.name!r} is also a body name (Pinocchio frame names must be unique)")
        b = f.body
        k = int(c.link_of_body[b])
        X = Transform(c.X_link_body_R[b], c.X_link_body_p[b]) @ f.X_body_frame
        pm.addFrame(pin.Frame(f.name, joint_of_link.get(k, 0) if k >= 0 else 0, pin.SE3(X.R, X.p), pin.FrameType.OP_FRAME))
    return pm


def _require_depth_first(model: Model) -> None:
    """Pinocchio's algorithms (CRBA among them) assume every subtree occupies a contiguous
    range of joint indices; reject other orders instead of producing a silently wrong model."""
    c = model.compiled
    par = c.mi[:, 0] if c.nlinks else np.zeros(0, dtype=np.int64)
    for k in range(1, c.nlinks):
        # in depth-first order the parent of link k is link k-1 or one of its ancestors
        a = k - 1
        while a >= 0 and a != par[k]:
            a = par[a]
        if a != par[k]:
            raise ValueError(
                "to_pinocchio: bodies are not in depth-first order (Pinocchio requires contiguous "
                f"subtrees); body {model.bodies[c.link_body[k]].name!r} breaks it"
            )


class PinocchioCoordinates:
    """Converts q, v (and tau, a) and Jacobians between sinews and Pinocchio orderings."""

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        self.model = model
        perm = np.arange(model.nv)
        c = model.compiled
        for k in range(c.nlinks):
            if c.mi[k, 1] == J.JT_FREEFLYER:
                iv = int(c.mi[k, 3])
                perm[iv : iv + 6] = iv + np.array([3, 4, 5, 0, 1, 2])
        self.perm = perm  # sinews index i holds Pinocchio index perm[i]

    def q_to_pin(self, q):
        """Configuration in Pinocchio's layout (identical: a copy)."""
        return finite_vector(q, self.model.nq, "q").copy()

    def q_from_pin(self, q):
        """Configuration from Pinocchio's layout (identical: a copy)."""
        return finite_vector(q, self.model.nq, "q").copy()

    def v_from_pin(self, v_pin):
        """Velocity (or acceleration, torque) from Pinocchio's order."""
        return finite_vector(v_pin, self.model.nv, "v_pin")[self.perm]

    def v_to_pin(self, v):
        """Velocity (or acceleration, torque) in Pinocchio's order."""
        out = np.empty(self.model.nv)
        out[self.perm] = finite_vector(v, self.model.nv, "v")
        return out

    def matrix_from_pin(self, M_pin):
        """An nv x nv matrix (mass matrix) in sinews ordering."""
        nv = self.model.nv
        M_pin = real_array(M_pin, "M_pin", shape=(nv, nv))
        return M_pin[np.ix_(self.perm, self.perm)]

    def columns_from_pin(self, J_pin):
        """Jacobian columns from Pinocchio's velocity order (rows unchanged)."""
        J_pin = real_array(J_pin, "J_pin")
        if J_pin.ndim == 1 and self.model.nv == 1:  # Pinocchio returns a vector for one dof
            J_pin = J_pin.reshape(-1, 1)
        if J_pin.ndim != 2 or J_pin.shape[1] != self.model.nv:
            raise ValueError(f"J_pin must have {self.model.nv} columns, got shape {J_pin.shape}")
        return J_pin[:, self.perm]

    @staticmethod
    def rows6_from_pin(J_pin):
        """Swap Pinocchio's [linear; angular] rows to sinews' [angular; linear]."""
        J_pin = real_array(J_pin, "J_pin")
        if J_pin.ndim not in (1, 2) or J_pin.shape[0] != 6:
            raise ValueError(f"J_pin must have 6 rows, got shape {J_pin.shape}")
        return np.concatenate([J_pin[3:], J_pin[:3]], axis=0)
