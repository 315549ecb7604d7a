"""The mypy gate of ``.ci/run`` (issue 21 item 5): no type error in the packages that are clean.

Runs mypy with the project's configuration (``[tool.mypy]`` in ``pyproject.toml``: all of
``bayescal/``) and fails when an error is reported in a clean package or in a top-level module of
``bayescal``. Every subpackage is listed as clean or not yet clean, so a new one must be placed
(an unlisted package fails the gate). The errors left in the other packages are counted and
printed; when one reaches 0, move it to ``CLEAN``.

A cold run takes about 35 CPU seconds (2 s with mypy's cache), too long for the unit tests, so
it runs here and not in ``tests/``.

Usage: ``python scripts/check_types.py`` (exit status 0: clean; 1: errors in a clean package).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Subpackages of ``bayescal`` with 0 mypy errors: an error here fails the gate.
CLEAN = (
    "ambiguity",
    "bayes",
    "bench",
    "channels",
    "data",
    "examples",
    "metrics",
    "plotting",
    "recal",
    "report",
    "scale",
    "simulate",
    "summaries",
)
#: Subpackages with errors left (counted, not failed on).
NOT_YET: tuple[str, ...] = ()

_ERROR = re.compile(r"^(bayescal/[^:]+\.py):\d+: error:")


def package_of(path: str) -> str:
    """``bayescal/report/sections.py`` -> ``report``; a top-level module -> ``""``."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else ""


def main() -> int:
    packages = sorted(p.name for p in (ROOT / "bayescal").iterdir() if (p / "__init__.py").exists())
    unlisted = [p for p in packages if p not in CLEAN + NOT_YET]
    if unlisted:
        print(f"check_types: place {unlisted} in CLEAN or NOT_YET of {__file__}", file=sys.stderr)
        return 1
    run = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if run.returncode not in (0, 1):  # 2: mypy itself failed (bad configuration, crash)
        print(run.stdout + run.stderr, file=sys.stderr)
        return 1
    errors = [m.group(1) for line in run.stdout.splitlines() if (m := _ERROR.match(line))]
    per_package = Counter(package_of(path) for path in errors)
    bad = [
        line
        for line in run.stdout.splitlines()
        if (m := _ERROR.match(line)) and package_of(m.group(1)) not in NOT_YET
    ]
    print(json.dumps({"errors": len(errors), "per_package": dict(per_package)}, sort_keys=True))
    if bad:
        print("check_types: mypy errors in clean packages:", *bad, sep="\n", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
