"""JSON encoding shared by benchmark outputs and report summaries.

``json_default`` turns numpy values into Python ones (benchmarks).
``strict_json`` is what a report writes: numpy values converted, NaN and
infinities written as ``null`` (never the non-standard ``NaN`` token), and
``allow_nan=False`` so anything non-finite that slipped through raises.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["json_default", "json_safe", "strict_json", "write_text_atomic"]


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


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` so that the file is either the old one or the whole new one.

    Missing parent folders are created; the text goes to a temporary file in the same
    folder, is flushed to disk, and replaces ``path`` in one rename (a full disk or a
    kill leaves the earlier file as it was, and no temporary file behind on errors).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777  # keep the earlier file's permissions
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask  # what open() would have made (mkstemp makes 0600)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
