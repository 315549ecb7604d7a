"""Text in figures is shown literally: names are data, never mathtext.

matplotlib reads ``$...$`` as mathematics by default, so an annotator called
``$\\alpha$`` would be typeset and one called ``$\\frac{$`` would make drawing
fail. Every plotting function draws inside :func:`literal_text` (Text objects
created there get ``parse_math=False``) and passes user strings through
:func:`~bayescal.display.display_name`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType

__all__ = ["literal_text", "pyplot"]


@contextlib.contextmanager
def literal_text() -> Iterator[None]:
    """Context in which new matplotlib Text objects do not parse ``$...$``."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False}):
        yield


def pyplot() -> ModuleType:
    """``matplotlib.pyplot``, imported on first use (plotting is optional weight)."""
    import matplotlib.pyplot as plt

    return plt
