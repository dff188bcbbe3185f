"""An uploaded predictions file, read once in bounded memory before anything parses it.

The upload's format is read from its bytes, not its name: gzip (magic bytes 1f 8b) or plain JSON lines. The
content is streamed in 64 KiB pieces into a plain `.jsonl` copy for the validator, and refused as soon as
the decompressed bytes pass the size limit, a line passes `MAX_LINE_BYTES`, or the text is not UTF-8, so a
small gzip bomb (a 194 KB file holding one 200 MB line) costs one piece of memory, not the line. The stored
request keeps the original bytes under the suffix of their real format (`.jsonl.gz` or `.jsonl`).
"""

from __future__ import annotations

import codecs
import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path

from trace_bench.errors import TraceBenchError
from trace_dataset.constants import MAX_PREDICTION_LINE_BYTES

GZIP_MAGIC = b"\x1f\x8b"
CHUNK_BYTES = 1 << 16
MAX_LINE_BYTES = MAX_PREDICTION_LINE_BYTES  # one prediction row: the limit a run checks when it writes


class UploadError(TraceBenchError, ValueError):
    """An upload refused before validation; the message names the file (and line) and the limit."""


@dataclass(frozen=True)
class Upload:
    original: Path  # the uploaded file, whatever its name says
    plain: Path  # its JSON lines, decompressed, named .jsonl (what the validator reads)
    suffix: str  # ".jsonl.gz" or ".jsonl": the real format of the original bytes
    size: int  # bytes uploaded
    plain_size: int  # bytes of JSON lines
    lines: int


def read_upload(
    path: str | Path,
    plain: str | Path,
    max_bytes: int,
    *,
    name: str | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Upload:
    """Stream `path` into the plain JSON-lines file `plain`, or raise UploadError.

    `max_bytes` bounds both the uploaded and the decompressed bytes; `name` is the file name shown in
    messages (default: the upload's own name).
    """
    path, plain = Path(path), Path(plain)
    name = name or path.name
    size = path.stat().st_size
    limit_mb = max_bytes / 2**20
    if size > max_bytes:
        raise UploadError(f"{name}: the file is {size / 2**20:.1f} MB; the limit is {limit_mb:g} MB")
    if size == 0:
        raise UploadError(f"{name}: the file is empty")
    with open(path, "rb") as raw:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        source = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        total, line, line_bytes = 0, 1, 0
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        with open(plain, "wb") as out:
            while True:
                try:
                    chunk = source.read(CHUNK_BYTES)
                except (OSError, EOFError, zlib.error) as e:  # corrupt or truncated gzip
                    raise UploadError(f"{name}: not a readable gzip file ({e})") from None
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    raise UploadError(
                        f"{name}: more than {limit_mb:g} MB of predictions"
                        f"{' once decompressed' if compressed else ''}; the limit is {limit_mb:g} MB"
                    )
                pieces = chunk.split(b"\n")
                lengths = [line_bytes + len(pieces[0]), *map(len, pieces[1:])]
                if max(lengths) > max_line_bytes:
                    at = line + next(i for i, n in enumerate(lengths) if n > max_line_bytes)
                    raise UploadError(
                        f"{name}:{at}: a line longer than "
                        f"{max_line_bytes // 2**10:,} KB; a prediction row is one short JSON "
                        "object per line"
                    )
                line_bytes = lengths[-1]
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as e:
                    at = line + chunk[: max(e.start, 0)].count(b"\n")
                    raise UploadError(
                        f"{name}:{at}: not UTF-8 text (a JSON-lines file is text, not binary data)"
                    ) from None
                line += len(pieces) - 1
                out.write(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise UploadError(f"{name}:{line}: not UTF-8 text (the file ends inside a character)") from None
    return Upload(
        original=path,
        plain=plain,
        suffix=".jsonl.gz" if compressed else ".jsonl",
        size=size,
        plain_size=total,
        lines=line - (1 if line_bytes == 0 else 0),
    )


def first_unparsable_line(path: str | Path) -> tuple[int, str] | None:
    """(line number, reason) of the first line of a plain JSON-lines file that Python's JSON parser rejects,
    including what it rejects without a JSONDecodeError (nesting past the recursion limit, integers past
    the digit limit); None when every line parses."""
    with open(path, encoding="utf-8") as f:
        for lineno, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                json.loads(text)
            except RecursionError:
                return lineno, "JSON nested too deeply"
            except ValueError as e:  # JSONDecodeError, or an integer past int_max_str_digits
                reason = "an integer with too many digits" if "digits" in str(e) else str(e)
                return lineno, f"not valid JSON ({reason})"
    return None
