"""Render an audit as one self-contained HTML file (Jinja2, autoescaped).

User strings (annotator names, group labels, warnings) are data: autoescape
turns ``<script>`` into text. Figures are inline base64 PNG; no network fetch.
"""

from __future__ import annotations

from importlib import resources


def _environment():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_load),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _load(name):
    return (
        resources.files("bayescal.report").joinpath("templates", name).read_text(encoding="utf-8")
    )


def render(result, template: str = "report.html") -> str:
    """HTML text of an audit result (anything with ``title``, ``sections``, ``summary``)."""
    return (
        _environment()
        .get_template(template)
        .render(title=result.title, sections=result.sections, summary=result.summary)
    )
