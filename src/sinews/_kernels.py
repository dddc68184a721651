"""Façade over the Numba kernel modules: re-exports every kernel that used to live here, so that
``from sinews import _kernels as K; K.aba(...)`` keeps working.  The kernels themselves sit
beside their public modules:

* :mod:`sinews._joint_pass`: the inlined scalar helpers, the joint pass, the input checks;
* :mod:`sinews._rnea_kernels`, :mod:`sinews._crba_kernels`, :mod:`sinews._aba_kernels`: one
  algorithm each, with the entry kernel of its fast path (``rnea_x``, ``crba_x``, ``aba_x``);
* :mod:`sinews._ltl_kernels` (the L^T L factorisation), :mod:`sinews._configuration_kernels`
  (configuration integration); the kinematics and Jacobian kernels are in
  :mod:`sinews._kinematics_kernels`, ``M^-1`` in :mod:`sinews._minv_kernels`.

Design (see ``docs/performance.md``): one kernel per algorithm, few array arguments, flat 1-D
indexing with constant offsets from :mod:`sinews._layout`, transforms as (R, p) pairs, and no
helper that takes arrays inside a hot loop.  Kernels are compiled lazily on first call and cached
on disk (``cache=True``).  Equations and sources are stated in the public modules
(``sinews.rnea``, ``sinews.aba``, ...).
"""

from ._joint_pass import (
    BAD_SHAPE,
    _cross,
    _cross_force,
    _dims,
    _inertia_times,
    _parent_to_child,
    _quat_matrix,
    _rodrigues,
    _rot_gen,
    _rot_sym,
    check_finite,
    check_inputs,
    check_q,
    joint_pass,
    joint_pass_links,
    zero_quaternion,
)
from ._rnea_kernels import rnea, rnea_core, rnea_x
from ._crba_kernels import crba, crba_core, crba_x
from ._aba_kernels import aba, aba_x
from ._ltl_kernels import ltl_factor, ltl_solve_l, ltl_solve_lt
from ._configuration_kernels import _quat_exp_mul, integrate


__all__ = [
    "BAD_SHAPE",
    "_cross",
    "_cross_force",
    "_dims",
    "_inertia_times",
    "_parent_to_child",
    "_quat_matrix",
    "_rodrigues",
    "_rot_gen",
    "_rot_sym",
    "check_finite",
    "check_inputs",
    "check_q",
    "joint_pass",
    "joint_pass_links",
    "zero_quaternion",
    "rnea",
    "rnea_core",
    "rnea_x",
    "crba",
    "crba_core",
    "crba_x",
    "aba",
    "aba_x",
    "ltl_factor",
    "ltl_solve_l",
    "ltl_solve_lt",
    "_quat_exp_mul",
    "integrate",
]
