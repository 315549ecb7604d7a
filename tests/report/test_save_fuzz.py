"""Issue 23 item 4 (the save): a seeded generator of output folders and failures.

Each case builds an ``--out`` and its surroundings from random parts (nothing, an empty
folder, an earlier report; a user's file, a report name taken by a folder, a symbolic link
or a pipe; leftovers of killed saves with and without their journal, damaged journals,
empty probe folders), then saves a report with an ``OSError`` injected at a random system
call or none. The invariants, whatever the case:

- everything the user put there (inside ``--out`` or beside it) is still there, byte for
  byte;
- the save either refuses before any work (``ConfigError``), or fails with one
  ``OutputError`` line and ``--out`` exactly as before, or succeeds with ``--out`` holding
  exactly the new report (or, for a failure after the commit, the new report too);
- afterwards only entries nobody's journal names are left beside ``--out``, and a second
  save leaves nothing of bayescal's beside it.

The failures found while the save was built are kept as tests in
``test_save_atomic.py`` (a probe folder of a killed check left beside ``--out``; a
failing ``close`` of the journal masking the save's outcome; a child's report differing
from the parent's by the modules loaded); this generator found none afterwards.
"""

from __future__ import annotations

import errno
import json
import os
import random
from pathlib import Path

import pytest
from save_helpers import StepOS, install, make_report

from bayescal.errors import ConfigError, OutputError
from bayescal.report import saving

A = make_report("A", b"posterior of A " * 2_000)
B = make_report("B", None)
#: cases per run: about 0.1 s each on an idle core (every save fsyncs a dozen times)
CASES = 80
SEED = 23


def _user_things(root: Path) -> dict[str, object]:
    """Every entry under ``root`` that is the user's, with its kind and content: files named
    ``user-*`` anywhere, and whatever in ``--out`` is not a regular file."""
    out = root / "report"
    things: dict[str, object] = {}
    for p in sorted(root.rglob("*")):
        odd = p.parent == out and (p.is_symlink() or not p.is_file())
        if not (p.name.startswith("user-") or odd):
            continue
        rel = str(p.relative_to(root))
        if p.is_symlink():
            things[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            things[rel] = "dir"
        elif p.is_fifo():
            things[rel] = "fifo"
        else:
            things[rel] = p.read_bytes()
    return things


def _build(root: Path, rng: random.Random, reference: dict) -> tuple[Path, bool, list[str]]:
    """A random --out under ``root``; returns it, whether a refusal is due, and the names
    beside it that a journal names (which the save may remove)."""
    out = root / "report"
    start = rng.choice(["missing", "empty", "report"])
    if start == "empty":
        out.mkdir()
    elif start == "report":
        out.mkdir()
        for name, data in reference.items():
            (out / name).write_bytes(data)
    refuse = False
    marked: list[str] = []
    for _ in range(rng.randint(0, 3)):
        part = rng.choice(
            ["foreign", "name-folder", "name-link", "name-fifo", "marked", "unmarked",
             "damaged-journal", "probe", "user-beside"]
        )  # fmt: skip
        token = f"{rng.getrandbits(128):032x}"
        if part in ("foreign", "name-folder", "name-link", "name-fifo"):
            out.mkdir(exist_ok=True)
            name = rng.choice(["report.html", "summary.json", "posterior.nc"])
            target = out / ("user-notes.txt" if part == "foreign" else name)
            if os.path.lexists(target):
                continue
            if part == "foreign":
                target.write_text("the user's notes")
            elif part == "name-folder":
                target.mkdir()
                (target / "user-file.txt").write_text("inside a folder named like a report file")
            elif part == "name-link":
                (root / "user-linked.txt").write_text("reached through a link")
                target.symlink_to(root / "user-linked.txt")
            else:
                os.mkfifo(target)
            refuse = True
        elif part in ("marked", "unmarked"):
            staging = root / f".report.{token}.partial"
            staging.mkdir()
            (staging / "report.html").write_text("a killed save's half")
            if part == "marked":
                (root / f".report.{token}.bayescal-save").write_text(
                    json.dumps({"magic": saving._MAGIC, "out": "report", "entries": [staging.name]})
                )
                marked.append(staging.name)
                marked.append(f".report.{token}.bayescal-save")
            else:
                (staging / "user-kept.txt").write_text("no journal names this folder")
        elif part == "damaged-journal":
            (root / f".report.{token}.bayescal-save").write_text("{not json")
        elif part == "probe":
            (root / f".bayescal-probe.{token[:8]}").mkdir()
            marked.append(f".bayescal-probe.{token[:8]}")
        else:
            (root / "user-beside.csv").write_text("data next to the report")
    return out, refuse, marked


def _report_files(out: Path) -> dict[str, bytes]:
    """The regular files of ``out`` that are not the user's."""
    return {
        p.name: p.read_bytes()
        for p in out.iterdir()
        if not p.name.startswith("user") and p.is_file() and not p.is_symlink()
    }


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("refs")
    refs = {}
    for r in (A, B):
        r.save(tmp / r.title)
        refs[r.title[-1]] = {p.name: p.read_bytes() for p in (tmp / r.title).iterdir()}
    return refs


def run_case(root: Path, seed: int, references) -> str:
    """Build case ``seed`` under ``root``, save, check the invariants; returns the outcome."""
    rng = random.Random(seed)
    out, refuse, marked = _build(root, rng, references["A"])
    user = _user_things(root)
    before = _report_files(out) if out.is_dir() else None
    fail_at = rng.choice([None, None, rng.randint(1, 60)])
    code = rng.choice([errno.ENOSPC, errno.EACCES, errno.EIO])
    outcome = "saved"
    with pytest.MonkeyPatch.context() as mp:
        install(mp, StepOS(fail_at=fail_at, fail_errno=code))
        try:
            B.save(out)
        except ConfigError as exc:
            outcome = "refused"
            assert refuse, f"case {seed}: refused without cause: {exc}"
            assert "\n" not in str(exc)
        except OutputError as exc:
            outcome = "failed"
            message = str(exc)
            assert "\n" not in message and message.startswith("cannot save the report to")
            if "holds the new report" not in message:
                after = _report_files(out) if out.is_dir() else None
                assert after == before, f"case {seed}: --out changed by a failed save"
    assert not refuse or outcome == "refused", f"case {seed}: a user's entry was not refused"
    assert _user_things(root) == user, f"case {seed}: a user's entry changed"
    if outcome == "saved":
        assert _report_files(out) == references["B"], f"case {seed}: not the new report"
    if outcome != "refused":  # a second save, without failures, cleans up after the first
        B.save(out)
        left = [n for n in os.listdir(root) if n != "report" and not n.startswith("user")]
        assert all(n not in marked for n in left), f"case {seed}: marked leftovers stayed: {left}"
        assert _report_files(out) == references["B"]
    return outcome


def test_seeded_cases(tmp_path, references):
    outcomes = []
    for case in range(CASES):
        root = tmp_path / f"case{case}"
        root.mkdir()
        outcomes.append(run_case(root, SEED * 1000 + case, references))
    # the generator reaches every outcome
    assert {"saved", "refused", "failed"} <= set(outcomes), outcomes
