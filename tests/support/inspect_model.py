"""A scripted model for the Inspect tasks (Inspect's own `mockllm` provider with a reply function), and the same
replies for the package's LLM layer, so one script answers `inspect eval trace_bench/trace` and `trace-bench
run llm_zero_shot` alike.

`zero_shot_reply(conversation)` answers an LLM Zero-Shot request (role/content dicts, the JSON instruction in
it): the candidates ranked from the last card to the first, and a response quoting the first eight words of the
first review of the cards with its `[Rn]` label; `ranked_ids` only where the instruction asks for them. A
`reply` returning None answers "not JSON at all" (to exercise the repairs and the fallback).

`inspect_model(reply)`: a `mockllm/model` whose every answer is `reply(conversation)`; it records what it was
asked (`ScriptedInspectModel.seen`: the conversations and the generate configs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Conversation = list[dict[str, str]]
CARD_RE = re.compile(r"^(P\d+)\. ", re.MULTILINE)
REVIEW_RE = re.compile(r"\[R(\d+)\] \([\d.]+ stars\) (\S+(?: \S+){0,7})")
NOT_JSON = "I would rather not answer in JSON."


def zero_shot_reply(conversation: Conversation) -> str:
    prompt = "\n".join(m["content"] for m in conversation if m["role"] == "user")
    ids = list(dict.fromkeys(CARD_RE.findall(prompt)))
    found = REVIEW_RE.search(prompt)
    response = f'You will like it: "{found.group(2)}" [R{found.group(1)}]' if found else "Hello!"
    asked = next(m["content"] for m in conversation if m["role"] == "user" and "JSON Schema" in m["content"])
    answer: dict[str, Any] = {"response": response}
    if '"ranked_ids"' in asked and ids:
        answer = {"ranked_ids": ids[::-1], "response": response}
    return json.dumps(answer)


def invalid_first(conversation: Conversation) -> str:
    """Not JSON the first time, a valid answer once the reply was sent back (a repair round)."""
    return zero_shot_reply(conversation) if "not usable" in conversation[-1]["content"] else NOT_JSON


def never_json(conversation: Conversation) -> str:
    return NOT_JSON


@dataclass
class ScriptedInspectModel:
    reply: Callable[[Conversation], str]
    seen: list[tuple[Conversation, Any]] = field(default_factory=list)

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        from inspect_ai.model import ModelOutput, ModelUsage

        conversation = [{"role": m.role, "content": m.text} for m in input]
        self.seen.append((conversation, config))
        output = ModelOutput.from_content("mockllm/model", self.reply(conversation))
        # mockllm counts tokens with tiktoken (which downloads its tables) unless the usage is given
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output


def inspect_model(reply: Callable[[Conversation], str] = zero_shot_reply) -> tuple[Any, ScriptedInspectModel]:
    """(the Inspect model, its script with what it was asked)."""
    from inspect_ai.model import get_model

    script = ScriptedInspectModel(reply)
    return get_model("mockllm/model", memoize=False, custom_outputs=script), script
