"""The nine non-LLM baselines of Trace (Table 8, rows 1-9), one module each, all on `RankingPipeline`.

They are built by name through the registry in `baselines/__init__.py`; import a module here only to
subclass or inspect a baseline.
"""
