"""``ConstraintSet``: an ordered collection of constraint *groups*, each owning *rows*.

Rows and groups (RBDL's ``ConstraintSet``, rbdl/rbdl 3.3.1, reorganised):

* a **row** is one scalar constraint equation ``G_i qdd = gamma_i``.  Every per-row vector
  (multipliers, impulses, errors, gamma, target velocities) has ``cs.size`` entries, in the
  order the rows were added.  ``cs.row_group[i]`` is the index of the group owning row i;
* a **group** is one :class:`~sinews.constraints.constraint.Constraint` object (a point
  contact with up to 3 normals, a loop closure with up to 6 axes, or a custom constraint).
  It has an ``index`` (0, 1, ... in creation order), an optional unique ``name``, an optional
  unique user ``id``, a ``type`` (``"contact"``, ``"loop"``, ``"custom"``), ``size`` rows
  (``g.rows`` is their slice), and its own Baumgarte settings.

Grouping rules (sinews; deliberately *not* RBDL's, which also compares the user id and so
splits ``add(..., name="foot", id=7)`` followed by ``add(...)`` into two groups):

1. A row added **with** a ``name`` and/or an ``id`` goes to the existing group with that name /
   id if there is one, else it starts a new group carrying them.  Joining a group requires the
   same type and the same geometry (contact: body and body point; loop: both bodies and both
   frames) and, when both name and id are given, that they designate the same group; anything
   else is a ``ValueError``.
2. A row added **without** name and id joins the most recently created group if that group has
   the same type and geometry; otherwise it starts a new, anonymous group.
3. ``baumgarte`` / ``time_constant`` given on a row that joins a group must agree with the
   group's settings (``None``, the default, means "inherit"); a conflict is a ``ValueError``.
4. Custom constraints always form their own group.
5. The rows of a group are contiguous: a group can only grow while it is the most recent
   group; adding to an older group is a ``ValueError`` (add all rows of a group first).

Every ``add_*`` returns the row's *assigned id* = its row index (for a custom constraint, the
index of its first row).  ``group_by_assigned_id(row)`` accepts any row index.

Life cycle: add rows, then :meth:`ConstraintSet.bind` (or let the first algorithm bind it):
bodies are resolved against the model (``KeyError`` naming the argument) and the set is frozen
(adding raises ``RuntimeError``).  Baumgarte settings stay changeable after binding.
:meth:`ConstraintSet.remove` takes a group out at any time (a bound set is bound again to the
same model) and :meth:`ConstraintSet.unbind` releases the model so that groups can be added;
both bump ``structure_version``.

Besides contacts and RBDL-style loop rows, a set holds loops closed by a cut joint
(:meth:`ConstraintSet.add_loop_joint`, :class:`sinews.loops.LoopJoint`, type
``"loop_joint"``) and coordinate couplings (:meth:`ConstraintSet.add_coordinate_constraint`,
:meth:`ConstraintSet.add_mimic_constraints`, type ``"coordinate"``); each is its own group.
"""

from __future__ import annotations

import operator
import threading
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._checks import real_array
from ..spatial import as_transform as _as_transform
from ._callbacks import check_frame, group_wrenches
from ._compiled_contacts import CompiledContacts
from ._contact_batch import ContactBatch
from ._thin import is_thin
from .constraint import (
    Constraint,
    ContactConstraint,
    LoopConstraint,
    _check_body,
    _check_flag,
    _check_name,
    _check_point,
    _check_time_constant,
    _check_user_id,
)

if TYPE_CHECKING:
    from ..model import Data, Model, TransformLike
    from .constraint import ConstraintWrenches

__all__ = ["ConstraintSet"]

_TYPES = ("contact", "loop", "custom", "coordinate", "loop_joint")

# binding is rare and builds the set's derived data: one thread at a time (two threads making
# the first call on the same unbound set must not interleave their binds)
_BIND_LOCK = threading.RLock()


class ConstraintSet:
    """Point contacts, loop closures and custom constraints on one model.

    >>> cs = ConstraintSet()
    >>> cs.add_contact_constraint("foot", (0, 0, -0.5), (0, 0, 1), name="foot")   # doctest: +SKIP
    0
    """

    def __init__(self) -> None:
        self._groups: list[Constraint] = []
        self._by_name: dict[str, Constraint] = {}
        self._by_id: dict[int, Constraint] = {}
        self._row_group: list[int] = []
        self.model = None
        self.stabilisation_version = 0  # bumped on every Baumgarte change of a group
        self.structure_version = 0  # bumped by unbind() / remove(): the rows may have changed
        self._compiled = None  # CompiledContacts of a bound contacts-only set

    # ------------------------------------------------------------------ adding
    def _check_unbound(self):
        if self.model is not None:
            raise RuntimeError(
                "the ConstraintSet is bound to a model: constraints cannot be added after bind(); "
                "call cs.unbind() first (the next use binds it again) or build a new ConstraintSet"
            )

    def _find(self, name, id, kind, same):
        """The group a new row joins (or None for a new group), by the grouping rules."""
        name = _check_name(name)
        id = _check_user_id(id)
        if name is None and id is None:
            last = self._groups[-1] if self._groups else None
            if last is not None and last.type == kind and same(last):
                return last, name, id
            return None, name, id
        gn = self._by_name.get(name) if name is not None else None
        gi = self._by_id.get(id) if id is not None else None
        if gn is not None and gi is not None and gn is not gi:
            raise ValueError(f"name {name!r} and id {id} designate two different groups ({gn.index} and {gi.index})")
        g = gn if gn is not None else gi
        if g is None:
            return None, name, id
        if name is not None and g.name != name:
            raise ValueError(f"id {id} belongs to group {g.index} named {g.name!r}, not {name!r}")
        if id is not None and g.id != id:
            raise ValueError(f"name {name!r} belongs to group {g.index} with id {g.id}, not {id}")
        if g.type != kind:
            raise ValueError(
                f"group {g.label!r} (index {g.index}) is a {g.type} group: a {kind} row cannot join it; "
                "use another name or id"
            )
        if not same(g):
            raise ValueError(
                f"group {g.label!r} (index {g.index}) has a different "
                f"{'body/point' if kind == 'contact' else 'bodies/frames'}: use another name or id"
            )
        return g, name, id

    def _register(self, g: Constraint, name, id):
        g.name, g.id = name, id
        g.index = len(self._groups)
        g.row_start = len(self._row_group)
        g.set = self
        self._groups.append(g)
        if name is not None:
            self._by_name[name] = g
        if id is not None:
            self._by_id[id] = g

    def _append_row(self, g: Constraint) -> int:
        # rows of a group are contiguous: a group can only grow while it is the last group
        if g is not self._groups[-1]:
            raise ValueError(
                f"group {g.label!r} (index {g.index}) is not the last group: its rows must be "
                "contiguous, add all rows of a group before starting another"
            )
        self._row_group.append(g.index)
        return len(self._row_group) - 1

    def add_contact_constraint(self, body: int | str, body_point: ArrayLike, world_normal: ArrayLike,
                               name: str | None = None, id: int | None = None) -> int:
        """Add one contact row: the velocity of ``body_point`` (body coordinates) of ``body``
        (id or name) along the unit ``world_normal`` is zero.  Returns the row index."""
        self._check_unbound()
        body = _check_body(body)
        body_point = _check_point(body_point, "body_point")
        g, name, id = self._find(name, id, "contact", lambda g: g.same_geometry(body, body_point))
        if g is None:
            g = ContactConstraint(body, body_point)
            g.add_normal(world_normal)
            self._register(g, name, id)
            return self._append_row(g)
        g.add_normal(world_normal)
        try:
            return self._append_row(g)
        except ValueError:
            g.normals.pop()
            raise

    def add_loop_constraint(
        self,
        predecessor: int | str,
        successor: int | str,
        X_predecessor: TransformLike,
        X_successor: TransformLike,
        axis: ArrayLike,
        baumgarte: bool | None = None,
        time_constant: float | None = None,
        name: str | None = None,
        id: int | None = None,
    ) -> int:
        """Add one loop-closure row: the relative motion of frame ``X_successor`` (pose in the
        successor body) with respect to frame ``X_predecessor`` (pose in the predecessor body)
        along the unit spatial ``axis = [angular; linear]`` (predecessor-frame axes) is zero.

        ``baumgarte``: enable Baumgarte stabilisation for the group (default off);
        ``time_constant`` T > 0 gives ``alpha = beta = 1/T`` (default 0.1 s).  Returns the row
        index.
        """
        self._check_unbound()
        predecessor = _check_body(predecessor, "predecessor")
        successor = _check_body(successor, "successor")
        X_predecessor = _as_transform(X_predecessor, "X_predecessor")
        X_successor = _as_transform(X_successor, "X_successor")
        if baumgarte is not None:
            baumgarte = _check_flag(baumgarte, "baumgarte")
        if time_constant is not None:
            time_constant = _check_time_constant(time_constant)
        g, name, id = self._find(
            name, id, "loop", lambda g: g.same_geometry(predecessor, successor, X_predecessor, X_successor)
        )
        if g is None:
            g = LoopConstraint(
                predecessor, successor, X_predecessor, X_successor,
                baumgarte=baumgarte if baumgarte is not None else False,
                time_constant=time_constant if time_constant is not None else 0.1,
            )
            g.add_axis(axis)
            self._register(g, name, id)
            return self._append_row(g)
        if baumgarte is not None and baumgarte != g.baumgarte_enabled:
            raise ValueError(f"baumgarte={baumgarte} conflicts with group {g.label!r} (baumgarte={g.baumgarte_enabled})")
        if time_constant is not None and time_constant != g.time_constant:
            raise ValueError(f"time_constant={time_constant} conflicts with group {g.label!r} (time_constant={g.time_constant})")
        g.add_axis(axis)
        try:
            return self._append_row(g)
        except ValueError:
            g.axes.pop()
            raise

    def add_custom_constraint(self, c: Constraint) -> int:
        """Add a user constraint (a :class:`~sinews.constraints.CustomConstraint` subclass
        instance with ``size >= 1`` rows) as its own group; its ``name`` and ``id`` must be unused.
        Returns the index of its first row."""
        self._check_unbound()
        if not isinstance(c, Constraint):
            raise ValueError(f"c must be a sinews.constraints.CustomConstraint, got {type(c).__name__}")
        if not hasattr(c, "_baumgarte_enabled") or not hasattr(c, "set"):
            raise ValueError(
                f"c ({type(c).__name__}) is not initialised: its __init__ must call "
                "super().__init__(name, id, baumgarte, time_constant)"
            )
        if c.set is not None:
            raise ValueError("c already belongs to a ConstraintSet")
        size = _custom_size(c)
        if size < 1:
            raise ValueError(f"c.size must be >= 1, got {c.size}")
        _check_name(c.name, "c.name")
        _check_user_id(c.id, "c.id")
        if c.name is not None and c.name in self._by_name:
            raise ValueError(f"name {c.name!r} is already used by group {self._by_name[c.name].index}")
        if c.id is not None and c.id in self._by_id:
            raise ValueError(f"id {c.id} is already used by group {self._by_id[c.id].index}")
        self._register(c, c.name, c.id)
        self._row_group.extend([c.index] * size)
        return c.row_start

    def add_coordinate_constraint(self, joint: int | str, mimicked: int | str, ratio: float = 1.0,
                                  offset: float = 0.0, index: int = 0, mimicked_index: int = 0,
                                  name: str | None = None, id: int | None = None, baumgarte: bool = False,
                                  time_constant: float = 0.1) -> int:
        """Add a coordinate coupling ``q[joint][index] = ratio * q[mimicked][mimicked_index] +
        offset`` (a gear, belt or coupler; joints by child body id or name) as its own one-row
        group; see :class:`~sinews.constraints.CoordinateConstraint`.  Returns the row index."""
        from .coordinate import CoordinateConstraint

        self._check_unbound()
        c = CoordinateConstraint(joint, mimicked, ratio, offset, index, mimicked_index, name=name, id=id,
                                 baumgarte=baumgarte, time_constant=time_constant)
        return self.add_custom_constraint(c)

    def add_mimic_constraints(self, model: Model, baumgarte: bool = False, time_constant: float = 0.1) -> list:
        """One coordinate constraint per mimic record of ``model`` (``model.mimic_joints``, from
        URDF ``<mimic>`` tags or ``Model.add_mimic``), named ``"mimic:<joint>"``.  Returns the
        rows added (empty when the model has no mimic joints)."""
        from ..model import Model

        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        self._check_unbound()
        rows = []
        for rec in getattr(model, "mimic_joints", ()):
            rows.append(self.add_coordinate_constraint(rec.joint, rec.mimicked, rec.multiplier, rec.offset,
                                                       name=f"mimic:{rec.joint}", baumgarte=baumgarte,
                                                       time_constant=time_constant))
        return rows

    def add_loop_joint(self, source: int | str, target: int | str | None, joint_type: str,
                       X_source: TransformLike | None = None, X_target: TransformLike | None = None, *,
                       axis: ArrayLike | None = None, pitch: float = 0.0, name: str | None = None,
                       id: int | None = None, baumgarte: bool = False, time_constant: float = 0.1) -> int:
        """Close a loop with a cut joint: frame ``X_source`` on body ``source`` and frame
        ``X_target`` on body ``target`` (or the world) may move relative to each other only as
        the joint ``joint_type`` allows (``"pin"``, ``"slider"``, ``"cylindrical"``,
        ``"universal"``, ``"ball"``, ``"planar"``, ``"locked"``, ``"screw"``,
        ``"constant_velocity"``); see :class:`sinews.loops.LoopJoint`.  Its own group; returns
        the index of its first row (the group: ``cs.group_by_assigned_id(row)``)."""
        from ..loops.loop_joint import LoopJoint

        self._check_unbound()
        g = LoopJoint(source, target, joint_type, X_source, X_target, axis=axis, pitch=pitch, name=name, id=id,
                      baumgarte=baumgarte, time_constant=time_constant)
        return self.add_custom_constraint(g)

    def remove(self, key: int | str | Constraint) -> None:
        """Remove a group (by group, index or name; Karana's ``discard``).  The later groups move
        up (their ``index`` and rows change).  A bound set is unbound first (see :meth:`unbind`)
        and bound again to the same model, so it can be used at once."""
        g = self.group(key)
        model = self.model
        if model is not None:
            self.unbind()
        del self._groups[g.index]
        self._by_name = {h.name: h for h in self._groups if h.name is not None}
        self._by_id = {h.id: h for h in self._groups if h.id is not None}
        self._row_group = []
        for i, h in enumerate(self._groups):
            h.index = i
            h.row_start = len(self._row_group)
            self._row_group.extend([i] * h.size)
        g.set, g.index, g.row_start = None, -1, -1
        if model is not None and self._groups:
            self.bind(model)

    def unbind(self) -> "ConstraintSet":
        """Release the model so that groups can be added (or removed) again; the next algorithm
        call (or :meth:`bind`) binds the set anew.  Results computed before refer to the old
        rows.  Bumps :attr:`structure_version` (caches keyed on the set's rows must check it)."""
        with _BIND_LOCK:
            self.model = None
            self._compiled = None
            self._contact_batch = None
            self._others = []
            self.structure_version += 1
        return self

    def copy(self) -> "ConstraintSet":
        """An *unbound* copy with the same groups, rows, names, ids and Baumgarte settings
        (RBDL's ``Copy``, but the groups are copied too, not shared).  Bind it to another model,
        or keep several pre-built sets to switch contacts at run time."""
        import copy as _copy

        new = ConstraintSet()
        for g in self._groups:  # (a custom group's own state is copied shallowly)
            h = _copy.copy(g)
            for attr in ("normals", "axes"):
                if hasattr(h, attr):
                    setattr(h, attr, [a.copy() for a in getattr(g, attr)])
            h.set = None
            if hasattr(h, "_after_copy"):  # groups with derived per-object state (loop joints)
                h._after_copy()
            new._register(h, g.name, g.id)
            new._row_group.extend([h.index] * g.size)
        return new

    # ------------------------------------------------------------------ binding
    def bind(self, model: Model) -> "ConstraintSet":
        """Resolve bodies against ``model`` and freeze the set; returns ``self``.

        Binding again to the same model is a no-op; to another model, ``RuntimeError``.
        Raises ``KeyError`` naming the argument (``body``, ``predecessor``, ``successor``) for
        bodies not in the model, ``ValueError`` for an empty set.
        """
        from ..model import Model

        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        with _BIND_LOCK:
            if self.model is model:
                return self
            if self.model is not None:
                raise RuntimeError("the ConstraintSet is already bound to another model")
            if not self._groups:
                raise ValueError("the ConstraintSet is empty: add constraints before bind()")
            counts = np.bincount(np.asarray(self._row_group, dtype=np.int64), minlength=len(self._groups))
            for g in self._groups:
                try:
                    g.bind(model)
                except KeyError as exc:
                    raise KeyError(f"group {g.label!r} (index {g.index}): {exc.args[0]}") from None
                if g.type == "custom" and _custom_size(g) != counts[g.index]:
                    raise ValueError(f"custom group {g.label!r} changed its size after being added")
            c = model.compiled  # freeze the model too
            contacts = [g for g in self._groups if type(g) is ContactConstraint]
            self._contact_batch = ContactBatch(model, contacts) if contacts else None
            self._others = [g for g in self._groups if type(g) is not ContactConstraint]
            # the compiled kernel of contacts-only sets keeps a rows x rows matrix per workspace:
            # sets solved by row compression (many more rows than coordinates) do without it
            if (self._contact_batch is not None and not self._others and c.nlinks > 0
                    and not is_thin(self.size, c.nv)):
                self._compiled = CompiledContacts(model, self, self._contact_batch)
            self.model = model
        return self

    @property
    def bound(self) -> bool:
        return self.model is not None

    def _ensure_bound(self, model):
        if self.model is None:
            self.bind(model)
        elif self.model is not model:
            from ..model import Model

            if not isinstance(model, Model):
                raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
            raise ValueError("cs is bound to a different model than the one passed")
        return self

    # ------------------------------------------------------------------ rows and groups
    @property
    def size(self) -> int:
        """Number of rows (scalar constraint equations)."""
        return len(self._row_group)

    def __len__(self) -> int:
        return self.size

    @property
    def groups(self) -> tuple[Constraint, ...]:
        """The groups in creation order (``groups[i].index == i``)."""
        return tuple(self._groups)

    @property
    def ngroups(self) -> int:
        return len(self._groups)

    def __iter__(self):
        """Iterate over the groups."""
        return iter(self._groups)

    @property
    def row_group(self) -> np.ndarray:
        """Group index of every row."""
        return np.array(self._row_group, dtype=np.int64)

    @property
    def row_types(self) -> list[str]:
        return [self._groups[g].type for g in self._row_group]

    @property
    def row_names(self) -> list:
        return [self._groups[g].name for g in self._row_group]

    def group(self, key: int | str | Constraint) -> Constraint:
        """A group by object, group index (int) or name (str); ``KeyError`` naming the key.

        User ids are looked up with :meth:`group_by_id`, rows with :meth:`group_by_assigned_id`.
        """
        if isinstance(key, Constraint):
            if key.set is not self:
                raise KeyError(f"group {key!r} does not belong to this ConstraintSet")
            return key
        if isinstance(key, str):
            return self.group_by_name(key)
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            if not 0 <= int(key) < len(self._groups):
                raise KeyError(f"group: no group with index {key} (the set has {len(self._groups)} groups)")
            return self._groups[int(key)]
        raise ValueError(f"group must be a group, a group index (integer) or a name (string), got {key!r}")

    def group_by_name(self, name: str) -> Constraint:
        """The group named ``name`` (``KeyError`` if there is none)."""
        if not isinstance(name, str):
            raise ValueError(f"name must be a string, got {name!r}")
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"group: no group named {name!r}") from None

    def group_by_id(self, id: int) -> Constraint:
        """The group with user id ``id`` (an integer; ``KeyError`` if there is none)."""
        if id is None:
            raise ValueError("id must be an integer, got None")
        id = _check_user_id(id)
        try:
            return self._by_id[id]
        except KeyError:
            raise KeyError(f"group: no group with user id {id!r}") from None

    def group_by_assigned_id(self, row: int) -> Constraint:
        """The group owning row ``row`` (the value returned by ``add_*``)."""
        if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)):
            raise ValueError(f"row must be an integer row index, got {row!r}")
        if not 0 <= int(row) < self.size:
            raise KeyError(f"assigned id: no row {row!r} (the set has {self.size} rows)")
        return self._groups[self._row_group[int(row)]]

    def group_index(self, key: int | str | Constraint) -> int:
        return self.group(key).index

    def rows(self, key: int | str | Constraint) -> slice:
        """Row slice of a group (by group, index or name)."""
        return self.group(key).rows

    def split(self, per_row: ArrayLike) -> dict:
        """A per-row vector (``cs.size`` finite real numbers: multipliers, impulses, errors) as
        ``{group label: its rows' values}`` (label = name or ``"type[index]"``; float64
        views of one array)."""
        x = real_array(per_row, "per_row")
        if x.shape != (self.size,):
            raise ValueError(f"per_row must have shape ({self.size},) (one entry per row), got {x.shape}")
        return {g.label: x[g.rows] for g in self._groups}

    # ------------------------------------------------------------------ Baumgarte
    def enable_baumgarte(self, key: int | str | Constraint, time_constant: float | None = None) -> None:
        """Enable Baumgarte stabilisation of a group (optionally setting T, ``alpha = beta = 1/T``)."""
        g = self.group(key)
        if time_constant is not None:
            g.time_constant = _check_time_constant(time_constant)
        g.baumgarte_enabled = True

    def disable_baumgarte(self, key: int | str | Constraint) -> None:
        self.group(key).baumgarte_enabled = False

    def is_baumgarte_enabled(self, key: int | str | Constraint) -> bool:
        return self.group(key).baumgarte_enabled

    def set_baumgarte_time_constant(self, key: int | str | Constraint, time_constant: float) -> None:
        self.group(key).time_constant = _check_time_constant(time_constant)

    def set_baumgarte_gains(self, key: int | str | Constraint, stiffness: float, damping: float,
                            enable: bool = True) -> None:
        """Baumgarte stabilisation of a group as ``(stiffness K, damping D)``: ``G qdd = gamma -
        D phidot - K phi`` (``enable``: also switch it on)."""
        g = self.group(key)
        g.set_baumgarte_gains(stiffness, damping)
        if enable:
            g.baumgarte_enabled = True

    def baumgarte_gains(self, key: int | str | Constraint) -> tuple[float, float]:
        """``(K, D)`` of a group (see :meth:`set_baumgarte_gains`)."""
        return self.group(key).baumgarte_gains

    def baumgarte_coefficients(self, key: int | str | Constraint) -> tuple[float, float]:
        """``(alpha, beta)`` of a group: both ``1/T``."""
        return self.group(key).baumgarte_coefficients

    # ------------------------------------------------------------------ wrenches
    def calc_forces(self, group: int | str | Constraint, q: ArrayLike, multipliers: object,
                    frame: str = "local", data: Data | None = None) -> ConstraintWrenches:
        """Per-body wrenches of ``group`` for forward-dynamics multipliers (bound sets only);
        see :func:`sinews.constraints.calc_forces`."""
        return self._wrenches(group, q, multipliers, frame, "force", data)

    def calc_impulses(self, group: int | str | Constraint, q: ArrayLike, impulses: object, frame: str = "local",
                      data: Data | None = None) -> ConstraintWrenches:
        """Per-body impulsive wrenches of ``group`` (bound sets only); see
        :func:`sinews.constraints.calc_impulses`."""
        return self._wrenches(group, q, impulses, frame, "impulse", data)

    def _wrenches(self, group, q, values, frame, kind, data):
        if self.model is None:
            raise RuntimeError("the ConstraintSet is not bound: call bind(model) first")
        check_frame(frame)
        return group_wrenches(self.model, q, self, self.group(group), values, frame, kind, data)

    # ------------------------------------------------------------------ display
    def summary(self) -> str:
        lines = [f"ConstraintSet: {self.ngroups} groups, {self.size} rows, bound={self.bound}"]
        for g in self._groups:
            lines.append(
                f"  [{g.index}] {g.type:7s} name={g.name!r} id={g.id} rows {g.row_start}..{g.row_start + g.size - 1}"
                f" baumgarte={'T=%g' % g.time_constant if g.baumgarte_enabled else 'off'}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<ConstraintSet groups={self.ngroups} rows={self.size} bound={self.bound}>"


def _custom_size(c) -> int:
    """``c.size`` as a row count: an integer (ValueError naming ``c.size`` otherwise)."""
    size = c.size
    if isinstance(size, (bool, np.bool_)):
        raise ValueError(f"c.size must be an integer number of rows, got {size!r}")
    try:
        return operator.index(size)
    except TypeError:
        raise ValueError(f"c.size must be an integer number of rows, got {size!r}") from None
