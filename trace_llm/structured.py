"""Structured outputs: what a caller wants the answer to look like (a `Constraint`), and how each backend is
asked for it (a dialect).

Modes (the `structured=` option, `--structured` on every command that takes `--llm`):

- `auto` (default): in process (hf, llamacpp) the constraint is compiled to a grammar and masks the logits
  while decoding; on a server (openai backend) each server dialect of `DIALECTS` is tried once, in the table's
  order, a refusal (HTTP 400/422 naming the field) falls back to the next, then to `prompt`, and the answer is
  remembered per server (base URL) for the rest of the process. Every request answered by prompt because the
  server refused is counted (`usage["dialect_fallbacks"]`).
- a server dialect's name (`json_schema`, `json_object`): that dialect's `response_format` only; a refusal is an
  error. In process they mean the grammar, like `auto`.
- `prompt`: no constraint; the schema goes in the prompt and invalid replies are repaired (the only dialect
  before constrained decoding).

A server dialect is one row of `DIALECTS` (its name, the `response_format` it sends, the servers that take it);
the modes, `auto`'s order, the words that mark a refusal and docs/llm.md's table of dialects come from it.

The schema is always also written into the prompt (`jsonout.schema_instruction`), so a constrained model still
reads what each field means, and the prompt does not change with the dialect. The validator and the repair
loop stay as the safety net for every dialect (a reply cut at `max_new_tokens` is still invalid).

A grammar constraint (GBNF, the syntax both llama.cpp and xgrammar read; CoRE's `rationale <rating>N</rating>`)
is honoured in process; servers get it as prompt (no server dialect carries a grammar portably).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trace_llm.errors import LLMConfigError
from trace_llm.llama_schema import converter_schema

AUTO = "auto"
GRAMMAR = "grammar"  # the dialect of in-process constrained decoding
PROMPT = "prompt"
DEFAULT_STRUCTURED = AUTO
RESPONSE_FORMAT_NAME = "answer"


@dataclass(frozen=True)
class ServerDialect:
    """One way of asking an OpenAI-compatible server for a JSON answer: `{"type": type, **fields(schema)}` as the
    request's `response_format`."""

    name: str  # the `--structured` value and the dialect in cache keys
    type: str  # the response_format's "type" (a word a refusal names)
    fields: Callable[[dict[str, Any]], dict[str, Any]]  # the rest of the response_format, for a JSON Schema
    servers: str  # which servers take it (docs/llm.md)

    def response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": self.type, **self.fields(schema)}


def _json_schema_fields(schema: dict[str, Any]) -> dict[str, Any]:
    return {"json_schema": {"name": RESPONSE_FORMAT_NAME, "schema": schema, "strict": True}}


def _json_object_fields(schema: dict[str, Any]) -> dict[str, Any]:
    # llama-cpp-python's server turns the schema into a grammar with its converter: the forms it honours
    return {"schema": converter_schema(schema)}


# The server dialects, in the order `auto` tries them (then `prompt`).
DIALECTS: tuple[ServerDialect, ...] = (
    ServerDialect(
        "json_schema", "json_schema", _json_schema_fields, "OpenAI, vLLM, SGLang, llama.cpp's `llama-server`"
    ),
    ServerDialect(
        "json_object",
        "json_object",
        _json_object_fields,
        "llama-cpp-python's server (`python -m llama_cpp.server`); it refuses `json_schema` with an error "
        "naming the field",
    ),
)
SERVER_DIALECTS: tuple[str, ...] = tuple(d.name for d in DIALECTS)  # what `auto` tries, in this order
STRUCTURED_MODES: tuple[str, ...] = (AUTO, *SERVER_DIALECTS, PROMPT)
_BY_NAME = {d.name: d for d in DIALECTS}
# words a server's 400/422 names when it refuses the response_format it was sent: the field, each dialect's
# type, and the words servers use for the constraint
REFUSAL_WORDS: tuple[str, ...] = (
    "response_format",
    *dict.fromkeys(d.type for d in DIALECTS),
    "schema",
    "grammar",
)
REFUSAL_STATUS = frozenset({400, 422})


def check_structured(mode: Any) -> str:
    if mode not in STRUCTURED_MODES:
        raise LLMConfigError(f"structured={mode!r}: expected one of {', '.join(STRUCTURED_MODES)}")
    return mode


def constrains(mode: str | None) -> bool:
    """Whether a `structured` mode (None: the default) sends JSON requests under a constraint (every mode but
    prompt), so that a too-small token budget can cut a reply before it closes (trace_llm.budget)."""
    return (mode or DEFAULT_STRUCTURED) != PROMPT


@dataclass(frozen=True)
class Constraint:
    """What an answer must look like: a JSON Schema (`kind="json"`) or a GBNF grammar (`kind="gbnf"`, its start
    rule `root`, the whole reply)."""

    kind: str
    schema: Any = None
    grammar: str | None = None
    _digest: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in ("json", "gbnf"):
            raise LLMConfigError(f"constraint kind {self.kind!r}: expected 'json' or 'gbnf'")
        if self.kind == "gbnf" and not (isinstance(self.grammar, str) and "root" in self.grammar):
            raise LLMConfigError("a gbnf constraint needs a grammar string with a `root` rule")
        body = json.dumps(
            self.schema if self.kind == "json" else self.grammar, sort_keys=True, ensure_ascii=False
        )
        object.__setattr__(self, "_digest", hashlib.sha256(f"{self.kind}\0{body}".encode()).hexdigest()[:16])

    @classmethod
    def json(cls, schema: Any) -> Constraint:
        return cls("json", schema=schema)

    @classmethod
    def gbnf(cls, grammar: str) -> Constraint:
        return cls("gbnf", grammar=grammar)

    @property
    def digest(self) -> str:
        """Names the constraint in cache keys (a grammar is not in the prompt, so the key needs it)."""
        return self._digest


def response_format(dialect: str, constraint: Constraint) -> dict[str, Any] | None:
    """The request's `response_format` for a server dialect (None: nothing to send)."""
    if constraint.kind != "json" or dialect == PROMPT:
        return None
    if dialect not in _BY_NAME:
        raise LLMConfigError(f"no response_format for dialect {dialect!r}")
    return _BY_NAME[dialect].response_format(constraint.schema if isinstance(constraint.schema, dict) else {})


def dialect_table() -> str:
    """docs/llm.md's table of the server dialects (a test compares the two)."""
    rows = ["| server | `response_format` it takes |", "| --- | --- |"]
    example = Constraint.json({"type": "object"})
    for d in DIALECTS:
        sent = json.dumps(response_format(d.name, example))
        rows.append(f"| {d.servers} | `{sent}` (dialect `{d.name}`) |")
    return "\n".join(rows) + "\n"


def is_refusal(status: int, text: str) -> bool:
    """Does an HTTP error answer refuse the structured-output field (rather than the request as a whole)?

    400/422 naming the field; also a 500 naming `response_format` (llama-cpp-python's server answers a
    `json_schema` it does not take with a 500 carrying the validation error, not a 400)."""
    low = text.lower()
    if status == 500:
        return "response_format" in low
    if status not in REFUSAL_STATUS:
        return False
    return any(word in low for word in REFUSAL_WORDS)


def dialects_to_try(mode: str) -> tuple[str, ...]:
    """The server dialects a mode tries, in order (prompt is always the last resort of `auto`)."""
    if mode == AUTO:
        return (*SERVER_DIALECTS, PROMPT)
    return (mode,)


class ServerDialects:
    """Per server (base URL): the dialect it accepted, learnt once per process and shared by every OpenAILLM."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, base_url: str) -> str | None:
        with self._lock:
            return self._known.get(base_url)

    def set(self, base_url: str, dialect: str) -> None:
        with self._lock:
            self._known[base_url] = dialect

    def forget(self, base_url: str | None = None) -> None:
        with self._lock:
            if base_url is None:
                self._known.clear()
            else:
                self._known.pop(base_url, None)


SERVER_DIALECT_MEMORY = ServerDialects()
