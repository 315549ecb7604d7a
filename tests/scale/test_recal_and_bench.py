"""Histogram map from a summary; the scale benchmark's JSON contract."""

import json
import types

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

from scale_helpers import write_parts

from bayescal import summarize
from bayescal.channels.em import score_bin_em
from bayescal.errors import DataError
from bayescal.recal import HistogramMap, histogram_map_from_summary
from bayescal.scale import summarize_dask


def test_histogram_map_from_dask_summary_equals_per_item_fit(toy, toy_frame, tmp_path):
    write_parts(toy_frame, tmp_path, "parquet", 5)
    s = summarize_dask(str(tmp_path), annotators=["a1", "a2", "a3"], bins=40)
    fit = score_bin_em(s)
    for weights in ("equal", "shrunk_inverse_variance"):
        g = histogram_map_from_summary(s, fit, weights=weights)
        h = HistogramMap(bins=s.bin_edges, strategy="uniform").fit_corrected(
            toy, fit, weights=weights
        )
        np.testing.assert_allclose(g.bin_values_, h.bin_values_, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(g.bin_counts_, h.bin_counts_)
        assert g.fill_value_ == pytest.approx(h.fill_value_, rel=1e-10)
        assert g.n_items_ == h.n_items_
        z = np.linspace(0, 1, 101)
        np.testing.assert_allclose(g.predict(z), h.predict(z), rtol=1e-10, atol=1e-12)
    other = summarize(toy.subset(np.arange(100)), groups=5, bins=4)
    with pytest.raises(DataError, match="must match"):
        from bayescal import ChannelFit

        histogram_map_from_summary(other, ChannelFit.known([0.1, 0.1], [0.9, 0.9]))


def test_bench_scale_json(tmp_path, capsys):
    pytest.importorskip("psutil")
    from bayescal.bench import scale

    out = tmp_path / "out" / "scale.json"
    args = types.SimpleNamespace(
        items=30_000,
        k=3,
        workers=[1, 2],
        scheduler="threads",
        dir=str(tmp_path / "gen"),
        keep=False,
        reuse=False,
        file_rows=7_000,
        row_group=2_000,
        missing=0.2,
        seed=3,
        json_path=str(out),
    )
    assert scale.run(args) == 0
    res = json.loads(out.read_text())
    for key in ("items", "workers", "seconds", "peak_rss_bytes", "generate_seconds"):
        assert key in res
    assert res["items"] == 30_000 and [r["workers"] for r in res["results"]] == [1, 2]
    for r in res["results"]:
        assert r["items_summarised"] == 30_000 and r["seconds"] > 0
        assert r["peak_rss_bytes"] >= r["peak_rss_self_bytes"] > 50 * 2**20
        assert 0 <= r["nc_ece"] < 1
    assert res["results"][0]["nc_ece"] == res["results"][1]["nc_ece"]  # same data, same summary
    assert res["data"]["files"] == 5
    assert not (tmp_path / "gen").exists() or not any((tmp_path / "gen").iterdir())
