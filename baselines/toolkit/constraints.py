"""Stated constraints: what a user's turns say about price, stars, attributes, ambience and categories.

One mention parser for every system (the Knowledge-Enhanced baseline ranks by it, DST checks its LLM state
with it, Collab-REC on Trace reads its interests through it):

- `text_mentions(text)`: every attribute constraint a text states, with its position. A mention with a
  negator among the three words before it ("no kids", "don't need parking") states nothing (`negated`).
- `parse_constraints(user_texts, categories)`: the constraints in force after the user turns so far; a later
  mention of the same constraint replaces the earlier one ("cheap" then "upscale": upscale; the ambience is
  one slot; the categories of the latest turn naming any replace earlier ones, several named together are
  alternatives). Location wishes and review-only wishes (a pool, views) are left to the retrievers.
- `check_constraint(constraint, poi)`: True (satisfied), False (violated) or None (the knowledge base does
  not know the attribute); `constraint_share` = (satisfied + 0.5 * unknown) / n_constraints.
- `CategoryMatcher`: the categories (cuisines, kinds of attraction) of a city x type cell a user may name.

The attribute rules (which wordings state which constraint) are in `baselines.toolkit.mention_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from baselines.toolkit.mention_rules import RULES
from trace_dataset.constants import NEGATION_WINDOW, PRICE_KEYWORDS, WISH_NEGATORS
from trace_dataset.records import Poi

UNKNOWN_CREDIT = 0.5
LUXURY_FLOOR = 3  # "luxury" / "upscale" as a floor: PRICE_KEYWORDS' ceiling 4 would exclude nothing
RELATIVE_PRICE_WORDS = (
    "cheaper",
    "less expensive",
    "less pricey",
    "too expensive",
    "too pricey",
    "more affordable",
)

# Categories too broad to be a stated preference ("a restaurant in Tampa").
GENERIC_CATEGORIES: frozenset[str] = frozenset(
    {
        "restaurants",
        "food",
        "hotels",
        "hotels & travel",
        "event planning & services",
        "nightlife",
        "arts & entertainment",
        "active life",
        "local flavor",
        "shopping",
        "travel services",
        "tours",
        "venues & event spaces",
        "public services & government",
        "professional services",
        "local services",
        "home services",
        "beauty & spas",
        "health & medical",
        "automotive",
        "pets",
        "specialty food",
        "food delivery services",
        "caterers",
    }
)
_CATEGORY_SUFFIXES = (" bars", " restaurants", " shops", " houses", " places", " spots")


@dataclass(frozen=True)
class AttributeConstraint:
    """One requirement a system reads from the user's words, checked against the POI's structured fields only
    (`check_constraint`: True, False, or None where the knowledge base does not know). `key` identifies it (a
    later mention of the same key replaces it).

    Not the generator's `trace_dataset.generate.preferences.Constraint`: that one is the traveller's goal in
    the generator's vocabulary (kind:value, a landmark radius, review-only aspects), decided with review
    evidence where an attribute is silent, and no system may read it.
    """

    key: str  # e.g. "price_max", "noise", "bool:outdoor_seating", "ambience:romantic", "category"
    kind: str  # price_max | price_min | rating_min | enum | bool | list | any_list | dietary | category
    field: str = ""  # attribute name (enum, bool, list kinds)
    values: tuple[Any, ...] = ()  # allowed values / wanted keys / price bound

    def describe(self) -> str:
        if self.kind in ("price_max", "price_min"):
            op = "<=" if self.kind == "price_max" else ">="
            return f"price {op} {'$' * int(self.values[0])}"
        if self.kind == "rating_min":
            return f"stars >= {float(self.values[0]):.1f}"
        if self.kind == "bool":
            return self.field.replace("_", " ")
        if self.kind == "any_list":
            return self.field
        return f"{self.field or self.kind}: {'/'.join(map(str, self.values))}"


_PRICE_RELATIVE = "price_relative"  # resolved against the rejected POIs' prices in parse_constraints
_NUMBER_WORDS = {"one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0}
_STARS_NUMBER = r"(?:[1-5](?:\.[05])?|(?:one|two|three|four|five)(?: and a half)?)"
HIGHLY_RATED_STARS = 4.0


def _stars_value(text: str) -> float:
    """ "4.5" -> 4.5; "four and a half" -> 4.5."""
    text = text.lower()
    if text[0].isdigit():
        return float(text)
    word, half, _ = text.partition(" and a half")
    return _NUMBER_WORDS[word.strip()] + (0.5 if half else 0.0)


def _phrase_body(phrase: str) -> str:
    return r"[\s-]+".join(re.escape(w) for w in phrase.split())


_LEAD = r"(?<![\w$.-])"  # a mention starts a word


@cache
def _matcher() -> tuple[re.Pattern[str], tuple[tuple[re.Pattern[str], Any, bool], ...]]:
    """One alternation of every rule, price and rating pattern (a single scan per text), plus each
    alternative on its own, in order, to tell which one matched: (pattern, AttributeConstraint or a callable
    of the matched text giving one, negatable). At one position the earlier alternative wins, and matches do
    not overlap ("not too loud" is the quiet rule, "free wifi" the free-wifi rule). Named groups would
    tell the alternative directly but make the scan about six times slower.
    """
    parts: list[str] = []
    alternatives: list[tuple[re.Pattern[str], Any, bool]] = []

    def add(pattern: str, what: Any, negatable: bool = True, after: str = r"(?![\w-])") -> None:
        body = re.sub(r"[(](?![?])", "(?:", pattern) + after
        parts.append(body)
        alternatives.append((re.compile(body, re.IGNORECASE), what, negatable))

    for rule in RULES:
        constraint = AttributeConstraint(rule.key, rule.kind, rule.field, rule.values)
        for p in rule.patterns:
            add(p, constraint, rule.negatable)
    for word in RELATIVE_PRICE_WORDS:
        add(_phrase_body(word), AttributeConstraint("price", _PRICE_RELATIVE, "price"), negatable=False)
    for word, ceiling in PRICE_KEYWORDS.items():
        constraint = (
            AttributeConstraint("price", "price_min", "price", (LUXURY_FLOOR,))
            if ceiling >= max(PRICE_KEYWORDS.values())
            else AttributeConstraint("price", "price_max", "price", (ceiling,))
        )
        add(_phrase_body(word), constraint, after=r"(?!\w)")  # "budget-friendly" is a budget word
    add(
        r"\${1,4}",
        lambda s: AttributeConstraint("price", "price_max", "price", (len(s),)),
        negatable=False,
        after=r"(?![\w$])",
    )
    add(
        r"highly[- ]rated|top[- ]rated|well[- ]reviewed|great reviews",
        AttributeConstraint("rating", "rating_min", "stars", (HIGHLY_RATED_STARS,)),
    )
    for pattern in (rf"{_STARS_NUMBER}\s*(?:\+|-?\s*stars?)", rf"rated\s+(?:at\s+least\s+)?{_STARS_NUMBER}"):
        add(
            pattern,
            lambda s: AttributeConstraint("rating", "rating_min", "stars", (_stars_value(_first_number(s)),)),
            negatable=False,
            after=r"(?!\w|\.\d)",
        )
    regex = re.compile(_LEAD + "(?:" + "|".join(f"(?:{p})" for p in parts) + ")", re.IGNORECASE)
    return regex, tuple(alternatives)


_NUMBER_RE = re.compile(rf"{_STARS_NUMBER}", re.IGNORECASE)


def _first_number(text: str) -> str:
    m = _NUMBER_RE.search(text)
    if m is None:  # the rating patterns always contain one
        raise ValueError(f"no star count in {text!r}")
    return m.group(0)


_WORD_RE = re.compile(r"[\w']+")


def negated(text: str, start: int, window: int = NEGATION_WINDOW) -> bool:
    """True when one of the `window` words before offset `start` is a negator."""
    before = _WORD_RE.findall(text[max(0, start - 60) : start].lower().replace("\u2019", "'"))[-window:]
    return any(w in WISH_NEGATORS or w.endswith("n't") for w in before)


def text_mentions(text: str) -> tuple[tuple[int, AttributeConstraint], ...]:
    """(offset, constraint) of every non-negated rule, price or rating mention in one text, in order."""
    regex, alternatives = _matcher()
    out = []
    for m in regex.finditer(text):
        # the alternation's choice: the first alternative that matches here (one always does)
        _, what, negatable = next(alt for alt in alternatives if alt[0].match(text, m.start()))
        if negatable and negated(text, m.start()):
            continue
        out.append((m.start(), what(m.group(0)) if callable(what) else what))
    return tuple(out)


def category_aliases(category: str) -> tuple[str, ...]:
    """How a user names a category: "Sushi Bars" -> ("sushi bars", "sushi"); "Burgers" -> (.., "burger");
    "Coffee & Tea" -> (.., "coffee", "tea"); "American (New)" -> (.., "american")."""
    name = category.lower().strip()
    out = [name]
    bare = re.sub(r"\s*\([^)]*\)", "", name).strip()  # "american (new)" -> "american"
    parts = [p.strip() for p in bare.split("&")] if "&" in bare else [bare]
    for part in parts:
        if not part or part in GENERIC_CATEGORIES:
            continue
        out.append(part)
        for suffix in _CATEGORY_SUFFIXES:
            if part.endswith(suffix) and len(part) > len(suffix):
                out.append(part[: -len(suffix)])
        if part.endswith("s") and len(part) > 3 and " " not in part:
            out.append(part[:-1])
    return tuple(dict.fromkeys(out))


def _alias_key(text: str) -> str:
    return re.sub(r"[\s-]+", " ", text.lower()).strip()


class CategoryMatcher:
    """Finds the non-generic categories of a set that a text names (one regex over all their aliases)."""

    def __init__(self, category_names: Iterable[str]):
        self.names: dict[str, list[str]] = {}  # alias key -> category names (lower case)
        for name in sorted({c.lower() for c in category_names}):
            if name in GENERIC_CATEGORIES:
                continue
            for alias in category_aliases(name):
                self.names.setdefault(_alias_key(alias), []).append(name)
        aliases = sorted(self.names, key=lambda a: (-len(a), a))  # longest first
        self.regex = (
            re.compile(
                r"(?<![\w-])(?:" + "|".join(_phrase_body(a) for a in aliases) + r")(?![\w-])", re.IGNORECASE
            )
            if aliases
            else None
        )

    def find(self, text: str) -> list[str]:
        """Category names the text mentions (not negated), in sorted order."""
        if self.regex is None:
            return []
        found: set[str] = set()
        for m in self.regex.finditer(text):
            if not negated(text, m.start()):
                found.update(self.names[_alias_key(m.group(0))])
        return sorted(found)


def _slot(key: str) -> str:
    """Keys sharing a slot replace each other: the ambience is one wish ("elegant, now trendy instead")."""
    return "ambience" if key.startswith("ambience:") else key


def parse_constraints(
    user_texts: Iterable[str],
    categories: CategoryMatcher | Iterable[str] = (),
    rejected_prices: Sequence[int] = (),
    memo: dict[str, tuple[tuple[int, AttributeConstraint], ...]] | None = None,
) -> list[AttributeConstraint]:
    """Constraints stated in the user turns, one per slot, the latest mention winning, in first-slot order.

    `categories`: the categories a user may name (names or a CategoryMatcher; generic ones are ignored);
    those named in the latest user turn that names any form one "category" constraint, satisfied by a POI
    with any of them. `rejected_prices`: price levels of rejected POIs, for relative wishes ("something
    cheaper": one level below the cheapest rejected, else the cheap ceiling). `memo`: text -> its
    mentions, reused across calls (the rows of one dialogue share their earlier user turns).
    """
    matcher = categories if isinstance(categories, CategoryMatcher) else CategoryMatcher(categories)
    cheap = min(PRICE_KEYWORDS.values())
    relative = max(1, min(rejected_prices) - 1) if rejected_prices else cheap
    by_slot: dict[str, AttributeConstraint] = {}
    wanted_categories: list[str] = []
    for text in user_texts:
        mentions = memo.get(text) if memo is not None else None
        if mentions is None:
            mentions = text_mentions(text)
            if memo is not None:
                memo[text] = mentions
        for _, constraint in mentions:
            if constraint.kind == _PRICE_RELATIVE:
                constraint = AttributeConstraint("price", "price_max", "price", (relative,))
            slot = _slot(constraint.key)
            by_slot.pop(slot, None)  # re-insert: the latest mention wins
            by_slot[slot] = constraint
        named = matcher.find(text)
        if named:
            wanted_categories = named
    out = list(by_slot.values())
    if wanted_categories:
        out.append(AttributeConstraint("category", "category", "categories", tuple(wanted_categories)))
    return out


def check_constraint(constraint: AttributeConstraint, poi: Poi) -> bool | None:
    """True if `poi` satisfies the constraint, False if it violates it, None if the KB does not say."""
    attrs: Mapping[str, Any] = poi.attributes or {}
    kind = constraint.kind
    if kind in ("price_max", "price_min"):
        if poi.price is None:
            return None
        bound = int(constraint.values[0])
        return poi.price <= bound if kind == "price_max" else poi.price >= bound
    if kind == "rating_min":
        return poi.stars >= float(constraint.values[0])
    if kind == "category":
        have = {c.lower() for c in poi.categories}
        return any(c in have for c in constraint.values)
    value = attrs.get(constraint.field)
    if kind == "dietary":
        word = str(constraint.values[0]).replace("-", " ")
        if any(word in c.lower().replace("-", " ") for c in poi.categories):
            return True
        return None if value is None else constraint.values[0] in value
    if value is None:
        return None
    if kind == "enum":
        return value in constraint.values
    if kind == "bool":
        return bool(value) is constraint.values[0]
    if kind == "list":
        return constraint.values[0] in value
    if kind == "any_list":
        return len(value) > 0
    raise ValueError(f"unknown constraint kind {kind!r}")


def constraint_counts(constraints: Sequence[AttributeConstraint], poi: Poi) -> tuple[int, int, int]:
    """(satisfied, violated, unknown) over the constraints."""
    results = [check_constraint(c, poi) for c in constraints]
    return results.count(True), results.count(False), results.count(None)


def constraint_share(
    constraints: Sequence[AttributeConstraint], poi: Poi, unknown_credit: float = UNKNOWN_CREDIT
) -> float:
    """(satisfied + unknown_credit * unknown) / n; 0.0 with no constraints."""
    if not constraints:
        return 0.0
    satisfied, _, unknown = constraint_counts(constraints, poi)
    return (satisfied + unknown_credit * unknown) / len(constraints)


def rank_by_constraints(
    pois: Sequence[Poi],
    constraints: Sequence[AttributeConstraint],
    tiebreak: Mapping[str, float],
    unknown_credit: float = UNKNOWN_CREDIT,
) -> list[tuple[str, float]]:
    """(business_id, share) best first: share, then the tie-break score (TF-IDF), then business_id."""
    scored = [(p.business_id, constraint_share(constraints, p, unknown_credit)) for p in pois]
    scored.sort(key=lambda x: (-x[1], -tiebreak.get(x[0], 0.0), x[0]))
    return scored
