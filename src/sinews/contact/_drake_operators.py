"""Private helpers for :mod:`sinews.contact.constraint_solver`: linear operators, inertia solves,
argument validation, and the numerical helpers of the solver (overflow errors, the
pseudo-inverse, LCP equilibration and acceptance).

A Jacobian operator X (rows x nv) may be given as a dense array, a SciPy sparse matrix or a SciPy
:class:`~scipy.sparse.linalg.LinearOperator`.  It is wrapped in :class:`Operator`, which applies it
to a vector or to the columns of a matrix and can produce its transpose.  The generalized inverse
inertia M^-1 is wrapped in :class:`InertiaSolve`: a matrix is Cholesky-factorised once, a callable
is used as given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse
from scipy.sparse.linalg import LinearOperator

from .._checks import integer, real_dtype, real_scalar

_EPS = float(np.finfo(float).eps)

#: Index arrays (contact lists, friction-direction counts) above this are refused: they would
#: only size absurd allocations.
MAX_INDEX = 2**31 - 1


class Overflow(ArithmeticError):
    """An intermediate result is not finite although every input is (private: the public
    methods turn it into a ValueError naming the inputs that are too large)."""


def finite(x: np.ndarray) -> np.ndarray:
    """``x``, or :class:`Overflow` if it has a non-finite entry."""
    if not np.isfinite(x).all():
        raise Overflow
    return x


def real_ndarray(value: Any, name: str) -> np.ndarray:
    """``value`` as a new float64 array, refusing anything but real numbers (ValueError naming
    ``name``: complex, bool, datetime, timedelta, string and object arrays, ragged sequences)."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    real_dtype(array, name)
    return np.array(array, dtype=float, copy=True)


def _sized(name: str, size: int, size_desc: str | None) -> str:
    return f"{name} must be empty or have length {size}" + (f" ({size_desc})" if size_desc else "")


def float_vector(value: Any, name: str, size: int | None = None,
                 size_desc: str | None = None) -> np.ndarray:
    """Return ``value`` as a read-only 1-D float copy; ValueError naming ``name`` if bad
    (``size_desc`` says where an expected ``size`` comes from, e.g. ``"nc = len(mu)"``)."""
    if value is None:
        value = ()
    array = real_ndarray(value, name)
    if array.ndim == 0 or (array.ndim == 2 and 1 in array.shape):
        array = array.reshape(-1)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if size is not None and array.size != size:
        raise ValueError(f"{name} must have length {size}"
                         + (f" ({size_desc})" if size_desc else "") + f", got {array.size}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    array.setflags(write=False)
    return array


def nonnegative_vector(value: Any, name: str, size: int,
                       size_desc: str | None = None) -> np.ndarray:
    """A 1-D float vector of length ``size``, all >= 0.  Empty means all zeros (Drake's gammas)."""
    array = float_vector(value, name)
    if array.size == 0 and size > 0:
        array = np.zeros(size)
        array.setflags(write=False)
    if array.size != size:
        raise ValueError(f"{_sized(name, size, size_desc)}, got {array.size}")
    if np.any(array < 0.0):
        raise ValueError(f"{name} must be >= 0")
    return array


def zeros_if_empty(vector: np.ndarray, size: int, name: str,
                   size_desc: str | None = None) -> np.ndarray:
    """``vector``, or zeros of length ``size`` when it is empty (Drake's optional k vectors)."""
    if vector.size == 0 and size > 0:
        vector = np.zeros(size)
        vector.setflags(write=False)
    if vector.size != size:
        raise ValueError(f"{_sized(name, size, size_desc)}, got {vector.size}")
    return vector


def index_vector(value: Any, name: str) -> np.ndarray:
    """A read-only 1-D int array of non-negative integers (integer or integral float input)."""
    if value is None:
        value = ()
    try:
        array = np.array(value, copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 1-D sequence of integers: {exc}") from None
    if array.size == 0:
        array = np.zeros(0, dtype=np.intp)
    real_dtype(array, name)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of integers, got shape {array.shape}")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    if array.dtype.kind == "f" and not np.all(np.mod(array, 1) == 0):
        raise ValueError(f"{name} must contain integers")
    if np.any(array < 0):
        raise ValueError(f"{name} must contain non-negative integers")
    if np.any(array > MAX_INDEX):
        raise ValueError(f"{name} has an entry above {MAX_INDEX}, got {array.max()}")
    array = array.astype(np.intp)
    array.setflags(write=False)
    return array


class Operator:
    """A linear map R^ncols -> R^nrows given as a dense array, sparse matrix or LinearOperator."""

    __slots__ = ("kind", "value", "shape", "name")

    def __init__(self, value: Any, name: str, shape: tuple[int, int], dims: str | None = None):
        """``dims`` says where ``shape`` comes from (quoted when the shape does not match)."""
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
            real_dtype(np.empty(0, dtype=value.dtype), name)
        elif scipy.sparse.issparse(value):
            kind = "sparse"
            real_dtype(np.empty(0, dtype=value.dtype), name)
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
            value = real_ndarray(value, name)
            if value.size == 0 and 0 in shape:
                value = np.zeros(shape)
            if value.ndim == 1 and shape[0] == 1:
                value = value.reshape(1, -1)
            if not np.all(np.isfinite(value)):
                raise ValueError(f"{name} contains NaN or infinite entries")
            value.setflags(write=False)
        if tuple(value.shape) != tuple(shape):
            raise ValueError(f"{name} must have shape {shape}" + (f" ({dims})" if dims else "")
                             + f", got {tuple(value.shape)}")
        self.kind = kind
        self.value = value

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Apply the operator to a vector (n,) or to the columns of a matrix (n, k)."""
        x = np.asarray(x, dtype=float)
        if self.kind == "zero":
            return np.zeros((self.shape[0],) + x.shape[1:])
        if self.kind == "linop":
            finite(x)  # an overflowed input must not be blamed on the user's operator
            out = np.asarray(self.value.matvec(x) if x.ndim == 1 else self.value.matmat(x))
            if out.dtype.kind not in "iuf":
                raise ValueError(f"{self.name} (LinearOperator) returned {out.dtype} values, "
                                 "expected real numbers")
            out = out.astype(float)
            want = (self.shape[0],) + x.shape[1:]
            if out.size != int(np.prod(want)):
                raise ValueError(f"{self.name} (LinearOperator) returned {out.shape}, expected {want}")
            if not np.all(np.isfinite(out)):
                raise ValueError(f"{self.name} (LinearOperator) returned NaN or infinite values")
            return out.reshape(want)
        # (not checked here: a non-finite product reaches the checked LCP data or result)
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
        return Operator(self.value.T, name, shape)

    def magnitude(self) -> float:
        """max |entry| of a dense or sparse operator (0 for the others)."""
        if self.kind == "dense" and self.value.size:
            return float(np.max(np.abs(self.value)))
        if self.kind == "sparse" and self.value.nnz:
            return float(np.max(np.abs(self.value.data)))
        return 0.0


def operator_pair(forward: Any, transpose: Any, rows: int, nv: int, name: str,
                  transpose_name: str, dims: str | None = None) -> tuple[Operator, Operator]:
    """Wrap X (rows x nv) and X^T (nv x rows); X^T defaults to the transpose of X.

    ``rows`` comes from the matching k vector. An operator left as None costs nothing when
    rows = 0; a given operator must match (rows, nv) even then.  ``dims`` says where the two
    sizes come from (quoted in a shape error).
    """
    forward_op = Operator(forward, name, (rows, nv), dims)
    if transpose is None:
        transpose_op = forward_op.transposed(transpose_name)
        if forward_op.kind == "linop":
            try:
                transpose_op(np.zeros(rows))
            except NotImplementedError as exc:
                raise ValueError(f"{name} is a LinearOperator without rmatvec; give "
                                 f"{transpose_name} explicitly") from exc
    else:
        transpose_op = Operator(transpose, transpose_name, (nv, rows), dims)
        if forward_op.kind in ("dense", "sparse") and transpose_op.kind in ("dense", "sparse"):
            X, XT = forward_op.matrix(), transpose_op.matrix()
            scale = max(float(np.max(np.abs(X), initial=0.0)),
                        float(np.max(np.abs(XT), initial=0.0)))
            with np.errstate(over="ignore", invalid="ignore"):
                gap = float(np.max(np.abs(XT - X.T), initial=0.0))
            if not gap <= 1e-8 * scale:
                raise ValueError(f"{transpose_name} must be the transpose of {name} (they "
                                 f"differ by up to {gap:.3g})")
    if rows > 0 and forward_op.kind == "zero":
        raise ValueError(f"{name} is required when its constraint vector has {rows} entries"
                         + (f" ({dims})" if dims else ""))
    return forward_op, transpose_op


class InertiaSolve:
    """Applies M^-1 to a vector or to the columns of a matrix.

    ``value`` is either the (symmetric positive definite) generalized inertia matrix M, which is
    Cholesky-factorised once here, or a callable B -> M^-1 B that accepts 1-D and 2-D arrays.
    """

    __slots__ = ("nv", "_factor", "_callable", "matrix")

    def __init__(self, value: Any, nv: int, name: str = "solve_inertia", dims: str | None = None):
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
        matrix = real_ndarray(value, name)
        if matrix.shape != (nv, nv):
            raise ValueError(f"{name} must be a square {nv}x{nv} matrix"
                             + (f" ({dims})" if dims else "") + f", got shape {matrix.shape}")
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

    def magnitude(self) -> float:
        """max(max |M|, ~ max |M^-1|) for a matrix (the reciprocal of the smallest Cholesky
        pivot squared bounds M^-1 from below); 0 for a callable."""
        if self.matrix is None or self.nv == 0:
            return 0.0
        pivot = float(np.min(np.abs(np.diag(self._factor[0]))))
        return max(float(np.max(np.abs(self.matrix))), 1.0 / pivot**2 if pivot > 0 else np.inf)

    def __call__(self, b: np.ndarray, name: str | None = None) -> np.ndarray:
        """M^-1 b; ``name`` (a user argument) makes its bad shape, dtype or non-finite entries
        a ValueError naming it."""
        if name is not None:
            b = real_ndarray(b, name)
            if b.ndim not in (1, 2) or b.shape[0] != self.nv:
                raise ValueError(f"{name} must have shape ({self.nv},) or ({self.nv}, k), got "
                                 f"{b.shape}")
            if not np.all(np.isfinite(b)):
                raise ValueError(f"{name} contains NaN or infinite entries")
        b = np.asarray(b, dtype=float)
        if b.shape[0] != self.nv:
            raise ValueError(f"solve_inertia input has {b.shape[0]} rows, expected {self.nv}")
        if self.nv == 0 or (b.ndim == 2 and b.shape[1] == 0):
            return np.zeros(b.shape)
        if self._callable is not None:
            finite(b)  # an overflowed input must not be blamed on the user's callable
            out = np.asarray(self._callable(b))
            if out.dtype.kind not in "iuf":
                raise ValueError(f"solve_inertia (callable) returned {out.dtype} values, expected "
                                 "real numbers")
            out = out.astype(float)
            if out.shape != b.shape:
                raise ValueError(
                    f"solve_inertia returned shape {out.shape} for input of shape {b.shape}")
            if not np.all(np.isfinite(out)):
                raise ValueError("solve_inertia (callable) returned NaN or infinite values")
            return out
        return finite(scipy.linalg.cho_solve(self._factor, b, check_finite=False))


# ------------------------------------------------------------------------------------------
# Numerical helpers of the solver: overflow errors, pseudo-inverse, equilibration, acceptance
# ------------------------------------------------------------------------------------------

VECTORS = ("tau", "Mv", "kN", "kF", "kL", "kG", "gammaN", "gammaF", "gammaE", "gammaL", "mu",
            "mu_sliding", "mu_non_sliding")


def overflow_error(data: Any = None, inertia: InertiaSolve | None = None,
                    operators: tuple = (), **extra: Any) -> ValueError:
    """The error for a computation that overflowed although its inputs are finite: it names the
    inputs of extreme magnitude (above 1e100, or nonzero below 1e-100, e.g. a G whose Delassus
    matrix is pseudo-inverted; the inertia matrix counts with its inverse)."""
    sizes: list[tuple[str, float, float]] = []  # (name, max |x|, min nonzero |x|)

    def add(name, a):
        a = np.abs(np.asarray(a, dtype=float))
        a = a[a > 0]
        if a.size:
            sizes.append((name, float(a.max()), float(a.min())))

    if data is not None:
        for name in VECTORS:
            if hasattr(data, name):
                add(name, getattr(data, name))
        ops = data._ops
        operators = (ops.N, ops.NT, ops.F, ops.FT, ops.L, ops.LT, ops.G, ops.GT) + tuple(operators)
        inertia = ops.inertia
    for op in operators:
        m = op.magnitude()
        if m > 0:
            sizes.append((op.name, m, m))
    m = inertia.magnitude() if inertia is not None else 0.0
    if m > 0:
        sizes.append(("solve_inertia", m, m))
    for name, value in extra.items():
        add(name, value)
    names = [n for n, hi, lo in sizes if hi >= 1e100 or lo <= 1e-100] or [n for n, _, _ in sizes]
    return ValueError("the result is not finite (floating-point overflow): "
                      f"{', '.join(dict.fromkeys(names)) or 'the inputs'} "
                      f"{'is' if len(names) == 1 else 'are'} too large (or too small) in magnitude")


def pinv_symmetric(A: np.ndarray) -> np.ndarray:
    """Minimum-norm pseudo-inverse of a symmetric PSD matrix (singular values below
    n * eps * largest are treated as zero)."""
    scale = float(np.max(np.abs(A))) if A.size else 0.0
    if scale == 0.0:
        return np.zeros_like(A)
    vals, vecs = np.linalg.eigh(A / scale)  # scaled: eigh of a tiny or huge matrix is inexact
    cutoff = A.shape[0] * _EPS * max(float(np.max(np.abs(vals))), 0.0) * 10.0
    inv = np.where(np.abs(vals) > cutoff, 1.0 / np.where(vals == 0, 1.0, vals), 0.0)
    return ((vecs * inv) @ vecs.T) / scale


def integer_arg(x: Any, name: str, minimum: int | None = None) -> int:
    """An integer argument (int, NumPy integer, integral float, or a 0-d array of those)."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    return integer(x, name, minimum=minimum)


def step(dt: Any) -> float:
    """A time step: a finite real number > 0 (ValueError naming ``dt``)."""
    h = real_scalar(dt, "dt")
    if h <= 0:
        raise ValueError(f"dt must be > 0, got {h}")
    return h


#: Equilibration leaves alone the rows whose largest |entry| lies within 2^-EQ_BAND .. 2^EQ_BAND.
EQ_BAND = 10


def equilibration(MM: np.ndarray) -> np.ndarray | None:
    """Symmetric power-of-two scaling ``d`` (Ruiz iterations; ``D MM D`` keeps MM's positive
    semi-definiteness and copositivity, which Lemke's method relies on) that brings every row and
    column maximum of MM within 2^-EQ_BAND .. 2^EQ_BAND of 1; None when MM already is (the usual
    case: then nothing changes)."""
    A = np.abs(MM)
    d = np.ones(MM.shape[0])
    for _ in range(60):
        m = np.maximum(A.max(axis=1), A.max(axis=0))
        e = np.log2(np.where(m > 0, m, 1.0))
        f = np.where(np.abs(e) > EQ_BAND, np.exp2(-np.round(e / 2)), 1.0)
        if np.all(f == 1.0):
            break
        A = f[:, None] * A * f[None, :]
        d *= f
    return None if np.all(d == 1.0) else d


def componentwise_ok(MM: np.ndarray, qq: np.ndarray, z: np.ndarray,
                      qq_scale: np.ndarray | None = None, tol: float = 1e-7) -> bool:
    """Row-by-row acceptance of an LCP solution: ``w_i >= -tol s_i``, ``z_i >= -tol max|z|`` and
    ``|w_i| <= tol s_i`` wherever ``z_i > tol max|z|``.  The scale of ``w_i`` is
    ``s_i = r_i + min(median(r), sum_j |MM_ij| max|z|)`` with
    ``r_i = |qq_i| + sum_j |MM_ij z_j| + qq_scale_i`` (the row's own terms and the magnitude of
    what was summed into ``qq_i``); the second term allows for the pivoting error that a row
    receives from the others, bounded both by a typical row (the median, so that a few huge
    rows do not excuse the rest) and by the row's coupling to the largest unknown.  It fails a
    solution whose small rows are lost in round-off next to huge ones, which a test against
    ``max |MM|`` and ``max |qq|`` accepts."""
    w = MM @ z + qq
    absM = np.abs(MM)
    r = np.abs(qq) + absM @ np.abs(z) + (0.0 if qq_scale is None else qq_scale)
    leak = np.minimum(float(np.median(r)), absM.sum(axis=1) * float(np.max(np.abs(z), initial=0.0)))
    s = r + leak
    zs = float(np.max(np.abs(z))) if z.size else 0.0
    active = z > tol * zs
    return bool(np.all(w >= -tol * s) and np.all(z >= -tol * zs)
                and np.all(np.abs(w[active]) <= tol * s[active]))


def min_norm_solve(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """Minimum-norm least-squares solution of A x = b and the residual max |A x - b|."""
    if b.size == 0:
        return np.zeros(0), 0.0
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    return x, float(np.max(np.abs(A @ x - b)))


def guard(data: Any, fn, *args: Any, **extra: Any) -> Any:
    """``fn(*args)``; an overflow inside becomes a ValueError naming the inputs of extreme
    magnitude among ``data``'s and ``extra`` (the user's other arguments)."""
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            out = fn(*args)
        if hasattr(out, "cf"):  # a ConstraintSolution
            finite(out.cf)
            finite(np.array([out.complementarity, out.feasibility, out.residual]))
        elif isinstance(out, np.ndarray):
            finite(out)
    except Overflow:
        raise overflow_error(data, **{k: v for k, v in extra.items() if v is not None}) from None
    return out


def rows_scale(ops: Any, v: np.ndarray, data: Any) -> np.ndarray:
    """|J| |v| + |k|: the magnitude of the terms summed in each entry of :func:`_rows` (the
    scale of its round-off, whatever cancels)."""
    def absolute(op):
        if op.kind == "zero":
            return np.zeros(op.shape[0])
        A = abs(op.value) if op.kind in ("dense", "sparse") else np.abs(op.matrix())
        return np.asarray(A @ np.abs(v), dtype=float).reshape(-1)

    return np.concatenate([absolute(ops.N) + np.abs(data.kN), absolute(ops.F) + np.abs(data.kF),
                           absolute(ops.L) + np.abs(data.kL)])


# ------------------------------------------------------------------------------------------
# LCP layout
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """Index ranges of z = [fN (nc), fD+ (nr), fD- (nr), lam (ncone), fL (nl)]."""

    nc: int
    nr: int
    ncone: int
    nl: int

    @property
    def size(self) -> int:
        return self.nc + 2 * self.nr + self.ncone + self.nl

    @property
    def fN(self) -> slice:
        return slice(0, self.nc)

    @property
    def fDp(self) -> slice:
        return slice(self.nc, self.nc + self.nr)

    @property
    def fDm(self) -> slice:
        return slice(self.nc + self.nr, self.nc + 2 * self.nr)

    @property
    def lam(self) -> slice:
        s = self.nc + 2 * self.nr
        return slice(s, s + self.ncone)

    @property
    def fL(self) -> slice:
        s = self.nc + 2 * self.nr + self.ncone
        return slice(s, s + self.nl)

    def unpack_map(self) -> np.ndarray:
        """P: z -> (fN, fF = fD+ - fD-, fL), a (nc + nr + nl) x size matrix."""
        m = self.nc + self.nr + self.nl
        P = np.zeros((m, self.size))
        P[np.arange(self.nc), np.arange(self.nc)] = 1.0
        rows = self.nc + np.arange(self.nr)
        P[rows, self.fDp.start + np.arange(self.nr)] = 1.0
        P[rows, self.fDm.start + np.arange(self.nr)] = -1.0
        rows = self.nc + self.nr + np.arange(self.nl)
        P[rows, self.fL.start + np.arange(self.nl)] = 1.0
        return P

    def lambda_mask(self) -> np.ndarray:
        """True on the lam rows and lam columns (the entries that do not scale with h)."""
        mask = np.zeros((self.size, self.size), dtype=bool)
        mask[self.lam, :] = True
        mask[:, self.lam] = True
        return mask


def cone_coupling(layout: Layout, r: np.ndarray, cone_contacts: np.ndarray,
                   mu: np.ndarray) -> np.ndarray:
    """The friction-cone entries of MM: E in the fD+/fD- rows, -E^T and mu in the lam rows."""
    C = np.zeros((layout.size, layout.size))
    E = np.zeros((layout.nr, layout.ncone))
    E[np.arange(layout.nr), np.repeat(np.arange(layout.ncone), r)] = 1.0
    C[layout.fDp, layout.lam] = E
    C[layout.fDm, layout.lam] = E
    C[layout.lam, layout.fDp] = -E.T
    C[layout.lam, layout.fDm] = -E.T
    C[layout.lam.start + np.arange(layout.ncone), cone_contacts] = mu
    return C
