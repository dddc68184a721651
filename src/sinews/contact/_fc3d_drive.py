"""The drivers behind :func:`sinews.contact.fclib.solve_pgs`, ``solve_admm`` and ``solve``:
the choice of the dense or sparse kernels, the check of a ``W`` override, and the results.

Representation (when no ``W`` is given).  A dense W is solved densely.  For a sparse W:

* PGS sweeps the CSR rows when W has at most :data:`PGS_SPARSE_DENSITY` of its entries non-zero
  (Spheres, 0.6 % dense: 4.6 ms instead of 38 ms) or more than :data:`DENSE_MAX_SIZE` rows, and
  a dense copy otherwise (LMGC PerioBox, 30 % dense: the vectorised dense rows win);
* ADMM uses the dense path (an explicit inverse of W + sigma I, robust on rank-deficient stacks)
  up to :data:`DENSE_MAX_SIZE` rows, and Krylov solves on the CSR matrix above it.

The dense copy of a sparse W is made once and cached on the problem; above
:data:`DENSE_MAX_SIZE` nothing is ever densified (memory O(nnz + m)).  A ``W`` argument chooses
the representation explicitly (an array: dense, a SciPy sparse matrix: sparse); it must be the
problem's own W entry for entry, so that the problem solved is always the problem passed in.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .._checks import real_array
from ._fc3d_checks import sparse_W

#: Above this size m a sparse W is never densified.
DENSE_MAX_SIZE = 1536
#: PGS works on the CSR matrix of a sparse W with at most this fraction of non-zero entries.
PGS_SPARSE_DENSITY = 0.05

_MISMATCH = ("W: does not match problem.W entry for entry; W only selects another "
             "representation (dense array or SciPy sparse matrix) of the problem's own W -- "
             "build a new FrictionContactProblem to solve another matrix")


def use_dense(problem, W, pgs):
    """True for the dense kernels, False for the CSR ones (validating a ``W`` override);
    ``pgs`` selects the PGS rule, otherwise the ADMM one."""
    if W is None:
        if not problem._sparse:
            return True
        m = problem.q.shape[0]
        if pgs:
            return m <= DENSE_MAX_SIZE and problem.W.nnz > PGS_SPARSE_DENSITY * m * m
        return m <= DENSE_MAX_SIZE
    if W is problem.W:
        return not problem._sparse
    if problem._dense is not None and W is problem._dense[1]:
        return True
    m = problem.size
    if sp.issparse(W):

        A = sparse_W(W, m)
        if sp.issparse(problem.W):
            same = (A != problem.W).nnz == 0
        else:
            same = _dense_equals_csr(problem.W, A)
        if not same:
            raise ValueError(_MISMATCH)
        return False
    Wd = real_array(W, "W", ndim=2)
    if Wd.shape != (m, m):
        raise ValueError(f"W: shape {Wd.shape} does not match the problem size ({m}, {m})")
    if sp.issparse(problem.W):
        same = _dense_equals_csr(Wd, problem.W)
    else:
        same = np.array_equal(Wd, problem.W)
    if not same:
        raise ValueError(_MISMATCH)
    return True


def _dense_equals_csr(D, A):
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    return bool(np.array_equal(D[rows, A.indices], A.data)
                and np.count_nonzero(D) == np.count_nonzero(A.data))


_PGS = None


def _pgs_kernels():
    global _PGS
    if _PGS is None:  # Numba is imported (and the kernels loaded) on first use
        from ._fc3d_pgs import pgs_kernel, pgs_kernel_csr

        _PGS = (pgs_kernel, pgs_kernel_csr)
    return _PGS


def pgs_on(problem, dense, r, tol, max_iter, omega, check_every, careful, result_cls):
    """PGS in place on r; ``careful=False`` leaves a non-converged run's error plain."""
    m = problem.q.shape[0]
    buf = np.empty(3 * m)  # u | scratch of the checker
    kernels = _PGS or _pgs_kernels()
    if dense:
        it, err, conv = kernels[0](problem._dense_arrays(), problem._q, problem._mu, r, buf, tol,
                                   max_iter, omega, check_every, 1.0 + problem._norm_q, careful)
    else:
        it, err, conv = kernels[1](*problem._csr_arrays(), problem._q, problem._mu, r, buf, tol,
                                   max_iter, omega, check_every, 1.0 + problem._norm_q, careful)
    return result_cls(r, buf[:m], err, it, conv, "pgs", {"path": "dense" if dense else "sparse"})


def _sparse_of(problem):
    if sp.issparse(problem.W):
        return problem.W
    indptr, indices, data = problem._csr_arrays()
    return sp.csr_matrix((data, indices, indptr), shape=problem.W.shape)


def _floor(tol, scale):
    """:func:`sinews.contact._fc3d_exact.verdict_floor` (same formula, without a Numba call)."""
    return max(2.0**-50, 2.0**-10 * tol) * scale


_ADMM = None


def admm_on(problem, dense, r, tol, max_iter, opts, result_cls):
    global _ADMM
    if _ADMM is None:  # SciPy's dense LAPACK wrappers are loaded on first use
        from ._fc3d_admm import admm_solve

        _ADMM = admm_solve
    admm_solve = _ADMM
    opts = dict(opts)
    rho = opts.pop("rho", None)
    scale = 1.0 + problem._norm_q
    floor = _floor(tol, scale)

    def check(x):
        err, u, _ = careful(problem, x, scale, tol, dense, floor)
        return err, u

    W = problem._dense_arrays() if dense else _sparse_of(problem)
    rr, u, err, it, converged, info = admm_solve(W, problem._q, problem._mu, r, tol, max_iter,
                                                 rho, check, scale, **opts)
    info["path"] = "dense" if dense else "sparse"
    return result_cls(rr, u, err, it, converged, "admm", info)


def solve_auto(problem, W, r, tol, max_iter, chunk, window, result_cls):
    dense = use_dense(problem, W, True)
    dense_admm = dense if W is not None else use_dense(problem, None, False)
    used = 0
    errors = []
    res = None
    while used < max_iter:
        res = pgs_on(problem, dense, r, tol, min(chunk, max_iter - used), 1.0, 10, False,
                     result_cls)
        used += res.iterations
        r = res.r
        if res.converged:
            res.iterations = used
            res.solver = "auto(pgs)"
            return res
        errors.append(res.error)
        if not np.isfinite(res.error):
            break
        if len(errors) > window and errors[-1] > 0.5 * errors[-1 - window]:
            break
    # the chunks reported plain errors: the verdict on PGS's reactions is the careful one
    scale = 1.0 + problem._norm_q
    res.error, res.u, _ = careful(problem, res.r, scale, tol, dense, _floor(tol, scale))
    res.converged = res.error <= tol
    res.iterations = used
    res.solver = "auto(pgs)"
    if used >= max_iter or res.converged or not np.isfinite(res.error):
        return res
    res2 = admm_on(problem, dense_admm, r.copy(), tol, max_iter - used, {}, result_cls)
    res2.info["pgs_iterations"] = used
    res2.info["admm_iterations"] = res2.iterations
    if not res2.converged and res2.error > res.error:
        res.iterations = used + res2.iterations
        res.solver = "auto(pgs, admm rejected)"
        res.info.update(res2.info)
        return res
    res2.iterations += used
    res2.solver = "auto(pgs+admm)"
    return res2


_EXACT = None


def careful(problem, r, scale, tol=0.0, dense=None, floor=None):
    """(error, u, F) of reactions r by the careful checker; dense=None picks W's own form;
    floor=None is the default normalisation's 2^-50 (1 + ||q||)."""
    global _EXACT
    if _EXACT is None:  # Numba is imported (and the kernels loaded) on first use
        from ._fc3d_exact import FLOOR_REL, careful_error_csr, careful_error_dense

        _EXACT = (FLOOR_REL, careful_error_dense, careful_error_csr)
    FLOOR_REL, careful_error_dense, careful_error_csr = _EXACT
    if floor is None:
        floor = FLOOR_REL * (1.0 + problem._norm_q)

    m = problem.size
    u = np.empty(m)
    F = np.empty(m)
    work = np.empty(m)
    if dense is None:  # both forms give bitwise the same value; use the cheaper one
        dense = problem._dense is not None
    try:
        if dense:
            err, _ = careful_error_dense(problem._dense_arrays(), problem._q, problem._mu, r,
                                         problem.dimension, scale, tol, floor, u, F, work)
        else:
            err, _ = careful_error_csr(*problem._csr_arrays(), problem._q, problem._mu, r,
                                       problem.dimension, scale, tol, floor, u, F, work)
    except ZeroDivisionError:  # r so large that W r + q left the floating-point range
        u[:] = np.inf
        F[:] = np.inf
        return math.inf, u, F
    return float(err), u, F
