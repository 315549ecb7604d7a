def summarize_long_dask(*a, **k):
    raise NotImplementedError
