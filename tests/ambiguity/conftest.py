"""Fixtures for the ambiguity track: the real-data subsets in tests/data (see its README)."""

from __future__ import annotations

import pytest

from bayescal.ambiguity import load_chaosnli, load_cifar10h


@pytest.fixture(scope="session")
def cifar10h_path(test_data):
    return test_data / "cifar10h" / "resnet-110.csv"


@pytest.fixture(scope="session")
def chaosnli_paths(test_data):
    root = test_data / "chaosnli"
    return (
        root / "chaosNLI_snli.jsonl",
        [
            root / "predictions" / "SNLI_dev_roberta-base_0.json",
            root / "predictions" / "SNLI_test_roberta-base_0.json",
        ],
    )


@pytest.fixture(scope="session")
def cifar10h(cifar10h_path):
    """1,000 CIFAR-10H images, 100 per CIFAR-10 class (the whole repository subset)."""
    return load_cifar10h(cifar10h_path)


@pytest.fixture(scope="session")
def chaosnli(chaosnli_paths):
    """600 ChaosNLI-SNLI pairs with their RoBERTa-base logits (the whole repository subset)."""
    jsonl, preds = chaosnli_paths
    return load_chaosnli(jsonl, preds)


@pytest.fixture(scope="session")
def cifar_small(cifar10h):
    """Fast fits on real ambiguity: the subset is already small (1,000 items)."""
    return cifar10h


@pytest.fixture(scope="session")
def chaos_small(chaosnli):
    """The 600 pairs this fixture used to draw (seed 8) from the full file; now the subset."""
    return chaosnli
