"""Helpers shared by the out-of-core tests."""

import numpy as np

from bayescal import Annotations


def write_parts(frame, folder, fmt, n_parts, **kw):
    """Split ``frame`` by rows into ``n_parts`` files; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, idx in enumerate(np.array_split(np.arange(len(frame)), n_parts)):
        path = folder / f"part-{i:03d}.{fmt}"
        part = frame.iloc[idx]
        if fmt == "csv":
            part.to_csv(path, index=False)
        else:
            part.to_parquet(path, index=False, **kw)
        paths.append(path)
    return paths


def without_truth(data):
    return Annotations.from_arrays(data.score, data.labels, annotators=data.annotators)
