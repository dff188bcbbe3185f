"""The dialogue browser: a dialogue turn by turn, each quote highlighted and linked to its review span,
and what each baseline answered at a system turn, with that turn's scores.

Per-turn scores come from the metric library's own per-turn functions (`trace_metrics.lib.accuracy.turn_scores`,
`grounding.analyse`, `text.turn_scores`), so they are the items the leaderboard's means are made of.
Everything shown goes through `markup.esc`; only this module's own tags reach the page.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from spaces_app.markup import esc
from trace_dataset.constants import RECOMMENDATION_ACTIONS
from trace_dataset.datadir import iter_dialogues, kb_dir
from trace_dataset.io import read_json, read_jsonl
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import PLACEHOLDER_RE, QUOTE_RE
from trace_metrics.tables import format_value

log = logging.getLogger(__name__)

CSS = """
.trace-turn {border-left: 4px solid #ccc; padding: 4px 10px; margin: 6px 0;}
.trace-turn.user {border-color: #1f77b4;} .trace-turn.system {border-color: #d62728;}
.trace-action {font-size: 0.8em; color: #666;}
mark.trace-quote {background: #fff3b0; padding: 0; margin: 0;} mark.trace-span {background: #ffd54f; padding: 0;}
a.trace-quote-link {padding: 0 !important; margin: 0 !important;}
mark.trace-quote.unhydrated {background: #eee;}
.trace-review {font-size: 0.9em; margin: 4px 0 10px 0; white-space: pre-wrap;}
.trace-scores {font-size: 0.85em;}
"""
# per-turn scores shown, canonical id -> label
TURN_SCORES: dict[str, str] = {
    "hit@1": "Hit@1",
    "hit@3": "Hit@3",
    "mrr": "RR",
    "grounding_score": "GS",
    "citation_density": "CD",
    "provenance_coverage": "PC",
    "cgs": "CGS",
    "bleu4": "BLEU-4",
    "rouge_l": "ROUGE-L",
}


class DialogueIndex:
    """Dialogues of one split, the knowledge base and the baseline predictions, loaded once."""

    def __init__(
        self,
        data_dir: str | Path,
        split: str = "test",
        runs_dir: str | Path | None = None,
        kb: KnowledgeBase | None = None,
    ):
        self.dialogues = {d["dialogue_id"]: d for d in iter_dialogues(data_dir, split)}
        self.kb = KnowledgeBase.load(kb_dir(data_dir)) if kb is None else kb
        self.runs: dict[str, dict[tuple[str, int], dict]] = {}
        if runs_dir is not None and Path(runs_dir).is_dir():
            self.runs = load_runs(Path(runs_dir), set(self.dialogues))
        elif runs_dir is not None:
            log.warning(
                "runs folder %s not found (TRACE_SPACE_RUNS): no baseline answers in the browser", runs_dir
            )

    # -- picking ----------------------------------------------------------------------------------------
    def ids(
        self, city: str | None = None, poi_type: str | None = None, tier: str | None = None, query: str = ""
    ) -> list[str]:
        """Dialogue ids matching every given filter (`query`: case-insensitive part of the id)."""
        query = (query or "").strip().lower()
        out = []
        for did, d in self.dialogues.items():
            s = d["scenario"]
            if (
                (city and s["city"] != city)
                or (poi_type and s["poi_type"] != poi_type)
                or (tier and s["difficulty"] != tier)
            ):
                continue
            if query and query not in did.lower():
                continue
            out.append(did)
        return out

    def choices(self, ids: list[str]) -> list[tuple[str, str]]:
        """(label, id) pairs for a dropdown: id, city, type and tier."""
        out = []
        for did in ids:
            s = self.dialogues[did]["scenario"]
            out.append((f"{did} · {s['city']} · {s['poi_type']} · {s['difficulty']}", did))
        return out

    def system_turns(self, dialogue_id: str) -> list[tuple[str, int]]:
        """(label, turn_id) of every system turn."""
        d = self.dialogues.get(dialogue_id)
        if d is None:
            return []
        return [
            (f"turn {t['turn_id']} · {t['action']}", t["turn_id"])
            for t in d["turns"]
            if t["role"] == "system"
        ]

    def default_turn(self, dialogue_id: str) -> int | None:
        """The first recommend/compare turn (where every score applies), else the first system turn."""
        d = self.dialogues.get(dialogue_id)
        if d is None:
            return None
        system = [t for t in d["turns"] if t["role"] == "system"]
        rec = [t for t in system if t["action"] in RECOMMENDATION_ACTIONS]
        return (rec or system or [{"turn_id": None}])[0]["turn_id"]

    # -- rendering --------------------------------------------------------------------------------------
    def render_dialogue(self, dialogue_id: str | None) -> str:
        d = self.dialogues.get(dialogue_id) if dialogue_id else None
        if d is None:
            return "<p>Pick a dialogue.</p>"
        s = d["scenario"]
        parts = [
            f"<style>{CSS}</style>",
            f"<h3>{_e(d['dialogue_id'])}</h3><p>{_e(s['city'])} · {_e(s['poi_type'])} · tier {_e(s['difficulty'])}"
            f" · persona <b>{_e(s['persona_type'])}</b>: {_e(s['persona'])}</p>",
        ]
        spans = {q["quote_id"]: q for q in d.get("quote_spans") or []}
        quote_id = 0
        reviews_html = []
        for t in d["turns"]:
            text = t["text"]
            out, last = [], 0
            for m in QUOTE_RE.finditer(text):
                group = 1 if m.group(1) is not None else 2
                quoted, start, end = m.group(group), m.start(group), m.end(group)
                unhydrated = PLACEHOLDER_RE.fullmatch(quoted)  # a release that is not hydrated: "[Q:N]"
                quote_id = int(unhydrated.group(1)) if unhydrated else quote_id + 1
                cls = "trace-quote unhydrated" if unhydrated else "trace-quote"
                span = spans.get(quote_id)
                title = (
                    f"review {span['review_id']}, characters {span['start']}-{span['end']}"
                    if span
                    else "no span recorded"
                )
                out.append(_e(text[last:start]))
                out.append(
                    f'<a href="#trace-q{quote_id}" class="trace-quote-link" data-quote-id="{quote_id}">'
                    f'<mark class="{cls}" title="{_e(title)}">{_e(quoted)}</mark></a>'
                )
                last = end
                if span:
                    reviews_html.append(self._review_span_html(quote_id, span))
            out.append(_e(text[last:]))
            names = ", ".join(_e(self.kb.pois[p].name) for p in t["referenced_poi_ids"] if p in self.kb.pois)
            parts.append(
                f'<div class="trace-turn {_e(t["role"])}"><div class="trace-action">#{t["turn_id"]} {_e(t["role"])} · '
                f"{_e(t['action'])}{' · ' + names if names else ''}</div>{''.join(out)}</div>"
            )
        if reviews_html:
            parts.append("<h4>Cited review spans</h4>" + "".join(reviews_html))
        return "".join(parts)

    def _review_span_html(self, quote_id: int, span: dict[str, Any]) -> str:
        review = self.kb.reviews.get(span["review_id"])
        head = f'<div class="trace-review" id="trace-q{quote_id}" data-review-id="{_e(span["review_id"])}"><b>[Q:{quote_id}]</b> '
        if review is None or review.text is None:
            return head + f"review {_e(span['review_id'])}: text not available (hydrate the release)</div>"
        text, start, end = review.text, span["start"], span["end"]
        poi = self.kb.pois.get(review.business_id)
        return (
            head + f"{_e(poi.name if poi else review.business_id)} · {review.stars:.0f}★ · review "
            f'{_e(review.review_id)}<br>{_e(text[:start])}<mark class="trace-span">{_e(text[start:end])}</mark>'
            f"{_e(text[end:])}</div>"
        )

    def turn_scores(self, turn: dict[str, Any], prediction: dict[str, Any]) -> dict[str, float]:
        """The scores of one prediction at one reference turn, keyed by canonical metric id."""
        from trace_metrics.lib import accuracy, grounding, text
        from trace_metrics.lib.predictions import normalize_citations

        response = prediction.get("response") or ""
        out: dict[str, float] = {}
        if turn["action"] in RECOMMENDATION_ACTIONS:
            if turn["gold_poi_ids"]:
                s = accuracy.turn_scores(prediction.get("ranked_poi_ids") or [], turn["gold_poi_ids"])
                out.update({k: s[k] for k in ("hit@1", "hit@3", "mrr")})
            a = grounding.analyse(
                response, self.sources(normalize_citations(prediction.get("citations") or {}))
            )
            out.update(
                grounding_score=a.grounding_score(),
                citation_density=a.citation_density(),
                provenance_coverage=a.provenance_coverage(),
                cgs=a.cgs(),
            )
        out["bleu4"], out["rouge_l"] = text.turn_scores(response, turn["text"])
        return out

    def sources(self, citations: dict[str, str]) -> list[str | None]:
        """out[n-1] = text of the review label Rn cites (None: unknown review or hole), as the metrics read it."""
        numbered = {int(label[1:]): rid for label, rid in citations.items()}
        out: list[str | None] = [None] * max(numbered, default=0)
        for n, rid in numbered.items():
            review = self.kb.reviews.get(rid)
            out[n - 1] = None if review is None else review.text
        return out

    def render_predictions(self, dialogue_id: str | None, turn_id: int | None) -> str:
        d = self.dialogues.get(dialogue_id) if dialogue_id else None
        if d is None or turn_id is None:
            return ""
        turn = next((t for t in d["turns"] if t["turn_id"] == turn_id and t["role"] == "system"), None)
        if turn is None:
            return ""
        if not self.runs:
            return "<p>No baseline runs loaded (TRACE_SPACE_RUNS).</p>"
        gold = set(turn["gold_poi_ids"])
        parts = [
            f"<style>{CSS}</style><h4>Turn {turn_id} ({_e(turn['action'])}): what each system answered</h4>"
        ]
        for name, preds in self.runs.items():
            p = preds.get((d["dialogue_id"], turn_id))
            if p is None:
                continue
            top = [
                (self.kb.pois[x].name if x in self.kb.pois else x) + (" ✓" if x in gold else "")
                for x in (p.get("ranked_poi_ids") or [])[:3]
            ]
            scores = " · ".join(f"{TURN_SCORES[k]} {_fmt(v)}" for k, v in self.turn_scores(turn, p).items())
            parts.append(
                f'<div class="trace-turn system trace-answer" data-system="{_e(name)}"><div class="trace-action">'
                f"<b>{_e(name)}</b> · top-3: {_e(', '.join(top)) or '-'}</div>{_highlight(p.get('response') or '')}"
                f'<div class="trace-scores">{scores}</div></div>'
            )
        if len(parts) == 1:
            parts.append("<p>No loaded run covers this dialogue.</p>")
        else:
            parts.append(
                '<p class="trace-action">✓ = a gold POI of this turn. Hit@k and RR (reciprocal rank) on '
                "recommend/compare turns with gold POIs; GS, CD, PC, CGS: grounding of the response's quotes "
                "against the reviews it cites; BLEU-4 and ROUGE-L against the reference turn.</p>"
            )
        return "".join(parts)


def load_runs(runs_dir: Path, dialogue_ids: set[str]) -> dict[str, dict[tuple[str, int], dict]]:
    """{system label: {(dialogue_id, turn_id): prediction}} for every *.jsonl under runs_dir covering the split."""
    from baselines.identity import label

    runs: dict[str, dict[tuple[str, int], dict]] = {}
    for path in sorted(runs_dir.glob("*.jsonl")):
        meta_file = path.with_name(path.name + ".meta.json")
        meta = read_json(meta_file) if meta_file.exists() else {}
        name = meta.get("baseline") or path.stem
        preds = {
            (r["dialogue_id"], r["turn_id"]): r
            for r in read_jsonl(path)
            if r.get("dialogue_id") in dialogue_ids
        }
        if preds:
            runs[label(name)] = preds
    return runs


def _e(text: Any) -> str:
    return esc(text)


def _fmt(value: float) -> str:
    return "-" if value is None or not math.isfinite(value) else format_value(value, 2)


def _highlight(text: str) -> str:
    out, last = [], 0
    for m in QUOTE_RE.finditer(text):
        group = 1 if m.group(1) is not None else 2
        out.append(_e(text[last : m.start(group)]))
        out.append(f'<mark class="trace-quote">{_e(m.group(group))}</mark>')
        last = m.end(group)
    out.append(_e(text[last:]))
    return "".join(out)
