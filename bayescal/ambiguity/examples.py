"""Embedded multiclass ambiguity examples (see ``data/README.md`` for provenance and licences).

Two real datasets ship with the package so that notebooks, documentation and
tests run without the public data beside the repository: every ChaosNLI-SNLI
pair with RoBERTa-base logits, and a class-balanced 2,000-image subset of
CIFAR-10H with ResNet-110 outputs. They are built by
``scripts/build_ambiguity_examples.py`` and read with
:func:`~bayescal.ambiguity.loaders.load_npz`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from bayescal.ambiguity.loaders import AmbiguityData, load_npz
from bayescal.errors import ConfigError

__all__ = ["AMBIGUITY_EXAMPLES", "ambiguity_example_path", "load_ambiguity_example"]

#: Example name -> (file in ``bayescal/ambiguity/data``, dataset name in reports).
AMBIGUITY_EXAMPLES = {
    "chaosnli-snli": ("chaosnli-snli.npz", "ChaosNLI-SNLI (RoBERTa-base)"),
    "cifar10h-2000": ("cifar10h-2000.npz", "CIFAR-10H, 2,000 images (ResNet-110)"),
}


def ambiguity_example_path(name: str) -> Path:
    """Path of an embedded ambiguity example (``.npz``).

    Examples
    --------
    >>> ambiguity_example_path("chaosnli-snli").name
    'chaosnli-snli.npz'
    """
    if name not in AMBIGUITY_EXAMPLES:
        raise ConfigError(
            f"unknown ambiguity example {name!r}; choose one of {sorted(AMBIGUITY_EXAMPLES)}."
        )
    files = resources.files("bayescal.ambiguity").joinpath("data", AMBIGUITY_EXAMPLES[name][0])
    return Path(str(files))


def load_ambiguity_example(name: str) -> AmbiguityData:
    """Load an embedded ambiguity example as :class:`~bayescal.ambiguity.AmbiguityData`.

    Tao et al.'s real benchmarks (SPEC §2): ChaosNLI (100 annotations per
    pair) and CIFAR-10H (about 50 per image).

    Parameters
    ----------
    name : {"chaosnli-snli", "cifar10h-2000"}

    Returns
    -------
    AmbiguityData
        Logits, annotator counts, class names, item ids and the dataset's
        original single label as ``reference``.

    Examples
    --------
    >>> d = load_ambiguity_example("chaosnli-snli")
    >>> d.n_items, d.classes, int(d.counts.sum(axis=1).min())
    (1514, ('entailment', 'neutral', 'contradiction'), 100)
    """
    path = ambiguity_example_path(name)
    return load_npz(path, name=AMBIGUITY_EXAMPLES[name][1])
