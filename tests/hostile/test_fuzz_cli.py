"""Fuzz the command line with malformed files (issue 11): exit 2 with one line, or a result.

Each example starts from a valid input (a wide or long CSV for ``bayescal audit``, a
ChaosNLI JSONL + prediction file or an npz archive for ``bayescal audit-ambiguity``),
applies a few random mutations (truncation, random bytes, extra or missing fields,
hostile tokens such as ``nan`` / ``1e400`` / ``"``, huge numbers, BOMs, CRLF line ends,
empty lines, wrong JSON types, wrong array dtypes and shapes) and runs
``bayescal.cli.main`` in this process with fast options. The only acceptable outcomes
are exit status 2 with exactly one ``bayescal: error:`` line on stderr, or exit status 0
with a readable ``summary.json`` and ``report.html``. Anything else (a traceback, an
uncaught exception, a RuntimeWarning from bayescal, which pytest turns into an error)
fails the test.

Time budget: an example that fails validation costs milliseconds; one that audits costs
about 0.4 s of CPU (binary, score-bin EM) to 0.6 s (ambiguity: TS only, 3 bins, 2
draws), and one example in three to two in three survives its mutations (measured: 7/30
CSV, 6/20 ChaosNLI, 12/20 npz). ``max_examples`` = 30 + 16 + 14 = 60 then costs about 17 s
of CPU: measured 38 s of test time on the shared 2-core machine at load 6, so well under
30 s on an idle CI runner. Examples are derandomized so CI runs the same inputs each time.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import numpy as np
from hostile_helpers import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = dict(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


TOKENS = [
    "nan", "NaN", "inf", "-inf", "NA", "null", "", " ", '"', "'", "é", "\t", "1e400",
    "-1", "2", "0.5", "1.0000001", "0x1", "1_0", "1,5", "9" * 40, "-0", "+1", ".5", "5.",
    "true", "\\N", "\u202e", "$x$",
]  # fmt: skip
HUGE = ["1e308", "-1e308", "1e-320", str(2**62), str(2**64), "9" * 400]


def _check_outcome(code: int, err: str, out: Path) -> None:
    lines = err.splitlines()
    if code == 2:
        assert len(lines) == 1, err
        assert lines[0].startswith("bayescal: error: "), err
        return
    assert code == 0, (code, err)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert isinstance(summary, dict) and summary
    assert (out / "report.html").stat().st_size > 0


# ------------------------------------------------------------------ text mutations
@st.composite
def text_mutations(draw, text: str) -> bytes:
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 3))):
        op = draw(
            st.sampled_from(
                ["token", "huge", "extra", "drop", "empty", "dup_header", "swap", "blank_cell"]
            )
        )
        i = draw(st.integers(0, len(lines) - 1))
        fields = lines[i].split(",")
        j = draw(st.integers(0, len(fields) - 1))
        if op == "token":
            fields[j] = draw(st.sampled_from(TOKENS))
        elif op == "huge":
            fields[j] = draw(st.sampled_from(HUGE))
        elif op == "extra":
            fields.append(draw(st.sampled_from(TOKENS)))
        elif op == "drop" and len(fields) > 1:
            fields.pop(j)
        elif op == "empty":
            lines.insert(i, "")
            continue
        elif op == "dup_header":
            head = lines[0].split(",")
            head[j % len(head)] = head[(j + 1) % len(head)]
            lines[0] = ",".join(head)
            continue
        elif op == "swap":
            k = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[k] = lines[k], lines[i]
            continue
        elif op == "blank_cell":
            fields[j] = ""
        lines[i] = ",".join(fields)
    data = "\n".join(lines)
    if draw(st.booleans()):
        data = data.replace("\n", "\r\n")
    raw = data.encode("utf-8")
    if draw(st.booleans()):
        raw = b"\xef\xbb\xbf" + raw
    byte_op = draw(st.sampled_from(["none", "none", "truncate", "insert", "overwrite"]))
    if byte_op != "none" and raw:
        pos = draw(st.integers(0, len(raw)))
        junk = draw(st.binary(min_size=1, max_size=8))
        if byte_op == "truncate":
            raw = raw[:pos]
        elif byte_op == "insert":
            raw = raw[:pos] + junk + raw[pos:]
        else:
            raw = raw[:pos] + junk + raw[pos + len(junk) :]
    return raw


def _wide_csv(rng, n: int, k: int) -> str:
    z = rng.random(n)
    rows = ["item,score," + ",".join(f"r{j}" for j in range(k))]
    for i in range(n):
        lab = ["" if rng.random() < 0.15 else str(int(rng.random() < z[i])) for _ in range(k)]
        rows.append(f"i{i},{z[i]:.3f}," + ",".join(lab))
    return "\n".join(rows) + "\n"


def _long_csv(rng, n: int, k: int) -> str:
    z = rng.random(n)
    rows = ["item,annotator,label,score"]
    for i in range(n):
        for j in range(k):
            if rng.random() < 0.85:
                rows.append(f"i{i},r{j},{int(rng.random() < z[i])},{z[i]:.3f}")
    return "\n".join(rows) + "\n"


@st.composite
def binary_inputs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    layout = draw(st.sampled_from(["wide", "long"]))
    n, k = draw(st.integers(20, 60)), draw(st.integers(2, 4))
    text = _wide_csv(rng, n, k) if layout == "wide" else _long_csv(rng, n, k)
    return layout, draw(text_mutations(text))


@settings(max_examples=30, **SETTINGS)
@given(binary_inputs())
def test_fuzz_binary_audit_csv(case):
    layout, raw = case
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "data.csv", Path(tmp) / "out"
        data.write_bytes(raw)
        argv = ["audit", data, "--channels", "score-bin-em", "--groups", "2", "--bins", "5"]
        argv += ["--long", "item,annotator,label"] if layout == "long" else ["--item", "item"]
        code, err = run_cli([*argv, "--out", out, "--quiet"])
        _check_outcome(code, err, out)


# ------------------------------------------------------------------ JSONL mutations
JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.lists(st.integers(-3, 200), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2),
)


@st.composite
def chaosnli_inputs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = draw(st.integers(24, 40))
    chaos = [
        {"uid": f"u{i}", "label_count": rng.multinomial(50, rng.dirichlet([2, 2, 2])).tolist()}
        for i in range(n)
    ]
    preds = [{"uid": f"u{i}", "logits": rng.normal(size=3).round(4).tolist()} for i in range(n)]
    for _ in range(draw(st.integers(0, 3))):
        rows = draw(st.sampled_from([chaos, preds]))
        i = draw(st.integers(0, len(rows) - 1))
        op = draw(st.sampled_from(["value", "entry", "drop_key", "line", "delete", "repeat"]))
        if op == "value":
            key = draw(st.sampled_from(["uid", "label_count", "logits"]))
            rows[i] = {**rows[i], key: draw(JSON_VALUES)}
        elif op == "entry":
            key = "label_count" if "label_count" in rows[i] else "logits"
            if isinstance(rows[i].get(key), list) and rows[i][key]:
                values = list(rows[i][key])
                values[draw(st.integers(0, len(values) - 1))] = draw(
                    st.one_of(JSON_VALUES, st.sampled_from([1.5, 1e308, 2**62, -1.0]))
                )
                rows[i] = {**rows[i], key: values}
        elif op == "drop_key" and isinstance(rows[i], dict) and rows[i]:
            rows[i] = dict(list(rows[i].items())[1:])
        elif op == "line":
            rows[i] = draw(JSON_VALUES)
        elif op == "delete" and len(rows) > 1:
            rows.pop(i)
        elif op == "repeat":
            rows.append(rows[i])

    def dump(rows):
        return draw(text_mutations_json("\n".join(json.dumps(r) for r in rows) + "\n"))

    return dump(chaos), dump(preds), draw(st.sampled_from(["error", "drop"]))


@st.composite
def text_mutations_json(draw, text: str) -> bytes:
    raw = text.encode("utf-8")
    op = draw(st.sampled_from(["none", "none", "none", "truncate", "insert", "nan", "crlf"]))
    if op == "truncate":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif op == "insert":
        pos = draw(st.integers(0, len(raw)))
        raw = raw[:pos] + draw(st.binary(min_size=1, max_size=6)) + raw[pos:]
    elif op == "nan":
        raw = raw.replace(b"]", b", NaN]", 1)
    elif op == "crlf":
        raw = b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n\n")
    return raw


AMBIGUITY_FAST = ["--n-bins", "3", "--n-draws", "2", "--cv-folds", "2", "--methods", "TS"]


@settings(max_examples=16, **SETTINGS)
@given(chaosnli_inputs())
def test_fuzz_ambiguity_audit_chaosnli(case):
    chaos, preds, missing = case
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "c.jsonl").write_bytes(chaos)
        (tmp / "p.jsonl").write_bytes(preds)
        argv = ["audit-ambiguity", "--chaosnli", tmp / "c.jsonl", tmp / "p.jsonl"]
        argv += ["--missing-predictions", missing, *AMBIGUITY_FAST]
        code, err = run_cli([*argv, "--out", tmp / "out", "--quiet"])
        _check_outcome(code, err, tmp / "out")


# ------------------------------------------------------------------ npz mutations
@st.composite
def npz_inputs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n, c = draw(st.integers(24, 40)), draw(st.integers(2, 4))
    arrays = {
        "logits": rng.normal(size=(n, c)),
        "counts": rng.multinomial(20, np.full(c, 1 / c), size=n),
    }
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(["logits", "counts", "classes", "item_ids", "reference"]))
        op = draw(st.sampled_from(["value", "dtype", "shape", "drop", "add"]))
        a = arrays.get(key)
        if op == "value" and a is not None and a.size and a.dtype.kind in "iuf":
            a = a.astype(np.float64)
            a.flat[draw(st.integers(0, a.size - 1))] = draw(
                st.sampled_from([np.nan, np.inf, -1.0, 0.5, 1e308, 2.0**62, 0.0])
            )
            arrays[key] = a
        elif op == "dtype" and a is not None:
            arrays[key] = a.astype(draw(st.sampled_from(["U8", "bool", "complex128", "int8"])))
        elif op == "shape" and a is not None:
            arrays[key] = a.reshape(-1) if a.ndim > 1 else a[: max(a.size - 1, 0)]
        elif op == "drop":
            arrays.pop(key, None)
        elif op == "add":
            arrays[key] = {
                "classes": np.array([f"c{j}" for j in range(c)]),
                "item_ids": np.arange(n),
                "reference": rng.integers(0, c, n),
                "logits": rng.normal(size=(n, c)),
                "counts": rng.integers(0, 3, (n, c)),
            }[key]
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    raw = buf.getvalue()
    cut = draw(st.sampled_from(["none", "none", "none", "truncate", "flip"]))
    if cut == "truncate":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif cut == "flip":
        pos = draw(st.integers(0, len(raw) - 1))
        raw = raw[:pos] + bytes([raw[pos] ^ 0xFF]) + raw[pos + 1 :]
    return raw


@settings(max_examples=14, **SETTINGS)
@given(npz_inputs())
def test_fuzz_ambiguity_audit_npz(raw):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "d.npz").write_bytes(raw)
        argv = ["audit-ambiguity", "--npz", tmp / "d.npz", *AMBIGUITY_FAST]
        code, err = run_cli([*argv, "--out", tmp / "out", "--quiet"])
        _check_outcome(code, err, tmp / "out")
