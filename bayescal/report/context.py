"""What every audit's step context shares (binary and multiclass): its flags and the interval
percentage. The contexts themselves are dataclasses in ``sections.py`` and
``multiclass_sections.py``; this mixin holds the behaviour, so each context keeps its own fields."""

from __future__ import annotations

from collections.abc import Iterable

from bayescal.flags import Flag

__all__ = ["FlagsMixin"]


class FlagsMixin:
    """Methods for a step context with ``flags: list[Flag]`` and ``prob: float`` fields.

    Examples
    --------
    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class Ctx(FlagsMixin):
    ...     prob: float = 0.9
    ...     flags: list = field(default_factory=list)
    >>> c = Ctx()
    >>> c.flag("x.y", ["once", "once"], "test"); c.unannotated(0); c.unannotated(3)
    >>> [f.code for f in c.flags], c.percent
    (['x.y', 'data.unannotated'], 90)
    """

    flags: list
    prob: float

    def flag(self, code: str, messages: Iterable[str], source: str) -> None:
        """Add one flag per message (each message once)."""
        for message in messages:
            f = Flag(code, str(message), source)
            if f not in self.flags:
                self.flags.append(f)

    def unannotated(self, n_unannotated: int) -> None:
        """Flag items nobody answered (both audits exclude them from every label statistic)."""
        if n_unannotated:
            self.flag(
                "data.unannotated",
                [
                    f"{n_unannotated} item(s) have no answer; "
                    "they are excluded from every label statistic."
                ],
                "data",
            )

    @property
    def percent(self) -> int:
        """The interval probability in percent, as the report prints it."""
        return int(round(self.prob * 100))
