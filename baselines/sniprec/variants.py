"""The comparison systems of SnipRec's §5.1 as Trace pipelines: SnipRec (`baselines.sniprec.pipeline`) with
some of its parameters fixed.

    sniprec_snippet   Snippet: SnipRec's item snippets, the user turn itself as the query, no NLI, no expansion
    sniprec_sentence  Sentence: review sentences instead of snippets
    sniprec_document  Document: whole reviews
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, TracePipeline
from baselines.sniprec.index import DEFAULT_ENCODER
from baselines.sniprec.pipeline import SnipRecBaseline
from baselines.sniprec.prompts import DEFAULT_MAX_REPAIRS
from baselines.sniprec.scoring import DEFAULT_K_MIN, DEFAULT_KAPPA
from trace_dataset.constants import SEED

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase
    from trace_llm import LLM


def refuse_unknown(pipe: TracePipeline, params: Mapping[str, Any]) -> None:
    """A comparison system passes its own parameters on to SnipRec's constructor, never others SnipRec takes."""
    if params:
        raise TypeError(
            f"{type(pipe).__name__} got unknown parameter(s) {sorted(params)}; "
            f"expected {list(pipe.config_keys)}"
        )


class SnippetBaseline(SnipRecBaseline):
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
    default_query_mode: ClassVar[str] = "utterance"

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        llm: str | LLM | None = None,
        temperature: float | None = None,
        top_p: float = 1.0,
        max_new_tokens: int | None = None,
        seed: int = SEED,
        llm_cache: str | bool | None = None,
        llm_options: dict | None = None,
        json_repairs: int = DEFAULT_MAX_REPAIRS,
        snippets: str | None = None,
        encoder: str = DEFAULT_ENCODER,
        kappa: float = DEFAULT_KAPPA,
        k: int | None = None,
        k_min: int = DEFAULT_K_MIN,
        post_check: str = "flagged",
        query_mode: str | None = None,
        cache_dir: str | None = None,
        device: str | None = "cpu",
        encoder_model: Any = None,
        encoder_threads: int | None = None,
        progress: bool | None = None,
        **params: Any,
    ):
        refuse_unknown(self, params)
        super().__init__(
            kb,
            batch_size,
            llm=llm,
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=max_new_tokens,
            seed=seed,
            llm_cache=llm_cache,
            llm_options=llm_options,
            json_repairs=json_repairs,
            snippets=snippets,
            encoder=encoder,
            kappa=kappa,
            k=k,
            k_min=k_min,
            post_check=post_check,
            query_mode=query_mode,
            cache_dir=cache_dir,
            device=device,
            encoder_model=encoder_model,
            encoder_threads=encoder_threads,
            progress=progress,
            **params,
        )


class _FixedUnits(SnipRecBaseline):
    """A comparison system whose units are fixed (no `snippets`, `post_check`, NLI or expansion)."""

    config_keys: ClassVar[tuple[str, ...]] = ("encoder", "kappa", "k", "k_min", "query_mode", "json_repairs")
    default_query_mode: ClassVar[str] = "utterance"

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        llm: str | LLM | None = None,
        temperature: float | None = None,
        top_p: float = 1.0,
        max_new_tokens: int | None = None,
        seed: int = SEED,
        llm_cache: str | bool | None = None,
        llm_options: dict | None = None,
        json_repairs: int = DEFAULT_MAX_REPAIRS,
        encoder: str = DEFAULT_ENCODER,
        kappa: float = DEFAULT_KAPPA,
        k: int | None = None,
        k_min: int = DEFAULT_K_MIN,
        query_mode: str | None = None,
        cache_dir: str | None = None,
        device: str | None = "cpu",
        encoder_model: Any = None,
        encoder_threads: int | None = None,
        progress: bool | None = None,
        **params: Any,
    ):
        refuse_unknown(self, params)
        super().__init__(
            kb,
            batch_size,
            llm=llm,
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=max_new_tokens,
            seed=seed,
            llm_cache=llm_cache,
            llm_options=llm_options,
            json_repairs=json_repairs,
            encoder=encoder,
            kappa=kappa,
            k=k,
            k_min=k_min,
            query_mode=query_mode,
            cache_dir=cache_dir,
            device=device,
            encoder_model=encoder_model,
            encoder_threads=encoder_threads,
            progress=progress,
            **params,
        )


class SentenceBaseline(_FixedUnits):
    """The paper's Sentence baseline: review sentences (plus the attribute templates) instead of snippets."""

    name: ClassVar[str] = "sniprec_sentence"
    units_kind: ClassVar[str | None] = "sentence"


class DocumentBaseline(_FixedUnits):
    """The paper's Document baseline: whole reviews (plus one document of the attribute templates)."""

    name: ClassVar[str] = "sniprec_document"
    units_kind: ClassVar[str | None] = "document"


__all__ = ["DocumentBaseline", "SentenceBaseline", "SnippetBaseline"]
