"""The public ``sinews.warmup`` checks its arguments before compiling anything."""

import pytest

import sinews


@pytest.mark.parametrize("processes", [0, -1, 1.5, True, "2"])
def test_bad_processes_is_refused_naming_it(processes):
    with pytest.raises(ValueError, match="processes"):
        sinews.warmup(processes=processes)


@pytest.mark.parametrize("simulation", [1, "yes", None])
def test_bad_simulation_flag_is_refused_naming_it(simulation):
    with pytest.raises(ValueError, match="simulation"):
        sinews.warmup(simulation=simulation)
