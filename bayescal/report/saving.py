"""Writing a report folder so that no crash, signal, full disk or mount point loses data.

:meth:`bayescal.report.core.Report.save` calls :func:`save_folder`. The invariant: at
every instant ``out`` holds either the earlier complete report or the new complete
one, and nothing the user put anywhere is deleted.

Folder protocol (``out`` can be renamed; the usual case)
    1. Leftovers of killed saves into ``out`` are cleaned (:func:`clean_leftovers`).
    2. A *journal* ``.OUT.HEX.bayescal-save`` is created beside ``out`` (exclusively,
       locked with ``flock`` while the save runs, written and fsynced). It is the marker
       of this save: it names the two entries the save may leave beside ``out``, the
       staging folder ``.OUT.HEX.partial`` and the backup ``.OUT.HEX.old``; nothing
       that no journal names is ever removed.
    3. Every file of the new report is written into the staging folder (on the same
       file system as ``out``) and fsynced, then the staging folder itself.
    4. The commit, with SIGINT / SIGTERM held: the staging folder and ``out`` are
       exchanged in one step (``renameat2(RENAME_EXCHANGE)``, Linux 3.15+), and the
       parent folder is fsynced. Where the exchange is not supported (another
       kernel or file system: ``EINVAL``, ``ENOSYS``), ``out`` is renamed to the
       backup and the staging folder to ``out``: between these two renames ``out`` is
       missing, and the complete earlier report is the backup, which the next save
       renames back before it does anything else (the journal says so).
    5. The earlier report (now the staging folder) is removed file by file, only the
       names a report writes, then the journal.

File protocol (``out`` is a mount point, or the rename is refused with ``EBUSY`` /
``EXDEV``: every ``--out /output`` on a container volume; or ``out`` is the current
folder, or holds it)
    The journal (``.bayescal.HEX.bayescal-save``) and the new files
    (``.NAME.HEX.partial``) are written inside ``out`` and fsynced; then each file
    replaces its earlier version with one ``rename`` (atomic per file), files of the
    earlier report that this one does not write are removed, and the journal last.
    Each file is at every instant complete (old or new) but during the replacement
    ``out`` holds files of both runs; the report's provenance says that it was saved
    this way (:attr:`SaveMode.describe`).

Every ``OSError`` of a save (full disk, permissions, read-only file system, ...) is
raised as one :class:`~bayescal.errors.OutputError` naming what was being written
and what ``out`` now holds, after this save's own temporary entries are removed.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from bayescal.errors import OutputError
from bayescal.interrupts import signals_held

try:  # advisory locks: a running save's journal is never taken for a leftover
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "NAME_OVERHEAD",
    "SaveMode",
    "Writer",
    "plan",
    "save_folder",
    "clean_leftovers",
    "leftover_names",
    "write_bytes",
]

#: A function that writes one file of the report at the path it is given.
Writer = Callable[[str], object]

JOURNAL_SUFFIX = ".bayescal-save"
#: Bytes the folder protocol adds to the name of --out for its entries beside it
#: (``.NAME.`` + 32 hex digits + the longest suffix).
NAME_OVERHEAD = 2 + 32 + len(".bayescal-save")
_MAGIC = "bayescal report save journal"
_FILES_STEM = "bayescal"  # journal name inside --out for the file protocol
_ENTRY = re.compile(r"^\.(?P<stem>[^/\x00]+)\.(?P<hex>[0-9a-f]{32})\.(?P<kind>partial|old)$")
_JOURNAL = re.compile(r"^\.(?P<stem>.+)\.(?P<hex>[0-9a-f]{32})" + re.escape(JOURNAL_SUFFIX) + "$")
_MAX_JOURNAL = 1 << 16
#: errno values that mean "this folder cannot be renamed here": a mount point, another
#: file system.
_NOT_RENAMEABLE = (errno.EBUSY, errno.EXDEV)
#: errno values of a kernel or file system without RENAME_EXCHANGE.
_NO_EXCHANGE = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@dataclass(frozen=True)
class SaveMode:
    """How a report is saved: ``"folder"`` (swapped in whole) or ``"files"`` (one by one),
    and why the second."""

    kind: str
    reason: str = ""

    def describe(self) -> str:
        """One sentence for the report's provenance."""
        if self.kind == "folder":
            return (
                "as one folder: written beside --out, flushed to disk (fsync) and swapped in "
                "whole, so --out held the earlier or the new complete report at every instant"
            )
        return (
            f"file by file, each file replaced atomically ({self.reason}); while the files "
            "were replaced --out held files of both runs"
        )


def plan(target: Path) -> SaveMode:
    """The protocol for ``target`` (an absolute path): the file protocol for a mount point
    (it cannot be renamed), an existing ``target`` whose parent cannot be written (the
    staging folder has nowhere to go), and the current folder or one holding it (a swap
    would leave this process, and the user's shell, in the removed earlier folder); the
    folder protocol otherwise."""
    if not target.is_dir():
        return SaveMode("folder")
    if os.path.ismount(target):
        return SaveMode("files", "--out is a mount point, which cannot be renamed")
    if not os.access(target.parent, os.W_OK | os.X_OK) and os.access(target, os.W_OK | os.X_OK):
        return SaveMode("files", "the folder that holds --out is not writable")
    try:
        cwd = Path.cwd().resolve()
    except OSError:  # the current folder was removed: it is not --out then
        return SaveMode("folder")
    if cwd == target.resolve() or target.resolve() in cwd.parents:
        return SaveMode("files", "--out is the current folder, which stays where it is")
    return SaveMode("folder")


# ------------------------------------------------------------------ small durable steps
def write_bytes(path: str, data: bytes) -> None:
    """Create ``path`` (it must not exist) and write ``data`` (a save fsyncs every file it
    wrote, whoever wrote it, right after)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems cannot fsync a folder; nothing else to do
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def _disk_full(folder: Path) -> bool:
    """Fewer than :data:`_FULL_BELOW` bytes are left to unprivileged writers in ``folder``."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < _FULL_BELOW


#: A file system with less free space than this (1 MiB) counts as full when a library's
#: writer fails without saying why: no report file is written in smaller pieces.
_FULL_BELOW = 1 << 20


@functools.cache
def _renameat2():
    """The C library's ``renameat2`` (glibc 2.28+, musl 1.2.2+), or None."""
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    except OSError:  # pragma: no cover - no C library to load
        return None


def _exchange(a: Path, b: Path) -> None:
    """Swap two paths in one step (``renameat2(RENAME_EXCHANGE)``); ``OSError(ENOSYS)``
    where the C library has no ``renameat2``."""
    func = _renameat2()
    if func is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available", str(a))
    if func(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a), None, str(b))


# ------------------------------------------------------------------ journals and leftovers
@dataclass(frozen=True)
class _Journal:
    path: Path
    stem: str
    hex: str
    entries: tuple[str, ...]


def _journals(folder: Path, stem: str) -> Iterator[_Journal]:
    """Valid journals of saves into ``stem`` in ``folder`` (an empty one, left by a save
    killed while creating it, has no entries)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in sorted(names):
        m = _JOURNAL.match(name)
        if m is None or m["stem"] != stem:
            continue
        path = folder / name
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            with open(path, "rb") as fh:
                raw = fh.read(_MAX_JOURNAL + 1)
        except OSError:
            continue
        if not raw:
            yield _Journal(path, stem, m["hex"], ())
            continue
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue  # not ours, or damaged: left alone
        if not isinstance(body, dict) or body.get("magic") != _MAGIC or body.get("out") != stem:
            continue
        entries = tuple(
            e
            for e in body.get("entries", [])
            if isinstance(e, str) and (em := _ENTRY.match(e)) is not None and em["hex"] == m["hex"]
        )
        yield _Journal(path, stem, m["hex"], entries)


def leftover_names(folder: Path) -> set[str]:
    """Names inside ``folder`` that a killed file-protocol save left there (journals and
    the files they name): :func:`check_out_dir` does not count them as the user's."""
    names = set()
    for j in _journals(folder, _FILES_STEM):
        names.add(j.path.name)
        names.update(j.entries)
    return names


def _create_journal(path: Path, body: dict) -> int:
    """Create the journal exclusively, lock it for the save's duration, write and fsync it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, json.dumps(body).encode())
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lock_if_free(path: Path) -> int | None:
    """The journal opened and locked, or None while the save that wrote it still runs."""
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
    return fd


def _remove_folder(folder: Path, names: Iterable[str]) -> bool:
    """Remove the report files ``names`` (regular files only) from ``folder``, then the
    folder if that left it empty; anything else stays. True when the folder is gone."""
    names = set(names)
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return True
    clean_leftovers(folder, _FILES_STEM, names)
    for entry in entries:
        if entry.name in names and entry.is_file(follow_symlinks=False):
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass
    try:
        os.rmdir(folder)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            return False  # something that is not a report file: never removed
        raise
    return True


def clean_leftovers(folder: Path, stem: str, names: Iterable[str]) -> None:
    """Finish or undo what killed saves into ``stem`` left in ``folder``.

    Only entries a journal names are touched: a backup is renamed back to ``stem``
    when ``stem`` is missing (a save killed between the two renames of the fallback),
    otherwise staging folders and backups lose their report files ``names`` and are
    removed when that leaves them empty; temporary files of the file protocol are
    removed. A journal locked by a running save is skipped; the others are removed
    once their entries are gone.
    """
    names = set(names)
    for journal in list(_journals(folder, stem)):
        with signals_held():
            try:
                fd = _lock_if_free(journal.path)
            except FileNotFoundError:
                continue  # another process cleaned it first
            if fd is None:
                continue
            try:
                done = all([_undo(folder, stem, entry, names) for entry in journal.entries])
                if done:
                    os.unlink(journal.path)
                    _fsync_dir(folder)
            finally:
                os.close(fd)


def _undo(folder: Path, stem: str, entry: str, names: set[str]) -> bool:
    path = folder / entry
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    if stat.S_ISDIR(info.st_mode):
        target = folder / stem
        if entry.endswith(".old") and not os.path.lexists(target):
            os.rename(path, target)  # the earlier report goes back where it was
            _fsync_dir(folder)
            return True
        return _remove_folder(path, names)
    if stat.S_ISREG(info.st_mode) and entry.endswith(".partial"):
        os.unlink(path)
        return True
    return False  # a symbolic link or anything else: not what a save creates


# ------------------------------------------------------------------ saving
def save_folder(
    target: Path,
    render: Callable[[SaveMode], Mapping[str, Writer]],
    keep: Iterable[str],
    *,
    shown: str | None = None,
) -> SaveMode:
    """Save a report folder at ``target`` (see the module docstring); return how.

    Parameters
    ----------
    target : Path
        The report folder (a symbolic link resolved); its parent exists.
    render : callable(SaveMode) -> {name: writer}
        The files of the report in order; called once, and once more when the folder
        protocol falls back to the file protocol (the provenance then says so).
    keep : iterable of str
        Every file name a report folder may hold (old reports' files are removed by
        these names only).
    shown : str, optional
        How messages name the folder (the ``--out`` the user gave).

    Raises
    ------
    OutputError
        An ``OSError`` at any step; ``target`` holds the earlier report (or the message
        says what it holds).
    """
    shown = shown or str(target)
    mode = plan(target)
    keep = set(keep)
    if mode.kind == "folder":
        try:
            return _save_whole(target, render, keep, shown)
        except _Unrenameable as exc:
            mode = SaveMode("files", f"renaming --out was refused: {exc.reason}")
    _save_files(target, render(mode), keep, shown)
    return mode


class _Unrenameable(Exception):
    def __init__(self, code: int):
        self.reason = f"{os.strerror(code)} ({errno.errorcode.get(code, code)})"


#: The fix each errno suggests in a message.
_FIXES = {
    errno.ENOSPC: "Free disk space, or give --out on another disk",
    errno.EDQUOT: "Free space in your quota, or give --out on another disk",
    errno.EACCES: "Give --out in a folder you can write to",
    errno.EPERM: "Give --out in a folder you can write to",
    errno.EROFS: "The file system is read-only: give --out on a writable one",
}


class _Run:
    """One save's journal and its one-line error: ``doing`` names the step under way."""

    def __init__(self, folder: Path, stem: str, shown: str, existed: bool):
        self.folder, self.shown, self.existed = folder, shown, existed
        self.token = secrets.token_hex(16)
        self.journal = folder / f".{stem}.{self.token}{JOURNAL_SUFFIX}"
        self.stem = stem
        self.doing = "cleaning up after an earlier run"
        self.fd: int | None = None

    def entry(self, name: str, kind: str) -> Path:
        return self.folder / f".{name}.{self.token}.{kind}"

    def start(self, entries: Iterable[Path], keep: set[str]) -> None:
        """Clean leftovers of earlier saves, then create this save's journal naming
        ``entries`` (before any of them exists)."""
        body = {"magic": _MAGIC, "out": self.stem, "entries": [p.name for p in entries]}
        try:
            clean_leftovers(self.folder, self.stem, keep)
            self.doing = f"creating {self.journal.name} in {self.folder}"
            with signals_held():
                self.fd = _create_journal(self.journal, body)
            _fsync_dir(self.folder)
        except OSError as exc:
            self.finish(lambda: True)
            raise self.failed(exc) from None

    def failed(self, exc: OSError, after: str = "") -> OutputError:
        held = after or (
            f"{self.shown} still holds the earlier report, unchanged"
            if self.existed
            else f"{self.shown} was not created"
        )
        fix = _FIXES.get(exc.errno or 0, "Check the folder and run again")
        return OutputError(
            exc.errno or errno.EIO,
            f"cannot save the report to {self.shown}: {exc.strerror or exc} ({self.doing}); "
            f"{held}. {fix}.",
        )

    def write(self, writers: Mapping[str, Writer], path: Callable[[str], Path]) -> None:
        for name, write in writers.items():
            self.doing = f"writing {name}"
            try:
                write(str(path(name)))
            except OSError:
                raise
            except Exception as exc:
                # Libraries report a full disk in their own words (netCDF / HDF5:
                # "RuntimeError: NetCDF: HDF error"); the file system tells the truth.
                if _disk_full(path(name).parent):
                    self.doing += f": {type(exc).__name__}: {exc}"
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)) from exc
                raise
            _fsync_file(str(path(name)))

    def finish(self, remove: Callable[[], bool]) -> None:
        """Remove this save's entries (``remove()`` is True when they are gone), then the
        journal; an error here leaves them to the next save, which finds the journal."""
        with signals_held():
            try:
                if remove() and os.path.lexists(self.journal):
                    os.unlink(self.journal)
                    _fsync_dir(self.folder)
            except OSError:
                pass
            finally:
                if self.fd is not None:
                    fd, self.fd = self.fd, None
                    try:
                        os.close(fd)  # the lock goes with it
                    except OSError:
                        pass


def _save_whole(target: Path, render, keep: set[str], shown: str) -> SaveMode:
    """The folder protocol (module docstring)."""
    run = _Run(target.parent, target.name, shown, target.is_dir())
    staging, backup = run.entry(target.name, "partial"), run.entry(target.name, "old")
    run.start([staging, backup], keep)
    mode = SaveMode("folder")
    committed = False
    try:
        run.doing = f"creating the folder {staging.name} beside it"
        os.mkdir(staging, _folder_mode(target))
        os.chmod(staging, _folder_mode(target))  # not narrowed by the umask
        run.write(render(mode), lambda name: staging / name)
        run.doing = "flushing the new report to disk"
        _fsync_dir(staging)
        with signals_held() as held:
            if held.received:
                return mode  # a signal before the commit: out stays as it was
            run.doing = f"swapping the new report in for {shown}"
            _commit(staging, target, backup)
            committed = True
            _fsync_dir(target.parent)
    except OSError as exc:
        raise run.failed(exc, f"{shown} holds the new report" if committed else "") from None
    finally:
        # the staging folder (the earlier report, after the swap) and the backup
        run.finish(lambda: _remove_folder(staging, keep) & _remove_folder(backup, keep))
    return mode


def _commit(staging: Path, target: Path, backup: Path) -> None:
    """Put the staging folder at ``target``; the earlier report ends at ``staging`` (after
    an exchange) or ``backup`` (after two renames)."""
    if not os.path.lexists(target):
        os.rename(staging, target)
        return
    try:
        _exchange(staging, target)
        return
    except OSError as exc:
        if exc.errno in _NOT_RENAMEABLE:
            raise _Unrenameable(exc.errno) from None
        if exc.errno not in _NO_EXCHANGE:
            raise
    # No exchange on this system: two renames; the journal names the backup, so a
    # crash between them is undone by the next save (clean_leftovers).
    try:
        os.rename(target, backup)
    except OSError as exc:
        if exc.errno in _NOT_RENAMEABLE:
            raise _Unrenameable(exc.errno) from None
        raise
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(backup, target)
        raise


def _save_files(target: Path, writers: Mapping[str, Writer], keep: set[str], shown: str) -> None:
    """The file protocol (module docstring): everything happens inside ``target``."""
    run = _Run(target, _FILES_STEM, shown, target.is_dir())
    temps = {name: run.entry(name, "partial") for name in writers}
    try:
        target.mkdir(exist_ok=True)
    except OSError as exc:
        raise run.failed(exc) from None
    run.start(temps.values(), keep)
    replaced: list[str] = []
    try:
        run.write(writers, temps.__getitem__)
        with signals_held():
            for name in writers:
                run.doing = f"replacing {name}"
                os.replace(temps[name], target / name)
                replaced.append(name)
            for entry in os.scandir(target):
                if entry.name in keep - set(writers) and entry.is_file(follow_symlinks=False):
                    run.doing = f"removing the earlier {entry.name}"
                    os.unlink(entry.path)
            _fsync_dir(target)
    except OSError as exc:
        mixed = f"{shown} holds the new {', '.join(replaced)} and the earlier report's other files"
        raise run.failed(exc, mixed if replaced else "") from None
    finally:
        run.finish(lambda: all([_undo(target, _FILES_STEM, p.name, keep) for p in temps.values()]))


def _folder_mode(target: Path) -> int:
    """Keep an existing folder's permissions; a new one gets the usual umask-based mode."""
    if target.is_dir():
        return stat.S_IMODE(target.stat().st_mode)
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask
