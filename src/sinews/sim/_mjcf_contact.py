"""MJCF's ``<contact>`` section and a scene's pair rules, both ways (used by
:func:`sinews.sim.scenes_io.scene_from_mjcf` and :func:`~sinews.sim.scenes_io.scene_to_mjcf`).

Read from MuJoCo's compiled model (never from the XML): ``mj.exclude_signature`` (``body1 << 16 |
body2``), ``mj.pair_geom1``, ``pair_geom2``, ``pair_friction`` (5 values: tangent 1, tangent 2,
torsional, rolling 1, rolling 2), ``pair_dim``, ``pair_margin``, ``pair_gap``, ``pair_solref``,
``pair_solimp``, ``pair_solreffriction``.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["read_contact_section", "contact_xml"]


def read_contact_section(mujoco, mj, scene, index: dict) -> None:
    """MJCF's ``<contact>`` section, read from the compiled model: each ``<exclude body1 body2>``
    (``mj.exclude_signature = body1 << 16 | body2``) -> :meth:`Scene.exclude_bodies`; each
    ``<pair geom1 geom2>`` -> :meth:`Scene.set_pair` with ``force=True`` (an explicit pair
    collides whatever the collision bits, parent/child links and exclusions say, and replaces
    the dynamic contact of the same two geoms, as in MuJoCo) and ``friction`` = the pair's
    tangential friction (the first of its five values; 0 for ``condim="1"``).  Whatever has no
    sinews equivalent is named in one ``RuntimeWarning``: torsional/rolling friction
    (``condim`` 4, 6), anisotropic friction (second value differs: the first is used), the
    pair's ``margin``/``gap``, ``solref``/``solimp``/``solreffriction`` other than MuJoCo's
    defaults (sinews' contacts are hard), pairs on a geom that has no sinews shape, on one link
    or both fixed to the world, and repeated pairs."""
    from ..mujoco_import import _names

    bodies = _names(mujoco, mj).bodies
    for sig in np.asarray(mj.exclude_signature, dtype=np.int64).reshape(-1):
        b1, b2 = int(sig) >> 16, int(sig) & 0xFFFF
        if b1 != b2:
            scene.exclude_bodies(bodies[b1], bodies[b2])
    notes: dict[str, list[str]] = {}
    seen = set()

    def geom_name(g):
        return mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom {g}"

    for p in range(int(mj.npair)):
        g1, g2 = int(mj.pair_geom1[p]), int(mj.pair_geom2[p])
        label = f"({geom_name(g1)}, {geom_name(g2)})"
        if g1 not in index or g2 not in index:
            notes.setdefault("on a geom without a sinews shape (skipped)", []).append(label)
            continue
        if (min(g1, g2), max(g1, g2)) in seen:
            notes.setdefault("repeated (the last one is used)", []).append(label)
        seen.add((min(g1, g2), max(g1, g2)))
        fr = np.asarray(mj.pair_friction[p], dtype=float)
        dim = int(mj.pair_dim[p])
        if dim > 3:
            notes.setdefault(f"condim {dim} (torsional/rolling friction ignored)", []).append(label)
        if dim != 1 and fr[1] != fr[0]:
            notes.setdefault("anisotropic friction (the first value is used)", []).append(label)
        if mj.pair_margin[p] != 0.0 or mj.pair_gap[p] != 0.0:
            notes.setdefault("margin/gap (the scene's margin is used)", []).append(label)
        if (not np.array_equal(mj.pair_solref[p], [0.02, 1.0]) or np.any(mj.pair_solreffriction[p] != 0.0)
                or not np.array_equal(mj.pair_solimp[p], [0.9, 0.95, 0.001, 0.5, 2.0])):
            notes.setdefault("solref/solimp (soft contact; sinews' contacts are hard)", []).append(label)
        try:
            scene.set_pair(index[g1], index[g2], friction=0.0 if dim == 1 else float(fr[0]), force=True)
        except ValueError as exc:
            notes.setdefault("that cannot collide (skipped)", []).append(f"{label}: {exc}")
    if notes:
        text = "; ".join(f"{len(v)} <pair> {k}: {', '.join(v[:3])}{', ...' if len(v) > 3 else ''}"
                         for k, v in notes.items())
        warnings.warn(f"scene_from_mjcf: <contact> section: {text}", RuntimeWarning, stacklevel=3)


def contact_xml(scene) -> list[str]:
    """The scene's pair rules as a ``<contact>`` section: body exclusions as ``<exclude>``, pairs
    with a rule that collide as ``<pair>`` (the pair's friction, ``condim="3"``); a geometry
    exclusion has no MJCF equivalent (``ValueError``) unless its bodies are excluded too or
    the pair is forced."""
    from xml.sax.saxutils import quoteattr

    excluded = scene._excluded_bodies
    geos = scene.geometries
    for i, j in sorted(scene._excluded_geometries):
        a, b = geos[i].body, geos[j].body
        if (min(a, b), max(a, b)) not in excluded and not scene._pair_overrides.get((i, j), (0, 0, False))[2]:
            raise ValueError(f"scene: the exclusion of geometries {geos[i].name!r}, {geos[j].name!r} has no "
                             "MJCF equivalent (exclude their bodies)")
    if not excluded and not scene._pair_overrides:
        return []
    allowed, fric = scene._tables()[4], scene._tables()[5]
    names = scene.model.bodies
    lines = ["  <contact>"]
    lines += [f"    <exclude body1={quoteattr(names[a].name)} body2={quoteattr(names[b].name)}/>"
              for a, b in sorted(excluded)]
    lines += [f"    <pair geom1={quoteattr(geos[i].name)} geom2={quoteattr(geos[j].name)} "
              f'friction="{float(fric[i, j])!r} {float(fric[i, j])!r} 0 0 0" condim="3"/>'
              for i, j in sorted(scene._pair_overrides) if allowed[i, j]]
    return lines + ["  </contact>"]
