"""The public API of the tree algorithms, the batch functions and the importers is annotated
and documents its array shapes: the checks of ``test_packaging_api.py`` applied to the modules
of the IMPORT area (same harness, this module list)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_packaging_api as P  # noqa: E402

MODULES = [
    "sinews.rnea", "sinews.crba", "sinews.aba", "sinews.minv", "sinews.batch", "sinews.energy",
    "sinews.interop", "sinews.mujoco_import", "sinews.models",
]


@pytest.mark.parametrize("module_name", MODULES)
def test_import_area_functions_are_fully_annotated(module_name):
    P.test_public_functions_are_fully_annotated(module_name)


@pytest.mark.parametrize("module_name", MODULES)
def test_import_area_docstrings_give_the_state_array_shapes(module_name):
    P.test_docstrings_give_the_state_array_shapes(module_name)
