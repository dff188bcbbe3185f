"""The teacher-forced protocol's turns as another harness sees them, without that harness: one request per
system turn, built and read back by the LLM Zero-Shot baseline's own code.

`ZeroShotTurns` holds an `LLMZeroShotBaseline` whose model answers elsewhere (`AnswersElsewhere`: the
baseline never calls it). For a turn row (`trace_dataset.views.turn_rows`) it gives a `TurnRequest`: the
baseline's prompt (`baselines/llm/prompts/llm_zero_shot.txt`, its candidate cards with their `[Rn]` review
labels, its instruction for the turn's action), the answer's JSON schema (`ranking_schema`) and the LLM layer's
JSON instruction appended to the last user message, exactly as `trace-bench run llm_zero_shot` sends them.
Two layouts of the history (`HISTORY_MODES`):

- `text`: the baseline's two messages unchanged (system; user = cards, the history as lines, the
  instruction): the same model with the same decoding gives the same replies as `trace-bench run`;
- `messages` (the Inspect task's default): the system message, then every earlier turn as a chat message
  (traveller = user, recommender = assistant, the dataset's texts), then the user message of the baseline's
  prompt with its `$history` filled by `prompts/inspect_turn.txt` (pointing at the messages above).

`read` turns the final answer (the schema-valid JSON value, or the `LLMOutputError` of a reply that stayed
invalid after the repairs) into the prediction row the baseline writes: its ranking completion, its
citations, its Popularity fallback and counters. `final_answer` is the LLM layer's repair rule over a list
of replies (the first that validates wins; `json_repairs` replies more at most), so an Inspect solver that
asks again and a reader of its log reach the same answer from the same replies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baselines.llm.common import Built, messages
from baselines.llm.llm_zero_shot import LLMZeroShotBaseline
from baselines.llm.prompting import LabelMap
from trace_dataset.constants import POOLS, SEED, resolve_splits
from trace_dataset.datadir import check_data_dir, iter_dialogues
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.views import turn_rows
from trace_harness.protocols.subsets import select_subset
from trace_llm import LLM, LLMConfigError, LLMOutputError
from trace_llm.base import DEFAULT_MAX_REPAIRS, Message, with_instruction
from trace_llm.jsonout import JSONOutputInvalid, parse_json_output, repair_instruction, schema_instruction
from trace_llm.prompts import Prompt, load_prompt
from trace_llm.settings import DecodingSettings
from trace_metrics.lib.suite import load_kb

HISTORY_MODES: tuple[str, ...] = ("messages", "text")
DEFAULT_HISTORY = "messages"
PROMPT = load_prompt(Path(__file__).with_name("prompts") / "inspect_turn.txt")
CUT_NOTE = " (the reply hit max_new_tokens and may be cut off)"  # the LLM layer's words for a cut reply
ROLES = {"user": "user", "system": "assistant"}  # a Trace turn's role -> its chat role


class AnswersElsewhere(LLM):
    """The model seat of a pipeline whose answers come from another harness: it describes the model and is
    never asked (the harness sends the baseline's requests itself)."""

    backend = "external"

    def __init__(self, model: str = "external"):
        super().__init__(model, DecodingSettings(), None, spec=f"external:{model}")

    def _complete(
        self, conversations: list[list[Message]], settings: DecodingSettings, on_done: Callable
    ) -> None:
        raise LLMConfigError("this pipeline's answers come from another harness; it never calls a model")


@dataclass(frozen=True)
class TurnRequest:
    """One system turn's request: what the model is sent and what reading its answer back needs."""

    sample_id: str  # "<dialogue_id>/<turn_id>"
    row: dict[str, Any]  # the turn row (gold included: the scorer reads it, the prompt never does)
    messages: list[Message]  # role/content dicts, the JSON instruction appended to the last user message
    schema: dict[str, Any]
    inp: dict[str, Any]  # the baseline's input for the row (prefiltered)
    built: Built  # the baseline's request (its labels read the citations back)


def sample_id(dialogue_id: str, turn_id: int) -> str:
    return f"{dialogue_id}/{turn_id}"


class ZeroShotTurns:
    """LLM Zero-Shot's request for a turn row and its reading of the answer (module docstring)."""

    def __init__(self, kb: KnowledgeBase, history: str = DEFAULT_HISTORY, **params: Any):
        if history not in HISTORY_MODES:
            raise ValueError(f"history={history!r}: expected one of {HISTORY_MODES}")
        self.history = history
        self.pipe = LLMZeroShotBaseline(kb, llm=AnswersElsewhere(), **params)

    @property
    def prompts(self) -> list[Prompt]:
        return [self.pipe.prompt, PROMPT] if self.history == "messages" else [self.pipe.prompt]

    def request(self, row: Mapping[str, Any]) -> TurnRequest:
        inp = self.pipe.preprocess(row)
        self.pipe.prefilter_batch([inp])
        self.pipe.prepare([inp])
        built = self.pipe.build(inp)
        convo = built.conversation if self.history == "text" else self._as_messages(inp, built)
        return TurnRequest(
            sample_id(str(row["dialogue_id"]), int(row["turn_id"])),
            dict(row),
            with_instruction(convo, schema_instruction(built.schema)),
            built.schema,
            inp,
            built,
        )

    def _as_messages(self, inp: Mapping[str, Any], built: Built) -> list[Message]:
        """The baseline's system message, the history as chat messages, its user message without the history
        lines (the cards rendered again from the same labelled candidates: the same labels, the same text)."""
        prompt = self.pipe.prompt
        fields = {
            "city": inp["city"],
            "poi_type": inp["poi_type"],
            "cards": self.pipe.cards.render(built.labelled, LabelMap()),
            "history": PROMPT.render("history_in_messages"),
            "instruction": prompt.render(inp["action"]),
        }
        system, user = messages(prompt.render("system", **fields), prompt.render("user", **fields))
        history: list[Message] = [
            {"role": ROLES.get(t["role"], "user"), "content": str(t["text"])} for t in inp["history"]
        ]
        return [system, *history, user]

    def read(self, request: TurnRequest, answer: Any) -> dict[str, Any]:
        """The baseline's prediction row for the answer (a schema-valid value or an LLMOutputError), with the
        scores behind its ranking under `scores` (ties of the live turn metrics; not a prediction field)."""
        output = self.pipe.read(dict(request.inp), request.built, answer)
        row = self.pipe.postprocess(output).to_dict()
        if output.scores is not None:
            row["scores"] = dict(output.scores)
        return row

    def describe(self) -> dict[str, Any]:
        """The baseline's parameters and every prompt file's SHA-256 (run metadata)."""
        config = {k: v for k, v in self.pipe.get_config_dict().items() if k != "llm"}
        return {
            "baseline": self.pipe.name,
            "history": self.history,
            "parameters": config,
            "prompts": [p.describe() for p in self.prompts],
        }


# ---------------------------------------------------------------------------------------------------
# Answers: the LLM layer's parse-and-repair rule, one reply at a time
# ---------------------------------------------------------------------------------------------------
def check_answer(text: str, schema: Mapping[str, Any], cut: bool = False) -> tuple[Any, str | None]:
    """(the schema-valid JSON value of a reply, None) or (None, what is wrong with it, as the model is told)."""
    try:
        return parse_json_output(text, schema), None
    except JSONOutputInvalid as e:
        return None, str(e) + (CUT_NOTE if cut else "")


def repair_message(error: str, schema: Mapping[str, Any]) -> Message:
    """The user message that sends an invalid reply back (the LLM layer's)."""
    return {"role": "user", "content": repair_instruction(error, schema)}


def final_answer(
    replies: Sequence[tuple[str, bool]], schema: Mapping[str, Any], json_repairs: int = DEFAULT_MAX_REPAIRS
) -> Any:
    """The answer of a turn from its replies in order ((text, cut at max_tokens)): the first schema-valid
    value within 1 + json_repairs replies, else an LLMOutputError carrying the last reply and its error."""
    error, raw, tried = "no reply", "", 0
    for text, cut in replies[: json_repairs + 1]:
        tried += 1
        value, error_or_none = check_answer(text, schema, cut)
        if error_or_none is None:
            return value
        error, raw = error_or_none, text
    return LLMOutputError(
        f"no valid JSON after {tried} attempt(s): {error}; last output: {raw[:300]!r}",
        raw=raw,
        error=error,
        attempts=tried,
    )


# ---------------------------------------------------------------------------------------------------
# The turns of a data directory
# ---------------------------------------------------------------------------------------------------
@dataclass
class TurnSet:
    """The dialogues a task runs on and one request per system turn, in corpus and turn order."""

    data_dir: Path
    split: str
    pool: str
    subset: int | None
    seed: int
    kb: KnowledgeBase
    dialogues: list[dict[str, Any]]
    turns: ZeroShotTurns
    requests: dict[str, TurnRequest]

    def describe(self) -> dict[str, Any]:
        return {
            "data": str(self.data_dir),
            "split": self.split,
            "pool": self.pool,
            "subset": self.subset,
            "seed": self.seed,
            "dialogues": len(self.dialogues),
            "system_turns": len(self.requests),
            "kb_version": self.kb.version,
            **self.turns.describe(),
        }


def load_dialogues(
    data: str | os.PathLike | None, split: str, subset: int | None, seed: int
) -> tuple[Path, KnowledgeBase, list[dict[str, Any]]]:
    """The hydrated data directory, its knowledge base and the dialogues of `split` (the seeded `subset` of
    them, as `trace-bench run --subset` draws it)."""
    if data is None or str(data) == "":
        raise TraceDataError("no Trace data directory: pass the task parameter data=DIR (-T data=DIR)")
    splits = resolve_splits(split)
    root = check_data_dir(data, splits)
    dialogues = list(iter_dialogues(root, splits))
    if subset is not None:
        dialogues = select_subset(dialogues, subset, seed)
    if not dialogues:
        raise TraceDataError(f"split {split!r} holds no dialogues", path=root)
    return root, load_kb(root), dialogues


def load_turns(
    data: str | os.PathLike | None,
    *,
    split: str = "test",
    pool: str = "closed",
    subset: int | None = None,
    seed: int = SEED,
    history: str = DEFAULT_HISTORY,
    **params: Any,
) -> TurnSet:
    """Every system turn of the (seeded subset of the) split as a request; `params` are the baseline's
    (prefilter, prefilter_k, reviews_per_poi, review_chars, json_repairs)."""
    if pool not in POOLS:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOLS}")
    root, kb, dialogues = load_dialogues(data, split, subset, seed)
    turns = ZeroShotTurns(kb, history, **params)
    requests = {}
    for d in dialogues:
        for row in turn_rows(d, pool):
            req = turns.request(row)
            requests[req.sample_id] = req
    return TurnSet(root, split, pool, subset, seed, kb, dialogues, turns, requests)
