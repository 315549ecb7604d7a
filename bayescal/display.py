"""How names users chose are shown: literally, with hidden characters made visible.

Annotator, class, group and dataset names are data. Reports (HTML, figures)
and terminal output show them through :func:`display_name`, so a
right-to-left override or a NUL in a name cannot reorder or hide what a reader
sees. HTML escaping (Jinja2 autoescape) and figures' literal text (no
mathtext, see :mod:`bayescal.plotting`) handle the rest.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["display_name", "name_list"]

#: Unicode categories shown as escapes: controls, format characters (bidirectional
#: overrides, zero-width joiners), surrogates, private use, unassigned, line and
#: paragraph separators.
_HIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def display_name(name: Any) -> str:
    r"""``name`` as text with invisible and direction-changing characters made visible.

    A right-to-left override (U+202E) or a NUL inside an annotator name would
    otherwise reorder or hide what a reader sees; each such character is shown
    as its Python escape (``\u202e``, ``\x00``). Everything else, ``$`` and
    ``<`` included, is kept (HTML escaping and figures handle those).

    Examples
    --------
    >>> print(display_name("a\u202eb"), display_name("x\x00y"), display_name("$\\alpha$"))
    a\u202eb x\x00y $\alpha$
    """
    text = str(name)
    if all(unicodedata.category(c) not in _HIDDEN_CATEGORIES for c in text):
        return text
    out = []
    for c in text:
        if unicodedata.category(c) in _HIDDEN_CATEGORIES:
            code = ord(c)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(c)
    return "".join(out)


def name_list(names: list, limit: int = 10, *, joined: bool = False) -> str:
    """``names`` as a list in a message, the first ``limit`` and how many more.

    ``joined=True`` writes the items as they are, separated by commas (for items that
    are already formatted, such as ``"'site A' (12)"``), instead of a Python list.

    Examples
    --------
    >>> name_list(["a", "b"])
    "['a', 'b']"
    >>> name_list([f"g{i}" for i in range(30)], limit=2)
    "['g0', 'g1'] and 28 more"
    >>> name_list(["'A' (3)", "'B' (4)", "'C' (1)"], limit=2, joined=True)
    "'A' (3), 'B' (4) and 1 more"
    """
    names = list(names)
    shown = ", ".join(str(n) for n in names[:limit]) if joined else f"{names[:limit]}"
    if len(names) <= limit:
        return shown
    return f"{shown} and {len(names) - limit} more"
