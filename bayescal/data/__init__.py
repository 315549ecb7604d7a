"""Multi-annotator data: the :class:`Annotations` container and its readers."""

from bayescal.data.container import Annotations, load_csv

__all__ = ["Annotations", "load_csv"]
