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

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from bayescal.ambiguity.validation import (
    check_labels,
    check_logits,
    check_random_state,
    check_targets,
)
from bayescal.dims import CLASS, ITEM
from bayescal.errors import ConfigError, DataError

__all__ = [
    "AmbiguityData",
    "load_cifar10h",
    "load_chaosnli",
    "load_npz",
    "stratified_split",
    "CIFAR10_CLASSES",
    "CHAOSNLI_CLASSES",
    "CHAOSNLI_PREDICTION_ORDER",
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

    Attributes
    ----------
    logits : ndarray of shape (n_items, n_classes)
        Finite model logits (``log p`` when the source stores probabilities).
    counts : ndarray of int64, shape (n_items, n_classes)
        Annotator votes per class, every row with at least one vote.
    classes : tuple of str
    item_ids : ndarray of shape (n_items,)
    reference : ndarray of int64, shape (n_items,), or None
        The dataset's original single label (CIFAR-10 label, SNLI gold label).
    name : str
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
        check_targets(self.counts, n_items=z.shape[0], n_classes=z.shape[1], name="counts")
        if len(self.item_ids) != z.shape[0]:
            raise DataError(f"{len(self.item_ids)} item ids for {z.shape[0]} items.")

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
        data = {"logits": ((ITEM, CLASS), self.logits), "counts": ((ITEM, CLASS), self.counts)}
        if self.reference is not None:
            data["reference"] = ((ITEM,), self.reference)
        return xr.Dataset(
            data,
            coords={ITEM: self.item_ids, CLASS: list(self.classes)},
            attrs={"name": self.name, **self.attrs},
        )


def _path(path, what) -> Path:
    p = Path(path)
    if not p.is_file():
        raise DataError(
            f"{what} file not found: {p}. Pass the path to your local copy (nothing is downloaded)."
        )
    return p


def load_cifar10h(path) -> AmbiguityData:
    """Read the CIFAR-10H + model-output CSV (no header, 21 columns).

    Column 0: original CIFAR-10 label; 1..10: annotator counts per class;
    11..20: the model's softmax probabilities. Logits are ``log p`` (probabilities
    go down to about 1e-21, well inside float64; a zero probability is refused).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    AmbiguityData
        With ``reference`` = the original CIFAR-10 label.
    """
    p = _path(path, "CIFAR-10H")
    try:
        a = np.loadtxt(p, delimiter=",", dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise DataError(f"{p}: not a numeric comma-separated file: {exc}") from exc
    if a.shape[1] != 21:
        raise DataError(
            f"{p}: expected 21 columns (label, 10 counts, 10 probabilities), found {a.shape[1]}."
        )
    counts = a[:, 1:11]
    if not np.all(counts == np.round(counts)):
        raise DataError(f"{p}: columns 1..10 must be whole annotator counts.")
    probs = a[:, 11:21]
    if not np.all(np.isfinite(probs)) or (probs <= 0).any():
        raise DataError(
            f"{p}: columns 11..20 must be positive probabilities "
            "(a zero cannot be turned into a logit)."
        )
    ref = a[:, 0]
    if not np.all(ref == np.round(ref)) or ref.min() < 0 or ref.max() > 9:
        raise DataError(f"{p}: column 0 must hold CIFAR-10 labels 0..9.")
    return AmbiguityData(
        logits=np.log(probs),
        counts=counts.astype(np.int64),
        classes=CIFAR10_CLASSES,
        item_ids=np.arange(a.shape[0]),
        reference=ref.astype(np.int64),
        name="CIFAR-10H",
        attrs={"source": str(p), "logits": "log of stored softmax probabilities"},
    )


_CHAOS_CODES = {"e": 0, "n": 1, "c": 2, "entailment": 0, "neutral": 1, "contradiction": 2}


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}, line {lineno}: not valid JSON ({exc.msg}).") from exc
    return rows


def load_chaosnli(
    jsonl, predictions, *, prediction_order=CHAOSNLI_PREDICTION_ORDER
) -> AmbiguityData:
    """Join ChaosNLI annotations with model logits on ``uid``, in ChaosNLI class order.

    Parameters
    ----------
    jsonl : str or Path
        ChaosNLI file (``label_count`` in the order entailment, neutral, contradiction).
    predictions : str, Path or list of them
        JSON-lines prediction files with ``uid`` and ``logits``; when a uid
        occurs in several files the first occurrence is used.
    prediction_order : tuple of str, default ("entailment", "contradiction", "neutral")
        Class order of the prediction files' logits (Baan et al.'s RoBERTa
        files). The logits are permuted into ChaosNLI order; a wrong value here
        is what the argmax-agreement check in the tests catches.

    Returns
    -------
    AmbiguityData
        Items in the JSONL order; ``reference`` = the original SNLI label
        (``old_label``), ``item_ids`` = uids.
    """
    order = tuple(prediction_order)
    if sorted(order) != sorted(CHAOSNLI_CLASSES):
        raise ConfigError(
            f"prediction_order must be a permutation of {CHAOSNLI_CLASSES}, got {order}."
        )
    perm = [order.index(c) for c in CHAOSNLI_CLASSES]
    jp = _path(jsonl, "ChaosNLI")
    rows = _read_jsonl(jp)
    if not rows:
        raise DataError(f"{jp}: no examples.")
    if isinstance(predictions, (str, Path)):
        predictions = [predictions]
    logits_by_uid: dict[str, list] = {}
    for f in predictions:
        fp = _path(f, "prediction")
        for r in _read_jsonl(fp):
            if "uid" not in r or "logits" not in r:
                raise DataError(f"{fp}: every line needs 'uid' and 'logits'.")
            logits_by_uid.setdefault(r["uid"], r["logits"])
    uids, counts, logits, ref = [], [], [], []
    missing = []
    for r in rows:
        for key in ("uid", "label_count"):
            if key not in r:
                raise DataError(f"{jp}: an example lacks '{key}'.")
        if r["uid"] not in logits_by_uid:
            missing.append(r["uid"])
            continue
        lc = r["label_count"]
        if len(lc) != 3:
            raise DataError(
                f"{jp}: uid {r['uid']} has {len(lc)} label counts; ChaosNLI-SNLI/MNLI have 3."
            )
        uids.append(r["uid"])
        counts.append(lc)
        lg = logits_by_uid[r["uid"]]
        if len(lg) != 3:
            raise DataError(f"uid {r['uid']}: {len(lg)} logits for 3 classes.")
        logits.append([lg[j] for j in perm])
        ref.append(_CHAOS_CODES.get(r.get("old_label"), -1))
    if missing:
        raise DataError(
            f"{len(missing)} ChaosNLI uid(s) have no prediction (first: {missing[0]}); "
            "pass every prediction file that covers them."
        )
    ref_arr = np.asarray(ref, dtype=np.int64)
    return AmbiguityData(
        logits=np.asarray(logits, dtype=np.float64),
        counts=np.asarray(counts, dtype=np.int64),
        classes=CHAOSNLI_CLASSES,
        item_ids=np.asarray(uids),
        reference=ref_arr if (ref_arr >= 0).all() else None,
        name="ChaosNLI-SNLI",
        attrs={"source": str(jp), "prediction_order": ",".join(order)},
    )


def load_npz(path, *, name: str | None = None) -> AmbiguityData:
    """Read logits and annotator counts from a NumPy ``.npz`` archive.

    Required arrays: ``logits`` (n_items, n_classes), finite, and ``counts``
    (n_items, n_classes), whole non-negative annotator counts with at least one
    per item. Optional: ``classes`` (n_classes,) strings, ``item_ids``
    (n_items,), ``reference`` (n_items,) integer labels. Pickled objects are
    refused (``allow_pickle=False``), so a file cannot run code on load.

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

    p = _path(path, "npz")
    try:
        with np.load(p, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{p}: not a readable .npz archive of plain arrays ({exc}).") from exc
    missing = [k for k in ("logits", "counts") if k not in arrays]
    if missing:
        raise DataError(
            f"{p}: missing array(s) {', '.join(missing)}; the archive holds "
            f"{sorted(arrays) or 'nothing'}. Save it with np.savez(path, logits=..., counts=...)."
        )
    z = check_logits(arrays["logits"], name=f"{p.name}: logits")
    c = np.asarray(arrays["counts"])
    if c.ndim != 2 or c.shape != z.shape:
        raise DataError(
            f"{p.name}: counts has shape {c.shape} but logits has shape {z.shape}; "
            "both must be (n_items, n_classes) in the same class order."
        )
    if not (np.issubdtype(c.dtype, np.integer) or np.issubdtype(c.dtype, np.floating)):
        raise DataError(f"{p.name}: counts must be numeric, got dtype {c.dtype}.")
    check_targets(c, n_items=z.shape[0], n_classes=z.shape[1], name=f"{p.name}: counts")
    if not np.all(c == np.round(c)):
        raise DataError(
            f"{p.name}: counts must be whole annotator counts (votes per class), not fractions."
        )
    k = z.shape[1]
    if "classes" in arrays:
        names = np.asarray(arrays["classes"]).ravel()
        if names.size != k:
            raise DataError(f"{p.name}: {names.size} class names for {k} logit columns.")
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
        counts=c.astype(np.int64),
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
