"""The balanced knowledge base: loading (store) and building (build) it."""

from trace_dataset.kb.store import KnowledgeBase

__all__ = ["KnowledgeBase", "build_kb", "kb_stats"]


def __getattr__(name: str):
    # Lazy: building is only needed by `trace-bench kb build` and the generator's setup
    if name == "build_kb":
        from trace_dataset.kb.build import build_kb

        return build_kb
    if name == "kb_stats":
        from trace_dataset.kb.stats import kb_stats

        return kb_stats
    raise AttributeError(f"module 'trace_dataset.kb' has no attribute {name!r}")
