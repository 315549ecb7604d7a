"""The command line's inputs: from parsed arguments to validated data.

The ``audit`` and ``audit-ambiguity`` commands hand their parsed arguments here;
every file then goes through the library's one validation path
(:mod:`bayescal.data.files`, :mod:`bayescal.data.validation`,
:mod:`bayescal.ambiguity.validation`), so a bad input ends as one
:class:`~bayescal.errors.BayescalError` line with exit status 2.

DATA is read in memory when it is an existing file (even one named ``run[1].csv``)
and summarised out of core when it is a folder or, if no such path exists, a glob.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bayescal.data.container import check_long_roles
from bayescal.errors import ConfigError

__all__ = [
    "parse_names",
    "parse_long_columns",
    "describe_columns",
    "is_out_of_core",
    "load_audit_data",
    "refuse_blank_gold",
    "summarize_out_of_core",
    "load_ambiguity_data",
]

_GLOB = "*?["


def parse_names(text: str, flag: str) -> list[str]:
    """Split a comma-separated option value; an empty name is an error.

    Examples
    --------
    >>> parse_names("r1, r2", "--annotators")
    ['r1', 'r2']
    >>> parse_names("r1,,r2", "--annotators")
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: --annotators has an empty name at position 2 of 'r1,,r2'; ...
    """
    names = [p.strip() for p in text.split(",")]
    for i, name in enumerate(names, 1):
        if not name:
            raise ConfigError(
                f"{flag} has an empty name at position {i} of {text!r}; give comma-separated "
                f"{'class' if flag == '--classes' else 'column'} names without empty entries."
            )
    return names


def parse_long_columns(text: str) -> tuple[str, str, str]:
    """``--long ITEM,ANNOTATOR,LABEL`` as three column names (in memory and out of core).

    Examples
    --------
    >>> parse_long_columns("task,worker,label")
    ('task', 'worker', 'label')
    >>> parse_long_columns("item,annotator")
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: --long needs three column names ITEM,ANNOTATOR,LABEL; ...
    """
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or not all(parts):
        raise ConfigError(
            f"--long needs three column names ITEM,ANNOTATOR,LABEL; got {text!r} "
            f"({len(parts)} part(s)). Example: --long task,worker,label."
        )
    check_long_roles(item=parts[0], annotator=parts[1], label=parts[2])
    return parts[0], parts[1], parts[2]


def describe_columns(data) -> str | None:
    """One line saying which file column got which role (None for data not read from a file).

    Examples
    --------
    >>> from bayescal.examples import load_example
    >>> describe_columns(load_example("snli-entailment"))
    'columns: item=item, score=score, annotators=r1,r2,r3, truth=reference'
    """
    columns = getattr(data, "columns", None)
    if not columns:
        return None
    parts = [
        f"{role}={','.join(col) if isinstance(col, list) else col}"
        for role, col in columns.items()
        if col
    ]
    return "columns: " + ", ".join(parts)


def folder_note(path: str) -> str | None:
    """What a folder given as DATA holds that is not read (hidden and marker files, other
    formats), in one line, or None: the out-of-core reader skips them by rule
    (:func:`bayescal.scale.sources.read_in_folder`), and a skipped file should not go
    unnoticed."""
    from bayescal.scale.sources import read_in_folder

    root = Path(path)
    if not root.is_dir():
        return None
    files = sorted(p for p in root.rglob("*") if p.is_file())
    skipped = [str(p.relative_to(root)) for p in files if not read_in_folder(str(p))]
    if not skipped:
        return None
    n_read = len(files) - len(skipped)
    shown = ", ".join(skipped[:10]) + (
        f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""
    )
    return (
        f"bayescal: note: {path} holds {len(files)} files; {n_read} CSV / Parquet file(s) are "
        f"read and {len(skipped)} are not (hidden, marker or other files: {shown}); rename a "
        "file to *.csv or *.parquet without a leading '.' or '_' to have it read."
    )


def is_out_of_core(path: str) -> bool:
    """A folder, or a glob that is not an existing path, is summarised chunk by chunk.

    An existing file is read in memory even when its name contains ``*``, ``?`` or ``[``
    (``run[1].csv``); a missing path without glob characters goes to the in-memory
    reader, which says that it does not exist.
    """
    p = Path(path)
    if p.is_dir():
        return True
    if p.exists() or p.is_symlink():
        return False
    return any(c in path for c in _GLOB)


def _refuse_wide_options(args, *, in_memory: bool) -> None:
    """Options that a long table would leave unused are refused, not ignored.

    ``--item`` names a wide table's id column (a long table's is the first of
    ``--long``); ``--annotators`` lists wide annotator columns, and for a long table only
    the out-of-core reader uses it (the annotators expected in its ANNOTATOR column).
    """
    if args.item:
        raise ConfigError(
            f"--item {args.item} names the id column of a wide table; a long table names its "
            "item column first in --long ITEM,ANNOTATOR,LABEL: leave out --item."
        )
    if args.annotators and in_memory:
        raise ConfigError(
            "--annotators lists the annotator columns of a wide table; a long table read from "
            "one file has its annotators in the ANNOTATOR column of --long (every value is "
            "one): leave out --annotators, or remove the other annotators' rows."
        )


def load_audit_data(args):
    """Data of ``bayescal audit``: an :class:`~bayescal.Annotations` or, out of core, a
    :class:`~bayescal.Summary`."""
    from bayescal.data.container import load_long, load_table
    from bayescal.examples import load_example

    if args.example:
        if args.data:
            raise ConfigError("give either DATA or --example, not both.")
        if getattr(args, "gold", None):
            raise ConfigError("--gold names a column of DATA; the examples have no gold column.")
        return load_example(args.example)
    if not args.data:
        raise ConfigError("no data: give a CSV/Parquet file or --example NAME.")
    gold = getattr(args, "gold", None)
    probs = parse_names(args.probs, "--probs") if getattr(args, "probs", None) else None
    subgroup = getattr(args, "subgroup", None)
    if is_out_of_core(args.data):
        if subgroup:
            raise ConfigError(
                f"--subgroup {subgroup} needs the items in memory (the subgroups split them); "
                f"{args.data!r} is a folder or a glob, summarised out of core. Audit one file, "
                "or each subgroup's files separately."
            )
        if probs and len(probs) > 2:
            raise ConfigError(
                f"{args.data!r} is a folder or a glob; the multiclass audit reads one CSV or "
                "Parquet file in memory (its ambiguity view and recalibration fit per-item "
                "maps). The library summarises such folders: "
                "bayescal.scale.summarize_dask(..., probs=[...])."
            )
        return refuse_blank_gold(summarize_out_of_core(args), gold)
    values = {
        "score": None if probs and args.score == "score" else args.score,
        "probs": probs,
        "classes": parse_names(args.classes, "--classes")
        if getattr(args, "classes", None)
        else None,
        "truth": args.truth,
        "gold": gold,
    }
    if args.long:
        item, annotator, label = parse_long_columns(args.long)
        _refuse_wide_options(args, in_memory=True)
        data = load_long(args.data, item=item, annotator=annotator, label=label, **values)
        return refuse_blank_gold(data, gold)
    annotators = parse_names(args.annotators, "--annotators") if args.annotators else None
    data = load_table(
        args.data, annotators=annotators, item=args.item, group=subgroup or None, **values
    )
    return refuse_blank_gold(data, gold)


def refuse_blank_gold(data, column: str | None):
    """``data``, unless ``--gold COL`` names a column without a single gold label: an option
    that changes nothing is refused (one line, exit 2).

    Gold items nobody answered count here (the audit flags them, ``gold.unanswered``): the
    column does mark gold items, only their answers are missing.
    """
    if column is None:
        return data
    from bayescal.summaries.summary import Summary

    if isinstance(data, Summary):
        marked = int(data.n_gold.sum()) + int(data.n_gold_unanswered.sum())
    else:
        marked = data.n_gold
    if marked == 0:
        raise ConfigError(
            f"--gold {column!r}: the column holds no gold label (every cell is blank), so it "
            "would change nothing; give the known class of the gold items in it, name the "
            "column that holds them, or leave out --gold."
        )
    return data


def summarize_out_of_core(args):
    """Summarise a folder or glob of CSV/Parquet files with dask (wide, or long with --long)."""
    from bayescal.scale import summarize, summarize_long_dask

    annotators = parse_names(args.annotators, "--annotators") if args.annotators else None
    probs = parse_names(args.probs, "--probs") if getattr(args, "probs", None) else None
    # the binary score column, or two probability columns (the same two-class data)
    columns = {"score": args.score} if probs is None else {"probs": probs}
    if probs is not None and getattr(args, "classes", None):
        columns["classes"] = parse_names(args.classes, "--classes")
    if args.long:
        item, annotator, label = parse_long_columns(args.long)
        _refuse_wide_options(args, in_memory=False)
        return summarize_long_dask(
            args.data,
            item=item,
            annotator=annotator,
            label=label,
            **columns,
            truth=args.truth,
            gold=getattr(args, "gold", None),
            annotators=annotators,
            groups=args.groups,
            bins=args.bins,
        )
    return summarize(
        args.data,
        groups=args.groups,
        bins=args.bins,
        **columns,
        annotators=annotators,
        truth=args.truth,
        item=getattr(args, "item", None),  # not an annotator; the column must exist
        gold=getattr(args, "gold", None),
    )


def load_ambiguity_data(args):
    """Data of ``bayescal audit-ambiguity``: an :class:`~bayescal.ambiguity.AmbiguityData`.

    With ``--missing-predictions drop`` ChaosNLI items without a prediction are left
    out; how many and why is kept in ``data.attrs`` (and so in ``summary.json``) and
    said on stderr unless ``--quiet``.
    """
    from bayescal.ambiguity.loaders import load_chaosnli, load_cifar10h, load_npz

    if args.cifar10h:
        return load_cifar10h(args.cifar10h)
    if args.chaosnli:
        if len(args.chaosnli) < 2:
            raise ConfigError(
                "--chaosnli needs the ChaosNLI JSONL followed by at least one prediction file."
            )
        data = load_chaosnli(
            args.chaosnli[0],
            args.chaosnli[1:],
            missing_predictions=args.missing_predictions,
        )
        if data.attrs.get("n_dropped") and not args.quiet:
            print(f"bayescal: {data.attrs['dropped_reason']}", file=sys.stderr)
        return data
    return load_npz(args.npz)
