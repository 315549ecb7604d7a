"""Benchmarks run by ``bayescal bench NAME``; each prints or writes JSON.

A benchmark module exposes ``add_arguments(parser)`` and ``run(args) -> int``
and consumes the library (and the report); nothing in the library imports a
benchmark. The registry of names is :data:`bayescal.cli.BENCHMARKS`.
"""
