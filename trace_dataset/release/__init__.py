"""The `[Q:N]` release of a Trace corpus, its hydration from the user's Yelp bundle, and the dataset card.

write_release(corpus_dir, out_dir)                          -> release.json content
hydrate_release(release_dir, yelp_path, out_dir, allow_partial=False) -> hydration report
blind.make_blind(data_dir, period, out_dir, n=None, seed=None)   -> a blind test set (inputs/ + private gold/)
blind_hub.push_gold(gold_dir, repo_id, token=None)             -> the gold to a private Hub dataset
"""

from __future__ import annotations

__all__ = ["hydrate_release", "write_release"]


def __getattr__(name: str):
    # Lazy: the CLI imports this package to register `corpus release/hydrate`, and the writers pull in
    # `datasets` (a second of import time) that `trace-bench --help` must not pay.
    if name == "hydrate_release":
        from trace_dataset.release.hydrate import hydrate_release

        return hydrate_release
    if name == "write_release":
        from trace_dataset.release.writer import write_release

        return write_release
    raise AttributeError(f"module 'trace_dataset.release' has no attribute {name!r}")
