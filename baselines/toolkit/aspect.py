"""Aspect scoring (App. F "AspectRetrievalBaseline"): five aspects, keyword sentiment per review.

    score(p) = sum_a w_a * s_a(p) + 0.1 * stars(p),   w_a = min(hits_a / 3, 1.0)

`hits_a` counts the aspect's keywords in the user turns so far; `s_a(p)` is the mean aspect sentiment
of p's reviews. The Aspect baseline ranks by it, Persona-Grounded with other weights, Hybrid-RRF fuses it, and
Multi-Review Synthesis reads the lexicon and the clause polarity. The paper names the formula, not the lexicon
or the sentiment rule; ours (documented in docs/aspect_dense_hybrid_knowledge_persona.md, tested in
tests/baselines/non_llm/test_aspect.py):

- Tokens: `baselines.toolkit.text.tokenize` (the shared tokeniser, stop words kept so "not" is seen). Keywords
  are words or phrases over those tokens ("front desk", "walking distance"), matched longest first,
  each token used once. The five keyword lists are disjoint.
- Clauses: sentences, further split at contrast words (but, however, although, though, whereas, yet).
- Clause polarity: (pos - neg) / (pos + neg) over the clause's sentiment words, 0 when it has none.
  A sentiment word with a negator among the three tokens before it counts for the other side
  ("not good" is negative). Aspect keywords may carry polarity too ("delicious", "rude", "overpriced").
- Review aspect sentiment: the mean polarity of the review's clauses that mention the aspect.
- POI aspect sentiment s_a: the mean over the POI's reviews that mention the aspect; 0 (neutral) when
  none does. Each s_a lies in [-1, 1].
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.text import tokenize, user_turns
from trace_dataset.constants import NEGATION_WINDOW, SENTIMENT_NEGATORS

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

ASPECTS: tuple[str, ...] = ("food", "service", "ambiance", "value", "location")
HITS_FOR_FULL_WEIGHT = 3  # w_a = min(hits_a / 3, 1.0)
STARS_WEIGHT = 0.1

# Aspect keywords: the words or phrases that say a sentence (or a query) is about the aspect. Written for
# the three POI types (restaurants, hotels, attractions); a phrase is written with spaces between tokens.
ASPECT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "food": (
        "food",
        "foods",
        "dish",
        "dishes",
        "meal",
        "meals",
        "menu",
        "menus",
        "flavor",
        "flavors",
        "flavour",
        "taste",
        "tasted",
        "tasty",
        "delicious",
        "yummy",
        "flavorful",
        "bland",
        "cuisine",
        "chef",
        "kitchen",
        "breakfast",
        "brunch",
        "lunch",
        "dinner",
        "dessert",
        "desserts",
        "appetizer",
        "appetizers",
        "entree",
        "entrees",
        "portion",
        "portions",
        "pizza",
        "burger",
        "burgers",
        "sushi",
        "taco",
        "tacos",
        "steak",
        "seafood",
        "pasta",
        "sandwich",
        "sandwiches",
        "salad",
        "salads",
        "soup",
        "bread",
        "coffee",
        "drink",
        "drinks",
        "cocktail",
        "cocktails",
        "wine",
        "beer",
        "beers",
        "vegan",
        "vegetarian",
        "gluten free",
        "snack",
        "snacks",
        "fries",
        "chicken",
        "fish",
        "oysters",
        "bbq",
        "barbecue",
        "greasy",
        "soggy",
        "overcooked",
        "undercooked",
        "stale",
    ),
    "service": (
        "service",
        "staff",
        "server",
        "servers",
        "waiter",
        "waiters",
        "waitress",
        "waitstaff",
        "wait staff",
        "bartender",
        "bartenders",
        "host",
        "hostess",
        "manager",
        "management",
        "employee",
        "employees",
        "front desk",
        "concierge",
        "housekeeping",
        "reception",
        "receptionist",
        "check in",
        "checkin",
        "check out",
        "checkout",
        "valet",
        "guide",
        "guides",
        "docent",
        "docents",
        "attentive",
        "friendly",
        "unfriendly",
        "rude",
        "helpful",
        "unhelpful",
        "courteous",
        "welcoming",
        "accommodating",
        "knowledgeable",
        "professional",
        "hospitality",
        "customer service",
    ),
    "ambiance": (
        "ambiance",
        "ambience",
        "atmosphere",
        "vibe",
        "vibes",
        "decor",
        "music",
        "noise",
        "noisy",
        "loud",
        "quiet",
        "cozy",
        "cosy",
        "romantic",
        "lively",
        "intimate",
        "crowded",
        "view",
        "views",
        "patio",
        "terrace",
        "rooftop",
        "seating",
        "lighting",
        "interior",
        "setting",
        "scenery",
        "room",
        "rooms",
        "bed",
        "beds",
        "bathroom",
        "lobby",
        "pool",
        "clean",
        "cleanliness",
        "dirty",
        "elegant",
        "charming",
        "trendy",
        "relaxing",
        "peaceful",
        "comfortable",
        "uncomfortable",
        "spacious",
        "cramped",
        "space",
        "design",
        "architecture",
        "exhibits",
        "exhibit",
        "garden",
        "gardens",
        "outdoor seating",
    ),
    "value": (
        "price",
        "prices",
        "priced",
        "pricing",
        "value",
        "cost",
        "costs",
        "expensive",
        "inexpensive",
        "cheap",
        "affordable",
        "overpriced",
        "pricey",
        "reasonable",
        "reasonably",
        "worth",
        "deal",
        "deals",
        "bargain",
        "budget",
        "money",
        "dollars",
        "bill",
        "fee",
        "fees",
        "rate",
        "rates",
        "happy hour",
        "upscale",
        "luxury",
        "splurge",
        "admission",
        "tickets",
        "ticket",
    ),
    "location": (
        "location",
        "located",
        "neighborhood",
        "neighbourhood",
        "area",
        "downtown",
        "walk",
        "walking",
        "walkable",
        "walking distance",
        "distance",
        "nearby",
        "near",
        "close to",
        "convenient",
        "conveniently",
        "central",
        "centrally",
        "street",
        "block",
        "blocks",
        "airport",
        "convention center",
        "transit",
        "bus",
        "streetcar",
        "trolley",
        "uber",
        "parking",
        "park",
        "far",
        "far from",
        "easy to find",
        "access",
        "waterfront",
        "riverfront",
        "riverwalk",
        "quarter",
        "district",
    ),
}

POSITIVE_WORDS: frozenset[str] = frozenset(
    """
    good great excellent amazing awesome fantastic wonderful delicious tasty yummy flavorful fresh friendly
    attentive helpful courteous welcoming accommodating knowledgeable professional nice lovely beautiful
    stunning gorgeous cozy cosy charming romantic relaxing peaceful quiet comfortable spacious clean spotless
    affordable reasonable reasonably inexpensive worth bargain convenient conveniently perfect best love loved
    loves enjoy enjoyed recommend recommended fun impressive outstanding superb pleasant fast quick generous
    elegant fabulous incredible favorite favourite happy gem solid decent efficient safe walkable central
    """.split()
)
NEGATIVE_WORDS: frozenset[str] = frozenset(
    """
    bad terrible awful horrible poor mediocre bland stale greasy soggy overcooked undercooked rude slow
    unfriendly unhelpful dismissive inattentive dirty filthy gross disgusting noisy loud crowded cramped
    overpriced pricey expensive disappointing disappointed disappointment worst hate hated boring sketchy
    unsafe smelly broken uncomfortable inconvenient far worn outdated dated avoid meh overrated lacking
    """.split()
)

# Clause boundaries: sentence ends and the contrast words that usually switch aspect or polarity
# ("rooms were dirty but the location is great").
_CLAUSE_RE = re.compile(r"[.!?;\n]+|\b(?:but|however|although|though|whereas|yet)\b", re.IGNORECASE)


@cache
def _keyword_table() -> dict[str, tuple[tuple[tuple[str, ...], str], ...]]:
    """First token -> (keyword tokens, aspect) pairs starting with it, longest first (built on first use)."""
    table: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for aspect, words in ASPECT_KEYWORDS.items():
        for word in words:
            tokens = tuple(tokenize(word))
            table.setdefault(tokens[0], []).append((tokens, aspect))
    return {first: tuple(sorted(entries, key=lambda e: -len(e[0]))) for first, entries in table.items()}


def aspect_mentions(tokens: Sequence[str]) -> list[str]:
    """The aspect of every keyword occurrence in `tokens`, in order (longest match first, no overlap)."""
    table = _keyword_table()
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        entries = table.get(tokens[i])
        step = 1
        if entries is not None:
            for words, aspect in entries:
                if tuple(tokens[i : i + len(words)]) == words:
                    out.append(aspect)
                    step = len(words)
                    break
        i += step
    return out


def aspect_hits(texts: str | Iterable[str]) -> dict[str, int]:
    """Keyword occurrences per aspect over the texts (all five aspects, zeros included)."""
    if isinstance(texts, str):
        texts = [texts]
    hits = dict.fromkeys(ASPECTS, 0)
    for text in texts:
        for aspect in aspect_mentions(tokenize(text)):
            hits[aspect] += 1
    return hits


def query_aspect_weights(
    texts: str | Iterable[str], saturation: int = HITS_FOR_FULL_WEIGHT
) -> dict[str, float]:
    """w_a = min(hits_a / saturation, 1.0) over the user turns."""
    return {a: min(h / saturation, 1.0) for a, h in aspect_hits(texts).items()}


def clause_polarity(tokens: Sequence[str]) -> float:
    """(pos - neg) / (pos + neg) with negation flipping; 0.0 when the clause has no sentiment word."""
    pos = neg = 0
    for i, tok in enumerate(tokens):
        sign = 1 if tok in POSITIVE_WORDS else -1 if tok in NEGATIVE_WORDS else 0
        if not sign:
            continue
        if any(t in SENTIMENT_NEGATORS for t in tokens[max(0, i - NEGATION_WINDOW) : i]):
            sign = -sign
        if sign > 0:
            pos += 1
        else:
            neg += 1
    return 0.0 if pos + neg == 0 else (pos - neg) / (pos + neg)


def split_clauses(text: str) -> list[str]:
    return [s for s in _CLAUSE_RE.split(text) if s.strip()]


def aspect_clauses(text: str) -> Iterator[tuple[set[str], float]]:
    """(aspects mentioned, polarity) of each clause of `text` that mentions an aspect, in order."""
    for clause in split_clauses(text):
        tokens = tokenize(clause)
        aspects = set(aspect_mentions(tokens))
        if aspects:
            yield aspects, clause_polarity(tokens)


def review_aspect_sentiment(text: str) -> dict[str, float]:
    """Mean polarity of the clauses mentioning each aspect; aspects the review never mentions are absent."""
    acc: dict[str, list[float]] = {}
    for aspects, polarity in aspect_clauses(text):
        for aspect in aspects:
            acc.setdefault(aspect, []).append(polarity)
    return {a: sum(v) / len(v) for a in ASPECTS if (v := acc.get(a))}


def poi_aspect_sentiment(review_texts: Iterable[str]) -> dict[str, float]:
    """s_a: mean review aspect sentiment over the reviews mentioning a; 0.0 where none does."""
    acc: dict[str, list[float]] = {a: [] for a in ASPECTS}
    for text in review_texts:
        for aspect, value in review_aspect_sentiment(text).items():
            acc[aspect].append(value)
    return {a: (sum(v) / len(v) if v else 0.0) for a, v in acc.items()}


def aspect_score(
    weights: Mapping[str, float],
    sentiment: Mapping[str, float],
    stars: float,
    stars_weight: float = STARS_WEIGHT,
) -> float:
    """sum_a w_a * s_a + stars_weight * stars."""
    return sum(weights.get(a, 0.0) * sentiment.get(a, 0.0) for a in ASPECTS) + stars_weight * stars


class AspectIndex:
    """Per-POI aspect sentiments of one knowledge base, computed on first use and kept (KB-derived only)."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self._sentiment: dict[str, dict[str, float]] = {}

    def sentiment(self, business_id: str) -> dict[str, float]:
        cached = self._sentiment.get(business_id)
        if cached is None:
            texts = [self.kb.review_text(r.review_id) for r in self.kb.reviews_of(business_id)]
            cached = self._sentiment[business_id] = poi_aspect_sentiment(texts)
        return cached

    def scores(
        self, weights: Mapping[str, float], business_ids: Iterable[str], stars_weight: float = STARS_WEIGHT
    ) -> dict[str, float]:
        return {
            pid: aspect_score(weights, self.sentiment(pid), self.kb.poi(pid).stars, stars_weight)
            for pid in business_ids
        }


class AspectWeightedPipeline(RankingPipeline):
    """sum_a w_a * s_a + stars_weight * stars over the candidates, with the turn's w_a from `weights`: the
    Aspect baseline's are the user turns' (below); Persona-Grounded mixes in the persona's prior."""

    config_keys: ClassVar[tuple[str, ...]] = ("hits_for_full_weight", "stars_weight")

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        hits_for_full_weight: int = HITS_FOR_FULL_WEIGHT,
        stars_weight: float = STARS_WEIGHT,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        if hits_for_full_weight < 1:
            raise ValueError(f"hits_for_full_weight must be >= 1, got {hits_for_full_weight!r}")
        self.hits_for_full_weight = int(hits_for_full_weight)
        self.stars_weight = float(stars_weight)
        self.aspects = AspectIndex(kb)

    def weights(self, inp: Mapping[str, Any]) -> dict[str, float]:
        found = inp.get("aspect_weights")
        if found is None:
            found = query_aspect_weights(user_turns(inp["history"]), self.hits_for_full_weight)
        return found

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        for inp in inputs:  # once per turn; score and meta read them
            inp["aspect_weights"] = self.weights(inp)
        return super()._forward(inputs)

    def score(self, inp: Mapping[str, Any]) -> dict[str, float]:
        return self.aspects.scores(self.weights(inp), inp["candidates"], self.stars_weight)

    def meta(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, Any]:
        """The query's non-zero aspect weights (ranked turns only)."""
        weights = {a: round(w, 4) for a, w in self.weights(inp).items() if w}
        return {"aspect_weights": weights} if ranked and weights else {}
