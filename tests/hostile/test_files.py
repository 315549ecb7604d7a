"""Issue 11 reproducers about files: each hostile file gets one clean line, never a traceback.

Every case is checked through the Python loader (a ``DataError`` naming the file, the
line or column, the value and the fix) and, where the issue reported a traceback from
the command line, through ``bayescal audit`` in-process (exit 2, one line on stderr).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hostile_helpers import GOOD_LONG, GOOD_WIDE, one_line_error, run_cli, wide_rows

from bayescal import load_csv, load_long, load_table
from bayescal.data.files import MAX_FIELD_CHARS, MAX_LINE_BYTES
from bayescal.errors import DataError
from bayescal.scale import summarize

AUDIT = ["audit", "--channels", "score-bin-em", "--quiet"]


def audit_error(path, tmp_path, *extra) -> str:
    return one_line_error([*AUDIT, str(path), "--out", str(tmp_path / "out"), *extra])


# ------------------------------------------------------------------ not text / wrong format
def test_latin1_text_names_line_and_byte(tmp_path):
    p = tmp_path / "latin.csv"
    p.write_bytes("score,r1,r2\n0.1,0,1\n0.5,1,caf\xe9\n".encode("latin1"))
    with pytest.raises(DataError, match=r"line 3, byte 10 \(0xe9\) is not UTF-8 text.*iconv"):
        load_csv(p)
    assert "is not UTF-8" in audit_error(p, tmp_path)


def test_utf8_bom_and_crlf_are_accepted(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbfscore,r1,r2\r\n0.5,0,1\r\n0.3,1,1\r\n\r\n")
    d = load_csv(p)
    assert d.n_items == 2 and d.annotators == ["r1", "r2"]


COMPRESSED = [
    ("gzip", gzip.compress, "gzip-compressed"),
    ("bz2", bz2.compress, "bzip2-compressed"),
    ("xz", lzma.compress, "xz-compressed"),
]


@pytest.mark.parametrize("name,compress,kind", COMPRESSED, ids=[c[0] for c in COMPRESSED])
def test_compressed_file_given_as_csv(tmp_path, name, compress, kind):
    p = tmp_path / "data.csv"
    p.write_bytes(compress(GOOD_WIDE.encode()))
    with pytest.raises(DataError, match=f"is an? {kind} file, not UTF-8 text: decompress it first"):
        load_csv(p)
    assert kind in audit_error(p, tmp_path)


def test_zip_given_as_csv(tmp_path):
    p = tmp_path / "data.csv"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("data.csv", GOOD_WIDE)
    assert "zip archive" in audit_error(p, tmp_path)
    with pytest.raises(DataError, match="zip archive"):
        load_long(p)


def test_binary_garbage_is_not_utf8(tmp_path):
    p = tmp_path / "noise.csv"
    p.write_bytes(np.random.default_rng(0).integers(128, 256, 64, dtype=np.uint8).tobytes())
    assert "not UTF-8" in audit_error(p, tmp_path)


def test_nul_byte_is_binary(tmp_path):
    p = tmp_path / "nul.csv"
    p.write_bytes(b"score,r1\n0.1,\x001\n")
    with pytest.raises(DataError, match=r"line 2, byte 5 is a NUL byte"):
        load_csv(p)


def test_parquet_content_named_csv(tmp_path):
    p = tmp_path / "data.csv"
    pd.DataFrame({"score": [0.1], "r1": [1]}).to_parquet(p)
    assert "is a Parquet file" in audit_error(p, tmp_path)


def test_file_that_is_not_parquet(tmp_path):
    p = tmp_path / "data.parquet"
    p.write_text(GOOD_WIDE)
    with pytest.raises(DataError, match=r"is not a Parquet file \(a Parquet file starts and"):
        load_table(p)
    assert "not a Parquet file" in audit_error(p, tmp_path)
    truncated = tmp_path / "cut.parquet"
    pd.DataFrame({"score": [0.1, 0.5], "r1": [1, 0]}).to_parquet(truncated)
    truncated.write_bytes(truncated.read_bytes()[:-40] + b"PAR1")
    assert "cannot be read as Parquet" in audit_error(truncated, tmp_path)


# ------------------------------------------------------------------ structure of a CSV
def test_row_with_more_fields_than_header(tmp_path):
    p = tmp_path / "more.csv"
    p.write_text("score,r1,r2\n0.1,0,1\n0.5,1,1,1\n")
    msg = audit_error(p, tmp_path)
    assert "line 3 has 4 fields but the header (line 1) has 3" in msg
    assert "Quote fields" in msg


def test_row_with_fewer_fields_is_not_padded_with_missing_answers(tmp_path):
    p = tmp_path / "fewer.csv"
    p.write_text("score,r1,r2\n0.1,0,1\n\n0.5,1\n")
    with pytest.raises(DataError, match="line 4 has 2 fields but the header"):
        load_csv(p)


def test_header_field_longer_than_csv_limit(tmp_path):
    p = tmp_path / "wide_header.csv"
    p.write_text("score," + "x" * (MAX_FIELD_CHARS + 10) + "\n0.1,1\n")
    msg = audit_error(p, tmp_path)
    assert f"line 1 has a field longer than {MAX_FIELD_CHARS:,} characters" in msg
    assert len(msg) < 300  # the field itself is not echoed


@pytest.mark.parametrize(
    "field", [" " * (MAX_FIELD_CHARS + 10) + "0.5", "é" * (MAX_FIELD_CHARS + 1)]
)
def test_an_unquoted_data_field_past_the_limit_is_refused_like_a_quoted_one(tmp_path, field):
    """The csv module refuses a field past its limit only in quoted text; a file without
    quotes goes through the byte-count check, which let 200,000 leading spaces before a
    score pass. The limit counts characters (2-byte 'é' under it in bytes is not)."""
    p = tmp_path / "wide_field.csv"
    p.write_text("score,r1\n0.1,1\n" + field + ",0\n", encoding="utf-8")
    msg = audit_error(p, tmp_path)
    assert f"line 3 has a field longer than {MAX_FIELD_CHARS:,} characters" in msg
    assert len(msg) < 300
    fits = tmp_path / "at_limit.csv"  # exactly at the limit: the check is not what refuses it
    fits.write_text("score,r1\n0.1,1\n" + " " * (MAX_FIELD_CHARS - 3) + "0.5,0\n")
    assert "longer than" not in audit_error(fits, tmp_path)


def test_unclosed_quote_is_named(tmp_path):
    p = tmp_path / "quote.csv"
    p.write_text('score,r1\n"0.1,1\n0.2,0\n')
    with pytest.raises(DataError, match="not valid CSV|longer than"):
        load_csv(p)


def test_line_without_end_is_bounded(tmp_path):
    p = tmp_path / "endless.csv"
    with p.open("wb") as fh:
        fh.write(b"score,r1\n")
        fh.write(b"0" * (MAX_LINE_BYTES + 100))
    msg = audit_error(p, tmp_path)
    assert f"line 2 is longer than {MAX_LINE_BYTES:,} bytes" in msg


def test_out_of_core_header_read_is_bounded(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_bytes(b"score," + b"x" * (MAX_LINE_BYTES + 10))
    with pytest.raises(DataError, match=f"line 1 is longer than {MAX_LINE_BYTES:,} bytes"):
        summarize(str(folder))


def test_empty_and_header_only(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    assert "is empty" in audit_error(p, tmp_path)
    p.write_text("score,r1,r2\n\n\n")
    assert "no data rows" in audit_error(p, tmp_path)


# ------------------------------------------------------------------ not a regular file
def _cli_subprocess(args, timeout=60):
    # A subprocess with a timeout: if the guard failed, reading would block or never end.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "bayescal", *AUDIT, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_dev_zero_as_data_is_refused_at_once(tmp_path):
    out = _cli_subprocess(["/dev/zero", "--out", str(tmp_path / "out")])
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "bayescal: error: CSV file '/dev/zero' is a character device, not a regular file; "
        "bayescal reads only regular files (it never waits on a pipe or reads a device "
        "without end). Save the data to a file first."
    ]


def test_named_pipe_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    out = _cli_subprocess([str(fifo), "--out", str(tmp_path / "out")])
    assert out.returncode == 2 and "is a named pipe, not a regular file" in out.stderr
    with pytest.raises(DataError, match="named pipe"):
        load_long(fifo)
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(GOOD_WIDE)
    os.mkfifo(folder / "b.csv")
    with pytest.raises(DataError, match="b.csv' is a named pipe"):
        summarize(str(folder))


def test_load_csv_on_a_directory(tmp_path):
    with pytest.raises(DataError, match="is a directory, not a file.*summarised out of core"):
        load_csv(tmp_path)
    with pytest.raises(DataError, match="is a directory"):
        load_long(tmp_path)
    # a file that is not the annotations (a plan's pilot scores, a priors file) cannot be a
    # folder of parts: no out-of-core hint there
    from bayescal.report.plan_cli_run import read_pilot_scores

    with pytest.raises(DataError, match=r"is a directory, not a file\. Pass one file\.$"):
        read_pilot_scores(tmp_path, 3)


def test_path_of_wrong_type():
    with pytest.raises(DataError, match="must be given as a path"):
        load_csv(123)


# ------------------------------------------------------------------ paths and globs
def test_existing_path_with_brackets_is_a_path(tmp_path):
    p = tmp_path / "run[1].csv"
    p.write_text(wide_rows(40, 3))
    code, err = run_cli([*AUDIT, str(p), "--out", str(tmp_path / "out")])
    assert code == 0, err
    assert (tmp_path / "out" / "summary.json").exists()
    s = summarize(str(p), groups=2, bins=2)  # the out-of-core router takes it as a path too
    assert s.n_items + int(s.n_unannotated.sum()) == 40


def test_missing_path_with_glob_characters_is_a_glob(tmp_path):
    msg = audit_error(tmp_path / "part-*.csv", tmp_path)
    assert "matches no CSV or Parquet file" in msg


def test_folder_input_with_two_part_long(tmp_path):
    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "a.csv").write_text(GOOD_LONG)
    msg = audit_error(folder, tmp_path, "--long", "item,annotator")
    assert "--long needs three column names ITEM,ANNOTATOR,LABEL" in msg
    msg = audit_error(tmp_path / "x.csv", tmp_path, "--long", "item,,label")
    assert "--long needs three column names" in msg


def test_empty_annotator_name_in_option(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text(GOOD_WIDE)
    assert "--annotators has an empty name at position 2" in audit_error(
        p, tmp_path, "--annotators", "r1,,r2"
    )


# ------------------------------------------------------------------ values in messages
def test_score_just_above_one_is_shown_with_its_line(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text("score,r1,r2\n0.5,0,1\n0.2,1,1\n1.0000001,1,1\n")
    msg = audit_error(p, tmp_path)
    assert "score column 'score': 1.0000001 at '" in msg
    assert "v.csv', line 4 is outside [0, 1]" in msg


def test_five_thousand_annotators_reach_the_design_check_with_a_short_message(tmp_path):
    # no 3**K table any more: the summary holds the 3 observed patterns, and the design
    # check names what is wrong (most annotators answered nothing) in one short line
    p = tmp_path / "k5000.csv"
    p.write_text(wide_rows(3, 5000))
    msg = audit_error(p, tmp_path)
    assert "answered no item" in msg and "more" in msg
    assert len(msg) < 400


# ------------------------------------------------------------------ Parquet column types
PARQUET_TYPES = [
    ("text score", {"score": ["0.1", "0.5"], "r1": [1, 0]}, "'score' has type string"),
    ("boolean score", {"score": [True, False], "r1": [1, 0]}, "'score' has type boolean"),
    ("list labels", {"score": [0.1, 0.5], "r1": [[1], [0]]}, "'r1' has type list"),
    ("dict labels", {"score": [0.1, 0.5], "r1": [{"a": 1}, {"a": 0}]}, "'r1' has type struct"),
    (
        "timestamp labels",
        {"score": [0.1, 0.5], "r1": pd.to_datetime(["2020-01-01", "2020-01-02"])},
        "'r1' has type timestamp",
    ),
    ("text labels", {"score": [0.1, 0.5], "r1": ["yes", "no"]}, "'r1' has type string"),
    (
        "categorical labels",
        {"score": [0.1, 0.5], "r1": pd.Categorical(["1", "0"])},
        "'r1' has type dictionary",
    ),
]


@pytest.mark.parametrize("name,columns,match", PARQUET_TYPES, ids=[c[0] for c in PARQUET_TYPES])
def test_parquet_with_unexpected_column_types(tmp_path, name, columns, match):
    p = tmp_path / "t.parquet"
    pd.DataFrame(columns).to_parquet(p)
    with pytest.raises(DataError, match=match):
        load_table(p)
    assert match.split("'")[1] in audit_error(p, tmp_path)


def test_parquet_with_a_column_name_twice_is_refused_as_csv_is(tmp_path):
    """Parquet allows a name twice; pandas then returns a frame for it, and the audit died
    with an AttributeError (exit 1). Refused by name, in a file, a long table and a folder
    read out of core, like a repeated name in a CSV header."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    n = 200
    columns = [np.arange(n), rng.random(n), *(rng.integers(0, 2, n) for _ in range(3))]
    table = pa.Table.from_arrays(columns, names=["item", "score", "r1", "r2", "r2"])
    p = tmp_path / "dup.parquet"
    pq.write_table(table, p)
    expected = "has the column 'r2' twice (columns 4 and 5)"
    with pytest.raises(DataError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        load_table(p, item="item")
    assert expected in audit_error(p, tmp_path, "--item", "item", "--annotators", "r1,r2")
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(table, folder / "a.parquet")
    assert expected in audit_error(folder, tmp_path, "--item", "item")
    long = pa.Table.from_arrays(
        [np.arange(n), np.full(n, "r1"), rng.integers(0, 2, n), rng.integers(0, 2, n)],
        names=["item", "annotator", "label", "label"],
    )
    pq.write_table(long, tmp_path / "long.parquet")
    with pytest.raises(DataError, match="has the column 'label' twice"):
        load_long(tmp_path / "long.parquet", item="item", annotator="annotator", label="label")


def test_parquet_boolean_labels_and_nulls_are_answers(tmp_path):
    # Decision: a boolean label or truth column is an unambiguous 0/1 and is accepted;
    # a null is a missing answer, exactly like a blank CSV cell.
    p = tmp_path / "b.parquet"
    pd.DataFrame(
        {
            "score": [0.1, 0.5, 0.9],
            "r1": pd.array([True, None, False], dtype="boolean"),
            "r2": [1.0, 0.0, None],
            "y": [False, True, True],
        }
    ).to_parquet(p)
    d = load_table(p, truth="y")
    np.testing.assert_array_equal(np.nan_to_num(d.labels, nan=-1), [[1, 1], [-1, 0], [0, -1]])
    assert d.truth.tolist() == [0, 1, 1]


def test_parquet_float_item_ids_are_refused(tmp_path):
    p = tmp_path / "ids.parquet"
    pd.DataFrame({"id": [1.0, 2.0], "score": [0.1, 0.5], "r1": [1, 0]}).to_parquet(p)
    with pytest.raises(DataError, match="'id' has type floating; it must be string or integer"):
        load_table(p, item="id")


# ------------------------------------------------------------ npz archives that expand
def _npy_bytes(shape, payload: bytes) -> bytes:
    """A .npy member whose header declares ``shape`` (float64) followed by ``payload``."""
    import io

    from numpy.lib import format as npy_format

    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buf.getvalue() + payload


def test_npz_whose_header_promises_more_than_it_holds_is_refused(tmp_path):
    """A 1 kB archive declaring 8 TB of logits must be refused before numpy allocates."""
    from bayescal.ambiguity.loaders import load_npz

    f = tmp_path / "forged.npz"
    with zipfile.ZipFile(f, "w") as zf:
        zf.writestr("logits.npy", _npy_bytes((10**12,), b"\0" * 80))
        zf.writestr("counts.npy", _npy_bytes((10,), b"\0" * 80))
    with pytest.raises(DataError, match="declares shape .* damaged or forged"):
        load_npz(f)


def test_npz_that_expands_beyond_the_limit_is_refused(tmp_path, monkeypatch):
    """A compressed archive of zeros (a zip bomb in small): the declared uncompressed total is
    checked against MAX_NPZ_BYTES before any member is read (limit lowered for the test)."""
    from bayescal.ambiguity import loaders

    f = tmp_path / "bomb.npz"
    z = np.zeros((250_000, 4))
    np.savez_compressed(f, logits=z, counts=z)
    assert f.stat().st_size < 100_000  # 16 MB of arrays in a few kB
    monkeypatch.setattr(loaders, "MAX_NPZ_BYTES", 1 << 20)
    with pytest.raises(DataError, match="expands to .* split the items"):
        loaders.load_npz(f)


@pytest.mark.parametrize("out_of_core", [False, True])
def test_percentages_and_logits_get_their_own_fix(tmp_path, out_of_core):
    """Scores or class probabilities given as percentages are told to divide by 100;
    values outside [0, 100] (logits) to apply the link. In memory and out of core (the
    CLI reads multiclass folders only through the library: summarize_dask)."""
    from bayescal.scale import summarize_dask

    folders = {}
    for name, text in (
        ("pct", "score,r1,r2\n51.2,0,1\n20.5,1,1\n95.0,1,0\n"),
        ("logit", "score,r1,r2\n-1.5,0,1\n2.0,1,1\n0.5,1,0\n"),
        ("probs", "p0,p1,p2,r1,r2\n10,30,60,0,1\n20,20,60,1,2\n"),
    ):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        (folders[name] / "a.csv").write_text(text)
    percent, logits = "if they are percentages, divide them by 100", "not logits (apply a"
    for name, fix in (("pct", percent), ("logit", logits)):
        data = folders[name] if out_of_core else folders[name] / "a.csv"
        assert fix in audit_error(data, tmp_path)
    if out_of_core:
        with pytest.raises(DataError, match=percent):
            summarize_dask(str(folders["probs"]), probs=["p0", "p1", "p2"])
    else:
        extra = ("--probs", "p0,p1,p2", "--channels", "dawid-skene-em")
        assert percent in audit_error(folders["probs"] / "a.csv", tmp_path, *extra)
        # probabilities 1.3 times too large were told "if they are percentages": below 2
        # no percentage reading is likely, and the message says what was seen instead
        scaled = tmp_path / "scaled.csv"
        scaled.write_text("p0,p1,p2,r1,r2\n0.13,0.39,1.28,0,1\n0.26,0.26,0.78,1,2\n")
        message = audit_error(scaled, tmp_path, *extra)
        assert "[0.13, 1.28], a little above 1" in message and percent not in message


def test_a_semicolon_separated_csv_is_told_its_delimiter(tmp_path):
    """';'-separated exports read as CSV said only "no column 'score'" (hostile re-check)."""
    f = tmp_path / "semi.csv"
    f.write_text("item;score;r1;r2;r3\ni1;0.3;0;1;0\n")
    with pytest.raises(DataError, match=r"one column holding ';': the file looks separated"):
        load_csv(f, item="item")


def test_item_ids_that_differ_only_in_spaces_are_refused(tmp_path):
    """'i5 ' beside 'i5' became a separate item (its answers split off) while labels and
    scores are read with their spaces stripped (hostile re-check, issue 23)."""
    from bayescal.scale import summarize_long_dask

    wide = tmp_path / "w.csv"
    wide.write_text("item,score,r1,r2,r3\na,0.2,0,1,0\na ,0.3,1,1,1\n")
    with pytest.raises(DataError, match=r"'a' \(at .*w.csv', line 2\) and 'a ' \(at .*line 3\)"):
        load_csv(wide, item="item")
    rows = ["item,annotator,label,score"]
    for i in range(30):
        rows += [
            f"i{i}{' ' if (i, a) == (5, 'r3') else ''},{a},{i % 2},0.5" for a in ("r1", "r2", "r3")
        ]
    long = tmp_path / "long.csv"
    long.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError, match="'i5' .* and 'i5 ' .* differ only in surrounding spaces"):
        load_long(long, score="score")
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"'i5 ' \(at file .*a.csv', line 19\) differ only"):
        summarize_long_dask(str(parts), score="score")
