"""OUT/manifest.json: what a finished reproduction used and cost.

trace_bench      package version, Python, platform
config           the config file, its SHA-256 and content
mode             live (requests sent to servers) or batch (answers imported from batch files)
data             the data directory, corpus and knowledge-base versions, each split file's SHA-256, the subsets
models           per role: the spec, backend, model id and decoding settings (`describe()`), and what the
                 server reported about itself (engine, version, served models; live: the preflight; batch: the
                 output files' model names and system fingerprints)
prompts          the SHA-256 of every prompt file the runs used (from their own metadata), CoRE's prompt set,
                 the judge's prompt file
parts            per part: what the dry run planned, what this invocation sent (requests, cache hits, tokens,
                 seconds) and what every invocation so far sent (`sent_all_invocations`: a resumed run adds up)
runs             per job: its output and completeness; each run's own metadata holds the rest
leaderboard      the files written (leaderboard.json is the Space's data)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_dataset.io import read_json, sha256_file, write_json
from trace_harness.engine.manifest import add_usage, environment
from trace_harness.protocols.teacher_forced.runner import meta_path
from trace_harness.reproduce.config import role_model
from trace_harness.reproduce.jobs import Context, Job, build_jobs, role_settings

MANIFEST_FILE = "manifest.json"


def data_record(ctx: Context) -> dict[str, Any]:
    from trace_dataset.constants import SPLITS
    from trace_dataset.datadir import corpus_meta, corpus_version, split_file

    root = ctx.config.data
    record: dict[str, Any] = {
        "dir": str(root),
        "corpus_version": corpus_version(corpus_meta(root)),
        "kb_version": ctx.kb.version,
        "data_files": {s: sha256_file(split_file(root, s)) for s in SPLITS if split_file(root, s).exists()},
    }
    subsets = {}
    for runset in (ctx.config.closed, ctx.config.open):
        folder = ctx.subset_dir(runset) if runset.subset is not None else None
        if folder is not None and folder.is_dir():
            subsets[folder.name] = {
                "split": runset.split,
                "n": runset.subset,
                "seed": runset.seed,
                "data_files": {
                    s: sha256_file(split_file(folder, s)) for s in SPLITS if split_file(folder, s).exists()
                },
            }
    if subsets:
        record["subsets"] = subsets
    return record


def _job_record(job: Job) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the job's record, the prompts its metadata names)."""
    record: dict[str, Any] = {"out": str(job.out) if job.out else None}
    prompts: dict[str, Any] = {}
    meta_file = None
    if job.kind == "run" and job.out is not None:
        meta_file = meta_path(job.out)
    elif job.kind == "interactive" and job.out is not None:
        meta_file = job.out / "predictions.jsonl.meta.json"
    elif job.kind == "core" and job.out is not None and (job.out / "run.json").exists():
        identity = read_json(job.out / "run.json").get("identity") or {}
        record["complete"] = (job.out / "summary.json").exists()
        prompts["core"] = identity.get("prompts")
    if meta_file is not None and meta_file.exists():
        meta = read_json(meta_file)
        record["complete"] = bool(meta.get("complete"))
        params = meta.get("parameters") or (meta.get("system") or {}).get("parameters") or {}
        if isinstance(params.get("prompt"), dict):
            prompts[job.system] = params["prompt"]
        simulator = meta.get("simulator") or {}
        if isinstance(simulator, dict) and simulator.get("prompt"):
            prompts["simulator"] = simulator["prompt"]
        if "summary" in meta:
            record["summary"] = meta["summary"]
    return record, prompts


def build_manifest(
    ctx: Context,
    *,
    mode: str,
    plan: dict[str, Any] | None,
    usage: dict[str, Any],
    engines: dict[str, Any],
    board: dict[str, Any],
    batch: dict[str, Any] | None = None,
) -> dict[str, Any]:
    config = ctx.config
    path = config.out / MANIFEST_FILE
    earlier = read_json(path) if path.exists() else {}
    models = {}
    for role, llm in ctx.built().items():
        models[role] = {
            "llm": role_model(config, role).llm,
            **llm.describe(),
            "settings": role_settings(config, role).to_dict(),
        }
        before = (earlier.get("models") or {}).get(role) or {}
        if role in engines:
            models[role]["servers"] = engines[role]
        elif before.get("servers") and before.get("spec") == models[role].get("spec"):
            models[role]["servers"] = before["servers"]  # reported to an earlier invocation of this run
    if "core" in models:
        from trace_harness.reproduce.execute import core_options

        models["core"]["debate_settings"] = core_options(ctx)["debate_settings"].to_dict()
    runs, prompts = {}, {}
    for job in build_jobs(config):
        if job.kind in ("run", "interactive", "core"):
            runs[job.label], found = _job_record(job)
            prompts.update({k: v for k, v in found.items() if v})
    if config.wants("judge"):
        from trace_metrics.lib.judge import judge_prompt

        prompts["judge"] = judge_prompt().describe()
    parts = {}
    for part in config.parts:
        before = ((earlier.get("parts") or {}).get(part) or {}).get("sent_all_invocations")
        parts[part] = {
            "planned": (plan or {}).get("parts", {}).get(part),
            "sent": usage.get(part),
            "sent_all_invocations": add_usage(add_usage({}, before), usage.get(part)),
        }
    manifest = {
        "trace_bench": environment(),
        "config": {"file": str(config.path), "sha256": config.sha256, "content": config.raw},
        "mode": mode,
        "data": data_record(ctx),
        "models": models,
        "prompts": prompts,
        "parts": parts,
        "runs": runs,
        "leaderboard": board.get("paths", {}),
    }
    if config.wants("nli"):
        manifest["nli"] = {"model": config.nli.model, "processes": config.nli.processes}
    if batch is not None:
        manifest["batch"] = batch
    return manifest


def write_manifest(ctx: Context, **kwargs: Any) -> Path:
    path = ctx.config.out / MANIFEST_FILE
    write_json(path, build_manifest(ctx, **kwargs))
    return path
