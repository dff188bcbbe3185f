"""LLM-as-Evaluator (CoRE §4.1): one LLM call per factor and conversation log, a 0-4 rating in `<rating>N</rating>`.

The prompt is the paper's Table 2 template filled with the factor's guideline (`prompts/factors/*.txt`) and the
log (with the cited reviews for the factors whose manifest entry says `evidence: true`: Groundness), sent as one
user message. The reply's rating is parsed by `parse_rating`:

- `ok`: every `<rating>...</rating>` tag holding an integer holds the same integer, within 0-4;
- `missing`: no tag holds an integer (no tag at all, an empty tag, or the template's `{score}` copied);
- `not_integer`: the only numbers in rating tags are not integers (`3.5`);
- `out_of_range`: an integer outside 0-4;
- `ambiguous`: tags holding different integers.

Anything but `ok` is retried: the reply and a short message saying what was wrong (`prompts/retry.txt`) are
appended to the conversation and sent again, at most `max_retries` times (the conversation changes, so a cached
greedy answer is not simply replayed). A factor still not `ok` is counted as missing with the last status: its
score is None, never a guess. All requests of a batch of logs go out in one `complete_batch` call per attempt,
so the LLM layer's concurrency, cache and usage accounting apply.

Constrained decoding (the LLM layer's `--structured`, default auto): the reply keeps the paper's format, not a
JSON form. In process (llama.cpp, transformers) it is decoded under `RATING_GRAMMAR`, a GBNF grammar: a
rationale of at most RATIONALE_MAX_CHARS (1,000) characters without `<`, then exactly one `<rating>N</rating>` with N in 0-4, and nothing after.
Below 1,018 new tokens the rationale is bounded by the budget less the tag's 18 characters (`rating_grammar`, one
token per character at worst, as `trace_llm.budget` counts JSON replies), so every reply closes within
`max_new_tokens` and parses `ok` (under 18 the grammar is the tag alone, which the budget may still cut). Servers get no portable way to carry a grammar, so
through the openai backend the format is asked by prompt alone and checked as above (the LLM usage's
`constrained` count says which way the replies were made).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trace_metrics.core.conversation import ConversationLog
from trace_metrics.core.prompts import FACTOR_IDS, Factor, PromptSet

if TYPE_CHECKING:
    from trace_llm import LLM, DecodingSettings

log = logging.getLogger(__name__)

RATING_MIN, RATING_MAX = 0, 4
RATING_LABELS: tuple[int, ...] = tuple(range(RATING_MIN, RATING_MAX + 1))
DEFAULT_MAX_RETRIES = 2
STATUSES: tuple[str, ...] = ("ok", "missing", "not_integer", "out_of_range", "ambiguous")
_TAG_RE = re.compile(r"<\s*rating\s*>(.*?)<\s*/\s*rating\s*>", re.IGNORECASE | re.DOTALL)
_INT_RE = re.compile(r"[+-]?\d+")
_NUMBER_RE = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)")
RATIONALE_MAX_CHARS = 1000  # the rationale before the tag, bounded so that the tag always fits (docs/core.md)
TAG_CHARS = len(
    f"<rating>{RATING_MAX}</rating>"
)  # the tag's characters: the least budget in which a reply closes


def rating_grammar(max_new_tokens: int | None = None) -> str:
    """The GBNF grammar of a factor reply: a rationale of at most RATIONALE_MAX_CHARS characters without `<`,
    fewer where `max_new_tokens` leaves less room (one token per character at worst, as `trace_llm.budget`
    counts), then the tag; the same text wherever the budget leaves the whole rationale (its cache keys stay).
    Below TAG_CHARS the grammar is the tag alone, which the budget may still cut (counted as missing)."""
    room = (
        RATIONALE_MAX_CHARS
        if max_new_tokens is None
        else min(RATIONALE_MAX_CHARS, max_new_tokens - TAG_CHARS)
    )
    rationale = f"[^<]{{0,{room}}} " if room > 0 else ""
    return f'root ::= {rationale}"<rating>" [{RATING_MIN}-{RATING_MAX}] "</rating>"'


RATING_GRAMMAR = rating_grammar()


@dataclass(frozen=True)
class RatingParse:
    value: int | None
    status: str  # one of STATUSES
    detail: str


def parse_rating(text: str) -> RatingParse:
    """The 0-4 rating of a reply, or why there is none (statuses in the module docstring)."""
    contents = [c.strip() for c in _TAG_RE.findall(text or "")]
    integers = sorted({int(c) for c in contents if _INT_RE.fullmatch(c)})
    if not integers:
        if any(_NUMBER_RE.fullmatch(c) for c in contents):
            return RatingParse(None, "not_integer", "the rating is not an integer")
        if contents:
            return RatingParse(None, "missing", "the <rating> tag holds no number")
        return RatingParse(None, "missing", "there is no <rating>N</rating> tag")
    if len(integers) > 1:
        return RatingParse(None, "ambiguous", f"several different ratings {integers}")
    value = integers[0]
    if not RATING_MIN <= value <= RATING_MAX:
        return RatingParse(None, "out_of_range", f"the rating {value} is outside {RATING_MIN}-{RATING_MAX}")
    return RatingParse(value, "ok", "")


def factor_messages(
    conversation: ConversationLog, factor: Factor, prompts: PromptSet
) -> list[dict[str, str]]:
    """The one user message that asks for `factor` on `conversation` (paper Table 2)."""
    content = prompts.evaluator.render(
        "evaluator",
        FACTOR=factor.name,
        FACTOR_DEFINITION=factor.definition,
        EVALUATION_STANDARD=factor.standard,
        EVALUATION_STEP=factor.steps,
        CONVERSATION_LOG=conversation.render(evidence=factor.evidence),
    )
    return [{"role": "user", "content": content}]


def retry_message(factor: Factor, parsed: RatingParse, prompts: PromptSet) -> str:
    return prompts.retry.render("retry", FACTOR=factor.name, PROBLEM=parsed.detail)


@dataclass
class FactorJob:
    """One (log, factor) rating with its retries: feed it replies until `done`."""

    log_id: str
    factor: Factor
    messages: list[dict[str, str]]
    max_retries: int = DEFAULT_MAX_RETRIES
    replies: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    finish_reasons: list[str | None] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    parsed: RatingParse | None = None
    done: bool = False

    def record(
        self,
        text: str,
        prompts: PromptSet,
        finish_reason: str | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> None:
        """Take one reply: accept it, or queue a retry, or give up after `max_retries` retries."""
        if self.done:
            raise RuntimeError(f"{self.log_id}/{self.factor.id}: a reply after the job was done")
        parsed = parse_rating(text)
        if parsed.status != "ok" and finish_reason == "length":
            parsed = RatingParse(None, parsed.status, parsed.detail + " (the reply hit max_new_tokens)")
        self.replies.append(text)
        self.statuses.append(parsed.status)
        self.finish_reasons.append(finish_reason)
        self.prompt_tokens += int(prompt_tokens)
        self.completion_tokens += int(completion_tokens)
        self.parsed = parsed
        if parsed.status == "ok" or len(self.replies) > self.max_retries:
            self.done = True
            return
        self.messages = [
            *self.messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": retry_message(self.factor, parsed, prompts)},
        ]

    def result(self) -> dict[str, Any]:
        parsed = self.parsed or RatingParse(None, "missing", "no reply")
        return {
            "score": parsed.value,
            "status": parsed.status,
            "detail": parsed.detail,
            "rationale": "\n\n".join(self.replies),
            "attempts": len(self.replies),
            "statuses": list(self.statuses),
            "finish_reasons": list(self.finish_reasons),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def rating_constraint(max_new_tokens: int | None = None) -> Any:
    """The grammar every factor reply is decoded under where the backend honours one (module docstring), fitted
    to `max_new_tokens` (`rating_grammar`)."""
    from trace_llm.structured import Constraint

    return Constraint.gbnf(rating_grammar(max_new_tokens))


def rate_factors(
    llm: LLM,
    conversations: Sequence[ConversationLog],
    prompts: PromptSet,
    *,
    factors: Sequence[str] = FACTOR_IDS,
    max_retries: int = DEFAULT_MAX_RETRIES,
    settings: DecodingSettings | dict | None = None,
) -> list[dict[str, dict[str, Any]]]:
    """Per conversation (in order), {factor_id: result} with score (0-4 or None), status, rationale, attempts."""
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries={max_retries!r}; expected a non-negative integer")
    chosen = [prompts.factor(f) for f in factors]
    jobs = [
        FactorJob(c.log_id, f, factor_messages(c, f, prompts), max_retries)
        for c in conversations
        for f in chosen
    ]
    pending = list(jobs)
    constraint = rating_constraint(llm.resolve_settings(settings).max_new_tokens)
    while pending:
        completions = llm.complete_batch([j.messages for j in pending], settings, constraint=constraint)
        if len(completions) != len(pending):
            raise RuntimeError(f"the LLM returned {len(completions)} answers for {len(pending)} requests")
        for job, c in zip(pending, completions, strict=True):
            job.record(c.text, prompts, c.finish_reason, c.prompt_tokens, c.completion_tokens)
        pending = [j for j in jobs if not j.done]
    out: list[dict[str, dict[str, Any]]] = []
    for i in range(len(conversations)):
        mine = jobs[i * len(chosen) : (i + 1) * len(chosen)]
        out.append({j.factor.id: j.result() for j in mine})
        for j in mine:
            if j.parsed is not None and j.parsed.status != "ok":
                log.info(
                    "%s: no valid %s rating after %d attempt(s): %s",
                    j.log_id,
                    j.factor.id,
                    len(j.replies),
                    j.parsed.detail,
                )
    return out
