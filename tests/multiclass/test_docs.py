"""The multiclass simulator's doctests run (test_meta covers the core modules only)."""

import doctest

import bayescal.simulate.multiclass as simulate_multiclass_module


def test_simulator_doctests():
    result = doctest.testmod(
        simulate_multiclass_module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0
