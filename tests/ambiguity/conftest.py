"""Fixtures for the ambiguity track: small subsets of the shared real data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bayescal.ambiguity import load_chaosnli, load_cifar10h

DATA = (Path(__file__).parents[2] / ".." / "shared" / "data").resolve()


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(
            f"shared data not found at {path} (expected next "
            "to the repository clone, in ../shared/data)"
        )
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return _need(DATA)


@pytest.fixture(scope="session")
def cifar10h_path(data_dir) -> Path:
    return _need(data_dir / "cifar10h" / "resnet-110.csv")


@pytest.fixture(scope="session")
def chaosnli_paths(data_dir):
    root = data_dir / "chaosnli"
    return (
        _need(root / "chaosNLI_snli.jsonl"),
        [
            _need(root / "predictions" / "SNLI_dev_roberta-base_0.json"),
            _need(root / "predictions" / "SNLI_test_roberta-base_0.json"),
        ],
    )


@pytest.fixture(scope="session")
def cifar10h(cifar10h_path):
    return load_cifar10h(cifar10h_path)


@pytest.fixture(scope="session")
def chaosnli(chaosnli_paths):
    jsonl, preds = chaosnli_paths
    return load_chaosnli(jsonl, preds)


@pytest.fixture(scope="session")
def cifar_small(cifar10h):
    """1,000 CIFAR-10H items chosen with a fixed seed (fast fits, real ambiguity)."""
    idx = np.random.default_rng(7).choice(cifar10h.n_items, 1000, replace=False)
    return cifar10h.subset(np.sort(idx))


@pytest.fixture(scope="session")
def chaos_small(chaosnli):
    idx = np.random.default_rng(8).choice(chaosnli.n_items, 600, replace=False)
    return chaosnli.subset(np.sort(idx))
