"""Multi-annotator data: the one :class:`Annotations` container (any C >= 2) and its readers."""

from bayescal.data.container import (
    Annotations,
    MulticlassAnnotations,
    load_csv,
    load_long,
    load_multiclass_csv,
    load_table,
)

__all__ = [
    "Annotations",
    "MulticlassAnnotations",
    "load_csv",
    "load_table",
    "load_long",
    "load_multiclass_csv",
]
