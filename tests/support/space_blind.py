"""A blind period's gold folder as `trace-bench corpus blind --data DIR --period NAME --out OUT` writes OUT/gold: a complete
hydrated data directory (here a copy of a built-in one, so that a test knows its scores offline) and period.json.

Scoring reads the folder through `evaluate_run` only, so the Space's blind track is tested the same whichever
way the dialogues were drawn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trace_dataset.datadir import iter_dialogues

SECRET_SEED = 987_654_321  # in period.json as `corpus blind` writes it; nothing the app shows may hold it


def write_gold(
    data_dir: Path, out: Path, period: str = "2026-12", state: str | None = None, *, one_turn: bool = False
) -> Path:
    """OUT: a copy of `data_dir` with period.json (and a `state` file when `state` is given). `one_turn`: as
    `corpus blind` writes it now, each test dialogue cut at its scored turn (`blind_turns.scored_turn`) and
    period.json saying one scored turn per dialogue; else a period as it was before (every turn scored)."""
    shutil.copytree(data_dir, out)
    n = sum(1 for _ in iter_dialogues(out, "test"))
    meta = {
        "period": period,
        "created": "2026-12-01T00:00:00Z",
        "n_dialogues": n,
        "stats": {},
        "seed": SECRET_SEED,
    }
    if one_turn:
        from trace_dataset.datadir import split_file
        from trace_dataset.io import write_jsonl
        from trace_dataset.release.blind_turns import (
            LAST_SYSTEM_TURN,
            SCORED_TURNS_FIELD,
            scored_turn,
            truncate,
        )

        cut = [truncate(d, scored_turn(d, SECRET_SEED)) for d in iter_dialogues(out, "test")]
        write_jsonl(split_file(out, "test"), cut)
        meta[SCORED_TURNS_FIELD] = LAST_SYSTEM_TURN
    (out / "period.json").write_text(json.dumps(meta), encoding="utf-8")
    if state is not None:
        (out / "state").write_text(state + "\n", encoding="utf-8")
    return out


def gold_poi_ids(gold: Path) -> set[str]:
    """Every gold and acceptable-alternative POI id of the gold folder's test split."""
    return {
        pid
        for d in iter_dialogues(gold, "test")
        for t in d["turns"]
        for key in ("gold_poi_ids", "acceptable_alternative_poi_ids")
        for pid in t.get(key) or ()
    }


def predictions_on(gold: Path, predictions: Path, out: Path) -> Path:
    """OUT: the rows of `predictions` for the turns the gold folder's test dialogues hold (a run on its inputs)."""
    kept = {(d["dialogue_id"], t["turn_id"]) for d in iter_dialogues(gold, "test") for t in d["turns"]}
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines() if line.strip()]
    out.write_text(
        "".join(json.dumps(r) + "\n" for r in rows if (r["dialogue_id"], r["turn_id"]) in kept),
        encoding="utf-8",
    )
    return out
