"""CoRE (Chen et al., 2026) for Trace: twelve user-centric factors rated 0-4 by an LLM, a four-role debate for a
0-100 overall score, and the meta-evaluation of both against human ratings.

    from trace_metrics.core.conversation import build_log          # a Trace dialogue + predictions -> log
    from trace_metrics.core.scoring import score_logs               # factors + debate on logs, in memory
    from trace_metrics.core.runner import collect_logs, run_corpus  # a whole corpus, resumable
    from trace_metrics.core.meta import meta_evaluate_files         # agreement with human ratings

This folder is also the `core` evaluate module (`core.py`, README.md) and `trace-bench core ...` (`cli.py`).
Nothing heavy is imported here.
"""

from __future__ import annotations
