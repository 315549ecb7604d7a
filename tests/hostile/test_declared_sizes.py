"""Issue 23 item 1: files are checked by what they declare before anything is read.

Posteriors (``--priors``): declared draws x chains x coordinates against a limit on bytes,
compressed or not; fill values and compressed constants; empty dimensions; types;
degenerate draws; repeated and oversized names. Both tracks' loaders read through
``read_posterior_group``, so every case runs through both where it applies. Tables:
Parquet footers (declared rows, row groups), npz headers, names of any length.

"Before anything is read" is tested, not timed: the loader's one reader of values
(``xarray.load_dataset``) is made to fail the test if it is reached.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import xarray as xr
from hostile_helpers import one_line_error
from posterior_builders import binary_posterior, declared, multiclass_posterior, write

import bayescal.bayes.posterior_file as posterior_file
from bayescal import Annotations, MulticlassAnnotations, load_long, load_table
from bayescal.bayes.posterior_file import (
    MAX_ANSWERS,
    MAX_POSTERIOR_BYTES,
    load_channel_posterior,
    load_multiclass_posterior,
)
from bayescal.data import files
from bayescal.data.files import MAX_NAME_CHARS, check_name_sizes
from bayescal.errors import ConfigError, DataError

LOADERS = {"binary": load_channel_posterior, "multiclass": load_multiclass_posterior}


@pytest.fixture
def no_values_read(monkeypatch):
    """Fail the test if the posterior's values are read at all."""

    def refuse_to_read(*args, **kwargs):
        pytest.fail("the posterior's values were read before its declared sizes were checked")

    monkeypatch.setattr(xr, "load_dataset", refuse_to_read)


def refusal(loader, path) -> str:
    with pytest.raises(ConfigError) as info:
        loader(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return message


# ------------------------------------------------------------------ declared sizes
def test_30_million_declared_draws_are_refused_from_the_metadata(tmp_path, no_values_read):
    """The issue's reproducer: an 11 KB file declaring 30 million draws of 20 annotators and
    5 groups (10.9 GB of fill values) took 113 s and 10.9 GB; now only metadata are read."""
    path = declared(
        tmp_path / "posterior.nc",
        30_000_000,
        annotators=tuple(f"r{j}" for j in range(20)),
        groups=tuple(f"g{j}" for j in range(5)),
    )
    assert path.stat().st_size < 20_000
    for loader in LOADERS.values():
        message = refusal(loader, path)
        assert "declares 10,414 MiB" in message and "512 MiB" in message
        assert "thin the draws" in message


def test_compressed_constants_over_the_limit_are_refused_unread(
    tmp_path, monkeypatch, no_values_read
):
    """Variant of the 449 KB file that became 2.2 GB: draws written, compressed constants
    (the limit is lowered so that the test writes megabytes, not gigabytes)."""
    monkeypatch.setattr(posterior_file, "MAX_POSTERIOR_BYTES", 4 << 20)
    path = declared(tmp_path / "posterior.nc", 200_000, value=0.25)
    assert path.stat().st_size < 200_000  # 14 MB declared
    assert "more than the 4 MiB" in refusal(load_channel_posterior, path)


@pytest.mark.parametrize("value", [None, 0.25], ids=["fill-values", "compressed-constant"])
def test_a_dataset_that_expands_a_thousandfold_is_no_sampler_output(
    tmp_path, value, no_values_read
):
    """Under the size limit, a dataset whose declared bytes exceed 64 x what the file stores
    is refused: random doubles compress by a few per cent."""
    path = declared(tmp_path / "posterior.nc", 100_000, value=value)
    message = refusal(load_channel_posterior, path)
    assert "fill values or compressed constants, not a sampler's draws" in message


def test_the_size_limit_counts_every_variable_together(tmp_path, monkeypatch, no_values_read):
    post = binary_posterior(draws=2000)
    one = post["a"].nbytes
    monkeypatch.setattr(posterior_file, "MAX_POSTERIOR_BYTES", 2 * one)  # each fits, not all
    assert "posterior group declares" in refusal(
        load_channel_posterior, write(post, tmp_path / "p.nc")
    )


def test_random_draws_compress_far_less_than_the_expansion_limit(tmp_path):
    """The measured ratio the limit of 64 is set against: gzip keeps about 95 % of the bytes
    of random float64 draws."""
    import h5py

    path = write(binary_posterior(draws=50_000), tmp_path / "p.nc")
    with h5py.File(path) as f:
        ds = f["posterior/a"]
        ratio = ds.size * ds.dtype.itemsize / ds.id.get_storage_size()
    assert 1.0 <= ratio < 1.2
    load_channel_posterior(path)  # and it loads


def test_the_default_limit_holds_a_large_genuine_posterior():
    # 4 chains x 1000 draws of 160 annotators' 10 x 10 confusion matrices, plus prevalences
    assert 4000 * (160 * 100 + 10 * 10) * 8 < MAX_POSTERIOR_BYTES


# ------------------------------------------------------------------ types, links, format
def test_a_missing_priors_file_is_said_not_to_exist(tmp_path):
    for loader in LOADERS.values():
        message = refusal(loader, tmp_path / "earlier" / "posterior.nc")
        assert "posterior.nc' does not exist; give the path of the posterior.nc" in message


def test_classic_netcdf_has_no_groups(tmp_path):
    path = tmp_path / "classic.nc"
    binary_posterior().to_netcdf(path, format="NETCDF3_64BIT", engine="scipy")
    assert path.read_bytes()[:3] == b"CDF"
    for loader in LOADERS.values():
        assert "classic netCDF file, which has no groups" in refusal(loader, path)


def test_compound_types_links_and_external_storage_are_refused(tmp_path, no_values_read):
    import h5py

    def with_posterior(name, fill):
        path = write(binary_posterior(), tmp_path / f"{name}.nc")
        with h5py.File(path, "a") as f:
            fill(f)
        return path

    compound = with_posterior(
        "compound",
        lambda f: f["posterior"].create_dataset("x", (2,), dtype=[("p", "f8"), ("q", "i4")]),
    )
    assert "HDF5 type" in refusal(load_channel_posterior, compound)
    other = write(binary_posterior(), tmp_path / "elsewhere.nc")

    def linked(f):
        f["posterior"]["a_link"] = h5py.ExternalLink(str(other), "/posterior/a")

    assert "links to another place" in refusal(
        load_channel_posterior, with_posterior("ext", linked)
    )

    def external(f):
        raw = tmp_path / "raw.bin"
        raw.write_bytes(np.zeros(4).tobytes())
        f["posterior"].create_dataset("z", (4,), dtype="f8", external=[(str(raw), 0, 32)])

    message = refusal(load_channel_posterior, with_posterior("external", external))
    assert "keeps its values in other files" in message

    top = tmp_path / "soft.nc"
    with h5py.File(top, "w") as f:
        f.create_group("real")
        f["posterior"] = h5py.SoftLink("/real")
    assert "in the file itself" in refusal(load_channel_posterior, top)


def test_integer_draws_are_refused(tmp_path):
    post = binary_posterior()
    post["a"] = (post["a"] * 0).astype(np.int64) + 1
    assert "not float64 or float32 draws" in refusal(
        load_channel_posterior, write(post, tmp_path / "i.nc")
    )


@pytest.mark.parametrize("dtype", ["f2", "b1", "c16"])
def test_types_outside_netcdf4_are_refused_before_netcdf_reads_them(tmp_path, dtype):
    """A float16 variable (h5netcdf's invalid_netcdf mode writes them) made the netCDF C
    library crash the process with a segmentation fault; such types are refused from the
    HDF5 metadata, before netCDF opens the file."""
    import h5py

    path = write(binary_posterior(), tmp_path / "t.nc")
    with h5py.File(path, "a") as f:
        f["posterior"].create_dataset("x", data=np.zeros((2, 3), dtype=dtype))
    message = refusal(load_channel_posterior, path)
    assert "not one of netCDF-4's numbers or text" in message


# ------------------------------------------------------------------ empty dimensions
@pytest.mark.parametrize("track, dim", [
    ("binary", "annotator"), ("binary", "group"), ("binary", "draw"),
    ("multiclass", "annotator"), ("multiclass", "true_class"), ("multiclass", "class"),
])  # fmt: skip
def test_an_empty_dimension_is_refused_by_name(tmp_path, track, dim):
    """Issue: an empty annotator dimension raised ``ValueError: zero-size array``."""
    post = (binary_posterior if track == "binary" else multiclass_posterior)()
    empty = post.isel({dim: slice(0, 0)})
    if track == "multiclass" and dim == "true_class":
        empty = empty.isel(answered_class=slice(0, 0))
    message = refusal(LOADERS[track], write(empty, tmp_path / "e.nc"))
    assert f"its {dim!r} dimension is empty" in message


# ------------------------------------------------------------------ degenerate draws
def _nearly_constant(post, var, sd, where=None, dtype=np.float64):
    """``post`` with ``var`` (or one coordinate of it) replaced by 0.3 + noise of sd ``sd``."""
    rng = np.random.default_rng(1)
    values = post[var].values.astype(dtype)
    noise = (0.3 + sd * rng.standard_normal(values.shape)).astype(dtype)
    if where is None:
        values = noise
    else:
        values[where] = noise[where]
    out = post.copy()
    out[var] = (post[var].dims, values)
    return out


def test_draws_equal_up_to_rounding_are_a_point_mass(tmp_path):
    """The issue's reproducer: every draw equal, rounding leaving a variance of ~1e-34."""
    post = _nearly_constant(binary_posterior(), "a", 1e-17)
    assert 0 < float(post["a"].var()) < 1e-32
    message = refusal(load_channel_posterior, write(post, tmp_path / "d.nc"))
    assert "the draws of a[annotator=r1] have standard deviation" in message
    assert "3 such coordinate(s)" in message and "point mass" in message


@pytest.mark.parametrize("sd", [1e-12, 1e-9, 1e-7])
def test_draws_narrower_than_any_real_posterior_are_a_point_mass(tmp_path, sd):
    """0.3 +- 1e-12 passed the earlier floor of 1024 units of rounding and was sampled as a
    prior: R-hat 2.9, two effective draws, and NC-ECE still "reliable". A posterior of n
    answers has sd >= sqrt(m (1 - m) / n), so these would need 10^11 answers or more."""
    post = _nearly_constant(binary_posterior(), "a", sd)
    message = refusal(load_channel_posterior, write(post, tmp_path / "n.nc"))
    assert f"narrower than a posterior of {MAX_ANSWERS:.0e} answers" in message
    mc = multiclass_posterior()
    conf = mc["confusion"].values.copy()
    rng = np.random.default_rng(2)
    noise = sd * rng.standard_normal(conf.shape[:2])
    conf[:, :, 0, 0, :] = [0.8, 0.1, 0.1]  # one row of one annotator, nearly constant
    conf[:, :, 0, 0, 0] += noise
    conf[:, :, 0, 0, 1] -= noise
    mc["confusion"] = (mc["confusion"].dims, conf)
    assert "narrower than a posterior" in refusal(
        load_multiclass_posterior, write(mc, tmp_path / "m.nc")
    )


def test_one_degenerate_coordinate_among_genuine_ones_is_named(tmp_path):
    post = _nearly_constant(binary_posterior(), "b", 0.0, where=(slice(None), slice(None), 1))
    message = refusal(load_channel_posterior, write(post, tmp_path / "d.nc"))
    assert "b[annotator=r2]" in message and "1 such coordinate(s)" in message
    mc = multiclass_posterior()
    conf = mc["confusion"].values.copy()
    conf[:, :, 2, 1, :] = conf[0, 0, 2, 1, :]  # annotator r3, true class y: one repeated row
    mc["confusion"] = (mc["confusion"].dims, conf)
    message = refusal(load_multiclass_posterior, write(mc, tmp_path / "m.nc"))
    assert "confusion[annotator=r3, true_class=y, answered_class=x]" in message


def test_the_floor_holds_for_float32_draws(tmp_path):
    """float32 draws round at 1.2e-7, so 1e-9 of spread on 0.3 is rounding there."""
    post = _nearly_constant(binary_posterior(), "a", 1e-9, dtype=np.float32)
    assert post["a"].dtype == np.float32
    assert "point mass" in refusal(load_channel_posterior, write(post, tmp_path / "f.nc"))


def test_the_narrowest_real_posteriors_pass_the_floor(tmp_path):
    """A Beta posterior from 10^10 answers (sd 4.6e-6 at 0.3, a hundred audits of 10^8
    answers) is sqrt(10) times above the floor of 10^11 answers."""
    for n in (1e10, 1e6):
        post = _nearly_constant(binary_posterior(), "a", np.sqrt(0.3 * 0.7 / n))
        fit = load_channel_posterior(write(post, tmp_path / "n.nc"))
        assert fit.a.values.std(axis=0).min() > np.sqrt(0.3 * 0.7 / MAX_ANSWERS)


@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_a_subnormal_draw_is_no_sampled_probability(tmp_path, track):
    """1e-320 lies in (0, 1) but below float64's smallest normal number (2.2e-308): a
    logistic or softmax draw would need a log-odds below -708; refused by name."""
    post = binary_posterior() if track == "binary" else multiclass_posterior()
    var = "a" if track == "binary" else "confusion"
    values = post[var].values.copy()
    if track == "binary":
        values[0, 0, 0] = 1e-320
    else:  # keep the row on the simplex: the subnormal entry's mass moves to its neighbour
        values[0, 0, 0, 0, 1] += values[0, 0, 0, 0, 0] - 1e-320
        values[0, 0, 0, 0, 0] = 1e-320
    post[var] = (post[var].dims, values)
    message = refusal(LOADERS[track], write(post, tmp_path / "s.nc"))
    assert "subnormal value 1e-320" in message


@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_tiny_draws_that_differ_are_not_called_equal_and_no_prior_is_matched(tmp_path, track):
    """Draws near 1e-200 that differ by 10% were called "all equal up to rounding (standard
    deviation 0)": their squares underflow. The spread is now measured relative to the
    draws: a file of them is refused with its true spread (a posterior of 1e-200 +- 1e-201
    needs some 1e198 answers); a fit made in Python that holds them is refused by the
    moment match, which says its variance underflows float64, not "variance 0"."""
    from bayescal.bayes.priors import ChannelPriors
    from bayescal.channels.result import ChannelFit

    post = binary_posterior() if track == "binary" else multiclass_posterior()
    var = "a" if track == "binary" else "confusion"
    values = post[var].values.copy()
    rng = np.random.default_rng(5)
    if track == "binary":
        values[..., 1] = 1e-200 * (1 + 0.1 * rng.standard_normal(values.shape[:2]))
    else:  # one answered class of one row, its mass moved to the next class
        tiny = 1e-200 * (1 + 0.1 * rng.standard_normal(values.shape[:2]))
        values[:, :, 1, 0, 1] += values[:, :, 1, 0, 0] - tiny
        values[:, :, 1, 0, 0] = tiny
    post[var] = (post[var].dims, values)
    message = refusal(LOADERS[track], write(post, tmp_path / "tiny.nc"))
    assert re.search(r"standard deviation [0-9.]+e-20[12] around [0-9.]+e-20[01]", message)
    assert "standard deviation 0" not in message and "narrower than a posterior" in message
    flat = values.reshape(-1, *values.shape[2:])
    if track == "binary":
        b = post["b"].values.reshape(flat.shape)
        prev = np.full((flat.shape[0], 1), 0.4)
        fit = ChannelFit.from_draws(
            flat,
            b,
            prev,
            annotators=["r1", "r2", "r3"],
            groups=["all"],
            group_counts=[100],
            method="bayes_marginal",
        )
    else:
        prev = np.full((flat.shape[0], 1, 3), 1 / 3)
        fit = ChannelFit.from_confusion(
            flat,
            prev,
            annotators=["r1", "r2", "r3"],
            classes=["x", "y", "z"],
            groups=["all"],
            group_counts=[100],
            method="bayes_multiclass",
        )
    with pytest.raises(ConfigError) as info:
        ChannelPriors.from_fit(fit)
    message = str(info.value)
    assert "variance is below the smallest float64 number" in message
    assert "at 1 coordinate(s) are at most 1." in message and "e-200" in message
    assert "variance 0" not in message and "\n" not in message


def test_a_posterior_of_the_other_track_says_which_it_is(tmp_path):
    """A multiclass posterior given to a binary audit said only "no variable 'a'"."""
    mc = write(multiclass_posterior(), tmp_path / "mc.nc")
    message = refusal(load_channel_posterior, mc)
    assert "it holds a multiclass confusion posterior (3 classes)" in message
    binary = write(binary_posterior(), tmp_path / "bin.nc")
    assert "it holds a binary channel posterior" in refusal(load_multiclass_posterior, binary)


# ------------------------------------------------------------------ names
def test_repeated_names_are_refused(tmp_path):
    post = binary_posterior().assign_coords(annotator=["r1", "r2", "r1"])
    message = refusal(load_channel_posterior, write(post, tmp_path / "dup.nc"))
    assert "annotator 'r1' appears twice" in message
    mc = multiclass_posterior(classes=("x", "y", "z"))
    mc = mc.assign_coords(true_class=["x", "y", "x"])
    assert "class 'x' appears twice" in refusal(
        load_multiclass_posterior, write(mc, tmp_path / "m.nc")
    )


def test_a_name_longer_than_the_limit_is_refused_in_a_posterior(tmp_path):
    long = "n" * (MAX_NAME_CHARS + 1)
    post = binary_posterior(annotators=("r1", long, "r3"))
    message = refusal(load_channel_posterior, write(post, tmp_path / "long.nc"))
    assert f"is {MAX_NAME_CHARS + 1} characters long" in message
    fine = binary_posterior(annotators=("r1", "n" * MAX_NAME_CHARS, "r3"))
    assert (
        load_channel_posterior(write(fine, tmp_path / "ok.nc")).annotators[1] == fine.annotator[1]
    )


def test_genuine_posteriors_of_both_tracks_load(tmp_path):
    b = load_channel_posterior(write(binary_posterior(), tmp_path / "b.nc"))
    assert b.annotators == ["r1", "r2", "r3"] and b.a.shape == (400, 3)
    m = load_multiclass_posterior(write(multiclass_posterior(), tmp_path / "m.nc"))
    assert m.classes == ["x", "y", "z"] and m.confusion.shape == (400, 3, 3, 3)


def test_cli_refuses_a_posterior_bomb_in_one_line_before_reading_the_data(tmp_path):
    bomb = declared(tmp_path / "posterior.nc", 30_000_000)
    line = one_line_error([
        "audit", str(tmp_path / "no-such-data.csv"), "--channels", "bayes", "--priors",
        str(bomb), "--out", str(tmp_path / "out"), "--quiet",
    ])  # fmt: skip
    assert line.startswith("bayescal: error: --priors") and "MiB of values" in line
    assert not (tmp_path / "out").exists()


def _degenerate(post):
    return _nearly_constant(post, "a", 1e-17)


def _empty(post):
    return post.isel(annotator=slice(0, 0))


def _repeated(post):
    return post.assign_coords(annotator=["r1", "r1", "r3"])


@pytest.mark.parametrize(
    "make, says",
    [
        (_degenerate, "equal up to rounding"),
        (_empty, "'annotator' dimension is empty"),
        (_repeated, "annotator 'r1' appears twice"),
    ],
    ids=["degenerate", "empty-annotators", "repeated-names"],
)
def test_cli_refuses_each_bad_posterior_in_one_line(tmp_path, make, says):
    """The issue's reproducers on the command line, both tracks (the multiclass audit reads
    --priors with the multiclass loader): exit 2, one line, before the data are read."""
    for track, post, extra in (
        ("binary", binary_posterior(), []),
        ("multiclass", multiclass_posterior(), ["--probs", "p0,p1,p2"]),
    ):
        if track == "multiclass" and make is _degenerate:
            post = _nearly_constant(post, "confusion", 1e-17)
        else:
            post = make(post)
        path = write(post, tmp_path / f"{track}.nc")
        line = one_line_error([
            "audit", str(tmp_path / "no-such-data.csv"), *extra, "--channels", "bayes",
            "--priors", str(path), "--out", str(tmp_path / "out"), "--quiet",
        ])  # fmt: skip
        assert says in line, (track, line)
        assert ("multiclass posterior.nc" in line) == (track == "multiclass"), line
        assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ names in tables
def test_long_names_are_refused_wherever_names_come_from(tmp_path):
    """Issue: one 10,000-character annotator name made an audit of 200,000 items take 6.4 GB
    instead of 0.57 GB (measured on the issue's path, the crowd-kit comparison)."""
    long = "x" * 10_000
    wide = tmp_path / "wide.csv"
    wide.write_text(f"score,{long},r2\n0.2,0,1\n0.7,1,1\n")
    with pytest.raises(DataError, match="is 10,000 characters long; names may have at most 256"):
        load_table(wide)
    assert "10,000 characters long" in one_line_error(
        ["audit", str(wide), "--out", str(tmp_path / "o"), "--quiet"]
    )
    longcsv = tmp_path / "long.csv"
    longcsv.write_text(f"item,annotator,label,score\ni1,r1,1,0.5\ni1,{long},0,0.5\n")
    with pytest.raises(DataError, match=r"annotator column 'annotator'.*line 3\)"):
        load_long(longcsv)
    itemcsv = tmp_path / "items.csv"
    itemcsv.write_text(f"item,annotator,label,score\n{long},r1,1,0.5\ni2,r1,0,0.5\n")
    with pytest.raises(DataError, match="item column 'item' name"):
        load_long(itemcsv)
    with pytest.raises(DataError, match="class name"):
        MulticlassAnnotations.from_arrays([[0.5, 0.5]], [[0]], classes=["a", long])
    with pytest.raises(DataError, match="annotator name"):
        Annotations.from_arrays([0.5], [[1]], annotators=[long])
    from bayescal.ambiguity.loaders import AmbiguityData

    with pytest.raises(DataError, match="class name"):  # the ambiguity track's container
        AmbiguityData(np.zeros((2, 2)), np.ones((2, 2), int), ("a", long), np.arange(2))


def test_names_at_the_limit_and_integer_ids_pass():
    check_name_sizes(["y" * MAX_NAME_CHARS, 7, np.int64(3)], "annotator")
    check_name_sizes(np.array(["a" * 10] * 5), "item ids", total=None)
    with pytest.raises(DataError, match="characters together"):
        check_name_sizes(["a" * 200] * 10, "annotator", total=1000)


# ------------------------------------------------------------------ Parquet footers
def _parquet(path, n=1000, row_group=300):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"score": rng.random(n), "r1": rng.integers(0, 2, n), "r2": rng.integers(0, 2, n)}
    )
    frame.to_parquet(path, row_group_size=row_group)
    return path


def test_parquet_declaring_more_than_the_limit_is_refused_before_reading(tmp_path, monkeypatch):
    """Run-length encoding lets a few kilobytes declare millions of rows: the footer's
    declared rows are checked against the memory they take (limit lowered for the test)."""
    path = tmp_path / "bomb.parquet"
    n = 2_000_000
    pq.write_table(
        pa.table(
            {"score": np.full(n, 0.5), "r1": np.ones(n, np.int64), "r2": np.ones(n, np.int64)}
        ),
        path,
    )
    assert path.stat().st_size < 100_000
    monkeypatch.setattr(files, "MAX_TABLE_BYTES", 8 << 20)
    read = []
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: read.append(1))
    with pytest.raises(DataError, match=r"declares 2,000,000 rows.*out of core"):
        load_table(path)
    assert read == []
    # the multiclass reader (all columns) goes through the same footer check
    with pytest.raises(DataError, match="declares 2,000,000 rows"):
        load_table(path, probs=["score", "r1"])
    monkeypatch.setattr(files, "MAX_TABLE_BYTES", 1 << 31)
    small = _parquet(tmp_path / "ok.parquet")
    monkeypatch.undo()
    assert load_table(small).n_items == 1000


def test_parquet_row_groups_that_disagree_with_the_footer_are_damaged(tmp_path):
    class Group:
        def __init__(self, n):
            self.num_rows, self.num_columns = n, 0

    class Meta:
        num_rows, num_row_groups = 10, 2

        def row_group(self, g):
            return Group(4)

    with pytest.raises(DataError, match="row groups hold 8 rows but its footer declares 10"):
        files.check_parquet_size(Meta(), tmp_path / "x.parquet", ["score"])


# ------------------------------------------------------------------ npz headers
def test_npz_header_variants_are_refused_before_allocation(tmp_path):
    """Shapes that promise more than the member holds, in 1-D and 2-D, and zero-size item
    types (``V0``, ``U0``: no bytes per item, yet a 10^12-item shape; ``V0`` passed the
    earlier check and died in a 14.6 TiB allocation)."""
    import io
    import zipfile

    from numpy.lib import format as npy_format

    from bayescal.ambiguity.loaders import load_npz

    def member(shape, dtype, payload=b""):
        buf = io.BytesIO()
        npy_format.write_array_header_1_0(
            buf, {"descr": npy_format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
                  "shape": shape}
        )  # fmt: skip
        return buf.getvalue() + payload

    cases = {
        "huge-1d": (10**12,),
        "huge-2d": (10**6, 10**6),
    }
    for name, shape in cases.items():
        path = tmp_path / f"{name}.npz"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("logits.npy", member(shape, "<f8", np.zeros(4).tobytes()))
            z.writestr("counts.npy", member((2, 2), "<i8", np.ones(4, np.int64).tobytes()))
        with pytest.raises(DataError, match="declares shape"):
            load_npz(path)
    zero = tmp_path / "zero-size.npz"
    with zipfile.ZipFile(zero, "w") as z:
        z.writestr("logits.npy", member((10**12, 2), "V0"))
        z.writestr("counts.npy", member((2, 2), "<i8", np.ones(4, np.int64).tobytes()))
    with pytest.raises(DataError, match=re.escape("has dtype |V0, not numbers or text")):
        load_npz(zero)
    empty_text = tmp_path / "u0.npz"
    with zipfile.ZipFile(empty_text, "w") as z:
        z.writestr("logits.npy", member((10**12, 2), "<U0"))
        z.writestr("counts.npy", member((2, 2), "<i8", np.ones(4, np.int64).tobytes()))
    with pytest.raises(DataError, match="declares shape"):
        load_npz(empty_text)


def test_running_out_of_memory_is_one_line_and_the_earlier_report_stays(tmp_path, monkeypatch):
    """A table can pass every declared-size check and still need more memory than the process
    may use (60 million rows of compressed constants under a memory limit: numpy's
    ``_ArrayMemoryError`` while the labels are checked). Wherever an allocation fails, the
    run is one line and exit 2, and ``--out`` keeps the earlier report."""
    from hostile_helpers import run_cli, wide_rows

    import bayescal.data.container as container

    data = tmp_path / "answers.csv"
    data.write_text(wide_rows(300, 3))
    out = tmp_path / "report"
    argv = ["audit", data, "--channels", "dawid-skene-em", "--skip", "crowdkit", "--out", out]
    assert run_cli(argv)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def no_memory(*args, **kwargs):
        raise MemoryError(
            "Unable to allocate 1.34 GiB for an array with shape (60000000, 3) and data type "
            "float64"
        )

    monkeypatch.setattr(container, "check_labels", no_memory)
    line = one_line_error(argv)
    assert "out of memory (Unable to allocate 1.34 GiB" in line
    assert "out of core" in line and f"{out} is as it was" in line
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_npz_logits_that_compress_like_constants_are_refused_unread(tmp_path):
    """A 1.5 MB npz of 60 million rows of zeros declared 1.6 GiB, under the 4 GiB total,
    and the ambiguity audit then ran for minutes (a hostile re-check, issue 23). Floating
    point members that expand more than MAX_NPZ_EXPANSION times are refused from the zip
    directory; genuine logits (random doubles) compress about 1.1 times and load."""
    from bayescal.ambiguity.loaders import MAX_NPZ_EXPANSION, load_npz

    bomb = tmp_path / "bomb.npz"
    np.savez_compressed(bomb, logits=np.zeros((300_000, 3)), counts=np.ones((300_000, 3), "i1"))
    with pytest.raises(DataError, match=f"times smaller; .* more than {MAX_NPZ_EXPANSION} times"):
        load_npz(bomb)
    rng = np.random.default_rng(0)
    fine = tmp_path / "fine.npz"
    counts = rng.multinomial(5, [0.5, 0.3, 0.2], size=300_000)
    np.savez_compressed(fine, logits=rng.normal(size=(300_000, 3)), counts=counts)
    assert load_npz(fine).n_items == 300_000


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_a_posterior_of_few_draws_is_warned_about(kind, tmp_path):
    """One chain of two draws was taken as a prior without a word (hostile re-check): the
    spread a prior is matched to is then itself uncertain by about 100%."""
    from bayescal.errors import BayescalWarning

    build = binary_posterior if kind == "binary" else multiclass_posterior
    few = write(build(draws=2, chains=1), tmp_path / "few.nc")
    with pytest.warns(BayescalWarning, match=r"only 2 draws: .* uncertain by about 141%"):
        LOADERS[kind](few)
    enough = write(build(draws=50, chains=2), tmp_path / "enough.nc")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", BayescalWarning)
        LOADERS[kind](enough)
