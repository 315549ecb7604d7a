import json
import re

import numpy as np
import pandas as pd
import pytest

import bayescal as bc
from bayescal.cli import main
from bayescal.errors import ConfigError
from bayescal.report import audit
from bayescal.simulate import simulate_toy, toy_population_binned_ece

FAST = ["--draws", "150", "--tune", "150", "--quiet"]


def _check_layout(s, with_truth):
    assert {"n_items", "n_annotators", "channels", "ece", "diagnostics", "warnings"} <= set(s)
    assert {"method", "annotators", "prevalence"} <= set(s["channels"])
    for ann in s["channels"]["annotators"].values():
        for key in ("a", "b"):
            assert {"mean", "lo", "hi"} <= set(ann[key])
    assert {"soft_vote", "majority_vote", "nc"} <= set(s["ece"])
    assert {"point", "plugin", "lo", "hi", "prob", "source"} <= set(s["ece"]["nc"])
    assert "mean" not in s["ece"]["nc"]  # issue 22 item 6: no number without its meaning
    assert ("oracle" in s["ece"]) == with_truth
    assert {"rhat_max", "ess_bulk_min", "divergences", "ppc_p_min"} <= set(s["diagnostics"])
    assert isinstance(s["warnings"], list)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("example")
    code = main(["audit", "--example", "cifar10h-catdog", "--out", str(out), *FAST])
    return code, out


def test_cli_example_writes_report_json_and_posterior(example_run):
    code, out = example_run
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    _check_layout(s, with_truth=True)
    assert s["n_items"] == 2000 and s["n_unannotated"] == 8
    assert s["channels"]["method"] == "bayes_grouped"
    html = (out / "report.html").read_text()
    assert "Calibration error" in html and "data:image/png;base64," in html
    import arviz as az

    idata = az.from_netcdf(out / "posterior.nc")
    assert "observed_data" in idata.groups()


def test_report_has_no_external_urls(example_run):
    html = (example_run[1] / "report.html").read_text()
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)
    assert not re.search(r"(https?:)?//[a-zA-Z0-9]", text)
    assert not re.search(r"\b(src|href)=\"(?!data:|#)", html)
    assert "<script" not in html.lower() and "<link" not in html.lower()


def test_interval_contains_true_binned_ece_on_simulated_data():
    d = simulate_toy(6000, "shifted", random_state=11)
    r = audit(d, draws=300, tune=300, random_state=1)
    pop = toy_population_binned_ece("shifted", np.linspace(0, 1, 11))
    nc = r.summary["ece"]["nc"]
    assert nc["lo"] <= pop <= nc["hi"], (nc, pop)
    assert r.summary["diagnostics"]["divergences"] == 0
    assert "NC-ECE" in r._repr_html_()
    sec = {s.title: s for s in r.sections}
    assert sec["Recalibration"].status == "ok"
    assert (
        "recalibration" in r.summary and r.summary["recalibration"]["recommended"]["map"] != "none"
    )


def test_hostile_annotator_name_is_escaped(tmp_path):
    d0 = simulate_toy(1500, "nonlinear", random_state=3)
    frame = pd.DataFrame({"score": d0.score})
    names = ["<script>alert(1)</script>", "b&b", "ok"]
    for j, n in enumerate(names):
        frame[n] = d0.labels[:, j]
    path = tmp_path / "hostile.csv"
    frame.to_csv(path, index=False, na_rep="")
    out = tmp_path / "out"
    assert (
        main(["audit", str(path), "--channels", "score-bin-em", "--out", str(out), "--quiet"]) == 0
    )
    html = (out / "report.html").read_text()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    s = json.loads((out / "summary.json").read_text())
    assert names[0] in s["channels"]["annotators"]
    assert not (out / "posterior.nc").exists()  # point channels: no posterior
    assert s["diagnostics"]["rhat_max"] is None


BAD = [
    ("non-numeric score", "score,r1,r2,r3\n0.1,0,1,1\nhigh,1,1,0\n", []),
    ("label 2", "score,r1,r2,r3\n0.1,0,1,2\n0.5,1,1,0\n", []),
    ("missing column", "prob,r1,r2,r3\n0.1,0,1,1\n", []),
    ("empty file", "", []),
    ("duplicated annotator column", "score,r1,r1,r3\n0.1,0,1,1\n", []),
    ("one annotator", "score,r1\n0.1,0\n0.7,1\n0.3,0\n", []),
    ("unknown annotator", "score,r1,r2,r3\n0.1,0,1,1\n", ["--annotators", "r1,r9"]),
]


@pytest.mark.parametrize("name,text,extra", BAD, ids=[b[0] for b in BAD])
def test_bad_csv_one_line_error_exit_2_no_partial_report(tmp_path, capsys, name, text, extra):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    out = tmp_path / "out"
    code = main(
        ["audit", str(path), "--out", str(out), "--channels", "score-bin-em", "--quiet", *extra]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("bayescal: error:") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert not (out / "report.html").exists() and not (out / "summary.json").exists()


def test_long_table_and_parquet_inputs(tmp_path):
    d = simulate_toy(1200, "shifted", random_state=5, missing=0.2)
    rows = []
    for i in range(d.n_items):
        for j, name in enumerate(d.annotators):
            v = d.labels[i, j]
            if not np.isnan(v):
                rows.append({"item": i, "who": name, "vote": int(v), "p": d.score[i]})
    long = tmp_path / "long.csv"
    pd.DataFrame(rows).to_csv(long, index=False)
    out = tmp_path / "o1"
    assert (
        main(
            [
                "audit",
                str(long),
                "--long",
                "item,who,vote",
                "--score",
                "p",
                "--channels",
                "score-bin-em",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    s_long = json.loads((out / "summary.json").read_text())
    wide = pd.DataFrame(
        {"score": d.score, **{n: d.labels[:, j] for j, n in enumerate(d.annotators)}}
    )
    pq = tmp_path / "wide.parquet"
    wide.to_parquet(pq)
    out2 = tmp_path / "o2"
    assert (
        main(["audit", str(pq), "--channels", "score-bin-em", "--out", str(out2), "--quiet"]) == 0
    )
    s_pq = json.loads((out2 / "summary.json").read_text())
    # items nobody answered have no rows in the long table, so compare the annotated items' results
    assert s_long["ece"]["nc"]["point"] == pytest.approx(s_pq["ece"]["nc"]["point"], abs=1e-12)


def test_cli_argument_errors(tmp_path, capsys):
    assert main(["audit", "--out", str(tmp_path)]) == 2
    assert "no data" in capsys.readouterr().err
    assert main(["audit", "x.csv", "--example", "snli-entailment", "--out", str(tmp_path)]) == 2
    assert main(["audit", str(tmp_path / "x.csv"), "--long", "a,b", "--out", str(tmp_path)]) == 2


def test_python_api_refuses_wrong_input():
    with pytest.raises(bc.errors.ConfigError):
        audit("data.csv")
    with pytest.raises(bc.errors.ConfigError, match="channels"):
        audit(simulate_toy(100, random_state=0), channels="magic")


def test_cli_audits_a_folder_of_parquet_out_of_core(tmp_path):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    d = simulate_toy(3000, "nonlinear", random_state=8, missing=0.1)
    folder = tmp_path / "parts"
    folder.mkdir()
    wide = pd.DataFrame(
        {"score": d.score, **{n: d.labels[:, j] for j, n in enumerate(d.annotators)}}
    )
    for k, part in enumerate(np.array_split(np.arange(d.n_items), 4)):
        wide.iloc[part].to_parquet(folder / f"part-{k}.parquet")
    out = tmp_path / "out"
    assert (
        main(["audit", str(folder), "--channels", "score-bin-em", "--out", str(out), "--quiet"])
        == 0
    )
    s = json.loads((out / "summary.json").read_text())
    in_memory = audit(bc.Annotations.from_arrays(d.score, d.labels), channels="score-bin-em")
    assert s["ece"]["nc"]["point"] == pytest.approx(
        in_memory.summary["ece"]["nc"]["point"], abs=1e-9
    )
    assert s["n_items"] == d.n_items
    assert "skipped" in (out / "report.html").read_text()


def test_sampler_settings_with_a_point_estimator_are_refused_in_python_too():
    """``audit(data, channels="dawid-skene-em", draws=5)`` was accepted and ignored (the CLI
    refuses --draws there); out-of-range settings are refused whatever the channels."""
    toy = simulate_toy(300, random_state=0)
    with pytest.raises(ConfigError, match="draws sets the sampler of the Bayesian channels"):
        audit(toy, channels="dawid-skene-em", draws=5)
    with pytest.raises(ConfigError, match="tune, chains set the sampler"):
        audit(toy, channels="score-bin-em", tune=10, chains=1)
    with pytest.raises(ConfigError, match="draws must be an integer from 1"):
        audit(toy, channels="bayes", draws=0)
    r = audit(toy, channels="dawid-skene-em", skip=("recalibration", "next", "items"))
    assert r.summary["channels"]["method"] == "dawid_skene_em"
