"""Merging the shards of one interactive run (`trace-bench interact --shard I/N`, the trace protocol) into the
folder one run writes.

Each shard's folder holds its finished conversations (output.py). The merge reads them back, puts them in the
unsharded run's order, writes the final files from them and computes metrics.json over all of them (the bootstrap
with the run's seed and resamples), so the folder is the one an unsharded run writes: every dialogue draws from
its own random stream, and a shard is only allowed for a session-isolated system.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import read_json, write_json
from trace_dataset.shards import SHARD_KEY
from trace_harness.protocols.interactive.output import (
    META_FILE,
    METRICS_FILE,
    NAMES_FILE,
    read_outputs,
    write_outputs,
)
from trace_harness.protocols.interactive.report import build_metrics
from trace_harness.protocols.interactive.run import COUNTERFACTUAL_DIR, load_data_kb
from trace_harness.protocols.interactive.validity.report import build_report, write_report
from trace_harness.shards.check import MergeError, ShardPart, check_parts


def is_interactive(path: Path) -> bool:
    return (Path(path) / META_FILE).is_file()


def read_part(path: Path) -> ShardPart:
    if not is_interactive(path):
        raise MergeError(f"not an interactive run's folder (no {META_FILE})", path=path)
    meta = read_json(Path(path) / META_FILE)
    identity = {k: v for k, v in (meta.get("identity") or {}).items() if k != SHARD_KEY}
    identity["n_boot"] = (meta.get(SHARD_KEY) or {}).get("n_boot")
    identity["trace_bench_version"] = meta.get("trace_bench_version")
    return ShardPart(Path(path), meta, identity)


def merge_interactive(shards: Sequence[str | os.PathLike], out: str | os.PathLike) -> dict[str, Any]:
    """Join the shards' folders into `out`; returns metrics.json's content."""
    out = Path(out)
    parts = [read_part(Path(p)) for p in shards]
    order = check_parts(parts)
    first = parts[0].meta
    if first.get("protocol") != "trace":
        raise MergeError(
            f"only the trace protocol's runs are sharded, not {first.get('protocol')!r}", path=parts[0].path
        )
    done = [{it["record"]["dialogue_id"]: it for it in read_outputs(p.path)} for p in parts]
    for part, finished in zip(parts, done, strict=True):
        if len(finished) != part.meta.get("n_dialogues"):
            raise MergeError(
                f"shard {part.record['index']}/{part.record['count']}: {len(finished)} finished dialogues where its "
                f"metadata records {part.meta.get('n_dialogues')}",
                path=part.path,
            )
    items = [done[n][unit] for _, n, unit in order if unit in done[n]]
    names: dict[str, str] = {}
    for part in parts:
        names.update(read_json(part.path / NAMES_FILE))
    if out.exists() and any(out.iterdir()):
        raise MergeError("the merged run's folder must be new or empty", path=out)
    out.mkdir(parents=True, exist_ok=True)
    write_outputs(out, items, names)
    record = first[SHARD_KEY]
    kb = load_data_kb(first["data_dir"])
    run = read_json(parts[0].path / METRICS_FILE)["run"]
    metrics = build_metrics(
        items, kb, protocol="trace", run=run, n_boot=record["n_boot"], seed=first["identity"]["seed"]
    )
    write_json(out / METRICS_FILE, metrics)
    bad = counterfactual_items(parts, items)
    report = build_report(
        items, kb, run, counterfactual=bad, n_boot=record["n_boot"], seed=first["identity"]["seed"]
    )
    write_report(out, report)
    meta = {k: v for k, v in first.items() if k != SHARD_KEY}
    meta["identity"] = {k: v for k, v in first["identity"].items() if k != SHARD_KEY}
    meta["n_dialogues"] = len(items)
    write_json(out / META_FILE, meta)
    return metrics


def counterfactual_items(
    parts: Sequence[ShardPart], items: Sequence[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """The bad systems' dialogues of every shard (each shard ran them on its own travellers), in the merged
    order, for the merged run's simulator report; only the systems every shard ran. Their folders stay in
    the shards'."""
    from baselines import COUNTERFACTUAL_BASELINES

    out = {}
    for name in COUNTERFACTUAL_BASELINES:
        folders = [p.path / COUNTERFACTUAL_DIR / name for p in parts]
        if not all((f / METRICS_FILE).is_file() for f in folders):
            continue
        found = {it["record"]["dialogue_id"]: it for f in folders for it in read_outputs(f)}
        out[name] = [found[d] for d in (it["record"]["dialogue_id"] for it in items) if d in found]
    return out
