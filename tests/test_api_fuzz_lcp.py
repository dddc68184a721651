"""API fuzzing (see test_api_fuzz.py): sinews.lcp."""

from __future__ import annotations

import numpy as np
from test_api_fuzz import E, fuzz_tests

from sinews import lcp

RNG = np.random.default_rng(3)
_X = RNG.uniform(-1, 1, (5, 5))
FULL = _X @ _X.T + 0.5 * np.eye(5)  # the MLCP's [[A, C], [D, B]]: symmetric positive definite
M = FULL[:4, :4].copy()
QV = np.array([-1.0, 0.5, -0.3, 0.2])
Z0 = np.array([1.0, 0.0, 0.5, 0.0])
A, C, D, B = FULL[:2, :2].copy(), FULL[:2, 2:].copy(), FULL[2:, :2].copy(), FULL[2:, 2:].copy()
AV, BV = np.array([0.3, -0.2]), np.array([-1.0, 0.4, -0.2])
REDUCED = lcp.mlcp_to_lcp(A, C, D, B, AV, BV)
ZETA = lcp.solve_lemke(REDUCED.M, REDUCED.q).z
SOL = lcp.solve_mlcp(A, C, D, B, AV, BV)
COD = lcp.CompleteOrthogonalDecomposition(FULL[:3, :4].copy())


def _scale(*arrays):
    return max([1.0] + [float(np.max(np.abs(a))) for a in arrays if np.size(a)])


def lcp_honest(r, kw):
    """z >= 0, w = M z + q >= 0, z w = 0 (relative to the data), and r.w is M z + q."""
    Mm, q = np.asarray(kw["M"], float), np.asarray(kw["q"], float)
    w = Mm @ r.z + q
    s = _scale(Mm, q) * _scale(r.z)
    err = max(0.0, -r.z.min(), -w.min(), float(np.max(np.abs(r.z * w))) / _scale(r.z), float(np.max(np.abs(w - r.w))))
    return f"(z, w) violates the LCP by {err:.2g} (scale {s:.2g})" if err > 1e-6 * s else None


def mlcp_honest(r, kw):
    a = {k: np.asarray(kw[k], float) for k in "ACDBab"}
    eq = a["A"] @ r.u + a["C"] @ r.v + a["a"]
    w = a["D"] @ r.u + a["B"] @ r.v + a["b"]
    s = _scale(*a.values()) * _scale(r.u, r.v)
    err = max(float(np.max(np.abs(eq))), 0.0, -r.v.min(), -w.min(), float(np.max(np.abs(r.v * w))) / _scale(r.v))
    return f"(u, v) violates the MLCP by {err:.2g} (scale {s:.2g})" if err > 1e-6 * s else None


def mk(**kw):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()}


def mlcp(**kw):
    return mk(A=A, C=C, D=D, B=B, a=AV, b=BV, **kw)


TABLE = [
    E(lcp.check_lcp, lambda: mk(M=M, q=QV, z=Z0, tol=1e-8), "M q z tol:scalar"),
    E(lcp.solve_lemke, lambda: mk(M=M, q=QV, z0=Z0), "M q z0", honest=lcp_honest),
    E(lcp.solve_lemke, lambda: mk(M=M, q=QV, lexicographic=True, zero_tol=1e-12, piv_tol=1e-12), "M q zero_tol:scalar piv_tol:scalar", honest=lcp_honest, label="lexicographic"),
    E(lcp.solve_lemke_regularized, lambda: mk(M=M, q=QV), "M q", honest=lcp_honest),
    E(lcp.solve_principal_pivoting, lambda: mk(M=M, q=QV, z0=Z0), "M q z0", honest=lcp_honest),
    E(lcp.solve_principal_pivoting_regularized, lambda: mk(M=M, q=QV), "M q", honest=lcp_honest),
    E(lcp.solve_pgs, lambda: mk(M=M, q=QV, z0=Z0, omega=1.2, tol=1e-10), "M q z0 omega:scalar tol:scalar", honest=lcp_honest),
    # free shapes: the reduced LCP's size depends on the rank of A
    E(lcp.mlcp_to_lcp, lambda: mlcp(), "A C D B a b", free_shape=True),
    *[E(lcp.solve_mlcp, lambda m=m: mlcp(method=m), "A C D B a b", honest=mlcp_honest, label=m, free_shape=True)
      for m in ("lemke", "principal_pivoting", "pgs")],
    E(lcp.check_mlcp, lambda: mlcp(u=SOL.u, v=SOL.v), "u v A C D B a b"),
    E(lcp.ReducedLCP.recover, lambda: dict(self=REDUCED, zeta=ZETA.copy()), "zeta"),
    E(lcp.ReducedLCP.recover_u, lambda: dict(self=REDUCED, zeta=ZETA.copy()), "zeta"),
    E(lcp.CompleteOrthogonalDecomposition, lambda: dict(A=FULL[:3, :4].copy(), rank_tol=1e-10), "A rank_tol:scalar",
      call=lambda A, rank_tol: lcp.CompleteOrthogonalDecomposition(A, rank_tol).pinv_solve(np.ones(3))),
    E(lcp.CompleteOrthogonalDecomposition.pinv_solve, lambda: dict(self=COD, rhs=np.array([1.0, -2.0, 0.5])), "rhs", free_shape=True),  # 1-D or 2-D rhs
]

test_api_fuzz_lcp = fuzz_tests(TABLE)
