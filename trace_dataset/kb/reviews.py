"""The knowledge base's review sampling (steps 3 and 5 of `trace_dataset.kb.build`): one streaming pass over the
review file that counts every candidate's reviews and keeps, for tracked ones, a bounded reservoir of the
reviews with the smallest seeded hash of `review_id`; and the quota of reviews each POI keeps."""

from __future__ import annotations

import hashlib
import heapq
import re
from collections import Counter
from typing import Any

from trace_dataset.constants import REVIEW_MAX_CHARS
from trace_dataset.io import TraceDataError
from trace_dataset.yelp.reader import MalformedLog, YelpBundle, parse_review_core

RESERVOIR = 48  # reviews held per tracked POI while streaming (the review cap can never exceed it)

_BID = b'"business_id":"'
_RID = b'"review_id":"'
_SIMPLE_ID = re.compile(r"[A-Za-z0-9_\-]+")


class IdHasher:
    """Seeded 64-bit hash of an id: the order reviews are sampled in (independent of file order)."""

    def __init__(self, seed: int, purpose: str):
        self.key = hashlib.sha256(f"trace-kb:{purpose}:{seed}".encode()).digest()[:32]

    def __call__(self, value: str) -> int:
        return int.from_bytes(
            hashlib.blake2b(value.encode("utf-8"), digest_size=8, key=self.key).digest(), "big"
        )


# ---------------------------------------------------------------------------------------------------
# 3. one streaming pass over the reviews
# ---------------------------------------------------------------------------------------------------
_Entry = tuple[int, str, float, str, str, int]  # (-hash, review_id, stars, date, text[:500], original length)
ReviewCore = tuple[
    str, str, float, str, str
]  # parse_review_core: (review_id, business_id, stars, date, text)


def stream_reviews(
    bundle: YelpBundle,
    candidates: set[str],
    tracked: set[str],
    hasher: IdHasher,
    malformed: MalformedLog,
    *,
    progress: bool = False,
) -> tuple[Counter, dict[str, list[_Entry]], int]:
    """Count reviews of every candidate; keep the RESERVOIR smallest-hash reviews of tracked ones.

    The hot loop works on raw bytes: `business_id` and `review_id` are read with a byte search (exact for
    the dump's compact layout, and any line where the search fails is parsed in full instead), so most lines
    are never JSON-decoded: those of non-candidates, and those whose hash cannot enter a full reservoir.
    """
    fast = all(_SIMPLE_ID.fullmatch(bid) for bid in candidates)  # ids whose JSON bytes are the id itself
    cand_b: dict[bytes, str] = {bid.encode(): bid for bid in candidates} if fast else {}
    counts: Counter = Counter()
    heaps: dict[str, list[_Entry]] = {bid: [] for bid in tracked}
    label = bundle.label("review")
    n_bid = len(_BID)
    bar = review_bar(progress)
    lineno = n_lines = 0
    with bundle.open("review") as f:
        for raw in f:
            lineno += 1
            if len(raw) < 16 and not raw.strip():
                continue
            n_lines += 1
            if bar is not None and not n_lines & 0xFFFF:
                bar.update(0x10000)
            core = None
            bid = None
            if fast:
                i = raw.find(_BID)
                if i >= 0:
                    j = i + n_bid
                    value = raw[j : raw.find(b'"', j)]
                    if b"\\" not in value:
                        bid = cand_b.get(value)
                        if bid is None:
                            continue  # not a candidate: no parse
            if bid is None:  # not the compact layout (or ids that need decoding): parse to find out
                core = parse_review_core(raw, label, lineno, malformed)
                if core is None or core[1] not in candidates:
                    continue
                bid = core[1]
            counts[bid] += 1
            heap = heaps.get(bid)
            if heap is not None and not _offer(heap, raw, core, bid, hasher.key, label, lineno, malformed):
                counts[bid] -= 1  # a malformed line after all
    if bar is not None:
        bar.update(n_lines & 0xFFFF)
        bar.close()
    if n_lines == 0:
        raise TraceDataError("empty file: expected JSON lines of Yelp review records", path=label)
    return counts, heaps, n_lines


def review_bar(progress: bool) -> Any:
    """The progress bar of a pass over a review file (a tqdm), or None without `progress`."""
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(desc="reviews", unit=" lines", unit_scale=True, mininterval=1.0)


def _offer(
    heap: list[_Entry],
    raw: bytes,
    core: ReviewCore | None,
    bid: str,
    key: bytes,
    label: str,
    lineno: int,
    malformed: MalformedLog,
) -> bool:
    """Offer a tracked POI's review line to its reservoir (`core`: the line parsed, or None when only its
    business id was read). The line is parsed only if its hash can enter the reservoir. False: the line is
    malformed, or its business_id key appears twice; it is then not counted."""
    h = None
    rid_b = None
    if core is None:
        i = raw.find(_RID)
        if i >= 0:
            j = i + len(_RID)
            rid_b = raw[j : raw.find(b'"', j)]
            if b"\\" not in rid_b:
                h = int.from_bytes(hashlib.blake2b(rid_b, digest_size=8, key=key).digest(), "big")
                if len(heap) >= RESERVOIR and -h <= heap[0][0]:
                    return True  # cannot enter a full reservoir: no parse
        core = parse_review_core(raw, label, lineno, malformed)
        if core is None:
            return False
        if core[1] != bid:
            malformed.add(label, lineno, "ambiguous business_id (the key appears more than once)")
            return False
    rid, _, stars, date, text = core
    if h is None or rid.encode("utf-8") != rid_b:
        h = int.from_bytes(hashlib.blake2b(rid.encode("utf-8"), digest_size=8, key=key).digest(), "big")
        if len(heap) >= RESERVOIR and -h <= heap[0][0]:
            return True
    entry = (-h, rid, stars, date, text[:REVIEW_MAX_CHARS], len(text))
    if len(heap) < RESERVOIR:
        heapq.heappush(heap, entry)
    else:
        heapq.heapreplace(heap, entry)
    return True


# ---------------------------------------------------------------------------------------------------
# 5. review selection
# ---------------------------------------------------------------------------------------------------
def review_quotas(
    available: dict[str, int], min_reviews: int, target_total: int, hasher: IdHasher
) -> tuple[dict[str, int], int]:
    """Reviews each POI keeps: min(available, cap) with the largest cap whose total stays <= target_total,
    plus one extra for as many POIs (seeded-hash order) as it takes to reach target_total exactly."""
    if not available:
        return {}, min_reviews

    def total(cap: int) -> int:
        return sum(min(a, cap) for a in available.values())

    cap = min_reviews
    for c in range(min_reviews, RESERVOIR + 1):
        if total(c) <= target_total:
            cap = c
        else:
            break
    quotas = {bid: min(a, cap) for bid, a in available.items()}
    extra = target_total - sum(quotas.values())
    if extra > 0:
        room = sorted((bid for bid, a in available.items() if a > cap), key=lambda bid: (hasher(bid), bid))
        for bid in room[:extra]:
            quotas[bid] += 1
    return quotas, cap
