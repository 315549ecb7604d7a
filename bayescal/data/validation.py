"""Validation at the edge: every problem is named, nothing is clipped or replaced.

The one validation path of the data layer, for every number of classes (SPEC §1,
§3; DESIGN "validate once, at the edge"). Every constructor of
:class:`~bayescal.Annotations` (``from_arrays``, ``from_long``, ``from_dataset``,
``from_crowdkit``) and every reader (wide and long CSV, Parquet, the embedded
examples) passes its values through these functions, so a value refused by one is
refused by all: scores or class probabilities, answers (class indices, or class
names with ``classes``), truth, gold, ids, groups, column roles.

Each check takes a ``where`` callable that names position ``i`` of its input
("'run.csv', line 7", "item 'a'", "row 3 (index 'x')"), so a message shows the
offending value where it was written, for example
``score 1.0000001 at 'run.csv', line 7 is outside [0, 1]``, and says what to do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from bayescal.data.files import check_name_sizes
from bayescal.errors import ConfigError, DataError

__all__ = [
    "Where",
    "range_hint",
    "ItemWhere",
    "RowWhere",
    "show_value",
    "parse_numbers",
    "as_numeric",
    "check_scores",
    "check_probs",
    "check_classes",
    "class_indices",
    "check_labels",
    "check_truth",
    "check_gold",
    "check_names",
    "check_ids",
    "check_item_ids",
    "check_groups",
    "reference_like",
    "PROB_SUM_TOL",
    "REFERENCE_NAMES",
]

#: Rows of ``probs`` must sum to one within this absolute tolerance. A float32
#: softmax divides by a float32 sum whose relative rounding error grows with the
#: number of terms (up to about 1,000 x 6e-8 = 6e-5 for sequential accumulation
#: over 1,000 classes, far less for ten), so its rows sum to one only within about
#: 1e-5; the tolerance admits such outputs while still catching unnormalised scores
#: or a missing class column. Pass ``sum_tol`` to change it.
PROB_SUM_TOL = 1e-5

#: ``where(i)`` names position ``i`` of an input in a message.
Where = Callable[[int], str]

_MAX_SHOWN = 3
# Python and NumPy scalar types that are real numbers (entries of an object array).
_REAL_TYPES = {bool, int, float} | {
    t for t in set(np.sctypeDict.values()) if issubclass(t, (np.integer, np.floating, np.bool_))
}
# Decimal numbers as written in a text file: 1, -0.5, .25, 3., 1e-3, +2E+4. Not
# "nan", "inf", "0x1f", "1_000" or "1,5": a label cell "nan" is an error to report,
# never a silent missing answer (a missing answer is a blank cell).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class ItemWhere:
    """Name item ``i`` by its id (``"item 'a'"``) or, without ids, by position."""

    def __init__(self, ids=None):
        self.ids = ids

    def __call__(self, i: int) -> str:
        if self.ids is None or not 0 <= i < len(self.ids):  # ids of the wrong length
            return f"item {int(i)}"
        return f"item {show_value(self.ids[i])}"


def unmasked(values, name: str, where: Where | None = None, *, missing: bool = False):
    """``values`` without a numpy mask: a masked entry of a column that cannot be missing
    (scores, probabilities, truth, ids, groups) is refused, naming the first one; with
    ``missing`` (gold: masked = not a gold item) masked entries become NaN.

    A masked array's hidden values are not data: used as they stand they were read
    silently (a masked score at its underlying value, every masked gold cell as class 0).

    Examples
    --------
    >>> unmasked(np.ma.masked_array([1.0, 0.0], mask=[False, True]), "gold", missing=True)
    array([ 1., nan])
    """
    if not isinstance(values, np.ma.MaskedArray):
        return values
    hidden = np.ma.getmaskarray(values)
    if not hidden.any():
        return np.ma.getdata(values)
    if missing:
        return np.where(hidden, np.nan, np.ma.getdata(values).astype(np.float64))
    first = int(np.flatnonzero(hidden.reshape(hidden.shape[0], -1).any(axis=1))[0])
    at = where(first) if where is not None else f"item {first}"
    raise DataError(
        f"{name} has {int(hidden.sum())} masked entr{'y' if hidden.sum() == 1 else 'ies'} (the "
        f"first at {at}); {name} values cannot be missing: drop those items, or pass the "
        "values (a masked array's hidden values are not read)."
    )


class RowWhere:
    """Name row ``i`` of a pandas table by position and index label."""

    def __init__(self, index=None, table: str = "the table"):
        self.index, self.table = index, table

    def __call__(self, i: int) -> str:
        label = "" if self.index is None else f" (index {show_value(self.index[i])})"
        return f"row {int(i)} of {self.table}{label}"


def show_value(value, limit: int = 40) -> str:
    """A short, single-line rendering of a user's value for a message.

    Strings are quoted and escaped (a newline or a control character cannot break
    the one-line error); long strings are cut; integers too long to print are
    described by their number of digits.

    Examples
    --------
    >>> show_value(1.0000001), show_value("05"), show_value(3**5000)
    ('1.0000001', "'05'", 'an integer with 2386 digits')
    >>> show_value(np.str_("x")), show_value(np.float64(0.975523))
    ("'x'", '0.975523')
    """
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if abs(v) >= 10**30:
            digits = int(math.log10(abs(v))) + 1  # exact: float log10 of an int never overflows
            return f"an integer with {digits} digits"
        return str(v)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    text = str(value) if isinstance(value, str) else repr(value)  # np.str_ too: its repr is
    if len(text) > limit:  # "np.str_('x')"
        text = text[: limit - 3] + "..."
    return repr(text) if isinstance(value, str) else text


def _rows(mask: np.ndarray, where: Where) -> str:
    """Where the first rows of ``mask`` are, and how many more there are."""
    idx = np.flatnonzero(mask)
    shown = ", ".join(where(int(i)) for i in idx[:_MAX_SHOWN])
    return shown + (f" and {idx.size - _MAX_SHOWN} more" if idx.size > _MAX_SHOWN else "")


def _examples(mask: np.ndarray, values, where: Where) -> str:
    """ "``v`` at ``where``" for the first bad positions, plus how many there are."""
    idx = np.flatnonzero(mask)
    first = f"{show_value(values[idx[0]])} at {where(int(idx[0]))}"
    if idx.size == 1:
        return first
    more = "; ".join(f"{show_value(values[i])} at {where(int(i))}" for i in idx[1:_MAX_SHOWN])
    rest = f" and {idx.size - _MAX_SHOWN} more" if idx.size > _MAX_SHOWN else ""
    return f"{first} ({idx.size} such values; also {more}{rest})"


# ------------------------------------------------------------------ text to numbers
def parse_numbers(
    values, *, what: str, where: Where, blank: str = "error", classes=None, names_fix: str = ""
) -> np.ndarray:
    """Cells of a text file as float64, refusing anything that is not a decimal number.

    Parameters
    ----------
    values : array-like of shape (n,)
        Cells as read by :func:`bayescal.data.files.read_csv`: strings as written, with
        NaN (or ``""``) for an empty cell; or a numeric column the CSV parser already
        converted (NaN = empty cell).
    what : str
        How the column is named in messages (``"score column 'p'"``).
    where : callable
        ``where(i)`` names row ``i`` ("'run.csv', line 7").
    blank : {"error", "missing"}, default "error"
        An empty cell is an error, or a missing value (NaN). Spaces around a number are
        allowed; a cell of spaces only is refused (as the out-of-core reader does).
    classes : list of str, optional
        Class names: a cell equal to a name (spaces around it allowed) becomes the
        name's index. Other cells must be class indices written as numbers, unless the
        names themselves are numbers other than their positions (``["1", "2"]``): then
        a number could mean either, and only names are accepted.
    names_fix : str, optional
        For answer columns (annotator, truth, gold): how to give class names, said when
        cells hold words and ``classes`` is None (words there are most likely class names).

    Returns
    -------
    ndarray of float64, shape (n,)

    Raises
    ------
    DataError
        A cell that is not a decimal number (``"abc"``, ``"nan"``, ``"inf"``, ``"True"``), a
        number too large for float64 (``1e400``), or an empty cell when ``blank="error"``.

    Examples
    --------
    >>> parse_numbers(["0.5", " 1e-3", ""], what="labels", where=str, blank="missing")
    array([0.5  , 0.001,   nan])
    >>> parse_numbers(["dog", "0"], what="r1", where=str, classes=["cat", "dog"])
    array([1., 0.])
    """
    import pandas as pd

    arr = np.asarray(values)
    if arr.dtype.kind == "b":
        raise DataError(
            f"{what}: {show_value(bool(arr[0]))} at {where(0)} is not a number; use 0 and 1."
        )
    if arr.dtype.kind in "iuf":
        if classes is not None and _names_are_other_numbers(classes):
            raise DataError(_ambiguous(what, classes))
        out = arr.astype(np.float64)
        empty = np.isnan(out)
        bad = np.isinf(out)
    else:
        raw = pd.Series(arr.astype(object, copy=False), dtype=object)
        empty = (raw.isna() | (raw == "")).to_numpy(dtype=bool)
        text = raw.where(~empty, "0").astype(str).str.strip()
        named = np.zeros(arr.shape[0], dtype=bool)
        if classes is not None:
            coded = text.map({name: float(k) for k, name in enumerate(classes)})
            named = coded.notna().to_numpy(dtype=bool) & ~empty
        number = text.str.fullmatch(_NUMBER).to_numpy(dtype=bool, na_value=False) & ~named & ~empty
        if classes is not None and _names_are_other_numbers(classes) and number.any():
            raise DataError(_ambiguous(what, classes, _examples(number, arr, where)))
        wrong = ~number & ~empty & ~named
        if wrong.any():
            kind = "a number" if classes is None else f"a class name ({list(classes)}) or index"
            if names_fix and classes is None and text[wrong].str.contains("[^\\W\\d_]").any():
                raise DataError(
                    f"{what}: {_examples(wrong, arr, where)} is not a number, and no class "
                    f"names were given: if the answers are class names, {names_fix}."
                )
            raise DataError(
                f"{what}: {_examples(wrong, arr, where)} is not {kind}. Use decimal "
                "numbers such as 0.25 or 1e-3"
                + ("" if classes is None else " (class indices 0, 1, ...) or class names")
                + (" and an empty cell for a missing answer." if blank == "missing" else ".")
            )
        out = np.full(arr.shape[0], np.nan)
        out[number] = text[number].astype(np.float64).to_numpy()
        if named.any():
            out[named] = coded[named].to_numpy(dtype=np.float64)
        bad = number & ~np.isfinite(out)
    if bad.any():
        raise DataError(
            f"{what}: {_examples(bad, out if arr.dtype.kind in 'iuf' else arr, where)} is not "
            "a finite number (too large for a 64-bit float, or infinity); use finite numbers."
        )
    if empty.any() and blank != "missing":
        i = int(np.flatnonzero(empty)[0])
        raise DataError(
            f"{what} is blank at {where(i)} ({int(empty.sum())} blank cell(s)); it must be a "
            "number. Fill it in or remove the row."
        )
    return out


def _names_are_other_numbers(classes) -> bool:
    """Some class name is a number other than its own position (``["1", "2", "3"]``)."""
    return any(
        _NUMBER.fullmatch(str(name).strip()) is not None and float(name) != k
        for k, name in enumerate(classes)
    )


def _ambiguous(what: str, classes, example: str = "") -> str:
    found = f" ({example})" if example else ""
    return (
        f"{what}: the answers are numbers{found} and the class names {list(classes)} are "
        "numbers other than their positions, so a number could be a class index or a class "
        "name. Write the answers as class names, or give classes= names that are not numbers."
    )


def class_indices(values, classes, name: str, *, where: Where | None = None) -> np.ndarray:
    """Answers, truth or gold given as arrays: class names (with ``classes``) to indices.

    Without ``classes`` this is :func:`as_numeric` (strings are refused). With it,
    a string equal to a class name becomes the name's index and every other entry
    must be a number (a class index); missing stays NaN. Range checks follow in
    :func:`check_labels` / :func:`check_truth` / :func:`check_gold`.

    Examples
    --------
    >>> class_indices([["dog", None], [0, "cat"]], ["cat", "dog"], "labels").tolist()
    [[1.0, nan], [0.0, 0.0]]
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        # numbers already (a CSV's answer columns): no names to look up, so no pass over
        # the values as Python objects (20 s for 3 x 10^6 answers on a loaded machine)
        numeric = as_numeric(values, name)
        if classes is not None and (~np.isnan(numeric)).any() and _names_are_other_numbers(classes):
            raise DataError(_ambiguous(name, classes))
        return numeric
    try:
        arr = np.asarray(values, dtype=object)
    except ValueError:
        return as_numeric(values, name)  # ragged: its message
    flat = arr.ravel()
    if classes is None:
        text = next((v for v in flat if isinstance(v, (str, bytes))), None)
        if text is not None:
            raise DataError(
                f"{name}: {show_value(text)} is text, so a class name, but no class names "
                "were given: pass classes= (the class names in the order of the probability "
                "columns; --classes on the command line), or give class indices 0..C-1."
            )
        return as_numeric(values, name)
    lookup = {str(c): float(k) for k, c in enumerate(classes)}
    is_str = np.array([isinstance(v, str) for v in flat], dtype=bool)
    unknown = is_str & ~np.array([isinstance(v, str) and v in lookup for v in flat], dtype=bool)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        at = (
            (where or ItemWhere())(i // arr.shape[-1])
            if arr.ndim == 2
            else (where or ItemWhere())(i)
        )
        col = f", column {i % arr.shape[-1]}" if arr.ndim == 2 else ""
        raise DataError(
            f"{name}: {show_value(flat[i])} at {at}{col} is not a class name; the classes are "
            f"{list(lookup)} ({int(unknown.sum())} such value(s)). Use one of these names or "
            "the class index."
        )
    numbers = ~is_str & ~np.asarray(_isna(flat), dtype=bool)
    if numbers.any() and _names_are_other_numbers(classes):
        raise DataError(_ambiguous(name, classes))
    coded = flat.copy()
    coded[is_str] = [lookup[v] for v in flat[is_str]]
    return as_numeric(coded.reshape(arr.shape), name)


def _isna(values) -> np.ndarray:
    import pandas as pd

    return np.asarray(pd.isna(values), dtype=bool) if len(values) else np.zeros(0, bool)


# ------------------------------------------------------------------ arrays to numbers
def _ragged(values) -> str:
    lengths: list[int | None] = []
    for row in values:
        try:
            lengths.append(len(row))
        except TypeError:
            lengths.append(None)
    first = lengths[0]
    i = next((i for i, n in enumerate(lengths) if n != first), 0)
    show = lambda n: "a scalar" if n is None else f"{n} entries"  # noqa: E731
    return f"row 0 has {show(first)}, row {i} has {show(lengths[i])}"


def as_numeric(values, name: str) -> np.ndarray:
    """Convert to a float64 array, refusing strings, ragged rows and complex numbers.

    Booleans become 0.0 / 1.0; ``None``, ``pandas.NA`` and NaN in an object array
    become NaN (a missing value; the caller decides whether missing is allowed).

    Examples
    --------
    >>> as_numeric([[0, None], [True, 1]], "labels")
    array([[ 0., nan],
           [ 1.,  1.]])
    """
    import pandas as pd

    if isinstance(values, (pd.Series, pd.Index)):
        values = values.to_numpy(dtype=object) if values.dtype.kind not in "biuf" else values
    try:
        arr = np.asarray(values)
    except ValueError:
        raise DataError(
            f"{name}: rows have different lengths ({_ragged(values)}). Every row needs one "
            "entry per column (NaN for a missing answer)."
        ) from None
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype.kind in "US":
        raise DataError(
            f"{name} must be numeric; got strings (for example "
            f"{', '.join(show_value(v) for v in arr.ravel()[:3])}). Convert them to numbers first."
        )
    if arr.dtype.kind == "c":
        raise DataError(f"{name} must be real-valued; got complex numbers.")
    if arr.dtype.kind == "O":
        flat = arr.ravel()
        missing = np.asarray(pd.isna(flat), dtype=bool) if flat.size else np.zeros(0, bool)
        present = flat[~missing]
        if not {type(v) for v in present} <= _REAL_TYPES:
            i = next(i for i in np.flatnonzero(~missing) if type(flat[i]) not in _REAL_TYPES)
            v = flat[i]
            if isinstance(v, (list, tuple, dict, set, np.ndarray)):
                raise DataError(
                    f"{name} is ragged or nested: entry {i} is a {type(v).__name__}. Pass a "
                    "rectangular array of numbers."
                )
            raise DataError(
                f"{name} must be numeric; entry {i} is {show_value(v)} "
                f"({type(v).__name__}). Convert the values to numbers first."
            )
        out = np.full(flat.shape, np.nan)
        out[~missing] = present.astype(np.float64)
        return out.reshape(arr.shape)
    if arr.dtype.kind not in "iuf":
        raise DataError(f"{name} must be numeric; got dtype {arr.dtype}.")
    return arr.astype(np.float64, copy=False)


# ------------------------------------------------------------------ value checks
def check_scores(score, name: str = "score", ids=None, where: Where | None = None) -> np.ndarray:
    """Scores: 1-D, non-empty, finite, in [0, 1]; booleans are refused.

    Examples
    --------
    >>> check_scores([0.0, 0.5, 1.0])
    array([0. , 0.5, 1. ])
    >>> check_scores([0.5, 1.0000001], ids=["a", "b"])
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: score: 1.0000001 at item 'b' is outside [0, 1]. ...
    """
    z = as_numeric(score, name)
    if np.asarray(score).dtype == bool:  # safe now: as_numeric refused ragged input
        raise DataError(f"{name} holds booleans; a score is a probability in [0, 1].")
    if z.ndim != 1:
        raise DataError(f"{name} must be 1-D of shape (n_items,); got shape {z.shape}.")
    if z.size == 0:
        raise DataError(f"{name} is empty: at least one item is needed.")
    where = where or ItemWhere(ids)
    bad = ~np.isfinite(z)
    if bad.any():
        raise DataError(
            f"{name}: {_examples(bad, z, where)} is missing or non-finite. Scores must be "
            "probabilities in [0, 1]; remove those items or supply their scores."
        )
    bad = (z < 0) | (z > 1)
    if bad.any():
        raise DataError(
            f"{name}: {_examples(bad, z, where)} is outside [0, 1]. Scores must be "
            f"probabilities. {range_hint(z, 'sigmoid')}"
        )
    return z


#: How far outside [0, 1] a probability may lie and be called rounding by the hint.
ROUNDING_SLACK = 1e-3


def range_hint(values: np.ndarray, link: str) -> str:
    """The likely fix for probabilities outside [0, 1]: percentages (every value in
    [0, 100]) or logits.

    Examples
    --------
    >>> range_hint(np.array([12.5, 80.0]), "sigmoid")
    'The values lie in [0, 100]: if they are percentages, divide them by 100.'
    >>> range_hint(np.array([0.5, 1.0000001]), "sigmoid")  # doctest: +ELLIPSIS
    'The values lie in [0.5, 1.0000001], just outside [0, 1]: rounding where...'
    >>> range_hint(np.array([0.2, 1.29]), "softmax")  # doctest: +ELLIPSIS
    'The values lie in [0.2, 1.29], a little above 1: neither rounding nor percentages...'
    >>> range_hint(np.array([-2.0, 3.1]), "softmax")
    'Pass probabilities, not logits (apply a softmax first).'
    """
    v = values[np.isfinite(values)]
    if not v.size:
        return f"Pass probabilities, not logits (apply a {link} first)."
    lo, hi = float(v.min()), float(v.max())
    if lo >= -ROUNDING_SLACK and hi <= 1 + ROUNDING_SLACK:
        return (
            f"The values lie in [{lo:.10g}, {hi:.10g}], just outside [0, 1]: rounding where "
            "they were written? Bring them into [0, 1] yourself (bayescal clips nothing)."
        )
    if lo >= 0 and hi < 2:
        # as percentages every value would be below 2%; as rounding they would be within
        # ROUNDING_SLACK of [0, 1]: neither, so say what was seen rather than guess
        return (
            f"The values lie in [{lo:.6g}, {hi:.6g}], a little above 1: neither rounding nor "
            "percentages look likely; check how they were computed (rows that should sum to "
            "1 that do not, a sum or an average of probabilities)."
        )
    if lo >= 0 and hi <= 100:
        return "The values lie in [0, 100]: if they are percentages, divide them by 100."
    return f"Pass probabilities, not logits (apply a {link} first)."


def check_probs(
    probs, *, sum_tol: float = PROB_SUM_TOL, name: str = "probs", ids=None, where=None
) -> np.ndarray:
    """Class probabilities: (n_items, C >= 2), finite, in [0, 1], rows summing to one.

    Returns a float64 array of the values as given (nothing renormalised).

    Examples
    --------
    >>> check_probs([[0.25, 0.75]]).tolist()
    [[0.25, 0.75]]
    >>> check_probs([[0.5, 0.6]], ids=["a"])
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: probs rows must sum to one within 1e-05; 1 row(s) do not, ...
    """
    p = as_numeric(probs, name)
    if p.ndim != 2:
        raise DataError(f"{name} must be 2-D of shape (n_items, n_classes); got shape {p.shape}.")
    if p.shape[0] == 0:
        raise DataError(f"{name} is empty: at least one item is needed.")
    if p.shape[1] < 2:
        raise DataError(
            f"{name} has {p.shape[1]} column(s); one probability column per class is needed "
            "(at least two)."
        )
    if isinstance(sum_tol, bool) or not (isinstance(sum_tol, (int, float)) and 0 <= sum_tol < 1):
        raise ConfigError(f"sum_tol must be a number in [0, 1); got {show_value(sum_tol)}.")
    where = where or ItemWhere(ids)
    bad = np.asarray(~np.isfinite(p).all(axis=1))
    if bad.any():
        raise DataError(
            f"{name} has missing or non-finite values in {int(bad.sum())} row(s), at "
            f"{_rows(bad, where)}. Every item needs a probability for every class."
        )
    bad = np.asarray(((p < 0) | (p > 1)).any(axis=1))
    if bad.any():
        raise DataError(
            f"{name} has values outside [0, 1] in {int(bad.sum())} row(s), at {_rows(bad, where)}"
            f" (range seen {p.min():.6g}..{p.max():.6g}). {range_hint(p, 'softmax')}"
        )
    dev = np.abs(p.sum(axis=1) - 1.0)
    bad = dev > sum_tol
    if bad.any():
        i = int(np.argmax(dev))
        raise DataError(
            f"{name} rows must sum to one within {sum_tol:g}; {int(bad.sum())} row(s) do not, at "
            f"{_rows(bad, where)} (the worst, at {where(i)}, sums to {p[i].sum():.10g}). Check "
            "that there is one column per class, in class order, and that the scores are "
            "probabilities (a softmax output); renormalise the rows of a coarsely rounded "
            "file (or, in Python, pass sum_tol=)."
        )
    return p


def check_labels(
    labels,
    n_items: int,
    mask=None,
    ids=None,
    annotators=None,
    where: Where | None = None,
    n_classes: int = 2,
    rows_of: str = "scores",
) -> np.ndarray:
    """Answers: (n_items, K) with class indices ``0 .. C-1`` or missing; float32 with NaN.

    With two classes the answers are 0 or 1. Missing is NaN, ``None``,
    ``pandas.NA``, a masked entry or ``mask=True``. ``rows_of`` names what the
    rows must match in messages (``"scores"`` or ``"probability rows"``).
    """
    if isinstance(labels, np.ma.MaskedArray):
        extra = np.ma.getmaskarray(labels)
        mask = extra if mask is None else (np.asarray(mask, dtype=bool) | extra)
        labels = labels.filled(np.nan) if labels.dtype.kind == "f" else labels.data
    arr = as_numeric(labels, "labels")
    if arr.ndim == 1:
        raise DataError(
            f"labels must be 2-D of shape (n_items, n_annotators); got 1-D shape {arr.shape}. "
            "For a single annotator pass labels[:, None]."
        )
    if arr.ndim != 2:
        raise DataError(
            f"labels must be 2-D of shape (n_items, n_annotators); got shape {arr.shape}."
        )
    if arr.shape[0] != n_items:
        raise DataError(
            f"labels have {arr.shape[0]} rows but there are {n_items} {rows_of}; "
            f"each item needs one {rows_of.rstrip('s')} and one row of labels."
        )
    if arr.shape[1] == 0:
        raise DataError("labels have no annotator columns.")
    arr = arr.copy()
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype != bool:
            raise DataError(f"mask must be boolean (True = missing); got dtype {m.dtype}.")
        if m.shape != arr.shape:
            raise DataError(f"mask has shape {m.shape} but labels have shape {arr.shape}.")
        arr[m] = np.nan
    where = where or ItemWhere(ids)
    names = annotators if annotators is not None else [str(j) for j in range(arr.shape[1])]
    bad = ~np.isnan(arr) & ~_is_class(arr, n_classes)
    if bad.any():
        cols = np.flatnonzero(bad.any(axis=0))
        c = int(cols[0])
        binary = n_classes == 2
        raise DataError(
            (
                "labels must be 0, 1 or missing (NaN); "
                if binary
                else f"labels must be class indices 0..{n_classes - 1} or missing (NaN); "
            )
            + f"annotator {show_value(names[c])} has {_examples(bad[:, c], arr[:, c], where)}"
            f"{f' (and other values in {cols.size - 1} more column(s))' if cols.size > 1 else ''}"
            + (
                ". Recode the labels to 0/1 (for example 1 = positive class)."
                if binary
                else ". Recode the answers to the position of their class in the probability "
                "columns, or pass classes= and use class names."
            )
        )
    if np.isnan(arr).all():
        raise DataError(
            "every label is missing: no annotator answered any item. Check the annotator "
            "columns and the missing-value coding."
        )
    return arr.astype(np.float32)


def _is_class(values: np.ndarray, n_classes: int) -> np.ndarray:
    """Elementwise: a class index ``0 .. n_classes - 1`` (NaN and inf are not)."""
    with np.errstate(invalid="ignore"):
        return (
            np.isfinite(values)
            & (values == np.round(values))
            & (values >= 0)
            & (values < n_classes)
        )


def check_truth(
    truth, n_items: int, ids=None, where: Where | None = None, n_classes: int = 2
) -> np.ndarray:
    """Truth: 1-D class indices (0/1 for two classes), no missing values; int32."""
    y = as_numeric(truth, "truth")
    if y.ndim != 1 or y.shape[0] != n_items:
        raise DataError(f"truth must have shape ({n_items},) like the scores; got {y.shape}.")
    where = where or ItemWhere(ids)
    bad = np.isnan(y)
    if bad.any():
        raise DataError(
            f"truth: {_examples(bad, y, where)} is missing; truth (for simulations and "
            "benchmarks) must be complete."
        )
    bad = ~_is_class(y, n_classes)
    if bad.any():
        if n_classes == 2:
            raise DataError(
                f"truth: {_examples(bad, y, where)} is not 0 or 1; truth must be 0 or 1."
            )
        raise DataError(
            f"truth: {_examples(bad, y, where)} is not a class index 0..{n_classes - 1}; truth "
            "must hold class indices (or class names with classes=)."
        )
    return y.astype(np.int32)


def check_gold(
    gold, n_items: int, ids=None, where: Where | None = None, n_classes: int = 2
) -> np.ndarray:
    """Gold classes: 1-D class indices (0/1 for two classes) or NaN (not a gold item).

    Examples
    --------
    >>> check_gold([0, float("nan"), 1], 3)
    array([ 0., nan,  1.])
    >>> check_gold([2, float("nan"), 0], 3, n_classes=3)
    array([ 2., nan,  0.])
    """
    y = as_numeric(gold, "gold")
    if y.ndim != 1 or y.shape[0] != n_items:
        raise DataError(
            f"gold must have shape ({n_items},) like the scores (NaN for items that are not "
            f"gold items); got {y.shape}."
        )
    where = where or ItemWhere(ids)
    bad = ~np.isnan(y) & ~_is_class(y, n_classes)
    if bad.any():
        known = "0 or 1" if n_classes == 2 else f"a class index 0..{n_classes - 1}"
        raise DataError(
            f"gold: {_examples(bad, y, where)} is not {known}; a gold item's known class is "
            f"{known}{'' if n_classes == 2 else ' (or a class name with classes=)'}, and an item "
            "that is not a gold item is left blank (missing)."
        )
    return y.astype(np.float64)


def check_names(names, k: int, what: str = "annotator") -> list[str]:
    """Unique, non-empty string names of length ``k`` (integers become strings)."""
    if names is None:
        return [f"a{j + 1}" for j in range(k)]
    if isinstance(names, (str, bytes, dict)) or not hasattr(names, "__iter__"):
        raise DataError(f"{what} names must be a list of strings; got {show_value(names)}.")
    names = list(names)
    if len(names) != k:
        raise DataError(f"got {len(names)} {what} names for {k} {what} columns.")
    out = []
    for n in names:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (str, int, np.integer)):
            raise DataError(f"{what} names must be strings; got {show_value(n)}.")
        s = str(n)
        if not s.strip():
            raise DataError(f"{what} names must be non-empty strings.")
        out.append(s)
    check_name_sizes(out, what)  # issue 23: bounded names (bayescal.data.files)
    seen, dup = set(), []
    for s in out:
        if s in seen:
            dup.append(s)
        seen.add(s)
    if dup and what == "class":
        raise DataError(
            f"duplicated class name(s) {sorted(set(dup))!r}: every class needs its own name, "
            "one per probability column, in column order."
        )
    if dup:
        raise DataError(
            f"duplicate {what} name(s) {sorted(set(dup))!r}: every {what} needs a unique name "
            "(two columns for one annotator would count the same person twice)."
        )
    return out


def check_classes(classes, n_classes: int) -> list[str]:
    """Class names, one per probability column: unique, non-empty strings.

    Default ``"0" .. "C-1"``.

    Examples
    --------
    >>> check_classes(None, 3)
    ['0', '1', '2']
    >>> check_classes(["a", "a", "b"], 3)
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: duplicated class name(s) ['a']: every class needs its own name, ...
    """
    if classes is None:
        return [str(k) for k in range(n_classes)]
    if not isinstance(classes, (str, bytes, dict)) and hasattr(classes, "__iter__"):
        classes = list(classes)
        if len(classes) != n_classes:
            raise DataError(
                f"got {len(classes)} class names for {n_classes} classes: one name per "
                "probability column, in column order (a score is two classes)."
            )
    return check_names(classes, n_classes, "class")


def _object_array(values, what: str) -> np.ndarray:
    """A 1-D object array of the values exactly as given (no string coercion)."""
    import pandas as pd

    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, (pd.Series, pd.Index)):
        return values.to_numpy(dtype=object)
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise DataError(f"{what} must be a sequence (one per item); got {type(values).__name__}.")
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def check_ids(values, *, what: str, where: Where, allow_float: bool = False) -> np.ndarray:
    """Ids (item ids, annotator ids, groups): no missing value, one type, as written.

    Strings and integers are accepted; floats only when ``allow_float`` (groups).
    Mixed types are refused because ``1`` and ``"1"``, or ``5`` and ``"05"``, would
    otherwise be merged or kept apart depending on a conversion the user never
    asked for. A blank string is a missing id.

    Examples
    --------
    >>> check_ids(["05", "5"], what="item ids", where=str).tolist()
    ['05', '5']
    >>> check_ids([1, "1"], what="item ids", where=str)
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: item ids: numbers and strings are mixed (1 at 0, '1' at 1); ...
    """
    import pandas as pd
    from pandas.api.types import infer_dtype

    arr = _object_array(values, what)
    if arr.ndim != 1:
        raise DataError(f"{what} must be 1-D; got shape {arr.shape}.")
    if arr.size == 0:
        return arr
    missing = np.asarray(pd.isna(arr), dtype=bool)
    if arr.dtype.kind in "OUS":
        blank = np.array([isinstance(v, str) and not v.strip() for v in arr], dtype=bool)
        missing |= blank
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise DataError(
            f"{what} is missing (blank) at {where(i)} ({int(missing.sum())} such row(s)); every "
            "row needs one. Fill it in or remove the row."
        )
    kind = infer_dtype(arr, skipna=False)
    if kind in ("string", "integer") or (allow_float and kind in ("floating", "boolean")):
        check_name_sizes(arr, what, where=where, total=None)  # issue 23: bounded ids
        if kind == "floating" and not np.all(np.isfinite(arr.astype(np.float64))):
            raise DataError(f"{what} must be finite.")
        return arr
    is_str = np.array([isinstance(v, str) for v in arr], dtype=bool)
    if is_str.any() and not is_str.all():
        i, j = int(np.flatnonzero(~is_str)[0]), int(np.flatnonzero(is_str)[0])
        a, b = sorted((i, j))
        raise DataError(
            f"{what}: numbers and strings are mixed ({show_value(arr[a])} at {where(a)}, "
            f"{show_value(arr[b])} at {where(b)}); ids are compared exactly as given, so use "
            "one type (for example all strings)."
        )
    i = next(
        (
            i
            for i, v in enumerate(arr)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (str, int, np.integer))
        ),
        0,
    )
    allowed = "strings, integers or floats" if allow_float else "strings or integers"
    raise DataError(
        f"{what} must be {allowed}; {show_value(arr[i])} at {where(i)} is a "
        f"{type(arr[i]).__name__}. Convert the ids (for example to str) first."
    )


def check_item_ids(ids, n_items: int, where: Where | None = None) -> np.ndarray:
    """Item ids: ``0 .. n-1`` by default, else unique strings or integers of shape (n,)."""
    if ids is None:
        return np.arange(n_items)
    where = where or ItemWhere()
    arr = check_ids(ids, what="item ids", where=where)
    if arr.shape != (n_items,):
        raise DataError(f"item ids must have shape ({n_items},); got {arr.shape}.")
    import pandas as pd

    dup = pd.Index(arr).duplicated(keep=False)
    if dup.any():
        first = int(np.flatnonzero(dup)[0])
        second = int(np.flatnonzero(dup & (arr == arr[first]))[1])
        raise DataError(
            f"item ids must be unique; {show_value(arr[first])} appears at {where(first)} and "
            f"at {where(second)} ({int(dup.sum())} rows share an id). Give every item one row."
        )
    check_id_spellings(arr, where)
    return arr


def check_id_spellings(ids, where: Where) -> None:
    """Refuse distinct text ids that differ only in surrounding spaces (``'i5'`` and
    ``'i5 '``): ids are compared exactly, so such a pair is two items, and in a long table
    one item's answers are split between them. ``ids`` are unique; ``where(i)`` names
    position ``i``."""
    import pandas as pd

    arr = np.asarray(ids)
    if arr.dtype.kind not in "OU" or arr.size < 2:
        return
    text = pd.Series(arr, dtype=object)
    is_text = (
        np.ones(arr.size, dtype=bool)
        if arr.dtype.kind == "U" or pd.api.types.infer_dtype(text, skipna=False) == "string"
        else text.map(lambda x: isinstance(x, str)).to_numpy()
    )
    if not is_text.any():
        return
    stripped = text[is_text].str.strip()
    near = pd.Index(stripped).duplicated(keep=False)
    if near.any():
        pos = np.flatnonzero(is_text)[np.flatnonzero(near)]
        first = pos[0]
        second = next(p for p in pos[1:] if stripped.loc[p] == stripped.loc[first])
        raise DataError(
            f"item ids {show_value(arr[first])} (at {where(int(first))}) and "
            f"{show_value(arr[second])} (at {where(int(second))}) differ only in surrounding "
            "spaces, so they would be two items; strip the spaces from the id column (or make "
            "the ids differ in more than spaces)."
        )


def check_groups(group, n_items: int, where: Where | None = None) -> np.ndarray:
    """A user grouping of the items: shape (n,), no missing value, one type."""
    arr = check_ids(group, what="group", where=where or ItemWhere(), allow_float=True)
    if arr.shape != (n_items,):
        raise DataError(f"group must have shape ({n_items},); got {arr.shape}.")
    return arr


# ------------------------------------------------------------------ column roles
#: Words that name a reference label (compared case-insensitively; see :func:`reference_like`).
REFERENCE_NAMES = frozenset(
    {"truth", "label", "labels", "gold", "target", "targets", "y", "reference", "ref", "gt"}
)
# A reference word, optionally with a qualifier before or after it: true_label, y_true,
# GroundTruth, gold-label, "ground truth". Separators (_ - . space) are optional.
_QUALIFIER = r"(?:true|ground|gold|clean|final|ref|reference|class)"
_REFERENCE = re.compile(
    rf"(?:{_QUALIFIER}[_\-. ]*)?(?:{'|'.join(sorted(REFERENCE_NAMES))})"
    rf"(?:[_\-. ]*(?:{_QUALIFIER}|label|class))?"
)
# An id column: item, id, item_id, ItemID, image_id, row_index, pandas' "Unnamed: 0".
_ID = re.compile(
    r"(?:(?:item|task|image|img|sample|example|row|record|doc|document|question)[_\-. ]*)?"
    r"(?:id|ids|idx|index|item|items|uid|key)|unnamed:? *\d+"
)


def delimiter_hint(columns) -> str:
    """A sentence for a "no column" error when the header reads as one column holding
    another delimiter (a ``;``-separated export read as CSV), else ``""``."""
    names = [str(c) for c in columns]
    if len(names) != 1:
        return ""
    seen = [d for d in (";", "\t", "|") if d in names[0]]
    if not seen:
        return ""
    shown = {"\t": "a tab"}.get(seen[0], repr(seen[0]))
    return (
        f" The header is one column holding {shown}: the file looks separated by {shown}, but "
        "a .csv file is read as comma-separated (a .tsv file as tab-separated); save it with "
        "commas, or as .tsv if it is tab-separated."
    )


def refuse_reference_like(annotators, source: str) -> None:
    """Refuse inferred annotator columns named like a reference label or an item id
    (:func:`reference_like`): in memory, from a file, and out of core alike."""
    suspect = [(c, reference_like(c)) for c in annotators if reference_like(c)]
    if not suspect:
        return
    col, kind = suspect[0]
    also = f" (also {[c for c, _ in suspect[1:]]!r})" if len(suspect) > 1 else ""
    like, role = (
        ("a reference label", "truth= (--truth) or gold= (--gold)")
        if kind == "reference"
        else ("an item id", "item= (--item)")
    )
    raise DataError(
        f"{source}: column {col!r}{also} is named like {like}, so it is not taken as an "
        "annotator; pass annotators= (--annotators) to list the annotator columns, or "
        f"name it as {role}."
    )


def reference_like(name) -> str | None:
    """``"reference"`` or ``"id"`` when a column name reads like one, else None.

    A wide table's columns become annotators unless told otherwise; a column named
    like a reference label (``truth``, ``gold``, ``label``, ``target``, ``y``,
    ``reference``, also ``true_label``, ``y_true``, ``GroundTruth``) or like an item
    id (``item``, ``id``, ``item_id``, ``ItemID``) would silently become one, so the
    readers refuse it unless the annotators are named. Case is ignored; a name with
    a number in it (``label_1``, ``r2``) reads as an annotator slot.

    Examples
    --------
    >>> [reference_like(n) for n in ["True_Label", "item_id", "ItemID", "r1", "label_2"]]
    ['reference', 'id', 'id', None, None]
    >>> [reference_like(n) for n in ["rater_y", "labeller", "truthful", "Ground Truth"]]
    [None, None, None, 'reference']
    """
    text = str(name).strip().lower()
    if _REFERENCE.fullmatch(text):
        return "reference"
    if _ID.fullmatch(text):
        return "id"
    return None
