"""Show the audit reports embedded in the gallery's notebooks in a frame of their own.

An audit renders itself in Jupyter as a complete HTML document (``Report._repr_html_``)
whose stylesheet styles ``body``, ``header``, ``main``, ``nav`` and ``section``. Inlined into
a documentation page, that stylesheet would restyle the page around it; inside an
``<iframe srcdoc=...>`` it styles only the report, as it does when the report is opened
from ``report.html``. Other HTML outputs (tables, xarray's repr) stay inline.
"""

from __future__ import annotations

import html

from docutils import nodes
from sphinx.application import Sphinx

#: the frame's height; the report scrolls inside it
FRAME_HEIGHT = "760px"


def is_document(node: nodes.raw) -> bool:
    start = node.astext().lstrip()[:200].lower()
    return "html" in node.get("format", "").split() and start.startswith("<!doctype html")


def frame(source: str) -> str:
    return (
        f'<iframe class="bayescal-report" title="bayescal audit report" loading="lazy" '
        f'style="width: 100%; height: {FRAME_HEIGHT}; border: 1px solid #d0d7de; '
        f'border-radius: 6px;" srcdoc="{html.escape(source, quote=True)}"></iframe>'
    )


def frame_reports(app: Sphinx, doctree: nodes.document) -> None:
    for node in list(doctree.findall(nodes.raw)):
        if is_document(node):
            node.replace_self(nodes.raw("", frame(node.astext()), format="html"))


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", frame_reports)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
