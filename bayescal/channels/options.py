"""Validation of the numeric options shared by the EM estimators (both tracks).

A wrong option is a configuration error reported in one line that names the
option, the value and the allowed range; nothing is coerced (``1.5`` is not
truncated to 1, ``"1e-9"`` is not parsed, ``True`` is not 1).
"""

from __future__ import annotations

import math
import numbers

from bayescal.errors import ConfigError

__all__ = ["check_int_option", "check_real_option", "check_em_options"]


def check_int_option(name: str, value, *, minimum: int) -> int:
    """An integer option ``>= minimum``.

    Examples
    --------
    >>> check_int_option("max_iter", 10, minimum=1)
    10
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(
            f"{name} must be an integer >= {minimum}; got {value!r} ({type(value).__name__})."
        )
    if value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def check_real_option(
    name: str, value, *, low: float, high: float, low_open: bool = False, high_open: bool = False
) -> float:
    """A finite real option in the interval between ``low`` and ``high``.

    Examples
    --------
    >>> check_real_option("tol", 1e-9, low=0.0, high=1.0, low_open=True)
    1e-09
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{name} must be a real number; got {value!r} ({type(value).__name__}).")
    v = float(value)
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    inside = (
        math.isfinite(v)
        and (v > low if low_open else v >= low)
        and (v < high if high_open else v <= high)
    )
    if not inside:
        raise ConfigError(f"{name} must lie in {left}{low:g}, {high:g}{right}; got {value!r}.")
    return v


def check_em_options(*, n_starts, max_iter, tol, clip, min_gap=None) -> dict:
    """Validate the EM protocol options (Hanada & Futami, App. G.2; SPEC §1).

    ``n_starts >= 1``, ``max_iter >= 1``, ``tol`` in (0, 1), ``clip`` in
    [0, 0.1] and, when given, ``min_gap`` in [0, 1).

    Returns
    -------
    dict of the validated values.

    Examples
    --------
    >>> check_em_options(n_starts=10, max_iter=1000, tol=1e-9, clip=1e-6)["n_starts"]
    10
    """
    out = {
        "n_starts": check_int_option("n_starts", n_starts, minimum=1),
        "max_iter": check_int_option("max_iter", max_iter, minimum=1),
        "tol": check_real_option("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True),
        "clip": check_real_option("clip", clip, low=0.0, high=0.1),
    }
    if min_gap is not None:
        out["min_gap"] = check_real_option("min_gap", min_gap, low=0.0, high=1.0, high_open=True)
    return out
