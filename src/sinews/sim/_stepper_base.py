"""The stepper interface: :class:`Stepper` (``step(scene, q, v, tau, h) -> StepOutput``), its
result :class:`StepOutput`, and the option checks the steppers share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._checks import real_scalar

if TYPE_CHECKING:
    from .scene import Scene

__all__ = ["Stepper", "StepOutput"]


@dataclass
class StepOutput:
    """One step's result: new state, contacts and their impulses, solver statistics."""

    q: np.ndarray
    v: np.ndarray
    contacts: object
    impulses: np.ndarray  #: (k, 3) contact impulses [n, t1, t2] (on geom_b, N s)
    frames: np.ndarray  #: (k, 3, 3) rows n, t1, t2 (world)
    stats: dict = field(default_factory=dict)


def _one_of(x, name, options):
    if x not in options:
        raise ValueError(f"{name} must be one of {options}, got {x!r}")
    return x


def _nonneg(x, name):
    x = real_scalar(x, name)
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {x}")
    return x


class Stepper:
    """Base class: ``step(scene, q, v, tau, h) -> StepOutput``."""

    name = "stepper"

    def step(self, scene: Scene, q: np.ndarray, v: np.ndarray, tau: np.ndarray, h: float) -> StepOutput:
        raise NotImplementedError

    @staticmethod
    def _finish(scene, q, v_plus, h, v_position=None):
        from ..configuration import integrate

        vp = v_plus if v_position is None else v_position
        return integrate(scene.model, q, vp, h)

    @staticmethod
    def _frames(prob):
        k = prob.num_contacts
        if not k:
            return np.zeros((0, 3, 3))
        return np.stack([prob.contacts.normals, prob.t1, prob.t2], axis=1)
