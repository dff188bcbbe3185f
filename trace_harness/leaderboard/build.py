"""Score every baseline run with the metrics suite and lay the rows out as the paper's tables.

A run is a predictions file with its `<file>.meta.json` (written by `trace-bench run`); its split and pool
come from the metadata. One leaderboard row per (system, pool), a JSON object:

    system, baseline, family, source, description   the row's label (paper name + model), registry name,
                                                    "non-LLM" | "LLM" | "submitted", "baseline" | "submission"
    session_isolated                                (baseline rows) False for a system with cross-dialogue memory
    pool, split, corpus_version, kb_version         what it was scored on
    metrics    {id: value}      canonical metric ids (trace_metrics.specs); `cgs` / `cgs_ent` are the CGS
                                formula on the component means (Tables 5, 22, 26); `cgs_turn_mean` the per-turn mean
    n          {id: n}          items behind each value;  std {id: sd}: descriptive per-item sd (App. L Table 20)
    ci         {id: [low, high]}  95% cluster-bootstrap percentile interval of the value (dialogues resampled,
                                n_boot 10,000, seed 42; `cgs` bootstraps the formula on resampled means);
                                rows without per-dialogue data (the paper's reported rows) have none
    ci_method  {...}            resampling unit, n_boot, seed, level, interval method
    tied_best, marks_method, rank, rank_ci, robustness
                                set by `mark_best` over a set of rows (trace_harness/leaderboard/marks.py):
                                True for the best row of the column and every row not significantly different
                                from it after the correction (rows of the same pool and split); the rank with
                                its bootstrap interval; the dialogues the column's lead rests on
    per_dialogue {...}          the run's per-dialogue sums and counts (`trace_metrics.lib.intervals.encode`,
                                about 8-9 bytes per dialogue and metric before compression): all `mark_best`
                                needs to compare rows scored at different times. leaderboard.json keeps only
                                its header and moves the data to the side file leaderboard.per_dialogue.jsonl;
                                `read_leaderboard` puts it back
    config     {...}            the suite's configuration (grounding turns, conventions, parameters)
    fallbacks  {...}            (baseline rows) the run's fallbacks and failures: rows, kinds (count, of, share
                                per kind), share, replaced_share, own_result (trace_harness/fallbacks.py, the
                                shape the runner stores in summary.fallbacks); a row that is not the system's
                                own result gets no tied_best and marks no other row

`result_row` is what both `trace-bench leaderboard` and the Space's submissions call (intervals included);
`build_leaderboard` scores a runs folder and adds intervals and marks for all rows at once (one resampling
per dialogue set); `mark_best(rows)` recomputes the marks over any merged set of rows (the Space merges
baseline and submitted rows). docs/leaderboard.md documents the conventions.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from baselines.identity import IDENTITIES
from baselines.identity import label as baseline_label
from trace_dataset.constants import SEED
from trace_dataset.io import TraceDataError, read_json, read_jsonl, write_json, write_jsonl, write_text
from trace_harness import fallbacks as fb
from trace_harness.leaderboard import marks as mk
from trace_harness.leaderboard.render import pool_csv
from trace_metrics.lib import intervals as iv
from trace_metrics.lib import significance as sig
from trace_metrics.lib.stats import ALPHA, N_BOOT
from trace_metrics.tables import VIEWS

log = logging.getLogger(__name__)


def system_label(meta: dict[str, Any]) -> str:
    """The row label of a run: the paper's name (its record in `baselines.identity`), plus the LLM's model if
    the run used one, plus the run's `variant` in brackets when its pipeline names one (SnipRec: "[rules
    snippets, all-MiniLM-L6-v2, NLI off]").

    The same baseline under several `--llm` specs gives one row per model (cross-backbone runs).
    """
    name = meta.get("baseline", "")
    label = baseline_label(name)
    llm = (meta.get("parameters") or {}).get("llm")
    if isinstance(llm, dict) and llm.get("model"):
        label = f"{label} ({short_model_name(str(llm['model']))})"
    variant = meta.get("variant")
    if isinstance(variant, str) and variant:
        label = f"{label} [{variant}]"
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


# ---------------------------------------------------------------------------------------------------
# Rows, intervals and significance marks
# ---------------------------------------------------------------------------------------------------
def ci_method(n_boot: int = N_BOOT, seed: int = SEED, alpha: float = ALPHA) -> dict[str, Any]:
    return {
        "method": "percentile",
        "resample": "dialogues",
        "level": 1 - alpha,
        "n_boot": n_boot,
        "seed": seed,
    }


def result_row(
    result: dict[str, Any],
    *,
    system: str,
    family: str,
    source: str,
    description: str = "",
    baseline: str = "",
    intervals: bool = True,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> dict[str, Any]:
    """The stored leaderboard row of one `trace_metrics.lib.suite.evaluate_run` result.

    With the result's `per_item` (what `evaluate_run` returns), the row keeps its per-dialogue data and, with
    `intervals`, gets the 95% cluster-bootstrap interval of every metric. `tied_best` needs other rows:
    `mark_best`.
    """
    row = {
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
    if "per_item" in result:
        gate = result["config"].get("grounding", {}).get("cd_gate", iv.DEFAULT_CD_GATE)
        row["per_dialogue"] = iv.encode(iv.dialogue_table(result["per_item"], cd_gate=gate))
        if intervals:
            [row] = add_intervals([row], n_boot=n_boot, seed=seed, marks=False)
    return row


def _groups(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, int], list[tuple[int, iv.DialogueTable]]]:
    """(row index, decoded table) by dialogue set (rows resampled together). Rows without per-dialogue data are
    left out, and so are rows whose data is damaged (logged: a bad stored row must not take the board down)."""
    out: dict[tuple[str, int], list[tuple[int, iv.DialogueTable]]] = {}
    for i, r in enumerate(rows):
        stored = r.get("per_dialogue") or {}
        if "data" not in stored:
            continue
        try:
            table = iv.decode(stored)
        except (ValueError, KeyError, TypeError) as e:
            log.warning(
                "row %r (%s pool): unreadable per-dialogue data (%s); no intervals or marks for it",
                r.get("system"),
                r.get("pool"),
                e,
            )
            continue
        out.setdefault((table.dialogues, table.n_dialogues), []).append((i, table))
    return out


def _comparable_metrics(row: dict[str, Any], table: iv.DialogueTable) -> list[str]:
    available = set(table.metrics())
    return [m for m in row["metrics"] if m in available]


def add_intervals(
    rows: Sequence[dict[str, Any]],
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
    marks: bool = True,
    settings: sig.Settings | None = None,
) -> list[dict[str, Any]]:
    """Copies of `rows` with `ci` and `ci_method` (rows with per-dialogue data) and, with `marks`, the marks,
    ranks and robustness of `mark_best` (`settings`: its test, correction and family), from one resampling
    per dialogue set: every row and metric of a set at once."""
    out = [mk.without_marks(r) if marks else dict(r) for r in rows]
    for group in _groups(rows).values():
        members, tables = [i for i, _ in group], [t for _, t in group]
        wanted = [_comparable_metrics(rows[i], t) for i, t in group]
        reps = iv.bootstrap(tables, wanted, n_boot=n_boot, seed=seed)
        for i, r in zip(members, reps, strict=True):
            cis = {m: iv.percentile_interval(v, alpha) for m, v in r.items()}
            out[i]["ci"] = {m: list(ci) for m, ci in cis.items() if ci is not None}
            out[i]["ci_method"] = ci_method(n_boot, seed, alpha)
        if marks:
            mk.set_marks(out, members, tables, reps, settings or sig.Settings(alpha=alpha, seed=seed))
    return out


def mark_best(
    rows: Sequence[dict[str, Any]],
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
    settings: sig.Settings | None = None,
) -> list[dict[str, Any]]:
    """Copies of `rows` with `tied_best` (and `marks_method`, `rank`, `rank_ci`, `robustness`:
    `trace_harness.leaderboard.marks`) recomputed over exactly this set of rows (pure: inputs untouched).

    Per column (metric id) among the rows of one pool and split with per-dialogue data: the best point value
    (direction from the metric's spec) and every row whose paired comparison with it is not significant after
    the correction (`settings`; default the paired cluster bootstrap, Holm over every pair of rows of every
    column: `trace_metrics.lib.significance.marks`) get True; the others False. A row without per-dialogue
    data (the paper's reported rows, a leaderboard.json read without its side file, a damaged stored row:
    logged) gets no `tied_best`. Cost: one bootstrap of all rows and columns (seconds for ~20 rows of 1,500
    dialogues); callers that redraw often should keep the result until the rows change.
    """
    out = [mk.without_marks(r) for r in rows]
    for group in _groups(rows).values():
        members, tables = [i for i, _ in group], [t for _, t in group]
        wanted = [_comparable_metrics(rows[i], t) for i, t in group]
        reps = iv.bootstrap(tables, wanted, n_boot=n_boot, seed=seed)
        mk.set_marks(out, members, tables, reps, settings or sig.Settings(alpha=alpha, seed=seed))
    return out


def warn_duplicates(rows: Sequence[dict[str, Any]], files: Sequence[Path]) -> list[str]:
    """Log (and return) a warning for every set of rows with the same name, pool and split: they would look
    the same on the board; the warning names their prediction files and says whether they are copies."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["system"], r["pool"], r["split"]), []).append(i)
    out = []
    for (system, pool, split), same in groups.items():
        if len(same) < 2:
            continue
        copies = all(rows[i]["metrics"] == rows[same[0]]["metrics"] for i in same)
        out.append(
            f"{len(same)} rows named {system!r} ({pool} pool, {split} split): "
            + ("copies of one run" if copies else "runs with different values")
            + ", from "
            + ", ".join(str(files[i]) for i in same)
        )
    for warning in out:
        log.warning("%s", warning)
    return out


def build_leaderboard(
    data_dir: str | os.PathLike,
    runs_dir: str | os.PathLike,
    split: str | None = None,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    settings: sig.Settings | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """Evaluate every complete run under `runs_dir` (optionally only those of `split`), with intervals,
    significance marks, ranks and robustness (`settings`: the marks' test, correction and family; `mark_best`);
    `options` go to `evaluate_run` (e.g. grounding_turns="system")."""
    from trace_metrics.lib.suite import evaluate_run

    rows, files = [], []
    for path in find_runs(runs_dir):
        meta = read_json(path.with_name(path.name + ".meta.json"))
        if split is not None and meta.get("split") != split:
            continue
        log.info("scoring %s (%s, %s)", path, meta.get("split"), meta.get("pool"))
        result = evaluate_run(
            data_dir, path, split=meta["split"], pool=meta["pool"], with_std=True, **options
        )
        name = meta.get("baseline", path.stem)
        row = result_row(
            result,
            system=system_label({"baseline": name, **meta}),
            baseline=name,
            family=meta.get("family", "non-LLM"),
            source="baseline",
            intervals=False,
        )
        row["session_isolated"] = bool(meta.get("session_isolated", True))
        fallbacks = fb.run_fallbacks(meta)
        if fallbacks is not None:
            row["fallbacks"] = fallbacks
        rows.append(row)
        files.append(path)
    warn_duplicates(rows, files)
    order = [i.name for i in IDENTITIES]
    rows.sort(
        key=lambda r: (
            r["pool"],
            r["corpus_version"],  # runs scored on two corpora are never interleaved
            r["family"] != "non-LLM",  # the paper's order: Table 5's rows
            order.index(r["baseline"]) if r["baseline"] in order else len(order),
            r["system"],
        )
    )
    if n_boot > 0:
        log.info("bootstrap intervals and significance marks (n_boot=%d, seed=%d)", n_boot, seed)
        rows = add_intervals(rows, n_boot=n_boot, seed=seed, settings=settings)
    return rows


# ---------------------------------------------------------------------------------------------------
# Paper-style tables and files
# ---------------------------------------------------------------------------------------------------
PER_DIALOGUE_FILE = "leaderboard.per_dialogue.jsonl"  # beside leaderboard.json: the rows' per-dialogue data


def write_leaderboard(rows: Sequence[dict[str, Any]], out_dir: str | os.PathLike) -> dict[str, Path]:
    """leaderboard.json (the rows), its side file of per-dialogue data, and one CSV per paper table and pool."""
    out_dir = Path(out_dir)
    paths = {"json": out_dir / "leaderboard.json", "per_dialogue": out_dir / PER_DIALOGUE_FILE}
    light, side = [], []
    for r in rows:
        stored = r.get("per_dialogue")
        if stored and "data" in stored:
            side.append(
                {
                    "system": r["system"],
                    "pool": r["pool"],
                    "dialogues": stored["dialogues"],
                    "data": stored["data"],
                }
            )
            r = {
                **r,
                "per_dialogue": {
                    **{k: v for k, v in stored.items() if k != "data"},
                    "file": PER_DIALOGUE_FILE,
                },
            }
        light.append(r)
    write_jsonl(paths["per_dialogue"], side)
    write_json(paths["json"], {"rows": light})
    for pool in sorted({r["pool"] for r in rows}):
        for title, columns in VIEWS.items():
            slug = title.split(":")[0].lower().replace(" ", "")
            path = out_dir / f"{slug}_{pool}.csv"
            write_text(path, pool_csv(rows, columns, pool))
            paths[f"{slug}_{pool}"] = path
    return paths


def read_leaderboard(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The rows of a leaderboard.json with their per-dialogue data put back from the side file beside it.

    A missing or mismatched side file leaves the affected rows without data (logged): they keep their
    intervals but `mark_best` cannot compare them.
    """
    path = Path(path)
    rows = read_json(path)["rows"]
    side_path = path.with_name(PER_DIALOGUE_FILE)
    pending = [r for r in rows if (r.get("per_dialogue") or {}).get("file")]
    if not pending:
        return rows
    if not side_path.exists():
        log.warning(
            "%s not found: the rows of %s carry no per-dialogue data (no significance marks)", side_path, path
        )
        return rows
    by_key = {(s["system"], s["pool"], s["dialogues"]): s["data"] for s in read_jsonl(side_path)}
    for r in pending:
        stored = r["per_dialogue"]
        data = by_key.get((r["system"], r["pool"], stored["dialogues"]))
        if data is None:
            log.warning("%s has no per-dialogue data for %s (%s pool)", side_path, r["system"], r["pool"])
            continue
        r["per_dialogue"] = {**{k: v for k, v in stored.items() if k != "file"}, "data": data}
    return rows
