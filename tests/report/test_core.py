"""The one report core: atomic save, output-folder checks, strict JSON, literal names.

Reports here are built from point channels (score-bin EM) on small simulated
data, so no sampler runs; one module-scoped audit is shared.
"""

import json
import os
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from bayescal import Annotations
from bayescal.cli import main
from bayescal.display import display_name
from bayescal.errors import ConfigError
from bayescal.flags import Flag
from bayescal.plotting import channel_forest, reliability_diagram
from bayescal.report import audit
from bayescal.report.core import Figure, Provenance, Report, Section, check_out_dir, fmt
from bayescal.simulate import simulate_toy

matplotlib.use("Agg")

HOSTILE = ["$\\alpha$", "a\u202eb", "x\x00y", "<script>alert(1)</script>", "$\\undefinedcmd{$"]


@pytest.fixture(scope="module")
def small():
    return simulate_toy(900, "shifted", random_state=4)


@pytest.fixture(scope="module")
def point_report(small):
    return audit(small, channels="score-bin-em", random_state=0)


def _tree(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


ECE = {"nc": {"point": 0.1, "lo": None, "hi": None, "prob": 0.9}, "soft_vote": 0.2}
ECE["majority_vote"] = 0.3


def _tiny_report(**summary) -> Report:
    return Report(
        "binary",
        "tiny",
        {"n_items": 1, "n_annotators": 1, "channels": {"method": "x"}, "ece": ECE, **summary},
        [Section("s", "Section")],
        Provenance.capture(None, 0, "0" * 64, {}),
        flags=[Flag("demo.flag", "a message", "demo")],
    )


# ----------------------------------------------------------------------------- atomic save
def test_error_while_writing_second_file_leaves_existing_report_byte_identical(
    point_report, tmp_path, monkeypatch
):
    out = tmp_path / "report"
    point_report.save(out)
    before = _tree(out)
    calls = []

    def failing_json(self):
        calls.append(1)
        raise OSError("disk full (injected)")

    # report.html is written first, summary.json second: fail on the second file
    monkeypatch.setattr(Report, "to_json", failing_json)
    with pytest.raises(OSError, match="injected"):
        point_report.save(out)
    assert calls, "the injected failure did not run"
    assert _tree(out) == before
    # no temporary folder is left beside the report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_error_in_an_artifact_leaves_a_missing_folder_missing(tmp_path):
    def boom(path):
        Path(path).write_text("half")
        raise RuntimeError("artifact failed (injected)")

    r = _tiny_report()
    r.artifacts["posterior.nc"] = boom
    with pytest.raises(RuntimeError, match="injected"):
        r.save(tmp_path / "new")
    assert list(tmp_path.iterdir()) == []


def test_old_posterior_does_not_survive_a_point_channel_run(point_report, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "posterior.nc").write_bytes(b"posterior of an earlier Bayesian run")
    (out / "summary.json").write_text("{}")
    written = point_report.save(out)
    assert sorted(written) == ["items.csv", "next.csv", "report.html", "summary.json"]
    assert sorted(p.name for p in out.iterdir()) == [
        "items.csv",
        "next.csv",
        "report.html",
        "summary.json",
    ]
    assert json.loads((out / "summary.json").read_text())["n_items"] == 900


def test_save_follows_a_symlink_to_a_folder(point_report, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    point_report.save(link)
    assert link.is_symlink() and (real / "report.html").exists()


# ----------------------------------------------------------------------------- check_out_dir
def test_check_out_dir_refuses_bad_targets(tmp_path):
    with pytest.raises(ConfigError, match="empty"):
        check_out_dir("")
    with pytest.raises(ConfigError, match="empty"):
        check_out_dir("   ")
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(ConfigError, match="not a directory"):
        check_out_dir(f)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="does not exist"):
        check_out_dir(dangling)
    with pytest.raises(ConfigError, match="is a file"):
        check_out_dir(f / "sub" / "out")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "data.csv").write_text("precious")
    with pytest.raises(ConfigError, match="data.csv"):
        check_out_dir(busy)
    # /proc accepts no new folder, even for root (permission bits alone would not show it)
    with pytest.raises(ConfigError, match="/proc"):
        check_out_dir("/proc/bayescal-report")


def test_check_out_dir_accepts_new_empty_and_report_folders(tmp_path):
    assert check_out_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists()  # checking creates nothing
    (tmp_path / "empty").mkdir()
    check_out_dir(tmp_path / "empty")
    old = tmp_path / "old"
    old.mkdir()
    for name in ("report.html", "summary.json", "posterior.nc"):
        (old / name).write_text("x")
    check_out_dir(old)


def test_cli_checks_out_before_loading(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    # the data file does not exist: the --out error must come first
    code = main(["audit", str(tmp_path / "missing.csv"), "--out", str(f), "--quiet"])
    assert code == 2
    assert "not a directory" in capsys.readouterr().err
    code = main(["audit-ambiguity", "--npz", str(tmp_path / "missing.npz"), "--out", ""])
    assert code == 2
    assert "--out is empty" in capsys.readouterr().err


# ----------------------------------------------------------------------------- strict JSON
def test_summary_json_is_strict_nan_becomes_null(tmp_path):
    r = _tiny_report(value=float("nan"), nested={"inf": [1.0, float("inf")], "n": np.int64(3)})
    assert r.summary["value"] is None and r.summary["nested"] == {"inf": [1.0, None], "n": 3}
    r.save(tmp_path / "out")
    text = (tmp_path / "out" / "summary.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    s = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))
    assert s["warnings"] == [
        {"code": "demo.flag", "source": "demo", "message": "a message", "severity": "warning"}
    ]
    assert {"command", "seed", "versions", "platform", "data_hash", "settings", "seconds"} <= set(
        s["reproducibility"]
    )


def test_fmt_is_the_one_formatter():
    assert [fmt(x) for x in (0.5, None, float("nan"), np.float32(0.25), 7, np.int64(2))] == [
        "0.5000",
        "n/a",
        "n/a",
        "0.2500",
        "7",
        "2",
    ]


# ----------------------------------------------------------------------------- literal names
def test_display_name_shows_hidden_characters():
    assert display_name("a\u202eb") == "a\\u202eb"
    assert display_name("x\x00y") == "x\\x00y"
    assert display_name("$\\alpha$") == "$\\alpha$"
    assert display_name("zero\u200bwidth") == "zero\\u200bwidth"


@pytest.fixture(scope="module")
def hostile_report(small, tmp_path_factory):
    frame = pd.DataFrame({"score": small.score})
    # a mathtext error, a right-to-left override and a NUL: each in a figure and a table
    names = ["$\\undefinedcmd{$", "a\u202eb", "x\x00y"]
    data = Annotations.from_arrays(frame["score"].to_numpy(), small.labels, annotators=names)
    return audit(data, channels="score-bin-em", random_state=0), names


def test_html_shows_names_literally(hostile_report, tmp_path):
    r, names = hostile_report
    r.save(tmp_path / "o")
    html = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert "$\\undefinedcmd{$" in html
    assert "a\\u202eb" in html and "\u202e" not in html
    assert "x\\x00y" in html and "\x00" not in html
    # the JSON keeps the names as data
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert list(s["channels"]["annotators"]) == names


def test_html_escapes_markup_in_flags_and_titles(tmp_path):
    r = Report(
        "binary",
        "<script>alert(1)</script>",
        {"n_items": 1, "n_annotators": 1, "channels": {"method": "<b>"}, "ece": ECE},
        [],
        Provenance.capture(None, 0, "0" * 64, {}),
        flags=[Flag("x", "<img src=x onerror=alert(2)>", "a\u202eb")],
    )
    html = r.to_html()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "<img src=x" not in html and "a\\u202eb" in html


def test_figures_draw_names_literally():
    from bayescal import ChannelFit

    ch = ChannelFit.known([0.1] * len(HOSTILE), [0.9] * len(HOSTILE), annotators=HOSTILE)
    axes = channel_forest(ch)
    fig = axes[0].figure
    fig.canvas.draw()  # a name parsed as mathtext ("$\undefinedcmd{$") would raise here
    labels = [t.get_text() for t in axes[0].get_yticklabels()]
    assert labels == [display_name(n) for n in HOSTILE]
    assert all(t.get_parse_math() is False for t in axes[0].get_yticklabels())

    from bayescal.ambiguity import ece_true

    ax = reliability_diagram(
        ece_true([[0.9, 0.1], [0.6, 0.4]], [[3, 1], [1, 1]], n_draws=5), title="$\\frac{$"
    )
    ax.figure.canvas.draw()
    assert ax.get_title().startswith("$\\frac{$")


def test_per_annotator_figures_draw_the_weakest_when_capped():
    """Many annotators: the forest and the heatmaps draw the ``max_annotators`` weakest
    (smallest gap, lowest mean accuracy) in their order and say how many of how many; the
    audit caps them so the figure does not grow with K (K = 1,000 drew a 450-inch image)."""
    from bayescal import ChannelFit
    from bayescal.plotting.multiclass import confusion_heatmaps
    from bayescal.report.sections import FOREST_MAX_ANNOTATORS

    b = np.array([0.9, 0.6, 0.95, 0.55, 0.8])
    ch = ChannelFit.known([0.1] * 5, b, annotators=list("vwxyz"))
    axes = channel_forest(ch, max_annotators=2)
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["w", "y"]
    assert "the 2 of 5 with the smallest gap" in axes[0].figure._suptitle.get_text()
    assert len(channel_forest(ch, max_annotators=5)[0].get_yticklabels()) == 5
    diag = [0.9, 0.5, 0.7]
    rows = [[[d, 1 - d], [1 - d, d]] for d in diag]
    heat = confusion_heatmaps(
        ChannelFit.known_confusion(rows, annotators=["p", "q", "r"]), max_annotators=2
    )
    assert [ax.get_title() for ax in heat] == ["q", "r"]
    assert "The 2 of 3 annotators" in heat[0].figure._suptitle.get_text()

    rng = np.random.default_rng(0)
    k = FOREST_MAX_ANNOTATORS + 5
    score = rng.random(120)
    y = rng.random(120) < score
    answers = np.where(rng.random((120, k)) < 0.85, y[:, None], ~y[:, None]).astype(float)
    report = audit(
        Annotations.from_arrays(score, answers), channels="dawid-skene-em", skip=("crowdkit",)
    )
    (section,) = [sec for sec in report.sections if sec.key == "channels"]
    assert f"The figure draws the {FOREST_MAX_ANNOTATORS} of {k} annotators" in " ".join(
        section.notes
    )
    assert len(section.tables[0].rows) == k


def test_the_predictive_check_draws_the_worst_groups_when_capped():
    """1,000 score groups drew a 1,700-inch figure (8 minutes); capped, the panels are the
    groups with the most observed counts outside their bars, in group order."""
    import arviz as az

    from bayescal.plotting import pattern_predictive_check

    rng = np.random.default_rng(0)
    g, p = 6, 4
    rep = rng.poisson(20, (2, 50, g, p))
    obs = np.full((g, p), 20)
    obs[4] = [90, 90, 90, 20]  # three counts outside
    obs[1] = [90, 20, 20, 20]  # one
    dims = {"counts": ["group", "pattern"], "a": ["annotator"]}
    coords = {"group": [f"g{i}" for i in range(g)], "pattern": ["00", "10", "01", "11"]}
    idata = az.from_dict(
        posterior={"a": rng.random((2, 50, 2))},
        posterior_predictive={"counts": rep},
        observed_data={"counts": obs},
        coords=coords | {"annotator": ["r1", "r2"]},
        dims=dims,
    )
    axes = pattern_predictive_check(idata, max_groups=2)
    assert [ax.get_ylabel() for ax in axes] == ["g1", "g4"]
    assert "the 2 of 6 groups with the most counts outside" in " ".join(axes[0].get_title().split())
    assert len(pattern_predictive_check(idata)) == 6


def test_mathtext_would_have_failed_without_literal_text():
    # The hostile name is really hostile: matplotlib's default parsing rejects it.
    import io

    fig = matplotlib.figure.Figure()
    fig.text(0.5, 0.5, "$\\undefinedcmd{$")
    with pytest.raises(ValueError):
        fig.savefig(io.BytesIO(), format="png")


def test_cli_prints_one_line_per_flag(small, tmp_path, capsys):
    frame = pd.DataFrame({"score": small.score})
    labels = small.labels.copy()
    labels[:3] = np.nan  # three items nobody answered: one data.unannotated flag
    for j, name in enumerate(small.annotators):
        frame[name] = labels[:, j]
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False, na_rep="")
    code = main(["audit", str(path), "--channels", "score-bin-em", "--out", str(tmp_path / "o")])
    assert code == 0
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("bayescal: warning [")]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert len(lines) == len(s["warnings"]) >= 1
    assert "bayescal: warning [data.unannotated]: 3 item(s) have no answer" in err
    assert "warning(s)" not in err
    assert os.path.exists(tmp_path / "o" / "report.html")


def test_figure_encodes_on_first_read_and_once():
    calls = []
    fig = Figure("caption", lambda: calls.append(1) or "wide", narrow_png_base64=lambda: "narrow")
    assert calls == []
    assert (fig.png_base64, fig.png_base64, fig.narrow_png_base64) == ("wide", "wide", "narrow")
    assert calls == [1]


def test_audit_defers_png_encoding_to_the_html(small, monkeypatch):
    """An audit used for its numbers never rasterises; the HTML encodes every PNG once."""
    from bayescal.report import figures

    calls, drawn = [], []
    encode, new_figure = figures._png, figures.new_figure
    monkeypatch.setattr(figures, "_png", lambda fig, dpi: calls.append(dpi) or encode(fig, dpi))
    monkeypatch.setattr(figures, "new_figure", lambda **kw: drawn.append(kw) or new_figure(**kw))
    report = audit(small, channels="score-bin-em", random_state=0)
    assert calls == [] and drawn == []  # neither drawn nor encoded
    html = report.to_html()
    assert len(drawn) == html.count("data:image/png;base64,")  # one figure per PNG
    n_png = html.count("data:image/png;base64,")  # desktop src and phone srcset
    assert len(calls) == n_png > 0
    report.to_html()
    assert len(calls) == n_png
