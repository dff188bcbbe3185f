"""The `eval.yaml` of a release: Trace registered as a Hub benchmark (the Hub's Eval Results, docs/inspect.md).

A benchmark dataset on the Hub carries an `eval.yaml` at its root; each of its tasks is a leaderboard that
model repositories' `.eval_results/*.yaml` entries point at by id. A release's is rendered from the data file
`eval_yaml.template.json`: the benchmark's name, its description (how to run the Inspect task that makes the
numbers), the Inspect framework, and one task per headline metric (`leaderboards`: a metric id, or `open:` and
a metric id for the open pool's), each on the release's `dialogues` config and its test split, with the field
spec, solver and scorer names of the Inspect task `trace_bench/trace`. The task id is the metric id the
leaderboard prints (`open:recall@1` is Table 6's "R@1 Open"), so an `.eval_results` entry and a leaderboard
column name a metric the same way (`hub_tasks`).

The file is checked against the Hub's documented format before it is written (`eval_yaml.schema.json`, written
from the Hub's documentation, checked by the LLM layer's JSON Schema validator; `check_eval_yaml`); the six-word
leak check of the release covers it like every other file (it holds no review text).
"""

from __future__ import annotations

import copy
import os
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from trace_dataset.constants import SPLITS
from trace_dataset.datafiles import read_table
from trace_dataset.io import TraceDataError, write_text
from trace_llm.jsonout import validation_errors

EVAL_YAML = "eval.yaml"
TEMPLATE = Path(__file__).with_name("eval_yaml.template.json")
SCHEMA = Path(__file__).with_name("eval_yaml.schema.json")
OPEN_PREFIX = "open:"  # a leaderboard of the open pool's row (trace_metrics.tables.OPEN_PREFIX's reading)
SPLIT = "test"
INSPECT = "inspect-ai"  # the framework whose tasks need a field spec, solvers and scorers


class HubTask(NamedTuple):
    """One leaderboard of the benchmark: its task id, the metric and the pool of the row it reads."""

    id: str
    metric: str
    pool: str


@cache
def _template() -> dict[str, Any]:
    return _thawed(read_table(TEMPLATE))


@cache
def eval_yaml_schema() -> dict[str, Any]:
    return _thawed(read_table(SCHEMA))


def _thawed(value: Any) -> Any:
    """A data table as plain JSON values (lists, not the tuples `read_table` gives)."""
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    if isinstance(value, dict):
        return {k: _thawed(v) for k, v in value.items()}
    return value


def hub_tasks() -> tuple[HubTask, ...]:
    """The benchmark's leaderboards, in the file's order."""
    out = []
    for board in _template()["leaderboards"]:
        opened = board.startswith(OPEN_PREFIX)
        out.append(HubTask(board, board.removeprefix(OPEN_PREFIX), "open" if opened else "closed"))
    return tuple(out)


def eval_yaml(splits: dict[str, int] | None = None) -> dict[str, Any]:
    """The eval.yaml document; its split is the test split, or the first non-empty one of `splits` (dialogues
    per split) when a tiny corpus has no test dialogues (the card and the builder leave empty splits out)."""
    split = SPLIT
    if splits is not None and not splits.get(SPLIT):
        split = next((s for s in SPLITS if splits.get(s)), SPLIT)
    t = _template()

    def task(task_id: str) -> dict[str, Any]:  # each task its own values: plain YAML, no anchors
        steps = {k: copy.deepcopy(t[k]) for k in ("field_spec", "solvers", "scorers")}
        return {"id": task_id, "config": t["config"], "split": split, **steps}

    return {
        "name": t["name"],
        "description": t["description"],
        "evaluation_framework": t["evaluation_framework"],
        "tasks": [task(h.id) for h in hub_tasks()],
    }


def check_eval_yaml(doc: Any) -> list[str]:
    """What makes `doc` not an eval.yaml the Hub reads ([] when it is one): the schema's errors, repeated ids."""
    schema = eval_yaml_schema()
    problems = validation_errors(doc, schema)
    if isinstance(doc, dict) and doc.get("evaluation_framework") == INSPECT:
        # the schema's anyOf says "inspect-ai needs more fields"; name the fields and the task instead
        needed = schema["anyOf"][1]["properties"]["tasks"]["items"]["required"]
        named = [
            f"$.tasks[{i}]: evaluation_framework {INSPECT} needs {[k for k in needed if k not in t]}"
            for i, t in enumerate(doc.get("tasks") or [])
            if isinstance(t, dict) and any(k not in t for k in needed)
        ]
        if named:
            problems = [p for p in problems if "anyOf" not in p] + named
    if not problems:
        ids = [t["id"] for t in doc["tasks"]]
        problems += [
            f"$.tasks: the id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})
        ]
    return problems


def write_eval_yaml(out_dir: str | os.PathLike, splits: dict[str, int] | None = None) -> Path:
    """Write `eval.yaml` into `out_dir`, checked first (TraceDataError naming what is wrong)."""
    doc = eval_yaml(splits)
    problems = check_eval_yaml(doc)
    if problems:
        raise TraceDataError(f"{EVAL_YAML} is not in the Hub's format: " + "; ".join(problems[:5]))
    path = Path(out_dir) / EVAL_YAML
    write_text(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110))
    return path
