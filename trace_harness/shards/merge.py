"""`merge`: which kind of output the shards are (a predictions file, an interactive run's folder, a CoRE folder, a
reproduce run's OUT folder), and the merge of that kind."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from trace_harness.shards.check import MergeError


def kind_of(path: Path) -> str:
    from trace_harness.reproduce.shards import is_reproduce
    from trace_harness.shards.core import is_core
    from trace_harness.shards.interactive import is_interactive

    if path.is_file():
        return "predictions file"
    if is_reproduce(path):
        return "reproduce run"
    if is_interactive(path):
        return "interactive run"
    if is_core(path):
        return "CoRE run"
    raise MergeError(
        "not a shard's output: expected a predictions file (trace-bench run), or the folder of trace-bench "
        "interact, core score or reproduce",
        path=path,
    )


def merge(shards: Sequence[str | os.PathLike], out: str | os.PathLike) -> tuple[str, str]:
    """Merge the shards into `out`; (the kind of output, a line saying what the merged output holds)."""
    paths = [Path(p) for p in shards]
    kinds = [kind_of(p) for p in paths]
    for path, kind in zip(paths, kinds, strict=True):
        if kind != kinds[0]:
            raise MergeError(
                f"a {kind}, where {paths[0]} is a {kinds[0]}: the shards of one job are alike", path=path
            )
    kind = kinds[0]
    if kind == "predictions file":
        from trace_harness.shards.predictions import merge_predictions

        meta = merge_predictions(paths, out)
        return kind, f"{meta['n_rows']} predictions of {meta['n_dialogues']} dialogues"
    if kind == "interactive run":
        from trace_harness.shards.interactive import merge_interactive

        metrics = merge_interactive(paths, out)
        return kind, f"{metrics['n_dialogues']} dialogues, metrics.json over all of them"
    if kind == "CoRE run":
        from trace_harness.shards.core import merge_core

        summary = merge_core(paths, out)
        return kind, f"CoRE scores of {summary.get('n_dialogues', len(paths))} dialogues"
    from trace_harness.reproduce.shards import merge_reproduce

    return kind, merge_reproduce(paths, out)[0]
