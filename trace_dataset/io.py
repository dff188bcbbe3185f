"""Deterministic, atomic file I/O shared by every stage.

Every file Trace writes goes through here: JSON lines (optionally gzip with a zero timestamp, so the
same records give the same bytes) written to a temporary file in the target folder and renamed into
place, so an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

GZIP_LEVEL = 6


@functools.cache
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class TraceDataError(ValueError):
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


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", *, gzip_level: int | None = None) -> Iterator[IO]:
    """Open a temporary file beside `path`; rename it onto `path` only if the block succeeds.

    With `.gz` in the name (or `gzip_level` given) the content is gzip-compressed with mtime 0.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    binary = "b" in mode
    try:
        with os.fdopen(fd, "wb") as raw:
            if path.suffix == ".gz" or gzip_level is not None:
                level = GZIP_LEVEL if gzip_level is None else gzip_level
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=level) as gz:
                    if binary:
                        yield gz
                    else:
                        with io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as text:
                            yield text
            elif binary:
                yield raw
            else:
                with io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as text:
                    yield text
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


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


def open_text(path: str | os.PathLike) -> IO[str]:
    """Open a text file for reading, transparently un-gzipping `.gz`."""
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="\n")
    return open(path, encoding="utf-8", newline="\n")


def iter_jsonl_lines(path: str | os.PathLike) -> Iterator[tuple[int, str, dict]]:
    """(line number, line without its newline, record) of every non-blank JSON line.

    The one JSON-lines reader: a broken line, a non-object line, a truncated or non-gzip `.gz` file raise
    TraceDataError naming the file (and the line).
    """
    path = Path(path)
    if not path.exists():
        raise TraceDataError("file not found", path=path)
    with open_text(path) as f:
        try:
            for lineno, line in enumerate(f, start=1):
                line = line.rstrip("\n")
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise TraceDataError(f"not valid JSON ({e.msg} at column {e.colno})", path=path,
                                         line=lineno) from None
                if not isinstance(record, dict):
                    raise TraceDataError(f"expected a JSON object, got {type(record).__name__}", path=path,
                                         line=lineno)
                yield lineno, line, record
        except (EOFError, OSError) as e:  # truncated or non-gzip file
            raise TraceDataError(f"unreadable file ({e})", path=path) from None


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Stream JSON-line records; a broken line raises TraceDataError naming file and line."""
    for _, _, record in iter_jsonl_lines(path):
        yield record


def read_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    if not path.exists():
        raise TraceDataError("file not found", path=path)
    try:
        with open_text(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise TraceDataError(f"not valid JSON ({e.msg})", path=path, line=e.lineno) from None


def sha256_file(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
