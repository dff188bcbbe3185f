"""The solver `trace_bench/trace_answer`: ask the model for the turn's structured answer, repair as the LLM layer.

The sample's input is the LLM Zero-Shot request (`turns.ZeroShotTurns`, the JSON instruction already in its
last user message); its metadata holds the answer's JSON schema. How the schema is asked for
(`structured`, `STRUCTURED_MODES`):

- `schema` (default): Inspect's structured output (`GenerateConfig.response_schema`, a `ResponseSchema` named
  "answer", strict, as the LLM layer's `json_schema` dialect), which each provider maps to its own (OpenAI's
  and vLLM's `json_schema` response format, Anthropic's and Google's). Inspect's `JSONSchema` has no
  `minItems` / `maxItems`, so those two bounds travel in the prompt's instruction only;
- `json_object`: llama-cpp-python's server dialect, `response_format={"type": "json_object", "schema": ...}`
  (`trace_llm.structured`, sent as `extra_body`): that server refuses `json_schema`;
- `prompt`: no constraint; the prompt's JSON instruction alone.

Every reply is checked against the full schema (`turns.check_answer`); an invalid one is sent back with what
was wrong (the LLM layer's repair message) up to `json_repairs` times. The replies and whether each was cut at
`max_tokens` are kept in the sample's store (`REPLIES_KEY`), which the scorer and `logs` read.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    GenerateConfig,
    GenerateConfigArgs,
    Model,
    ModelOutput,
    ResponseSchema,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema

from trace_harness.integrations.inspect_eval import SOLVER
from trace_harness.integrations.inspect_eval._namespace import named
from trace_harness.integrations.inspect_eval.turns import check_answer, repair_message
from trace_llm.base import DEFAULT_MAX_REPAIRS
from trace_llm.structured import RESPONSE_FORMAT_NAME, Constraint, response_format

STRUCTURED_MODES: tuple[str, ...] = ("schema", "json_object", "prompt")
DEFAULT_STRUCTURED = "schema"
REPLIES_KEY = "trace_replies"  # the sample store's [[reply text, cut at max_tokens], ...]
SCHEMA_KEY = "schema"  # the sample metadata's JSON schema of the answer


def structured_config(structured: str, schema: dict[str, Any]) -> GenerateConfigArgs:
    """The generate() arguments that ask for `schema` in the mode `structured` (module docstring)."""
    if structured == "schema":
        return {
            "response_schema": ResponseSchema(
                name=RESPONSE_FORMAT_NAME, json_schema=JSONSchema.model_validate(schema), strict=True
            )
        }
    if structured == "json_object":
        return {"extra_body": {"response_format": response_format("json_object", Constraint.json(schema))}}
    if structured == "prompt":
        return {}
    raise ValueError(f"structured={structured!r}: expected one of {STRUCTURED_MODES}")


def check_solver_args(structured: str, json_repairs: int) -> None:
    if structured not in STRUCTURED_MODES:
        raise ValueError(f"structured={structured!r}: expected one of {STRUCTURED_MODES}")
    if isinstance(json_repairs, bool) or not isinstance(json_repairs, int) or json_repairs < 0:
        raise ValueError(f"json_repairs={json_repairs!r}: expected an integer >= 0")


async def ask_for_answer(
    model: Model, messages: list[ChatMessage], schema: dict[str, Any], structured: str, json_repairs: int
) -> tuple[list[ChatMessage], ModelOutput, list[list[Any]]]:
    """Ask `model` for the answer to `messages` and send an invalid reply back, up to `json_repairs` times:
    (the conversation with every reply and repair message, the last output, [[reply, cut], ...])."""
    config = GenerateConfig(**structured_config(structured, schema))
    convo = list(messages)
    replies: list[list[Any]] = []
    for attempt in range(json_repairs + 1):
        output = await model.generate(convo, config=config)
        convo.append(output.message)
        cut = output.stop_reason == "max_tokens"
        replies.append([output.completion, cut])
        _, error = check_answer(output.completion, schema, cut)
        if error is None or attempt == json_repairs:
            break
        convo.append(ChatMessageUser(content=repair_message(error, schema)["content"]))
    return convo, output, replies


@solver(name=SOLVER)
@named
def trace_answer(structured: str = DEFAULT_STRUCTURED, json_repairs: int = DEFAULT_MAX_REPAIRS) -> Solver:
    """Ask for the turn's JSON answer (`structured`: schema, json_object or prompt) and send an invalid reply
    back up to `json_repairs` times."""
    check_solver_args(structured, json_repairs)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        convo, output, replies = await ask_for_answer(
            get_model(), state.messages, state.metadata[SCHEMA_KEY], structured, json_repairs
        )
        state.messages = convo
        state.output = output
        state.store.set(REPLIES_KEY, replies)
        return state

    return solve
