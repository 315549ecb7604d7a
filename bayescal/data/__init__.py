"""Multi-annotator data: the :class:`Annotations` container and its readers."""

from bayescal.data.container import Annotations, load_csv, load_long, load_table
from bayescal.data.multiclass import MulticlassAnnotations, load_multiclass_csv

__all__ = [
    "Annotations",
    "MulticlassAnnotations",
    "load_csv",
    "load_table",
    "load_long",
    "load_multiclass_csv",
]
