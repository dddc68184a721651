"""Fused multiply-add for Numba kernels, and the 3-vector dot product built on it.

``fma(a, b, c)`` is ``a * b + c`` rounded once (LLVM's ``llvm.fma.f64``: the FMA instruction on
x86-64 since Haswell, a correctly rounded library call elsewhere).  :func:`dot3` is
``fma(x2, y2, fma(x1, y1, x0 * y0))``: exactly what the BLAS ``ddot``/``dgemv``/``dgemm`` kernels
that NumPy and Numba call compute for length-3 operands on such CPUs, so a scalarised kernel
that replaces ``u @ v`` or ``R.T @ d`` on 3-vectors by :func:`dot3` returns the same bits,
without the BLAS call (and its array arguments) on every use.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import intrinsic

from .._jit import njit


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` with a single rounding (float64)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@njit(inline="always", cache=True)
def dot3(x0, x1, x2, y0, y1, y2):
    """``x . y`` of 3-vectors given by their components, as BLAS computes it (see the module)."""
    return fma(x2, y2, fma(x1, y1, x0 * y0))
