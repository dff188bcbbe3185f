"""CoRE over a whole corpus, resumable: conversation logs from a data directory (or dialogue records) and a
predictions file, scored in chunks, one JSON file per dialogue written atomically as its chunk completes.

Output folder:
    run.json                the configuration (LLM backend, model and settings; prompts hash; options; inputs'
                            SHA-256): a rerun with another configuration is refused (`overwrite=True` starts over)
    dialogues/<id>.json     one record per log (`scoring.score_logs`)
    scores.jsonl            `{"id", "factor", "score", "system", "dialogue_id"}` rows (the meta-evaluation input)
    summary.json            means and counts (`scoring.summarize`), deterministic
    usage.json              what this invocation cost: requests, cache hits, tokens, per stage

A rerun skips the dialogues whose file exists and sends no request for them; every answer of an interrupted
chunk is in the LLM layer's response cache, so finishing it costs nothing for what was already answered.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_dataset.io import (
    TraceDataError,
    check_output_dir,
    read_json,
    read_jsonl,
    sha256_file,
    write_json,
    write_jsonl,
)
from trace_dataset.lock import output_lock
from trace_dataset.prediction import Prediction
from trace_dataset.shards import SHARD_KEY, Shard
from trace_metrics.core.conversation import DEFAULT_TOP_K, ConversationLog, build_log, safe_file_stem
from trace_metrics.core.debate import DEFAULT_MAX_REPAIRS, DEFAULT_MAX_ROUNDS
from trace_metrics.core.factors import DEFAULT_MAX_RETRIES
from trace_metrics.core.prompts import FACTOR_IDS, PromptSet
from trace_metrics.core.scoring import (
    DEFAULT_DEBATE_TOKENS,
    DEFAULT_FACTOR_TOKENS,
    llm_usage,
    score_logs,
    score_rows,
    summarize,
)

if TYPE_CHECKING:
    from trace_llm import LLM

log = logging.getLogger(__name__)

DEFAULT_CHUNK = 16
RUN_FILE, SCORES_FILE, SUMMARY_FILE, USAGE_FILE, DIALOGUES_DIR = (
    "run.json",
    "scores.jsonl",
    "summary.json",
    "usage.json",
    "dialogues",
)
USAGE_KEYS = ("requests", "cache_hits", "prompt_tokens", "completion_tokens", "json_repairs", "json_failures")


def system_name(predictions_path: str | os.PathLike) -> str:
    """The system a predictions file belongs to: its run metadata's `baseline`, else the file name's stem."""
    path = Path(predictions_path)
    meta = path.with_name(path.name + ".meta.json")
    if meta.exists():
        name = read_json(meta).get("baseline")
        if isinstance(name, str) and name:
            return name
    stem = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        stem = stem.removesuffix(suffix)
    return stem


def _index_rows(
    rows: Sequence[dict], dialogues: Sequence[dict], path: Path
) -> dict[tuple[str, int], Prediction]:
    """Predictions for dialogue records that are not a split of a data directory (interactive logs)."""
    from trace_metrics.lib.predictions import check_row

    index: dict[tuple[str, int], Prediction] = {}
    known = {d["dialogue_id"] for d in dialogues}
    for i, raw in enumerate(rows, start=1):
        try:
            row = check_row(raw)
        except ValueError as e:
            raise TraceDataError(f"malformed prediction row: {e}", path=path, line=i) from None
        key = (row["dialogue_id"], row["turn_id"])
        if row["dialogue_id"] not in known:
            raise TraceDataError(
                f"row for dialogue {key[0]!r}, which is not in the dialogues file", path=path, line=i
            )
        if key in index:
            raise TraceDataError(f"second row for dialogue {key[0]!r} turn {key[1]}", path=path, line=i)
        index[key] = row
    return index


def collect_logs(
    predictions_path: str | os.PathLike,
    data_dir: str | os.PathLike,
    *,
    split: str = "test",
    dialogues_path: str | os.PathLike | None = None,
    system: str | None = None,
    top_k: int = DEFAULT_TOP_K,
    limit: int | None = None,
    dialogue_ids: Sequence[str] | None = None,
    shard: Shard | None = None,
) -> tuple[list[ConversationLog], dict[str, Any]]:
    """The conversation logs of a predictions file, and what they were built from (for run.json).

    Teacher-forced replay: the `split` of `data_dir` (predictions validated as `trace-bench evaluate` does,
    pool not checked). With `dialogues_path` (dialogue records, e.g. interactive logs): those dialogues, and
    `data_dir` only supplies the knowledge base. `limit` keeps the first N dialogues, `dialogue_ids` those ids;
    `shard` then that shard's share of them (`trace_dataset.shards`; its record in `source`, for a merge).
    """
    from trace_dataset.datadir import check_data_dir, iter_dialogues, split_file
    from trace_metrics.lib.predictions import load_predictions, validate_predictions
    from trace_metrics.lib.suite import load_kb

    predictions_path = Path(predictions_path)
    rows = load_predictions(predictions_path)
    if dialogues_path is None:
        data_dir = check_data_dir(data_dir, splits=(split,))
        kb = load_kb(data_dir)
        dialogues = list(iter_dialogues(data_dir, split))
        index = validate_predictions(
            rows, dialogues, split=split, known_poi_ids=kb.pois, check_pool=False, path=predictions_path
        )
        source: dict[str, Any] = {
            "split": split,
            "dialogues_sha256": sha256_file(split_file(data_dir, split)),
        }
    else:
        kb = load_kb(check_data_dir(data_dir, splits=()))
        dialogues = list(read_jsonl(dialogues_path))
        index = _index_rows(rows, dialogues, predictions_path)
        source = {
            "dialogues_file": Path(dialogues_path).name,
            "dialogues_sha256": sha256_file(dialogues_path),
        }
    if dialogue_ids:
        wanted = set(dialogue_ids)
        unknown = sorted(wanted - {d["dialogue_id"] for d in dialogues})
        if unknown:
            raise TraceDataError(_unknown_ids_message(unknown, dialogues, data_dir, split, dialogues_path))
        dialogues = [d for d in dialogues if d["dialogue_id"] in wanted]
    if limit is not None:
        dialogues = dialogues[:limit]
    name = system or system_name(predictions_path)
    by_dialogue: dict[str, dict[int, Prediction]] = {}
    for (did, tid), row in index.items():
        by_dialogue.setdefault(did, {})[tid] = row
    logs = [
        build_log(d, by_dialogue.get(d["dialogue_id"], {}), kb, system=name, top_k=top_k) for d in dialogues
    ]
    if shard is not None:
        logs, positions, total = shard.pick(logs, key=lambda c: c.dialogue_id)
        source[SHARD_KEY] = shard.record([c.log_id for c in logs], positions, total)
    source.update(
        {
            "predictions_file": predictions_path.name,
            "predictions_sha256": sha256_file(predictions_path),
            "kb_version": kb.version,
            "system": name,
            "top_k": top_k,
            "n_dialogues": len(logs),
        }
    )
    return logs, source


def _unknown_ids_message(
    unknown: Sequence[str],
    dialogues: Sequence[dict],
    data_dir: str | os.PathLike,
    split: str,
    dialogues_path: str | os.PathLike | None,
) -> str:
    """Which ids are missing, where they were looked for, a valid id, and the split each missing id is in."""
    from trace_dataset.constants import SPLITS
    from trace_dataset.datadir import iter_dialogues

    where = (
        f"the {len(dialogues)} dialogues of {dialogues_path}"
        if dialogues_path is not None
        else f"the {split} split of {data_dir} ({len(dialogues)} dialogues)"
    )
    text = f"dialogue id(s) {list(unknown[:5])} are not in {where}"
    if dialogues:
        text += f"; its first is {dialogues[0]['dialogue_id']!r}"
    if dialogues_path is None:
        missing = set(unknown)
        for other in (s for s in SPLITS if s != split):
            found = sorted(missing & {d["dialogue_id"] for d in iter_dialogues(data_dir, other)})
            if found:
                verb = "is" if len(found) == 1 else "are"
                text += (
                    f"; {', '.join(found[:5])} {verb} in the {other} split (--split {other}, with "
                    "predictions of that split)"
                )
    return text


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _delta(after: Mapping[str, int], before: Mapping[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in USAGE_KEYS if k in after}


def _identity(llm: LLM, prompts: PromptSet, options: Mapping[str, Any], source: Mapping[str, Any]) -> dict:
    described = llm.describe() if hasattr(llm, "describe") else {"backend": type(llm).__name__}
    # the spec and base URL are left out: the same model behind another port answers the same (cache key too)
    model = {k: described.get(k) for k in ("backend", "model", "settings")}
    # what decides each dialogue's output; not how many dialogues (a run may be extended with a larger --limit)
    kept = {k: v for k, v in source.items() if k != "n_dialogues"}
    identity = {"llm": model, "prompts": prompts.describe(), "options": dict(options), "source": kept}
    return json.loads(json.dumps(identity))  # as run.json stores it (tuples become lists)


def prepare_out_dir(out_dir: Path, identity: Mapping[str, Any], overwrite: bool) -> None:
    """Create the folder, or check that it holds this run (refuse another configuration unless `overwrite`)."""
    check_output_dir(
        out_dir, (RUN_FILE,), what="CoRE output"
    )  # a file, or a folder of something else: refused
    run_file = out_dir / RUN_FILE
    if run_file.exists() and not overwrite:
        stored = read_json(run_file).get("identity")
        if stored != identity:
            keys = sorted(
                k for k in set(identity) | set(stored or {}) if (stored or {}).get(k) != identity.get(k)
            )
            raise TraceDataError(
                f"this folder holds a CoRE run with another configuration (differs in: {', '.join(keys)}); "
                "use another --out, or --overwrite to start over",
                path=run_file,
            )
    elif overwrite and out_dir.exists():
        if (out_dir / DIALOGUES_DIR).is_dir():
            shutil.rmtree(out_dir / DIALOGUES_DIR)
        for name in (RUN_FILE, SCORES_FILE, SUMMARY_FILE, USAGE_FILE):
            (out_dir / name).unlink(missing_ok=True)
    (out_dir / DIALOGUES_DIR).mkdir(parents=True, exist_ok=True)
    write_json(run_file, {"identity": identity})


def run_corpus(
    llm: LLM,
    conversations: Sequence[ConversationLog],
    out_dir: str | os.PathLike,
    prompts: PromptSet,
    *,
    source: Mapping[str, Any] | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    overwrite: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Score every log not yet in `out_dir` (options: those of `score_logs`); returns summary + usage. A second
    process scoring into the same folder meanwhile is refused (`trace_dataset.lock.output_lock`)."""
    from tqdm.auto import tqdm

    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size={chunk_size!r}; expected a positive integer")
    ids = [c.log_id for c in conversations]
    if len(set(ids)) != len(ids):
        raise ValueError("two conversation logs share an id; expected one log per (dialogue, system)")
    out = Path(out_dir)
    options = {
        "factors": list(FACTOR_IDS),
        "debate": True,
        "max_rounds": DEFAULT_MAX_ROUNDS,
        "max_retries": DEFAULT_MAX_RETRIES,
        "max_repairs": DEFAULT_MAX_REPAIRS,
        **options,
    }
    debate = options["debate"]
    identity = _identity(
        llm,
        prompts,
        {k: v for k, v in options.items() if not k.endswith("_settings")}
        | {k: _settings_dict(v) for k, v in options.items() if k.endswith("_settings")},
        source or {},
    )
    with output_lock(out, "CoRE output folder"):  # one writer per folder
        prepare_out_dir(out, identity, overwrite)
        paths = {c.log_id: out / DIALOGUES_DIR / f"{safe_file_stem(c.log_id)}.json" for c in conversations}
        todo = [c for c in conversations if not paths[c.log_id].exists()]
        skipped = len(conversations) - len(todo)
        if skipped:
            log.info("%d of %d dialogues already scored in %s: skipped", skipped, len(conversations), out)
        stage: dict[str, dict[str, int]] = {"factors": {}, "debate": {}}
        start = llm_usage(llm)
        with tqdm(total=len(todo), desc="CoRE", unit="dialogue", disable=not todo or None) as bar:
            for chunk in _chunks(todo, chunk_size):
                for record in score_logs(llm, chunk, prompts, stage_usage=stage, **options):
                    write_json(paths[record["id"]], record)
                bar.update(len(chunk))
        records = []
        for c in conversations:
            record = read_json(paths[c.log_id])
            if record.get("id") != c.log_id:
                raise TraceDataError(
                    f"holds the record of {record.get('id')!r}, expected {c.log_id!r}", path=paths[c.log_id]
                )
            records.append(record)
        write_jsonl(out / SCORES_FILE, score_rows(records, debate=debate))
        summary = {**summarize(records, debate=debate), "identity": identity}
        write_json(out / SUMMARY_FILE, summary)
        usage = {"scored_now": len(todo), "skipped": skipped, "total": _delta(llm_usage(llm), start), **stage}
        write_json(out / USAGE_FILE, usage)
        return {"summary": summary, "usage": usage, "out_dir": str(out)}


def _settings_dict(settings: Any) -> Any:
    if settings is None or isinstance(settings, dict):
        return settings
    return settings.to_dict() if hasattr(settings, "to_dict") else str(settings)


def core_out_dir(out: Path) -> Path:
    """Where `trace-bench evaluate --out FILE --core SPEC` keeps CoRE's outputs: FILE's stem + ".core"."""
    return out.with_name(out.stem + ".core")


def run_for_evaluate(
    data_dir: Path, predictions: Path, split: str, llm_spec: str, out_dir: Path, **llm_options: Any
) -> dict[str, Any]:
    """`trace-bench evaluate --core LLM_SPEC`: CoRE with its defaults on the same predictions; per-dialogue
    outputs in `out_dir` (resumable); returns the run's summary, identity and usage. `llm_options`: the
    `load_llm` keywords of evaluate's --llm-* options (cache path, timeout, concurrency...)."""
    from trace_llm import DecodingSettings, load_llm
    from trace_metrics.core.prompts import load_prompts

    logs, source = collect_logs(predictions, data_dir, split=split)
    factor_settings = DecodingSettings(max_new_tokens=DEFAULT_FACTOR_TOKENS)
    with load_llm(llm_spec, settings=factor_settings, **llm_options) as llm:
        result = run_corpus(
            llm,
            logs,
            out_dir,
            load_prompts(),
            source=source,
            factor_settings=factor_settings,
            debate_settings=factor_settings.replace(max_new_tokens=DEFAULT_DEBATE_TOKENS),
        )
    return {
        "summary": {k: v for k, v in result["summary"].items() if k != "identity"},
        "identity": result["summary"]["identity"],
        "usage": result["usage"],
        "out_dir": str(out_dir),
    }
