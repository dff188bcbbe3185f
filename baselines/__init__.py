"""Trace baselines as pipelines: `baselines.pipeline("tfidf", kb=kb)` builds one by name.

The registry is an explicit table (name -> module, class), in the paper's Table 5 order. A module is
imported when its baseline is first asked for, so `import baselines` stays cheap and the dense baseline's
model stack loads only when dense is used. A registered module that does not exist (yet) is left out of
iteration and `in`, and asking for it by name says so.

    name         module                class
    popularity   baselines.non_llm.popularity  PopularityBaseline
    tfidf        baselines.non_llm.tfidf       TfidfBaseline
    aspect       baselines.non_llm.aspect      AspectBaseline
    dense        baselines.non_llm.dense       DenseBaseline
    spatial      baselines.non_llm.spatial     SpatialBaseline
    hybrid_rrf   baselines.non_llm.hybrid      HybridRRFBaseline
    itinerary    baselines.non_llm.itinerary   ItineraryBaseline
    knowledge    baselines.non_llm.knowledge   KnowledgeEnhancedBaseline
    persona      baselines.non_llm.persona     PersonaGroundedBaseline
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from trace_bench.errors import TraceBenchError

if TYPE_CHECKING:
    from baselines.base import TracePipeline
    from trace_dataset.kb.store import KnowledgeBase

_NON_LLM: dict[str, tuple[str, str]] = {
    "popularity": ("baselines.non_llm.popularity", "PopularityBaseline"),
    "tfidf": ("baselines.non_llm.tfidf", "TfidfBaseline"),
    "aspect": ("baselines.non_llm.aspect", "AspectBaseline"),
    "dense": ("baselines.non_llm.dense", "DenseBaseline"),
    "spatial": ("baselines.non_llm.spatial", "SpatialBaseline"),
    "hybrid_rrf": ("baselines.non_llm.hybrid", "HybridRRFBaseline"),
    "itinerary": ("baselines.non_llm.itinerary", "ItineraryBaseline"),
    "knowledge": ("baselines.non_llm.knowledge", "KnowledgeEnhancedBaseline"),
    "persona": ("baselines.non_llm.persona", "PersonaGroundedBaseline"),
}
# The LLM baselines of App. F (Table 8 rows 10-14) and Itinerary-LLM (Finding 1d), in Table 5's order.
_LLM: dict[str, tuple[str, str]] = {
    "llm_zero_shot": ("baselines.llm.zero_shot", "LLMZeroShotBaseline"),
    "dst": ("baselines.llm.dst", "DSTBaseline"),
    "rag_citation": ("baselines.llm.rag_citation", "RAGCitationBaseline"),
    "multi_review_synthesis": ("baselines.llm.mrs", "MultiReviewSynthesisBaseline"),
    "itinerary_llm": ("baselines.llm.itinerary_llm", "ItineraryLLMBaseline"),
    "memory_aug": ("baselines.llm.memory", "MemoryAugmentedBaseline"),
}
# The seed systems of the other papers, run on Trace as baselines.
_SYSTEMS: dict[str, tuple[str, str]] = {
    "sniprec": ("baselines.sniprec.pipeline", "SnipRecBaseline"),
    "sniprec_snippet": ("baselines.sniprec.pipeline", "SnippetBaseline"),
    "sniprec_sentence": ("baselines.sniprec.pipeline", "SentenceBaseline"),
    "sniprec_document": ("baselines.sniprec.pipeline", "DocumentBaseline"),
    "collab_rec": ("baselines.collab_rec.trace_pipeline", "CollabRecBaseline"),
}
_TABLE: dict[str, tuple[str, str]] = {**_NON_LLM, **_LLM, **_SYSTEMS}
NON_LLM_BASELINES: tuple[str, ...] = tuple(_NON_LLM)
LLM_BASELINES: tuple[str, ...] = tuple(_LLM)
SYSTEM_BASELINES: tuple[str, ...] = tuple(_SYSTEMS)


class BaselineUnavailable(TraceBenchError, KeyError):
    """A registered baseline whose module is not present in this installation."""

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is absent too
        return False


class _Registry(Mapping[str, "type[TracePipeline]"]):
    """name -> pipeline class, importing each module on first use."""

    def __init__(self, table: Mapping[str, tuple[str, str]]):
        self._table = dict(table)

    def registered(self) -> tuple[str, ...]:
        """Every registered name, present or not."""
        return tuple(self._table)

    def __getitem__(self, name: str) -> type[TracePipeline]:
        if name not in self._table:
            raise KeyError(f"unknown baseline {name!r}; expected one of {list(self._table)}")
        module_name, class_name = self._table[name]
        if not _module_exists(module_name):
            raise BaselineUnavailable(f"baseline {name!r} is registered but its module {module_name} is not present")
        cls = getattr(importlib.import_module(module_name), class_name)
        if cls.name != name:
            raise RuntimeError(f"{module_name}.{class_name}.name is {cls.name!r}; the registry expects {name!r}")
        return cls

    def __iter__(self) -> Iterator[str]:
        return (name for name, (module, _) in self._table.items() if _module_exists(module))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._table and _module_exists(self._table[name][0])


BASELINES: _Registry = _Registry(_TABLE)


def pipeline(name: str, kb: KnowledgeBase | str | os.PathLike, **params: Any) -> TracePipeline:
    """Build the baseline `name` on a knowledge base (a KnowledgeBase or its folder)."""
    cls = BASELINES[name]
    if isinstance(kb, (str, os.PathLike)):
        from trace_dataset.kb.store import KnowledgeBase

        kb = KnowledgeBase.load(kb)
    return cls(kb, **params)


__all__ = ["BASELINES", "LLM_BASELINES", "NON_LLM_BASELINES", "SYSTEM_BASELINES", "BaselineUnavailable", "pipeline"]
