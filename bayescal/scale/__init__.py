"""Out-of-core summaries with dask: data larger than memory, summarised chunk by chunk.

- :func:`summarize`: the public router, in memory or out of core, one call;
- :func:`summarize_dask`: wide rows (one per item, one column per annotator) from a dask
  DataFrame or CSV / Parquet files;
- :func:`summarize_long_dask`: one row per answer (item, annotator, label), regrouped by
  item with one dask shuffle.

Both summaries are ordinary :class:`~bayescal.Summary` objects, so every channel estimator,
PyMC model and NC-ECE (with intervals) runs on them unchanged; a histogram recalibration map
on the summary's own bins comes from :func:`bayescal.recal.histogram_map_from_summary`. dask
is an optional extra (``pip install "bayescal[dask]"``), imported only when these functions
run. See ``docs/scale.md``.
"""

from bayescal.scale._deps import DaskNotInstalledError, require
from bayescal.scale.dask_summaries import is_out_of_core_source, summarize_dask
from bayescal.scale.long import summarize_long_dask
from bayescal.scale.router import summarize

__all__ = [
    "summarize",
    "summarize_dask",
    "summarize_long_dask",
    "is_out_of_core_source",
    "DaskNotInstalledError",
    "require",
]
