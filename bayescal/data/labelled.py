"""Read-only attributes of dataset-backed containers: the names and sizes of a dimension.

Containers and summaries that wrap an :class:`xarray.Dataset` in ``self._ds``
declare ``annotators = DimNames(ANNOTATOR)`` and ``n_annotators =
DimSize(ANNOTATOR)`` instead of writing the same two properties per dimension.
"""

from __future__ import annotations

__all__ = ["DimNames", "DimSize"]


class DimNames:
    """The coordinate values of one dimension as a list of str.

    Examples
    --------
    >>> import xarray as xr
    >>> class Box:
    ...     classes = DimNames("class")
    ...     def __init__(self, ds):
    ...         self._ds = ds
    >>> Box(xr.Dataset(coords={"class": ["cat", "dog"]})).classes
    ['cat', 'dog']
    """

    def __init__(self, dim: str):
        self.dim = dim
        self.__doc__ = f"Names along ``{dim}`` (list of str)."

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return [str(x) for x in obj._ds[self.dim].values]


class DimSize:
    """The length of one dimension as an int.

    Examples
    --------
    >>> import xarray as xr
    >>> class Box:
    ...     n_classes = DimSize("class")
    ...     def __init__(self, ds):
    ...         self._ds = ds
    >>> Box(xr.Dataset(coords={"class": ["cat", "dog"]})).n_classes
    2
    """

    def __init__(self, dim: str):
        self.dim = dim
        self.__doc__ = f"Length of ``{dim}`` (int)."

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return int(obj._ds.sizes[self.dim])
