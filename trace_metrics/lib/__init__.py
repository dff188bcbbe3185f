"""Plain functions behind every Trace metric; the `evaluate` modules, the CLI and the Space adapt these.

accuracy, grounding, text, practical, recovery: one metric family each; tokenize: the shared tokenisers;
predictions: reading and validating a predictions file; selection: which turns each family scores; items: the
items each level scores and the per-item function of every declared metric (`trace_metrics.specs`); sweeps:
the App. L sensitivity sweeps; suite: everything at once (a loop over the declarations); entailment, judge,
human and stats: NLI grounding, the LLM judge, the human evaluation and the statistics.
Nothing is imported here, so importing one module stays cheap.
"""
