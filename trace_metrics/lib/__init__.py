"""Plain functions behind every Trace metric; the `evaluate` modules, the CLI and the Space adapt these.

accuracy, grounding, text, practical, recovery: one metric family each; tokenize: the shared tokenisers;
predictions: reading and validating a predictions file; selection: which turns each family scores; sweeps:
the App. L sensitivity sweeps; suite: everything at once. Area E adds entailment, judge, human and stats.
Nothing is imported here, so importing one module stays cheap.
"""
