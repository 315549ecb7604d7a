"""The v0.2 module path of the multiclass container: the one container, re-exported.

:class:`MulticlassAnnotations` *is* :class:`~bayescal.data.container.Annotations`
(any C >= 2); :func:`load_multiclass_csv` is :func:`~bayescal.data.container.load_table`
with ``probs``. Kept so that imports of v0.2 code keep working; import from
:mod:`bayescal.data` in new code.
"""

from bayescal.data.container import MulticlassAnnotations, load_multiclass_csv
from bayescal.data.validation import PROB_SUM_TOL, check_probs

__all__ = ["MulticlassAnnotations", "load_multiclass_csv", "check_probs", "PROB_SUM_TOL"]
