"""``bayescal._blas``: the CPU count and the ordered thread map behind the worker pools."""

import threading

import pytest

from bayescal._blas import available_cpus, map_in_order


def test_available_cpus_is_a_positive_count():
    assert isinstance(available_cpus(), int) and available_cpus() >= 1


@pytest.mark.parametrize("workers", [0, 1, 2, 5])
def test_results_come_in_the_order_of_the_items(workers):
    import time

    def slow_first(i):
        time.sleep(0.02 if i % 3 == 0 else 0.0)  # later items finish first
        return i * i

    assert list(map_in_order(slow_first, range(23), workers=workers)) == [i * i for i in range(23)]


def test_items_are_drawn_lazily_in_the_calling_thread():
    caller = threading.get_ident()
    drawn = []

    def items():
        for i in range(40):
            assert threading.get_ident() == caller  # the generator's random draws stay here
            drawn.append(i)
            yield i

    results = map_in_order(lambda i: i, items(), workers=3)
    first = [next(results) for _ in range(5)]
    assert first == list(range(5))
    assert len(drawn) <= 5 + 2 * 3  # at most 2 x workers items ahead of the results
    assert list(results) == list(range(5, 40))


def test_the_first_failure_is_raised_and_the_rest_not_started():
    started = []

    def fn(i):
        started.append(i)
        if i == 3:
            raise ValueError("item 3")
        return i

    got = []
    with pytest.raises(ValueError, match="item 3"):
        for r in map_in_order(fn, range(1000), workers=2):
            got.append(r)
    assert got == [0, 1, 2]
    assert len(started) < 20  # the pending ones were cancelled, not run to the end


def test_the_callers_numpy_errstate_holds_in_the_workers():
    import numpy as np

    def divide(i):
        return float(np.float64(i) / np.float64(0.0))

    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            list(map_in_order(divide, [1, 2, 3], workers=2))
    with np.errstate(divide="ignore"):
        assert list(map_in_order(divide, [1, 2], workers=2)) == [np.inf, np.inf]


def test_ahead_bounds_the_items_in_flight():
    drawn = []

    def items():
        for i in range(30):
            drawn.append(i)
            yield i

    results = map_in_order(lambda i: i, items(), workers=3, ahead=2)
    assert next(results) == 0 and len(drawn) <= 3
    assert list(results) == list(range(1, 30))
