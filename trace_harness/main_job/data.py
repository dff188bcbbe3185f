"""The main job's data stages: synthetic Yelp bundle -> knowledge base -> dialogues -> release -> hydration, each
skipped when its completion marker is there (bundle manifest, kb.json, corpus.json, release.json,
hydration.json), with the knowledge base's and the corpus's statistics printed after them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trace_dataset.constants import CORPUS_META_FILE, KB_META_FILE
from trace_harness.engine.stage import Stage, never
from trace_harness.main_job.layout import data_dirs


def data_stages(
    out: Path, *, n: int, scale: float, per_cell: int, seed: int, workers: int | None
) -> list[Stage]:
    """The stages that make the hydrated data directory OUT/hydrated (layout.py) from nothing."""
    from trace_dataset.release.hydrate import HYDRATION_META_FILE
    from trace_dataset.release.writer import RELEASE_META_FILE
    from trace_dataset.yelp.reader import SYNTHETIC_MANIFEST

    d = data_dirs(out)

    def bundle() -> None:
        from trace_dataset.yelp.synth import write_synthetic_bundle

        write_synthetic_bundle(d["yelp"], seed=seed, scale=scale)

    def kb() -> None:
        from trace_dataset.kb.build import build_kb

        build_kb(d["yelp"], d["kb"], per_cell=per_cell, seed=seed)

    def kb_statistics() -> None:
        from trace_dataset.kb.stats import format_table, kb_stats

        print(format_table(kb_stats(d["kb"])))

    def dialogues() -> None:
        from trace_dataset.generate import generate_corpus

        generate_corpus(d["kb"], d["corpus"], n=n, seed=seed, workers=workers)

    def release() -> None:
        from trace_dataset.release import write_release

        write_release(d["corpus"], d["release"])

    def hydration() -> None:
        from trace_dataset.release import hydrate_release

        hydrate_release(d["release"], d["yelp"], d["hydrated"])

    def corpus_statistics() -> None:
        from trace_dataset.generate.stats import corpus_stats, format_stats

        print(format_stats(corpus_stats(d["hydrated"])))

    def marker(folder: str, name: str) -> Callable[[], bool]:
        return (d[folder] / name).exists

    return [
        Stage("synthetic Yelp bundle", (d["yelp"],), marker("yelp", SYNTHETIC_MANIFEST), bundle),
        Stage("knowledge base", (d["kb"],), marker("kb", KB_META_FILE), kb),
        Stage("knowledge base statistics", (), never, kb_statistics),
        Stage("dialogues", (d["corpus"],), marker("corpus", CORPUS_META_FILE), dialogues),
        Stage("release", (d["release"],), marker("release", RELEASE_META_FILE), release),
        Stage("hydration", (d["hydrated"],), marker("hydrated", HYDRATION_META_FILE), hydration),
        Stage("corpus statistics", (), never, corpus_statistics),
    ]
