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

    index_path = root / KB_DIRNAME / REVIEW_INDEX_FILE
    index: list[dict[str, Any]] = []
    index_ids: set[str] = set()
    quotable: dict[str, int] = {}  # review id -> characters a quote can reach (the knowledge base's text)
    for lineno, rec in iter_numbered_jsonl(index_path):
        rid = rec.get("review_id")
        if not isinstance(rid, str) or not isinstance(rec.get("business_id"), str):
            raise TraceDataError(
                "review index record: expected string review_id and business_id", path=index_path, line=lineno
            )
        if rid in index_ids:
            raise TraceDataError(
                f"duplicate review_id {rid!r} in the review index", path=index_path, line=lineno
            )
        index_ids.add(rid)
        index.append(rec)
        length = rec.get("length")
        quotable[rid] = min(length, REVIEW_MAX_CHARS) if type(length) is int else REVIEW_MAX_CHARS

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
            spans = d["quote_spans"]
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
            for span in spans:
                rid = span["review_id"]
                if rid not in index_ids:
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
                release.max_end[rid] = max(release.max_end.get(rid, 0), span["end"])
            # In place only when every "[Q:" of the line belongs to one of the turns' placeholders.
            in_place = line.count("[Q:") == len(found)
            rows.append(_Row(line, did, spans, None if in_place else d))
            release.tally.add(split, d)
        release.rows[split] = rows
    return release


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

    # -- verify, per review then per span -----------------------------------------------------
    missing = release.wanted - set(found)
    version_mismatch: dict[str, str] = {}
    for rec in release.index:
        review = found.get(rec["review_id"])
        if review is None:
            continue
        if review.business_id != rec["business_id"]:
            version_mismatch[rec["review_id"]] = f"business {review.business_id!r} != {rec['business_id']!r}"
        elif isinstance(rec.get("length"), int) and len(review.text) != rec["length"]:
            version_mismatch[rec["review_id"]] = f"{len(review.text)} characters, index says {rec['length']}"
    fills: dict[str, dict[int, str]] = {}  # dialogue id -> quote id -> span text
    bad_checksum: dict[str, int] = {}  # review id -> spans that failed
    unhydrated = 0
    n_quotes = 0
    for split in SPLITS:
        for row in release.rows[split]:
            spans = fills.setdefault(row.dialogue_id, {})
            for span in row.spans:
                n_quotes += 1
                review = found.get(span["review_id"])
                if review is None:
                    unhydrated += 1
                    continue
                text = review.text[span["start"] : span["end"]]
                if span["end"] > len(review.text) or span_checksum(text) != span["checksum"]:
                    bad_checksum[span["review_id"]] = bad_checksum.get(span["review_id"], 0) + 1
                    unhydrated += 1
                    continue
                spans[span["quote_id"]] = text
    problems = []
    if missing:
        problems.append(
            f"{len(missing)} referenced review(s) not in the Yelp bundle (first: {_first(missing)})"
        )
    if bad_checksum:
        problems.append(
            f"{sum(bad_checksum.values())} quote checksum mismatch(es) in {len(bad_checksum)} review(s) "
            f"(first: {_first(bad_checksum)})"
        )
    if version_mismatch:
        first = _first(version_mismatch)
        problems.append(
            f"{len(version_mismatch)} review(s) differ from the review index (first: "
            + ", ".join(f"{r} ({version_mismatch[r]})" for r in first)
            + ")"
        )
    if problems and not allow_partial:
        raise TraceDataError(
            "cannot hydrate exactly: " + "; ".join(problems) + ". The bundle is probably another Yelp Open "
            "Dataset version than the one the release was built from. Use --allow-partial to hydrate what "
            "matches and leave the rest as visible [Q:N] placeholders.",
            path=Path(yelp_path),
        )

    # -- write ---------------------------------------------------------------------------------
    out_dir = Path(out_dir)
    counts: dict[str, int] = {}
    with staged_dir(out_dir, HYDRATION_META_FILE, protect=(root,)) as stage:
        # gzip compression dominates the write and zlib releases the GIL: one thread per output file
        # (the bytes do not depend on it).
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
        identical = _compare(stage, root / RELEASE_META_FILE)
        report: dict[str, Any] = {
            "release": str(root),
            "dialogues": counts,
            "quotes": n_quotes,
            "quotes_hydrated": n_quotes - unhydrated,
            "quotes_unhydrated": unhydrated,
            "partial": bool(problems),
            "referenced_reviews": len(release.wanted),
            "reviews_written": n_reviews,
            "missing_reviews": sorted(missing),
            "checksum_mismatches": dict(sorted(bad_checksum.items())),
            "version_mismatches": dict(sorted(version_mismatch.items())),
            "byte_identical": identical,
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
            "partial hydration: %d of %d quotes left as [Q:N]; %s", unhydrated, n_quotes, "; ".join(problems)
        )
    log.info(
        "hydrated %s into %s: %s dialogues, %d quotes, %d reviews", root, out_dir, counts, n_quotes, n_reviews
    )
    return report


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
