"""Multi-annotator data: the :class:`Annotations` container and its readers."""

from bayescal.data.container import Annotations, load_csv, load_long, load_table

__all__ = ["Annotations", "load_csv", "load_table", "load_long"]
