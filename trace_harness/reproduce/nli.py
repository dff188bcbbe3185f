"""One process of the NLI pass over every closed-pool run: `reproduce` starts N of them with `accelerate launch`
(execute.launch_nli) when the config's `nli.processes` asks for more than one (`auto`: one per visible GPU).

    python -m trace_harness.reproduce.nli CONFIG

Each process loads the NLI model on its own device and scores its share of every chunk of (premise, claim)
pairs (trace_metrics.lib.entailment: split between processes, gathered in order); the main process writes the
NLI cache, which the leaderboard then reads without a model call.
"""

from __future__ import annotations

import logging
import sys


def main(argv: list[str] | None = None) -> int:
    from trace_harness.reproduce.config import load_config
    from trace_harness.reproduce.execute import nli_scorer, score_nli
    from trace_harness.reproduce.jobs import Context

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m trace_harness.reproduce.nli CONFIG", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    ctx = Context(load_config(args[0]))
    scorer = nli_scorer(ctx, show_progress=True)
    try:
        score_nli(ctx, scorer)
    finally:
        scorer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
