"""An Inspect log of `trace_bench/trace` back to a predictions file that `trace-bench evaluate` and `trace-bench
leaderboard` score like any run (docs/inspect.md, "From a log to a predictions file").

`log_predictions(log)` rebuilds the task's turns from the log's task arguments (the data directory, split,
pool, subset, seed, history and the baseline's parameters; `data` may point elsewhere when the folder moved),
checks that every sample's input is the request those turns give (a changed data directory is refused), and
reads each sample's answer from the replies its store kept, with the scorer's own function
(`scorer.prediction_of`). `write_log_predictions` writes the rows in corpus and turn order with the run's
`.meta.json` (the baseline and its parameters, the Inspect model and generate config, the row counts of its
fallbacks, `complete`), and, for a subset, the subset's data directory beside the file as `trace-bench run
--subset` writes it, so that `trace-bench evaluate --data <that folder>` scores exactly the log's turns.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

from trace_dataset.io import TraceDataError, write_json, write_jsonl
from trace_harness.fallbacks import row_counts
from trace_harness.integrations.inspect_eval import TEACHER_FORCED_TASK
from trace_harness.integrations.inspect_eval.scorer import prediction_of
from trace_harness.integrations.inspect_eval.scores import predictions_in_order
from trace_harness.integrations.inspect_eval.tasks import chat_messages
from trace_harness.integrations.inspect_eval.turns import TurnSet, load_turns
from trace_harness.protocols.subsets import check_one_subset, subset_dirname, write_subset
from trace_harness.protocols.teacher_forced.runner import meta_path

TURN_ARGS: tuple[str, ...] = ("split", "pool", "subset", "seed", "history")
PIPELINE_ARGS: tuple[str, ...] = (
    "prefilter",
    "prefilter_k",
    "reviews_per_poi",
    "review_chars",
    "json_repairs",
)
VARIANT = "Inspect"  # the leaderboard row's variant: "LLM Zero-Shot (MODEL) [Inspect]"


def task_args(log: EvalLog) -> dict[str, Any]:
    """The task arguments the log's run was made with (defaults included)."""
    return dict(log.eval.task_args or {})


def turns_of_log(log: EvalLog, data: str | os.PathLike | None = None) -> TurnSet:
    """The task's turns rebuilt from the log (`data` overrides the logged data directory)."""
    if log.eval.task_registry_name != TEACHER_FORCED_TASK:
        raise TraceDataError(
            f"this log is of the task {log.eval.task_registry_name!r}; expected {TEACHER_FORCED_TASK}"
        )
    args = task_args(log)
    chosen = data if data is not None else args.get("data")
    kw = {k: args[k] for k in (*TURN_ARGS, *PIPELINE_ARGS) if k in args}
    return load_turns(chosen, **kw)


def log_predictions(
    log: EvalLog, data: str | os.PathLike | None = None
) -> tuple[TurnSet, list[dict[str, Any]]]:
    """(the turns, the prediction rows of every sample that finished, in corpus and turn order)."""
    turnset = turns_of_log(log, data)
    found: dict[str, dict[str, Any]] = {}
    for sample in log.samples or ():
        sid = str(sample.id)
        request = turnset.requests.get(sid)
        if request is None:
            raise TraceDataError(f"sample {sid!r} of the log is no system turn of {turnset.data_dir}")
        sent = [(m.role, m.text) for m in chat_messages(request.messages)]
        logged = [(m.role, m.text) for m in sample.input] if isinstance(sample.input, list) else []
        if logged != sent:
            raise TraceDataError(
                f"sample {sid}: its input is not the request this data directory gives (was the data changed "
                "since the run?)",
                path=turnset.data_dir,
            )
        if sample.error is None and sample.store:
            found[sid] = prediction_of(turnset, sid, sample.store)
    return turnset, predictions_in_order(turnset, found)


def run_meta(log: EvalLog, turnset: TurnSet, rows: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """The `.meta.json` of the converted run (what `trace-bench leaderboard` reads)."""
    described = turnset.turns.describe()
    config = (
        log.eval.model_generate_config.model_dump(exclude_none=True) if log.eval.model_generate_config else {}
    )
    plan = log.plan.config.model_dump(exclude_none=True) if log.plan is not None else {}
    return {
        "baseline": described["baseline"],
        "family": "LLM",
        "session_isolated": True,
        "variant": VARIANT,
        "parameters": {
            **described["parameters"],
            "llm": {"backend": "inspect", "model": log.eval.model, "settings": {**plan, **config}},
        },
        "prompts": described["prompts"],
        "history": described["history"],
        "split": turnset.split,
        "pool": turnset.pool,
        "subset": None if turnset.subset is None else {"n": turnset.subset, "seed": turnset.seed},
        "kb_version": turnset.kb.version,
        "n_rows": len(rows),
        "complete": len(rows) == len(turnset.requests),
        "summary": {"rows": row_counts(out)},
        "inspect": {
            "task": log.eval.task_registry_name,
            "eval_id": log.eval.eval_id,
            "model": log.eval.model,
            "task_args": task_args(log),
            "structured": (log.eval.metadata or {}).get("structured"),
            "inspect_version": log.eval.packages.get("inspect_ai") if log.eval.packages else None,
        },
    }


def read_log(path: str | os.PathLike) -> EvalLog:
    """An Inspect log file read, or TraceDataError naming the file and what was expected."""
    expected = "expected an Inspect log (.eval or .json) that `inspect eval trace_bench/trace` wrote"
    if not Path(path).is_file():
        raise TraceDataError(f"{path}: no such file; {expected}")
    try:
        return read_eval_log(str(path))
    except Exception as e:  # inspect_ai raises zip, JSON, pydantic and OS errors alike for a bad file
        raise TraceDataError(f"{path}: not a readable Inspect log ({type(e).__name__}); {expected}") from None


def write_log_predictions(
    log_path: str | os.PathLike, out: str | os.PathLike, data: str | os.PathLike | None = None
) -> dict[str, Any]:
    """Write the log's predictions to `out` with its `.meta.json` (and the subset's data directory beside it);
    returns {"predictions", "meta", "data", "rows", "turns", "complete"}."""
    log = read_log(log_path)
    turnset, rows = log_predictions(log, data)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    scored = turnset.data_dir
    if turnset.subset is not None:
        target = out.parent / subset_dirname(turnset.split, turnset.subset, turnset.seed)
        check_one_subset(out.parent, target)
        scored = write_subset(
            turnset.data_dir, target, turnset.subset, seed=turnset.seed, split=turnset.split
        )
    write_jsonl(out, rows)
    meta = run_meta(log, turnset, rows, out)
    meta["data_dir"] = str(scored)
    write_json(meta_path(out), meta)
    return {
        "predictions": out,
        "meta": meta_path(out),
        "data": scored,
        "rows": len(rows),
        "turns": len(turnset.requests),
        "complete": meta["complete"],
    }


def log_metrics(log: EvalLog) -> Mapping[str, float]:
    """The teacher-forced task's metric values of a log ({name: value}, the suite metric's)."""
    if log.results is None or not log.results.scores:
        raise TraceDataError("the log has no results (the run did not finish)")
    return {name: m.value for name, m in log.results.scores[0].metrics.items()}
