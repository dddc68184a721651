"""The inertia policy of :func:`sinews.load_urdf`: validity judged *after* fixed-joint merging.

Links joined by ``fixed`` joints move as one rigid body (a *group*: a movable link and the links
welded to it).  Only the group's merged inertia enters the dynamics, so it is what must be
physical (:mod:`sinews._model_inertia`).  A massless or non-physical placeholder link welded into
a valid parent therefore never refuses a robot, and neither does anything welded to the world
(a fixed base has no effect on the dynamics).

Policies for a group whose merged inertia is not physical:

* ``"strict"``: ``URDFError`` naming the link;
* ``"repair"`` (the default): the nearest physical inertia (negative mass -> 0, principal
  moments projected onto the triangle-inequality cone, same centre of mass and principal axes),
  with one :class:`URDFInertiaWarning` per load listing every repaired link, its defect and the
  moments before and after;
* ``"warn"``: the values are kept as written (like Pinocchio, which does not check), with the
  same warning.

Storage: every body keeps its own inertia when it is physical.  A non-physical member of a
physical group is folded into the group's movable link (the group's total is unchanged); a
repaired group's inertia is stored on its movable link and its welded members get none.
Non-physical bodies welded to the world are replaced by their nearest physical inertia
(``"warn"``: kept) without a warning: they do not move.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ._model_inertia import merge, nearest_physical, problem, unchecked
from .spatial import SpatialInertia, Transform

__all__ = ["INERTIA_POLICIES", "URDFWarning", "URDFInertiaWarning", "resolve_inertias"]

INERTIA_POLICIES = ("strict", "repair", "warn")


class URDFWarning(UserWarning):
    """Something in a URDF that :func:`sinews.load_urdf` loaded in a documented, changed way."""


class URDFInertiaWarning(URDFWarning):
    """A URDF link group has a non-physical inertia that was repaired or kept (``inertia=``)."""


def _physical(I: SpatialInertia) -> SpatialInertia:
    return SpatialInertia(I.mass, I.com, I.inertia_com)


def resolve_inertias(order, raw, group_of, X_group_link, policy: str, error_cls, robot_name: str):
    """The inertia to store on every link.

    ``order``: link names, each after its parent; ``raw``: link -> unchecked
    :class:`SpatialInertia` as written; ``group_of``: link -> name of its group's movable link,
    or ``None`` when welded to the world; ``X_group_link``: link -> pose of the link frame in
    its group's movable-link frame.  Returns link -> :class:`SpatialInertia`.
    """
    groups: dict[str | None, list[str]] = {}
    for name in order:
        groups.setdefault(group_of[name], []).append(name)
    out: dict[str, SpatialInertia] = {}
    notes = []
    for root, members in groups.items():
        if root is None:  # welded to the world: no dynamic effect, never refuses
            for n in members:
                I = raw[n]
                if problem(I.mass, I.inertia_com) is None:
                    out[n] = _physical(I)
                elif policy == "warn":
                    out[n] = I
                else:
                    m, Ic = _nearest(I)
                    out[n] = SpatialInertia(m, I.com, Ic)
            continue
        total = merge([(raw[n], X_group_link[n]) for n in members])
        why = problem(total.mass, total.inertia_com)
        bad = [n for n in members if problem(raw[n].mass, raw[n].inertia_com) is not None]
        if why is None:
            for n in members:
                out[n] = _physical(raw[n]) if n not in bad else SpatialInertia.zero()
            if bad:  # fold the non-physical members into the movable link: same total
                folded = merge([(raw[root], Transform.identity())]
                               + [(raw[n], X_group_link[n]) for n in bad if n != root])
                if problem(folded.mass, folded.inertia_com) is None:
                    out[root] = _physical(folded)
                else:
                    for n in members:
                        out[n] = SpatialInertia.zero()
                    out[root] = _physical(total)
            continue
        where = f"link {root!r}" + (
            f" (merged with the welded links {[n for n in members if n != root]})" if len(members) > 1 else ""
        )
        if policy == "strict":
            raise error_cls(
                f"{where}: non-physical inertia: {why}; pass inertia='repair' to use the nearest "
                "physical inertia or inertia='warn' to keep the values"
            )
        if policy == "repair":
            m, Ic = _nearest(total)
            for n in members:
                out[n] = SpatialInertia.zero()
            out[root] = SpatialInertia(m, total.com, Ic)
            after = np.linalg.eigvalsh(Ic)
            mass = f", mass {total.mass:.6g} -> {m:.6g}" if m != total.mass else ""
            notes.append(f"{where}: {why} -> repaired to principal moments {_fmt(after)}{mass}")
        else:
            for n in members:
                out[n] = raw[n]
            notes.append(f"{where}: {why}; kept as written")
    if notes:
        what = "repaired to the nearest physical inertia" if policy == "repair" else "kept as written"
        warnings.warn(
            URDFInertiaWarning(
                f"robot {robot_name!r}: non-physical inertia (after merging fixed joints) {what} "
                f"for {len(notes)} link(s) (load_urdf(inertia={policy!r}); 'strict' refuses them):\n  "
                + "\n  ".join(notes)
            ),
            stacklevel=user_stacklevel(),
        )
    return out


def user_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` (called by this function's caller) that points
    at the first frame outside the sinews package: the user's call, whatever the call path."""
    pkg = os.path.dirname(os.path.abspath(__file__))
    f = sys._getframe(2)
    level = 2
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg + os.sep):
        f = f.f_back
        level += 1
    return level


def _nearest(I: SpatialInertia):
    return nearest_physical(I.mass, I.inertia_com)


def _fmt(ev) -> str:
    return "[" + ", ".join(f"{x:.6g}" for x in ev) + "]"


def raw_inertia(inertial, pose_fn, what: str, error_cls) -> SpatialInertia:
    """The unchecked inertia of a URDF ``<inertial>`` in the link frame (zero when absent)."""
    if inertial is None:
        return unchecked(0.0, np.zeros(3), np.zeros((3, 3)))
    X = pose_fn(inertial.origin, f"{what} <inertial>")
    try:
        mass = float(inertial.mass)
        i = inertial.inertia
        I = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=float)
        if not (np.isfinite(mass) and np.all(np.isfinite(I))):
            raise ValueError("mass and inertia must be finite")
        return unchecked(mass, X.p, X.R @ I @ X.R.T)
    except (ValueError, TypeError, AttributeError) as exc:
        raise error_cls(f"{what}: invalid <inertial>: {exc}") from None
