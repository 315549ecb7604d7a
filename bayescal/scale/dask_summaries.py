"""Summaries of wide data larger than memory, built chunk by chunk with dask.

Each task reads one chunk (a byte range of a CSV file, a run of Parquet row
groups, or a partition of a dask DataFrame), validates it, and reduces it to a
:class:`~bayescal.Summary` with the same kernel as the in-memory path
(:func:`bayescal.summaries.summary.summarize_arrays`), for a binary score column
or one probability column per class. The summaries are then
added up in a tree (summaries of disjoint items add exactly), so memory holds
a few chunks and a few summaries at a time, whatever the number of items.

dask is optional: it is imported inside these functions, and a missing
install raises an error that gives the command ``pip install "bayescal[dask]"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescal._typing import Bins
from bayescal.data.container import check_role_clash
from bayescal.data.validation import (
    PROB_SUM_TOL,
    check_names,
    delimiter_hint,
    refuse_reference_like,
)
from bayescal.errors import ConfigError, DataError
from bayescal.scale._batch import WideSpec, add_all, summarize_batch, wide_arrays
from bayescal.scale._deps import require
from bayescal.scale.sources import (
    DEFAULT_BATCH_ROWS,
    DEFAULT_BLOCKSIZE,
    PartitionWhere,
    is_path_source,
    list_files,
    make_chunks,
    parse_blocksize,
    read_batches,
    read_header,
)
from bayescal.summaries.partition import make_edges
from bayescal.summaries.summary import Summary, resolve_groups

__all__ = [
    "summarize_dask",
    "is_dask_collection",
    "is_out_of_core_source",
    "compute",
    "probability_columns",
]

#: Summaries added per node of the reduction tree.
TREE_FAN_IN = 8


def is_dask_collection(obj: object) -> bool:
    """True for a dask DataFrame (checked without importing dask)."""
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(
        obj, "to_delayed"
    )


def is_out_of_core_source(obj: object) -> bool:
    """True when :func:`bayescal.summarize` should hand ``obj`` to :func:`summarize_dask`:
    a dask DataFrame, or a path / glob / URL (or a list of them) of CSV or Parquet files.

    Examples
    --------
    >>> is_out_of_core_source("audit/*.parquet"), is_out_of_core_source([0.1, 0.2])
    (True, False)
    """
    return is_dask_collection(obj) or is_path_source(obj)


def resolve_edges(
    groups: Bins | str | None, bins: Bins, bin_strategy: str = "uniform", *, n_classes: int = 2
) -> tuple[str, np.ndarray | None, np.ndarray]:
    """Grouping, group edges and bin edges fixed before the pass (every task uses the same).

    ``groups`` as in :func:`bayescal.summarize` except ``"data"`` (there is no group
    column out of core): ``None`` gives 5 equal-width score groups for two classes and
    the predicted class for more; an int or edges mean score groups for two classes and
    confidence groups for more.
    """
    if isinstance(bins, str) or (isinstance(groups, str) and groups == "data"):
        raise ConfigError(
            f"out-of-core summaries take bins as an int or explicit edges and groups as None, "
            f"an int, edges, 'score', 'confidence', 'predicted' or 'all'; got groups={groups!r}, "
            f"bins={bins!r}. User-defined groups (groups='data') are not supported out of core."
        )
    if bin_strategy != "uniform":
        raise ConfigError(
            "out-of-core summaries need score groups and bins fixed before the pass: pass an int "
            "(equal-width cells) or explicit edges. Equal-mass cells would need an extra quantile "
            "pass over every score; place them from a sample instead, for example "
            "bayescal.summaries.partition.equal_mass_edges(sample_scores, 10), "
            "and pass those edges."
        )
    grouping, group_edges, _ = resolve_groups(groups, None, n_classes=n_classes)
    return grouping, group_edges, make_edges(bins, what="bins")


def compute(
    obj: Any, *, client: Any = None, scheduler: str = "threads", workers: int | None = None
) -> Any:
    """Compute a dask object on ``client`` when given, else on a local scheduler."""
    dask = require("dask")
    if client is not None:
        return client.compute(obj, sync=True)
    if scheduler not in ("threads", "processes", "synchronous"):
        raise ConfigError(
            f"scheduler must be 'threads', 'processes' or 'synchronous'; got {scheduler!r}. "
            "For a cluster pass client=dask.distributed.Client(...)."
        )
    (out,) = dask.compute(obj, scheduler=scheduler, num_workers=workers)
    return out


def tree_sum(parts: list, fan_in: int = TREE_FAN_IN) -> Any:
    """Add delayed summaries in a tree of fan-in ``fan_in`` (a few summaries in memory at once)."""
    from dask import delayed

    if not parts:
        raise DataError("the source has no rows to summarise.")
    while len(parts) > 1:
        parts = [
            delayed(add_all, pure=True)(parts[i : i + fan_in]) for i in range(0, len(parts), fan_in)
        ]
    return parts[0]


def _summarize_file_chunk(chunk, spec: WideSpec, batch_rows: int):
    total = None
    # answers, truth and gold are class indices ("label"); probabilities are numbers
    roles = {c: "label" for c in spec.columns} | {c: "number" for c in spec.probs}
    for frame, where in read_batches(chunk, spec.columns, batch_rows, roles):
        s = summarize_batch(*wide_arrays(frame, spec, where), spec)
        total = s if total is None else total + s
    if total is None:  # an empty block: contributes nothing
        total = summarize_batch(*_empty(spec), spec)
    return total


def _summarize_partition(frame, partition: int, spec: WideSpec, batch_rows: int):
    missing = [c for c in spec.columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"partition {partition} of the dask DataFrame has no column(s) {missing!r}."
        )
    total = None
    for start in range(0, len(frame), batch_rows):
        part = frame.iloc[start : start + batch_rows]
        where = PartitionWhere(partition, start, part.index)
        s = summarize_batch(*wide_arrays(part, spec, where), spec)
        total = s if total is None else total + s
    if total is None:
        total = summarize_batch(*_empty(spec), spec)
    return total


def _empty(spec: WideSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    y = np.zeros(0) if spec.truth is not None else None
    g = np.zeros(0) if spec.gold is not None else None
    p = np.zeros(0) if len(spec.probs) == 1 else np.zeros((0, len(spec.probs)))
    return p, np.zeros((0, len(spec.annotators)), dtype=np.float32), y, g


def _annotator_columns(columns, probs, truth, item, annotators, where: str, gold=None):
    reserved = {c for c in (*probs, truth, item, gold) if c is not None}
    for col in reserved:
        if col not in columns:
            raise DataError(
                f"{where} has no column {col!r}; columns are {list(columns)!r}."
                + delimiter_hint(columns)
            )
    if annotators is None:
        annotators = [c for c in columns if c not in reserved]
        if not annotators:
            raise DataError(f"{where} has no annotator columns besides {sorted(reserved)!r}.")
        refuse_reference_like(annotators, where)
    else:
        annotators = [str(a) for a in annotators]
        missing = [c for c in annotators if c not in columns]
        if missing:
            raise DataError(
                f"{where} has no annotator column(s) {missing!r}; columns are {list(columns)!r}."
            )
        for column in probs:
            check_role_clash(annotators, score=column, truth=truth, item=item, gold=gold)

    check_names(annotators, len(annotators))
    return annotators


def probability_columns(
    score: str | None, probs: list[str] | None, classes: list[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The probability columns and class names of an out-of-core source.

    A binary score column (``score``, default ``"score"``) stands for ``p_1`` of the
    classes ``"0"``, ``"1"``; ``probs`` lists one column per class, in class order,
    named by ``classes`` (default the column names).
    """
    if probs is None:
        if classes is not None:
            raise ConfigError("classes= names the columns of probs=[...]; give probs too.")
        return ("score" if score is None else str(score),), ("0", "1")
    if score is not None:
        raise ConfigError(
            "give either score= (the binary score column) or probs=[...] (one column per "
            "class), not both."
        )
    if isinstance(probs, str) or len(probs) < 2:
        raise ConfigError(
            f"probs must list one column per class (at least two), in class order; got {probs!r}."
        )
    columns = tuple(str(c) for c in probs)
    if len(set(columns)) != len(columns):
        raise ConfigError(f"probs lists a column twice: {list(columns)!r}.")
    names = columns if classes is None else tuple(str(c) for c in classes)
    check_names(list(names), len(columns), "class")
    return columns, names


def summarize_dask(
    source: Any,
    *,
    score: str | None = None,
    probs: list[str] | None = None,
    classes: list[str] | None = None,
    sum_tol: float = PROB_SUM_TOL,
    annotators: list[str] | None = None,
    truth: str | None = None,
    item: str | None = None,
    gold: str | None = None,
    groups: Bins | str | None = None,
    bins: Bins = 10,
    bin_strategy: str = "uniform",
    client: Any = None,
    scheduler: str = "threads",
    workers: int | None = None,
    blocksize: int | str = DEFAULT_BLOCKSIZE,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    format: str | None = None,
    return_graph: bool = False,
) -> Summary | Any:
    """Summarise wide data larger than memory (one row per item, one column per annotator).

    SPEC §1, §3 (every statistic of the channel estimators and the noise-corrected
    errors is a function of the response pattern and the probabilities' bins, so chunk
    summaries add up to the summary of the whole), for any number of classes.

    Parameters
    ----------
    source : dask.dataframe.DataFrame, str, Path or list of them
        A dask DataFrame, or CSV / Parquet files given as a path, a directory, a glob
        (``"audit/part-*.parquet"``), an fsspec URL, or a list of those. Labels are class
        indices (0, 1 for binary data) or missing (a blank CSV cell, a Parquet null or NaN).
    score : str, optional
        Binary data: the column of predicted probabilities ``p_1`` in [0, 1] (default
        ``"score"`` when ``probs`` is not given).
    probs : list of str, optional
        Multiclass data: one probability column per class, in class order; each row in
        [0, 1] and summing to one within ``sum_tol``.
    classes : list of str, optional
        Class names of the ``probs`` columns (default the column names).
    sum_tol : float, default :data:`bayescal.data.multiclass.PROB_SUM_TOL`
    annotators : list of str, optional
        Annotator columns, in the order the summary uses; default every column other than
        ``score``, ``truth`` and ``item`` (in the first file's column order).
    truth : str, optional
        Column of clean 0/1 labels (simulations and benchmarks).
    item : str, optional
        An item-id column to leave out of the annotators (rows are assumed to be distinct items;
        for one row per answer use :func:`bayescal.scale.summarize_long_dask`).
    gold : str, optional
        Column with the known class of gold items, blank / null for the others
        (``models/gold.md``): their counts go to the summary's gold tables, exactly as
        in memory.
    groups : None, int, array-like or str
        Channel groups as in :func:`bayescal.summarize` (not ``"data"``): default 5
        equal-width score groups for two classes, the predicted class for more.
    bins : int or array-like
        Evaluation bins: an int gives equal-width cells, an array explicit edges (0 first,
        1 last). Equal-mass cells are refused (they need a quantile pass); compute edges
        from a sample and pass them.
    bin_strategy : {"uniform"}
        Only ``"uniform"``; present so that calls written for :func:`bayescal.summarize` fail
        clearly instead of silently changing the bins.
    client : dask.distributed.Client, optional
        Run on this cluster; by default a local threaded scheduler runs the tasks.
    scheduler : {"threads", "processes", "synchronous"}, default "threads"
        Local scheduler when no client is given.
    workers : int, optional
        Threads (or processes) of the local scheduler; default one per core.
    blocksize : int or str, default "32MiB"
        Bytes of a CSV file per task (files are cut at line ends). ``None`` reads each
        file as one task. Compressed CSV files are always one task each.
    batch_rows : int, default 1048576
        Rows converted to arrays at once inside a task; with ``blocksize`` it bounds the
        memory of each task (about 100 bytes per row for K = 3).
    format : {None, "csv", "parquet"}
        File format; default from the file names.
    return_graph : bool, default False
        Return the lazy ``dask.delayed`` summary instead of computing it (to combine
        with other work in one ``dask.compute``).

    Returns
    -------
    Summary
        Equal to ``bayescal.summarize`` on the same items loaded in memory (integer counts
        exactly, float sums up to rounding).

    Raises
    ------
    DataError
        A bad value, naming the file and line (CSV), the file and row (Parquet) or the
        partition and row (dask DataFrame); a missing column; no rows.
    ConfigError
        Equal-mass bins, an unknown scheduler, or dask not installed (the message gives
        ``pip install "bayescal[dask]"``).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> for i, rows in enumerate(["0.1,0,0,\\n0.8,1,,1\\n", "0.4,0,1,0\\n"]):
    ...     _ = open(os.path.join(d, f"part-{i}.csv"), "w").write("score,r1,r2,r3\\n" + rows)
    >>> s = summarize_dask(os.path.join(d, "*.csv"), groups=2, bins=5)
    >>> s.n_items, s.annotators
    (3, ['r1', 'r2', 'r3'])
    """
    require("dask", "out-of-core summaries")
    from dask import delayed

    prob_columns, class_names = probability_columns(score, probs, classes)
    grouping, group_edges, bin_edges = resolve_edges(
        groups, bins, bin_strategy, n_classes=len(class_names)
    )
    if int(batch_rows) < 1:
        raise ConfigError(f"batch_rows must be a positive number of rows; got {batch_rows!r}.")
    batch_rows = int(batch_rows)

    def wide_spec(names) -> WideSpec:
        return WideSpec(
            prob_columns,
            tuple(names),
            truth,
            bin_edges,
            grouping,
            group_edges,
            class_names,
            gold,
            sum_tol,
        )

    if is_dask_collection(source):
        names = _annotator_columns(
            list(source.columns), prob_columns, truth, item, annotators, "the dask DataFrame", gold
        )
        spec = wide_spec(names)
        parts = [
            delayed(_summarize_partition, pure=True)(p, i, spec, batch_rows)
            for i, p in enumerate(source[spec.columns].to_delayed())
        ]
    elif is_path_source(source):
        require("pyarrow", "reading Parquet files")
        fs, paths, fmt = list_files(source, format)
        names = None
        for path in paths:
            header = read_header(fs, path, fmt)
            found = _annotator_columns(
                header,
                prob_columns,
                truth,
                item,
                annotators if names is None else names,
                f"file {path!r}",
                gold,
            )
            if names is not None and annotators is None:
                # the annotators were read off the first file: a later file with other
                # annotator columns would have them ignored (or missing) without a word
                here = _annotator_columns(
                    header, prob_columns, truth, item, None, f"file {path!r}", gold
                )
                if set(here) != set(names):
                    extra = [c for c in here if c not in names]
                    raise DataError(
                        f"file {path!r} has annotator columns {here!r}, but {paths[0]!r} (read "
                        f"first) has {names!r}"
                        + (f": {extra!r} would be ignored" if extra else "")
                        + ". Every file of a folder needs the same columns; give --annotators "
                        "(annotators= in Python) to name the ones to read, with a blank cell "
                        "where an annotator did not answer."
                    )
            names = names or found
        spec = wide_spec(names)
        chunks = make_chunks(fs, paths, fmt, parse_blocksize(blocksize), batch_rows)
        parts = [delayed(_summarize_file_chunk, pure=True)(c, spec, batch_rows) for c in chunks]
    else:
        raise DataError(
            "summarize_dask expects a dask DataFrame or a path / glob of CSV or Parquet "
            f"files; got {type(source).__name__}. In-memory data go through bayescal.summarize."
        )
    total = tree_sum(parts)
    if return_graph:
        return total
    summary = compute(total, client=client, scheduler=scheduler, workers=workers)
    n_gold = int(summary.n_gold.sum())
    if summary.n_items + n_gold == 0 and int(summary.n_unannotated.values.sum()) == 0:
        raise DataError("the source has no data rows (only headers or empty partitions).")
    if summary.n_items + n_gold == 0:
        raise DataError(
            "no item in the source has an answer (every label is missing); check the annotator "
            "columns and the missing-value coding."
        )
    return summary
