"""`trace-bench reproduce CONFIG --dry-run`: per part, the LLM requests the run would still send, their prompt
and output tokens and their cost, from the prompts themselves (collect.py), the response cache taken into
account. Nothing is sent. The reliability reports (config key `reliability`) are not counted: their requests
are made from a run's own ratings; the plan says so under each part they follow.

- Requests: round 1 of every unit is exact (built from the data and cached answers). Requests that depend on an
  earlier answer (DST's response after its state extraction, RAG-Citation's quote retries, every interactive turn
  after the first, CoRE's debate rounds) are counted by answering with synthetic replies and are estimates; each
  job says so in the notes. JSON repairs are counted only where a cached real answer needs one (synthetic
  answers are valid JSON, so a model that often answers invalid JSON costs more than this count).
- Prompt tokens: with the tokenizer the config names for the model (`models.ROLE.tokenizer`; the model's own for
  an in-process `hf` model, whose weights folder holds it), through its chat template; without one (a llama.cpp
  model included: `smollm2`'s default runtime), 4 characters per token plus 4 per message.
- Output tokens: the mean of the cached answers of the same model and decoding settings when the cache holds at
  least `MIN_OBSERVED` of them, else `max_new_tokens`, an upper bound. The note per model says which.
- Cost: tokens x the model's prices per million tokens (`models.ROLE.price`, or --price-input/--price-output).

The plan is written to OUT/plan.json; a live run counts its progress bars against it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_harness.reproduce.collect import Collector, JobTally
from trace_harness.reproduce.config import PARTS, ReproduceConfig, role_model
from trace_harness.reproduce.jobs import Context, build_jobs, closed_run, run_complete
from trace_harness.reproduce.reliability import dry_run_notes
from trace_llm.collecting import PendingRequest

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4  # the chat template's own tokens, roughly, without a tokenizer
MIN_OBSERVED = 20
PLAN_FILE = "plan.json"


@dataclass
class Row:
    """The requests of one job (or a part's total)."""

    part: str
    what: str
    requests: int = 0
    exact: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    notes: list[str] = field(default_factory=list)

    def add(self, other: Row) -> None:
        self.requests += other.requests
        self.exact += other.exact
        self.prompt_tokens += other.prompt_tokens
        self.output_tokens += other.output_tokens
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "part": self.part,
            "what": self.what,
            "requests": self.requests,
            "exact": self.exact,
            "estimated": self.requests - self.exact,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost is None else round(self.cost, 4),
            "notes": self.notes,
        }


class TokenCounter:
    """Prompt tokens of chat messages with one tokenizer (its chat template), or 4 characters per token."""

    def __init__(self, tokenizer: Any = None, name: str = ""):
        self.tokenizer, self.name = tokenizer, name

    @classmethod
    def for_role(cls, ctx: Context, role: str) -> TokenCounter:
        m = role_model(ctx.config, role)
        source = m.tokenizer
        if source is None:
            weights = getattr(ctx.llm(role), "weights_path", None)  # an in-process model: its own tokenizer
            source = weights() if weights is not None else None
        if source is None:
            return cls()
        from transformers import AutoTokenizer

        try:
            return cls(AutoTokenizer.from_pretrained(str(source)), str(source))
        except (OSError, ValueError) as e:
            from trace_dataset.io import TraceDataError

            raise TraceDataError(
                f"models.{role}.tokenizer: cannot load {source!r} ({str(e).splitlines()[0][:200]}); "
                "give a local tokenizer folder or a Hub id in the local cache",
                path=ctx.config.path,
            ) from None

    def describe(self) -> str:
        return (
            f"tokenizer {self.name}"
            if self.tokenizer is not None
            else f"{CHARS_PER_TOKEN} characters per token"
        )

    def count(self, conversations: Sequence[list[dict[str, str]]]) -> list[int]:
        if self.tokenizer is None:
            return [
                math.ceil(sum(len(m["content"]) for m in c) / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * len(c)
                for c in conversations
            ]
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            texts = [
                tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in conversations
            ]
        else:
            texts = ["\n\n".join(f"{m['role']}: {m['content']}" for m in c) for c in conversations]
        out: list[int] = []
        for i in range(0, len(texts), 256):
            out += [len(ids) for ids in tok(texts[i : i + 256], add_special_tokens=False)["input_ids"]]
        return out


def output_estimate(collector: Collector, request: PendingRequest, memo: dict) -> tuple[float, str]:
    """(tokens per answer, how it was estimated) for a request's model and decoding settings."""
    import json

    key = (request.backend, request.cache_model, json.dumps(request.settings, sort_keys=True))
    if key not in memo:
        cache = collector.base_cache
        mean, n = cache.mean_completion_tokens(*key) if cache is not None else (None, 0)
        if mean is not None and n >= MIN_OBSERVED:
            memo[key] = (mean, f"mean of {n:,} cached answers ({mean:.0f} tokens)")
        else:
            tokens = request.settings.get("max_new_tokens", 0)
            memo[key] = (
                float(tokens),
                f"max_new_tokens ({tokens}), an upper bound: fewer than {MIN_OBSERVED} cached answers",
            )
    return memo[key]


def job_notes(tally: JobTally, rounds: int, estimated: int) -> list[str]:
    job = tally.job
    notes = list(tally.notes)
    if estimated and not tally.standin:
        why = {
            "run": {
                "dst": "DST's response is asked after its state extraction",
                "rag_citation": "RAG-Citation's quote retries follow a failed check (an upper bound: synthetic "
                "replies quote nothing, so every ranked turn retries)",
            }.get(job.system, "requests that follow an answer (JSON repairs of cached answers, later steps)"),
            "interactive": "every turn after the first follows the system's and the traveler's answers",
            "core": "the debate's rounds follow the factor ratings and each other",
            "judge": "repairs of cached invalid judge answers",
        }[job.kind]
        notes.append(
            f"{estimated:,} of its requests ({rounds} rounds) are estimates: {why}; counted by answering "
            "the earlier rounds with synthetic replies"
        )
    return notes


def plan(ctx: Context, prices: dict[str, float | None] | None = None) -> dict[str, Any]:
    """Collect every job's requests (dry mode) and count, per job and part, requests, tokens and cost; a data
    folder that is not there is refused (it would count nothing)."""
    from trace_dataset.io import TraceDataError

    if not ctx.config.data.exists():
        raise TraceDataError(
            f"data: {ctx.config.data} not found; expected the Trace data directory the runs read",
            path=ctx.config.path,
        )
    collector = Collector(ctx, "dry")
    counters: dict[str, TokenCounter] = {}
    try:
        tallies = []
        for job in build_jobs(ctx.config):
            tally = collector.collect(job)
            _count_prompts(ctx, collector, tally, counters)
            tallies.append(tally)
        return _summarize(ctx, collector, tallies, counters, prices or {})
    finally:
        collector.close()


def _count_prompts(
    ctx: Context, collector: Collector, tally: JobTally, counters: dict[str, TokenCounter]
) -> None:
    """Count a job's prompt tokens as soon as it is collected, then let its prompts go: at paper scale the
    prompts of every job together take gigabytes."""
    by_role: dict[str, list[PendingRequest]] = {}
    for key in tally.keys:
        r = collector.ledger.requests[key]
        by_role.setdefault(r.role, []).append(r)
    for role, group in by_role.items():
        if role not in counters:
            counters[role] = TokenCounter.for_role(ctx, role)
        for r, n in zip(group, counters[role].count([r.messages for r in group]), strict=True):
            r.prompt_tokens, r.messages, r.body = n, [], None


def _summarize(
    ctx: Context,
    collector: Collector,
    tallies: list[JobTally],
    counters: dict[str, TokenCounter],
    prices: dict[str, float | None],
) -> dict[str, Any]:
    requests = collector.ledger.requests
    memo: dict = {}
    jobs, parts = [], {p: Row(p, "total") for p in PARTS if ctx.config.wants(p)}
    model_notes: dict[str, str] = {}
    for tally in tallies:
        row = Row(tally.job.part, tally.job.label.split(": ", 1)[-1])
        mine = [requests[k] for k in tally.keys]
        if tally.status in ("complete", "no_llm") and not mine:
            row.notes = ["complete"] if tally.status == "complete" else []
        by_role: dict[str, list[PendingRequest]] = {}
        for r in mine:
            by_role.setdefault(r.role, []).append(r)
        for role, group in by_role.items():
            tokens = [r.prompt_tokens or 0 for r in group]
            m = role_model(ctx.config, role)
            price_in = m.price_input if m.price_input is not None else prices.get("input")
            price_out = m.price_output if m.price_output is not None else prices.get("output")
            out_tokens = 0.0
            for r in group:
                per, how = output_estimate(collector, r, memo)
                out_tokens += per
                model_notes[f"{role} ({r.model}, max_new_tokens {r.settings.get('max_new_tokens')})"] = how
            part = Row(
                row.part,
                row.what,
                len(group),
                0 if tally.standin else sum(r.round == 1 for r in group),
                sum(tokens),
                round(out_tokens),
            )
            part.cost = (
                None
                if price_in is None or price_out is None
                else part.prompt_tokens / 1e6 * price_in + part.output_tokens / 1e6 * price_out
            )
            row.add(part)
        rounds = max((r.round for r in mine), default=0)
        row.notes += job_notes(tally, rounds, row.requests - row.exact)
        if not mine and tally.status == "collected" and tally.job.roles:
            row.notes.append(
                "nothing more to send: each of its requests is cached or counted under an earlier job"
            )
        jobs.append(row)
        parts[tally.job.part].add(row)
    if ctx.config.wants("nli"):
        parts["nli"].notes.append(nli_note(ctx))
    for name, note in dry_run_notes(ctx.config.reliability, tuple(parts)).items():
        parts[name].notes.append(note)
    total = Row("all", "total")
    for row in parts.values():
        total.add(row)
    counting = {role: c.describe() for role, c in counters.items()}
    return {
        "config": str(ctx.config.path),
        "config_sha256": ctx.config.sha256,
        "jobs": [r.to_dict() for r in jobs],
        "parts": {p: r.to_dict() for p, r in parts.items()},
        "total": total.to_dict(),
        "prompt_tokens_counted_with": counting,
        "output_tokens_estimated_as": model_notes,
        "roles_sending": sorted({r.role for r in collector.ledger.order}),
        "requests_by_role": _by_role(collector, tallies),
    }


def _by_role(collector: Collector, tallies: list[JobTally]) -> dict[str, int]:
    out: dict[str, int] = {}
    for tally in tallies:
        for key in tally.keys:
            role = collector.ledger.requests[key].role
            out[role] = out.get(role, 0) + 1
    return out


def nli_note(ctx: Context) -> str:
    """NLI is no LLM request: say how many (premise, claim) pairs the closed runs hold, where they exist."""
    done = [closed_run(ctx.config, s) for s in ctx.config.systems if run_complete(closed_run(ctx.config, s))]
    if not done:
        return (
            "no LLM requests: NLI scores (premise, claim) pairs of the closed runs' responses with the NLI model "
            "once the runs exist"
        )
    from trace_harness.reproduce.execute import scoring_options
    from trace_metrics.lib.suite import evaluate_run

    counter = _PairCounter()
    root = ctx.root(ctx.config.closed)
    for path in done:
        evaluate_run(
            root, path, split=ctx.config.closed.split, pool="closed", nli=counter, **scoring_options(ctx)
        )
    return (
        f"no LLM requests: {len(counter.pairs):,} distinct (premise, claim) pairs in {len(done)} complete closed "
        f"run(s) for the NLI model {ctx.config.nli.model} (cached pairs are not subtracted here)"
    )


class _PairCounter:
    """An NLI scorer that only counts the distinct pairs it is asked for."""

    threshold = 0.5

    def __init__(self):
        self.pairs: set[tuple[str, str]] = set()

    def entailment_probs(self, pairs):
        self.pairs.update((str(p), str(c)) for p, c in pairs)
        return [0.0] * len(pairs)

    def describe(self) -> dict[str, Any]:
        return {"model": "pair counter"}


def _n(x: int) -> str:
    return f"{x:,}"


def format_plan(result: dict[str, Any]) -> str:
    """The dry run as a table per part and job, then the notes."""
    from trace_metrics.tables import text_table

    rows = []
    for job in result["jobs"]:
        if not job["requests"] and not job["notes"]:
            continue
        rows.append(_line(job))
    for part in result["parts"].values():
        rows.append(_line({**part, "what": "TOTAL"}))
    rows.append(_line({**result["total"], "part": "all parts", "what": "TOTAL"}))
    head = ["part", "what", "requests", "exact", "estimated", "prompt tokens", "output tokens", "cost USD"]
    text = [f"Dry run of {result['config']}: nothing was sent.", text_table(head, rows), "", "Notes:"]
    for job in [*result["jobs"], *result["parts"].values()]:
        for note in job["notes"]:
            if note != "complete":
                text.append(
                    f"- {job['part']} {job['what'] if job['what'] != 'total' else ''}: {note}".replace(
                        "  ", " "
                    )
                )
    for role, how in result["prompt_tokens_counted_with"].items():
        text.append(f"- prompt tokens of the {role} model: {how}")
    for model, how in result["output_tokens_estimated_as"].items():
        text.append(f"- output tokens of {model}: {how}")
    if result["total"]["cost_usd"] is None and result["total"]["requests"]:
        text.append(
            "- cost: give prices per million tokens (models.ROLE.price, or --price-input/--price-output)"
        )
    return "\n".join(text)


def _line(row: dict[str, Any]) -> list[str]:
    cost = row["cost_usd"]
    return [
        row["part"],
        row["what"],
        _n(row["requests"]),
        _n(row["exact"]),
        _n(row["estimated"]),
        _n(row["prompt_tokens"]),
        _n(row["output_tokens"]),
        "-" if cost is None else f"{cost:,.2f}",
    ]


def write_plan(config: ReproduceConfig, result: dict[str, Any]) -> Path:
    from trace_dataset.io import write_json

    path = config.out / PLAN_FILE
    write_json(path, result)
    return path
