"""`trace-bench corpus hydrate`: a `[Q:N]` release + the user's own Yelp bundle -> a complete data directory.

The release is read first (every referenced review id collected: quote spans and the review index), then
the user's review file is streamed once through the Yelp reader; a line is JSON-parsed only when its
review id is referenced, so the scan costs little more than reading the bytes. Each placeholder is filled
from its review's text by offsets and checked against the span checksum; `knowledge_base/reviews.jsonl.gz`
is rebuilt in the knowledge-base builder's format. Hydrating the release of a generated corpus gives that
corpus back byte for byte (the release records the expected SHA-256 of each file; hydration reports
whether they match).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from trace_dataset.constants import (
    CORPUS_META_FILE,
    KB_DIRNAME,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
    REVIEWS_FILE,
    SPLITS,
    YELP_REVIEW_FILE,
)
from trace_dataset.datadir import split_file
from trace_dataset.io import (
    TraceDataError,
    atomic_open,
    dumps,
    read_json,
    sha256_file,
    write_json,
    write_jsonl,
)
from trace_dataset.kb.store import HYDRATION_MARKER
from trace_dataset.quotes import PLACEHOLDER_RE, span_checksum
from trace_dataset.release.outdir import copy_bytes, staged_dir
from trace_dataset.release.records import check_dialogue, iter_numbered_jsonl, iter_numbered_lines
from trace_dataset.release.writer import RELEASE_META_FILE

log = logging.getLogger(__name__)

HYDRATION_META_FILE = HYDRATION_MARKER  # the knowledge-base loader knows a hydrated release by it
SHOW_IDS = 5  # how many ids an error message names
# Yelp writes `{"review_id":"...",` first on every line; this finds the id without parsing the JSON.
_REVIEW_ID_RE = re.compile(rb'"review_id"\s*:\s*"([^"\\]*)"')


@dataclass
class _Row:
    """One release dialogue as hydration needs it: the raw line (filled in place, so every other byte stays
    as released), its quote spans, and the parsed record only where the line cannot be filled in place."""

    line: str
    dialogue_id: str
    spans: list[dict[str, Any]]
    record: dict[str, Any] | None = None


@dataclass
class _Release:
    """A parsed release: rows per split, the review index, and the ids hydration must find."""

    root: Path
    rows: dict[str, list[_Row]]
    index: list[dict[str, Any]]
    tally: Any  # card.DialogueTally
    max_end: dict[str, int] = field(default_factory=dict)  # review id -> largest quote end offset

    @property
    def wanted(self) -> set[str]:
        return {r["review_id"] for r in self.index} | set(self.max_end)


def _read_release(root: Path) -> _Release:
    """The release's rows, review index and tally, every placeholder and span checked (a clear error naming
    file and line where the release is not one)."""
    from trace_dataset.release.card import DialogueTally

    if not root.is_dir():
        raise TraceDataError("release folder not found", path=root)
    missing = [str(split_file(root, s).relative_to(root)) for s in SPLITS if not split_file(root, s).exists()]
    missing += [
        f"{KB_DIRNAME}/{n}" for n in (POIS_FILE, REVIEW_INDEX_FILE) if not (root / KB_DIRNAME / n).exists()
    ]
    if missing:
        raise TraceDataError(
            f"not a Trace release: missing split or knowledge-base file(s) {missing}", path=root
        )
    index, quotable = _read_index(root / KB_DIRNAME / REVIEW_INDEX_FILE)
    release = _Release(root, {}, index, DialogueTally())
    seen: set[str] = set()
    for split in SPLITS:
        path = split_file(root, split)
        rows = []
        for lineno, line, d in iter_numbered_lines(path):
            check_dialogue(d, path=path, line=lineno)
            did = d["dialogue_id"]
            if did in seen:
                raise TraceDataError(f"duplicate dialogue_id {did!r}", path=path, line=lineno)
            seen.add(did)
            found = _placeholders(d, path, lineno)
            for span in d["quote_spans"]:
                _check_span(span, did, quotable, path, lineno)
                release.max_end[span["review_id"]] = max(
                    release.max_end.get(span["review_id"], 0), span["end"]
                )
            # In place only when every "[Q:" of the line belongs to one of the turns' placeholders.
            in_place = line.count("[Q:") == len(found)
            rows.append(_Row(line, did, d["quote_spans"], None if in_place else d))
            release.tally.add(split, d)
        release.rows[split] = rows
    return release


def _read_index(path: Path) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The review index's records, and per review id the characters a quote can reach (the knowledge
    base's text: the review's length, at most REVIEW_MAX_CHARS)."""
    index: list[dict[str, Any]] = []
    quotable: dict[str, int] = {}
    for lineno, rec in iter_numbered_jsonl(path):
        rid = rec.get("review_id")
        if not isinstance(rid, str) or not isinstance(rec.get("business_id"), str):
            raise TraceDataError(
                "review index record: expected string review_id and business_id", path=path, line=lineno
            )
        if rid in quotable:
            raise TraceDataError(f"duplicate review_id {rid!r} in the review index", path=path, line=lineno)
        index.append(rec)
        length = rec.get("length")
        quotable[rid] = min(length, REVIEW_MAX_CHARS) if type(length) is int else REVIEW_MAX_CHARS
    return index, quotable


def _placeholders(d: dict[str, Any], path: Path, lineno: int) -> list[int]:
    """The [Q:N] numbers of a dialogue's turns, in order; each quote span must have exactly one."""
    did, spans = d["dialogue_id"], d["quote_spans"]
    found = [int(m.group(1)) for t in d["turns"] for m in PLACEHOLDER_RE.finditer(t["text"])]
    if sorted(found) != list(range(1, len(spans) + 1)):
        extra = sorted(set(found) - set(range(1, len(spans) + 1)))
        raise TraceDataError(
            f"dialogue {did!r}: placeholder(s) {[f'[Q:{n}]' for n in extra]} have no quote span"
            if extra
            else f"dialogue {did!r}: placeholders {[f'[Q:{n}]' for n in found]} in the turns do not match its "
            f"{len(spans)} quote span(s); each span needs exactly one placeholder",
            path=path,
            line=lineno,
        )
    return found


def _check_span(span: dict[str, Any], did: str, quotable: dict[str, int], path: Path, lineno: int) -> None:
    """A quote span names an indexed review and lies within its quotable characters."""
    rid = span["review_id"]
    if rid not in quotable:
        raise TraceDataError(
            f"dialogue {did!r} quote {span['quote_id']}: unknown review id {rid!r} "
            f"(not in {KB_DIRNAME}/{REVIEW_INDEX_FILE})",
            path=path,
            line=lineno,
        )
    if span["end"] > quotable[rid]:
        raise TraceDataError(
            f"dialogue {did!r} quote {span['quote_id']}: span [{span['start']}:{span['end']}] lies past "
            f"the {quotable[rid]} quotable characters of review {rid!r} (its {KB_DIRNAME}/"
            f"{REVIEW_INDEX_FILE} length, at most {REVIEW_MAX_CHARS}): the release is corrupt, not built "
            "from another Yelp version; get a fresh copy of the release",
            path=path,
            line=lineno,
        )


def _review_bundle(path: Path):
    """The user's bundle via the Yelp reader. Hydration needs only the review file, so the review
    `.json`/`.json.gz` alone (or a folder holding just it) is accepted too."""
    from trace_dataset.yelp.reader import YelpBundle, open_bundle

    names = (YELP_REVIEW_FILE, YELP_REVIEW_FILE + ".gz")
    try:
        return open_bundle(path)
    except TraceDataError:
        review = (
            path
            if path.is_file() and path.name in names
            else next((path / n for n in names if path.is_dir() and (path / n).is_file()), None)
        )
        if review is None:
            raise
        log.info("no business file beside %s: reading the review file alone", review)
        return YelpBundle(review.parent, "folder", {"review": str(review)}, None)


def _scan_reviews(yelp_path: str | os.PathLike, wanted: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Stream the bundle's review file once; the parsed reviews whose id is wanted, and scan statistics."""
    from trace_dataset.yelp.reader import MalformedLog, parse_line

    bundle = _review_bundle(Path(yelp_path))
    label = bundle.label("review")
    malformed = MalformedLog()
    found: dict[str, Any] = {}
    n_lines = 0
    t0, c0 = time.perf_counter(), time.process_time()
    lines = tqdm(
        bundle.iter_lines("review"),
        desc="scan Yelp reviews",
        unit=" lines",
        unit_scale=True,
        mininterval=1.0,
        disable=None,
        leave=False,
    )
    for lineno, raw in lines:
        n_lines += 1
        m = _REVIEW_ID_RE.search(raw)
        if m is not None:
            rid = m.group(1).decode("utf-8", "replace")
            if rid not in wanted or rid in found:
                continue
        review = parse_line("review", raw, label, lineno, malformed)
        if review is not None and review.review_id in wanted and review.review_id not in found:
            found[review.review_id] = review
            if len(found) == len(wanted):
                break  # every referenced review is in hand; the rest of the file cannot change anything
    stats = {
        "bundle": str(bundle.path),
        "source": bundle.source,
        "lines_read": n_lines,
        "scan_seconds": round(time.perf_counter() - t0, 3),
        "scan_cpu_seconds": round(time.process_time() - c0, 3),
        "malformed_lines": malformed.total,
    }
    return found, stats


def _first(ids: Iterable[str]) -> list[str]:
    return sorted(ids)[:SHOW_IDS]


def hydrate_release(
    release_dir: str | os.PathLike,
    yelp_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    allow_partial: bool = False,
) -> dict[str, Any]:
    """Fill every `[Q:N]` of a release from the user's Yelp bundle into `out_dir`; returns the report.

    Without `allow_partial`, any referenced review missing from the bundle, any checksum mismatch and any
    review whose text length or business differs from the review index (another Yelp version) is an
    error naming counts and the first ids. With it, the affected quotes keep their `[Q:N]` placeholder,
    reviews absent from the bundle are left out of reviews.jsonl.gz, and the report counts both.
    """
    from trace_dataset.release.card import write_card

    root = Path(release_dir)
    t_start = time.perf_counter()
    release = _read_release(root)
    t_read = time.perf_counter()
    found, scan = _scan_reviews(yelp_path, release.wanted)
    t_scan = time.perf_counter()
    check = _verify(release, found)
    problems = check.problems()
    if problems and not allow_partial:
        raise TraceDataError(
            "cannot hydrate exactly: " + "; ".join(problems) + ". The bundle is probably another Yelp Open "
            "Dataset version than the one the release was built from. Use --allow-partial to hydrate what "
            "matches and leave the rest as visible [Q:N] placeholders.",
            path=Path(yelp_path),
        )
    out_dir = Path(out_dir)
    with staged_dir(out_dir, HYDRATION_META_FILE, protect=(root,)) as stage:
        counts, n_reviews = _write_hydrated(stage, release, found, check.fills)
        report: dict[str, Any] = {
            "release": str(root),
            "dialogues": counts,
            "quotes": check.quotes,
            "quotes_hydrated": check.quotes - check.unhydrated,
            "quotes_unhydrated": check.unhydrated,
            "partial": bool(problems),
            "referenced_reviews": len(release.wanted),
            "reviews_written": n_reviews,
            "missing_reviews": sorted(check.missing),
            "checksum_mismatches": dict(sorted(check.bad_checksum.items())),
            "version_mismatches": dict(sorted(check.version_mismatch.items())),
            "byte_identical": _compare(stage, root / RELEASE_META_FILE),
            "scan": {k: v for k, v in scan.items() if k in ("source", "lines_read", "malformed_lines")},
        }
        write_json(stage / HYDRATION_META_FILE, report)  # no timings on disk: same inputs, same bytes
        write_card(stage, tally=release.tally)
    t_end = time.perf_counter()
    report["scan"] = {k: v for k, v in scan.items() if k != "bundle"}
    report["timing"] = {
        "read_release_s": round(t_read - t_start, 3),
        "scan_s": round(t_scan - t_read, 3),
        "fill_and_write_s": round(t_end - t_scan, 3),
    }
    if problems:
        log.warning(
            "partial hydration: %d of %d quotes left as [Q:N]; %s",
            check.unhydrated,
            check.quotes,
            "; ".join(problems),
        )
    log.info(
        "hydrated %s into %s: %s dialogues, %d quotes, %d reviews",
        root,
        out_dir,
        counts,
        check.quotes,
        n_reviews,
    )
    return report


@dataclass
class _Check:
    """What the bundle gives: the span texts that verified (dialogue id -> quote id -> text), and what
    failed: referenced reviews not found, spans whose checksum fails (per review), reviews that differ from
    the index."""

    fills: dict[str, dict[int, str]]
    missing: set[str]
    bad_checksum: dict[str, int]
    version_mismatch: dict[str, str]
    quotes: int
    unhydrated: int

    def problems(self) -> list[str]:
        problems = []
        if self.missing:
            problems.append(
                f"{len(self.missing)} referenced review(s) not in the Yelp bundle (first: {_first(self.missing)})"
            )
        if self.bad_checksum:
            problems.append(
                f"{sum(self.bad_checksum.values())} quote checksum mismatch(es) in {len(self.bad_checksum)} "
                f"review(s) (first: {_first(self.bad_checksum)})"
            )
        if self.version_mismatch:
            first = _first(self.version_mismatch)
            problems.append(
                f"{len(self.version_mismatch)} review(s) differ from the review index (first: "
                + ", ".join(f"{r} ({self.version_mismatch[r]})" for r in first)
                + ")"
            )
        return problems


def _verify(release: _Release, found: dict[str, Any]) -> _Check:
    """Check the found reviews against the review index, then every span against its checksum."""
    version_mismatch: dict[str, str] = {}
    for rec in release.index:
        review = found.get(rec["review_id"])
        if review is None:
            continue
        if review.business_id != rec["business_id"]:
            version_mismatch[rec["review_id"]] = f"business {review.business_id!r} != {rec['business_id']!r}"
        elif isinstance(rec.get("length"), int) and len(review.text) != rec["length"]:
            version_mismatch[rec["review_id"]] = f"{len(review.text)} characters, index says {rec['length']}"
    check = _Check({}, release.wanted - set(found), {}, version_mismatch, 0, 0)
    for split in SPLITS:
        for row in release.rows[split]:
            spans = check.fills.setdefault(row.dialogue_id, {})
            for span in row.spans:
                check.quotes += 1
                review = found.get(span["review_id"])
                if review is None:
                    check.unhydrated += 1
                    continue
                text = review.text[span["start"] : span["end"]]
                if span["end"] > len(review.text) or span_checksum(text) != span["checksum"]:
                    check.bad_checksum[span["review_id"]] = check.bad_checksum.get(span["review_id"], 0) + 1
                    check.unhydrated += 1
                    continue
                spans[span["quote_id"]] = text
    return check


def _write_hydrated(
    stage: Path, release: _Release, found: dict[str, Any], fills: dict[str, dict[int, str]]
) -> tuple[dict[str, int], int]:
    """The hydrated split files and reviews.jsonl.gz, and the release's other files byte for byte; returns
    the dialogues per split and the reviews written. gzip compression dominates the write and zlib releases
    the GIL: one thread per output file (the bytes do not depend on it)."""
    root = release.root
    counts: dict[str, int] = {}
    (stage / KB_DIRNAME).mkdir(parents=True)
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        reviews_job = pool.submit(
            write_jsonl, stage / KB_DIRNAME / REVIEWS_FILE, _review_records(release.index, found)
        )
        split_jobs = {
            split: pool.submit(_write_rows, split_file(stage, split), release.rows[split], fills)
            for split in SPLITS
        }
        for split, job in split_jobs.items():
            counts[split], release.tally.split_bytes[split] = job.result()
        n_reviews = reviews_job.result()
    for name in (POIS_FILE, REVIEW_INDEX_FILE, KB_META_FILE):
        if (root / KB_DIRNAME / name).exists():
            copy_bytes(root / KB_DIRNAME / name, stage / KB_DIRNAME / name)
    for name in (CORPUS_META_FILE, RELEASE_META_FILE):
        if (root / name).exists():
            copy_bytes(root / name, stage / name)
    return counts, n_reviews


def _fill(dialogue: dict[str, Any], spans: dict[int, str]) -> dict[str, Any]:
    """The dialogue with every verified placeholder replaced by its span (key order unchanged)."""

    def sub(m: re.Match) -> str:
        return spans.get(int(m.group(1)), m.group(0))

    turns = [
        t if "[Q:" not in t["text"] else {**t, "text": PLACEHOLDER_RE.sub(sub, t["text"])}
        for t in dialogue["turns"]
    ]
    return {**dialogue, "turns": turns}


def _fill_line(line: str, spans: dict[int, str]) -> str:
    """Fill the placeholders of a raw JSON line: each span goes in JSON-escaped exactly as `io.dumps`
    writes it, so the line equals dumps(filled record) without re-serialising the record."""

    def sub(m: re.Match) -> str:
        text = spans.get(int(m.group(1)))
        return m.group(0) if text is None else json.dumps(text, ensure_ascii=False)[1:-1]

    return PLACEHOLDER_RE.sub(sub, line)


def _write_rows(path: Path, rows: list[_Row], fills: dict[str, dict[int, str]]) -> tuple[int, int]:
    """Write the hydrated split file; returns (dialogues, uncompressed bytes)."""
    n = size = 0
    with atomic_open(path, "w") as f:
        for row in rows:
            spans = fills[row.dialogue_id]
            if row.record is None:
                line = _fill_line(row.line, spans) if row.spans else row.line
            else:
                line = dumps(_fill(row.record, spans))
            f.write(line)
            f.write("\n")
            n += 1
            size += len(line.encode("utf-8")) + 1
    return n, size


def _review_records(index: list[dict[str, Any]], found: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """knowledge_base/reviews.jsonl.gz in the knowledge-base builder's format (schema.REVIEW_FEATURES),
    in review-index order; business, stars and date come from the index, the text from the bundle."""
    for rec in index:
        review = found.get(rec["review_id"])
        if review is None:
            continue
        yield {
            "review_id": rec["review_id"],
            "business_id": rec["business_id"],
            "stars": rec["stars"],
            "date": rec["date"],
            "text": review.text[:REVIEW_MAX_CHARS],
        }


def _compare(stage: Path, release_meta: Path) -> bool | None:
    """Whether the hydrated files hash to what the release recorded (None: the release recorded nothing)."""
    if not release_meta.exists():
        return None
    expected = read_json(release_meta).get("hydrated_sha256") or {}
    if not expected:
        return None
    differing = [
        rel for rel, sha in expected.items() if not (stage / rel).exists() or sha256_file(stage / rel) != sha
    ]
    if differing:
        log.warning("hydrated files differ from the corpus the release was made from: %s", differing)
    return not differing
