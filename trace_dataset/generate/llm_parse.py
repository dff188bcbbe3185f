"""Stage 3, `llm` backend: reading the model's answer. The JSON turns must follow the plan (roles, actions,
the POIs each turn names); every quote is snapped to the best-matching exact span of a review of a POI the turn
names (rapidfuzz partial_ratio >= 80, widened to whole words, at most 1.25x the span's length), [Rn] labels are
renumbered in order of appearance, and quotes outside recommendation turns are neutralised. A failure is a
`ParseFailure` whose code is counted in the run report and told to the model when it is asked again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from trace_dataset.constants import QUOTE_MATCH_THRESHOLD, RECOMMENDATION_ACTIONS
from trace_dataset.generate.attempts import Context
from trace_dataset.generate.index import _FORBIDDEN, CellIndex, Span
from trace_dataset.generate.plan import DialoguePlan, PlannedTurn
from trace_dataset.generate.template_backend import Citation, RenderedTurn, display_name
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import CITATION_LABEL_RE, QUOTE_RE

MAX_QUOTE_LENGTH_RATIO = 1.25  # a quote may not be much longer than the exact span it snaps to


@dataclass
class Snap:
    start: int
    end: int
    score: float


def snap_quote(quote: str, review_text: str, threshold: float = QUOTE_MATCH_THRESHOLD) -> Snap | None:
    """The exact span of `review_text` that best matches `quote` (rapidfuzz partial_ratio alignment), widened
    to whole words; None when the best score is below `threshold` or the quote is much longer than the span."""
    quote = quote.strip()
    if not quote or not review_text:
        return None
    pos = review_text.find(quote)
    if pos >= 0:
        return Snap(pos, pos + len(quote), 1.0)
    al = fuzz.partial_ratio_alignment(quote, review_text)
    if al is None or al.score / 100.0 < threshold:
        return None
    start, end = al.dest_start, al.dest_end
    while start > 0 and review_text[start - 1].isalnum():
        start -= 1
    while end < len(review_text) and review_text[end].isalnum():
        end += 1
    while start < end and not review_text[start].isalnum():
        start += 1
    while end > start and not (review_text[end - 1].isalnum() or review_text[end - 1] in ".!?)%'"):
        end -= 1
    span = review_text[start:end]
    if not span or _FORBIDDEN.search(span) or len(quote) > MAX_QUOTE_LENGTH_RATIO * len(span):
        return None
    score = fuzz.partial_ratio(quote, span) / 100.0
    if score < threshold:
        return None
    return Snap(start, end, score)


class ParseFailure(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def _strip_quotes(text: str) -> str:
    text = CITATION_LABEL_RE.sub("", text)
    return text.replace('"', "'").replace("\u201c", "'").replace("\u201d", "'")


def parse_turns(output: Any, plan: DialoguePlan, ctx: Context) -> list[RenderedTurn]:
    """The model's JSON -> rendered turns, with quotes snapped and labels renumbered; ParseFailure if the
    output does not follow the plan."""
    if not isinstance(output, dict) or not isinstance(output.get("turns"), list):
        raise ParseFailure("llm_json_shape", "expected an object with a 'turns' list")
    turns = output["turns"]
    if len(turns) != len(plan.turns):
        raise ParseFailure("llm_turn_count", f"{len(turns)} turns; the plan has {len(plan.turns)}")
    kb = ctx.kb
    cell = ctx.cells[(plan.city, plan.poi_type)]
    names = {p.poi.business_id: display_name(p.poi.name) for p in cell.profiles}
    out: list[RenderedTurn] = []
    for i, (got, want) in enumerate(zip(turns, plan.turns, strict=True)):
        if not isinstance(got, dict) or not isinstance(got.get("text"), str):
            raise ParseFailure("llm_json_shape", f"turn {i} has no text")
        if got.get("role") != want.role or got.get("action") != want.action:
            raise ParseFailure(
                "llm_plan_mismatch",
                f"turn {i} is {got.get('role')}/{got.get('action')}; planned {want.role}/{want.action}",
            )
        text = " ".join(got["text"].split())
        for bid in want.pois:
            if want.action != "farewell" and names[bid].lower() not in text.lower():
                raise ParseFailure("llm_poi_not_named", f"turn {i} does not name {names[bid]!r}")
        if want.action not in RECOMMENDATION_ACTIONS:
            out.append(RenderedTurn(_strip_quotes(text), [], []))
            continue
        out.append(_ground_turn(i, text, got, want, kb, cell))
    return out


def _ground_turn(
    i: int, text: str, got: dict, want: PlannedTurn, kb: KnowledgeBase, cell: CellIndex
) -> RenderedTurn:
    allowed = {
        rid: bid
        for bid in want.pois
        for rid in cell.profiles[cell.ids.index(bid)].poi.review_ids
        if rid in kb.reviews
    }
    declared: dict[int, str] = {}
    for c in got.get("citations") or []:
        m = re.fullmatch(r"\s*\[?R(\d+)\]?\s*", str(c.get("label", ""))) if isinstance(c, dict) else None
        if m and c.get("review_id") in allowed:
            declared[int(m.group(1))] = c["review_id"]
    for k, rid in enumerate(got.get("referenced_review_ids") or [], start=1):
        if isinstance(rid, str) and rid in allowed:
            declared.setdefault(k, rid)
    # rebuild the text: every quote snapped to an exact span, labels renumbered in order of appearance
    pieces: list[str] = []
    pos = 0
    new_labels: dict[str, str] = {}  # review_id -> new label
    citations: list[Citation] = []
    quotes: list[Span] = []

    def label_for(rid: str) -> str:
        if rid not in new_labels:
            new_labels[rid] = f"R{len(new_labels) + 1}"
            citations.append(Citation(new_labels[rid], rid, allowed[rid]))
        return new_labels[rid]

    for m in QUOTE_RE.finditer(text):
        quote = m.group(1) if m.group(1) is not None else m.group(2)
        after = re.match(r"\s{0,2}\[R(\d+)\]", text[m.end() :])
        rid = declared.get(int(after.group(1))) if after else None
        snap = snap_quote(quote, kb.review_text(rid)) if rid else None
        if snap is None:  # the label is missing or wrong: look through the reviews of the POIs it names
            best = max(
                ((r, snap_quote(quote, kb.review_text(r))) for r in allowed),
                default=(None, None),
                key=lambda x: x[1].score if x[1] else -1.0,
            )
            rid, snap = best
        if snap is None or rid is None:
            raise ParseFailure(
                "quote_mismatch",
                f"turn {i}: quote {quote[:50]!r} matches no review of the POIs "
                f"it names (partial_ratio < {QUOTE_MATCH_THRESHOLD:.0%})",
            )
        exact = kb.review_text(rid)[snap.start : snap.end]
        pieces.append(_relabel(text[pos : m.start()], declared, label_for))
        pieces.append(f'"{exact}" [{label_for(rid)}]')
        quotes.append(Span(rid, snap.start, snap.end))
        pos = m.end() + (after.end() if after else 0)
    pieces.append(_relabel(text[pos:], declared, label_for))
    new_text = " ".join("".join(pieces).split())
    return RenderedTurn(new_text, citations, quotes)


def _relabel(segment: str, declared: dict[int, str], label_for: Callable[[str], str]) -> str:
    """Labels outside quotes: keep the ones that point at a known review (renumbered), drop the others."""

    def sub(m: re.Match) -> str:
        rid = declared.get(int(m.group(1)))
        return f"[{label_for(rid)}]" if rid else ""

    return CITATION_LABEL_RE.sub(sub, segment)
