"""The `[Q:N]` release of a Trace corpus, its hydration from the user's Yelp bundle, and the dataset card.

    write_release(corpus_dir, out_dir)                          -> release.json content
    hydrate_release(release_dir, yelp_path, out_dir, allow_partial=False) -> hydration report
"""

from __future__ import annotations

from trace_dataset.release.hydrate import hydrate_release
from trace_dataset.release.writer import write_release

__all__ = ["hydrate_release", "write_release"]
