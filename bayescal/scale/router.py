"""The public ``summarize``: one entry point for data in memory and data out of core.

It sits above :mod:`bayescal.summaries` (which knows only the in-memory
container) so that the summaries layer never imports the out-of-core code: a
container goes to :func:`bayescal.summaries.summary.summarize`; a dask
DataFrame or a path / glob of CSV or Parquet files goes to
:func:`bayescal.scale.summarize_dask`. Both return the same
:class:`~bayescal.Summary`.
"""

from __future__ import annotations

from typing import Any

from bayescal._typing import Bins
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.scale.dask_summaries import is_out_of_core_source, summarize_dask
from bayescal.summaries.summary import DEFAULT_BINS, Summary
from bayescal.summaries.summary import summarize as summarize_in_memory

__all__ = ["summarize"]


def summarize(
    data: Annotations | Any,
    *,
    groups: Bins | str | None = None,
    bins: Bins = DEFAULT_BINS,
    bin_strategy: str = "uniform",
    **out_of_core: Any,
) -> Summary:
    """Pattern counts and (bin, pattern) cells of annotations, in memory or out of core.

    SPEC §1, §3: every statistic of the channel estimators and the noise-corrected
    errors (EM on pattern counts, NC-ECE from bin moments, the histogram map) is a
    function of these counts, for any number of classes, so a summary built chunk by
    chunk is as good as one built in memory.

    Parameters
    ----------
    data : Annotations, dask DataFrame, path, glob or list of paths
        A validated container, or wide rows out of core (one row per item, one
        column per annotator; CSV or Parquet; a binary ``score`` column or
        ``probs=[...]``, one column per class).
    groups : None, int, array-like or str
        Channel groups (see :func:`bayescal.summaries.summary.summarize`); out of
        core not ``"data"``.
    bins : int or array-like, default 10
        Evaluation bins.
    bin_strategy : {"uniform", "quantile"}
        Equal-width or (in memory only) equal-mass bins.
    **out_of_core
        Only with an out-of-core source: passed to
        :func:`bayescal.scale.summarize_dask` (``score`` or ``probs``, ``annotators``,
        ``truth``, ``gold``, ``client``, ``blocksize``, ...).

    Returns
    -------
    Summary

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> summarize(simulate_toy(1000, random_state=0), groups=5).n_items
    1000
    """
    container = isinstance(data, Annotations)
    if not container and is_out_of_core_source(data):
        return summarize_dask(
            data,
            groups=groups,
            bins=bins,
            bin_strategy=bin_strategy,
            **out_of_core,
        )
    if out_of_core:
        raise ConfigError(
            f"summarize got unexpected keyword(s) {sorted(out_of_core)}; they apply only to "
            "out-of-core sources (a dask DataFrame or a path / glob of CSV or Parquet files)."
        )
    if not container:
        raise DataError(
            f"summarize expects an Annotations container, a dask DataFrame or a path / glob of "
            f"CSV or Parquet files; got {type(data).__name__}. Build a container with "
            "Annotations.from_arrays, Annotations.from_long or load_csv."
        )
    return summarize_in_memory(data, groups=groups, bins=bins, bin_strategy=bin_strategy)
