"""Stage 3, `llm` backend: an LLM of trace_llm writes the turn texts of a plan (App. G prompt, JSON turns).

The plan (stages 1-2) fixes what must happen: actions, roles, the POIs each turn names, the constraints
the user states, gold and alternatives; the model writes the words. Its JSON is checked against the plan,
every quote is snapped to the best-matching exact span of its cited review (rapidfuzz partial_ratio >= 80,
so release/hydration round-trips exactly), [Rn] labels are renumbered in order of appearance, and the
assembled record goes through the same stage-4 validation as template output. A failed dialogue is re-asked
with the list of problems (up to `attempts` times); after that it falls back to the template text of the
same plan (fallback="template": marked backend "template" in its metadata and counted in the report), or the
run stops (fallback="error").
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from trace_dataset.constants import ACTIONS, QUOTE_MATCH_THRESHOLD, RECOMMENDATION_ACTIONS
from trace_dataset.generate.attempts import Result, dialogue_rng, no_dialogue_error, plan_for, total_attempts
from trace_dataset.generate.index import _FORBIDDEN, Span
from trace_dataset.generate.plan import DialoguePlan, PlannedTurn
from trace_dataset.generate.record import assemble
from trace_dataset.generate.scenario import dialogue_id
from trace_dataset.generate.template_backend import (
    Citation,
    RenderedTurn,
    TemplateRenderer,
    display_name,
    render_template,
)
from trace_dataset.generate.validate import codes, validate_record
from trace_dataset.io import TraceDataError, dumps
from trace_dataset.quotes import CITATION_LABEL_RE, QUOTE_RE
from trace_llm.prompts import Prompt, load_prompt

log = logging.getLogger(__name__)

FALLBACKS: tuple[str, ...] = ("template", "error")
DEFAULT_MAX_NEW_TOKENS = 3072
EXCERPTS_PER_POI = 3
MAX_QUOTE_LENGTH_RATIO = 1.25  # a quote may not be much longer than the exact span it snaps to

TURN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["turns"],
    "properties": {
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["turn_id", "role", "action", "text"],
                "properties": {
                    "turn_id": {"type": "integer"},
                    "role": {"type": "string", "enum": ["user", "system"]},
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "text": {"type": "string", "minLength": 1},
                    "referenced_poi_ids": {"type": "array", "items": {"type": "string"}},
                    "referenced_review_ids": {"type": "array", "items": {"type": "string"}},
                    "citations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["label", "review_id"],
                            "properties": {"label": {"type": "string"}, "review_id": {"type": "string"}},
                            "additionalProperties": False,
                        },
                    },
                },
                "additionalProperties": False,
            },
        }
    },
    "additionalProperties": False,
}

PROMPT_FILE = Path(__file__).with_name("prompts") / "dialogue.txt"  # system message and rules (App. G, V2)


@cache
def dialogue_prompt() -> Prompt:
    """The llm backend's prompt file (trace_llm.prompts format; its SHA-256 is in the run report)."""
    return load_prompt(PROMPT_FILE)


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


# ---------------------------------------------------------------------------------------------------
# The prompt
# ---------------------------------------------------------------------------------------------------
class PromptBuilder:
    """Describes a plan in words for the model, reusing the template grammar's names for constraints."""

    def __init__(self, plan: DialoguePlan, ctx: Any):
        self.plan, self.ctx = plan, ctx
        self.cell = ctx.cells[(plan.city, plan.poi_type)]
        self.words = TemplateRenderer(
            plan, self.cell, ctx.kb, random.Random(f"{ctx.seed}:{plan.index}:names")
        )
        self.by_id = self.words.by_id

    def _c(self, c) -> str:
        if c.kind == "price":
            return f"price: {c.value} (use the word '{c.value}')"
        return f"{c.kind}: {self.words.what(c)}"

    def _poi(self, bid: str) -> str:
        p = self.by_id[bid].poi
        price = "$" * p.price if p.price else "n/a"
        return f"{display_name(p.name)} (id {bid}; {p.stars:g} stars; price {price}; {', '.join(p.categories[:3])})"

    def excerpts(self) -> list[tuple[str, str, str]]:
        """(review_id, business_id, text) the model may quote: evidence sentences first, per named POI."""
        out: list[tuple[str, str, str]] = []
        kb = self.ctx.kb
        for bid in self.plan.recommended:
            prof = self.by_id[bid]
            spans = [s for c in self.plan.stated for s in prof.evidence.get(c.key, ())][:EXCERPTS_PER_POI]
            spans += [s for s in prof.generic if s not in spans][: max(0, EXCERPTS_PER_POI - len(spans))]
            for s in spans:
                out.append((s.review_id, bid, kb.review_text(s.review_id)[s.start : s.end]))
        return out

    def turn_line(self, i: int, t: PlannedTurn) -> str:
        def name(bid: str) -> str:
            return display_name(self.by_id[bid].poi.name)

        if t.action == "greet_and_seek":
            what = "; ".join(self._c(c) for c in t.new)
            return f"{i}. user greet_and_seek: greet, introduce yourself as the persona, ask for a {self.plan.poi_type} in {self.plan.city}; state: {what}."
        if t.action == "ask_preference":
            assert t.focus is not None  # the planner gives every ask_preference turn a focus
            return f"{i}. system ask_preference: ask about the user's {t.focus.kind} preference."
        if t.action == "provide_preference":
            if t.new:
                return f"{i}. user provide_preference: state {'; '.join(self._c(c) for c in t.new)}" + (
                    f"; then ask how {name(t.pois[0])} compares with another option." if t.pois else "."
                )
            return f"{i}. user provide_preference: say {self._c(t.focus)} matters most; ask how {name(t.pois[0])} compares with another option."
        if t.action == "recommend":
            fits = "; ".join(self._c(c) for c in t.active)
            return f"{i}. system recommend: recommend {self._poi(t.gold[0])}; it meets {fits}; quote its reviews. referenced_poi_ids={list(t.pois)}"
        if t.action == "compare":
            return (
                f"{i}. system compare: compare {self._poi(t.pois[0])} with {self._poi(t.pois[1])}; favour "
                f"{name(t.pois[0])}; quote reviews of both. referenced_poi_ids={list(t.pois)}"
            )
        if t.action == "reject_and_refine":
            if t.revised:
                old, new = t.revised[0]
                return (
                    f"{i}. user reject_and_refine: reject {name(t.pois[0])}; change {self._c(old)} to "
                    f"{self._c(new)}. referenced_poi_ids={list(t.pois)}"
                )
            return (
                f"{i}. user reject_and_refine: reject {name(t.pois[0])} because it does not meet "
                f"{self._c(t.new[0])}; ask for something that does. referenced_poi_ids={list(t.pois)}"
            )
        if t.action == "accept":
            return f"{i}. user accept: accept {name(t.pois[0])}. referenced_poi_ids={list(t.pois)}"
        if t.action == "farewell":
            return f"{i}. system farewell: close the conversation warmly. referenced_poi_ids={list(t.pois)}"
        raise ValueError(f"unknown action {t.action!r}")

    def messages(self) -> list[dict[str, str]]:
        plan = self.plan
        asks = sum(t.action == "ask_preference" for t in plan.turns)
        lines = [
            dialogue_prompt().render(
                "rules",
                n=len(plan.turns),
                asks=asks,
                rejections=plan.rejections,
                distinct=len(plan.recommended),
            ),
            "",
            f"Scenario: {plan.persona}. City: {plan.city}. Looking for: {plan.poi_type}. Difficulty: {plan.tier}.",
            "",
            "POIs the dialogue names:",
            *(f"- {self._poi(b)}" for b in plan.recommended),
            "",
            "Review excerpts you may quote (review_id, POI id, text):",
            *(f"- {rid} | {bid} | {text}" for rid, bid, text in self.excerpts()),
            "",
            "Plan (one line per turn):",
            *(self.turn_line(i, t) for i, t in enumerate(plan.turns)),
        ]
        return [
            {"role": "system", "content": dialogue_prompt().render("system")},
            {"role": "user", "content": "\n".join(lines)},
        ]


# ---------------------------------------------------------------------------------------------------
# Parsing the model's JSON into rendered turns
# ---------------------------------------------------------------------------------------------------
class ParseFailure(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def _strip_quotes(text: str) -> str:
    text = CITATION_LABEL_RE.sub("", text)
    return text.replace('"', "'").replace("\u201c", "'").replace("\u201d", "'")


def parse_turns(output: Any, plan: DialoguePlan, ctx: Any) -> list[RenderedTurn]:
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


def _ground_turn(i: int, text: str, got: dict, want: PlannedTurn, kb, cell) -> RenderedTurn:
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


def _relabel(segment: str, declared: dict[int, str], label_for) -> str:
    """Labels outside quotes: keep the ones that point at a known review (renumbered), drop the others."""

    def sub(m: re.Match) -> str:
        rid = declared.get(int(m.group(1)))
        return f"[{label_for(rid)}]" if rid else ""

    return CITATION_LABEL_RE.sub(sub, segment)


# ---------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------
@dataclass
class LLMRun:
    results: list = field(default_factory=list)
    describe: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)
    llm_dialogues: int = 0
    fallbacks: int = 0
    attempts: int = 0
    reasons: Counter = field(default_factory=Counter)
    fallback_mode: str = "template"

    def report(self) -> dict[str, Any]:
        return {
            "describe": self.describe,
            "prompt": dialogue_prompt().describe(),
            "usage": self.usage,
            "dialogues_written_by_llm": self.llm_dialogues,
            "template_fallbacks": self.fallbacks,
            "llm_attempts": self.attempts,
            "llm_failure_reasons": dict(sorted(self.reasons.items())),
            "fallback": self.fallback_mode,
        }


def _load(llm: Any) -> Any:
    if llm is None or isinstance(llm, str):
        from trace_llm import DecodingSettings, load_llm

        return load_llm(llm or "smollm2", DecodingSettings(max_new_tokens=DEFAULT_MAX_NEW_TOKENS))
    if not hasattr(llm, "generate_json"):
        raise TypeError(
            f"llm must be a spec string or an object with generate_json(), got {type(llm).__name__}"
        )
    return llm


def _ask(llm: Any, convs: list[list[dict]], repairs: int) -> list[Any]:
    """JSON answers (or the exception in place of one) for a batch of conversations."""
    from trace_llm import LLMOutputError

    if hasattr(llm, "generate_json_batch"):
        return list(llm.generate_json_batch(convs, TURN_SCHEMA, max_repairs=repairs))
    out: list[Any] = []
    for conv in convs:
        try:
            out.append(llm.generate_json(conv, TURN_SCHEMA, max_repairs=repairs))
        except LLMOutputError as e:
            out.append(e)
    return out


def run_llm(
    ctx: Any,
    llm: Any,
    *,
    attempts: int = 3,
    fallback: str = "template",
    batch_size: int = 8,
    json_repairs: int = 1,
    progress: Any = None,
) -> LLMRun:
    """Generate every dialogue of `ctx` with the LLM backend (in-process, batched). Each of the `attempts`
    asks the model once, plus up to `json_repairs` JSON-syntax repairs inside the LLM layer."""
    if fallback not in FALLBACKS:
        raise ValueError(f"unknown llm fallback {fallback!r}; expected one of {FALLBACKS}")
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts}")
    model = _load(llm)
    run = LLMRun(
        describe=dict(model.describe()) if hasattr(model, "describe") else {}, fallback_mode=fallback
    )
    model_name = str(run.describe.get("model", ""))
    n = len(ctx.assignments)
    for start in range(0, n, batch_size):
        batch = range(start, min(n, start + batch_size))
        plans: dict[int, tuple[DialoguePlan, random.Random]] = {}
        reasons: dict[int, Counter] = {}
        for index in batch:
            reasons[index] = Counter()
            for attempt in range(total_attempts(ctx, index)):
                got = plan_for(ctx, index, attempt, reasons[index])
                if got is not None:
                    plans[index] = got
                    break
            else:
                raise no_dialogue_error(ctx, index, reasons[index])
        convs = {i: PromptBuilder(plans[i][0], ctx).messages() for i in batch}
        done: dict[int, Result] = {}
        for attempt in range(attempts):
            pending = [i for i in batch if i not in done]
            if not pending:
                break
            answers = _ask(model, [convs[i] for i in pending], json_repairs)
            run.attempts += len(pending)
            for i, answer in zip(pending, answers, strict=True):
                plan = plans[i][0]
                problems: list[str]
                if isinstance(answer, Exception):
                    problems = [f"llm_invalid_json: {answer}"]
                    code_list = ["llm_invalid_json"]
                else:
                    try:
                        rendered = parse_turns(answer, plan, ctx)
                    except ParseFailure as e:
                        problems, code_list = [str(e)], [e.code]
                    else:
                        record = assemble(
                            plan,
                            rendered,
                            ctx.kb,
                            split=ctx.splits[i],
                            seed=ctx.seed,
                            backend="llm",
                            model=model_name,
                            kb_version=ctx.kb_version,
                        )
                        found = validate_record(record, ctx.kb, ctx.ngrams)
                        if not found:
                            done[i] = Result.of(record, attempt + 1, reasons[i])
                            run.llm_dialogues += 1
                            continue
                        problems = [f"{p.code}: {p.message}" for p in found[:8]]
                        code_list = codes(found)
                run.reasons.update(code_list)
                reasons[i].update(f"llm:{c}" for c in code_list)
                log.debug("%s LLM attempt %d failed: %s", dialogue_id(i), attempt + 1, problems[:3])
                if isinstance(answer, dict):
                    convs[i] = convs[i] + [
                        {"role": "assistant", "content": dumps(answer)},
                        {
                            "role": "user",
                            "content": "Your dialogue has these problems:\n- "
                            + "\n- ".join(problems)
                            + "\nWrite the whole dialogue again as JSON, fixing them and following the plan.",
                        },
                    ]
        for i in batch:
            if i in done:
                continue
            if fallback == "error":
                raise TraceDataError(
                    f"{dialogue_id(i)}: the LLM failed validation {attempts} times "
                    f"({dict(reasons[i])}); rerun with --llm-fallback template",
                    path=ctx.kb.root,
                )
            plan, _ = plans[i]
            cell = ctx.cells[(plan.city, plan.poi_type)]
            rendered = render_template(plan, cell, ctx.kb, dialogue_rng(ctx.seed, i, 1000))
            record = assemble(
                plan,
                rendered,
                ctx.kb,
                split=ctx.splits[i],
                seed=ctx.seed,
                backend="template",
                model="",
                kb_version=ctx.kb_version,
            )
            found = validate_record(record, ctx.kb, ctx.ngrams)
            if found:
                raise TraceDataError(
                    f"{dialogue_id(i)}: template fallback failed validation: {found[:3]}", path=ctx.kb.root
                )
            done[i] = Result.of(record, attempts, reasons[i])
            run.fallbacks += 1
            log.info(
                "%s: LLM output failed validation %d times (%s); used the template text",
                dialogue_id(i),
                attempts,
                ", ".join(sorted(reasons[i])),
            )
        for i in batch:
            run.results.append(done[i])
        if progress is not None:
            progress.update(len(batch))
    run.usage = dict(getattr(model, "usage", {}) or {})
    return run
