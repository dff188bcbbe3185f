"""SnipRec's responses on Trace: verbatim quotes behind the best snippets, and clarification questions.

Recommend and compare turns use the shared template of `baselines.toolkit.responses` (the non-LLM baselines' wording,
`[Rn]` labels, at most 20 words per quote) with one change: the evidence. Snippets are paraphrases (LLM) or
rewritten clauses (rules: names replaced), and Trace's grounding metrics check quotes verbatim, so a quote is
never the snippet itself: it is the review sentence behind the snippet. For each recommended POI,
`SnippetEvidence` walks its units in the order of their weight in this turn's score (a unit's group weight
1/(kappa + rank) from preference groups, best first), skips attribute templates (no review behind them),
and asks the shared `EvidenceIndex` for the best span of that unit's review alone, the terms being the content
words of the unit's source span (of the snippet itself when it has no span). One quote per review; a POI
with fewer such units than quotes needed is completed from the `EvidenceIndex`'s query-term rule; a turn with
at least one such quote counts 1 as `quote_fallbacks` in the prediction's meta (a count of turns, like the
system turns the fallback report divides it by: `SnippetEvidence.fallbacks` counts the quotes).

ask_preference turns: with an LLM, App. C.4's prompt over the dialogue so far ("Seeker:" / "Recommender:"
lines), the reply's first line; an empty reply falls back to the template and is counted
(`clarify_fallback`). Without an LLM, the shared template question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from baselines.sniprec.prompts import PromptRunner
from baselines.sniprec.units import Unit
from baselines.toolkit.responses import Evidence, EvidenceIndex
from baselines.toolkit.text import content_tokens

if TYPE_CHECKING:
    from baselines.sniprec.index import Hit
    from trace_dataset.kb.store import KnowledgeBase

ROLE_NAMES = {"user": "Seeker", "system": "Recommender"}


class SnippetEvidence:
    """Quotes for one turn's response, from the units that scored each POI (see the module docstring).

    It has `EvidenceIndex.evidence`'s signature, so `baselines.toolkit.responses.template_response` takes it as is.
    """

    def __init__(self, kb: KnowledgeBase, base: EvidenceIndex, best_units: Mapping[str, Sequence[Unit]]):
        self.kb = kb
        self.base = base
        self.best_units = best_units
        self.fallbacks = 0  # quotes that came from the query-term rule instead of a unit's review

    def _unit_quote(self, poi_id: str, unit: Unit) -> Evidence | None:
        review_id = unit.review_id
        if review_id is None:
            return None
        text = self.kb.review_text(review_id)
        source = text[unit.start : unit.end] if unit.start is not None and unit.end is not None else unit.text
        others = [r.review_id for r in self.kb.reviews_of(poi_id) if r.review_id != review_id]
        return self.base.best(poi_id, content_tokens(source), exclude_review_ids=others)

    def evidence(
        self, poi_id: str, terms: Iterable[str], n: int = 1, exclude_review_ids: Iterable[str] = ()
    ) -> list[Evidence]:
        used = set(exclude_review_ids)
        out: list[Evidence] = []
        for unit in self.best_units.get(poi_id, ()):
            if len(out) == n:
                return out
            if unit.review_id is None or unit.review_id in used:
                continue
            ev = self._unit_quote(poi_id, unit)
            if ev is not None:
                out.append(ev)
                used.add(ev.review_id)
        if len(out) < n:
            more = self.base.evidence(poi_id, terms, n - len(out), exclude_review_ids=used)
            self.fallbacks += len(more)
            out.extend(more)
        return out


def best_units(
    turns: Sequence[Sequence[tuple[int, Sequence[Hit]]]],
    kappa: float,
    units_of: Callable[[str], Sequence[Unit]],
) -> dict[str, list[Unit]]:
    """Each POI's retrieved units in preference groups, by 1/(kappa + rank) (ties: later turn, then earlier
    group); `turns` as the scoring accumulates them, `units_of` a POI's units. Every retrieved unit counts
    here, not only the best per group as in the score, so that a POI's second quote can come from its
    second unit."""
    ranked: dict[str, list[tuple[float, int, int, Unit]]] = {}
    order = 0
    for t, groups in enumerate(turns):
        for sign, hits in groups:
            order += 1
            if sign < 0:
                continue
            for rank, hit in enumerate(hits, start=1):
                weight = 1.0 / (kappa + rank)
                ranked.setdefault(hit.poi_id, []).append((-weight, -t, order, units_of(hit.poi_id)[hit.unit]))
    return {pid: [u for *_, u in sorted(items, key=lambda x: x[:3])] for pid, items in ranked.items()}


def dialogue_context(history: Sequence[Mapping[str, Any]]) -> str:
    """The dialogue so far as C.4's context: one "Seeker: ..." / "Recommender: ..." line per turn."""
    return "\n".join(f"{ROLE_NAMES[t['role']]}: {' '.join(str(t['text']).split())}" for t in history)


def clarification_questions(
    runner: PromptRunner, items: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]
) -> list[str]:
    """App. C.4 for each (poi_type, history): the reply's first line ("" when the model gave none)."""
    return runner.text(
        "clarify", [(poi_type, {"context": dialogue_context(history)}) for poi_type, history in items]
    )
