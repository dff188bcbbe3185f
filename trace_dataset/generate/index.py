"""Per-POI review evidence and quotable spans, and per-cell constraint bitsets: what stages 2-4 look up.

Built once per knowledge base (in the parent process before workers fork), so generating a dialogue is
set arithmetic on Python ints plus string formatting.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from trace_dataset.constants import CANDIDATES_PER_DIALOGUE, CITY_LANDMARKS
from trace_dataset.generate.copyguard import ReviewNgrams
from trace_dataset.generate.preferences.constraints import (
    GENERIC_CATEGORIES,
    LOCATION_RADII_KM,
    TYPE_VALUES,
    Constraint,
    evidence_mentions,
    satisfies,
    tokenize,
)
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.records import Poi

log = logging.getLogger(__name__)

QUOTE_MIN_WORDS, QUOTE_MAX_WORDS = 4, 20
_SENTENCE_RE = re.compile(r"[^.!?;\n]+")
_SUBCLAUSE_RE = re.compile(r",\s+|\s+(?:but|although|though|while|whereas)\s+|\s+-+\s+|:\s+")
_WORD_RE = re.compile(r"\S+")
_FORBIDDEN = re.compile(r'["\u201c\u201d\[\]\n\r\t]')
# words that make a clause a poor recommendation quote ("not", "rude", "overpriced", "but" ...)
_NEGATIVE_WORDS = frozenset(
    "not no never bad worst terrible awful rude dirty mediocre horrible gross overpriced cold slow bland broken "
    "filthy meh unfortunately however but wrong".split()
)
_NEGATIVE_PREFIXES = ("disappoint", "smell", "wait")


def _negative_positions(tokens: tuple[list, list[str]]) -> list[int]:
    matches, words = tokens
    return [
        matches[i].start()
        for i, w in enumerate(words)
        if w in _NEGATIVE_WORDS or w.endswith("n't") or w.startswith(_NEGATIVE_PREFIXES)
    ]


class Span(NamedTuple):
    """A quotable piece of one review: offsets into the review text (= the original's)."""

    review_id: str
    start: int
    end: int


_LEADING_JOINER = re.compile(r"(?:and|but|so|or|then|plus|because|also)\s+", re.IGNORECASE)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and not (text[start].isalnum()):
        start += 1
    m = _LEADING_JOINER.match(text, start, end)
    if m:  # "and the rooms were clean" -> "the rooms were clean"
        start = m.end()
    while end > start and not (text[end - 1].isalnum() or text[end - 1] in ")%'"):
        end -= 1
    return start, end


def _words(text: str, start: int, end: int) -> int:
    return len(text[start:end].split())


def quotable_spans(text: str, truncated: bool = False) -> list[tuple[int, int]]:
    """Clause-sized pieces (4-20 words) of a review text, as (start, end) offsets.

    Sentences are split at . ! ? ; and newlines; longer ones at commas, dashes and contrast words. A piece
    touching the end of a truncated text is dropped (it may stop mid-word in the original).
    """
    out: list[tuple[int, int]] = []
    forbidden = [m.start() for m in _FORBIDDEN.finditer(text)]
    for m in _SENTENCE_RE.finditer(text):
        pieces = [(m.start(), m.end())]
        if _words(text, m.start(), m.end()) > QUOTE_MAX_WORDS:
            pieces, pos = [], m.start()
            for sub in _SUBCLAUSE_RE.finditer(text, m.start(), m.end()):
                pieces.append((pos, sub.start()))
                pos = sub.end()
            pieces.append((pos, m.end()))
        for s, e in pieces:
            s, e = _trim(text, s, e)
            if e <= s or (truncated and e >= len(text) - 1):
                continue
            if not QUOTE_MIN_WORDS <= _words(text, s, e) <= QUOTE_MAX_WORDS:
                continue
            if forbidden and _any_in(forbidden, s, e):
                continue
            out.append((s, e))
    return out


def _window(
    text: str, ms: int, me: int, pieces: list[tuple[int, int]], truncated: bool
) -> tuple[int, int] | None:
    """The quotable piece holding a mention, or a <= 14-word window around it within its sentence."""
    for s, e in pieces:
        if s <= ms and me <= e:
            return s, e
    sent = next((m for m in _SENTENCE_RE.finditer(text) if m.start() <= ms and me <= m.end()), None)
    if sent is None:
        return None
    words = list(_WORD_RE.finditer(text, sent.start(), sent.end()))
    idx = next((i for i, w in enumerate(words) if w.end() > ms), None)
    if idx is None:
        return None
    lo, hi = max(0, idx - 5), min(len(words), idx + 9)
    s, e = _trim(text, words[lo].start(), words[hi - 1].end())
    if e <= s or not (s <= ms and me <= e) or (truncated and e >= len(text) - 1):
        return None
    if not QUOTE_MIN_WORDS <= _words(text, s, e) <= QUOTE_MAX_WORDS or _FORBIDDEN.search(text, s, e):
        return None
    return s, e


@dataclass
class PoiProfile:
    """One POI with its review evidence and quotable spans."""

    poi: Poi
    evidence: dict[str, list[Span]] = field(default_factory=dict)  # constraint key -> spans mentioning it
    generic: list[Span] = field(default_factory=list)  # positive, clause-sized spans, best reviews first

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self.evidence)

    @property
    def quotable(self) -> bool:
        return bool(self.generic) or any(self.evidence.values())


def _any_in(positions: list[int], start: int, end: int) -> bool:
    i = bisect_left(positions, start)
    return i < len(positions) and positions[i] < end


def build_profile(poi: Poi, kb: KnowledgeBase) -> PoiProfile:
    prof = PoiProfile(poi)
    reviews = sorted(kb.reviews_of(poi.business_id), key=lambda r: -r.stars)
    negative_ok: list[Span] = []
    for r in reviews:
        text = r.text
        if not text:
            continue
        truncated = r.length is not None and r.length > len(text)
        pieces = quotable_spans(text, truncated)
        tokens = tokenize(text)
        negative = _negative_positions(tokens)
        for key, ms, me in evidence_mentions(text, tokens):
            spans = prof.evidence.setdefault(key, [])
            win = _window(text, ms, me, pieces, truncated)
            if win is not None and r.stars >= 3 and not _any_in(negative, win[0], win[1]):
                spans.append(Span(r.review_id, *win))
        for s, e in pieces:
            if r.stars >= 4 and not _any_in(negative, s, e):
                prof.generic.append(Span(r.review_id, s, e))
            else:
                negative_ok.append(Span(r.review_id, s, e))
    if not prof.generic:
        prof.generic = negative_ok  # a POI with only lukewarm reviews still needs something to quote
    return prof


@dataclass
class CellIndex:
    """One city x POI-type cell: its POIs, the constraint universe and satisfaction bitsets."""

    city: str
    poi_type: str
    ids: list[str]  # knowledge-base order (the open set)
    profiles: list[PoiProfile]
    universe: dict[str, Constraint] = field(default_factory=dict)
    sat: dict[str, int] = field(default_factory=dict)  # constraint key -> bitmask over `ids`
    _positions: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _sorted_universe: list[Constraint] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def size(self) -> int:
        return len(self.ids)

    def sorted_universe(self) -> list[Constraint]:
        """The universe's constraints in key order (listed on first use, once the universe is built)."""
        if self._sorted_universe is None:
            self._sorted_universe = [c for _, c in sorted(self.universe.items())]
        return self._sorted_universe

    def position(self, poi_id: str) -> int | None:
        """The POI's bit in the masks (its place in `ids`); None when it is not in the cell."""
        if len(self._positions) != len(self.ids):
            self._positions = {pid: i for i, pid in enumerate(self.ids)}
        return self._positions.get(poi_id)

    @property
    def all_mask(self) -> int:
        return (1 << len(self.ids)) - 1

    def mask(self, constraints) -> int:
        m = self.all_mask
        for c in constraints:
            m &= self.sat_of(c)
        return m

    def sat_of(self, c: Constraint) -> int:
        bits = self.sat.get(c.key)
        if bits is None:  # a constraint outside the precomputed universe (tests, LLM checks)
            bits = 0
            for i, p in enumerate(self.profiles):
                if satisfies(p.poi, c, p.keys):
                    bits |= 1 << i
            self.sat[c.key] = bits
        return bits

    def satisfies_all(self, constraints, i: int) -> bool:
        return bool(self.mask(constraints) >> i & 1)

    def members(self, mask: int) -> list[int]:
        return [i for i in range(len(self.ids)) if mask >> i & 1]

    @cached_property
    def quotable_mask(self) -> int:
        """POIs with something to quote (only these are ever recommended)."""
        m = 0
        for i, p in enumerate(self.profiles):
            if p.quotable:
                m |= 1 << i
        return m

    @cached_property
    def rating_bins(self) -> list[int]:
        return [
            0 if p.poi.stars < 3.0 else 1 if p.poi.stars < 4.0 else 2 if p.poi.stars < 4.5 else 3
            for p in self.profiles
        ]


def _universe(city: str, poi_type: str, profiles: list[PoiProfile]) -> list[Constraint]:
    values = TYPE_VALUES[poi_type]
    out: list[Constraint] = []
    for kind in ("price", "noise", "amenity", "ambience", "dietary", "meal", "aspect", "rating"):
        out.extend(Constraint(kind, v) for v in values[kind])
    for landmark in CITY_LANDMARKS.get(city, {}):
        out.extend(Constraint("location", landmark, r) for r in LOCATION_RADII_KM)
    counts: dict[str, tuple[str, int]] = {}
    for p in profiles:
        for cat in p.poi.categories:
            if cat.lower() in GENERIC_CATEGORIES:
                continue
            name, n = counts.get(cat.lower(), (cat, 0))
            counts[cat.lower()] = (name, n + 1)
    out.extend(Constraint("category", name) for name, n in sorted(counts.values()) if n >= 2)
    return out


def build_cell(city: str, poi_type: str, profiles: list[PoiProfile]) -> CellIndex:
    cell = CellIndex(city, poi_type, [p.poi.business_id for p in profiles], profiles)
    for c in _universe(city, poi_type, profiles):
        bits = 0
        for i, p in enumerate(profiles):
            if satisfies(p.poi, c, p.keys):
                bits |= 1 << i
        # a preference nobody or everybody meets cannot steer a recommendation
        if bits and bits != cell.all_mask:
            cell.universe[c.key] = c
            cell.sat[c.key] = bits
    return cell


_KB: KnowledgeBase | None = None  # set in the parent before forking index workers


def _cell_job(key: tuple[str, str]) -> CellIndex:
    kb = _KB
    if kb is None:
        raise RuntimeError("index worker has no knowledge base")
    city, poi_type = key
    profiles = [build_profile(p, kb) for p in kb.pois_in(city, poi_type)]
    return build_cell(city, poi_type, profiles)


def _ngram_job() -> ReviewNgrams:
    kb = _KB
    if kb is None:
        raise RuntimeError("index worker has no knowledge base")
    return ReviewNgrams(r.text or "" for r in kb.reviews.values())


def build_index(
    kb: KnowledgeBase, min_size: int = CANDIDATES_PER_DIALOGUE, workers: int = 1
) -> tuple[dict[tuple[str, str], CellIndex], ReviewNgrams]:
    """Every non-empty city x type cell of the knowledge base, indexed (in `workers` forked processes), and
    the six-word copy guard over all reviews, built side by side; a cell smaller than `min_size`, or with
    fewer than 4 quotable POIs, is an error."""
    global _KB
    if not kb.pois:
        raise TraceDataError("knowledge base holds no POIs", path=kb.root)
    if not kb.has_text:
        raise TraceDataError(
            "knowledge base has no review text (reviews.jsonl.gz): the generator quotes "
            "reviews; build the KB from a Yelp bundle or hydrate the release first",
            path=kb.root,
        )
    grouped: dict[tuple[str, str], int] = {}
    for p in kb.pois.values():
        grouped[(p.city, p.poi_type)] = grouped.get((p.city, p.poi_type), 0) + 1
    short = {f"{c} x {t}": k for (c, t), k in sorted(grouped.items()) if k < min_size}
    if short:
        raise TraceDataError(
            f"knowledge base too small: every city x type cell needs at least {min_size} POIs to draw "
            f"{min_size} candidates; short cells (POIs): {short}",
            path=kb.root,
        )
    keys = sorted(grouped)
    _KB = kb
    try:
        if workers > 1 and len(keys) > 1 and "fork" in mp.get_all_start_methods():
            with mp.get_context("fork").Pool(min(workers, len(keys))) as pool:
                ngram_result = pool.apply_async(_ngram_job)  # the largest job first, cells beside it
                built = pool.map(_cell_job, keys, chunksize=1)
                ngrams = ngram_result.get()
        else:
            built = [_cell_job(k) for k in keys]
            ngrams = _ngram_job()
    finally:
        _KB = None
    cells = dict(zip(keys, built, strict=True))
    for (city, poi_type), cell in cells.items():
        quotable = sum(p.quotable for p in cell.profiles)
        if quotable < 4:
            raise TraceDataError(
                f"cell {city} x {poi_type}: only {quotable} POIs have a quotable review span (4-20 words); "
                "at least 4 are needed to recommend three distinct POIs and compare them",
                path=kb.root,
            )
    log.info("indexed %d cells, %d POIs", len(cells), sum(c.size for c in cells.values()))
    return cells, ngrams
