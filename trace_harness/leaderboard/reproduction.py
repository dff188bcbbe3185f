"""The manifest a leaderboard row may carry, and `trace-bench leaderboard verify ROW`: re-run it, mark the row.

A submission may carry the OUT/manifest.json that `trace-bench reproduce` wrote for the run it submits
(trace_harness/reproduce/manifest.py). `check_manifest` accepts it when it is that file's shape and its config
runs exactly one teacher-forced system, and returns what a row's details show (`manifest_summary`: the system,
every role's model id, revision, decoding settings, engine and version, the prompt hashes, the package version).

`verify_row` is the maintainer's check: it runs the manifest's config again (only the system and the part of the
row's pool, on the data the row was scored on, into a fresh folder with a fresh response cache), then compares
what the re-run records with the manifest (every model's id, spec and settings, every prompt hash: a manifest
edited after its run differs from its own re-run) and the re-run's scores with the stored row's 95% intervals.
The row is marked "reproduced" when everything agrees and every score lies inside its interval, "not
reproduced" otherwise, with the first reason (the field, or the metric and where its score fell).
"""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from trace_bench.errors import TraceBenchError
from trace_dataset.io import read_json, write_json

log = logging.getLogger(__name__)

MANIFEST_MAX_BYTES = 256 * 2**10  # a manifest of one system is a few KB
MANIFEST_FIELDS: tuple[str, ...] = ("trace_bench", "config", "mode", "data", "models", "prompts")
POOL_PARTS = {"closed": "table5", "open": "table6"}  # the reproduce part that scores a pool's rows
VERDICTS: tuple[str, ...] = ("reproduced", "not reproduced")
MODEL_FIELDS: tuple[str, ...] = ("llm", "backend", "model", "spec", "settings")  # compared with the re-run
TOLERANCE = 1e-9  # a score equal to an interval's end, up to rounding, lies inside it


class ManifestError(TraceBenchError, ValueError):
    """A manifest that is not the one `trace-bench reproduce` writes; the message names the field."""


def _need(doc: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind):
        raise ManifestError(f"manifest field {where}{key} is missing or not a {kind.__name__}")
    return value


def check_manifest(manifest: Any) -> dict[str, Any]:
    """The summary of a `trace-bench reproduce` manifest (`manifest_summary`), or ManifestError naming the
    field that is missing or malformed."""
    if not isinstance(manifest, dict):
        raise ManifestError(
            "a manifest is the JSON object `trace-bench reproduce` writes to OUT/manifest.json"
        )
    for key in MANIFEST_FIELDS:
        _need(manifest, key, dict if key != "mode" else str, "")
    config = _need(manifest["config"], "content", dict, "config.")
    _need(manifest["config"], "sha256", str, "config.")
    systems = config.get("systems")
    if not (isinstance(systems, list) and len(systems) == 1 and isinstance(systems[0], str)):
        raise ManifestError(
            f"manifest field config.content.systems is {systems!r}; a row's manifest runs exactly one system "
            "(write one config per submitted system)"
        )
    for role, model in manifest["models"].items():
        if not isinstance(model, dict) or not isinstance(model.get("model"), str):
            raise ManifestError(f"manifest field models.{role} has no model id")
        if not isinstance(model.get("settings"), dict):
            raise ManifestError(f"manifest field models.{role}.settings is missing or not an object")
    return manifest_summary(manifest)


def _engine(model: Mapping[str, Any]) -> str:
    """'engine version' of the servers a role's model reported, else its backend."""
    servers = model.get("servers")
    found = []
    for server in servers.values() if isinstance(servers, dict) else servers or []:
        if isinstance(server, dict) and server.get("engine"):
            found.append(f"{server['engine']} {server.get('version') or ''}".strip())
    return ", ".join(dict.fromkeys(found)) or str(model.get("backend") or "")


def _prompt_hashes(prompts: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for name, prompt in sorted(prompts.items()):
        if isinstance(prompt, dict) and isinstance(prompt.get("sha256"), str):
            out[name] = prompt["sha256"]
        elif isinstance(prompt, dict):  # CoRE's prompt set: one hash per file
            out.update({f"{name}/{k}": v for k, v in sorted(prompt.items()) if isinstance(v, str)})
    return out


def manifest_summary(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What a row's details show of its (checked) manifest."""
    models = {}
    for role, model in sorted(manifest["models"].items()):
        settings = model["settings"]
        models[role] = {
            "model": model["model"],
            "revision": str(model.get("revision") or settings.get("revision") or "not recorded"),
            "settings": {k: settings[k] for k in sorted(settings) if k != "revision"},
            "engine": _engine(model),
        }
    return {
        "system": manifest["config"]["content"]["systems"][0],
        "package": str(manifest["trace_bench"].get("version") or ""),
        "mode": manifest["mode"],
        "config_sha256": manifest["config"]["sha256"],
        "models": models,
        "prompts": _prompt_hashes(manifest["prompts"]),
    }


def _differences(submitted: Mapping[str, Any], rerun: Mapping[str, Any]) -> str | None:
    """The first field in which the submitted manifest differs from its re-run's, as a reason."""
    for role, model in sorted(submitted["models"].items()):
        again = rerun["models"].get(role)
        if again is None:
            return f"models.{role}: the re-run uses no such model"
        for key in MODEL_FIELDS:
            if model.get(key) != again.get(key):
                return f"models.{role}.{key}: the manifest says {model.get(key)!r}, the re-run {again.get(key)!r}"
    ours, theirs = _prompt_hashes(submitted["prompts"]), _prompt_hashes(rerun["prompts"])
    for name in sorted(set(ours) | set(theirs)):
        if ours.get(name) != theirs.get(name):
            return f"prompts.{name}: the manifest says {ours.get(name)!r}, the re-run {theirs.get(name)!r}"
    return None


def outside_interval(row: Mapping[str, Any], metrics: Mapping[str, Any]) -> str | None:
    """The first metric whose score in `metrics` is missing or outside `row`'s 95% interval, as a reason."""
    intervals = row.get("ci") or {}
    if not intervals:
        return "the row has no intervals to compare with"
    for metric, (low, high) in sorted(intervals.items()):
        value = metrics.get(metric)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"{metric}: the re-run has no score"
        if not low - TOLERANCE <= value <= high + TOLERANCE:
            return (
                f"{metric}: the re-run scores {value:.4f}, outside the row's interval [{low:.4f}, {high:.4f}]"
            )
    return None


def rerun_config(manifest: Mapping[str, Any], pool: str, data: Path, work: Path) -> Path:
    """The manifest's config with only its system and the part of `pool`, on `data`, into `work`."""
    config = dict(manifest["config"]["content"])
    config.update(
        data=str(data),
        out=str(work / "out"),
        cache=str(work / "cache" / "llm.sqlite"),
        parts=[POOL_PARTS[pool]],
    )
    path = work / "config.yaml"
    work.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run_reproduce(config_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run a reproduce config live (no plan, no preflight, no bars): (its manifest, its leaderboard rows)."""
    from trace_harness.reproduce.config import load_config
    from trace_harness.reproduce.jobs import Context
    from trace_harness.reproduce.run import run_live

    config = load_config(config_path)
    ctx = Context(config)
    try:
        board = run_live(ctx, str(config_path), plan=False, preflight=False, progress=False)
    finally:
        ctx.close()
    doc = read_json(config.out / "leaderboard" / "leaderboard.json")
    rows = doc["rows"] if isinstance(doc, dict) else doc
    return read_json(Path(board["manifest"])), rows


def verify(
    row: Mapping[str, Any],
    data: Path,
    work: Path,
    runner: Callable[[Path], tuple[dict[str, Any], list[dict[str, Any]]]] = run_reproduce,
) -> dict[str, str]:
    """{"status": "reproduced" | "not reproduced", "reason"} of one stored row (ManifestError when it
    carries no valid manifest)."""
    manifest = row.get("manifest")
    if manifest is None:
        raise ManifestError(f"row {row.get('system')!r} carries no manifest: there is nothing to re-run")
    summary = check_manifest(manifest)
    pool = row.get("pool")
    if pool not in POOL_PARTS:
        raise ManifestError(
            f"row {row.get('system')!r} has pool {pool!r}; expected one of {tuple(POOL_PARTS)}"
        )
    rerun, rows = runner(rerun_config(manifest, pool, data, work))
    reason = _differences(manifest, rerun)
    if reason is None:
        found = [r for r in rows if r.get("baseline") == summary["system"] and r.get("pool") == pool]
        if not found:
            reason = f"the re-run wrote no {pool}-pool row of {summary['system']!r}"
        else:
            reason = outside_interval(row, found[0].get("metrics") or {})
    if reason is None:
        return {"status": VERDICTS[0], "reason": "every score of the re-run lies inside the row's interval"}
    return {"status": VERDICTS[1], "reason": reason}


def verify_file(row_path: Path, data: Path, work: Path | None = None) -> dict[str, str]:
    """`verify` of the stored row file `row_path` (a results-store row), written back with its verdict under
    `reproduction`; `work`: where the re-run goes (default a temporary folder)."""
    row = read_json(row_path)
    if not isinstance(row, dict):
        raise ManifestError(f"{row_path}: a stored row is a JSON object")
    with tempfile.TemporaryDirectory(prefix="trace-verify-") as tmp:
        verdict = verify(row, Path(data), Path(work) if work is not None else Path(tmp))
    log.info("row %r: %s (%s)", row.get("system"), verdict["status"], verdict["reason"])
    write_json(row_path, {**row, "reproduction": verdict})
    return verdict
