"""Shared plumbing of the public algorithm functions: data selection, external forces."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from ._checks import real_array, vector
from .model import Data, Model

NO_FORCES = np.zeros((1, 6))  # placeholder passed to kernels when there are no external forces


def check_model(model: object) -> Model:
    if not isinstance(model, Model):
        raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
    return model


def get_data(model: Model, data: Data | None) -> Data:
    """The workspace to use: ``data`` (checked to belong to ``model``) or the model's default."""
    if data is None:
        try:  # the calling thread's default workspace (Model.default_data), if it exists
            return model._tls.data
        except AttributeError:
            pass
        if not isinstance(model, Model):
            raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
        return model.default_data
    if type(model) is not Model and not isinstance(model, Model):
        raise ValueError(f"model must be a sinews.Model, got {type(model).__name__}")
    if not isinstance(data, Data) or data.model is not model:
        raise ValueError("data must be a sinews.Data created for this model (model.data())")
    return data


def link_forces(model: Model, data: Data, f_ext: ArrayLike | Mapping | None) -> tuple[np.ndarray, int]:
    """External forces per body -> per kernel link, in link axes.

    ``f_ext``: ``None``; an array ``(nbodies, 6)`` indexed by body id (row 0, the world, must be
    zero); or a dict ``{body id or name: wrench}``.  Each wrench ``[n; f]`` is expressed in the
    body's own frame and taken about the body-frame origin.  Wrenches on bodies welded to the
    world have no effect.  Returns (array, flag).
    """
    if f_ext is None:
        return NO_FORCES, 0
    c = data.c
    nb = model.nbodies
    if isinstance(f_ext, dict):
        F = np.zeros((nb, 6))
        for key, wrench in f_ext.items():
            F[model._resolve_body(key, "f_ext key")] += vector(wrench, 6, f"f_ext[{key!r}]")
    else:
        try:
            F = real_array(f_ext, "f_ext", finite=False)
        except ValueError as exc:
            raise ValueError(
                f"f_ext must be an ({nb}, 6) array of wrenches or a dict {{body: wrench}}: {exc}"
            ) from None
        if F.shape != (nb, 6):
            raise ValueError(f"f_ext must have shape ({nb}, 6) (one wrench per body, world first), got {F.shape}")
    if not np.all(np.isfinite(F)):
        raise ValueError("f_ext contains NaN or infinity")
    if np.any(F[0] != 0.0):
        raise ValueError("f_ext[0] is the world and must be zero")
    R = c.X_link_body_R[1:]
    p = c.X_link_body_p[1:]
    f_lin = np.einsum("bij,bj->bi", R, F[1:, 3:])
    n_ang = np.einsum("bij,bj->bi", R, F[1:, :3]) + np.cross(p, f_lin)
    out = data.fext_links
    out[:] = 0.0
    links = c.link_of_body[1:]
    moving = links >= 0  # forces on bodies welded to the world act on the ground
    np.add.at(out, links[moving], np.concatenate([n_ang, f_lin], axis=1)[moving])
    return out, 1
