"""Embedded example datasets (see README.md in this folder for provenance and licences)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

EXAMPLES = {
    "snli-entailment": "snli-entailment.csv",
    "cifar10h-catdog": "cifar10h-catdog.csv",
    "snli-3class": "snli-3class.csv",
    "cifar10h-10class": "cifar10h-10class.csv",
}

#: Multiclass examples: name -> (class names, reference column or None). Their probability
#: columns are ``p_<class>``; the answers (class names) are in ``r1``, ``r2``, ``r3``.
MULTICLASS_EXAMPLES = {
    "snli-3class": (("entailment", "neutral", "contradiction"), None),
    "cifar10h-10class": (
        (
            "airplane",
            "automobile",
            "bird",
            "cat",
            "deer",
            "dog",
            "frog",
            "horse",
            "ship",
            "truck",
        ),
        "reference",
    ),
}

__all__ = ["EXAMPLES", "MULTICLASS_EXAMPLES", "load_example", "example_path"]


def example_path(name: str) -> Path:
    """Path of an embedded example CSV."""
    from bayescal.errors import ConfigError

    if name not in EXAMPLES:
        raise ConfigError(f"unknown example {name!r}; choose one of {sorted(EXAMPLES)}.")
    return Path(str(resources.files("bayescal.examples").joinpath(EXAMPLES[name])))


def load_example(name: str):
    """Load an embedded example (with its reference labels as truth, where it has them).

    Every example is an :class:`~bayescal.Annotations` container: two classes (a
    score) for the binary ones, C classes for :data:`MULTICLASS_EXAMPLES`.

    Examples
    --------
    >>> data = load_example("snli-entailment")
    >>> data.n_items, data.annotators
    (1514, ['r1', 'r2', 'r3'])
    >>> load_example("cifar10h-10class").n_classes
    10
    """
    from bayescal.data.container import load_csv

    annotators = ["r1", "r2", "r3"]
    if name in MULTICLASS_EXAMPLES:
        classes, reference = MULTICLASS_EXAMPLES[name]
        return load_csv(
            example_path(name),
            annotators=annotators,
            truth=reference,
            item="item",
            probs=[f"p_{c}" for c in classes],
            classes=list(classes),
        )
    return load_csv(
        example_path(name), annotators=annotators, truth="reference", item="item", score="score"
    )
