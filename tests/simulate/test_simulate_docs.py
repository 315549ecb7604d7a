"""Public simulator API: documented, exported, and its doctest examples run."""

import doctest
import inspect

import pytest

import bayescal.simulate as simulate
from bayescal.simulate import dependent, flips, gaussian, toy


def test_all_names_exist_and_callables_have_examples():
    for name in simulate.__all__:
        obj = getattr(simulate, name)
        if callable(obj):
            doc = inspect.getdoc(obj) or ""
            assert "Parameters" in doc and "Returns" in doc and "Examples" in doc, name


@pytest.mark.parametrize("module", [flips, toy, gaussian, dependent])
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
