"""Shared output helpers for benchmarks: JSON to a file and to stdout, environment facts."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from bayescal._json import json_default


def environment() -> dict:
    import numpy as np

    from bayescal import __version__

    return {
        "bayescal": __version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "machine": platform.machine(),
        "processor_count": __import__("os").cpu_count(),
    }


def write_json(result: dict, path) -> None:
    text = json.dumps(result, indent=2, default=json_default)
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n")
    print(text)
