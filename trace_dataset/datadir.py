"""The on-disk layout of a Trace data directory, shared by a generated corpus, a release and a
hydrated release:

    DIR/README.md                       dataset card with YAML `configs`
    DIR/corpus.json                     generation report and versions (generated corpora)
    DIR/data/{train,validation,test}.jsonl.gz
    DIR/knowledge_base/pois.jsonl.gz, review_index.jsonl.gz, kb.json, [reviews.jsonl.gz: local only]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trace_dataset.constants import CORPUS_META_FILE, DATA_DIRNAME, KB_DIRNAME, SPLITS
from trace_dataset.io import TraceDataError, iter_jsonl_lines, read_json


def split_file(root: str | os.PathLike, split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    return Path(root) / DATA_DIRNAME / f"{split}.jsonl.gz"


def kb_dir(root: str | os.PathLike) -> Path:
    return Path(root) / KB_DIRNAME


def check_data_dir(root: str | os.PathLike, splits: Iterable[str] = SPLITS) -> Path:
    """Fail with a clear message unless `root` holds the split files and the knowledge base."""
    root = Path(root)
    if not root.is_dir():
        raise TraceDataError("data directory not found", path=root)
    missing = [str(split_file(root, s).relative_to(root)) for s in splits if not split_file(root, s).exists()]
    if not kb_dir(root).is_dir():
        missing.append(KB_DIRNAME + "/")
    if missing:
        raise TraceDataError(f"not a Trace data directory: missing {', '.join(missing)}", path=root)
    return root


def iter_dialogues(
    root: str | os.PathLike, splits: Iterable[str] | str | None = None
) -> Iterator[dict[str, Any]]:
    """Dialogue records of the given splits (all by default), in file order."""
    if splits is None:
        splits = SPLITS
    elif isinstance(splits, str):
        splits = (splits,)
    for split in splits:
        path = split_file(root, split)
        if not path.exists():
            raise TraceDataError(f"missing split file for {split!r}", path=path)
        for lineno, _, record in iter_jsonl_lines(path):
            _check_shape(record, path, lineno)
            yield record


def _check_shape(record: dict[str, Any], path: Path, line: int) -> None:
    """The fields every reader of dialogues indexes without looking: a string id and a list of turns, each
    an object with a turn_id, a role and a text (the full field check is release.records.check_dialogue)."""
    did, turns = record.get("dialogue_id"), record.get("turns")
    if not isinstance(did, str) or not did or not isinstance(turns, list):
        raise TraceDataError(
            "not a Trace dialogue record: expected a string dialogue_id and a list of turns "
            "(the fields of schema.DIALOGUE_FEATURES)",
            path=path,
            line=line,
        )
    for i, turn in enumerate(turns):
        if not (
            isinstance(turn, dict)
            and isinstance(turn.get("turn_id"), int)
            and isinstance(turn.get("role"), str)
            and isinstance(turn.get("text"), str)
        ):
            raise TraceDataError(
                f"dialogue {did!r} turns[{i}]: expected an object with an integer turn_id and "
                "string role and text",
                path=path,
                line=line,
            )


def corpus_meta(root: str | os.PathLike) -> dict[str, Any]:
    path = Path(root) / CORPUS_META_FILE
    return read_json(path) if path.exists() else {}


def corpus_version(meta: dict[str, Any]) -> str:
    """The corpus version of a corpus.json: `versions.corpus_version` (the generator's), else top-level keys."""
    versions = meta.get("versions")
    nested = versions if isinstance(versions, dict) else {}
    return str(nested.get("corpus_version") or meta.get("corpus_version") or meta.get("version") or "")
