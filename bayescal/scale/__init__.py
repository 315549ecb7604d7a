"""Out-of-core summaries with dask: data larger than memory, summarised chunk by chunk.

- :func:`summarize_dask`: wide rows (one per item, one column per annotator) from a dask
  DataFrame or CSV / Parquet files;
- :func:`summarize_long_dask`: one row per answer (item, annotator, label), regrouped by
  item with one dask shuffle;
- :func:`histogram_map_from_summary`: a histogram recalibration map on the summary's own
  bins, from counts only.

Both summaries are ordinary :class:`~bayescal.Summary` objects, so every channel estimator,
PyMC model and NC-ECE (with intervals) runs on them unchanged. dask is an optional extra
(``pip install "bayescal[dask]"``), imported only when these functions run. See
``docs/scale.md``.
"""

from bayescal.scale._deps import DaskNotInstalledError
from bayescal.scale.dask_summaries import is_out_of_core_source, summarize_dask
from bayescal.scale.long import summarize_long_dask
from bayescal.scale.recal import histogram_map_from_summary

__all__ = [
    "summarize_dask",
    "summarize_long_dask",
    "histogram_map_from_summary",
    "is_out_of_core_source",
    "DaskNotInstalledError",
]
