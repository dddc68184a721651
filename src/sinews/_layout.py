"""Memory layout of the compiled model (``mi``, ``mf``) and the workspace (``ws``).

Kept in one place so that the Numba kernels and the Python side agree.  All kernels index
flat arrays with these constant offsets (Numba folds module-level integers into constants).

``mi``: int64, shape ``(nlinks, MI_STRIDE)``, one row per movable link (topological order).
``mf``: float64, 1-D: ``[gravity(3), pad(5)]`` then ``MF_STRIDE`` values per link, then the
multi-axis joint axes (6 per axis) at the offsets stored in ``mi[:, MI_AXES]``.
``ws``: float64, 1-D: ``WS_STRIDE`` values per link, then per-dof regions.
"""

# --- mi columns ---
MI_PARENT = 0  # parent link index, -1 for the world
MI_TYPE = 1  # joint type code (sinews.joints.JT_*)
MI_IQ = 2  # first index in q
MI_IV = 3  # first index in v
MI_NQ = 4
MI_NV = 5
MI_AXIS = 6  # 0 general axis, 1/2/3 = x/y/z (revolute fast paths)
MI_AXES = 7  # offset of the multi-axis joint's axes in mf
MI_STRIDE = 8

# --- mf ---
MF_GRAVITY = 0
MF_HEADER = 8
MF_JR = 0  # joint placement rotation (row-major 3x3), X_parent_joint
MF_JP = 9  # joint placement translation
MF_AXIS = 12  # unit axis (revolute, prismatic, helical)
MF_PITCH = 15
MF_MASS = 16  # link inertia at the link origin: mass,
MF_H = 17  # first moment h = m c,
MF_IO = 20  # rotational inertia about the origin: xx, yy, zz, xy, xz, yz
MF_ARM = 26  # armature (reflected rotor inertia) of the joint's dofs, one per dof (up to 6):
#              added to M's diagonal (CRBA), to D = S^T IA S (ABA) and as armature * qdd (RNEA)
MF_STRIDE = 32

# --- ws per link ---
WS_R = 0  # pose of the link in its parent link: R (row-major), p
WS_P = 9
WS_OR = 12  # pose of the link in the world: R, p
WS_OP = 21
WS_V = 24  # link spatial velocity, link axes
WS_A = 30  # link spatial acceleration, link axes
WS_F = 36  # link force (RNEA) / composite inertia (CRBA, 10 values from WS_F)
WS_C = 46  # velocity-product acceleration c = cJ + v x vJ
WS_PA = 52  # articulated bias force
WS_IA = 58  # articulated inertia, full 6x6 row-major
WS_DINV = 94  # inverse of D = S^T IA S (nv x nv, row-major, up to 6x6)
WS_CJ = 130  # joint bias acceleration cJ = dS/dt qd (child axes)
WS_STRIDE = 136

# Temporary region for multi-axis joints and the 6x6 products (shared, after the per-dof data).
TMP_SIZE = 192
# offsets inside the temporary region
TMP_IA = 0  # 36: articulated inertia handed to the parent
TMP_UD = 72  # 36: U D^-1
TMP_D = 108  # 36: D being inverted


def ws_size(nlinks: int, nv: int) -> int:
    return nlinks * WS_STRIDE + 6 * nv + 6 * nv + nv + TMP_SIZE


def ws_offsets(nlinks: int, nv: int):
    """Offsets of the per-dof regions: S (6 per dof), U (6 per dof), u (1 per dof), tmp."""
    s_off = nlinks * WS_STRIDE
    u6_off = s_off + 6 * nv
    u_off = u6_off + 6 * nv
    tmp_off = u_off + nv
    return s_off, u6_off, u_off, tmp_off

# --- placement table (CompiledModel.pl): one row per body, then one per frame ---
# [link index (as a float; -1: welded to the world), R_link_row (row-major 3x3), p_link_row (3)]
PL_LINK = 0
PL_R = 1
PL_P = 10
PL_STRIDE = 13

# reference frames of the frame Jacobians (as Pinocchio's ReferenceFrame)
REF_LOCAL = 0
REF_WORLD = 1
REF_LOCAL_WORLD_ALIGNED = 2
