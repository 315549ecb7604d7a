"""ChannelFit: one type for binary and multiclass channels (C = 2 is the same object)."""

import numpy as np
import pytest

from bayescal.channels.result import ChannelFit
from bayescal.errors import DataError

T3 = np.array(
    [
        [[0.8, 0.1, 0.1], [0.1, 0.7, 0.2], [0.2, 0.2, 0.6]],
        [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]],
        [[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.3, 0.1, 0.6]],
    ]
)


def _mc(draws=1):
    t = np.repeat(T3[None], draws, axis=0)
    rho = np.repeat(np.array([[[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]]), draws, axis=0)
    return ChannelFit.from_confusion(
        t,
        rho,
        annotators=["r1", "r2", "r3"],
        classes=["cat", "dog", "fox"],
        groups=["g0", "g1"],
        group_counts=[30, 10],
        method="test",
    )


def test_binary_fit_exposes_confusion_and_keeps_its_views():
    fit = ChannelFit.from_point(
        [0.1, 0.2, 0.3],
        [0.9, 0.8, 0.7],
        [0.25, 0.75],
        annotators=["x", "y", "z"],
        groups=["lo", "hi"],
        group_counts=[10, 30],
        method="m",
    )
    assert fit.layout == "binary" and fit.n_classes == 2
    np.testing.assert_array_equal(fit.confusion.values[0, :, 0, 1], [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(fit.confusion.values[0, :, 1, 1], [0.9, 0.8, 0.7])
    np.testing.assert_allclose(fit.confusion.values.sum(-1), 1.0)
    np.testing.assert_array_equal(fit.a.values, [[0.1, 0.2, 0.3]])
    np.testing.assert_array_equal(fit.prevalence.values, [[0.25, 0.75]])
    assert fit.prevalence.dims == ("draw", "group")
    np.testing.assert_allclose(fit.class_prevalence.values[0], [[0.75, 0.25], [0.25, 0.75]])
    assert float(fit.mu[0]) == pytest.approx((10 * 0.25 + 30 * 0.75) / 40)
    ds = fit.to_dataset()
    assert {"a", "b", "delta", "prevalence", "confusion", "class_prevalence"} <= set(ds.data_vars)


def test_multiclass_fit_shapes_and_clear_errors_on_binary_views():
    fit = _mc(draws=4)
    assert fit.confusion.dims == ("draw", "annotator", "true_class", "answered_class")
    assert fit.prevalence.dims == ("draw", "group", "class") and fit.n_draws == 4
    assert fit.classes == ["cat", "dog", "fox"]
    for attr in ("a", "b", "mu", "delta"):
        with pytest.raises(DataError, match="multiclass channels with C = 3"):
            getattr(fit, attr)
    with pytest.raises(DataError, match="C = 2"):
        fit.as_binary()
    np.testing.assert_allclose(fit.marginal_prevalence.values[0], [0.4, 0.25, 0.35])
    text = repr(fit)
    assert "P(A=y|Y=y)" in text and "fox" in text and "[" in text  # intervals for 4 draws
    sub = fit.select_draws([1, 3])
    assert sub.n_draws == 2 and sub.layout == "multiclass"
    assert set(fit.to_dataset().data_vars) == {"confusion", "class_prevalence", "group_counts"}


def test_c2_multiclass_fit_has_a_binary_view():
    fit = ChannelFit.known_confusion(
        [[[0.9, 0.1], [0.3, 0.7]]] * 3, prevalence=[0.4, 0.6], classes=["neg", "pos"]
    )
    assert fit.prevalence.dims == ("draw", "group", "class")
    b = fit.as_binary()
    np.testing.assert_array_equal(b.a.values, [[0.1] * 3])
    np.testing.assert_array_equal(b.b.values, [[0.7] * 3])
    np.testing.assert_array_equal(b.prevalence.values, [[0.6]])


@pytest.mark.parametrize(
    "confusion, match",
    [
        (T3 * 1.01, "sum to one"),
        (np.full((3, 3, 3), np.nan), r"\[0, 1\]"),
        (T3[:, :2, :], r"\(S, K, C, C\)"),
    ],
)
def test_from_confusion_refuses_bad_arrays(confusion, match):
    with pytest.raises(DataError, match=match):
        ChannelFit.from_confusion(
            confusion,
            [[1 / 3] * 3],
            annotators=["r1", "r2", "r3"],
            classes=["a", "b", "c"],
            groups=["all"],
            group_counts=[1],
            method="m",
        )


def test_from_confusion_refuses_mismatched_names():
    with pytest.raises(DataError, match="names do not match"):
        ChannelFit.from_confusion(
            T3,
            [[1 / 3] * 3],
            annotators=["r1", "r2"],
            classes=["a", "b", "c"],
            groups=["all"],
            group_counts=[1],
            method="m",
        )
