"""Readers for multi-annotator classification data in their original formats.

Nothing is downloaded: the loaders take paths to the files a user already has.

- CIFAR-10H with model outputs (Kerrigan et al.'s layout): a headerless CSV
  with the original label, 10 annotator counts and 10 softmax probabilities.
- ChaosNLI JSONL plus prediction files with ``uid`` and ``logits`` (Baan et
  al.'s layout), joined on ``uid`` with the class order aligned.
- A NumPy ``.npz`` archive with arrays ``logits`` and ``counts`` (any model,
  any number of classes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._random import seed_from
from bayescal._typing import ArrayLike, RandomState
from bayescal.ambiguity.validation import (
    check_counts,
    check_labels,
    check_logits,
    check_random_state,
)
from bayescal.data.files import (
    LineWhere,
    binary_kind,
    check_file,
    check_name_sizes,
    read_csv,
    read_jsonl,
)
from bayescal.data.validation import check_item_ids, parse_numbers, show_value
from bayescal.dims import CLASS, ITEM
from bayescal.errors import ConfigError, DataError

__all__ = [
    "AmbiguityData",
    "load_cifar10h",
    "load_chaosnli",
    "load_npz",
    "stratified_split",
    "stratified_folds",
    "CIFAR10_CLASSES",
    "CHAOSNLI_CLASSES",
    "CHAOSNLI_PREDICTION_ORDER",
    "MISSING_PREDICTIONS",
    "NPZ_ARRAYS",
]

CIFAR10_CLASSES = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)
#: Class order of ChaosNLI ``label_count`` (and of :func:`load_chaosnli` output).
CHAOSNLI_CLASSES = ("entailment", "neutral", "contradiction")
#: Class order of the RoBERTa prediction files (Baan et al.): entailment, contradiction, neutral.
CHAOSNLI_PREDICTION_ORDER = ("entailment", "contradiction", "neutral")


@dataclass(frozen=True)
class AmbiguityData:
    """Logits and annotator counts for one set of items.

    Construction validates every field with the checks of
    :mod:`bayescal.ambiguity.validation` (the same rules as every loader) and stores
    ``logits`` as float64 and ``counts`` as int64.

    Attributes
    ----------
    logits : ndarray of shape (n_items, n_classes)
        Finite model logits within +-``MAX_ABS_LOGIT`` (``log p`` when the source
        stores probabilities).
    counts : ndarray of int64, shape (n_items, n_classes)
        Annotator votes per class: whole numbers, every row with at least one vote.
    classes : tuple of str
    item_ids : ndarray of shape (n_items,)
        Unique ids (strings or integers).
    reference : ndarray of int64, shape (n_items,), or None
        The dataset's original single label (CIFAR-10 label, SNLI gold label).
    name : str
    attrs : dict
        Provenance (source file, class order) and, when a loader left items out, why:
        ``n_dropped`` and ``dropped_reason`` (shown in the audit's summary).
    """

    logits: np.ndarray
    counts: np.ndarray
    classes: tuple
    item_ids: np.ndarray
    reference: np.ndarray | None = None
    name: str = ""
    attrs: dict = field(default_factory=dict)

    def __post_init__(self):
        z = check_logits(self.logits)
        if len(self.classes) != z.shape[1]:
            raise DataError(
                f"{len(self.classes)} class names given for {z.shape[1]} logit columns."
            )
        check_name_sizes(self.classes, "class")  # issue 23: bounded names
        c = check_counts(self.counts, n_items=z.shape[0], n_classes=z.shape[1])
        ids = check_item_ids(np.asarray(self.item_ids), z.shape[0])
        object.__setattr__(self, "logits", z)
        object.__setattr__(self, "counts", c)
        object.__setattr__(self, "item_ids", ids)
        if self.reference is not None:
            ref = check_labels(
                self.reference, n_classes=z.shape[1], name="reference", n_items=z.shape[0]
            )
            object.__setattr__(self, "reference", ref)

    @property
    def n_items(self) -> int:
        return int(self.logits.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.logits.shape[1])

    @property
    def distribution(self) -> np.ndarray:
        """Annotator distributions ``pi`` (n_items, n_classes)."""
        return self.counts / self.counts.sum(axis=1, keepdims=True)

    @property
    def voted(self) -> np.ndarray:
        """Voted labels (n_items,); ties go to the lowest class index."""
        return self.counts.argmax(axis=1)

    def subset(self, index) -> AmbiguityData:
        """The items at ``index`` (integer array or boolean mask)."""
        idx = np.asarray(index)
        return AmbiguityData(
            logits=self.logits[idx],
            counts=self.counts[idx],
            classes=self.classes,
            item_ids=self.item_ids[idx],
            reference=None if self.reference is None else self.reference[idx],
            name=self.name,
            attrs=dict(self.attrs),
        )

    def to_dataset(self) -> xr.Dataset:
        """Labelled view: ``logits[item, class]``, ``counts[item, class]``, optional
        ``reference[item]``."""
        data: dict[str, tuple[tuple[str, ...], np.ndarray]] = {
            "logits": ((ITEM, CLASS), self.logits),
            "counts": ((ITEM, CLASS), self.counts),
        }
        if self.reference is not None:
            data["reference"] = ((ITEM,), self.reference)
        return xr.Dataset(
            data,
            coords={ITEM: self.item_ids, CLASS: list(self.classes)},
            attrs={"name": self.name, **self.attrs},
        )


def load_cifar10h(path) -> AmbiguityData:
    """Read the CIFAR-10H + model-output CSV (no header, 21 columns).

    Column 0: original CIFAR-10 label; 1..10: annotator counts per class;
    11..20: the model's softmax probabilities. Logits are ``log p`` (probabilities
    go down to about 1e-21, well inside float64; a zero probability is refused).
    The file is read by :func:`bayescal.data.files.read_csv` (UTF-8 text, bounded
    lines, every row with 21 fields) and every cell must be a decimal number.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    AmbiguityData
        With ``reference`` = the original CIFAR-10 label.
    """
    table = read_csv(path, what="CIFAR-10H file", header=False)
    p = table.path
    if len(table.header) != 21:
        raise DataError(
            f"CIFAR-10H file {str(p)!r}: expected 21 columns (label, 10 counts, 10 "
            f"probabilities), found {len(table.header)} on line {int(table.lines[0])}."
        )
    where = table.where()
    a = np.column_stack(
        [parse_numbers(table.columns[str(j)], what=f"column {j}", where=where) for j in range(21)]
    )
    counts = check_counts(a[:, 1:11], name="columns 1..10 (annotator counts)", where=where)
    probs = a[:, 11:21]
    bad = probs <= 0
    if bad.any():
        r, j = (int(v) for v in np.argwhere(bad)[0])
        raise DataError(
            f"CIFAR-10H file: column {j + 11} is {show_value(probs[r, j])} at {where(r)}; columns "
            "11..20 must be positive probabilities (a zero cannot be turned into a logit)."
        )
    ref = check_labels(a[:, 0], n_classes=10, name="column 0 (CIFAR-10 label)")
    return AmbiguityData(
        logits=check_logits(np.log(probs), name="log of columns 11..20", where=where),
        counts=counts,
        classes=CIFAR10_CLASSES,
        item_ids=np.arange(a.shape[0]),
        reference=ref,
        name="CIFAR-10H",
        attrs={"source": str(p), "logits": "log of stored softmax probabilities"},
    )


# keyed by str; looked up with None too when a row has no "old_label" (no reference: -1)
_CHAOS_CODES: dict[str | None, int] = {
    "e": 0,
    "n": 1,
    "c": 2,
    "entailment": 0,
    "neutral": 1,
    "contradiction": 2,
}
#: ``missing_predictions`` choices of :func:`load_chaosnli`.
MISSING_PREDICTIONS = ("error", "drop")


def _numbers(value, *, what: str, k: int, where: str) -> list:
    """A JSON list of ``k`` numbers (int or float, not bool); returns floats."""
    if not isinstance(value, list):
        raise DataError(
            f"{where}: {what} must be a list of {k} numbers; got a JSON "
            f"{_json_type(value)} ({show_value(value)})."
        )
    if len(value) != k:
        raise DataError(f"{where}: {what} has {len(value)} entries; {k} are expected.")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise DataError(
                f"{where}: {what} must hold numbers; found the JSON {_json_type(v)} "
                f"{show_value(v)}."
            )
        if isinstance(v, int) and abs(v) > 2**63:
            raise DataError(
                f"{where}: {what} holds {show_value(v)}, far beyond any vote count or logit."
            )
        out.append(float(v))
    return out


def _json_type(v) -> str:
    if v is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "list"}.get(
        type(v), "object"
    )


def _uid(row, where: str) -> str:
    if not isinstance(row, dict):
        raise DataError(
            f"{where}: expected a JSON object with 'uid'; got a JSON {_json_type(row)} "
            f"({show_value(row)})."
        )
    if "uid" not in row:
        raise DataError(f"{where}: the object has no 'uid' (keys: {sorted(row)[:8]!r}).")
    uid = row["uid"]
    if not isinstance(uid, str) or not uid.strip():
        raise DataError(
            f"{where}: 'uid' must be a non-empty string; got the JSON {_json_type(uid)} "
            f"{show_value(uid)}."
        )
    return uid


def _read_predictions(files, k: int) -> dict:
    """uid -> (logits, "file, line") over every prediction file."""
    by_uid: dict = {}
    for f in files:
        for lineno, row in read_jsonl(f, what="prediction file"):
            where = f"prediction file {str(f)!r}, line {lineno}"
            uid = _uid(row, where)
            assert isinstance(row, dict)  # _uid refused any other row
            if "logits" not in row:
                raise DataError(f"{where}: uid {uid!r} has no 'logits'.")
            logits = _numbers(row["logits"], what="'logits'", k=k, where=where)
            seen = by_uid.get(uid)
            if seen is not None and seen[0] != logits:
                raise DataError(
                    f"{where}: uid {uid!r} has other logits than on {seen[1]}; one item has "
                    "one prediction. Pass prediction files of one model run."
                )
            by_uid.setdefault(uid, (logits, where))
    return by_uid


def load_chaosnli(
    jsonl,
    predictions,
    *,
    prediction_order=CHAOSNLI_PREDICTION_ORDER,
    missing_predictions: str = "error",
) -> AmbiguityData:
    """Join ChaosNLI annotations with model logits on ``uid``, in ChaosNLI class order.

    Every line of both files must be a JSON object (Baan et al.'s layout): ChaosNLI
    lines need a string ``uid`` (unique in the file) and ``label_count``, three whole
    vote counts; prediction lines need ``uid`` and ``logits``, three numbers. Counts
    follow the same rules as every loader (:func:`check_counts`: fractions refused,
    at most 2**53 votes) and logits too (:func:`check_logits`: finite, within +-1000).

    Parameters
    ----------
    jsonl : str or Path
        ChaosNLI file (``label_count`` in the order entailment, neutral, contradiction).
    predictions : str, Path or list of them
        JSON-lines prediction files with ``uid`` and ``logits``; a uid may occur in
        several files only with the same logits.
    prediction_order : tuple of str, default ("entailment", "contradiction", "neutral")
        Class order of the prediction files' logits (Baan et al.'s RoBERTa
        files). The logits are permuted into ChaosNLI order; a wrong value here
        is what the argmax-agreement check in the tests catches.
    missing_predictions : {"error", "drop"}, default "error"
        What to do with ChaosNLI items that no prediction file covers: refuse (the
        message gives the count and the first uids), or leave them out and record
        ``n_dropped`` and ``dropped_reason`` in ``attrs`` (the audit shows them).

    Returns
    -------
    AmbiguityData
        Items in the JSONL order; ``reference`` = the original SNLI label
        (``old_label``), ``item_ids`` = uids.

    Examples
    --------
    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> chaos, pred = os.path.join(d, "c.jsonl"), os.path.join(d, "p.jsonl")
    >>> with open(chaos, "w") as f:
    ...     for uid in ("a", "b"):
    ...         _ = f.write(json.dumps({"uid": uid, "label_count": [3, 1, 0]}) + "\\n")
    >>> _ = open(pred, "w").write(json.dumps({"uid": "a", "logits": [2.0, 0.0, 1.0]}) + "\\n")
    >>> data = load_chaosnli(chaos, pred, missing_predictions="drop")
    >>> data.n_items, data.attrs["n_dropped"]
    (1, 1)
    """
    order = tuple(prediction_order)
    if sorted(order) != sorted(CHAOSNLI_CLASSES):
        raise ConfigError(
            f"prediction_order must be a permutation of {CHAOSNLI_CLASSES}, got {order}."
        )
    if missing_predictions not in MISSING_PREDICTIONS:
        raise ConfigError(
            f"missing_predictions must be one of {MISSING_PREDICTIONS}; got "
            f"{missing_predictions!r}."
        )
    perm = [order.index(c) for c in CHAOSNLI_CLASSES]
    jp = check_file(jsonl, "ChaosNLI file")
    if isinstance(predictions, (str, os.PathLike)):
        predictions = [predictions]
    if not isinstance(predictions, (list, tuple)):
        raise ConfigError(
            f"predictions must be a path or a list of paths; got {type(predictions).__name__}."
        )
    predictions = list(predictions)
    if not predictions:
        raise ConfigError("load_chaosnli needs at least one prediction file.")
    by_uid = _read_predictions(predictions, len(CHAOSNLI_CLASSES))
    uids, counts, logits, ref, lines, missing = [], [], [], [], [], []
    first_line: dict = {}
    n_rows = 0
    for lineno, row in read_jsonl(jp, what="ChaosNLI file"):
        where = f"ChaosNLI file {str(jp)!r}, line {lineno}"
        uid = _uid(row, where)
        assert isinstance(row, dict)  # _uid refused any other row
        if uid in first_line:
            raise DataError(
                f"{where}: uid {uid!r} already appears on line {first_line[uid]}; every "
                "ChaosNLI example must appear once."
            )
        first_line[uid] = lineno
        if "label_count" not in row:
            raise DataError(f"{where}: uid {uid!r} has no 'label_count'.")
        lc = _numbers(row["label_count"], what="'label_count'", k=3, where=where)
        n_rows += 1
        if uid not in by_uid:
            missing.append(uid)
            continue
        uids.append(uid)
        counts.append(lc)
        lines.append(lineno)
        lg = by_uid[uid][0]
        logits.append([lg[j] for j in perm])
        ref.append(_CHAOS_CODES.get(row.get("old_label"), -1))
    if n_rows == 0:
        raise DataError(f"ChaosNLI file {str(jp)!r} has no examples.")
    attrs: dict[str, str | int] = {"source": str(jp), "prediction_order": ",".join(order)}
    if missing:
        shown = ", ".join(repr(u) for u in missing[:3]) + (", ..." if len(missing) > 3 else "")
        what = (
            f"{len(missing)} of {n_rows} ChaosNLI uid(s) have no prediction in "
            f"{len(predictions)} prediction file(s) (first: {shown})"
        )
        if missing_predictions == "error" or not uids:
            raise DataError(
                f"{what}. Pass every prediction file that covers them, or pass "
                "missing_predictions='drop' (CLI: --missing-predictions drop) to keep the "
                f"{len(uids)} item(s) that have one."
            )
        attrs.update(
            missing_predictions="drop",
            n_dropped=len(missing),
            dropped_reason=f"{what}; dropped because missing_predictions='drop'.",
        )
    where_row = LineWhere(jp, np.asarray(lines))
    ref_arr = np.asarray(ref, dtype=np.int64)
    return AmbiguityData(
        logits=check_logits(np.asarray(logits), name="prediction logits", where=where_row),
        counts=check_counts(np.asarray(counts), name="label_count", where=where_row),
        classes=CHAOSNLI_CLASSES,
        item_ids=np.asarray(uids, dtype=object),
        reference=ref_arr if (ref_arr >= 0).all() else None,
        name="ChaosNLI-SNLI",
        attrs=attrs,
    )


#: Largest total of uncompressed array bytes an ``.npz`` may declare (4 GiB: ten classes of
#: logits and counts for 25 million items); larger archives are refused before anything is
#: allocated, so a small file cannot expand into the machine's memory (a "zip bomb").
MAX_NPZ_BYTES = 4 << 30

#: Most times a compressed array of floating-point numbers (the logits) may expand: a model's
#: logits compress little (random doubles about 1.1 times), while 60 million rows of
#: constants fit in 1.5 MB (1,000 times) and pass the total above. Arrays under
#: :data:`NPZ_EXPANSION_FLOOR` bytes are not checked (tiny arrays compress arbitrarily).
MAX_NPZ_EXPANSION = 64
NPZ_EXPANSION_FLOOR = 1 << 20


def _check_npz_sizes(p) -> None:
    """Refuse an archive whose members declare more than :data:`MAX_NPZ_BYTES`, or whose
    array headers promise more data than the member holds, before numpy allocates them."""
    import zipfile

    from numpy.lib import format as npy_format

    try:
        with zipfile.ZipFile(p) as zf:
            members = zf.infolist()
            total = sum(m.file_size for m in members)
            if total > MAX_NPZ_BYTES:
                raise DataError(
                    f"npz file {str(p)!r} expands to {total / 2**30:.1f} GiB, more than the "
                    f"{MAX_NPZ_BYTES / 2**30:.0f} GiB bayescal reads from one archive; split the "
                    "items over several files."
                )
            for m in members:
                with zf.open(m) as fh:
                    version = npy_format.read_magic(fh)
                    read_header = (
                        npy_format.read_array_header_1_0
                        if version == (1, 0)
                        else npy_format.read_array_header_2_0
                    )
                    shape, _, dtype = read_header(fh)
                if dtype.kind not in "biufcUS":  # V0 and records: no numbers, yet per-item cost
                    raise DataError(
                        f"npz file {str(p)!r}: array {m.filename!r} has dtype {dtype}, not "
                        "numbers or text; save plain arrays with np.savez."
                    )
                if (
                    dtype.kind == "f"
                    and m.file_size > NPZ_EXPANSION_FLOOR
                    and m.file_size > MAX_NPZ_EXPANSION * max(m.compress_size, 1)
                ):
                    raise DataError(
                        f"npz file {str(p)!r}: array {m.filename!r} ({m.file_size:,} bytes of "
                        f"{dtype}) is stored {m.file_size / max(m.compress_size, 1):,.0f} times "
                        f"smaller; a model's outputs do not compress more than "
                        f"{MAX_NPZ_EXPANSION} times (constants or a forged file?). Save the "
                        "model's logits with np.savez."
                    )
                need = int(np.prod(shape, dtype=object)) * max(dtype.itemsize, 1)
                if need > m.file_size:
                    raise DataError(
                        f"npz file {str(p)!r}: array {m.filename!r} declares shape {shape} of "
                        f"{dtype} ({need:,} bytes) but the archive holds {m.file_size:,} bytes "
                        "for it; the file is damaged or forged. Save it again with np.savez."
                    )
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(
            f"npz file {str(p)!r} is not a readable .npz archive of plain arrays ({exc})."
        ) from None


#: The arrays :func:`load_npz` reads: required, then optional.
NPZ_ARRAYS = ("logits", "counts", "classes", "item_ids", "reference")


def _refuse_unknown_arrays(p, names) -> None:
    """Refuse an archive member :func:`load_npz` would not read (a misspelt ``item_id``
    would otherwise be ignored without a word), suggesting the closest accepted name."""
    import difflib

    unknown = [n for n in names if n not in NPZ_ARRAYS]
    if not unknown:
        return
    name = unknown[0]
    close = difflib.get_close_matches(name, NPZ_ARRAYS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    more = f" ({len(unknown)} unknown arrays in all)" if len(unknown) > 1 else ""
    raise DataError(
        f"npz file {str(p)!r} holds an array {show_value(name)}{hint} that bayescal does not "
        f"read{more}; the arrays it reads are {', '.join(NPZ_ARRAYS[:2])} (required) and "
        f"{', '.join(NPZ_ARRAYS[2:])} (optional). Rename the array, or save the archive "
        "without it."
    )


def load_npz(path, *, name: str | None = None) -> AmbiguityData:
    """Read logits and annotator counts from a NumPy ``.npz`` archive.

    Required arrays: ``logits`` (n_items, n_classes), finite, and ``counts``
    (n_items, n_classes), whole non-negative annotator counts with at least one
    per item. Optional: ``classes`` (n_classes,) strings, ``item_ids``
    (n_items,), ``reference`` (n_items,) integer labels. Any other array is
    refused (:data:`NPZ_ARRAYS`, with the closest accepted name), so a misspelt
    optional array is never ignored. Pickled objects are refused
    (``allow_pickle=False``), so a file cannot run code on load.

    Parameters
    ----------
    path : str or Path
    name : str, optional
        Dataset name for reports (default: the file name).

    Returns
    -------
    AmbiguityData

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "d.npz")
    >>> np.savez(f, logits=[[2.0, 0.0], [0.0, 1.0]], counts=[[3, 1], [0, 4]])
    >>> d = load_npz(f)
    >>> d.n_items, d.classes
    (2, ('0', '1'))
    """
    import zipfile

    p = check_file(path, "npz file")
    with p.open("rb") as fh:
        head = fh.read(8)
    if head[:4] not in (b"PK\x03\x04", b"PK\x05\x06"):
        found = binary_kind(head)
        raise DataError(
            f"npz file {str(p)!r} is {found[0] if found else 'not an .npz archive'}; save the "
            "arrays with np.savez(path, logits=..., counts=...)."
        )
    _check_npz_sizes(p)
    try:
        with np.load(p, allow_pickle=False) as npz:
            _refuse_unknown_arrays(p, npz.files)
            arrays = {k: npz[k] for k in npz.files}
    except DataError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise DataError(
            f"npz file {str(p)!r} is not a readable .npz archive of plain arrays ({exc})."
        ) from None
    missing = [k for k in ("logits", "counts") if k not in arrays]
    if missing:
        raise DataError(
            f"{p}: missing array(s) {', '.join(missing)}; the archive holds "
            f"{sorted(arrays) or 'nothing'}. Save it with np.savez(path, logits=..., counts=...)."
        )
    z = check_logits(arrays["logits"], name=f"{p.name}: logits")
    c = np.asarray(arrays["counts"])
    if c.shape != z.shape:
        raise DataError(
            f"{p.name}: counts has shape {c.shape} but logits has shape {z.shape}; "
            "both must be (n_items, n_classes) in the same class order."
        )
    c = check_counts(c, name=f"{p.name}: counts")
    k = z.shape[1]
    if "classes" in arrays:
        names = np.asarray(arrays["classes"]).ravel()
        if names.size != k:
            raise DataError(f"{p.name}: {names.size} class names for {k} logit columns.")
        if names.dtype.kind not in "US":
            raise DataError(f"{p.name}: classes must be strings; got dtype {names.dtype}.")
        classes = tuple(str(v) for v in names)
        if len(set(classes)) != k:
            raise DataError(f"{p.name}: class names must be unique, got {list(classes)}.")
    else:
        classes = tuple(str(j) for j in range(k))
    ids = np.asarray(arrays["item_ids"]).ravel() if "item_ids" in arrays else np.arange(z.shape[0])
    if ids.size != z.shape[0]:
        raise DataError(f"{p.name}: {ids.size} item_ids for {z.shape[0]} items.")
    ref = None
    if "reference" in arrays:
        ref = check_labels(
            np.asarray(arrays["reference"]).ravel(),
            n_classes=k,
            name=f"{p.name}: reference",
            n_items=z.shape[0],
        )
    return AmbiguityData(
        logits=z,
        counts=c,
        classes=classes,
        item_ids=ids,
        reference=ref,
        name=name or p.stem,
        attrs={"source": str(p)},
    )


def stratified_split(
    labels, *, fraction: float = 0.5, random_state=42
) -> tuple[np.ndarray, np.ndarray]:
    """Stratified split of item indices into a first part (calibration) and the rest (test).

    Each class gets ``floor(n_k * fraction)`` items in the first part; the
    leftover seats up to ``round(n * fraction)`` go to the classes with the
    largest fractional parts (ties broken at random), so the first part has
    exactly ``round(n * fraction)`` items.

    Parameters
    ----------
    labels : array-like of int, shape (n_items,)
        Stratification labels (the voted labels in the paper's protocol).
    fraction : float in (0, 1), default 0.5
    random_state : int or numpy.random.Generator, default 42

    Returns
    -------
    first, rest : ndarray of int64
        Sorted item indices.

    Examples
    --------
    >>> cal, test = stratified_split([0, 0, 1, 1, 1, 1], random_state=0)
    >>> len(cal), len(test)
    (3, 3)
    """
    y = np.asarray(labels)
    if y.ndim != 1 or y.size < 2:
        raise DataError("labels must be one-dimensional with at least two items.")
    if not (0.0 < float(fraction) < 1.0):
        raise ConfigError(f"fraction must lie strictly between 0 and 1, got {fraction!r}.")
    rng = check_random_state(random_state)
    classes, inv = np.unique(y, return_inverse=True)
    n_k = np.bincount(inv)
    exact = n_k * float(fraction)
    take = np.floor(exact).astype(np.int64)
    extra = int(round(y.size * float(fraction))) - int(take.sum())
    if extra > 0:
        frac = exact - take
        order = np.lexsort((rng.random(classes.size), -frac))
        take[order[:extra]] += 1
    # Random rank of each item within its class: permute, then stable-sort by class.
    perm = rng.permutation(y.size)
    by_class = perm[np.argsort(inv[perm], kind="stable")]
    starts = np.concatenate([[0], np.cumsum(n_k)[:-1]])
    rank = np.empty(y.size, dtype=np.int64)
    rank[by_class] = np.arange(y.size) - np.repeat(starts, n_k)
    first = rank < take[inv]
    return np.flatnonzero(first), np.flatnonzero(~first)


def stratified_folds(labels: ArrayLike, k: int, random_state: RandomState = 0) -> np.ndarray:
    """Stratified fold index per item: permute, stable-sort by label, deal out round-robin.

    SPEC §2 / Tao et al., App. M: splits stratified by voted label. The
    cross-validations of the calibration half use it (the recommendation check,
    the ODIR grid of the Dirichlet calibrators).

    Examples
    --------
    >>> stratified_folds([0, 0, 1, 1], 2, random_state=0).tolist()
    [0, 1, 0, 1]
    """
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed_from(random_state))
    perm = rng.permutation(labels.size)
    order = perm[np.argsort(labels[perm], kind="stable")]
    fold = np.empty(labels.size, dtype=np.int64)
    fold[order] = np.arange(labels.size) % k
    return fold
