"""The output folder of `trace-bench interact`, written resumably.

    OUT/data/interactive.jsonl.gz     the live conversations as dialogue records (`interactive` config)
    OUT/predictions.jsonl             one prediction row per system turn (trace_metrics.lib.predictions format;
                                      meta.interactive: turn index, target position, lost-turn reason)
    OUT/predictions.jsonl.meta.json   run metadata: system, simulator (prompt hashes), protocol, settings, versions
    OUT/travelers.jsonl.gz            the hidden side: each traveler's goal and the decision behind every message
    OUT/poi_names.json                business_id -> name of every candidate (the logs read without the KB)
    OUT/metrics.json                  per-turn and overall figures

While it runs, finished dialogues are appended to OUT/progress.jsonl (one line per dialogue, flushed per
batch); a rerun with the same settings skips them, so an interrupted run resumes. The final files are
written atomically from it at the end, and it is removed.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import DATA_DIRNAME, INTERACTIVE_FILE
from trace_dataset.io import TraceDataError, dumps, read_json, write_json, write_jsonl

log = logging.getLogger(__name__)

PROGRESS_FILE = "progress.jsonl"
PREDICTIONS_FILE = "predictions.jsonl"
META_FILE = PREDICTIONS_FILE + ".meta.json"
TRAVELERS_FILE = "travelers.jsonl.gz"
NAMES_FILE = "poi_names.json"
METRICS_FILE = "metrics.json"
MARKERS: tuple[str, ...] = (META_FILE, PROGRESS_FILE, METRICS_FILE)


def records_path(out: str | Path) -> Path:
    return Path(out) / DATA_DIRNAME / INTERACTIVE_FILE


class Progress:
    """Finished dialogues of a run (OUT/progress.jsonl), checked against the run's identity."""

    def __init__(self, out: str | os.PathLike, identity: Mapping[str, Any], overwrite: bool = False):
        self.out = Path(out)
        self.path = self.out / PROGRESS_FILE
        self.meta_path = self.out / META_FILE
        if self.out.exists() and not self.out.is_dir():
            raise TraceDataError("--out exists and is not a folder", path=self.out)
        if (
            self.out.is_dir()
            and any(self.out.iterdir())
            and not any((self.out / m).exists() for m in MARKERS)
        ):
            raise TraceDataError(
                "--out is not empty and holds no earlier `trace-bench interact` output; choose a new "
                "or empty folder",
                path=self.out,
            )
        self.out.mkdir(parents=True, exist_ok=True)
        if overwrite:
            self.path.unlink(missing_ok=True)
        elif self.path.exists() and self.meta_path.exists():
            old = read_json(self.meta_path).get("identity")
            if old != dict(identity):
                diff = sorted(
                    k for k in set(old or {}) | set(identity) if (old or {}).get(k) != identity.get(k)
                )
                raise TraceDataError(
                    f"an unfinished run with other settings is in this folder (differing: {diff}); "
                    "use another --out or rerun with --overwrite",
                    path=self.out,
                )
        self.done: dict[str, dict[str, Any]] = self._read()
        if not self.done and not overwrite and self.meta_path.exists():
            meta = read_json(self.meta_path)
            if meta.get("complete") and meta.get("identity") == dict(identity):  # a finished run: reuse it
                self.done = {it["record"]["dialogue_id"]: it for it in read_outputs(self.out)}

    def _read(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            log.warning("%s: discarding a torn last line left by an interrupted run", self.path)
            with open(self.path, "r+b") as f:
                f.truncate(end)
        out = {}
        for lineno, line in enumerate(data[:end].splitlines(), start=1):
            try:
                item = json.loads(line)
                out[item["record"]["dialogue_id"]] = item
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise TraceDataError(
                    f"not a progress line ({e}); rerun with --overwrite", path=self.path, line=lineno
                ) from None
        if out:
            log.info("%s: resuming after %d finished dialogues", self.path, len(out))
        return out

    def append(self, items: Iterable[Mapping[str, Any]]) -> None:
        lines = []
        for item in items:
            self.done[item["record"]["dialogue_id"]] = dict(item)
            lines.append(dumps(item) + "\n")
        with open(self.path, "a", encoding="utf-8", newline="\n") as f:
            f.write("".join(lines))
            f.flush()

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        write_json(self.meta_path, meta)


def read_outputs(out: str | Path) -> list[dict[str, Any]]:
    """The finished dialogues of a completed run, from its final files (empty when any is missing)."""
    from trace_dataset.io import read_jsonl

    out = Path(out)
    paths = (records_path(out), out / PREDICTIONS_FILE, out / TRAVELERS_FILE)
    if not all(p.exists() for p in paths):
        return []
    records = list(read_jsonl(paths[0]))
    by_dialogue: dict[str, list[dict[str, Any]]] = {}
    for p in read_jsonl(paths[1]):
        by_dialogue.setdefault(p["dialogue_id"], []).append(p)
    travelers = list(read_jsonl(paths[2]))
    if len(travelers) != len(records):
        return []
    return [
        {"record": r, "predictions": by_dialogue.get(r["dialogue_id"], []), "traveler": t}
        for r, t in zip(records, travelers, strict=True)
    ]


def write_outputs(
    out: str | os.PathLike, items: Sequence[Mapping[str, Any]], names: Mapping[str, str]
) -> None:
    """The final files from the finished dialogues (in seed order); removes the progress file."""
    out = Path(out)
    write_jsonl(records_path(out), (it["record"] for it in items))
    write_jsonl(out / PREDICTIONS_FILE, (p for it in items for p in it["predictions"]))
    write_jsonl(out / TRAVELERS_FILE, (it["traveler"] for it in items))
    write_json(out / NAMES_FILE, dict(sorted(names.items())))
    (out / PROGRESS_FILE).unlink(missing_ok=True)
