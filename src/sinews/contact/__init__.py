"""Contact and impulse solvers.

* :mod:`sinews.contact.constraint_solver` -- Drake's ConstraintSolver (MLCP -> LCP contact problems
  with polygonal Coulomb friction, impacts, time-discretised LCPs).
* :mod:`sinews.contact.impulse_solver` -- Simbody's ImpulseSolver family (PGS and PLUS).
* :mod:`sinews.contact.fclib` -- FCLib frictional-contact problems and 3-D friction solvers.

Submodules are imported lazily so that ``import sinews.contact`` stays cheap.
"""

import importlib

_SUBMODULES = ("constraint_solver", "impulse_solver", "fclib")


def __getattr__(name):
    if name.startswith("_"):
        # private and dunder look-ups (also made by ``from . import _x``) never search submodules
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    for sub in _SUBMODULES:
        try:
            module = importlib.import_module(f"{__name__}.{sub}")
        except ModuleNotFoundError:
            continue
        if name in getattr(module, "__all__", ()):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
