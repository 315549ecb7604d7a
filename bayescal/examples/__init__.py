"""Embedded example datasets (see README.md in this folder for provenance and licences)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

EXAMPLES = {
    "snli-entailment": "snli-entailment.csv",
    "cifar10h-catdog": "cifar10h-catdog.csv",
}

__all__ = ["EXAMPLES", "load_example", "example_path"]


def example_path(name: str) -> Path:
    """Path of an embedded example CSV."""
    from bayescal.errors import ConfigError

    if name not in EXAMPLES:
        raise ConfigError(f"unknown example {name!r}; choose one of {sorted(EXAMPLES)}.")
    return Path(str(resources.files("bayescal.examples").joinpath(EXAMPLES[name])))


def load_example(name: str):
    """Load an embedded example as :class:`~bayescal.Annotations` (with reference labels as truth).

    Examples
    --------
    >>> data = load_example("snli-entailment")
    >>> data.n_items, data.annotators
    (1514, ['r1', 'r2', 'r3'])
    """
    from bayescal.data.container import load_csv

    return load_csv(
        example_path(name),
        score="score",
        annotators=["r1", "r2", "r3"],
        truth="reference",
        item="item",
    )
