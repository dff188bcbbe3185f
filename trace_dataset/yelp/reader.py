"""Stream a Yelp Open Dataset bundle (or the built-in synthetic one) as typed records.

A bundle is any of: the extracted folder (`yelp_academic_dataset_business.json`,
`yelp_academic_dataset_review.json`, optionally `.gz`), Yelp's `yelp_dataset.tar` (or `.tar.gz`), a `.zip`
holding the files or the tar, or one of the JSON files itself. Files are read line by line in binary, so
memory stays flat however big the 5 GB review file is.

A malformed line (bad UTF-8, broken JSON, no `business_id`, a field of the wrong type, a number that is not
finite (`NaN`, `Infinity`, `1e999`) or too long to convert, coordinates off the globe, JSON nested thousands
deep) is counted and reported with its file and line number; with `strict=True` the first one raises
`TraceDataError`. A truncated or non-gzip `.json.gz` (or a broken archive member) is TraceDataError naming it.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import logging
import os
import tarfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from trace_dataset.constants import CITY_NAMES, YELP_BUSINESS_FILE, YELP_REVIEW_FILE
from trace_dataset.io import TraceDataError
from trace_dataset.yelp.lines import (
    MalformedLog,
    YelpBusiness,
    YelpReview,
    canonical_city,
    parse_business_obj,
    parse_line,
    parse_review_core,
    parse_review_obj,
    split_categories,
)

log = logging.getLogger(__name__)

__all__ = [
    "FILES",
    "SYNTHETIC_MANIFEST",
    "MalformedLog",
    "YelpBundle",
    "YelpBusiness",
    "YelpReview",
    "canonical_city",
    "inspect_bundle",
    "iter_businesses",
    "iter_reviews",
    "open_bundle",
    "parse_business_obj",
    "parse_line",
    "parse_review_core",
    "parse_review_obj",
    "split_categories",
]

SYNTHETIC_MANIFEST = "TRACE_SYNTHETIC.json"  # written by trace_dataset.yelp.synth beside the two files
FILES = {"business": YELP_BUSINESS_FILE, "review": YELP_REVIEW_FILE}
READ_BUFFER = 1 << 20
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")


# reading a compressed file or an archive member that is truncated or not what its name says
_READ_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, tarfile.TarError, zipfile.BadZipFile, OSError)


# ---------------------------------------------------------------------------------------------------
# Bundles
# ---------------------------------------------------------------------------------------------------
class YelpBundle:
    """Where the two Yelp files of a bundle are, whatever the container. Use `open_bundle(path)`."""

    def __init__(self, path: Path, container: str, members: dict[str, str], manifest: dict[str, Any] | None):
        self.path = path
        self.container = container  # "folder" | "tar" | "zip" | "zip+tar"
        self.members = members  # kind -> file path (folder) or member name (archives)
        self.manifest = manifest

    def __repr__(self) -> str:
        return f"YelpBundle({str(self.path)!r}, container={self.container!r}, source={self.source!r})"

    @property
    def source(self) -> str:
        """`synthetic` for the built-in bundle (it carries TRACE_SYNTHETIC.json), else `yelp`."""
        return "synthetic" if self.manifest is not None else "yelp"

    def label(self, kind: str) -> str:
        """How errors name the file: the path, or `archive[member]`."""
        member = self.members[kind]
        return member if self.container == "folder" else f"{self.path}[{member}]"

    @contextlib.contextmanager
    def open(self, kind: str) -> Iterator[IO[bytes]]:
        """A binary stream of one file (`kind` = "business" | "review"), un-gzipped where needed."""
        if kind not in FILES:
            raise ValueError(f"unknown file kind {kind!r}; expected one of {tuple(FILES)}")
        member = self.members[kind]
        with contextlib.ExitStack() as stack:
            if self.container == "folder":
                f: IO[bytes] | gzip.GzipFile = stack.enter_context(open(member, "rb", buffering=READ_BUFFER))
            elif self.container == "tar":
                tar = stack.enter_context(tarfile.open(self.path, "r:*"))
                f = _extract(tar, member, self.path)
            elif self.container == "zip":
                zf = stack.enter_context(zipfile.ZipFile(self.path))
                f = stack.enter_context(zf.open(member))
            else:  # zip+tar: the tar inside the zip
                outer, inner = member.split("::", 1)
                zf = stack.enter_context(zipfile.ZipFile(self.path))
                tar = stack.enter_context(
                    tarfile.open(fileobj=stack.enter_context(zf.open(outer)), mode="r:*")
                )
                f = _extract(tar, inner, self.path)
            if member.endswith(".gz"):
                f = stack.enter_context(gzip.GzipFile(fileobj=f, mode="rb"))
            try:
                yield _buffered(f)
            except _READ_ERRORS as e:  # raised while the caller reads: a truncated or mislabelled file
                what = "truncated or not gzip" if member.endswith(".gz") else "truncated or unreadable"
                raise TraceDataError(
                    f"unreadable Yelp {kind} file: {what} ({e})", path=self.label(kind)
                ) from None

    def iter_lines(self, kind: str) -> Iterator[tuple[int, bytes]]:
        """(line number, raw line) for every non-blank line; an empty file is an error."""
        label = self.label(kind)
        seen = False
        with self.open(kind) as f:
            for lineno, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                seen = True
                yield lineno, raw
        if not seen:
            raise TraceDataError(f"empty file: expected JSON lines of Yelp {kind} records", path=label)


def _buffered(f: IO[bytes] | gzip.GzipFile) -> io.BufferedReader:
    """A large read buffer over the stream (fast line iteration), unless it already is a BufferedReader."""
    if isinstance(f, io.BufferedReader):
        return f
    if not isinstance(f, io.BufferedIOBase):  # files, archive members and gzip streams all are
        raise TypeError(f"expected a buffered binary stream, got {type(f).__name__}")
    return io.BufferedReader(f, READ_BUFFER)


def _extract(tar: tarfile.TarFile, name: str, path: Path) -> io.BufferedReader:
    f = tar.extractfile(name)  # tarfile's ExFileObject, a BufferedReader; None for a non-file member
    if not isinstance(f, io.BufferedReader):
        raise TraceDataError(f"{name} in the archive is not a regular file", path=path)
    return f


def _match(names: list[str]) -> tuple[dict[str, str], str | None]:
    """Archive member names -> {kind: member} for the Yelp files, and the manifest member if any."""
    found: dict[str, str] = {}
    manifest = None
    for name in names:
        base = name.rsplit("/", 1)[-1]
        if base.startswith("._"):  # macOS resource forks
            continue
        for kind, fname in FILES.items():
            if base in (fname, fname + ".gz") and kind not in found:
                found[kind] = name
        if base == SYNTHETIC_MANIFEST:
            manifest = name
    return found, manifest


def _missing_error(path: Path, found: dict[str, str], what: str) -> TraceDataError:
    missing = [FILES[k] for k in FILES if k not in found]
    return TraceDataError(
        f"{what} has no {' and no '.join(missing)} (nor .gz): expected a Yelp Open Dataset bundle "
        f"(the extracted folder, yelp_dataset.tar, a .zip holding either, or the .json/.json.gz files)",
        path=path,
    )


def _read_manifest_bytes(data: bytes, where: str) -> dict[str, Any]:
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TraceDataError(f"unreadable synthetic-bundle manifest ({e})", path=where) from None
    if not isinstance(obj, dict):
        raise TraceDataError("synthetic-bundle manifest is not a JSON object", path=where)
    return obj


def open_bundle(path: str | os.PathLike) -> YelpBundle:
    """Locate the business and review files of a bundle; fail clearly when they are not there."""
    path = Path(path)
    if not path.exists():
        raise TraceDataError(
            "Yelp bundle not found: expected a folder, a .tar, a .zip or .json(.gz) files", path=path
        )
    if path.is_dir():
        return _open_folder(path)
    name = path.name
    if name.endswith((".json", ".json.gz")):
        base = name[: -len(".gz")] if name.endswith(".gz") else name
        if base not in FILES.values():
            raise TraceDataError(
                f"not a Yelp bundle file: expected one of {sorted(FILES.values())} (or .gz)", path=path
            )
        return open_bundle(path.parent)
    if name.endswith((".tar", ".tar.gz", ".tgz")):
        return _open_tar(path)
    if name.endswith(".zip"):
        return _open_zip(path)
    raise TraceDataError(
        "unrecognised Yelp bundle: expected a folder, a .tar/.tar.gz, a .zip, or the Yelp .json/.json.gz files",
        path=path,
    )


def _open_folder(path: Path) -> YelpBundle:
    """An extracted bundle (the JSON files, or their .gz), or a folder holding just one archive."""
    found: dict[str, str] = {}
    for kind, fname in FILES.items():
        for candidate in (path / fname, path / (fname + ".gz")):
            if candidate.is_file():
                found[kind] = str(candidate)
                break
    if not found:
        archives = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(_ARCHIVE_SUFFIXES))
        if len(archives) == 1:
            return open_bundle(archives[0])
    if len(found) < len(FILES):
        raise _missing_error(path, found, "folder")
    for kind, file in found.items():
        if os.path.getsize(file) == 0:
            raise TraceDataError(f"empty file: expected JSON lines of Yelp {kind} records", path=file)
    manifest_path = path / SYNTHETIC_MANIFEST
    manifest = (
        _read_manifest_bytes(manifest_path.read_bytes(), str(manifest_path))
        if manifest_path.is_file()
        else None
    )
    return YelpBundle(path, "folder", found, manifest)


def _open_tar(path: Path) -> YelpBundle:
    """Yelp's yelp_dataset.tar (or .tar.gz): its members are read where they lie."""
    try:
        with tarfile.open(path, "r:*") as tar:
            names = [m.name for m in tar.getmembers() if m.isfile()]
            found, manifest_name = _match(names)
            manifest = None
            if manifest_name is not None:
                fm = tar.extractfile(manifest_name)
                manifest = _read_manifest_bytes(fm.read() if fm else b"", f"{path}[{manifest_name}]")
    except (tarfile.TarError, OSError, EOFError) as e:
        raise TraceDataError(f"not a readable tar archive ({e})", path=path) from None
    if len(found) < len(FILES):
        raise _missing_error(path, found, "tar archive")
    return YelpBundle(path, "tar", found, manifest)


def _open_zip(path: Path) -> YelpBundle:
    """A .zip holding the JSON files, or one holding Yelp's tar."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
            found, manifest_name = _match(names)
            manifest = None
            if manifest_name is not None:
                manifest = _read_manifest_bytes(zf.read(manifest_name), f"{path}[{manifest_name}]")
            if len(found) == len(FILES):
                return YelpBundle(path, "zip", found, manifest)
            tars = [n for n in names if n.endswith((".tar", ".tar.gz", ".tgz")) and "/._" not in "/" + n]
            if len(tars) == 1:
                with zf.open(tars[0]) as inner, tarfile.open(fileobj=inner, mode="r:*") as tar:
                    inner_found, inner_manifest = _match([m.name for m in tar.getmembers() if m.isfile()])
                    if inner_manifest is not None and manifest is None:
                        fm = tar.extractfile(inner_manifest)
                        manifest = _read_manifest_bytes(fm.read() if fm else b"", f"{path}[{inner_manifest}]")
                if len(inner_found) == len(FILES):
                    members = {k: f"{tars[0]}::{v}" for k, v in inner_found.items()}
                    return YelpBundle(path, "zip+tar", members, manifest)
                found = inner_found
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as e:
        raise TraceDataError(f"not a readable zip archive ({e})", path=path) from None
    raise _missing_error(path, found, "zip archive")


def _as_bundle(path: str | os.PathLike | YelpBundle) -> YelpBundle:
    return path if isinstance(path, YelpBundle) else open_bundle(path)


def iter_businesses(
    path: str | os.PathLike | YelpBundle, *, strict: bool = False, malformed: MalformedLog | None = None
) -> Iterator[YelpBusiness]:
    """Every well-formed business of the bundle, streamed; malformed lines go to `malformed`."""
    bundle = _as_bundle(path)
    malformed = malformed if malformed is not None else MalformedLog(strict=strict)
    label = bundle.label("business")
    for lineno, raw in bundle.iter_lines("business"):
        record = parse_line("business", raw, label, lineno, malformed)
        if record is not None:
            yield record


def iter_reviews(
    path: str | os.PathLike | YelpBundle, *, strict: bool = False, malformed: MalformedLog | None = None
) -> Iterator[YelpReview]:
    """Every well-formed review of the bundle, streamed; malformed lines go to `malformed`."""
    bundle = _as_bundle(path)
    malformed = malformed if malformed is not None else MalformedLog(strict=strict)
    label = bundle.label("review")
    for lineno, raw in bundle.iter_lines("review"):
        record = parse_line("review", raw, label, lineno, malformed)
        if record is not None:
            yield record


def inspect_bundle(
    path: str | os.PathLike, *, strict: bool = False, progress: bool = False
) -> dict[str, Any]:
    """Counts for `trace-bench yelp inspect`: businesses, reviews, malformed lines, cities, joins."""
    bundle = open_bundle(path)
    malformed = MalformedLog(strict=strict)
    cities: Counter = Counter()
    other: Counter = Counter()
    ids: set[str] = set()
    n_business = 0
    for b in iter_businesses(bundle, malformed=malformed):
        n_business += 1
        ids.add(b.business_id)
        if b.in_trace_city:
            cities[b.city] += 1
        else:
            other[b.city or "(none)"] += 1
    n_review = joining = 0
    reviews = iter_reviews(bundle, malformed=malformed)
    if progress:
        from tqdm.auto import tqdm

        reviews = tqdm(reviews, desc="reviews", unit=" lines", unit_scale=True, mininterval=1.0)
    for r in reviews:
        n_review += 1
        joining += r.business_id in ids
    return {
        "bundle": str(bundle.path),
        "container": bundle.container,
        "source": bundle.source,
        "businesses": n_business,
        "reviews": n_review,
        "reviews_joining_a_business": joining,
        "malformed_lines": malformed.to_dict(),
        "trace_city_businesses": {c: cities.get(c, 0) for c in CITY_NAMES},
        "other_city_businesses": sum(other.values()),
        "top_other_cities": dict(sorted(other.items(), key=lambda kv: (-kv[1], kv[0]))[:10]),
    }
