"""The comparison systems of SnipRec's §5.1 as Trace pipelines: SnipRec (`baselines.sniprec.pipeline`) with
some of its parameters fixed.

    sniprec_snippet   Snippet: SnipRec's item snippets, the user turn itself as the query, no NLI, no expansion
    sniprec_sentence  Sentence: review sentences instead of snippets
    sniprec_document  Document: whole reviews

Each takes SnipRec's constructor parameters less those it fixes (`fixed`: held at SnipRec's defaults, refused
when given). The signature says so, so that `--param` checking (`trace_harness.protocols.params`) and help() list exactly
what a comparison system takes.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE
from baselines.sniprec.pipeline import SnipRecBaseline

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase


class _Comparison(SnipRecBaseline):
    """SnipRec without NLI, query snippets, expansion or rejection categories: the user turn is the query."""

    fixed: ClassVar[tuple[str, ...]] = ("nli", "t_ent", "expansion", "rejection_categories")
    default_query_mode: ClassVar[str] = "utterance"

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        base = inspect.signature(SnipRecBaseline.__init__)
        kept = [
            p for p in base.parameters.values() if p.name not in cls.fixed and p.kind is not p.VAR_KEYWORD
        ]
        taken = frozenset(p.name for p in kept)

        def __init__(
            self: SnipRecBaseline, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, **params: Any
        ):
            unknown = sorted(set(params) - taken)
            if unknown:
                raise TypeError(
                    f"{type(self).__name__} got unknown parameter(s) {unknown}; expected {list(self.config_keys)}"
                )
            SnipRecBaseline.__init__(self, kb, batch_size, **params)

        __init__.__signature__ = base.replace(parameters=kept)  # type: ignore[attr-defined]
        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        __init__.__doc__ = f"SnipRec's constructor without {', '.join(cls.fixed)} (fixed by {cls.__name__})."
        setattr(cls, "__init__", __init__)  # noqa: B010  (mypy refuses assigning a method)


class SnippetBaseline(_Comparison):
    """The paper's Snippet baseline: SnipRec's item snippets, the user turn as the query, no NLI, no expansion."""

    name: ClassVar[str] = "sniprec_snippet"
    config_keys: ClassVar[tuple[str, ...]] = (
        "snippets",
        "encoder",
        "kappa",
        "k",
        "k_min",
        "post_check",
        "query_mode",
        "json_repairs",
    )


class _FixedUnits(_Comparison):
    """A comparison system whose units are fixed (no `snippets`, `post_check`, NLI or expansion)."""

    fixed: ClassVar[tuple[str, ...]] = (*_Comparison.fixed, "snippets", "post_check")
    config_keys: ClassVar[tuple[str, ...]] = ("encoder", "kappa", "k", "k_min", "query_mode", "json_repairs")


class SentenceBaseline(_FixedUnits):
    """The paper's Sentence baseline: review sentences (plus the attribute templates) instead of snippets."""

    name: ClassVar[str] = "sniprec_sentence"
    units_kind: ClassVar[str | None] = "sentence"


class DocumentBaseline(_FixedUnits):
    """The paper's Document baseline: whole reviews (plus one document of the attribute templates)."""

    name: ClassVar[str] = "sniprec_document"
    units_kind: ClassVar[str | None] = "document"


__all__ = ["DocumentBaseline", "SentenceBaseline", "SnippetBaseline"]
