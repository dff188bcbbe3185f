"""Trace baselines as pipelines: `baselines.pipeline("tfidf", kb=kb)` builds one by name.

The registry is built from the one identity table, `baselines.identity.IDENTITIES` (name = module = prompt
file = run folder, label, family, paper reference, isolation, notes), in the paper's Table 5 order. A module
is imported when its baseline is first asked for, so `import baselines` stays cheap and the dense baseline's
model stack loads only when dense is used.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from baselines.identity import IDENTITIES, BaselineIdentity, identity, label

if TYPE_CHECKING:
    from baselines.base import TracePipeline
    from trace_dataset.kb.store import KnowledgeBase

_TABLE: dict[str, tuple[str, str]] = {i.name: (i.module, i.cls) for i in IDENTITIES}
NON_LLM_BASELINES: tuple[str, ...] = tuple(i.name for i in IDENTITIES if i.group == "non_llm")
LLM_BASELINES: tuple[str, ...] = tuple(i.name for i in IDENTITIES if i.group == "llm")
SYSTEM_BASELINES: tuple[str, ...] = tuple(i.name for i in IDENTITIES if i.group == "system")
# The deliberately bad systems of the simulator report (random_pick, contrary): no job loops over them.
COUNTERFACTUAL_BASELINES: tuple[str, ...] = tuple(i.name for i in IDENTITIES if i.group == "counterfactual")
# The systems that ask an LLM on every run (the LLM baselines and Collab-REC); SnipRec's take one optionally.
LLM_SYSTEMS: tuple[str, ...] = tuple(i.name for i in IDENTITIES if i.llm == "always")


class _Registry(Mapping[str, "type[TracePipeline]"]):
    """name -> pipeline class, importing each module on first use."""

    def __init__(self, table: Mapping[str, tuple[str, str]]):
        self._table = dict(table)

    def module(self, name: str) -> str:
        """The module that defines baseline `name` (not imported)."""
        return self._table[name][0]

    def __getitem__(self, name: str) -> type[TracePipeline]:
        if name not in self._table:
            raise KeyError(f"unknown baseline {name!r}; expected one of {list(self._table)}")
        module_name, class_name = self._table[name]
        cls = getattr(importlib.import_module(module_name), class_name)
        if cls.name != name:
            raise RuntimeError(
                f"{module_name}.{class_name}.name is {cls.name!r}; the registry expects {name!r}"
            )
        return cls

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


BASELINES: _Registry = _Registry(_TABLE)


def pipeline(name: str, kb: KnowledgeBase | str | os.PathLike, **params: Any) -> TracePipeline:
    """Build the baseline `name` on a knowledge base (a KnowledgeBase or its folder)."""
    cls = BASELINES[name]
    if isinstance(kb, (str, os.PathLike)):
        from trace_dataset.kb.store import KnowledgeBase

        kb = KnowledgeBase.load(kb)
    return cls(kb, **params)


__all__ = [
    "BASELINES",
    "COUNTERFACTUAL_BASELINES",
    "IDENTITIES",
    "LLM_BASELINES",
    "LLM_SYSTEMS",
    "NON_LLM_BASELINES",
    "SYSTEM_BASELINES",
    "BaselineIdentity",
    "identity",
    "label",
    "pipeline",
]
