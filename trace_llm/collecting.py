"""The requests a run still needs, known without sending them: stand-in LLM objects that never send.

`CollectingLLM(target, ledger, cache)` stands in for a real LLM object (`target`): the same backend, model,
decoding settings, `describe()` and therefore the same cache keys. A request the response cache (or the
`OverlayCache`'s answers held in memory) can answer is answered; every other one is recorded once in the
`RequestLedger` (its cache key, the exact request body the live backend would send, the round it belongs to)
and the call raises `AnswersPending` instead of sending anything. A driver (trace_harness.reproduce) runs each
unit of work (a batch of turn rows, a chunk of dialogues) again after answering what it recorded:

- dry run: the recorded requests get synthetic answers (`synthetic_reply`: a minimal schema-valid JSON value
  for a JSON request, a fixed text otherwise) in the overlay, and the unit runs again to reveal the requests
  that depend on earlier answers (round 2, 3, ...). Round 1 is exact; later rounds are estimates.
- batch path: round 1 goes out as OpenAI batch files (trace_llm.batch) and comes back into the cache.
- cache-only runs: a miss stops the run (AnswersPending) instead of sending.

A request under a JSON constraint is keyed and written in the target's structured-output dialect; where the
target is a server whose dialect `auto` has not learnt yet, in BATCH_DIALECT (`json_schema`, which OpenAI's and
vLLM's batch endpoints take), and the live run then finds those answers in the cache under that dialect.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from trace_llm.base import LLM, Message
from trace_llm.cache import Completion, ResponseCache
from trace_llm.errors import AnswersPending
from trace_llm.jsonout import schema_example, validation_errors
from trace_llm.settings import DecodingSettings
from trace_llm.structured import PROMPT, Constraint

# the response_format dialect of requests exported for a server whose dialect is not known yet (`auto`)
BATCH_DIALECT = "json_schema"

SYNTHETIC_TEXT = "(a synthetic answer of a trace-bench dry run)"


# ---------------------------------------------------------------------------------------------------------
# The ledger, the overlay and the collecting LLM
# ---------------------------------------------------------------------------------------------------------
@dataclass
class PendingRequest:
    """One request a run needs and the cache cannot answer."""

    key: str
    backend: str
    model: str  # the name sent to the server
    cache_model: str  # the name in the cache key
    settings: dict[str, Any]
    messages: list[Message]
    body: dict[str, Any] | None  # the exact request body (openai backend); None for in-process backends
    round: int
    label: str  # what the request is for (the driver's job)
    role: str = ""  # which model role asked (the driver's name for the model)
    prompt_tokens: int | None = None  # a driver's count, once it has counted them


class RequestLedger:
    """Every request collectors met and could not answer, once per cache key, in the order they were met.
    The driver sets `label` (what the requests are for) and `round` (which pass of a unit it is in)."""

    def __init__(self) -> None:
        self.requests: dict[str, PendingRequest] = {}
        self.order: list[PendingRequest] = []
        self.label = ""
        self.round = 1

    def add(self, request: PendingRequest) -> bool:
        if request.key in self.requests:
            return False
        self.requests[request.key] = request
        self.order.append(request)
        return True

    def __len__(self) -> int:
        return len(self.order)

    def since(self, start: int) -> list[PendingRequest]:
        """The requests recorded after the first `start` ones."""
        return self.order[start:]


class OverlayCache(ResponseCache):
    """The response cache, read only, plus answers held in memory (a dry run's synthetic answers) with the round
    they answer. A pass of round r sees the held answers of rounds below r, so a request that waits on an answer
    another unit has only recorded stays pending in this unit's pass (and its dependants keep their round)."""

    def __init__(self, base: ResponseCache | None):  # noqa: D107 - no SQLite of its own
        self.base = base
        self.path = base.path if base is not None else None
        self.memory: dict[str, tuple[Completion, int]] = {}
        self.visible_below = 1

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        keys = list(dict.fromkeys(keys))
        found = self.base.get_many(keys) if self.base is not None else {}
        for key in keys:
            held = self.memory.get(key)
            if key not in found and held is not None and held[1] < self.visible_below:
                found[key] = held[0]
        return found

    def hold(self, key: str, completion: Completion, round_: int) -> None:
        self.memory[key] = (completion, round_)

    def put(
        self, key: str, backend: str, model: str, settings: dict[str, Any], completion: Completion
    ) -> None:
        self.hold(key, completion, 0)

    def __len__(self) -> int:
        return len(self.memory) + (len(self.base) if self.base is not None else 0)

    def close(self) -> None:
        return None


class CollectingLLM(LLM):
    """`target`'s stand-in that never sends: see the module docstring."""

    def __init__(self, target: LLM, ledger: RequestLedger, cache: OverlayCache, role: str = ""):
        self.target = target
        self.ledger = ledger
        self.role = role
        self.backend = target.backend  # an instance's backend: the target's
        super().__init__(target.model, target.settings, cache_path=cache, spec=target.spec)

    @property
    def cache_model(self) -> str:
        return self.target.cache_model

    def describe(self) -> dict[str, Any]:
        return self.target.describe()

    def request_body(
        self,
        messages: list[Message],
        settings: DecodingSettings,
        constraint: Constraint | None = None,
        dialect: str = PROMPT,
    ) -> dict[str, Any] | None:
        """What the live backend would send (the openai backend's own `_body`, with the response_format of the
        dialect); None for in-process models."""
        body = getattr(self.target, "_body", None)
        return body(messages, settings, constraint, dialect) if body is not None else None

    def _dialect_for(self, constraint: Constraint | None) -> tuple[str, bool]:
        """The target's dialect; a server not asked yet under `auto` is taken to accept BATCH_DIALECT (what
        OpenAI's and vLLM's batch endpoints take), and the live run finds those answers in the cache under it."""
        dialect, fell_back = self.target._dialect_for(constraint)
        return (BATCH_DIALECT, False) if dialect == "" else (dialect, fell_back)

    def _complete(self, conversations, settings, on_done) -> None:
        self._collect(conversations, settings, None, PROMPT)

    def _complete_structured(self, conversations, settings, on_done, constraint, dialect) -> None:
        self._collect(conversations, settings, constraint, dialect)

    def _collect(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        constraint: Constraint | None,
        dialect: str,
    ) -> None:
        settings_dict = settings.to_dict()
        for messages in conversations:
            key = self._key(messages, settings_dict, dialect, constraint)
            if key not in self.ledger.requests:
                self.ledger.add(
                    PendingRequest(
                        key,
                        self.backend,
                        self.target.model,
                        self.cache_model,
                        settings_dict,
                        messages,
                        self.request_body(messages, settings, constraint, dialect),
                        self.ledger.round,
                        self.ledger.label,
                        self.role,
                    )
                )
        raise AnswersPending(
            f"{len(conversations)} request(s) to {self.backend} model {self.model!r} are not in the response cache",
            count=len(conversations),
        )


# ---------------------------------------------------------------------------------------------------------
# Synthetic answers (dry run)
# ---------------------------------------------------------------------------------------------------------
def schema_of(messages: Sequence[Message]) -> Any:
    """The JSON Schema a request asks its answer to satisfy (the layer's JSON instruction or repair message ends
    the last user message with it), or None for a free-text request."""
    text = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    at = text.rfind("JSON Schema")
    start = text.find("{", at) if at >= 0 else -1
    if start < 0:
        return None
    try:
        schema, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    return schema if isinstance(schema, (dict, bool)) else None


def minimal_instance(schema: Any) -> Any:
    """A small value valid under `schema`: required properties only, null where allowed, the fewest items, the
    first enum value, the lowest number in range."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else (kind[0] if kind else None)
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: minimal_instance(props.get(k, {})) for k in schema.get("required") or []}
    if kind == "array":
        n = int(schema.get("minItems") or 0)
        items = schema.get("items")
        if not isinstance(items, dict):
            items = {}
        if items.get("enum") and schema.get("uniqueItems"):
            return list(items["enum"][:n])
        return [minimal_instance(items) for _ in range(n)]
    if kind == "string":
        return "ok".ljust(int(schema.get("minLength") or 0), "k")
    if kind in ("integer", "number"):
        value = schema.get(
            "minimum", schema.get("exclusiveMinimum", -1) + 1 if "exclusiveMinimum" in schema else 0
        )
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        return int(value) if kind == "integer" else float(value)
    return {"boolean": True, "null": None}.get(kind)


def synthetic_reply(messages: Sequence[Message], text: str = SYNTHETIC_TEXT) -> str:
    """A dry run's answer: a minimal schema-valid JSON value for a request that asks for JSON, else `text`."""
    schema = schema_of(messages)
    if schema is None:
        return text
    value = minimal_instance(schema)
    if validation_errors(value, schema):
        value = schema_example(schema)
    return json.dumps(value, ensure_ascii=False)


def hold_synthetic(
    ledger: RequestLedger, cache: OverlayCache, requests: Iterable[PendingRequest], text: str = SYNTHETIC_TEXT
) -> None:
    """Answer `requests` with synthetic replies in the overlay, each for its own round."""
    for r in requests:
        cache.hold(r.key, Completion(synthetic_reply(r.messages, text), 0, 0, "stop"), r.round)
