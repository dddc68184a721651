"""Model facts for people: a summary table, a text tree and a Graphviz DOT graph.

* :func:`summary` -- one row per body: parent, joint, indices in ``q``/``v``, mass and the
  joint's limits (damping, friction, armature, effort and velocity limits appear as columns
  when some joint of the model has them), then the total mass, the frames and the mimic records;
* :func:`tree_text` -- the kinematic tree drawn with indentation, followed by the couplings
  that close it: the model's mimic records and, when a
  :class:`~sinews.constraints.ConstraintSet` is given, its coordinate, loop, contact and custom
  constraints;
* :func:`to_dot` -- the same as a Graphviz ``digraph`` (plain text; render it with ``dot -Tsvg``
  or any Graphviz viewer; sinews does not need Graphviz): solid edges are joints, dashed edges
  loop closures and contacts, dotted edges coordinate couplings (mimic joints).

These are also :meth:`sinews.Model.summary`, :meth:`~sinews.Model.tree_text` and
:meth:`~sinews.Model.to_dot`.  See ``docs/models.md``.
"""

from __future__ import annotations

import numpy as np

from ._model_records import ConstraintGroups, ModelFacts
from .joints import JT_FIXED

__all__ = ["summary", "tree_text", "to_dot"]


def _fmt(x: float) -> str:
    if np.isposinf(x):
        return "inf"
    if np.isneginf(x):
        return "-inf"
    return f"{x:.4g}"


def _joint_label(b) -> str:
    j = b.joint
    if j is None:
        return "-"
    if j.code in (0, 1, 2):  # revolute, prismatic, helical: name the axis
        ax = j.axis
        for k, name in enumerate("xyz"):
            e = np.zeros(3)
            e[k] = 1.0
            if np.array_equal(ax, e):
                return f"{j.kind} {name}"
            if np.array_equal(ax, -e):
                return f"{j.kind} -{name}"
        return f"{j.kind} ({', '.join(f'{a:.3g}' for a in ax)})"
    return j.kind


def _range(lo: np.ndarray, hi: np.ndarray) -> str:
    if lo.size == 0:
        return "-"
    if np.all(np.isneginf(lo)) and np.all(np.isposinf(hi)):
        return "free"
    return " ".join(f"[{_fmt(a)}, {_fmt(b)}]" for a, b in zip(lo, hi))


def _values(a: np.ndarray, default: float) -> str:
    if a.size == 0 or np.all(a == default):
        return "-"
    return " ".join(_fmt(x) for x in a)


_OPTIONAL = (  # (column, property, default)
    ("effort", "effort_limit", np.inf),
    ("velocity", "velocity_limit", np.inf),
    ("damping", "damping", 0.0),
    ("friction", "friction", 0.0),
    ("armature", "armature", 0.0),
)


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def summary(model: ModelFacts) -> str:
    """A readable table of ``model`` (a :class:`sinews.Model`): bodies, joints, dof indices, masses
    and limits."""
    bodies = model.bodies
    props = [model.joint_properties(b.id) for b in bodies[1:]]
    extra = [
        (col, name, default) for col, name, default in _OPTIONAL
        if any(np.any(getattr(p, name) != default) for p in props)
    ]
    rows = [("id", "name", "parent", "joint", "idx_q", "idx_v", "mass", "limits")
            + tuple(col for col, _, _ in extra)]
    for b, p in zip(bodies[1:], props):
        if b.joint.code == JT_FIXED:
            q = v = "-"
        else:
            q = f"{b.idx_q}" if b.joint.nq == 1 else f"{b.idx_q}:{b.idx_q + b.joint.nq}"
            v = f"{b.idx_v}" if b.joint.nv == 1 else f"{b.idx_v}:{b.idx_v + b.joint.nv}"
        rows.append(
            (str(b.id), b.name, bodies[b.parent].name, _joint_label(b), q, v,
             f"{b.inertia.mass:.4g}", _range(p.lower, p.upper))
            + tuple(_values(getattr(p, name), default) for _, name, default in extra)
        )
    g = model.gravity.tolist()
    lines = [
        f"Model {model.name!r}: {model.nbodies - 1} bodies, nq={model.nq}, nv={model.nv}, "
        f"gravity={g}",
    ]
    lines += _table(rows)
    moving = model.total_mass()
    total = model.total_mass(include_ground=True)
    mass = f"total mass {moving:.6g} kg"
    if total != moving:
        mass += f" moving ({total:.6g} kg with the bodies welded to the world)"
    lines.append(mass)
    if model.frames:
        lines.append("frames: " + ", ".join(f"{f.name} (on {bodies[f.body].name})" for f in model.frames))
    for m in model.mimic_joints:
        lines.append(f"mimic: {_mimic_text(m)}")
    return "\n".join(lines)


def _mimic_text(m) -> str:
    s = f"q[{m.joint}] = {m.multiplier:g} * q[{m.mimicked}]"
    if m.offset:
        s += f" {'+' if m.offset > 0 else '-'} {abs(m.offset):g}"
    return s


def _tag(g) -> str:
    """A group's name in quotes, or its label (``loop[0]``) when it has none."""
    name = getattr(g, "name", None)
    return repr(name) if name is not None else g.label


def _group_edge(model, g):
    """``(a, b, style, text)`` for a constraint group, duck-typed: a coordinate coupling (``joint``,
    ``mimicked``), a loop closure (``predecessor``/``successor`` or ``source``/``target``), a
    contact (``body``); ``a``/``b`` are body ids (``None`` when the group names no bodies)."""
    names = model.body_names

    def bid(x):
        try:
            return model._resolve_body(x)
        except (KeyError, ValueError):
            return None

    def nm(x):
        k = bid(x)
        return str(x) if k is None else names[k]

    if hasattr(g, "joint") and hasattr(g, "mimicked"):
        i, k = getattr(g, "coordinate", 0), getattr(g, "mimicked_coordinate", 0)
        qa = f"q[{nm(g.joint)}]" + (f"[{i}]" if i else "")
        qb = f"q[{nm(g.mimicked)}]" + (f"[{k}]" if k else "")
        text = f"{qa} = {getattr(g, 'ratio', 1.0):g} * {qb}"
        offset = getattr(g, "offset", 0.0)
        if offset:
            text += f" {'+' if offset > 0 else '-'} {abs(offset):g}"
        return bid(g.mimicked), bid(g.joint), "dotted", text
    for pa, pb in (("predecessor", "successor"), ("source", "target")):
        if hasattr(g, pa) and hasattr(g, pb):
            text = f"{nm(getattr(g, pa))} <-> {nm(getattr(g, pb))}"
            if getattr(g, "joint_type", None):
                text += f" ({g.joint_type} cut joint)"
            return bid(getattr(g, pa)), bid(getattr(g, pb)), "dashed", text
    if hasattr(g, "body"):
        return 0, bid(g.body), "dashed", f"{nm(g.body)} on the world"
    return None, None, "", type(g).__name__


def _constraint_lines(model, constraints) -> list[str]:
    """One line per constraint group of ``constraints`` (any ConstraintSet)."""
    out = []
    for g in constraints.groups:
        text = _group_edge(model, g)[3]
        size = g.size
        out.append(f"  {getattr(g, 'type', 'custom')} {_tag(g)}: {text} ({size} row{'' if size == 1 else 's'})")
    return out


def _children(model) -> list[list[int]]:
    kids = [[] for _ in model.bodies]
    for b in model.bodies[1:]:
        kids[b.parent].append(b.id)
    return kids


def tree_text(model: ModelFacts, constraints: ConstraintGroups | None = None) -> str:
    """The kinematic tree of ``model`` (a :class:`sinews.Model`) as indented text, then its
    couplings (mimic records and the groups of an optional
    :class:`~sinews.constraints.ConstraintSet` ``constraints``)."""
    if constraints is not None and not hasattr(constraints, "groups"):
        raise ValueError(f"constraints must be a sinews.constraints.ConstraintSet, got {type(constraints).__name__}")
    bodies = model.bodies
    kids = _children(model)
    lines = [f"{model.name} (nq={model.nq}, nv={model.nv})", "world"]

    def visit(bid: int, prefix: str, last: bool):
        b = bodies[bid]
        if b.joint.code == JT_FIXED:
            dof = ""
        elif b.joint.nq == 1:
            dof = f" q[{b.idx_q}]"
        else:
            dof = f" q[{b.idx_q}:{b.idx_q + b.joint.nq}]"
        mass = f" {b.inertia.mass:.4g} kg" if b.inertia.mass else ""
        lines.append(f"{prefix}{'`-- ' if last else '|-- '}{b.name} [{_joint_label(b)}{dof}]{mass}")
        sub = prefix + ("    " if last else "|   ")
        for i, c in enumerate(kids[bid]):
            visit(c, sub, i == len(kids[bid]) - 1)

    for i, c in enumerate(kids[0]):
        visit(c, "", i == len(kids[0]) - 1)
    if model.mimic_joints:
        lines.append("mimic joints (model.mimic_joints):")
        lines += [f"  {_mimic_text(m)}" for m in model.mimic_joints]
    if constraints is not None:
        lines.append(f"constraints ({constraints.ngroups} groups, {constraints.size} rows):")
        lines += _constraint_lines(model, constraints)
    return "\n".join(lines)


def _q(s: str) -> str:
    """A DOT double-quoted string (backslashes, quotes and newlines escaped)."""
    s = str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


def to_dot(model: ModelFacts, constraints: ConstraintGroups | None = None) -> str:
    """The tree of ``model`` (a :class:`sinews.Model`) and its couplings as Graphviz DOT text:
    bodies are nodes, joints solid edges, loop and contact constraints dashed edges, coordinate
    couplings (mimic records, coordinate constraints) dotted edges."""
    if constraints is not None and not hasattr(constraints, "groups"):
        raise ValueError(f"constraints must be a sinews.constraints.ConstraintSet, got {type(constraints).__name__}")
    bodies = model.bodies
    lines = [f"digraph {_q(model.name)} {{", "  rankdir=TB;", '  node [shape=box, fontsize=10];']
    for b in bodies:
        label = b.name if b.id == 0 or not b.inertia.mass else f"{b.name}\n{b.inertia.mass:.4g} kg"
        lines.append(f"  b{b.id} [label={_q(label)}];")
    for b in bodies[1:]:
        lines.append(f"  b{b.parent} -> b{b.id} [label={_q(_joint_label(b))}];")
    for m in model.mimic_joints:
        lines.append(
            f"  b{model.body_id(m.mimicked)} -> b{model.body_id(m.joint)} "
            f"[style=dotted, constraint=false, label={_q(f'mimic x{m.multiplier:g}')}];"
        )
    if constraints is not None:
        for g in constraints.groups:
            a, b, style, _ = _group_edge(model, g)
            if a is None or b is None:
                continue
            label = _q(f"{getattr(g, 'type', 'custom')} {_tag(g)}")
            lines.append(f"  b{a} -> b{b} [style={style}, dir=none, constraint=false, label={label}];")
    lines.append("}")
    return "\n".join(lines)
