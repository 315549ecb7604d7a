"""Layout rules of the reports that hold without a browser (issue 24; the browser check with
screenshots is scripts/check_reports.py): the page scales to the device, no CSS rule fixes a
width wider than a 400 px phone, the interval bar's end labels stay inside its view box, and
the channel figure's legend covers no annotator's interval."""

from __future__ import annotations

import re
from importlib import resources

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from bayescal.report.core import _environment

PHONE = 400  # CSS px: the narrow width the browser check uses


def _template(name: str) -> str:
    return resources.files("bayescal.report").joinpath("templates", name).read_text("utf-8")


def test_viewport_meta_scales_the_page_to_the_device():
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in (
        _template("_base.html")
    )


@pytest.mark.parametrize("name", ["_style.css", "binary.html", "multiclass.html", "ambiguity.html"])
def test_no_fixed_width_wider_than_a_phone(name):
    # width / min-width in px (max-width only caps, it never forces a wider page)
    widths = [
        int(w) for w in re.findall(r"(?<![-\w])(?:min-)?width\s*:\s*(\d+)px", _template(name))
    ]
    assert all(w <= PHONE for w in widths), widths


def _number_line(lo: float, hi: float, point: float) -> list[tuple[float, str, str]]:
    env = _environment()
    src = _template("binary.html")
    macro = src[src.index("{% macro number_line") : src.index("{% endmacro %}") + 14]
    t = env.from_string(macro + "{{ number_line(nc) }}")
    svg = t.render(nc={"lo": lo, "hi": hi, "point": point, "plugin": point, "prob": 0.9})
    return [
        (float(x), anchor, text)
        for x, anchor, text in re.findall(
            r'<text x="([-\d.e]+)" y="66" font-size="12" text-anchor="(\w+)"[^>]*>([^<]*)<', svg
        )
    ]


@pytest.mark.parametrize(
    "lo, hi, point",
    [(0.0, 0.0376, 0.01), (0.0, 0.0001, 0.0), (0.02, 0.06, 0.04), (0.3, 0.31, 0.31)],
)
def test_interval_labels_stay_inside_the_view_box(lo, hi, point):
    # The view box is 360 units wide; a label "0.0000" at font size 12 is about 6 * 7 = 42
    # units wide. An end-anchored label must end at x >= 42 + margin, a start-anchored one
    # start at x <= 360 - 42 - margin, and the two must not overlap.
    (lo_x, lo_anchor, lo_text), (hi_x, hi_anchor, hi_text) = _number_line(lo, hi, point)
    assert (lo_anchor, hi_anchor) == ("end", "start")
    width = 7 * max(len(lo_text), len(hi_text))
    assert lo_x - width >= 0 and hi_x + width <= 360
    assert hi_x > lo_x


def test_channel_legend_covers_no_interval():
    from bayescal.channels.result import ChannelFit
    from bayescal.plotting.binary import channel_forest

    rng = np.random.default_rng(0)
    a0, b0 = np.array([0.07, 0.09, 0.08]), np.array([0.76, 0.73, 0.78])
    known = ChannelFit.known(a0, b0, annotators=["r1", "r2", "r3"])
    # a posterior-like fit: 400 draws around the known channels (intervals drawn as lines),
    # with the lowest annotator (r3) low in the b panel, where the legend used to sit
    fit = ChannelFit.from_draws(
        a0 + rng.normal(0, 0.01, (400, 3)),
        b0 + rng.normal(0, 0.02, (400, 3)),
        np.full((400, 1), 0.3),
        annotators=["r1", "r2", "r3"],
        groups=["all"],
        group_counts=[1000],
        method="test draws",
    )
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 2.75), sharey=True)
    channel_forest(fit, point=known, axes=axes)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = axes[1].get_legend().get_window_extent(renderer)
    for ax in axes:
        assert legend.y1 <= ax.get_window_extent(renderer).y0  # below the panel
        for line in ax.get_lines():
            assert not legend.overlaps(line.get_window_extent(renderer))
        for label in ax.get_xticklabels():
            assert not legend.overlaps(label.get_window_extent(renderer))
    plt.close(fig)
