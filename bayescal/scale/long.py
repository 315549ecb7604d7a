"""Long-format data at scale: one row per answer, regrouped by item with one dask shuffle.

Crowdsourcing exports list answers ``(item, annotator, label)`` in arbitrary
order across many files, so an item's response pattern is known only once all
its rows meet. :func:`summarize_long_dask`

1. reads every chunk (CSV byte range, Parquet row groups, dask partition) and
   validates it where it is, so a bad row is named by file and line;
2. encodes annotators as small integers and appends the per-item score table
   (when scores or class probabilities come separately) as extra rows with
   annotator code -1;
3. shuffles all rows on the item id (``DataFrame.shuffle``: one all-to-all
   exchange of every row; each output partition then holds all rows of its
   items, about ``rows / npartitions`` rows);
4. per output partition, refuses repeated (item, annotator) pairs, pivots to a
   wide item x annotator array and reduces it with the in-memory kernel;
5. adds the partition summaries in a tree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescal._typing import Bins
from bayescal.data.validation import PROB_SUM_TOL, check_id_spellings, check_names, show_value
from bayescal.errors import ConfigError, DataError
from bayescal.scale._batch import (
    check_class_values,
    check_prob_rows,
    check_score_values,
    numeric_column,
)
from bayescal.scale._deps import require
from bayescal.scale.dask_summaries import (
    compute,
    is_dask_collection,
    probability_columns,
    resolve_edges,
    tree_sum,
)
from bayescal.scale.sources import (
    DEFAULT_BATCH_ROWS,
    DEFAULT_BLOCKSIZE,
    Chunk,
    CsvWhere,
    ParquetWhere,
    PartitionWhere,
    is_path_source,
    list_files,
    make_chunks,
    parse_blocksize,
    read_batches,
    read_header,
)
from bayescal.summaries.summary import Summary, summarize_arrays

__all__ = ["summarize_long_dask"]

_SCORE_ROW = -1  # annotator code of a row from the per-item score table


# ------------------------------------------------------------------ locating rows
class _Locator:
    """Turn (chunk id, row within chunk) back into 'file ..., line ...' on error only."""

    def __init__(self, entries):
        self.entries = entries  # per chunk id: ("file", Chunk) or ("partition", what, number)

    def __call__(self, chunk_id: int, row: int) -> str:
        entry = self.entries[int(chunk_id)]
        if entry[0] == "partition":
            return (
                f"partition {entry[2]} of the {entry[1]} dask "
                f"DataFrame, row {int(row) + 1} of that partition"
            )
        chunk = entry[1]
        if chunk.fmt == "csv":
            return CsvWhere(chunk, 0)(int(row))
        return ParquetWhere(chunk.path, chunk.row_offset)(int(row))


class _SourceReader:
    """One side (answers or scores) of the input: chunks plus how to read them."""

    def __init__(self, source, what: str, columns: list[str], fmt, blocksize, batch_rows):
        self.what, self.columns, self.batch_rows = what, columns, batch_rows
        # per chunk id: ("partition", what, number) for a dask frame, ("file", Chunk) for files
        self.entries: list[tuple[str, str, int] | tuple[str, Chunk]]
        if is_dask_collection(source):
            missing = [c for c in columns if c not in source.columns]
            if missing:
                raise DataError(
                    f"the {what} dask DataFrame has no column(s) {missing!r}; columns are "
                    f"{list(source.columns)!r}."
                )
            self.kind = "dask"
            self.frame = source[columns]
            self.entries = [("partition", what, i) for i in range(self.frame.npartitions)]
            self.item_dtype = self.frame.dtypes[columns[0]]
        elif is_path_source(source):
            require("pyarrow", "reading Parquet files")
            fs, paths, fmt = list_files(source, fmt)
            item_types = set()
            for path in paths:
                header = read_header(fs, path, fmt)
                missing = [c for c in columns if c not in header]
                if missing:
                    raise DataError(
                        f"{what} file {path!r} has no column(s) "
                        f"{missing!r}; columns are {header!r}."
                    )
                item_types.add(_file_item_kind(fs, path, fmt, columns[0]))
            self.kind = "files"
            self.fmt = fmt
            self.chunks = make_chunks(fs, paths, fmt, parse_blocksize(blocksize), batch_rows)
            self.entries = [("file", c) for c in self.chunks]
            self.item_dtype = np.dtype(np.int64) if item_types == {"int"} else np.dtype(object)
        else:
            raise DataError(
                f"the {what} must be a dask DataFrame or a path / glob "
                f"of CSV or Parquet files; got {type(source).__name__}."
            )

    def item_is_int(self) -> bool:
        from pandas.api.types import is_integer_dtype

        return bool(is_integer_dtype(self.item_dtype))

    def frames(self, convert, offset: int):
        """Delayed converted pandas frames, one per chunk; chunk ids start at ``offset``."""
        from dask import delayed

        if self.kind == "dask":
            return [
                delayed(_convert_partition, pure=True)(p, convert, offset + i)
                for i, p in enumerate(self.frame.to_delayed())
            ]
        return [
            delayed(_convert_chunk, pure=True)(
                c, self.columns, self.batch_rows, convert, offset + i
            )
            for i, c in enumerate(self.chunks)
        ]


def _file_item_kind(fs, path, fmt, item) -> str:
    if fmt == "csv":
        return "str"  # CSV ids are read as text: "007" and "7" are different items
    import pyarrow as pa
    import pyarrow.parquet as pq

    with fs.open(path, "rb") as fh:
        typ = pq.ParquetFile(fh).schema_arrow.field(item).type
    return "int" if pa.types.is_integer(typ) else "str"


# ------------------------------------------------------------------ conversion (before the shuffle)
class _Convert:
    """Validate one batch of answer or score rows and bring it to the shuffle layout."""

    def __init__(
        self,
        *,
        kind,
        item,
        annotator=None,
        label=None,
        probs=(),
        n_probs=1,
        n_classes=2,
        sum_tol=PROB_SUM_TOL,
        truth=None,
        gold=None,
        annotators=None,
        item_int=False,
    ):
        self.kind, self.item, self.annotator, self.label = kind, item, annotator, label
        self.probs, self.n_probs, self.n_classes = tuple(probs), n_probs, n_classes
        self.sum_tol = sum_tol
        self.truth, self.annotators, self.item_int = truth, annotators, item_int
        self.gold = gold

    def __call__(self, frame, where, chunk_id: int, first_row: int):
        import pandas as pd

        n = len(frame)
        ids = frame[self.item]
        bad = ids.isna().to_numpy()
        if bad.any():
            raise DataError(
                f"{where(int(np.flatnonzero(bad)[0]))}: the item id {self.item!r} is missing."
            )
        ids = ids.astype(np.int64) if self.item_int else ids.astype(str).astype(object)
        out = {"item": ids.to_numpy()}
        if self.kind == "answers":
            names = frame[self.annotator].astype(str)
            code = pd.Index(self.annotators).get_indexer(names)
            bad = code < 0
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise DataError(
                    f"{where(r)}: annotator {names.iloc[r]!r} is not among the annotators "
                    f"{list(self.annotators)!r}; add it to "
                    "annotators=[...] or leave annotators=None."
                )
            lab = numeric_column(frame[self.label], f"label column {self.label!r}", where)
            miss = np.isnan(lab)
            if miss.any():
                raise DataError(
                    f"{where(int(np.flatnonzero(miss)[0]))}: label column {self.label!r} is "
                    "blank; in a long table a missing answer is a missing row, not a blank label."
                )
            check_class_values(lab, "label", self.label, where, self.n_classes)
            out["ann"] = code.astype(np.int16)
            out["label"] = lab.astype(np.float32)
        else:
            out["ann"] = np.full(n, _SCORE_ROW, dtype=np.int16)
            out["label"] = np.full(n, np.nan, dtype=np.float32)
        # the per-item columns (in the answer rows, or in the score table): NaN when not given
        if not self.probs:
            for key in _prob_keys(self.n_probs):
                out[key] = np.full(n, np.nan)
        elif len(self.probs) == 1:
            x = numeric_column(frame[self.probs[0]], f"score column {self.probs[0]!r}", where)
            check_score_values(x, self.probs[0], where)
            out[_prob_keys(1)[0]] = x
        else:
            p = np.column_stack(
                [numeric_column(frame[c], f"probability column {c!r}", where) for c in self.probs]
            )
            check_prob_rows(p, self.probs, self.sum_tol, where)
            for key, col in zip(_prob_keys(self.n_probs), p.T):
                out[key] = col
        for key, column in (("truth", self.truth), ("gold", self.gold)):
            if column is None:
                out[key] = np.full(n, np.nan, dtype=np.float32)
            else:
                x = numeric_column(frame[column], f"{key} column {column!r}", where)
                check_class_values(x, key, column, where, self.n_classes)
                out[key] = x.astype(np.float32)
        out["_chunk"] = np.full(n, chunk_id, dtype=np.int32)
        out["_row"] = np.arange(first_row, first_row + n, dtype=np.int64)
        return pd.DataFrame(out)


def _prob_keys(n_probs: int) -> list[str]:
    """Shuffle-layout columns of the per-item probabilities (one for a binary score)."""
    return [f"prob_{k}" for k in range(n_probs)]


def _convert_chunk(chunk, columns, batch_rows, convert, chunk_id):
    import pandas as pd

    roles = {convert.item: "id", convert.annotator: "id", convert.label: "label"}
    roles |= {c: "number" for c in convert.probs}
    roles |= {convert.truth: "label", convert.gold: "label"}
    parts, first = [], 0
    for frame, where in read_batches(chunk, columns, batch_rows, roles):
        parts.append(convert(frame, where, chunk_id, first))
        first += len(frame)
    if not parts:
        return _empty_layout(convert.item_int, convert.n_probs)
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def _convert_partition(frame, convert, chunk_id):
    frame = frame.reset_index(drop=True)
    where = PartitionWhere(chunk_id, 0, frame.index)
    return convert(frame, where, chunk_id, 0)


def _empty_layout(item_int: bool, n_probs: int):
    import pandas as pd

    return pd.DataFrame(
        {
            "item": np.zeros(0, dtype=np.int64 if item_int else object),
            "ann": np.zeros(0, dtype=np.int16),
            "label": np.zeros(0, dtype=np.float32),
            **{key: np.zeros(0) for key in _prob_keys(n_probs)},
            "truth": np.zeros(0, dtype=np.float32),
            "gold": np.zeros(0, dtype=np.float32),
            "_chunk": np.zeros(0, dtype=np.int32),
            "_row": np.zeros(0, dtype=np.int64),
        }
    )


# ------------------------------------------------------------------ per item (after the shuffle)
def _first_repeat(key: np.ndarray):
    """Positions (i, j) of two entries with the same key, or None."""
    order = np.argsort(key, kind="stable")
    same = key[order][1:] == key[order][:-1]
    if not same.any():
        return None
    t = int(np.flatnonzero(same)[0])
    return int(order[t]), int(order[t + 1])


def _summarize_items(frame, spec, locate):
    import pandas as pd

    k = len(spec["annotators"])
    codes, ids = pd.factorize(frame["item"], sort=False)
    n_items = ids.size
    ann = frame["ann"].to_numpy()
    lab = frame["label"].to_numpy()
    src = frame["_chunk"].to_numpy()
    row = frame["_row"].to_numpy()

    def first_row_of(c: int) -> str:  # only for a refusal: where item code c first appears
        r = int(np.argmax(codes == c))
        return locate(src[r], row[r])

    check_id_spellings(np.asarray(ids, dtype=object), first_row_of)
    answers = ann >= 0
    ai, aa = codes[answers], ann[answers].astype(np.int64)
    rep = _first_repeat(ai * k + aa)
    if rep is not None:
        i, j = np.flatnonzero(answers)[list(rep)]
        agree = (
            "the same label"
            if lab[i] == lab[j]
            else f"different labels ({lab[i]:g} and {lab[j]:g})"
        )
        raise DataError(
            f"item {show_value(ids[codes[i]])} has two answers from annotator "
            f"{spec['annotators'][ann[i]]!r} "
            f"with {agree}: {locate(src[i], row[i])} and {locate(src[j], row[j])}. One annotator "
            "gives one label per item; remove or resolve the duplicate rows."
        )
    wide = np.full((n_items, k), np.nan, dtype=np.float32)
    wide[ai, aa] = lab[answers]
    has_answer = np.zeros(n_items, dtype=bool)
    has_answer[ai] = True

    keys = _prob_keys(len(spec["probs"]))
    z = np.column_stack([frame[key].to_numpy() for key in keys])  # (rows, 1 or C)
    y = frame["truth"].to_numpy()
    g = frame["gold"].to_numpy().astype(np.float64)
    gold = None
    if spec["separate_scores"]:
        s_rows = np.flatnonzero(~answers)
        rep = _first_repeat(codes[s_rows])
        if rep is not None:
            i, j = s_rows[list(rep)]
            raise DataError(
                f"item {show_value(ids[codes[i]])} has two rows in the score table: "
                f"{locate(src[i], row[i])} "
                f"and {locate(src[j], row[j])}. Each item needs exactly one score."
            )
        score = np.full((n_items, z.shape[1]), np.nan)
        score[codes[s_rows]] = z[s_rows]
        truth = np.full(n_items, np.nan)
        truth[codes[s_rows]] = y[s_rows]
        if spec["gold"] is not None:  # absent from the score table: not a gold item
            gold = np.full(n_items, np.nan)
            gold[codes[s_rows]] = g[s_rows]
        orphan = has_answer & np.isnan(score[:, 0])
        if orphan.any():
            item_code = int(np.flatnonzero(orphan)[0])
            r = int(np.flatnonzero(answers & (codes == item_code))[0])
            raise DataError(
                f"item {show_value(ids[item_code])} has answers (for example "
                f"{locate(src[r], row[r])}) "
                "but no row in the score table; give every annotated item a score."
            )
    else:
        # the score (and truth) is repeated on every answer row: it must agree within an item
        score = np.column_stack(
            [
                _per_item_constant(codes, z[:, k], n_items, what, ids, src, row, locate)
                for k, what in enumerate(_prob_names(spec["probs"]))
            ]
        )
        truth = None
        if spec["truth"] is not None:
            truth = _per_item_constant(codes, y, n_items, "truth", ids, src, row, locate)
        if spec["gold"] is not None:
            # blank rows count as -1 so that "blank on one row, 1 on another" is a conflict
            coded = np.where(np.isnan(g), -1.0, g)
            what = "gold class (blank shown as -1)"
            known = _per_item_constant(codes, coded, n_items, what, ids, src, row, locate)
            gold = np.where(known < 0, np.nan, known)
    return summarize_arrays(
        score[:, 0] if score.shape[1] == 1 else score,
        wide,
        annotators=spec["annotators"],
        classes=spec["classes"],
        bin_edges=spec["bin_edges"],
        grouping=spec["grouping"],
        group_edges=spec["group_edges"],
        truth=truth if spec["truth"] is not None else None,
        gold=gold,
    )


def _prob_names(columns) -> list[str]:
    """How messages name the per-item probability columns."""
    if len(columns) == 1:
        return ["score"]
    return [f"probability {c!r}" for c in columns]


def _per_item_constant(codes, values, n_items, what, ids, src, row, locate):
    lo = np.full(n_items, np.inf)
    hi = np.full(n_items, -np.inf)
    np.minimum.at(lo, codes, values)
    np.maximum.at(hi, codes, values)
    differ = lo != hi
    if differ.any():
        c = int(np.flatnonzero(differ)[0])
        rows = np.flatnonzero(codes == c)
        i = rows[np.argmin(values[rows])]
        j = rows[np.argmax(values[rows])]
        raise DataError(
            f"item {show_value(ids[c])} has different {what} values on its rows "
            f"({float(values[i])!r} at {locate(src[i], row[i])}, {float(values[j])!r} at "
            f"{locate(src[j], row[j])}); an item "
            f"has one {what}."
        )
    return lo


# ------------------------------------------------------------------ public
def summarize_long_dask(
    source: Any,
    *,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    score: str | None = None,
    probs: list[str] | None = None,
    classes: list[str] | None = None,
    sum_tol: float = PROB_SUM_TOL,
    scores: Any = None,
    truth: str | None = None,
    gold: str | None = None,
    annotators: list[str] | None = None,
    groups: Bins | str | None = None,
    bins: Bins = 10,
    bin_strategy: str = "uniform",
    npartitions: int | None = None,
    client: Any = None,
    scheduler: str = "threads",
    workers: int | None = None,
    blocksize: int | str = DEFAULT_BLOCKSIZE,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    format: str | None = None,
    scores_format: str | None = None,
    return_graph: bool = False,
) -> Summary | Any:
    """Summarise long data larger than memory: one row per (item, annotator, label) answer.

    SPEC §1, §3 (pattern counts and (bin, pattern) cells, for any number of classes).

    Parameters
    ----------
    source : dask.dataframe.DataFrame, str, Path or list of them
        The answers: a dask DataFrame or CSV / Parquet files (path, directory, glob, URL)
        with columns ``item``, ``annotator`` and ``label`` (a class index: 0 / 1 for binary
        data; a missing answer is a missing row), in any order across files.
    item, annotator, label : str
        Column names of the answers (as in :meth:`bayescal.Annotations.from_long`).
    score : str, optional
        Binary data: the column holding the item's score (default ``"score"`` when
        ``probs`` is not given): in the answer rows (repeated, and required to agree
        within an item) when ``scores`` is None, else in the score table.
    probs : list of str, optional
        Multiclass data: one probability column per class, in class order, where the
        score would be (answer rows or score table), summing to one within ``sum_tol``.
    classes : list of str, optional
        Class names of the ``probs`` columns (default the column names).
    sum_tol : float, default :data:`bayescal.data.multiclass.PROB_SUM_TOL`
    scores : dask.dataframe.DataFrame, str, Path or list, optional
        A per-item table with columns ``item`` and the score or ``probs`` (and ``truth``).
        Items in it without answers are counted as unannotated; answers for an item
        missing from it are refused.
    truth : str, optional
        Column of clean classes (in the same table as the score).
    gold : str, optional
        Column with the known class of gold items, blank / null for the others
        (``models/gold.md``), in the same table as the score: repeated on every answer row
        of the item (rows that disagree, a blank row included, are a ``DataError`` naming
        the item and both rows), or once in the score table (items absent from it are not
        gold). Their counts go to the summary's gold tables, exactly as
        ``summarize(Annotations.from_long(..., gold=...))``.
    annotators : list, optional
        Annotator names in summary order. Default: every name found, sorted as text (which
        costs one extra read of the annotator column). Names are compared as text.
    groups, bins, bin_strategy
        As in :func:`bayescal.scale.summarize_dask` (int or explicit edges).
    npartitions : int, optional
        Partitions after the shuffle on item; default as many as input chunks. Each holds
        about ``rows / npartitions`` rows (~40 bytes per row plus the item id). The shuffle
        itself moves every row once: on the local threaded scheduler it holds all answer
        rows in memory at once (about 80 bytes per answer, measured); on a
        ``dask.distributed`` cluster (``client=``) the P2P shuffle buffers to disk. For
        more answers than that, use a cluster or write the data wide once.
    client, scheduler, workers, blocksize, batch_rows, format
        As in :func:`bayescal.scale.summarize_dask`; ``scores_format`` is the score table's
        ``format``.
    return_graph : bool, default False
        Return the lazy summary instead of computing it.

    Returns
    -------
    Summary
        Equal to ``summarize(Annotations.from_long(...))`` on the same rows (with the same
        annotator order).

    Raises
    ------
    DataError
        Two rows for one (item, annotator) pair (naming the item, the annotator and both rows'
        file and line), a bad label, score or gold class (file and line), an item whose rows
        disagree on its score or gold class, an annotated item without a score.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "a.csv"), "w").write("item,annotator,label\\nx,ann,1\\ny,bob,0\\n")
    >>> _ = open(os.path.join(d, "b.csv"), "w").write("item,annotator,label\\nx,bob,1\\n")
    >>> _ = open(os.path.join(d, "scores.csv"), "w").write("item,score\\nx,0.9\\ny,0.2\\nz,0.5\\n")
    >>> s = summarize_long_dask([os.path.join(d, "a.csv"), os.path.join(d, "b.csv")],
    ...                         scores=os.path.join(d, "scores.csv"), groups=2, bins=2)
    >>> s.n_items, int(s.n_unannotated.sum()), s.annotators
    (2, 1, ['ann', 'bob'])
    """
    require("dask", "out-of-core summaries")
    import dask.dataframe as dd

    prob_columns, class_names = probability_columns(score, probs, classes)
    n_classes = len(class_names)
    grouping, group_edges, bin_edges = resolve_edges(
        groups, bins, bin_strategy, n_classes=n_classes
    )
    batch_rows = int(batch_rows)
    if batch_rows < 1:
        raise ConfigError(f"batch_rows must be a positive number of rows; got {batch_rows!r}.")
    separate = scores is not None
    per_item = [*prob_columns] + [c for c in (truth, gold) if c]
    if gold is not None and gold in {item, annotator, label, *prob_columns, truth}:
        raise ConfigError(
            f"gold={gold!r} is also the item, annotator, label, score or truth column; name the "
            "column that holds the gold classes."
        )
    answer_cols = [item, annotator, label] + ([] if separate else per_item)
    answers = _SourceReader(source, "answers", answer_cols, format, blocksize, batch_rows)
    readers = [answers]
    if separate:
        score_cols = [item, *per_item]
        readers.append(
            _SourceReader(scores, "score table", score_cols, scores_format, blocksize, batch_rows)
        )
    item_int = all(r.item_is_int() for r in readers)

    if annotators is None:
        annotators = _find_annotators(answers, annotator, client, scheduler, workers)
    else:
        annotators = [str(a) for a in annotators]

    check_names(annotators, len(annotators))

    common = {"n_probs": len(prob_columns), "n_classes": n_classes, "sum_tol": sum_tol}
    conv_answers = _Convert(
        kind="answers",
        item=item,
        annotator=annotator,
        label=label,
        probs=() if separate else prob_columns,
        **common,
        truth=None if separate else truth,
        gold=None if separate else gold,
        annotators=annotators,
        item_int=item_int,
    )
    parts = answers.frames(conv_answers, 0)
    entries = list(answers.entries)
    if separate:
        conv_scores = _Convert(
            kind="scores",
            item=item,
            probs=prob_columns,
            **common,
            truth=truth,
            gold=gold,
            item_int=item_int,
        )
        parts += readers[1].frames(conv_scores, len(entries))
        entries += readers[1].entries
    meta = _empty_layout(item_int, len(prob_columns))
    rows = dd.from_delayed(parts, meta=meta, verify_meta=False)
    n_out = int(npartitions) if npartitions is not None else max(1, len(parts))
    if n_out < 1:
        raise ConfigError(f"npartitions must be at least 1; got {npartitions!r}.")
    # The shuffle method is fixed here, where the graph is built: dask would otherwise pick
    # its P2P shuffle whenever a distributed client exists, which then fails on the local
    # scheduler. Tasks shuffle locally, P2P on a cluster.
    by_item = rows.shuffle(
        on="item", npartitions=n_out, shuffle_method="tasks" if client is None else "p2p"
    )

    from dask import delayed

    spec = {
        "annotators": tuple(annotators),
        "probs": prob_columns,
        "classes": class_names,
        "bin_edges": bin_edges,
        "grouping": grouping,
        "group_edges": group_edges,
        "truth": truth,
        "gold": gold,
        "separate_scores": separate,
    }
    locate = delayed(_Locator(entries), pure=True)
    total = tree_sum(
        [delayed(_summarize_items, pure=True)(p, spec, locate) for p in by_item.to_delayed()]
    )
    if return_graph:
        return total
    summary = compute(total, client=client, scheduler=scheduler, workers=workers)
    if summary.n_items + int(summary.n_gold.sum()) == 0:
        raise DataError("the answer table has no rows: no item was annotated.")
    return summary


def _annotator_names(chunk_frame, annotator, where=None):
    blank = chunk_frame[annotator].isna().to_numpy()
    if blank.any():
        r = int(np.flatnonzero(blank)[0])
        place = where(r) if where is not None else "a partition of the dask DataFrame"
        raise DataError(
            f"{place}: the annotator {annotator!r} is missing (blank); every answer needs its "
            "annotator (a missing answer is a missing row)."
        )
    return set(chunk_frame[annotator].astype(str).unique().tolist())


def _names_of_chunk(chunk, column, batch_rows):
    names = set()
    for frame, where in read_batches(chunk, [column], batch_rows, {column: "id"}):
        names |= _annotator_names(frame, column, where)
    return names


def _union(sets):
    out = set()
    for s in sets:
        out |= s
    return out


def _find_annotators(answers: _SourceReader, column, client, scheduler, workers):
    from dask import delayed

    if answers.kind == "dask":
        parts = [delayed(_annotator_names)(p, column) for p in answers.frame[[column]].to_delayed()]
    else:
        parts = [delayed(_names_of_chunk)(c, column, answers.batch_rows) for c in answers.chunks]
    while len(parts) > 1:
        parts = [delayed(_union)(parts[i : i + 8]) for i in range(0, len(parts), 8)]
    names = (
        compute(parts[0], client=client, scheduler=scheduler, workers=workers) if parts else set()
    )
    if not names:
        raise DataError("the answer table has no rows: no item was annotated.")
    return sorted(names)
