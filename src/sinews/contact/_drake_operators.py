"""Private helpers for :mod:`sinews.contact.constraint_solver`: linear operators, inertia solves
and argument validation.

A Jacobian operator X (rows x nv) may be given as a dense array, a SciPy sparse matrix or a SciPy
:class:`~scipy.sparse.linalg.LinearOperator`.  It is wrapped in :class:`Operator`, which applies it
to a vector or to the columns of a matrix and can produce its transpose.  The generalized inverse
inertia M^-1 is wrapped in :class:`InertiaSolve`: a matrix is Cholesky-factorised once, a callable
is used as given.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse
from scipy.sparse.linalg import LinearOperator


def float_vector(value: Any, name: str, size: int | None = None) -> np.ndarray:
    """Return ``value`` as a read-only 1-D float copy; ValueError naming ``name`` if bad."""
    if value is None:
        value = ()
    try:
        array = np.array(value, dtype=float, copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 1-D array of real numbers") from exc
    if array.ndim == 0 or (array.ndim == 2 and 1 in array.shape):
        array = array.reshape(-1)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if size is not None and array.size != size:
        raise ValueError(f"{name} must have length {size}, got {array.size}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    array.setflags(write=False)
    return array


def nonnegative_vector(value: Any, name: str, size: int) -> np.ndarray:
    """A 1-D float vector of length ``size``, all >= 0.  Empty means all zeros (Drake's gammas)."""
    array = float_vector(value, name)
    if array.size == 0 and size > 0:
        array = np.zeros(size)
        array.setflags(write=False)
    if array.size != size:
        raise ValueError(f"{name} must be empty or have length {size}, got {array.size}")
    if np.any(array < 0.0):
        raise ValueError(f"{name} must be >= 0")
    return array


def index_vector(value: Any, name: str) -> np.ndarray:
    """A read-only 1-D int array of non-negative integers."""
    if value is None:
        value = ()
    array = np.array(value, copy=True)
    if array.size == 0:
        array = np.zeros(0, dtype=np.intp)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of integers")
    if not (np.issubdtype(array.dtype, np.integer) or np.all(np.mod(array, 1) == 0)):
        raise ValueError(f"{name} must contain integers")
    array = array.astype(np.intp)
    if np.any(array < 0):
        raise ValueError(f"{name} must contain non-negative integers")
    array.setflags(write=False)
    return array


class Operator:
    """A linear map R^ncols -> R^nrows given as a dense array, sparse matrix or LinearOperator."""

    __slots__ = ("kind", "value", "shape", "name")

    def __init__(self, value: Any, name: str, shape: tuple[int, int]):
        self.name = name
        self.shape = shape
        if isinstance(value, Operator):
            value = value.value
        if value is None:
            self.kind = "zero"
            self.value = None
            return
        if isinstance(value, LinearOperator):
            kind = "linop"
        elif scipy.sparse.issparse(value):
            kind = "sparse"
            value = scipy.sparse.csr_array(value, dtype=float)
            if not np.all(np.isfinite(value.data)):
                raise ValueError(f"{name} contains NaN or infinite entries")
        elif callable(value):
            raise ValueError(
                f"{name} must be an array, a SciPy sparse matrix or a SciPy LinearOperator, not a "
                "bare callable (wrap it in scipy.sparse.linalg.LinearOperator)"
            )
        else:
            kind = "dense"
            try:
                value = np.array(value, dtype=float, copy=True)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name} must be a 2-D array of real numbers") from exc
            if value.size == 0 and 0 in shape:
                value = np.zeros(shape)
            if value.ndim == 1 and shape[0] == 1:
                value = value.reshape(1, -1)
            if not np.all(np.isfinite(value)):
                raise ValueError(f"{name} contains NaN or infinite entries")
            value.setflags(write=False)
        if tuple(value.shape) != tuple(shape):
            raise ValueError(f"{name} must have shape {shape}, got {tuple(value.shape)}")
        self.kind = kind
        self.value = value

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Apply the operator to a vector (n,) or to the columns of a matrix (n, k)."""
        x = np.asarray(x, dtype=float)
        if self.kind == "zero":
            return np.zeros((self.shape[0],) + x.shape[1:])
        if self.kind == "linop":
            out = self.value.matvec(x) if x.ndim == 1 else self.value.matmat(x)
            out = np.asarray(out, dtype=float)
            want = (self.shape[0],) + x.shape[1:]
            if out.size != int(np.prod(want)):
                raise ValueError(f"{self.name} (LinearOperator) returned {out.shape}, expected {want}")
            if not np.all(np.isfinite(out)):
                raise ValueError(f"{self.name} (LinearOperator) returned NaN or infinite values")
            return out.reshape(want)
        out = np.asarray(self.value @ x, dtype=float)
        return out.reshape((self.shape[0],) + x.shape[1:])

    def matrix(self) -> np.ndarray:
        """The dense matrix of the operator (applies it to the identity)."""
        if self.kind == "dense":
            return np.array(self.value)
        if self.kind == "sparse":
            return self.value.toarray()
        return self(np.eye(self.shape[1]))

    def transposed(self, name: str) -> "Operator":
        """The transpose operator (Drake's ``X_transpose_mult``)."""
        shape = (self.shape[1], self.shape[0])
        if self.kind == "zero":
            return Operator(None, name, shape)
        if self.kind in ("dense", "sparse"):
            return Operator(self.value.T, name, shape)
        return Operator(self.value.T, name, shape)


def operator_pair(forward: Any, transpose: Any, rows: int, nv: int, name: str,
                  transpose_name: str) -> tuple[Operator, Operator]:
    """Wrap X (rows x nv) and X^T (nv x rows); X^T defaults to the transpose of X.

    ``rows`` comes from the matching k vector. An operator left as None costs nothing when
    rows = 0; a given operator must match (rows, nv) even then.
    """
    forward_op = Operator(forward, name, (rows, nv))
    if transpose is None:
        transpose_op = forward_op.transposed(transpose_name)
        if forward_op.kind == "linop":
            try:
                transpose_op(np.zeros(rows))
            except NotImplementedError as exc:
                raise ValueError(f"{name} is a LinearOperator without rmatvec; give "
                                 f"{transpose_name} explicitly") from exc
    else:
        transpose_op = Operator(transpose, transpose_name, (nv, rows))
    if rows > 0 and forward_op.kind == "zero":
        raise ValueError(f"{name} is required when its constraint vector has {rows} entries")
    return forward_op, transpose_op


class InertiaSolve:
    """Applies M^-1 to a vector or to the columns of a matrix.

    ``value`` is either the (symmetric positive definite) generalized inertia matrix M, which is
    Cholesky-factorised once here, or a callable B -> M^-1 B that accepts 1-D and 2-D arrays.
    """

    __slots__ = ("nv", "_factor", "_callable", "matrix")

    def __init__(self, value: Any, nv: int, name: str = "solve_inertia"):
        self.nv = nv
        self._factor = None
        self._callable = None
        self.matrix = None
        if isinstance(value, InertiaSolve):
            value = value._callable if value._callable is not None else value.matrix
        if callable(value) and not isinstance(value, np.ndarray) and not scipy.sparse.issparse(
                value):
            self._callable = value
            return
        if scipy.sparse.issparse(value):
            value = value.toarray()
        try:
            matrix = np.array(value, dtype=float, copy=True)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be the inertia matrix or a callable") from exc
        if matrix.shape != (nv, nv):
            raise ValueError(f"{name} must be a square {nv}x{nv} matrix, got shape {matrix.shape}")
        if not np.all(np.isfinite(matrix)):
            raise ValueError(f"{name} contains NaN or infinite entries")
        scale = max(1.0, float(np.max(np.abs(matrix)))) if nv else 1.0
        if not np.allclose(matrix, matrix.T, rtol=0.0, atol=1e-12 * scale):
            raise ValueError(f"{name} must be symmetric")
        if nv:
            try:
                self._factor = scipy.linalg.cho_factor(matrix)
            except np.linalg.LinAlgError as exc:
                raise ValueError(f"{name} must be positive definite") from exc
        matrix.setflags(write=False)
        self.matrix = matrix

    def __call__(self, b: np.ndarray) -> np.ndarray:
        b = np.asarray(b, dtype=float)
        if b.shape[0] != self.nv:
            raise ValueError(f"solve_inertia input has {b.shape[0]} rows, expected {self.nv}")
        if self.nv == 0 or (b.ndim == 2 and b.shape[1] == 0):
            return np.zeros(b.shape)
        if self._callable is not None:
            out = np.asarray(self._callable(b), dtype=float)
            if out.shape != b.shape:
                raise ValueError(
                    f"solve_inertia returned shape {out.shape} for input of shape {b.shape}")
            if not np.all(np.isfinite(out)):
                raise ValueError("solve_inertia (callable) returned NaN or infinite values")
            return out
        return scipy.linalg.cho_solve(self._factor, b)

