"""Test doubles of the LLM: subclasses of the real `trace_llm.LLM`.

They implement only the backend hook (`_complete`), so every call a test makes goes through the layer's real
contract: message checks, the response cache (off unless a test gives one), de-duplication, usage counts, the
schema instruction appended to the last user message, JSON extraction and validation, and the repair rounds.
What a double fakes is only the model's text.

- `ScriptedLLM(reply)`: answers each conversation with `reply(conversation)` (the conversation as the layer
  sends it, schema instruction and repair turns included); `reply` may return an exception to fail the call
  (a backend failure: the layer raises it).
- `QueueLLM(replies)`: answers with the next of `replies`, in the order the layer asks.

A reply that is not a string is sent as its JSON text (`json.dumps`), so tests script JSON answers as values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from trace_llm import LLM, Completion, DecodingSettings

Conversation = list[dict[str, str]]
Reply = Any  # a string, a JSON value (sent as its text), or an exception (the call fails)


def reply_text(reply: Reply) -> str:
    return reply if isinstance(reply, str) else json.dumps(reply)


class ScriptedLLM(LLM):
    """Answers each conversation with `reply(conversation)`; records what it was asked (`seen`)."""

    backend = "scripted"

    def __init__(
        self,
        reply: Callable[[Conversation], Reply],
        model: str = "scripted-model",
        cache_path: Any = False,
        settings: DecodingSettings | None = None,
        finish_reason: str = "stop",
    ):
        super().__init__(model, settings=settings, cache_path=cache_path)
        self.reply = reply
        self.finish_reason = finish_reason
        self.seen: list[Conversation] = []

    def _complete(
        self,
        conversations: list[Conversation],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
    ) -> None:
        for i, conv in enumerate(conversations):
            self.seen.append(conv)
            answer = self.reply(conv)
            if isinstance(answer, BaseException):
                raise answer
            text = reply_text(answer)
            on_done(
                i,
                Completion(
                    text, sum(len(m["content"].split()) for m in conv), len(text.split()), self.finish_reason
                ),
            )


class QueueLLM(ScriptedLLM):
    """Answers with the next of `replies` (in the order the layer asks); asking past the end is a test error."""

    def __init__(self, replies: Iterable[Reply], **kwargs: Any):
        self.replies = list(replies)
        super().__init__(self._next, **kwargs)

    def _next(self, conversation: Conversation) -> Reply:
        if not self.replies:
            raise AssertionError(
                f"QueueLLM asked a question it has no reply for: {conversation[-1]['content'][:80]!r}"
            )
        return self.replies.pop(0)


__all__ = ["QueueLLM", "ScriptedLLM", "reply_text"]
