"""Wide out-of-core summaries equal the in-memory ones; bad rows are named by file and row."""

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

from scale_helpers import audit_gold_counts, make_case, reordered, write_parts  # noqa: E402

import bayescal  # noqa: E402
from bayescal import Annotations, fit_channels, nc_ece, summarize  # noqa: E402
from bayescal.errors import ConfigError, DataError  # noqa: E402
from bayescal.metrics import class_nc_ece  # noqa: E402
from bayescal.scale import DaskNotInstalledError, is_out_of_core_source, summarize_dask  # noqa: E402

ANN = ["a1", "a2", "a3"]


def assert_same(s, ref):
    assert s.annotators == ref.annotators and s.classes == ref.classes
    for var in (
        "states",
        "pattern_counts",
        "n_unannotated",
        "top_cell_count",
        "classwise_cell_count",
    ):
        np.testing.assert_array_equal(s.dataset[var].values, ref.dataset[var].values)
    for var in ("top_cell_conf_sum", "classwise_cell_prob_sum", "classwise_bin_truth_sum"):
        if var in ref.dataset:
            np.testing.assert_allclose(
                s.dataset[var].values, ref.dataset[var].values, rtol=1e-9, atol=1e-9
            )
    assert s.equals(ref)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_files_equal_in_memory(case, tmp_path, fmt):
    # 13 files, CSV cut into ~4 kB blocks, Parquet into 100-row row groups, 70-row batches:
    # hundreds of partial summaries must add up to the in-memory one exactly, gold tables too.
    write_parts(case.frame, tmp_path, fmt, 13, row_group_size=100)
    s = summarize_dask(
        str(tmp_path / f"*.{fmt}"),
        item="item",
        truth="truth",
        gold="known",
        blocksize=4000,
        batch_rows=70,
        **case.kw,
    )
    ref = summarize(case.data)
    assert s.grouping == ("score" if case.c == 2 else "predicted")
    assert_same(s, ref)
    assert s.has_gold and np.array_equal(s.gold_counts(), ref.gold_counts())
    assert s.n_unannotated.sum() > 0  # the data do exercise unannotated items


def test_dask_dataframe_equal_in_memory_with_explicit_edges(case):
    groups, bins = [0, 0.2, 0.5, 0.55, 1], [0, 0.05, 0.3, 0.31, 0.9, 1]
    ddf = dd.from_pandas(case.frame.drop(columns=["item", "truth", "known"]), npartitions=17)
    s = summarize_dask(ddf, groups=groups, bins=bins, batch_rows=50, **case.kw)
    ref = summarize(reordered(case.data, ANN, truth=False, gold=False), groups=groups, bins=bins)
    assert s.grouping == ("score" if case.c == 2 else "confidence")
    assert_same(s, ref)


def test_directory_and_list_sources_and_annotator_order(toy, toy_frame, tmp_path):
    paths = write_parts(toy_frame, tmp_path / "d", "parquet", 4)
    order = ["a3", "a1", "a2"]
    ref = summarize(Annotations.from_arrays(toy.score, toy.labels[:, [2, 0, 1]], annotators=order))
    assert_same(summarize_dask(str(tmp_path / "d"), annotators=order), ref)
    assert_same(summarize_dask([str(p) for p in paths], annotators=order), ref)


def test_downstream_fits_equal(case, tmp_path):
    write_parts(case.frame.drop(columns=["truth", "known"]), tmp_path, "parquet", 7)
    s = summarize_dask(str(tmp_path), annotators=ANN, **case.kw)
    ref = summarize(reordered(case.data, ANN, truth=False, gold=False))
    fit, fit_ref = fit_channels(s), fit_channels(ref)
    np.testing.assert_allclose(fit.confusion.values, fit_ref.confusion.values, rtol=1e-7)
    np.testing.assert_allclose(
        fit.class_prevalence.values, fit_ref.class_prevalence.values, rtol=1e-7
    )
    if case.c == 2:
        e, e_ref = nc_ece(s, fit), nc_ece(ref, fit_ref)
        assert e.value == pytest.approx(e_ref.value, rel=1e-9)
        np.testing.assert_allclose(
            e.bin_moments.values, e_ref.bin_moments.values, rtol=1e-7, atol=1e-12
        )
    else:
        e, e_ref = class_nc_ece(s, fit), class_nc_ece(ref, fit_ref)
        for part in ("top_label", "classwise"):
            assert getattr(e, part).value == pytest.approx(getattr(e_ref, part).value, rel=1e-9)


def test_distributed_cluster_gives_same_result(toy, toy_frame, tmp_path, local_cluster):
    write_parts(toy_frame, tmp_path, "csv", 5)
    s = summarize_dask(
        str(tmp_path / "*.csv"), item="item", truth="truth", blocksize=5000, client=local_cluster
    )
    assert_same(s, summarize(toy, groups=5, bins=10))


def _csv(path, rows):
    path.write_text("score,a1,a2,a3\n" + "".join(r + "\n" for r in rows))
    return path


def test_bad_label_in_csv_names_file_and_line(tmp_path):
    rng = np.random.default_rng(0)
    good = [f"{rng.random():.5f},{rng.integers(2)},,{rng.integers(2)}" for _ in range(2000)]
    _csv(tmp_path / "a.csv", good)
    bad = list(good)
    bad[1500] = "0.5,1,2,0"  # data row 1501 = line 1502 (the header is line 1)
    _csv(tmp_path / "b.csv", bad)
    for blocksize in (3000, None):  # the bad row deep inside a later block, and one block per file
        with pytest.raises(DataError) as err:
            summarize_dask(str(tmp_path / "*.csv"), blocksize=blocksize, batch_rows=128)
        msg = str(err.value)
        assert "b.csv" in msg and "line 1502" in msg and "'a2'" in msg and "value 2" in msg


def test_non_numeric_and_out_of_range_scores_named(tmp_path):
    _csv(tmp_path / "x.csv", ["0.1,0,1,", "0.2,1,1,1", "abc,0,0,0"])
    with pytest.raises(
        DataError, match=r"column 'score': 'abc' at file .*x\.csv', line 4 is not a number"
    ):
        summarize_dask(str(tmp_path / "x.csv"))
    _csv(tmp_path / "x.csv", ["0.1,0,1,", "1.5,1,1,1"])
    with pytest.raises(DataError, match=r"line 3: score column 'score' is 1\.5"):
        summarize_dask(str(tmp_path / "x.csv"))
    _csv(tmp_path / "x.csv", ["0.1,0,NA,1"])  # only a blank cell is missing, as in load_csv
    with pytest.raises(DataError, match=r"column 'a2': 'NA' at file .*line 2 is not a number"):
        summarize_dask(str(tmp_path / "x.csv"))


def test_bad_class_values_named(case, tmp_path):
    frame = case.frame.iloc[:50].drop(columns=["item"]).copy()
    frame.loc[7, "a2"] = case.c  # one past the last class
    frame.to_csv(tmp_path / "x.csv", index=False)
    kw = {"truth": "truth", "gold": "known", **case.kw}
    with pytest.raises(DataError, match=r"x\.csv', line 9: label column 'a2' has the value"):
        summarize_dask(str(tmp_path / "x.csv"), **kw)
    frame = case.frame.iloc[:50].drop(columns=["item"]).copy()
    frame.loc[4, "known"] = case.c
    frame.to_csv(tmp_path / "x.csv", index=False)
    with pytest.raises(DataError, match=r"line 6: gold column 'known' has the value"):
        summarize_dask(str(tmp_path / "x.csv"), **kw)
    if case.c > 2:
        frame = case.frame.iloc[:50].drop(columns=["item"]).copy()
        frame.loc[3, "p1"] += 0.01
        frame.to_csv(tmp_path / "x.csv", index=False)
        with pytest.raises(DataError, match=r"line 5: the probabilities .* sum to 1\.01"):
            summarize_dask(str(tmp_path / "x.csv"), **kw)


def test_probability_columns_are_checked():
    with pytest.raises(ConfigError, match="either score="):
        summarize_dask("x/*.csv", score="s", probs=["p0", "p1"])
    with pytest.raises(ConfigError, match="at least two"):
        summarize_dask("x/*.csv", probs=["p0"])
    with pytest.raises(ConfigError, match="lists a column twice"):
        summarize_dask("x/*.csv", probs=["p0", "p0"])
    with pytest.raises(ConfigError, match="give probs too"):
        summarize_dask("x/*.csv", classes=["a", "b"])
    with pytest.raises(ConfigError, match="not supported out of core"):
        summarize_dask("x/*.csv", groups="data")


def test_bad_rows_in_parquet_and_dask_partitions_named(toy_frame, tmp_path):
    frame = toy_frame.drop(columns=["item", "truth"]).copy()
    frame.loc[2345, "a1"] = 2.0
    write_parts(frame, tmp_path, "parquet", 3, row_group_size=128)  # rows 0-999 in part-000, ...
    with pytest.raises(
        DataError, match=r"part-002\.parquet', row 346 .*label column 'a1' has the value 2"
    ):
        summarize_dask(str(tmp_path / "*.parquet"), batch_rows=100)
    with pytest.raises(
        DataError, match=r"partition \d+ of the dask DataFrame, row \d+ .*index 2345"
    ):
        summarize_dask(dd.from_pandas(frame, npartitions=6))
    strings = frame.astype({"score": str})
    strings.loc[17, "score"] = "0.3?"
    strings.iloc[:100].to_parquet(tmp_path / "s.parquet")
    # Parquet is typed: a text score column is refused by type, as by bayescal.load_table.
    with pytest.raises(DataError, match=r"s\.parquet': column 'score' has type string"):
        summarize_dask(str(tmp_path / "s.parquet"))


def test_refusals_are_clear(toy_frame, tmp_path):
    write_parts(toy_frame, tmp_path, "parquet", 2)
    with pytest.raises(ConfigError, match="equal_mass_edges"):
        summarize_dask(str(tmp_path), bin_strategy="quantile")
    with pytest.raises(DataError, match="no annotator column"):
        summarize_dask(str(tmp_path), annotators=["a1", "zz"])
    with pytest.raises(DataError, match="does not exist"):
        summarize_dask(str(tmp_path / "nope.parquet"))
    with pytest.raises(DataError, match="matches no CSV or Parquet"):
        summarize_dask(str(tmp_path / "*.csv"))
    with pytest.raises(DataError, match="dask DataFrame or a path"):
        summarize_dask(np.zeros(3))
    with pytest.raises(ConfigError, match="scheduler"):
        summarize_dask(str(tmp_path), item="item", truth="truth", scheduler="gpu")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_files_with_other_annotator_columns_are_refused(toy_frame, tmp_path, fmt):
    """Annotators read off the first file: a later file's extra annotator was dropped
    without a word (hostile re-check, issue 23); one lacking an annotator is refused too."""
    first, second = toy_frame.iloc[:150], toy_frame.iloc[150:].assign(a4=1)
    write = (
        (lambda f, p: f.to_csv(p, index=False)) if fmt == "csv" else (lambda f, p: f.to_parquet(p))
    )
    write(first, tmp_path / f"a.{fmt}")
    write(second, tmp_path / f"b.{fmt}")
    with pytest.raises(
        DataError, match=r"b\.\w+' has annotator columns .*\['a4'\] would be ignored"
    ):
        summarize_dask(str(tmp_path), item="item", truth="truth")
    # named annotators read the named columns only: the extra one is left out on request
    named = summarize_dask(str(tmp_path), item="item", truth="truth", annotators=ANN)
    assert named.annotators == ANN
    write(second.drop(columns=["a2"]), tmp_path / f"b.{fmt}")
    with pytest.raises(DataError, match="a2"):
        summarize_dask(str(tmp_path), item="item", truth="truth")


def test_columns_named_like_a_reference_or_an_id_are_refused_out_of_core(toy_frame, tmp_path):
    """A folder's 'truth' column became a fourth annotator with a warning only, and 'item'
    was 'not a number', where one file refuses both with the fix (hostile re-check)."""
    write_parts(toy_frame, tmp_path, "csv", 2)
    with pytest.raises(
        DataError, match=r"column 'item' \(also \['truth'\]\) is named like an item"
    ):
        summarize_dask(str(tmp_path))
    with pytest.raises(DataError, match="'truth' is named like a reference label.*--truth"):
        summarize_dask(str(tmp_path), item="item")
    frame = dd.from_pandas(toy_frame, npartitions=2)
    with pytest.raises(DataError, match="'truth' is named like a reference label"):
        summarize_dask(frame, item="item")


def test_missing_dask_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dask", None)  # makes `import dask` fail
    with pytest.raises(DaskNotInstalledError, match=r'pip install "bayescal\[dask\]"'):
        summarize_dask("whatever/*.parquet")
    assert issubclass(DaskNotInstalledError, ConfigError) and issubclass(
        DaskNotInstalledError, ImportError
    )


def test_routing_predicate(toy_frame):
    assert is_out_of_core_source("data/*.parquet") and is_out_of_core_source(["a.csv", "b.csv"])
    assert is_out_of_core_source(dd.from_pandas(toy_frame, npartitions=2))
    assert not is_out_of_core_source(toy_frame) and not is_out_of_core_source([0.1, 0.2])
    assert not is_out_of_core_source(bayescal.simulate.simulate_toy(10, random_state=0))


def test_summarize_routes_out_of_core_sources(toy, toy_frame, tmp_path):
    from bayescal.scale import summarize as route

    write_parts(toy_frame, tmp_path, "parquet", 4)
    ref = summarize(toy, groups=5, bins=10)
    assert route(toy, groups=5, bins=10).equals(ref)
    assert route(str(tmp_path), item="item", truth="truth").equals(ref)
    ddf = dd.from_pandas(toy_frame, npartitions=3)
    assert route(ddf, item="item", truth="truth", groups=5, bins=10).equals(ref)
    with pytest.raises(ConfigError, match="only to out-of-core sources"):
        route(toy, client=None)
    with pytest.raises(DataError, match="dask DataFrame"):
        route(np.zeros((3, 3)))
    # the in-memory summarize names the router instead of guessing at a path
    with pytest.raises(DataError, match="bayescal.scale.summarize"):
        summarize(str(tmp_path))


def test_multiclass_routes_out_of_core_too(case, tmp_path):
    from bayescal.scale import summarize as route

    write_parts(case.frame, tmp_path, "parquet", 3)
    ref = summarize(case.data)
    assert route(case.data).equals(ref)
    out = route(str(tmp_path), item="item", truth="truth", gold="known", **case.kw)
    assert out.equals(ref)


def test_cli_gold_out_of_core(tmp_path):
    """``bayescal audit FOLDER --gold known`` (binary) reads the gold column out of core."""
    c2 = make_case(2)
    write_parts(c2.frame.drop(columns=["item", "truth"]), tmp_path / "parts", "csv", 3)
    folder = str(tmp_path / "parts" / "*.csv")
    counts = audit_gold_counts(tmp_path, folder, "--annotators", "a1,a2,a3")
    assert counts == summarize(c2.data).binary.n_gold
