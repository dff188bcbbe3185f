"""The task `trace_bench/trace`: Trace's teacher-forced protocol in Inspect (docs/inspect.md).

    inspect eval trace_bench/trace --model MODEL -T data=DIR [-T subset=N -T pool=open -T history=text ...]

One sample per system turn of the (seeded subset of the) split, in corpus order: its input the LLM Zero-Shot
request (`turns`), its target the turn's gold POIs, its metadata the answer's JSON schema and the turn's
place. Solver `trace_bench/trace_answer`, scorer `trace_bench/trace_scores`, metric `trace_bench/trace_suite`.

Decoding defaults to the LLM baselines' (App. F, `baselines.llm`): temperature 0.0, top-p 1.0, 600 new tokens,
seed 42, which `--temperature`, `--max-tokens`, ... override as for any Inspect task (a reasoning model takes
App. F's 1.0 and 16,000). One epoch: the suite scores each turn's one answer.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)

from baselines.llm import APP_F_MAX_NEW_TOKENS, APP_F_TEMPERATURE
from baselines.llm.common import DEFAULT_PREFILTER_K
from baselines.llm.prompting import DEFAULT_REVIEW_CHARS, DEFAULT_REVIEWS_PER_POI
from trace_dataset.constants import SEED
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.integrations.inspect_eval import TEACHER_FORCED_TASK
from trace_harness.integrations.inspect_eval._namespace import named
from trace_harness.integrations.inspect_eval.scorer import trace_scores, trace_suite
from trace_harness.integrations.inspect_eval.solver import DEFAULT_STRUCTURED, SCHEMA_KEY, trace_answer
from trace_harness.integrations.inspect_eval.turns import DEFAULT_HISTORY, TurnRequest, load_turns
from trace_llm.base import DEFAULT_MAX_REPAIRS, Message
from trace_metrics.lib.stats import N_BOOT

TASK_VERSION = 1
_MESSAGE_TYPES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def app_f_config() -> GenerateConfig:
    """The LLM baselines' decoding (App. F, non-reasoning model): the task's defaults."""
    return GenerateConfig(
        temperature=APP_F_TEMPERATURE, top_p=1.0, max_tokens=APP_F_MAX_NEW_TOKENS, seed=SEED
    )


def chat_messages(messages: list[Message]) -> list[ChatMessage]:
    return [_MESSAGE_TYPES[m["role"]](content=m["content"]) for m in messages]


def turn_sample(request: TurnRequest, kb: KnowledgeBase) -> Sample:
    """The turn's sample; its target the gold POIs by name and id (what `inspect view` shows; no scorer reads
    it: the scorer reads the turn row)."""
    row = request.row
    return Sample(
        input=chat_messages(request.messages),
        target=[f"{kb.pois[p].name} ({p})" if p in kb.pois else p for p in row["gold_poi_ids"]],
        id=request.sample_id,
        metadata={
            "dialogue_id": row["dialogue_id"],
            "turn_id": row["turn_id"],
            "action": row["action"],
            "pool": row["pool"],
            SCHEMA_KEY: request.schema,
        },
    )


@task(name=TEACHER_FORCED_TASK)
@named
def trace(
    data: str | None = None,
    split: str = "test",
    pool: str = "closed",
    subset: int | None = None,
    seed: int = SEED,
    history: str = DEFAULT_HISTORY,
    structured: str = DEFAULT_STRUCTURED,
    json_repairs: int = DEFAULT_MAX_REPAIRS,
    prefilter: str = "tfidf",
    prefilter_k: int = DEFAULT_PREFILTER_K,
    reviews_per_poi: int = DEFAULT_REVIEWS_PER_POI,
    review_chars: int = DEFAULT_REVIEW_CHARS,
    n_boot: int = N_BOOT,
) -> Task:
    """Trace, teacher-forced: every system turn of a hydrated data directory (`data`), LLM Zero-Shot's request.

    split / pool / subset (seeded by `seed`, as `trace-bench run --subset`) choose the turns; `history`
    (messages | text) the layout of the dialogue so far; `structured` (schema | json_object | prompt) how
    the JSON answer is asked for; `json_repairs` how often an invalid one is sent back; prefilter,
    prefilter_k, reviews_per_poi, review_chars the baseline's; `n_boot` the bootstrap resamples."""
    params: dict[str, Any] = {
        "prefilter": prefilter,
        "prefilter_k": prefilter_k,
        "reviews_per_poi": reviews_per_poi,
        "review_chars": review_chars,
        "json_repairs": json_repairs,
    }
    turnset = load_turns(data, split=split, pool=pool, subset=subset, seed=seed, history=history, **params)
    samples = [turn_sample(r, turnset.kb) for r in turnset.requests.values()]
    return Task(
        dataset=MemoryDataset(samples, name=f"trace-{split}-{pool}"),
        solver=trace_answer(structured, json_repairs),
        scorer=trace_scores(turnset),
        metrics=[trace_suite(turnset, n_boot)],
        config=app_f_config(),
        epochs=1,
        version=TASK_VERSION,
        metadata={"protocol": "teacher_forced", "structured": structured, **turnset.describe()},
    )
