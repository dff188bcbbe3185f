"""SnipRec's seeding (§5.1): (seed user, target venue) pairs from a catalogue's reviews, and each seeker's context.

Selection: reviews rated 4-5 stars (`min_stars`) with at least one useful vote (`min_useful`), written by
users with 10 to 99 reviews (`user_reviews`, counted over the whole Yelp bundle when the catalogue was built);
then a maximum bipartite matching between those users and venues (scipy's `maximum_bipartite_matching`,
rows = users and columns = venues in id order), so no user and no venue is used twice. The matched pairs are
shuffled with `seed`; the first `n_validation` are the validation seeds and the next `n_test` the test seeds
(SnipRec: 500 and 1,000; a matching smaller than both keeps their 1:2 ratio: the first third is validation,
the rest test). A user with several reviews of the matched venue contributes the highest-rated,
then most useful one (then the earliest review id).

Context (what the seeker knows, never the venue's name): the venue's categories and attributes, the seed
review, and up to 5 positive (4-5 stars) and 5 negative (1-2 stars) reviews by other users, most useful first.
SnipRec has GPT summarise those ten reviews; offline there is no summariser, so the reviews themselves are
the context (truncated to `excerpt_chars`). The venue's name (and its name without a leading "The") is
replaced by "this place" everywhere in it, so the answer cannot leak.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_dataset.constants import SEED
from trace_dataset.io import TraceDataError, read_jsonl
from trace_dataset.kb.catalogue import VOTES_FILE
from trace_dataset.kb.store import KnowledgeBase

ANONYMOUS = "this place"
EXCERPT_CHARS = 300
CONTEXT_REVIEWS = 5


@dataclass(frozen=True)
class SeedCriteria:
    min_stars: float = 4.0
    min_useful: int = 1
    user_reviews: tuple[int, int] = (10, 99)

    def __post_init__(self) -> None:
        lo, hi = self.user_reviews
        if not 1 <= lo <= hi:
            raise ValueError(f"user_reviews must be (lo, hi) with 1 <= lo <= hi, got {self.user_reviews}")


@dataclass(frozen=True)
class VoteRow:
    review_id: str
    user_id: str
    business_id: str
    stars: float
    useful: int
    user_reviews: int


@dataclass(frozen=True)
class SeedPair:
    index: int  # position in the shuffled matching
    user_id: str
    business_id: str
    review_id: str


def load_votes(kb: KnowledgeBase) -> list[VoteRow]:
    """The catalogue's review votes joined with the reviews (catalogue kb folders only)."""
    if kb.root is None or not (Path(kb.root) / VOTES_FILE).exists():
        raise TraceDataError(
            f"no {VOTES_FILE}: SnipRec's seeding needs a catalogue built with `trace-bench kb build "
            "--cities ... --all` (it keeps reviewers and useful votes)",
            path=kb.root,
        )
    out = []
    path = Path(kb.root) / VOTES_FILE
    for i, v in enumerate(read_jsonl(path), start=1):
        review = kb.reviews.get(v.get("review_id", ""))
        if review is None:
            raise TraceDataError(f"review {v.get('review_id')!r} is not in the catalogue", path=path, line=i)
        out.append(
            VoteRow(
                review.review_id,
                str(v["user_id"]),
                review.business_id,
                review.stars,
                int(v["useful"]),
                int(v["user_reviews"]),
            )
        )
    return out


def eligible(votes: Sequence[VoteRow], criteria: SeedCriteria) -> list[VoteRow]:
    lo, hi = criteria.user_reviews
    return [
        v
        for v in votes
        if v.stars >= criteria.min_stars and v.useful >= criteria.min_useful and lo <= v.user_reviews <= hi
    ]


def match_pairs(votes: Sequence[VoteRow]) -> list[tuple[str, str, str]]:
    """(user, venue, seed review) of a maximum bipartite matching over `votes`, in user id order."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    if not votes:
        return []
    users = sorted({v.user_id for v in votes})
    venues = sorted({v.business_id for v in votes})
    ui = {u: i for i, u in enumerate(users)}
    vi = {b: j for j, b in enumerate(venues)}
    edges = sorted({(ui[v.user_id], vi[v.business_id]) for v in votes})
    rows = np.array([e[0] for e in edges])
    cols = np.array([e[1] for e in edges])
    graph = csr_matrix((np.ones(len(edges), dtype=np.int8), (rows, cols)), shape=(len(users), len(venues)))
    matched = maximum_bipartite_matching(graph, perm_type="column")  # for each user, its venue or -1
    best: dict[tuple[str, str], VoteRow] = {}
    for v in votes:
        key = (v.user_id, v.business_id)
        cur = best.get(key)
        if cur is None or (-v.stars, -v.useful, v.review_id) < (-cur.stars, -cur.useful, cur.review_id):
            best[key] = v
    out = []
    for i, j in enumerate(matched.tolist()):
        if j >= 0:
            pair = (users[i], venues[j])
            out.append((pair[0], pair[1], best[pair].review_id))
    return out


def seed_pairs(
    votes: Sequence[VoteRow],
    criteria: SeedCriteria | None = None,
    *,
    split: str = "test",
    n_validation: int = 500,
    n_test: int = 1000,
    seed: int = SEED,
) -> list[SeedPair]:
    """The seeds of one split (module docstring); fewer when the matching is smaller."""
    if split not in ("validation", "test"):
        raise ValueError(f"SnipRec seeds come in 'validation' and 'test'; got {split!r}")
    pairs = match_pairs(eligible(votes, criteria or SeedCriteria()))
    random.Random(f"{seed}:sniprec-seeds").shuffle(pairs)
    if len(pairs) < n_validation + n_test:  # a small catalogue: keep SnipRec's 1:2 validation/test ratio
        n_validation = min(n_validation, len(pairs) // 3)
    start, stop = (0, n_validation) if split == "validation" else (n_validation, n_validation + n_test)
    return [SeedPair(start + k, u, b, r) for k, (u, b, r) in enumerate(pairs[start:stop])]


# -------------------------------------------------------------------------------------------------------
# The seeker's context
# -------------------------------------------------------------------------------------------------------
def anonymise(text: str, name: str) -> str:
    """`text` with the venue's name (and its name without a leading "The") replaced by "this place"."""
    names = {name.strip()}
    if name.lower().startswith("the "):
        names.add(name[4:].strip())
    for n in sorted((n for n in names if len(n) >= 2), key=len, reverse=True):
        text = re.sub(r"(?<!\w)(?:the\s+)?" + re.escape(n) + r"(?!\w)", ANONYMOUS, text, flags=re.IGNORECASE)
    return text


def item_info(kb: KnowledgeBase, business_id: str) -> list[str]:
    """Categories, price and true attributes of a venue, one "key: value" line each."""
    p = kb.pois[business_id]
    lines = [f"Category: {', '.join(c for c in p.categories)}"]
    if p.price:
        lines.append(f"Price range: {'$' * p.price}")
    for key, value in sorted((p.attributes or {}).items()):
        if value is None or value == [] or value is False:
            continue
        shown = ", ".join(value) if isinstance(value, list) else ("yes" if value is True else str(value))
        lines.append(f"{key.replace('_', ' ')}: {shown}")
    return lines


def _excerpt(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


@dataclass(frozen=True)
class SeekerContext:
    pair: SeedPair
    info: tuple[str, ...]
    seed_review: str
    positive: tuple[str, ...]
    negative: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": {
                "index": self.pair.index,
                "user_id": self.pair.user_id,
                "business_id": self.pair.business_id,
                "review_id": self.pair.review_id,
            },
            "info": list(self.info),
            "seed_review": self.seed_review,
            "positive": list(self.positive),
            "negative": list(self.negative),
        }


def seeker_context(
    kb: KnowledgeBase,
    pair: SeedPair,
    votes_by_review: Mapping[str, VoteRow],
    excerpt_chars: int = EXCERPT_CHARS,
) -> SeekerContext:
    name = kb.pois[pair.business_id].name
    others = [
        r
        for r in kb.reviews_of(pair.business_id)
        if r.review_id != pair.review_id
        and votes_by_review.get(r.review_id) is not None
        and votes_by_review[r.review_id].user_id != pair.user_id
    ]

    def pick(cond) -> tuple[str, ...]:
        chosen = sorted(
            (r for r in others if cond(r.stars)),
            key=lambda r: (-votes_by_review[r.review_id].useful, r.review_id),
        )[:CONTEXT_REVIEWS]
        return tuple(anonymise(_excerpt(r.text or "", excerpt_chars), name) for r in chosen)

    return SeekerContext(
        pair,
        tuple(anonymise(x, name) for x in item_info(kb, pair.business_id)),
        anonymise(kb.review_text(pair.review_id), name),
        pick(lambda s: s >= 4),
        pick(lambda s: s <= 2),
    )


def catalogue_root(path: str | os.PathLike) -> Path:
    """A catalogue folder, or a data directory holding one under knowledge_base/."""
    from trace_dataset.constants import KB_DIRNAME

    p = Path(path)
    return p / KB_DIRNAME if (p / KB_DIRNAME).is_dir() else p
