"""Type aliases of the public API (annotations only; nothing here runs at import).

Examples
--------
>>> from bayescal._typing import RandomState
>>> RandomState
int | numpy.random._generator.Generator | None
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "NDArray", "RandomState", "Bins", "PathLike", "Weights", "Dependence"]

#: ``random_state``: None (fresh entropy), a non-negative int, or a Generator to share.
RandomState = int | np.random.Generator | None

#: Score groups or bins: a count of equal-width cells or explicit edges from 0 to 1.
Bins = int | ArrayLike

#: A file or folder path.
PathLike = str | os.PathLike

#: An annotator weight rule by name, or explicit weights (n_annotators,).
Weights = str | ArrayLike

#: Conditional-dependence groups: ``"all"``, ``"r1:r2,r3:r4"`` or a list of annotator pairs.
Dependence = str | Sequence[Sequence[str | int]]
