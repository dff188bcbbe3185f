"""`trace-bench inspect predictions LOG --out FILE`: an Inspect log of `trace_bench/trace` as a predictions file.

The command parses its options without Inspect; run without the `inspect` extra it stops with the install
command (`require_inspect`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trace_bench.shell import trace_bench_command
from trace_harness.integrations.inspect_eval import TEACHER_FORCED_TASK, require_inspect


def register(sub: Any) -> None:
    p = sub.add_parser(
        "inspect",
        help="Trace from Inspect AI: turn an Inspect log into a predictions file",
        description="The Inspect tasks run with `inspect eval trace_bench/trace` (teacher-forced) and "
        "`inspect eval trace_bench/trace_live` (live); this command reads their logs back (docs/inspect.md).",
    )
    actions = p.add_subparsers(dest="inspect_command", required=True, metavar="COMMAND")
    q = actions.add_parser(
        "predictions",
        help=f"write the predictions file of a {TEACHER_FORCED_TASK} log",
        description=f"Read an Inspect log of {TEACHER_FORCED_TASK} and write its predictions (one row per system "
        "turn, as `trace-bench run` writes them) with the run's .meta.json; for a subset, the subset's data "
        "directory goes beside the file. `trace-bench evaluate` then gives the log's metric values.",
    )
    q.add_argument("log", type=Path, help="an Inspect log file (.eval or .json)")
    q.add_argument("--out", type=Path, required=True, help="predictions JSONL to write")
    q.add_argument("--data", type=Path, help="the Trace data directory, when it moved since the run")
    q.set_defaults(func=_predictions)


def _predictions(args: argparse.Namespace) -> int:
    require_inspect()
    from trace_harness.integrations.inspect_eval.logs import write_log_predictions

    done = write_log_predictions(args.log, args.out, args.data)
    meta = done["meta"]
    print(f"wrote {done['rows']} of {done['turns']} turns to {done['predictions']} (metadata: {meta.name})")
    if not done["complete"]:
        print("the log does not answer every turn: `trace-bench evaluate` needs all of them")
    results = Path(done["predictions"]).with_suffix(".results.json")
    evaluate = ["evaluate", "--data", done["data"], "--predictions", done["predictions"], "--out", results]
    split, pool = _split_pool(meta)
    print("score it: " + trace_bench_command(*evaluate, "--split", split, "--pool", pool))
    return 0


def _split_pool(meta_file: Path) -> tuple[str, str]:
    from trace_dataset.io import read_json

    meta = read_json(meta_file)
    return str(meta["split"]), str(meta["pool"])
