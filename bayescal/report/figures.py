"""Figures for reports: a figure from :mod:`bayescal.plotting` in, an embedded PNG out.

The report draws nothing itself: it creates a matplotlib ``Figure`` (without
pyplot, so no backend or window is involved), lets a public plotting function
draw on its Axes, and encodes it here as a base64 PNG. Text is rendered
literally (no mathtext) while the PNG is drawn.
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

from bayescal.plotting.text import literal_text
from bayescal.report.core import Figure

if TYPE_CHECKING:
    import matplotlib.figure

__all__ = ["new_figure", "figure"]


def new_figure(*, figsize: tuple[float, float]) -> matplotlib.figure.Figure:
    """A matplotlib Figure not registered with pyplot (freed by garbage collection)."""
    from matplotlib.figure import Figure as MatplotlibFigure  # weight: matplotlib on use

    with literal_text():
        return MatplotlibFigure(figsize=figsize)


def figure(caption: str, fig: matplotlib.figure.Figure, *, alt: str = "") -> Figure:
    """Encode ``fig`` as a base64 PNG report :class:`~bayescal.report.core.Figure`."""
    buf = io.BytesIO()
    with literal_text():
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    return Figure(caption=caption, png_base64=png, alt=alt)
