"""LLM-as-Judge (App. J, App. U): five 1-5 Likert ratings of a system response through `trace_llm`.

Scales (App. J): Relevance (does the response address the user's stated need?), Informativeness (is it
specific and actionable?), Grounding Quality (are its claims supported by the cited reviews?), Natural Flow
(conversational naturalness), Justification (are the recommendations explained with sound reasons?).

Prompt (`prompts/judge.txt`, the package's one prompt-file format): a system message with the rubric (anchors
for 1, 3 and 5 on every scale) and the required JSON shape (letters, not numbers, as placeholders: small
models copy example numbers as their answer); a user message with the dialogue so far (the last
`MAX_CONTEXT_TURNS` turns, each clipped to `MAX_TURN_CHARS`), the cited reviews as `[Rn] text` (clipped to
`REVIEW_MAX_CHARS`, at most `MAX_REVIEWS`), and the response to rate. The reply must be one JSON object with
five integer fields 1-5 (`JUDGE_SCHEMA`); the LLM layer extracts and validates it and, when invalid, shows the
model its reply and the error and asks again (`max_repairs` rounds: the retries). The ratings are checked once
more here. An item still invalid is a failure: counted in `n_failed`, kept with its error and raw output,
never dropped or replaced by a score.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_dataset.constants import REVIEW_MAX_CHARS
from trace_llm.prompts import Prompt, load_prompt
from trace_metrics.lib._util import mean_or_none

if TYPE_CHECKING:
    from trace_llm import LLM, DecodingSettings

log = logging.getLogger(__name__)

# scale key in the judge's JSON -> canonical metric id
JUDGE_SCALES: dict[str, str] = {
    "relevance": "judge_relevance",
    "informativeness": "judge_informativeness",
    "grounding": "judge_grounding",
    "flow": "judge_flow",
    "justification": "judge_justification",
}
JUDGE_IDS: tuple[str, ...] = tuple(JUDGE_SCALES.values())
MAX_CONTEXT_TURNS = 8
MAX_TURN_CHARS = 600
MAX_REVIEWS = 8
DEFAULT_MAX_REPAIRS = 2

JUDGE_SCHEMA: dict = {
    "type": "object",
    "properties": {k: {"type": "integer", "minimum": 1, "maximum": 5} for k in JUDGE_SCALES},
    "required": list(JUDGE_SCALES),
    "additionalProperties": False,
}

PROMPT_FILE = Path(__file__).with_name("prompts") / "judge.txt"  # the rubric and the item (trace_llm.prompts)


@cache
def judge_prompt() -> Prompt:
    """The judge's prompt file; its SHA-256 is in the judge's run configuration (`describe`)."""
    return load_prompt(PROMPT_FILE)


class JudgeParseError(ValueError):
    """The judge's JSON does not hold five integer ratings 1-5."""


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _render_context(context: Any) -> str:
    if context is None:
        return "(no earlier turns)"
    if isinstance(context, str):
        return context.strip() or "(no earlier turns)"
    if not isinstance(context, Sequence):
        raise ValueError(
            f"context is {type(context).__name__}; expected a string or a list of {{'role', 'text'}} turns"
        )
    lines = []
    for i, turn in enumerate(list(context)[-MAX_CONTEXT_TURNS:]):
        if not isinstance(turn, Mapping) or "text" not in turn:
            raise ValueError(f"context turn {i} is {turn!r}; expected a mapping with 'role' and 'text'")
        role = str(turn.get("role", "user")).capitalize()
        lines.append(f"{role}: {_clip(turn['text'], MAX_TURN_CHARS)}")
    return "\n".join(lines) or "(no earlier turns)"


def judge_messages(item: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat messages that ask the judge to rate one item.

    Item fields: `response` (str, required), `context` (earlier turns: a list of {"role", "text"} or a
    string), `reviews` (texts of the cited reviews, `reviews[n-1]` for label [Rn]; None entries skipped),
    `reversed_reviews` (list the reviews last first, each under its own label: the order check).
    """
    if not isinstance(item.get("response"), str):
        raise ValueError(f"judge item {item.get('item_id', '')!r}: 'response' must be a string")
    reviews = [
        f"[R{n}] {_clip(t, REVIEW_MAX_CHARS)}" for n, t in enumerate(item.get("reviews") or [], start=1) if t
    ][:MAX_REVIEWS]
    if item.get("reversed_reviews"):  # the order check of the reliability report: each label keeps its text
        reviews.reverse()
    prompt = judge_prompt()
    user = prompt.render(
        "user",
        context=_render_context(item.get("context")),
        reviews="\n".join(reviews) if reviews else "(none)",
        response=item["response"].strip() or "(empty response)",
    )
    return [{"role": "system", "content": prompt.render("system")}, {"role": "user", "content": user}]


def parse_ratings(obj: Any) -> dict[str, int]:
    """The five ratings of a judge reply; integral numbers ("4", 4.0) are accepted, anything else raises."""
    if not isinstance(obj, Mapping):
        raise JudgeParseError(f"judge output is {type(obj).__name__}; expected a JSON object")
    missing = [k for k in JUDGE_SCALES if k not in obj]
    if missing:
        raise JudgeParseError(f"judge output lacks {missing}; expected all of {list(JUDGE_SCALES)}")
    out = {}
    for key in JUDGE_SCALES:
        value = obj[key]
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
            raise JudgeParseError(f"judge rating {key}={obj[key]!r}; expected an integer 1-5")
        out[key] = value
    return out


def judge_turns(
    llm: LLM,
    items: Sequence[Mapping[str, Any]],
    settings: DecodingSettings | dict | None = None,
    max_repairs: int = DEFAULT_MAX_REPAIRS,
) -> list[dict]:
    """Rate each item (fields in `judge_messages`) with `llm.generate_json_batch`; one record per item, in order:
    `item_id`, `ok`, `ratings` ({scale: 1-5} or None), `raw` (the judge's JSON, or its last raw text on
    failure), `error` (None or why the item failed), `attempts`. Backend failures (`LLMError` other than
    output errors) propagate: they are a failed run, not a failed item."""
    from trace_llm.errors import LLMOutputError

    conversations = [judge_messages(item) for item in items]
    if not conversations:
        return []
    replies = llm.generate_json_batch(conversations, JUDGE_SCHEMA, settings=settings, max_repairs=max_repairs)
    if len(replies) != len(items):
        raise RuntimeError(f"the LLM returned {len(replies)} replies for {len(items)} judge items")
    out = []
    for item, reply in zip(items, replies, strict=True):
        record: dict[str, Any] = {
            "item_id": item.get("item_id"),
            "ok": False,
            "ratings": None,
            "raw": None,
            "error": None,
        }
        if isinstance(reply, LLMOutputError):
            record.update(
                raw=reply.raw, error=f"invalid judge output: {reply.error}", attempts=reply.attempts
            )
        elif isinstance(reply, BaseException):
            record.update(error=f"{type(reply).__name__}: {reply}")
        else:
            record["raw"] = reply
            try:
                record["ratings"] = parse_ratings(reply)
                record["ok"] = True
            except JudgeParseError as e:
                record["error"] = str(e)
        if not record["ok"]:
            log.warning("judge failed on item %r: %s", record["item_id"], record["error"])
        out.append(record)
    return out


def aggregate_judgements(records: Sequence[Mapping[str, Any]], return_per_item: bool = False) -> dict:
    """Mean rating per scale over the items the judge rated (`judge_relevance` ... `judge_justification`),
    `n` (rated items), `n_items`, `n_failed`. A scale's mean is None when no item was rated."""
    rated = [r["ratings"] for r in records if r.get("ok")]
    out: dict[str, Any] = {}
    for key, metric in JUDGE_SCALES.items():
        out[metric] = mean_or_none([r[key] for r in rated])
    out["n"] = len(rated)
    out["n_items"] = len(records)
    out["n_failed"] = len(records) - len(rated)
    if return_per_item:
        for key, metric in JUDGE_SCALES.items():
            out[f"{metric}_per_item"] = [r["ratings"][key] if r.get("ok") else None for r in records]
    return out
