"""Entry kernels of the kinematics fast path (:mod:`sinews._kinematics_fast`): three or four
arguments per call (the inputs, an output pool and one per-thread buffer) instead of up to ten.

The buffer ``buf`` (float64; its int64 view ``ib``) packs everything a call needs besides its
inputs, built once per model and thread:

* a header of :data:`H_SIZE` integers: sizes (``nlinks``, ``nq``, ``nv``, placement rows), the
  offsets of the regions below, and one *slot counter* per output pool;
* ``mi`` (int64 bits), ``mf`` and the placement table ``pl`` (copies of the compiled model's);
* the support chain of every link (root first): per link its start in ``ib`` and its length;
* a workspace ``ws`` (as ``Data.ws``, the constant motion subspaces filled in);
* nine scratch values (the first three: the frame origin, zero).

Results go to the next free slot of a pool (an array of ``K`` preallocated results made by the
Python side, which holds a ready view or object per slot; ``forward_kinematics``' tables come
from a ring the native entry point manages, :func:`placements_into_f` writing one): the kernel
checks the argument lengths, computes into ``pool[slot]``, advances the slot counter and
returns the slot (>= 0);
:data:`POOL_FULL` when the pool is used up (the caller makes a new one); another negative code
(:data:`BAD_SHAPE`, a non-finite input, a zero quaternion, an overflow) sends the call to the
checked path, which raises the named error.  The numerical work is that of
:mod:`sinews._kinematics_kernels` and :mod:`sinews._jacobian_dt_kernels`.

The entry kernels are inlined into their callers at Numba's IR level (``inline="always"``): into
the native entry points of :mod:`sinews._native_kinematics`, which then link the numerical
kernels directly instead of through one more compiled (and re-optimised) level; called from
Python (the dispatcher fallback), each compiles as usual.
"""

import math

import numpy as np

from ._checks import QUAT_TINY, ZERO_QUATERNION
from ._jit import njit
from ._jacobian_dt_kernels import jacobian_time_variation_chain
from ._joint_pass import BAD_SHAPE
from ._kinematics_kernels import center_of_mass_links, frame_jacobian_chain, placements_table, row_placement_chain
from ._layout import MI_STRIDE, PL_LINK, PL_STRIDE
from ._native import load_i64

# header of the buffer (int64 view)
H_NL = 0
H_NQ = 1
H_NV = 2
H_NROWS = 3
H_MI = 4  # offset of mi (int64 values)
H_MF = 5  # offset and length of mf
H_NMF = 6
H_PL = 7  # offset of the placement table
H_WS = 8  # offset and length of the workspace
H_NWS = 9
H_CS = 10  # offset of the chain starts (one per link)
H_CN = 11  # offset of the chain lengths (one per link)
H_TMP = 12  # offset of 9 scratch values (the first three stay zero: the frame origin)
H_ALL = 13  # offset of the links 0 .. nlinks - 1
H_QS = 14  # offset and number of the quaternions' first indices in q
H_NQS = 15
H_SLOT_T = 16  # slot counters of the pools: transforms,
H_SLOT_FK = 17  # placement tables,
H_SLOT_J6 = 18  # 6 x nv matrices,
H_SLOT_J3 = 19  # 3 x nv matrices,
H_SLOT_V3 = 20  # 3-vectors
H_NDARRAY = 21  # addresses the native entry points check arguments with (sinews._native): numpy.ndarray,
H_F64 = 22  # the float64 dtype,
H_INT64 = 23  # numpy.int64
H_VERSION_AT = 24  # address of the compiled model's frames_version (int64) and its value when the
H_VERSION = 25  # buffer was built: another value, a frame added since, refuses placements_into_f
H_OUT = 26  # a Placements' own buffer (forward_kinematics' out=): the address of the Placements,
H_OUT_MODEL = 27  # of its model
H_OUT_TABLE = 28  # and of its table (0 in a thread's buffer)
H_P_TABLES = 29  # forward_kinematics' ring of tables (a thread's buffer; 0 in an out's): the addresses
H_P_RESULTS = 30  # of the list of tables and of the list of their Placements (held by the buffer),
H_P_TYPE = 31  # of the Placements class,
H_P_VIEWS_AT = 32  # the offset of a Placements' cached views (0: no result is reused),
H_P_LIKE = 33  # the addresses of a template table and of its Placements' views (a tuple),
H_P_LIKE_VIEWS = 34
H_NONE = 35  # of None;
H_P_FULL = 36  # 1 when the last call found no free table (the caller makes a new ring)
H_OWNER = 37  # a thread's buffer: the identity of its thread (0 in an out's: any thread), which the
H_IDENT_AT = 38  # native entry points compare with what the function at this address answers
H_P_TABLE_AT = 39  # the offset of a Placements' table (the ring's, again: with H_P_VIEWS_AT)
H_SIZE = 40

#: The pool is used up: make a new one (slot counter back to 0) and call again.
POOL_FULL = -40
#: The kernel refused the call for a reason the checked path reports (no mass for the centre of
#: mass).
REFUSED = -41


@njit(inline="always", cache=True)
def _views(buf):
    ib = buf.view(np.int64)
    nl = ib[H_NL]
    o = ib[H_MI]
    mi = ib[o : o + nl * MI_STRIDE].reshape((nl, MI_STRIDE))
    o = ib[H_MF]
    mf = buf[o : o + ib[H_NMF]]
    o = ib[H_PL]
    pl = buf[o : o + ib[H_NROWS] * PL_STRIDE]
    o = ib[H_WS]
    ws = buf[o : o + ib[H_NWS]]
    return ib, mi, mf, pl, ws


@njit(inline="always", cache=True)
def _q_code(q, ib):
    """0 when ``q`` is finite and its quaternions are not zero (as :func:`check_q`, over the
    quaternions listed in the buffer), else a negative code."""
    for i in range(q.shape[0]):
        if not math.isfinite(q[i]):
            return -1
    o = ib[H_QS]
    for k in range(ib[H_NQS]):
        i = ib[o + k]
        if max(max(abs(q[i]), abs(q[i + 1])), max(abs(q[i + 2]), abs(q[i + 3]))) < QUAT_TINY:
            return ZERO_QUATERNION
    return 0


@njit(inline="always", cache=True)
def _chain(ib, pl, row):
    """The support chain (root first) of the link carrying placement row ``row``, its length
    (0 for a row on the ground)."""
    k = int(pl[row * PL_STRIDE + PL_LINK])
    if k < 0:
        return ib[0:0], 0
    s = ib[ib[H_CS] + k]
    n = ib[ib[H_CN] + k]
    return ib[s : s + n], n


@njit(inline="always", cache=True)
def placements_into_f(q, table, buf):
    """World placements of every body and frame (:func:`placements_table`) into ``table``
    (rows x 12: the ``out`` of :func:`~sinews.forward_kinematics`, or a table of the ring): 0 or a
    negative code."""
    ib, mi, mf, pl, ws = _views(buf)
    if (q.shape[0] != ib[H_NQ] or table.shape[0] != ib[H_NROWS] or table.shape[1] != 12
            or load_i64(ib[H_VERSION_AT]) != ib[H_VERSION]):
        return BAD_SHAPE
    code = _q_code(q, ib)
    if code != 0:
        return code
    o = ib[H_ALL]
    return placements_table(q, table, mi, mf, ws, pl, ib[o : o + ib[H_NL]])


@njit(inline="always", cache=True)
def row_placement_f(q, row, pool, buf):
    """World pose ``[R; p]`` of placement row ``row`` (:func:`row_placement_chain`) into the
    next slot of ``pool`` (K x 4 x 3)."""
    ib, mi, mf, pl, ws = _views(buf)
    if q.shape[0] != ib[H_NQ] or not 0 <= row < ib[H_NROWS] or pool.shape[1] != 4 or pool.shape[2] != 3:
        return BAD_SHAPE
    code = _q_code(q, ib)
    if code != 0:
        return code
    slot = ib[H_SLOT_T]
    if slot >= pool.shape[0]:
        return POOL_FULL
    chain, n = _chain(ib, pl, row)
    code = row_placement_chain(q, row, pool[slot].reshape(12), mi, mf, ws, pl, chain, n)
    if code != 0:
        return code
    ib[H_SLOT_T] = slot + 1
    return slot


@njit(inline="always", cache=True)
def _matrix_slot(ib, pool):
    """Slot counter of a pool of 6 x nv or 3 x nv matrices (-1: another shape)."""
    if pool.shape[2] != ib[H_NV]:
        return -1
    if pool.shape[1] == 6:
        return H_SLOT_J6
    if pool.shape[1] == 3:
        return H_SLOT_J3
    return -1


@njit(inline="always", cache=True)
def frame_jacobian_f(q, row, x, ref, pool, buf):
    """Jacobian of placement row ``row`` at the point ``x`` (:func:`frame_jacobian_chain`) into
    the next slot of ``pool`` (K x 6 x nv or K x 3 x nv)."""
    ib, mi, mf, pl, ws = _views(buf)
    h = _matrix_slot(ib, pool)
    if h < 0 or q.shape[0] != ib[H_NQ] or x.shape[0] != 3 or not 0 <= row < ib[H_NROWS] or not 0 <= ref <= 2:
        return BAD_SHAPE
    code = _q_code(q, ib)
    if code != 0:
        return code
    slot = ib[h]
    if slot >= pool.shape[0]:
        return POOL_FULL
    chain, n = _chain(ib, pl, row)
    code = frame_jacobian_chain(q, row, x, ref, pool[slot], mi, mf, ws, pl, chain, n)
    if code != 0:
        return code
    ib[h] = slot + 1
    return slot


@njit(inline="always", cache=True)
def frame_jacobian_k(q, key, pool, buf):
    """:func:`frame_jacobian_f` at the frame origin, ``key = 4 * row + ref``."""
    t = buf.view(np.int64)[H_TMP]
    x = buf[t : t + 3]  # zeros (the scratch values' first three are never written)
    return frame_jacobian_f(q, key >> 2, x, key & 3, pool, buf)


@njit(inline="always", cache=True)
def jacobian_time_variation_k(q, v, key, pool, buf):
    """:func:`jacobian_time_variation_f` at the frame origin, ``key = 4 * row + ref``."""
    t = buf.view(np.int64)[H_TMP]
    return jacobian_time_variation_f(q, v, key >> 2, buf[t : t + 3], key & 3, pool, buf)


@njit(inline="always", cache=True)
def jacobian_time_variation_f(q, v, row, x, ref, pool, buf):
    """dJ/dt of placement row ``row`` at the point ``x`` (:func:`jacobian_time_variation_chain`)
    into the next slot of ``pool`` (K x 6 x nv or K x 3 x nv)."""
    ib, mi, mf, pl, ws = _views(buf)
    h = _matrix_slot(ib, pool)
    if (h < 0 or q.shape[0] != ib[H_NQ] or v.shape[0] != ib[H_NV] or x.shape[0] != 3
            or not 0 <= row < ib[H_NROWS] or not 0 <= ref <= 2):
        return BAD_SHAPE
    code = _q_code(q, ib)
    if code != 0:
        return code
    slot = ib[h]
    if slot >= pool.shape[0]:
        return POOL_FULL
    chain, n = _chain(ib, pl, row)
    code = jacobian_time_variation_chain(q, v, row, x, ref, pool[slot], mi, mf, ws, pl, chain, n)
    if code != 0:
        return code
    ib[h] = slot + 1
    return slot


@njit(inline="always", cache=True)
def center_of_mass_f(q, pool, buf):
    """Position of the centre of mass into the next slot of ``pool`` (K x 3)."""
    return _com_f(q, q, np.int64(0), pool, buf)


@njit(inline="always", cache=True)
def com_velocity_f(q, v, pool, buf):
    """Velocity of the centre of mass into the next slot of ``pool`` (K x 3)."""
    return _com_f(q, v, np.int64(1), pool, buf)


@njit(inline="always", cache=True)
def _com_f(q, v, flags, pool, buf):
    """Centre of mass (:func:`center_of_mass`): its position (``flags == 0``) or its velocity
    for ``v`` (``flags == 1``) into the next slot of ``pool`` (K x 3)."""
    ib, mi, mf, pl, ws = _views(buf)
    if q.shape[0] != ib[H_NQ] or (flags == 1 and v.shape[0] != ib[H_NV]) or not 0 <= flags <= 1 or pool.shape[1] != 3:
        return BAD_SHAPE
    code = _q_code(q, ib)
    if code != 0:
        return code
    slot = ib[H_SLOT_V3]
    if slot >= pool.shape[0]:
        return POOL_FULL
    t = ib[H_TMP] + 3
    out = buf[t : t + 6]
    o = ib[H_ALL]
    code = center_of_mass_links(q, v, flags, out, pool[slot : slot + 1], mi, mf, ws, ib[o : o + ib[H_NL]])
    if code != 0:
        return code if code < 0 else REFUSED
    o = 3 * flags
    for i in range(3):
        pool[slot, i] = out[o + i]
    ib[H_SLOT_V3] = slot + 1
    return slot


@njit(inline="always", cache=True)
def com_jacobian_f(q, pool, buf):
    """Jacobian of the centre of mass (:func:`center_of_mass` with ``flags = 2``) into the next
    slot of ``pool`` (K x 3 x nv)."""
    ib, mi, mf, pl, ws = _views(buf)
    if q.shape[0] != ib[H_NQ] or pool.shape[1] != 3 or pool.shape[2] != ib[H_NV]:
        return BAD_SHAPE
    code = _q_code(q, ib)
    if code != 0:
        return code
    slot = ib[H_SLOT_J3]
    if slot >= pool.shape[0]:
        return POOL_FULL
    t = ib[H_TMP] + 3
    o = ib[H_ALL]
    code = center_of_mass_links(q, q, np.int64(2), buf[t : t + 6], pool[slot], mi, mf, ws, ib[o : o + ib[H_NL]])
    if code != 0:
        return code if code < 0 else REFUSED
    ib[H_SLOT_J3] = slot + 1
    return slot
