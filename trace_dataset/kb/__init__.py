"""The balanced knowledge base: loading (store) and building (build) it."""

from trace_dataset.kb.store import KnowledgeBase

__all__ = ["KnowledgeBase"]
