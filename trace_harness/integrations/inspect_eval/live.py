"""The task `trace_bench/trace_live`: Trace's live protocol in Inspect, the rules traveller as the user and the
Inspect model as the system (docs/inspect.md, docs/interactive.md "The `trace` protocol").

    inspect eval trace_bench/trace_live --model MODEL -T data=DIR [-T n=50 -T turns=8 -T pool=open ...]

One sample per traveller (the first `n` dialogues of the split, as `trace-bench interact --n`). Its solver
runs the interaction loop (`interactive.loop.converse`, one dialogue, in a worker thread) with a
`ModelSystem`: every system turn is LLM Zero-Shot's request for the loop's turn row, asked of the Inspect model
back on the event loop (the same structured answer and repairs as `trace_bench/trace`, `solver.ask_for_answer`)
and read by the baseline. The sample's messages become the conversation (traveller = user, system =
assistant); its store and score metadata hold the dialogue as `trace-bench interact` logs it.

Scores: per dialogue the live declarations (success, system turns to success, system turns); the metric
`trace_bench/trace_live_suite` is `metrics.json` of `trace-bench interact` over the dialogues
(`interactive.report.build_metrics`): the per-turn ranks over every ranked turn, the dialogue outcomes and the
Trace metrics of the live turns, each with its cluster-bootstrap interval.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, ModelOutput, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from baselines.llm.common import DEFAULT_PREFILTER_K
from baselines.llm.prompting import DEFAULT_REVIEW_CHARS, DEFAULT_REVIEWS_PER_POI
from trace_dataset.constants import SEED
from trace_harness.integrations.inspect_eval import LIVE_METRIC, LIVE_SCORER, LIVE_SOLVER, LIVE_TASK
from trace_harness.integrations.inspect_eval._namespace import named
from trace_harness.integrations.inspect_eval.live_setup import (
    LiveSetup,
    ModelSystem,
    conversation_item,
    live_scores,
    load_live,
)
from trace_harness.integrations.inspect_eval.solver import (
    DEFAULT_STRUCTURED,
    ask_for_answer,
    check_solver_args,
)
from trace_harness.integrations.inspect_eval.tasks import TASK_VERSION, app_f_config, chat_messages
from trace_harness.integrations.inspect_eval.turns import DEFAULT_HISTORY, TurnRequest
from trace_harness.protocols.interactive.loop import GENERATOR, converse
from trace_harness.protocols.interactive.report import build_metrics
from trace_harness.protocols.interactive.run import DEFAULT_TURNS
from trace_llm.base import DEFAULT_MAX_REPAIRS
from trace_metrics.lib.stats import N_BOOT

ITEM_KEY = (
    "dialogue"  # the sample store's and score metadata's logged dialogue (record, predictions, traveller)
)


def conversation_messages(record: dict[str, Any]) -> list[ChatMessage]:
    """The live conversation as chat messages: the traveller's turns as user, the system's as assistant."""
    return [
        ChatMessageUser(content=t["text"]) if t["role"] == "user" else ChatMessageAssistant(content=t["text"])
        for t in record["turns"]
    ]


@solver(name=LIVE_SOLVER)
@named
def trace_converse(
    setup: LiveSetup, structured: str = DEFAULT_STRUCTURED, json_repairs: int = DEFAULT_MAX_REPAIRS
) -> Solver:
    """Let the sample's traveller talk to the Inspect model (module docstring)."""
    check_solver_args(structured, json_repairs)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        goal = setup.goals[str(state.sample_id)]

        def ask(request: TurnRequest) -> list[tuple[str, bool]]:
            _, _, replies = anyio.from_thread.run(
                ask_for_answer,
                model,
                chat_messages(request.messages),
                request.schema,
                structured,
                json_repairs,
            )
            return [(str(text), bool(cut)) for text, cut in replies]

        system = ModelSystem(setup.turns, ask, str(model))
        metadata = {
            "generator": f"{GENERATOR} (rules simulator, Inspect)",
            "backend": "rules",
            "seed": setup.seed,
        }

        def talk() -> dict[str, Any]:
            [live] = converse(
                system,
                setup.simulator,
                [goal],
                pool=setup.pool,
                max_turns=setup.max_turns,
                seed=setup.seed,
                metadata=metadata,
            )
            return conversation_item(live)

        item = await anyio.to_thread.run_sync(talk)
        state.store.set(ITEM_KEY, item)
        state.messages = conversation_messages(item["record"])
        last = next((t["text"] for t in reversed(item["record"]["turns"]) if t["role"] == "system"), "")
        state.output = ModelOutput.from_content(model=str(model), content=last)
        return state

    return solve


def turn_line(turn: dict[str, Any]) -> str:
    """One turn of the conversation as `inspect view` shows it: speaker, action, text, and a system turn's
    citations (label, review, the POI it is about)."""
    line = f"**{'traveller' if turn['role'] == 'user' else 'system'}** ({turn['action']}): {turn['text']}"
    cited = [
        f"[{c['label']}] review `{c['review_id']}` of `{c['business_id']}`"
        for c in turn.get("citations") or ()
    ]
    return line + (f" — cites {', '.join(cited)}" if cited else "")


@scorer(metrics=[], name=LIVE_SCORER)
@named
def trace_live_scores() -> Scorer:
    """The live declarations of the sample's dialogue; its log (record, predictions) in the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        item = state.store.get(ITEM_KEY)
        values = live_scores(item)
        turns = item["record"]["turns"]
        return Score(
            value=values,
            answer=f"{'accepted' if values.get('success_rate') else 'not accepted'} after "
            f"{sum(t['role'] == 'system' for t in turns)} system turns",
            explanation="\n".join(turn_line(t) for t in turns),
            metadata={ITEM_KEY: item},
        )

    return score


def flat_live_metrics(metrics: dict[str, Any]) -> dict[str, float]:
    """Inspect's metric values of `build_metrics`: every mean with its interval, the live Trace values too."""
    out: dict[str, float] = {}

    def put(key: str, mean: Any, low: Any = None, high: Any = None) -> None:
        if mean is None:
            return
        out[key] = float(mean)
        if low is not None and high is not None:
            out[f"{key}_ci_low"], out[f"{key}_ci_high"] = float(low), float(high)

    for section in ("dialogue", "overall"):
        for key, cell in (metrics.get(section) or {}).items():
            put(key, cell.get("mean"), cell.get("ci_low"), cell.get("ci_high"))
    trace = metrics.get("trace") or {}
    for key, value in (trace.get("values") or {}).items():
        ci = (trace.get("ci") or {}).get(key) or {}
        put(key, value, ci.get("ci_low"), ci.get("ci_high"))
    out["dialogues"] = float(metrics["n_dialogues"])
    return out


@metric(name=LIVE_METRIC)
@named
def trace_live_suite(setup: LiveSetup, n_boot: int = N_BOOT) -> Metric:
    """`trace-bench interact`'s metrics.json over the scored dialogues, flattened (module docstring)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        found = [(s.score.metadata or {}).get(ITEM_KEY) for s in scores]
        order = {did: k for k, did in enumerate(setup.goals)}  # the travellers' order, as `interact` writes
        items = sorted(
            (i for i in found if isinstance(i, dict)), key=lambda i: order[i["record"]["dialogue_id"]]
        )
        run = {"system": "inspect", "simulator": "rules", "split": setup.split, "pool": setup.pool}
        metrics = build_metrics(items, setup.kb, protocol="trace", run=run, n_boot=n_boot, seed=SEED)
        return flat_live_metrics(metrics)

    return compute


@task(name=LIVE_TASK)
@named
def trace_live(
    data: str | None = None,
    split: str = "test",
    pool: str = "closed",
    n: int | None = None,
    turns: int = DEFAULT_TURNS,
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
    """Trace, live: the rules travellers of the first `n` dialogues of `split` talk to the model, at most `turns`
    system turns each; the other parameters as `trace_bench/trace`'s."""
    params: dict[str, Any] = {
        "prefilter": prefilter,
        "prefilter_k": prefilter_k,
        "reviews_per_poi": reviews_per_poi,
        "review_chars": review_chars,
        "json_repairs": json_repairs,
    }
    setup = load_live(
        data, split=split, pool=pool, n=n, max_turns=turns, seed=seed, history=history, **params
    )
    samples = [
        Sample(
            input=f"A live Trace conversation with the simulated traveller seeded from dialogue {did}.",
            id=did,
            metadata={"dialogue_id": did, "city": g.city, "poi_type": g.poi_type, "pool": pool},
        )
        for did, g in setup.goals.items()
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"trace-live-{split}-{pool}"),
        solver=trace_converse(setup, structured, json_repairs),
        scorer=trace_live_scores(),
        metrics=[trace_live_suite(setup, n_boot)],
        config=app_f_config(),
        epochs=1,
        version=TASK_VERSION,
        metadata={"protocol": "live", "structured": structured, **setup.describe()},
    )
