"""Build the balanced Trace knowledge base (§2.1, Table 3, App. D) from a Yelp bundle.

1. Businesses: classify each by its categories (`kb.classify`), keep the 8 Trace cities, coordinates
   present and Yelp `review_count >= min_reviews`. These are the *candidates*.
2. Order each city x type cell by stratified rating/category sampling (seed 42): candidates are grouped in
   strata (rating bucket x first specific category), each stratum is shuffled, and the strata are
   interleaved systematically, so that every prefix of the order is a proportional stratified sample.
3. Stream the review file ONCE. A cheap byte peek at `business_id` skips reviews of non-candidates without
   parsing them; every candidate's reviews are counted; the first `TRACK_FACTOR x per_cell` candidates of
   each cell keep a bounded heap of their `RESERVOIR` reviews with the smallest keyed hash of `review_id`
   (a seeded sample that does not depend on file order). Memory is bounded by cells x tracked x RESERVOIR,
   independent of the size of the review file. Text is kept truncated to 500 characters plus its original
   length.
4. Each cell takes the first `per_cell` candidates of its order that have at least `min_reviews` reviews in
   the file. (If that reaches past the tracked prefix, a second pass over the review file collects those
   few POIs' reviews; the result is identical, only slower.)
5. Review selection: the knowledge base keeps round(POIs x 34,208 / 2,400) reviews in total, the paper's
   14.25 per POI. Each POI keeps min(available, cap) reviews, with the largest integer cap that does not
   exceed that total, and the remainder is given as one extra review to POIs chosen by seeded hash.
6. Write pois.jsonl.gz, review_index.jsonl.gz, reviews.jsonl.gz and, last, kb.json (source, parameters,
   Table 3 counts, file SHA256s and kb_version = SHA256 over them) into a hidden staging folder beside the
   output, and swap it in whole (`trace_dataset.io.staged_dir`): a killed build leaves the previous knowledge
   base untouched, never a mix of old and new files, and a rerun removes the staging folder it left.

Steps 3 and 5 (the streaming pass and the review quotas) are in `trace_dataset.kb.reviews`.
"""

from __future__ import annotations

import heapq
import logging
import os
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    CITY_NAMES,
    KB_META_FILE,
    KB_MIN_REVIEWS,
    KB_PER_CELL,
    KB_TARGET_REVIEWS_PER_POI,
    POI_TYPES,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
    REVIEWS_FILE,
    SCHEMA_VERSION,
    SEED,
)
from trace_dataset.io import (
    TraceDataError,
    check_output_dir,
    sha256_file,
    sha256_text,
    staged_dir,
    write_json,
    write_jsonl,
)
from trace_dataset.kb.classify import classify, rating_bucket, stratum_category
from trace_dataset.kb.reviews import RESERVOIR, IdHasher, review_quotas, stream_reviews
from trace_dataset.yelp.reader import (
    MalformedLog,
    YelpBundle,
    YelpBusiness,
    open_bundle,
    parse_line,
)

log = logging.getLogger(__name__)

BUILDER_VERSION = "1"
TRACK_FACTOR = 2  # candidates per cell tracked while streaming: TRACK_FACTOR x per_cell (+ TRACK_EXTRA)
TRACK_EXTRA = 20

Cell = tuple[str, str]  # (city, poi_type)
# an existing output folder is replaced only when it holds one of these (an earlier knowledge base)
KB_MARKERS: tuple[str, ...] = (KB_META_FILE, POIS_FILE)


# ---------------------------------------------------------------------------------------------------
# 1-2. candidates and the stratified order of each cell
# ---------------------------------------------------------------------------------------------------
def stratified_order(businesses: list[YelpBusiness], poi_type: str, rng: random.Random) -> list[YelpBusiness]:
    """All of a cell's businesses in an order whose every prefix is a proportional stratified sample.

    Strata: (rating bucket, stratum category). Each stratum (sorted by id, then shuffled) spreads its
    members evenly over [0, 1) with a random phase: member j of a stratum of size s sits at (j + u) / s.
    Sorting by that position interleaves the strata in proportion to their sizes.
    """
    strata: dict[tuple[str, str], list[YelpBusiness]] = defaultdict(list)
    for b in sorted(businesses, key=lambda b: b.business_id):
        strata[(rating_bucket(b.stars), stratum_category(b.categories, poi_type))].append(b)
    keyed: list[tuple[float, float, str, YelpBusiness]] = []
    for key in sorted(strata):
        members = strata[key]
        rng.shuffle(members)
        phase = rng.random()
        tie = rng.random()
        s = len(members)
        for j, b in enumerate(members):
            keyed.append(((j + phase) / s, tie, b.business_id, b))
    keyed.sort(key=lambda t: t[:3])
    return [t[3] for t in keyed]


def collect_candidates(
    bundle: YelpBundle, *, min_reviews: int, seed: int, malformed: MalformedLog
) -> tuple[dict[Cell, list[YelpBusiness]], dict[str, Any]]:
    """Candidates of every cell in stratified order, and counts of what was dropped and why."""
    by_cell: dict[Cell, list[YelpBusiness]] = defaultdict(list)
    seen: set[str] = set()
    dropped: Counter = Counter()
    n = 0
    label = bundle.label("business")
    for lineno, raw in bundle.iter_lines("business"):
        b = parse_line("business", raw, label, lineno, malformed)
        if b is None:
            continue
        n += 1
        if b.business_id in seen:
            malformed.add(label, lineno, f"duplicate business_id {b.business_id!r}")
            continue
        seen.add(b.business_id)
        poi_type = classify(b.categories)
        if poi_type is None:
            dropped["not_tourism"] += 1
        elif not b.in_trace_city:
            dropped["other_city"] += 1
        elif b.latitude is None or b.longitude is None:
            dropped["no_coordinates"] += 1
        elif b.review_count < min_reviews:
            dropped["too_few_reviews_on_yelp"] += 1
        else:
            by_cell[(b.city, poi_type)].append(b)
    ordered = {}
    for city in CITY_NAMES:
        for poi_type in POI_TYPES:
            rng = random.Random(f"trace-kb:{seed}:{city}:{poi_type}")
            ordered[(city, poi_type)] = stratified_order(by_cell.get((city, poi_type), []), poi_type, rng)
    info = {
        "businesses": n,
        "candidates": sum(len(v) for v in ordered.values()),
        "dropped": dict(sorted(dropped.items())),
    }
    return ordered, info


# ---------------------------------------------------------------------------------------------------
# Table 3 statistics
# ---------------------------------------------------------------------------------------------------
def table3_stats(pois: list[dict[str, Any]], n_truncated: int) -> dict[str, Any]:
    n = len(pois)
    n_reviews = sum(len(p["review_ids"]) for p in pois)
    per_type = Counter(p["poi_type"] for p in pois)
    per_city = Counter(p["city"] for p in pois)
    cells: dict[str, dict[str, int]] = {c: {t: 0 for t in POI_TYPES} for c in CITY_NAMES}
    for p in pois:
        cells[p["city"]][p["poi_type"]] += 1
    categories = {c for p in pois for c in p["categories"]}
    prices = [p["price"] for p in pois if p["price"] is not None]
    price_types = sorted({p["poi_type"] for p in pois if p["price"] is not None}, key=POI_TYPES.index)
    per_poi = [len(p["review_ids"]) for p in pois]
    return {
        "pois": n,
        "pois_per_type": {t: per_type.get(t, 0) for t in POI_TYPES},
        "pois_per_city": {c: per_city.get(c, 0) for c in CITY_NAMES},
        "pois_per_cell": cells,
        "reviews": n_reviews,
        "avg_reviews_per_poi": round(n_reviews / n, 4) if n else 0.0,
        "min_reviews_per_poi": min(per_poi, default=0),
        "max_reviews_per_poi": max(per_poi, default=0),
        "reviews_truncated": n_truncated,
        "avg_stars": round(sum(p["stars"] for p in pois) / n, 4) if n else 0.0,
        "unique_categories": len(categories),
        "cities": sum(1 for c in CITY_NAMES if per_city.get(c)),
        "price_range": {
            "min": min(prices, default=None),
            "max": max(prices, default=None),
            "label": f"{'$' * min(prices)}–{'$' * max(prices)}" if prices else "",
            "pois_with_price": len(prices),
            "types_with_price": price_types,
        },
    }


def kb_version(files: dict[str, str]) -> str:
    """SHA256 over the data files' SHA256s (name order): changes iff any knowledge-base file changes."""
    return sha256_text("".join(f"{name}\t{digest}\n" for name, digest in sorted(files.items())))


# ---------------------------------------------------------------------------------------------------
# The whole build
# ---------------------------------------------------------------------------------------------------
def _poi_record(b: YelpBusiness, poi_type: str, review_ids: list[str]) -> dict[str, Any]:
    """A POI line, fields in schema.POI_FEATURES order."""
    return {
        "business_id": b.business_id,
        "name": b.name,
        "address": b.address,
        "city": b.city,
        "state": b.state,
        "latitude": b.latitude,
        "longitude": b.longitude,
        "categories": list(b.categories),
        "stars": b.stars,
        "review_count": b.review_count,
        "price": b.price,
        "attributes": b.attributes,
        "poi_type": poi_type,
        "review_ids": review_ids,
    }


def review_records(
    business_id: str, review_id: str, stars: float, date: str, text: str, length: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One review's two KB rows: its review_index.jsonl row (the length, no text) and its reviews.jsonl row."""
    head = {"review_id": review_id, "business_id": business_id, "stars": stars, "date": date}
    return {**head, "length": length}, {**head, "text": text}


def _usable(bid: str, counts: Counter, heaps: dict[str, list], min_reviews: int) -> bool:
    """Enough reviews: by count, and (for POIs whose reviews were collected) by well-formed reviews held."""
    if counts[bid] < min_reviews:
        return False
    heap = heaps.get(bid)
    return heap is None or len(heap) >= min_reviews


def _shortfall_error(short: dict[Cell, int], per_cell: int, path: Path) -> TraceDataError:
    lines = [
        f"  {city} x {poi_type}: {have} of {per_cell} (short by {per_cell - have})"
        for (city, poi_type), have in short.items()
    ]
    feasible = min(short.values())
    hint = f"lower --per-cell to at most {feasible}" if feasible > 0 else "use a bigger bundle"
    hint += (
        ", or build a catalogue of only the cells you need, which need not be full (trace-bench kb build "
        "--cities CITY --poi-types TYPE [--all]; trace_dataset.kb.catalogue)"
    )
    return TraceDataError(
        f"bundle too small for {per_cell} POIs per city x type; {len(short)} cell(s) are short "
        f"(POIs with enough reviews):\n" + "\n".join(lines) + f"\n{hint}",
        path=path,
    )


def build_kb(
    yelp_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    per_cell: int = KB_PER_CELL,
    min_reviews: int = KB_MIN_REVIEWS,
    seed: int = SEED,
    *,
    strict: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Build the knowledge base from a Yelp bundle into `out_dir`; returns the kb.json content."""
    if per_cell < 1:
        raise ValueError(f"per_cell must be >= 1, got {per_cell}")
    if not 1 <= min_reviews <= RESERVOIR:
        raise ValueError(f"min_reviews must be in 1..{RESERVOIR}, got {min_reviews}")
    bundle = open_bundle(yelp_path)
    out_dir = _check_out_dir(out_dir, bundle.path)
    malformed = MalformedLog(strict=strict)
    log.info("reading businesses of %s", bundle)
    ordered, business_info = collect_candidates(
        bundle, min_reviews=min_reviews, seed=seed, malformed=malformed
    )

    candidates = {b.business_id for cell in ordered.values() for b in cell}
    track_n = TRACK_FACTOR * per_cell + TRACK_EXTRA
    tracked = {b.business_id for cell in ordered.values() for b in cell[:track_n]}
    hasher = IdHasher(seed, "review")
    log.info("streaming reviews: %d candidates, %d tracked", len(candidates), len(tracked))
    counts, heaps, n_lines = stream_reviews(bundle, candidates, tracked, hasher, malformed, progress=progress)
    selected = _select(bundle, ordered, counts, heaps, hasher, per_cell, min_reviews)

    available = {
        b.business_id: min(counts[b.business_id], len(heaps[b.business_id]))
        for chosen in selected.values()
        for b in chosen
    }
    n_pois = len(available)
    target_total = round(n_pois * KB_TARGET_REVIEWS_PER_POI)
    quotas, cap = review_quotas(available, min_reviews, target_total, IdHasher(seed, "extra"))
    pois, index_rows, review_rows, n_truncated = _kb_rows(selected, heaps, quotas)
    heaps.clear()

    head: dict[str, Any] = {
        "source": bundle.source,
        "schema_version": SCHEMA_VERSION,
        "builder_version": BUILDER_VERSION,
        "parameters": {
            "per_cell": per_cell,
            "min_reviews": min_reviews,
            "seed": seed,
            "target_reviews_per_poi": round(KB_TARGET_REVIEWS_PER_POI, 4),
            "target_reviews": target_total,
            "review_cap": cap,
            "reservoir": RESERVOIR,
            "max_review_chars": REVIEW_MAX_CHARS,
        },
        "input": {
            "container": bundle.container,
            **business_info,
            "review_lines": n_lines,
            "candidate_reviews": sum(counts.values()),
            "malformed_lines": malformed.total,
            "synthetic_manifest": bundle.manifest,
        },
        "stats": table3_stats(pois, n_truncated),
    }
    tables = {POIS_FILE: pois, REVIEW_INDEX_FILE: index_rows, REVIEWS_FILE: review_rows}
    with staged_dir(out_dir, KB_MARKERS, what="knowledge base") as stage:
        meta = write_kb_files(stage, tables, head)
    log.info(
        "knowledge base %s: %d POIs, %d reviews -> %s",
        meta["kb_version"][:12],
        n_pois,
        len(index_rows),
        out_dir,
    )
    return meta


def _select(
    bundle: YelpBundle,
    ordered: dict[Cell, list[YelpBusiness]],
    counts: Counter,
    heaps: dict[str, list],
    hasher: IdHasher,
    per_cell: int,
    min_reviews: int,
) -> dict[Cell, list[YelpBusiness]]:
    """Step 4: the first `per_cell` usable candidates of each cell's order. Where that reaches past the
    tracked prefix, another pass over the reviews collects those POIs' reviews (into `counts`, `heaps`)
    and the selection is made again, until every selected POI's reviews are in hand."""
    while True:
        selected: dict[Cell, list[YelpBusiness]] = {}
        short: dict[Cell, int] = {}
        for cell, order in ordered.items():
            chosen = [b for b in order if _usable(b.business_id, counts, heaps, min_reviews)][:per_cell]
            if len(chosen) < per_cell:
                short[cell] = len(chosen)
            selected[cell] = chosen
        if short:
            raise _shortfall_error(short, per_cell, bundle.path)
        needed = {b.business_id for chosen in selected.values() for b in chosen if b.business_id not in heaps}
        if not needed:
            return selected
        # rare: selection reached past the tracked prefix (many candidates without reviews in the file)
        log.warning(
            "%d selected POIs lie past the tracked prefix: another pass over the reviews", len(needed)
        )
        recount, more, _ = stream_reviews(bundle, needed, needed, hasher, MalformedLog())
        heaps.update(more)
        for bid in needed:
            counts[bid] = recount[bid]


def _kb_rows(
    selected: dict[Cell, list[YelpBusiness]], heaps: dict[str, list], quotas: dict[str, int]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], int]:
    """Step 5's rows, cell by cell in city x type order: (POI rows, review-index rows, review rows, reviews
    truncated). Each POI keeps its quota of smallest-hash reviews, listed by date, then id."""
    pois: list[dict[str, Any]] = []
    index_rows: list[dict[str, Any]] = []
    review_rows: list[dict[str, Any]] = []
    n_truncated = 0
    for city in CITY_NAMES:
        for poi_type in POI_TYPES:
            for b in selected[(city, poi_type)]:
                keep = heapq.nlargest(quotas[b.business_id], heaps[b.business_id])  # smallest hashes
                keep.sort(key=lambda e: (e[3], e[1]))  # by date, then id
                pois.append(_poi_record(b, poi_type, [e[1] for e in keep]))
                for _, rid, stars, date, text, length in keep:
                    index_row, review_row = review_records(b.business_id, rid, stars, date, text, length)
                    index_rows.append(index_row)
                    review_rows.append(review_row)
                    n_truncated += length > REVIEW_MAX_CHARS
    return pois, index_rows, review_rows, n_truncated


def write_kb_files(
    stage: Path, tables: dict[str, list[dict[str, Any]]], head: dict[str, Any]
) -> dict[str, Any]:
    """Write each table of a knowledge base (or catalogue) as JSON lines, then kb.json: `head`, the files'
    SHA-256s and kb_version. kb.json is written last: its presence marks a complete knowledge base."""
    for name, rows in tables.items():
        write_jsonl(stage / name, rows)
    files = {name: sha256_file(stage / name) for name in tables}
    meta = {**head, "files": files, "kb_version": kb_version(files)}
    write_json(stage / KB_META_FILE, meta)
    return meta


def _check_out_dir(out_dir: str | os.PathLike, bundle_path: Path) -> Path:
    """Refuse, before any work, an output that is a file, unwritable, a non-empty folder that is not a
    knowledge base, or a folder holding the Yelp bundle (the swap would delete it)."""
    out_dir = Path(out_dir).absolute()
    source = Path(bundle_path).absolute()
    if source == out_dir or source.is_relative_to(out_dir):
        raise TraceDataError(
            f"output folder holds the Yelp bundle {source}; choose a separate folder", path=out_dir
        )
    return check_output_dir(out_dir, KB_MARKERS, what="knowledge base")
