"""Where out-of-core rows come from: files cut into tasks that know their position.

A source (a path, a glob, a directory or a list of them; CSV or Parquet) is cut
into :class:`Chunk` objects, each one independent task: a byte range of a CSV
file (cut at line ends, like ``dask.dataframe.read_csv``) or a run of row groups
of a Parquet file. Reading a chunk yields pandas batches of at most
``batch_rows`` rows together with a function that turns a row of the batch into
"file ..., line ..." for error messages. Line numbers of a CSV block are counted
only when an error needs them (it rereads the earlier blocks of that file).

Files are opened through fsspec (a dependency of dask), so remote URLs such as
``s3://bucket/*.parquet`` work when the matching fsspec backend is installed.

The rules are those of the in-memory readers (:mod:`bayescal.data.files`): local
sources must be regular files; CSV text must be UTF-8 with lines of at most
``MAX_LINE_BYTES`` and every non-blank row with as many fields as the header
(checked on each block before pandas parses it, because pandas silently fills a
short row with missing values and may take an extra field as an index); id
columns are read as text, exactly as written; Parquet column types must fit
their role. An existing path is a path even when its name has glob characters
(``run[1].csv``); only a path that does not exist is expanded as a glob.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayescal.data.files import (
    MAX_LINE_BYTES,
    check_file,
    check_header,
    check_parquet_types,
    csv_row_lines,
    parse_csv_header,
)
from bayescal.data.validation import parse_numbers
from bayescal.errors import ConfigError, DataError

if TYPE_CHECKING:  # fsspec is imported lazily at run time (a dask dependency)
    from fsspec import AbstractFileSystem

CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zst")
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
#: Rows converted to numpy at once inside a task (bounds the temporary arrays).
DEFAULT_BATCH_ROWS = 1 << 20
DEFAULT_BLOCKSIZE = 32 * 2**20


@dataclass(frozen=True)
class Chunk:
    """One independent read task over a file."""

    fmt: str  # "csv" or "parquet"
    fs: AbstractFileSystem
    path: str
    index: int  # block index within the file (CSV) or first row group (Parquet)
    offset: int = 0  # CSV byte offset
    length: int | None = None  # CSV block length; None = the whole file
    blocksize: int | None = None
    compression: str | None = None
    row_groups: tuple[int, ...] = ()
    row_offset: int = 0  # Parquet rows before the first row group of the chunk


def parse_blocksize(blocksize) -> int | None:
    if blocksize is None:
        return None
    if isinstance(blocksize, str):
        from dask.utils import parse_bytes

        try:
            return int(parse_bytes(blocksize))
        except (ValueError, TypeError):
            raise ConfigError(f"blocksize {blocksize!r} is not a size such as '32MB'.") from None
    size = int(blocksize)
    if size < 1:
        raise ConfigError(f"blocksize must be positive; got {blocksize!r}.")
    return size


def is_path_source(source) -> bool:
    """True for a path, a URL, a glob, or a non-empty list of them."""
    if isinstance(source, (str, Path)):
        return True
    return (
        isinstance(source, (list, tuple))
        and len(source) > 0
        and all(isinstance(s, (str, Path)) for s in source)
    )


def _suffix_format(path: str) -> str | None:
    low = path.lower()
    if low.endswith(CSV_SUFFIXES):
        return "csv"
    if low.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def read_in_folder(path: str) -> bool:
    """Whether a file found in a folder source is read: CSV or Parquet by its name, and not
    hidden or a marker (a name starting with ``.`` or ``_``, as ``_SUCCESS`` or ``.crc``
    files of Spark and Hadoop jobs)."""
    return _suffix_format(path) is not None and not Path(path).name.startswith((".", "_"))


def list_files(source, fmt: str | None = None):
    """Expand ``source`` into (filesystem, sorted paths, format)."""
    from fsspec.core import url_to_fs

    if fmt not in (None, "csv", "parquet"):
        raise ConfigError(f"format must be None, 'csv' or 'parquet'; got {fmt!r}.")
    sources = [source] if isinstance(source, (str, Path)) else list(source)
    fs, paths = None, []
    for s in sources:
        s = str(s)
        fs_s, root = url_to_fs(s)
        if fs is None:
            fs = fs_s
        elif type(fs_s) is not type(fs):
            raise ConfigError("all sources must live on the same filesystem.")
        if fs_s.isdir(root):
            found = sorted(p for p in fs_s.find(root) if read_in_folder(p))
        elif fs_s.exists(root):
            found = [root]
        elif any(ch in root for ch in "*?["):
            found = sorted(p for p in fs_s.glob(root) if fs_s.isfile(p))
        else:
            raise DataError(
                f"{s!r} does not exist; pass a file, a "
                "directory or a glob such as 'data/*.parquet'."
            )
        if not found:
            raise DataError(f"{s!r} matches no CSV or Parquet file.")
        if _is_local(fs_s):
            for path in found:
                check_file(path, "data file")
        paths.extend(found)
    formats = {fmt or _suffix_format(p) for p in paths}
    if None in formats:
        unknown = next(p for p in paths if _suffix_format(p) is None)
        raise DataError(
            f"cannot tell the format of {unknown!r} from its name; name files *.csv or *.parquet, "
            "or pass format='csv' / format='parquet'."
        )
    if len(formats) > 1:
        raise DataError(
            "the source mixes CSV and Parquet files; summarise "
            "each format separately and add the summaries."
        )
    return fs, paths, formats.pop()


def _csv_compression(path: str) -> str | None:
    from fsspec.utils import infer_compression

    return infer_compression(path)


def _is_local(fs) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    return "file" in protocol or "local" in protocol


def read_header(fs, path: str, fmt: str) -> list[str]:
    """Column names of one file (first line of a CSV, schema of a Parquet file).

    The CSV header is read with a size limit (``MAX_LINE_BYTES``) and checked like
    the in-memory reader's (UTF-8, not compressed content, names unique and not blank);
    a Parquet file must start and end with ``PAR1``.
    """
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            with fs.open(path, "rb") as fh:
                head = fh.read(4)
                fh.seek(-4, 2)
                tail = fh.read(4)
                if head != b"PAR1" or tail != b"PAR1":
                    raise DataError(
                        f"data file {path!r} is named like Parquet but is not a Parquet file "
                        "(it must start and end with 'PAR1')."
                    )
                names = [str(n) for n in pq.ParquetFile(fh).schema_arrow.names]
        except (pa.ArrowException, OSError) as exc:
            raise DataError(f"data file {path!r} cannot be read as Parquet: {exc}.") from None
        check_header(names, path, "Parquet file")  # a name twice, as in a CSV header
        return names
    compression = _csv_compression(path)
    try:
        with fs.open(path, "rb", compression=compression) as fh:
            first = fh.readline(MAX_LINE_BYTES + 1)
    except (OSError, EOFError) as exc:
        raise DataError(
            f"CSV file {path!r} cannot be read"
            + (f" as {compression}-compressed data" if compression else "")
            + f": {exc}."
        ) from None
    return parse_csv_header(first, path, "CSV file")


def make_chunks(fs, paths, fmt: str, blocksize: int | None, batch_rows: int) -> list[Chunk]:
    """Cut every file into independent tasks."""
    chunks = []
    for path in paths:
        if fmt == "csv":
            compression = _csv_compression(path)
            size = fs.size(path)
            if compression is not None or blocksize is None or size <= blocksize:
                # compressed streams cannot be cut at byte offsets
                chunks.append(Chunk("csv", fs, path, 0, 0, None, blocksize, compression))
            else:
                for i, off in enumerate(range(0, size, blocksize)):
                    chunks.append(Chunk("csv", fs, path, i, off, blocksize, blocksize))
        else:
            import pyarrow.parquet as pq

            with fs.open(path, "rb") as fh:
                meta = pq.ParquetFile(fh).metadata
            groups: list[int] = []
            start, rows_in, offset = 0, 0, 0
            for g in range(meta.num_row_groups):
                n = meta.row_group(g).num_rows
                if groups and rows_in + n > batch_rows:
                    chunks.append(
                        Chunk(
                            "parquet",
                            fs,
                            path,
                            groups[0],
                            row_groups=tuple(groups),
                            row_offset=start,
                        )
                    )
                    start, groups, rows_in = offset, [], 0
                groups.append(g)
                rows_in += n
                offset += n
            if groups:
                chunks.append(
                    Chunk(
                        "parquet", fs, path, groups[0], row_groups=tuple(groups), row_offset=start
                    )
                )
    return chunks


def _csv_lines_before(chunk: Chunk) -> int:
    """Physical lines of the file before the chunk's first data row (header included)."""
    if chunk.offset == 0:
        return 1
    from fsspec.utils import read_block

    step = chunk.blocksize
    assert step is not None, "a CSV chunk past offset 0 is cut by a block size (make_chunks)"
    lines = 0
    with chunk.fs.open(chunk.path, "rb") as fh:
        for off in range(0, chunk.offset, step):
            lines += read_block(fh, off, step, b"\n").count(b"\n")
    return lines


def _chunk_bytes(chunk: Chunk) -> bytes:
    """The chunk's text, header line first (a later block gets the file's header)."""
    with chunk.fs.open(chunk.path, "rb", compression=chunk.compression) as fh:
        if chunk.length is None:
            return fh.read()
        from fsspec.utils import read_block

        data = read_block(fh, chunk.offset, chunk.length, b"\n")
        if chunk.offset > 0:
            fh.seek(0)
            data = fh.readline() + data
    return data


def _block_rows(chunk: Chunk, data: bytes) -> np.ndarray:
    """Check a CSV block (header line first) with the in-memory reader's structure check
    (:func:`bayescal.data.files.csv_row_lines`) and return the line of ``data`` on which
    each data row starts; messages name lines of the file."""

    def line_of(local: int) -> int:
        # only messages need it, and counting the lines before a block rereads the file
        return local if local == 1 else _csv_lines_before(chunk) + local - 1

    return csv_row_lines(data, chunk.path, "CSV file", line_of=line_of)


class CsvWhere:
    """Describe row ``r`` of a batch as ``file ..., line L`` (counted lazily: only an
    error needs it, and then the chunk is read again)."""

    def __init__(self, chunk: Chunk, first_row: int):
        self.chunk, self.first_row = chunk, first_row

    def __call__(self, r: int) -> str:
        rows = _block_rows(self.chunk, _chunk_bytes(self.chunk))
        line = _csv_lines_before(self.chunk) + int(rows[self.first_row + r]) - 1
        return f"file {self.chunk.path!r}, line {line}"


class ParquetWhere:
    def __init__(self, path: str, first_row: int):
        self.path, self.first_row = path, first_row

    def __call__(self, r: int) -> str:
        return f"file {self.path!r}, row {self.first_row + r + 1} (data rows counted from 1)"


class PartitionWhere:
    def __init__(self, partition: int, first_row: int, index):
        self.partition, self.first_row, self.index = partition, first_row, index

    def __call__(self, r: int) -> str:
        return (
            f"partition {self.partition} of the dask DataFrame, row "
            f"{self.first_row + r + 1} of that partition (index {self.index[r]!r})"
        )


def read_batches(chunk: Chunk, columns: list[str], batch_rows: int, roles: dict | None = None):
    """Yield ``(frame, where)`` batches of one chunk; ``where(r)`` names row r of the batch.

    ``roles`` maps columns to ``"number"``, ``"label"`` or ``"id"`` (as in
    :func:`bayescal.data.files.check_parquet_types`): Parquet column types are checked
    against it, and CSV id columns are read as text exactly as written.
    """
    import pandas as pd

    roles = roles or {}
    if chunk.fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        with chunk.fs.open(chunk.path, "rb") as fh:
            try:
                pf = pq.ParquetFile(fh)
                check_parquet_types(pf.schema_arrow, chunk.path, roles)
                batches = pf.iter_batches(
                    batch_size=batch_rows, row_groups=list(chunk.row_groups), columns=columns
                )
                first = chunk.row_offset
                for batch in batches:
                    frame = batch.to_pandas()
                    yield frame, ParquetWhere(chunk.path, first)
                    first += len(frame)
            except (pa.ArrowException, OSError) as exc:
                raise DataError(
                    f"data file {chunk.path!r} cannot be read as Parquet: {exc}."
                ) from None
        return

    try:
        data = _chunk_bytes(chunk)
    except (OSError, EOFError) as exc:
        raise DataError(f"CSV file {chunk.path!r} cannot be read: {exc}.") from None
    _block_rows(chunk, data)
    # Only blank cells are missing (as in bayescal.load_csv): "NA" in a label column
    # is an error to report, not a silent missing answer. Blank lines are skipped, and
    # CsvWhere maps rows back to lines.
    reader = pd.read_csv(
        io.BytesIO(data),
        usecols=columns,
        dtype={c: str for c, role in roles.items() if role == "id" and c in columns},
        keep_default_na=False,
        na_values=[""],
        skip_blank_lines=True,
        chunksize=batch_rows,
        encoding="utf-8",
    )
    first = 0
    with reader:
        for frame in reader:
            where = CsvWhere(chunk, first)
            for c in columns:
                # A number column pandas could not parse as numbers (text such as "nan" or
                # "True") gets the in-memory reader's strict rules and messages.
                if roles.get(c) in ("number", "label") and frame[c].dtype.kind not in "iuf":
                    values = frame[c].to_numpy(dtype=object)
                    frame[c] = parse_numbers(
                        values, what=f"column {c!r}", where=where, blank="missing"
                    )
            yield frame, where
            first += len(frame)
