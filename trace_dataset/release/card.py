"""The dataset card (README.md) of a Trace data directory: YAML front matter that plain
`datasets.load_dataset(DIR)` reads (configs + features derived from `trace_dataset.schema`), the
datasheet of the paper's App. D filled with this directory's own counts, the licence split, and how to
hydrate. The card holds no dialogue or review text, so it is safe in a release; it depends only on the
data and knowledge-base files, so a hydrated release gets the same card as the corpus it came from.
"""

from __future__ import annotations

import gzip
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from datasets import Features

from trace_bench.citation import TRACE_CITATION
from trace_bench.tables import markdown_table
from trace_dataset.constants import (
    CITY_NAMES,
    DATA_DIRNAME,
    KB_DIRNAME,
    KB_META_FILE,
    POI_TYPES,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
    REVIEWS_FILE,
    SPLITS,
    TIERS,
)
from trace_dataset.datadir import split_file
from trace_dataset.io import TraceDataError, read_json, write_text
from trace_dataset.release.card_text import (
    datasheet,
    evaluation,
    introduction,
    licence,
    loading,
    status,
    synthetic_banner,
    synthetic_hydration,
    yelp_hydration,
)
from trace_dataset.release.eval_yaml import hub_tasks
from trace_dataset.release.records import iter_numbered_jsonl
from trace_dataset.schema import DIALOGUE_FEATURES, POI_FEATURES, REVIEW_FEATURES, REVIEW_INDEX_FEATURES

CARD_FILE = "README.md"
DEFAULT_TITLE = "Trace: Tourism Recommendation with Accountable Citation Evidence"

# Configs that plain `datasets.load_dataset(DIR, name)` serves from the card's YAML: name -> (split, file,
# features). The `turns*` views are derived, so only `trace_dataset.load_trace` (the builder) serves them.
KB_CONFIGS: dict[str, tuple[str, str, Features]] = {
    "knowledge_base": ("pois", f"{KB_DIRNAME}/{POIS_FILE}", POI_FEATURES),
    "review_index": ("review_index", f"{KB_DIRNAME}/{REVIEW_INDEX_FILE}", REVIEW_INDEX_FEATURES),
    "reviews": ("reviews", f"{KB_DIRNAME}/{REVIEWS_FILE}", REVIEW_FEATURES),
}

# One line per top-level dialogue field; test_card checks these cover schema.DIALOGUE_FEATURES exactly.
FIELD_DESCRIPTIONS: dict[str, str] = {
    "dialogue_id": "`crs_yelp_00001`-style identifier",
    "split": "`train`, `validation` or `test` (70/15/15, stratified by city x POI type, seed 42)",
    "scenario": "persona type and description, travel context, city, POI type, difficulty tier",
    "candidate_poi_ids": "the closed candidate pool (8 POIs of one city and type)",
    "pool_16_poi_ids": "seeded superset of the 8 candidates (16 POIs, same city and type)",
    "pool_32_poi_ids": "seeded superset of the 8 candidates (32 POIs, same city and type)",
    "open_set_poi_ids": "every same-city, same-type POI of the knowledge base",
    "turns": "turn id, role, action, text, referenced POIs and reviews, gold and acceptable POIs, `[Rn]` citations",
    "quote_spans": "for each quote `N`: review id, character offsets into the original review text, checksum",
    "metadata": "generator, backend, model, seed, knowledge-base version",
}


def _dtype(feature: Any) -> str:
    """A short type name for the field table, read off the Features object."""
    if isinstance(feature, dict):
        return "struct"
    if isinstance(feature, list):
        return f"list<{_dtype(feature[0])}>"
    inner = getattr(feature, "feature", None)
    if inner is not None:
        return f"list<{_dtype(inner)}>"
    return str(getattr(feature, "dtype", type(feature).__name__))


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M"


def _raw_count(path: Path) -> tuple[int, int]:
    """(non-blank lines, uncompressed bytes) of a JSON-lines file, without parsing; (0, 0) when absent."""
    if not path.exists():
        return 0, 0
    n = size = 0
    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as f:
        for line in f:
            if line.strip():
                n += 1
                size += len(line)
    return n, size


@dataclass
class DialogueTally:
    """What the card says about the dialogues; writers feed it while they stream, so the card never
    re-reads 10,000 dialogues. `split_bytes` is the uncompressed size of each split file."""

    splits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPLITS, 0))
    split_bytes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPLITS, 0))
    cells: Counter = field(default_factory=Counter)
    tiers: Counter = field(default_factory=Counter)
    personas: set = field(default_factory=set)
    generators: Counter = field(default_factory=Counter)
    kb_versions: set = field(default_factory=set)
    quoted: set = field(default_factory=set)
    turns: int = 0
    quotes: int = 0

    def add(self, split: str, d: dict[str, Any]) -> None:
        self.splits[split] += 1
        sc = d.get("scenario") or {}
        self.cells[(sc.get("city"), sc.get("poi_type"))] += 1
        self.tiers[sc.get("difficulty")] += 1
        self.personas.add(sc.get("persona_type"))
        meta = d.get("metadata") or {}
        self.generators[(meta.get("backend") or "?", meta.get("model") or "")] += 1
        if meta.get("kb_version"):
            self.kb_versions.add(meta["kb_version"])
        self.turns += len(d.get("turns") or ())
        spans = d.get("quote_spans") or ()
        self.quotes += len(spans)
        self.quoted.update(sp.get("review_id") for sp in spans)

    @classmethod
    def from_dir(cls, root: str | os.PathLike) -> DialogueTally:
        tally = cls()
        for split in SPLITS:
            path = split_file(root, split)
            if not path.exists():
                raise TraceDataError(
                    f"missing split file for {split!r}: cannot write the dataset card", path=path
                )
            for _, d in iter_numbered_jsonl(path):
                tally.add(split, d)
            tally.split_bytes[split] = _raw_count(path)[1]
        return tally


def collect_stats(data_dir: str | os.PathLike, tally: DialogueTally | None = None) -> dict[str, Any]:
    """Counts the card reports: dialogues from `tally` (or read from the files), the rest from the files."""
    root = Path(data_dir)
    t = tally if tally is not None else DialogueTally.from_dir(root)
    kb = root / KB_DIRNAME
    kb_meta = read_json(kb / KB_META_FILE) if (kb / KB_META_FILE).exists() else {}
    if not isinstance(kb_meta, dict):
        kb_meta = {}
    total = sum(t.splits.values())
    kb_counts = {name: _raw_count(root / file) for name, (_, file, _) in KB_CONFIGS.items()}
    return {
        "splits": dict(t.splits),
        "split_bytes": dict(t.split_bytes),
        "kb_counts": kb_counts,
        "dialogues": total,
        "turns": t.turns,
        "avg_turns": round(t.turns / total, 2) if total else 0.0,
        "quotes": t.quotes,
        "quoted_reviews": len(t.quoted),
        "cells": t.cells,
        "tiers": t.tiers,
        "personas": len(t.personas - {None}),
        "generators": t.generators,
        "kb_versions": sorted(t.kb_versions),
        "kb_meta_version": str(kb_meta.get("kb_version", "")),
        "kb_source": str(kb_meta.get("source", "")),
        "synthetic": _synthetic_manifest(kb_meta),
        "pois": kb_counts["knowledge_base"][0],
        "indexed_reviews": kb_counts["review_index"][0],
        "reviews_with_text": kb_counts["reviews"][0],
        "has_text": (kb / REVIEWS_FILE).exists(),
    }


def _synthetic_manifest(kb_meta: dict[str, Any]) -> dict[str, Any] | None:
    """The synthetic bundle's manifest (seed, scale) when the knowledge base was built from it, else None."""
    if kb_meta.get("source") != "synthetic":
        return None
    manifest = (kb_meta.get("input") or {}).get("synthetic_manifest")
    return manifest if isinstance(manifest, dict) else {}


def front_matter(stats: dict[str, Any]) -> dict[str, Any]:
    """The YAML metadata: `configs` for `datasets.load_dataset(DIR)` and `dataset_info` from the schema."""
    # `datasets` cannot serve an empty split, so a split without dialogues (a tiny corpus) is left out.
    splits = [s for s in SPLITS if stats["splits"][s]]
    configs: list[dict[str, Any]] = [
        {
            "config_name": "dialogues",
            "default": True,
            "data_files": [{"split": s, "path": f"{DATA_DIRNAME}/{s}.jsonl.gz"} for s in splits],
        }
    ]
    infos: list[dict[str, Any]] = [
        {
            "config_name": "dialogues",
            "features": DIALOGUE_FEATURES._to_yaml_list(),
            "splits": [
                {"name": s, "num_bytes": stats["split_bytes"][s], "num_examples": stats["splits"][s]}
                for s in splits
            ],
        }
    ]
    for name, (split, path, features) in KB_CONFIGS.items():
        if stats["kb_counts"][name][0] == 0:
            continue  # a release has no review text
        configs.append({"config_name": name, "data_files": [{"split": split, "path": path}]})
        infos.append(
            {
                "config_name": name,
                "features": features._to_yaml_list(),
                "splits": [
                    {
                        "name": split,
                        "num_bytes": stats["kb_counts"][name][1],
                        "num_examples": stats["kb_counts"][name][0],
                    }
                ],
            }
        )
    synthetic = stats["synthetic"] is not None
    licence = (
        {}
        if synthetic
        # no Yelp content: everything is authored here, under CC BY 4.0
        else {"license_name": "cc-by-4.0-for-authored-content-yelp-terms-for-yelp-content"}
    )
    return {
        "license": "cc-by-4.0",
        **licence,
        "pretty_name": DEFAULT_TITLE + (" (synthetic data)" if synthetic else ""),
        "language": ["en"],
        "task_categories": ["text-generation", "text-retrieval"],
        "tags": [
            "conversational-recommendation",
            "tourism",
            "point-of-interest",
            "citation-grounding",
            "rejection-recovery",
            "multi-turn-dialogue",
            "benchmark",
            "synthetic" if synthetic else "yelp",
        ],
        "size_categories": [_size_category(stats["dialogues"])],
        "configs": configs,
        "dataset_info": infos,
    }


def render_card(stats: dict[str, Any], *, title: str = DEFAULT_TITLE) -> str:
    """The whole README.md text (deterministic: the same directory gives the same bytes)."""
    yaml_text = yaml.safe_dump(front_matter(stats), sort_keys=False, allow_unicode=True, width=120)
    synthetic = stats["synthetic"] is not None
    parts = [
        f"---\n{yaml_text}---",
        f"# {title}",
        *([synthetic_banner(stats)] if synthetic else []),
        introduction(stats),
        status(stats),
        _summary_table(stats),
        "## Loading",
        loading(stats),
        "## Hydration",
        synthetic_hydration(stats) if synthetic else yelp_hydration(),
        "## Licence",
        licence(stats),
        "## Evaluation",
        evaluation(tuple(t.id for t in hub_tasks())),
        "## Fields (`dialogues`)",
        markdown_table(
            ["field", "type", "content"],
            ([f"`{k}`", _dtype(v), FIELD_DESCRIPTIONS.get(k, "")] for k, v in DIALOGUE_FEATURES.items()),
        ),
        "Turn rows (`turns*` configs of `load_trace`) and knowledge-base records follow `trace_dataset.schema` "
        "(`TURN_ROW_FEATURES`, `POI_FEATURES`, `REVIEW_INDEX_FEATURES`, `REVIEW_FEATURES`).",
        "## Dialogues per city and POI type",
        markdown_table(
            ["city", *POI_TYPES],
            ([c, *(f"{stats['cells'].get((c, t), 0):,}" for t in POI_TYPES)] for c in CITY_NAMES),
        ),
        "## Datasheet",
        *datasheet(stats),
        "## Citation",
        f"```bibtex\n{TRACE_CITATION}```",
    ]
    return "\n\n".join(parts) + "\n"


def _summary_table(stats: dict[str, Any]) -> str:
    """The card's first table: dialogues, turns, quotes, POIs, reviews, tiers, personas, the KB version."""
    s = stats
    split_text = " / ".join(f"{k} {v:,}" for k, v in s["splits"].items())
    tiers = ", ".join(f"{t} {s['tiers'].get(t, 0):,}" for t in TIERS)
    kb_version = s["kb_meta_version"] or ", ".join(s["kb_versions"]) or "unrecorded"
    reviews_row = (
        f"{s['reviews_with_text']:,} with text (truncated to {REVIEW_MAX_CHARS} characters)"
        if s["has_text"]
        else "none (hydrate locally)"
    )
    rows = [
        ("Dialogues", f"{s['dialogues']:,} ({split_text})"),
        ("Turns", f"{s['turns']:,} (mean {s['avg_turns']} per dialogue)"),
        ("Quotes", f"{s['quotes']:,} from {s['quoted_reviews']:,} reviews"),
        ("POIs", f"{s['pois']:,}"),
        ("Reviews indexed", f"{s['indexed_reviews']:,}"),
        ("Review text", reviews_row),
        ("Difficulty tiers", tiers),
        ("Persona types", f"{s['personas']}"),
        ("Knowledge-base version", f"`{kb_version}`"),
    ]
    return markdown_table(["statistic", "value"], ([k, str(v)] for k, v in rows))


def write_card(
    data_dir: str | os.PathLike, *, title: str = DEFAULT_TITLE, tally: DialogueTally | None = None
) -> Path:
    """Write DIR/README.md for a corpus, a release or a hydrated release; returns its path.

    `tally`: the dialogue counts, when the caller has them from writing the split files (else they are read).
    """
    path = Path(data_dir) / CARD_FILE
    write_text(path, render_card(collect_stats(data_dir, tally), title=title))
    return path
