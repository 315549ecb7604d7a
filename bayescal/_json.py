"""JSON encoding shared by benchmark outputs and report summaries.

``json_default`` turns numpy values into Python ones (benchmarks).
``strict_json`` is what a report writes: numpy values converted, NaN and
infinities written as ``null`` (never the non-standard ``NaN`` token), and
``allow_nan=False`` so anything non-finite that slipped through raises.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

__all__ = ["json_default", "json_safe", "strict_json"]


def json_default(obj: object) -> Any:
    """``json.dumps(default=...)`` hook: numpy scalars and arrays become Python values."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def json_safe(obj: Any) -> Any:
    """A copy of ``obj`` with numpy values as Python values and non-finite floats as None.

    Examples
    --------
    >>> json_safe({"a": float("nan"), "b": np.float32(0.5), "c": (1, np.inf)})
    {'a': None, 'b': 0.5, 'c': [1, None]}
    """
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def strict_json(obj: Any, *, indent: int | None = 2) -> str:
    """Standard JSON text of ``obj`` (see :func:`json_safe`); raises on anything else.

    Examples
    --------
    >>> strict_json({"x": float("inf")}, indent=None)
    '{"x": null}'
    """
    return json.dumps(json_safe(obj), indent=indent, allow_nan=False)
