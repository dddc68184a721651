"""A simulation scene: a model, collision geometries on its bodies, and optional constraints.

>>> import sinews
>>> from sinews.geometry import Sphere
>>> from sinews.sim import Scene
>>> m = sinews.Model()
>>> ball = m.add_body("world", sinews.joints.FreeFlyer(), inertia=sinews.SpatialInertia.point_mass(1.0), name="ball")
>>> scene = Scene(m)
>>> g = scene.add_ground(friction=0.5)
>>> g = scene.add_geometry("ball", Sphere(0.1), restitution=0.8)
>>> [geo.name for geo in scene.geometries]
['ground', 'ball/sphere']

Contact parameters (used by the steppers; see docs/simulation.md): ``margin`` (contacts are
reported, and enter the solvers, from this gap on: speculative contacts), ``stiffness`` and
``damping`` (the ``lcp`` stepper's CFM/ERP), ``erp`` (fraction of the penetration corrected per
step by the velocity-level steppers), ``default_friction`` and ``default_restitution`` (used when
neither geometry of a pair gives a value).

Pair rules (MJCF's ``<contact>`` section): :meth:`Scene.exclude_bodies` and
:meth:`Scene.exclude_geometries` take pairs out of contact; :meth:`Scene.set_pair` gives one
pair of geometries its own friction and restitution, and with ``force=True`` makes it collide
whatever the filter says (MuJoCo's ``<pair>``).  They are folded into the scene's pair tables
(filter, friction, restitution: one (n, n) table each, built once), which every stepper and
:meth:`Scene.collide` read, the compiled ``default`` path included.

>>> scene.set_pair("ground", "ball/sphere", friction=0.1)
>>> float(scene.collide([0, 0, 0.0995, 0, 0, 0, 1]).friction[0])
0.1
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .._checks import real_scalar
from ..geometry.contacts import Contacts, find_contacts, support_points
from ..geometry.narrow_phase import supported_pair
from ..geometry.shapes import (ALL_GROUPS, Geometry, HalfSpace, Shape, combine_friction,
                               combine_restitution)
from ..spatial import Transform
from ..spatial import as_transform as _as_transform

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..constraints import ConstraintSet
    from ..model import Model

__all__ = ["Scene"]


class Scene:
    """Geometries attached to the bodies of ``model`` (and optional bilateral constraints).

    Args:
        model: a :class:`sinews.Model`.
        constraints: an optional :class:`sinews.constraints.ConstraintSet` (loops, point
            contacts, custom and coordinate constraints) that every stepper enforces as
            equality rows.
        margin: contact detection margin in metres (default 1e-3).
        default_friction: pair friction when neither geometry gives one (default 0.5).
        default_restitution: pair restitution when neither geometry gives one (default 0).
        stiffness, damping: contact stiffness (N/m, default 1e6) and damping (N s/m, default
            1e3) from which the ``lcp`` stepper computes CFM and ERP (docs/simulation.md).
        erp: fraction of a penetration (``default`` stepper) and of a bilateral drift
            (``default``, ``lcp``) corrected per step, in (0, 1] (default 0.2).
    """

    def __init__(self, model: Model, constraints: ConstraintSet | None = None, *, margin: float = 1e-3,
                 default_friction: float = 0.5, default_restitution: float = 0.0, stiffness: float = 1e6,
                 damping: float = 1e3, erp: float = 0.2) -> None:
        from ..model import Model

        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        self.model = model
        self._geometries: list[Geometry] = []
        self._names: dict[str, int] = {}
        self._cache = None
        self._excluded_bodies: set[tuple[int, int]] = set()
        self._excluded_geometries: set[tuple[int, int]] = set()
        self._pair_overrides: dict[tuple[int, int], tuple[float | None, float | None, bool]] = {}
        self.constraints = constraints
        self.margin = margin
        self.default_friction = default_friction
        self.default_restitution = default_restitution
        self.stiffness = stiffness
        self.damping = damping
        self.erp = erp

    # ------------------------------------------------------------------ parameters
    def __setattr__(self, name, value):
        checks = {
            "margin": (0.0, False), "default_friction": (0.0, False),
            "stiffness": (0.0, True), "damping": (0.0, False),
        }
        if name in checks:
            lo, strict = checks[name]
            v = real_scalar(value, name)
            if v < lo or (strict and v == lo):
                raise ValueError(f"{name} must be {'>' if strict else '>='} {lo}, got {v}")
            value = v
        elif name == "default_restitution":
            value = real_scalar(value, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"default_restitution must be in [0, 1], got {value}")
        elif name == "erp":
            value = real_scalar(value, name)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"erp must be in (0, 1], got {value}")
        elif name == "constraints" and value is not None:
            from ..constraints import ConstraintSet

            if not isinstance(value, ConstraintSet):
                raise ValueError(f"constraints must be a sinews.constraints.ConstraintSet or None, got {type(value).__name__}")
        if name in ("default_friction", "default_restitution"):
            self.__dict__["_cache"] = None
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ building
    def add_geometry(self, body: int | str, shape: Shape, X_body_geometry: Transform | tuple | ArrayLike | None = None,
                     name: str | None = None, friction: float | None = None, restitution: float | None = None,
                     group: int = ALL_GROUPS, mask: int = ALL_GROUPS, color: ArrayLike | None = None) -> Geometry:
        """Attach ``shape`` to ``body`` (id or name) and return the :class:`Geometry`.

        ``name`` defaults to ``"<body>/<shape kind>"`` (made unique with a counter).
        """
        bid = self.model._resolve_body(body, "body")
        if not isinstance(shape, Shape):
            raise ValueError(f"shape must be a sinews.geometry shape, got {type(shape).__name__}")
        X = _as_transform(X_body_geometry, "X_body_geometry")
        if name is None:
            base = f"{self.model.bodies[bid].name}/{shape.kind}"
            name, k = base, 1
            while name in self._names:
                k += 1
                name = f"{base}{k}"
        elif name in self._names:
            raise ValueError(f"name {name!r} is already used by geometry {self._names[name]}")
        geo = Geometry(bid, shape, X, name, friction, restitution, group, mask, color)
        if isinstance(shape, HalfSpace) and bid != 0 and self._is_moving(bid):
            raise ValueError("a HalfSpace must be attached to the world or a body welded to it")
        self._names[name] = len(self._geometries)
        self._geometries.append(geo)
        self._cache = None
        return geo

    def add_ground(self, height: float = 0.0, friction: float | None = None, restitution: float | None = None,
                   name: str = "ground", normal: ArrayLike = (0.0, 0.0, 1.0), group: int = ALL_GROUPS,
                   mask: int = ALL_GROUPS) -> Geometry:
        """Add the half-space below the plane ``normal . x = height`` (default: z <= height)."""
        h = real_scalar(height, "height")
        n = np.asarray(normal, dtype=float)
        if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) < 1e-12:
            raise ValueError(f"normal must be a nonzero 3-vector, got {normal!r}")
        n = n / np.linalg.norm(n)
        z = np.array([0.0, 0.0, 1.0])
        axis = np.cross(z, n)
        s = np.linalg.norm(axis)
        if s < 1e-12:
            R = np.eye(3) if n[2] > 0 else np.diag([1.0, -1.0, -1.0])
        else:
            R = Transform.rot_axis(axis / s, float(np.arctan2(s, n @ z))).R
        return self.add_geometry(0, HalfSpace(), Transform(R, h * n), name, friction, restitution,
                                 group, mask)

    def _parent_link(self, bid) -> int:
        """The moving link of the nearest ancestor of ``bid`` on another link (-1: the world)."""
        c = self.model.compiled
        bodies = self.model.bodies
        own = c.link_of_body_list[bid]
        p = bodies[bid].parent
        while p > 0 and c.link_of_body_list[p] == own:
            p = bodies[p].parent
        return -1 if p <= 0 else int(c.link_of_body_list[p])

    def _is_moving(self, bid) -> bool:
        bodies = self.model.bodies
        while bid != 0:
            b = bodies[bid]
            if b.joint is not None and b.joint.nv > 0:
                return True
            bid = b.parent
        return False

    @property
    def geometries(self) -> tuple:
        """The geometries, in the order they were added (index = geometry id)."""
        return tuple(self._geometries)

    def geometry(self, key: int | str) -> Geometry:
        """A geometry by index or name."""
        if isinstance(key, str):
            if key not in self._names:
                raise KeyError(f"no geometry named {key!r}")
            return self._geometries[self._names[key]]
        return self._geometries[int(key)]

    # ------------------------------------------------------------------ pair rules
    def _geometry_index(self, key, argname: str) -> int:
        """The index of geometry ``key`` (index, name or :class:`Geometry` of this scene)."""
        if isinstance(key, Geometry):
            i = self._names.get(key.name, -1) if key.name is not None else -1
            if i < 0 or self._geometries[i] is not key:
                raise KeyError(f"{argname}: geometry {key.name!r} is not a geometry of this scene")
            return i
        if isinstance(key, str):
            if key not in self._names:
                raise KeyError(f"{argname}: no geometry named {key!r}")
            return self._names[key]
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            i = int(key)
            if not 0 <= i < len(self._geometries):
                raise KeyError(f"{argname}: no geometry with index {i} (the scene has {len(self._geometries)})")
            return i
        raise KeyError(f"{argname} must be a geometry index, name or Geometry, got {key!r}")

    def exclude_bodies(self, body_a: int | str, body_b: int | str) -> None:
        """No contact between the geometries of ``body_a`` and those of ``body_b`` (ids or names;
        MJCF's ``<exclude body1 body2>``), including geometries added later.  A pair made to
        collide with :meth:`set_pair` (``force=True``) still collides."""
        a = self.model._resolve_body(body_a, "body_a")
        b = self.model._resolve_body(body_b, "body_b")
        if a == b:
            raise ValueError(f"body_b: the same body as body_a ({self.model.bodies[a].name!r})")
        self._excluded_bodies.add((min(a, b), max(a, b)))
        self._cache = None

    def exclude_geometries(self, geom_a: int | str | Geometry, geom_b: int | str | Geometry) -> None:
        """No contact between geometries ``geom_a`` and ``geom_b`` (index, name or
        :class:`Geometry`), unless :meth:`set_pair` forces it (``force=True``)."""
        i = self._geometry_index(geom_a, "geom_a")
        j = self._geometry_index(geom_b, "geom_b")
        if i == j:
            raise ValueError(f"geom_b: the same geometry as geom_a ({self._geometries[i].name!r})")
        self._excluded_geometries.add((min(i, j), max(i, j)))
        self._cache = None

    def set_pair(self, geom_a: int | str | Geometry, geom_b: int | str | Geometry, *, friction: float | None = None,
                 restitution: float | None = None, force: bool = False) -> None:
        """Rules for the pair of geometries ``geom_a``, ``geom_b`` (index, name or :class:`Geometry`).

        Args:
            friction: the pair's Coulomb coefficient (``>= 0``), used instead of the combination
                of the two geometries' values (``None``: that combination).
            restitution: the pair's coefficient of restitution in ``[0, 1]`` (``None``: combined).
            force: test the pair for contact even when the filter refuses it (collision bits,
                parent/child links, exclusions): MuJoCo's ``<pair>``.  The two geometries must
                be on different links, not both fixed to the world.

        Setting a pair again replaces its rules.
        """
        i = self._geometry_index(geom_a, "geom_a")
        j = self._geometry_index(geom_b, "geom_b")
        if i == j:
            raise ValueError(f"geom_b: the same geometry as geom_a ({self._geometries[i].name!r})")
        mu = None if friction is None else real_scalar(friction, "friction")
        if mu is not None and mu < 0.0:
            raise ValueError(f"friction must be >= 0, got {mu}")
        e = None if restitution is None else real_scalar(restitution, "restitution")
        if e is not None and not 0.0 <= e <= 1.0:
            raise ValueError(f"restitution must be in [0, 1], got {e}")
        if not isinstance(force, (bool, np.bool_)):
            raise ValueError(f"force must be True or False, got {force!r}")
        if force:
            lk = self.model.compiled.link_of_body_list
            a, b = self._geometries[i], self._geometries[j]
            la, lb = lk[a.body], lk[b.body]
            if a.body == b.body or (la >= 0 and la == lb):
                raise ValueError(f"force: geometries {a.name!r} and {b.name!r} are on the same link")
            if la < 0 and lb < 0:
                raise ValueError(f"force: geometries {a.name!r} and {b.name!r} are both fixed to the world")
        self._pair_overrides[(min(i, j), max(i, j))] = (mu, e, bool(force))
        self._cache = None

    @property
    def pair_rules(self) -> dict:
        """The pair rules, by name: ``{"excluded_bodies": [(a, b), ...], "excluded_geometries":
        [(a, b), ...], "pairs": {(a, b): {"friction": .., "restitution": .., "force": ..}}}``."""
        bn, gs = self.model.bodies, self._geometries
        return {
            "excluded_bodies": sorted((bn[a].name, bn[b].name) for a, b in self._excluded_bodies),
            "excluded_geometries": sorted((gs[a].name, gs[b].name) for a, b in self._excluded_geometries),
            "pairs": {(gs[a].name, gs[b].name): dict(friction=r[0], restitution=r[1], force=r[2])
                      for (a, b), r in sorted(self._pair_overrides.items())},
        }

    def clear_pair_rules(self) -> None:
        """Remove every exclusion and pair rule."""
        self._excluded_bodies.clear()
        self._excluded_geometries.clear()
        self._pair_overrides.clear()
        self._cache = None

    # ------------------------------------------------------------------ compiled tables
    def _tables(self):
        if self._cache is not None:
            return self._cache
        geos = self._geometries
        n = len(geos)
        model = self.model
        c = model.compiled
        link = np.array([c.link_of_body_list[g.body] for g in geos], dtype=np.int64)
        plink = np.array([self._parent_link(g.body) for g in geos], dtype=np.int64)
        allowed = np.zeros((n, n), dtype=bool)
        fric = np.zeros((n, n))
        rest = np.zeros((n, n))
        skipped = []
        ex_b, ex_g, over = self._excluded_bodies, self._excluded_geometries, self._pair_overrides
        rules = bool(ex_b or ex_g or over)
        for i in range(n):
            for j in range(i + 1, n):
                a, b = geos[i], geos[j]
                ok = (a.group & b.mask) != 0 and (b.group & a.mask) != 0
                ok = ok and a.body != b.body and not (link[i] >= 0 and link[i] == link[j])
                # parent/child at the level of moving links (welded and massless joint bodies in
                # between are looked through); a link whose parent is the world still collides
                ok = ok and not ((link[j] >= 0 and plink[i] == link[j]) or (link[i] >= 0 and plink[j] == link[i]))
                ok = ok and not (link[i] < 0 and link[j] < 0)  # both fixed to the world
                rule = None
                if rules:  # exclusions, then the pair's own rule (force: past every filter)
                    if ok and ((i, j) in ex_g or (min(a.body, b.body), max(a.body, b.body)) in ex_b):
                        ok = False
                    rule = over.get((i, j))
                    if rule is not None and rule[2]:
                        ok = True
                if ok and not supported_pair(a.shape, b.shape):
                    skipped.append(f"({a.name!r}, {b.name!r}: {type(a.shape).__name__}-{type(b.shape).__name__})")
                    ok = False
                allowed[i, j] = allowed[j, i] = ok
                fric[i, j] = fric[j, i] = combine_friction(a.friction, b.friction, self.default_friction)
                rest[i, j] = rest[j, i] = combine_restitution(a.restitution, b.restitution,
                                                              self.default_restitution)
                if rule is not None:
                    if rule[0] is not None:
                        fric[i, j] = fric[j, i] = rule[0]
                    if rule[1] is not None:
                        rest[i, j] = rest[j, i] = rule[1]
        if skipped:
            warnings.warn(
                f"{len(skipped)} geometry pair(s) have no contact routine and are not tested: "
                + ", ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else "")
                + " (install coal for every convex pair, or exclude them with group/mask bits)",
                RuntimeWarning, stacklevel=3)
        R_bg = np.array([g.X_body_geometry.R for g in geos]).reshape(n, 3, 3)
        p_bg = np.array([g.X_body_geometry.p for g in geos]).reshape(n, 3)
        body = np.array([g.body for g in geos], dtype=np.int64)
        shapes = [g.shape for g in geos]
        radius = max((g.shape.bounding_radius() for g in geos if not isinstance(g.shape, HalfSpace)),
                     default=0.0)
        self._support = support_points(shapes)
        self._cache = (shapes, body, R_bg, p_bg, allowed, fric, rest, radius)
        return self._cache

    def _bounding_radius(self) -> float:
        return self._tables()[7]

    def geometry_poses(self, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """World poses of every geometry at ``q`` (nq,): ``(R (n, 3, 3), p (n, 3))``."""
        from ..kinematics import forward_kinematics

        shapes, body, R_bg, p_bg, *_ = self._tables()
        pl = forward_kinematics(self.model, q)
        Rb = pl.R[body]
        R = np.einsum("nij,njk->nik", Rb, R_bg)
        p = pl.p[body] + np.einsum("nij,nj->ni", Rb, p_bg)
        return R, p

    def collide(self, q: ArrayLike, margin: float | None = None) -> Contacts:
        """The contacts at configuration ``q`` (nq,) (gaps up to ``margin``, default ``self.margin``)."""
        shapes, body, R_bg, p_bg, allowed, fric, rest, _ = self._tables()
        if not shapes:
            return Contacts.empty()
        R, p = self.geometry_poses(q)
        m = self.margin if margin is None else real_scalar(margin, "margin")
        return find_contacts(shapes, R, p, allowed, fric, rest, m, self._support)

    def __repr__(self) -> str:
        return f"Scene(model={self.model.name!r}, geometries={len(self._geometries)})"
