"""Option values of the audit commands, each checked while the command line is read.

Every numeric option of ``bayescal audit`` and ``bayescal audit-ambiguity`` has an
argparse ``type`` made here, so a value out of range stops the command before
anything is loaded, fitted or written, with one line and exit status 2
(``bayescal: error: argument --draws: must be an integer from 4 to 1000000; got '0'
...``). Bounds that depend on the data (enough items for the folds, enough groups
for the design) are checked by the library once the data are read.

Examples
--------
>>> draws = integer(4, 10, why="R-hat needs 4")
>>> draws("5")
5
>>> draws("2")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be an integer from 4 to 10; got '2' (R-hat needs 4)
"""

from __future__ import annotations

import argparse
import math
import os
import stat
from collections.abc import Callable

#: Most score groups / bins / ambiguity ECE bins: the library's limit on any partition.
from bayescal.options import MAX_CELLS, MAX_CHAINS, MAX_DRAWS

__all__ = [
    "add_quiet",
    "default",
    "given",
    "check_output_file",
    "OUT_PROMISE",
    "integer",
    "open_unit",
    "seed",
    "MAX_CELLS",
    "MAX_SEED",
    "MIN_DRAWS",
    "MAX_DRAWS",
    "MAX_CHAINS",
    "MAX_LABEL_DRAWS",
    "MAX_BOOT",
]


class _DefaultInt(int):
    """An int option's default, told apart from the same number given on the command line."""


class _DefaultFloat(float):
    """A float option's default, told apart from the same number given."""


def default(value: float) -> float:
    """``value`` marked as an option's default (argparse keeps a non-string default as it is,
    so :func:`given` can tell whether the user set the option). Prints and compares as
    ``value``.

    Examples
    --------
    >>> given(default(1000)), given(1000), default(1000) == 1000, f"{default(2.0)}"
    (False, True, True, '2.0')
    """
    return _DefaultInt(value) if isinstance(value, int) else _DefaultFloat(value)


def given(value: object) -> bool:
    """Whether an option's value came from the command line (not its :func:`default`)."""
    return not isinstance(value, (_DefaultInt, _DefaultFloat))


#: Fewest draws per chain: R-hat and ESS split each chain in two and need 4 draws
#: (the sampler's own rule for a checked fit; an audit needs hundreds).
MIN_DRAWS = 4


#: Most label draws of the ambiguity audit's sampled ECEs (each draw relabels every test
#: item; 100 already puts their Monte Carlo error below a tenth of a percent point).
MAX_LABEL_DRAWS = 10_000

#: Most bootstrap replicates of the ambiguity audit's metric intervals (from about 2,000 on,
#: the Monte Carlo error of a 90% interval's ends is a small share of its width).
MAX_BOOT = 100_000

#: Largest seed: the range numpy's legacy ``RandomState`` and scikit-learn accept.
MAX_SEED = 2**32 - 1


#: The end of both audit commands' --help: what --out holds after a failure.
OUT_PROMISE = """
--out is replaced as a whole, and only once the report is complete: after an error or
Ctrl-C it holds the earlier report, byte for byte.
"""


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``--quiet``, the same for both audit commands."""
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="print only warnings and errors (default: progress lines, and live progress on "
        "a terminal)",
    )


def integer(
    low: int, high: int | None = None, *, why: str = "", or_zero: bool = False
) -> Callable[[str], int]:
    """An argparse type: a whole number in ``[low, high]`` (``high`` None: no upper bound;
    ``or_zero``: 0 too, meaning "off")."""
    span = f"from {low} to {high}" if high is not None else f">= {low}"
    span = f"0 or an integer {span}" if or_zero else f"an integer {span}"
    note = f" ({why})" if why else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value == 0 and or_zero:
            return 0
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {span}; got {text!r}{note}")
        return value

    parse.__name__ = "integer"  # argparse names the type in some messages
    return parse


def open_unit(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1.

    Examples
    --------
    >>> open_unit("0.9")
    0.9
    >>> open_unit("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number strictly between 0 and 1; got 'nan'
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1; got {text!r}")
    return value


seed = integer(0, MAX_SEED, why="the range numpy and scikit-learn seeds accept")


def check_output_file(path: str, option: str) -> None:
    """Refuse an output file that cannot be written, before any work (``--json FILE``).

    ``path`` must not be a directory or another non-regular file, and its nearest existing
    parent must be a directory we may write in (missing folders are created when the file
    is written). Raises :class:`~bayescal.errors.ConfigError` naming ``option``; a plan or
    bench that ran for minutes used to fail only when writing its result.
    """
    from bayescal.errors import ConfigError

    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # the parent walk below names the cause
        info = None
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot be used ({exc.strerror}).") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise ConfigError(f"{option} {path} is {kind}; give the path of a file to write.")
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ConfigError(f"{option} {path}: {parent} is not a directory; give another path.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: no permission to write in {parent}.")
