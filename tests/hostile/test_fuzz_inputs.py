"""Seeded fuzzing of the audit's inputs and its save path, through the CLI in this process.

Issue 23 item 4. Five families of cases, each drawn from its own seed, so a failure
names its reproducer (``test_fuzz[priors-17]`` is family ``priors``, seed 17):

- ``priors``: ``--priors`` files written with random schemas: bayescal's netCDF schema
  with variables renamed, dropped or retyped, dimensions emptied or resized, draws made
  constant, NaN, 0, 1 or out of (0, 1), annotator names repeated, unmatched, empty or
  long, attributes removed; or an npz archive, CSV text or random bytes under the name;
  or a valid file truncated or with a byte flipped. Binary and multiclass.
- ``gold``: wide tables (binary and multiclass) with a gold column holding random
  values: valid classes, blanks, class names with and without ``--classes``, indices out
  of range, fractions, hostile tokens, gold on every item or on none.
- ``long``: long tables with repeated pairs, blank labels, a score that differs within
  an item, role columns repeated or missing, labels out of range.
- ``multiclass``: wide tables with probability columns mutated (NaN, negative, above 1,
  rows off their sum, blank, a column always 0) and ``--classes`` repeated, miscounted
  or empty.
- ``save``: valid data saved to ``--out`` paths that are files, folders whose
  ``report.html`` / ``summary.json`` is a folder holding a user's file, the data file
  itself, paths under a file, folders with leftovers of killed runs.

Invariant (every family): exit 0 with ``summary.json`` and ``report.html``, or exit 2
with exactly one ``bayescal: error:`` line; never a traceback or exit 1. A case whose
mutations include one the library must refuse (a value outside the rules, a file that
is not bayescal's schema) must exit 2: a number from bad input fails the test. In the
save family, a file of the user's under ``--out`` is never lost.

Budget: ``BAYESCAL_FUZZ_BUDGET`` cases per family (default 3 in the suite, where every
case carries at least one refused mutation, so none reaches the sampler: measured
0.01-0.2 s of CPU per case, 2.7 s for the first priors case (importing netCDF); the 15
cases took 16-28 s of test time at load 10-14). A longer run,
``BAYESCAL_FUZZ_BUDGET=200 pytest -n 0 tests/hostile/test_fuzz_inputs.py``, also draws
cases with only harmless mutations, which run whole audits (``--channels bayes`` with
priors: about 6 s of CPU each).

What the long runs found (December 2026: seeds 0-139 of every family, about 750 cases): an
empty ``--classes`` entry called a "column name" (fixed; its test is in
``test_values.py``); a priors file whose annotator names match none of the data's is used
as default priors with no word on stderr, on both tracks (``summary.json`` lists the
annotators under ``knowledge.priors.default``; left to the priors reader, ``bayes/``);
and five mistakes of this generator's own (constant draws per chain, one draw per chain, a
subnormal draw inside (0, 1), a long-table mutation after the score column was dropped,
answers turned into names twice), corrected here. Both priors findings are now refused by
the reader: an earlier fit sharing no annotator (``ChannelPriors.from_fit``) and a
subnormal draw (``posterior_file.probability_problem``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import run_cli
from posterior_builders import binary_posterior, multiclass_posterior

_ENV = os.environ.get("BAYESCAL_FUZZ_BUDGET", "")
BUDGET = int(_ENV) if _ENV.strip() else 3
#: In the suite every case must be refused (no sampling); long runs mix in harmless cases.
REFUSED_ONLY = not _ENV.strip()

TOKENS = ["nan", "NaN", "inf", "-inf", "NA", "null", " ", '"', "1e400", "-1", "0x1", "1,5",
          "true", "\\N", "\u202e", "é", "9" * 40, "-0", "+1", ".5", "5."]  # fmt: skip
FAST = ["--groups", "2", "--bins", "3"]
SAMPLER = ["--channels", "bayes", "--draws", "20", "--tune", "20", "--chains", "1"]


@dataclass
class Case:
    """Files to write, the CLI arguments (``{tmp}`` is the case's folder), the expectation."""

    files: dict[str, bytes] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    refuse: list[str] = field(default_factory=list)  # mutations that must be refused
    keep: dict[str, bytes] = field(default_factory=dict)  # user files that must survive
    ops: list[str] = field(default_factory=list)  # every mutation applied, for the report

    def op(self, name: str, refused: bool) -> None:
        self.ops.append(name)
        if refused:
            self.refuse.append(name)


def _choose(rng, options):
    return options[int(rng.integers(len(options)))]


def _number(cell: str) -> float | None:
    """The finite decimal number a cell holds, or None (text, NaN, infinity, hex, blank)."""
    text = cell.strip()
    if not text or "_" in text or text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def _bad_answer(cell: str, c: int, names=()) -> bool | None:
    """True: a cell the library must refuse as an answer; False: valid; None: either."""
    if cell == "":
        return False  # a missing answer
    if cell == '"':
        return None  # a quote may join lines: refused or read, the file says which
    if cell.strip() in names:
        return False
    value = _number(cell)
    return value is None or not (value.is_integer() and 0 <= value < c)


# ------------------------------------------------------------------ tables
def _binary_rows(rng, n: int, k: int) -> list[list[str]]:
    z = rng.random(n)
    rows = [["item", "score", *[f"r{j + 1}" for j in range(k)]]]
    for i in range(n):
        lab = ["" if rng.random() < 0.15 else str(int(rng.random() < z[i])) for _ in range(k)]
        rows.append([f"i{i}", f"{z[i]:.4f}", *lab])
    return rows


def _multiclass_rows(rng, n: int, k: int, c: int) -> list[list[str]]:
    rows = [["item", *[f"p{m}" for m in range(c)], *[f"r{j + 1}" for j in range(k)]]]
    for i in range(n):
        p = rng.dirichlet(np.ones(c))
        p = np.round(p, 6)
        p[-1] = round(1.0 - p[:-1].sum(), 6)
        if p[-1] < 0:  # rounding pushed the last below zero: put the mass on the largest
            p[int(np.argmax(p))] += p[-1]
            p[-1] = 0.0
        truth = int(rng.choice(c, p=p / p.sum()))
        lab = [
            ""
            if rng.random() < 0.15
            else str(truth if rng.random() < 0.7 else int(rng.integers(c)))
            for _ in range(k)
        ]
        rows.append([f"i{i}", *[f"{v:.6f}" for v in p], *lab])
    return rows


def _csv(rows: list[list[str]]) -> bytes:
    return ("\n".join(",".join(r) for r in rows) + "\n").encode("utf-8")


def _long_rows(rng, n: int, k: int) -> list[list[str]]:
    rows = [["item", "annotator", "label", "score"]]
    for i in range(n):
        z = rng.random()
        for j in range(k):
            if rng.random() < 0.85:
                rows.append([f"i{i}", f"r{j + 1}", str(int(rng.random() < z)), f"{z:.4f}"])
    return rows


# ------------------------------------------------------------------ families
def gen_gold(rng, case: Case) -> None:
    multiclass = bool(rng.integers(2))
    n, k = int(rng.integers(30, 60)), int(rng.integers(3, 5))
    c = int(rng.integers(3, 5)) if multiclass else 2
    rows = _multiclass_rows(rng, n, k, c) if multiclass else _binary_rows(rng, n, k)
    names = [f"c{m}" for m in range(c)]
    use_names = multiclass and bool(rng.integers(2))
    rows[0].append("gold")
    share = _choose(rng, [0.0, 0.2, 0.5, 1.0])
    for r in rows[1:]:
        cls = int(rng.integers(c))
        r.append((names[cls] if use_names else str(cls)) if rng.random() < share else "")
    if share == 1.0:
        case.op("gold on every item", True)  # nothing of unknown class is left to audit
    for _ in range(int(rng.integers(0, 3))):
        i = int(rng.integers(1, len(rows)))
        bad = _choose(rng, [str(c), "-1", "0.5", "cat", *TOKENS])
        rows[i][-1] = bad
        case.op(f"gold cell {bad!r} at line {i + 1}", bool(_bad_answer(bad, c, names)))
    if all(r[-1] == "" for r in rows[1:]):
        case.op("gold column without a gold label", True)  # --gold would change nothing
    case.files["data.csv"] = _csv(rows)
    case.argv = ["audit", "{tmp}/data.csv", "--item", "item", "--gold", "gold", *FAST]
    if multiclass:
        case.argv += ["--probs", ",".join(f"p{m}" for m in range(c))]
        case.argv += ["--channels", "dawid-skene-em"]
        if use_names:
            case.argv += ["--classes", ",".join(names)]
        # answers are indices; with --classes c0.. they stay valid indices
    else:
        case.argv += ["--channels", "score-bin-em"]


def gen_long(rng, case: Case) -> None:
    n, k = int(rng.integers(30, 60)), int(rng.integers(3, 5))
    rows = _long_rows(rng, n, k)
    roles = "item,annotator,label"
    for _ in range(int(rng.integers(1, 4))):
        op = _choose(rng, ["repeat", "blank", "score", "roles", "range", "token", "missing"])
        i = int(rng.integers(1, len(rows)))
        if op == "repeat":
            rows.append(list(rows[i]))
            case.op(f"pair of line {i + 1} repeated", True)
        elif op == "blank":
            rows[i][2] = ""
            case.op(f"blank label at line {i + 1}", True)
        elif op == "score" and len(rows[i]) > 3:  # the score column may be gone already
            other = [j for j in range(1, len(rows)) if rows[j][0] == rows[i][0] and j != i]
            rows[i][3] = f"{(float(rows[i][3]) + 0.25) % 1:.4f}"
            case.op(f"score differs within item at line {i + 1}", bool(other))
        elif op == "roles":
            roles = _choose(
                rng,
                ["item,item,label", "item,annotator,annotator", "item,annotator,score",
                 "item,annotator", "item,annotator,label,score", "item, annotator ,label",
                 "task,worker,label", "item,,label"],
            )  # fmt: skip
            case.op(f"--long {roles}", roles != "item, annotator ,label")
        elif op == "range":
            rows[i][2] = _choose(rng, ["2", "-1", "0.5", "1e400"])
            case.op(f"label {rows[i][2]} at line {i + 1}", True)
        elif op == "token":
            col = int(rng.integers(0, len(rows[i])))
            tok = _choose(rng, TOKENS)
            rows[i][col] = tok
            if col == 2:
                refused = _bad_answer(tok, 2)
            elif col == 3:  # a score: in [0, 1] and the same on every row of the item
                value = _number(tok)
                same = [r[3] for j, r in enumerate(rows[1:], 1) if r[0] == rows[i][0] and j != i]
                refused = value is None or not 0 <= value <= 1
                refused = refused or any(_number(v) != value for v in same)
            else:  # an id: any text but a blank one (or one that splits the row)
                refused = not tok.strip() or "," in tok
            case.op(f"token {tok!r} in column {col} at line {i + 1}", bool(refused))
        elif op == "missing":
            rows = [r[:3] for r in rows]
            case.op("no score column", True)
    case.files["long.csv"] = _csv(rows)
    case.argv = ["audit", "{tmp}/long.csv", "--long", roles, "--channels", "score-bin-em", *FAST]


def gen_multiclass(rng, case: Case) -> None:
    n, k, c = int(rng.integers(30, 60)), int(rng.integers(3, 5)), int(rng.integers(3, 5))
    rows = _multiclass_rows(rng, n, k, c)
    probs = [f"p{m}" for m in range(c)]
    classes = None
    for _ in range(int(rng.integers(1, 4))):
        op = _choose(rng, ["cell", "sum", "zero", "classes", "drop", "answer", "names"])
        i = int(rng.integers(1, len(rows)))
        m = int(rng.integers(c))
        if op == "cell":
            bad = _choose(rng, ["nan", "-0.1", "1.5", "", "inf", "1e400", "x", *TOKENS])
            value, old = _number(bad), _number(rows[i][1 + m])
            rows[i][1 + m] = bad
            refused = bad != '"' and (value is None or abs(value - (old or 0.0)) > 1e-5)
            case.op(f"probability {bad!r} at line {i + 1}", refused)
        elif op == "sum":
            rows[i][1 + m] = f"{float(rows[i][1 + m]) + 0.01:.6f}"
            case.op(f"row {i + 1} sums to 1.01", True)
        elif op == "zero":
            # a class never predicted: its column is always 0, the mass moved to another
            other = (m + 1) % c
            for r in rows[1:]:
                r[1 + other] = f"{float(r[1 + other]) + float(r[1 + m]):.6f}"
                r[1 + m] = "0.000000"
            case.op(f"probability column p{m} always 0", False)
        elif op == "classes":
            classes = _choose(
                rng,
                [["a"] * c, [f"c{j}" for j in range(c - 1)], [f"c{j}" for j in range(c + 1)],
                 ["", *[f"c{j}" for j in range(c - 1)]], [str(j + 1) for j in range(c)]],
            )  # fmt: skip
            # names that are other numbers than their positions make indices ambiguous
            case.op(f"--classes {','.join(classes)}", True)
        elif op == "drop":
            probs = probs[:-1]
            case.op("a probability column left out of --probs", True)
        elif op == "answer":
            j = int(rng.integers(k))
            rows[i][1 + c + j] = _choose(rng, [str(c), "-1", "0.5", "cat"])
            case.op(f"answer {rows[i][1 + c + j]!r} at line {i + 1}", True)
        elif op == "names" and not any(o.startswith("answers as") for o in case.ops):
            names = [f"k{j}" for j in range(c)]
            index = {str(j) for j in range(c)}
            for r in rows[1:]:
                r[1 + c :] = [names[int(v)] if v in index else v for v in r[1 + c :]]
            with_names = bool(rng.integers(2))
            if with_names and classes is None:
                classes = names
            case.op(f"answers as class names, --classes {'given' if with_names else 'not'}",
                    not with_names)  # fmt: skip
    case.files["multi.csv"] = _csv(rows)
    case.argv = ["audit", "{tmp}/multi.csv", "--item", "item", "--probs", ",".join(probs)]
    case.argv += ["--annotators", ",".join(f"r{j + 1}" for j in range(k))]
    case.argv += ["--channels", "dawid-skene-em", "--bins", "3"]
    if classes is not None:
        case.argv += ["--classes", ",".join(classes)]


def _posterior_bytes(rng, case: Case, multiclass: bool) -> bytes:
    draws = int(rng.integers(2, 60))
    post = (
        multiclass_posterior(draws, classes=("c0", "c1", "c2"), seed=int(rng.integers(99)))
        if multiclass
        else binary_posterior(draws, seed=int(rng.integers(99)))
    )
    var = "confusion" if multiclass else _choose(rng, ["a", "b"])
    ops = ["rename", "drop", "empty", "constant", "value", "dup_names", "unmatched", "long_name",
           "one_draw", "int", "attrs", "transpose", "extra", "inflate"]  # fmt: skip
    for _ in range(int(rng.integers(1, 3))):
        op = _choose(rng, ops)
        if op == "rename":
            post = post.rename({var: var + "_x"})
            case.op(f"variable {var} renamed", True)
        elif op == "drop":
            post = post.drop_vars(_choose(rng, [var, "prevalence"]))
            case.op("a variable dropped", True)
        elif op == "empty":
            dim = _choose(rng, ["annotator", "draw", "chain"])
            post = post.isel({dim: slice(0, 0)})
            case.op(f"dimension {dim} empty", True)
        elif op == "constant":
            post[var] = post[var] * 0 + post[var].isel(chain=0, draw=0)  # over every chain
            case.op(f"{var} draws all equal", True)
        elif op == "value":
            bad = _choose(rng, [np.nan, 0.0, 1.0, -0.5, 1.5, np.inf, 1e-320])
            arr = post[var].values.copy()
            arr.flat[int(rng.integers(arr.size))] = bad
            post[var] = (post[var].dims, arr)
            # 1e-320 is inside (0, 1) but subnormal: refused as no sampled probability
            case.op(f"a {var} draw is {bad}", True)
        elif op == "dup_names":
            names = list(post["annotator"].values)
            names[1] = names[0]
            post = post.assign_coords(annotator=names)
            case.op("annotator names repeated", True)
        elif op == "unmatched":
            post = post.assign_coords(annotator=[f"z{j}" for j in range(post.sizes["annotator"])])
            # ChannelPriors.from_fit refuses an earlier fit that shares no annotator
            case.op("no annotator name matches the data", True)
        elif op == "long_name":
            names = list(post["annotator"].values)
            names[0] = "r" * 20_000
            post = post.assign_coords(annotator=names)
            case.op("a 20,000-character annotator name", True)
        elif op == "one_draw":
            post = post.isel(chain=slice(0, 1), draw=slice(0, 1))
            case.op("one draw in all", True)
        elif op == "int":
            post[var] = post[var].astype(np.int64)
            case.op(f"{var} stored as integers", True)
        elif op == "attrs":
            post.attrs = {}
            case.op("no model attributes", True)
        elif op == "transpose":
            post[var] = post[var].transpose(*reversed(post[var].dims))
            case.op(f"{var} dims in reverse order", False)
        elif op == "extra":
            post["extra"] = (("annotator",), np.arange(post.sizes["annotator"], dtype=float))
            case.op("an extra variable", False)
        elif op == "inflate":
            case.argv += ["--priors-inflate", _choose(rng, ["0", "-1", "nan", "1e308", "inf"])]
            case.op(f"--priors-inflate {case.argv[-1]}", True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.nc"
        try:
            post.to_netcdf(path, group="posterior", engine="netcdf4")
        except (ValueError, TypeError, RuntimeError) as exc:  # xarray refuses to write it
            case.op(f"unwritable posterior ({type(exc).__name__}); an empty file instead", True)
            return b""
        return path.read_bytes()


def gen_priors(rng, case: Case) -> None:
    multiclass = bool(rng.integers(2))
    if multiclass:
        rows = _multiclass_rows(rng, 40, 3, 3)
        data_args = ["--item", "item", "--probs", "p0,p1,p2", "--classes", "c0,c1,c2"]
    else:
        rows = _binary_rows(rng, 40, 3)
        data_args = ["--item", "item", "--groups", "2", "--bins", "3"]
    case.files["data.csv"] = _csv(rows)
    form = _choose(rng, ["netcdf"] * 5 + ["npz", "csv", "bytes", "truncate", "flip", "empty"])
    if form in ("netcdf", "truncate", "flip"):
        raw = _posterior_bytes(rng, case, multiclass)
        if form == "truncate" and raw:
            raw = raw[: int(rng.integers(len(raw)))]
            case.op("file truncated", True)
        elif form == "flip" and raw:
            pos = int(rng.integers(len(raw)))
            raw = raw[:pos] + bytes([raw[pos] ^ 0xFF]) + raw[pos + 1 :]
            case.op(f"byte {pos} flipped", False)  # may land in padding: either outcome
    elif form == "npz":
        import io

        buf = io.BytesIO()
        np.savez(buf, a=rng.random((1, 10, 3)), b=rng.random((1, 10, 3)))
        raw = buf.getvalue()
        case.op("an npz archive", True)
    elif form == "csv":
        raw = b"annotator,a,b\nr1,0.1,0.9\n"
        case.op("CSV text", True)
    elif form == "bytes":
        raw = rng.bytes(int(rng.integers(1, 600)))
        case.op("random bytes", True)
    else:
        raw = b""
        case.op("an empty file", True)
    if not raw and not case.refuse:
        case.op("an empty file", True)
    case.files["prior.nc"] = raw
    case.argv = ["audit", "{tmp}/data.csv", *data_args, *SAMPLER, "--priors", "{tmp}/prior.nc",
                 *case.argv]  # fmt: skip


USER_FILE = b"the user's own file\n"
#: --out, the files kept (the user's, or the data), other files, what it is, refused
SAVE_CASES = [
    ("{tmp}/out", ["out"], {}, "--out is a file", True),
    ("{tmp}/out", ["out/report.html/mine.txt"], {}, "out/report.html: a folder of the user", True),
    ("{tmp}/out", ["out/summary.json/mine.txt"], {}, "out/summary.json: a user's folder", True),
    ("{tmp}/data.csv", ["data.csv"], {}, "--out is the data file", True),
    ("{tmp}/blocker/out", ["blocker"], {}, "--out is under a file", True),
    ("{tmp}/out", ["out/mine.txt"], {"out/.report.html.abc123.partial/x": ""},
     "leftovers of a killed run and a user's file", False),
    ("{tmp}/a/b/c", [], {}, "--out several new folders deep", False),
    ("{tmp}", ["mine.txt"], {}, "--out is a folder holding other files", False),
    ("{tmp}/out", ["target.txt"], {"__symlink__out": "target.txt"},
     "--out is a symlink to a user's file", True),
    ("{tmp}/out", ["out/figures"], {}, "out/figures is a user's file", False),
]  # fmt: skip


def gen_save(rng, case: Case) -> None:
    case.files["data.csv"] = _csv(_binary_rows(rng, 40, 3))
    out, keep, files, what, refused = _choose(rng, SAVE_CASES)
    case.keep.update({name: case.files.get(name, USER_FILE) for name in keep})
    case.files.update({name: raw.encode() for name, raw in files.items()})
    case.op(what, refused)
    case.argv = ["audit", "{tmp}/data.csv", "--item", "item", "--channels", "score-bin-em", *FAST]
    case.argv += ["--out", out]


FAMILIES: dict[str, Callable] = {
    "priors": gen_priors,
    "gold": gen_gold,
    "long": gen_long,
    "multiclass": gen_multiclass,
    "save": gen_save,
}


def make_case(family: str, seed: int) -> Case:
    """The case of ``family`` drawn from ``seed`` (redrawn, in the suite, until refused)."""
    for attempt in range(100):
        rng = np.random.default_rng([seed, attempt, sorted(FAMILIES).index(family)])
        case = Case()
        FAMILIES[family](rng, case)
        if case.refuse or not REFUSED_ONLY:
            return case
    raise AssertionError(f"{family}: no refused case in 100 draws of seed {seed}")


def run_case(case: Case, tmp: Path) -> tuple[int, str]:
    for name, raw in {**case.files, **case.keep}.items():
        if name.startswith("__symlink__"):
            (tmp / name.removeprefix("__symlink__")).symlink_to(tmp / raw.decode())
            continue
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp / "out")]
    code, err = run_cli([*argv, "--quiet"])
    out = Path(argv[argv.index("--out") + 1])
    lines = err.splitlines()
    where = f"ops={case.ops}\nstderr={err[-2000:]}"
    if code == 2:
        errors = [line for line in lines if line.startswith("bayescal: error: ")]
        assert len(errors) == 1 and "Traceback" not in err, where
    else:
        assert code == 0, f"exit {code}; {where}"
        assert not case.refuse, f"a result from bad input ({case.refuse}); {where}"
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert isinstance(summary, dict) and summary, where
        assert (out / "report.html").stat().st_size > 0, where
    for name, raw in case.keep.items():
        assert (tmp / name).read_bytes() == raw, f"{name} lost or changed; {where}"
    return code, err


@pytest.mark.parametrize(
    "family, seed", [(f, s) for f in FAMILIES for s in range(BUDGET)], ids=lambda v: str(v)
)
def test_fuzz(family, seed, tmp_path):
    run_case(make_case(family, seed), tmp_path)


# ------------------------------------------------------------------ regressions
