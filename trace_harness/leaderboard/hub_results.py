"""A model repository's `.eval_results/` entry for a leaderboard row: Trace's scores on the model's Hub page.

`eval_results(rows, system)` gives one entry per leaderboard of the benchmark's `eval.yaml`
(`trace_dataset.release.eval_yaml.hub_tasks`: a metric of the closed pool's row, `open:` ones of the open
pool's) that the system's rows have a value for: the benchmark dataset's Hub id and the task id, the value,
and in `notes` what the format has no field for: the row's label, pool, split and number of dialogues, and the
value's 95% cluster-bootstrap interval (the leaderboard's `ci`, with its resamples and seed). No date: the Hub
takes the commit's, and the same rows give the same bytes. `write_eval_results` checks the entries against the
Hub's documented format (`eval_results.schema.json`, the LLM layer's JSON Schema validator) and writes
`<repo>/.eval_results/trace.yaml`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from trace_bench.errors import UsageError
from trace_dataset import __version__ as TRACE_VERSION
from trace_dataset.constants import OFFICIAL_HUB_DATASET
from trace_dataset.io import TraceDataError, write_text
from trace_dataset.release.eval_yaml import hub_tasks
from trace_llm.jsonout import validation_errors

EVAL_RESULTS_DIR = ".eval_results"
RESULTS_FILE = "trace.yaml"
SCHEMA = Path(__file__).with_name("eval_results.schema.json")


@cache
def eval_results_schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def check_eval_results(doc: Any) -> list[str]:
    """What makes `doc` not an `.eval_results` file the Hub reads ([] when it is one)."""
    return validation_errors(doc, eval_results_schema())


def rows_of(rows: Sequence[dict[str, Any]], system: str) -> dict[str, dict[str, Any]]:
    """The system's rows by pool; UsageError when it has none, or two of one pool (two runs look alike)."""
    found: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.get("system") != system:
            continue
        if r["pool"] in found:
            raise UsageError(
                f"--system {system!r}: two rows of the {r['pool']} pool (splits {found[r['pool']].get('split')!r} "
                f"and {r.get('split')!r}); keep one run of it under --runs (or --split)"
            )
        found[r["pool"]] = r
    if not found:
        known = sorted({str(r.get("system")) for r in rows})
        raise UsageError(f"--system {system!r}: no leaderboard row has this label; the rows are {known}")
    return found


def notes(row: dict[str, Any], metric: str) -> str:
    """What the entry's value is, in words: the row, what it was scored on, its interval."""
    dialogues = (row.get("per_dialogue") or {}).get("n_dialogues")
    scored = f"{row['pool']} pool, {row.get('split')} split" + (
        f", {dialogues} dialogues" if dialogues else ""
    )
    text = f"{row['system']}; {scored}"
    ci = (row.get("ci") or {}).get(metric)
    if ci:
        method = row.get("ci_method") or {}
        text += (
            f"; 95% CI [{ci[0]:.4f}, {ci[1]:.4f}] (cluster bootstrap over dialogues, "
            f"{method.get('n_boot', '?')} resamples, seed {method.get('seed', '?')})"
        )
    return text + f"; scored by trace-bench {TRACE_VERSION}"


def eval_results(
    rows: Sequence[dict[str, Any]], system: str, dataset_id: str = OFFICIAL_HUB_DATASET
) -> list[dict[str, Any]]:
    """The `.eval_results` entries of `system`'s rows (module docstring), in the eval.yaml's task order."""
    by_pool = rows_of(rows, system)
    out = []
    for task in hub_tasks():
        row = by_pool.get(task.pool)
        value = (row or {}).get("metrics", {}).get(task.metric)
        if row is None or value is None:
            continue
        out.append(
            {
                "dataset": {"id": dataset_id, "task_id": task.id},
                "value": float(value),
                "notes": notes(row, task.metric),
            }
        )
    if not out:
        raise UsageError(f"--system {system!r}: its rows hold none of the benchmark's leaderboard metrics")
    return out


def write_eval_results(
    rows: Sequence[dict[str, Any]],
    system: str,
    repo_dir: str | os.PathLike,
    dataset_id: str = OFFICIAL_HUB_DATASET,
) -> Path:
    """Write `<repo_dir>/.eval_results/trace.yaml` for `system`, checked against the Hub's format first."""
    doc = eval_results(rows, system, dataset_id)
    problems = check_eval_results(doc)
    if problems:
        raise TraceDataError(f"{EVAL_RESULTS_DIR}/{RESULTS_FILE} is not in the Hub's format: {problems[:5]}")
    path = Path(repo_dir) / EVAL_RESULTS_DIR / RESULTS_FILE
    write_text(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110))
    return path
