"""Stage 4: validation. Every generated dialogue passes these checks or is regenerated; the reason codes
of failures are counted in corpus.json.

`validate_record` needs only the record and the knowledge base (structure, action coverage, ids, citations,
quotes against their reviews, copied review text, price words), so it also checks LLM output and corpora
on disk. `validate_plan` checks the semantics the plan carries (gold satisfies what was stated, rejection
adds a constraint the rejected POI violates, alternatives recomputed, the stage-5 tier).

`validate_record` runs its checks in a fixed order (field order, turn order, dialogue flow, ids, citations
and quotes, authored text) and returns the problems in that order. The order is part of the output: the llm
backend sends the first problems back to the model, so reordering the checks changes its prompts (and
replayed cached answers). Fields out of schema order stop the checks, which would index missing fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from trace_dataset.constants import (
    ACTION_ROLES,
    CANDIDATES_PER_DIALOGUE,
    CLOSING_ACTION,
    MAX_TURNS,
    MIN_DISTINCT_RECOMMENDED,
    MIN_TURNS,
    OPENING_ACTION,
    POOL_SIZES,
    PRICE_KEYWORDS,
    QUOTE_MATCH_THRESHOLD,
    RECOMMENDATION_ACTIONS,
    REJECTION_ACTION,
    REJECTIONS_PER_TIER,
    TIERS,
)
from trace_dataset.generate.copyguard import ReviewNgrams, non_quote_segments
from trace_dataset.generate.difficulty import annotate, rejections_ok
from trace_dataset.generate.index import CellIndex
from trace_dataset.generate.plan import DialoguePlan
from trace_dataset.generate.template_backend import display_name
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import CITATION_LABEL_RE, QUOTE_RE, quote_support, span_checksum

PRICE_WORD_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in PRICE_KEYWORDS) + r")\b", re.IGNORECASE)
_QUOTE_LABEL_RE = re.compile(r"\s{0,2}\[R(\d+)\]")


class Problem(NamedTuple):
    code: str
    message: str


def _item(feature: Any) -> Any:
    """The element feature of a list feature ([x] or datasets.List(x))."""
    return feature[0] if isinstance(feature, list) else feature.feature


def _field_orders() -> dict[str, list[str]]:
    from trace_dataset.schema import DIALOGUE_FEATURES

    f = DIALOGUE_FEATURES
    turn = _item(f["turns"])
    return {
        "dialogue": list(f),
        "scenario": list(f["scenario"]),
        "turn": list(turn),
        "citation": list(_item(turn["citations"])),
        "quote_span": list(_item(f["quote_spans"])),
        "metadata": list(f["metadata"]),
    }


_ORDERS: dict[str, list[str]] | None = None


def field_orders() -> dict[str, list[str]]:
    global _ORDERS
    if _ORDERS is None:
        _ORDERS = _field_orders()
    return _ORDERS


def record_strings(value: Any):
    """Every string value of a record, in order (what the release's leak check joins)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from record_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from record_strings(v)


def quotes_with_labels(text: str) -> list[tuple[str, int | None, int]]:
    """(quote, label number or None, offset) of every double-quoted span; the label is the [Rn] right after."""
    out = []
    for m in QUOTE_RE.finditer(text):
        quote = m.group(1) if m.group(1) is not None else m.group(2)
        lab = _QUOTE_LABEL_RE.match(text, m.end())
        out.append((quote, int(lab.group(1)) if lab else None, m.start()))
    return out


def validate_record(
    d: dict[str, Any], kb: KnowledgeBase, ngrams: ReviewNgrams | None = None
) -> list[Problem]:
    """Record-level checks (see module docstring); an empty list means valid."""
    probs, complete = _field_order_problems(d)
    if not complete:
        return probs
    turns = d["turns"]
    probs += _turn_order_problems(turns)
    if not turns:
        return probs
    probs += _flow_problems(turns, d["scenario"]["difficulty"])
    probs += _id_problems(d, kb)
    probs += _citation_problems(turns, d["quote_spans"], kb)
    probs += _authored_text_problems(d, kb, ngrams)
    return probs


def _field_order_problems(d: dict[str, Any]) -> tuple[list[Problem], bool]:
    """Fields in schema order, and a known tier; False when a record or turn is too far off to check on."""
    probs: list[Problem] = []
    orders = field_orders()
    if list(d) != orders["dialogue"]:
        probs.append(Problem("schema", f"fields {list(d)} != {orders['dialogue']}"))
        return probs, False
    if list(d["scenario"]) != orders["scenario"]:
        probs.append(Problem("schema", f"scenario fields {list(d['scenario'])}"))
    if list(d["metadata"]) != orders["metadata"]:
        probs.append(Problem("schema", f"metadata fields {list(d['metadata'])}"))
    tier = d["scenario"]["difficulty"]
    if tier not in TIERS:
        probs.append(Problem("schema", f"difficulty {tier!r} not in {TIERS}"))
    for t in d["turns"]:
        if list(t) != orders["turn"]:
            probs.append(Problem("schema", f"turn fields {list(t)}"))
            return probs, False
        for c in t["citations"]:
            if list(c) != orders["citation"]:
                probs.append(Problem("schema", f"citation fields {list(c)}"))
    for q in d["quote_spans"]:
        if list(q) != orders["quote_span"]:
            probs.append(Problem("schema", f"quote span fields {list(q)}"))
    return probs, True


def _turn_order_problems(turns: list[dict[str, Any]]) -> list[Problem]:
    """Turn count, turn ids, strict alternation, and each action said by its role."""
    probs: list[Problem] = []
    n = len(turns)
    if not MIN_TURNS <= n <= MAX_TURNS:
        probs.append(Problem("turn_count", f"{n} turns; expected {MIN_TURNS}-{MAX_TURNS}"))
    for i, t in enumerate(turns):
        if t["turn_id"] != i:
            probs.append(Problem("turn_ids", f"turn {i} has turn_id {t['turn_id']}"))
        want = "user" if i % 2 == 0 else "system"
        if t["role"] != want:
            probs.append(Problem("alternation", f"turn {i} role {t['role']!r}; expected {want!r}"))
        if ACTION_ROLES.get(t["action"]) != t["role"]:
            probs.append(
                Problem("action_role", f"turn {i}: action {t['action']!r} is not a {t['role']} action")
            )
    return probs


def _flow_problems(turns: list[dict[str, Any]], tier: str) -> list[Problem]:
    """Opening and closing, action coverage, distinct POIs, rejections per tier and around each rejection."""
    probs: list[Problem] = []
    if turns[0]["action"] != OPENING_ACTION:
        probs.append(Problem("opening", f"first action {turns[0]['action']!r}; expected {OPENING_ACTION!r}"))
    if turns[-1]["action"] != CLOSING_ACTION or turns[-1]["role"] != "system":
        probs.append(
            Problem("closing", f"last action {turns[-1]['action']!r}; expected system {CLOSING_ACTION!r}")
        )
    actions = [t["action"] for t in turns]
    if "ask_preference" not in actions:
        probs.append(Problem("no_ask_preference", "no ask_preference turn"))
    if "compare" not in actions:
        probs.append(Problem("no_compare", "no compare turn"))
    recommended: list[str] = []
    for t in turns:
        if t["action"] in RECOMMENDATION_ACTIONS:
            recommended.extend(p for p in t["referenced_poi_ids"] if p not in recommended)
    if len(recommended) < MIN_DISTINCT_RECOMMENDED:
        probs.append(
            Problem(
                "too_few_pois",
                f"{len(recommended)} distinct recommended POIs; expected >= {MIN_DISTINCT_RECOMMENDED}",
            )
        )
    n_rej = actions.count(REJECTION_ACTION)
    if tier in REJECTIONS_PER_TIER and not rejections_ok(tier, n_rej):
        probs.append(
            Problem(
                "rejections_for_tier",
                f"{n_rej} reject_and_refine turns for tier {tier} (expected {REJECTIONS_PER_TIER[tier]})",
            )
        )
    return probs + _rejection_context_problems(turns)


def _rejection_context_problems(turns: list[dict[str, Any]]) -> list[Problem]:
    """Each rejection follows a recommendation of the POI it rejects and is followed by one."""
    probs: list[Problem] = []
    for i, t in enumerate(turns):
        if t["action"] != REJECTION_ACTION:
            continue
        prev = turns[i - 1] if i else None
        nxt = turns[i + 1] if i + 1 < len(turns) else None
        if prev is None or prev["action"] not in RECOMMENDATION_ACTIONS:
            probs.append(
                Problem("rejection_context", f"turn {i}: reject_and_refine does not follow a recommendation")
            )
        elif t["referenced_poi_ids"] != prev["gold_poi_ids"]:
            probs.append(
                Problem(
                    "rejection_context",
                    f"turn {i}: rejects {t['referenced_poi_ids']}, not the recommended {prev['gold_poi_ids']}",
                )
            )
        if nxt is None or nxt["action"] not in RECOMMENDATION_ACTIONS:
            probs.append(
                Problem(
                    "rejection_context", f"turn {i}: reject_and_refine is not followed by a recommendation"
                )
            )
    return probs


def _id_problems(d: dict[str, Any], kb: KnowledgeBase) -> list[Problem]:
    """Candidates, nested pools of the right sizes, POIs of the dialogue's cell, and each turn's POI ids."""
    probs: list[Problem] = []
    cands = d["candidate_poi_ids"]
    if len(cands) != CANDIDATES_PER_DIALOGUE or len(set(cands)) != len(cands):
        probs.append(
            Problem(
                "candidates",
                f"{len(cands)} candidates ({len(set(cands))} distinct); expected {CANDIDATES_PER_DIALOGUE}",
            )
        )
    cset = set(cands)
    p16, p32, opn = set(d["pool_16_poi_ids"]), set(d["pool_32_poi_ids"]), set(d["open_set_poi_ids"])
    if not (cset <= p16 <= p32 <= opn):
        probs.append(Problem("pools", "pools are not nested: closed <= pool_16 <= pool_32 <= open"))
    for field, size in (
        ("pool_16_poi_ids", POOL_SIZES["pool_16"]),
        ("pool_32_poi_ids", POOL_SIZES["pool_32"]),
    ):
        ids = d[field]
        if len(set(ids)) != len(ids) or len(ids) != min(size or 0, len(opn)):
            probs.append(
                Problem(
                    "pools",
                    f"{field} has {len(ids)} ids ({len(set(ids))} distinct); expected {min(size or 0, len(opn))}",
                )
            )
    city, ptype = d["scenario"]["city"], d["scenario"]["poi_type"]
    for pid in opn:
        poi = kb.pois.get(pid)
        if poi is None:
            probs.append(Problem("unknown_poi", f"POI {pid!r} not in the knowledge base"))
        elif poi.city != city or poi.poi_type != ptype:
            probs.append(
                Problem("wrong_cell", f"POI {pid!r} is {poi.city} x {poi.poi_type}, not {city} x {ptype}")
            )
    for i, t in enumerate(d["turns"]):
        probs += _turn_id_problems(i, t, cset)
    return probs


def _turn_id_problems(i: int, t: dict[str, Any], cset: set[str]) -> list[Problem]:
    """A turn's POI ids are candidates; a recommendation's one gold is a POI it names, not an alternative."""
    probs: list[Problem] = []
    for field in ("referenced_poi_ids", "gold_poi_ids", "acceptable_alternative_poi_ids"):
        stray = [p for p in t[field] if p not in cset]
        if stray:
            probs.append(Problem("poi_not_candidate", f"turn {i} {field}: {stray} not among the candidates"))
    if t["action"] in RECOMMENDATION_ACTIONS:
        if len(t["gold_poi_ids"]) != 1 or t["gold_poi_ids"][0] not in t["referenced_poi_ids"]:
            probs.append(
                Problem("gold", f"turn {i}: gold {t['gold_poi_ids']} must be one POI the turn names")
            )
        if set(t["gold_poi_ids"]) & set(t["acceptable_alternative_poi_ids"]):
            probs.append(Problem("alternatives", f"turn {i}: gold listed among its alternatives"))
        if t["action"] == "compare" and len(set(t["referenced_poi_ids"])) != 2:
            probs.append(
                Problem("compare", f"turn {i}: a comparison names two POIs, got {t['referenced_poi_ids']}")
            )
    elif t["gold_poi_ids"] or t["acceptable_alternative_poi_ids"]:
        probs.append(Problem("gold", f"turn {i}: gold/alternatives on a {t['action']} turn"))
    return probs


def _citation_problems(
    turns: list[dict[str, Any]], spans: list[dict[str, Any]], kb: KnowledgeBase
) -> list[Problem]:
    """Per turn: text, labels R1..Rn matching the citations, cited reviews of named POIs; then its quotes,
    each against its review and the next `quote_spans` entry (`qi` counts the quotes across turns)."""
    probs: list[Problem] = []
    qi = 0
    for i, t in enumerate(turns):
        probs += _label_problems(i, t, kb)
        quotes = quotes_with_labels(t["text"])
        if t["action"] not in RECOMMENDATION_ACTIONS:
            if quotes or t["citations"]:
                probs.append(
                    Problem(
                        "quote_outside_recommendation",
                        f"turn {i}: quotes or citations on a {t['action']} turn",
                    )
                )
            continue
        labels = {c["label"]: c for c in t["citations"]}
        quoted_pois = set()
        for quote, label, _ in quotes:
            cit = labels.get(f"R{label}") if label is not None else None
            if cit is None:
                probs.append(
                    Problem(
                        "quote_without_label",
                        f"turn {i}: quote {quote[:40]!r} has no [Rn] label right after it",
                    )
                )
            else:
                quoted_pois.add(cit["business_id"])
                probs += _quote_problems(i, quote, cit, spans, qi, kb)
            qi += 1
        missing = [p for p in t["referenced_poi_ids"] if p not in quoted_pois]
        if missing:
            probs.append(Problem("no_quote", f"turn {i}: no quote backs {missing}"))
    if qi != len(spans):
        probs.append(Problem("quote_spans", f"{len(spans)} quote_spans for {qi} quotes"))
    return probs


def _label_problems(i: int, t: dict[str, Any], kb: KnowledgeBase) -> list[Problem]:
    """A turn's text is not empty, its [Rn] labels are its citations', and each cites a review of a POI it names."""
    probs: list[Problem] = []
    text = t["text"]
    if not text.strip():
        probs.append(Problem("empty_text", f"turn {i} has no text"))
    labels = [c["label"] for c in t["citations"]]
    if labels != [f"R{k}" for k in range(1, len(t["citations"]) + 1)]:
        probs.append(Problem("citation_labels", f"turn {i}: labels {labels} not R1..Rn"))
    if t["referenced_review_ids"] != [c["review_id"] for c in t["citations"]]:
        probs.append(Problem("citation_labels", f"turn {i}: referenced_review_ids differ from the citations"))
    used = {f"R{m.group(1)}" for m in CITATION_LABEL_RE.finditer(text)}
    if used != set(labels):
        probs.append(
            Problem(
                "citation_labels",
                f"turn {i}: labels in text {sorted(used)} != citations {sorted(set(labels))}",
            )
        )
    for c in t["citations"]:
        r = kb.reviews.get(c["review_id"])
        if r is None:
            probs.append(
                Problem("unknown_review", f"turn {i}: review {c['review_id']!r} not in the knowledge base")
            )
        elif r.business_id != c["business_id"]:
            probs.append(
                Problem(
                    "review_not_of_poi", f"turn {i}: review {c['review_id']!r} belongs to {r.business_id!r}"
                )
            )
        elif c["business_id"] not in t["referenced_poi_ids"]:
            probs.append(
                Problem(
                    "review_not_of_poi",
                    f"turn {i}: cites a review of {c['business_id']!r}, a POI it does not name",
                )
            )
    return probs


def _quote_problems(
    i: int, quote: str, cit: dict[str, Any], spans: list[dict[str, Any]], qi: int, kb: KnowledgeBase
) -> list[Problem]:
    """Quote `qi` (0-based, of the dialogue) matches its cited review and is `quote_spans[qi]` exactly."""
    probs: list[Problem] = []
    review = kb.reviews.get(cit["review_id"])
    source = review.text if review is not None else None
    if source is None or quote_support(quote, [source]) < QUOTE_MATCH_THRESHOLD:
        probs.append(
            Problem(
                "quote_mismatch", f"turn {i}: quote {quote[:40]!r} does not match review {cit['review_id']!r}"
            )
        )
    if qi >= len(spans):
        probs.append(Problem("quote_spans", f"turn {i}: quote {qi + 1} has no quote_spans entry"))
        return probs
    s = spans[qi]
    if s["quote_id"] != qi + 1 or s["review_id"] != cit["review_id"]:
        probs.append(
            Problem(
                "quote_spans",
                f"quote_spans[{qi}] = {s['quote_id']}/{s['review_id']}; expected {qi + 1}/{cit['review_id']}",
            )
        )
    elif source is not None and (
        source[s["start"] : s["end"]] != quote or s["checksum"] != span_checksum(quote)
    ):
        probs.append(
            Problem("quote_spans", f"quote_spans[{qi}] offsets/checksum do not give the quoted text")
        )
    return probs


def _authored_text_problems(
    d: dict[str, Any], kb: KnowledgeBase, ngrams: ReviewNgrams | None
) -> list[Problem]:
    """No six review words outside quotes; price words only in user turns, all naming one ceiling."""
    probs: list[Problem] = []
    if ngrams is not None:
        # like the release's leak check: every string of the record joined in order (quotes excluded)
        copied = ngrams.copied(" ".join(record_strings(d)))
        if copied:
            probs.append(
                Problem("copied_review_text", f"non-quote text repeats six review words {copied[0]!r}")
            )
    cset = set(d["candidate_poi_ids"])
    names = sorted({display_name(kb.pois[p].name) for p in cset if p in kb.pois}, key=len, reverse=True)
    ceilings = set()
    for i, t in enumerate(d["turns"]):
        text = t["text"]
        for name in names:  # a POI called "... Budget Inn" states no budget
            text = text.replace(name, " ")
        words = [w.lower() for seg in non_quote_segments(text) for w in PRICE_WORD_RE.findall(seg)]
        if t["role"] == "system" and words:
            probs.append(Problem("price_words", f"turn {i}: system text uses price words {words}"))
        ceilings |= {PRICE_KEYWORDS[w] for w in words}
    if len(ceilings) > 1:
        probs.append(Problem("price_words", f"user price words imply several ceilings {sorted(ceilings)}"))
    return probs


def validate_plan(plan: DialoguePlan, cell: CellIndex) -> list[Problem]:
    """Semantic checks from the constraints the plan records (recomputed with the predicate's bitsets)."""
    probs: list[Problem] = []
    idx = {pid: i for i, pid in enumerate(cell.ids)}
    cand = plan.candidates
    turns = plan.turns
    for k, t in enumerate(turns):
        if t.action in RECOMMENDATION_ACTIONS:
            mask = cell.mask(list(t.active))
            g = t.gold[0]
            if not mask >> idx[g] & 1 or g in t.rejected:
                probs.append(Problem("gold_unsatisfied", f"turn {k}: gold {g} misses a stated constraint"))
            alts = [p for p in cand if mask >> idx[p] & 1 and p not in t.rejected and p != g]
            if list(t.alternatives) != alts:
                probs.append(
                    Problem("alternatives", f"turn {k}: alternatives {t.alternatives} != computed {alts}")
                )
        if t.action == REJECTION_ACTION:
            rejected = t.pois[0]
            stated = t.stated
            if not stated or any(cell.sat_of(c) >> idx[rejected] & 1 for c in stated):
                probs.append(
                    Problem(
                        "rejection_semantics",
                        f"turn {k}: the rejected POI does not violate the added constraint",
                    )
                )
            nxt = turns[k + 1] if k + 1 < len(turns) else None
            if nxt is None or any(not cell.sat_of(c) >> idx[nxt.gold[0]] & 1 for c in stated):
                probs.append(
                    Problem("rejection_semantics", f"turn {k}: the next gold does not satisfy the refinement")
                )
    label = annotate(plan.rejections, len(plan.stated), plan.conflict)
    if label != plan.tier:
        probs.append(Problem("tier", f"content implies {label}, target {plan.tier}"))
    if not rejections_ok(plan.tier, plan.rejections):
        probs.append(Problem("rejections_for_tier", f"{plan.rejections} rejections for {plan.tier}"))
    return probs


def codes(problems: Iterable[Problem]) -> list[str]:
    return sorted({p.code for p in problems})
