"""Score every baseline run with the metrics suite and lay the rows out as the paper's tables.

A run is a predictions file with its `<file>.meta.json` (written by `trace-bench run`); its split and pool
come from the metadata. One leaderboard row per (system, pool):
    {"system", "baseline", "family", "source", "description", "pool", "split", "corpus_version",
     "kb_version", "metrics": {id: value}, "n": {id: n}, "std": {id: sd}, "config": {...}}
`build_leaderboard` is what the demo, the CLI and the Space's baseline rows use.
"""

from __future__ import annotations

import csv
import io
import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, read_json, write_json, write_text
from trace_metrics.tables import OPEN_PREFIX, VIEWS, Column

log = logging.getLogger(__name__)

# Paper names of the registry's baselines (Table 5), the label shown for each system.
BASELINE_LABELS: dict[str, str] = {
    "popularity": "Popularity",
    "tfidf": "TF-IDF",
    "aspect": "Aspect",
    "dense": "Dense",
    "spatial": "Spatial",
    "hybrid_rrf": "Hybrid-RRF",
    "itinerary": "Itinerary",
    "knowledge": "Knowledge-Enh.",
    "persona": "Persona-Ground.",
    "llm_zero_shot": "LLM Zero-Shot",
    "dst": "DST",
    "rag_citation": "RAG-Citation",
    "multi_review_synthesis": "Multi-Rev. Synth.",
    "itinerary_llm": "Itinerary-LLM",
    "memory_aug": "Memory-Aug.",
    "sniprec": "SnipRec",
    "sniprec_snippet": "SnipRec-Snippet",
    "sniprec_sentence": "SnipRec-Sentence",
    "sniprec_document": "SnipRec-Document",
    "collab_rec": "Collab-REC",
}


def system_label(meta: dict[str, Any]) -> str:
    """The row label of a run: the paper's name, plus the LLM's model when the run used one.

    The same baseline under several `--llm` specs gives one row per model (cross-backbone runs).
    """
    name = meta.get("baseline", "")
    label = BASELINE_LABELS.get(name, name)
    llm = (meta.get("parameters") or {}).get("llm")
    if isinstance(llm, dict) and llm.get("model"):
        label = f"{label} ({short_model_name(str(llm['model']))})"
    return label


def short_model_name(model: str) -> str:
    """'/x/y/SmolLM2-135M-Instruct' -> 'SmolLM2-135M-Instruct'; 'org/name' -> 'name'."""
    return model.rstrip("/").rsplit("/", 1)[-1] or model


def find_runs(runs_dir: str | os.PathLike) -> list[Path]:
    """Complete prediction files under `runs_dir` (recursively), sorted."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise TraceDataError("runs folder not found", path=runs_dir)
    out = []
    for meta in sorted(runs_dir.rglob("*.jsonl.meta.json")):
        predictions = meta.with_name(meta.name[: -len(".meta.json")])
        if not predictions.exists():
            continue
        if not read_json(meta).get("complete", False):
            log.warning("skipping incomplete run %s (rerun `trace-bench run` to finish it)", predictions)
            continue
        out.append(predictions)
    return out


def result_row(result: dict[str, Any], *, system: str, family: str, source: str, description: str = "",
               baseline: str = "") -> dict[str, Any]:
    """The stored leaderboard row of one `trace_metrics.lib.suite.evaluate_run` result."""
    return {
        "system": system,
        "baseline": baseline,
        "family": family,
        "source": source,
        "description": description,
        "pool": result["config"]["pool"],
        "split": result["config"]["split"],
        "corpus_version": result["versions"]["corpus"],
        "kb_version": result["versions"]["kb"],
        "metrics": {k: v for k, v in result["values"].items() if v is not None},
        "n": dict(result["n"]),
        "std": {k: v for k, v in result.get("std", {}).items() if v is not None},
        "config": {k: v for k, v in result["config"].items() if k != "predictions"},
    }


def build_leaderboard(data_dir: str | os.PathLike, runs_dir: str | os.PathLike,
                      split: str | None = None, **options: Any) -> list[dict[str, Any]]:
    """Evaluate every complete run under `runs_dir` (optionally only those of `split`)."""
    from trace_metrics.lib.suite import evaluate_run

    rows = []
    for path in find_runs(runs_dir):
        meta = read_json(path.with_name(path.name + ".meta.json"))
        if split is not None and meta.get("split") != split:
            continue
        log.info("scoring %s (%s, %s)", path, meta.get("split"), meta.get("pool"))
        result = evaluate_run(data_dir, path, split=meta["split"], pool=meta["pool"], with_std=True, **options)
        name = meta.get("baseline", path.stem)
        row = result_row(result, system=system_label({"baseline": name, **meta}), baseline=name,
                         family=meta.get("family", "non-LLM"), source="baseline")
        row["session_isolated"] = bool(meta.get("session_isolated", True))
        rows.append(row)
    order = list(BASELINE_LABELS)
    rows.sort(key=lambda r: (r["pool"], r["family"] != "non-LLM",  # the paper's order: Table 5's rows
                             order.index(r["baseline"]) if r["baseline"] in order else len(order), r["system"]))
    return rows


# ---------------------------------------------------------------------------------------------------
# Paper-style tables
# ---------------------------------------------------------------------------------------------------
def table_rows(rows: Sequence[dict[str, Any]], columns: Sequence[Column], pool: str = "closed") -> list[list[Any]]:
    """One line per system of `pool`: [system, family, values...]; `open:` columns read the open row."""
    open_rows = {(r["system"], r["source"]): r for r in rows if r["pool"] == "open"}
    out = []
    for r in rows:
        if r["pool"] != pool:
            continue
        line: list[Any] = [r["system"], r["family"]]
        for c in columns:
            if c.metric.startswith(OPEN_PREFIX):
                other = open_rows.get((r["system"], r["source"]))
                line.append(None if other is None else other["metrics"].get(c.metric[len(OPEN_PREFIX):]))
            else:
                line.append(r["metrics"].get(c.metric))
        out.append(line)
    return out


def format_tables(rows: Sequence[dict[str, Any]], pools: Iterable[str] = ("closed", "open")) -> str:
    """Plain-text Tables 5, 6 and 9 for every pool that has rows."""
    parts = []
    present = {r["pool"] for r in rows}
    for pool in pools:
        if pool not in present:
            continue
        for title, columns in VIEWS.items():
            headers = ["System", "Family", *(c.label + ("↑" if c.higher_is_better else "↓") for c in columns)]
            body = [[_fmt(v) for v in line] for line in table_rows(rows, columns, pool)]
            widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(headers)]
            parts.append(f"{title} — pool: {pool}")
            parts.append("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
            parts.extend("  ".join(v.ljust(w) for v, w in zip(b, widths, strict=True)) for b in body)
            parts.append("")
    return "\n".join(parts)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def write_leaderboard(rows: Sequence[dict[str, Any]], out_dir: str | os.PathLike) -> dict[str, Path]:
    """leaderboard.json (the rows) and one CSV per paper table and pool, for the Space and for papers."""
    out_dir = Path(out_dir)
    paths = {"json": out_dir / "leaderboard.json"}
    write_json(paths["json"], {"rows": list(rows)})
    for pool in sorted({r["pool"] for r in rows}):
        for title, columns in VIEWS.items():
            slug = title.split(":")[0].lower().replace(" ", "")
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            writer.writerow(["system", "family", *(c.metric for c in columns)])
            writer.writerows(table_rows(rows, columns, pool))
            path = out_dir / f"{slug}_{pool}.csv"
            write_text(path, buf.getvalue())
            paths[f"{slug}_{pool}"] = path
    return paths
