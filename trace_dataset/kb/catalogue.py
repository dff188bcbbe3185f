"""Catalogues: knowledge bases of any slice of a Yelp bundle (cities, POI types, a category), not the balanced
24-cell Trace KB (`build.py`). `trace-bench kb build --cities ... --poi-types ... [--category ...] [--all]`.

What qualifies: a business in one of `cities` (canonical Trace spelling for the 8 Trace cities, Yelp's
otherwise; all cities when none are given), whose POI type (`kb.classify`) is one of `poi_types`, with
coordinates and Yelp `review_count >= min_reviews`, and, with `category`, one of whose Yelp categories
contains that text (case-insensitive: "food" matches Food, Fast Food, Seafood, Food Trucks). With `category`,
a matching business outside the three tourism types (a cheese shop, a grocery) counts as the first of
`poi_types` (SnipRec's catalogue is "Philadelphia businesses with 'food' in their categories").

Every qualifying POI with at least `min_reviews` reviews in the review file is kept (`per_cell=None`), or
the first `per_cell` of each city x type cell in the stratified order of the balanced build; no cell has to
be full. Every review of a kept POI is kept (or the `max_reviews_per_poi` with the smallest seeded hash),
text truncated to 500 characters as in the balanced KB. Beside the usual files, `review_votes.jsonl.gz`
keeps per review the reviewer id, the useful votes and the reviewer's number of reviews in the whole bundle
(what SnipRec's seeding selects on). kb.json says `"kind": "catalogue"` and records the parameters.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_dataset.constants import (
    KB_META_FILE,
    POI_TYPES,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
    REVIEWS_FILE,
    SCHEMA_VERSION,
    SEED,
)
from trace_dataset.io import TraceDataError, staged_dir
from trace_dataset.kb.build import (
    BUILDER_VERSION,
    KB_MARKERS,
    _check_out_dir,
    _poi_record,
    review_records,
    stratified_order,
    write_kb_files,
)
from trace_dataset.kb.classify import classify
from trace_dataset.kb.reviews import review_bar
from trace_dataset.yelp.reader import (
    MalformedLog,
    YelpBundle,
    YelpBusiness,
    canonical_city,
    open_bundle,
    parse_line,
)

log = logging.getLogger(__name__)

VOTES_FILE = "review_votes.jsonl.gz"
CATALOGUE_KIND = "catalogue"
_BID = b'"business_id":"'
_UID = b'"user_id":"'


@dataclass(frozen=True)
class CatalogueSpec:
    cities: tuple[str, ...] = ()  # empty: every city
    poi_types: tuple[str, ...] = POI_TYPES
    category: str | None = None
    min_reviews: int = 10
    per_cell: int | None = None  # None: every qualifying POI
    max_reviews_per_poi: int | None = None  # None: every review

    def __post_init__(self) -> None:
        bad = [t for t in self.poi_types if t not in POI_TYPES]
        if bad or not self.poi_types:
            raise ValueError(f"unknown POI type(s) {bad}; expected some of {POI_TYPES}")
        if self.min_reviews < 1:
            raise ValueError(f"min_reviews must be >= 1, got {self.min_reviews}")
        if self.per_cell is not None and self.per_cell < 1:
            raise ValueError(f"per_cell must be >= 1 (or None for every POI), got {self.per_cell}")
        if self.max_reviews_per_poi is not None and self.max_reviews_per_poi < self.min_reviews:
            raise ValueError(
                f"max_reviews_per_poi ({self.max_reviews_per_poi}) must be >= min_reviews ({self.min_reviews})"
            )
        if self.category is not None and not self.category.strip():
            raise ValueError("category must be a non-empty text")
        object.__setattr__(self, "cities", tuple(canonical_city(c) for c in self.cities))

    def poi_type(self, b: YelpBusiness) -> str | None:
        """The type `b` enters the catalogue with, or None when it does not qualify (module docstring)."""
        if self.cities and b.city not in self.cities:
            return None
        if b.latitude is None or b.longitude is None or b.review_count < self.min_reviews:
            return None
        kind = classify(b.categories)
        if self.category is not None:
            needle = self.category.lower()
            if not any(needle in c.lower() for c in b.categories):
                return None
            if kind is None:
                kind = self.poi_types[0]
        return kind if kind in self.poi_types else None


def _peek(raw: bytes, key: bytes) -> bytes | None:
    i = raw.find(key)
    if i < 0:
        return None
    j = i + len(key)
    value = raw[j : raw.find(b'"', j)]
    return None if b"\\" in value else value


def _hash(seed: int, review_id: str) -> int:
    key = hashlib.sha256(f"trace-catalogue:{seed}".encode()).digest()[:32]
    return int.from_bytes(hashlib.blake2b(review_id.encode(), digest_size=8, key=key).digest(), "big")


def catalogue_stats(pois: Sequence[dict[str, Any]], n_reviews: int, n_users: int) -> dict[str, Any]:
    cells: Counter = Counter((p["city"], p["poi_type"]) for p in pois)
    return {
        "pois": len(pois),
        "reviews": n_reviews,
        "reviewers": n_users,
        "avg_reviews_per_poi": round(n_reviews / len(pois), 4) if pois else 0.0,
        "avg_stars": round(sum(p["stars"] for p in pois) / len(pois), 4) if pois else 0.0,
        "cells": {f"{c} x {t}": k for (c, t), k in sorted(cells.items())},
        "unique_categories": len({c for p in pois for c in p["categories"]}),
    }


def format_stats(meta: dict[str, Any]) -> str:
    s = meta["stats"]
    lines = [
        f"Catalogue (source: {meta['source']}, kb_version {meta['kb_version'][:12]})",
        "",
        f"POIs        {s['pois']:,}",
        f"Reviews     {s['reviews']:,} (avg. {s['avg_reviews_per_poi']:.1f}/POI)",
        f"Reviewers   {s['reviewers']:,}",
        f"Avg. stars  {s['avg_stars']:.2f}",
        "",
        "POIs per cell:",
    ]
    lines += [f"  {cell:32s} {k:6,}" for cell, k in s["cells"].items()]
    return "\n".join(lines)


def build_catalogue(
    yelp_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    spec: CatalogueSpec,
    seed: int = SEED,
    *,
    strict: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Build the catalogue `spec` describes from a Yelp bundle into `out_dir`; returns kb.json's content."""
    bundle = open_bundle(yelp_path)
    out_dir = _check_out_dir(out_dir, bundle.path)
    malformed = MalformedLog(strict=strict)
    chosen, n_business = _qualifying(bundle, spec, malformed)
    log.info("catalogue: %d qualifying businesses; streaming reviews", len(chosen))
    reviews, user_counts, n_lines = _collect_reviews(bundle, chosen, malformed, progress)
    tables = _catalogue_rows(chosen, reviews, user_counts, spec, seed)
    pois, index_rows = tables[POIS_FILE], tables[REVIEW_INDEX_FILE]
    if not pois:
        raise TraceDataError(
            f"no qualifying business has {spec.min_reviews} reviews in the review file",
            path=bundle.label("review"),
        )
    head: dict[str, Any] = {
        "source": bundle.source,
        "kind": CATALOGUE_KIND,
        "schema_version": SCHEMA_VERSION,
        "builder_version": BUILDER_VERSION,
        "parameters": {
            **asdict(spec),
            "cities": list(spec.cities),
            "poi_types": list(spec.poi_types),
            "seed": seed,
            "max_review_chars": REVIEW_MAX_CHARS,
        },
        "input": {
            "container": bundle.container,
            "businesses": n_business,
            "qualifying_businesses": len(chosen),
            "review_lines": n_lines,
            "malformed_lines": malformed.total,
            "synthetic_manifest": bundle.manifest,
        },
        "stats": catalogue_stats(pois, len(index_rows), len({v["user_id"] for v in tables[VOTES_FILE]})),
    }
    with staged_dir(out_dir, KB_MARKERS, what="catalogue") as stage:
        meta = write_kb_files(stage, tables, head)
    log.info(
        "catalogue %s: %d POIs, %d reviews -> %s",
        meta["kb_version"][:12],
        len(pois),
        len(index_rows),
        out_dir,
    )
    return meta


def _qualifying(
    bundle: YelpBundle, spec: CatalogueSpec, malformed: MalformedLog
) -> tuple[dict[str, tuple[YelpBusiness, str]], int]:
    """Every business that qualifies (business id -> the business and its POI type; the first line of a
    repeated id wins) and the number of well-formed business lines."""
    label = bundle.label("business")
    chosen: dict[str, tuple[YelpBusiness, str]] = {}
    n_business = 0
    for lineno, raw in bundle.iter_lines("business"):
        b = parse_line("business", raw, label, lineno, malformed)
        if b is None:
            continue
        n_business += 1
        kind = spec.poi_type(b)
        if kind is not None and b.business_id not in chosen:
            chosen[b.business_id] = (b, kind)
    if not chosen:
        raise TraceDataError(f"no business qualifies for the catalogue {asdict(spec)}", path=bundle.path)
    return chosen, n_business


# one review of a chosen POI: (date, review_id, stars, text[:500], original length, user_id, useful votes)
_Row = tuple[str, str, float, str, int, str, int]


def _collect_reviews(
    bundle: YelpBundle, chosen: dict[str, Any], malformed: MalformedLog, progress: bool
) -> tuple[dict[str, list[_Row]], Counter, int]:
    """One pass over the review file: every review of a chosen POI, the number of reviews of every user in
    the whole file (what SnipRec's seeding selects on), and the number of non-blank lines. A line is
    parsed only when it is a chosen POI's or its ids cannot be read off its bytes."""
    reviews: dict[str, list[_Row]] = defaultdict(list)
    user_counts: Counter = Counter()
    rlabel = bundle.label("review")
    n_lines = 0
    bar = review_bar(progress)
    with bundle.open("review") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            n_lines += 1
            if bar is not None and not n_lines & 0xFFFF:
                bar.update(0x10000)
            uid = _peek(raw, _UID)
            bid = _peek(raw, _BID)
            if bid is not None and uid is not None:
                user_counts[uid] += 1
                if bid.decode("utf-8", "replace") not in chosen:
                    continue
            r = parse_line("review", raw, rlabel, lineno, malformed)
            if r is None:
                continue
            if uid is None or bid is None:
                user_counts[r.user_id.encode()] += 1
            if r.business_id in chosen:
                row = (
                    r.date,
                    r.review_id,
                    r.stars,
                    r.text[:REVIEW_MAX_CHARS],
                    len(r.text),
                    r.user_id,
                    r.useful,
                )
                reviews[r.business_id].append(row)
    if bar is not None:
        bar.close()
    if n_lines == 0:
        raise TraceDataError("empty file: expected JSON lines of Yelp review records", path=rlabel)
    return reviews, user_counts, n_lines


def _catalogue_rows(
    chosen: dict[str, tuple[YelpBusiness, str]],
    reviews: dict[str, list[_Row]],
    user_counts: Counter,
    spec: CatalogueSpec,
    seed: int,
) -> dict[str, list[dict[str, Any]]]:
    """The catalogue's tables (file name -> rows): the POIs with `min_reviews` reviews, cell by cell in
    (city, type) order, each cell in the stratified order of the balanced build (its first `per_cell`);
    each POI's reviews (its `max_reviews_per_poi` smallest seeded hashes) by date, then id."""
    by_cell: dict[tuple[str, str], list[YelpBusiness]] = defaultdict(list)
    for business_id, (b, kind) in chosen.items():
        if len(reviews.get(business_id, ())) >= spec.min_reviews:
            by_cell[(b.city, kind)].append(b)
    pois, index_rows, review_rows, vote_rows = [], [], [], []
    for city, kind in sorted(by_cell):
        order = stratified_order(by_cell[(city, kind)], kind, random.Random(f"trace-kb:{seed}:{city}:{kind}"))
        for b in order[: spec.per_cell] if spec.per_cell else order:
            rows = reviews[b.business_id]
            if spec.max_reviews_per_poi is not None and len(rows) > spec.max_reviews_per_poi:
                rows = sorted(rows, key=lambda r: (_hash(seed, r[1]), r[1]))[: spec.max_reviews_per_poi]
            rows = sorted(rows, key=lambda r: (r[0], r[1]))
            pois.append(_poi_record(b, kind, [r[1] for r in rows]))
            for date, rid, stars, text, length, user, useful in rows:
                index_row, review_row = review_records(b.business_id, rid, stars, date, text, length)
                index_rows.append(index_row)
                review_rows.append(review_row)
                vote_rows.append(
                    {
                        "review_id": rid,
                        "user_id": user,
                        "useful": useful,
                        "user_reviews": user_counts.get(user.encode(), 0),
                    }
                )
    return {POIS_FILE: pois, REVIEW_INDEX_FILE: index_rows, REVIEWS_FILE: review_rows, VOTES_FILE: vote_rows}


def catalogue_meta(path: str | os.PathLike) -> dict[str, Any] | None:
    """kb.json of a catalogue folder (or of a data directory's knowledge_base/), None when it is no catalogue."""
    from trace_dataset.constants import KB_DIRNAME
    from trace_dataset.io import read_json

    root = Path(path)
    if not (root / KB_META_FILE).exists() and (root / KB_DIRNAME / KB_META_FILE).exists():
        root = root / KB_DIRNAME
    if not (root / KB_META_FILE).exists():
        return None
    meta = read_json(root / KB_META_FILE)
    return meta if isinstance(meta, dict) and meta.get("kind") == CATALOGUE_KIND else None


# ---------------------------------------------------------------------------------------------------
# `trace-bench kb build` options (the hook kb/cli.py calls)
# ---------------------------------------------------------------------------------------------------
def add_catalogue_arguments(parser: Any) -> None:
    g = parser.add_argument_group(
        "catalogue (any slice of the bundle instead of the balanced 24 cells; no cell has to be full)"
    )
    g.add_argument(
        "--cities",
        default=None,
        metavar="C1,C2",
        help="only these cities (comma-separated; Yelp spelling or the Trace name); any Yelp city works",
    )
    g.add_argument(
        "--poi-types",
        default=None,
        metavar="T1,T2",
        help=f"only these POI types (comma-separated, of {', '.join(POI_TYPES)})",
    )
    g.add_argument(
        "--category",
        default=None,
        metavar="TEXT",
        help="only businesses with a Yelp category containing TEXT (case-insensitive), e.g. food",
    )
    g.add_argument(
        "--all", action="store_true", help="every qualifying POI instead of --per-cell per city x type"
    )
    g.add_argument(
        "--max-reviews-per-poi",
        type=number_in(int, 1),
        default=None,
        help="keep at most this many reviews (default: all)",
    )


def catalogue_requested(args: Any) -> bool:
    return bool(args.cities or args.poi_types or args.category or args.all or args.max_reviews_per_poi)


def build_from_args(args: Any) -> int:
    """`kb build` with catalogue options: build, print the summary (UsageError on bad options)."""
    import sys

    def items(text: str | None) -> tuple[str, ...]:
        return tuple(x.strip() for x in (text or "").split(",") if x.strip())

    try:
        spec = CatalogueSpec(
            cities=items(args.cities),
            poi_types=items(args.poi_types) or POI_TYPES,
            category=args.category,
            min_reviews=args.min_reviews,
            per_cell=None if args.all else args.per_cell,
            max_reviews_per_poi=args.max_reviews_per_poi,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    meta = build_catalogue(
        args.yelp, args.out, spec, seed=args.seed, strict=args.strict, progress=sys.stderr.isatty()
    )
    print(format_stats(meta))
    print(f"\ncatalogue written to {args.out} (kb_version {meta['kb_version'][:12]})")
    return 0
