"""One way to turn a seed into a generator; no global random state anywhere."""

from __future__ import annotations

import numbers

import numpy as np

from bayescal.errors import ConfigError


def check_random_state(random_state) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        ``None`` gives fresh OS entropy (non-reproducible, allowed only where the
        caller accepts that); an int seeds a new PCG64 generator; a Generator is
        returned unchanged so callers can share one stream.

    Examples
    --------
    >>> rng = check_random_state(0)
    >>> check_random_state(rng) is rng
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ConfigError(f"random_state must be a non-negative int, got {random_state}.")
        return np.random.default_rng(int(random_state))
    raise ConfigError(
        "random_state must be None, a non-negative int or a numpy.random.Generator, "
        f"got {type(random_state).__name__}."
    )


def seed_from(random_state) -> int:
    """An int seed for ``random_state``, so a run records the seed it actually used.

    An int is returned unchanged (validated); ``None`` draws a fresh seed from
    OS entropy and a Generator draws one from its stream, so even those runs
    can be repeated from the recorded value.

    Examples
    --------
    >>> seed_from(7)
    7
    >>> isinstance(seed_from(None), int)
    True
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        check_random_state(random_state)  # validates the value
        return int(random_state)
    return int(check_random_state(random_state).integers(2**32))
