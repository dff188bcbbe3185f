"""Stage 3, `llm` backend: an LLM of trace_llm writes the turn texts of a plan (App. G prompt, JSON turns).

The plan (stages 1-2) fixes what must happen: actions, roles, the POIs each turn names, the constraints
the user states, gold and alternatives; the model writes the words. Its JSON is checked against the plan,
every quote is snapped to the best-matching exact span of its cited review (rapidfuzz partial_ratio >= 80,
so release/hydration round-trips exactly) and [Rn] labels are renumbered in order of appearance
(`llm_parse`), and the assembled record goes through the same stage-4 validation as template output. A
failed dialogue is re-asked with the list of problems (up to `attempts` times), continuing its conversation;
after that it falls back to the template text of the same plan (fallback="template": marked backend
"template" in its metadata and counted in the report), or the run stops (fallback="error").

A dialogue's plan is the first one `attempts.plan_for` gives over the template backend's sub-seeds (the
splits are the corpus's, assigned up front); dialogues are asked in batches of `batch_size`, and results
are kept in index order.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from trace_dataset.constants import ACTIONS, LLM_FALLBACKS, LLM_MAX_NEW_TOKENS
from trace_dataset.generate.attempts import (
    Context,
    Result,
    dialogue_rng,
    no_dialogue_error,
    plan_for,
    total_attempts,
)
from trace_dataset.generate.llm_parse import ParseFailure, parse_turns
from trace_dataset.generate.plan import DialoguePlan, PlannedTurn
from trace_dataset.generate.record import assemble
from trace_dataset.generate.scenario import dialogue_id
from trace_dataset.generate.template_backend import TemplateRenderer, display_name, render_template
from trace_dataset.generate.validate import codes, validate_record
from trace_dataset.io import TraceDataError, dumps
from trace_llm import LLM
from trace_llm.prompts import Prompt, load_prompt

log = logging.getLogger(__name__)

EXCERPTS_PER_POI = 3

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


# ---------------------------------------------------------------------------------------------------
# The prompt
# ---------------------------------------------------------------------------------------------------
class PromptBuilder:
    """Describes a plan in words for the model, reusing the template grammar's names for constraints."""

    def __init__(self, plan: DialoguePlan, ctx: Context):
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


def _load(llm: LLM | str | None) -> LLM:
    if llm is None or isinstance(llm, str):
        from trace_llm import DecodingSettings, load_llm

        return load_llm(llm or "smollm2", DecodingSettings(max_new_tokens=LLM_MAX_NEW_TOKENS))
    if not isinstance(llm, LLM):
        raise TypeError(f"llm must be a spec string or a trace_llm.LLM, got {type(llm).__name__}")
    return llm


def run_llm(
    ctx: Context,
    llm: LLM | str | None,
    *,
    attempts: int = 3,
    fallback: str = "template",
    batch_size: int = 8,
    json_repairs: int = 1,
    progress: Any = None,
) -> LLMRun:
    """Generate every dialogue of `ctx` with the LLM backend (in-process, batched). Each of the `attempts`
    asks the model once, plus up to `json_repairs` JSON-syntax repairs inside the LLM layer."""
    if fallback not in LLM_FALLBACKS:
        raise ValueError(f"unknown llm fallback {fallback!r}; expected one of {LLM_FALLBACKS}")
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts}")
    model = _load(llm)
    run = LLMRun(describe=dict(model.describe()), fallback_mode=fallback)
    n = len(ctx.assignments)
    for start in range(0, n, batch_size):
        batch = range(start, min(n, start + batch_size))
        reasons: dict[int, Counter] = {i: Counter() for i in batch}
        plans = {i: _first_plan(ctx, i, reasons[i]) for i in batch}
        done = _write_batch(ctx, model, run, plans, reasons, attempts, json_repairs)
        for i in batch:
            if i not in done:
                if fallback == "error":
                    raise TraceDataError(
                        f"{dialogue_id(i)}: the LLM failed validation {attempts} times "
                        f"({dict(reasons[i])}); rerun with --llm-fallback template",
                        path=ctx.kb.root,
                    )
                done[i] = _template_fallback(ctx, i, plans[i], attempts, reasons[i])
                run.fallbacks += 1
        run.results.extend(done[i] for i in batch)
        if progress is not None:
            progress.update(len(batch))
    run.usage = dict(model.usage)
    return run


def _first_plan(ctx: Context, index: int, reasons: Counter) -> DialoguePlan:
    """The plan of the first attempt that gives one (the template backend's sub-seeds, so both backends
    write the same plans); the failed attempts' reasons go to `reasons`."""
    for attempt in range(total_attempts(ctx, index)):
        got = plan_for(ctx, index, attempt, reasons)
        if got is not None:
            return got[0]
    raise no_dialogue_error(ctx, index, reasons)


def _write_batch(
    ctx: Context,
    model: LLM,
    run: LLMRun,
    plans: dict[int, DialoguePlan],
    reasons: dict[int, Counter],
    attempts: int,
    json_repairs: int,
) -> dict[int, Result]:
    """Ask the model for every plan of a batch, up to `attempts` times each; the dialogues that passed.
    A failed answer is sent back with its problems, and the next try continues that conversation."""
    convs = {i: PromptBuilder(plan, ctx).messages() for i, plan in plans.items()}
    model_name = str(run.describe.get("model", ""))
    done: dict[int, Result] = {}
    for attempt in range(attempts):
        pending = [i for i in plans if i not in done]
        if not pending:
            break
        answers = model.generate_json_batch(
            [convs[i] for i in pending], TURN_SCHEMA, max_repairs=json_repairs
        )
        run.attempts += len(pending)
        for i, answer in zip(pending, answers, strict=True):
            record, problems, code_list = _check_answer(ctx, i, plans[i], answer, model_name)
            if record is not None:
                done[i] = Result.of(record, attempt + 1, reasons[i])
                run.llm_dialogues += 1
                continue
            run.reasons.update(code_list)
            reasons[i].update(f"llm:{c}" for c in code_list)
            log.debug("%s LLM attempt %d failed: %s", dialogue_id(i), attempt + 1, problems[:3])
            if isinstance(answer, dict):
                convs[i] = convs[i] + _feedback(answer, problems)
    return done


def _check_answer(
    ctx: Context, i: int, plan: DialoguePlan, answer: Any, model_name: str
) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    """(the record, [], []) for an answer that passes parsing and stage-4 validation, else (None, the
    problems told to the model, their codes)."""
    if isinstance(answer, Exception):  # the LLM layer's LLMOutputError: no valid JSON after its repairs
        return None, [f"llm_invalid_json: {answer}"], ["llm_invalid_json"]
    try:
        rendered = parse_turns(answer, plan, ctx)
    except ParseFailure as e:
        return None, [str(e)], [e.code]
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
        return record, [], []
    return None, [f"{p.code}: {p.message}" for p in found[:8]], codes(found)


def _feedback(answer: dict[str, Any], problems: list[str]) -> list[dict[str, str]]:
    """The turns a retry adds to the conversation: the model's answer and what was wrong with it."""
    return [
        {"role": "assistant", "content": dumps(answer)},
        {
            "role": "user",
            "content": "Your dialogue has these problems:\n- "
            + "\n- ".join(problems)
            + "\nWrite the whole dialogue again as JSON, fixing them and following the plan.",
        },
    ]


def _template_fallback(ctx: Context, i: int, plan: DialoguePlan, attempts: int, reasons: Counter) -> Result:
    """Dialogue `i` with the template text of its plan (its own sub-seed 1000), after the LLM failed."""
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
    log.info(
        "%s: LLM output failed validation %d times (%s); used the template text",
        dialogue_id(i),
        attempts,
        ", ".join(sorted(reasons)),
    )
    return Result.of(record, attempts, reasons)
