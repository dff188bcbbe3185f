"""Leaderboard rows in Every Eval Ever's shared schema (`trace-bench leaderboard --export every-eval-ever DIR`),
and such records read back as comparison rows (`--rows FILE`).

One record per row (a system on one pool and split): `DIR/data/trace/<developer>/<model>/<uuid>.json`, the
datastore layout every-eval-ever's validator checks (schema `EEE_SCHEMA_VERSION`):

- `model_info`: the row's label as the name; as the id, an LLM row's model where it is named `org/model` (the
  last two parts of a longer name such as Inspect's `openai-api/vllm/org/model`; a model named by a local file
  goes under the developer `local`), the package's own systems as
  `trace-bench/<baseline>`, a submission as `submitted/<its name>`, a paper row as `trace-paper/<label>`; where
  it ran (`deployment_type`) and whether its weights are open, as far as the run's metadata says;
- `source_metadata`: an `evaluation_run` (per-turn outputs exist: runs and submissions, scored here; the
  evaluator a third party, the submitter itself for a submission) or `documentation` (the paper's reported
  numbers, exported only when asked);
- `evaluation_results`: one per metric of the row, its declaration (`trace_metrics.specs`) giving the id
  (`trace.<metric id>`), name, description, direction and bounds; the score with its 95% cluster-bootstrap
  interval (the row's `ci`, resamples and seed), the number of items and their standard deviation; an LLM
  run's decoding (`generation_config`);
- the uuid and `evaluation_id` come from the row's identity (system, pool, split, corpus, source), so
  exporting the same rows again writes the same files; `retrieved_timestamp` is the export's time (Unix
  seconds; `SOURCE_DATE_EPOCH` fixes it, the reproducible-builds convention).

`read_rows(path)` reads extra rows: a `leaderboard.json`, a stored row (the Space's results folder holds one per
file), or an Every Eval Ever record, whose `trace.*` results become a comparison row per pool (source
`every-eval-ever`: no per-dialogue data, so intervals but no significance marks); a folder is read for all of
them. Imported rows are shown, never exported again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset import __version__ as TRACE_VERSION
from trace_dataset.io import TraceDataError, read_json, write_json
from trace_harness.leaderboard.build import find_runs, read_leaderboard, short_model_name, system_label
from trace_metrics import specs

log = logging.getLogger(__name__)

EEE_FORMAT = "every-eval-ever"
EXPORT_FORMATS: tuple[str, ...] = (EEE_FORMAT,)
EEE_SCHEMA_VERSION = "0.3.0"  # every-eval-ever's eval.schema.json (the test checks it against the package)
COLLECTION = "trace"  # the datastore's benchmark folder
METRIC_PREFIX = "trace."
IMPORTED = "every-eval-ever"  # the source of a row read from a record
ORGANISATION = "trace-bench"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
LOCAL_BACKENDS = ("llamacpp", "hf")  # the model runs in this process: self-deployed, its weights at hand


def component(text: str) -> str:
    """A portable datastore path component: runs of other characters become '-'."""
    out = _UNSAFE.sub("-", text).strip("-.")
    return out or "unnamed"


def _llm(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    llm = ((meta or {}).get("parameters") or {}).get("llm")
    return llm if isinstance(llm, dict) else {}


def model_identity(
    row: Mapping[str, Any], meta: Mapping[str, Any] | None = None
) -> tuple[str, dict[str, str]]:
    """(model_info.id, its additional_details) of a row (module docstring)."""
    source, baseline = row.get("source"), str(row.get("baseline") or "")
    llm = _llm(meta)
    model = str(llm.get("model") or "")
    details = {
        "deployment_type": "unknown",
        "model_availability": "unknown",
        "family": str(row.get("family", "")),
    }
    if baseline:
        details["baseline"] = baseline
    if source == "paper":
        return f"trace-paper/{component(str(row['system']))}", details
    if source == "submission":
        return f"submitted/{component(str(row['system']))}", details
    if not model:  # one of the package's systems without a model
        details.update(deployment_type="self_deployed", model_availability="open_weights")
        return f"{ORGANISATION}/{component(baseline or str(row['system']))}", details
    details["model"] = model
    if llm.get("backend") in LOCAL_BACKENDS:
        details.update(deployment_type="self_deployed", model_availability="open_weights")
    parts = [p for p in model.split("/") if p]
    if len(parts) >= 2 and not model.startswith(("/", ".", "~")) and not Path(model).exists():
        # `org/model`, or a provider's spelling of it (Inspect's `openai-api/vllm/org/model`): its last two parts
        return f"{component(parts[-2])}/{component(parts[-1])}", details
    return f"local/{component(short_model_name(model))}", details


def metric_config(key: str) -> dict[str, Any] | None:
    """The declaration of a results key as an Every Eval Ever metric_config (None: not a declared metric)."""
    try:
        s = specs.spec(key)
    except KeyError:
        return None
    low, high = s.range
    config: dict[str, Any] = {
        "evaluation_description": s.description,
        "metric_id": METRIC_PREFIX + key,
        "metric_name": s.label,
        "metric_kind": s.family,
        "lower_is_better": not s.higher_is_better,
        "score_type": "continuous",
        "min_score": low,
        "max_score": high if high is not None else "Infinity",
        "additional_details": {"paper": s.paper, "level": s.level},
    }
    if (low, high) == (0.0, 1.0):
        config["metric_unit"] = "proportion"
    return config


def _uncertainty(row: Mapping[str, Any], key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if key in (row.get("n") or {}):
        out["num_samples"] = int(row["n"][key])
    if (row.get("std") or {}).get(key) is not None:
        out["standard_deviation"] = float(row["std"][key])
    ci = (row.get("ci") or {}).get(key)
    if ci:
        method = row.get("ci_method") or {}
        out["confidence_interval"] = {
            "lower": float(ci[0]),
            "upper": float(ci[1]),
            "confidence_level": float(method.get("level", 0.95)),
            "method": f"percentile, cluster bootstrap over {method.get('resample', 'dialogues')}, seed "
            f"{method.get('seed', '?')}",
        }
        if method.get("n_boot"):
            out["num_bootstrap_samples"] = int(method["n_boot"])
    return out


def _generation(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    settings = _llm(meta).get("settings") or {}
    args = {
        k: settings[src]
        for k, src in (("temperature", "temperature"), ("top_p", "top_p"), ("max_tokens", "max_new_tokens"))
        if isinstance(settings.get(src), (int, float)) and not isinstance(settings.get(src), bool)
    }
    if "max_tokens" not in args and isinstance(settings.get("max_tokens"), int):
        args["max_tokens"] = settings["max_tokens"]  # an Inspect run's generate config
    return {"generation_args": args} if args else None


def _source_data(row: Mapping[str, Any]) -> dict[str, Any]:
    dialogues = (row.get("per_dialogue") or {}).get("n_dialogues")
    details = {
        "pool": str(row["pool"]),
        "split": str(row.get("split", "")),
        "corpus_version": str(row.get("corpus_version", "")),
        "kb_version": str(row.get("kb_version", "")),
    }
    if dialogues:
        details["dialogues"] = str(dialogues)
    return {"dataset_name": "Trace", "source_type": "other", "additional_details": details}


def record_of(row: Mapping[str, Any], meta: Mapping[str, Any] | None, retrieved: str) -> dict[str, Any]:
    """The Every Eval Ever record of one leaderboard row (module docstring)."""
    model_id, details = model_identity(row, meta)
    identity = json.dumps(
        [row["system"], row["pool"], row.get("split"), row.get("corpus_version"), row.get("source")]
    )
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()
    paper = row.get("source") == "paper"
    generation = _generation(meta)
    results = []
    for key, value in row.get("metrics", {}).items():
        config = metric_config(key)
        if config is None or value is None:
            continue
        result: dict[str, Any] = {
            "evaluation_result_id": f"{row['pool']}:{key}",
            "evaluation_name": f"Trace {config['metric_name']} ({row['pool']} pool)",
            "source_data": _source_data(row),
            "metric_config": config,
            "score_details": {"score": float(value)},
        }
        uncertainty = _uncertainty(row, key)
        if uncertainty:
            result["score_details"]["uncertainty"] = uncertainty
        if generation:
            result["generation_config"] = generation
        results.append(result)
    library: dict[str, Any] = {"name": ORGANISATION, "version": TRACE_VERSION}
    harness = (meta or {}).get("inspect")
    if isinstance(harness, dict):  # a run converted from an Inspect log (trace-bench inspect predictions)
        library["additional_details"] = {"harness": f"inspect_ai {harness.get('inspect_version')}"}
    return {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": f"{COLLECTION}/{model_id}/{digest[:16]}",
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": "Trace leaderboard (trace-bench)",
            "source_type": "documentation" if paper else "evaluation_run",
            "source_organization_name": ORGANISATION,
            "evaluator_relationship": "first_party" if row.get("source") == "submission" else "third_party",
            "additional_details": {"system": str(row["system"]), "source": str(row.get("source", ""))},
        },
        "model_info": {"name": str(row["system"]), "id": model_id, "additional_details": details},
        "eval_library": library,
        "evaluation_results": results,
        "_uuid": str(uuid.UUID(bytes=bytes.fromhex(digest[:32]), version=4)),
    }


def retrieved_now() -> str:
    """The export's time in Unix seconds (`SOURCE_DATE_EPOCH` when set)."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH")
    return str(int(fixed)) if fixed and fixed.isdigit() else str(int(time.time()))


def export_every_eval_ever(
    rows: Sequence[Mapping[str, Any]],
    out_dir: str | os.PathLike,
    *,
    metas: Mapping[tuple[str, str, str], Mapping[str, Any]] | None = None,
    paper_rows: bool = False,
    retrieved: str | None = None,
) -> list[Path]:
    """Write one record per row (paper rows only with `paper_rows`; imported rows never); returns the files.
    `metas`: the runs' metadata by (system, pool, split), for the model and its decoding."""
    stamp = retrieved or retrieved_now()
    written = []
    for row in rows:
        if row.get("source") == IMPORTED or (row.get("source") == "paper" and not paper_rows):
            continue
        meta = (metas or {}).get((str(row["system"]), str(row["pool"]), str(row.get("split"))))
        record = record_of(row, meta, stamp)
        name = record.pop("_uuid")
        developer, model = record["model_info"]["id"].split("/", 1)
        path = Path(out_dir) / "data" / COLLECTION / developer / component(model) / f"{name}.json"
        write_json(path, record)
        written.append(path)
    return written


# ---------------------------------------------------------------------------------------------------
# Reading rows back: leaderboard files, stored rows, Every Eval Ever records
# ---------------------------------------------------------------------------------------------------
def rows_of_record(record: Mapping[str, Any], origin: str) -> list[dict[str, Any]]:
    """The comparison rows (one per pool) of an Every Eval Ever record's `trace.*` results."""
    by_pool: dict[str, dict[str, Any]] = {}
    model = record.get("model_info") or {}
    for result in record.get("evaluation_results") or ():
        metric_id = str((result.get("metric_config") or {}).get("metric_id", ""))
        if not metric_id.startswith(METRIC_PREFIX):
            continue
        details = (result.get("source_data") or {}).get("additional_details") or {}
        pool = str(details.get("pool", "closed"))
        row = by_pool.setdefault(
            pool,
            {
                "system": str(model.get("name") or model.get("id") or origin),
                "baseline": str((model.get("additional_details") or {}).get("baseline", "")),
                "family": "imported",
                "source": IMPORTED,
                "description": f"Every Eval Ever record {origin}",
                "pool": pool,
                "split": str(details.get("split", "")),
                "corpus_version": str(details.get("corpus_version", "")),
                "kb_version": str(details.get("kb_version", "")),
                "metrics": {},
                "n": {},
                "std": {},
                "ci": {},
                "config": {},
            },
        )
        key = metric_id[len(METRIC_PREFIX) :]
        score = result.get("score_details") or {}
        row["metrics"][key] = score.get("score")
        uncertainty = score.get("uncertainty") or {}
        ci = uncertainty.get("confidence_interval")
        if ci:
            row["ci"][key] = [ci["lower"], ci["upper"]]
        if "num_samples" in uncertainty:
            row["n"][key] = uncertainty["num_samples"]
    return list(by_pool.values())


def _rows_of_file(path: Path) -> list[dict[str, Any]]:
    doc = read_json(path)
    if isinstance(doc, dict) and "evaluation_results" in doc and "schema_version" in doc:
        return rows_of_record(doc, path.name)
    if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
        return read_leaderboard(path)
    if isinstance(doc, dict) and "system" in doc and isinstance(doc.get("metrics"), dict):
        return [doc]
    raise TraceDataError(
        "expected a leaderboard.json, a stored leaderboard row or an Every Eval Ever record", path=path
    )


def read_rows(paths: Iterable[str | os.PathLike]) -> list[dict[str, Any]]:
    """Every row of the given files and folders (module docstring), in path order; in a folder, the `*.json`
    files that hold none are skipped (logged), a file named alone must hold rows."""
    rows: list[dict[str, Any]] = []
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*.json")):
                try:
                    rows.extend(_rows_of_file(f))
                except TraceDataError as e:
                    log.info("skipping %s: %s", f, e)
        elif p.is_file():
            rows.extend(_rows_of_file(p))
        else:
            raise TraceDataError("no such file or folder", path=p)
    return rows


def run_metas(runs_dir: str | os.PathLike) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The metadata of every complete run under `runs_dir`, by its leaderboard row's (system, pool, split)."""
    out = {}
    for path in find_runs(runs_dir):
        meta = read_json(path.with_name(path.name + ".meta.json"))
        label = system_label({"baseline": meta.get("baseline", path.stem), **meta})
        out[(label, str(meta.get("pool")), str(meta.get("split")))] = meta
    return out
