"""Sphinx configuration of the bayescal documentation site.

Build (warnings are errors, as in ``tests/test_docs_build.py``)::

    pip install -e ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

Sources: this folder's Markdown (user guide), ``README.md`` and ``CHANGELOG.md`` through
include pages, the model cards (``docs/models`` links to ``models/``), the committed executed
notebooks as the gallery (``docs/gallery`` links to ``notebooks/``; rendered, never executed),
and the API reference written from the public modules' ``__all__`` (``_ext/bayescal_api.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# Document this checkout, whatever an editable install elsewhere points at.
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

from bayescal import __version__  # noqa: E402

project = "bayescal"
author = "bayescal developers"
copyright = "2026, bayescal developers"
version = release = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",  # registers myst_parser for the Markdown pages too
    "bayescal_api",
    "bayescal_gallery",
]

root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "results", "img", "**/.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]

# --- references: an unresolvable cross-reference is a warning (-W: an error) ---------------
nitpicky = True
# Types from other libraries: no inventories are fetched (the build needs no network).
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|xarray|xr|pandas|pd|scipy|pymc|pm|arviz|az|matplotlib|mpl|plt)\..*"),
    (r"py:.*", r"(sklearn|dask|pytensor|nutpie|numba|jinja2|crowdkit|threadpoolctl)\..*"),
    (r"py:.*", r"(typing|collections|os|pathlib|signal|logging|dataclasses|enum|abc)\..*"),
    (r"py:.*", r"(array-like|array_like|ndarray|DataArray|Dataset|DataFrame|InferenceData)"),
]

# --- autodoc / autosummary / numpydoc -------------------------------------------------------
autosummary_generate = True
autosummary_ignore_module_all = False
# Types are in the numpydoc Parameters/Returns sections; annotations in signatures would
# name private module paths and third-party types with no inventory to link to.
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"exclude-members": "__init__"}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --- MyST and notebooks ---------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # the gallery shows the committed outputs; nothing is executed
nb_merge_streams = True

# --- HTML -----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bayescal {__version__}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_show_sourcelink = False
