"""Deterministic, atomic file I/O shared by every stage.

Every file Trace writes goes through here: JSON lines (optionally gzip with a zero timestamp, so the
same records give the same bytes) written to a temporary file in the target folder and renamed into
place, so an interrupted run never leaves a half-written file behind. Whole output folders (a knowledge
base, a release, a hydration) are built in a hidden sibling folder and swapped in at once (`staged_dir`).
Temporary names carry the writer's process id, so a rerun removes what a killed run left behind
(`remove_stale_temps`) without touching the temporaries of a run still in progress.

Reading: a line that is not JSON, nests too deep, holds an integer too long to convert or bytes that are not
UTF-8, and a truncated or non-gzip `.gz`, are all TraceDataError naming the file (and line). Writing: a target
that is a folder, sits under a file, or is not writable is TraceDataError naming the path and what was expected.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import gzip
import hashlib
import io
import json
import logging
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, cast

from trace_bench.errors import TraceBenchError

GZIP_LEVEL = 6
TMP_SUFFIX = ".tmp"
OLD_SUFFIX = ".old"
# what reading a JSON line can raise besides JSONDecodeError: nesting too deep (RecursionError), an integer
# longer than Python converts (ValueError), bytes that are not UTF-8 (UnicodeDecodeError, a ValueError too)
_LINE_ERRORS = (RecursionError, ValueError)
# what reading a compressed file can raise when it is truncated or not gzip at all
GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)

log = logging.getLogger(__name__)


@functools.cache
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class TraceDataError(TraceBenchError, ValueError):
    """Bad input data: the message names the file, the line or field, and what was expected."""

    def __init__(self, message: str, *, path: str | os.PathLike | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(where + message)
        self.path = None if path is None else str(path)
        self.line = line


def dumps(record: Any) -> str:
    """One canonical JSON line: key order as given, UTF-8 text, no spaces."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------------
# Where outputs go: clear errors, and no orphan temporaries
# ---------------------------------------------------------------------------------------------------
def output_error(error: OSError, path: str | os.PathLike, what: str = "file") -> TraceDataError:
    """An OSError met while creating output `path` as a TraceDataError saying what was expected."""
    if isinstance(error, IsADirectoryError):
        why = f"is a folder; expected a {what} path"
    elif isinstance(error, (NotADirectoryError, FileExistsError)):
        why = f"a part of the path is a file, not a folder; expected a {what} path inside folders"
    elif error.errno in (errno.EACCES, errno.EPERM):
        why = (
            f"cannot write the {what} here (permission denied, or a read-only or immutable folder); "
            "choose a writable location"
        )
    elif error.errno == errno.EROFS:
        why = f"cannot write the {what} here (read-only file system); choose a writable location"
    elif error.errno == errno.ENOSPC:
        why = f"cannot write the {what}: no space left on the device"
    elif error.errno == errno.ENOENT:
        why = f"cannot create the {what} here (a folder on the way cannot be created); choose a writable location"
    else:
        why = f"cannot write the {what} here ({error.strerror or error}); choose a writable location"
    return TraceDataError(why, path=path)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or cannot tell: keep its files
    return True


def _temp_re(name: str) -> re.Pattern[str]:
    """Temporaries of target `name`: `.{name}.{pid}.{8 random chars}.tmp|.old`, and the older pid-less form."""
    return re.compile(
        rf"\.{re.escape(name)}\.(?:(\d+)\.)?[a-z0-9_]{{8}}({re.escape(TMP_SUFFIX)}|{re.escape(OLD_SUFFIX)})"
    )


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove the temporaries that a killed writer of `path` left beside it; returns what was removed.

    A temporary is stale when the process that made it (its pid is in the name) is gone; a leftover of a
    live process is kept. When `path` itself is missing because a run died between the two renames of a
    swap, its previous version (the `.old` folder) is put back instead of removed.
    """
    path = Path(path)
    parent = path.parent
    if not parent.is_dir():
        return []
    pattern = _temp_re(path.name)
    removed: list[Path] = []
    try:
        entries = sorted(parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None or (m.group(1) is not None and _pid_alive(int(m.group(1)))):
            continue
        if m.group(2) == OLD_SUFFIX and not os.path.lexists(path) and entry.is_dir():
            with contextlib.suppress(OSError):
                os.replace(entry, path)
                log.warning("%s: restored the previous version left by an interrupted run", path)
                continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError as e:
            log.warning("%s: cannot remove a temporary left by an interrupted run (%s)", entry, e)
            continue
        log.info("%s: removed a temporary left by an interrupted run", entry)
        removed.append(entry)
    return removed


_ANY_TEMP_RE = re.compile(
    rf"\.(.+)\.(\d+)\.[a-z0-9_]{{8}}(?:{re.escape(TMP_SUFFIX)}|{re.escape(OLD_SUFFIX)})"
)


def remove_stale_siblings(folder: str | os.PathLike) -> list[Path]:
    """`remove_stale_temps` for every target in `folder` that a killed writer left temporaries of (`.NAME.PID.*`
    with PID gone), not only the one being written: a killed `kb build --out runs/kb1` leaves nothing behind
    once any output is staged beside it. Temporaries of live processes are kept."""
    folder = Path(folder)
    try:
        names = {
            m.group(1)
            for p in folder.iterdir()
            if (m := _ANY_TEMP_RE.fullmatch(p.name)) and not _pid_alive(int(m.group(2)))
        }
    except OSError:
        return []
    return [removed for name in sorted(names) for removed in remove_stale_temps(folder / name)]


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def _make_parent(path: Path, what: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error(e, path, what) from None
    if not path.parent.is_dir():
        raise output_error(NotADirectoryError(errno.ENOTDIR, "not a folder"), path, what)


def check_output_file(path: str | os.PathLike) -> Path:
    """Fail early, before any work, unless a file can be written at `path` (creates missing folders)."""
    path = Path(path)
    if path.is_dir():
        raise output_error(IsADirectoryError(errno.EISDIR, "is a folder"), path)
    _make_parent(path, "file")
    try:
        fd, probe = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=TMP_SUFFIX, dir=path.parent)
    except OSError as e:
        raise output_error(e, path) from None
    os.close(fd)
    os.unlink(probe)
    if path.exists() and not os.access(path, os.W_OK):
        raise output_error(PermissionError(errno.EACCES, "not writable"), path)
    return path


def check_output_dir(path: str | os.PathLike, markers: tuple[str, ...] = (), *, what: str = "output") -> Path:
    """Fail early unless `path` can become an output folder: not a file, in a writable place, and (when
    `markers` are given) either missing, empty, or holding one of `markers` (an earlier output of the same
    kind, which will be replaced); anything else is refused rather than overwritten."""
    path = Path(path).absolute()
    if path.exists() and not path.is_dir():
        raise TraceDataError(f"{what} path exists and is not a folder; expected a folder", path=path)
    if markers and path.is_dir():
        try:
            entries = [p.name for p in path.iterdir()]
        except OSError as e:
            raise output_error(e, path, f"{what} folder") from None
        if entries and not any(m in entries for m in markers):
            raise TraceDataError(
                f"{what} folder is not empty and holds no {' or '.join(markers)} (not an earlier output of this "
                "command); refusing to overwrite it: choose a new or empty folder",
                path=path,
            )
    _make_parent(path, f"{what} folder")
    try:
        probe = tempfile.mkdtemp(prefix=_temp_prefix(path), suffix=TMP_SUFFIX, dir=path.parent)
    except OSError as e:
        raise output_error(e, path, f"{what} folder") from None
    os.rmdir(probe)
    return path


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


@contextlib.contextmanager
def staged_dir(
    out_dir: str | os.PathLike,
    markers: str | tuple[str, ...],
    *,
    protect: tuple[str | os.PathLike, ...] = (),
    what: str = "output",
) -> Iterator[Path]:
    """Yield an empty staging folder beside `out_dir`; when the block succeeds, it replaces `out_dir` whole.

    An interrupted or failed run leaves the previous output (or nothing) in place, never a mix. An existing
    `out_dir` is replaced only when it is empty or holds one of `markers`; `protect` lists input paths that
    must not be the output, inside it, or hold it.
    """
    markers = (markers,) if isinstance(markers, str) else tuple(markers)
    out_dir = Path(out_dir).absolute()
    for p in protect:
        p = Path(p).absolute()
        if out_dir == p or p.is_relative_to(out_dir) or out_dir.is_relative_to(p):
            raise TraceDataError(
                f"output folder overlaps the input {p}; choose a separate folder", path=out_dir
            )
    remove_stale_temps(out_dir)
    remove_stale_siblings(out_dir.parent)
    check_output_dir(out_dir, markers, what=what)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(out_dir), suffix=TMP_SUFFIX, dir=out_dir.parent))
    except OSError as e:
        raise output_error(e, out_dir, f"{what} folder") from None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if not out_dir.exists():
            os.replace(tmp, out_dir)
        elif _exchange(tmp, out_dir):
            shutil.rmtree(tmp, ignore_errors=True)  # now the previous output
        else:
            old = Path(tempfile.mkdtemp(prefix=_temp_prefix(out_dir), suffix=OLD_SUFFIX, dir=out_dir.parent))
            os.rmdir(old)
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike, mode: str = "w", *, gzip_level: int | None = None, compress: bool | None = None
) -> Iterator[IO]:
    """Open a temporary file beside `path`; rename it onto `path` only if the block succeeds.

    With `.gz` in the name (or `gzip_level` given) the content is gzip-compressed with mtime 0, unless
    `compress=False` (bytes that are already compressed). Temporaries a killed earlier writer of `path` left
    are removed first.
    """
    path = Path(path)
    if path.is_dir():
        raise output_error(IsADirectoryError(errno.EISDIR, "is a folder"), path)
    _make_parent(path, "file")
    remove_stale_temps(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=TMP_SUFFIX, dir=path.parent)
    except OSError as e:
        raise output_error(e, path) from None
    binary = "b" in mode
    try:
        with os.fdopen(fd, "wb") as raw:
            if compress is None:
                compress = path.suffix == ".gz" or gzip_level is not None
            if compress:
                level = GZIP_LEVEL if gzip_level is None else gzip_level
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=level) as gz:
                    if binary:
                        yield cast(IO[bytes], gz)  # a GzipFile is a binary file object
                    else:
                        with io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as text:
                            yield text
            elif binary:
                yield raw
            else:
                with io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as text:
                    yield text
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        try:
            os.replace(tmp, path)
        except OSError as e:
            raise output_error(e, path) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def copy_file(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Byte-for-byte copy through a temporary beside `dst` (never a half-copied `dst`)."""
    with atomic_open(dst, "wb", compress=False) as out, open(src, "rb") as f:
        shutil.copyfileobj(f, out, 1 << 20)


def write_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> int:
    """Write records as JSON lines atomically; returns the number written."""
    n = 0
    with atomic_open(path, "w") as f:
        for record in records:
            f.write(dumps(record))
            f.write("\n")
            n += 1
    return n


def write_json(path: str | os.PathLike, obj: Any, *, indent: int = 2) -> None:
    with atomic_open(path, "w") as f:
        json.dump(obj, f, ensure_ascii=False, indent=indent)
        f.write("\n")


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path, "w") as f:
        f.write(text)


# ---------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------
def open_text(path: str | os.PathLike) -> IO[str]:
    """Open a text file for reading, transparently un-gzipping `.gz`."""
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="\n")
    return open(path, encoding="utf-8", newline="\n")


def open_binary(path: str | os.PathLike) -> IO[bytes]:
    """Open a file for reading bytes, transparently un-gzipping `.gz`."""
    path = Path(path)
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))  # a GzipFile is a binary file object
    return open(path, "rb")


def line_error(error: Exception) -> str:
    """Why a JSON line could not be read, in words (for JSONDecodeError, RecursionError, ValueError)."""
    if isinstance(error, json.JSONDecodeError):
        return f"not valid JSON ({error.msg} at column {error.colno})"
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at byte {error.start})"
    if isinstance(error, RecursionError):
        return "JSON nested too deeply; expected a flat record"
    return f"unreadable JSON value ({str(error).split(': value')[0]}); expected ordinary numbers and strings"


def iter_jsonl_lines(path: str | os.PathLike) -> Iterator[tuple[int, str, dict]]:
    """(line number, line without its newline, record) of every non-blank JSON line.

    The one JSON-lines reader: a broken line (not JSON, not an object, not UTF-8, nested too deep, an
    integer too long to convert) and a truncated or non-gzip `.gz` raise TraceDataError naming the file
    (and the line).
    """
    path = Path(path)
    if not path.exists():
        raise TraceDataError("file not found", path=path)
    if path.is_dir():
        raise TraceDataError("is a folder; expected a JSON-lines file", path=path)
    with open_binary(path) as f:
        try:
            for lineno, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                try:
                    line = raw.decode("utf-8").rstrip("\n")
                    record = json.loads(line)
                except _LINE_ERRORS as e:
                    raise TraceDataError(line_error(e), path=path, line=lineno) from None
                if not isinstance(record, dict):
                    raise TraceDataError(
                        f"expected a JSON object, got {type(record).__name__}", path=path, line=lineno
                    )
                yield lineno, line, record
        except (*GZIP_ERRORS, OSError) as e:  # truncated or non-gzip file
            raise TraceDataError(
                f"unreadable file: truncated or not gzip ({e})"
                if path.suffix == ".gz"
                else f"unreadable file ({e})",
                path=path,
            ) from None


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Stream JSON-line records; a broken line raises TraceDataError naming file and line."""
    for _, _, record in iter_jsonl_lines(path):
        yield record


def read_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    if not path.exists():
        raise TraceDataError("file not found", path=path)
    if path.is_dir():
        raise TraceDataError("is a folder; expected a JSON file", path=path)
    try:
        with open_binary(path) as f:
            data = f.read()
        return json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise TraceDataError(f"not valid JSON ({e.msg})", path=path, line=e.lineno) from None
    except _LINE_ERRORS as e:
        raise TraceDataError(line_error(e), path=path) from None
    except (*GZIP_ERRORS, OSError) as e:
        raise TraceDataError(f"unreadable file ({e})", path=path) from None


def sha256_file(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
