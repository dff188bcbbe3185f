"""The `datasets` builder of a Trace data directory (a generated corpus, a release or a hydrated release).

Configs: `dialogues` (default), `turns` (one row per system turn, closed pool), `turns_pool_16`,
`turns_pool_32`, `turns_open`, `interactive` (the live conversations `trace-bench interact` logs, one split
`interactive`, same features as `dialogues`), and the knowledge base: `knowledge_base` (POIs), `review_index`, `reviews`
(review text; hydrated or local directories only). Features come from `trace_dataset.schema`, turn rows
from `trace_dataset.views.turn_rows`. The data files (with their modification times) are part of the
config id, so editing a data directory never serves a stale cache. Instantiate it directly
(`trace_dataset.load_trace` does): there is no loading script.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import datasets

from trace_dataset.constants import (
    DATA_DIRNAME,
    INTERACTIVE_FILE,
    KB_DIRNAME,
    POIS_FILE,
    POOLS,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
    SCHEMA_VERSION,
    SPLITS,
)
from trace_dataset.io import TraceDataError, open_text
from trace_dataset.release.records import check_dialogue, iter_numbered_jsonl
from trace_dataset.schema import (
    DIALOGUE_FEATURES,
    POI_FEATURES,
    REVIEW_FEATURES,
    REVIEW_INDEX_FEATURES,
    TURN_ROW_FEATURES,
)
from trace_dataset.views import turn_rows

Kind = Literal["dialogues", "turns", "interactive", "knowledge_base", "review_index", "reviews"]
# knowledge-base kinds: split name, file under knowledge_base/, features, key field
KB_KINDS: dict[str, tuple[str, str, datasets.Features, str]] = {
    "knowledge_base": ("pois", POIS_FILE, POI_FEATURES, "business_id"),
    "review_index": ("review_index", REVIEW_INDEX_FILE, REVIEW_INDEX_FEATURES, "review_id"),
    "reviews": ("reviews", REVIEWS_FILE, REVIEW_FEATURES, "review_id"),
}


@dataclass
class TraceConfig(datasets.BuilderConfig):
    """One view of a Trace data directory: `kind` picks the records, `pool` the turn rows' candidates."""

    kind: Kind = "dialogues"
    pool: str = "closed"

    def __post_init__(self):
        super().__post_init__()
        if self.kind not in ("dialogues", "turns", "interactive", *KB_KINDS):
            raise ValueError(
                f"unknown kind {self.kind!r}; expected one of {('dialogues', 'turns', 'interactive', *KB_KINDS)}"
            )
        if self.pool not in POOLS:
            raise ValueError(f"unknown pool {self.pool!r}; expected one of {POOLS}")


_VERSION = datasets.Version(f"{SCHEMA_VERSION}.0")
TURN_CONFIGS: dict[str, str] = {
    "turns": "closed",
    "turns_pool_16": "pool_16",
    "turns_pool_32": "pool_32",
    "turns_open": "open",
}
CONFIG_NAMES: tuple[str, ...] = ("dialogues", *TURN_CONFIGS, "interactive", *KB_KINDS)


def _relative_files(config_name: str) -> dict[str, list[str]]:
    """split -> files (relative to the data directory) that a config reads."""
    if config_name in KB_KINDS:
        split, name, _, _ = KB_KINDS[config_name]
        return {split: [f"{KB_DIRNAME}/{name}"]}
    if config_name == "interactive":
        return {"interactive": [f"{DATA_DIRNAME}/{INTERACTIVE_FILE}"]}
    return {s: [f"{DATA_DIRNAME}/{s}.jsonl.gz"] for s in SPLITS}


def _has_records(path: Path) -> bool:
    with open_text(path) as f:
        return any(line.strip() for line in f)


class TraceBuilder(datasets.GeneratorBasedBuilder):
    """`TraceBuilder(config_name="turns", data_dir=DIR).download_and_prepare()`; `data_dir` is required."""

    BUILDER_CONFIG_CLASS = TraceConfig
    VERSION = _VERSION
    BUILDER_CONFIGS = [
        TraceConfig(
            name="dialogues",
            version=_VERSION,
            kind="dialogues",
            description="One row per dialogue (schema.DIALOGUE_FEATURES).",
        ),
        *(
            TraceConfig(
                name=name,
                version=_VERSION,
                kind="turns",
                pool=pool,
                description=f"One row per system turn with its history, the {pool} candidate pool and gold "
                "(schema.TURN_ROW_FEATURES).",
            )
            for name, pool in TURN_CONFIGS.items()
        ),
        TraceConfig(
            name="interactive",
            version=_VERSION,
            kind="interactive",
            description="Live conversations of a simulated traveler with a system (`trace-bench interact` "
            "--out folder), as dialogue records (schema.DIALOGUE_FEATURES), split `interactive`.",
        ),
        TraceConfig(
            name="knowledge_base",
            version=_VERSION,
            kind="knowledge_base",
            description="The knowledge base's POIs (schema.POI_FEATURES), split `pois`.",
        ),
        TraceConfig(
            name="review_index",
            version=_VERSION,
            kind="review_index",
            description="Review ids with business, stars, date, length; no text (schema.REVIEW_INDEX_FEATURES).",
        ),
        TraceConfig(
            name="reviews",
            version=_VERSION,
            kind="reviews",
            description="Review text (schema.REVIEW_FEATURES); hydrated or locally generated directories only.",
        ),
    ]
    DEFAULT_CONFIG_NAME = "dialogues"

    def __init__(
        self,
        *args: Any,
        data_dir: str | os.PathLike | None = None,
        config_name: str | None = None,
        dataset_name: str | None = None,
        **kwargs: Any,
    ):
        name = config_name or self.DEFAULT_CONFIG_NAME
        if name not in CONFIG_NAMES:
            raise ValueError(f"unknown Trace config {name!r}; expected one of {CONFIG_NAMES}")
        if data_dir is None:
            raise TraceDataError(
                f"the Trace builder needs data_dir (a Trace data directory) for config {name!r}"
            )
        root = Path(data_dir).absolute()
        if not root.is_dir():
            raise TraceDataError("data directory not found", path=root)
        files = _relative_files(name)
        missing = [f for fs in files.values() for f in fs if not (root / f).is_file()]
        if missing:
            hint = " (a release has no review text: hydrate it first)" if name == "reviews" else ""
            raise TraceDataError(f"missing file(s) {missing} for config {name!r}{hint}", path=root)
        if "data_files" not in kwargs:  # file paths + mtimes enter the config id: no stale cache
            kwargs["data_files"] = {s: [str(root / f) for f in fs] for s, fs in files.items()}
        super().__init__(
            *args, data_dir=str(root), config_name=name, dataset_name=dataset_name or "trace", **kwargs
        )

    def _info(self) -> datasets.DatasetInfo:
        kind = self.config.kind
        if kind in ("dialogues", "interactive"):
            features = DIALOGUE_FEATURES
        elif kind == "turns":
            features = TURN_ROW_FEATURES
        else:
            features = KB_KINDS[kind][2]
        return datasets.DatasetInfo(
            description="Trace: multi-turn tourism recommendation dialogues with review-span citations.",
            features=features,
            homepage="https://arxiv.org/abs/2605.07677",
            license="cc-by-4.0 (authored content); Yelp review text under Yelp's terms, never redistributed",
        )

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        root = Path(self.config.data_dir)
        # `datasets` cannot serve an empty split: a split file without records (a tiny corpus) is left out.
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"path": root / files[0], "split": split})
            for split, files in _relative_files(self.config.name).items()
            if _has_records(root / files[0])
        ]

    def _generate_examples(self, path: Path, split: str):
        kind = self.config.kind
        if kind in KB_KINDS:
            key_field = KB_KINDS[kind][3]
            seen: set[str] = set()
            for lineno, rec in iter_numbered_jsonl(path):
                key = rec.get(key_field)
                if not isinstance(key, str) or key in seen:
                    raise TraceDataError(
                        f"{key_field}: expected a unique string, got {key!r}", path=path, line=lineno
                    )
                seen.add(key)
                yield key, rec
            return
        seen_ids: set[str] = set()
        for lineno, d in iter_numbered_jsonl(path):
            check_dialogue(d, path=path, line=lineno)
            did = d["dialogue_id"]
            if did in seen_ids:
                raise TraceDataError(f"duplicate dialogue_id {did!r}", path=path, line=lineno)
            seen_ids.add(did)
            if (
                kind == "interactive"
            ):  # live logs keep the split of the dialogue their traveler was seeded from
                yield did, d
                continue
            if d["split"] != split:
                raise TraceDataError(
                    f"dialogue {did!r} has split {d['split']!r} but sits in the {split!r} file",
                    path=path,
                    line=lineno,
                )
            if kind == "dialogues":
                yield did, d
            else:
                for row in turn_rows(d, self.config.pool):
                    yield f"{did}/{row['turn_id']}", row
