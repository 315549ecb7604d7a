"""JSON encoding of numpy values, shared by benchmark outputs and report summaries."""

from __future__ import annotations

import numpy as np


def json_default(obj):
    """``json.dumps(default=...)`` hook: numpy scalars and arrays become Python values."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
