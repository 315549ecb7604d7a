"""Simulators: the toy study (Sec. 6.1), the Gaussian setting (App. G.2), flip annotators.

Every simulator takes a keyword-only ``random_state`` (int or ``numpy.random.Generator``) and
returns an :class:`~bayescal.data.container.Annotations` holding the clean ``truth``.
"""

from bayescal.simulate.flips import simulate_annotations, simulate_flip_data

__all__ = [
    "simulate_annotations",
    "simulate_flip_data",
]
