"""Rod2D test model for the Drake ConstraintSolver tests, and independent solution checkers.

The planar rod of Drake's ``examples/rod2d`` (reference notes drake.md §5.1), written from its
equations: q = (x, y, theta), v = (xdot, ydot, thetadot), M = diag(m, m, J), ground y = 0. A rod
endpoint p = (x -/+ h cos theta, y -/+ h sin theta) is a contact when p_y <= 0 (left endpoint
first).
With r = p - (x, y):

* normal row  N_i = [0, 1, r_x]   (normal velocity of the endpoint: ydot + thetadot r_x);
* tangent row F_i = [1, 0, -r_y]  (tangential velocity: xdot - thetadot r_y);
* kN_i = Ndot v = -thetadot^2 r_y and kF_i = Fdot v = -thetadot^2 r_x (time derivatives of the
  rows, since d(r_x)/dt = -thetadot r_y and d(r_y)/dt = thetadot r_x).

This module also holds the oracles used by the other ``test_drake_*`` files: a physical checker of
acceleration- and velocity-level solutions written directly from the Coulomb/Signorini conditions,
and a brute-force MLCP solver (enumeration of complementary active sets of the unreduced KKT
system, with the accelerations and bilateral forces as free unknowns). Neither uses the solver's
Delassus matrices or LCP layout.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy.optimize import linprog

from sinews.contact.constraint_solver import AccelProblemData, VelProblemData

EPS = float(np.finfo(float).eps)
G_ACC = -9.81


@dataclass
class Rod2D:
    mass: float = 2.0
    half_length: float = 1.0
    J: float = 1.0
    mu_coulomb: float = 1000.0
    mu_static: float = 1000.0

    @property
    def M(self) -> np.ndarray:
        return np.diag([self.mass, self.mass, self.J])

    def endpoints(self, q) -> np.ndarray:
        x, y, th = q
        h = self.half_length
        c, s = np.cos(th), np.sin(th)
        return np.array([[x - h * c, y - h * s], [x + h * c, y + h * s]])

    def contact_points(self, q) -> list[int]:
        return [i for i, p in enumerate(self.endpoints(q)) if p[1] <= 0.0]

    def rows(self, q, v, endpoint: int):
        """(N row, F row, Ndot v, Fdot v, tangential slip velocity) of an endpoint."""
        r = self.endpoints(q)[endpoint] - np.asarray(q[:2], dtype=float)
        thd = v[2]
        n_row = np.array([0.0, 1.0, r[0]])
        f_row = np.array([1.0, 0.0, -r[1]])
        ndot_v = -thd * thd * r[1]
        fdot_v = -thd * thd * r[0]
        return n_row, f_row, ndot_v, fdot_v, float(f_row @ v)


# Named configurations (drake.md §5.1).
def resting_horizontal():
    return np.zeros(3), np.zeros(3)


def sliding_impacting_horizontal(sign=1.0):
    return np.zeros(3), np.array([sign, -1.0, 0.0])


def sliding_impacting_vertical(sign=1.0):
    return np.array([0.0, 0.0, np.pi / 2]), np.array([sign, -1.0, 0.0])


def resting_vertical(rod: Rod2D):
    return np.array([0.0, rod.half_length, np.pi / 2]), np.zeros(3)


@dataclass
class Dense:
    """Dense matrices of a problem, kept by the test for the independent checkers."""

    M: np.ndarray
    N: np.ndarray
    NmQT: np.ndarray          # (N^T - mu Q^T) at acceleration level, N^T at velocity level
    F: np.ndarray
    kN: np.ndarray
    kF: np.ndarray
    r: np.ndarray
    cone_contacts: np.ndarray  # contacts with a friction cone, in F-row order
    mu_cone: np.ndarray
    L: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    kL: np.ndarray = field(default_factory=lambda: np.zeros(0))
    G: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    kG: np.ndarray = field(default_factory=lambda: np.zeros(0))
    tau: np.ndarray | None = None
    Mv: np.ndarray | None = None
    gammaN: np.ndarray | None = None
    gammaL: np.ndarray | None = None
    frames: np.ndarray | None = None


def _contact_list(rod, q, contact_dup):
    base = rod.contact_points(q)
    return base * (contact_dup + 1)


def accel_problem(rod: Rod2D, q, v, tau_extra=(0.0, 0.0, 0.0), contact_dup=0,
                  friction_dir_dup=0):
    """Rod2D's CalcConstraintProblemData, with the contact/direction duplication of the tests."""
    q = np.asarray(q, float)
    v = np.asarray(v, float)
    contacts = _contact_list(rod, q, contact_dup)
    nc = len(contacts)
    N = np.zeros((nc, 3))
    NmQT = np.zeros((3, nc))
    kN = np.zeros(nc)
    sliding, non_sliding, F_rows, kF, frames = [], [], [], [], []
    for i, e in enumerate(contacts):
        n_row, f_row, ndv, fdv, slip = rod.rows(q, v, e)
        N[i] = n_row
        kN[i] = ndv
        if abs(slip) >= 100 * EPS:
            s = np.sign(slip)
            sliding.append(i)
            NmQT[:, i] = n_row - rod.mu_coulomb * s * f_row
            frames.append([[0.0, s], [1.0, 0.0]])
        else:
            non_sliding.append(i)
            NmQT[:, i] = n_row
            for _ in range(friction_dir_dup + 1):
                F_rows.append(f_row)
                kF.append(0.0 if friction_dir_dup else fdv)
            frames.append([[0.0, 1.0], [1.0, 0.0]])
    F = np.array(F_rows).reshape(-1, 3)
    r = np.full(len(non_sliding), friction_dir_dup + 1, dtype=int)
    tau = np.array([0.0, rod.mass * G_ACC, 0.0]) + np.asarray(tau_extra, float)
    data = AccelProblemData(
        tau=tau, solve_inertia=rod.M, N=N, N_minus_mu_Q_T=NmQT, kN=kN, F=F, kF=kF,
        sliding_contacts=sliding, non_sliding_contacts=non_sliding, r=r,
        mu_sliding=np.full(len(sliding), rod.mu_coulomb),
        mu_non_sliding=np.full(len(non_sliding), rod.mu_static))
    dense = Dense(M=rod.M, N=N, NmQT=NmQT, F=F, kN=kN, kF=np.array(kF), r=r,
                  cone_contacts=np.array(non_sliding, dtype=int),
                  mu_cone=np.full(len(non_sliding), rod.mu_static), tau=tau,
                  frames=np.array(frames).reshape(-1, 2, 2))
    return data, dense


def impact_problem(rod: Rod2D, q, v, contact_dup=0, friction_dir_dup=0):
    """Rod2D's CalcImpactProblemData: Mv = M v, mu = mu_coulomb, r = 1 (or duplicated)."""
    q = np.asarray(q, float)
    v = np.asarray(v, float)
    contacts = _contact_list(rod, q, contact_dup)
    nc = len(contacts)
    N = np.zeros((nc, 3))
    F = np.zeros((nc * (friction_dir_dup + 1), 3))
    frames = []
    for i, e in enumerate(contacts):
        n_row, f_row, _, _, _ = rod.rows(q, v, e)
        N[i] = n_row
        F[i * (friction_dir_dup + 1):(i + 1) * (friction_dir_dup + 1)] = f_row
        frames.append([[0.0, 1.0], [1.0, 0.0]])
    r = np.full(nc, friction_dir_dup + 1, dtype=int)
    Mv = rod.M @ v
    data = VelProblemData(Mv=Mv, solve_inertia=rod.M, N=N, kN=np.zeros(nc), F=F,
                          kF=np.zeros(F.shape[0]), mu=np.full(nc, rod.mu_coulomb), r=r)
    dense = Dense(M=rod.M, N=N, NmQT=N.T.copy(), F=F, kN=np.zeros(nc), kF=np.zeros(F.shape[0]),
                  r=r, cone_contacts=np.arange(nc), mu_cone=np.full(nc, rod.mu_coulomb), Mv=Mv,
                  gammaN=np.zeros(nc), frames=np.array(frames).reshape(-1, 2, 2))
    return data, dense


def discretized_problem(rod: Rod2D, q, v, dt, contact_dup=0, friction_dir_dup=0):
    """The tests' discretized helper: impact data, gammaN = 0, Mv += (0, m g, 0) dt."""
    data, dense = impact_problem(rod, q, v, contact_dup, friction_dir_dup)
    Mv = data.Mv + np.array([0.0, rod.mass * G_ACC, 0.0]) * dt
    dense.Mv = Mv
    return data.replace(Mv=Mv, gammaN=np.zeros(data.num_contacts)), dense


def sync(dense: Dense, data) -> Dense:
    """Copy the vectors and limit/bilateral matrices a test changed in ``data`` into ``dense``."""
    dense.kN = np.array(data.kN)
    dense.kF = np.array(data.kF)
    dense.kL = np.array(data.kL)
    dense.kG = np.array(data.kG)
    if isinstance(data, AccelProblemData):
        dense.tau = np.array(data.tau)
    else:
        dense.Mv = np.array(data.Mv)
        dense.gammaN = np.array(data.gammaN)
        dense.gammaL = np.array(data.gammaL)
    return dense


# ------------------------------------------------------------------------------------------
# Independent checkers
# ------------------------------------------------------------------------------------------

def split_cf(dense: Dense, cf):
    nc, nr, nl = dense.N.shape[0], dense.F.shape[0], dense.L.shape[0]
    cf = np.asarray(cf)
    assert cf.size == nc + nr + nl + dense.G.shape[0]
    return cf[:nc], cf[nc:nc + nr], cf[nc + nr:nc + nr + nl], cf[nc + nr + nl:]


def _check_cone(dense, fN, fF, tangential, tol, what):
    start = 0
    for k, (i, ri) in enumerate(zip(dense.cone_contacts, dense.r)):
        rows = slice(start, start + ri)
        start += ri
        f, t = fF[rows], tangential[rows]
        mu_fn = dense.mu_cone[k] * fN[i]
        assert np.sum(np.abs(f)) <= mu_fn + tol, f"{what}: contact {i} outside friction cone"
        assert np.all(f * t <= tol * (1 + np.abs(f))), f"{what}: friction does not oppose slip"
        if np.max(np.abs(t), initial=0.0) > tol:
            assert abs(np.sum(np.abs(f)) - mu_fn) <= tol * (1 + mu_fn), (
                f"{what}: contact {i} slips without saturated friction")


def check_accel_solution(dense: Dense, cf, tol=1e-8):
    """Signorini + Coulomb conditions at acceleration level, from dense matrices only.

    Returns the generalized acceleration computed here, independently of the solver."""
    fN, fF, fL, fG = split_cf(dense, cf)
    gf = dense.tau + dense.NmQT @ fN + dense.F.T @ fF + dense.L.T @ fL + dense.G.T @ fG
    vdot = np.linalg.solve(dense.M, gf)
    scale = 1 + np.max(np.abs(cf), initial=0.0)
    t = tol * scale
    assert np.allclose(dense.G @ vdot + dense.kG, 0, atol=t), "bilateral constraint violated"
    for name, f, gap in (("normal", fN, dense.N @ vdot + dense.kN),
                         ("limit", fL, dense.L @ vdot + dense.kL)):
        assert np.all(f >= -t), f"{name} force negative"
        assert np.all(gap >= -t), f"{name} constraint violated"
        assert np.all(np.minimum(np.abs(f), np.abs(gap)) <= t), f"{name} not complementary"
    _check_cone(dense, fN, fF, dense.F @ vdot + dense.kF, t, "accel")
    return vdot


def check_vel_solution(dense: Dense, cf, dt=1.0, tol=1e-8):
    """Signorini + Coulomb conditions at velocity level (impulses: dt = 1; forces: the step).

    Returns v+ computed here, independently of the solver."""
    fN, fF, fL, fG = split_cf(dense, cf)
    gf = dense.NmQT @ fN + dense.F.T @ fF + dense.L.T @ fL + dense.G.T @ fG
    v_plus = np.linalg.solve(dense.M, dense.Mv + dt * gf)
    scale = 1 + np.max(np.abs(cf), initial=0.0) * dt
    t = tol * scale
    gN = dense.gammaN if dense.gammaN is not None and dense.gammaN.size else np.zeros(fN.size)
    gL = dense.gammaL if dense.gammaL is not None and dense.gammaL.size else np.zeros(fL.size)
    assert np.allclose(dense.G @ v_plus + dense.kG, 0, atol=t), "bilateral constraint violated"
    for name, f, gap in (("normal", fN, dense.N @ v_plus + dense.kN + gN * fN),
                         ("limit", fL, dense.L @ v_plus + dense.kL + gL * fL)):
        assert np.all(f >= -t), f"{name} impulse negative"
        assert np.all(gap >= -t), f"{name} constraint violated"
        assert np.all(np.minimum(np.abs(f * dt), np.abs(gap)) <= t), f"{name} not complementary"
    _check_cone(dense, fN, fF, dense.F @ v_plus + dense.kF, t, "vel")
    return v_plus


def enumerate_mlcp(A_u, B_u, a, C_z, D_z, b):
    """All complementary active sets of the MLCP

        A_u u + B_u z + a = 0,    0 <= w = C_z u + D_z z + b  _|_  z >= 0,

    each decided exactly by a feasibility linear program (z_i = 0 off the set S, w_i = 0 on it,
    z_S >= 0, w off S >= 0), so rank-deficient (redundant) systems are handled. Small problems
    only (2^nz LPs). Returns a list of (u, z), one feasible point per solvable active set; an
    empty list proves that the MLCP has no solution."""
    nu, nz = A_u.shape[1], D_z.shape[0]
    sols = []
    for mask in itertools.product([False, True], repeat=nz):
        S = np.flatnonzero(mask)
        off = np.flatnonzero(~np.array(mask, dtype=bool))
        K = np.block([[A_u, B_u[:, S]], [C_z[S], D_z[np.ix_(S, S)]]])
        rhs = -np.concatenate([a, b[S]])
        A_ub = -np.hstack([C_z[off], D_z[np.ix_(off, S)]]) if off.size else None
        b_ub = b[off] if off.size else None
        res = linprog(np.zeros(nu + S.size), A_ub=A_ub, b_ub=b_ub, A_eq=K, b_eq=rhs,
                      bounds=[(None, None)] * nu + [(0, None)] * S.size, method="highs")
        if res.status == 0:
            z = np.zeros(nz)
            z[S] = res.x[nu:]
            sols.append((res.x[:nu], z))
    return sols


# ------------------------------------------------------------------------------------------
# Tests of the model itself
# ------------------------------------------------------------------------------------------

def test_rod2d_rows_match_finite_differences():
    rod = Rod2D()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.normal(size=3)
        v = rng.normal(size=3)
        for e in (0, 1):
            n_row, f_row, ndv, fdv, _ = rod.rows(q, v, e)
            hstep = 1e-4
            p_plus = rod.endpoints(q + hstep * v)[e]
            p_minus = rod.endpoints(q - hstep * v)[e]
            pdot = (p_plus - p_minus) / (2 * hstep)
            assert np.allclose([n_row @ v, f_row @ v], [pdot[1], pdot[0]], atol=1e-6)
            # d/dt of the row, applied to v: second derivative of the endpoint minus J vdot (=0).
            p0 = rod.endpoints(q)[e]
            pddot = (p_plus - 2 * p0 + p_minus) / hstep**2
            assert np.allclose([ndv, fdv], [pddot[1], pddot[0]], atol=1e-5)


def test_rod2d_contact_classification():
    rod = Rod2D()
    assert rod.contact_points(resting_horizontal()[0]) == [0, 1]
    assert rod.contact_points(resting_vertical(rod)[0]) == [0]
    assert rod.contact_points(sliding_impacting_vertical()[0]) == [0]
    assert rod.contact_points(np.array([0.0, 10.0, 0.0])) == []
    data, dense = accel_problem(rod, np.zeros(3), np.array([1.0, 0, 0]), contact_dup=1)
    assert data.num_contacts == 4 and data.num_sliding == 4 and data.num_friction_directions == 0
    data, _ = accel_problem(rod, np.zeros(3), np.zeros(3), contact_dup=2, friction_dir_dup=3)
    assert data.num_contacts == 6 and data.num_friction_directions == 24


def test_enumerate_mlcp_finds_known_solution():
    # 1-D: m a = -19.62 + f, 0 <= a _|_ f >= 0  ->  f = 19.62, a = 0.
    sols = enumerate_mlcp(np.array([[2.0]]), np.array([[-1.0]]), np.array([19.62]),
                          np.array([[1.0]]), np.array([[0.0]]), np.array([0.0]))
    assert len(sols) == 1 and sols[0][1] == pytest.approx([19.62])
