"""Multi-Agent Debater (CoRE §4.2, Tables 4, 5, 33-38): four roles turn the factor ratings into a 0-100 score.

Each role (Common User, Travel Expert = the paper's Domain Expert re-personified for travel, Linguist, HCI
Expert) sees its role description, the task (Table 33), the conversation log, its three factors' results as
`{"dimension_name", "evaluation_result", "score"}` objects inside `<evaluation_result>` (Table 5; a rationale
is clipped to `MAX_RATIONALE_CHARS`), and the chat buffer `<discussion>` (Table 38).

- Round 1: the four roles answer in parallel on an empty buffer. Every later round: the four answer in parallel
  on the buffer as it stood after the previous round; their messages are appended once all have answered.
- A reply is one JSON object `{"evaluator", "statement", "score"}` with a score 0-100 (a number or a numeric
  string, as the paper's Table 38 shows); the LLM layer's `generate_json_batch` extracts and validates it and
  asks again, with the error, up to `max_repairs` times. A reply still invalid is kept in `messages` with its
  error and raw text, stays out of the buffer, and the role keeps its last valid score.
- Stop when, in one round, all four roles gave a valid score and the four scores are equal, or after
  `max_rounds` rounds (default 4, the paper's choice).
- Final score: the mean of the four roles' last valid scores; None when some role never gave one (counted).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trace_metrics.core.conversation import ConversationLog
from trace_metrics.core.prompts import PromptSet, Role

if TYPE_CHECKING:
    from trace_llm import LLM, DecodingSettings

DEFAULT_MAX_ROUNDS = 4
DEFAULT_MAX_REPAIRS = 2
MAX_RATIONALE_CHARS = 3000
# Bounded in the schema so that a constrained statement closes within the 512-token budget even at one token
# a character (1,500 let 3 of the packaged model's 8 first-round replies run to the budget, cut unparsable).
MAX_STATEMENT_CHARS = 450
SCORE_MIN, SCORE_MAX = 0.0, 100.0
_SCORE_STRING = r"^\s*(100(\.0+)?|\d{1,2}(\.\d+)?)\s*$"
# The string form first: the layer shows the first alternative's shape, and "..." is not a score a small model
# can copy as its answer (a number example would be copied as a fake 0).
DEBATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "evaluator": {"type": "string", "maxLength": 60},
        "statement": {"type": "string", "minLength": 1, "maxLength": MAX_STATEMENT_CHARS},
        "score": {
            "anyOf": [
                {"type": "string", "pattern": _SCORE_STRING},
                {"type": "number", "minimum": SCORE_MIN, "maximum": SCORE_MAX},
            ]
        },
    },
    "required": ["statement", "score"],
    "additionalProperties": False,
}


def require_debate_budget(max_new_tokens: int, raise_with: str) -> None:
    """Refuse a debate budget in which a constrained statement (`DEBATE_SCHEMA`) may not close (trace_llm.budget);
    `raise_with` names the option to raise (a flag, a config field)."""
    from trace_llm.budget import require_budget

    require_budget({"debate statement": DEBATE_SCHEMA}, max_new_tokens, "CoRE's debate", raise_with)


def score_value(value: Any) -> float:
    """A debater's score as a float 0-100 (numbers and numeric strings); ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"score {value!r} is not a number")
    number = float(value.strip()) if isinstance(value, str) else float(value)
    if not SCORE_MIN <= number <= SCORE_MAX:
        raise ValueError(f"score {number:g} is outside {SCORE_MIN:g}-{SCORE_MAX:g}")
    return number


def _clip(text: str, limit: int = MAX_RATIONALE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def factor_result_block(
    role: Role, factor_results: Mapping[str, Mapping[str, Any]], prompts: PromptSet
) -> str:
    """The role's three factor results inside `<evaluation_result>` (paper Table 5)."""
    items = []
    for fid in role.factors:
        res = factor_results.get(fid) or {}
        score = res.get("score")
        rationale = res.get("rationale") or ""
        if score is None:
            rationale = (f"(no valid rating: {res.get('detail') or 'not rated'})\n" + rationale).strip()
        items.append(
            json.dumps(
                {
                    "dimension_name": prompts.factor(fid).name,
                    "evaluation_result": _clip(rationale),
                    "score": "missing" if score is None else str(score),
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    return "<evaluation_result>\n" + ",\n".join(items) + "\n</evaluation_result>"


def chat_buffer(messages: Sequence[Mapping[str, Any]]) -> str:
    """The `<discussion>` section: every valid message so far, in order (paper Table 38)."""
    shown = [
        json.dumps(
            {"evaluator": m["evaluator"], "statement": m["statement"], "score": m["score_text"]},
            ensure_ascii=False,
            indent=2,
        )
        for m in messages
        if m.get("ok")
    ]
    return "<discussion>\n" + ",\n".join(shown) + ("\n" if shown else "") + "</discussion>"


@dataclass
class DebateState:
    """One log's debate: `round_messages()` gives the four prompts, `record_round(replies)` takes the answers."""

    log_id: str
    conversation_text: str
    factor_blocks: dict[str, str]  # role id -> its <evaluation_result>
    prompts: PromptSet
    max_rounds: int = DEFAULT_MAX_ROUNDS
    rounds: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    latest: dict[str, float] = field(default_factory=dict)  # role id -> last valid score
    consensus: bool = False
    done: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.max_rounds, bool) or not isinstance(self.max_rounds, int) or self.max_rounds < 1:
            raise ValueError(f"max_rounds={self.max_rounds!r}; expected a positive integer")

    def round_messages(self) -> list[list[dict[str, str]]]:
        """The four conversations of the next round, in role order."""
        if self.done:
            raise RuntimeError(f"{self.log_id}: the debate is over")
        buffer = chat_buffer(self.messages)
        return [
            [
                {
                    "role": "user",
                    "content": self.prompts.debate.render(
                        "debate",
                        ROLE_DESC=role.description,
                        TASK_DESC=self.prompts.task,
                        CONVERSATION_LOG=self.conversation_text,
                        FACTOR_RESULT=self.factor_blocks[role.id],
                        CHAT_BUFFER=buffer,
                    ),
                }
            ]
            for role in self.prompts.roles
        ]

    def record_round(self, replies: Sequence[Any]) -> None:
        """Take the four replies of a round (parsed JSON objects, or the LLM layer's LLMOutputError)."""
        if self.done:
            raise RuntimeError(f"{self.log_id}: a round after the debate was over")
        roles = self.prompts.roles
        if len(replies) != len(roles):
            raise ValueError(f"{len(replies)} replies for {len(roles)} roles")
        self.rounds += 1
        scores: list[float | None] = []
        for role, reply in zip(roles, replies, strict=True):
            message: dict[str, Any] = {
                "round": self.rounds,
                "role": role.id,
                "evaluator": role.name,
                "ok": False,
            }
            if isinstance(reply, Mapping):
                message["claimed_evaluator"] = reply.get("evaluator")
                score: float | None
                try:
                    score = score_value(reply.get("score"))
                    statement = reply.get("statement")
                    if not isinstance(statement, str) or not statement.strip():
                        raise ValueError("the statement is empty")
                except (TypeError, ValueError) as e:
                    message.update(error=str(e), raw=json.dumps(reply, ensure_ascii=False))
                    score = None
                else:
                    message.update(
                        ok=True,
                        statement=statement.strip(),
                        score=score,
                        score_text=str(reply.get("score")).strip(),
                    )
                    self.latest[role.id] = score
            else:
                message.update(
                    error=str(getattr(reply, "error", None) or reply), raw=getattr(reply, "raw", None)
                )
                score = None
            scores.append(score)
            self.messages.append(message)
        if all(s is not None for s in scores) and len(set(scores)) == 1:
            self.consensus = self.done = True
        elif self.rounds >= self.max_rounds:
            self.done = True

    def result(self) -> dict[str, Any]:
        roles = [r.id for r in self.prompts.roles]
        final = (
            sum(self.latest[r] for r in roles) / len(roles) if all(r in self.latest for r in roles) else None
        )
        return {
            "final_score": final,
            "agent_scores": {r: self.latest.get(r) for r in roles},
            "consensus": self.consensus,
            "rounds": self.rounds,
            "n_messages": len(self.messages),
            "n_failed_messages": sum(not m["ok"] for m in self.messages),
            "messages": list(self.messages),
            "chat_buffer": chat_buffer(self.messages),
        }


def new_debate(
    conversation: ConversationLog,
    factor_results: Mapping[str, Mapping[str, Any]],
    prompts: PromptSet,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> DebateState:
    blocks = {role.id: factor_result_block(role, factor_results, prompts) for role in prompts.roles}
    return DebateState(conversation.log_id, conversation.render(), blocks, prompts, max_rounds)


def run_debates(
    llm: LLM,
    states: Sequence[DebateState],
    settings: DecodingSettings | dict | None = None,
    max_repairs: int = DEFAULT_MAX_REPAIRS,
) -> None:
    """Run every debate to its end; each round of all unfinished debates is one `generate_json_batch` call. A
    debater's next-round prompt starts like its last one: sent inside `prefix_reuse()`, a backend that keeps states
    reads only the rest (speed only: the same replies; trace_llm.prefix_reuse)."""
    from trace_llm import prefix_reuse

    active = [s for s in states if not s.done]
    while active:
        conversations = [conv for s in active for conv in s.round_messages()]
        with prefix_reuse():
            replies = llm.generate_json_batch(
                conversations, DEBATE_SCHEMA, settings=settings, max_repairs=max_repairs
            )
        if len(replies) != len(conversations):
            raise RuntimeError(
                f"the LLM returned {len(replies)} replies for {len(conversations)} debate prompts"
            )
        n = len(active[0].prompts.roles)
        for i, state in enumerate(active):
            state.record_round(replies[i * n : (i + 1) * n])
        active = [s for s in active if not s.done]
