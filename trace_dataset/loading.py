"""`load_trace`: any view of a Trace data directory as a `datasets` object, in one call."""

from __future__ import annotations

import os
from typing import Any

import datasets


def load_trace(
    data_dir: str | os.PathLike,
    config: str = "dialogues",
    split: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> datasets.Dataset | datasets.DatasetDict:
    """Load `config` of the data directory (a generated corpus, a release or a hydrated release).

    config: dialogues (default), turns, turns_pool_16, turns_pool_32, turns_open, knowledge_base,
    review_index, reviews. split: None for a DatasetDict of every split, or a split name
    ("train"/"validation"/"test"; "pois", "review_index", "reviews" for the knowledge-base configs).
    Extra keyword arguments go to `download_and_prepare` (e.g. `download_mode="force_redownload"`).
    """
    from trace_dataset.builder import TraceBuilder

    builder = TraceBuilder(
        config_name=config, data_dir=data_dir, cache_dir=None if cache_dir is None else str(cache_dir)
    )
    builder.download_and_prepare(**kwargs)
    if split is not None:
        available = tuple(builder.info.splits or ())
        if split not in available:
            raise ValueError(f"unknown split {split!r} for config {config!r}; expected one of {available}")
    return builder.as_dataset(split=split)
