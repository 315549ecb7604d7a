"""Issue 11 reproducers about values across the input paths: in memory, out of core, CLI.

Ids are strings as written; text is never read as a missing answer; a value the
library cannot use is refused where it is written, never clipped or replaced. The
in-memory rules themselves are tested once on the one container
(``tests/core/test_container.py``); here the out-of-core reader and the command line
are held to the same rules.
"""

from __future__ import annotations

import pytest
from hostile_helpers import one_line_error

from bayescal import load_csv
from bayescal.errors import DataError
from bayescal.scale import summarize, summarize_long_dask

LONG_IDS = "item,annotator,label,score\n5,1,1,0.9\n05,1.0,0,0.2\n5,01,1,0.9\n05,1,0,0.2\n"


def test_out_of_core_long_ids_are_strings_as_written(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(LONG_IDS)
    s = summarize_long_dask(str(folder), groups=2, bins=2)
    assert s.n_items == 2 and sorted(s.annotators) == ["01", "1", "1.0"]


def test_out_of_core_blank_rater_is_refused_not_an_annotator_called_nan(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(LONG_IDS + "5,,0,0.9\n")
    with pytest.raises(DataError, match=r"a.csv', line 6: the annotator 'annotator' is missing"):
        summarize_long_dask(str(folder))


def test_cli_names_the_line_of_a_bad_long_value(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("item,annotator,label,score\ni,a,1,0.5\nj,a,2,0.2\n")
    msg = one_line_error(
        ["audit", str(p), "--long", "item,annotator,label", "--out", str(tmp_path / "o")]
    )
    assert "long.csv', line 3" in msg and "2.0" in msg


@pytest.mark.parametrize("text", ["True", "nan", "  ", "0x1"])
def test_out_of_core_cells_follow_the_same_rules(tmp_path, text):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(f"score,r1,r2\n0.1,{text},1\n0.5,1,\n")
    with pytest.raises(
        DataError, match=r"column 'r1': .* at file .*a.csv', line 2 is not a number"
    ):
        summarize(str(folder))
    with pytest.raises(DataError, match=r"annotator column 'r1': .* at .*line 2 is not a number"):
        load_csv(folder / "a.csv")


# ------------------------------------------------------------------ CLI messages (issue 23)
MULTI = "item,p0,p1,p2,r1,r2,r3\na,0.7,0.2,0.1,0,0,1\nb,0.1,0.3,0.6,2,2,\nc,0.2,0.5,0.3,1,1,1\n"


def test_cli_says_a_class_is_duplicated(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text(MULTI)
    msg = one_line_error(
        [
            "audit",
            p,
            "--probs",
            "p0,p1,p2",
            "--classes",
            "a,a,b",
            "--out",
            tmp_path / "o",
            "--item",
            "item",
        ]
    )
    assert "duplicated class name(s) ['a']" in msg and "annotator" not in msg


def test_cli_says_one_column_has_two_roles(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("item,annotator,label,score\ni,a,1,0.5\n")
    msg = one_line_error(["audit", p, "--long", "item,item,label", "--out", tmp_path / "o"])
    assert "column 'item' is given two roles (item and annotator)" in msg


def test_cli_refuses_a_reference_like_default_annotator(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("score,r1,r2,truth\n0.2,0,1,0\n0.7,1,1,1\n")
    msg = one_line_error(["audit", p, "--out", tmp_path / "o"])
    assert "column 'truth' is named like a reference label" in msg and "--annotators" in msg


@pytest.mark.parametrize("multiclass", [False, True])
def test_cli_says_every_item_is_gold(tmp_path, multiclass):
    # Gold on every item left no item of unknown class; the message used to say that
    # every item had all answers missing (binary track), which the file contradicts.
    p = tmp_path / "g.csv"
    if multiclass:
        rows = MULTI.splitlines()[1:]
        p.write_text(
            "item,p0,p1,p2,r1,r2,r3,gold\n" + "".join(f"{r},{i % 3}\n" for i, r in enumerate(rows))
        )
        extra = ["--probs", "p0,p1,p2", "--channels", "dawid-skene-em"]
    else:
        rows = ["item,score,r1,r2,r3,gold"] + [f"i{i},0.{i},0,1,1,{i % 2}" for i in range(1, 9)]
        p.write_text("\n".join(rows) + "\n")
        extra = ["--channels", "score-bin-em"]
    argv = [
        "audit",
        p,
        "--item",
        "item",
        "--gold",
        "gold",
        *extra,
        "--out",
        tmp_path / "o",
        "--quiet",
    ]
    msg = one_line_error(argv)
    assert "every annotated item is a gold item" in msg and "all answers missing" not in msg
    assert "leave the gold column blank" in msg


@pytest.mark.parametrize(
    "layout, text, extra, fix",
    [
        ("wide", MULTI.replace(",0,0,1\n", ",cat,cat,dog\n"), ["--probs", "p0,p1,p2"], "--classes"),
        ("wide", "score,r1,r2\n0.1,no,yes\n0.6,yes,\n", [], "--probs P0,P1"),
        ("long", "item,annotator,label,score\ni,a,yes,0.5\nj,a,no,0.2\n", [], "recode"),
    ],
)
def test_cli_says_how_to_give_class_names(tmp_path, layout, text, extra, fix):
    # Words in an answer column are class names given without the names; the message used
    # to say only "is not a number. Use decimal numbers such as 0.25".
    p = tmp_path / "d.csv"
    p.write_text(text)
    argv = ["audit", p, *extra, "--out", tmp_path / "o"]
    argv += ["--long", "item,annotator,label"] if layout == "long" else []
    argv += ["--item", "item"] if text.startswith("item,p0") else []
    msg = one_line_error(argv)
    assert "no class names were given" in msg and fix in msg and "0.25" not in msg


def test_arrays_take_class_names_only_with_classes():
    from bayescal import Annotations

    probs = [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
    d = Annotations.from_arrays(
        probs, [["fox", "cat"], [None, "dog"]], classes=["cat", "dog", "fox"]
    )
    assert d.labels[0].tolist() == [2, 0] and d.labels[1, 1] == 1
    with pytest.raises(DataError, match="'cow' at item 1, column 1 is not a class name"):
        Annotations.from_arrays(
            probs, [["fox", "cat"], [None, "cow"]], classes=["cat", "dog", "fox"]
        )
    with pytest.raises(DataError, match="'fox' is text, so a class name.*pass classes="):
        Annotations.from_arrays(probs, [["fox", "cat"], [None, "dog"]])


def test_cli_empty_class_name_is_called_a_class_name(tmp_path):
    # found by tests/hostile/test_fuzz_inputs.py (multiclass-0): it said "column names"
    p = tmp_path / "m.csv"
    p.write_text(MULTI)
    argv = ["audit", p, "--item", "item", "--probs", "p0,p1,p2", "--classes", ",c0,c1"]
    msg = one_line_error([*argv, "--out", tmp_path / "o"])
    assert "--classes has an empty name at position 1" in msg and "class names" in msg


def test_cli_repeated_column_names_both_places_without_guessing_a_role(tmp_path):
    # a repeated header name was said to be "two columns for one annotator", also when the
    # repeated column was the score or a probability column
    p = tmp_path / "w.csv"
    p.write_text("score,r1,score\n0.1,0,0.1\n0.5,1,0.5\n")
    msg = one_line_error(["audit", p, "--out", tmp_path / "o"])
    assert "has the column 'score' twice (columns 1 and 3)" in msg and "annotator" not in msg


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--annotators", "r1,r1,r2", "--probs", "p0,p1,p2"], "annotators lists column 'r1' twice"),
        (["--probs", "p0,p0,p1", "--item", "item"], "probs lists column 'p0' twice"),
    ],
)
def test_cli_a_column_listed_twice_for_one_role(tmp_path, extra, expected):
    # "given two roles (probs and probs)" / "two columns for one annotator": one column,
    # one role, listed twice
    p = tmp_path / "m.csv"
    p.write_text(MULTI)
    msg = one_line_error(["audit", p, *extra, "--out", tmp_path / "o"])
    assert expected in msg and "two roles" not in msg


@pytest.mark.parametrize("extra", [["--item", "item"], ["--annotators", "a"]])
def test_cli_wide_options_with_a_long_table_are_refused_not_ignored(tmp_path, extra):
    p = tmp_path / "long.csv"
    p.write_text("item,annotator,label,score\ni,a,1,0.5\nj,b,0,0.2\n")
    argv = ["audit", p, "--long", "item,annotator,label", *extra, "--out", tmp_path / "o"]
    msg = one_line_error(argv)
    assert f"leave out {extra[0]}" in msg
