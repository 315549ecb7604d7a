"""Figures for reports: a figure from :mod:`bayescal.plotting` in, an embedded PNG out.

Figures are drawn and encoded as PNG the first time the report's HTML or files
need them (:class:`~bayescal.report.core.Figure` takes the encoder as a
callable): an audit used for its numbers never draws. The drawing callables a
section passes must therefore hold the values they draw, bound when the section
runs (``point = ctx.point`` before the lambda, never ``ctx.point`` inside it),
since later steps may change the context.

The report draws nothing itself: it creates a matplotlib ``Figure`` (without
pyplot, so no backend or window is involved), lets a public plotting function
draw on its Axes, and encodes it here as a base64 PNG. Text is rendered
literally (no mathtext) while the PNG is drawn.

Reports are read on desktops and phones. :func:`responsive_figure` draws a
figure twice: the desktop layout (panels side by side, about 9 inches wide at
:data:`DPI`) and a phone layout (panels stacked, :data:`NARROW_WIDTH` inches
wide at :data:`NARROW_DPI`), which the HTML shows on screens up to 640 px
wide. On a 400 px phone the narrow figure is shown about 360 px wide, so
text keeps roughly the size it has on a desktop.
"""

from __future__ import annotations

import base64
import io
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from bayescal.plotting.text import literal_text
from bayescal.report.core import Figure

if TYPE_CHECKING:
    import matplotlib.figure

__all__ = ["new_figure", "figure", "responsive_figure", "DPI", "NARROW_DPI", "NARROW_WIDTH"]

#: Resolution of the desktop PNG (1 inch of figure = 100 CSS px at natural size).
DPI = 100
#: Resolution of the phone PNG (sharp on high-density screens).
NARROW_DPI = 200
#: Width of the phone layout in inches (about the width of a phone's card).
NARROW_WIDTH = 3.9


def new_figure(*, figsize: tuple[float, float]) -> matplotlib.figure.Figure:
    """A matplotlib Figure not registered with pyplot (freed by garbage collection)."""
    from matplotlib.figure import Figure as MatplotlibFigure  # weight: matplotlib on use

    with literal_text():
        return MatplotlibFigure(figsize=figsize)


def _png(fig: matplotlib.figure.Figure, dpi: int) -> str:
    buf = io.BytesIO()
    with literal_text():
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure(caption: str, fig: matplotlib.figure.Figure, *, alt: str = "") -> Figure:
    """Encode ``fig`` as a base64 PNG report :class:`~bayescal.report.core.Figure`."""
    return Figure(caption=caption, png_base64=lambda: _png(fig, DPI), alt=alt, dpi=DPI)


def responsive_figure(
    caption: str,
    draw: Callable[[matplotlib.figure.Figure, bool], object],
    *,
    size: tuple[float, float],
    narrow_height: float,
    alt: str = "",
) -> Figure:
    """Draw a figure in a desktop and a phone layout and encode both.

    Parameters
    ----------
    caption : str
    draw : callable(fig, narrow)
        Draws on ``fig``; ``narrow`` is True for the phone layout (stack the
        panels there).
    size : (float, float)
        Desktop figure size in inches.
    narrow_height : float
        Phone figure height in inches (its width is :data:`NARROW_WIDTH`).
    alt : str, optional

    Returns
    -------
    Figure
        With ``narrow_png_base64`` set.
    """
    drawn: dict[str, matplotlib.figure.Figure] = {}

    def layout(name: str) -> matplotlib.figure.Figure:
        # Both layouts are drawn the first time either PNG is read, together and once; kept
        # only when both were drawn, so a drawing that fails fails again with its own error
        # for the other layout (not a KeyError: the trace figure of a stuck sampler)
        if not drawn:
            with warnings.catch_warnings():
                # as while the audit's steps run: what they care about is already a flag
                warnings.simplefilter("ignore")
                wide = new_figure(figsize=size)
                draw(wide, False)
                narrow = new_figure(figsize=(NARROW_WIDTH, narrow_height))
                draw(narrow, True)
                with literal_text():
                    # stacked panels: keep titles clear of the ticks above them
                    narrow.tight_layout()
            drawn.update(wide=wide, narrow=narrow)
        return drawn[name]

    return Figure(
        caption=caption,
        png_base64=lambda: _png(layout("wide"), DPI),
        alt=alt,
        narrow_png_base64=lambda: _png(layout("narrow"), NARROW_DPI),
        dpi=DPI,
        narrow_dpi=NARROW_DPI,
    )
