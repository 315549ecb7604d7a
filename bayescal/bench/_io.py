"""Shared output helpers for benchmarks: JSON to a file and to stdout, environment facts."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

from bayescal._json import json_default
from bayescal.report.core import package_versions


def environment() -> dict:
    """Versions (the report core's record) and the machine the benchmark ran on."""
    versions = package_versions()
    return {
        "bayescal": versions["bayescal"],
        "python": versions["python"],
        "numpy": versions["numpy"],
        "machine": platform.machine(),
        "processor_count": os.cpu_count(),
    }


def write_json(result: dict, path) -> None:
    text = json.dumps(result, indent=2, default=json_default)
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n")
    print(text)


def write_run(protocol: dict, cells: list, *, started: float, load_start, path) -> None:
    """Write ``{protocol, cells, seconds, load_average, environment}`` (the layout of the
    coverage-style benchmarks); ``started`` is the ``time.perf_counter()`` of the start."""
    import time

    out = {
        "protocol": protocol,
        "cells": cells,
        "seconds": time.perf_counter() - started,
        "load_average": {"start": list(load_start), "end": list(os.getloadavg())},
        "environment": environment(),
    }
    write_json(out, path)


def mode_defaults(args, mode: str, table: dict[str, dict[str, object]]) -> None:
    """Fill the options of a benchmark with several modes (``--multiclass``, ``--priors``):
    ``table`` maps an option's ``dest`` to ``{mode: default}``; options are declared with
    ``default=None``. An option given on the command line for a mode it does not belong to
    is an error (never silently ignored)."""
    from bayescal.errors import ConfigError

    for dest, defaults in table.items():
        value = getattr(args, dest, None)
        if mode in defaults:
            if value is None:
                setattr(args, dest, defaults[mode])
        elif value is not None:
            flag = "--" + dest.replace("_", "-")
            raise ConfigError(
                f"{flag} applies to the {' / '.join(defaults)} mode only, not to {mode}; "
                f"drop it or choose that mode."
            )
