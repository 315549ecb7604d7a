"""The one report core shared by every audit (binary, ambiguity, multiclass).

An audit builds a :class:`Report`: a ``summary`` dict (what ``summary.json``
holds), :class:`Section` objects (tables, figures, notes) for the HTML,
:class:`Flag` warnings shown at the top, a :class:`Provenance` record, and
optional extra ``artifacts`` (for example the posterior as netCDF). The report
renders itself (``to_html``, Jupyter's ``_repr_html_``), writes strict JSON
(``to_json``: NaN and infinities become ``null``) and saves atomically
(``save``, :mod:`bayescal.report.saving`): every file is written into a
temporary folder beside ``out``, flushed to disk and the folder is swapped in as
a whole, so at every instant ``out`` holds the earlier or the new complete
report, an error at any point leaves ``out`` as it was, and files of an earlier
run that this run does not write are gone. A figure that cannot be drawn makes
its section ``failed`` (with the reason and a flag); the rest is written.

Names users chose (annotators, classes, datasets) are shown literally: the
HTML is autoescaped, control and bidirectional-override characters are shown
as visible escapes (:func:`display_name`), and figures never read ``$...$`` as
mathematics (see :mod:`bayescal.report.figures`).
"""

from __future__ import annotations

import errno
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from bayescal import __version__
from bayescal._json import json_safe, strict_json
from bayescal._typing import PathLike
from bayescal.data.files import file_kind
from bayescal.display import display_name
from bayescal.errors import ConfigError
from bayescal.flags import Flag
from bayescal.interrupts import signals_held
from bayescal.report.saving import (
    NAME_OVERHEAD,
    SaveMode,
    Writer,
    leftover_names,
    plan,
    save_folder,
    write_bytes,
)

__all__ = [
    "Flag",
    "fmt_p",
    "p_text",
    "Table",
    "Figure",
    "Section",
    "Provenance",
    "Report",
    "REPORT_KINDS",
    "REPORT_FILES",
    "fmt",
    "display_name",
    "check_out_dir",
    "package_versions",
]

REPORT_KINDS = ("binary", "ambiguity", "multiclass")

#: Files a report folder may hold; ``check_out_dir`` refuses a folder with anything else
#: (and any of these that is not a regular file), because ``save`` replaces the folder as
#: a whole.
REPORT_FILES = ("report.html", "summary.json", "posterior.nc", "items.csv", "next.csv")

#: Modules whose versions a provenance record lists when they are loaded.
_VERSIONED = ("scipy", "xarray", "pandas", "pymc", "arviz", "matplotlib", "jinja2")


#: How the reason of a section left out with ``--skip KEY`` begins.
ON_REQUEST = "left out on request"


def skipped_on_request(key: str) -> str:
    """The reason recorded for a section left out with ``--skip KEY``."""
    return f"{ON_REQUEST} (--skip {key}; skip=({key!r},) in Python)."


def fmt(x: Any, digits: int = 4) -> str:
    """The one number formatter of reports: fixed ``digits`` decimals; missing -> ``"n/a"``.

    Examples
    --------
    >>> fmt(0.123456), fmt(None), fmt(float("nan")), fmt(3), fmt(2.5, 1)
    ('0.1235', 'n/a', 'n/a', '3', '2.5')
    """
    if x is None:
        return "n/a"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return "n/a" if not np.isfinite(x) else f"{float(x):.{digits}f}"
    return str(x)


def fmt_p(p: Any, digits: int = 3) -> str:
    """A p-value for reports: ``digits`` decimals, and ``"< 0.001"`` (for digits = 3) below
    the smallest value those decimals show, instead of a misleading ``0.000``.

    Examples
    --------
    >>> fmt_p(0.0069), fmt_p(0.0004), fmt_p(None), fmt_p(0.25)
    ('0.007', '< 0.001', 'n/a', '0.250')
    """
    if isinstance(p, (float, np.floating)) and np.isfinite(p) and p < 10.0**-digits:
        return f"< {10.0**-digits:.{digits}f}"
    return fmt(p, digits)


def p_text(p: Any, digits: int = 3) -> str:
    """``"p = 0.007"`` or ``"p < 0.001"``: a p-value inside a sentence.

    Examples
    --------
    >>> p_text(0.0069), p_text(0.0004)
    ('p = 0.007', 'p < 0.001')
    """
    shown = fmt_p(p, digits)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


@dataclass(frozen=True)
class Table:
    """A captioned table: ``header`` names the columns, each row is a tuple of cells."""

    caption: str
    header: tuple
    rows: list


class Figure:
    """A captioned figure as a base64 PNG (see :func:`bayescal.report.figures.figure`).

    ``narrow_png_base64``, when given, is the same figure laid out for a phone
    (panels stacked); the HTML shows it on screens up to 640 px wide. ``dpi``
    and ``narrow_dpi`` are the resolutions the PNGs were drawn at.

    Either PNG may be given as a zero-argument callable that returns it: the
    figure is then drawn when the audit runs and encoded the first time the PNG
    is read (the HTML, ``save``), once. Encoding (rasterising and compressing)
    is most of a figure's cost, and an audit used for its numbers only
    (``report.summary``) never needs it.

    Examples
    --------
    >>> f = Figure("caption", lambda: "iVBORw0KGgo=")
    >>> f.png_base64
    'iVBORw0KGgo='
    """

    __slots__ = ("caption", "alt", "dpi", "narrow_dpi", "_png", "_narrow_png")

    def __init__(
        self,
        caption: str,
        png_base64: str | Callable[[], str],
        alt: str = "",
        narrow_png_base64: str | Callable[[], str] = "",
        dpi: int = 100,
        narrow_dpi: int = 200,
    ):
        self.caption = caption
        self.alt = alt
        self.dpi = dpi
        self.narrow_dpi = narrow_dpi
        self._png = png_base64
        self._narrow_png = narrow_png_base64

    @property
    def png_base64(self) -> str:
        if callable(self._png):
            self._png = self._png()
        return self._png

    @property
    def narrow_png_base64(self) -> str:
        if callable(self._narrow_png):
            self._narrow_png = self._narrow_png()
        return self._narrow_png

    @property
    def drawn(self) -> bool:
        """Whether both encodings are made (reading them draws nothing)."""
        return not (callable(self._png) or callable(self._narrow_png))

    def use_drawn(self, png_base64: str, narrow_png_base64: str) -> None:
        """Take both encodings as drawn elsewhere from this figure's own callables (the
        command line draws some figures in a child process: ``cli_output.draw_figures``)."""
        self._png, self._narrow_png = png_base64, narrow_png_base64

    def __repr__(self) -> str:
        return f"Figure(caption={self.caption!r}, dpi={self.dpi}, narrow_dpi={self.narrow_dpi})"


@dataclass(eq=False)
class Section:
    """One section of a report; a section whose feature was unavailable stays, as skipped.

    Parameters
    ----------
    key : str
        Stable identifier (HTML anchor, template hooks).
    title : str
    status : {"ok", "skipped", "failed"}, default "ok"
    reason : str
        Why the section was skipped or failed.
    tables, figures, notes : list
    """

    key: str
    title: str
    status: str = "ok"
    reason: str = ""
    tables: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.status not in ("ok", "skipped", "failed"):
            raise ValueError(f"section status must be ok, skipped or failed; got {self.status!r}")


def package_versions() -> dict[str, str]:
    """bayescal, Python and numpy versions, plus those of the heavy modules already loaded."""
    versions = {
        "bayescal": __version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    for name in _VERSIONED:
        module = sys.modules.get(name)
        if module is not None:
            versions[name] = getattr(module, "__version__", "?")
    return versions


@dataclass(frozen=True)
class Provenance:
    """How a report came about: command, seed, versions, platform, data hash, settings, time."""

    command: str | None
    seed: Any
    versions: dict
    platform: str
    data_hash: str
    settings: dict
    seconds: float
    source: dict = field(default_factory=dict)

    @classmethod
    def capture(
        cls,
        command: str | None,
        seed: Any,
        data_hash: str,
        settings: dict,
        *,
        started: float | None = None,
        source: dict | None = None,
    ) -> Provenance:
        """Record the run now; ``started`` is a ``time.perf_counter()`` value from its start.

        Examples
        --------
        >>> p = Provenance.capture("bayescal audit x.csv", 0, "ab" * 32, {"bins": 10})
        >>> sorted(p.to_dict())[:3], p.versions["bayescal"] == __version__
        (['command', 'data_hash', 'platform'], True)
        """
        return cls(
            command=command,
            seed=seed,
            versions=package_versions(),
            platform=platform.platform(),
            data_hash=data_hash,
            settings=dict(settings),
            seconds=0.0 if started is None else time.perf_counter() - started,
            source=dict(source or {}),
        )

    def to_dict(self) -> dict:
        out = {
            "command": self.command,
            "seed": self.seed,
            "versions": dict(self.versions),
            "platform": self.platform,
            "data_hash": self.data_hash,
            "settings": dict(self.settings),
            "seconds": self.seconds,
        }
        if self.source:
            out["source"] = dict(self.source)
        return out

    def section(self) -> Section:
        """The "Reproducibility" section every report ends with."""
        rows = [
            ("command", self.command or "(called from Python)"),
            ("seed", self.seed),
            ("data hash (SHA-256)", self.data_hash),
            ("platform", self.platform),
            ("audit seconds", fmt(self.seconds, 1)),
        ]
        rows += [(f"version: {k}", v) for k, v in self.versions.items()]
        rows += [(f"setting: {k}", str(v)) for k, v in self.settings.items()]
        rows += [(f"source: {k}", str(v)) for k, v in self.source.items()]
        return Section(
            key="reproducibility",
            title="Reproducibility",
            tables=[Table("Run", ("item", "value"), rows)],
        )


@dataclass(eq=False)
class Report:
    """An audit's result: summary, sections, flags, provenance and extra files.

    Parameters
    ----------
    kind : {"binary", "ambiguity", "multiclass"}
        Picks the HTML template ``report/templates/<kind>.html``.
    title : str
    summary : dict
        The audit's own keys of ``summary.json``; ``warnings`` (the flags) and
        ``reproducibility`` (the provenance) are added here, and the whole is
        made strict-JSON-safe (NaN -> None), so ``report.summary`` is exactly
        what ``summary.json`` holds.
    sections : list of Section
        In display order; flags are shown above them.
    provenance : Provenance
    flags : list of Flag
    artifacts : dict of str -> callable(path)
        Extra files: name -> function that writes it to the path it is given.

    Examples
    --------
    >>> r = Report("binary", "demo", {"value": float("nan")}, [], Provenance.capture(
    ...     None, 0, "0" * 64, {}), flags=[Flag("demo.flag", "a note", "demo")])
    >>> r.summary["value"] is None, r.summary["warnings"][0]["code"]
    (True, 'demo.flag')
    """

    kind: str
    title: str
    summary: dict
    sections: list
    provenance: Provenance
    flags: list = field(default_factory=list)
    artifacts: dict[str, Callable[[str], Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in REPORT_KINDS:
            raise ConfigError(f"report kind must be one of {REPORT_KINDS}; got {self.kind!r}.")
        clash = sorted(set(self.artifacts) & {"report.html", "summary.json"})
        if clash:
            raise ConfigError(f"artifact names {clash} would overwrite the report's own files.")
        self.summary = json_safe(
            {
                **self.summary,
                "warnings": [f.to_dict() for f in self.flags],
                "reproducibility": self.provenance.to_dict(),
            }
        )

    # ------------------------------------------------------------------ rendering
    def to_json(self) -> str:
        """``summary.json`` text: standard JSON (no NaN tokens), indented."""
        return strict_json(self.summary)

    def to_html(self) -> str:
        """One self-contained HTML page (inline CSS and PNGs, no scripts, no URLs).

        Figures are drawn here (the first time); one that cannot be drawn is left
        out, its section marked ``failed`` with the reason and a
        ``report.figure_failed`` flag added (see :meth:`draw_figures`).
        """
        self.draw_figures()
        template = _environment().get_template(f"{self.kind}.html")
        return template.render(
            title=self.title,
            sections=self.sections,
            summary=self.summary,
            flags=self.flags,
        )

    def draw_figures(self) -> list[Flag]:
        """Draw and encode every figure now; returns the flags of those that failed.

        A plotting error (for example ArviZ's density estimate raising
        ``OverflowError`` on a degenerate posterior) must not cost the report: the
        figure is dropped, its section gets ``status="failed"`` and the reason, and a
        flag (also in :attr:`summary`) says which figure and why. Interrupts are not
        caught.

        Examples
        --------
        >>> def boom():
        ...     raise OverflowError("math range error")
        >>> r = Report("binary", "demo", {}, [Section("fit", "Fit", figures=[Figure("trace", boom)])],
        ...            Provenance.capture(None, 0, "0" * 64, {}))
        >>> [f.code for f in r.draw_figures()], r.sections[0].status, r.sections[0].figures
        (['report.figure_failed'], 'failed', [])
        """  # noqa: E501
        failed = []
        for section in self.sections:
            kept = []
            for fig in section.figures:
                try:
                    fig.png_base64, fig.narrow_png_base64  # noqa: B018 - drawn and cached
                except Exception as exc:  # any plotting error: the figure only is lost
                    reason = (
                        f"the figure {display_name(fig.caption)!r} could not be drawn "
                        f"({type(exc).__name__}: {display_name(str(exc))[:200]})"
                    )
                    section.status = "failed"
                    section.reason = f"{section.reason}; {reason}" if section.reason else reason
                    failed.append(
                        Flag(
                            "report.figure_failed",
                            f"section {display_name(section.title)!r}: {reason}; the rest of "
                            "the report is complete.",
                            "report",
                        )
                    )
                else:
                    kept.append(fig)
            section.figures = kept
        if failed:
            self.flags = [*self.flags, *failed]
            self.summary["warnings"] = [f.to_dict() for f in self.flags]
        return failed

    def _repr_html_(self) -> str:  # Jupyter
        return self.to_html()

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.kind}: {display_name(self.title)}; "
            f"{len(self.sections)} sections; {len(self.flags)} warning(s)>"
        )

    # ------------------------------------------------------------------ saving
    def file_names(self) -> list[str]:
        """The files :meth:`save` writes, in order."""
        return ["report.html", "summary.json", *self.artifacts]

    def save(self, out: PathLike) -> dict[str, str]:
        """Write the report folder ``out`` atomically; returns file name -> path.

        Every file is written into a staging folder beside ``out`` and flushed to
        disk, then the folder and ``out`` are exchanged in one step, so at every
        instant ``out`` holds the earlier or the new complete report; on any error
        ``out`` is left untouched (byte-identical), and after success it holds
        exactly this run's files. Leftovers of killed runs are recognised by the
        journal each save writes beside ``out`` and removed by the next save. Where
        ``out`` is a mount point (or renaming it is refused with ``EBUSY`` /
        ``EXDEV``) the files are replaced one by one, each atomically, and
        ``summary["reproducibility"]["saved"]`` says so; see
        :mod:`bayescal.report.saving` for both protocols. A symbolic link ``out``
        to a folder is followed (the folder is replaced, the link kept).

        Raises
        ------
        ConfigError
            ``out`` is unusable (see :func:`check_out_dir`).
        OutputError
            The disk is full, permission is denied or another ``OSError`` happened
            while saving; the message says what ``out`` holds (the earlier report).
        """
        out = check_out_dir(out, files=self.file_names())
        target = out.resolve()  # symbolic links followed; "." and ".." named
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the folder {target.parent} for --out {out}: {exc.strerror}; "
                "give --out under a folder you can write to."
            ) from None
        self.draw_figures()

        def render(mode: SaveMode) -> dict[str, Writer]:
            self._note_save(mode)
            html = self.to_html().encode("utf-8")
            text = (self.to_json() + "\n").encode("utf-8")
            return {
                "report.html": lambda path: write_bytes(path, html),
                "summary.json": lambda path: write_bytes(path, text),
                **self.artifacts,
            }

        keep = {*REPORT_FILES, *self.file_names()}
        save_folder(target, render, keep, shown=str(out))
        return {name: str(out / name) for name in self.file_names()}

    def _note_save(self, mode: SaveMode) -> None:
        """How the report is saved, in ``summary["reproducibility"]["saved"]`` and in the
        Reproducibility section's table."""
        text = mode.describe()
        self.summary["reproducibility"]["saved"] = text
        for section in self.sections:
            if section.key == "reproducibility" and section.tables:
                t = section.tables[0]
                rows = [r for r in t.rows if r[0] != "saved"] + [("saved", text)]
                section.tables[0] = Table(t.caption, t.header, rows)


def check_out_dir(out: PathLike, *, files: Iterable[str] = REPORT_FILES) -> Path:
    """Refuse an output folder a report cannot (or must not) be written to, before any work.

    The CLI calls this before loading or fitting anything, so a bad ``--out``
    costs nothing; :meth:`Report.save` calls it again. Checking creates nothing.

    Parameters
    ----------
    out : str or PathLike
        The report folder (created if missing).
    files : iterable of str
        File names a previous report in ``out`` may hold; anything else in an
        existing ``out`` is refused, since saving replaces the folder, and so is
        any of these names that is not a regular file (a folder named
        ``report.html``, a symbolic link, a named pipe): the user's data never
        goes with the earlier report.

    Returns
    -------
    Path

    Raises
    ------
    ConfigError
        ``out`` is empty, an existing file (or pipe, device, ...), a dangling
        symbolic link, a folder holding other files or a report name that is not a
        regular file, not writable, or under a folder that cannot be written.

    Examples
    --------
    >>> check_out_dir("")
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: --out is empty: give the folder the report should go to, for example --out report/.
    """  # noqa: E501
    if out is None or not str(out).strip():
        raise ConfigError(
            "--out is empty: give the folder the report should go to, for example --out report/."
        )
    path = Path(out)
    if path.is_symlink() and not path.exists():
        raise ConfigError(
            f"--out {path} is a symbolic link to {os.readlink(path)}, which does not exist; "
            "remove the link or give a real folder."
        )
    if path.exists() and not path.is_dir():
        raise ConfigError(
            f"--out {path} exists and is {file_kind(path.stat().st_mode)}, not a directory; give "
            "a folder path (it is created if missing)."
        )
    target = path.resolve()
    _check_name_length(path, target)
    if target.is_dir():
        _check_contents(path, target, set(files) | set(REPORT_FILES))
        if not os.access(target, os.W_OK | os.X_OK):
            read_only = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
            why = "a read-only file system" if read_only else "permission denied"
            raise ConfigError(
                f"--out {path} is not writable ({why}); give a folder you can write to."
            )
    _check_writable(target)
    return path


def _check_name_length(path: Path, target: Path) -> None:
    """The save's entries beside ``target`` add :data:`NAME_OVERHEAD` bytes to its name;
    the file system must take the result (checked now, not after the whole audit)."""
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    try:
        name_max = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    longest = name_max - NAME_OVERHEAD
    size = len(os.fsencode(target.name))
    if size > longest:
        shown = display_name(target.name)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise ConfigError(
            f"--out {shown!r}: the folder's name is {size} bytes; at most {longest} fit beside "
            f"the temporary names the save uses ({name_max} per name here). Give a shorter name."
        )


def _check_contents(path: Path, target: Path, allowed: set[str]) -> None:
    """Only report files, as regular files, and a killed save's own leftovers."""
    ours = leftover_names(target)
    foreign, wrong = [], []
    for entry in os.scandir(target):
        if entry.name in ours:
            continue
        if entry.name.startswith(_PROBE) and entry.is_dir(follow_symlinks=False):
            try:  # a probe of a killed check (_probe): empty, so nothing is lost
                os.rmdir(entry.path)
                continue
            except OSError:
                pass
        if entry.name not in allowed:
            foreign.append(entry.name)
        elif not entry.is_file(follow_symlinks=False):
            wrong.append((entry.name, file_kind(entry.stat(follow_symlinks=False).st_mode)))
    if foreign:
        foreign.sort()
        shown = ", ".join(display_name(n) for n in foreign[:5])
        raise ConfigError(
            f"--out {path} holds files that are not part of a bayescal report ({shown}"
            + (", ..." if len(foreign) > 5 else "")
            + "); the report replaces the whole folder, so give an empty or new folder."
        )
    if wrong:
        name, kind = sorted(wrong)[0]
        raise ConfigError(
            f"--out {path}: {display_name(name)} is {kind}, not the file an earlier report "
            "wrote; the report replaces the whole folder, so it would be lost. Move it away "
            "or give an empty or new folder."
        )


_PROBE = ".bayescal-probe."


def _check_writable(target: Path) -> None:
    """A folder must be creatable where the save creates its staging folder: beside
    ``target`` (the nearest existing ancestor, for a new ``target``), or inside a
    ``target`` that is a mount point (saved file by file)."""
    if plan(target).kind == "files":
        parent = target
    else:
        parent = target.absolute().parent
        while not parent.exists():
            parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(
            f"cannot create --out {target}: {parent} is a file, not a folder; give another path."
        )
    try:
        _probe(parent)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the report: no folder can be created in {parent} "
            f"({exc.strerror}); give --out under a folder you can write to."
        ) from None


def _probe(folder: Path) -> None:
    """Create something in ``folder`` and remove it. An unnamed file (``O_TMPFILE``) leaves
    nothing behind even if the process is killed; where the file system has none, an
    empty probe folder is made and removed. Empty probe folders of killed checks (of this
    or an earlier version) are removed first: an empty folder holds nothing to lose."""
    with signals_held():  # the probe folder is never left behind by Ctrl-C
        for stale in folder.glob(_PROBE + "*"):
            try:
                os.rmdir(stale)
            except OSError:
                pass  # not empty, not a folder, or not ours to remove: left alone
        tmpfile = getattr(os, "O_TMPFILE", 0)
        if tmpfile:
            try:
                os.close(os.open(folder, tmpfile | os.O_WRONLY | os.O_CLOEXEC, 0o600))
                return
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                    raise
        probe = tempfile.mkdtemp(prefix=_PROBE, dir=folder)
        try:
            os.rmdir(probe)
        except FileNotFoundError:
            pass  # another check removed it as stale


def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_template_source),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["shown"] = display_name
    env.filters["fmt"] = fmt
    env.filters["p_text"] = p_text
    return env


def _template_source(name: str) -> str:
    return (
        resources.files("bayescal.report").joinpath("templates", name).read_text(encoding="utf-8")
    )
