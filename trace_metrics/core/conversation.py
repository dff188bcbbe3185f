"""CoRE's conversation log (paper §3, Fig. 13) built from a Trace dialogue and a system's predictions.

One entry point serves teacher-forced replay and interactive logs: `build_log(dialogue, predictions)`, with
`dialogue` a dialogue record in the project's schema (`schema.DIALOGUE_FEATURES`) and `predictions` the
system's rows for that dialogue's system turns (`{"turn_id", "ranked_poi_ids", "response", "citations"}`).

- Teacher-forced replay: the dialogue is the reference dialogue; every user turn is the reference user's, and
  the system's response at each system turn is the prediction's `response` (the reference system text is never
  shown). Interactive logs: the dialogue record holds the live conversation; the same rule applies.
- `<history>` holds the turns before the interaction starts (the user turn that precedes the first predicted
  system turn); with a prediction for every system turn it is empty and everything is rated.
- Recommendation list (CoRE's session list r_session = concat(R)): at each system turn whose action is
  recommend or compare, the system's top-`top_k` ranked POIs (default 3, Trace's largest Recall cutoff),
  concatenated in turn order, each POI once (first appearance). Each entry shows the POI's facts from the
  knowledge base (type, categories, price, stars and review count, address) so that a judge can assess
  diversity and novelty of places it has never heard of.
- Ground truth: the gold POIs of the recommend/compare turns, minus those the user later rejected (named in a
  reject_and_refine turn); when every gold POI was rejected, the gold POIs of the last recommendation turn.
- Evidence (for Groundness only): after each system turn, the reviews its citations point to, as
  `[Rn] (review of PLACE) text`.
Texts are inserted as written, except that `<` and `>` become `&lt;` / `&gt;` so that no text can open or
close a tag of the log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from trace_dataset.constants import RECOMMENDATION_ACTIONS
from trace_dataset.io import TraceDataError

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

DEFAULT_TOP_K = 3
PRICE_SIGNS = {1: "$", 2: "$$", 3: "$$$", 4: "$$$$"}
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]+")

HISTORY_NOTE = (
    "<!-- This part is the beginning of the conversation, and it is designed to help you understand the context "
    "of the conversation. You don't need to evaluate this part -->"
)
INTERACTION_NOTE = "<!-- Please rate the system's responses in this section according to the guidelines. -->"


@dataclass(frozen=True)
class LogTurn:
    role: str  # "user" | "system"
    text: str
    evidence: tuple[str, ...] = ()  # system turns: "[Rn] (review of PLACE) text", one per citation


@dataclass(frozen=True)
class ConversationLog:
    """A conversation log L = {D, R} in CoRE's shape, with the ids it was built from (for audit)."""

    log_id: str
    interaction: tuple[LogTurn, ...]
    recommendations: tuple[str, ...]  # rendered entries of the session-level recommendation list
    ground_truth: tuple[str, ...]
    history: tuple[LogTurn, ...] = ()
    dialogue_id: str = ""
    system: str = ""
    recommendation_ids: tuple[str, ...] = ()
    ground_truth_ids: tuple[str, ...] = ()
    turn_lists: tuple[tuple[int, tuple[str, ...]], ...] = field(default=())  # (turn_id, top-k) per rec. turn

    def render(self, evidence: bool = False) -> str:
        """The log as the evaluator and the debaters read it (Fig. 13); `evidence` adds the cited reviews."""
        lines = ["<conversation>", "  <history>", f"    {HISTORY_NOTE}"]
        lines += [_render_turn(t, evidence) for t in self.history]
        lines += ["  </history>", "  <interaction>", f"    {INTERACTION_NOTE}"]
        lines += [_render_turn(t, evidence) for t in self.interaction]
        lines += ["  </interaction>", "</conversation>", "<system_recommendation_list>"]
        lines += [f"  {i}. {_escape(r)}" for i, r in enumerate(self.recommendations, start=1)] or ["  (none)"]
        lines += ["</system_recommendation_list>", "<groundtruth_list>"]
        lines += [f"  {_escape(g)}" for g in self.ground_truth] or ["  (none)"]
        lines.append("</groundtruth_list>")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ConversationLog:
        def turns(key: str) -> tuple[LogTurn, ...]:
            return tuple(
                LogTurn(t["role"], t["text"], tuple(t.get("evidence") or ())) for t in d.get(key) or ()
            )

        return cls(
            log_id=d["log_id"],
            interaction=turns("interaction"),
            history=turns("history"),
            recommendations=tuple(d.get("recommendations") or ()),
            ground_truth=tuple(d.get("ground_truth") or ()),
            dialogue_id=d.get("dialogue_id", ""),
            system=d.get("system", ""),
            recommendation_ids=tuple(d.get("recommendation_ids") or ()),
            ground_truth_ids=tuple(d.get("ground_truth_ids") or ()),
            turn_lists=tuple((int(t), tuple(ids)) for t, ids in d.get("turn_lists") or ()),
        )


def metric_inputs(logs: Sequence[ConversationLog]) -> dict[str, list]:
    """Logs as the `core` evaluate module's inputs and options: `core.compute(**metric_inputs(logs), ...)`."""

    def turns(ts: Sequence[LogTurn]) -> list[dict[str, Any]]:
        return [{"role": t.role, "text": t.text, "evidence": list(t.evidence)} for t in ts]

    return {
        "interactions": [turns(c.interaction) for c in logs],
        "recommendations": [list(c.recommendations) for c in logs],
        "ground_truth": [list(c.ground_truth) for c in logs],
        "histories": [turns(c.history) for c in logs],
        "ids": [c.log_id for c in logs],
    }


def _escape(text: str) -> str:
    return str(text).replace("<", "&lt;").replace(">", "&gt;")


def _render_turn(turn: LogTurn, evidence: bool) -> str:
    tag = "user" if turn.role == "user" else "system"
    out = f"    <{tag}>{_escape(turn.text)}</{tag}>"
    if evidence and tag == "system":
        if turn.evidence:
            body = "\n".join(f"      {_escape(e)}" for e in turn.evidence)
            out += f"\n    <cited_reviews>\n{body}\n    </cited_reviews>"
        else:
            out += "\n    <cited_reviews>none</cited_reviews>"
    return out


def log_id(dialogue_id: str, system: str) -> str:
    """The id every output row carries: `DIALOGUE_ID:SYSTEM`."""
    return f"{dialogue_id}:{system}" if system else dialogue_id


def safe_file_stem(identifier: str) -> str:
    """A file name for an id: the id with ":" written "+" when it is plain, else a hash of it."""
    import hashlib

    if _SAFE_ID.fullmatch(identifier.replace(":", "")) and not identifier.startswith("."):
        return identifier.replace(":", "+")
    return "id-" + hashlib.sha256(identifier.encode("utf-8")).hexdigest()[:24]


def describe_poi(poi_id: str, kb: KnowledgeBase | None) -> str:
    """A recommendation-list entry: name and facts from the knowledge base (the id when unknown)."""
    poi = kb.pois.get(poi_id) if kb is not None else None
    if poi is None:
        return poi_id
    facts = [f"{poi.poi_type} in {poi.city}" if poi.city else poi.poi_type]
    if poi.categories:
        facts.append(", ".join(poi.categories))
    if poi.price in PRICE_SIGNS:
        facts.append(f"price {PRICE_SIGNS[poi.price]}")
    facts.append(f"{poi.stars:g} stars from {poi.review_count} reviews")
    if poi.address:
        facts.append(poi.address)
    return f"{poi.name} ({'; '.join(facts)})"


def _evidence(citations: Mapping[str, str], kb: KnowledgeBase | None) -> tuple[str, ...]:
    out = []
    for label in sorted(citations, key=lambda lab: int(lab[1:]) if lab[1:].isdigit() else 0):
        review = kb.reviews.get(citations[label]) if kb is not None else None
        if review is None or review.text is None:
            out.append(f"[{label}] (review {citations[label]} not available)")
            continue
        poi = kb.pois.get(review.business_id) if kb is not None else None
        place = poi.name if poi is not None else review.business_id
        out.append(f"[{label}] (review of {place}) {' '.join(review.text.split())}")
    return tuple(out)


def _citations(row: Mapping[str, Any]) -> dict[str, str]:
    cites = row.get("citations") or {}
    if isinstance(cites, list):  # the Features form [{"label", "review_id"}]
        return {c["label"]: c["review_id"] for c in cites}
    return dict(cites)


def ground_truth_ids(dialogue: Mapping[str, Any]) -> list[str]:
    """Gold POIs of the recommend/compare turns not rejected later; else the last such turn's gold."""
    gold: list[str] = []
    last: list[str] = []
    rejected: set[str] = set()
    for t in dialogue["turns"]:
        if t["role"] == "system" and t.get("action") in RECOMMENDATION_ACTIONS and t.get("gold_poi_ids"):
            last = list(t["gold_poi_ids"])
            gold += [p for p in last if p not in gold]
        elif t["role"] == "user" and t.get("action") == "reject_and_refine":
            rejected.update(t.get("referenced_poi_ids") or ())
    kept = [p for p in gold if p not in rejected]
    return kept or last


def build_log(
    dialogue: Mapping[str, Any],
    predictions: Mapping[int, Mapping[str, Any]] | Sequence[Mapping[str, Any]],
    kb: KnowledgeBase | None = None,
    *,
    system: str = "",
    top_k: int = DEFAULT_TOP_K,
) -> ConversationLog:
    """The CoRE conversation log of one dialogue as the system played it (see the module docstring).

    `predictions`: the system's rows for this dialogue, a list or a mapping turn_id -> row; every system turn
    from the first predicted one on needs a row (TraceDataError naming the dialogue and turn otherwise).
    `kb` supplies place names, facts and review texts (without it, ids are shown).
    """
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k={top_k!r}; expected a positive integer")
    did = str(dialogue.get("dialogue_id", ""))
    rows = predictions if isinstance(predictions, Mapping) else {int(r["turn_id"]): r for r in predictions}
    turns = list(dialogue.get("turns") or [])
    if not turns:
        raise TraceDataError(f"dialogue {did!r} has no turns")
    predicted = [i for i, t in enumerate(turns) if t["role"] == "system" and t["turn_id"] in rows]
    if not predicted:
        raise TraceDataError(f"dialogue {did!r}: no prediction for any of its system turns")
    start = predicted[0]
    if start > 0 and turns[start - 1]["role"] == "user":
        start -= 1
    history = tuple(LogTurn(t["role"], t["text"]) for t in turns[:start])
    interaction: list[LogTurn] = []
    recommended: dict[str, None] = {}
    turn_lists: list[tuple[int, tuple[str, ...]]] = []
    for t in turns[start:]:
        if t["role"] != "system":
            interaction.append(LogTurn("user", t["text"]))
            continue
        row = rows.get(t["turn_id"])
        if row is None:
            raise TraceDataError(f"dialogue {did!r}: no prediction for system turn {t['turn_id']}")
        response = row.get("response")
        if not isinstance(response, str):
            raise TraceDataError(f"dialogue {did!r} turn {t['turn_id']}: response is not a string")
        interaction.append(LogTurn("system", response, _evidence(_citations(row), kb)))
        if t.get("action") in RECOMMENDATION_ACTIONS:
            top = tuple(row.get("ranked_poi_ids") or ())[:top_k]
            turn_lists.append((int(t["turn_id"]), top))
            for p in top:
                recommended.setdefault(p)
    truth = ground_truth_ids(dialogue)
    return ConversationLog(
        log_id=log_id(did, system),
        interaction=tuple(interaction),
        history=history,
        recommendations=tuple(describe_poi(p, kb) for p in recommended),
        ground_truth=tuple(describe_poi(p, kb) for p in truth),
        dialogue_id=did,
        system=system,
        recommendation_ids=tuple(recommended),
        ground_truth_ids=tuple(truth),
        turn_lists=tuple(turn_lists),
    )
