"""The one-call compiled path of contacts-only sets (range-space, direct and null-space methods).

A bound :class:`~sinews.constraints.ConstraintSet` made only of point contacts gets a
:class:`CompiledContacts`: the model topology, the contact layout (per point: its link, its
rows and the *support chain* of dofs from its link to the root, plus, per pair of points, the
number of dofs their chains share) packed into one int64 array, and per workspace one float64
array holding the points and normals, a private tree workspace and the
solver's scratch.  A call is one kernel call with 10 arguments and the result object:
:func:`sinews.constraints._fast.contact_range_space` for ``range_space_sparse`` and ``direct``
(the KKT system by block elimination: the Schur complement ``-G H^-1 G^T`` of ``H``, which is
the range-space computation; a singular ``H`` or redundant rows, which only the direct
method's LAPACK solver of the general path handles, hand over to that path), and
:func:`sinews.constraints._fast_null_space.contact_null_space` for ``null_space``.  A system
either kernel does not solve (singular, redundant, borderline rank) returns ``None``: the
general path then gives its own answer, flags and errors.

Argument checking without a second pass over the arguments: once the kernel has been compiled
for float64 C-contiguous writeable vectors, its dispatcher is sealed (``disable_compile``), so
any other argument type (lists, read-only, strided, integer or 2-D arrays) raises ``TypeError``
in Numba's dispatch instead of compiling a new specialisation; the call then converts the
arguments with :func:`sinews._checks.state3` (which names a bad argument) and retries.  The
kernel checks the lengths and finiteness itself and returns a code that is turned into the
same ``ValueError`` as everywhere else.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import _layout as LY
from .._checks import ZERO_QUATERNION, finite_vector, raise_kernel_code, state3
from ..algorithms import NO_FORCES, link_forces
from ..model import Data
from . import _fast as F
from . import _fast_null_space as FN

__all__ = ["CompiledContacts"]


class CompiledContacts:
    """Packed data of the compiled range-space path of one bound contacts-only set."""

    def __init__(self, model, cs, batch):
        c = model.compiled
        self.model = model
        self.cs = cs
        self.nq, self.nv = c.nq, c.nv
        nl, nv = c.nlinks, c.nv
        npts = len(batch.link)
        n = len(batch.rows)
        self.rows = n
        # support chain of each point: the dofs from its link's last dof to the root, deepest
        # first (the dof parents lam only ever decrease); computed once per link
        links = np.asarray(batch.link, dtype=np.int64)
        ulinks, point_link = np.unique(links, return_inverse=True)
        uchains = []
        for k in ulinks.tolist():
            ch = []
            if k >= 0:
                j = int(c.mi[k, LY.MI_IV] + c.mi[k, LY.MI_NV] - 1)
                while j >= 0:
                    ch.append(j)
                    j = int(c.lam[j])
            uchains.append(ch)
        chains = [uchains[u] for u in point_link.tolist()]
        cptr = np.concatenate([[0], np.cumsum([len(ch) for ch in chains])]).astype(np.int64)
        chain = np.array([j for ch in chains for j in ch], dtype=np.int64)
        # dofs shared by the chains of two points: both are paths to the root of one tree, so
        # what they share is their common tail (the path from their deepest common dof), whose
        # length is the size of the intersection of the two dof sets
        member = np.zeros((len(ulinks), nv), dtype=np.int64)
        for u, ch in enumerate(uchains):
            member[u, ch] = 1
        ucommon = member @ member.T
        common = ucommon[point_link[:, None], point_link[None, :]]
        maxm = max(1, max(len(ch) for ch in chains))
        int_parts = [c.mi.reshape(-1), c.lam, batch.link, batch.point_ptr, cptr, chain, common.reshape(-1)]
        ws0 = Data(model).ws
        float_parts = [batch.r_link_c.reshape(-1), batch.N_c.reshape(-1), ws0,
                       np.zeros(n), np.zeros(n), np.zeros(n * maxm), np.zeros(n * maxm), np.zeros(n),
                       np.zeros(nv * nv), np.zeros(nv), np.zeros(n * n), np.zeros(n), np.zeros(nv),
                       np.zeros(nv), np.zeros(FN.ns_scratch_size(nv, n))]
        head = np.zeros(F.P_HEADER, dtype=np.int64)
        head[[F.P_NL, F.P_NV, F.P_NPTS, F.P_NROWS]] = nl, nv, npts, n
        # offsets of the int regions in pi (after the header) and of the float regions in ps
        head[[F.P_MI, F.P_LAM, F.P_LINKS, F.P_PPTR, F.P_CPTR, F.P_CHAIN, F.P_COMMON]] = _offsets(int_parts, F.P_HEADER)
        head[[F.P_RLINK, F.P_N, F.P_WS, F.P_ALPHA2, F.P_BOTTOM, F.P_G, F.P_Y, F.P_GAMMA,
              F.P_H, F.P_Z, F.P_K, F.P_RHS, F.P_ZERO, F.P_C, F.P_NS]] = _offsets(float_parts, 0)
        head[F.P_MAXM] = maxm
        head[F.P_NQ] = c.nq
        head[F.P_NWS] = ws0.size
        self.pi = np.concatenate([head] + [np.asarray(p, dtype=np.int64).reshape(-1) for p in int_parts])
        self.mf = c.mf  # the model's own array: gravity set later is seen
        self._template = np.concatenate(float_parts)
        self._alpha2 = slice(head[F.P_ALPHA2], head[F.P_ALPHA2] + n)
        self._bottom = slice(head[F.P_BOTTOM], head[F.P_BOTTOM] + n)
        # per-workspace arrays [ps, stabilisation version]; the last one used is kept at hand
        self._scratch = weakref.WeakKeyDictionary()
        # (workspace, scratch) of the last call, read as one object (threads with their own
        # workspaces never pick up each other's scratch); holds the last workspace alive
        self._last = (None, None)

    def _scratch_for(self, data):
        s = self._scratch.get(data)
        if s is None:
            s = [self._template.copy(), -1]
            self._scratch[data] = s
        self._last = (data, s)
        return s

    def _data(self, data):
        if data is None:
            return self.model.default_data
        if not isinstance(data, Data) or data.model is not self.model:
            raise ValueError("data must be a sinews.Data created for this model (model.data())")
        return data

    def _baumgarte(self, s):
        """Refill the Baumgarte rows of a scratch (contacts: phi = 0, phidot = G v, so only
        alpha enters: gamma_r -= 2 alpha G_r v)."""
        cs = self.cs
        alpha2 = s[0][self._alpha2]
        alpha2[:] = 0.0
        for g in cs.groups:
            if g.baumgarte_enabled:
                alpha2[g.rows] = 2.0 * g.baumgarte_coefficients[0]
        s[1] = cs.stabilisation_version

    def _failed(self, code, q, v, tau, names):
        """Raise the error of a negative kernel code; ``None`` for a singular system."""
        if -13 <= code <= -11:  # a length: state3 raises the standard message
            state3(q, v, tau, self.nq, self.nv, names)
        if -4 <= code < 0 or code <= ZERO_QUATERNION:
            raise_kernel_code(code, names + ("f_ext",), self.model)
        if code < 0:  # (no other negative code is expected from the kernel)
            raise ValueError(f"invalid input ({', '.join(names)}, f_ext): kernel code {code}")
        return None

    def dynamics(self, q, v, tau, f_ext, data, method="range_space_sparse"):
        """Forward dynamics by ``method`` (``range_space_sparse``, ``direct`` or
        ``null_space``): ``(qdd, multipliers, residual, converged)``, or ``None`` when the
        system is singular or redundant (the general path then diagnoses it)."""
        kern = _KERNELS[method]
        d = self.model.default_data if data is None else data
        last = self._last
        s = last[1] if d is last[0] else self._scratch_for(self._data(d))
        if f_ext is None:
            fext = NO_FORCES
            flags = 0
        else:
            fext, flags = link_forces(self.model, d, f_ext)
        if s[1] != self.cs.stabilisation_version:
            self._baumgarte(s)
        x = np.empty(self.nv)
        mult = np.empty(self.rows)
        try:
            if kern not in _sealed:
                raise TypeError("first call")
            code, res, ok = kern(q, v, tau, fext, self.pi, self.mf, s[0], x, mult, flags)
        except TypeError:
            code, res, ok = _checked_call(kern, q, v, tau, fext, self.pi, self.mf, s[0], x, mult, flags, self.nq,
                                          self.nv, _FD)
        if code:
            return self._failed(code, q, v, tau, _FD)
        return x, mult, res, ok

    def impulses(self, q, qd_minus, target, data, method="range_space_sparse"):
        """Impulses by ``method``: ``(qd_plus, impulses, residual, converged)`` with
        ``G qd_plus = target`` (``None``: zero), or ``None`` when the system is singular or
        redundant."""
        kern = _KERNELS[method]
        d = self.model.default_data if data is None else data
        last = self._last
        s = last[1] if d is last[0] else self._scratch_for(self._data(d))
        flags = F.F_IMPULSE
        if target is None:
            flags |= F.F_ZERO_TARGET
        else:
            s[0][self._bottom] = finite_vector(target, self.rows, "target_velocity")
        x = np.empty(self.nv)
        mult = np.empty(self.rows)
        try:
            if kern not in _sealed:
                raise TypeError("first call")
            code, res, ok = kern(q, qd_minus, qd_minus, NO_FORCES, self.pi, self.mf, s[0], x, mult, flags)
        except TypeError:
            code, res, ok = _checked_call(kern, q, qd_minus, qd_minus, NO_FORCES, self.pi, self.mf, s[0], x, mult, flags,
                                          self.nq, self.nv, _IMP)
        if code:
            return self._failed(code, q, qd_minus, qd_minus, _IMP)
        return x, mult, res, ok


def _offsets(parts, start):
    """Start of each of ``parts`` laid end to end from ``start``."""
    return start + np.concatenate([[0], np.cumsum([p.size for p in parts[:-1]])]).astype(np.int64)


_FD = ("q", "v", "tau")
_IMP = ("q", "qd_minus", "qd_minus")


#: the kernel of each compiled method (direct: block elimination, see the module docstring)
_KERNELS = {
    "range_space_sparse": F.contact_range_space,
    "direct": F.contact_range_space,
    "null_space": FN.contact_null_space,
}

_sealed = set()  # kernels compiled for float64 vectors and sealed


def _checked_call(kern, q, v, tau, fext, pi, mf, ps, x, mult, flags, nq, nv, names):
    """The kernel call with converted arguments; the first one compiles (or loads from the
    cache) the float64 specialisation and seals the dispatcher."""
    q, v, tau = state3(q, v, tau, nq, nv, names)
    if fext.dtype != np.float64 or not fext.flags.c_contiguous or not fext.flags.writeable:
        fext = np.array(fext, dtype=np.float64, order="C")
    out = kern(q, v, tau, fext, pi, mf, ps, x, mult, flags)
    if kern not in _sealed:
        kern.disable_compile()
        _sealed.add(kern)
    return out
