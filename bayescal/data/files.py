"""Reading input files safely: one place that decides what a readable file is.

Every loader of both tracks (wide and long CSV, Parquet, CIFAR-10H CSV, ChaosNLI
JSONL and prediction files, npz, the out-of-core sources) opens its files
through these functions, so all of them follow the same rules (SPEC §1, "validate
once, at the edge"):

- only regular files are read: a directory, a named pipe, a device such as
  ``/dev/zero`` or a socket is refused before it is opened, so nothing waits for
  a writer or reads without end;
- text files must be UTF-8 (a leading byte-order mark is allowed and removed);
  a compressed archive, a Parquet or npz file, UTF-16 text or a NUL byte is
  named as such instead of being parsed as text;
- no line may exceed :data:`MAX_LINE_BYTES` and no CSV field
  :data:`MAX_FIELD_CHARS`, so a header is never read without a size limit;
- CSV rows must have as many fields as the header; an empty line is skipped (a
  line of spaces is a row with one field).

The structure of CSV text is checked by :func:`csv_row_lines` (shared with the
out-of-core reader) before pandas parses it, because pandas silently pads a short row
with missing values and may take an extra field as an index. Id columns stay strings
exactly as written (item id ``"05"`` is not ``"5"``); every other cell ends in
:func:`bayescal.data.validation.parse_numbers`, which refuses anything that is not a
decimal number.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayescal.errors import DataError

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_FIELD_CHARS",
    "MAX_NAME_CHARS",
    "MAX_NAMES_CHARS",
    "check_name_sizes",
    "TextTable",
    "LineWhere",
    "check_file",
    "file_kind",
    "binary_kind",
    "text_lines",
    "read_bounded",
    "check_text",
    "csv_row_lines",
    "read_csv",
    "read_jsonl",
    "parse_csv_header",
    "check_parquet_types",
    "open_parquet",
    "read_parquet",
    "read_parquet_frame",
    "check_parquet_size",
    "MAX_TABLE_BYTES",
]

#: Longest accepted line, in bytes (1 MiB). A wide row of a few thousand annotator
#: columns or a ChaosNLI example takes a few kilobytes; a line past 1 MiB is a file
#: that is not line-structured text (or has no line ends at all), and reading it
#: whole is how a header read used to grow without limit.
MAX_LINE_BYTES = 1 << 20
#: Longest accepted CSV field, in characters: the csv module's own default limit,
#: stated here so that the error can say it.
MAX_FIELD_CHARS = 131_072
#: Longest accepted name of an annotator, a class, an item or a group, in characters.
#: Names are shown in reports and repeated once per answer where answers are listed
#: (crowd-kit's long frame, fixed-width numpy string arrays): one 10,000-character
#: annotator name once made an audit of 200,000 items take 6.4 GB instead of 0.57 GB.
#: 256 characters hold a SHA-256 hex digest, a path or a URL.
MAX_NAME_CHARS = 256
#: Most characters the names of one list of annotators or classes may take together
#: (16 Mi: 100,000 crowd workers with 160-character ids).
MAX_NAMES_CHARS = 1 << 24

# Leading bytes of formats that are sometimes passed where text is expected.
_MAGIC = (
    (b"\x1f\x8b", "a gzip-compressed file", "decompress it first (gunzip)"),
    (b"PK\x03\x04", "a zip archive (or an .npz file)", "extract it first (unzip)"),
    (b"PK\x05\x06", "an empty zip archive", "extract the file you meant"),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "decompress it first (unxz)"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", "decompress it first (unzstd)"),
    (b"PAR1", "a Parquet file", "name it *.parquet so that it is read as Parquet"),
    (b"\x93NUMPY", "a NumPy .npy array", "save logits and counts with np.savez instead"),
    (b"\x89HDF", "an HDF5 / netCDF-4 file", "export the table to CSV or Parquet"),
    (b"\xff\xfe", "UTF-16 text", "save it as UTF-8"),
    (b"\xfe\xff", "UTF-16 text", "save it as UTF-8"),
)


def _name(path) -> str:
    return repr(str(path))


def file_kind(mode: int) -> str:
    """What an ``st_mode`` is, for messages: ``"a regular file"``, ``"a folder"``, ...

    Examples
    --------
    >>> file_kind(os.stat("/dev/null").st_mode), file_kind(os.lstat("/").st_mode)
    ('a character device', 'a folder')
    """
    kinds = (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((kind for test, kind in kinds if test(mode)), "not a regular file")


#: How the annotations' own files are named in messages (a folder of them is read out of core).
DATA_FILES = ("CSV file", "Parquet file", "data file")


def check_file(path, what: str = "file") -> Path:
    """Return ``path`` as a :class:`~pathlib.Path` after checking it is a readable regular file.

    The check uses ``os.stat`` only (it never opens the file), so a named pipe or a
    device is refused without waiting on it.

    Parameters
    ----------
    path : str or os.PathLike
    what : str, default "file"
        How the file is named in messages ("CSV file", "ChaosNLI file", ...).

    Raises
    ------
    DataError
        Not a path, missing, a directory, or not a regular file.

    Examples
    --------
    >>> check_file("/dev/null", "CSV file")
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: CSV file '/dev/null' is a character device, not a regular file; ...
    """
    if not isinstance(path, (str, os.PathLike)):
        raise DataError(f"{what} must be given as a path (str or Path); got {type(path).__name__}.")
    p = Path(path)
    if str(path) == "":
        raise DataError(f"{what} path is empty; pass the path of your file.")
    try:
        info = p.stat()
    except FileNotFoundError:
        raise DataError(
            f"{what} {_name(p)} does not exist (file not found). Pass the path to your local "
            "copy (nothing is downloaded)."
        ) from None
    except OSError as exc:
        raise DataError(f"{what} {_name(p)} cannot be read: {exc.strerror}.") from None
    if stat.S_ISDIR(info.st_mode):
        # only the annotations themselves can be a folder of parts (read out of core)
        folders = (
            "; a folder of CSV or Parquet parts is summarised out of core by "
            "bayescal.summarize(folder) or `bayescal audit FOLDER`"
            if what in DATA_FILES
            else ""
        )
        raise DataError(f"{what} {_name(p)} is a directory, not a file. Pass one file{folders}.")
    if not stat.S_ISREG(info.st_mode):
        raise DataError(
            f"{what} {_name(p)} is {file_kind(info.st_mode)}, not a regular file; bayescal reads "
            "only regular files (it never waits on a pipe or reads a device without end). Save "
            "the data to a file first."
        )
    if not os.access(p, os.R_OK):
        raise DataError(f"{what} {_name(p)} is not readable (permission denied).")
    return p


def check_name_sizes(names, what: str, *, where=None, total: int | None = MAX_NAMES_CHARS) -> None:
    """Refuse a name longer than :data:`MAX_NAME_CHARS`, or names longer than ``total``
    characters together (``None``: no total, for ids bounded by the data's rows).

    Non-string entries (integer ids) are not names to measure and are skipped.
    ``where(i)``, when given, names position ``i`` in the message.

    Examples
    --------
    >>> check_name_sizes(["r1", "r2"], "annotator")
    >>> check_name_sizes(["r1", "x" * 300], "annotator")
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: annotator name 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' (position 2) is 300 characters long; names may have at most 256 (they are shown in reports and repeated with every answer). Shorten or recode it.
    """  # noqa: E501
    if not hasattr(names, "__getitem__"):
        names = list(names)
    if isinstance(names, np.ndarray) and names.dtype.kind in "US":
        longest = names.dtype.itemsize // (4 if names.dtype.kind == "U" else 1)
        if longest <= MAX_NAME_CHARS and (total is None or longest * names.size <= total):
            return  # the dtype bounds every name: nothing to measure one by one
    lengths = np.fromiter(
        (len(v) if isinstance(v, (str, bytes)) else 0 for v in names), dtype=np.int64
    )
    long = np.flatnonzero(lengths > MAX_NAME_CHARS)
    if long.size:
        i = int(long[0])
        shown = repr(str(names[i])[:37] + "...")
        at = where(i) if where is not None else f"position {i + 1}"
        raise DataError(
            f"{what} name {shown} ({at}) is {int(lengths[i]):,} characters long; names may "
            f"have at most {MAX_NAME_CHARS} (they are shown in reports and repeated with every "
            "answer). Shorten or recode it."
        )
    if total is not None and int(lengths.sum()) > total:
        raise DataError(
            f"the {lengths.size:,} {what} names take {int(lengths.sum()):,} characters together, "
            f"more than the {total:,} bayescal accepts; recode them as short ids."
        )


def binary_kind(head: bytes) -> tuple[str, str] | None:
    """(description, fix) when ``head`` starts like a known binary or compressed format.

    Examples
    --------
    >>> binary_kind(b"\\x1f\\x8b\\x08\\x00")[0]
    'a gzip-compressed file'
    >>> binary_kind(b"score,r1,r2") is None
    True
    """
    for magic, description, fix in _MAGIC:
        if head.startswith(magic):
            return description, fix
    # bzip2: "BZh", a block-size digit, then the block magic (pi in BCD); "BZh" alone
    # could start a CSV header.
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        return "a bzip2-compressed file", "decompress it first (bunzip2)"
    return None


def _refuse_binary(head: bytes, path, what: str) -> None:
    found = binary_kind(head)
    if found is not None:
        description, fix = found
        raise DataError(f"{what} {_name(path)} is {description}, not UTF-8 text: {fix}.")


def text_lines(fh, path, what: str = "file", first_line: int = 1) -> Iterator[str]:
    """Decoded lines of a binary file handle, each at most :data:`MAX_LINE_BYTES` long.

    Lines keep their line end (as the csv module expects). A UTF-8 byte-order mark
    at the start of the file is removed. Raises :class:`DataError` naming the line
    for a line that is too long, a NUL byte, or bytes that are not UTF-8.
    """
    lineno = first_line - 1
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise DataError(
                f"{what} {_name(path)}, line {lineno} is longer than {MAX_LINE_BYTES:,} bytes "
                "(reading stopped there). This is not line-structured text, or a line end is "
                "missing; check the file."
            )
        if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        nul = raw.find(b"\x00")
        if nul >= 0:
            raise DataError(
                f"{what} {_name(path)}, line {lineno}, byte {nul + 1} is a NUL byte: this is "
                "binary data, not text. Pass the UTF-8 text file."
            )
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{what} {_name(path)}, line {lineno}, byte {exc.start + 1} "
                f"(0x{raw[exc.start]:02x}) is not UTF-8 text. Re-save the file as UTF-8, "
                "for example with `iconv -f latin1 -t utf-8`."
            ) from None


class LineWhere:
    """Name row ``i`` of a table read from a file: ``"'run.csv', line 7"``."""

    def __init__(self, path, lines, unit: str = "line"):
        self.path, self.lines, self.unit = str(path), lines, unit

    def __call__(self, i: int) -> str:
        return f"{_name(self.path)}, {self.unit} {int(self.lines[i])}"


@dataclass(frozen=True)
class TextTable:
    """A CSV table whose structure has been checked.

    Attributes
    ----------
    path : Path
    header : list of str
        Column names (``"0"``, ``"1"``, ... for a file read without a header).
    columns : dict of str to ndarray, each of shape (n_rows,)
        Numeric where every cell of the column is a number or empty (NaN); otherwise,
        and for id columns, the strings as written (empty cell = NaN).
    lines : ndarray of int64, shape (n_rows,)
        Line of the file on which each row starts (counted from 1, header included).
    """

    path: Path
    header: list
    columns: dict
    lines: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.lines.size)

    def where(self):
        """A callable naming row ``i`` as "file, line L"."""
        return LineWhere(self.path, self.lines)


def _short(names, limit: int = 8) -> str:
    shown = ", ".join(repr(n if len(n) <= 40 else n[:37] + "...") for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def check_header(names: list, path, what: str) -> None:
    """Header names: none blank, none repeated."""
    seen: dict[str, int] = {}
    for j, name in enumerate(names):
        if not name.strip():
            raise DataError(
                f"{what} {_name(path)}: column {j + 1} of the header has no name; name every "
                "column."
            )
        if name in seen:
            raise DataError(
                f"{what} {_name(path)} has the column {name!r} twice (columns {seen[name] + 1} "
                f"and {j + 1}); a column is chosen by its name, so every name must be unique: "
                "rename one of them, or remove the copy."
            )
        seen[name] = j


def read_bounded(fh, path, what: str, chunk: int = 8 << 20) -> bytes:
    """All bytes of an open regular file, refusing a line longer than :data:`MAX_LINE_BYTES`
    as soon as it is seen (a file without line ends is not read to its end)."""
    parts: list[bytes] = []
    run, lines = 0, 0  # run: bytes since the last line end
    while True:
        block = fh.read(chunk)
        if not block:
            return b"".join(parts)
        ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
        # lengths of the lines this block touches: the one continued from the last block,
        # the complete ones inside it, the one it leaves open
        edges = np.concatenate([[-1], ends, [len(block)]])
        length = np.diff(edges) - 1
        length[0] += run
        too_long = np.flatnonzero(length > MAX_LINE_BYTES)
        if too_long.size:
            raise DataError(
                f"{what} {_name(path)}, line {lines + int(too_long[0]) + 1} is longer than "
                f"{MAX_LINE_BYTES:,} bytes (reading stopped there). This is not "
                "line-structured text, or a line end is missing; check the file."
            )
        run = int(length[-1])
        lines += int(ends.size)
        parts.append(block)


def check_text(data: bytes, path, what: str, line_of=None) -> None:
    """Refuse a NUL byte or bytes that are not UTF-8, naming the line (``line_of`` maps a
    line of ``data``, counted from 1, to the line of the file)."""
    line_of = line_of or (lambda k: k)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = line_of(data.count(b"\n", 0, nul) + 1)
        byte = nul - data.rfind(b"\n", 0, nul)
        raise DataError(
            f"{what} {_name(path)}, line {line}, byte {byte} is a NUL byte: this is binary "
            "data, not text. Pass the UTF-8 text file."
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = line_of(data.count(b"\n", 0, exc.start) + 1)
        raise DataError(
            f"{what} {_name(path)}, line {line}, byte {exc.start - start + 1} "
            f"(0x{data[exc.start]:02x}) is not UTF-8 text. Re-save the file as UTF-8, for "
            "example with `iconv -f latin1 -t utf-8`."
        ) from None


def csv_row_lines(
    data: bytes, path, what: str = "CSV file", *, delimiter: str = ",", line_of=None, header=True
) -> np.ndarray:
    """Check the structure of CSV text whose first line is the header; return the line
    (of ``data``, counted from 1) on which each data row starts.

    Every non-empty line must have as many fields as the header and be at most
    :data:`MAX_LINE_BYTES` long; an empty line is not a row. Text without quote
    characters below the header is checked with vectorised byte counts (fast: a field
    cannot contain the delimiter or a line end there); text with quotes goes through the
    csv module, which knows where a quoted field ends. ``line_of`` maps a line of
    ``data`` to the line of the file in messages (the out-of-core reader checks one
    block at a time); with
    ``header=False`` the first line of ``data`` is a made-up header and messages compare
    with the file's first row.

    Examples
    --------
    >>> csv_row_lines(b"a,b\\n1,2\\n\\n3,4\\n", "t.csv").tolist()
    [2, 4]
    """
    line_of = line_of or (lambda k: k)
    check_text(data, path, what, line_of)
    body = data.find(b"\n") + 1 or len(data)
    if b'"' in data[body:]:
        return _quoted_row_lines(data, path, what, delimiter, line_of, header)
    b = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(b == 10)
    if data and not data.endswith(b"\n"):
        ends = np.append(ends, len(data))
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    length = ends - starts
    cr = np.zeros(ends.size, dtype=bool)
    cr[length > 0] = b[ends[length > 0] - 1] == 13
    length = length - cr
    long = np.flatnonzero(length > MAX_LINE_BYTES)
    if long.size:
        raise DataError(
            f"{what} {_name(path)}, line {line_of(int(long[0]) + 1)} is longer than "
            f"{MAX_LINE_BYTES:,} bytes; this is not line-structured text."
        )
    bare = np.flatnonzero(b[:-1] == 13)
    bare = bare[b[bare + 1] != 10]
    if bare.size:
        line = line_of(data.count(b"\n", 0, int(bare[0])) + 1)
        raise DataError(
            f"{what} {_name(path)}, line {line} has a carriage return inside it (line ends of "
            "old Mac files?); use LF or CRLF line ends."
        )
    if ends.size == 0:
        return np.zeros(0, dtype=np.int64)
    for wide in np.flatnonzero(length > MAX_FIELD_CHARS).tolist():  # the csv module's limit
        row = data[starts[wide] : starts[wide] + length[wide]].decode("utf-8", errors="replace")
        if max(map(len, row.split(delimiter))) > MAX_FIELD_CHARS:
            raise _field_too_long(what, path, line_of(wide + 1))
    seps = np.flatnonzero(b == ord(delimiter))
    fields = np.searchsorted(seps, ends) - np.searchsorted(seps, starts) + 1
    empty = length == 0
    n_cols = int(fields[0])
    if b'"' in data[:body]:  # a quoted header (quotes may hide delimiters): ask the csv module
        n_cols = len(parse_csv_header(data[:body], path, what, delimiter, line_of(1), False))
    bad = np.flatnonzero(~empty[1:] & (fields[1:] != n_cols))
    if bad.size:
        k = int(bad[0]) + 1
        _wrong_fields(data, path, what, line_of, k + 1, int(fields[k]), delimiter, header)
    return np.flatnonzero(~empty[1:]) + 2


def _field_too_long(what: str, path, line: int) -> DataError:
    """The error for a field past :data:`MAX_FIELD_CHARS` on ``line``, quoted or not."""
    return DataError(
        f"{what} {_name(path)}, line {line} has a field longer than {MAX_FIELD_CHARS:,} "
        'characters; an unclosed quote (") often causes this. Fix the quoting, or the field.'
    )


def _wrong_fields(data, path, what, line_of, local, n, delimiter, header):
    """Raise the error for line ``local`` of ``data`` having ``n`` fields."""
    first = data.split(b"\n", 1)[0].rstrip(b"\r") + b"\n"
    names = parse_csv_header(first, path, what, delimiter, line=line_of(1), check=False)
    against = (
        f"the header (line {line_of(1)}) has {len(names)}: {_short(names)}"
        if header
        else f"the first row (line {line_of(2)}) has {len(names)}"
    )
    raise DataError(
        f"{what} {_name(path)}, line {line_of(local)} has {n} fields but {against}. Quote "
        f"fields that contain {delimiter!r}, or fix the row."
    )


def _quoted_row_lines(data, path, what, delimiter, line_of, header) -> np.ndarray:
    reader = csv.reader(text_lines(io.BytesIO(data), path, what), delimiter=delimiter, strict=True)
    rows, end, n_cols = [], 0, None
    try:
        for row in reader:
            start, end = end + 1, reader.line_num
            if not row:
                continue
            if n_cols is None:
                n_cols = len(row)
            elif len(row) != n_cols:
                _wrong_fields(data, path, what, line_of, start, len(row), delimiter, header)
            else:
                rows.append(start)
    except csv.Error as exc:
        line = line_of(reader.line_num)
        if "field limit" in str(exc):
            raise _field_too_long(what, path, line) from None
        raise DataError(
            f"{what} {_name(path)}, line {line}: not valid CSV ({exc}). Check the quoting of "
            "that line."
        ) from None
    return np.asarray(rows, dtype=np.int64)


def read_csv(
    path, *, what: str = "CSV file", header: bool = True, delimiter=None, text_columns=()
) -> TextTable:
    """Read a delimited text file into columns, checking its structure first.

    Parameters
    ----------
    path : str or Path
    what : str, default "CSV file"
        How the file is named in messages.
    header : bool, default True
        First line holds the column names; otherwise columns are named ``"0"``,
        ``"1"``, ... and every row must have as many fields as the first.
    delimiter : str, optional
        Default ``"\\t"`` for ``*.tsv`` and ``","`` otherwise.
    text_columns : sequence of str, default ()
        Columns kept as strings exactly as written (ids): ``"05"`` stays ``"05"``.

    Returns
    -------
    TextTable
        Columns are numpy arrays: numeric where every cell is a number or empty (NaN),
        strings (object) otherwise and for ``text_columns`` (empty cell = NaN); turn them
        into numbers with :func:`bayescal.data.validation.parse_numbers`.

    Raises
    ------
    DataError
        For everything :func:`check_file` and :func:`csv_row_lines` refuse, an empty
        file, a blank or repeated column name, no data rows.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(p, "w").write("item,score\\n05,0.5\\n\\n5,0.25\\n")
    >>> t = read_csv(p, text_columns=["item"])
    >>> t.columns["item"].tolist(), t.columns["score"].tolist(), t.lines.tolist()
    (['05', '5'], [0.5, 0.25], [2, 4])
    """
    import pandas as pd

    p = check_file(path, what)
    if delimiter is None:
        delimiter = "\t" if p.suffix.lower() == ".tsv" else ","
    with p.open("rb") as fh:
        data = read_bounded(fh, p, what)
    _refuse_binary(data[:16], p, what)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    # The first non-empty line is the header; empty lines before it are not rows.
    skipped = len(data) - len(data.lstrip(b"\r\n"))
    lead = data[:skipped].count(b"\n")
    data = data[skipped:]
    if not data.strip():
        raise DataError(
            f"{what} {_name(p)} is empty: it needs "
            + ("a header row and data rows." if header else "data rows.")
        )
    first_line = data.split(b"\n", 1)[0]
    names = parse_csv_header(first_line + b"\n", p, what, delimiter, line=lead + 1, check=header)
    if not header:
        names = [str(j) for j in range(len(names))]
        data = delimiter.join(names).encode() + b"\n" + data
        lead -= 1
    lines = csv_row_lines(
        data, p, what, delimiter=delimiter, line_of=lambda k: k + lead, header=header
    )
    if lines.size == 0:
        raise DataError(
            f"{what} {_name(p)} has a header ({_short(names)}) but no data rows: add one "
            "row per item below it, or pass the file that holds the rows."
        )
    text = [c for c in text_columns if c in names]
    frame = pd.read_csv(
        io.BytesIO(data),
        sep=delimiter,
        dtype={c: object for c in text},
        keep_default_na=False,
        na_values=[""],
        skip_blank_lines=True,
        encoding="utf-8",
        engine="c",
    )
    if len(frame) != lines.size or list(frame.columns) != names:
        raise DataError(  # pragma: no cover - a disagreement of the two parsers is a bug
            f"{what} {_name(p)}: the CSV parser found {len(frame)} rows but the structure "
            f"check {lines.size}; please report this file."
        )
    columns = {c: frame[c].to_numpy() for c in names}
    return TextTable(p, list(names), columns, lines + lead)


def parse_csv_header(
    raw: bytes, path, what: str = "CSV file", delimiter: str = ",", line: int = 1, check=True
) -> list:
    """Column names from the first line of a CSV file (bytes, at most one line); with
    ``check=False`` the fields of a first data row (their number is what matters)."""
    _refuse_binary(raw[:16], path, what)
    lines = list(text_lines(_OneLine(raw), path, what, first_line=line))
    if not lines or not lines[0].strip():
        raise DataError(f"{what} {_name(path)} is empty: it needs a header row.")
    try:
        names = next(csv.reader(lines, delimiter=delimiter, strict=True))
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise _field_too_long(what, path, line) from None
        raise DataError(
            f"{what} {_name(path)}, line {line}: not a valid CSV header ({exc})."
        ) from None
    if check:
        check_header(names, path, what)
    return names


class _OneLine:
    """A file-like object over bytes already read (``readline`` only)."""

    def __init__(self, raw: bytes):
        self.raw = raw

    def readline(self, limit: int) -> bytes:
        out, self.raw = self.raw[:limit], self.raw[limit:]
        return out


def read_jsonl(path, what: str = "JSON-lines file") -> Iterator[tuple[int, object]]:
    """Yield ``(line number, value)`` for every non-blank line of a JSON-lines file.

    JSON's ``NaN`` / ``Infinity`` literals (accepted by Python's json module, not by
    the JSON standard) are refused, as are integers with more than 4300 digits and
    nesting deeper than the parser's recursion limit, each naming the line.
    """
    p = check_file(path, what)

    def refuse_constant(token):
        raise ValueError(f"{token} is not a JSON number")

    with p.open("rb") as fh:
        _refuse_binary(fh.read(16), p, what)
        fh.seek(0)
        for lineno, line in enumerate(text_lines(fh, p, what), 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line, parse_constant=refuse_constant)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{what} {_name(p)}, line {lineno}: not valid JSON ({exc.msg} at character "
                    f"{exc.colno}). Every line must be one JSON object."
                ) from None
            except (ValueError, RecursionError) as exc:
                reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                raise DataError(
                    f"{what} {_name(p)}, line {lineno}: not usable JSON ({reason})."
                ) from None


#: Parquet column kinds and the Arrow types that belong to each.
PARQUET_KINDS = {
    "number": "integer or floating-point",
    "label": "integer, floating-point or boolean (null = missing answer)",
    "id": "string or integer",
}


def _arrow_kind(typ) -> str:
    import pyarrow as pa

    if pa.types.is_boolean(typ):
        return "boolean"
    if pa.types.is_integer(typ):
        return "integer"
    if pa.types.is_floating(typ):
        return "floating"
    if pa.types.is_null(typ):
        return "null"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "string"
    return str(typ)


def check_parquet_types(schema, path, roles: dict) -> None:
    """Refuse Parquet columns whose type does not fit their role.

    ``roles`` maps a column name to ``"number"`` (scores: integer or float; a
    boolean is not a probability), ``"label"`` (labels and truth: integer, float,
    boolean, or all-null) or ``"id"`` (item and annotator ids: string or integer;
    floats are refused because ``1.0`` and ``1`` would silently become one id).
    Lists, structs, maps, timestamps, decimals, binary and dictionary-encoded
    columns are refused for every role.
    """
    allowed = {
        "number": {"integer", "floating"},
        "label": {"integer", "floating", "boolean", "null"},
        "id": {"string", "integer"},
    }
    for column, role in roles.items():
        if column is None:
            continue
        idx = schema.get_field_index(column)
        if idx < 0:
            continue  # a missing column is reported by the caller with the column list
        kind = _arrow_kind(schema.field(idx).type)
        if kind not in allowed[role]:
            raise DataError(
                f"Parquet file {_name(path)}: column {column!r} has type {kind}; it must be "
                f"{PARQUET_KINDS[role]}. Convert the column (for example with "
                "pandas .astype) and write the file again."
            )


def open_parquet(path, what: str = "Parquet file"):
    """Open a Parquet file for reading after :func:`check_file` and the ``PAR1`` magic check.

    Returns a :class:`pyarrow.parquet.ParquetFile`; its ``schema_arrow`` lists the
    columns. Nothing but the footer is read.
    """
    p = check_file(path, what)
    with p.open("rb") as fh:
        head = fh.read(4)
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(size - 4, 0))
        tail = fh.read(4)
    if head != b"PAR1" or tail != b"PAR1" or size < 12:
        found = binary_kind(head)
        kind = found[0] if found else "not a Parquet file"
        raise DataError(
            f"{what} {_name(p)} is {kind} (a Parquet file starts and ends with 'PAR1'). "
            "Write it with DataFrame.to_parquet, or name a CSV file *.csv."
        )
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError("reading Parquet needs pyarrow: pip install pyarrow.") from None
    try:
        pf = pq.ParquetFile(p)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{what} {_name(p)} cannot be read as Parquet: {exc}.") from None
    # Parquet allows a column name twice (pandas then returns a frame for it): refused as
    # in a CSV header, so one name means one column
    check_header([str(n) for n in pf.schema_arrow.names], p, what)
    return pf


#: Most memory the columns read from one Parquet file may declare (2 GiB, estimated from
#: the footer as pandas holds them: 8 bytes per value, plus the text and a Python string
#: per row for text columns): 10^7 items with 25 numeric columns. Larger tables are
#: summarised out of core (``bayescal.summarize(folder)``, ``bayescal audit FOLDER``).
MAX_TABLE_BYTES = 1 << 31
#: Bytes a pandas object column spends per row besides the text (pointer and str header).
_STR_OVERHEAD = 57


def check_parquet_size(meta, path, columns, what: str = "Parquet file") -> None:
    """Refuse a Parquet file by what its footer declares, before any column is read.

    The row groups' row counts must add up to the file's, and the columns in
    ``columns`` may declare at most :data:`MAX_TABLE_BYTES` of memory: Parquet's
    run-length encoding lets a few kilobytes declare billions of rows, so the size of
    the file says nothing about the size of the table.

    Parameters
    ----------
    meta : pyarrow.parquet.FileMetaData
    path : str or Path
    columns : iterable of str
        The columns that will be read (absent ones are ignored).
    """
    rows = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    if sum(rows) != meta.num_rows or any(n < 0 for n in rows):
        raise DataError(
            f"{what} {_name(path)}: its row groups hold {sum(rows):,} rows but its footer "
            f"declares {meta.num_rows:,}; the file is damaged. Write it again."
        )
    wanted = set(columns)
    need = 0
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        for i in range(rg.num_columns):
            col = rg.column(i)
            if col.path_in_schema not in wanted:
                continue
            need += 8 * rg.num_rows
            if col.physical_type in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
                need += col.total_uncompressed_size + _STR_OVERHEAD * rg.num_rows
    if need > MAX_TABLE_BYTES:
        raise DataError(
            f"{what} {_name(path)} declares {meta.num_rows:,} rows; its {len(wanted)} columns "
            f"would take about {need / 2**30:.1f} GiB in memory, more than the "
            f"{MAX_TABLE_BYTES / 2**30:.0f} GiB bayescal reads from one file. Summarise it out "
            "of core (bayescal.summarize(path) or `bayescal audit FOLDER`), or split it."
        )


def read_parquet_frame(path, what: str = "Parquet file"):
    """Every column of a Parquet file as a pandas DataFrame, after :func:`open_parquet` and
    :func:`check_parquet_size` (for readers that check the column types themselves)."""
    import pyarrow as pa

    pf = open_parquet(path, what)
    check_parquet_size(pf.metadata, path, pf.schema_arrow.names, what)
    try:
        return pf.read().to_pandas()
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{what} {_name(path)} cannot be read as Parquet: {exc}.") from None


def read_parquet(pf, path, roles: dict, what: str = "Parquet file"):
    """The columns named in ``roles`` of an opened Parquet file, as a pandas DataFrame.

    Column types (:func:`check_parquet_types`) and declared sizes
    (:func:`check_parquet_size`) are checked before any data are read; columns absent
    from the file are left out (the caller names them).
    """
    import pyarrow as pa

    schema = pf.schema_arrow
    check_parquet_types(schema, path, roles)
    wanted = [c for c in dict.fromkeys(roles) if c is not None and c in schema.names]
    check_parquet_size(pf.metadata, path, wanted, what)
    try:
        table = pf.read(columns=wanted)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{what} {_name(path)} cannot be read as Parquet: {exc}.") from None
    return table.to_pandas()
